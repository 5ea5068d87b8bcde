//! Stores written by irkit before the reference-compatibility change (issue
//! 18) still resume: a SQLite file and a PostgreSQL dump made by main at
//! fd01396 (`tests/fixtures/old-stores/make.sh`) hold executions suspended
//! where the wire spellings changed — waits inside groups under
//! `{exec}:{event}::{pc}` ids, a race, a JoinAll with a finished child, a
//! failed effect journalled as a bare string, statuses `runnable`. Each is
//! woken and must finish with the result the program computes.

use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers};
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::{JournalRow, Store};
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/old-stores")
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let p = std::env::temp_dir().join(tcc_host::random_id("tcc-old-store-"));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Counts provider calls; every effect echoes its input.
struct Counting(std::sync::Mutex<Vec<String>>);

impl EffectProvider for Counting {
    fn call(&self, c: &EffectCall<'_>) -> ProviderOutcome {
        self.0.lock().unwrap().push(c.idempotency_key.to_string());
        ProviderOutcome::Result(c.input.clone())
    }
}

fn s(v: &str) -> J {
    json!({"t": "string", "v": v})
}

fn run_all(host: &Arc<Host>, ids: &[&str]) -> Vec<tcc_host::store::ExecutionRow> {
    let threads = host.spawn();
    let rows = ids
        .iter()
        .map(|id| host.wait_for(id, Duration::from_secs(30), true).unwrap())
        .collect();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    rows
}

/// Wakes every suspended execution of the fixture and checks the results.
fn resume_all(store: Arc<dyn Store>) {
    // What the old engine wrote: statuses, the wait ids inside groups, the
    // bare-string failure in the journal.
    let gather = store.get_execution("gather").unwrap().unwrap();
    assert_eq!(gather.status, "suspended");
    let caught = store.journal_of("caught").unwrap();
    assert_eq!(caught.len(), 1);
    assert_eq!(caught[0].status, "failed");
    let message = caught[0]
        .result
        .as_str()
        .expect("a bare string")
        .to_string();
    assert!(message.contains("127.0.0.1:9"), "{message}");

    let counting = Arc::new(Counting(Default::default()));
    let providers = Providers::with_routes(vec![("*".into(), counting.clone() as _)]);
    let host = Host::new(store.clone(), providers, HostConfig::default());
    for (id, name, payload) in [
        ("gather", "go", s("g1")),
        ("gather", "go2", s("g2")),
        ("race", "win", s("w")),
        ("caught", "after", s("late")),
        ("kid", "go", s("k")),
        ("wait", "approved", s("yes")),
    ] {
        store.send_event(id, name, &payload).unwrap();
    }
    let ids = ["gather", "race", "caught", "kid", "wait"];
    let rows = run_all(&host, &ids);
    for r in &rows {
        assert_eq!(r.status, "completed", "{r:?}");
    }
    let results: Vec<J> = rows
        .iter()
        .map(|r| r.result.clone().unwrap().to_json().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            json!({"t": "array", "v": [{"t": "object", "v": {}}, s("g1"), s("g2")]}),
            s("w"),
            json!({"t": "array", "v": [s(&message), s("late")]}),
            json!({"t": "array", "v": [{"t": "number", "v": 42}, s("k")]}),
            s("yes"),
        ]
    );
    // Nothing re-ran: the effect before the group was journalled by the old host.
    assert!(counting.0.lock().unwrap().is_empty());
    // The latest continuations are the reference's spelling and decode again.
    for id in ids {
        let c = host.load_continuation(id).unwrap().unwrap();
        assert_eq!(c.status.as_str(), "completed");
    }
}

#[test]
fn a_sqlite_store_written_by_main_resumes() {
    let dir = TempDir::new();
    let db = dir.0.join("old.sqlite");
    std::fs::copy(fixtures().join("store.sqlite"), &db).unwrap();
    resume_all(Arc::new(SqliteStore::open(&db).unwrap()));
}

#[test]
fn a_postgres_store_written_by_main_resumes() {
    let Some(schema) = ScratchSchema::create("t_old").unwrap() else {
        return;
    };
    let dump = std::fs::read_to_string(fixtures().join("store.pg.sql")).unwrap();
    schema
        .execute(&dump.replace("OLDSCHEMA", &schema.schema))
        .unwrap();
    resume_all(Arc::new(PgStore::open(&schema.url()).unwrap()));
}

/// A journal row of a failed effect in the old spelling (a bare string)
/// replays as that failure, without calling the provider.
#[test]
fn a_bare_string_failure_in_the_journal_replays() {
    let dir = TempDir::new();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.0.join("t.db")).unwrap());
    let counting = Arc::new(Counting(Default::default()));
    let providers = Providers::with_routes(vec![("*".into(), counting.clone() as _)]);
    let host = Host::new(store.clone(), providers, HostConfig::default());
    let caught = std::fs::read(fixtures().join("caught.json")).unwrap();
    host.register(&caught, Some("caught")).unwrap();
    let id = host.start("caught", vec![], Some("r".into())).unwrap();
    store
        .journal_put(&JournalRow {
            idempotency_key: "r:fail.x".into(),
            execution_id: "r".into(),
            key: "fail.x".into(),
            input: "{\"t\":\"object\",\"v\":{}}".into(),
            status: "failed".into(),
            result: json!("declined before"),
        })
        .unwrap();
    store.send_event(&id, "after", &s("then")).unwrap();
    let rows = run_all(&host, &[&id]);
    assert_eq!(
        rows[0].result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "array", "v": [s("declined before"), s("then")]}))
    );
    assert!(counting.0.lock().unwrap().is_empty());
}
