//! The dashboard's store queries and documents (issue 27) on both stores:
//! keyset pages newest first with every filter, the id-prefix search
//! (also under an ICU collation, where a prefix is not one range of the
//! database's own order), every wait of an execution, and the execution
//! page's document for a real run (effects with inputs and results,
//! checkpoints with revisions, timers, events, children, the pc).

mod common;

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::{NewExecution, PageQuery, Store};
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig, Providers};

#[derive(Clone, Copy)]
enum Kind {
    Sqlite,
    Postgres,
    PostgresIcu,
}

enum Db {
    Sqlite(std::path::PathBuf),
    Pg(ScratchSchema),
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Db::Sqlite(d) = self {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

fn open(kind: Kind) -> Option<(Db, Arc<dyn Store>)> {
    let db = match kind {
        Kind::Sqlite => {
            let d = std::env::temp_dir().join(tcc_host::random_id("tcc-ui-test-"));
            std::fs::create_dir_all(&d).unwrap();
            Db::Sqlite(d)
        }
        Kind::Postgres => Db::Pg(ScratchSchema::create("t_ui").unwrap()?),
        Kind::PostgresIcu => Db::Pg(
            ScratchSchema::create_in(tcc_host::test_support::test_database_url_icu(), "t_ui_icu")
                .unwrap()?,
        ),
    };
    let store: Arc<dyn Store> = match &db {
        Db::Sqlite(d) => Arc::new(SqliteStore::open(&d.join("t.db")).unwrap()),
        Db::Pg(s) => Arc::new(PgStore::open(&s.url()).unwrap()),
    };
    Some((db, store))
}

fn set_status(db: &Db, id: &str, status: &str) {
    let sql = format!("UPDATE executions SET status = '{status}' WHERE id = '{id}'");
    match db {
        Db::Sqlite(d) => rusqlite::Connection::open(d.join("t.db"))
            .unwrap()
            .execute_batch(&sql)
            .unwrap(),
        Db::Pg(s) => s.execute(&sql).unwrap(),
    }
}

fn new(id: &str, program: Option<&str>) -> NewExecution {
    NewExecution {
        id: id.into(),
        artifact_hash: "h".into(),
        program_name: program.map(str::to_string),
        args: Default::default(),
        parent: None,
        namespace: "default".into(),
    }
}

fn ids(store: &dyn Store, q: &PageQuery) -> Vec<String> {
    store
        .page_executions(q)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect()
}

/// Every page of `q`, following the cursor as the page does.
fn all_pages(store: &dyn Store, q: &PageQuery) -> Vec<String> {
    let mut q = q.clone();
    let mut out = Vec::new();
    loop {
        let rows = store.page_executions(&q).unwrap();
        assert!(rows.len() <= q.page_size() as usize);
        let full = rows.len() == q.page_size() as usize;
        if let Some(last) = rows.last() {
            if q.id_prefix.is_some() {
                q.before_id = Some(last.id.clone());
            } else {
                q.before_seq = Some(last.seq);
            }
        }
        out.extend(rows.into_iter().map(|r| r.id));
        if !full {
            return out;
        }
    }
}

// Ids in creation order; `j;` sorts before `j:zz` under ICU `en-US`.
const IDS: &[(&str, Option<&str>)] = &[
    ("a", Some("p1")),
    ("a-1", Some("p1")),
    ("a-2", Some("p2")),
    ("ab-1", Some("p1")),
    ("A-up", None),
    ("j:zz", Some("p2")),
    ("j;", Some("p1")),
    ("j:a", Some("p1")),
    ("a-3", Some("p2")),
    ("b%_x", Some("p1")),
];

fn pages_follow_every_filter_newest_first(kind: Kind) {
    let Some((db, store)) = open(kind) else {
        return;
    };
    let news: Vec<NewExecution> = IDS.iter().map(|(i, p)| new(i, *p)).collect();
    store.create_executions(&news).unwrap();
    for id in ["a-2", "j:zz", "b%_x"] {
        set_status(&db, id, "suspended");
    }
    set_status(&db, "a", "completed");
    let newest_first: Vec<String> = IDS.iter().rev().map(|(i, _)| i.to_string()).collect();
    let q = |limit| PageQuery {
        limit,
        ..PageQuery::default()
    };
    assert_eq!(ids(&*store, &q(100)), newest_first);
    for size in [1, 3, 4] {
        assert_eq!(
            all_pages(&*store, &q(size)),
            newest_first,
            "pages of {size}"
        );
    }
    let by_status = PageQuery {
        status: Some("suspended".into()),
        limit: 2,
        ..PageQuery::default()
    };
    assert_eq!(all_pages(&*store, &by_status), ["b%_x", "j:zz", "a-2"]);
    let by_program = PageQuery {
        program: Some("p2".into()),
        limit: 2,
        ..PageQuery::default()
    };
    assert_eq!(all_pages(&*store, &by_program), ["a-3", "j:zz", "a-2"]);
    let both = PageQuery {
        status: Some("suspended".into()),
        program: Some("p1".into()),
        limit: 5,
        ..PageQuery::default()
    };
    assert_eq!(all_pages(&*store, &both), ["b%_x"]);
    let prefix = |p: &str, limit| PageQuery {
        id_prefix: Some(p.into()),
        limit,
        ..PageQuery::default()
    };
    // By id, descending in byte order, whatever the database's collation.
    for size in [1, 2, 10] {
        assert_eq!(
            all_pages(&*store, &prefix("a", size)),
            ["ab-1", "a-3", "a-2", "a-1", "a"]
        );
        assert_eq!(all_pages(&*store, &prefix("j:", size)), ["j:zz", "j:a"]);
    }
    assert_eq!(all_pages(&*store, &prefix("a-", 10)), ["a-3", "a-2", "a-1"]);
    assert_eq!(all_pages(&*store, &prefix("A", 10)), ["A-up"]);
    // LIKE's wildcards are plain characters here.
    assert_eq!(all_pages(&*store, &prefix("b%", 10)), ["b%_x"]);
    assert!(all_pages(&*store, &prefix("%", 10)).is_empty());
    assert!(all_pages(&*store, &prefix("z", 10)).is_empty());
    let prefix_and_status = PageQuery {
        status: Some("suspended".into()),
        ..prefix("a", 10)
    };
    assert_eq!(all_pages(&*store, &prefix_and_status), ["a-2"]);
    // A page size beyond the cap is the cap.
    assert_eq!(q(100_000).page_size(), 500);
}

fn the_execution_page_shows_a_run_with_its_waits_and_pc(kind: Kind) {
    let Some((_db, store)) = open(kind) else {
        return;
    };
    let host = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
    let flow = host.register(&common::flow(), Some("flow")).unwrap();
    host.register(&common::worker(), Some("worker")).unwrap();
    let threads = host.spawn();
    let id = host.start("flow", vec![], None).unwrap();
    let row = host.wait_for(&id, Duration::from_secs(20), true).unwrap();
    assert_eq!(row.status, "suspended");
    let doc = tcc_host::ui::execution_doc(&host, &id).unwrap().unwrap();
    assert_eq!(doc["execution"]["status"], "suspended");
    assert_eq!(
        doc["execution"]["pending"]["kind"]["event_name"],
        "approved"
    );
    // Suspended at the wait: the top frame's pc is just after WaitForEvent.
    assert_eq!(doc["frames"], json!([{"func_id": 0, "pc": 8}]));
    let waits = store.waits_of(&id).unwrap();
    assert_eq!(waits.len(), 1);
    assert_eq!(
        (waits[0].kind.as_str(), waits[0].name.as_deref()),
        ("event", Some("approved"))
    );
    assert!(!waits[0].delivered);
    let effect = doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "effect")
        .unwrap()
        .clone();
    assert_eq!(effect["effect"]["key"], "prepare");
    assert_eq!(effect["effect"]["input"]["plain"], json!({"n": 7}));
    assert_eq!(effect["effect"]["result"]["plain"], json!({"n": 7}));

    store
        .send_event(&id, "approved", &json!({"t": "string", "v": "yes"}))
        .unwrap();
    host.notify();
    let row = host.wait_for(&id, Duration::from_secs(20), true).unwrap();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(row.status, "completed", "{row:?}");
    let doc = tcc_host::ui::execution_doc(&host, &id).unwrap().unwrap();
    assert_eq!(doc["frames"], serde_json::Value::Null);
    assert_eq!(doc["execution"]["result"]["plain"][1], "yes");
    let kinds: Vec<&str> = doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for k in [
        "created",
        "effect",
        "checkpoint",
        "event_received",
        "event_delivered",
        "timer_delivered",
        "child_delivered",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let revisions: Vec<u64> = doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "checkpoint")
        .map(|e| e["detail"]["revision"].as_u64().unwrap())
        .collect();
    assert!(revisions.windows(2).all(|w| w[0] < w[1]) && !revisions.is_empty());
    let waits = store.waits_of(&id).unwrap();
    let kinds: Vec<(&str, bool)> = waits
        .iter()
        .map(|w| (w.kind.as_str(), w.delivered))
        .collect();
    assert_eq!(kinds, [("event", true), ("timer", true), ("child", true)]);
    let child = waits[2].name.clone().unwrap();
    assert_eq!(
        store
            .get_execution(&child)
            .unwrap()
            .unwrap()
            .parent_id
            .as_deref(),
        Some(id.as_str())
    );
    // The listing of the pinned artifact, and the page of the list.
    let bytes = store.get_artifact(&flow).unwrap().unwrap();
    let listing = tcc_host::ui::view::artifact_listing(
        &flow,
        &["flow".into()],
        &serde_json::from_slice(&bytes).unwrap(),
    );
    assert_eq!(
        listing["functions"][0]["instructions"][7]["text"],
        "WaitForEvent"
    );
    assert_eq!(listing["envelope"]["frontend_id"], "irkit-tests");
    let page =
        tcc_host::ui::list_page(&host, &tcc_host::ui::page_query("program=flow").unwrap()).unwrap();
    assert_eq!(page["executions"][0]["id"], id.as_str());
    assert_eq!(page["executions"].as_array().unwrap().len(), 1);
    assert_eq!(page["next"], serde_json::Value::Null);
}

/// The status read leaves an execution's arguments out (every poll of
/// the status would read them, a long list inflated on SQLite: issue 42,
/// F3), and the status answer does not show them; the execution page,
/// which does, reads them with the row.
fn the_execution_page_shows_the_arguments_the_status_read_leaves_out(kind: Kind) {
    let Some((_db, store)) = open(kind) else {
        return;
    };
    let host = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
    let mut with_args = new("with-args", Some("p"));
    with_args.args = tcc_host::values::TaggedList::from_values(&[
        json!({"t": "number", "v": 7}),
        json!({"t": "string", "v": "x"}),
    ]);
    store.create_execution(&with_args).unwrap();
    let read = tcc_host::status_read::read(&*store, "with-args", 0)
        .unwrap()
        .unwrap();
    assert_eq!(read.row.args.text().unwrap(), "[]");
    let answer = tcc_host::status_view::status_answer(&read)
        .unwrap()
        .into_string();
    assert!(!answer.contains("\"args\":"), "{answer}");
    assert_eq!(
        store.get_execution("with-args").unwrap().unwrap().args,
        with_args.args
    );
    let doc = tcc_host::ui::execution_doc(&host, "with-args")
        .unwrap()
        .unwrap();
    assert_eq!(doc["execution"]["args"], json!([7, "x"]));
}

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
    pages_follow_every_filter_newest_first,
    the_execution_page_shows_a_run_with_its_waits_and_pc,
    the_execution_page_shows_the_arguments_the_status_read_leaves_out,
);

#[test]
fn the_id_search_is_a_prefix_under_an_icu_collation() {
    pages_follow_every_filter_newest_first(Kind::PostgresIcu)
}

/// Every dashboard statement reaches its rows through an index on
/// PostgreSQL (generic plans, as the store's sessions cache them).
#[test]
fn the_dashboard_queries_do_not_scan_on_postgres() {
    let Some(db) = ScratchSchema::create("t_ui_plans").unwrap() else {
        return;
    };
    let pg = Arc::new(PgStore::open(&db.url()).unwrap());
    let store: Arc<dyn Store> = pg.clone();
    let news: Vec<NewExecution> = IDS.iter().map(|(i, p)| new(i, *p)).collect();
    store.create_executions(&news).unwrap();
    for raw in [
        "",
        "before=5",
        "status=suspended",
        "status=suspended&before=5",
        "program=p1",
        "program=p1&before=5",
        "status=suspended&program=p1",
        "status=suspended&program=p1&before=5",
        "q=a",
        "q=a&before=a-3",
        "q=a&status=suspended",
        "q=a&program=p1&before=a-3",
        "q=a&status=suspended&program=p1",
    ] {
        let q = tcc_host::ui::page_query(raw).unwrap();
        store.page_executions(&q).unwrap();
    }
    store.waits_of("a").unwrap();
    let plans = pg.cached_generic_plans().unwrap();
    let scans: Vec<String> = plans
        .iter()
        .filter(|(_, plan)| plan.contains("Seq Scan"))
        .map(|(sql, plan)| format!("{sql}\n{plan}"))
        .collect();
    assert!(
        plans.len() >= 14,
        "only {} statements prepared",
        plans.len()
    );
    assert!(
        scans.is_empty(),
        "plans that scan:\n\n{}",
        scans.join("\n\n")
    );
}
