use super::*;
use crate::store::{CheckpointTx, JournalRow, NewExecution, Store};
use rusqlite::OptionalExtension;
use serde_json::Value as J;

fn scratch(name: &str) -> (std::path::PathBuf, SqliteStore) {
    let dir = std::env::temp_dir().join(crate::ids::random_id(name));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteStore::open(&dir.join("t.db")).unwrap();
    (dir, store)
}

/// A job that panics fails its caller with an error (no caller waits
/// forever) and the writer goes on with the next write.
#[test]
fn a_panicking_write_fails_its_caller_and_the_writer_goes_on() {
    let (dir, store) = scratch("t-panic");
    let store = Arc::new(store);
    for lazy in [false, true] {
        let s = store.clone();
        let r = std::thread::spawn(move || {
            let job =
                |_: &Connection| -> Result<(), StoreError> { panic!("job panics on purpose") };
            if lazy {
                s.write_lazy(job)
            } else {
                s.write(job)
            }
        })
        .join()
        .unwrap();
        assert!(matches!(r, Err(StoreError::Db(_))), "{r:?}");
        store.kv_set("after", &J::from(1)).unwrap();
        assert_eq!(store.kv_get("after").unwrap(), Some(J::from(1)));
    }
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}

fn writer_sync(store: &SqliteStore) -> (i64, Durability) {
    let w = store.writer.hold().unwrap();
    let level: i64 = w
        .conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .unwrap();
    let sync = w.sync;
    store.writer.give_back(w);
    (level, sync)
}

fn new_exec(id: &str) -> NewExecution {
    NewExecution {
        id: id.into(),
        artifact_hash: "h".into(),
        program_name: None,
        args: Default::default(),
        parent: None,
        namespace: "default".into(),
    }
}

/// A group of lazy jobs only (journal row, lease) commits with
/// `synchronous=NORMAL`; any durable write commits with FULL again.
#[test]
fn lazy_groups_commit_normal_and_durable_ones_full() {
    let (dir, store) = scratch("tcc-sqlite-lazy-");
    store.create_execution(&new_exec("e")).unwrap();
    assert_eq!(writer_sync(&store), (2, Durability::Full));
    assert!(store.claim("e", "me", 0, 1000).unwrap().is_some());
    store.journal_put(&journal("e", "k", "completed")).unwrap();
    assert_eq!(writer_sync(&store), (1, Durability::Lazy));
    // Committed and visible to the readers at once.
    assert!(store.journal_get("e:k").unwrap().is_some());
    store
        .commit_checkpoint(first_snapshot(vec![(
            "effect".into(),
            serde_json::json!({"key": "k"}),
        )]))
        .unwrap();
    assert_eq!(writer_sync(&store), (2, Durability::Full));
    assert_eq!(store.get_execution("e").unwrap().unwrap().revision, 1);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Execution `e`'s first checkpoint (revision 1) by owner `me`.
fn first_snapshot(history: Vec<(String, serde_json::Value)>) -> CheckpointTx {
    CheckpointTx {
        id: "e".into(),
        owner: "me".into(),
        revision: 1,
        kind: "snapshot".into(),
        body: "{}".into(),
        status: "runnable".into(),
        result: None,
        message: None,
        pending: None,
        registrations: vec![],
        consumed: None,
        history,
        resume_key: None,
    }
}

/// What a power loss can leave of the WAL is a prefix of it (SQLite
/// replays complete commits of an unbroken, checksummed frame chain;
/// the lazy, un-fsynced tail is what can go). Whatever prefix survives,
/// a checkpoint committed after an effect's lazy journal row never
/// survives without that row: the row's frames come first in the WAL,
/// and the checkpoint's FULL commit fsyncs them with its own.
#[test]
fn every_wal_prefix_with_the_checkpoint_has_the_journal_row_before_it() {
    let (dir, store) = scratch("tcc-sqlite-prefix-");
    let wal = dir.join("t.db-wal");
    store.create_execution(&new_exec("e")).unwrap();
    let durable_start = std::fs::metadata(&wal).unwrap().len();
    assert!(store.claim("e", "me", 0, 1000).unwrap().is_some());
    store.journal_put(&journal("e", "k", "completed")).unwrap();
    store.commit_checkpoint(first_snapshot(vec![])).unwrap();
    let page: u64 = store
        .read(|c| Ok(c.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))? as u64))
        .unwrap();
    let (db, log) = (
        std::fs::read(dir.join("t.db")).unwrap(),
        std::fs::read(&wal).unwrap(),
    );
    let frame = 24 + page;
    let mut seen = Vec::new();
    let mut cut = 32;
    while cut <= log.len() as u64 {
        let copy = dir.join(format!("cut{cut}.db"));
        std::fs::write(&copy, &db).unwrap();
        std::fs::write(dir.join(format!("cut{cut}.db-wal")), &log[..cut as usize]).unwrap();
        let c = Connection::open(&copy).unwrap();
        let revision: Option<i64> = c
            .query_row("SELECT revision FROM executions WHERE id = 'e'", [], |r| {
                r.get(0)
            })
            .optional()
            .unwrap_or(None);
        let journalled: i64 = c
            .query_row(
                "SELECT COUNT(*) FROM effects WHERE idempotency_key = 'e:k'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0);
        if revision == Some(1) {
            assert_eq!(
                journalled, 1,
                "WAL cut at {cut}: checkpoint without its journal row"
            );
        }
        seen.push((cut, revision, journalled));
        cut += frame;
    }
    // The cuts cover: before the journal row, the row alone, both.
    assert!(
        seen.iter()
            .any(|&(c, r, j)| c >= durable_start && r == Some(0) && j == 0),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|&(_, r, j)| r == Some(0) && j == 1),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|&(_, r, j)| r == Some(1) && j == 1),
        "{seen:?}"
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Jobs that queue while a commit runs form one group; a failing job in
/// it (a duplicate execution id) is undone alone: the optimistic group
/// is rolled back and re-run with a savepoint per job.
#[test]
fn a_failing_job_in_a_group_undoes_only_itself() {
    let (dir, store) = scratch("tcc-sqlite-group-");
    let store = std::sync::Arc::new(store);
    // Hold the connection so that the first caller waits as leader and
    // the others queue behind it.
    let held = store.writer.hold().unwrap();
    let ids = ["a", "a", "b", "c"];
    let threads: Vec<_> = ids
        .iter()
        .map(|id| {
            let (store, id) = (store.clone(), id.to_string());
            std::thread::spawn(move || store.create_execution(&new_exec(&id)))
        })
        .collect();
    let start = std::time::Instant::now();
    while store.writer.queued() < ids.len() {
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    store.writer.give_back(held);
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let conflicts = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::Conflict(_))))
        .count();
    assert_eq!(conflicts, 1, "{results:?}");
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 3);
    for id in ["a", "b", "c"] {
        assert!(store.get_execution(id).unwrap().is_some(), "{id}");
    }
    // One `created` history entry for "a": the failed duplicate left none.
    assert_eq!(store.history("a", 0, 100).unwrap().len(), 1);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A database written by the first schema version is upgraded in place
/// by the later migrations, and the indexed work query runs on it.
#[test]
fn version_one_database_is_upgraded() {
    let (dir, path) = database_at_version("tcc-sqlite-upgrade-", 1, "");
    let store = SqliteStore::open(&path).unwrap();
    let version: u32 = store
        .read(|c| Ok(c.query_row_cached("PRAGMA user_version", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(version as usize, MIGRATIONS.len());
    let index: i64 = store
        .read(|c| {
            Ok(c.query_row_cached(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_unconsumed'",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(index, 1);
    assert!(
        store
            .find_work(crate::ids::now_ms(), 10)
            .unwrap()
            .is_empty()
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Migration 3 drops the journal's per-execution index: an execution's
/// journal is read as a key range, which holds exactly its rows (not
/// those of an execution whose id extends it), and a key outside that
/// range is refused before anything is written.
#[test]
fn the_journal_is_read_by_key_range_and_foreign_keys_are_refused() {
    let (dir, store) = scratch("tcc-sqlite-range-");
    let row = |exec: &str, key: &str| JournalRow {
        idempotency_key: key.into(),
        execution_id: exec.into(),
        key: "k".into(),
        input: "{}".into(),
        status: "completed".into(),
        result: J::Null,
    };
    // An id with `:` is escaped in its keys (store::journal_key).
    for (exec, key) in [
        ("e", "e:b"),
        ("e", "e:a"),
        ("e1", "e1:a"),
        ("e:x", "e%3Ax:a"),
    ] {
        store.journal_put(&row(exec, key)).unwrap();
    }
    // Journal order is insertion order, not key order.
    let of_e: Vec<String> = store
        .journal_of("e")
        .unwrap()
        .into_iter()
        .map(|r| r.idempotency_key)
        .collect();
    assert_eq!(of_e, vec!["e:b".to_string(), "e:a".to_string()]);
    let mut keys = store.journal_keys("e").unwrap();
    keys.sort();
    assert_eq!(keys, vec!["e:a".to_string(), "e:b".to_string()]);
    assert_eq!(store.journal_keys("e1").unwrap(), vec!["e1:a".to_string()]);
    assert_eq!(
        store.journal_keys("e:x").unwrap(),
        vec!["e%3Ax:a".to_string()]
    );
    let err = store.journal_put(&row("e:x", "e:x:b")).unwrap_err();
    assert!(matches!(err, StoreError::Unsupported(_)), "{err:?}");
    let err = store.journal_put(&row("e", "f:a")).unwrap_err();
    assert!(matches!(err, StoreError::Unsupported(_)), "{err:?}");
    assert!(store.journal_get("f:a").unwrap().is_none());
    let index: i64 = store
        .read(|c| {
            Ok(c.query_row_cached(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'effects_exec'",
                [],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(index, 0);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Migration 4 (history without `AUTOINCREMENT`) keeps every entry and
/// its `seq`, and later entries continue above them.
/// A database file at schema `version` (its first migrations applied,
/// as an older build left it) holding the rows `sql` inserts.
fn database_at_version(
    name: &str,
    version: usize,
    sql: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(crate::ids::random_id(name));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("v{version}.db"));
    let conn = Connection::open(&path).unwrap();
    for m in &MIGRATIONS[..version] {
        conn.execute_batch(m).unwrap();
    }
    conn.execute_batch(&format!("PRAGMA user_version = {version}; {sql}"))
        .unwrap();
    (dir, path)
}

#[test]
fn history_keeps_its_sequence_across_migration_four() {
    let (dir, path) = database_at_version(
            "tcc-sqlite-v4-",
            3,
            "INSERT INTO history (execution_id, at_ms, kind, detail) VALUES
               ('a', 1, 'created', 'null'), ('b', 2, 'created', 'null'), ('a', 3, 'effect', 'null');",
        );
    let store = SqliteStore::open(&path).unwrap();
    let autoincrement: i64 = store
            .read(|c| {
                Ok(c.query_row_cached(
                    "SELECT COUNT(*) FROM sqlite_master WHERE name = 'history' AND sql LIKE '%AUTOINCREMENT%'",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
    assert_eq!(autoincrement, 0);
    store.append_history("a", "later", &J::Null).unwrap();
    let h = store.history("a", 0, 100).unwrap();
    let seqs: Vec<i64> = h.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![1, 3, 4]);
    assert_eq!(h[2].kind, "later");
    assert_eq!(store.history("a", 1, 100).unwrap().len(), 2);
    assert_eq!(store.history("b", 0, 100).unwrap()[0].seq, 2);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A journal row of execution `id` for effect `key` (input `{}`,
/// result tagged null).
fn journal(id: &str, key: &str, status: &str) -> JournalRow {
    JournalRow {
        idempotency_key: format!("{id}:{key}"),
        execution_id: id.into(),
        key: key.into(),
        input: "{}".into(),
        status: status.into(),
        result: serde_json::json!({"t": "null"}),
    }
}

#[test]
fn journal_rows_are_the_effect_entries_of_the_history_in_order() {
    let (dir, store) = scratch("tcc-sqlite-hist-");
    assert!(store.history_lists_journal());
    store.create_execution(&new_exec("x")).unwrap();
    store.create_execution(&new_exec("x2")).unwrap();
    store.append_history("x", "before", &J::Null).unwrap();
    store.journal_put(&journal("x", "a", "completed")).unwrap();
    store.journal_put(&journal("x2", "a", "completed")).unwrap();
    store.append_history("x", "between", &J::Null).unwrap();
    store.journal_put(&journal("x", "b", "failed")).unwrap();
    // A replayed effect (its row already there) adds no entry.
    store.journal_put(&journal("x", "a", "completed")).unwrap();
    store.append_history("x", "after", &J::Null).unwrap();
    let h = store.history("x", 0, 100).unwrap();
    let kinds: Vec<&str> = h.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["created", "before", "effect", "between", "effect", "after"]
    );
    assert_eq!(
        h[2].detail,
        serde_json::json!({"key": "a", "idempotency_key": "x:a", "status": "completed"})
    );
    assert_eq!(h[4].detail["status"], "failed");
    assert!(h.windows(2).all(|w| w[0].seq < w[1].seq), "{h:?}");
    assert!(h[2].at_ms > 0);
    // Paging by `seq` runs through both kinds of entry.
    let page: Vec<String> = store
        .history("x", h[1].seq, 2)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(page, ["effect", "between"]);
    // The other execution's journal row is its own.
    let h2 = store.history("x2", 0, 100).unwrap();
    assert_eq!(
        h2.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["created", "effect"]
    );
    // Sequence numbers are never handed out twice, also across reopening.
    drop(store);
    let store = SqliteStore::open(&dir.join("t.db")).unwrap();
    store.journal_put(&journal("x", "c", "completed")).unwrap();
    store.append_history("x", "last", &J::Null).unwrap();
    let again = store.history("x", 0, 100).unwrap();
    assert_eq!(again.len(), 8);
    assert!(again.windows(2).all(|w| w[0].seq < w[1].seq), "{again:?}");
    assert!(again[5].seq < again[6].seq);
    assert_eq!(
        (again[6].kind.as_str(), again[7].kind.as_str()),
        ("effect", "last")
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn journal_rows_from_before_migration_five_are_not_listed_twice() {
    // As version 4 wrote them: a journal row, and its history row.
    let (dir, path) = database_at_version(
        "tcc-sqlite-v5-",
        4,
        "INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, seq)
               VALUES ('a:k', 'a', 'k', '{}', 'completed', '1', 1);
             INSERT INTO history (execution_id, at_ms, kind, detail) VALUES
               ('a', 1, 'created', 'null'), ('a', 2, 'effect', '{\"key\":\"k\"}');",
    );
    let store = SqliteStore::open(&path).unwrap();
    store.journal_put(&journal("a", "k2", "completed")).unwrap();
    let h = store.history("a", 0, 100).unwrap();
    let seqs: Vec<(i64, &str)> = h.iter().map(|e| (e.seq, e.kind.as_str())).collect();
    assert_eq!(seqs, [(1, "created"), (2, "effect"), (3, "effect")]);
    assert_eq!(h[2].detail["key"], "k2");
    assert_eq!(store.journal_of("a").unwrap().len(), 2);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A database failure keeps the driver's error as its source.
#[test]
fn a_database_error_keeps_the_driver_error_as_its_source() {
    let dir = std::env::temp_dir().join(crate::ids::random_id("tcc-sqlite-source-"));
    std::fs::create_dir_all(&dir).unwrap();
    // A directory is not a database file.
    let e = SqliteStore::open(&dir).err().unwrap();
    assert!(matches!(e, StoreError::Db(_)), "{e:?}");
    let db = std::error::Error::source(&e).unwrap();
    let driver = db.source().unwrap();
    assert!(
        driver.downcast_ref::<rusqlite::Error>().is_some(),
        "{driver:?}"
    );
    assert!(e.to_string().starts_with("database: "), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn namespaces_are_stored_children_inherit_and_program_names_are_owned() {
    use crate::namespace::NamespaceStore;
    let (dir, store) = scratch("namespaces");
    let mut parent = new_exec("p1");
    parent.namespace = "acme".into();
    store.create_execution(&parent).unwrap();
    let mut child = new_exec("c1");
    child.parent = Some(("p1".into(), None));
    store.create_execution(&child).unwrap();
    store.create_execution(&new_exec("d1")).unwrap();
    assert_eq!(
        store.execution_namespace("p1").unwrap().as_deref(),
        Some("acme")
    );
    assert_eq!(
        store.execution_namespace("c1").unwrap().as_deref(),
        Some("acme")
    );
    assert_eq!(
        store.execution_namespace("d1").unwrap().as_deref(),
        Some("default")
    );
    assert_eq!(store.execution_namespace("none").unwrap(), None);
    let listed = |ns: Option<&str>| -> Vec<String> {
        store
            .list_executions(&crate::store::ListFilter {
                limit: 10,
                namespace: ns.map(str::to_string),
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(listed(Some("acme")), ["p1", "c1"]);
    assert_eq!(listed(Some("default")), ["d1"]);
    assert_eq!(listed(None).len(), 3);
    assert!(store.set_program_in("acme", "pay", "h1", 1).unwrap());
    assert!(store.set_program_in("acme", "pay", "h2", 2).unwrap());
    assert!(!store.set_program_in("globex", "pay", "h3", 3).unwrap());
    assert_eq!(store.resolve_program("pay").unwrap().as_deref(), Some("h2"));
    assert_eq!(
        store.programs_in("acme").unwrap(),
        [("pay".to_string(), "h2".to_string())]
    );
    assert!(store.programs_in("globex").unwrap().is_empty());
    assert_eq!(
        store.program_namespace("pay").unwrap().as_deref(),
        Some("acme")
    );
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}

/// Texts of `PACK_FROM` bytes or more are stored deflated (a BLOB) in
/// every column that takes them, and read back as they were; shorter ones
/// stay TEXT; a long text stored as TEXT (as every row was before this
/// form) reads back as it is; a damaged BLOB is a corrupt-store error,
/// never a guess (issue 42, F3).
#[test]
fn long_texts_are_stored_deflated_and_read_back_as_they_were() {
    use crate::store::packed::{MAGIC, PACK_FROM};
    let (dir, store) = scratch("t-packed");
    let zero = r#"{"t":"number","v":0}"#;
    let list = format!("[{}]", vec![zero; PACK_FROM / 16].join(","));
    let value = format!(r#"{{"t":"array","v":{list}}}"#);
    assert!(list.len() >= PACK_FROM);
    let mut e = new_exec("e");
    e.args = crate::values::TaggedList::from_stored(list.clone());
    store.create_execution(&e).unwrap();
    assert!(store.claim("e", "me", 0, 1000).unwrap().is_some());
    let mut effect = journal("e", "k", "completed");
    effect.input = value.clone();
    effect.result = serde_json::from_str(&value).unwrap();
    store.journal_put(&effect).unwrap();
    store
        .send_event_stored("e", "ev", &crate::packed::Stored::Text(value.clone()))
        .unwrap();
    let mut tx = first_snapshot(vec![]);
    tx.body = store.pack(format!(r#"{{"heap":{list}}}"#));
    tx.status = "completed".into();
    tx.result = Some(store.pack(value.clone()));
    store.commit_checkpoint(tx).unwrap();
    let kinds = |sql: &str| -> Vec<String> {
        store
            .read(|c| {
                let mut st = c.prepare(sql)?;
                let kinds = st
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<Vec<String>, _>>()?;
                Ok(kinds)
            })
            .unwrap()
    };
    assert_eq!(
        kinds("SELECT typeof(args) || ' ' || typeof(result) FROM executions"),
        ["blob blob"]
    );
    assert_eq!(kinds("SELECT typeof(body) FROM checkpoints"), ["blob"]);
    assert_eq!(kinds("SELECT typeof(payload) FROM events"), ["blob"]);
    assert_eq!(
        kinds("SELECT typeof(input) || ' ' || typeof(result) FROM effects"),
        ["blob blob"]
    );
    // Each reader gives back the text.
    let row = store.get_execution("e").unwrap().unwrap();
    assert_eq!(row.args.text().unwrap(), list);
    assert_eq!(row.result.unwrap().text().unwrap(), value);
    let cps = store.load_checkpoints("e").unwrap();
    assert!(matches!(
        cps[0].body,
        crate::packed::Stored::Deflated { .. }
    ));
    assert_eq!(cps[0].body.text().unwrap(), format!(r#"{{"heap":{list}}}"#));
    let read = store.journal_get("e:k").unwrap().unwrap();
    assert_eq!(read.input, value);
    assert_eq!(crate::store::json_text(&read.result), value);
    assert_eq!(store.journal_of("e").unwrap()[0].input, value);
    let listed = store.list_executions(&Default::default()).unwrap();
    assert_eq!(listed[0].args.text().unwrap(), list);
    // The event payload, through a wait on it (a second execution).
    store.create_execution(&new_exec("w")).unwrap();
    assert!(store.claim("w", "me", 0, 1000).unwrap().is_some());
    let mut wait = first_snapshot(vec![]);
    wait.id = "w".into();
    wait.status = "suspended".into();
    wait.registrations = vec![crate::store::Registration::Event {
        name: "ev".into(),
        wait_id: "w1".into(),
        branch: None,
    }];
    store.commit_checkpoint(wait).unwrap();
    store
        .send_event_stored("w", "ev", &crate::packed::Stored::Text(value.clone()))
        .unwrap();
    let wake = store.ready_wake("w", 0).unwrap().unwrap();
    assert_eq!(wake.value.unwrap().text().unwrap(), value);
    // A long text stored as TEXT reads back as it is.
    let text = list.clone();
    store
        .write(move |c| {
            c.execute("UPDATE executions SET args = ?1 WHERE id = 'e'", [&text])?;
            Ok(())
        })
        .unwrap();
    assert_eq!(
        kinds("SELECT typeof(args) FROM executions WHERE id = 'e'"),
        ["text"]
    );
    assert_eq!(
        store
            .get_execution("e")
            .unwrap()
            .unwrap()
            .args
            .text()
            .unwrap(),
        list
    );
    // Short texts stay TEXT.
    assert_eq!(
        kinds("SELECT typeof(args) FROM executions WHERE id = 'w'"),
        ["text"]
    );
    // A damaged BLOB: a corrupt-store error, not a text.
    let mut damaged = MAGIC.to_vec();
    damaged.extend_from_slice(&1_000u64.to_le_bytes());
    damaged.extend_from_slice(b"not deflate");
    store
        .write(move |c| {
            c.execute("UPDATE executions SET args = ?1 WHERE id = 'e'", [&damaged])?;
            Ok(())
        })
        .unwrap();
    // Its header is read with the row; its stream where the text is used.
    let row = store.get_execution("e").unwrap().unwrap();
    let err = crate::store::args_text(&row.args).unwrap_err().to_string();
    assert!(err.contains("does not inflate"), "{err}");
    assert!(row.args.parse().is_err());
    // A BLOB that is not in the form: an error reading the row.
    store
        .write(move |c| {
            c.execute(
                "UPDATE executions SET args = X'00010203' WHERE id = 'e'",
                [],
            )?;
            Ok(())
        })
        .unwrap();
    let err = store.get_execution("e").unwrap_err().to_string();
    assert!(err.contains("deflated text"), "{err}");
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
