//! Retention and archive (issue 35) over both stores: passes at chosen
//! times (the time is an argument: no test waits for a clock). Two nodes
//! (two stores on one PostgreSQL database; two owners on one SQLite
//! store) run passes at once: each execution is deleted and archived once.

mod common;
#[path = "common/db.rs"]
mod db;

use db::TestDb;
use serde_json::{Value as J, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tcc_host::providers::Providers;
use tcc_host::retention::{RetentionConfig, RetentionStore, run_pass};
use tcc_host::store::{Store, StoreError};
use tcc_host::{Host, HostConfig};

const HOUR: i64 = 3_600_000;

fn host(store: &Arc<dyn Store>) -> Arc<Host> {
    Host::new(store.clone(), Providers::echo_all(), HostConfig::default())
}

/// Two effects (`charge`, `ship`), then returns its argument.
fn two_effects() -> Vec<u8> {
    common::artifact(&[(
        "run",
        1,
        1,
        json!([
            {"op": "LoadConst", "value": {"t": "string", "v": "charge"}}, {"op": "Effect"}, {"op": "Pop"},
            {"op": "LoadConst", "value": {"t": "string", "v": "ship"}}, {"op": "Effect"}, {"op": "Pop"},
            {"op": "LoadLocal", "local": 0}, {"op": "Return"}
        ]),
    )])
}

fn retention(store: &Arc<dyn Store>) -> &dyn RetentionStore {
    tcc_host::retention::store_of(&**store).expect("the store keeps retention")
}

fn archive_lines(dir: &std::path::Path) -> Vec<J> {
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with("executions-20") && name.ends_with(".jsonl"),
            "{name}"
        );
        for l in std::fs::read_to_string(&path).unwrap().lines() {
            lines.push(serde_json::from_str(l).unwrap());
        }
    }
    lines
}

#[test]
fn expired_executions_are_archived_and_deleted_once_by_two_nodes() {
    for db in TestDb::all("t_retention") {
        let (a, b) = db.nodes();
        let h = host(&a);
        h.register(&two_effects(), Some("fx")).unwrap();
        h.register(&common::waiter(), Some("wait")).unwrap();
        let mut done = Vec::new();
        for i in 0..24 {
            let id = h
                .start(
                    "fx",
                    vec![json!({"t": "number", "v": f64::from(i)})],
                    Some(format!("old-{i:02}")),
                )
                .unwrap();
            assert!(h.drive(&id).unwrap());
            let row = a.get_execution(&id).unwrap().unwrap();
            assert_eq!(row.status, "completed", "{row:?}");
            done.push(id);
        }
        assert_eq!(a.journal_of("old-03").unwrap().len(), 2);
        let running = h.start("wait", vec![], Some("running".into())).unwrap();
        assert!(h.drive(&running).unwrap());
        let ended = a.get_execution("old-23").unwrap().unwrap().updated_ms;
        let archive = std::env::temp_dir().join(tcc_host::random_id("tcc-archive-"));

        let config = |owner: &str| {
            let mut c = RetentionConfig::new(HOUR, owner);
            c.batch = 5;
            c.pause_between = Duration::ZERO;
            c.archive_dir = Some(archive.clone());
            c
        };
        // Not an hour old yet: nothing.
        let first_end = a.get_execution("old-00").unwrap().unwrap().updated_ms;
        let r = run_pass(&*a, &config("node-a"), first_end + HOUR - 1).unwrap();
        assert_eq!(r.deleted, 0);
        assert!(a.get_execution("old-00").unwrap().is_some());

        // Two nodes at once, later: every expired one once.
        let later = ended + HOUR + 1;
        let (ca, cb) = (config("node-a"), config("node-b"));
        let (sa, sb) = (a.clone(), b.clone());
        let ta = std::thread::spawn(move || run_pass(&*sa, &ca, later).unwrap());
        let tb = std::thread::spawn(move || run_pass(&*sb, &cb, later).unwrap());
        let (ra, rb) = (ta.join().unwrap(), tb.join().unwrap());
        assert_eq!(ra.deleted + rb.deleted, 24, "{ra:?} {rb:?}");
        assert_eq!(ra.archived + rb.archived, 24, "{ra:?} {rb:?}");
        let lines = archive_lines(&archive);
        let ids: BTreeSet<String> = lines
            .iter()
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(lines.len(), 24);
        assert_eq!(ids, done.iter().cloned().collect::<BTreeSet<_>>());
        let line = lines.iter().find(|l| l["id"] == "old-03").unwrap();
        assert_eq!(line["status"], "completed");
        assert_eq!(line["args"], json!([{"t": "number", "v": 3}]));
        assert_eq!(line["program"], "fx");
        assert_eq!(line["result"], json!({"t": "number", "v": 3}));
        assert!(
            line["history"]
                .as_array()
                .unwrap()
                .iter()
                .any(|h| h["kind"] == "checkpoint" && h["detail"]["status"] == "completed"),
            "{line}"
        );
        for store in [&a, &b] {
            assert!(store.get_execution("old-03").unwrap().is_none());
            assert!(store.history("old-03", 0, 100).unwrap().is_empty());
            assert!(store.journal_of("old-03").unwrap().is_empty());
            assert!(store.load_checkpoints("old-03").unwrap().is_empty());
            assert_eq!(
                store.get_execution(&running).unwrap().unwrap().status,
                "suspended"
            );
        }
        // Nothing left to do.
        assert_eq!(run_pass(&*b, &config("node-b"), later).unwrap().deleted, 0);
        let _ = std::fs::remove_dir_all(&archive);

        // One at a time: only a terminal one.
        let e = retention(&b).delete_execution(&running).unwrap_err();
        assert!(matches!(e, StoreError::Conflict(_)), "{e:?}");
        let e = retention(&b).delete_execution("old-03").unwrap_err();
        assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");
        a.request_terminate(&running).unwrap();
        assert!(h.drive(&running).unwrap());
        assert_eq!(
            a.get_execution(&running).unwrap().unwrap().status,
            "cancelled"
        );
        tcc_host::retention::delete_one(&*b, &running).unwrap();
        assert!(a.get_execution(&running).unwrap().is_none());
        assert!(a.history(&running, 0, 10).unwrap().is_empty());
    }
}

#[test]
fn a_batch_another_node_took_is_left_to_it_until_its_mark_expires() {
    for db in TestDb::all("t_retention_take") {
        let (a, b) = db.nodes();
        let h = host(&a);
        h.register(&two_effects(), Some("fx")).unwrap();
        for i in 0..3 {
            let id = h
                .start(
                    "fx",
                    vec![json!({"t": "number", "v": f64::from(i)})],
                    Some(format!("e{i}")),
                )
                .unwrap();
            assert!(h.drive(&id).unwrap());
        }
        let now = a.get_execution("e2").unwrap().unwrap().updated_ms + HOUR;
        // Node A takes a batch and dies before deleting it.
        let taken = retention(&a)
            .take_expired(now, "node-a", now, now + 60_000, 2)
            .unwrap();
        let taken: Vec<String> = taken.into_iter().map(|r| r.id).collect();
        assert_eq!(taken, ["e0", "e1"]);
        // Node B takes only the rest, and cannot delete A's.
        let rest = retention(&b)
            .take_expired(now, "node-b", now, now + 60_000, 10)
            .unwrap();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].id, "e2");
        assert_eq!(retention(&b).delete_taken(&taken, "node-b").unwrap(), 0);
        // Past A's mark B takes them over.
        let again = retention(&b)
            .take_expired(now, "node-b", now + 60_001, now + 120_000, 10)
            .unwrap();
        assert_eq!(again.len(), 3);
        assert_eq!(
            retention(&b)
                .delete_taken(&["e0".into(), "e1".into(), "e2".into()], "node-b")
                .unwrap(),
            3
        );
        assert!(a.get_execution("e0").unwrap().is_none());
    }
}
