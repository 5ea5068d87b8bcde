//! Operator resume through the CLI (issue 33): a shop workflow holds stock
//! and then charges through a webhook payment service that is down; the
//! execution fails for good. Once the service is fixed, `irkit tcc resume`
//! runs it again from the checkpoint before the charge: the execution
//! completes, the stock webhook was called once and the payment webhook
//! twice (the failed call and the one after the fix). Through `irkit tcc
//! serve` on SQLite and on PostgreSQL (two nodes on one schema, a resume
//! request to each at once: one resumes, the other is refused) and with
//! `--local` on a SQLite file.

#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server};

const SHOP: &str = r#"from tcc_engine.primitives import effect, program


@program
async def run(order):
    held = await effect(f"stock.hold.{order['id']}", input={"qty": order["qty"]})
    charge = await effect(f"payment.charge.{order['id']}", input={"amount": order["amount"]})
    return {"held": held["qty"], "charged": charge["amount"]}
"#;

/// A stock and payment service on loopback: `/stock` echoes the request's
/// JSON body; `/charge` answers 503 until fixed, then echoes. Records the
/// path of every request.
struct Services {
    base: String,
    fixed: Arc<AtomicBool>,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Services {
    fn start() -> Services {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let fixed = Arc::new(AtomicBool::new(false));
        let calls: Arc<Mutex<Vec<String>>> = Arc::default();
        let (up, seen) = (fixed.clone(), calls.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                let _ = reader.read_line(&mut request_line);
                let path = request_line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("")
                    .to_string();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                seen.lock().unwrap().push(path.clone());
                let (status, body) = if path == "/charge" && !up.load(Ordering::SeqCst) {
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
        Services { base, fixed, calls }
    }

    fn calls_of(&self, path: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|p| *p == path)
            .count()
    }

    fn providers(&self, dir: &Path) -> PathBuf {
        let p = dir.join("providers.toml");
        std::fs::write(
            &p,
            format!(
                "[[route]]\npattern = \"stock.*\"\nprovider = \"webhook\"\nurl = \"{0}/stock\"\nretries = 0\n\n\
                 [[route]]\npattern = \"payment.*\"\nprovider = \"webhook\"\nurl = \"{0}/charge\"\nretries = 0\n",
                self.base
            ),
        )
        .unwrap();
        p
    }
}

fn irkit(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .env_remove("IRKIT_TCC_TOKEN")
        .output()
        .unwrap()
}

fn get(url: &str, path: &str) -> J {
    let (status, body) = tcc_serve::request(url, "GET", path, None, None).unwrap();
    assert_eq!(status, 200, "GET {path}");
    serde_json::from_slice(&body).unwrap()
}

fn wait_for_end(url: &str, id: &str) -> J {
    let start = Instant::now();
    loop {
        let j = get(url, &format!("/v1/executions/{id}"));
        if ["completed", "failed", "cancelled"].contains(&j["status"].as_str().unwrap_or("")) {
            return j;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no end: {j}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn order() -> J {
    json!({"id": "o-1", "qty": 2, "amount": 30})
}

/// Fails the order, fixes the payment service, resumes through each of
/// `nodes` at once (a resume request to each), and checks the outcome.
fn resume_through_servers(database: &str, dir: &Path, node_count: usize) {
    let services = Services::start();
    let providers = services.providers(dir);
    let nodes: Vec<Server> = (0..node_count)
        .map(|_| tcc_serve::serve(database, &providers, &["--workers", "2"], &[], None))
        .collect();
    let source = dir.join("shop.py");
    std::fs::write(&source, SHOP).unwrap();
    let url = nodes[0].url.clone();
    let registered = irkit(&[
        "tcc",
        "register",
        &source.to_string_lossy(),
        "--server",
        &url,
    ]);
    assert!(registered.status.success(), "{registered:?}");
    let body = json!({"program": "shop", "args": [order()]}).to_string();
    let (status, answer) =
        tcc_serve::request(&url, "POST", "/v1/executions", Some(body.as_bytes()), None).unwrap();
    assert!((200..300).contains(&status));
    let id = serde_json::from_slice::<J>(&answer).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let failed = wait_for_end(&url, &id);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["message"].as_str().unwrap().contains("503"),
        "{failed}"
    );
    assert_eq!(
        (services.calls_of("/stock"), services.calls_of("/charge")),
        (1, 1)
    );

    services.fixed.store(true, Ordering::SeqCst);
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let racers: Vec<_> = nodes
            .iter()
            .map(|n| {
                let (server, id) = (n.url.clone(), id.clone());
                scope.spawn(move || irkit(&["tcc", "resume", &id, "--server", &server]))
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let resumed: Vec<&Output> = outputs.iter().filter(|o| o.status.success()).collect();
    assert_eq!(resumed.len(), 1, "{outputs:?}");
    let line = String::from_utf8_lossy(&resumed[0].stdout);
    assert!(
        line.starts_with(&format!("{id} resumed effect=payment.charge.o-1 revision=")),
        "{line}"
    );
    for refused in outputs.iter().filter(|o| !o.status.success()) {
        assert_eq!(refused.status.code(), Some(1), "{refused:?}");
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(
            err.contains("TCC-H212") && err.contains("not_resumable"),
            "{err}"
        );
    }
    let done = wait_for_end(&url, &id);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result_plain"], json!({"held": 2, "charged": 30}));
    assert_eq!(
        (services.calls_of("/stock"), services.calls_of("/charge")),
        (1, 2),
        "the stock was held once; one charge after the fix"
    );
    let history = get(&url, &format!("/v1/executions/{id}/history"));
    assert!(
        history.to_string().contains("resumed_by_operator"),
        "{history}"
    );
    // Completed now: refused with the code, exit 1.
    let again = irkit(&["tcc", "resume", &id, "--server", &url]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("TCC-H212"));
}

#[test]
fn a_fixed_provider_lets_irkit_tcc_resume_complete_the_execution_on_sqlite() {
    let dir = Dir::new("tcc-resume-");
    let db = dir.0.join("host.db");
    resume_through_servers(&db.to_string_lossy(), &dir.0, 1);
}

#[test]
fn one_of_two_nodes_resumes_and_the_other_refuses_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_resume_cli").unwrap()
    else {
        return;
    };
    let dir = Dir::new("tcc-resume-pg-");
    resume_through_servers(&schema.url(), &dir.0, 2);
}

#[test]
fn irkit_tcc_resume_local_drives_the_execution_to_its_end() {
    let dir = Dir::new("tcc-resume-local-");
    let services = Services::start();
    let providers = services.providers(&dir.0);
    let source = dir.0.join("shop.py");
    std::fs::write(&source, SHOP).unwrap();
    let db = dir.0.join("local.db");
    let (db, providers) = (
        db.to_string_lossy().into_owned(),
        providers.to_string_lossy().into_owned(),
    );
    let args = order().to_string();
    let started = irkit(&[
        "tcc",
        "start",
        "--local",
        &source.to_string_lossy(),
        "--args",
        &format!("[{args}]"),
        "--id",
        "shop-1",
        "--database",
        &db,
        "--providers",
        &providers,
    ]);
    assert_eq!(started.status.code(), Some(1), "{started:?}");
    assert!(String::from_utf8_lossy(&started.stdout).contains("shop-1 failed"));
    services.fixed.store(true, Ordering::SeqCst);
    let resumed = irkit(&[
        "tcc",
        "resume",
        "shop-1",
        "--local",
        "--database",
        &db,
        "--providers",
        &providers,
    ]);
    assert!(resumed.status.success(), "{resumed:?}");
    let line = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        line.starts_with("shop-1 completed result={\"charged\":30,\"held\":2}"),
        "{line}"
    );
    assert_eq!(
        (services.calls_of("/stock"), services.calls_of("/charge")),
        (1, 2)
    );
    // Unknown and not failed: coded refusals, exit 1.
    let unknown = irkit(&["tcc", "resume", "nope", "--local", "--database", &db]);
    assert_eq!(unknown.status.code(), Some(1), "{unknown:?}");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("TCC-H202"));
    let done = irkit(&["tcc", "resume", "shop-1", "--local", "--database", &db]);
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    assert!(String::from_utf8_lossy(&done.stderr).contains("TCC-H212"));
}
