//! Issue 42: one program must never take down a node, and a web page must
//! never drive it. One test per finding, each reproducing it as the probe
//! did (in process, on loopback), over SQLite and PostgreSQL where the
//! store matters.

use serde_json::json;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers};
use tcc_host::service::{Service, ServiceConfig};
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::{ExecutionRow, Store};
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sqlite,
    Postgres,
}

/// Where a test's data lives; removed on drop.
enum Db {
    Sqlite(std::path::PathBuf),
    Pg(ScratchSchema),
}

impl Db {
    fn new(kind: Kind) -> Option<Db> {
        match kind {
            Kind::Sqlite => {
                let path = std::env::temp_dir().join(tcc_host::random_id("tcc-harden-"));
                std::fs::create_dir_all(&path).unwrap();
                Some(Db::Sqlite(path))
            }
            Kind::Postgres => ScratchSchema::create("t_harden").unwrap().map(Db::Pg),
        }
    }

    fn open(&self) -> Arc<dyn Store> {
        match self {
            Db::Sqlite(d) => Arc::new(SqliteStore::open(&d.join("t.db")).unwrap()),
            Db::Pg(s) => Arc::new(PgStore::open(&s.url()).unwrap()),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Db::Sqlite(d) = self {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Runs a test once per backend (PostgreSQL skipped when unreachable,
/// unless `IRKIT_REQUIRE_POSTGRES=1`).
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::Kind::Sqlite)
            }
            #[test]
            fn postgres() {
                super::$name(super::Kind::Postgres)
            }
        })*
    };
}

on_both!(
    f1_python_equality_of_values_nested_100000_deep_completes,
    a_drive_that_keeps_panicking_is_quarantined_not_retried_forever,
    f6_a_nul_in_an_effect_key_fails_the_execution_once_without_calling_the_provider,
    f6_nul_at_the_api_is_a_bad_request,
    f7_idempotency_keys_of_two_executions_never_collide,
);

#[path = "common/programs.rs"]
mod programs;
use programs::{nested_equal, one_effect};

/// Counts provider calls and their idempotency keys; panics on key `boom`.
#[derive(Default)]
struct Recording {
    keys: std::sync::Mutex<Vec<String>>,
    panics: AtomicUsize,
}

impl EffectProvider for Recording {
    fn call(&self, c: &EffectCall<'_>) -> ProviderOutcome {
        self.keys
            .lock()
            .unwrap()
            .push(c.idempotency_key.to_string());
        if c.key == "boom" {
            self.panics.fetch_add(1, Ordering::SeqCst);
            panic!("provider exploded");
        }
        ProviderOutcome::Result(json!({"t": "string", "v": c.idempotency_key}))
    }
}

fn host_on(store: Arc<dyn Store>, cfg: HostConfig) -> (Arc<Host>, Arc<Recording>) {
    let rec = Arc::new(Recording::default());
    let providers = Providers::with_routes(vec![("*".into(), rec.clone() as _)]);
    (Host::new(store, providers, cfg), rec)
}

fn run_until_done(host: &Arc<Host>, ids: &[&str]) -> Vec<ExecutionRow> {
    let threads = host.spawn();
    let rows = ids
        .iter()
        .map(|id| host.wait_for(id, Duration::from_secs(30), false).unwrap())
        .collect();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    rows
}

fn f1_python_equality_of_values_nested_100000_deep_completes(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let (host, _) = host_on(db.open(), HostConfig::default());
    host.register(&nested_equal(100_000.0), Some("deep"))
        .unwrap();
    let id = host.start("deep", vec![], None).unwrap();
    let row = &run_until_done(&host, &[&id])[0];
    assert_eq!(row.status, "completed", "{row:?}");
    assert_eq!(
        row.result.as_ref().map(|r| r.to_json().unwrap()),
        Some(json!({"t": "bool", "v": true}))
    );
}

fn a_drive_that_keeps_panicking_is_quarantined_not_retried_forever(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let cfg = HostConfig {
        max_drive_attempts: 3,
        retry_backoff_ms: 20,
        max_retry_backoff_ms: 200,
        poll_ms: 10,
        ..HostConfig::default()
    };
    let (host, rec) = host_on(db.open(), cfg);
    host.register(&one_effect("boom"), Some("boom")).unwrap();
    host.register(&one_effect("fine"), Some("fine")).unwrap();
    let bad = host.start("boom", vec![], None).unwrap();
    let good = host.start("fine", vec![], None).unwrap();
    let started = std::time::Instant::now();
    let rows = run_until_done(&host, &[&bad, &good]);
    // Three drives panicked (with growing delays between them); the fourth
    // claim quarantined the execution instead of driving it.
    assert_eq!(rows[0].status, "failed", "{:?}", rows[0]);
    let error = rows[0].error.clone().unwrap_or_default();
    assert!(error.contains("quarantined"), "{error}");
    assert!(
        error.contains("the drive panicked: provider exploded"),
        "{error}"
    );
    assert_eq!(rec.panics.load(Ordering::SeqCst), 3);
    assert!(
        started.elapsed() >= Duration::from_millis(20 + 40),
        "no backoff"
    );
    // The workers survived the panics: the other execution completed.
    assert_eq!(rows[1].status, "completed", "{:?}", rows[1]);
    // A quarantined execution is not taken up again, by this host or another.
    let (again, rec2) = host_on(db.open(), HostConfig::default());
    let threads = again.spawn();
    std::thread::sleep(Duration::from_millis(200));
    again.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(rec2.panics.load(Ordering::SeqCst), 0);
}

fn f6_a_nul_in_an_effect_key_fails_the_execution_once_without_calling_the_provider(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let (host, rec) = host_on(db.open(), HostConfig::default());
    host.register(&one_effect("k\u{0}ey"), Some("nul")).unwrap();
    let id = host.start("nul", vec![], None).unwrap();
    let row = &run_until_done(&host, &[&id])[0];
    assert_eq!(row.status, "failed", "{row:?}");
    let error = row.error.clone().unwrap_or_default();
    assert!(error.contains("NUL"), "{error}");
    assert!(
        rec.keys.lock().unwrap().is_empty(),
        "the provider was called"
    );
}

/// A raw HTTP/1.1 exchange (any header, any method), answered with
/// `Connection: close`: (status, body).
fn raw(addr: std::net::SocketAddr, head: &str, body: &[u8]) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = format!(
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn service(store: Arc<dyn Store>, cfg: ServiceConfig) -> (Service, Arc<Host>) {
    let (host, _) = host_on(store, HostConfig::default());
    let s = Service::start("127.0.0.1:0", host.clone(), cfg).unwrap();
    (s, host)
}

fn f6_nul_at_the_api_is_a_bad_request(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let (svc, host) = service(db.open(), ServiceConfig::default());
    host.register(&one_effect("k"), Some("p")).unwrap();
    let id = host.start("p", vec![], Some("e1".into())).unwrap();
    let a = svc.addr();
    let get = |path: &str| raw(a, &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1"), b"");
    let post = |path: &str, body: &str| {
        raw(
            a,
            &format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"),
            body.as_bytes(),
        )
    };
    for path in [
        "/v1/executions/%00",
        "/v1/executions/a%00b/history",
        "/v1/executions/%00/effects",
        "/v1/artifacts/%00",
        "/v1/executions?status=%00",
    ] {
        let (status, body) = get(path);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains("NUL"), "{path}: {body}");
    }
    for (path, body) in [
        (
            format!("/v1/executions/{id}/events"),
            r#"{"name": "a\u0000b"}"#.to_string(),
        ),
        (
            "/v1/executions".to_string(),
            r#"{"program": "p\u0000"}"#.to_string(),
        ),
        (
            "/v1/executions".to_string(),
            r#"{"program": "p", "id": "x\u0000"}"#.to_string(),
        ),
        ("/v1/executions/%00/cancel".to_string(), "{}".to_string()),
    ] {
        let (status, answer) = post(&path, &body);
        assert_eq!(status, 400, "{path} {body}: {answer}");
    }
    // Payload strings are JSON text in the store: a NUL there is a value.
    let (status, answer) = post(
        &format!("/v1/executions/{id}/events"),
        r#"{"name": "ev", "payload": "a\u0000b"}"#,
    );
    assert_eq!(status, 202, "{answer}");
    svc.stop();
}

fn f7_idempotency_keys_of_two_executions_never_collide(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let (host, rec) = host_on(db.open(), HostConfig::default());
    host.register(&one_effect("k"), Some("k")).unwrap();
    host.register(&one_effect("b:k"), Some("bk")).unwrap();
    let first = host.start("k", vec![], Some("acct:b".into())).unwrap();
    let rows = run_until_done(&host, &[&first]);
    assert_eq!(rows[0].status, "completed", "{:?}", rows[0]);
    let second = host.start("bk", vec![], Some("acct".into())).unwrap();
    let rows = run_until_done(&host, &[&second]);
    assert_eq!(rows[0].status, "completed", "{:?}", rows[0]);
    // Two provider calls, two keys; each execution has its own journal row.
    let keys = rec.keys.lock().unwrap().clone();
    assert_eq!(keys, ["acct%3Ab:k", "acct:b:k"]);
    let store = host.store();
    let a = store.journal_of("acct:b").unwrap();
    let b = store.journal_of("acct").unwrap();
    assert_eq!((a.len(), b.len()), (1, 1), "{a:?} {b:?}");
    assert_eq!((a[0].key.as_str(), b[0].key.as_str()), ("k", "b:k"));
    assert_eq!(b[0].result, json!({"t": "string", "v": "acct:b:k"}));
}

/// Every data route answers 401 without the right token, however the
/// request is dressed up: 47 path, method and header tricks (the probe's
/// sweep, kept as a test).
#[test]
fn the_47_path_auth_sweep_stays_unauthorized() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        token: Some("t0ken".into()),
        ..ServiceConfig::default()
    };
    let (svc, host) = service(db.open(), cfg);
    host.register(&one_effect("k"), Some("p")).unwrap();
    host.start("p", vec![], Some("e1".into())).unwrap();
    let h = "Host: 127.0.0.1\r\nContent-Type: application/json";
    let tricks: Vec<(String, String, &str)> = vec![
        // Every data route, plainly.
        ("GET".into(), "/v1/programs".into(), h),
        ("GET".into(), "/v1/executions".into(), h),
        ("POST".into(), "/v1/executions".into(), h),
        ("GET".into(), "/v1/executions/e1".into(), h),
        ("GET".into(), "/v1/executions/e1/history".into(), h),
        ("GET".into(), "/v1/executions/e1/effects".into(), h),
        ("POST".into(), "/v1/executions/e1/events".into(), h),
        ("POST".into(), "/v1/executions/e1/cancel".into(), h),
        ("POST".into(), "/v1/artifacts".into(), h),
        ("GET".into(), "/v1/artifacts/abc".into(), h),
        ("GET".into(), "/v1/openapi.json".into(), h),
        ("GET".into(), "/metrics".into(), h),
        ("GET".into(), "/ui/api/executions".into(), h),
        ("GET".into(), "/ui/api/executions/e1".into(), h),
        ("GET".into(), "/ui/api/programs".into(), h),
        // Paths spelled otherwise.
        ("GET".into(), "/v1/executions/".into(), h),
        ("GET".into(), "//v1/executions".into(), h),
        ("GET".into(), "/v1//executions".into(), h),
        ("GET".into(), "/v1/./executions".into(), h),
        ("GET".into(), "/v1/../v1/executions".into(), h),
        ("GET".into(), "/V1/EXECUTIONS".into(), h),
        ("GET".into(), "/v1/executions%2Fe1".into(), h),
        ("GET".into(), "/v1/executions/e1%2Fhistory".into(), h),
        ("GET".into(), "/v1/%65xecutions".into(), h),
        ("GET".into(), "/v1/executions;x=1".into(), h),
        ("GET".into(), "/v1/executions?token=t0ken".into(), h),
        ("GET".into(), "/v1/health/../executions".into(), h),
        ("GET".into(), "/ui/../v1/executions".into(), h),
        ("GET".into(), "/ui/api/../../v1/programs".into(), h),
        ("GET".into(), "/v1/executions/e1/../../programs".into(), h),
        ("GET".into(), "/metrics/".into(), h),
        ("GET".into(), "/nope".into(), h),
        // Methods.
        ("HEAD".into(), "/v1/executions".into(), h),
        ("OPTIONS".into(), "/v1/executions".into(), h),
        ("PUT".into(), "/v1/executions/e1".into(), h),
        ("DELETE".into(), "/v1/executions/e1".into(), h),
        ("PATCH".into(), "/v1/executions/e1".into(), h),
        ("PROPFIND".into(), "/v1/executions".into(), h),
        ("POST".into(), "/v1/executions/e1/cancel/".into(), h),
        // Authorization headers that are not the token.
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Bearer",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Bearer ",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: bearer t0ken",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Bearer T0KEN",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Bearer t0ke",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Bearer t0ken0",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nAuthorization: Basic dDBrZW46",
        ),
        (
            "GET".into(),
            "/v1/executions".into(),
            "Host: 127.0.0.1\r\nX-Authorization: Bearer t0ken",
        ),
    ];
    assert_eq!(tricks.len(), 47);
    for (method, path, headers) in &tricks {
        let (status, body) = raw(
            svc.addr(),
            &format!("{method} {path} HTTP/1.1\r\n{headers}"),
            b"{}",
        );
        assert_eq!(status, 401, "{method} {path} [{headers}]: {body}");
    }
    // The right token passes.
    let (status, _) = raw(
        svc.addr(),
        "GET /v1/executions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken",
        b"",
    );
    assert_eq!(status, 200);
    svc.stop();
}

/// A page of another site, or one reaching loopback under its own name
/// (DNS rebinding), cannot drive the service without a token; the service
/// itself and non-browser clients can.
#[test]
fn f2_a_browser_page_cannot_drive_the_no_token_service() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        allowed_hosts: tcc_host::admission::AllowedHosts::new(["tcc.example".to_string()]),
        ..ServiceConfig::default()
    };
    let (svc, host) = service(db.open(), cfg);
    host.register(&one_effect("k"), Some("p")).unwrap();
    let a = svc.addr();
    let port = a.port();
    let start = br#"{"program": "p"}"#;
    let post = |extra: &str| {
        raw(
            a,
            &format!("POST /v1/executions HTTP/1.1\r\nHost: 127.0.0.1:{port}{extra}"),
            start,
        )
    };
    // Content types a page can send without a preflight.
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (status, body) = post(&format!("\r\nContent-Type: {ct}"));
        assert_eq!(status, 415, "{ct}: {body}");
        assert!(body.contains("TCC-H211"), "{body}");
    }
    let (status, _) = post("");
    assert_eq!(status, 415);
    // Foreign origins.
    for origin in ["http://attacker.example", "null", "http://127.0.0.1:1"] {
        let (status, body) = post(&format!(
            "\r\nContent-Type: application/json\r\nOrigin: {origin}"
        ));
        assert_eq!(status, 403, "{origin}: {body}");
        assert!(body.contains("TCC-H210"), "{body}");
    }
    // A rebound name.
    let (status, body) = raw(
        a,
        &format!("GET /v1/executions HTTP/1.1\r\nHost: attacker.example:{port}"),
        b"",
    );
    assert_eq!(status, 403, "{body}");
    // The service's own page, a configured name, and a plain client.
    let (status, body) = post(&format!(
        "\r\nContent-Type: application/json\r\nOrigin: http://127.0.0.1:{port}"
    ));
    assert_eq!(status, 201, "{body}");
    let (status, body) = raw(
        a,
        &format!(
            "POST /v1/executions HTTP/1.1\r\nHost: tcc.example:{port}\r\nContent-Type: application/json; charset=utf-8\r\nOrigin: http://tcc.example:{port}"
        ),
        start,
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = raw(
        a,
        &format!("GET /v1/executions HTTP/1.1\r\nHost: localhost:{port}"),
        b"",
    );
    assert_eq!(status, 200, "{body}");
    svc.stop();
}

/// Requests with made-up methods and paths, authorized or not, add no
/// label sets to `/metrics`.
#[test]
fn f4_metrics_labels_come_from_closed_lists() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        token: Some("t0ken".into()),
        ..ServiceConfig::default()
    };
    let (svc, _host) = service(db.open(), cfg);
    let a = svc.addr();
    let metrics = || {
        raw(
            a,
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken",
            b"",
        )
        .1
    };
    let series = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("tcc_http_requests_total{"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    for i in 0..400 {
        for auth in ["", "\r\nAuthorization: Bearer t0ken"] {
            let _ = raw(
                a,
                &format!("JUNK{i} /x{i} HTTP/1.1\r\nHost: 127.0.0.1{auth}"),
                b"",
            );
            let _ = raw(
                a,
                &format!("GET /v1/no/such/{i} HTTP/1.1\r\nHost: 127.0.0.1{auth}"),
                b"",
            );
        }
    }
    let after = series(&metrics());
    // 1 600 distinct junk requests; the label sets stay a handful (other
    // tests of this binary count into the same process-wide registry).
    assert!(after.len() < 100, "{} series: {after:#?}", after.len());
    assert!(
        after
            .iter()
            .all(|l| !l.contains("JUNK") && !l.contains("/x")),
        "{after:#?}"
    );
    assert!(
        after.iter().any(|l| l.contains(r#"route="unauthorized""#)),
        "{after:#?}"
    );
    assert!(after.iter().all(|l| !l.contains("JUNK")), "{after:#?}");
    svc.stop();
}

/// Connections that send nothing, half a request line or half the headers
/// are closed after the header-read timeout; at most `max_connections` are
/// served at once, and a client over the cap is served once one closes.
#[test]
fn f5_stalled_connections_are_closed_and_connections_are_capped() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        request_timeout: Duration::from_millis(300),
        conn: tcc_host::conn::ConnLimits {
            header_read: Duration::from_millis(300),
            idle: Duration::from_millis(500),
            max_connections: 3,
        },
        ..ServiceConfig::default()
    };
    let (svc, _host) = service(db.open(), cfg);
    let a = svc.addr();
    let stalled: Vec<std::net::TcpStream> = [
        "",
        "GET /v1/health HT",
        "GET /v1/health HTTP/1.1\r\nHost: 127",
    ]
    .iter()
    .map(|sent| {
        let mut s = std::net::TcpStream::connect(a).unwrap();
        s.write_all(sent.as_bytes()).unwrap();
        s
    })
    .collect();
    // All three slots are taken: a fourth client waits, then is served
    // once the stalled ones are closed.
    let started = std::time::Instant::now();
    let (status, _) = raw(a, "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1", b"");
    assert_eq!(status, 200);
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "served over the cap"
    );
    for mut s in stalled {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let t = std::time::Instant::now();
        // Closed by the server: end of stream (or a reset), not a timeout.
        match s.read(&mut buf) {
            Ok(n) => assert_eq!(n, 0, "{}", String::from_utf8_lossy(&buf[..n])),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "still open after {:?}",
                t.elapsed()
            ),
        }
    }
    // An idle keep-alive connection is closed too.
    let mut s = std::net::TcpStream::connect(a).unwrap();
    s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("keep-alive connection not closed: {e}"),
        }
    }
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
    svc.stop();
}

/// One response read off a kept-alive connection: its head (lower-cased)
/// and its status; the body is read by its `Content-Length`.
fn read_response(s: &mut std::net::TcpStream) -> (u16, String) {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        let n = s.read(&mut byte).expect("a response");
        assert_eq!(
            n,
            1,
            "closed before a response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).unwrap();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (status, head)
}

/// A route that answers before reading the body (an unknown execution, a
/// wrong token) with the body arriving after the headers, as clients that
/// write them separately send it under load: hyper then closes the
/// connection, so a small body is read before routing (the connection
/// stays usable) and the answer to a large unread one says
/// `Connection: close` (the client does not reuse it). Before, the
/// connection was closed silently and a pooling client's next request
/// failed (`irkit/tests/tcc_namespaces.rs` flaked on it under load).
#[test]
fn a_body_sent_after_its_headers_never_leaves_a_silently_closed_connection() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        token: Some("t".into()),
        ..ServiceConfig::default()
    };
    let (svc, _host) = service(db.open(), cfg);
    let a = svc.addr();
    let send = |s: &mut std::net::TcpStream, token: &str, body: &[u8]| {
        let head = format!(
            "POST /v1/executions/nope/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
        s.write_all(body).unwrap();
    };
    let small = br#"{"name": "ev", "payload": 1}"#.to_vec();
    let large = format!(r#"{{"name": "ev", "payload": "{}"}}"#, "x".repeat(200_000)).into_bytes();
    for token in ["t", "wrong"] {
        let mut s = std::net::TcpStream::connect(a).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        send(&mut s, token, &small);
        let (status, head) = read_response(&mut s);
        assert_eq!(status, if token == "t" { 404 } else { 401 }, "{head}");
        assert!(!head.contains("connection: close"), "{head}");
        // The same connection serves the next request.
        s.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let (status, head) = read_response(&mut s);
        assert_eq!(status, 200, "{head}");

        let mut s = std::net::TcpStream::connect(a).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        send(&mut s, token, &large);
        let (status, head) = read_response(&mut s);
        assert_eq!(status, if token == "t" { 404 } else { 401 }, "{head}");
        assert!(head.contains("connection: close"), "{token}: {head}");
    }
    svc.stop();
}

/// A body of many small values is refused before any tree is built (413),
/// on every route that takes values; an unknown program is reported
/// before its arguments are converted.
#[test]
fn f3_bodies_of_too_many_values_are_refused() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let cfg = ServiceConfig {
        max_body: 9 << 20,
        ..ServiceConfig::default()
    };
    let (svc, host) = service(db.open(), cfg);
    host.register(&one_effect("k"), Some("p")).unwrap();
    let id = host.start("p", vec![], Some("e1".into())).unwrap();
    let a = svc.addr();
    let post = |path: &str, body: &str| {
        raw(
            a,
            &format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"),
            body.as_bytes(),
        )
    };
    let many = format!("[{}0]", "0,".repeat(tcc_host::values::MAX_VALUES));
    for (path, body) in [
        (
            "/v1/executions".to_string(),
            format!(r#"{{"program": "p", "args": [{many}]}}"#),
        ),
        (
            "/v1/executions".to_string(),
            format!(r#"{{"program": "p", "tagged_args": {many}}}"#),
        ),
        (
            format!("/v1/executions/{id}/events"),
            format!(r#"{{"name": "ev", "payload": {many}}}"#),
        ),
    ] {
        let (status, answer) = post(&path, &body);
        assert_eq!(status, 413, "{path}: {answer}");
        assert!(answer.contains("JSON values"), "{answer}");
    }
    let few = format!("[{}0]", "0,".repeat(1000));
    let (status, answer) = post(
        "/v1/executions",
        &format!(r#"{{"program": "nope", "args": [{few}]}}"#),
    );
    assert_eq!(status, 404, "{answer}");
    let (status, answer) = post(
        "/v1/executions",
        &format!(r#"{{"program": "p", "args": [{few}]}}"#),
    );
    assert_eq!(status, 201, "{answer}");
    svc.stop();
}

/// A plain JSON value `depth` levels deep, each level an array or object
/// holding `width` scalars and the level below.
fn nested_plain(depth: usize, width: usize, objects: bool) -> serde_json::Value {
    let mut v = json!("leaf\u{0}");
    for i in 0..depth {
        let mut items: Vec<serde_json::Value> = (0..width).map(|k| json!(k as f64 + 0.5)).collect();
        items.insert(i % (width + 1), v);
        v = if objects && i % 2 == 0 {
            serde_json::Value::Object(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(k, x)| (format!("k{k}"), x))
                    .collect(),
            )
        } else {
            serde_json::Value::Array(items)
        };
    }
    v
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// The host's walks over values (conversion both ways, the tagged
    /// check, counting, canonical text) on deep and wide values, on a
    /// thread with a small stack: an answer or an error, never an overflow
    /// (docs/tcc/engine.md, "Walks over run-time values").
    #[test]
    fn host_value_walks_are_bounded(depth in 0usize..140, width in 0usize..6, objects in proptest::prelude::any::<bool>()) {
        let outcome = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let plain = nested_plain(depth, width, objects);
                let text = plain.to_string();
                let counted = tcc_host::values::count_values(text.as_bytes(), usize::MAX);
                let tagged = tcc_host::values::plain_to_tagged(&plain);
                match &tagged {
                    Ok(t) => {
                        assert!(depth <= tcc_host::values::MAX_DEPTH, "{depth}");
                        tcc_host::values::check_tagged(t).unwrap();
                        assert_eq!(tcc_host::values::tagged_to_plain(t), plain);
                        let _ = tcc_ir::to_canonical(t);
                    }
                    Err(e) => assert!(depth > tcc_host::values::MAX_DEPTH, "{depth}: {e}"),
                }
                // serde_json's reader stops at 128 levels; the counter too.
                if depth <= 120 {
                    assert!(counted.is_ok(), "{depth}");
                } else if depth > 128 {
                    assert!(counted.is_err(), "{depth}");
                }
            })
            .unwrap()
            .join();
        proptest::prop_assert!(outcome.is_ok());
    }
}
