//! Request admission (issue 42, F2): what a request must show before any
//! route, the bearer token included, looks at it, so that a web page in a
//! browser on the same machine cannot drive the service.
//!
//! - `Host` names this service: an IP address literal, a loopback name
//!   (`localhost`, `*.localhost`) or a name given with `--allowed-host`.
//!   A DNS-rebinding page reaches a loopback port under its own domain
//!   name, which fails this. Checked when no bearer token is configured:
//!   with a token, the token is the credential and a page cannot send it.
//! - `Origin`, when a browser sends one, is this service itself: its
//!   host and port are the request's `Host` (or an allowed name). A page
//!   of any other origin, `null` included, is refused.
//! - A `POST` carries `Content-Type: application/json`. A page can send a
//!   cross-origin `POST` without asking first only as a form or with a
//!   `text/plain` body; `application/json` needs a CORS preflight, which
//!   this service never grants.
//!
//! The threat model is in docs/tcc/host.md ("Browsers").

use axum::http::{HeaderMap, Method, Uri, header};

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `Host` is not this service's name.
    #[error("Host {0:?} is not a loopback name, an IP address or an allowed host (--allowed-host)")]
    Host(String),
    /// `Origin` is another site.
    #[error("requests from origin {0:?} are not accepted")]
    Origin(String),
    /// A `POST` without a JSON content type.
    #[error("a POST needs Content-Type: application/json (got {0:?})")]
    ContentType(String),
}

/// The names a request's `Host` may carry besides IP literals and
/// loopback names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// Names from `--allowed-host` (case-insensitive; a port is ignored).
    pub fn new(names: impl IntoIterator<Item = String>) -> AllowedHosts {
        AllowedHosts(
            names
                .into_iter()
                .map(|n| host_name(&n).to_ascii_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        )
    }

    /// Whether `host` (a `Host` value, port allowed) names this service.
    pub fn admits(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        is_ip_literal(&name)
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.0.contains(&name)
    }
}

/// The host part of a `Host` value or an origin's authority: without the
/// port, an IPv6 literal without its brackets.
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

fn is_ip_literal(name: &str) -> bool {
    name.parse::<std::net::IpAddr>().is_ok()
}

/// The authority a request names: its `Host` header, or for HTTP/2 the
/// URI's authority.
fn request_authority<'a>(headers: &'a HeaderMap, uri: &'a Uri) -> Option<&'a str> {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| uri.authority().map(|a| a.as_str()))
}

/// Checks a request's `Host`, `Origin` and (for a `POST`) `Content-Type`.
/// `check_host` is false when a bearer token guards the service.
pub fn admit(
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    allowed: &AllowedHosts,
    check_host: bool,
) -> Result<(), Refusal> {
    let authority = request_authority(headers, uri);
    if check_host
        && let Some(a) = authority
        && !allowed.admits(a)
    {
        return Err(Refusal::Host(a.to_string()));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
        let origin_authority = text
            .strip_prefix("http://")
            .or_else(|| text.strip_prefix("https://"))
            .filter(|a| !a.is_empty() && !a.contains('/'));
        let same = match (origin_authority, authority) {
            (Some(o), Some(a)) => o.eq_ignore_ascii_case(a.trim()),
            _ => false,
        };
        let allowed_name = origin_authority.is_some_and(|o| {
            let name = host_name(o).to_ascii_lowercase();
            allowed.0.contains(&name)
        });
        if !same && !allowed_name {
            return Err(Refusal::Origin(text));
        }
    }
    if method == Method::POST {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let essence = ct.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return Err(Refusal::ContentType(ct));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn check(method: Method, pairs: &[(header::HeaderName, &str)]) -> Result<(), Refusal> {
        let allowed = AllowedHosts::new(["tcc.internal".to_string()]);
        admit(
            &method,
            &Uri::from_static("/v1/executions"),
            &headers(pairs),
            &allowed,
            true,
        )
    }

    #[test]
    fn hosts_are_ip_literals_loopback_names_or_allowed_names() {
        for ok in [
            "127.0.0.1:7420",
            "[::1]:7420",
            "localhost:1",
            "LOCALHOST",
            "a.localhost:2",
            "tcc.internal:7420",
            "10.0.0.5",
        ] {
            assert_eq!(check(Method::GET, &[(header::HOST, ok)]), Ok(()), "{ok}");
        }
        for bad in [
            "attacker.example",
            "attacker.example:7420",
            "localhost.attacker.example",
            "127.0.0.1.nip.io",
        ] {
            assert!(
                matches!(
                    check(Method::GET, &[(header::HOST, bad)]),
                    Err(Refusal::Host(_))
                ),
                "{bad}"
            );
        }
        // With a token the host is not checked.
        let h = headers(&[(header::HOST, "attacker.example")]);
        assert_eq!(
            admit(
                &Method::GET,
                &Uri::from_static("/"),
                &h,
                &AllowedHosts::default(),
                false
            ),
            Ok(())
        );
    }

    #[test]
    fn origins_must_be_the_service_itself() {
        let same = [
            (header::HOST, "127.0.0.1:7420"),
            (header::ORIGIN, "http://127.0.0.1:7420"),
        ];
        assert_eq!(check(Method::GET, &same), Ok(()));
        for bad in [
            "http://attacker.example",
            "null",
            "http://127.0.0.1:8000",
            "file://",
            "http://127.0.0.1:7420/x",
        ] {
            let h = [(header::HOST, "127.0.0.1:7420"), (header::ORIGIN, bad)];
            assert!(
                matches!(check(Method::GET, &h), Err(Refusal::Origin(_))),
                "{bad}"
            );
        }
        let allowed = [
            (header::HOST, "127.0.0.1:7420"),
            (header::ORIGIN, "https://tcc.internal"),
        ];
        assert_eq!(check(Method::GET, &allowed), Ok(()));
    }

    #[test]
    fn posts_need_a_json_content_type() {
        let host = (header::HOST, "127.0.0.1:7420");
        assert_eq!(
            check(
                Method::POST,
                &[host.clone(), (header::CONTENT_TYPE, "application/json")]
            ),
            Ok(())
        );
        assert_eq!(
            check(
                Method::POST,
                &[
                    host.clone(),
                    (header::CONTENT_TYPE, "Application/JSON; charset=utf-8")
                ]
            ),
            Ok(())
        );
        for bad in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "application/jsonx",
        ] {
            let h = [host.clone(), (header::CONTENT_TYPE, bad)];
            assert!(
                matches!(check(Method::POST, &h), Err(Refusal::ContentType(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            check(Method::POST, std::slice::from_ref(&host)),
            Err(Refusal::ContentType(_))
        ));
        assert_eq!(check(Method::GET, &[host]), Ok(()));
    }
}
