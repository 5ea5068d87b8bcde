//! The TCC durable host (issue 7; facts note (f)).
//!
//! Data flow: artifacts are registered (validated, stored by hash, named);
//! an execution row is created; a [`host::Host`] worker claims it (lease),
//! drives the engine with `run_until_host`, answers every host request from
//! the [`store::Store`] and the [`providers::Providers`], and commits each
//! `persist_checkpoint` (together with the registrations and wake
//! consumption that belong to it) in one transaction before it answers
//! `persist_confirmed`. Suspended executions are woken by timers, events
//! and child results; [`service`] exposes all of it as an HTTP JSON API.
//!
//! Invariants: `persist_confirmed` is sent only after the commit; a
//! checkpoint commits only while this worker owns the lease and the stored
//! revision is the one it resumed from (compare-and-set); an effect's
//! journalled result is returned for every re-run of its idempotency key.

pub mod crash;
pub mod host;
pub mod http;
pub mod pg;
pub mod providers;
pub mod service;
pub mod sqlite;
pub mod store;
pub mod tls;
pub mod values;

pub use host::{Host, HostConfig};
pub use providers::{EffectProvider, ProviderOutcome, Providers};
pub use store::{Store, StoreError, is_postgres_url, open_store};

/// Current time in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A fresh random identifier (hex), from the OS-seeded std hasher.
pub fn random_id(prefix: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::from(prefix);
    for _ in 0..2 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i64(now_ms());
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}
