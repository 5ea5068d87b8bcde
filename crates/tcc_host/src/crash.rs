//! Crash hooks (facts note (f)): `TCC_CRASH_AT=name[:n]` aborts the
//! process at the n-th time (1-based, default 1) the named hook is reached;
//! `TCC_CRASH_AT=name:detail` (a non-number after `:`) at the first time it
//! is reached with that detail. Every hook's details are the execution id,
//! plus the effect key for the effect hooks (`before/after_effect_provider`,
//! `before/after_persist_effect`), the event name for
//! `after_register_wait`, and the child program name for
//! `after_create_child`.
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
    select: Select,
    seen: AtomicU64,
}

enum Select {
    Nth(u64),
    Detail(String),
}

fn target() -> &'static Option<Target> {
    static T: OnceLock<Option<Target>> = OnceLock::new();
    T.get_or_init(|| parse(&std::env::var("TCC_CRASH_AT").ok()?))
}

fn parse(spec: &str) -> Option<Target> {
    let (name, select) = match spec.split_once(':') {
        Some((n, c)) => (
            n.to_string(),
            match c.parse::<u64>() {
                Ok(k) => Select::Nth(k.max(1)),
                Err(_) => Select::Detail(c.to_string()),
            },
        ),
        None => (spec.to_string(), Select::Nth(1)),
    };
    (!name.is_empty()).then_some(Target {
        name,
        select,
        seen: AtomicU64::new(0),
    })
}

impl Target {
    /// Whether this reach of hook `name` with `details` is the one to crash at.
    fn fires(&self, name: &str, details: &[&str]) -> bool {
        if self.name != name {
            return false;
        }
        match &self.select {
            Select::Nth(k) => self.seen.fetch_add(1, Ordering::SeqCst) + 1 == *k,
            Select::Detail(d) => {
                details.contains(&d.as_str()) && self.seen.fetch_add(1, Ordering::SeqCst) == 0
            }
        }
    }
}

/// Reaches hook `name` with no details.
pub fn hook(name: &str) {
    hook_at(name, &[]);
}

/// Reaches hook `name` with `details` (execution id, effect key, …):
/// aborts the process if `TCC_CRASH_AT` selects this reach.
pub fn hook_at(name: &str, details: &[&str]) {
    if let Some(t) = target()
        && t.fires(name, details)
    {
        eprintln!("TCC_CRASH_AT: aborting at {name} {details:?}");
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_and_detail_selection() {
        let t = parse("after_persist_effect:2").unwrap();
        assert!(!t.fires("after_persist_effect", &["e1"]));
        assert!(!t.fires("before_persist_effect", &["e1"]));
        assert!(t.fires("after_persist_effect", &["e1"]));
        assert!(!t.fires("after_persist_effect", &["e1"]));
        let t = parse("before_effect_provider:charge").unwrap();
        assert!(!t.fires("before_effect_provider", &["e1", "ship"]));
        assert!(t.fires("before_effect_provider", &["e1", "charge"]));
        assert!(!t.fires("before_effect_provider", &["e2", "charge"]));
        let t = parse("before_cancel").unwrap();
        assert!(t.fires("before_cancel", &[]));
        assert!(parse("").is_none());
    }
}
