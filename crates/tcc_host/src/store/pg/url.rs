//! The `--database` URL of the PostgreSQL backend: `schema`, libpq's
//! `sslmode` / `sslrootcert` (docs/tcc/host.md, section TLS), and opening
//! a connection with them.

use crate::store::{DbError, StoreError};
use postgres::config::SslMode;
use postgres::{Client, Config, NoTls};
use std::sync::Arc;

/// Parsed `--database` URL: connection config plus the optional schema.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) config: Config,
    pub(crate) schema: Option<String>,
    pub(crate) tls: PgTls,
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslModeParam {
    /// Plain connections only.
    Disable,
    /// TLS when the server offers it, else plain (the default).
    Prefer,
    /// TLS, the certificate not checked unless `sslrootcert` is given.
    Require,
    /// TLS, the chain checked against `sslrootcert`, not the host name.
    VerifyCa,
    /// TLS, chain and host name checked.
    VerifyFull,
}

impl SslModeParam {
    /// The libpq name.
    pub fn name(self) -> &'static str {
        match self {
            SslModeParam::Disable => "disable",
            SslModeParam::Prefer => "prefer",
            SslModeParam::Require => "require",
            SslModeParam::VerifyCa => "verify-ca",
            SslModeParam::VerifyFull => "verify-full",
        }
    }

    fn parse(s: &str) -> Result<SslModeParam, StoreError> {
        Ok(match s {
            "disable" => SslModeParam::Disable,
            "prefer" => SslModeParam::Prefer,
            "require" => SslModeParam::Require,
            "verify-ca" => SslModeParam::VerifyCa,
            "verify-full" => SslModeParam::VerifyFull,
            "allow" => {
                return Err(StoreError::db(
                    "sslmode=allow is not supported (use disable, prefer, require, verify-ca or verify-full)",
                ));
            }
            other => {
                return Err(StoreError::db(format!(
                    "unknown sslmode {other:?} (use disable, prefer, require, verify-ca or verify-full)"
                )));
            }
        })
    }
}

/// How connections of a [`Target`] negotiate TLS.
#[derive(Clone)]
pub(crate) struct PgTls {
    /// The `sslmode` in force.
    pub(crate) mode: SslModeParam,
    /// The rustls configuration (`None` for `disable`).
    pub(crate) config: Option<Arc<rustls::ClientConfig>>,
}

impl PgTls {
    /// Builds the TLS side of `sslmode`/`sslrootcert` as libpq reads them:
    /// `prefer` and `require` encrypt without checking the certificate,
    /// unless a root certificate is given, in which case they check the
    /// chain like `verify-ca`; `verify-ca` checks the chain, `verify-full`
    /// the chain and the host name. The roots are `sslrootcert` (a PEM
    /// file; `system`: Mozilla's roots, which like libpq makes
    /// `verify-full` the default and refuses weaker modes), else
    /// `~/.postgresql/root.crt` when it exists, which
    /// `verify-ca`/`verify-full` require. `mode`: as given in the URL.
    fn new(mode: Option<SslModeParam>, rootcert: Option<&str>) -> Result<PgTls, StoreError> {
        use crate::tls::{Verify, client_config, load_roots, mozilla_roots};
        let err = |e: String| StoreError::db(format!("PostgreSQL TLS: {e}"));
        if rootcert == Some("system") {
            match mode {
                None | Some(SslModeParam::VerifyFull) => {}
                Some(m) => {
                    return Err(err(format!(
                        "sslrootcert=system needs sslmode=verify-full (not {})",
                        m.name()
                    )));
                }
            }
        }
        let mode = match (mode, rootcert) {
            (Some(m), _) => m,
            (None, Some("system")) => SslModeParam::VerifyFull,
            (None, _) => SslModeParam::Prefer,
        };
        if mode == SslModeParam::Disable {
            return Ok(PgTls { mode, config: None });
        }
        let roots = match rootcert {
            Some("system") => Some(mozilla_roots()),
            Some(path) => Some(load_roots(std::path::Path::new(path)).map_err(err)?),
            None => match std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"))
                .filter(|p| p.is_file())
            {
                Some(p) => Some(load_roots(&p).map_err(err)?),
                None => None,
            },
        };
        let verify = match (mode, &roots) {
            (SslModeParam::VerifyFull, Some(_)) => Verify::Full,
            (SslModeParam::VerifyCa, Some(_)) => Verify::ChainOnly,
            (SslModeParam::VerifyFull | SslModeParam::VerifyCa, None) => {
                return Err(err(
                    "sslmode=verify-ca and verify-full need a root certificate: add sslrootcert=PATH (a PEM file) or sslrootcert=system, or create ~/.postgresql/root.crt".into(),
                ));
            }
            (_, Some(_)) => Verify::ChainOnly,
            (_, None) => Verify::EncryptOnly,
        };
        let roots = roots.unwrap_or_else(rustls::RootCertStore::empty);
        let config = client_config(verify, roots, &[b"postgresql"]).map_err(err)?;
        Ok(PgTls {
            mode,
            config: Some(Arc::new(config)),
        })
    }
}

pub(crate) fn parse_url(url: &str) -> Result<Target, StoreError> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut schema = None;
    let mut sslmode = None;
    let mut rootcert = None;
    let mut rest = Vec::new();
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        match pair.split_once('=') {
            Some(("schema", s)) => {
                if s.is_empty()
                    || s.len() > 63
                    || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    || s.as_bytes()[0].is_ascii_digit()
                {
                    return Err(StoreError::db(format!(
                        "schema {s:?}: use 1 to 63 letters, digits or '_', not starting with a digit"
                    )));
                }
                schema = Some(s.to_ascii_lowercase());
            }
            Some(("sslmode", m)) => sslmode = Some(SslModeParam::parse(&percent_decode(m)?)?),
            Some(("sslrootcert", p)) => rootcert = Some(percent_decode(p)?),
            Some((k @ ("sslcert" | "sslkey" | "sslpassword" | "sslcrl" | "sslcrldir"), _)) => {
                return Err(StoreError::db(format!(
                    "PostgreSQL URL parameter {k} is not supported (no client certificates or CRLs)"
                )));
            }
            _ if !pair.is_empty() => rest.push(pair),
            _ => {}
        }
    }
    let cleaned = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    let mut config: Config = cleaned
        .parse()
        .map_err(|e| StoreError::db(format!("bad PostgreSQL URL: {e}")))?;
    config.connect_timeout(std::time::Duration::from_secs(10));
    if config.get_application_name().is_none() {
        config.application_name("irkit-tcc");
    }
    if let Some(s) = &schema {
        config.options(&format!("-c search_path={s}"));
    }
    let tls = PgTls::new(sslmode, rootcert.as_deref())?;
    config.ssl_mode(match tls.mode {
        SslModeParam::Disable => SslMode::Disable,
        SslModeParam::Prefer => SslMode::Prefer,
        _ => SslMode::Require,
    });
    Ok(Target {
        config,
        schema,
        tls,
    })
}

/// Decodes `%XX` escapes of a URL query value.
fn percent_decode(s: &str) -> Result<String, StoreError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    StoreError::db(format!("bad %-escape in PostgreSQL URL value {s:?}"))
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| StoreError::db(format!("PostgreSQL URL value {s:?} is not UTF-8")))
}

/// Opens one connection to `url` exactly as the store does (`sslmode`,
/// `sslrootcert`, `schema` as search path): for diagnostics and tests.
pub fn connect(url: &str) -> Result<Client, StoreError> {
    parse_url(url)?.connect()
}

/// Checks a `postgres://` URL (and its `schema`) without connecting.
pub fn check_url(url: &str) -> Result<(), StoreError> {
    parse_url(url).map(|_| ())
}

impl Target {
    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        let r = match &self.tls.config {
            None => self.config.connect(NoTls),
            Some(c) => self
                .config
                .connect(tokio_postgres_rustls::MakeRustlsConnect::new((**c).clone())),
        };
        r.map_err(|e| {
            // The chain of causes: a TLS failure's reason (e.g. "invalid
            // peer certificate: UnknownIssuer") is only in the sources.
            let mut message = match e.as_db_error() {
                Some(db) => format!("{} ({})", db.message(), db.code().code()),
                None => e.to_string(),
            };
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                let text = c.to_string();
                if !message.contains(&text) {
                    message = format!("{message}: {text}");
                }
                cause = c.source();
            }
            let hint = match self.tls.mode {
                _ if !message.contains("TLS") => String::new(),
                SslModeParam::Disable => String::new(),
                m => format!(" (sslmode={})", m.name()),
            };
            StoreError::Db(DbError::with_source(
                format!("cannot connect to PostgreSQL: {message}{hint}"),
                e,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_a_schema_are_parsed() {
        let t = parse_url("postgres://u:p@127.0.0.1:5432/db?schema=Tcc_1&sslmode=disable").unwrap();
        assert_eq!(t.schema.as_deref(), Some("tcc_1"));
        assert_eq!(t.config.get_dbname(), Some("db"));
        assert_eq!(t.config.get_options(), Some("-c search_path=tcc_1"));
        assert!(parse_url("postgres://u@h/db?schema=a;drop").is_err());
        assert!(parse_url("postgres://u@h/db?schema=1a").is_err());
        assert!(parse_url("postgres://u@h/db?schema=").is_err());
        let t = parse_url("postgresql://u@h/db").unwrap();
        assert_eq!(t.schema, None);
        assert!(parse_url("postgres://u@h/db?bogus=1").is_err());
    }

    #[test]
    fn sslmode_and_sslrootcert_are_read_like_libpq() {
        let mode = |url: &str| {
            let t = parse_url(url).unwrap();
            (t.tls.mode, t.config.get_ssl_mode(), t.tls.config.is_some())
        };
        assert_eq!(
            mode("postgres://u@h/db?sslmode=disable"),
            (SslModeParam::Disable, SslMode::Disable, false)
        );
        assert_eq!(
            mode("postgres://u@h/db?sslmode=require"),
            (SslModeParam::Require, SslMode::Require, true)
        );
        let home_root = std::env::var_os("HOME")
            .map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"))
            .is_some_and(|p| p.is_file());
        if !home_root {
            // libpq's default is prefer; no root certificate: encrypt only.
            assert_eq!(
                mode("postgres://u@h/db"),
                (SslModeParam::Prefer, SslMode::Prefer, true)
            );
            for m in ["verify-ca", "verify-full"] {
                let e = parse_url(&format!("postgres://u@h/db?sslmode={m}"))
                    .err()
                    .unwrap()
                    .to_string();
                assert!(e.contains("sslrootcert"), "{e}");
            }
        }
        // sslrootcert=system: Mozilla's roots, verify-full by default, and
        // (like libpq) no weaker mode.
        assert_eq!(
            mode("postgres://u@h/db?sslrootcert=system"),
            (SslModeParam::VerifyFull, SslMode::Require, true)
        );
        assert_eq!(
            mode("postgres://u@h/db?sslmode=verify-full&sslrootcert=system"),
            (SslModeParam::VerifyFull, SslMode::Require, true)
        );
        let e = parse_url("postgres://u@h/db?sslmode=require&sslrootcert=system")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("needs sslmode=verify-full"), "{e}");
        let e = parse_url("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
        for bad in [
            "postgres://u@h/db?sslmode=allow",
            "postgres://u@h/db?sslmode=verify_full",
            "postgres://u@h/db?sslcert=c.pem",
            "postgres://u@h/db?sslkey=k.pem",
            "postgres://u@h/db?sslrootcert=%zz",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_decode("/a%20b/c.pem").unwrap(), "/a b/c.pem");
    }
}
