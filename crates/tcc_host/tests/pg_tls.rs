//! PostgreSQL over TLS against the real test server (`sslmode`,
//! `sslrootcert`): `require` encrypts, `disable` does not, `verify-full`
//! and `verify-ca` accept the test CA and refuse another CA, `verify-full`
//! refuses a host name the certificate does not carry while `verify-ca`
//! does not check names, and the store itself opens over `verify-full`.
//! Without a server: against a fake one that declines TLS, `prefer` goes on
//! in plain text, `require` gives up and `disable` never asks.
//!
//! The server and its certificate come from `.ci/services/postgres.sh`:
//! the CA certificate is `/var/lib/postgresql/irkit-tls/ca.pem` (or
//! `$IRKIT_TEST_POSTGRES_CA`). Without a reachable server or that file the
//! tests are skipped, unless `IRKIT_REQUIRE_POSTGRES=1`, where they fail.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::PathBuf;
use tcc_host::store::Store;
use tcc_host::store::pg::{PgStore, connect};
use tcc_host::test_support::{ScratchSchema, test_database_url};

const DEFAULT_CA: &str = "/var/lib/postgresql/irkit-tls/ca.pem";

/// The test database URL without any ssl parameter, and the CA file; or
/// `None` (skip) when either is missing and PostgreSQL is not required.
fn setup(test: &str) -> Option<(String, PathBuf)> {
    let required = std::env::var("IRKIT_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
    let base = without_ssl_params(&test_database_url());
    let ca = std::env::var_os("IRKIT_TEST_POSTGRES_CA")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CA));
    let reachable = connect(&with(&base, "sslmode=disable"));
    match (reachable, ca.is_file()) {
        (Ok(_), true) => Some((base, ca)),
        (r, _) if required => panic!(
            "IRKIT_REQUIRE_POSTGRES=1 but {test} cannot run: server {} ({}), CA file {} ({})",
            base,
            r.err().map_or("reachable".to_string(), |e| e.to_string()),
            ca.display(),
            if ca.is_file() {
                "present"
            } else {
                "missing: run .ci/services/postgres.sh"
            }
        ),
        (r, _) => {
            eprintln!(
                "skipping {test}: PostgreSQL at {base} {} / CA file {} {}",
                if r.is_ok() {
                    "reachable"
                } else {
                    "not reachable"
                },
                ca.display(),
                if ca.is_file() { "present" } else { "missing" }
            );
            None
        }
    }
}

fn without_ssl_params(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.starts_with("sslmode=") && !p.starts_with("sslrootcert=") && !p.is_empty())
        .collect();
    if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

fn with(url: &str, params: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

/// The URL with its host replaced by `host`, connecting to the old host's
/// address through `hostaddr` (`None` when the host is not an IP literal).
fn renamed(url: &str, host: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let at = rest.find('@').map_or(0, |i| i + 1);
    let end = rest[at..]
        .find([':', '/', '?'])
        .map_or(rest.len(), |i| at + i);
    let old = &rest[at..end];
    old.parse::<std::net::Ipv4Addr>().ok()?;
    let swapped = format!("{scheme}://{}{host}{}", &rest[..at], &rest[end..]);
    Some(with(&swapped, &format!("hostaddr={old}")))
}

/// Whether the session of a fresh connection to `url` is encrypted.
fn encrypted(url: &str) -> Result<bool, String> {
    let mut c = connect(url).map_err(|e| e.to_string())?;
    let row = c
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .map_err(|e| e.to_string())?;
    Ok(row.get::<_, bool>(0))
}

/// A CA the server's certificate does not come from.
fn foreign_ca() -> (tempdir::Dir, PathBuf) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "not the PostgreSQL CA");
    let cert = params.self_signed(&key).unwrap();
    let dir = tempdir::Dir::new();
    let path = dir.0.join("foreign-ca.pem");
    std::fs::write(&path, cert.pem()).unwrap();
    (dir, path)
}

mod tempdir {
    pub struct Dir(pub std::path::PathBuf);

    impl Dir {
        pub fn new() -> Dir {
            let d = std::env::temp_dir().join(tcc_host::random_id("tcc-pgtls-"));
            std::fs::create_dir_all(&d).unwrap();
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn require_encrypts_disable_does_not_and_prefer_uses_tls_when_offered() {
    let Some((base, _)) = setup("require_encrypts_disable_does_not") else {
        return;
    };
    assert_eq!(encrypted(&with(&base, "sslmode=require")), Ok(true));
    assert_eq!(encrypted(&with(&base, "sslmode=disable")), Ok(false));
    // libpq's default, prefer: the test server offers TLS.
    assert_eq!(encrypted(&base), Ok(true));
    assert_eq!(encrypted(&with(&base, "sslmode=prefer")), Ok(true));
}

#[test]
fn verify_full_and_verify_ca_accept_the_test_ca() {
    let Some((base, ca)) = setup("verify_full_and_verify_ca_accept_the_test_ca") else {
        return;
    };
    let root = format!("sslrootcert={}", ca.display());
    for mode in ["verify-full", "verify-ca", "require"] {
        let url = with(&base, &format!("sslmode={mode}&{root}"));
        assert_eq!(encrypted(&url), Ok(true), "{url}");
    }
    // The certificate names both localhost and 127.0.0.1.
    for host in ["localhost", "127.0.0.1"] {
        if let Some(url) = renamed(&base, host) {
            let url = with(&url, &format!("sslmode=verify-full&{root}"));
            assert_eq!(encrypted(&url), Ok(true), "{url}");
        }
    }
}

#[test]
fn a_foreign_root_certificate_is_refused() {
    let Some((base, _)) = setup("a_foreign_root_certificate_is_refused") else {
        return;
    };
    let (_dir, foreign) = foreign_ca();
    // libpq: with a root certificate, require checks the chain as well.
    for mode in ["verify-full", "verify-ca", "require", "prefer"] {
        let url = with(
            &base,
            &format!("sslmode={mode}&sslrootcert={}", foreign.display()),
        );
        let e = encrypted(&url).unwrap_err();
        assert!(
            e.contains("cannot connect to PostgreSQL")
                && e.contains("invalid peer certificate")
                && e.contains("UnknownIssuer"),
            "{mode}: {e}"
        );
    }
}

#[test]
fn verify_full_checks_the_host_name_and_verify_ca_does_not() {
    let Some((base, ca)) = setup("verify_full_checks_the_host_name") else {
        return;
    };
    let Some(wrong) = renamed(&base, "wrong-name.invalid") else {
        eprintln!("skipping: the test database host is not an IPv4 address");
        return;
    };
    let root = format!("sslrootcert={}", ca.display());
    let e = encrypted(&with(&wrong, &format!("sslmode=verify-full&{root}"))).unwrap_err();
    assert!(
        e.contains("certificate not valid for name") && e.contains("wrong-name.invalid"),
        "{e}"
    );
    assert_eq!(
        encrypted(&with(&wrong, &format!("sslmode=verify-ca&{root}"))),
        Ok(true)
    );
    // require without a root certificate checks neither name nor chain.
    assert_eq!(encrypted(&with(&wrong, "sslmode=require")), Ok(true));
}

#[test]
fn the_store_opens_and_works_over_verify_full() {
    let Some((_, ca)) = setup("the_store_opens_and_works_over_verify_full") else {
        return;
    };
    let scratch = match ScratchSchema::create("tls") {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let url = with(
        &without_ssl_params(&scratch.url()),
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    );
    let store = PgStore::open(&url).unwrap();
    let v = serde_json::json!({"t": "number", "v": 5});
    store.kv_set("k", &v).unwrap();
    assert_eq!(store.kv_get("k").unwrap(), Some(v));
    drop(store);
    let (_dir, foreign) = foreign_ca();
    let bad = with(
        &without_ssl_params(&scratch.url()),
        &format!("sslmode=verify-full&sslrootcert={}", foreign.display()),
    );
    let e = PgStore::open(&bad)
        .err()
        .expect("a foreign CA must be refused");
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
}

/// What a fake server saw first on one connection: `true` when the client
/// opened with an SSLRequest (answered 'N': no TLS here), and whether a
/// plain StartupMessage (protocol 3.0) followed.
fn fake_server_without_tls() -> (u16, std::sync::mpsc::Receiver<(bool, bool)>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
        let word = |s: &mut std::net::TcpStream| {
            let mut b = [0u8; 4];
            s.read_exact(&mut b).ok().map(|_| u32::from_be_bytes(b))
        };
        let (len, code) = (word(&mut s), word(&mut s));
        let asked_tls = len == Some(8) && code == Some(80_877_103);
        let startup_follows = if asked_tls {
            let _ = s.write_all(b"N");
            let _len = word(&mut s);
            word(&mut s) == Some(196_608)
        } else {
            code == Some(196_608)
        };
        let _ = tx.send((asked_tls, startup_follows));
    });
    (port, rx)
}

#[test]
fn prefer_falls_back_to_plain_and_require_refuses_a_server_without_tls() {
    let url = |port: u16, mode: &str| {
        format!("postgres://u:p@127.0.0.1:{port}/db?sslmode={mode}&connect_timeout=5")
    };
    let timeout = std::time::Duration::from_secs(10);
    // prefer: asks for TLS, hears 'N', goes on in plain text.
    let (port, seen) = fake_server_without_tls();
    let e = connect(&url(port, "prefer")).err().unwrap().to_string();
    assert_eq!(seen.recv_timeout(timeout), Ok((true, true)), "{e}");
    // require: asks for TLS, hears 'N', gives up.
    let (port, seen) = fake_server_without_tls();
    let e = connect(&url(port, "require")).err().unwrap().to_string();
    assert_eq!(seen.recv_timeout(timeout), Ok((true, false)));
    assert!(e.contains("TLS"), "{e}");
    // disable: never asks.
    let (port, seen) = fake_server_without_tls();
    let _ = connect(&url(port, "disable"));
    assert_eq!(seen.recv_timeout(timeout), Ok((false, true)));
}
