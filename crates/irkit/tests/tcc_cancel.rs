//! Cancellation that compensates, through a real `irkit tcc serve` (issue
//! 33): the example booking saga (`examples/tcc/src/booking.{py,ts,rs}`)
//! holds a room, charges a deposit and waits for the guest. `cancel` while
//! it waits throws into its handler, which refunds and releases, and the
//! execution ends `cancelled`. The server is aborted (as by SIGKILL, the
//! `TCC_CRASH_AT` hook) right after the refund is journalled and started
//! again on the same database (SQLite file; PostgreSQL schema when
//! reachable): the refund is not made twice, the release is made once.
//! `terminate` stops at once, without the handler.

#[path = "common/tcc_serve.rs"]
mod tcc_serve;

mod common;
use common::logged_effect_keys;
use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server};

fn providers(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("effects.log");
    let p = dir.join("providers.toml");
    std::fs::write(
        &p,
        format!(
            "[[route]]\npattern = \"*\"\nprovider = \"echo\"\nlog = {:?}\n",
            log.to_string_lossy()
        ),
    )
    .unwrap();
    (p, log)
}

fn http(url: &str, method: &str, path: &str, body: Option<&J>) -> (u16, J) {
    let body = body.map(|b| b.to_string());
    let (status, answer) =
        tcc_serve::request(url, method, path, body.as_deref().map(str::as_bytes), None).unwrap();
    (status, serde_json::from_slice(&answer).unwrap())
}

fn ok(url: &str, method: &str, path: &str, body: Option<&J>) -> J {
    let (status, j) = http(url, method, path, body);
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {j}"
    );
    j
}

fn wait_for_status(url: &str, id: &str, want: &str) -> J {
    let start = Instant::now();
    loop {
        let s = ok(url, "GET", &format!("/v1/executions/{id}"), None);
        if s["status"] == want {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {want}: {s}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn journal_keys(url: &str, id: &str) -> Vec<String> {
    let effects = ok(url, "GET", &format!("/v1/executions/{id}/effects"), None);
    effects["effects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect()
}

fn register(url: &str, ext: &str) {
    let source = format!(
        "{}/../../examples/tcc/src/booking.{ext}",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args([
            "tcc", "register", &source, "--name", "booking", "--server", url,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

fn start(url: &str, ext: &str, id: &str) {
    let booking = if ext == "rs" {
        json!("b-1")
    } else {
        json!({"id": "b-1", "room": "r-9", "deposit": 30})
    };
    ok(
        url,
        "POST",
        "/v1/executions",
        Some(&json!({"program": "booking", "args": [booking], "id": id})),
    );
}

fn serve(database: &str, providers: &Path, crash: Option<&str>) -> Server {
    tcc_serve::serve(
        database,
        providers,
        // One node id for both processes: the restarted node takes its
        // own leases back at once (PostgreSQL).
        &["--workers", "2", "--node-id", "cancel-test-node"],
        &[("TCC_CRASH_AT", crash)],
        None,
    )
}

const SAGA: [&str; 4] = [
    "room.hold",
    "deposit.charge",
    "deposit.refund",
    "room.release",
];

/// Cancels the waiting saga with a crash right after the refund is
/// journalled; a second server finishes the compensation.
fn cancel_compensates_across_a_crash(database: &str, dir: &Path, ext: &str) {
    let (providers, log) = providers(dir);
    let mut a = serve(
        database,
        &providers,
        Some("after_persist_effect:deposit.refund"),
    );
    register(&a.url, ext);
    let id = format!("booking-{ext}");
    start(&a.url, ext, &id);
    wait_for_status(&a.url, &id, "suspended");
    ok(&a.url, "POST", &format!("/v1/executions/{id}/cancel"), None);
    let status = a.wait_exit();
    assert!(
        !status.success(),
        "the crash hook aborted the server: {status:?}"
    );
    let b = serve(database, &providers, None);
    // Python and TypeScript rethrow: cancelled. The Rust subset has no
    // exceptions: its entry returns the `Err` and completes with it.
    let error = "CancelledError: the execution was cancelled";
    if ext == "rs" {
        let done = wait_for_status(&b.url, &id, "completed");
        assert_eq!(
            done["result_plain"],
            json!({"$tag": "Err", "$0": error}),
            "{done}"
        );
    } else {
        let done = wait_for_status(&b.url, &id, "cancelled");
        assert_eq!(done["result_plain"], json!(error), "{done}");
    }
    assert_eq!(journal_keys(&b.url, &id), SAGA);
    // Each effect called once, the refund included (journalled before the crash).
    assert_eq!(logged_effect_keys(&log), SAGA);
    let history = ok(&b.url, "GET", &format!("/v1/executions/{id}/history"), None);
    let kinds: Vec<&str> = history["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"cancel_requested"), "{kinds:?}");
    assert!(kinds.contains(&"cancel_delivered"), "{kinds:?}");
    // An ended execution refuses another cancellation.
    let (code, _) = http(&b.url, "POST", &format!("/v1/executions/{id}/cancel"), None);
    assert_eq!(code, 409);
}

#[test]
fn cancel_runs_the_compensation_across_a_crash_on_sqlite_in_every_language() {
    for ext in ["py", "ts", "rs"] {
        let dir = Dir::new("tcc-cancel-");
        let db = dir.0.join("host.db");
        cancel_compensates_across_a_crash(&db.to_string_lossy(), &dir.0, ext);
    }
}

#[test]
fn cancel_runs_the_compensation_across_a_crash_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_cancel").unwrap() else {
        return;
    };
    let dir = Dir::new("tcc-cancel-pg-");
    cancel_compensates_across_a_crash(&schema.url(), &dir.0, "py");
}

#[test]
fn terminate_stops_without_the_handler() {
    let dir = Dir::new("tcc-terminate-");
    let (providers, log) = providers(&dir.0);
    let db = dir.0.join("host.db");
    let s = serve(&db.to_string_lossy(), &providers, None);
    register(&s.url, "py");
    start(&s.url, "py", "t-1");
    wait_for_status(&s.url, "t-1", "suspended");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "terminate", "t-1", "--server", &s.url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let done = wait_for_status(&s.url, "t-1", "cancelled");
    assert!(done.get("result_plain").is_none_or(J::is_null), "{done}");
    assert_eq!(journal_keys(&s.url, "t-1"), ["room.hold", "deposit.charge"]);
    assert_eq!(logged_effect_keys(&log), ["room.hold", "deposit.charge"]);
    // The artifact requires the feature; the guest's confirmation still
    // completes an execution that nobody cancels.
    start(&s.url, "py", "t-2");
    wait_for_status(&s.url, "t-2", "suspended");
    ok(
        &s.url,
        "POST",
        "/v1/executions/t-2/events",
        Some(&json!({"name": "guest.confirmed", "payload": "ada"})),
    );
    let done = wait_for_status(&s.url, "t-2", "completed");
    assert_eq!(
        done["result_plain"],
        json!({"booking": "b-1", "status": "confirmed", "guest": "ada"})
    );
}
