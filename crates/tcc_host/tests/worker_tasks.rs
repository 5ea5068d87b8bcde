//! The worker task table (`tcc_host::worker_tasks`), below the HTTP API:
//! claims hand out exactly the tasks whose keys match a pattern (property
//! test over arbitrary keys and patterns, `LIKE` special characters
//! included), the lease rules on both stores, and batches of answers
//! against one answer after another (property test on both stores).

use proptest::prelude::*;
use serde_json::json;
use tcc_host::providers::pattern_matches;
use tcc_host::worker_tasks::pg::PgTasks;
use tcc_host::worker_tasks::sqlite::SqliteTasks;
use tcc_host::worker_tasks::{Claim, LeasedAnswer, NewTask, TaskAnswer, TaskStore};

fn task(i: usize, key: &str) -> NewTask {
    NewTask {
        idempotency_key: format!("e{i}:{key}"),
        execution_id: format!("e{i}"),
        key: key.to_string(),
        input: tcc_ir::to_canonical(&json!({"t": "number", "v": i})),
        traceparent: None,
    }
}

fn scratch_sqlite() -> (tempdir::Dir, SqliteTasks) {
    let dir = tempdir::Dir::new();
    let tasks = SqliteTasks::open(&dir.0.join("tasks.db")).unwrap();
    (dir, tasks)
}

mod tempdir {
    /// A scratch directory, removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            let p = std::env::temp_dir().join(tcc_host::random_id("tasks-"));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn claims_hand_out_exactly_the_matching_tasks(
        keys in prop::collection::vec("[a-c%_.\\\\*A]{0,6}", 1..8),
        pattern in "[a-c%_.\\\\*A]{0,5}",
    ) {
        let (_dir, store) = scratch_sqlite();
        for (i, k) in keys.iter().enumerate() {
            store.enqueue(&task(i, k), 1).unwrap();
        }
        let patterns = vec![pattern.clone()];
        let claimed = store.claim(&Claim { patterns: &patterns, worker: "w", lease_ms: 1000, max: 100, now: 1, namespace: None }).unwrap();
        let mut got: Vec<String> = claimed.iter().map(|t| t.key.clone()).collect();
        let mut want: Vec<String> = keys.iter().filter(|k| pattern_matches(&pattern, k)).cloned().collect();
        got.sort();
        want.sort();
        prop_assert_eq!(got, want);
        // Claimed once: nothing is left to hand out while the leases hold.
        let again = store.claim(&Claim { patterns: &patterns, worker: "w", lease_ms: 1000, max: 100, now: 2, namespace: None }).unwrap();
        prop_assert!(again.is_empty());
    }
}

/// The same property on PostgreSQL, whose claim picks and leases in one
/// statement (`LIKE` under `COLLATE "C"`, no check after it): one scratch
/// schema, emptied before each case.
#[test]
fn claims_hand_out_exactly_the_matching_tasks_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_tasks_match").unwrap()
    else {
        return;
    };
    let store = PgTasks::open(&schema.url()).unwrap();
    let admin = std::sync::Mutex::new(schema.connect().unwrap());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(32));
    let keys_and_pattern = (
        prop::collection::vec("[a-c%_.\\\\*A\u{e9}]{0,6}", 1..8),
        prop::collection::vec("[a-c%_.\\\\*A\u{e9}]{0,5}", 1..3),
        1usize..10,
    );
    runner
        .run(&keys_and_pattern, |(keys, patterns, max)| {
            admin
                .lock()
                .unwrap()
                .batch_execute("DELETE FROM worker_tasks")
                .unwrap();
            for (i, k) in keys.iter().enumerate() {
                store.enqueue(&task(i, k), 1).unwrap();
            }
            let want: Vec<String> = keys
                .iter()
                .filter(|k| patterns.iter().any(|p| pattern_matches(p, k)))
                .cloned()
                .collect();
            let claim = |now, max| Claim {
                patterns: &patterns,
                worker: "w",
                lease_ms: 1000,
                max,
                now,
                namespace: None,
            };
            // At most `max`, oldest first, each with its own token.
            let first = store.claim(&claim(1, max)).unwrap();
            let rest = store.claim(&claim(2, 100)).unwrap();
            let got: Vec<String> = first.iter().chain(&rest).map(|t| t.key.clone()).collect();
            prop_assert_eq!(&got, &want);
            prop_assert!(first.len() <= max);
            let tokens: std::collections::HashSet<_> = first
                .iter()
                .chain(&rest)
                .map(|t| t.lease_token.clone())
                .collect();
            prop_assert_eq!(tokens.len(), got.len());
            for t in first.iter().chain(&rest) {
                prop_assert_eq!(t.attempt, 1);
                prop_assert_eq!(&t.state, "leased");
                let stored = store.get(&t.idempotency_key).unwrap().unwrap();
                prop_assert_eq!(&stored.lease_token, &t.lease_token);
            }
            prop_assert!(store.claim(&claim(3, 100)).unwrap().is_empty());
            Ok(())
        })
        .unwrap();
}

/// Lease rules: expiry hands a task out again under a new token, the old
/// token's heartbeat and answer are refused, an answer is final, a failed
/// task asked for again is queued again, the host's expiry fails an open one.
fn lease_rules(store: &dyn TaskStore) {
    let t = task(1, "payment.charge");
    let row = store.enqueue(&t, 10).unwrap();
    assert_eq!((row.state.as_str(), row.attempt), ("queued", 0));
    assert_eq!(
        store.enqueue(&t, 11).unwrap().state,
        "queued",
        "no second task"
    );
    let patterns = vec!["payment.*".to_string()];
    let claim = |now| Claim {
        patterns: &patterns,
        worker: "w",
        lease_ms: 100,
        max: 5,
        now,
        namespace: None,
    };
    let first = store.claim(&claim(20)).unwrap();
    assert_eq!(first.len(), 1);
    let old = first[0].lease_token.clone().unwrap();
    assert!(store.claim(&claim(50)).unwrap().is_empty(), "leased");
    assert_eq!(store.next_lease_expiry().unwrap(), Some(120));
    // A claim that takes nothing answers the earliest lease expiry (on
    // PostgreSQL from the claim's own statement), one that takes a task
    // none.
    assert_eq!(
        store.claim_or_next_expiry(&claim(60)).unwrap(),
        (Vec::new(), Some(120))
    );
    let second = store.claim(&claim(121)).unwrap();
    assert_eq!(second[0].attempt, 2);
    let new = second[0].lease_token.clone().unwrap();
    assert_ne!(old, new);
    assert_eq!(
        store.heartbeat(&t.idempotency_key, &old, 100, 130).unwrap(),
        None
    );
    assert!(
        !store
            .answer(
                &t.idempotency_key,
                &old,
                &TaskAnswer::Completed(json!({"t": "null"})),
                130
            )
            .unwrap()
    );
    assert_eq!(
        store
            .heartbeat(&t.idempotency_key, &new, 1000, 130)
            .unwrap(),
        Some(1130)
    );
    assert!(
        store
            .answer(
                &t.idempotency_key,
                &new,
                &TaskAnswer::Failed("declined".into()),
                140
            )
            .unwrap()
    );
    assert!(
        !store
            .answer(
                &t.idempotency_key,
                &new,
                &TaskAnswer::Failed("again".into()),
                141
            )
            .unwrap()
    );
    let failed = store.get(&t.idempotency_key).unwrap().unwrap();
    assert_eq!(
        (failed.state.as_str(), failed.message.as_deref()),
        ("failed", Some("declined"))
    );
    // Asked for again (a retry): queued again, answer cleared.
    let requeued = store.enqueue(&t, 150).unwrap();
    assert_eq!(
        (requeued.state.as_str(), requeued.message),
        ("queued", None)
    );
    assert!(store.expire(&t.idempotency_key, "no worker", 160).unwrap());
    assert!(!store.expire(&t.idempotency_key, "no worker", 161).unwrap());
    assert_eq!(
        store.claim_or_next_expiry(&claim(170)).unwrap(),
        (Vec::new(), None),
        "nothing leased, nothing to hand out"
    );
    let done = task(2, "payment.refund");
    store.enqueue(&done, 10).unwrap();
    let (c, expiry) = store.claim_or_next_expiry(&claim(200)).unwrap();
    assert_eq!((c.len(), expiry), (1, None));
    assert_eq!(
        (c[0].state.as_str(), c[0].lease_until, c[0].attempt),
        ("leased", 300, 1)
    );
    let token = c[0].lease_token.clone().unwrap();
    assert!(
        store
            .answer(
                &done.idempotency_key,
                &token,
                &TaskAnswer::Completed(json!({"t": "string", "v": "ok"})),
                201
            )
            .unwrap()
    );
    let row = store.get(&done.idempotency_key).unwrap().unwrap();
    assert_eq!(row.result, Some(json!({"t": "string", "v": "ok"})));
    assert_eq!(
        store.enqueue(&done, 202).unwrap().state,
        "completed",
        "an answered task stays answered"
    );
}

#[test]
fn lease_rules_on_sqlite() {
    let (_dir, store) = scratch_sqlite();
    lease_rules(&store);
}

#[test]
fn lease_rules_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_tasks").unwrap() else {
        return;
    };
    let store = PgTasks::open(&schema.url()).unwrap();
    lease_rules(&store);
}

/// A node that starts while another node's task transaction holds row
/// locks on `worker_tasks` opens its queue at once: opening runs no DDL
/// on an existing, current table (an `ALTER TABLE` there waited for the
/// busy node, and deadlocked against its next statement).
#[test]
fn a_node_opens_its_task_queue_beside_a_busy_node() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_tasks_busy").unwrap()
    else {
        return;
    };
    let first = PgTasks::open(&schema.url()).unwrap();
    let mut busy = schema.connect().unwrap();
    let mut tx = busy.transaction().unwrap();
    tx.batch_execute("SELECT * FROM worker_tasks FOR UPDATE")
        .unwrap();
    let url = schema.url();
    let (sent, opened) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sent.send(PgTasks::open(&url).map(|_| ()).map_err(|e| e.to_string()));
    });
    let outcome = opened.recv_timeout(std::time::Duration::from_secs(20));
    tx.rollback().unwrap();
    assert_eq!(
        outcome,
        Ok(Ok(())),
        "the second node's open waited on the busy node"
    );
    drop(first);
}

/// One answer of a random batch: the task (`n` and above: a task that does
/// not exist), whether it carries the task's own lease token, and
/// complete or fail.
type BatchItem = (usize, bool, bool);

fn batch_case() -> impl Strategy<Value = (usize, usize, Vec<BatchItem>)> {
    (1usize..6).prop_flat_map(|n| {
        (
            Just(n),
            0..=n,
            prop::collection::vec((0..n + 2, any::<bool>(), any::<bool>()), 1..10),
        )
    })
}

/// `answer_many` takes exactly the answers that one answer after another
/// would: an item is stored when its task is leased under its token and no
/// earlier item of the batch answered it; the rows then hold the stored
/// answers, the others are untouched. `store` starts empty; `n` tasks are
/// queued and the first `leased` of them handed out.
fn batch_matches_one_by_one(
    store: &dyn TaskStore,
    n: usize,
    leased: usize,
    items: &[BatchItem],
) -> Result<(), TestCaseError> {
    for i in 0..n {
        store.enqueue(&task(i, "k"), 1).unwrap();
    }
    let patterns = vec!["k".to_string()];
    let mut tokens = std::collections::HashMap::new();
    if leased > 0 {
        let claim = Claim {
            patterns: &patterns,
            worker: "w",
            lease_ms: 600_000,
            max: leased,
            now: 2,
            namespace: None,
        };
        for t in store.claim(&claim).unwrap() {
            tokens.insert(t.idempotency_key.clone(), t.lease_token.clone().unwrap());
        }
    }
    prop_assert_eq!(tokens.len(), leased);
    let answers: Vec<LeasedAnswer> = items
        .iter()
        .enumerate()
        .map(|(j, &(i, own_token, complete))| {
            let key = format!("e{i}:k");
            LeasedAnswer {
                token: match (own_token, tokens.get(&key)) {
                    (true, Some(t)) => t.clone(),
                    _ => "not-the-token".to_string(),
                },
                idempotency_key: key,
                answer: if complete {
                    TaskAnswer::Completed(json!({"t": "number", "v": j}))
                } else {
                    TaskAnswer::Failed(format!("failure {j}"))
                },
            }
        })
        .collect();
    let done = store.answer_many(&answers, 3).unwrap();
    let mut stored: std::collections::HashMap<String, &LeasedAnswer> = Default::default();
    let mut want = Vec::new();
    for (a, &(_, own_token, _)) in answers.iter().zip(items) {
        let takes = own_token
            && tokens.contains_key(&a.idempotency_key)
            && !stored.contains_key(&a.idempotency_key);
        if takes {
            stored.insert(a.idempotency_key.clone(), a);
        }
        want.push(takes);
    }
    prop_assert_eq!(&done, &want, "{:?}", items);
    for i in 0..n {
        let key = format!("e{i}:k");
        let row = store.get(&key).unwrap().unwrap();
        match stored.get(&key).map(|a| &a.answer) {
            Some(TaskAnswer::Completed(v)) => {
                prop_assert_eq!(&row.state, "completed");
                prop_assert_eq!(row.result.as_ref(), Some(v));
                prop_assert_eq!(row.lease_token, None);
            }
            Some(TaskAnswer::Failed(m)) => {
                prop_assert_eq!(&row.state, "failed");
                prop_assert_eq!(row.message.as_ref(), Some(m));
            }
            None if tokens.contains_key(&key) => {
                prop_assert_eq!(&row.state, "leased");
                prop_assert_eq!(row.lease_token.as_ref(), tokens.get(&key));
            }
            None => prop_assert_eq!(&row.state, "queued"),
        }
    }
    prop_assert!(store.get("e99:k").unwrap().is_none());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_batch_of_answers_stores_what_one_by_one_would(case in batch_case()) {
        let (n, leased, items) = case;
        let (_dir, store) = scratch_sqlite();
        batch_matches_one_by_one(&store, n, leased, &items)?;
    }
}

/// The same on PostgreSQL, whose batch is one statement (one by one when a
/// task repeats in it): one scratch schema, emptied before each case.
#[test]
fn a_batch_of_answers_stores_what_one_by_one_would_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_tasks_batch").unwrap()
    else {
        return;
    };
    let store = PgTasks::open(&schema.url()).unwrap();
    let admin = std::sync::Mutex::new(schema.connect().unwrap());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(32));
    runner
        .run(&batch_case(), |(n, leased, items)| {
            admin
                .lock()
                .unwrap()
                .batch_execute("DELETE FROM worker_tasks")
                .unwrap();
            batch_matches_one_by_one(&store, n, leased, &items)
        })
        .unwrap();
}
