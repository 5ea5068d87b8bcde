//! Awaiting results and effect workers that pull (issue 34), against real
//! `irkit tcc serve` processes: `GET /v1/executions/{id}/result?wait=`,
//! `POST /v1/executions?wait=`, `irkit tcc start --wait` and `irkit tcc
//! result --wait`, and the worker task API (`POST /v1/tasks/poll`,
//! heartbeats, complete/fail and batches of answers, lease expiry, lost
//! leases refused), on
//! SQLite and on PostgreSQL — there with two nodes, where the waiter and
//! the worker talk to the node that did not do the work (LISTEN/NOTIFY).

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server};

const IRKIT: &str = env!("CARGO_BIN_EXE_irkit");

/// One request with `Content-Type: application/json`; the status and the
/// JSON body.
fn call(url: &str, method: &str, path: &str, body: Option<&J>) -> (u16, J) {
    let text = body.map(|b| b.to_string());
    let r = tcc_host::http::request(
        method,
        &format!("{url}{path}"),
        &[("Content-Type", "application/json")],
        text.as_deref().map(str::as_bytes),
        Duration::from_secs(40),
    )
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let j = serde_json::from_slice(&r.body).unwrap_or(J::Null);
    (r.status, j)
}

fn register(url: &str, name: &str, artifact: &[u8]) {
    let r = tcc_host::http::request(
        "POST",
        &format!("{url}/v1/artifacts?name={name}"),
        &[("Content-Type", "application/json")],
        Some(artifact),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
}

fn start(url: &str, program: &str) -> String {
    let (st, j) = call(
        url,
        "POST",
        "/v1/executions",
        Some(&json!({"program": program})),
    );
    assert_eq!(st, 201, "{j}");
    j["id"].as_str().unwrap().to_string()
}

/// Routes `charge` and `fail.*` to workers, everything else to echo.
fn providers(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("providers.toml");
    std::fs::write(
        &p,
        "[[route]]\npattern = \"charge\"\nprovider = \"worker\"\n\n[[route]]\npattern = \"fail.*\"\nprovider = \"worker\"\ntimeout_ms = 60000\n\n[[route]]\npattern = \"*\"\nprovider = \"echo\"\n",
    )
    .unwrap();
    p
}

fn serve(database: &str, dir: &Path, extra: &[&str]) -> Server {
    tcc_serve::serve(database, &providers(dir), extra, &[], None)
}

/// Where the test's nodes keep their executions.
enum Db {
    Sqlite(Dir),
    Pg(Dir, tcc_host::test_support::ScratchSchema),
}

impl Db {
    fn sqlite() -> Db {
        Db::Sqlite(Dir::new("await-"))
    }

    fn postgres() -> Option<Db> {
        tcc_host::test_support::ScratchSchema::create("t_await")
            .unwrap()
            .map(|s| Db::Pg(Dir::new("await-pg-"), s))
    }

    fn dir(&self) -> &Path {
        match self {
            Db::Sqlite(d) | Db::Pg(d, _) => &d.0,
        }
    }

    fn url(&self) -> String {
        match self {
            Db::Sqlite(d) => d.0.join("host.db").to_string_lossy().into_owned(),
            Db::Pg(_, s) => s.url(),
        }
    }
}

/// The deadline answer, the wake-up answer and `POST …?wait=`, on one node.
fn long_polls(url: &str) {
    register(url, "waiter", &common::waiter());
    register(url, "chain", &common::chain(2));
    let id = start(url, "waiter");
    let t = Instant::now();
    let (st, j) = call(
        url,
        "GET",
        &format!("/v1/executions/{id}/result?wait=300ms"),
        None,
    );
    assert_eq!(st, 202, "{j}");
    assert_eq!(j["status"], "suspended");
    assert!(
        t.elapsed() >= Duration::from_millis(280),
        "{:?}",
        t.elapsed()
    );

    // The waiter is answered as soon as the event ends the execution.
    let (u, i) = (url.to_string(), id.clone());
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let (st, _) = call(
            &u,
            "POST",
            &format!("/v1/executions/{i}/events"),
            Some(&json!({"name": "never", "payload": {"ok": 1}})),
        );
        assert_eq!(st, 202);
    });
    let t = Instant::now();
    let (st, j) = call(
        url,
        "GET",
        &format!("/v1/executions/{id}/result?wait=20s"),
        None,
    );
    sender.join().unwrap();
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["status"], "completed");
    assert_eq!(
        j["result"],
        json!({"t": "object", "v": {"ok": {"t": "number", "v": 1}}})
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // Start and await in one call.
    let (st, j) = call(
        url,
        "POST",
        "/v1/executions?wait=20s",
        Some(&json!({"program": "chain", "id": "one-call"})),
    );
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["id"], "one-call");
    assert_eq!(j["status"], "completed");
    // The OpenAPI document describes the new routes.
    let (_, api) = call(url, "GET", "/v1/openapi.json", None);
    for path in [
        "/v1/executions/{id}/result",
        "/v1/tasks/poll",
        "/v1/tasks/answers",
        "/v1/tasks/{id}",
        "/v1/tasks/{id}/heartbeat",
        "/v1/tasks/{id}/complete",
        "/v1/tasks/{id}/fail",
    ] {
        assert!(api["paths"][path].is_object(), "{path} in openapi.json");
    }
    assert!(api["paths"]["/v1/executions"]["post"]["responses"]["202"].is_object());
    // Unknown executions and bad durations are refused.
    assert_eq!(
        call(url, "GET", "/v1/executions/nope/result?wait=1s", None).0,
        404
    );
    assert_eq!(
        call(
            url,
            "GET",
            &format!("/v1/executions/{id}/result?wait=1h"),
            None
        )
        .0,
        400
    );
}

#[test]
fn a_result_is_awaited_without_polling_on_sqlite() {
    let db = Db::sqlite();
    let server = serve(&db.url(), db.dir(), &[]);
    long_polls(&server.url);
}

#[test]
fn the_cli_starts_and_awaits() {
    let db = Db::sqlite();
    let server = serve(&db.url(), db.dir(), &[]);
    register(&server.url, "waiter", &common::waiter());
    register(&server.url, "chain", &common::chain(2));
    let out = Command::new(IRKIT)
        .args([
            "tcc",
            "start",
            "chain",
            "--wait",
            "--format",
            "json",
            "--server",
            &server.url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["status"], "completed", "{j}");

    let id = start(&server.url, "waiter");
    let result = |wait: &str| {
        Command::new(IRKIT)
            .args([
                "tcc",
                "result",
                &id,
                "--wait",
                wait,
                "--server",
                &server.url,
            ])
            .output()
            .unwrap()
    };
    let t = Instant::now();
    let out = result("400ms");
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" suspended"),
        "{out:?}"
    );
    assert!(t.elapsed() >= Duration::from_millis(380));
    call(
        &server.url,
        "POST",
        &format!("/v1/executions/{id}/cancel"),
        None,
    );
    let out = result("20s");
    assert_eq!(out.status.code(), Some(1), "a cancelled execution exits 1");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" cancelled"),
        "{out:?}"
    );
}

/// The result of execution `id`, awaited up to 20 s (`200` asserted).
fn awaited(url: &str, id: &str) -> J {
    let (st, j) = call(
        url,
        "GET",
        &format!("/v1/executions/{id}/result?wait=20s"),
        None,
    );
    assert_eq!(st, 200, "{j}");
    j
}

/// Polls once for `patterns`.
fn poll(url: &str, patterns: &[&str], lease_ms: i64, wait: &str) -> Vec<J> {
    let (st, j) = call(
        url,
        "POST",
        "/v1/tasks/poll",
        Some(&json!({"patterns": patterns, "worker": "test", "lease_ms": lease_ms, "wait": wait})),
    );
    assert_eq!(st, 200, "{j}");
    j["tasks"].as_array().unwrap().clone()
}

/// The worker protocol: a task is handed out, its lease expires and it is
/// handed out again, the first lease's answers are refused, the second's
/// accepted; failures reach the program. `host` starts the executions,
/// `worker` is where the worker polls and answers (another node on
/// PostgreSQL).
fn worker_protocol(host: &str, worker: &str) {
    register(host, "effects", &common::effects());
    register(host, "caught", &common::caught());
    let id = start(host, "effects");
    let t = Instant::now();
    let tasks = poll(worker, &["char*"], 400, "10s");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "woken at once, {:?}",
        t.elapsed()
    );
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let first = &tasks[0];
    assert_eq!(first["key"], "charge");
    assert_eq!(first["input"], json!({"amount": 42}));
    assert_eq!(first["execution_id"], json!(id));
    assert_eq!(first["idempotency_key"], json!(format!("{id}:charge")));
    assert_eq!(first["attempt"], 1);
    let old = first["lease"].as_str().unwrap().to_string();
    let task_path = format!(
        "/v1/tasks/{}",
        first["id"].as_str().unwrap().replace(':', "%3A")
    );

    // Nobody answers: after its lease the task is handed out again.
    assert!(
        poll(worker, &["ship"], 400, "0ms").is_empty(),
        "other patterns get nothing"
    );
    let t = Instant::now();
    let again = poll(worker, &["charge"], 5000, "10s");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(again.len(), 1);
    assert_eq!(again[0]["attempt"], 2);
    let new = again[0]["lease"].as_str().unwrap().to_string();
    assert_ne!(old, new);

    // The first worker lost its lease: its heartbeat and answer are refused.
    let (st, j) = call(
        worker,
        "POST",
        &format!("{task_path}/heartbeat"),
        Some(&json!({"lease": old})),
    );
    assert_eq!(st, 409, "{j}");
    let (st, _) = call(
        worker,
        "POST",
        &format!("{task_path}/complete"),
        Some(&json!({"lease": old, "result": "stale"})),
    );
    assert_eq!(st, 409);
    let (st, j) = call(
        worker,
        "POST",
        &format!("{task_path}/heartbeat"),
        Some(&json!({"lease": new, "lease_ms": 5000})),
    );
    assert_eq!(st, 200, "{j}");
    let (st, _) = call(
        worker,
        "POST",
        &format!("{task_path}/complete"),
        Some(&json!({"lease": new, "result": {"charged": 42}})),
    );
    assert_eq!(st, 200);
    let (st, _) = call(
        worker,
        "POST",
        &format!("{task_path}/complete"),
        Some(&json!({"lease": new, "result": "twice"})),
    );
    assert_eq!(st, 409, "a task is answered once");
    // No token: answers and heartbeats run without the namespace check
    // (the lease token decides), which is made only for a refusal: a task
    // of no execution still answers 404, one of a known execution 409.
    for (path, want) in [
        ("/v1/tasks/no-such-exec%3Acharge".to_string(), 404),
        (format!("/v1/tasks/{id}%3Anever"), 409),
    ] {
        for verb in ["complete", "fail", "heartbeat"] {
            let (st, j) = call(
                worker,
                "POST",
                &format!("{path}/{verb}"),
                Some(&json!({"lease": "l-x", "message": "m"})),
            );
            assert_eq!(st, want, "{path}/{verb}: {j}");
        }
    }

    let j = awaited(worker, &id);
    assert_eq!(j["status"], "completed");
    let charged = &j["result"]["v"][0];
    assert_eq!(
        charged,
        &json!({"t": "object", "v": {"charged": {"t": "number", "v": 42}}})
    );
    let (_, task) = call(worker, "GET", &task_path, None);
    assert_eq!(task["state"], "completed");
    assert!(task.get("lease").is_none(), "the token is not shown");
    let (_, effects) = call(host, "GET", &format!("/v1/executions/{id}/effects"), None);
    let charges: Vec<&J> = effects["effects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["key"] == "charge")
        .collect();
    assert_eq!(charges.len(), 1, "journalled once: {effects}");

    // A failure is thrown into the program (which catches it here).
    let id = start(host, "caught");
    let tasks = poll(worker, &["fail.*"], 5000, "10s");
    assert_eq!(tasks.len(), 1);
    let path = format!("/v1/tasks/{}/fail", tasks[0]["id"].as_str().unwrap());
    let (st, _) = call(
        worker,
        "POST",
        &path,
        Some(&json!({"lease": tasks[0]["lease"], "message": "card declined"})),
    );
    assert_eq!(st, 200);
    let j = awaited(host, &id);
    assert_eq!(j["status"], "completed", "{j}");
    assert!(j["result"].to_string().contains("card declined"), "{j}");
    // Malformed polls are refused.
    assert_eq!(
        call(
            worker,
            "POST",
            "/v1/tasks/poll",
            Some(&json!({"patterns": []}))
        )
        .0,
        400
    );
}

/// `POST /v1/tasks/answers`: several answers in one request, each
/// accepted or refused as its single route would (a lost lease 409, an
/// unknown task 404), a malformed batch refused whole before anything is
/// stored, and the accepted answers reach their executions (on PostgreSQL
/// through another node: `host` drives, `worker` answers). Runs after
/// [`worker_protocol`], which registered the programs and answered its
/// tasks.
fn batch_answers(host: &str, worker: &str) {
    let ids = [start(host, "effects"), start(host, "effects")];
    let failing = start(host, "caught");
    let mut tasks: Vec<J> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tasks.len() < 3 {
        assert!(Instant::now() < deadline, "tasks: {tasks:?}");
        let (st, j) = call(
            worker,
            "POST",
            "/v1/tasks/poll",
            Some(
                &json!({"patterns": ["charge", "fail.*"], "lease_ms": 60000, "max": 10, "wait": "5s"}),
            ),
        );
        assert_eq!(st, 200, "{j}");
        tasks.extend(j["tasks"].as_array().unwrap().iter().cloned());
    }
    let task_of = |exec: &str| -> &J {
        tasks
            .iter()
            .find(|t| t["execution_id"] == json!(exec))
            .unwrap_or_else(|| panic!("no task of {exec}: {tasks:?}"))
    };
    let (a, b, f) = (task_of(&ids[0]), task_of(&ids[1]), task_of(&failing));
    let item = |t: &J, outcome: &str, extra: J| -> J {
        let mut j = json!({"id": t["id"], "lease": t["lease"], "outcome": outcome});
        for (k, v) in extra.as_object().unwrap() {
            j[k] = v.clone();
        }
        j
    };

    // A malformed item refuses the whole batch: nothing is stored.
    for bad in [
        json!({"answers": []}),
        json!({"answers": "no"}),
        json!({"answers": [item(a, "complete", json!({"result": 1})), {"id": b["id"], "lease": b["lease"]}]}),
        json!({"answers": [item(a, "complete", json!({"result": 1})), item(b, "fail", json!({}))]}),
        json!({"answers": [item(a, "complete", json!({"result": 1, "tagged_result": {"t": "null"}}))]}),
        json!({"answers": [{"lease": "l", "outcome": "complete"}]}),
        json!({"answers": (0..101).map(|_| item(a, "complete", json!({}))).collect::<Vec<_>>()}),
    ] {
        let (st, j) = call(worker, "POST", "/v1/tasks/answers", Some(&bad));
        assert_eq!(st, 400, "{bad}: {j}");
    }
    // More values than a request may carry (`MAX_VALUES`), in one answer or
    // across a batch's answers: 413, before a tree is built.
    let a_path = format!(
        "/v1/tasks/{}",
        a["id"].as_str().unwrap().replace(':', "%3A")
    );
    let zeros = |n: usize| J::Array(vec![json!(0); n]);
    for (path, body) in [
        (
            format!("{a_path}/complete"),
            json!({"lease": a["lease"], "result": zeros(100_001)}),
        ),
        (
            "/v1/tasks/answers".to_string(),
            json!({"answers": [
                item(a, "complete", json!({"result": zeros(60_000)})),
                item(b, "complete", json!({"result": zeros(60_000)})),
            ]}),
        ),
    ] {
        let (st, j) = call(worker, "POST", &path, Some(&body));
        assert_eq!(
            (st, &j["error"]["code"]),
            (413, &json!("payload_too_large")),
            "{path}: {j}"
        );
    }
    // A NUL, which no store keeps, is refused where it enters (issue 42,
    // F6): 400, never the database's error, on every task route.
    let nul_lease = {
        let mut i = item(a, "complete", json!({}));
        i["lease"] = json!("l\u{0}");
        i
    };
    for (method, path, body) in [
        (
            "POST",
            "/v1/tasks/a%00b/complete".to_string(),
            json!({"lease": "x", "result": 1}),
        ),
        (
            "POST",
            format!("{a_path}/fail"),
            json!({"lease": "x\u{0}", "message": "m"}),
        ),
        (
            "POST",
            "/v1/tasks/a%00/heartbeat".to_string(),
            json!({"lease": "x"}),
        ),
        ("GET", "/v1/tasks/a%00".to_string(), J::Null),
        (
            "POST",
            "/v1/tasks/answers".to_string(),
            json!({"answers": [{"id": "a\u{0}b", "lease": "x", "outcome": "complete"}]}),
        ),
        (
            "POST",
            "/v1/tasks/answers".to_string(),
            json!({"answers": [nul_lease]}),
        ),
        (
            "POST",
            "/v1/tasks/poll".to_string(),
            json!({"patterns": ["a\u{0}"], "wait": "10ms"}),
        ),
        (
            "POST",
            "/v1/tasks/poll".to_string(),
            json!({"patterns": ["a"], "worker": "w\u{0}", "wait": "10ms"}),
        ),
    ] {
        let body = (!body.is_null()).then_some(&body);
        let (st, j) = call(worker, method, &path, body);
        assert_eq!(
            (st, &j["error"]["code"]),
            (400, &json!("bad_request")),
            "{path}: {j}"
        );
        assert!(j.to_string().contains("NUL"), "{path}: {j}");
    }
    let (_, t) = call(worker, "GET", &a_path, None);
    assert_eq!(t["state"], "leased", "a refused batch stored nothing: {t}");

    let (st, j) = call(
        worker,
        "POST",
        "/v1/tasks/answers",
        Some(&json!({"answers": [
            item(a, "complete", json!({"result": {"charged": 1}})),
            item(b, "complete", json!({"tagged_result": {"t": "string", "v": "tagged"}})),
            item(f, "fail", json!({"message": "card declined\u{0}"})),
            {"id": "no-such-exec:charge", "lease": "l-x", "outcome": "complete"},
            {"id": format!("{}:never", ids[0]), "lease": "l-x", "outcome": "fail", "message": "m"},
        ]})),
    );
    assert_eq!(st, 200, "{j}");
    let replies = j["answers"].as_array().unwrap();
    let got: Vec<(J, J, J)> = replies
        .iter()
        .map(|r| (r["id"].clone(), r["accepted"].clone(), r["status"].clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (a["id"].clone(), json!(true), J::Null),
            (b["id"].clone(), json!(true), J::Null),
            (f["id"].clone(), json!(true), J::Null),
            (json!("no-such-exec:charge"), json!(false), json!(404)),
            (json!(format!("{}:never", ids[0])), json!(false), json!(409)),
        ],
        "{j}"
    );
    assert_eq!(replies[3]["error"]["code"], "not_found", "{j}");
    assert_eq!(replies[4]["error"]["code"], "conflict", "{j}");
    // A task is answered once, also twice in one batch.
    let (st, j) = call(
        worker,
        "POST",
        "/v1/tasks/answers",
        Some(&json!({"answers": [
            item(a, "complete", json!({"result": "twice"})),
            item(b, "fail", json!({"message": "late"})),
            item(b, "complete", json!({"result": "thrice"})),
        ]})),
    );
    assert_eq!(st, 200, "{j}");
    let refused: Vec<(J, J)> = j["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["accepted"].clone(), r["status"].clone()))
        .collect();
    assert_eq!(refused, vec![(json!(false), json!(409)); 3], "{j}");

    // The accepted answers reach their executions.
    for (id, want) in [
        (
            &ids[0],
            json!({"t": "object", "v": {"charged": {"t": "number", "v": 1}}}),
        ),
        (&ids[1], json!({"t": "string", "v": "tagged"})),
    ] {
        let j = awaited(host, id);
        assert_eq!(j["status"], "completed", "{j}");
        assert_eq!(j["result"]["v"][0], want, "{j}");
    }
    let j = awaited(host, &failing);
    assert!(
        j["result"].to_string().contains("card declined\u{fffd}"),
        "{j}"
    );
}

#[test]
fn workers_pull_tasks_on_sqlite() {
    let db = Db::sqlite();
    let server = serve(&db.url(), db.dir(), &[]);
    worker_protocol(&server.url, &server.url);
    batch_answers(&server.url, &server.url);
}

#[test]
fn postgres_nodes_wake_waiters_and_workers_of_other_nodes() {
    let Some(db) = Db::postgres() else {
        return;
    };
    let a = serve(&db.url(), db.dir(), &["--node-id", "node-a"]);
    // Node B drives nothing: every execution is finished by node A, every
    // task queued by node A's drive; B's long polls hear of it through
    // LISTEN/NOTIFY only (its waits are far longer than the asserted times).
    let b = serve(
        &db.url(),
        db.dir(),
        &["--node-id", "node-b", "--workers", "0"],
    );
    long_polls(&b.url);
    worker_protocol(&b.url, &b.url);
    batch_answers(&b.url, &b.url);
    drop(a);
}

#[test]
fn single_postgres_node_serves_workers() {
    let Some(db) = Db::postgres() else {
        return;
    };
    let a = serve(&db.url(), db.dir(), &[]);
    worker_protocol(&a.url, &a.url);
    batch_answers(&a.url, &a.url);
}
