//! Namespaces (issue 35), against real `irkit tcc serve` processes with a
//! `--tokens-file`: data created in namespace `acme` by acme's token is
//! invisible and untouchable with globex's token through every route of
//! the service's route table (`tcc_host::namespace::routes::RULES`, which
//! the guard refuses to serve a route without), on SQLite and on
//! PostgreSQL with two nodes (created on one, probed on the other). The
//! status document and listings name the namespace, `GET /v1/namespaces`
//! answers each token what it may name, and the served OpenAPI documents
//! the namespace header and query on exactly the routes that take them.

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::path::Path;
use std::time::Duration;
use tcc_host::namespace::routes::{RULES, Rule};
use tcc_serve::{Dir, Server};

const ACME: &str = "tok-acme";
const GLOBEX: &str = "tok-globex";
const OPERATOR: &str = "tok-operator";
const BOTH: &str = "tok-both";

/// One request with a token and optionally a `TCC-Namespace` header.
fn call(
    url: &str,
    token: &str,
    ns: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&J>,
) -> (u16, J) {
    let auth = format!("Bearer {token}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Authorization", auth.as_str()),
    ];
    if let Some(n) = ns {
        headers.push(("TCC-Namespace", n));
    }
    let text = body.map(|b| b.to_string());
    let r = tcc_host::http::request(
        method,
        &format!("{url}{path}"),
        &headers,
        text.as_deref().map(str::as_bytes),
        Duration::from_secs(20),
    )
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    let j = serde_json::from_slice(&r.body)
        .unwrap_or_else(|_| J::String(String::from_utf8_lossy(&r.body).into_owned()));
    (r.status, j)
}

fn register(url: &str, token: &str, name: &str, artifact: &[u8]) -> (u16, J) {
    let auth = format!("Bearer {token}");
    let r = tcc_host::http::request(
        "POST",
        &format!("{url}/v1/artifacts?name={name}"),
        &[
            ("Content-Type", "application/json"),
            ("Authorization", auth.as_str()),
        ],
        Some(artifact),
        Duration::from_secs(10),
    )
    .unwrap();
    (r.status, serde_json::from_slice(&r.body).unwrap_or(J::Null))
}

/// A program of one effect `charge` (routed to workers).
fn charge() -> Vec<u8> {
    common::artifact(&[(
        "run",
        0,
        0,
        json!([{"op": "LoadConst", "value": {"t": "string", "v": "charge"}}, {"op": "Effect"}, {"op": "Return"}]),
    )])
}

fn serve(database: &str, dir: &Path) -> Server {
    let providers = dir.join("providers.toml");
    std::fs::write(
        &providers,
        "[[route]]\npattern = \"charge\"\nprovider = \"worker\"\n\n[[route]]\npattern = \"*\"\nprovider = \"echo\"\n",
    )
    .unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(
        &tokens,
        format!("# test tenants\nacme {ACME}\nglobex {GLOBEX}\n* {OPERATOR}\nacme,globex {BOTH}\n"),
    )
    .unwrap();
    let tokens = tokens.to_string_lossy().into_owned();
    tcc_serve::serve(database, &providers, &["--tokens-file", &tokens], &[], None)
}

/// Creates each tenant's data on `url`: programs, a waiting execution, a
/// schedule, and (acme) an execution waiting on a worker task.
fn populate(url: &str) -> String {
    for (token, prefix) in [(ACME, "acme"), (GLOBEX, "globex")] {
        let (st, j) = register(url, token, &format!("{prefix}-wait"), &common::waiter());
        assert_eq!(st, 201, "{j}");
        let (st, j) = register(url, token, &format!("{prefix}-charge"), &charge());
        assert_eq!(st, 201, "{j}");
        let (st, j) = call(
            url,
            token,
            None,
            "POST",
            "/v1/executions",
            Some(&json!({"program": format!("{prefix}-wait"), "id": format!("{prefix}-exec")})),
        );
        assert_eq!(st, 201, "{j}");
        let (st, j) = call(
            url,
            token,
            None,
            "POST",
            "/v1/schedules",
            Some(
                &json!({"name": format!("{prefix}-sched"), "program": format!("{prefix}-wait"), "every": "1h"}),
            ),
        );
        assert_eq!(st, 201, "{j}");
    }
    // Each namespace's flow limit (set by the operator naming it).
    for prefix in ["acme", "globex"] {
        let (st, j) = call(
            url,
            OPERATOR,
            Some(prefix),
            "PUT",
            &format!("/v1/limits/program:{prefix}-wait"),
            Some(&json!({"max_concurrent": 50})),
        );
        assert_eq!(st, 200, "{j}");
        assert_eq!(j["namespace"], prefix, "{j}");
    }
    let (st, j) = call(
        url,
        ACME,
        None,
        "POST",
        "/v1/executions",
        Some(&json!({"program": "acme-charge", "id": "acme-pay"})),
    );
    assert_eq!(st, 201, "{j}");
    // The task is queued once the execution ran to its effect.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (st, j) = call(
            url,
            OPERATOR,
            None,
            "GET",
            "/v1/tasks/acme-pay:charge",
            None,
        );
        if st == 200 {
            assert_eq!(j["state"], "queued", "{j}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no task: {st} {j}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // globex's worker polls first: it gets none of acme's tasks.
    let (st, j) = call(
        url,
        GLOBEX,
        None,
        "POST",
        "/v1/tasks/poll",
        Some(&json!({"patterns": ["*"], "wait": "300ms", "max": 10})),
    );
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["tasks"], json!([]), "globex polled acme's task: {j}");
    let (st, j) = call(
        url,
        ACME,
        None,
        "POST",
        "/v1/tasks/poll",
        Some(&json!({"patterns": ["*"], "wait": "5s", "lease_ms": 600000})),
    );
    assert_eq!(st, 200, "{j}");
    j["tasks"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("acme's task: {j}"))
        .to_string()
}

/// The path of a route template with its parameter.
fn fill(template: &str, value: &str) -> String {
    let encoded = tcc_host::service::percent_encode(value);
    template
        .split('/')
        .map(|seg| {
            if seg.starts_with('{') {
                encoded.as_str()
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A body that the route would accept in shape.
fn body_for(method: &str, template: &str) -> Option<J> {
    match (method, template) {
        ("POST", t) if t.ends_with("/events") => Some(json!({"name": "never", "payload": 1})),
        ("POST", t) if t.starts_with("/v1/tasks/{id}") => {
            Some(json!({"lease": "l-x", "message": "m", "result": 1}))
        }
        ("PUT", _) => Some(json!({"max_concurrent": 1})),
        ("POST", _) => Some(json!({})),
        _ => None,
    }
}

/// Every route with globex's token against acme's rows: each answers as
/// for an unknown row, or refuses, and lists nothing of acme's.
fn sweep(url: &str, task: &str) {
    let mut tried = 0;
    for &(method, template, rule) in RULES {
        let target = match rule {
            Rule::Public | Rule::Artifact => continue,
            Rule::Execution => Some(("acme-exec", "no-such-exec")),
            Rule::Task => Some((task, "no-such-exec:charge")),
            Rule::Schedule => Some(("acme-sched", "no-such-sched")),
            Rule::Program => Some(("acme-wait", "no-such-program")),
            Rule::Operator | Rule::Scoped | Rule::Token => None,
        };
        let body = body_for(method, template);
        tried += 1;
        match (rule, target) {
            (_, Some((theirs, unknown))) => {
                let (st, j) = call(
                    url,
                    GLOBEX,
                    None,
                    method,
                    &fill(template, theirs),
                    body.as_ref(),
                );
                let (ust, uj) = call(
                    url,
                    GLOBEX,
                    None,
                    method,
                    &fill(template, unknown),
                    body.as_ref(),
                );
                assert_eq!(st, 404, "{method} {template}: {j}");
                assert_eq!(ust, 404, "{method} {template} (unknown): {uj}");
                let as_unknown = uj.to_string().replace(unknown, theirs);
                assert_eq!(
                    j.to_string(),
                    as_unknown,
                    "{method} {template}: answers differ"
                );
                // Naming acme with globex's token is refused.
                let (st, j) = call(
                    url,
                    GLOBEX,
                    Some("acme"),
                    method,
                    &fill(template, theirs),
                    body.as_ref(),
                );
                assert_eq!(st, 403, "{method} {template} as acme: {j}");
                assert_eq!(j["error"]["code"], "namespace_forbidden");
            }
            (Rule::Operator, None) => {
                let path = fill(template, "program:acme-wait");
                let (st, j) = call(url, GLOBEX, None, method, &path, body.as_ref());
                assert_eq!(st, 403, "{method} {template}: {j}");
                assert_eq!(j["error"]["code"], "namespace_forbidden", "{j}");
                if method == "GET" {
                    let (st, j) = call(url, OPERATOR, None, method, &path, None);
                    assert!(
                        st == 200 || st == 404,
                        "{method} {template} as operator: {st} {j}"
                    );
                }
            }
            (_, None) => {
                let (st, j) = match (method, template) {
                    ("POST", "/v1/executions") => call(
                        url,
                        GLOBEX,
                        None,
                        method,
                        template,
                        Some(&json!({"program": "acme-wait"})),
                    ),
                    ("POST", "/v1/schedules") => call(
                        url,
                        GLOBEX,
                        None,
                        method,
                        template,
                        Some(&json!({"name": "g2", "program": "acme-wait", "every": "1h"})),
                    ),
                    ("POST", "/v1/artifacts") => {
                        register(url, GLOBEX, "acme-wait", &common::waiter())
                    }
                    ("POST", "/v1/tasks/poll") => call(
                        url,
                        GLOBEX,
                        None,
                        method,
                        template,
                        Some(&json!({"patterns": ["*"], "wait": "100ms", "max": 100})),
                    ),
                    ("POST", "/v1/tasks/answers") => {
                        // acme's task answered with globex's token: refused
                        // as an unknown task, item by item.
                        let (st, j) = call(
                            url,
                            GLOBEX,
                            None,
                            method,
                            template,
                            Some(&json!({"answers": [
                                {"id": task, "lease": "l-x", "outcome": "complete", "result": 1},
                                {"id": task, "lease": "l-x", "outcome": "fail", "message": "m"},
                            ]})),
                        );
                        for r in j["answers"].as_array().unwrap_or(&Vec::new()) {
                            assert_eq!(
                                (r["accepted"].clone(), r["status"].clone()),
                                (json!(false), json!(404)),
                                "{method} {template}: {j}"
                            );
                        }
                        assert_eq!(j["answers"].as_array().map(Vec::len), Some(2), "{j}");
                        (st, j)
                    }
                    ("GET", "/v1/limits/{scope}") => {
                        // acme's limit is not globex's to read: as unknown.
                        let (st, j) = call(
                            url,
                            GLOBEX,
                            None,
                            method,
                            &fill(template, "program:acme-wait"),
                            None,
                        );
                        assert_eq!(st, 404, "{method} {template}: {j}");
                        call(
                            url,
                            GLOBEX,
                            None,
                            method,
                            &fill(template, "program:globex-wait"),
                            None,
                        )
                    }
                    _ => call(url, GLOBEX, None, method, template, body.as_ref()),
                };
                match (method, template) {
                    ("POST", "/v1/executions") | ("POST", "/v1/schedules") => {
                        assert_eq!(st, 404, "{method} {template}: {j}");
                        assert_eq!(j["error"]["code"], "unknown_program", "{j}");
                    }
                    ("POST", "/v1/artifacts") => {
                        // Program names are global keys: taken, nothing more.
                        assert_eq!(st, 409, "{j}");
                        assert!(!j.to_string().contains("acme-exec"), "{j}");
                    }
                    _ => assert_eq!(st, 200, "{method} {template}: {j}"),
                }
                let text = j.to_string();
                if method == "GET" || template == "/v1/tasks/poll" {
                    assert!(
                        !text.contains("acme"),
                        "{method} {template} shows acme's data: {text}"
                    );
                }
                if method == "GET" {
                    assert!(
                        text.contains("globex"),
                        "{method} {template} hides globex's own: {text}"
                    );
                }
            }
        }
    }
    assert!(tried >= 30, "{tried} routes tried");
}

/// acme's rows are as populated: nothing was changed by the sweep.
fn acme_untouched(url: &str, task: &str) {
    let (st, j) = call(url, ACME, None, "GET", "/v1/executions/acme-exec", None);
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["status"], "suspended", "{j}");
    assert!(j.get("paused").is_none_or(|p| p == false), "{j}");
    let (st, j) = call(
        url,
        ACME,
        None,
        "GET",
        "/v1/executions/acme-exec/history",
        None,
    );
    assert_eq!(st, 200);
    assert!(
        !j.to_string().contains("event_received") && !j.to_string().contains("cancel"),
        "{j}"
    );
    let (st, j) = call(url, ACME, None, "GET", "/v1/schedules/acme-sched", None);
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["paused"], false, "{j}");
    // acme's flow limit, as the operator set it; acme's token reads only it.
    let (st, j) = call(url, ACME, None, "GET", "/v1/limits/program:acme-wait", None);
    assert_eq!(st, 200, "{j}");
    assert_eq!(
        (&j["namespace"], &j["max_concurrent"]),
        (&json!("acme"), &json!(50)),
        "{j}"
    );
    let (st, j) = call(url, ACME, None, "GET", "/v1/limits", None);
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["limits"].as_array().map(Vec::len), Some(1), "{j}");
    // A tenant reads its limits but does not lift them.
    let (st, j) = call(
        url,
        ACME,
        None,
        "DELETE",
        "/v1/limits/program:acme-wait",
        None,
    );
    assert_eq!(st, 403, "{j}");
    let (st, j) = call(
        url,
        ACME,
        None,
        "GET",
        &format!("/v1/tasks/{}", tcc_host::service::percent_encode(task)),
        None,
    );
    assert_eq!(st, 200, "{j}");
    assert_eq!(j["state"], "leased", "{j}");
    let (_, j) = call(url, ACME, None, "GET", "/v1/programs", None);
    assert_eq!(j["paused_programs"], json!([]), "{j}");
    let names: Vec<&str> = j["programs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["acme-charge", "acme-wait"]);
    // A token of both names its namespace; without, it must choose.
    let (st, j) = call(url, BOTH, None, "GET", "/v1/executions", None);
    assert_eq!(st, 400, "{j}");
    assert_eq!(j["error"]["code"], "namespace_required");
    let (st, j) = call(
        url,
        BOTH,
        Some("acme"),
        "GET",
        "/v1/executions/acme-exec",
        None,
    );
    assert_eq!(st, 200, "{j}");
    let (st, _) = call(
        url,
        BOTH,
        None,
        "GET",
        "/v1/executions/acme-exec?namespace=globex",
        None,
    );
    assert_eq!(st, 404);
    // The operator's token reads across namespaces, or in one it names.
    let (st, j) = call(url, OPERATOR, None, "GET", "/v1/executions", None);
    assert_eq!(st, 200);
    assert!(
        j.to_string().contains("acme-exec") && j.to_string().contains("globex-exec"),
        "{j}"
    );
    let (_, j) = call(url, OPERATOR, Some("globex"), "GET", "/v1/executions", None);
    assert!(!j.to_string().contains("acme-exec"), "{j}");
    let (st, _) = call(url, OPERATOR, None, "GET", "/metrics", None);
    assert_eq!(st, 200);
    // The status document names the namespace; the listing's rows too.
    let (_, j) = call(url, OPERATOR, None, "GET", "/v1/executions/acme-exec", None);
    assert_eq!(j["namespace"], "acme", "{j}");
    let (_, j) = call(url, GLOBEX, None, "GET", "/v1/executions", None);
    let spaces: Vec<&J> = j["executions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["namespace"])
        .collect();
    assert!(
        !spaces.is_empty() && spaces.iter().all(|n| *n == "globex"),
        "{j}"
    );
    // The namespaces each token may name (the dashboard's picker).
    for (token, names, every) in [
        (ACME, json!(["acme"]), false),
        (BOTH, json!(["acme", "globex"]), false),
        (OPERATOR, json!(["acme", "default", "globex"]), true),
    ] {
        let (st, j) = call(url, token, None, "GET", "/v1/namespaces", None);
        assert_eq!(st, 200, "{j}");
        assert_eq!(j, json!({"namespaces": names, "every": every}), "{token}");
    }
    let (st, _) = call(url, "wrong", None, "GET", "/v1/namespaces", None);
    assert_eq!(st, 401);
}

/// The served OpenAPI description documents the namespace (header
/// `TCC-Namespace` and query `namespace`) on every route of the rule table
/// that takes one (all but the public routes and `/v1/namespaces`), and the
/// status document's `namespace`.
fn openapi_documents_namespaces(url: &str) {
    let (st, api) = call(url, OPERATOR, None, "GET", "/v1/openapi.json", None);
    assert_eq!(st, 200);
    let params = &api["components"]["parameters"];
    assert_eq!(params["NamespaceHeader"]["name"], "TCC-Namespace");
    assert_eq!(params["NamespaceHeader"]["in"], "header");
    assert_eq!(params["NamespaceQuery"]["name"], "namespace");
    assert_eq!(params["NamespaceQuery"]["in"], "query");
    let mut checked = 0;
    for &(method, template, rule) in RULES {
        if !template.starts_with("/v1/") && template != "/metrics" {
            continue;
        }
        let op = &api["paths"][template][method.to_lowercase()];
        assert!(op.is_object(), "{method} {template} is not in openapi.json");
        let refs: Vec<&str> = op["parameters"]
            .as_array()
            .map(|ps| ps.iter().filter_map(|p| p["$ref"].as_str()).collect())
            .unwrap_or_default();
        let takes = !matches!(rule, Rule::Public | Rule::Token);
        for name in ["NamespaceHeader", "NamespaceQuery"] {
            let documented = refs.contains(&format!("#/components/parameters/{name}").as_str());
            assert_eq!(documented, takes, "{method} {template}: {name}");
        }
        checked += 1;
    }
    assert!(checked >= 35, "{checked} routes checked");
    let execution = &api["components"]["schemas"]["Execution"];
    assert_eq!(execution["properties"]["namespace"]["type"], "string");
}

#[test]
fn a_token_never_sees_or_touches_another_namespace_on_sqlite() {
    let dir = Dir::new("ns-");
    let db = dir.0.join("host.db").to_string_lossy().into_owned();
    let mut node = serve(&db, &dir.0);
    let task = populate(&node.url);
    sweep(&node.url, &task);
    acme_untouched(&node.url, &task);
    openapi_documents_namespaces(&node.url);
    node.terminate();
}

#[test]
fn a_token_never_sees_or_touches_another_namespace_on_postgres_with_two_nodes() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_namespaces").unwrap()
    else {
        return;
    };
    let dir = Dir::new("ns-pg-");
    let mut a = serve(&schema.url(), &dir.0);
    let mut b = serve(&schema.url(), &dir.0);
    let task = populate(&a.url);
    sweep(&b.url, &task);
    acme_untouched(&b.url, &task);
    acme_untouched(&a.url, &task);
    a.terminate();
    b.terminate();
}
