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
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod admission;
pub mod answer_text;
pub mod api_error;
pub mod await_result;
pub mod conn;
pub mod crash;
mod effect_retry;
pub mod flow;
pub mod host;
pub mod http;
pub mod ids;
pub mod logging;
pub mod metrics;
pub mod namespace;
pub mod notify;
pub mod notify_pg;
pub mod otel;
pub mod packed;
pub mod pattern;
pub mod pause;
pub mod percent;
pub mod providers;
mod quarantine;
pub mod request_body;
pub mod request_json;
pub mod retention;
pub mod retry;
pub mod schedule;
pub mod secrets;
pub mod service;
mod slot;
pub mod source;
pub mod status_read;
pub mod status_view;
pub mod storable;
pub mod store;
pub mod tagged_text;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod tls;
pub mod ui;
pub mod values;
pub mod worker_tasks;

pub use host::{Host, HostConfig, HostError};
pub use ids::{execution_id, now_ms, random_id};
pub use providers::{EffectProvider, ProviderOutcome, Providers};
pub use store::factory::{is_postgres_url, open_store, redact_database};
pub use store::{Store, StoreError};
