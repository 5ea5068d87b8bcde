//! The HTTP JSON API (`irkit tcc serve`). Every error is
//! `{"error": {"code", "message"}}` with a stable `code`; bodies above the
//! configured limit are refused with `payload_too_large` (413); when a
//! token is configured every route except `GET /v1/health` needs
//! `Authorization: Bearer TOKEN`. The OpenAPI description is served at
//! `GET /v1/openapi.json` (file `openapi.json` in this crate).

use crate::host::{Host, HostError};
use crate::store::{ExecutionRow, ListFilter, StoreError};
use crate::values::plain_to_tagged;
use serde_json::{Value as J, json};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use tiny_http::{Header, Method, Request, Response, Server};

/// The OpenAPI 3.0 description of this API.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Service settings.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Bearer token; `None` only allowed on loopback addresses.
    pub token: Option<String>,
    /// Largest request body accepted.
    pub max_body: usize,
    /// HTTP handler threads.
    pub threads: usize,
}

impl Default for ServiceConfig {
    fn default() -> ServiceConfig {
        ServiceConfig {
            token: None,
            max_body: 8 << 20,
            threads: 4,
        }
    }
}

/// An API error.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// Stable code.
    pub code: String,
    /// Human message.
    pub message: String,
}

fn err(status: u16, code: &str, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        code: code.into(),
        message: message.into(),
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match &e {
            StoreError::NotFound(_) => err(404, "not_found", e.to_string()),
            StoreError::Conflict(_) => err(409, "conflict", e.to_string()),
            StoreError::Unsupported(_) => err(501, "unsupported", e.to_string()),
            _ => err(500, "internal", e.to_string()),
        }
    }
}

impl From<HostError> for ApiError {
    fn from(e: HostError) -> ApiError {
        match e {
            HostError::Store(s) => s.into(),
            HostError::Invalid { code, message } => ApiError {
                status: 422,
                code: "invalid_artifact".into(),
                message: format!("{code}: {message}"),
            },
            HostError::UnknownProgram(p) => {
                err(404, "unknown_program", format!("unknown program {p:?}"))
            }
            HostError::BadRequest(m) => err(400, "bad_request", m),
        }
    }
}

/// Whether `addr` is a loopback address.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// A running service.
pub struct Service {
    server: Arc<Server>,
    addr: SocketAddr,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Service {
    /// Binds `listen` and starts handler threads. Refuses a non-loopback
    /// address without a token.
    pub fn start(listen: &str, host: Arc<Host>, cfg: ServiceConfig) -> Result<Service, String> {
        let addr: SocketAddr = listen
            .parse()
            .map_err(|e| format!("--listen {listen:?}: {e} (expected IP:PORT)"))?;
        if !is_loopback(&addr) && cfg.token.as_deref().is_none_or(str::is_empty) {
            return Err(format!(
                "refusing to listen on non-loopback address {addr} without a bearer token (--token or IRKIT_TCC_TOKEN)"
            ));
        }
        let server =
            Arc::new(Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?);
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or("listener has no IP address")?;
        let cfg = Arc::new(cfg);
        let mut threads = Vec::new();
        for i in 0..cfg.threads.max(1) {
            let (server, host, cfg) = (server.clone(), host.clone(), cfg.clone());
            let h = std::thread::Builder::new()
                .name(format!("tcc-http-{i}"))
                .spawn(move || {
                    while let Ok(req) = server.recv() {
                        handle(req, &host, &cfg);
                    }
                })
                .map_err(|e| e.to_string())?;
            threads.push(h);
        }
        Ok(Service {
            server,
            addr: bound,
            threads,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting requests and joins the handler threads.
    pub fn stop(self) {
        self.server.unblock();
        for _ in 1..self.threads.len() {
            self.server.unblock();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn respond(req: Request, status: u16, body: &J) {
    let text = tcc_ir::to_canonical(body);
    let mut r = Response::from_string(text).with_status_code(status);
    if let Ok(h) = Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]) {
        r = r.with_header(h);
    }
    let _ = req.respond(r);
}

fn handle(mut req: Request, host: &Host, cfg: &ServiceConfig) {
    let result = route(&mut req, host, cfg);
    match result {
        Ok((status, body)) => respond(req, status, &body),
        Err(e) => {
            let body = json!({"error": {"code": e.code, "message": e.message}});
            respond(req, e.status, &body)
        }
    }
}

/// Decodes `%XX` escapes of a path segment or query value.
pub fn percent_decode(s: &str) -> Result<String, ApiError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| err(400, "bad_request", "malformed percent escape"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| err(400, "bad_request", "path is not UTF-8"))
}

/// Encodes a path segment.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn read_body(req: &mut Request, cfg: &ServiceConfig) -> Result<Vec<u8>, ApiError> {
    if req.body_length().is_some_and(|n| n > cfg.max_body) {
        return Err(err(
            413,
            "payload_too_large",
            format!("request body larger than {} bytes", cfg.max_body),
        ));
    }
    let mut body = Vec::new();
    req.as_reader()
        .take(cfg.max_body as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| err(400, "bad_request", format!("reading body: {e}")))?;
    if body.len() > cfg.max_body {
        return Err(err(
            413,
            "payload_too_large",
            format!("request body larger than {} bytes", cfg.max_body),
        ));
    }
    Ok(body)
}

fn json_body(req: &mut Request, cfg: &ServiceConfig) -> Result<J, ApiError> {
    let body = read_body(req, cfg)?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(&body)
        .map_err(|e| err(400, "bad_request", format!("body is not JSON: {e}")))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The status JSON of an execution (what `irkit tcc status` prints).
pub fn status_json(row: &ExecutionRow) -> J {
    let mut m = serde_json::Map::new();
    m.insert("id".into(), row.id.clone().into());
    m.insert("status".into(), row.status.clone().into());
    m.insert("revision".into(), row.revision.into());
    m.insert("artifact_hash".into(), row.artifact_hash.clone().into());
    m.insert("program".into(), row.program_name.clone().into());
    if let Some(r) = &row.result {
        m.insert("result".into(), r.clone());
    }
    if let Some(msg) = &row.message {
        m.insert("message".into(), msg.clone().into());
    }
    if let Some(e) = &row.error {
        m.insert("error".into(), e.clone().into());
    }
    m.insert(
        "artifact_missing".into(),
        row.error
            .as_deref()
            .is_some_and(|e| e.starts_with("artifact_missing"))
            .into(),
    );
    m.insert("pending".into(), row.pending.clone().unwrap_or(J::Null));
    m.insert("cancel_requested".into(), row.cancel_requested.into());
    if let Some(p) = &row.parent_id {
        m.insert("parent".into(), p.clone().into());
    }
    m.insert("created_ms".into(), row.created_ms.into());
    m.insert("updated_ms".into(), row.updated_ms.into());
    J::Object(m)
}

fn query_map(q: &str) -> Result<Vec<(String, String)>, ApiError> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((percent_decode(k)?, percent_decode(v)?))
        })
        .collect()
}

fn tagged_list(body: &J, plain_key: &str, tagged_key: &str) -> Result<Vec<J>, ApiError> {
    match (body.get(plain_key), body.get(tagged_key)) {
        (Some(_), Some(_)) => Err(err(
            400,
            "bad_request",
            format!("give {plain_key} or {tagged_key}, not both"),
        )),
        (Some(J::Array(a)), None) => a
            .iter()
            .map(|x| plain_to_tagged(x).map_err(|e| err(400, "bad_request", e)))
            .collect(),
        (Some(_), None) => Err(err(
            400,
            "bad_request",
            format!("{plain_key} must be an array"),
        )),
        (None, Some(J::Array(a))) => {
            for v in a {
                crate::values::check_tagged(v).map_err(|e| err(400, "bad_request", e))?;
            }
            Ok(a.clone())
        }
        (None, Some(_)) => Err(err(
            400,
            "bad_request",
            format!("{tagged_key} must be an array"),
        )),
        (None, None) => Ok(Vec::new()),
    }
}

fn route(req: &mut Request, host: &Host, cfg: &ServiceConfig) -> Result<(u16, J), ApiError> {
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let method = req.method().clone();
    if path == "/v1/health" {
        return Ok((200, json!({"status": "ok"})));
    }
    if let Some(token) = cfg.token.as_deref().filter(|t| !t.is_empty()) {
        let given = req
            .headers()
            .iter()
            .find(|h| h.field.equiv("Authorization"))
            .map(|h| h.value.as_str().to_string())
            .unwrap_or_default();
        let expected = format!("Bearer {token}");
        if !constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            return Err(err(401, "unauthorized", "missing or wrong bearer token"));
        }
    }
    let segs: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(percent_decode)
        .collect::<Result<_, _>>()?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let q = query_map(query)?;
    let qget = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let store = host.store();
    match (&method, segs.as_slice()) {
        (Method::Get, ["v1", "openapi.json"]) => serde_json::from_str(OPENAPI)
            .map(|j| (200, j))
            .map_err(|e| err(500, "internal", e.to_string())),
        (Method::Post, ["v1", "artifacts"]) => {
            let body = read_body(req, cfg)?;
            let name = qget("name").filter(|n| !n.is_empty());
            let hash = host.register(&body, name.as_deref())?;
            Ok((201, json!({"hash": hash, "name": name})))
        }
        (Method::Get, ["v1", "artifacts", hash]) => match store.get_artifact(hash)? {
            Some(b) => serde_json::from_slice(&b)
                .map(|j| (200, j))
                .map_err(|e| err(500, "internal", e.to_string())),
            None => Err(err(404, "not_found", format!("no artifact {hash:?}"))),
        },
        (Method::Get, ["v1", "programs"]) => {
            let list: Vec<J> = store
                .programs()?
                .into_iter()
                .map(|(n, h)| json!({"name": n, "hash": h}))
                .collect();
            Ok((200, json!({"programs": list})))
        }
        (Method::Post, ["v1", "executions"]) => {
            let body = json_body(req, cfg)?;
            let program = body
                .get("program")
                .and_then(J::as_str)
                .ok_or_else(|| {
                    err(
                        400,
                        "bad_request",
                        "body.program (name or hash) is required",
                    )
                })?
                .to_string();
            let args = tagged_list(&body, "args", "tagged_args")?;
            let id = match body.get("id") {
                None | Some(J::Null) => None,
                Some(J::String(s)) => Some(s.clone()),
                Some(_) => return Err(err(400, "bad_request", "body.id must be a string")),
            };
            let id = host.start(&program, args, id)?;
            Ok((201, json!({"id": id})))
        }
        (Method::Get, ["v1", "executions"]) => {
            let limit = match qget("limit") {
                Some(l) => l
                    .parse::<u32>()
                    .map_err(|_| err(400, "bad_request", "limit must be a number"))?,
                None => 100,
            }
            .clamp(1, 1000);
            let after = match qget("after") {
                Some(a) => Some(
                    a.parse::<i64>()
                        .map_err(|_| err(400, "bad_request", "after must be a cursor number"))?,
                ),
                None => None,
            };
            let rows = store.list_executions(&ListFilter {
                status: qget("status"),
                program: qget("program"),
                artifact_missing: qget("artifact_missing").as_deref() == Some("true"),
                after,
                limit,
            })?;
            let next = if rows.len() as u32 == limit {
                rows.last().map(|r| r.seq)
            } else {
                None
            };
            let list: Vec<J> = rows.iter().map(status_json).collect();
            Ok((200, json!({"executions": list, "next_after": next})))
        }
        (Method::Get, ["v1", "executions", id]) => match store.get_execution(id)? {
            Some(row) => Ok((200, status_json(&row))),
            None => Err(err(404, "not_found", format!("no execution {id:?}"))),
        },
        (Method::Get, ["v1", "executions", id, "history"]) => {
            if store.get_execution(id)?.is_none() {
                return Err(err(404, "not_found", format!("no execution {id:?}")));
            }
            let after = qget("after").and_then(|a| a.parse().ok()).unwrap_or(0);
            let limit = qget("limit").and_then(|a| a.parse().ok()).unwrap_or(1000);
            let rows = store.history(id, after, limit)?;
            let list: Vec<J> = rows
                .into_iter()
                .map(
                    |h| json!({"seq": h.seq, "at_ms": h.at_ms, "kind": h.kind, "detail": h.detail}),
                )
                .collect();
            Ok((200, json!({"history": list})))
        }
        (Method::Get, ["v1", "executions", id, "effects"]) => {
            if store.get_execution(id)?.is_none() {
                return Err(err(404, "not_found", format!("no execution {id:?}")));
            }
            let list: Vec<J> = store
                .journal_of(id)?
                .into_iter()
                .map(|j| {
                    json!({"idempotency_key": j.idempotency_key, "key": j.key,
                           "input": serde_json::from_str::<J>(&j.input).unwrap_or(J::Null),
                           "status": j.status, "result": j.result})
                })
                .collect();
            Ok((200, json!({"effects": list})))
        }
        (Method::Post, ["v1", "executions", id, "events"]) => {
            let body = json_body(req, cfg)?;
            let name = body
                .get("name")
                .and_then(J::as_str)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| err(400, "bad_request", "body.name (event name) is required"))?;
            let payload = match (body.get("payload"), body.get("tagged_payload")) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        400,
                        "bad_request",
                        "give payload or tagged_payload, not both",
                    ));
                }
                (Some(p), None) => plain_to_tagged(p).map_err(|e| err(400, "bad_request", e))?,
                (None, Some(t)) => {
                    crate::values::check_tagged(t).map_err(|e| err(400, "bad_request", e))?;
                    t.clone()
                }
                (None, None) => json!({"t": "null"}),
            };
            store.send_event(id, name, &payload)?;
            host.notify();
            Ok((202, json!({"accepted": true})))
        }
        (Method::Post, ["v1", "executions", id, "cancel"]) => {
            store.request_cancel(id)?;
            host.notify();
            Ok((202, json!({"accepted": true})))
        }
        (_, ["v1", ..]) => Err(err(404, "not_found", format!("no route {method} {path}"))),
        _ => Err(err(404, "not_found", format!("no route {method} {path}"))),
    }
}
