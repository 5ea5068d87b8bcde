//! Pause, resume and delete end to end (issue 35): `irkit tcc pause|
//! resume|delete` against `irkit tcc serve`, on SQLite and on two
//! PostgreSQL nodes (one pauses, the other starts and drives). Waits poll
//! generously; no assertion depends on how fast the machine is.

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server, irkit, ok, request};

fn status(url: &str, id: &str) -> J {
    let (c, b) = request(url, "GET", &format!("/v1/executions/{id}"), None, None).unwrap();
    assert_eq!(c, 200);
    serde_json::from_slice(&b).unwrap()
}

fn wait_status(url: &str, id: &str, want: &str) {
    let start = Instant::now();
    loop {
        let s = status(url, id);
        if s["status"] == want {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{id} never became {want}: {s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Registers `echo` (returns its argument) and `wait` (waits for event
/// `go`, returns its payload).
fn register(dir: &Path, url: &str) {
    let echo = common::artifact(&[(
        "run",
        1,
        1,
        json!([{"op": "LoadLocal", "local": 0}, {"op": "Return"}]),
    )]);
    let wait = common::artifact(&[(
        "run",
        0,
        0,
        json!([{"op": "LoadConst", "value": {"t": "string", "v": "go"}}, {"op": "WaitForEvent"}, {"op": "Return"}]),
    )]);
    for (name, bytes) in [("echo", echo), ("wait", wait)] {
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, bytes).unwrap();
        ok(&[
            "tcc",
            "register",
            file.to_str().unwrap(),
            "--name",
            name,
            "--server",
            url,
        ]);
    }
}

fn serve(db: &str, dir: &Path, extra: &[&str]) -> Server {
    let p = dir.join("providers.toml");
    std::fs::write(&p, "").unwrap();
    tcc_serve::serve(db, &p, extra, &[], None)
}

fn start(url: &str, program: &str, id: &str) {
    ok(&[
        "tcc", "start", program, "--id", id, "--args", "[5]", "--server", url,
    ]);
}

/// `pauser` pauses and resumes; `runner` starts and drives.
fn pause_resume_delete(pauser: &str, runner: &str) {
    // One execution.
    ok(&["tcc", "start", "wait", "--id", "w1", "--server", runner]);
    wait_status(runner, "w1", "suspended");
    assert_eq!(
        ok(&["tcc", "pause", "w1", "--server", pauser]).trim(),
        "w1 paused"
    );
    let s = status(runner, "w1");
    assert_eq!(
        (&s["status"], &s["paused_by"], &s["stored_status"]),
        (&json!("paused"), &json!("execution"), &json!("suspended")),
        "{s}"
    );
    ok(&[
        "tcc",
        "send",
        "w1",
        "go",
        "--payload",
        "7",
        "--server",
        runner,
    ]);
    assert_eq!(status(runner, "w1")["status"], "paused");
    // Deleting an unfinished execution is refused.
    let o = irkit(&["tcc", "delete", "w1", "--server", runner]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("TCC-H204"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        ok(&["tcc", "resume", "w1", "--server", pauser]).trim(),
        "w1 unpaused"
    );
    wait_status(runner, "w1", "completed");
    assert_eq!(status(runner, "w1")["result_plain"], 7);

    // A program: executions started while it is paused wait.
    assert_eq!(
        ok(&["tcc", "pause", "--program", "echo", "--server", pauser]).trim(),
        "program echo paused"
    );
    start(runner, "echo", "e1");
    let s = status(runner, "e1");
    assert_eq!(
        (&s["status"], &s["paused_by"]),
        (&json!("paused"), &json!("program"))
    );
    let (c, b) = request(runner, "GET", "/v1/programs", None, None).unwrap();
    let programs: J = serde_json::from_slice(&b).unwrap();
    assert_eq!((c, &programs["paused_programs"]), (200, &json!(["echo"])));
    // Resuming the execution alone does not lift its program's pause.
    let o = irkit(&["tcc", "resume", "e1", "--server", pauser]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(status(runner, "e1")["status"], "paused");
    assert_eq!(
        ok(&["tcc", "resume", "--program", "echo", "--server", pauser]).trim(),
        "program echo resumed"
    );
    wait_status(runner, "e1", "completed");

    // Delete: gone with its history.
    assert_eq!(
        ok(&["tcc", "delete", "e1", "--server", pauser]).trim(),
        "e1 deleted"
    );
    for url in [pauser, runner] {
        let (c, _) = request(url, "GET", "/v1/executions/e1", None, None).unwrap();
        assert_eq!(c, 404);
        let (c, _) = request(url, "GET", "/v1/executions/e1/history", None, None).unwrap();
        assert!(c == 404 || c == 200);
    }
    let o = irkit(&["tcc", "delete", "e1", "--server", pauser]);
    assert_eq!(o.status.code(), Some(1));
    let (c, b) = request(pauser, "POST", "/v1/executions/w1/pause", None, None).unwrap();
    let body: J = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (c, &body["error"]["code"]),
        (409, &json!("conflict")),
        "{body}"
    );
}

#[test]
fn pause_resume_and_delete_on_sqlite() {
    let d = Dir::new("irkit-tcc-ops-");
    let db = d.0.join("t.db");
    let s = serve(db.to_str().unwrap(), &d.0, &[]);
    register(&d.0, &s.url);
    pause_resume_delete(&s.url, &s.url);
}

#[test]
fn pause_resume_and_delete_across_two_postgresql_nodes() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_ops_cli").unwrap() else {
        return;
    };
    let d = Dir::new("irkit-tcc-ops-pg-");
    let url = schema.url();
    let a = serve(&url, &d.0, &["--node-id", "a"]);
    let b = serve(&url, &d.0, &["--node-id", "b", "--workers", "4"]);
    register(&d.0, &a.url);
    pause_resume_delete(&a.url, &b.url);
}
