//! Operator resume and cancellation during a durable retry's wait
//! (issue 33), in process, on both stores (SQLite, and PostgreSQL when
//! reachable): an execution that failed because an effect failed goes back
//! to the checkpoint before that effect, only that effect's provider is
//! called again, and a refusal says why; a cancel or terminate request
//! reaches an execution waiting between retries at once. The CLI's
//! `irkit tcc resume` is `crates/irkit/tests/tcc_resume.rs`.

mod common;

#[path = "common/db.rs"]
mod db;
use db::TestDb;

use serde_json::{Value as J, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers};
use tcc_host::retry::RetryPolicy;
use tcc_host::store::{ResumeOutcome, Store, StoreError};
use tcc_host::{Host, HostConfig};

/// Fails every call of `charge` until fixed; echoes the rest. Records
/// every call's key.
#[derive(Default)]
struct Outage {
    fixed: AtomicBool,
    calls: Mutex<Vec<String>>,
}

impl EffectProvider for Outage {
    fn call(&self, c: &EffectCall<'_>) -> ProviderOutcome {
        self.calls.lock().unwrap().push(c.key.to_string());
        if c.key == "charge" && !self.fixed.load(Ordering::SeqCst) {
            ProviderOutcome::Failed("HTTP 503 payments down".into())
        } else {
            ProviderOutcome::Result(c.input.clone())
        }
    }
}

impl Outage {
    fn calls_of(&self, key: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|k| *k == key)
            .count()
    }
}

fn policy(attempts: u32, initial: u64) -> RetryPolicy {
    RetryPolicy {
        attempts,
        initial_backoff_ms: initial,
        max_backoff_ms: 120_000,
        multiplier: 2.0,
        non_retryable: vec![],
    }
}

fn host(store: &Arc<dyn Store>, provider: &Arc<Outage>, retry: RetryPolicy) -> Arc<Host> {
    let mut providers = Providers::echo_all();
    providers.add_with_retry("charge", provider.clone(), Some(retry));
    providers.add("*", provider.clone());
    let cfg = HostConfig {
        poll_ms: 10,
        ..HostConfig::default()
    };
    Host::new(store.clone(), providers, cfg)
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

fn s(v: &str) -> J {
    json!({"op": "LoadConst", "value": {"t": "string", "v": v}})
}

fn op(o: &str) -> J {
    json!({"op": o})
}

/// `before` effects `s0..`, each result dropped, then `ship`, then
/// `charge` with input `{amount: 42}`; returns `[ship, charge]`.
fn order(before: usize) -> Vec<u8> {
    let mut ins = Vec::new();
    for i in 0..before {
        ins.extend([s(&format!("s{i}")), op("Effect"), op("Pop")]);
    }
    ins.extend([
        s("ship"),
        op("Effect"),
        json!({"op": "StoreLocal", "local": 0}),
        op("NewObject"),
        json!({"op": "LoadConst", "value": {"t": "number", "v": 42}}),
        json!({"op": "SetProp", "key": "amount"}),
        s("charge"),
        json!({"op": "Effect", "has_input": true}),
        json!({"op": "StoreLocal", "local": 1}),
        op("NewArray"),
        json!({"op": "LoadLocal", "local": 0}),
        op("ArrayPush"),
        json!({"op": "LoadLocal", "local": 1}),
        op("ArrayPush"),
        op("Return"),
    ]);
    common::artifact(&[("run", 0, 2, J::Array(ins))])
}

/// `await effect(KEY)` for `keys`, with `features` required.
fn with_features(ins: J, locals: u32, features: &[&str]) -> Vec<u8> {
    let bytes = common::artifact(&[("run", 0, locals, ins)]);
    let mut a = tcc_ir::decode_artifact(&bytes).unwrap();
    for f in features {
        a.envelope.required_engine_features.push((*f).into());
    }
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    tcc_ir::encode_artifact(&a)
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
    a_resumed_execution_calls_only_its_failed_effect_again,
    resume_refuses_what_is_not_an_effect_failure,
    of_two_concurrent_resumes_one_wins,
    a_cancel_cuts_a_retry_backoff,
    a_catchable_cancel_reaches_the_handler_during_a_backoff,
);

fn a_resumed_execution_calls_only_its_failed_effect_again(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_resume") else {
        return;
    };
    let store = db.open();
    // Few effects before (every checkpoint a snapshot of a small state), and
    // more than a snapshot interval's worth (a chain of deltas kept).
    for (name, before) in [("short", 0), ("long", 40)] {
        let provider = Arc::new(Outage::default());
        let host = host(&store, &provider, policy(2, 20));
        host.register(&order(before), Some(name)).unwrap();
        let id = host.start(name, vec![], None).unwrap();
        let row = finish(&host, &id);
        assert_eq!(row.status, "failed", "{row:?}");
        assert_eq!(
            row.message.as_deref(),
            Some("HTTP 503 payments down (after 2 attempts)")
        );
        assert_eq!(provider.calls_of("charge"), 2);
        // Not fixed yet: resumed, it fails again the same way (two more calls).
        let ResumeOutcome::Resumed { key, revision } = host.resume(&id).unwrap() else {
            panic!("not resumed")
        };
        assert_eq!(key, "charge");
        let row = store.get_execution(&id).unwrap().unwrap();
        assert_eq!((row.status.as_str(), row.revision), ("runnable", revision));
        assert_eq!((row.result, row.message), (None, None));
        assert!(store.attempts_of(&id).unwrap().is_empty());
        let row = finish(&host, &id);
        assert_eq!(row.status, "failed", "{row:?}");
        assert_eq!(provider.calls_of("charge"), 4);
        // Fixed: resumed again, it completes; every earlier effect ran once.
        provider.fixed.store(true, Ordering::SeqCst);
        assert!(matches!(
            host.resume(&id).unwrap(),
            ResumeOutcome::Resumed { .. }
        ));
        let row = finish(&host, &id);
        assert_eq!(row.status, "completed", "{row:?}");
        assert_eq!(
            row.result.unwrap().to_json().unwrap(),
            json!({"t": "array", "v": [{"t": "object", "v": {}},
                {"t": "object", "v": {"amount": {"t": "number", "v": 42}}}]})
        );
        assert_eq!(provider.calls_of("charge"), 5);
        assert_eq!(provider.calls_of("ship"), 1);
        for i in 0..before {
            assert_eq!(provider.calls_of(&format!("s{i}")), 1);
        }
        let journal = store.journal_of(&id).unwrap();
        assert_eq!(journal.len(), before + 2);
        assert!(
            journal.iter().all(|j| j.status == "completed"),
            "{journal:?}"
        );
        let resumed: Vec<J> = store
            .history(&id, 0, 10_000)
            .unwrap()
            .into_iter()
            .filter(|h| h.kind == "resumed_by_operator")
            .map(|h| h.detail)
            .collect();
        assert_eq!(resumed.len(), 2, "{resumed:?}");
        assert_eq!(resumed[0]["key"], "charge");
        assert_eq!(resumed[0]["revision"], json!(revision));
        assert_eq!(
            resumed[0]["discarded_error"],
            "HTTP 503 payments down (after 2 attempts)"
        );
        // Completed now: nothing to resume.
        assert_eq!(
            host.resume(&id).unwrap(),
            ResumeOutcome::NotFailed("completed".into())
        );
    }
}

fn resume_refuses_what_is_not_an_effect_failure(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_resume") else {
        return;
    };
    let store = db.open();
    let provider = Arc::new(Outage::default());
    let host = host(&store, &provider, policy(1, 20));
    // The program's own error.
    let thrower = common::artifact(&[("run", 0, 0, json!([s("boom"), op("Throw")]))]);
    host.register(&thrower, Some("thrower")).unwrap();
    // An effect failure caught, then another effect, then a throw.
    let ins = json!([
        {"op": "PushTry", "catch": 4, "finally": null},
        s("charge"), op("Effect"), op("Return"),
        op("Pop"), s("notify"), op("Effect"), op("Throw")
    ]);
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("after"))
        .unwrap();
    // An effect failure inside a group.
    let ins = json!([
        {"op": "Fork", "count": 2, "join_pc": 5},
        s("ship"), op("Effect"), s("charge"), op("Effect"), op("JoinAll"), op("Return")
    ]);
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("group"))
        .unwrap();
    for name in ["thrower", "after", "group"] {
        let id = host.start(name, vec![], None).unwrap();
        let row = finish(&host, &id);
        assert_eq!(row.status, "failed", "{name}: {row:?}");
        match host.resume(&id).unwrap() {
            ResumeOutcome::NotResumable(why) => {
                assert!(
                    why.contains("does not directly follow a failed effect"),
                    "{why}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(store.get_execution(&id).unwrap().unwrap().status, "failed");
    }
    // Not failed: a suspended execution, and an unknown one.
    host.register(&common::waiter(), Some("waiter")).unwrap();
    let id = host.start("waiter", vec![], None).unwrap();
    assert_eq!(finish(&host, &id).status, "suspended");
    assert_eq!(
        host.resume(&id).unwrap(),
        ResumeOutcome::NotFailed("suspended".into())
    );
    assert!(matches!(
        host.resume("no-such-execution"),
        Err(tcc_host::HostError::Store(StoreError::NotFound(_)))
    ));
}

fn of_two_concurrent_resumes_one_wins(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_resume") else {
        return;
    };
    let store = db.open();
    let provider = Arc::new(Outage::default());
    let host = host(&store, &provider, policy(1, 20));
    host.register(&order(1), Some("order")).unwrap();
    let id = host.start("order", vec![], None).unwrap();
    assert_eq!(finish(&host, &id).status, "failed");
    let outcomes: Vec<ResumeOutcome> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| store.resume_failed(&id).unwrap()))
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let won = outcomes
        .iter()
        .filter(|o| matches!(o, ResumeOutcome::Resumed { .. }))
        .count();
    assert_eq!(won, 1, "{outcomes:?}");
    assert!(
        outcomes.contains(&ResumeOutcome::NotFailed("runnable".into())),
        "{outcomes:?}"
    );
    let resumed = store
        .history(&id, 0, 1000)
        .unwrap()
        .iter()
        .filter(|h| h.kind == "resumed_by_operator")
        .count();
    assert_eq!(resumed, 1);
    provider.fixed.store(true, Ordering::SeqCst);
    assert_eq!(finish(&host, &id).status, "completed");
    assert_eq!(provider.calls_of("s0"), 1);
    assert_eq!(provider.calls_of("ship"), 1);
    assert_eq!(provider.calls_of("charge"), 2);
}

/// Runs `id` until its first call of `charge` failed and was stored, the
/// execution waiting for a retry a minute away; returns the running host's
/// threads.
fn until_waiting_for_retry(
    host: &Arc<Host>,
    store: &Arc<dyn Store>,
    id: &str,
) -> Vec<std::thread::JoinHandle<()>> {
    let threads = host.spawn();
    let start = std::time::Instant::now();
    loop {
        let row = store.get_execution(id).unwrap().unwrap();
        if !store.attempts_of(id).unwrap().is_empty()
            && row.drive_attempts == 0
            && row.owner.is_some()
        {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no retry wait");
        std::thread::sleep(Duration::from_millis(5));
    }
    threads
}

fn a_cancel_cuts_a_retry_backoff(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_resume") else {
        return;
    };
    let store = db.open();
    let provider = Arc::new(Outage::default());
    // A minute between calls: the test's 20 s wait ends long before.
    let host = host(&store, &provider, policy(3, 60_000));
    host.register(&order(0), Some("order")).unwrap();
    for terminate in [false, true] {
        let id = host.start("order", vec![], None).unwrap();
        let threads = until_waiting_for_retry(&host, &store, &id);
        if terminate {
            store.request_terminate(&id).unwrap();
        } else {
            store.request_cancel(&id).unwrap();
        }
        host.notify();
        let row = host.wait_for(&id, Duration::from_secs(20), true).unwrap();
        host.shutdown();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(row.status, "cancelled", "{row:?}");
        assert_eq!(store.attempts_of(&id).unwrap().len(), 1, "no second call");
    }
    assert_eq!(provider.calls_of("charge"), 2);
}

fn a_catchable_cancel_reaches_the_handler_during_a_backoff(pg: bool) {
    let Some(db) = TestDb::new(pg, "t_resume") else {
        return;
    };
    let store = db.open();
    let provider = Arc::new(Outage::default());
    let host = host(&store, &provider, policy(3, 60_000));
    // try { return await effect("charge") } catch (e) { await effect("refund"); throw e }
    let ins = json!([
        {"op": "PushTry", "catch": 4, "finally": null},
        s("charge"), op("Effect"), op("Return"),
        {"op": "StoreLocal", "local": 0},
        s("refund"), op("Effect"), op("Pop"),
        {"op": "LoadLocal", "local": 0}, op("Throw")
    ]);
    let saga = with_features(ins, 1, &[tcc_ir::features::CATCHABLE_CANCEL]);
    host.register(&saga, Some("saga")).unwrap();
    let id = host.start("saga", vec![], None).unwrap();
    let threads = until_waiting_for_retry(&host, &store, &id);
    store.request_cancel(&id).unwrap();
    host.notify();
    let row = host.wait_for(&id, Duration::from_secs(20), true).unwrap();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(row.status, "cancelled", "{row:?}");
    assert_eq!(
        row.result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "string", "v": tcc_engine::CANCELLED_ERROR}))
    );
    assert_eq!(provider.calls_of("charge"), 1);
    assert_eq!(provider.calls_of("refund"), 1);
    let delivered = store
        .history(&id, 0, 1000)
        .unwrap()
        .into_iter()
        .filter(|h| h.kind == "cancel_delivered")
        .count();
    assert_eq!(delivered, 1);
}
