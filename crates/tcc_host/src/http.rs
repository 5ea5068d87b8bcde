//! A minimal blocking HTTP/1.1 client over `TcpStream`, plain (`http://`)
//! or TLS (`https://`, rustls), used by the CLI clients and the webhook
//! provider. Responses are read to the end of the connection
//! (`Connection: close`); chunked bodies are decoded; bodies above
//! [`MAX_RESPONSE`] are refused.
//!
//! The timeout bounds the whole request: resolving aside, connecting, the
//! TLS handshake, sending and reading the response must all finish within
//! it (every socket operation gets the time that is left).
//!
//! https servers are verified: their certificate chain must lead to a
//! trusted root (Mozilla's roots by default, or the caller's
//! configuration, see [`crate::tls`]) and name the URL's host (a DNS name,
//! or an IP address SAN for an IP host). SNI carries DNS host names (not IP
//! addresses, as RFC 6066 says). There is no insecure mode.

use crate::tls;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

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
    /// The timeout ran out (connecting, TLS handshake, sending or reading).
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

/// A parsed `http://` or `https://` URL.
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

/// Parses an `http://` or `https://` URL. User information (`user@`) is
/// refused.
pub fn parse_url(url: &str) -> Result<Url, String> {
    let scheme_end = url
        .find("://")
        .ok_or_else(|| format!("unsupported URL {url:?}: expected http:// or https://"))?;
    let https = match url[..scheme_end].to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        _ => {
            return Err(format!(
                "unsupported URL {url:?}: only http:// and https:// are supported"
            ));
        }
    };
    let rest = &url[scheme_end + 3..];
    let rest = rest.split('#').next().unwrap_or("");
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    if authority.is_empty() {
        return Err(format!("URL {url:?} has no host"));
    }
    if authority
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!(
            "URL {url:?}: the host contains a space or control character"
        ));
    }
    if authority.contains('@') {
        return Err(format!(
            "URL {url:?}: user information (user@host) is not supported"
        ));
    }
    let default_port = if https { 443 } else { 80 };
    let bad_port = || format!("URL {url:?}: bad port");
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("URL {url:?}: unclosed '[' in the host"))?;
        let port = match after {
            "" => default_port,
            p => p
                .strip_prefix(':')
                .and_then(|p| p.parse::<u16>().ok())
                .ok_or_else(bad_port)?,
        };
        if host.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("URL {url:?}: [{host}] is not an IPv6 address"));
        }
        (host.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse::<u16>().map_err(|_| bad_port())?),
            None => (authority.to_string(), default_port),
        }
    };
    if host.is_empty() || !authority.starts_with('[') && host.contains(['[', ']', ' ', ':']) {
        return Err(format!("URL {url:?}: bad host {host:?}"));
    }
    if path.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "URL {url:?}: the path contains a space or control character"
        ));
    }
    Ok(Url {
        https,
        host,
        port,
        authority: authority.to_string(),
        path,
    })
}

/// Splits `http://host:port/path` (or `https://…`) into (`host:port`,
/// `/path`), with the scheme's default port filled in.
pub fn split_url(url: &str) -> Result<(String, String), String> {
    let u = parse_url(url)?;
    Ok((u.host_port(), u.path))
}

/// The configuration for https URLs when the caller gives none: Mozilla's
/// roots, full verification, ALPN `http/1.1`.
pub fn default_tls() -> Arc<ClientConfig> {
    static C: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    C.get_or_init(|| {
        Arc::new(
            tls::client_config(tls::Verify::Full, tls::mozilla_roots(), &[b"http/1.1"])
                .expect("ring supports the default protocol versions"),
        )
    })
    .clone()
}

/// The configuration for https URLs trusting only the certificates of the
/// PEM file `ca_file` (full verification, ALPN `http/1.1`).
pub fn tls_with_ca_file(ca_file: &std::path::Path) -> Result<Arc<ClientConfig>, String> {
    let roots = tls::load_roots(ca_file)?;
    tls::client_config(tls::Verify::Full, roots, &[b"http/1.1"]).map(Arc::new)
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

/// A socket whose every read and write gets only the time left before
/// `deadline`.
struct DeadlineStream {
    sock: TcpStream,
    deadline: Instant,
}

impl DeadlineStream {
    fn arm(&self, read: bool) -> io::Result<()> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
        }
        if read {
            self.sock.set_read_timeout(Some(left))
        } else {
            self.sock.set_write_timeout(Some(left))
        }
    }
}

impl Read for DeadlineStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.arm(true)?;
        self.sock.read(buf)
    }
}

impl Write for DeadlineStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.arm(false)?;
        self.sock.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

/// Turns an I/O error of `what` (e.g. "reading from") into an [`HttpError`],
/// recognising rustls errors and timeouts.
fn io_error(e: io::Error, what: &str, target: &str, timeout: Duration) -> HttpError {
    if let Some(te) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return if tls::is_certificate_error(te) {
            HttpError::new(
                HttpErrorKind::Certificate,
                format!("TLS certificate of {target} rejected: {te}"),
            )
        } else {
            HttpError::new(
                HttpErrorKind::Tls,
                format!("TLS error {what} {target}: {te}"),
            )
        };
    }
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        HttpError::new(
            HttpErrorKind::Timeout,
            format!("{what} {target}: timed out (timeout {timeout:?})"),
        )
    } else {
        HttpError::new(HttpErrorKind::Io, format!("{what} {target}: {e}"))
    }
}

/// Sends one request and reads the whole response; https URLs use `tls`
/// (or [`default_tls`]).
pub fn request_with(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    timeout: Duration,
    tls: Option<&Arc<ClientConfig>>,
) -> Result<Response, HttpError> {
    let deadline = Instant::now() + timeout;
    let u = parse_url(url).map_err(|m| HttpError::new(HttpErrorKind::Url, m))?;
    let target = u.host_port();
    let mut head = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        u.path, u.authority
    );
    for (k, v) in headers {
        if k.contains(['\r', '\n']) || v.contains(['\r', '\n']) {
            return Err(HttpError::new(
                HttpErrorKind::Url,
                "header contains a line break",
            ));
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.unwrap_or(&[]);
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut message = head.into_bytes();
    message.extend_from_slice(body);

    let addrs: Vec<SocketAddr> = (u.host.as_str(), u.port)
        .to_socket_addrs()
        .map_err(|e| {
            HttpError::new(
                HttpErrorKind::Connect,
                format!("cannot resolve {target}: {e}"),
            )
        })?
        .collect();
    if addrs.is_empty() {
        return Err(HttpError::new(
            HttpErrorKind::Connect,
            format!("cannot resolve {target}"),
        ));
    }
    let mut last = None;
    let mut sock = None;
    for addr in &addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(addr, left) {
            Ok(s) => {
                sock = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let sock = match (sock, last) {
        (Some(s), _) => s,
        (None, Some(e)) if matches!(e.kind(), io::ErrorKind::TimedOut) => {
            return Err(HttpError::new(
                HttpErrorKind::Timeout,
                format!("cannot connect to {target}: timed out (timeout {timeout:?})"),
            ));
        }
        (None, Some(e)) => {
            return Err(HttpError::new(
                HttpErrorKind::Connect,
                format!("cannot connect to {target}: {e}"),
            ));
        }
        (None, None) => {
            return Err(HttpError::new(
                HttpErrorKind::Timeout,
                format!("cannot connect to {target}: timed out (timeout {timeout:?})"),
            ));
        }
    };
    let _ = sock.set_nodelay(true);
    let mut stream = DeadlineStream { sock, deadline };
    if !u.https {
        return exchange(&mut stream, &message, false, &target, timeout);
    }
    let config = tls.cloned().unwrap_or_else(default_tls);
    let name = ServerName::try_from(u.host.clone()).map_err(|e| {
        HttpError::new(
            HttpErrorKind::Url,
            format!(
                "URL {url:?}: {:?} is not a valid TLS server name: {e}",
                u.host
            ),
        )
    })?;
    let mut conn = rustls::ClientConnection::new(config, name)
        .map_err(|e| HttpError::new(HttpErrorKind::Tls, format!("TLS setup for {target}: {e}")))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut stream)
            .map_err(|e| io_error(e, "in the TLS handshake with", &target, timeout))?;
    }
    let mut tls_stream = rustls::StreamOwned::new(conn, stream);
    exchange(&mut tls_stream, &message, true, &target, timeout)
}

/// Writes `message` and reads the response until the connection ends.
fn exchange(
    s: &mut (impl Read + Write),
    message: &[u8],
    tls: bool,
    target: &str,
    timeout: Duration,
) -> Result<Response, HttpError> {
    s.write_all(message)
        .and_then(|_| s.flush())
        .map_err(|e| io_error(e, "cannot send to", target, timeout))?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > MAX_RESPONSE {
                    return Err(HttpError::new(
                        HttpErrorKind::Protocol,
                        format!("response from {target} larger than {MAX_RESPONSE} bytes"),
                    ));
                }
            }
            // A TLS peer that closes the TCP connection without
            // `close_notify`: fine when the response says where it ends and
            // is all there, otherwise it may have been cut short.
            Err(e) if tls && e.kind() == io::ErrorKind::UnexpectedEof => {
                if is_complete(&raw) {
                    break;
                }
                return Err(HttpError::new(
                    HttpErrorKind::Tls,
                    format!(
                        "reading from {target}: the connection closed without TLS close_notify before the response was complete"
                    ),
                ));
            }
            Err(e) => return Err(io_error(e, "reading from", target, timeout)),
        }
    }
    parse_response(&raw)
        .map_err(|m| HttpError::new(HttpErrorKind::Protocol, format!("{target}: {m}")))
}

/// Whether `raw` holds a whole response whose end is known from its
/// `Content-Length` or its chunked encoding.
fn is_complete(raw: &[u8]) -> bool {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let Ok(head) = std::str::from_utf8(&raw[..end]) else {
        return false;
    };
    let body = &raw[end + 4..];
    let mut length = None;
    for line in head.split("\r\n").skip(1) {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked") {
            return dechunk(body).is_ok();
        }
        if k.eq_ignore_ascii_case("content-length") {
            length = v.parse::<usize>().ok();
        }
    }
    length.is_some_and(|n| body.len() >= n)
}

fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("malformed HTTP response (no header end)")?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| "non-UTF-8 response header")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("malformed status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    } else if let Some(len) = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
    {
        body.truncate(len);
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let nl = b
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("malformed chunked body")?;
        let size_text = std::str::from_utf8(&b[..nl]).map_err(|_| "malformed chunk size")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| "malformed chunk size")?;
        b = &b[nl + 2..];
        if size == 0 {
            return Ok(out);
        }
        if size.checked_add(2).is_none_or(|n| b.len() < n) {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
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
    fn arbitrary_bytes_never_panic() {
        // A deterministic xorshift stream of byte strings, with and without a header end.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..2000 {
            let mut b = Vec::new();
            let len = (round % 64) as usize;
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.push(
                    b"HTP/1. 20\r\n:chunkedTransfer-Encoding0123456789abcdef;"[(x % 52) as usize],
                );
            }
            let _ = parse_response(&b);
            let mut with_end = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            with_end.extend_from_slice(&b);
            let _ = parse_response(&with_end);
            let _ = dechunk(&b);
        }
    }

    #[test]
    fn responses() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokextra").unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
        let r = parse_response(
            b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.body, b"abc");
        assert!(parse_response(b"garbage").is_err());
    }
}
