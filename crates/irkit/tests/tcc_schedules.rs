//! Schedules end to end (issue 35): `irkit tcc schedule create|ls|pause|
//! resume|delete` against `irkit tcc serve` processes, on SQLite and on
//! two PostgreSQL nodes, with a node SIGKILLed while a 1-second schedule
//! runs. Whatever the machine's load, every tick from the first to the
//! last handled one must have started exactly one execution (ids
//! `NAME@TICK_MS`, consecutive, none missing), and a paused schedule
//! starts nothing. Waits poll generously; no assertion depends on how
//! fast the machine is.

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server, irkit, ok, request};

fn get(url: &str, path: &str) -> (u16, J) {
    let (c, b) = request(url, "GET", path, None, None).unwrap();
    (c, serde_json::from_slice(&b).unwrap())
}

/// Writes a program that returns its argument at once and registers it
/// as `tick` with the CLI.
fn register(dir: &Path, url: &str) {
    let bytes = common::artifact(&[(
        "run",
        1,
        1,
        json!([{"op": "LoadLocal", "local": 0}, {"op": "Return"}]),
    )]);
    let file = dir.join("tick.json");
    std::fs::write(&file, bytes).unwrap();
    ok(&[
        "tcc",
        "register",
        file.to_str().unwrap(),
        "--name",
        "tick",
        "--server",
        url,
    ]);
}

/// The tick times of schedule `name`'s executions (sorted), from any node.
fn ticks(url: &str, name: &str) -> Vec<i64> {
    let (c, j) = get(url, "/v1/executions?program=tick&limit=1000");
    assert_eq!(c, 200, "{j}");
    let mut t: Vec<i64> = j["executions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["id"].as_str())
        .filter_map(|id| id.strip_prefix(&format!("{name}@")))
        .map(|t| t.parse().unwrap())
        .collect();
    t.sort();
    t
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn now_ms() -> i64 {
    tcc_host::now_ms()
}

/// Every tick of a 1-second schedule from `first` to the last one, once.
fn assert_consecutive(t: &[i64], first: i64) {
    assert!(!t.is_empty());
    assert_eq!(t[0], first, "the first tick is the first after creation");
    let expected: Vec<i64> = (0..t.len() as i64).map(|i| first + i * 1000).collect();
    assert_eq!(t, expected.as_slice(), "a tick was lost or doubled");
}

fn create(url: &str) -> J {
    let out = ok(&[
        "tcc",
        "schedule",
        "create",
        "every1",
        "tick",
        "--every",
        "1s",
        "--args",
        "[5]",
        "--overlap",
        "allow",
        "--catchup",
        "all",
        "--format",
        "json",
        "--server",
        url,
    ]);
    serde_json::from_str(&out).unwrap()
}

/// Waits until some tick after `t` has started (on any node), then pauses
/// the schedule and returns the ticks.
fn pause_after(url: &str, t: i64) -> Vec<i64> {
    wait_until("a tick after the restart", || {
        ticks(url, "every1").last().is_some_and(|&l| l > t)
    });
    ok(&["tcc", "schedule", "pause", "every1", "--server", url]);
    ticks(url, "every1")
}

fn serve(db: &str, dir: &Path, extra: &[&str]) -> Server {
    let p = dir.join("providers.toml");
    std::fs::write(&p, "").unwrap();
    tcc_serve::serve(db, &p, extra, &[], None)
}

#[test]
fn a_schedule_survives_sigkill_on_sqlite_and_pause_resume_delete_work() {
    let d = Dir::new("irkit-tcc-sched-");
    let db = d.0.join("t.db");
    let db = db.to_str().unwrap();
    let mut s = serve(db, &d.0, &[]);
    register(&d.0, &s.url);
    let created = create(&s.url);
    assert_eq!(created["every"], "1s");
    assert_eq!(created["overlap"], "allow");
    let first = created["next_due_ms"].as_i64().unwrap();
    let listed = ok(&[
        "tcc", "schedule", "ls", "--format", "json", "--server", &s.url,
    ]);
    let listed: J = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["schedules"][0]["name"], "every1");
    let human = ok(&["tcc", "schedule", "ls", "--server", &s.url]);
    assert!(
        human.starts_with("every1\ttick\tevery 1s\tactive"),
        "{human}"
    );
    // A name in use.
    let o = irkit(&[
        "tcc", "schedule", "create", "every1", "tick", "--every", "1s", "--server", &s.url,
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Two ticks, then SIGKILL in the middle of the schedule's life.
    wait_until("two ticks", || ticks(&s.url, "every1").len() >= 2);
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let killed = now_ms();
    // Down for two ticks or more: they are started (catch-up `all`) on restart.
    wait_until("downtime", || now_ms() > killed + 2_500);
    let s = serve(db, &d.0, &[]);
    let t = pause_after(&s.url, killed + 2_500);
    assert_consecutive(&t, first);
    let (_, row) = get(&s.url, "/v1/schedules/every1");
    assert_eq!(row["paused"], true);
    assert_eq!(row["ticks_started"], t.len());
    assert_eq!(row["ticks_skipped"], 0);
    // Paused: nothing new starts, however long we look.
    let paused_at = now_ms();
    wait_until("a paused while", || now_ms() > paused_at + 1_500);
    assert_eq!(ticks(&s.url, "every1"), t);
    // Every execution ran, with the schedule's arguments.
    for tick in &t {
        let id = format!("every1@{tick}");
        let (_, j) = get(&s.url, &format!("/v1/executions/{id}/result?wait=20s"));
        assert_eq!(
            (j["status"].as_str(), &j["result_plain"]),
            (Some("completed"), &json!(5)),
            "{id}"
        );
    }
    // Resumed: from the first tick after now (the paused ones are not run).
    let resumed = now_ms();
    ok(&["tcc", "schedule", "resume", "every1", "--server", &s.url]);
    wait_until("a tick after resume", || {
        ticks(&s.url, "every1").len() > t.len()
    });
    let after = ticks(&s.url, "every1");
    assert!(after[t.len()] > resumed, "{after:?} resumed at {resumed}");
    ok(&["tcc", "schedule", "delete", "every1", "--server", &s.url]);
    let (c, j) = get(&s.url, "/v1/schedules/every1");
    assert_eq!(c, 404, "{j}");
    let o = irkit(&["tcc", "schedule", "delete", "every1", "--server", &s.url]);
    assert_eq!(o.status.code(), Some(1));
    let listed = ok(&[
        "tcc", "schedule", "ls", "--format", "json", "--server", &s.url,
    ]);
    assert_eq!(
        serde_json::from_str::<J>(&listed).unwrap(),
        json!({"schedules": []})
    );
}

#[test]
fn two_postgresql_nodes_one_sigkilled_start_each_tick_once() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_sched_cli").unwrap() else {
        return;
    };
    let d = Dir::new("irkit-tcc-sched-pg-");
    let url = schema.url();
    let mut a = serve(&url, &d.0, &["--node-id", "a"]);
    let b = serve(&url, &d.0, &["--node-id", "b"]);
    register(&d.0, &a.url);
    let first = create(&b.url)["next_due_ms"].as_i64().unwrap();
    wait_until("three ticks", || ticks(&b.url, "every1").len() >= 3);
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed = now_ms();
    // Node b alone handles the ticks after the kill.
    let t = pause_after(&b.url, killed + 2_000);
    assert_consecutive(&t, first);
    let (_, row) = get(&b.url, "/v1/schedules/every1");
    assert_eq!(
        (row["ticks_started"].as_u64(), row["ticks_skipped"].as_u64()),
        (Some(t.len() as u64), Some(0))
    );
}
