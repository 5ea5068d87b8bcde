//! In-process tests of the host over both stores (SQLite, and PostgreSQL
//! when reachable — see `tcc_host::test_support::ScratchSchema`): every durable
//! operation, early events, cancellation, journalling, leases/CAS,
//! migrations, artifact pinning and missing artifacts; on PostgreSQL also
//! several hosts sharing one database.

mod common;

use serde_json::{Value as J, json};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers};
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::{CheckpointTx, NewExecution, Store, StoreError};
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig};

struct Counting(std::sync::Mutex<Vec<String>>);

impl EffectProvider for Counting {
    fn call(&self, c: &EffectCall<'_>) -> ProviderOutcome {
        self.0.lock().unwrap().push(c.idempotency_key.to_string());
        if c.key.starts_with("fail.") {
            ProviderOutcome::Failed(format!("{} refused", c.key))
        } else {
            ProviderOutcome::Result(c.input.clone())
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Sqlite,
    Postgres,
    /// PostgreSQL, in a database whose default collation is ICU's `en-US`.
    PostgresIcu,
}

/// Where a test's data lives; removed on drop.
enum Db {
    Sqlite(tempdir::Dir),
    Pg(ScratchSchema),
}

impl Db {
    fn new(kind: Kind) -> Option<Db> {
        match kind {
            Kind::Sqlite => Some(Db::Sqlite(tempdir::Dir::new())),
            Kind::Postgres => ScratchSchema::create("t_host").unwrap().map(Db::Pg),
            Kind::PostgresIcu => {
                ScratchSchema::create_in(tcc_host::test_support::test_database_url_icu(), "t_icu")
                    .unwrap()
                    .map(Db::Pg)
            }
        }
    }

    fn open(&self) -> Result<Arc<dyn Store>, StoreError> {
        Ok(match self {
            Db::Sqlite(d) => Arc::new(SqliteStore::open(&d.path.join("t.db"))?),
            Db::Pg(s) => Arc::new(PgStore::open(&s.url())?),
        })
    }

    /// Runs raw SQL against the backing database (test tampering).
    fn sql(&self, sql: &str) {
        match self {
            Db::Sqlite(d) => rusqlite::Connection::open(d.path.join("t.db"))
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Db::Pg(s) => s.execute(sql).unwrap(),
        }
    }
}

type Fixture = (Db, Arc<dyn Store>, Arc<Host>, Arc<Counting>);

fn setup(kind: Kind) -> Option<Fixture> {
    let db = Db::new(kind)?;
    let store = db.open().unwrap();
    let counting = Arc::new(Counting(Default::default()));
    let providers = Providers::with_routes(vec![("*".into(), counting.clone() as _)]);
    let host = Host::new(store.clone(), providers, HostConfig::default());
    Some((db, store, host, counting))
}

/// Runs `body` as one test per backend.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::Kind::Sqlite)
            }
            #[test]
            fn postgres() {
                super::$name(super::Kind::Postgres)
            }
        })*
    };
}

on_both!(
    every_durable_operation_completes,
    events_queue_in_order_and_cancel_ends_a_wait,
    two_events_of_one_name_feed_two_waits_in_order,
    checkpoint_needs_the_lease_and_the_revision,
    group_commit_serves_concurrent_writers,
    reopening_keeps_data_and_refuses_newer_schemas,
    missing_artifact_is_reported_and_resumes_once_registered,
    a_different_artifact_under_the_pinned_hash_fails_with_artifact_mismatch,
    a_changed_input_for_a_journalled_key_is_refused,
    cancelling_a_parent_cancels_its_children,
    the_history_lists_each_effect_once_in_order,
    concurrent_steps_and_journal_rows_each_get_their_own_outcome,
    executions_started_together_are_created_all_or_none,
    a_claim_for_a_drive_brings_the_journal_keys_or_none,
    the_heartbeat_renews_only_the_leases_it_holds,
    two_nodes_claiming_at_once_each_execution_goes_to_one,
    an_executions_journal_is_its_own_keys_only,
    a_timer_registered_while_the_scheduler_is_busy_fires_on_time,
    a_catchable_cancel_runs_the_handler_once_and_drops_the_wait,
    terminate_stops_a_running_compensation,
    a_parent_catches_its_childs_failure,
);

/// The journal's key ranges where the database's own collation does not
/// sort by bytes (ICU `en-US` puts `j;` before `j:zz`).
#[test]
fn an_executions_journal_is_its_own_keys_only_under_an_icu_collation() {
    an_executions_journal_is_its_own_keys_only(Kind::PostgresIcu)
}

mod tempdir {
    pub struct Dir {
        pub path: std::path::PathBuf,
    }
    impl Dir {
        pub fn new() -> Dir {
            let path = std::env::temp_dir().join(tcc_host::random_id("tcc-host-test-"));
            std::fs::create_dir_all(&path).unwrap();
            Dir { path }
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn run_all(host: &Arc<Host>, ids: &[&str]) -> Vec<tcc_host::store::ExecutionRow> {
    let threads = host.spawn();
    let rows = ids
        .iter()
        .map(|id| host.wait_for(id, Duration::from_secs(20), true).unwrap())
        .collect();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    rows
}

fn num(x: f64) -> J {
    json!({"t": "number", "v": tcc_engine::json::number_json(x)})
}

fn every_durable_operation_completes(kind: Kind) {
    let Some((_d, store, host, counting)) = setup(kind) else {
        return;
    };
    host.register(&common::flow(), Some("flow")).unwrap();
    host.register(&common::worker(), Some("worker")).unwrap();
    host.register(&common::effects(), Some("effects")).unwrap();
    host.register(&common::join_all(), Some("all")).unwrap();
    host.register(&common::join_any(), Some("any")).unwrap();
    host.register(&common::caught(), Some("caught")).unwrap();
    let f = host.start("flow", vec![], Some("f".into())).unwrap();
    // Early event: sent before the wait is registered, kept until it is.
    store
        .send_event(&f, "approved", &json!({"t": "string", "v": "yes"}))
        .unwrap();
    let e = host.start("effects", vec![], Some("e".into())).unwrap();
    let a = host.start("all", vec![], Some("a".into())).unwrap();
    store.send_event(&a, "go", &num(5.0)).unwrap();
    let y = host.start("any", vec![], Some("y".into())).unwrap();
    let c = host.start("caught", vec![], Some("c".into())).unwrap();
    let rows = run_all(&host, &[&f, &e, &a, &y, &c]);
    for r in &rows {
        assert_eq!(r.status, "completed", "{r:?}");
        assert_eq!((r.owner.as_deref(), r.lease_until), (None, 0), "{r:?}");
    }
    let flow_result = rows[0].result.clone().unwrap().to_json().unwrap();
    assert_eq!(
        flow_result,
        json!({"t": "array", "v": [
            {"t": "object", "v": {"n": num(7.0)}},
            {"t": "string", "v": "yes"},
            {"t": "string", "v": "yes"}
        ]})
    );
    assert_eq!(
        rows[1].result.clone().unwrap().to_json().unwrap(),
        json!({"t": "array", "v": [{"t": "object", "v": {"amount": num(42.0)}}, {"t": "object", "v": {}}]})
    );
    assert_eq!(
        rows[2].result.clone().unwrap().to_json().unwrap(),
        json!({"t": "array", "v": [{"t": "object", "v": {}}, {"t": "undefined"}, num(5.0)]})
    );
    assert_eq!(
        rows[3].result.clone().unwrap().to_json().unwrap(),
        json!({"t": "undefined"})
    );
    assert_eq!(
        rows[4].result.clone().unwrap().to_json().unwrap(),
        json!({"t": "string", "v": "fail.x refused"})
    );
    // The child ran as its own execution and reported back.
    let child = store.get_execution("child:f:invoke:14").unwrap().unwrap();
    assert_eq!(child.status, "completed");
    assert_eq!(child.parent_id.as_deref(), Some("f"));
    // Each effect ran exactly once and is journalled.
    let mut calls = counting.0.lock().unwrap().clone();
    calls.sort();
    let mut dedup = calls.clone();
    dedup.dedup();
    assert_eq!(calls, dedup, "an effect ran twice");
    assert_eq!(calls.len(), 6, "{calls:?}");
    let j = store.journal_of("c").unwrap();
    assert_eq!(j.len(), 1);
    assert_eq!(j[0].status, "failed");
    // Journalled as the engine's persist_effect carries it: a tagged string
    // (rows written before that hold a bare string; both replay).
    assert_eq!(j[0].result, json!({"t": "string", "v": "fail.x refused"}));
    let h = store.history("f", 0, 1000).unwrap();
    assert!(h.iter().any(|x| x.kind == "event_delivered"));
    assert!(h.iter().any(|x| x.kind == "timer_delivered"));
    assert!(h.iter().any(|x| x.kind == "child_delivered"));
}

fn events_queue_in_order_and_cancel_ends_a_wait(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::waiter(), Some("w")).unwrap();
    let id = host.start("w", vec![], Some("w1".into())).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "suspended");
    assert_eq!(
        rows[0].pending.as_ref().unwrap()["kind"]["event_name"],
        "never"
    );
    store.request_cancel(&id).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "cancelled");
    assert!(matches!(
        store.request_cancel(&id),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.send_event(&id, "never", &num(1.0)),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.send_event("nope", "x", &num(1.0)),
        Err(StoreError::NotFound(_))
    ));
}

fn two_events_of_one_name_feed_two_waits_in_order(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    let ins = json!([
        {"op": "LoadConst", "value": {"t": "string", "v": "tick"}}, {"op": "WaitForEvent"},
        {"op": "LoadConst", "value": {"t": "string", "v": "tick"}}, {"op": "WaitForEvent"},
        {"op": "StrictEq"}, {"op": "Return"}
    ]);
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("t"))
        .unwrap();
    let id = host.start("t", vec![], None).unwrap();
    store.send_event(&id, "tick", &num(1.0)).unwrap();
    store.send_event(&id, "tick", &num(2.0)).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(
        rows[0].result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "bool", "v": false}))
    );
}

fn checkpoint_needs_the_lease_and_the_revision(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    let hash = host.register(&common::waiter(), None).unwrap();
    let args = tcc_host::values::TaggedList::from_values(&[num(5.0)]);
    store
        .create_execution(&NewExecution {
            id: "x".into(),
            artifact_hash: hash.clone(),
            program_name: None,
            args: args.clone(),
            parent: None,
            namespace: "default".into(),
        })
        .unwrap();
    assert!(matches!(
        store.create_execution(&NewExecution {
            id: "x".into(),
            artifact_hash: hash,
            program_name: None,
            args: Default::default(),
            parent: None,
            namespace: "default".into(),
        }),
        Err(StoreError::Conflict(_))
    ));
    let now = tcc_host::now_ms();
    // A claim before the first checkpoint has the arguments to start from.
    let claimed = store.claim("x", "a", now, 10_000).unwrap().unwrap();
    assert_eq!(claimed.args, args);
    assert!(store.claim("x", "b", now, 10_000).unwrap().is_none());
    let tx = |owner: &str, revision: u64| CheckpointTx {
        id: "x".into(),
        owner: owner.into(),
        revision,
        kind: "snapshot".into(),
        body: "{}".into(),
        status: "runnable".into(),
        result: None,
        message: None,
        pending: None,
        registrations: vec![],
        consumed: None,
        history: vec![],
        resume_key: None,
    };
    assert!(matches!(
        store.commit_checkpoint(tx("b", 1)),
        Err(StoreError::Conflict(_))
    ));
    assert!(matches!(
        store.commit_checkpoint(tx("a", 2)),
        Err(StoreError::Conflict(_))
    ));
    store.commit_checkpoint(tx("a", 1)).unwrap();
    assert!(matches!(
        store.commit_checkpoint(tx("a", 1)),
        Err(StoreError::Conflict(_))
    ));
    // An expired lease is taken over; the old owner can no longer commit.
    // A claim after the first checkpoint leaves the arguments out (the
    // drive resumes from the checkpoint); the row keeps them.
    let claimed = store
        .claim("x", "b", now + 20_000, 10_000)
        .unwrap()
        .unwrap();
    assert_eq!(claimed.args.text().unwrap(), "[]");
    assert_eq!(store.get_execution("x").unwrap().unwrap().args, args);
    assert!(matches!(
        store.commit_checkpoint(tx("a", 2)),
        Err(StoreError::Conflict(_))
    ));
    store.commit_checkpoint(tx("b", 2)).unwrap();
    // Plain steps (a delta with nothing registered or consumed: one
    // statement on PostgreSQL, the status-keeping update on SQLite) with
    // history: a refused one writes nothing, an accepted one all of it in
    // order; a status change takes the full update (and its index).
    let step = |owner: &str, revision: u64, status: &str| CheckpointTx {
        kind: "delta".into(),
        status: status.into(),
        history: vec![
            ("effect".into(), json!({"n": revision})),
            ("note".into(), J::Null),
        ],
        ..tx(owner, revision)
    };
    let before = store.history("x", 0, 1000).unwrap().len();
    assert!(matches!(
        store.commit_checkpoint(step("a", 3, "runnable")),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.history("x", 0, 1000).unwrap().len(), before);
    store.commit_checkpoint(step("b", 3, "runnable")).unwrap();
    store.commit_checkpoint(step("b", 4, "suspended")).unwrap();
    let row = store.get_execution("x").unwrap().unwrap();
    assert_eq!((row.revision, row.status.as_str()), (4, "suspended"));
    let kinds: Vec<String> = store
        .history("x", 0, 1000)
        .unwrap()
        .into_iter()
        .skip(before)
        .map(|h| h.kind)
        .collect();
    assert_eq!(kinds, ["effect", "note", "effect", "note"]);
    let revisions: Vec<u64> = store
        .load_checkpoints("x")
        .unwrap()
        .iter()
        .map(|c| c.revision)
        .collect();
    assert_eq!(revisions, [2, 3, 4]);
    let suspended = store
        .list_executions(&tcc_host::store::ListFilter {
            status: Some("suspended".into()),
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert!(suspended.iter().any(|r| r.id == "x"));
    // A terminal checkpoint gives the lease back with its commit; one that
    // is not terminal keeps it.
    let row = store.get_execution("x").unwrap().unwrap();
    assert_eq!(row.owner.as_deref(), Some("b"));
    store.commit_checkpoint(step("b", 5, "completed")).unwrap();
    let row = store.get_execution("x").unwrap().unwrap();
    assert_eq!(
        (row.status.as_str(), row.owner.as_deref(), row.lease_until),
        ("completed", None, 0)
    );
}

fn group_commit_serves_concurrent_writers(kind: Kind) {
    let Some((_d, store, _host, _)) = setup(kind) else {
        return;
    };
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    store.kv_set(&format!("k{t}-{i}"), &num(i as f64)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(store.kv_get("k15-19").unwrap(), Some(num(19.0)));
}

fn reopening_keeps_data_and_refuses_newer_schemas(kind: Kind) {
    let Some(d) = Db::new(kind) else { return };
    d.open().unwrap().kv_set("a", &num(1.0)).unwrap();
    assert_eq!(d.open().unwrap().kv_get("a").unwrap(), Some(num(1.0)));
    d.sql(match kind {
        Kind::Sqlite => "PRAGMA user_version = 99",
        Kind::Postgres | Kind::PostgresIcu => "UPDATE irkit_tcc_schema_version SET version = 99",
    });
    assert!(matches!(d.open(), Err(StoreError::Corrupt(_))));
}

fn missing_artifact_is_reported_and_resumes_once_registered(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    let bytes = common::effects();
    let art = tcc_ir::decode_artifact(&bytes).unwrap();
    let hash = art.envelope.artifact_hash.clone();
    store
        .create_execution(&NewExecution {
            id: "m".into(),
            artifact_hash: hash,
            program_name: None,
            args: Default::default(),
            parent: None,
            namespace: "default".into(),
        })
        .unwrap();
    let rows = run_all(&host, &["m"]);
    assert!(
        rows[0]
            .error
            .as_deref()
            .unwrap()
            .starts_with("artifact_missing")
    );
    host.register(&bytes, None).unwrap();
    let rows = run_all(&host, &["m"]);
    assert_eq!(rows[0].status, "completed");
}

fn a_different_artifact_under_the_pinned_hash_fails_with_artifact_mismatch(kind: Kind) {
    let Some((d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::waiter(), Some("w")).unwrap();
    let id = host.start("w", vec![], None).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "suspended");
    // Tamper: store another compilation under the pinned hash.
    let other: String = common::effects()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    d.sql(&match kind {
        Kind::Sqlite => format!(
            "UPDATE artifacts SET body = x'{other}' WHERE hash = '{}'",
            rows[0].artifact_hash
        ),
        Kind::Postgres | Kind::PostgresIcu => format!(
            "UPDATE artifacts SET body = '\\x{other}'::bytea WHERE hash = '{}'",
            rows[0].artifact_hash
        ),
    });
    let fresh = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
    store.send_event(&id, "never", &num(1.0)).unwrap();
    let rows = run_all(&fresh, &[&id]);
    assert_eq!(rows[0].status, "failed");
    assert!(
        rows[0].error.as_deref().unwrap().contains("hashes to"),
        "{rows:?}"
    );
}

fn a_changed_input_for_a_journalled_key_is_refused(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::effects(), Some("e")).unwrap();
    let id = host.start("e", vec![], Some("j".into())).unwrap();
    store
        .journal_put(&tcc_host::store::JournalRow {
            idempotency_key: "j:charge".into(),
            execution_id: "j".into(),
            key: "charge".into(),
            input: "{\"t\":\"null\"}".into(),
            status: "completed".into(),
            result: num(1.0),
        })
        .unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "failed");
    assert!(
        rows[0]
            .error
            .as_deref()
            .unwrap()
            .contains("different input")
    );
}

fn cancelling_a_parent_cancels_its_children(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::waiter(), Some("w")).unwrap();
    let ins = json!([
        {"op": "LoadConst", "value": {"t": "string", "v": "w"}},
        {"op": "Invoke", "arg_count": 0}, {"op": "Return"}
    ]);
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("parent"))
        .unwrap();
    let id = host.start("parent", vec![], Some("p".into())).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "suspended");
    let child = "child:p:invoke:1";
    assert_eq!(
        store.get_execution(child).unwrap().unwrap().status,
        "suspended"
    );
    store.request_cancel(&id).unwrap();
    let rows = run_all(&host, &[&id, child]);
    assert_eq!(rows[0].status, "cancelled");
    assert_eq!(rows[1].status, "cancelled");
    let h = store.history(child, 0, 100).unwrap();
    assert!(
        h.iter()
            .any(|e| e.kind == "cancel_requested" && e.detail["by"] == "p")
    );
}

#[test]
fn an_unreachable_postgres_is_a_clear_error() {
    match tcc_host::open_store("postgres://irkit:irkit@127.0.0.1:1/irkit_test") {
        Err(StoreError::Db(m)) => assert!(m.contains("cannot connect to PostgreSQL"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened"),
    }
    match tcc_host::open_store("postgres://irkit@127.0.0.1/x?schema=a-b") {
        Err(StoreError::Db(m)) => assert!(m.contains("schema"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened"),
    }
}

/// Two hosts ("nodes") on one PostgreSQL schema: work is shared, each
/// timer fires and each effect runs exactly once, and an execution whose
/// owner died (lease never renewed) is taken over once the lease expires.
#[test]
fn postgres_nodes_share_work_fire_each_timer_once_and_take_over_dead_leases() {
    let Some(db) = Db::new(Kind::Postgres) else {
        return;
    };
    let counting = Arc::new(Counting(Default::default()));
    let node = |name: &str| {
        let providers = Providers::with_routes(vec![("*".into(), counting.clone() as _)]);
        Host::new(
            db.open().unwrap(),
            providers,
            HostConfig {
                owner: name.into(),
                lease_ms: 400,
                workers: 3,
                poll_ms: 10,
                ..HostConfig::default()
            },
        )
    };
    let (a, b) = (node("node-a"), node("node-b"));
    let ins = json!([
        {"op": "LoadConst", "value": {"t": "number", "v": 40}}, {"op": "Sleep"}, {"op": "Pop"},
        {"op": "LoadConst", "value": {"t": "string", "v": "after"}}, {"op": "Effect"},
        {"op": "Return"}
    ]);
    a.register(&common::artifact(&[("run", 0, 0, ins)]), Some("timed"))
        .unwrap();
    let ids: Vec<String> = (0..24)
        .map(|i| a.start("timed", vec![], Some(format!("t{i:02}"))).unwrap())
        .collect();
    // A dead node holds this one: its lease is never renewed.
    let store = db.open().unwrap();
    let orphan = a.start("timed", vec![], Some("orphan".into())).unwrap();
    assert!(
        store
            .claim(&orphan, "node-dead", tcc_host::now_ms(), 400)
            .unwrap()
            .is_some()
    );
    let (ta, tb) = (a.spawn(), b.spawn());
    let mut all = ids.clone();
    all.push(orphan.clone());
    for id in &all {
        let r = b.wait_for(id, Duration::from_secs(30), false).unwrap();
        assert_eq!(r.status, "completed", "{r:?}");
    }
    a.shutdown();
    b.shutdown();
    for t in ta.into_iter().chain(tb) {
        t.join().unwrap();
    }
    for id in &all {
        let h = store.history(id, 0, 1000).unwrap();
        let fired = h.iter().filter(|e| e.kind == "timer_delivered").count();
        assert_eq!(fired, 1, "{id}: timer delivered {fired} times");
        assert_eq!(store.journal_of(id).unwrap().len(), 1);
    }
    let mut calls = counting.0.lock().unwrap().clone();
    assert_eq!(calls.len(), all.len(), "an effect ran twice: {calls:?}");
    calls.dedup();
    assert_eq!(calls.len(), all.len());
}

#[test]
fn postgres_nodes_starting_together_migrate_once() {
    let Some(db) = Db::new(Kind::Postgres) else {
        return;
    };
    let db = Arc::new(db);
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || db.open().map(|_| ()))
        })
        .collect();
    for o in opens {
        o.join().unwrap().unwrap();
    }
    let Db::Pg(s) = &*db else { unreachable!() };
    assert_eq!(
        s.query_text("SELECT version FROM irkit_tcc_schema_version")
            .unwrap()
            .as_deref(),
        Some(tcc_host::store::pg::MIGRATIONS.len().to_string().as_str())
    );
    assert_eq!(
        s.query_text("SELECT count(*) FROM irkit_tcc_schema_version")
            .unwrap()
            .as_deref(),
        Some("1")
    );
}

/// Each journalled effect is one `effect` entry of the history, in the
/// order the effects ran, before the checkpoint that completed the
/// execution; paging by `seq` runs through every kind of entry.
fn the_history_lists_each_effect_once_in_order(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::chain(3), Some("c3")).unwrap();
    let id = host.start("c3", vec![], None).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(rows[0].status, "completed");
    let h = store.history(&id, 0, 1000).unwrap();
    assert!(h.windows(2).all(|w| w[0].seq < w[1].seq), "{h:?}");
    assert_eq!(h[0].kind, "created");
    let effects: Vec<&J> = h
        .iter()
        .filter(|e| e.kind == "effect")
        .map(|e| &e.detail)
        .collect();
    let keys: Vec<&str> = effects.iter().map(|d| d["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["s0", "s1", "s2"], "{h:?}");
    for (d, k) in effects.iter().zip(&keys) {
        assert_eq!(d["idempotency_key"], json!(format!("{id}:{k}")));
        assert_eq!(d["status"], "completed");
    }
    let last = h.last().unwrap();
    assert_eq!(last.kind, "checkpoint");
    assert_eq!(last.detail["status"], "completed");
    let page = store.history(&id, h[1].seq, 2).unwrap();
    assert_eq!(
        page.iter().map(|e| e.seq).collect::<Vec<_>>(),
        h[2..4].iter().map(|e| e.seq).collect::<Vec<_>>()
    );
}

/// Many executions writing journal rows and checkpoints at once (group
/// commits; on PostgreSQL a group folds them into one statement per kind),
/// with stale and foreign steps among them, snapshots in the middle and a
/// terminal checkpoint with a history entry at the end: each write gets its
/// own outcome, a refused step changes nothing, a snapshot drops the older
/// rows, a terminal checkpoint closes the execution's open wait.
fn concurrent_steps_and_journal_rows_each_get_their_own_outcome(kind: Kind) {
    let Some((db, store, _host, _)) = setup(kind) else {
        return;
    };
    const N: usize = 24;
    const STEPS: u64 = 12;
    let now = tcc_host::now_ms();
    const SNAPSHOT_AT: u64 = 7;
    let step = |id: &str, owner: &str, revision: u64| CheckpointTx {
        id: id.into(),
        owner: owner.into(),
        revision,
        kind: if revision == 1 || revision == SNAPSHOT_AT {
            "snapshot"
        } else {
            "delta"
        }
        .into(),
        body: format!("{{\"r\":{revision}}}").into(),
        status: if revision == STEPS + 1 {
            "completed"
        } else {
            "runnable"
        }
        .into(),
        result: None,
        message: None,
        pending: Some(json!({"step": revision})),
        registrations: vec![],
        consumed: None,
        history: vec![],
        resume_key: None,
    };
    for e in 0..N {
        let id = format!("c{e:02}");
        store
            .create_execution(&NewExecution {
                id: id.clone(),
                artifact_hash: "h".into(),
                program_name: None,
                args: Default::default(),
                parent: None,
                namespace: "default".into(),
            })
            .unwrap();
        assert!(store.claim(&id, "w", now, 600_000).unwrap().is_some());
        // An open wait, for the terminal checkpoint to close.
        store
            .commit_checkpoint(CheckpointTx {
                registrations: vec![tcc_host::store::Registration::Event {
                    name: "never".into(),
                    wait_id: format!("{id}:w"),
                    branch: None,
                }],
                ..step(&id, "w", 1)
            })
            .unwrap();
    }
    let open_waits = |db: &Db| -> i64 {
        let sql = "SELECT COUNT(*) FROM waits WHERE NOT delivered";
        match db {
            Db::Sqlite(d) => rusqlite::Connection::open(d.path.join("t.db"))
                .unwrap()
                .query_row(sql, [], |r| r.get(0))
                .unwrap(),
            Db::Pg(s) => s.query_text(sql).unwrap().unwrap().parse().unwrap(),
        }
    };
    assert_eq!(open_waits(&db), N as i64);
    let barrier = Arc::new(std::sync::Barrier::new(N));
    let threads: Vec<_> = (0..N)
        .map(|e| {
            let (store, barrier) = (store.clone(), barrier.clone());
            std::thread::spawn(move || {
                let id = format!("c{e:02}");
                barrier.wait();
                for r in 2..=STEPS + 1 {
                    store
                        .journal_put(&tcc_host::store::JournalRow {
                            idempotency_key: format!("{id}:k{r}"),
                            execution_id: id.clone(),
                            key: format!("k{r}"),
                            input: "{}".into(),
                            status: "completed".into(),
                            result: json!({"t": "number", "v": r}),
                        })
                        .unwrap();
                    if (r + e as u64).is_multiple_of(3) {
                        // A replayed step and a foreign owner's step.
                        assert!(matches!(
                            store.commit_checkpoint(step(&id, "w", r - 1)),
                            Err(StoreError::Conflict(_))
                        ));
                        assert!(matches!(
                            store.commit_checkpoint(step(&id, "other", r)),
                            Err(StoreError::Conflict(_))
                        ));
                    }
                    let mut tx = step(&id, "w", r);
                    if r == STEPS + 1 {
                        tx.history = vec![("checkpoint".into(), json!({"revision": r}))];
                    }
                    store.commit_checkpoint(tx).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for e in 0..N {
        let id = format!("c{e:02}");
        let row = store.get_execution(&id).unwrap().unwrap();
        assert_eq!(row.revision, STEPS + 1, "{id}");
        assert_eq!(row.status, "completed", "{id}");
        assert_eq!(row.pending, Some(json!({"step": STEPS + 1})), "{id}");
        let revisions: Vec<u64> = store
            .load_checkpoints(&id)
            .unwrap()
            .iter()
            .map(|c| c.revision)
            .collect();
        assert_eq!(
            revisions,
            (SNAPSHOT_AT..=STEPS + 1).collect::<Vec<_>>(),
            "{id}"
        );
        let journal = store.journal_of(&id).unwrap();
        assert_eq!(journal.len(), STEPS as usize, "{id}");
        let effects = store
            .history(&id, 0, 1000)
            .unwrap()
            .into_iter()
            .filter(|h| h.kind == "effect")
            .count();
        assert_eq!(effects, STEPS as usize, "{id}");
        let last = store.history(&id, 0, 1000).unwrap().pop().unwrap();
        assert_eq!(
            (last.kind.as_str(), &last.detail),
            ("checkpoint", &json!({"revision": STEPS + 1})),
            "{id}"
        );
    }
    assert_eq!(open_waits(&db), 0);
}

/// `Host::start_many` creates its executions in one transaction, and a
/// batch with one id that exists already creates none of them.
fn executions_started_together_are_created_all_or_none(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    host.register(&common::chain(2), Some("c2")).unwrap();
    let ids = host.start_many("c2", vec![vec![]; 5]).unwrap();
    assert_eq!(ids.len(), 5);
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 5);
    let new = |id: &str| NewExecution {
        id: id.into(),
        artifact_hash: "h".into(),
        program_name: None,
        args: Default::default(),
        parent: None,
        namespace: "default".into(),
    };
    assert!(matches!(
        store.create_executions(&[new("fresh-1"), new(&ids[2]), new("fresh-2")]),
        Err(StoreError::Conflict(_))
    ));
    assert!(store.get_execution("fresh-1").unwrap().is_none());
    assert!(store.get_execution("fresh-2").unwrap().is_none());
    assert!(host.start_many("no-such-program", vec![vec![]]).is_err());
    let rows = run_all(&host, &ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(rows.iter().all(|r| r.status == "completed"), "{rows:?}");
}

/// `claim_for_drive` takes the lease like `claim`; the journal keys it may
/// bring along are exactly `journal_keys`.
/// An execution row of artifact `h`, without program, arguments or parent.
fn plain_execution(id: &str) -> NewExecution {
    NewExecution {
        id: id.into(),
        artifact_hash: "h".into(),
        program_name: None,
        args: Default::default(),
        parent: None,
        namespace: "default".into(),
    }
}

/// A completed journal row of execution `id` for effect `key`.
fn completed_effect(id: &str, key: &str) -> tcc_host::store::JournalRow {
    tcc_host::store::JournalRow {
        idempotency_key: tcc_host::store::journal_key(id, key),
        execution_id: id.into(),
        key: key.into(),
        input: "{}".into(),
        status: "completed".into(),
        result: J::Null,
    }
}

/// `renew_all` (the heartbeat's one write) extends the leases the owner
/// holds among the ids, and no other.
fn the_heartbeat_renews_only_the_leases_it_holds(kind: Kind) {
    let Some((_d, store, _host, _)) = setup(kind) else {
        return;
    };
    let ids = ["r1", "r2", "r3"];
    store.create_executions(&ids.map(plain_execution)).unwrap();
    let now = tcc_host::now_ms();
    for (id, owner) in [("r1", "w"), ("r2", "w"), ("r3", "other")] {
        assert!(
            store
                .claim_for_drive(id, owner, now, 1_000)
                .unwrap()
                .is_some()
        );
    }
    let asked: Vec<String> = ["r1", "r2", "r3", "missing"].map(String::from).to_vec();
    store.renew_all(&asked, "w", now + 500, 60_000).unwrap();
    store.renew_all(&[], "w", now + 500, 60_000).unwrap();
    let until = |id: &str| store.get_execution(id).unwrap().unwrap().lease_until;
    assert_eq!(until("r1"), now + 60_500);
    assert_eq!(until("r2"), now + 60_500);
    assert_eq!(until("r3"), now + 1_000, "another owner's lease is left");
}

fn a_claim_for_a_drive_brings_the_journal_keys_or_none(kind: Kind) {
    let Some((_d, store, _host, _)) = setup(kind) else {
        return;
    };
    store
        .create_executions(&[plain_execution("j"), plain_execution("j2")])
        .unwrap();
    for (id, key) in [("j", "a"), ("j", "b"), ("j2", "c")] {
        store.journal_put(&completed_effect(id, key)).unwrap();
    }
    let now = tcc_host::now_ms();
    let (row, keys) = store
        .claim_for_drive("j", "w", now, 10_000)
        .unwrap()
        .unwrap();
    assert_eq!((row.id.as_str(), row.owner.as_deref()), ("j", Some("w")));
    // PostgreSQL reads them in the claim's round trip; SQLite leaves them
    // to `journal_keys` (a local read).
    assert_eq!(keys.is_some(), matches!(kind, Kind::Postgres));
    if let Some(mut keys) = keys {
        keys.sort();
        assert_eq!(keys, ["j:a", "j:b"]);
    }
    let mut expected = store.journal_keys("j").unwrap();
    expected.sort();
    assert_eq!(expected, ["j:a", "j:b"]);
    assert!(
        store
            .claim_for_drive("j", "other", now, 10_000)
            .unwrap()
            .is_none()
    );
}

/// Two nodes (two stores on one database) claiming the same executions at
/// once, from many threads each (on PostgreSQL a group folds its claims
/// into one statement that skips rows another transaction has locked):
/// every execution is claimed by exactly one node, and the row says which.
fn two_nodes_claiming_at_once_each_execution_goes_to_one(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let nodes = [db.open().unwrap(), db.open().unwrap()];
    const N: usize = 24;
    let ids: Vec<String> = (0..N).map(|i| format!("k{i:02}")).collect();
    nodes[0]
        .create_executions(
            &ids.iter()
                .map(|id| NewExecution {
                    id: id.clone(),
                    artifact_hash: "h".into(),
                    program_name: None,
                    args: Default::default(),
                    parent: None,
                    namespace: "default".into(),
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
    let now = tcc_host::now_ms();
    let barrier = Arc::new(std::sync::Barrier::new(2 * N));
    let threads: Vec<_> = (0..2 * N)
        .map(|t| {
            let (store, barrier) = (nodes[t % 2].clone(), barrier.clone());
            let owner = ["a", "b"][t % 2];
            // Each node's threads go through the ids in a different order.
            let id = if t % 2 == 0 {
                format!("k{:02}", t / 2)
            } else {
                format!("k{:02}", N - 1 - t / 2)
            };
            std::thread::spawn(move || {
                barrier.wait();
                let got = store.claim_for_drive(&id, owner, now, 600_000).unwrap();
                (id, owner, got.map(|(row, _)| row))
            })
        })
        .collect();
    let mut winners = std::collections::BTreeMap::new();
    for t in threads {
        let (id, owner, row) = t.join().unwrap();
        if let Some(row) = row {
            assert_eq!(row.owner.as_deref(), Some(owner), "{id}");
            assert!(
                winners.insert(id.clone(), owner).is_none(),
                "{id} claimed twice"
            );
        }
    }
    assert_eq!(winners.len(), N, "{winners:?}");
    for (id, owner) in &winners {
        let row = nodes[0].get_execution(id).unwrap().unwrap();
        assert_eq!(row.owner.as_deref(), Some(*owner), "{id}");
    }
}

/// Every statement the PostgreSQL store prepared while running every
/// durable operation, listing, history and cancellation reaches its rows
/// through an index in its generic plan (the plan a prepared statement
/// keeps after its fifth run), although every table is nearly empty when
/// the plan is made: a scan planned then would scan the whole table on
/// every run as the table grows.
#[test]
fn every_cached_plan_reaches_its_rows_by_index() {
    let Some(db) = ScratchSchema::create("t_plans").unwrap() else {
        return;
    };
    let pg = Arc::new(PgStore::open(&db.url()).unwrap());
    let store: Arc<dyn Store> = pg.clone();
    let counting = Arc::new(Counting(Default::default()));
    let providers = Providers::with_routes(vec![("*".into(), counting.clone() as _)]);
    let host = Host::new(store.clone(), providers, HostConfig::default());
    for (bytes, name) in [
        (common::flow(), "flow"),
        (common::worker(), "worker"),
        (common::effects(), "effects"),
        (common::join_all(), "all"),
        (common::join_any(), "any"),
        (common::caught(), "caught"),
        (common::waiter(), "waiter"),
        (common::chain(40), "chain"),
    ] {
        host.register(&bytes, Some(name)).unwrap();
    }
    let f = host.start("flow", vec![], None).unwrap();
    store
        .send_event(&f, "approved", &json!({"t": "string", "v": "yes"}))
        .unwrap();
    let a = host.start("all", vec![], None).unwrap();
    store.send_event(&a, "go", &num(5.0)).unwrap();
    let mut ids = vec![f, a];
    for program in ["effects", "any", "caught"] {
        ids.push(host.start(program, vec![], None).unwrap());
    }
    // Enough concurrent steps for folded groups of every kind.
    ids.extend(host.start_many("chain", vec![vec![]; 24]).unwrap());
    let w = host.start("waiter", vec![], None).unwrap();
    let refs: Vec<&str> = ids.iter().map(|s| s.as_str()).collect();
    for r in run_all(&host, &refs) {
        assert_eq!(r.status, "completed", "{r:?}");
    }
    store.request_cancel(&w).unwrap();
    assert_eq!(run_all(&host, &[&w])[0].status, "cancelled");
    for id in &ids {
        store.history(id, 0, 100).unwrap();
        store.journal_of(id).unwrap();
        store.get_execution(id).unwrap();
    }
    let mut filter = tcc_host::store::ListFilter {
        status: Some("completed".into()),
        program: Some("chain".into()),
        artifact_missing: false,
        after: Some(1),
        limit: 5,
        namespace: Some("default".into()),
    };
    assert_eq!(store.list_executions(&filter).unwrap().len(), 5);
    filter.artifact_missing = true;
    store.list_executions(&filter).unwrap();
    let plans = pg.cached_generic_plans().unwrap();
    assert!(
        plans.len() >= 20,
        "only {} statements prepared",
        plans.len()
    );
    let scans: Vec<String> = plans
        .iter()
        .filter(|(_, plan)| plan.contains("Seq Scan"))
        .map(|(sql, plan)| format!("{sql}\n{plan}"))
        .collect();
    assert!(
        scans.is_empty(),
        "plans that scan:\n\n{}",
        scans.join("\n\n")
    );
}

/// A lease claim, renewal or release changes only `owner` and
/// `lease_until`; with no index on either, PostgreSQL can make it a HOT
/// update (no new entry in any index).
#[test]
fn no_postgres_index_holds_a_lease_column() {
    let Some(db) = ScratchSchema::create("t_lease_idx").unwrap() else {
        return;
    };
    PgStore::open(&db.url()).unwrap();
    let indexes = db
        .query_text(&format!(
            "SELECT string_agg(indexdef, '; ') FROM pg_indexes WHERE schemaname = '{}' AND tablename = 'executions'",
            db.schema
        ))
        .unwrap()
        .unwrap();
    assert!(indexes.contains("(status, seq)"), "{indexes}");
    assert!(
        !indexes.contains("lease_until") && !indexes.contains("owner"),
        "{indexes}"
    );
}

/// An execution's journal is read as the range of keys that start with
/// its id and ':': an execution whose id extends another's with ':' (a
/// child's id does) keeps its own rows, a key outside the range is
/// refused, and sorting neighbours (`j`, `j2`, `j:`) stay apart.
fn an_executions_journal_is_its_own_keys_only(kind: Kind) {
    let Some((_d, store, _host, _)) = setup(kind) else {
        return;
    };
    let new: Vec<NewExecution> = ["j", "j:b", "j2", "i"]
        .into_iter()
        .map(plain_execution)
        .collect();
    store.create_executions(&new).unwrap();
    let row = completed_effect;
    for (id, key) in [
        ("j", "x"),
        ("j:b", "y"),
        ("j2", "z"),
        ("i", "w"),
        ("j", "é;"),
        ("j", ""),
    ] {
        store.journal_put(&row(id, key)).unwrap();
    }
    let keys = |id: &str| {
        let mut k = store.journal_keys(id).unwrap();
        k.sort();
        k
    };
    assert_eq!(keys("j"), ["j:", "j:x", "j:é;"]);
    // An id with `:` is escaped in its keys (issue 42, F7).
    assert_eq!(keys("j:b"), ["j%3Ab:y"]);
    assert_eq!(keys("j2"), ["j2:z"]);
    let of_j: Vec<String> = store
        .journal_of("j")
        .unwrap()
        .into_iter()
        .map(|r| r.idempotency_key)
        .collect();
    assert_eq!(of_j, ["j:x", "j:é;", "j:"], "in journal order");
    let effects = store
        .history("j", 0, 100)
        .unwrap()
        .into_iter()
        .filter(|h| h.kind == "effect")
        .count();
    if store.history_lists_journal() {
        assert_eq!(effects, 3);
    }
    for bad in [
        tcc_host::store::JournalRow {
            idempotency_key: "i:q".into(),
            ..row("j", "q")
        },
        tcc_host::store::JournalRow {
            idempotency_key: "jq".into(),
            ..row("j", "q")
        },
    ] {
        assert!(
            matches!(store.journal_put(&bad), Err(StoreError::Unsupported(_))),
            "{bad:?}"
        );
    }
    assert_eq!(keys("i"), ["i:w"]);
}

/// The scheduler keeps the next timer's due time between wake-ups and
/// reads it again when this host registers a timer: with a long poll
/// interval, a 300 ms sleep registered while other executions keep the
/// scheduler busy still fires on time, not a poll interval late.
fn a_timer_registered_while_the_scheduler_is_busy_fires_on_time(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let store = db.open().unwrap();
    let cfg = HostConfig {
        poll_ms: 5_000,
        workers: 8,
        ..HostConfig::default()
    };
    let host = Host::new(store.clone(), Providers::echo_all(), cfg);
    let ins = json!([
        {"op": "LoadConst", "value": {"t": "number", "v": 300}}, {"op": "Sleep"},
        {"op": "Return"}
    ]);
    host.register(&common::artifact(&[("run", 0, 0, ins)]), Some("nap"))
        .unwrap();
    host.register(&common::chain(20), Some("chain")).unwrap();
    let threads = host.spawn();
    // Busy first: the scheduler wakes after each of these drives.
    let busy = host.start_many("chain", vec![vec![]; 16]).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let started = std::time::Instant::now();
    let nap = host.start("nap", vec![], None).unwrap();
    let more = host.start_many("chain", vec![vec![]; 16]).unwrap();
    let row = host.wait_for(&nap, Duration::from_secs(20), false).unwrap();
    let took = started.elapsed();
    for id in busy.iter().chain(&more) {
        host.wait_for(id, Duration::from_secs(20), false).unwrap();
    }
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(row.status, "completed", "{row:?}");
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(2_500),
        "the 300 ms timer fired after {took:?}"
    );
}

/// `try { await effect("hold"); return await wait_for_event("confirmed") }
/// catch (e) { await effect("release"); await wait_for_event("release_ok"); throw e }`,
/// requiring `irkit.catchable_cancel`.
fn compensating() -> Vec<u8> {
    let s = |v: &str| json!({"op": "LoadConst", "value": {"t": "string", "v": v}});
    let op = |o: &str| json!({"op": o});
    let ins = json!([
        {"op": "PushTry", "catch": 7, "finally": null},
        s("hold"), op("Effect"), op("Pop"), s("confirmed"), op("WaitForEvent"), op("Return"),
        {"op": "StoreLocal", "local": 0},
        s("release"), op("Effect"), op("Pop"), s("release_ok"), op("WaitForEvent"), op("Pop"),
        {"op": "LoadLocal", "local": 0}, op("Throw")
    ]);
    let bytes = common::artifact(&[("run", 0, 1, ins)]);
    let mut a = tcc_ir::decode_artifact(&bytes).unwrap();
    a.envelope
        .required_engine_features
        .push(tcc_ir::features::CATCHABLE_CANCEL.into());
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    tcc_ir::encode_artifact(&a)
}

fn a_catchable_cancel_runs_the_handler_once_and_drops_the_wait(kind: Kind) {
    let Some((_d, store, host, counting)) = setup(kind) else {
        return;
    };
    host.register(&compensating(), Some("saga")).unwrap();
    let id = host.start("saga", vec![], Some("s".into())).unwrap();
    assert_eq!(run_all(&host, &[&id])[0].status, "suspended");
    store.request_cancel(&id).unwrap();
    // The handler ran up to its own wait; the request was delivered and cleared.
    let row = run_all(&host, &[&id]).remove(0);
    assert_eq!(row.status, "suspended", "{row:?}");
    assert!(!row.cancel_requested, "{row:?}");
    let waits = store.waits_of(&id).unwrap();
    assert_eq!(waits.len(), 2, "{waits:?}");
    assert!(
        waits[0].delivered,
        "the abandoned wait is dropped: {waits:?}"
    );
    assert_eq!(waits[1].name.as_deref(), Some("release_ok"));
    assert!(!waits[1].delivered);
    // A second cancel during the compensation changes nothing; the event
    // the abandoned wait was for wakes nobody.
    store.request_cancel(&id).unwrap();
    store
        .send_event(&id, "confirmed", &json!({"t": "string", "v": "late"}))
        .unwrap();
    let row = run_all(&host, &[&id]).remove(0);
    assert_eq!(row.status, "suspended", "{row:?}");
    assert!(!row.cancel_requested, "{row:?}");
    store
        .send_event(&id, "release_ok", &json!({"t": "null"}))
        .unwrap();
    let row = run_all(&host, &[&id]).remove(0);
    assert_eq!(row.status, "cancelled", "{row:?}");
    assert_eq!(
        row.result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "string", "v": tcc_engine::CANCELLED_ERROR}))
    );
    let keys: Vec<String> = store
        .journal_of(&id)
        .unwrap()
        .into_iter()
        .map(|j| j.key)
        .collect();
    assert_eq!(keys, ["hold", "release"]);
    assert_eq!(counting.0.lock().unwrap().len(), 2, "each effect ran once");
    let h = store.history(&id, 0, 1000).unwrap();
    let delivered: Vec<_> = h.iter().filter(|e| e.kind == "cancel_delivered").collect();
    assert_eq!(delivered.len(), 1, "{h:?}");
    assert_eq!(delivered[0].detail["at"], "wait");
}

fn terminate_stops_a_running_compensation(kind: Kind) {
    let Some((_d, store, host, counting)) = setup(kind) else {
        return;
    };
    host.register(&compensating(), Some("saga")).unwrap();
    let id = host.start("saga", vec![], Some("t".into())).unwrap();
    run_all(&host, &[&id]);
    store.request_cancel(&id).unwrap();
    assert_eq!(run_all(&host, &[&id])[0].status, "suspended");
    store.request_terminate(&id).unwrap();
    let row = run_all(&host, &[&id]).remove(0);
    assert_eq!(row.status, "cancelled", "{row:?}");
    assert!(row.terminate_requested);
    assert_eq!(row.result, None, "terminated, not rethrown: {row:?}");
    assert_eq!(counting.0.lock().unwrap().len(), 2);
    assert!(matches!(
        store.request_terminate(&id),
        Err(StoreError::Conflict(_))
    ));
    // Terminating before anything ran: no effect at all.
    let id = host.start("saga", vec![], Some("u".into())).unwrap();
    store.request_terminate(&id).unwrap();
    assert_eq!(run_all(&host, &[&id])[0].status, "cancelled");
    assert!(store.journal_of(&id).unwrap().is_empty());
}

/// `try { return await invoke("kid") } catch (e) { return e }`, requiring
/// `irkit.catchable_child_failure` when `catchable`.
fn catching_parent(catchable: bool) -> Vec<u8> {
    let ins = json!([
        {"op": "PushTry", "catch": 4, "finally": null},
        {"op": "LoadConst", "value": {"t": "string", "v": "kid"}},
        {"op": "Invoke", "arg_count": 0}, {"op": "Return"}, {"op": "Return"}
    ]);
    let bytes = common::artifact(&[("run", 0, 0, ins)]);
    let mut a = tcc_ir::decode_artifact(&bytes).unwrap();
    if catchable {
        a.envelope
            .required_engine_features
            .push(tcc_ir::features::CATCHABLE_CHILD_FAILURE.into());
    }
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    tcc_ir::encode_artifact(&a)
}

fn a_parent_catches_its_childs_failure(kind: Kind) {
    let Some((_d, store, host, _)) = setup(kind) else {
        return;
    };
    let kid = json!([{"op": "LoadConst", "value": {"t": "string", "v": "kaput"}}, {"op": "Throw"}]);
    host.register(&common::artifact(&[("kid", 0, 0, kid)]), Some("kid"))
        .unwrap();
    host.register(&catching_parent(true), Some("parent"))
        .unwrap();
    host.register(&catching_parent(false), Some("old")).unwrap();
    let p = host.start("parent", vec![], Some("p".into())).unwrap();
    let o = host.start("old", vec![], Some("o".into())).unwrap();
    let rows = run_all(&host, &[&p, &o]);
    assert_eq!(rows[0].status, "completed", "{:?}", rows[0]);
    assert_eq!(
        rows[0].result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "string", "v": "child child:p:invoke:2 failed: kaput"}))
    );
    let h = store.history(&p, 0, 100).unwrap();
    assert!(
        h.iter().any(|e| e.kind == "child_failed_delivered"),
        "{h:?}"
    );
    // An artifact without the feature fails with its child, as before.
    assert_eq!(rows[1].status, "failed", "{:?}", rows[1]);
    assert!(
        rows[1]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("child child:o:invoke:2 failed"),
        "{:?}",
        rows[1]
    );
}
