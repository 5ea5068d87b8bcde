//! https webhooks against real TLS servers on loopback (rustls server
//! threads, certificates made with rcgen): a trusted call through a
//! `ca_file`, SNI, untrusted and misnamed certificates (rejected, not
//! retried), handshake timeouts, handshake failures (retried), peers that
//! close without `close_notify`, the `ca_file` configuration errors, and
//! a durable host running programs whose effects go to https webhooks
//! (the client is `ureq` over rustls, see `tcc_host::http`).

mod common;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value as J, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcc_host::http::{HttpErrorKind, request_with, tls_with_ca_file};
use tcc_host::providers::{EffectCall, ProviderOutcome, Providers};
use tcc_host::store::Store;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::{Host, HostConfig};

/// A test certificate authority.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` (DNS names or IP addresses).
    fn leaf(&self, names: &[&str]) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        self.leaf_valid(names, None)
    }

    /// The same, valid only between the given dates (years) when given.
    fn leaf_valid(
        &self,
        names: &[&str],
        years: Option<(i32, i32)>,
    ) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        if let Some((from, to)) = years {
            params.not_before = rcgen::date_time_ymd(from, 1, 1);
            params.not_after = rcgen::date_time_ymd(to, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (
            cert.der().clone(),
            PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        )
    }

    /// Writes the CA certificate to a fresh PEM file.
    fn pem_file(&self, dir: &TempDir) -> PathBuf {
        let p = dir.0.join(format!("{}.pem", tcc_host::random_id("ca-")));
        std::fs::write(&p, &self.pem).unwrap();
        p
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let d = std::env::temp_dir().join(tcc_host::random_id("tcc-https-"));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How the test server ends its answers.
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    /// `close_notify`, then close.
    CloseNotify,
    /// Close the TCP connection without `close_notify`.
    Abrupt,
    /// Announce a longer body than sent, then close without `close_notify`.
    Truncated,
    /// Wait 2 s after the request before answering.
    Slow,
}

/// (SNI, Idempotency-Key, body) of one request.
type Seen = (Option<String>, String, String);

/// A TLS server on 127.0.0.1 answering every request with `answer`.
struct Server {
    port: u16,
    /// TCP connections accepted.
    accepted: Arc<AtomicUsize>,
    /// (SNI, Idempotency-Key, body) of every complete request.
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(
        cert: CertificateDer<'static>,
        key: PrivateKeyDer<'static>,
        alpn: &[&[u8]],
        answer: &'static str,
        ending: Ending,
    ) -> Server {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Server::start_with(config, answer, ending)
    }

    fn start_with(config: rustls::ServerConfig, answer: &'static str, ending: Ending) -> Server {
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (acc, log) = (accepted.clone(), seen.clone());
        // The thread ends with the test process; each connection is served
        // in turn.
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(sock) = sock else { continue };
                acc.fetch_add(1, Ordering::SeqCst);
                let _ = sock.set_read_timeout(Some(Duration::from_secs(5)));
                let conn = rustls::ServerConnection::new(config.clone()).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, sock);
                let Some((key, body)) = read_request(&mut tls) else {
                    continue;
                };
                let sni = tls.conn.server_name().map(str::to_string);
                log.lock().unwrap().push((sni, key, body));
                if ending == Ending::Slow {
                    std::thread::sleep(Duration::from_secs(2));
                }
                let length = if ending == Ending::Truncated {
                    answer.len() + 100
                } else {
                    answer.len()
                };
                let _ = write!(
                    tls,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{answer}"
                );
                let _ = tls.flush();
                if ending == Ending::CloseNotify {
                    tls.conn.send_close_notify();
                    let _ = tls.conn.complete_io(&mut tls.sock);
                }
                let _ = tls.sock.shutdown(std::net::Shutdown::Both);
            }
        });
        Server {
            port,
            accepted,
            seen,
        }
    }
}

/// Reads one request: (Idempotency-Key, body), or `None` when the
/// handshake or the read failed.
fn read_request(s: &mut impl Read) -> Option<(String, String)> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&raw[..end]).to_string();
        let header = |name: &str| {
            head.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_string())
        };
        let length: usize = header("content-length")?.parse().ok()?;
        if raw.len() >= end + 4 + length {
            let body = String::from_utf8_lossy(&raw[end + 4..end + 4 + length]).to_string();
            return Some((header("idempotency-key").unwrap_or_default(), body));
        }
    }
}

fn store(dir: &TempDir) -> Arc<dyn Store> {
    Arc::new(SqliteStore::open(&dir.0.join("p.db")).unwrap())
}

/// Routes key `hook` to a webhook with the given extra TOML lines.
fn providers(dir: &TempDir, url: &str, extra: &str) -> Result<Providers, String> {
    Providers::from_toml(
        &format!(
            "[[route]]\npattern = \"hook\"\nprovider = \"webhook\"\nurl = \"{url}\"\nbackoff_ms = 10\n{extra}\n"
        ),
        store(dir),
    )
}

fn call(p: &Providers, input: J) -> ProviderOutcome {
    p.call(&EffectCall {
        execution_id: "e1",
        key: "hook",
        idempotency_key: "e1:hook",
        input: &input,
        traceparent: None,
    })
}

fn failure(outcome: ProviderOutcome) -> String {
    match outcome {
        ProviderOutcome::Failed(m) => m,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn https_webhook_with_a_ca_file_posts_and_reads_the_answer() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"]);
    let server = Server::start(
        cert,
        key,
        &[b"http/1.1"],
        "{\"ok\": true}",
        Ending::CloseNotify,
    );
    let ca_file = ca.pem_file(&dir);
    let extra = format!("ca_file = {:?}", ca_file.to_str().unwrap());
    let input = json!({"t": "object", "v": {"amount": {"t": "number", "v": 42}}});
    // An IP address host: verified against the IP SAN; no SNI (RFC 6066).
    let p = providers(
        &dir,
        &format!("https://127.0.0.1:{}/effect", server.port),
        &extra,
    )
    .unwrap();
    assert_eq!(
        call(&p, input.clone()),
        ProviderOutcome::Result(json!({"t": "object", "v": {"ok": {"t": "bool", "v": true}}}))
    );
    // A DNS host: verified against the DNS SAN, sent as SNI.
    let p = providers(
        &dir,
        &format!("https://localhost:{}/effect", server.port),
        &extra,
    )
    .unwrap();
    assert!(matches!(call(&p, input), ProviderOutcome::Result(_)));
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (None, "e1:hook".to_string(), "{\"amount\":42}".to_string()),
            (
                Some("localhost".to_string()),
                "e1:hook".to_string(),
                "{\"amount\":42}".to_string()
            ),
        ]
    );
}

#[test]
fn an_untrusted_certificate_is_rejected_and_not_retried() {
    let dir = TempDir::new();
    let trusted = Ca::new("trusted CA");
    let other = Ca::new("someone else's CA");
    let (cert, key) = other.leaf(&["localhost", "127.0.0.1"]);
    let server = Server::start(cert, key, &[b"http/1.1"], "1", Ending::CloseNotify);
    let url = format!("https://127.0.0.1:{}/effect", server.port);
    // A ca_file that does not hold the server's issuer: rejected.
    let extra = format!(
        "ca_file = {:?}\nretries = 3",
        trusted.pem_file(&dir).to_str().unwrap()
    );
    let m = failure(call(
        &providers(&dir, &url, &extra).unwrap(),
        json!({"t": "null"}),
    ));
    assert!(
        m.contains("certificate") && m.contains("UnknownIssuer") && m.contains("not retried"),
        "{m}"
    );
    // Without a ca_file: Mozilla's roots, which do not hold it either.
    let m = failure(call(
        &providers(&dir, &url, "retries = 3").unwrap(),
        json!({"t": "null"}),
    ));
    assert!(
        m.contains("certificate") && m.contains("not retried"),
        "{m}"
    );
    // One handshake per call (no retries), and no request ever got through.
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
    assert!(server.seen.lock().unwrap().is_empty());
    let e = request_with(
        "GET",
        &url,
        &[],
        None,
        Duration::from_secs(5),
        Some(&tls_with_ca_file(&trusted.pem_file(&dir)).unwrap()),
    )
    .unwrap_err();
    assert_eq!(e.kind, HttpErrorKind::Certificate);
    assert!(!e.retryable());
}

#[test]
fn a_certificate_for_another_name_is_rejected() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let (cert, key) = ca.leaf(&["other.example", "192.0.2.7"]);
    let server = Server::start(cert, key, &[b"http/1.1"], "1", Ending::CloseNotify);
    let extra = format!("ca_file = {:?}", ca.pem_file(&dir).to_str().unwrap());
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("https://{host}:{}/effect", server.port);
        let m = failure(call(
            &providers(&dir, &url, &extra).unwrap(),
            json!({"t": "null"}),
        ));
        assert!(
            m.contains("certificate not valid for name") && m.contains("not retried"),
            "{m}"
        );
    }
    assert!(server.seen.lock().unwrap().is_empty());
}

#[test]
fn an_expired_or_not_yet_valid_certificate_is_rejected() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let extra = format!("ca_file = {:?}", ca.pem_file(&dir).to_str().unwrap());
    for (years, expect) in [((2001, 2002), "Expired"), ((2200, 2201), "NotValidYet")] {
        let (cert, key) = ca.leaf_valid(&["127.0.0.1"], Some(years));
        let server = Server::start(cert, key, &[b"http/1.1"], "1", Ending::CloseNotify);
        let url = format!("https://127.0.0.1:{}/effect", server.port);
        let m = failure(call(
            &providers(&dir, &url, &extra).unwrap(),
            json!({"t": "null"}),
        ));
        assert!(
            m.contains("certificate") && m.contains("not retried"),
            "{expect}: {m}"
        );
        let e = request_with(
            "GET",
            &url,
            &[],
            None,
            Duration::from_secs(5),
            Some(&tls_with_ca_file(&ca.pem_file(&dir)).unwrap()),
        )
        .unwrap_err();
        assert_eq!(
            e.kind,
            HttpErrorKind::Certificate,
            "{expect}: {}",
            e.message
        );
        assert!(server.seen.lock().unwrap().is_empty());
    }
}

#[test]
fn a_stalled_handshake_is_bounded_by_the_timeout_and_retried() {
    // Accepts TCP connections and never answers the ClientHello.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let acc = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming() {
            acc.fetch_add(1, Ordering::SeqCst);
            held.push(s);
        }
    });
    let dir = TempDir::new();
    let url = format!("https://127.0.0.1:{port}/effect");
    let start = Instant::now();
    let m = failure(call(
        &providers(&dir, &url, "timeout_ms = 300\nretries = 1").unwrap(),
        json!({"t": "null"}),
    ));
    let took = start.elapsed();
    assert!(m.contains("timed out") && m.contains("2 attempts"), "{m}");
    assert!(took >= Duration::from_millis(600), "{took:?}");
    assert!(took < Duration::from_millis(3000), "{took:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
    let e = request_with("GET", &url, &[], None, Duration::from_millis(200), None).unwrap_err();
    assert_eq!(e.kind, HttpErrorKind::Timeout);
    assert!(e.retryable());
}

#[test]
fn a_slow_answer_after_the_handshake_is_bounded_by_the_timeout() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let server = Server::start(cert, key, &[b"http/1.1"], "1", Ending::Slow);
    let tls = tls_with_ca_file(&ca.pem_file(&dir)).unwrap();
    let start = Instant::now();
    let e = post_x(server.port, &tls, Duration::from_millis(400)).unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.kind, HttpErrorKind::Timeout, "{}", e.message);
    assert!(e.message.contains("timed out"), "{}", e.message);
    assert!(took >= Duration::from_millis(400), "{took:?}");
    assert!(took < Duration::from_millis(1500), "{took:?}");
    // The handshake and the request went through: the server saw it.
    assert_eq!(server.seen.lock().unwrap().len(), 1);
}

#[test]
fn a_handshake_refused_by_the_server_is_a_retried_tls_failure() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    // A plain-HTTP server on the https URL: it answers the ClientHello
    // with an HTTP error, which the client cannot read as TLS (a TLS
    // failure, retried; not a certificate of the server's that was
    // rejected).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let server = Server {
        port: listener.local_addr().unwrap().port(),
        accepted: accepted.clone(),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            accepted.fetch_add(1, Ordering::SeqCst);
            let mut hello = [0u8; 512];
            let _ = sock.read(&mut hello);
            let _ = sock.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let url = format!("https://127.0.0.1:{}/effect", server.port);
    let extra = format!(
        "ca_file = {:?}\nretries = 2",
        ca.pem_file(&dir).to_str().unwrap()
    );
    let m = failure(call(
        &providers(&dir, &url, &extra).unwrap(),
        json!({"t": "null"}),
    ));
    assert!(m.contains("TLS error") && m.contains("3 attempts"), "{m}");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 3);
}

/// POSTs `{}` to `https://127.0.0.1:PORT/x` trusting `tls`.
fn post_x(
    port: u16,
    tls: &Arc<tcc_host::http::Tls>,
    timeout: Duration,
) -> Result<tcc_host::http::Response, tcc_host::http::HttpError> {
    request_with(
        "POST",
        &format!("https://127.0.0.1:{port}/x"),
        &[],
        Some(b"{}"),
        timeout,
        Some(tls),
    )
}

#[test]
fn a_peer_closing_without_close_notify_is_accepted_only_with_a_complete_body() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let tls = tls_with_ca_file(&ca.pem_file(&dir)).unwrap();
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let abrupt = Server::start(cert, key, &[], "[1, 2]", Ending::Abrupt);
    let r = post_x(abrupt.port, &tls, Duration::from_secs(5)).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"[1, 2]"[..]));
    let (cert, key) = ca.leaf(&["127.0.0.1"]);
    let cut = Server::start(cert, key, &[], "[1, 2]", Ending::Truncated);
    let e = post_x(cut.port, &tls, Duration::from_secs(5)).unwrap_err();
    assert_eq!(e.kind, HttpErrorKind::Tls);
    assert!(e.message.contains("close_notify"), "{}", e.message);
}

#[test]
fn ca_file_configuration_errors_are_reported_at_load() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let good = ca.pem_file(&dir);
    let not_pem = dir.0.join("not.pem");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let cases = [
        (
            "https://127.0.0.1:1/".to_string(),
            format!(
                "ca_file = {:?}",
                dir.0.join("missing.pem").to_str().unwrap()
            ),
            "missing.pem",
        ),
        (
            "https://127.0.0.1:1/".to_string(),
            format!("ca_file = {:?}", not_pem.to_str().unwrap()),
            "no PEM CERTIFICATE",
        ),
        (
            "http://127.0.0.1:1/".to_string(),
            format!("ca_file = {:?}", good.to_str().unwrap()),
            "only for https",
        ),
        (
            "https://127.0.0.1:1/".to_string(),
            "ca_file = 3".to_string(),
            "must be a string",
        ),
    ];
    for (url, extra, expect) in cases {
        match providers(&dir, &url, &extra) {
            Err(e) => assert!(e.contains(expect), "{extra}: {e}"),
            Ok(_) => panic!("{extra}: accepted"),
        }
    }
    assert!(
        providers(
            &dir,
            "https://127.0.0.1:1/",
            &format!("ca_file = {:?}", good.to_str().unwrap())
        )
        .is_ok()
    );
}

#[test]
fn a_durable_execution_journals_an_https_webhook_result_and_catches_a_certificate_failure() {
    let dir = TempDir::new();
    let ca = Ca::new("irkit test CA");
    let (cert, key) = ca.leaf(&["localhost", "127.0.0.1"]);
    let good = Server::start(
        cert,
        key,
        &[b"http/1.1"],
        "{\"paid\": 42}",
        Ending::CloseNotify,
    );
    let stranger = Ca::new("someone else's CA");
    let (cert, key) = stranger.leaf(&["localhost", "127.0.0.1"]);
    let bad = Server::start(cert, key, &[b"http/1.1"], "1", Ending::CloseNotify);
    let ca_file = ca.pem_file(&dir);
    let toml = format!(
        "[[route]]\npattern = \"charge\"\nprovider = \"webhook\"\nurl = \"https://localhost:{}/charge\"\nca_file = {:?}\n\n\
         [[route]]\npattern = \"fail.*\"\nprovider = \"webhook\"\nurl = \"https://127.0.0.1:{}/x\"\nca_file = {:?}\nretries = 5\n\n\
         [[route]]\npattern = \"*\"\nprovider = \"echo\"\n",
        good.port,
        ca_file.to_str().unwrap(),
        bad.port,
        ca_file.to_str().unwrap(),
    );
    let store = store(&dir);
    let host = Host::new(
        store.clone(),
        Providers::from_toml(&toml, store.clone()).unwrap(),
        HostConfig::default(),
    );
    host.register(&common::effects(), Some("effects")).unwrap();
    host.register(&common::caught(), Some("caught")).unwrap();
    let e = host.start("effects", vec![], Some("e".into())).unwrap();
    let c = host.start("caught", vec![], Some("c".into())).unwrap();
    let threads = host.spawn();
    let rows: Vec<_> = [&e, &c]
        .iter()
        .map(|id| host.wait_for(id, Duration::from_secs(20), true).unwrap())
        .collect();
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
    // `charge` went over https; `ship` (no input) was echoed.
    assert_eq!(rows[0].status, "completed", "{:?}", rows[0]);
    assert_eq!(
        rows[0].result.clone().unwrap().to_json().unwrap(),
        json!({"t": "array", "v": [
            {"t": "object", "v": {"paid": {"t": "number", "v": 42}}},
            {"t": "object", "v": {}}
        ]})
    );
    assert_eq!(
        good.seen.lock().unwrap().clone(),
        vec![(
            Some("localhost".to_string()),
            "e:charge".to_string(),
            "{\"amount\":42}".to_string()
        )]
    );
    // The untrusted server: one attempt despite retries = 5, the failure
    // caught by the program.
    assert_eq!(rows[1].status, "completed", "{:?}", rows[1]);
    let message = rows[1].result.clone().unwrap().to_json().unwrap();
    let text = message["v"].as_str().unwrap_or_default();
    assert!(
        text.contains("certificate") && text.contains("not retried"),
        "{message}"
    );
    assert_eq!(bad.accepted.load(Ordering::SeqCst), 1);
}
