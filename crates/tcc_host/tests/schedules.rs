//! Schedules (issue 35) over both stores: the rows, and passes at chosen
//! times (the pass takes the time as an argument: no test waits for a
//! clock). On PostgreSQL also two nodes (two stores on one database)
//! passing the same schedules at once: each tick starts exactly one
//! execution.

mod common;

#[path = "common/db.rs"]
mod db;
use db::TestDb;

use serde_json::json;
use std::sync::Arc;
use tcc_host::schedule::{
    Catchup, NewSchedule, Overlap, ScheduleStore, Spec, run_pass, tick_execution_id,
};
use tcc_host::store::{ListFilter, Store, StoreError};
use tcc_host::values::TaggedList;

const S: i64 = 1_000;

/// Registers a program that returns at once under `name`.
fn register(store: &dyn Store, name: &str) {
    let bytes = common::artifact(&[(
        "run",
        0,
        0,
        json!([{"op": "LoadConst", "value": {"t": "number", "v": 1.0}}, {"op": "Return"}]),
    )]);
    let (_, hash) = tcc_host::host::check_artifact(&bytes).unwrap();
    store.put_artifact(&hash, &bytes).unwrap();
    store.set_program(name, &hash).unwrap();
}

fn schedule(name: &str, every: &str, overlap: Overlap, catchup: Catchup) -> NewSchedule {
    NewSchedule {
        name: name.into(),
        program: "tick".into(),
        args: TaggedList::from_values(&[json!({"t": "number", "v": 7.0})]),
        spec: Spec::parse("every", every).unwrap(),
        overlap,
        catchup,
        catchup_window_ms: 60 * S,
        paused: false,
    }
}

fn sched(store: &dyn Store) -> &dyn ScheduleStore {
    tcc_host::schedule::store_of(store).expect("the store keeps schedules")
}

/// The ids of the executions in the store, sorted.
fn execution_ids(store: &dyn Store) -> Vec<String> {
    let mut ids: Vec<String> = store
        .list_executions(&ListFilter {
            limit: 10_000,
            ..ListFilter::default()
        })
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    ids.sort();
    ids
}

#[test]
fn schedule_rows_are_created_listed_paused_resumed_and_deleted() {
    for db in TestDb::all("t_sched_rows") {
        let store = db.open();
        let s = sched(&*store);
        let row = schedule("b", "10s", Overlap::Skip, Catchup::Latest)
            .row(5 * S)
            .unwrap();
        assert_eq!(row.next_due_ms, 10 * S);
        s.create_schedule(&row).unwrap();
        let again = s.create_schedule(&row).unwrap_err();
        assert!(matches!(again, StoreError::Conflict(_)), "{again:?}");
        let a = schedule("a", "1m", Overlap::Allow, Catchup::All)
            .row(5 * S)
            .unwrap();
        s.create_schedule(&a).unwrap();
        let names: Vec<String> = s
            .list_schedules()
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(s.get_schedule("b").unwrap().unwrap(), row);
        // Due at 10 s: only b.
        let due: Vec<String> = s
            .due_schedules(10 * S, 10)
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(due, ["b"]);
        s.set_schedule_paused("b", true, None, 11 * S).unwrap();
        assert!(s.due_schedules(10 * S, 10).unwrap().is_empty());
        s.set_schedule_paused("b", false, Some(40 * S), 35 * S)
            .unwrap();
        let b = s.get_schedule("b").unwrap().unwrap();
        assert_eq!(
            (b.paused, b.next_due_ms, b.updated_ms),
            (false, 40 * S, 35 * S)
        );
        assert!(matches!(
            s.set_schedule_paused("zz", true, None, 0),
            Err(StoreError::NotFound(_))
        ));
        s.delete_schedule("a").unwrap();
        assert!(matches!(
            s.delete_schedule("a"),
            Err(StoreError::NotFound(_))
        ));
        assert!(s.get_schedule("a").unwrap().is_none());
    }
}

#[test]
fn each_tick_starts_one_execution_with_its_own_id() {
    for db in TestDb::all("t_sched_ticks") {
        let store = db.open();
        register(&*store, "tick");
        let s = sched(&*store);
        s.create_schedule(
            &schedule("n", "10s", Overlap::Allow, Catchup::All)
                .row(0)
                .unwrap(),
        )
        .unwrap();
        // Before the first tick: nothing.
        assert_eq!(run_pass(&*store, 9 * S).unwrap().started, 0);
        let r = run_pass(&*store, 10 * S).unwrap();
        assert_eq!((r.started, r.skipped), (1, 0));
        // The same time again (a second pass, another node): nothing more.
        assert_eq!(run_pass(&*store, 10 * S).unwrap().started, 0);
        // A late pass handles both ticks that came due.
        assert_eq!(run_pass(&*store, 30 * S + 1).unwrap().started, 2);
        assert_eq!(
            execution_ids(&*store),
            [10, 20, 30].map(|t| tick_execution_id("n", t * S))
        );
        let e = store.get_execution("n@20000").unwrap().unwrap();
        assert_eq!(e.program_name.as_deref(), Some("tick"));
        assert_eq!(
            e.args,
            TaggedList::from_values(&[json!({"t": "number", "v": 7.0})])
        );
        let history = store.history("n@20000", 0, 10).unwrap();
        assert!(
            history.iter().any(|h| h.kind == "scheduled"
                && h.detail == json!({"schedule": "n", "tick_ms": 20_000})),
            "{history:?}"
        );
        let row = s.get_schedule("n").unwrap().unwrap();
        assert_eq!(
            (
                row.ticks_started,
                row.next_due_ms,
                row.last_execution_id.as_deref()
            ),
            (3, 40 * S, Some("n@30000"))
        );
        // An execution that already has a tick's id (a pass that committed
        // elsewhere) is not started again.
        db.sql("UPDATE schedules SET next_due_ms = 30000");
        assert_eq!(run_pass(&*store, 30 * S).unwrap().started, 0);
        assert_eq!(execution_ids(&*store).len(), 3);
    }
}

#[test]
fn overlap_skip_waits_for_the_running_execution_and_buffer_one_starts_it_after() {
    for db in TestDb::all("t_sched_overlap") {
        let store = db.open();
        register(&*store, "tick");
        let s = sched(&*store);
        s.create_schedule(
            &schedule("s", "10s", Overlap::Skip, Catchup::Skip)
                .row(0)
                .unwrap(),
        )
        .unwrap();
        s.create_schedule(
            &schedule("b", "10s", Overlap::BufferOne, Catchup::Skip)
                .row(0)
                .unwrap(),
        )
        .unwrap();
        run_pass(&*store, 10 * S).unwrap();
        // Both first executions still run (nobody drives them here).
        let r = run_pass(&*store, 20 * S).unwrap();
        assert_eq!((r.started, r.skipped), (0, 1));
        let b = s.get_schedule("b").unwrap().unwrap();
        assert_eq!(b.buffered_ms, Some(20 * S));
        assert_eq!(s.get_schedule("s").unwrap().unwrap().ticks_skipped, 1);
        // They end.
        db.sql("UPDATE executions SET status = 'completed'");
        let r = run_pass(&*store, 25 * S).unwrap();
        assert_eq!(r.started, 1, "b's waiting tick starts");
        assert_eq!(
            execution_ids(&*store),
            ["b@10000", "b@20000", "s@10000"].map(String::from)
        );
        let b = s.get_schedule("b").unwrap().unwrap();
        assert_eq!(
            (b.buffered_ms, b.last_execution_id.as_deref()),
            (None, Some("b@20000"))
        );
        // s starts again at its next tick.
        assert_eq!(run_pass(&*store, 30 * S).unwrap().started, 1);
        assert!(store.get_execution("s@30000").unwrap().is_some());
    }
}

#[test]
fn paused_schedules_start_nothing_and_resume_after_now() {
    for db in TestDb::all("t_sched_pause") {
        let store = db.open();
        register(&*store, "tick");
        let s = sched(&*store);
        s.create_schedule(
            &schedule("p", "10s", Overlap::Allow, Catchup::All)
                .row(0)
                .unwrap(),
        )
        .unwrap();
        s.set_schedule_paused("p", true, None, S).unwrap();
        assert_eq!(run_pass(&*store, 50 * S).unwrap().started, 0);
        let spec = Spec::parse("every", "10s").unwrap();
        s.set_schedule_paused("p", false, spec.next_after(55 * S), 55 * S)
            .unwrap();
        assert_eq!(run_pass(&*store, 59 * S).unwrap().started, 0);
        assert_eq!(run_pass(&*store, 60 * S).unwrap().started, 1);
        assert_eq!(execution_ids(&*store), ["p@60000"]);
    }
}

#[test]
fn an_unknown_program_skips_the_tick_and_says_why() {
    for db in TestDb::all("t_sched_unknown") {
        let store = db.open();
        let s = sched(&*store);
        s.create_schedule(
            &schedule("u", "10s", Overlap::Allow, Catchup::All)
                .row(0)
                .unwrap(),
        )
        .unwrap();
        let r = run_pass(&*store, 10 * S).unwrap();
        assert_eq!((r.started, r.skipped), (0, 1));
        let row = s.get_schedule("u").unwrap().unwrap();
        assert_eq!(row.last_error.as_deref(), Some("unknown program \"tick\""));
        assert_eq!(row.next_due_ms, 20 * S);
        register(&*store, "tick");
        assert_eq!(run_pass(&*store, 20 * S).unwrap().started, 1);
        assert_eq!(s.get_schedule("u").unwrap().unwrap().last_error, None);
    }
}

/// Two nodes (two stores on one PostgreSQL database, or two SQLite
/// connections pools on one file) pass 20 schedules at the same simulated
/// times, from two threads: every tick starts exactly one execution.
#[test]
fn two_nodes_passing_at_once_start_each_tick_once() {
    for db in TestDb::all("t_sched_nodes") {
        let a = db.open();
        let b = db.open();
        register(&*a, "tick");
        for i in 0..20 {
            sched(&*a)
                .create_schedule(
                    &schedule(&format!("s{i:02}"), "1s", Overlap::Allow, Catchup::All)
                        .row(0)
                        .unwrap(),
                )
                .unwrap();
        }
        let run = |store: Arc<dyn Store>| {
            std::thread::spawn(move || {
                let mut started = 0;
                for t in 1..=15 {
                    started += run_pass(&*store, t * S).unwrap().started;
                }
                started
            })
        };
        let (ta, tb) = (run(a.clone()), run(b.clone()));
        // No extra pass: a row is locked only by an advance whose
        // compare-and-set matches, and a pass that finds it held tries
        // again (docs/tcc/host.md "Schedules"), so the passes of the last
        // second leave no tick.
        let started = ta.join().unwrap() + tb.join().unwrap();
        let ids = execution_ids(&*a);
        let mut expected: Vec<String> = (0..20)
            .flat_map(|i| (1..=15).map(move |t| tick_execution_id(&format!("s{i:02}"), t * S)))
            .collect();
        expected.sort();
        assert_eq!(ids, expected);
        assert_eq!(started, 300, "each node counts only what it inserted");
        let total: i64 = sched(&*a)
            .list_schedules()
            .unwrap()
            .iter()
            .map(|r| r.ticks_started)
            .sum();
        assert_eq!(total, 300);
    }
}

/// `/v1/schedules` over HTTP: the token guards it, refusals have their
/// API codes, and the answers are the schedule objects.
#[test]
fn the_schedule_routes_answer_and_refuse_with_their_codes() {
    use tcc_host::service::{Service, ServiceConfig};
    let db = TestDb::all("t_sched_api").remove(0);
    let store = db.open();
    register(&*store, "tick");
    let host = tcc_host::Host::new(
        store,
        tcc_host::Providers::echo_all(),
        tcc_host::HostConfig::default(),
    );
    let svc = Service::start(
        "127.0.0.1:0",
        host,
        ServiceConfig {
            token: Some("t0ken".into()),
            ..ServiceConfig::default()
        },
    )
    .unwrap();
    let url = format!("http://{}", svc.addr());
    let call = |method: &str, path: &str, body: Option<&str>, token: bool| {
        let mut headers = vec![("Content-Type", "application/json")];
        if token {
            headers.push(("Authorization", "Bearer t0ken"));
        }
        let r = tcc_host::http::request(
            method,
            &format!("{url}{path}"),
            &headers,
            body.map(str::as_bytes),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        (r.status, j)
    };
    for (method, path) in [
        ("GET", "/v1/schedules"),
        ("POST", "/v1/schedules"),
        ("GET", "/v1/schedules/a"),
        ("DELETE", "/v1/schedules/a"),
        ("POST", "/v1/schedules/a/pause"),
        ("POST", "/v1/schedules/a/resume"),
    ] {
        assert_eq!(call(method, path, None, false).0, 401, "{method} {path}");
    }
    let refusals = [
        (
            r#"{"name": "a", "program": "tick", "cron": "61 * * * *"}"#,
            400,
            "TCC-H200",
        ),
        (
            r#"{"name": "a", "program": "tick", "every": "1s", "cron": "* * * * *"}"#,
            400,
            "TCC-H200",
        ),
        (
            r#"{"name": "a b", "program": "tick", "every": "1s"}"#,
            400,
            "TCC-H200",
        ),
        (
            r#"{"name": "a", "program": "tick", "every": "1s", "overlap": "queue"}"#,
            400,
            "TCC-H200",
        ),
        (
            r#"{"name": "a", "program": "tick", "every": "1s", "catchup_window": "2h"}"#,
            400,
            "TCC-H200",
        ),
        (
            r#"{"name": "a", "program": "nope", "every": "1s"}"#,
            404,
            "TCC-H203",
        ),
    ];
    for (body, status, code) in refusals {
        let (c, j) = call("POST", "/v1/schedules", Some(body), true);
        assert_eq!((c, j["code"].as_str()), (status, Some(code)), "{body}: {j}");
    }
    let (c, j) = call(
        "POST",
        "/v1/schedules",
        Some(
            r#"{"name": "a", "program": "tick", "cron": "0 3 * * *", "args": [1, "x"], "overlap": "buffer_one", "catchup": "all", "catchup_window": "5m"}"#,
        ),
        true,
    );
    assert_eq!(c, 201, "{j}");
    assert_eq!(
        (
            j["cron"].as_str(),
            &j["args"],
            j["overlap"].as_str(),
            j["catchup"].as_str(),
            j["catchup_window_ms"].as_i64(),
            j["paused"].as_bool()
        ),
        (
            Some("0 3 * * *"),
            &json!([1, "x"]),
            Some("buffer_one"),
            Some("all"),
            Some(300_000),
            Some(false)
        )
    );
    // The next 03:00 UTC.
    let next = j["next_due_ms"].as_i64().unwrap();
    assert_eq!(next % 86_400_000, 3 * 3_600_000);
    assert!(next > tcc_host::now_ms() && next <= tcc_host::now_ms() + 86_400_000);
    let (c, j) = call(
        "POST",
        "/v1/schedules",
        Some(r#"{"name": "a", "program": "tick", "every": "1s"}"#),
        true,
    );
    assert_eq!((c, j["code"].as_str()), (409, Some("TCC-H204")), "{j}");
    let (c, j) = call("POST", "/v1/schedules/a/pause", None, true);
    assert_eq!((c, j["paused"].as_bool()), (200, Some(true)), "{j}");
    let (c, j) = call("GET", "/v1/schedules", None, true);
    assert_eq!(
        (c, j["schedules"][0]["name"].as_str()),
        (200, Some("a")),
        "{j}"
    );
    let (c, j) = call("DELETE", "/v1/schedules/a", None, true);
    assert_eq!((c, j), (200, json!({"deleted": "a"})));
    let (c, j) = call("POST", "/v1/schedules/a/resume", None, true);
    assert_eq!((c, j["code"].as_str()), (404, Some("TCC-H202")), "{j}");
    svc.stop();
}
