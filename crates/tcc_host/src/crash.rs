//! Crash hooks (facts note (f)): `TCC_CRASH_AT=name[:n]` aborts the
//! process at the n-th time (1-based, default 1) the named hook is reached.
//! The abort is immediate (`std::process::abort`): no destructor, flush or
//! rollback runs, exactly like a SIGKILL at that point.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Every hook the host reaches.
pub const HOOKS: &[&str] = &[
    "before_persist_checkpoint",
    "after_persist_checkpoint",
    "after_wait_checkpoint",
    "before_persist_effect",
    "after_persist_effect",
    "before_effect_provider",
    "after_effect_provider",
    "after_register_wait",
    "after_register_timer",
    "after_create_child",
    "before_event_payload",
    "after_event_persist",
    "before_timer_fired",
    "before_child_result",
    "before_cancel",
];

struct Target {
    name: String,
    nth: u64,
    seen: AtomicU64,
}

fn target() -> &'static Option<Target> {
    static T: OnceLock<Option<Target>> = OnceLock::new();
    T.get_or_init(|| {
        let spec = std::env::var("TCC_CRASH_AT").ok()?;
        let (name, nth) = match spec.split_once(':') {
            Some((n, c)) => (n.to_string(), c.parse::<u64>().unwrap_or(1).max(1)),
            None => (spec, 1),
        };
        Some(Target {
            name,
            nth,
            seen: AtomicU64::new(0),
        })
    })
}

/// Reaches hook `name`: aborts the process if `TCC_CRASH_AT` selects it.
pub fn hook(name: &str) {
    if let Some(t) = target()
        && t.name == name
    {
        let n = t.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if n == t.nth {
            eprintln!("TCC_CRASH_AT: aborting at {name} (hit {n})");
            std::process::abort();
        }
    }
}
