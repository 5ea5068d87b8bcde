//! Durable effect retries through a real `irkit tcc serve` (issue 33): the
//! example `payment.py` charges a card through a flaky webhook (two 503s,
//! then an answer) whose route has a `[route.retry]` policy. The server is
//! SIGKILLed in the middle of the first backoff and started again on the
//! same database (SQLite file; PostgreSQL schema when reachable); the
//! remaining attempts are made after their due times, the webhook is called
//! three times in all, and the execution completes. The status shows the
//! retry it waits for; `/effects` lists the failed calls.

#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server};

/// The backoff between calls: long enough to kill the server inside it.
const BACKOFF_MS: u64 = 1_500;

/// A payment service on loopback: answers 503 to its first `failures`
/// requests, then echoes the request's JSON body; records when each came.
struct Flaky {
    url: String,
    calls: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Flaky {
    fn start(failures: usize) -> Flaky {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/charge", listener.local_addr().unwrap());
        let calls: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
        let seen = calls.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                let mut idempotency_key = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("idempotency-key:") {
                        idempotency_key = line["idempotency-key:".len()..].trim().to_string();
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let n = {
                    let mut c = seen.lock().unwrap();
                    c.push((Instant::now(), idempotency_key));
                    c.len()
                };
                let (status, body) = if n <= failures {
                    ("503 Service Unavailable", b"{}".to_vec())
                } else {
                    ("200 OK", body)
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        Flaky { url, calls }
    }

    fn calls(&self) -> Vec<(Instant, String)> {
        self.calls.lock().unwrap().clone()
    }
}

fn providers(dir: &Path, url: &str) -> PathBuf {
    let p = dir.join("providers.toml");
    std::fs::write(
        &p,
        format!(
            "[[route]]\npattern = \"payment.*\"\nprovider = \"webhook\"\nurl = \"{url}\"\nretries = 0\ntimeout_ms = 2000\n\n\
             [route.retry]\nattempts = 4\ninitial_backoff_ms = {BACKOFF_MS}\nmultiplier = 1.0\n\n\
             [[route]]\npattern = \"*\"\nprovider = \"echo\"\n"
        ),
    )
    .unwrap();
    p
}

fn http(url: &str, method: &str, path: &str, body: Option<&J>) -> J {
    let body = body.map(|b| b.to_string());
    let (status, answer) =
        tcc_serve::request(url, method, path, body.as_deref().map(str::as_bytes), None).unwrap();
    let j: J = serde_json::from_slice(&answer).unwrap();
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {j}"
    );
    j
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn serve(database: &str, providers: &Path) -> Server {
    tcc_serve::serve(database, providers, &["--workers", "2"], &[], None)
}

fn sigkill_between_attempts(database: &str, dir: &Path) {
    let flaky = Flaky::start(2);
    let providers = providers(dir, &flaky.url);
    let source = format!(
        "{}/../../examples/tcc/src/payment.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut a = serve(database, &providers);
    let registered = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args([
            "tcc", "register", &source, "--name", "payment", "--server", &a.url,
        ])
        .output()
        .unwrap();
    assert!(registered.status.success(), "{registered:?}");
    let order = json!({"id": "o-7", "sku": "apple", "qty": 2, "customer": "c-1", "amount": 30});
    let started = http(
        &a.url,
        "POST",
        "/v1/executions",
        Some(&json!({"program": "payment", "args": [order]})),
    );
    let id = started["id"].as_str().unwrap().to_string();
    // The first call failed and its retry is stored: the status says so.
    let status_path = format!("/v1/executions/{id}");
    let mut status = J::Null;
    wait_until("the first attempt is stored", || {
        status = http(&a.url, "GET", &status_path, None);
        status["retry"].is_object()
    });
    assert_eq!(status["status"], "runnable", "{status}");
    assert_eq!(status["retry"]["attempt"], 1, "{status}");
    assert_eq!(status["retry"]["key"], "payment.charge.o-7", "{status}");
    assert!(
        status["retry"]["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 503"),
        "{status}"
    );
    assert_eq!(flaky.calls().len(), 1);
    // `irkit tcc status` shows it too.
    let shown = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "status", &id, "--server", &a.url])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.status.success()
            && line.contains(" runnable ")
            && line.contains("retry={")
            && line.contains("\"next_attempt_at_ms\":"),
        "{shown:?}"
    );
    // SIGKILL inside the backoff, then a new process on the same database.
    a.child.kill().unwrap();
    a.wait_exit();
    assert_eq!(flaky.calls().len(), 1, "no call while nobody runs");
    let b = serve(database, &providers);
    let mut done = J::Null;
    wait_until("the execution completes", || {
        done = http(&b.url, "GET", &status_path, None);
        done["status"] == "completed" || done["status"] == "failed"
    });
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result_plain"],
        json!({"order": "o-7", "status": "paid", "charged": 30}),
        "{done}"
    );
    assert!(done.get("retry").is_none(), "{done}");
    // Three calls in all, each after the previous one's backoff, all with
    // the effect's one idempotency key.
    let calls = flaky.calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    for w in calls.windows(2) {
        assert!(
            w[1].0 - w[0].0 >= Duration::from_millis(BACKOFF_MS),
            "a retry came before its backoff: {:?}",
            w[1].0 - w[0].0
        );
        assert_eq!(w[0].1, w[1].1);
    }
    let effects = http(&b.url, "GET", &format!("/v1/executions/{id}/effects"), None);
    let attempts: Vec<&J> = effects["attempts"].as_array().unwrap().iter().collect();
    assert_eq!(attempts.len(), 2, "{effects}");
    assert_eq!(
        (
            attempts[0]["attempt"].clone(),
            attempts[1]["attempt"].clone()
        ),
        (json!(1), json!(2))
    );
    let charge = effects["effects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "payment.charge.o-7")
        .unwrap();
    assert_eq!(charge["status"], "completed");
}

#[test]
fn a_sigkilled_server_makes_the_remaining_attempts_after_restart_on_sqlite() {
    let dir = Dir::new("tcc-retry-");
    let db = dir.0.join("host.db");
    sigkill_between_attempts(&db.to_string_lossy(), &dir.0);
}

#[test]
fn a_sigkilled_server_makes_the_remaining_attempts_after_restart_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_retry").unwrap() else {
        return;
    };
    let dir = Dir::new("tcc-retry-pg-");
    sigkill_between_attempts(&schema.url(), &dir.0);
}
