//! Durable effect retries (issue 33), in process, on both stores (SQLite,
//! and PostgreSQL when reachable): a route's `[route.retry]` policy, each
//! failed call stored with its due time, the execution taken up again when
//! the retry is due — by the same host or, after it stopped, by a new one
//! on the same database — and the program seeing only the last outcome.
//! The SIGKILL between attempts is `crates/irkit/tests/tcc_retry.rs`.

mod common;

#[path = "common/db.rs"]
mod db;
use db::TestDb;

use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers};
use tcc_host::retry::RetryPolicy;
use tcc_host::store::Store;
use tcc_host::{Host, HostConfig};

/// Fails the first `failures` calls of `charge`, every call of `fail.*`
/// and `declined` (the latter as not retryable), echoes the rest; records
/// each call's key and time.
struct Flaky {
    failures: usize,
    calls: Mutex<Vec<(String, Instant)>>,
}

impl EffectProvider for Flaky {
    fn call(&self, c: &EffectCall<'_>) -> ProviderOutcome {
        let mut calls = self.calls.lock().unwrap();
        calls.push((c.key.to_string(), Instant::now()));
        let n = calls.iter().filter(|(k, _)| k == c.key).count();
        if c.key.starts_with("fail.") {
            ProviderOutcome::Failed(format!("{} refused", c.key))
        } else if c.key.starts_with("declined") {
            ProviderOutcome::Failed("declined: card expired".into())
        } else if c.key == "charge" && n <= self.failures {
            ProviderOutcome::Failed(format!("HTTP 503 (call {n})"))
        } else {
            ProviderOutcome::Result(c.input.clone())
        }
    }
}

impl Flaky {
    fn calls_of(&self, key: &str) -> Vec<Instant> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, t)| *t)
            .collect()
    }
}

fn policy(attempts: u32, initial: u64) -> RetryPolicy {
    RetryPolicy {
        attempts,
        initial_backoff_ms: initial,
        max_backoff_ms: 10_000,
        multiplier: 2.0,
        non_retryable: vec!["declined*".into()],
    }
}

fn host(store: &Arc<dyn Store>, flaky: &Arc<Flaky>, retry: RetryPolicy) -> Arc<Host> {
    let mut providers = Providers::echo_all();
    providers.add_with_retry("charge", flaky.clone(), Some(retry.clone()));
    providers.add_with_retry("fail.*", flaky.clone(), Some(retry.clone()));
    providers.add_with_retry("declined", flaky.clone(), Some(retry));
    providers.add("*", flaky.clone());
    let cfg = HostConfig {
        poll_ms: 10,
        ..HostConfig::default()
    };
    Host::new(store.clone(), providers, cfg)
}

fn flaky(failures: usize) -> Arc<Flaky> {
    Arc::new(Flaky {
        failures,
        calls: Mutex::new(Vec::new()),
    })
}

fn finish(host: &Arc<Host>, id: &str) -> tcc_host::store::ExecutionRow {
    let threads = host.spawn();
    let row = host.wait_for(id, Duration::from_secs(20), true).unwrap();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    row
}

macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[test]
            fn sqlite() {
                super::$name(false)
            }
            #[test]
            fn postgres() {
                super::$name(true)
            }
        })*
    };
}

on_both!(
    a_flaky_effect_is_retried_after_its_backoff_until_it_succeeds,
    the_last_attempt_and_a_non_retryable_failure_reach_the_program,
    a_new_host_on_the_same_database_makes_the_remaining_attempts,
);

fn a_flaky_effect_is_retried_after_its_backoff_until_it_succeeds(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_retry") else {
        return;
    };
    let store = db.open();
    let provider = flaky(2);
    let host = host(&store, &provider, policy(4, 150));
    host.register(&common::effects(), Some("effects")).unwrap();
    let id = host.start("effects", vec![], None).unwrap();
    let row = finish(&host, &id);
    assert_eq!(row.status, "completed", "{row:?}");
    // Two failures, then the answer; `ship` (no policy) once.
    let calls = provider.calls_of("charge");
    assert_eq!(calls.len(), 3);
    assert_eq!(provider.calls_of("ship").len(), 1);
    // Each retry waited for its backoff: 150 ms, then 300 ms.
    assert!(
        calls[1] - calls[0] >= Duration::from_millis(150),
        "{calls:?}"
    );
    assert!(
        calls[2] - calls[1] >= Duration::from_millis(300),
        "{calls:?}"
    );
    // Each failed call is stored, with its due time; the outcome is journalled once.
    let attempts = store.attempts_of(&id).unwrap();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!((a.key.as_str(), a.attempt), ("charge", i as u32 + 1));
        assert_eq!(a.error, format!("HTTP 503 (call {})", i + 1));
        let due = a.next_due_ms.unwrap();
        assert!(due >= a.at_ms + 150 * (1 << i), "{a:?}");
    }
    let journal = store.journal_of(&id).unwrap();
    assert_eq!(journal.len(), 2);
    assert_eq!(journal[0].status, "completed");
    assert_eq!(
        journal[0].result,
        json!({"t": "object", "v": {"amount": {"t": "number", "v": 42}}})
    );
    let history = store.history(&id, 0, 1000).unwrap();
    let failed: Vec<_> = history
        .iter()
        .filter(|h| h.kind == "effect_attempt_failed")
        .map(|h| h.detail["attempt"].clone())
        .collect();
    assert_eq!(failed, vec![json!(1), json!(2)]);
}

fn the_last_attempt_and_a_non_retryable_failure_reach_the_program(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_retry") else {
        return;
    };
    let store = db.open();
    let provider = flaky(0);
    let host = host(&store, &provider, policy(3, 20));
    host.register(&common::caught(), Some("caught")).unwrap();
    // `caught` with its effect key taken from its argument is not needed:
    // `fail.x` always fails, so three calls, then the program catches it.
    let id = host.start("caught", vec![], None).unwrap();
    let row = finish(&host, &id);
    assert_eq!(row.status, "completed", "{row:?}");
    assert_eq!(
        row.result.unwrap().to_json().unwrap(),
        json!({"t": "string", "v": "fail.x refused (after 3 attempts)"})
    );
    assert_eq!(provider.calls_of("fail.x").len(), 3);
    let attempts = store.attempts_of(&id).unwrap();
    let dues: Vec<bool> = attempts.iter().map(|a| a.next_due_ms.is_some()).collect();
    assert_eq!(dues, vec![true, true, false], "the third is the last");
    let journal = store.journal_of(&id).unwrap();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].status, "failed");

    // A failure the policy names as not retryable: one call.
    let ins = json!([
        {"op": "PushTry", "catch": 5, "finally": null},
        {"op": "LoadConst", "value": {"t": "string", "v": "declined"}},
        {"op": "Effect"}, {"op": "PopTry"}, {"op": "Return"}, {"op": "Return"}
    ]);
    let host = self::host(&store, &provider, policy(3, 20));
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("declined"))
        .unwrap();
    let id = host.start("declined", vec![], None).unwrap();
    let row = finish(&host, &id);
    assert_eq!(
        row.result.unwrap().to_json().unwrap(),
        json!({"t": "string", "v": "declined: card expired"})
    );
    assert_eq!(provider.calls_of("declined").len(), 1);
}

fn a_new_host_on_the_same_database_makes_the_remaining_attempts(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_retry") else {
        return;
    };
    let store = db.open();
    let provider = flaky(2);
    let first = host(&store, &provider, policy(4, 400));
    first.register(&common::effects(), Some("effects")).unwrap();
    let id = first.start("effects", vec![], None).unwrap();
    // Run until the first call failed and was stored, then stop that host
    // in the middle of its backoff.
    let threads = first.spawn();
    let start = Instant::now();
    while store.attempts_of(&id).unwrap().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no attempt stored"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    first.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    drop(first);
    assert_eq!(provider.calls_of("charge").len(), 1);
    // Deferred: runnable, the lease kept until the retry is due, and no
    // abnormal drive counted (repeated deferrals never quarantine it).
    let row = store.get_execution(&id).unwrap().unwrap();
    assert_eq!((row.status.as_str(), row.drive_attempts), ("runnable", 0));
    let due = store.attempts_of(&id).unwrap()[0].next_due_ms.unwrap();
    assert_eq!(row.lease_until, due);
    // A new host on a freshly opened store (another process would free the
    // old leases: SQLite's start does).
    drop(store);
    let store = db.open();
    store.reset_leases().unwrap();
    let second = host(&store, &provider, policy(4, 400));
    let row = finish(&second, &id);
    assert_eq!(row.status, "completed", "{row:?}");
    let calls = provider.calls_of("charge");
    assert_eq!(calls.len(), 3, "two failures and the answer, none repeated");
    let second_call_ms = tcc_host::now_ms() - calls[1].elapsed().as_millis() as i64;
    assert!(
        second_call_ms >= due - 5,
        "the retry came before its due time"
    );
    assert_eq!(store.attempts_of(&id).unwrap().len(), 2);
}
