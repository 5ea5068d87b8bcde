//! `irkit tcc serve` for operators, as a real process on loopback:
//! `GET /metrics` (parsed as the Prometheus text format and checked
//! against what the test did), keep-alive and HTTP/2 (cleartext), the
//! request timeout, graceful shutdown on SIGTERM (a request in flight is
//! answered, the drive in progress ends, leases are given back, exit 0),
//! and JSON logs with one span per drive and no secret in any line.

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::{Value as J, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tcc_host::store::Store;

const IRKIT: &str = env!("CARGO_BIN_EXE_irkit");

use tcc_serve::{Dir, Server, request};

/// Starts `irkit tcc serve` on a fresh port with the SQLite file `db`;
/// stderr goes to `log` when given.
fn serve(
    db: &Path,
    providers: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    log: Option<&Path>,
) -> Server {
    let dir = db.parent().unwrap();
    let p = dir.join(tcc_host::random_id("providers-"));
    std::fs::write(&p, providers).unwrap();
    let env: Vec<(&str, Option<&str>)> = env.iter().map(|(k, v)| (*k, Some(*v))).collect();
    tcc_serve::serve(&db.to_string_lossy(), &p, extra, &env, log)
}

fn http(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> (u16, Vec<u8>) {
    request(url, method, path, body, token).unwrap()
}

fn http_json(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> (u16, J) {
    let (c, b) = http(url, method, path, body, token);
    (
        c,
        serde_json::from_slice(&b)
            .unwrap_or_else(|e| panic!("non-JSON {e}: {}", String::from_utf8_lossy(&b))),
    )
}

fn wait_terminal(url: &str, id: &str, token: Option<&str>) -> J {
    let start = Instant::now();
    loop {
        let (c, j) = http_json(url, "GET", &format!("/v1/executions/{id}"), None, token);
        assert_eq!(c, 200, "{j}");
        if ["completed", "failed", "cancelled"].contains(&j["status"].as_str().unwrap_or("")) {
            return j;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "timed out: {j}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Registers `flow` and `worker` and runs `n` flows (effect, event, timer,
/// child) to completion; returns their ids.
fn run_flows(url: &str, n: usize, token: Option<&str>) -> Vec<String> {
    for (name, bytes) in [("flow", common::flow()), ("worker", common::worker())] {
        let (c, j) = http_json(
            url,
            "POST",
            &format!("/v1/artifacts?name={name}"),
            Some(&bytes),
            token,
        );
        assert_eq!(c, 201, "{j}");
    }
    let ids: Vec<String> = (0..n)
        .map(|_| {
            let (c, j) = http_json(
                url,
                "POST",
                "/v1/executions",
                Some(br#"{"program": "flow"}"#),
                token,
            );
            assert_eq!(c, 201, "{j}");
            j["id"].as_str().unwrap().to_string()
        })
        .collect();
    for id in &ids {
        let (c, _) = http_json(
            url,
            "POST",
            &format!("/v1/executions/{id}/events"),
            Some(br#"{"name": "approved", "payload": 1}"#),
            token,
        );
        assert_eq!(c, 202);
    }
    for id in &ids {
        assert_eq!(wait_terminal(url, id, token)["status"], "completed");
    }
    ids
}

/// One sample line of the text format: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the Prometheus text exposition format (version 0.0.4), checking
/// its grammar: `# HELP` / `# TYPE` lines, then samples
/// `name{label="value",...} number`. Returns the samples and each
/// metric family's type.
fn parse_prometheus(text: &str) -> (Vec<Sample>, BTreeMap<String, String>) {
    let mut samples = Vec::new();
    let mut types = BTreeMap::new();
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.chars().enumerate().all(|(i, c)| {
                c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit())
            })
    };
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut parts = rest.splitn(3, ' ');
            let kind = parts.next().unwrap();
            let name = parts
                .next()
                .unwrap_or_else(|| panic!("bad comment {line:?}"));
            assert!(name_ok(name), "{line}");
            if kind == "TYPE" {
                let t = parts.next().unwrap();
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&t),
                    "{line}"
                );
                types.insert(name.to_string(), t.to_string());
            } else {
                assert_eq!(kind, "HELP", "{line}");
            }
            continue;
        }
        let (head, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("bad sample {line:?}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        };
        let (name, labels) = match head.split_once('{') {
            None => (head, BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest
                    .strip_suffix('}')
                    .unwrap_or_else(|| panic!("unclosed labels {line:?}"));
                let mut labels = BTreeMap::new();
                let mut rest = body;
                while !rest.is_empty() {
                    let (k, after) = rest
                        .split_once("=\"")
                        .unwrap_or_else(|| panic!("bad label {line:?}"));
                    assert!(name_ok(k), "{line}");
                    // Values here never hold escaped quotes.
                    let (v, after) = after.split_once('"').unwrap();
                    labels.insert(k.to_string(), v.to_string());
                    rest = after.strip_prefix(',').unwrap_or(after);
                }
                (name, labels)
            }
        };
        assert!(name_ok(name), "{line}");
        samples.push((name.to_string(), labels, value));
    }
    (samples, types)
}

fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.2)
}

#[test]
fn metrics_are_prometheus_text_counting_what_happened() {
    let d = Dir::new("irkit-tcc-ops-");
    let s = serve(&d.0.join("m.db"), "", &[], &[], None);
    let ids = run_flows(&s.url, 3, None);
    let (c, _) = http_json(&s.url, "GET", "/v1/executions/nope", None, None);
    assert_eq!(c, 404);
    let (c, body) = http(&s.url, "GET", "/metrics", None, None);
    assert_eq!(c, 200);
    let text = String::from_utf8(body).unwrap();
    let (samples, types) = parse_prometheus(&text);
    // Every sample belongs to a declared family.
    for (name, _, _) in &samples {
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                name.strip_suffix(suffix)
                    .filter(|f| types.get(*f).map(String::as_str) == Some("histogram"))
            })
            .unwrap_or(name);
        assert!(types.contains_key(family), "{name} has no TYPE");
    }
    for (family, t) in [
        ("tcc_http_requests_total", "counter"),
        ("tcc_http_request_duration_seconds", "histogram"),
        ("tcc_drives_total", "counter"),
        ("tcc_engine_steps_total", "counter"),
        ("tcc_effects_total", "counter"),
        ("tcc_checkpoint_commit_seconds", "histogram"),
        ("tcc_group_commit_jobs", "histogram"),
        ("tcc_lease_takeovers_total", "counter"),
        ("tcc_executions", "gauge"),
        ("tcc_events_pending", "gauge"),
        ("tcc_timer_lag_seconds", "gauge"),
    ] {
        assert_eq!(types.get(family).map(String::as_str), Some(t), "{family}");
    }
    // Histograms: cumulative buckets ending in +Inf = _count.
    for family in types
        .iter()
        .filter(|(_, t)| *t == "histogram")
        .map(|(f, _)| f)
    {
        let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for (n, l, v) in samples
            .iter()
            .filter(|(n, ..)| *n == format!("{family}_bucket"))
        {
            let mut key = l.clone();
            let le = key.remove("le").unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            series.entry(format!("{key:?}")).or_default().push((le, *v));
            let _ = n;
        }
        for (key, buckets) in series {
            assert!(
                buckets
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
                "{family} {key}"
            );
            let (le, last) = *buckets.last().unwrap();
            assert!(le.is_infinite());
            let count = samples
                .iter()
                .find(|(n, l, _)| *n == format!("{family}_count") && format!("{:?}", l) == key)
                .map(|s| s.2);
            assert_eq!(count, Some(last), "{family} {key}");
        }
    }
    // What the test did: 3 flows and their 3 children, all completed.
    assert_eq!(
        value(&samples, "tcc_executions", &[("status", "completed")]),
        Some(6.0)
    );
    assert_eq!(
        value(&samples, "tcc_executions", &[("status", "suspended")]),
        Some(0.0)
    );
    assert_eq!(value(&samples, "tcc_events_pending", &[]), Some(0.0));
    assert_eq!(value(&samples, "tcc_timer_lag_seconds", &[]), Some(0.0));
    let post = [
        ("method", "POST"),
        ("route", "/v1/executions"),
        ("status", "201"),
    ];
    assert_eq!(value(&samples, "tcc_http_requests_total", &post), Some(3.0));
    let events = [
        ("method", "POST"),
        ("route", "/v1/executions/{id}/events"),
        ("status", "202"),
    ];
    assert_eq!(
        value(&samples, "tcc_http_requests_total", &events),
        Some(3.0)
    );
    let missing = [
        ("method", "GET"),
        ("route", "/v1/executions/{id}"),
        ("status", "404"),
    ];
    assert_eq!(
        value(&samples, "tcc_http_requests_total", &missing),
        Some(1.0)
    );
    // flow: one effect; worker: one effect.
    assert_eq!(
        value(&samples, "tcc_effects_total", &[("outcome", "completed")]),
        Some(6.0)
    );
    assert!(value(&samples, "tcc_engine_steps_total", &[]).unwrap() > 0.0);
    assert!(value(&samples, "tcc_drives_total", &[("outcome", "finished")]).unwrap() >= 6.0);
    assert!(value(&samples, "tcc_checkpoint_commit_seconds_count", &[]).unwrap() >= 6.0);
    assert!(
        value(
            &samples,
            "tcc_group_commit_jobs_count",
            &[("backend", "sqlite")]
        )
        .unwrap()
            > 0.0
    );
    assert_eq!(ids.len(), 3);
}

/// Sends raw bytes and reads until `done` says the answer is complete (or
/// 5 s pass).
fn raw_exchange(s: &mut TcpStream, send: &[u8], done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    s.write_all(send).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !done(&got) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn keep_alive_http2_and_the_request_timeout() {
    let d = Dir::new("irkit-tcc-ops-");
    let s = serve(
        &d.0.join("k.db"),
        "",
        &["--request-timeout-ms", "400"],
        &[],
        None,
    );
    // HTTP/1.1 keep-alive: two requests on one connection, both answered.
    let mut c = TcpStream::connect(&s.addr).unwrap();
    let req = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let mut two = req.to_vec();
    two.extend_from_slice(req);
    let got = raw_exchange(&mut c, &two, |g| count(g, b"{\"status\":\"ok\"}") == 2);
    assert_eq!(
        count(&got, b"HTTP/1.1 200 OK"),
        2,
        "{}",
        String::from_utf8_lossy(&got)
    );
    // HTTP/2 with prior knowledge: the connection preface and an empty
    // SETTINGS frame are answered with the server's SETTINGS frame.
    let mut h2 = TcpStream::connect(&s.addr).unwrap();
    let mut preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    preface.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    let got = raw_exchange(&mut h2, &preface, |g| g.len() >= 9);
    assert!(got.len() >= 9, "{got:?}");
    assert_eq!(
        (got[3], &got[5..9]),
        (4, &[0u8, 0, 0, 0][..]),
        "SETTINGS on stream 0"
    );
    // Ids with reserved characters round-trip through percent-encoding;
    // a path that does not decode to UTF-8 is a JSON bad_request.
    let (c, _) = http_json(
        &s.url,
        "POST",
        "/v1/artifacts?name=waiter",
        Some(&common::waiter()),
        None,
    );
    assert_eq!(c, 201);
    let id = "odd id?with+%sign#é";
    let body = json!({"program": "waiter", "id": id}).to_string();
    let (c, j) = http_json(
        &s.url,
        "POST",
        "/v1/executions",
        Some(body.as_bytes()),
        None,
    );
    assert_eq!((c, j["id"].as_str()), (201, Some(id)));
    let path = format!("/v1/executions/{}", tcc_host::service::percent_encode(id));
    let (c, j) = http_json(&s.url, "GET", &path, None, None);
    assert_eq!((c, j["id"].as_str()), (200, Some(id)));
    let (c, j) = http_json(&s.url, "GET", "/v1/executions/%FF%FE", None, None);
    assert_eq!((c, j["error"]["code"].as_str()), (400, Some("bad_request")));
    let (c, j) = http_json(&s.url, "DELETE", "/v1/programs", None, None);
    assert_eq!((c, j["error"]["code"].as_str()), (404, Some("not_found")));
    // A body that never finishes arriving: answered 503 timeout after
    // the request timeout (400 ms here).
    let mut slow = TcpStream::connect(&s.addr).unwrap();
    let start = Instant::now();
    let got = raw_exchange(
        &mut slow,
        b"POST /v1/executions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"program\"",
        |g| count(g, b"}}") > 0,
    );
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("\"code\":\"timeout\""), "{text}");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[test]
fn sigterm_answers_the_request_in_flight_ends_the_drive_releases_leases_and_exits_zero() {
    let d = Dir::new("irkit-tcc-ops-");
    let db = d.0.join("g.db");
    // Each effect takes 700 ms: the drive of `effects` (two effects) is in
    // progress when SIGTERM comes.
    let mut s = serve(
        &db,
        "[[route]]\npattern = \"*\"\nprovider = \"echo\"\ndelay_ms = 700\n",
        &[],
        &[],
        None,
    );
    let (c, j) = http_json(
        &s.url,
        "POST",
        "/v1/artifacts?name=effects",
        Some(&common::effects()),
        None,
    );
    assert_eq!(c, 201, "{j}");
    let (c, _) = http_json(
        &s.url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "effects", "id": "slow"}"#),
        None,
    );
    assert_eq!(c, 201);
    // A request in flight: its head and half its body sent.
    let body = br#"{"program": "effects", "id": "late"}"#;
    let mut inflight = TcpStream::connect(&s.addr).unwrap();
    write!(
        inflight,
        "POST /v1/executions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    inflight.write_all(&body[..10]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let st = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    std::thread::sleep(Duration::from_millis(200));
    // The rest of the body: the request is still answered.
    let got = raw_exchange(&mut inflight, &body[10..], |g| count(g, b"\"id\"") > 0);
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 201"), "{text}");
    let status = s.wait_exit();
    assert_eq!(status.code(), Some(0), "{status:?}");
    // During a drain, a second SIGTERM ends the process at once.
    let mut s2 = serve(
        &d.0.join("g2.db"),
        "[[route]]\npattern = \"*\"\nprovider = \"echo\"\ndelay_ms = 5000\n",
        &[],
        &[],
        None,
    );
    let (c, _) = http_json(
        &s2.url,
        "POST",
        "/v1/artifacts?name=effects",
        Some(&common::effects()),
        None,
    );
    assert_eq!(c, 201);
    let (c, _) = http_json(
        &s2.url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "effects"}"#),
        None,
    );
    assert_eq!(c, 201);
    std::thread::sleep(Duration::from_millis(300));
    let pid = s2.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let status = s2.terminate();
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "waited for the 5 s effect"
    );
    // The drive in progress finished (workers end their current drive), and
    // no lease is left behind.
    let store = tcc_host::store::sqlite::SqliteStore::open(&db).unwrap();
    let slow = store.get_execution("slow").unwrap().unwrap();
    assert_eq!(slow.status, "completed", "{slow:?}");
    for id in ["slow", "late"] {
        let row = store.get_execution(id).unwrap().unwrap();
        assert_eq!(
            (row.owner.as_deref(), row.lease_until),
            (None, 0),
            "{row:?}"
        );
    }
}

#[test]
fn json_logs_have_a_span_per_drive_and_no_secrets() {
    let d = Dir::new("irkit-tcc-ops-");
    let log = d.0.join("serve.log");
    let token = "tok-SECRET-5f3a9";
    let mut s = serve(
        &d.0.join("l.db"),
        "",
        &["--token", token, "--log-format", "json"],
        &[("RUST_LOG", "trace")],
        Some(&log),
    );
    let ids = run_flows(&s.url, 2, Some(token));
    let (c, _) = http(
        &s.url,
        "GET",
        "/v1/executions",
        None,
        Some("wrong-SECRET-guess"),
    );
    assert_eq!(c, 401);
    assert_eq!(s.terminate().code(), Some(0));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<J> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() > 10, "{text}");
    for l in text.lines() {
        assert!(!l.contains("SECRET"), "secret in a log line: {l}");
    }
    // One `drive` span per drive: the "drive ended" event carries it with
    // the execution id, the revision it resumed from and the outcome.
    let drives: Vec<&J> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "drive ended")
        .collect();
    for id in &ids {
        let mine: Vec<&&J> = drives
            .iter()
            .filter(|l| l["span"]["execution_id"] == json!(id))
            .collect();
        assert!(!mine.is_empty(), "no drive span for {id}");
        assert!(
            mine.iter()
                .all(|l| l["span"]["name"] == "drive" && l["span"]["revision"].is_u64())
        );
        assert!(
            mine.iter().any(|l| l["span"]["outcome"] == "finished"),
            "{mine:?}"
        );
    }
    assert!(lines.iter().any(|l| l["fields"]["message"] == "request"));
    assert!(lines.iter().any(|l| l["fields"]["message"] == "shut down"));
    // A database password never shows, whatever the log level.
    let o = Command::new(IRKIT)
        .args([
            "tcc",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--database",
            "postgres://irkit:pw-SECRET-77@127.0.0.1:1/db?connect_timeout=1",
        ])
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(!err.contains("SECRET"), "{err}");
    // An unknown log format is a usage error.
    let o = Command::new(IRKIT)
        .args(["tcc", "serve", "--log-format", "xml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_drive_cut_off_by_a_crash_is_counted_as_a_takeover_when_resumed() {
    let d = Dir::new("irkit-tcc-ops-");
    let db = d.0.join("t.db");
    // The first server dies (abort, as SIGKILL) right after the first
    // checkpoint of `effects`, in the middle of its drive.
    let mut s = serve(
        &db,
        "",
        &[],
        &[("TCC_CRASH_AT", "after_persist_checkpoint")],
        None,
    );
    let (c, _) = http_json(
        &s.url,
        "POST",
        "/v1/artifacts?name=effects",
        Some(&common::effects()),
        None,
    );
    assert_eq!(c, 201);
    let body = br#"{"program": "effects", "id": "cut"}"#;
    let _ = tcc_host::http::request(
        "POST",
        &format!("{}/v1/executions", s.url),
        &[("Content-Type", "application/json")],
        Some(body),
        Duration::from_secs(10),
    );
    let start = Instant::now();
    while s.child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the crash hook did not fire"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let s2 = serve(&db, "", &[], &[], None);
    assert_eq!(wait_terminal(&s2.url, "cut", None)["status"], "completed");
    let (_, body) = http(&s2.url, "GET", "/metrics", None, None);
    let (samples, _) = parse_prometheus(&String::from_utf8(body).unwrap());
    assert_eq!(
        value(
            &samples,
            "tcc_lease_takeovers_total",
            &[("kind", "resumed")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, "tcc_lease_takeovers_total", &[("kind", "lost")]),
        Some(0.0)
    );
}
