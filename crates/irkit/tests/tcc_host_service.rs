//! `irkit tcc serve` as a real process on loopback: the HTTP API, the CLI
//! clients, auth and limits, and the crash harness (every crash hook and
//! SIGKILL, restart, same results and effect-provider log as an
//! uninterrupted run).

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const IRKIT: &str = env!("CARGO_BIN_EXE_irkit");

use tcc_serve::{Dir, Server};

/// Where a harness run keeps its executions: a SQLite file in the run's
/// directory, or a PostgreSQL schema.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A run's database; the PostgreSQL schema is dropped on drop.
enum Database {
    Sqlite(PathBuf),
    Pg(tcc_host::test_support::ScratchSchema),
}

impl Database {
    fn new(backend: Backend, dir: &Path) -> Option<Database> {
        match backend {
            Backend::Sqlite => Some(Database::Sqlite(dir.join("host.db"))),
            Backend::Postgres => tcc_host::test_support::ScratchSchema::create("t_serve")
                .unwrap()
                .map(Database::Pg),
        }
    }

    fn arg(&self) -> String {
        match self {
            Database::Sqlite(p) => p.to_string_lossy().into_owned(),
            Database::Pg(s) => s.url(),
        }
    }
}

fn serve(dir: &Path, crash: Option<&str>, extra: &[&str]) -> Server {
    serve_on(&dir.join("host.db").to_string_lossy(), dir, crash, extra)
}

fn serve_on(database: &str, dir: &Path, crash: Option<&str>, extra: &[&str]) -> Server {
    tcc_serve::serve(
        database,
        &dir.join("providers.toml"),
        extra,
        &[("TCC_CRASH_AT", crash)],
        None,
    )
}

fn write_providers(dir: &Path) {
    let log = dir.join("effects.log");
    std::fs::write(
        dir.join("providers.toml"),
        format!(
            "[[route]]\npattern = \"fail.*\"\nprovider = \"webhook\"\nurl = \"http://127.0.0.1:9/\"\nretries = 0\ntimeout_ms = 500\n\n[[route]]\npattern = \"*\"\nprovider = \"echo\"\nlog = {:?}\n",
            log.to_string_lossy()
        ),
    )
    .unwrap();
}

fn http(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> Result<(u16, J), String> {
    let (status, body) = tcc_serve::request(url, method, path, body, token)?;
    let j = serde_json::from_slice(&body).map_err(|e| format!("non-JSON: {e}"))?;
    Ok((status, j))
}

fn cli(server: &str, args: &[&str]) -> Output {
    Command::new(IRKIT)
        .arg("tcc")
        .args(args)
        .env("IRKIT_TCC_SERVER", server)
        .env_remove("IRKIT_TCC_TOKEN")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn wait_status(url: &str, id: &str, want: &[&str], token: Option<&str>) -> J {
    let start = Instant::now();
    loop {
        let (code, j) = http(url, "GET", &format!("/v1/executions/{id}"), None, token).unwrap();
        assert_eq!(code, 200, "{j}");
        if want.contains(&j["status"].as_str().unwrap_or("")) {
            return j;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "timed out: {j}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn api_and_cli_end_to_end() {
    let d = Dir::new("irkit-tcc-serve-");
    write_providers(&d.0);
    let s = serve(&d.0, None, &["--max-body", "100000"]);
    let u = s.url.as_str();
    for (name, bytes) in [
        ("flow", common::flow()),
        ("worker", common::worker()),
        ("w", common::waiter()),
    ] {
        std::fs::write(d.0.join(format!("{name}.json")), bytes).unwrap();
    }
    // register: name defaults to the file stem; prints the hash.
    let o = cli(u, &["register", d.0.join("flow.json").to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o).len(), 64);
    let o = cli(u, &["register", d.0.join("worker.json").to_str().unwrap()]);
    assert!(o.status.success());
    let o = cli(
        u,
        &[
            "register",
            d.0.join("w.json").to_str().unwrap(),
            "--name",
            "waiter",
        ],
    );
    assert!(o.status.success());
    let (_, progs) = http(u, "GET", "/v1/programs", None, None).unwrap();
    assert_eq!(progs["programs"].as_array().unwrap().len(), 3);

    let o = cli(u, &["start", "flow"]);
    assert!(o.status.success(), "{o:?}");
    let id = stdout(&o);
    let o = cli(
        u,
        &["send", &id, "approved", "--payload", "{\"ok\": [1, true]}"],
    );
    assert!(o.status.success(), "{o:?}");
    wait_status(u, &id, &["completed"], None);
    let o = cli(u, &["status", &id, "--format", "json"]);
    let st: J = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(st["status"], "completed");
    let payload = json!({"ok": [1, true]});
    assert_eq!(st["result"][1], payload);
    assert_eq!(st["result"][2], payload);
    let o = cli(u, &["status", &id, "--format", "json", "--tagged"]);
    let st: J = serde_json::from_str(&stdout(&o)).unwrap();
    let tagged = json!({"t": "object", "v": {"ok": {"t": "array", "v": [{"t": "number", "v": 1}, {"t": "bool", "v": true}]}}});
    assert_eq!(st["result"]["v"][1], tagged);
    let o = cli(u, &["status", &id]);
    assert!(stdout(&o).contains("completed result="));

    // history and effect journal
    let (c, h) = http(
        u,
        "GET",
        &format!("/v1/executions/{id}/history"),
        None,
        None,
    )
    .unwrap();
    assert_eq!(c, 200);
    let kinds: Vec<&str> = h["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"created")
            && kinds.contains(&"event_received")
            && kinds.contains(&"child_delivered"),
        "{kinds:?}"
    );
    let (_, e) = http(
        u,
        "GET",
        &format!("/v1/executions/{id}/effects"),
        None,
        None,
    )
    .unwrap();
    assert_eq!(e["effects"][0]["key"], "prepare");

    // cancel
    let o = cli(u, &["start", "waiter", "--id", "to-cancel"]);
    assert_eq!(stdout(&o), "to-cancel");
    wait_status(u, "to-cancel", &["suspended"], None);
    assert!(cli(u, &["cancel", "to-cancel"]).status.success());
    wait_status(u, "to-cancel", &["cancelled"], None);
    let o = cli(u, &["cancel", "to-cancel"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("conflict"));
    let o = cli(u, &["send", "to-cancel", "x"]);
    assert_eq!(o.status.code(), Some(1));
    let o = cli(u, &["status", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not_found"));
    let o = cli(u, &["start", "unknown-program"]);
    assert_eq!(o.status.code(), Some(1));
    let o = cli(u, &["start", "flow", "--id", "to-cancel"]);
    assert_eq!(o.status.code(), Some(1));

    // ls: filters and pagination
    let o = cli(u, &["ls", "--format", "json"]);
    let all: J = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(all["executions"].as_array().unwrap().len() >= 3);
    let o = cli(u, &["ls", "--status", "cancelled", "--format", "json"]);
    let c: J = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(c["executions"].as_array().unwrap().len(), 1);
    let (_, p1) = http(u, "GET", "/v1/executions?limit=1", None, None).unwrap();
    let next = p1["next_after"].as_i64().unwrap();
    let (_, p2) = http(
        u,
        "GET",
        &format!("/v1/executions?limit=1&after={next}"),
        None,
        None,
    )
    .unwrap();
    assert_ne!(p1["executions"][0]["id"], p2["executions"][0]["id"]);

    // errors are JSON with codes
    let (c, j) = http(u, "POST", "/v1/artifacts", Some(b"{\"envelope\": 1}"), None).unwrap();
    assert_eq!(
        (c, j["error"]["code"].as_str()),
        (422, Some("invalid_artifact"))
    );
    let mut tampered: J = serde_json::from_slice(&common::waiter()).unwrap();
    tampered["envelope"]["artifact_hash"] = json!("00");
    let (c, j) = http(
        u,
        "POST",
        "/v1/artifacts",
        Some(tampered.to_string().as_bytes()),
        None,
    )
    .unwrap();
    assert_eq!(c, 422);
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("hash_mismatch")
    );
    let big = vec![b' '; 200_000];
    let (c, j) = http(u, "POST", "/v1/executions", Some(&big), None).unwrap();
    assert_eq!(
        (c, j["error"]["code"].as_str()),
        (413, Some("payload_too_large"))
    );
    let (c, j) = http(u, "POST", "/v1/executions", Some(b"{"), None).unwrap();
    assert_eq!((c, j["error"]["code"].as_str()), (400, Some("bad_request")));
    let (c, j) = http(
        u,
        "POST",
        "/v1/executions",
        Some(b"{\"program\":\"flow\",\"tagged_args\":[{\"t\":\"bogus\"}]}"),
        None,
    )
    .unwrap();
    assert_eq!((c, j["error"]["code"].as_str()), (400, Some("bad_request")));
    let (c, j) = http(u, "GET", "/v1/nothing", None, None).unwrap();
    assert_eq!((c, j["error"]["code"].as_str()), (404, Some("not_found")));
    let (c, j) = http(u, "GET", "/v1/openapi.json", None, None).unwrap();
    assert_eq!(c, 200);
    assert!(j["paths"]["/v1/executions/{id}/events"].is_object());
}

/// `irkit tcc register FILE` keeps the source of every frontend beside
/// the artifact (issue 35), under the file name of its spans, outside its
/// hash; `--no-source` keeps none, and an artifact file has none.
#[test]
fn register_keeps_the_source_of_every_frontend() {
    let d = Dir::new("irkit-tcc-src-");
    write_providers(&d.0);
    let s = serve(&d.0, None, &[]);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tcc/src");
    for file in ["approval.py", "approval.ts", "approval.rs"] {
        let path = examples.join(file);
        let name = file.replace('.', "_");
        let o = cli(
            &s.url,
            &["register", &path.to_string_lossy(), "--name", &name],
        );
        assert!(o.status.success(), "{o:?}");
        let hash = stdout(&o);
        let (c, j) = http(
            &s.url,
            "GET",
            &format!("/v1/artifacts/{hash}/source"),
            None,
            None,
        )
        .unwrap();
        assert_eq!((c, j["file"].as_str()), (200, Some(file)), "{j}");
        assert_eq!(
            j["text"].as_str(),
            Some(std::fs::read_to_string(&path).unwrap().as_str())
        );
        // The same artifact without its source: one hash, the source kept.
        let artifact = d.0.join(format!("{name}.json"));
        let o = Command::new(IRKIT)
            .args(["tcc", "compile"])
            .arg(&path)
            .arg("-o")
            .arg(&artifact)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let o = cli(
            &s.url,
            &["register", &artifact.to_string_lossy(), "--name", &name],
        );
        assert_eq!(stdout(&o), hash);
        let (c, _) = http(
            &s.url,
            "GET",
            &format!("/v1/artifacts/{hash}/source"),
            None,
            None,
        )
        .unwrap();
        assert_eq!(c, 200);
    }
    let fresh = d.0.join("fresh.py");
    std::fs::write(
        &fresh,
        "from tcc_engine.primitives import effect, program\n\n\n@program\nasync def run():\n    return await effect(\"fresh.only\")\n",
    )
    .unwrap();
    let o = cli(
        &s.url,
        &["register", &fresh.to_string_lossy(), "--no-source"],
    );
    assert!(o.status.success(), "{o:?}");
    let (c, j) = http(
        &s.url,
        "GET",
        &format!("/v1/artifacts/{}/source", stdout(&o)),
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        (c, j["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{j}"
    );
}

#[test]
fn bearer_token_is_enforced_and_required_off_loopback() {
    let d = Dir::new("irkit-tcc-serve-");
    write_providers(&d.0);
    let s = serve(&d.0, None, &["--token", "s3cret"]);
    let (c, j) = http(&s.url, "GET", "/v1/executions", None, None).unwrap();
    assert_eq!(
        (c, j["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (c, _) = http(&s.url, "GET", "/v1/executions", None, Some("wrong")).unwrap();
    assert_eq!(c, 401);
    let (c, _) = http(&s.url, "GET", "/v1/executions", None, Some("s3cret")).unwrap();
    assert_eq!(c, 200);
    let (c, _) = http(&s.url, "GET", "/v1/health", None, None).unwrap();
    assert_eq!(c, 200);
    let o = Command::new(IRKIT)
        .args(["tcc", "ls", "--server", &s.url])
        .env("IRKIT_TCC_TOKEN", "s3cret")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    // A non-loopback listen address without a token is refused before binding.
    let o = Command::new(IRKIT)
        .args(["tcc", "serve", "--listen", "0.0.0.0:0", "--database"])
        .arg(d.0.join("other.db"))
        .env_remove("IRKIT_TCC_TOKEN")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("without a bearer token"));
}

// ---- crash harness ----

/// (id, program name, events to send right after start).
type Case = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);
const CASES: &[Case] = &[
    ("x-effects", "effects", &[]),
    ("x-flow", "flow", &[("approved", "\"yes\"")]),
    ("x-all", "all", &[("go", "5")]),
    ("x-any", "any", &[]),
    ("x-caught", "caught", &[]),
    ("x-cancel", "waiter", &[]),
];

fn register_all(url: &str) -> Result<(), String> {
    for (name, bytes) in [
        ("effects", common::effects()),
        ("flow", common::flow()),
        ("worker", common::worker()),
        ("all", common::join_all()),
        ("any", common::join_any()),
        ("caught", common::caught()),
        ("waiter", common::waiter()),
    ] {
        let (c, j) = http(
            url,
            "POST",
            &format!("/v1/artifacts?name={name}"),
            Some(&bytes),
            None,
        )?;
        if c != 201 {
            return Err(format!("register {name}: {j}"));
        }
    }
    Ok(())
}

/// Starts every case and sends its events; returns the steps not done
/// (the server may die at any point).
fn start_all(url: &str) -> Vec<String> {
    let mut left = Vec::new();
    for (id, program, events) in CASES {
        let body = json!({"program": program, "id": id}).to_string();
        if http(url, "POST", "/v1/executions", Some(body.as_bytes()), None).is_err() {
            left.push(format!("start {id}"));
        }
        for (name, payload) in *events {
            let body = format!("{{\"name\": {name:?}, \"payload\": {payload}}}");
            if http(
                url,
                "POST",
                &format!("/v1/executions/{id}/events"),
                Some(body.as_bytes()),
                None,
            )
            .is_err()
            {
                left.push(format!("event {id} {name}"));
            }
        }
        if *program == "waiter"
            && http(
                url,
                "POST",
                &format!("/v1/executions/{id}/cancel"),
                None,
                None,
            )
            .is_err()
        {
            left.push(format!("cancel {id}"));
        }
    }
    left
}

fn finish_steps(url: &str, steps: &[String]) {
    for s in steps {
        let parts: Vec<&str> = s.split(' ').collect();
        let (id, program, events) = CASES.iter().find(|c| c.0 == parts[1]).unwrap();
        match parts[0] {
            "start" => {
                // The start may have committed before the crash: a conflict is fine.
                let body = json!({"program": program, "id": id}).to_string();
                let (c, j) =
                    http(url, "POST", "/v1/executions", Some(body.as_bytes()), None).unwrap();
                assert!(c == 201 || c == 409, "{j}");
            }
            "event" => {
                let (_, payload) = events.iter().find(|e| e.0 == parts[2]).unwrap();
                let body = format!("{{\"name\": {:?}, \"payload\": {payload}}}", parts[2]);
                http(
                    url,
                    "POST",
                    &format!("/v1/executions/{id}/events"),
                    Some(body.as_bytes()),
                    None,
                )
                .unwrap();
            }
            _ => {
                let (c, j) = http(
                    url,
                    "POST",
                    &format!("/v1/executions/{id}/cancel"),
                    None,
                    None,
                )
                .unwrap();
                assert!(c == 202 || c == 409, "{j}");
            }
        }
    }
}

fn results(url: &str) -> BTreeMap<String, J> {
    CASES
        .iter()
        .map(|(id, ..)| {
            let j = wait_status(url, id, &["completed", "failed", "cancelled"], None);
            // The effect journal too (sorted: join branches may journal in
            // either order): a crash must neither lose a journalled step nor
            // add one the uninterrupted run does not have.
            let (c, effects) = http(
                url,
                "GET",
                &format!("/v1/executions/{id}/effects"),
                None,
                None,
            )
            .unwrap();
            assert_eq!(c, 200, "{effects}");
            let mut journal: Vec<String> = effects["effects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.to_string())
                .collect();
            journal.sort();
            (
                id.to_string(),
                json!({"status": j["status"], "result": j.get("result"), "journal": journal}),
            )
        })
        .collect()
}

fn log_lines(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(dir.join("effects.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn wait_exit(s: &mut Server, until_done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = s.child.try_wait() {
            assert!(!status.success(), "server exited cleanly: {status:?}");
            return true;
        }
        if until_done() || start.elapsed() > Duration::from_secs(20) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn all_terminal(url: &str) -> bool {
    CASES.iter().all(|(id, ..)| {
        matches!(http(url, "GET", &format!("/v1/executions/{id}"), None, None),
            Ok((200, j)) if ["completed", "failed", "cancelled"].contains(&j["status"].as_str().unwrap_or("")))
    })
}

/// One interrupted run: crash (hook or SIGKILL after `kill_after`), restart, finish.
/// `None` when the backend is not available (PostgreSQL not reachable).
fn interrupted(
    backend: Backend,
    crash: Option<&str>,
    kill_after: Option<Duration>,
) -> Option<(bool, BTreeMap<String, J>, Vec<String>)> {
    let d = Dir::new("irkit-tcc-serve-");
    write_providers(&d.0);
    let db = Database::new(backend, &d.0)?;
    // One worker while a hook is armed, so that no other execution is
    // between its provider call and its journal write when the hook fires.
    // A fixed node id: the restarted node takes its own leases back at once.
    let workers: &[&str] = if crash.is_some() {
        &["--workers", "1", "--node-id", "n1"]
    } else {
        &["--node-id", "n1"]
    };
    let mut s = serve_on(&db.arg(), &d.0, crash, workers);
    register_all(&s.url).unwrap();
    let left = start_all(&s.url);
    let crashed = match kill_after {
        Some(t) => {
            std::thread::sleep(t);
            s.child.kill().unwrap();
            s.child.wait().unwrap();
            true
        }
        None => {
            let url = s.url.clone();
            wait_exit(&mut s, || all_terminal(&url))
        }
    };
    drop(s);
    let s = serve_on(&db.arg(), &d.0, None, &["--node-id", "n1"]);
    finish_steps(&s.url, &left);
    let r = results(&s.url);
    Some((crashed, r, log_lines(&d.0)))
}

fn dedup(v: &[String]) -> Vec<String> {
    let mut d = v.to_vec();
    d.dedup();
    d
}

/// The crash runs: every hook (plus two later hits) and SIGKILL at `kills` ms.
fn crash_harness(backend: Backend, extra_hits: bool, kills: &[u64]) {
    let Some((_, baseline, base_log)) = interrupted(backend, None, None) else {
        return;
    };
    assert_eq!(baseline["x-cancel"]["status"], "cancelled");
    assert_eq!(baseline["x-flow"]["status"], "completed");
    assert_eq!(baseline["x-caught"]["result"]["t"], "string");
    assert_eq!(base_log, dedup(&base_log), "baseline ran an effect twice");
    assert_eq!(base_log.len(), 5, "{base_log:?}");
    let journalled: usize = baseline
        .values()
        .map(|r| r["journal"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(journalled >= base_log.len(), "{baseline:?}");
    let mut runs: Vec<(String, Option<String>)> = tcc_host::crash::HOOKS
        .iter()
        .map(|h| (h.to_string(), Some(h.to_string())))
        .collect();
    if extra_hits {
        runs.push((
            "before_persist_checkpoint:4".into(),
            Some("before_persist_checkpoint:4".into()),
        ));
        runs.push((
            "after_persist_checkpoint:7".into(),
            Some("after_persist_checkpoint:7".into()),
        ));
        // name:detail — an effect key, and an execution id.
        runs.push((
            "after_effect_provider:ship".into(),
            Some("after_effect_provider:ship".into()),
        ));
        runs.push((
            "after_persist_checkpoint:x-all".into(),
            Some("after_persist_checkpoint:x-all".into()),
        ));
    }
    for (label, crash) in runs {
        let (crashed, r, log) = interrupted(backend, crash.as_deref(), None).unwrap();
        assert!(crashed, "{label}: the hook was never reached");
        assert_eq!(r, baseline, "{label}: terminal results differ");
        assert_eq!(
            dedup(&log),
            base_log,
            "{label}: effect-provider log differs"
        );
        // Only a crash between the provider call and the journal write may
        // repeat a provider call (same idempotency key); nothing else may.
        if !label.starts_with("after_effect_provider")
            && !label.starts_with("before_persist_effect")
        {
            assert_eq!(log, base_log, "{label}: a journalled effect ran twice");
        } else {
            assert!(log.len() <= base_log.len() + 1, "{label}: {log:?}");
        }
    }
    for &ms in kills {
        let (_, r, log) = interrupted(backend, None, Some(Duration::from_millis(ms))).unwrap();
        assert_eq!(
            r, baseline,
            "SIGKILL after {ms} ms: terminal results differ"
        );
        assert_eq!(
            dedup(&log),
            base_log,
            "SIGKILL after {ms} ms: effect log differs"
        );
        // A provider call repeats only for an effect whose journal row had
        // not committed at the kill: at most one per worker (4).
        assert!(
            log.len() <= base_log.len() + 4,
            "SIGKILL after {ms} ms: {log:?}"
        );
    }
}

#[test]
fn crash_harness_every_hook_and_sigkill() {
    crash_harness(Backend::Sqlite, true, &[15, 40, 90]);
}

/// The same harness on PostgreSQL: every hook once, SIGKILL at two moments.
#[test]
fn crash_harness_on_postgres() {
    let start = Instant::now();
    crash_harness(Backend::Postgres, false, &[20, 60]);
    eprintln!("crash harness on PostgreSQL: {:?}", start.elapsed());
}

// ---- two nodes on one PostgreSQL database ----

/// Multi-node run: (id, program, events sent right after start).
const NODE_CASES: &[Case] = &[
    ("m-chain-0", "chain", &[]),
    ("m-chain-1", "chain", &[]),
    ("m-chain-2", "chain", &[]),
    ("m-chain-3", "chain", &[]),
    ("m-chain-4", "chain", &[]),
    ("m-chain-5", "chain", &[]),
    ("m-flow-0", "flow", &[("approved", "\"yes\"")]),
    ("m-flow-1", "flow", &[("approved", "[1, 2]")]),
    ("m-all", "all", &[("go", "5")]),
    ("m-any", "any", &[]),
    ("m-late", "waiter", &[]),
];

fn write_slow_providers(dir: &Path) {
    let log = dir.join("effects.log");
    std::fs::write(
        dir.join("providers.toml"),
        format!(
            "[[route]]\npattern = \"*\"\nprovider = \"echo\"\ndelay_ms = 150\nlog = {:?}\n",
            log.to_string_lossy()
        ),
    )
    .unwrap();
}

/// Runs every NODE_CASE on nodes sharing `schema`; with `kill`, node A is
/// SIGKILLed while it holds leases of running executions and node B must
/// finish everything. Returns results, the raw log, and the ids A held.
fn two_nodes(
    schema: &tcc_host::test_support::ScratchSchema,
    kill: bool,
) -> (BTreeMap<String, J>, Vec<String>, Vec<String>) {
    let d = Dir::new("irkit-tcc-serve-");
    write_slow_providers(&d.0);
    let url = schema.url();
    let args = |node: &'static str| -> Vec<&'static str> {
        vec!["--node-id", node, "--lease-ms", "1500", "--workers", "3"]
    };
    let mut a = serve_on(&url, &d.0, None, &args("node-a"));
    let b = serve_on(&url, &d.0, None, &args("node-b"));
    register_all(&a.url).unwrap();
    let (c, j) = http(
        &a.url,
        "POST",
        "/v1/artifacts?name=chain",
        Some(&common::chain(4)),
        None,
    )
    .unwrap();
    assert_eq!(c, 201, "{j}");
    for (id, program, events) in NODE_CASES {
        let body = json!({"program": program, "id": id}).to_string();
        let (c, j) = http(
            &a.url,
            "POST",
            "/v1/executions",
            Some(body.as_bytes()),
            None,
        )
        .unwrap();
        assert_eq!(c, 201, "{j}");
        for (name, payload) in *events {
            let body = format!("{{\"name\": {name:?}, \"payload\": {payload}}}");
            let path = format!("/v1/executions/{id}/events");
            assert_eq!(
                http(&a.url, "POST", &path, Some(body.as_bytes()), None)
                    .unwrap()
                    .0,
                202
            );
        }
    }
    let mut held = Vec::new();
    if kill {
        // Wait until A holds leases of running executions, then SIGKILL it.
        let start = Instant::now();
        loop {
            let ids = schema
                .query_text(
                    "SELECT string_agg(id, ',' ORDER BY id) FROM executions WHERE owner = 'node-a' AND status = 'runnable' AND revision > 0",
                )
                .unwrap();
            if let Some(ids) = ids {
                held = ids.split(',').map(str::to_string).collect();
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "node A never held a running execution"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        a.child.kill().unwrap();
        a.child.wait().unwrap();
        // A may have claimed more between the sample and the kill: what it
        // held when it died is what its leases still name (they last
        // 1.5 s, so B has taken none of them over yet).
        if let Some(ids) = schema
            .query_text(
                "SELECT string_agg(id, ',' ORDER BY id) FROM executions WHERE owner = 'node-a' AND status NOT IN ('completed', 'failed', 'cancelled')",
            )
            .unwrap()
        {
            held.extend(ids.split(',').map(str::to_string));
            held.sort();
            held.dedup();
        }
    }
    // The late event goes to whichever node survives; then cancel the waiter.
    let live = if kill { &b.url } else { &a.url };
    let body = b"{\"name\": \"never\", \"payload\": null}";
    let _ = http(
        live,
        "POST",
        "/v1/executions/m-late/events",
        Some(body),
        None,
    );
    let results: BTreeMap<String, J> = NODE_CASES
        .iter()
        .map(|(id, ..)| {
            let j = wait_status(live, id, &["completed", "failed", "cancelled"], None);
            (
                id.to_string(),
                json!({"status": j["status"], "result": j.get("result")}),
            )
        })
        .collect();
    drop(b);
    drop(a);
    let raw: Vec<String> = std::fs::read_to_string(d.0.join("effects.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    (results, raw, held)
}

#[test]
fn a_killed_postgres_node_is_taken_over_by_another() {
    let Some(base_schema) = tcc_host::test_support::ScratchSchema::create("t_nodes_base").unwrap()
    else {
        return;
    };
    let (baseline, base_raw, _) = two_nodes(&base_schema, false);
    let mut base_log = base_raw.clone();
    base_log.sort();
    assert_eq!(base_log, dedup(&base_log), "baseline ran an effect twice");
    for (id, r) in &baseline {
        assert_eq!(r["status"], "completed", "{id}: {r}");
    }
    let schema = tcc_host::test_support::ScratchSchema::create("t_nodes")
        .unwrap()
        .unwrap();
    let start = Instant::now();
    let (results, raw, held) = two_nodes(&schema, true);
    assert!(!held.is_empty());
    assert_eq!(results, baseline, "results differ after node A was killed");
    let mut log = raw.clone();
    log.sort();
    assert_eq!(dedup(&log), base_log, "effect-provider log differs");
    // A provider call may repeat only for an effect node A had called but
    // not journalled when it died: at most one per execution it held.
    assert!(
        log.len() - base_log.len() <= held.len(),
        "{} repeated calls for {} held executions",
        log.len() - base_log.len(),
        held.len()
    );
    // Each timer fired exactly once across both nodes.
    for (id, ..) in NODE_CASES {
        let n = schema
            .query_text(&format!(
                "SELECT count(*) FROM history WHERE execution_id = '{id}' AND kind = 'timer_delivered'"
            ))
            .unwrap()
            .unwrap();
        let want = match *id {
            "m-flow-0" | "m-flow-1" | "m-all" | "m-any" => "1",
            _ => "0",
        };
        assert_eq!(n, want, "{id}: timer deliveries");
    }
    eprintln!(
        "two-node takeover: {:?}, node A held {held:?}",
        start.elapsed()
    );
}
