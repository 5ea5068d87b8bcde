//! The HTTP client of the CLI commands and the webhook provider: `ureq`
//! over rustls (the `ring` provider, no native TLS), with the rules this
//! crate keeps on top of it:
//!
//! - the timeout bounds the whole request (resolving, connecting, the TLS
//!   handshake, sending and reading the response: ureq's global timeout);
//! - https servers are verified: their chain must lead to a trusted root
//!   (Mozilla's, compiled in, or the certificates of a CA file) and name
//!   the URL's host (DNS name, or IP address SAN for an IP host); SNI
//!   carries DNS host names only. There is no insecure mode;
//! - redirects are not followed, proxies from the environment are not
//!   used, HTTP error statuses are answers (not errors), bodies above
//!   [`MAX_RESPONSE`] are refused;
//! - a response cut short by a peer that closed a TLS connection without
//!   `close_notify` is an error; one that is complete is accepted;
//! - nothing is retried here: callers retry by [`HttpError::retryable`].

use crate::tls;
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use ureq::http;
use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};

/// Largest response accepted.
pub const MAX_RESPONSE: usize = 64 << 20;

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header (lowercase name, value) pairs.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

/// What went wrong with a request (see [`HttpError::retryable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpErrorKind {
    /// The URL is not a usable `http://` or `https://` URL.
    Url,
    /// Name resolution or TCP connection failed.
    Connect,
    /// The whole-request timeout ran out.
    Timeout,
    /// The server's certificate was rejected (untrusted issuer, wrong
    /// name, expired, …).
    Certificate,
    /// Another TLS failure (handshake alert, protocol error, missing
    /// `close_notify` before the response was complete).
    Tls,
    /// The connection failed while sending or reading.
    Io,
    /// The response is not valid HTTP or is too large.
    Protocol,
}

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HttpError {
    /// The kind.
    pub kind: HttpErrorKind,
    /// A human-readable description naming the server.
    pub message: String,
}

impl HttpError {
    fn new(kind: HttpErrorKind, message: impl Into<String>) -> HttpError {
        HttpError {
            kind,
            message: message.into(),
        }
    }

    /// Whether trying again may help: not for a bad URL and not for a
    /// rejected certificate (a configuration problem, or an attack, that
    /// retrying cannot fix); yes for everything else (network trouble,
    /// timeouts, handshake failures, garbled answers).
    pub fn retryable(&self) -> bool {
        !matches!(self.kind, HttpErrorKind::Url | HttpErrorKind::Certificate)
    }
}

/// A checked `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `https://`.
    pub https: bool,
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// Port (default 80, or 443 for https).
    pub port: u16,
    /// The authority as written (the `Host` header).
    pub authority: String,
    /// Path and query (`/` when empty); the fragment is dropped.
    pub path: String,
    /// The URL as sent (fragment dropped).
    uri: http::Uri,
}

impl Url {
    /// `host:port` (`[v6]:port` for IPv6), for connecting and messages.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Parses an `http://` or `https://` URL (the `http` crate's URI parser,
/// which refuses spaces and control characters). User information
/// (`user@`) is refused.
pub fn parse_url(url: &str) -> Result<Url, String> {
    let without_fragment = url.split('#').next().unwrap_or("");
    let uri: http::Uri = without_fragment
        .parse()
        .map_err(|e| format!("unsupported URL {url:?}: {e}"))?;
    let https = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
        Some("http") => false,
        Some("https") => true,
        _ => {
            return Err(format!(
                "unsupported URL {url:?}: only http:// and https:// are supported"
            ));
        }
    };
    let authority = uri
        .authority()
        .ok_or_else(|| format!("URL {url:?} has no host"))?;
    if authority.as_str().contains('@') {
        return Err(format!(
            "URL {url:?}: user information (user@host) is not supported"
        ));
    }
    let host_text = authority.host();
    // The `http` crate drops a port that is not a number below 65536;
    // read it from the text after the host instead.
    // (The authority holds no user information, so it starts with the host.)
    let port_text = authority.as_str().get(host_text.len()..).unwrap_or("");
    let host = match host_text.strip_prefix('[') {
        Some(v6) => {
            let v6 = v6
                .strip_suffix(']')
                .ok_or_else(|| format!("URL {url:?}: unclosed '[' in the host"))?;
            if v6.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(format!("URL {url:?}: [{v6}] is not an IPv6 address"));
            }
            v6.to_string()
        }
        None if host_text.is_empty() || host_text.contains([':', '[', ']']) => {
            return Err(format!("URL {url:?}: bad host {host_text:?}"));
        }
        None => host_text.to_string(),
    };
    let port = match port_text {
        "" => {
            if https {
                443
            } else {
                80
            }
        }
        p => p
            .strip_prefix(':')
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| format!("URL {url:?}: bad port"))?,
    };
    let path = uri
        .path_and_query()
        .map(|p| p.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    Ok(Url {
        https,
        host,
        port,
        authority: authority.as_str().to_string(),
        path,
        uri,
    })
}

/// Splits `http://host:port/path` (or `https://…`) into (`host:port`,
/// `/path`), with the scheme's default port filled in.
pub fn split_url(url: &str) -> Result<(String, String), String> {
    let u = parse_url(url)?;
    Ok((u.host_port(), u.path))
}

/// How long an idle connection stays in a client's pool.
pub const POOL_IDLE: std::time::Duration = std::time::Duration::from_secs(4);

/// A client: a `ureq` agent (connection pool included) with its trusted
/// roots. Cheap to share.
pub struct Tls {
    agent: ureq::Agent,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

fn agent(roots: RootCerts) -> ureq::Agent {
    let tls = TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(tls::provider())
        .root_certs(roots)
        .build();
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            // Under the service's header-read timeout (10 s by default),
            // which also closes an idle keep-alive connection: a pooled
            // connection older than that may already be closed.
            .max_idle_age(POOL_IDLE)
            .tls_config(tls)
            .build(),
    )
}

/// The client for https URLs when the caller gives none: Mozilla's roots,
/// full verification.
pub fn default_tls() -> Arc<Tls> {
    static C: OnceLock<Arc<Tls>> = OnceLock::new();
    C.get_or_init(|| {
        Arc::new(Tls {
            agent: agent(RootCerts::WebPki),
        })
    })
    .clone()
}

/// The client for https URLs trusting only the certificates of the PEM
/// file `ca_file` (full verification). The file is checked by
/// [`tls::load_roots`]: every certificate in it must be a usable CA.
pub fn tls_with_ca_file(ca_file: &std::path::Path) -> Result<Arc<Tls>, String> {
    tls::load_roots(ca_file)?;
    let bytes =
        std::fs::read(ca_file).map_err(|e| format!("CA file {}: {e}", ca_file.display()))?;
    let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(&bytes)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| format!("CA file {}: not valid PEM: {e}", ca_file.display()))?;
    Ok(Arc::new(Tls {
        agent: agent(RootCerts::Specific(Arc::new(certs))),
    }))
}

/// Sends one request and reads the whole response (https with
/// [`default_tls`]).
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, String> {
    request_with(method, url, headers, body, timeout, None).map_err(|e| e.message)
}

/// Sends one request and reads the whole response within `timeout`;
/// https URLs are verified by `tls` (or [`default_tls`]).
pub fn request_with(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    timeout: Duration,
    tls: Option<&Arc<Tls>>,
) -> Result<Response, HttpError> {
    let u = parse_url(url).map_err(|m| HttpError::new(HttpErrorKind::Url, m))?;
    let target = u.host_port();
    let bad = |m: String| HttpError::new(HttpErrorKind::Url, m);
    let method =
        http::Method::from_bytes(method.as_bytes()).map_err(|e| bad(format!("method: {e}")))?;
    let mut builder = http::Request::builder().method(method).uri(u.uri.clone());
    for (k, v) in headers {
        if k.contains(['\r', '\n']) || v.contains(['\r', '\n']) {
            return Err(bad("header contains a line break".into()));
        }
        builder = builder.header(*k, *v);
    }
    let default;
    let client = match tls {
        Some(t) => t,
        None => {
            default = default_tls();
            &default
        }
    };
    let body = body.unwrap_or(&[]);
    let request = builder
        .body(body)
        .map_err(|e| bad(format!("request to {target}: {e}")))?;
    let request = client
        .agent
        .configure_request(request)
        .timeout_global(Some(timeout))
        .build();
    let classify = |e: ureq::Error| classify(e, &target, u.https, timeout);
    let mut resp = client.agent.run(request).map_err(classify)?;
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = resp
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE as u64)
        .read_to_vec()
        .map_err(classify)?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// The message of a request whose deadline ran out (ureq reports the
/// whole-request deadline, not the phase it was in).
fn timed_out(target: &str, timeout: Duration) -> String {
    format!(
        "request to {target} timed out: no complete answer within {timeout:?} (one deadline for connecting, the TLS handshake, sending and reading)"
    )
}

/// Turns a ureq error into an [`HttpError`], recognising rustls errors
/// (certificate or other), timeouts and TLS connections cut short.
fn classify(e: ureq::Error, target: &str, https: bool, timeout: Duration) -> HttpError {
    use HttpErrorKind as K;
    let tls_error = |te: &rustls::Error| {
        if tls::is_certificate_error(te) {
            HttpError::new(
                K::Certificate,
                format!("TLS certificate of {target} rejected: {te}"),
            )
        } else {
            HttpError::new(K::Tls, format!("TLS error with {target}: {te}"))
        }
    };
    match e {
        ureq::Error::Timeout(_) => HttpError::new(K::Timeout, timed_out(target, timeout)),
        ureq::Error::HostNotFound => HttpError::new(K::Connect, format!("cannot resolve {target}")),
        ureq::Error::ConnectionFailed => {
            HttpError::new(K::Connect, format!("cannot connect to {target}"))
        }
        ureq::Error::Rustls(te) => tls_error(&te),
        ureq::Error::Io(io) => {
            if let Some(te) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return tls_error(te);
            }
            match io.kind() {
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                    HttpError::new(K::Timeout, timed_out(target, timeout))
                }
                io::ErrorKind::ConnectionRefused => {
                    HttpError::new(K::Connect, format!("cannot connect to {target}: {io}"))
                }
                // A body shorter than announced: the peer closed the
                // connection early (on TLS, without or before
                // `close_notify`).
                io::ErrorKind::UnexpectedEof if https => HttpError::new(
                    K::Tls,
                    format!(
                        "reading from {target}: the connection closed before the response was complete (no TLS close_notify before its end)"
                    ),
                ),
                io::ErrorKind::UnexpectedEof => HttpError::new(
                    K::Io,
                    format!(
                        "reading from {target}: the connection closed before the response was complete"
                    ),
                ),
                _ => HttpError::new(K::Io, format!("{target}: {io}")),
            }
        }
        ureq::Error::Tls(m) => HttpError::new(K::Tls, format!("TLS error with {target}: {m}")),
        ureq::Error::BadUri(m) => HttpError::new(K::Url, format!("URL for {target}: {m}")),
        ureq::Error::Http(e) => HttpError::new(K::Url, format!("request to {target}: {e}")),
        ureq::Error::BodyExceedsLimit(_) => HttpError::new(
            K::Protocol,
            format!("response from {target} larger than {MAX_RESPONSE} bytes"),
        ),
        ureq::Error::Protocol(p) => HttpError::new(K::Protocol, format!("{target}: {p}")),
        other => HttpError::new(K::Io, format!("{target}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            split_url("http://127.0.0.1:80/x/y").unwrap(),
            ("127.0.0.1:80".into(), "/x/y".into())
        );
        assert_eq!(
            split_url("http://localhost").unwrap(),
            ("localhost:80".into(), "/".into())
        );
        assert_eq!(
            split_url("HTTPS://example.org?q=1#frag").unwrap(),
            ("example.org:443".into(), "/?q=1".into())
        );
        assert_eq!(
            split_url("https://[::1]:8443/h").unwrap(),
            ("[::1]:8443".into(), "/h".into())
        );
        let u = parse_url("https://[::1]/h").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.https), ("::1", 443, true));
        assert_eq!(u.authority, "[::1]");
        let u = parse_url("http://a.example:8080").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.https),
            ("a.example", 8080, false)
        );
        for bad in [
            "ftp://a",
            "a.example/x",
            "https://",
            "https://u:p@a/",
            "http://a:99999/",
            "http://a:x/",
            "http://[::1/",
            "http://[::1]x/",
            "http://[a[b]/",
            "http://[]/",
            "http://a b/",
            "http://a\r\nX-Injected: 1/",
            "http://a/\r\nX-Injected: 1",
            "http://a/b c",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nothing_listening_is_a_retryable_connect_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = request_with(
            "GET",
            &format!("http://127.0.0.1:{port}/"),
            &[],
            None,
            Duration::from_secs(5),
            None,
        )
        .unwrap_err();
        assert_eq!(e.kind, HttpErrorKind::Connect, "{}", e.message);
        assert!(e.retryable());
        let e =
            request_with("GET", "ftp://x/", &[], None, Duration::from_secs(1), None).unwrap_err();
        assert_eq!(e.kind, HttpErrorKind::Url);
        assert!(!e.retryable());
    }
}
