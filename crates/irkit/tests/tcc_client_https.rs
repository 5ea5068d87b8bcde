//! `irkit tcc status` against an https server (a rustls server thread on
//! loopback standing in for a TLS-terminating proxy in front of
//! `irkit tcc serve`, with a private CA made by rcgen): trusted through
//! `--ca-file` or `$IRKIT_TCC_CA_FILE`, refused with a certificate error
//! (exit 2) without it, and a clear error for an unreadable CA file.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{path_arg, run_command};
use std::sync::Arc;

/// A private CA's PEM and a server certificate for 127.0.0.1 it signed.
fn private_ca() -> (String, CertificateDer<'static>, PrivateKeyDer<'static>) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "irkit test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign];
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    (
        ca_pem,
        leaf.der().clone(),
        PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
    )
}

/// Serves `answer` as a JSON body to every TLS connection on a loopback
/// port (handshakes that fail are dropped); returns the port.
fn https_server(cert: CertificateDer<'static>, key: PrivateKeyDer<'static>, answer: &str) -> u16 {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = answer.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut sock) = stream else { continue };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, &mut sock);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match tls.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            if !head.ends_with(b"\r\n\r\n") {
                continue;
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            let _ = tls.write_all(reply.as_bytes());
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    port
}

fn irkit() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_irkit"));
    c.env_remove("IRKIT_TCC_CA_FILE")
        .env_remove("IRKIT_TCC_SERVER")
        .env_remove("IRKIT_TCC_TOKEN");
    c
}

#[test]
fn status_over_https_trusts_a_private_ca_only_when_told() {
    let (ca_pem, cert, key) = private_ca();
    let dir = std::env::temp_dir().join(tcc_host::random_id("irkit-https-client-"));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file: PathBuf = dir.join("ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let port = https_server(
        cert,
        key,
        r#"{"id":"e1","status":"completed","result":{"t":"number","v":7}}"#,
    );
    let server = format!("https://127.0.0.1:{port}");

    let (code, stdout, stderr) = run_command(irkit().args([
        "tcc",
        "status",
        "e1",
        "--format",
        "json",
        "--server",
        &server,
        "--ca-file",
        path_arg(&ca_file),
    ]));
    assert_eq!(code, Some(0), "{stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["status"], "completed");
    assert_eq!(j["result"], 7);

    // The same through the environment.
    let (code, _, stderr) = run_command(
        irkit()
            .args([
                "tcc", "status", "e1", "--format", "json", "--server", &server,
            ])
            .env("IRKIT_TCC_CA_FILE", &ca_file),
    );
    assert_eq!(code, Some(0), "{stderr}");

    // Without it the private CA is not trusted: a certificate error, exit 2.
    let (code, _, err) = run_command(irkit().args(["tcc", "status", "e1", "--server", &server]));
    assert_eq!(code, Some(2));
    assert!(err.contains("certificate"), "{err}");

    // An unreadable CA file is a usage error naming it.
    let missing = dir.join("missing.pem");
    let (code, _, err) = run_command(irkit().args([
        "tcc",
        "status",
        "e1",
        "--server",
        &server,
        "--ca-file",
        path_arg(&missing),
    ]));
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--ca-file") && err.contains("missing.pem"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
