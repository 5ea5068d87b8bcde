//! Request admission and connection limits of the playground server
//! (issue 42, F2 and F5), so that a web page of another site cannot use
//! it and a stalled client cannot hold it:
//!
//! - `Host` must be an IP address literal or a loopback name
//!   (`localhost`, `*.localhost`): a DNS-rebinding page reaches the port
//!   under its own name and is refused (403);
//! - an `Origin`, when a browser sends one, must be the server itself
//!   (403 otherwise, `null` included);
//! - a `POST` must carry `Content-Type: application/json` (415): a page
//!   can send a cross-origin `POST` without a CORS preflight only as a form
//!   or as `text/plain`;
//! - a request must be answered within [`REQUEST_TIMEOUT`] (503), its
//!   headers must arrive within [`HEADER_TIMEOUT`] (also the longest a
//!   keep-alive connection stays idle), and at most [`MAX_CONNECTIONS`]
//!   connections are served at once.
//!
//! The same rules as `irkit tcc serve` (docs/tcc/host.md, "Browsers").

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// Longest a request may take to be answered.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait for a request's line and headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 256;

fn refuse(status: StatusCode, code: &str, message: String) -> Response {
    let error = serde_json::json!({"error": {"code": code, "message": message}});
    (status, axum::Json(error)).into_response()
}

/// The host part of an authority (`host[:port]`, `[v6][:port]`).
fn host_name(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => a,
    }
}

/// Whether `authority` names this server: an IP literal or a loopback name.
pub fn host_admitted(authority: &str) -> bool {
    let name = host_name(authority).to_ascii_lowercase();
    name.parse::<std::net::IpAddr>().is_ok() || name == "localhost" || name.ends_with(".localhost")
}

/// Why a request is refused, if it is.
pub fn refusal(method: &Method, headers: &HeaderMap) -> Option<(StatusCode, &'static str, String)> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if let Some(h) = host
        && !host_admitted(h)
    {
        return Some((
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("Host {h:?} is not a loopback name or an IP address"),
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        let authority = text
            .strip_prefix("http://")
            .or_else(|| text.strip_prefix("https://"));
        let same =
            matches!((authority, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h.trim()));
        if !same {
            return Some((
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("requests from origin {text:?} are not accepted"),
            ));
        }
    }
    if method == Method::POST {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let essence = ct.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Some((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                format!("a POST needs Content-Type: application/json (got {ct:?})"),
            ));
        }
    }
    None
}

/// The middleware: admission, then the request under [`REQUEST_TIMEOUT`].
pub async fn guard(req: Request, next: Next) -> Response {
    if let Some((status, code, message)) = refusal(req.method(), req.headers()) {
        return refuse(status, code, message);
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(r) => r,
        Err(_) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!("the request took longer than {REQUEST_TIMEOUT:?}"),
        ),
    }
}

/// Serves `app` on `listener`: HTTP/1.1 with the header-read timeout and
/// at most [`MAX_CONNECTIONS`] connections (more wait to be accepted).
pub async fn serve(listener: tokio::net::TcpListener, app: axum::Router) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return Ok(());
        };
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn check(method: Method, pairs: &[(header::HeaderName, &str)]) -> Option<StatusCode> {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        refusal(&method, &h).map(|r| r.0)
    }

    #[test]
    fn pages_of_other_sites_are_refused() {
        let host = (header::HOST, "127.0.0.1:8000");
        let json = (header::CONTENT_TYPE, "application/json");
        assert_eq!(check(Method::POST, &[host.clone(), json.clone()]), None);
        assert_eq!(
            check(Method::GET, &[(header::HOST, "localhost:8000")]),
            None
        );
        assert_eq!(
            check(Method::GET, &[(header::HOST, "evil.example:8000")]),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(
                Method::POST,
                &[
                    host.clone(),
                    json.clone(),
                    (header::ORIGIN, "http://evil.example")
                ]
            ),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            check(
                Method::POST,
                &[
                    host.clone(),
                    json,
                    (header::ORIGIN, "http://127.0.0.1:8000")
                ]
            ),
            None
        );
        assert_eq!(
            check(
                Method::POST,
                &[host.clone(), (header::CONTENT_TYPE, "text/plain")]
            ),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(
            check(Method::POST, &[host]),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
    }
}
