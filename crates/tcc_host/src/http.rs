//! A minimal blocking HTTP/1.1 client over `TcpStream` (plain `http://`
//! only), used by the CLI clients and the webhook provider. Responses are
//! read to the end of the connection (`Connection: close`); chunked bodies
//! are decoded; bodies above [`MAX_RESPONSE`] are refused.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

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

/// Splits `http://host:port/path` into (`host:port`, `/path`).
pub fn split_url(url: &str) -> Result<(String, String), String> {
    if url
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("https://"))
    {
        return Err(format!(
            "unsupported URL {url:?}: https:// is not supported (this build has no TLS client); use http://, e.g. through a local TLS-terminating proxy"
        ));
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("unsupported URL {url:?}: only http:// is supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(format!("URL {url:?} has no host"));
    }
    let authority = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        || authority.ends_with(']')
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, path.to_string()))
}

/// Sends one request and reads the whole response.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<Response, String> {
    let (authority, path) = split_url(url)?;
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve {authority}"))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (k, v) in headers {
        if k.contains(['\r', '\n']) || v.contains(['\r', '\n']) {
            return Err("header contains a line break".into());
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let body = body.unwrap_or(&[]);
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body))
        .map_err(|e| format!("cannot send to {authority}: {e}"))?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > MAX_RESPONSE {
                    return Err(format!("response larger than {MAX_RESPONSE} bytes"));
                }
            }
            Err(e) => return Err(format!("reading from {authority}: {e}")),
        }
    }
    parse_response(&raw)
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
        assert!(split_url("https://a").is_err());
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
