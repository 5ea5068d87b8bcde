//! The HTTP JSON API (`irkit tcc serve`), on `axum` (tokio, hyper):
//! HTTP/1.1 with keep-alive and HTTP/2 (cleartext, prior knowledge).
//! Every error is `{"code", "error": {"code", "message"}}` ([`crate::api_error`]);
//! bodies above the configured limit are refused with `payload_too_large`
//! (413); a request that takes longer than the request timeout is answered
//! `timeout` (503); when a token is configured every route except
//! `GET /v1/health` and the dashboard's page ([`crate::ui::PUBLIC_ROUTES`];
//! its data routes are guarded) needs `Authorization: Bearer TOKEN`. The OpenAPI
//! description is served at `GET /v1/openapi.json` (file `openapi.json`
//! in this crate), Prometheus metrics at `GET /metrics` ([`crate::metrics`]).
//!
//! The store and the host are blocking: every handler hands its work to
//! tokio's blocking pool (`spawn_blocking`), so the async runtime never
//! waits on a database. Shutdown is graceful: the listener closes, requests
//! in flight finish (each within the request timeout), idle keep-alive
//! connections are closed.

use crate::api_error::ApiError;
use crate::host::Host;
use crate::metrics;
use crate::otel::http::RequestTrace;
use crate::packed::Stored;
pub use crate::status_view::{status_json, status_text};
use crate::store::{ListFilter, ResumeOutcome};
use crate::values::TaggedList;
use axum::body::Body;
use axum::extract::{MatchedPath, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use http_body_util::BodyExt;
use serde_json::{Value as J, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The OpenAPI 3.0 description of this API.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Service settings.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Bearer token of every namespace; without it and without
    /// [`ServiceConfig::tokens`] only loopback addresses are allowed.
    pub token: Option<String>,
    /// Tokens scoped to namespaces (`--tokens-file`, issue 35,
    /// [`crate::namespace`]).
    pub tokens: crate::namespace::TokenSet,
    /// Largest request body accepted.
    pub max_body: usize,
    /// Async runtime threads (the blocking work runs on tokio's blocking
    /// pool, up to [`ServiceConfig::blocking_threads`]).
    pub threads: usize,
    /// Most threads running handlers' blocking work at once.
    pub blocking_threads: usize,
    /// Longest a request may take, reading its body included.
    pub request_timeout: Duration,
    /// Names a request's `Host` may carry besides IP addresses and
    /// loopback names (`--allowed-host`; see [`crate::admission`]).
    pub allowed_hosts: crate::admission::AllowedHosts,
    /// Header-read and idle timeouts and the connection cap
    /// ([`crate::conn`]); the idle timeout is raised to exceed the request
    /// timeout.
    pub conn: crate::conn::ConnLimits,
}

impl Default for ServiceConfig {
    fn default() -> ServiceConfig {
        ServiceConfig {
            token: None,
            tokens: crate::namespace::TokenSet::default(),
            max_body: 8 << 20,
            threads: 2,
            blocking_threads: 64,
            request_timeout: Duration::from_secs(30),
            allowed_hosts: crate::admission::AllowedHosts::default(),
            conn: crate::conn::ConnLimits::default(),
        }
    }
}

/// Whether `addr` is a loopback address.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

pub use crate::percent::{percent_decode, percent_encode};

fn query_map(q: &str) -> Result<Vec<(String, String)>, ApiError> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((percent_decode(k)?, percent_decode(v)?))
        })
        .collect()
}

/// Why the service could not start, or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// `--listen` is not an `IP:PORT`.
    #[error("--listen {listen:?}: {source} (expected IP:PORT)")]
    Address {
        /// The address as given.
        listen: String,
        /// The parse error.
        source: std::net::AddrParseError,
    },
    /// A non-loopback address without a bearer token.
    #[error(
        "refusing to listen on non-loopback address {addr} without a bearer token (--token or IRKIT_TCC_TOKEN)"
    )]
    NoToken {
        /// The address.
        addr: SocketAddr,
    },
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The socket error.
        source: std::io::Error,
    },
    /// The async runtime or a signal handler could not be set up.
    #[error("{what}: {source}")]
    Setup {
        /// What was being set up.
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The server stopped with an error.
    #[error("HTTP server on {addr}: {source}")]
    Serve {
        /// The bound address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The server's task panicked or was cancelled.
    #[error("the HTTP server task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

/// A running service. Its runtime lives as long as the value: after the
/// drain, the signal handler still listens for a second signal while the
/// caller stops the workers.
pub struct Service {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    runtime: tokio::runtime::Runtime,
    server: std::sync::Mutex<Option<tokio::task::JoinHandle<Result<(), ServiceError>>>>,
}

impl Service {
    /// Binds `listen` and starts serving. Refuses a non-loopback address
    /// without a token.
    pub fn start(
        listen: &str,
        host: Arc<Host>,
        cfg: ServiceConfig,
    ) -> Result<Service, ServiceError> {
        let addr: SocketAddr = listen.parse().map_err(|source| ServiceError::Address {
            listen: listen.to_string(),
            source,
        })?;
        if !is_loopback(&addr)
            && cfg.token.as_deref().is_none_or(str::is_empty)
            && cfg.tokens.is_empty()
        {
            return Err(ServiceError::NoToken { addr });
        }
        let cannot_listen = |source| ServiceError::Listen { addr, source };
        let listener = std::net::TcpListener::bind(addr).map_err(cannot_listen)?;
        let bound = listener.local_addr().map_err(cannot_listen)?;
        listener.set_nonblocking(true).map_err(cannot_listen)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.threads.max(1))
            .max_blocking_threads(cfg.blocking_threads.max(1))
            .thread_name("tcc-http")
            .enable_all()
            .build()
            .map_err(|source| ServiceError::Setup {
                what: "cannot start the HTTP runtime",
                source,
            })?;
        let (stop, stopped) = watch::channel(false);
        let mut limits = cfg.conn;
        limits.idle = limits
            .idle
            .max(cfg.request_timeout + Duration::from_secs(1));
        let mut tokens = cfg.tokens.clone();
        if let Some(t) = cfg.token.as_deref().filter(|t| !t.is_empty()) {
            tokens.add(t, crate::namespace::Grant::Every);
        }
        let app = router(Arc::new(App { host, cfg, tokens }));
        let listener = {
            let _enter = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(|source| ServiceError::Listen {
                addr: bound,
                source,
            })?
        };
        let server = runtime.spawn(async move {
            crate::conn::serve(listener, app, limits, stopped)
                .await
                .map_err(|source| ServiceError::Serve {
                    addr: bound,
                    source,
                })
        });
        tracing::info!(addr = %bound, "HTTP service listening");
        Ok(Service {
            addr: bound,
            stop,
            runtime,
            server: std::sync::Mutex::new(Some(server)),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Begins a graceful shutdown when the process gets SIGTERM or SIGINT
    /// (the handlers are installed before this returns); a second signal
    /// ends the process at once (exit 1).
    pub fn stop_on_signals(&self) -> Result<(), ServiceError> {
        use tokio::signal::unix::{SignalKind, signal};
        let _enter = self.runtime.enter();
        let handler =
            |kind, what| signal(kind).map_err(|source| ServiceError::Setup { what, source });
        let mut term = handler(SignalKind::terminate(), "SIGTERM")?;
        let mut int = handler(SignalKind::interrupt(), "SIGINT")?;
        let stop = self.stop.clone();
        self.runtime.spawn(async move {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            tracing::info!(signal = name, "shutting down: finishing requests in flight");
            let _ = stop.send(true);
            // A second signal does not wait for the drain: the process ends
            // at once, as after SIGKILL (what is committed stays committed).
            tokio::select! {
                _ = term.recv() => {},
                _ = int.recv() => {},
            }
            tracing::warn!("second signal: exiting without waiting for the drain");
            std::process::exit(1);
        });
        Ok(())
    }

    /// Begins a graceful shutdown (what a signal does).
    pub fn begin_shutdown(&self) {
        let _ = self.stop.send(true);
    }

    /// Waits until the server has shut down (after a signal or
    /// [`Service::begin_shutdown`]) and every request in flight finished.
    pub fn wait(&self) -> Result<(), ServiceError> {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        match server {
            Some(h) => self
                .runtime
                .block_on(h)
                .unwrap_or_else(|e| Err(ServiceError::Task(e))),
            None => Ok(()),
        }
    }

    /// Shuts down gracefully and waits for it.
    pub fn stop(self) {
        self.begin_shutdown();
        if let Err(e) = self.wait() {
            tracing::error!(error = %e, "HTTP server stopped with an error");
        }
    }
}

/// What every handler shares.
struct App {
    host: Arc<Host>,
    cfg: ServiceConfig,
    /// The configured tokens' digests with their namespaces (empty: no
    /// token, loopback only).
    tokens: crate::namespace::TokenSet,
}

type Shared = Arc<App>;

fn router(app: Shared) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi))
        .route("/metrics", get(metrics_text))
        .route("/v1/namespaces", get(namespaces))
        .route("/v1/artifacts", post(register))
        .route("/v1/artifacts/{hash}", get(artifact))
        .route("/v1/programs", get(programs))
        .route("/v1/executions", post(start_awaiting).get(list))
        .route("/v1/executions/{id}", get(status).delete(delete_execution))
        .route("/v1/executions/{id}/history", get(history))
        .route("/v1/executions/{id}/effects", get(effects))
        .route("/v1/executions/{id}/events", post(send_event))
        .route("/v1/executions/{id}/cancel", post(cancel))
        .route("/v1/executions/{id}/terminate", post(terminate))
        .route("/v1/executions/{id}/resume", post(resume))
        .merge(crate::ui::router(app.host.clone()))
        .merge(crate::pause::api::router(app.host.clone()))
        .merge(crate::source::api::router(app.host.clone()))
        .merge(crate::schedule::api::router(
            app.host.clone(),
            app.cfg.max_body,
        ))
        .merge(crate::flow::api::router(app.host.clone(), app.cfg.max_body))
        .merge(crate::await_result::router(
            app.host.clone(),
            longest_wait(&app.cfg),
        ))
        .merge(match app.host.tasks() {
            Some(board) => crate::worker_tasks::api::router(
                board.clone(),
                app.host.store().clone(),
                crate::worker_tasks::api::Limits {
                    max_body: app.cfg.max_body,
                    longest_wait: longest_wait(&app.cfg),
                },
            ),
            None => Router::new(),
        })
        .fallback(no_route)
        .method_not_allowed_fallback(no_route)
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// A JSON answer.
struct Reply(u16, J);

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        let text = tcc_ir::to_canonical(&self.1);
        let mut r = Response::new(Body::from(text));
        *r.status_mut() = StatusCode::from_u16(self.0).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        Reply(self.status(), self.body()).into_response()
    }
}

type Answer = Result<Reply, ApiError>;

/// Runs blocking work (store, host) on the blocking pool.
async fn blocking(f: impl FnOnce() -> Answer + Send + 'static) -> Answer {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(ApiError::Internal(format!("handler failed: {e}"))))
}

/// [`blocking`] for a handler that writes its `200` answer's JSON text
/// itself.
async fn blocking_text(
    f: impl FnOnce() -> Result<String, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    let text = tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(ApiError::Internal(format!("handler failed: {e}"))))?;
    Ok(crate::await_result::json_text_response(200, text))
}

/// [`blocking_text`] of an answer sent in its parts.
async fn blocking_answer(
    f: impl FnOnce() -> Result<crate::answer_text::AnswerText, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    let text = tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(ApiError::Internal(format!("handler failed: {e}"))))?;
    Ok(crate::await_result::json_answer_response(200, text))
}

/// Auth, the request timeout, metrics and the request log, around every
/// route (the fallback included).
async fn guard(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().clone();
    let (trace_span, request_trace) = crate::otel::http::request_span(
        app.host.config().telemetry.as_deref(),
        method.as_str(),
        &route,
        req.uri().path(),
        req.headers(),
    );
    let version = req.version();
    // A small body is read here, any other tracked, so that a response
    // sent before the body was read closes the connection openly
    // (crate::request_body).
    let prepared =
        tokio::time::timeout(app.cfg.request_timeout, crate::request_body::prepare(req)).await;
    let (mut req, body_read) = match prepared {
        Ok(Ok(prepared)) => prepared,
        unread => {
            let refusal = match unread {
                Ok(Err(e)) => ApiError::BadRequest(e.to_string()),
                _ => ApiError::Timeout {
                    limit: app.cfg.request_timeout,
                },
            };
            let response = refusal.into_response();
            return finish_request(
                &method, &route, started, trace_span, version, None, response,
            );
        }
    };
    req.extensions_mut().insert(request_trace);
    let no_token = app.tokens.is_empty();
    // The token first (an unauthorized request is 401 whatever else is
    // wrong with it), then admission (crate::admission).
    let admitted = crate::admission::admit(
        &method,
        req.uri(),
        req.headers(),
        &app.cfg.allowed_hosts,
        no_token,
    );
    let public = route == "/v1/health" || crate::ui::is_public(&route);
    let grant = grant_of(req.headers(), &app.tokens);
    let response = if !public && grant.is_none() {
        ApiError::Unauthorized.into_response()
    } else if let Err(refusal) = admitted {
        ApiError::from(refusal).into_response()
    } else if let Err(e) = scope_request(&app, &mut req, &route, grant.as_ref()).await {
        e.into_response()
    } else {
        match tokio::time::timeout(app.cfg.request_timeout, next.run(req)).await {
            Ok(r) => r,
            Err(_) => ApiError::Timeout {
                limit: app.cfg.request_timeout,
            }
            .into_response(),
        }
    };
    finish_request(
        &method,
        &route,
        started,
        trace_span,
        version,
        Some(&body_read),
        response,
    )
}

/// The end of every request in [`guard`]: `Connection: close` when its
/// body was left unread, metrics, the trace span and the request log.
fn finish_request(
    method: &axum::http::Method,
    route: &str,
    started: Instant,
    trace_span: crate::otel::OpSpan,
    version: axum::http::Version,
    body_read: Option<&crate::request_body::BodyRead>,
    response: Response,
) -> Response {
    let response = crate::request_body::finish(response, version, body_read);
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    metrics::global().http_request(method.as_str(), route, status, elapsed);
    crate::otel::http::end_request_span(trace_span, status);
    tracing::debug!(
        method = %method,
        route = %route,
        status,
        micros = elapsed.as_micros() as u64,
        "request"
    );
    response
}

/// The grant of the request's token: every namespace when no token is
/// configured; `None` for a missing or wrong token.
fn grant_of(
    headers: &HeaderMap,
    tokens: &crate::namespace::TokenSet,
) -> Option<crate::namespace::Grant> {
    if tokens.is_empty() {
        return Some(crate::namespace::Grant::Every);
    }
    let given = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes)
        .unwrap_or_default();
    tokens.grant_of(given).cloned()
}

/// Resolves the request's namespace scope (issue 35,
/// [`crate::namespace`]), checks the route's rule against it and puts it
/// in the request for the handler. The fallback (no route) has no rule;
/// a matched route without one is refused, so none is served unscoped.
async fn scope_request(
    app: &Shared,
    req: &mut Request,
    route: &str,
    grant: Option<&crate::namespace::Grant>,
) -> Result<(), ApiError> {
    use crate::namespace::{self as ns, routes};
    if route == "unmatched" {
        return Ok(());
    }
    let Some(rule) = routes::rule_for(req.method().as_str(), route) else {
        if routes::RULES.iter().any(|(_, t, _)| *t == route) {
            // Another method of a known route: the fallback answers.
            return Ok(());
        }
        return Err(ApiError::Internal(format!(
            "route {} {route} has no namespace rule (crate::namespace::routes::RULES)",
            req.method()
        )));
    };
    let Some(grant) = grant else {
        // A public route without a (valid) token: nothing namespaced.
        return Ok(());
    };
    if rule == routes::Rule::Token {
        req.extensions_mut().insert(grant.clone());
        return Ok(());
    }
    let header = match req.headers().get(ns::HEADER) {
        Some(v) => Some(
            v.to_str()
                .map_err(|_| ApiError::BadRequest("header TCC-Namespace is not text".into()))?
                .to_string(),
        ),
        None => None,
    };
    let query = qget(&query_map(req.uri().query().unwrap_or(""))?, ns::QUERY);
    let scope = ns::resolve(grant, header.as_deref(), query.as_deref())?;
    if !matches!(
        rule,
        routes::Rule::Public | routes::Rule::Scoped | routes::Rule::Artifact
    ) {
        let (host, s, method, template, path) = (
            app.host.clone(),
            scope.clone(),
            req.method().as_str().to_string(),
            route.to_string(),
            req.uri().path().to_string(),
        );
        let checked = tokio::task::spawn_blocking(move || {
            routes::check(&**host.store(), &s, rule, &method, &template, &path)
        })
        .await
        .map_err(|e| ApiError::Internal(format!("namespace check failed: {e}")))??;
        req.extensions_mut().insert(checked);
    }
    req.extensions_mut().insert(scope);
    Ok(())
}

/// Reads the body, refusing more than `max_body` bytes with 413. An
/// oversized body is still read to its end (up to 64 MiB more, then the
/// connection is dropped), so that the client hears the 413 instead of a
/// reset while it is still sending.
async fn read_body(body: Body, max_body: usize) -> Result<Vec<u8>, ApiError> {
    let mut body = body;
    let mut out = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::BadRequest(format!("reading body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            seen = seen.saturating_add(data.len());
            if seen <= max_body {
                out.extend_from_slice(&data);
            } else if seen > max_body.saturating_add(64 << 20) {
                break;
            }
        }
    }
    if seen > max_body {
        return Err(ApiError::PayloadTooLarge { limit: max_body });
    }
    Ok(out)
}

/// Reads a JSON body, as bytes: its values are counted before anything is
/// built, and a body of more than [`crate::values::MAX_VALUES`] values is
/// refused with 413. The routes then read the members they need from the
/// bytes ([`crate::request_json`]), converting plain values straight to
/// their stored text, so what a request allocates follows its size.
async fn json_body(body: Body, max_body: usize) -> Result<Vec<u8>, ApiError> {
    let body = read_body(body, max_body).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(b"{}".to_vec());
    }
    match crate::values::count_values(&body, crate::values::MAX_VALUES) {
        Ok(_) => Ok(body),
        Err(crate::values::CountError::TooMany { limit }) => Err(ApiError::TooManyValues { limit }),
        Err(crate::values::CountError::NotJson(e)) => {
            Err(ApiError::BadRequest(format!("body is not JSON: {e}")))
        }
    }
}

/// The body's members named in `wanted` ([`crate::request_json::body_head`]).
fn body_head(body: &[u8], wanted: &[&str]) -> Result<crate::request_json::Head, ApiError> {
    crate::request_json::body_head(body, wanted)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))
}

/// The body's member `key` holding tagged values, checked as the engine
/// will absorb them (the tagged routes: a tree, as before; their size is
/// bounded by the value count).
fn tagged_member(body: &[u8], key: &str) -> Result<J, ApiError> {
    let mut whole: J = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))?;
    Ok(whole.get_mut(key).map(J::take).unwrap_or(J::Null))
}

/// The path parameter of the routes that have one (`/v1/artifacts/{hash}`,
/// `/v1/executions/{id}…`: the third segment), percent-decoded here from
/// the raw path (`+` is a space, as in query values; a parameter that is
/// not UTF-8 once decoded is a `bad_request`).
fn param(uri: &Uri) -> Result<String, ApiError> {
    let raw = uri
        .path()
        .split('/')
        .nth(3)
        .ok_or_else(|| ApiError::Internal("route without a parameter".into()))?;
    percent_decode(raw)
}

fn query(q: &RawQuery) -> Result<Vec<(String, String)>, ApiError> {
    query_map(q.0.as_deref().unwrap_or(""))
}

fn qget(q: &[(String, String)], k: &str) -> Option<String> {
    q.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

async fn health() -> Reply {
    Reply(200, json!({"status": "ok"}))
}

async fn openapi() -> Answer {
    serde_json::from_str(OPENAPI)
        .map(|j| Reply(200, j))
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// `GET /v1/namespaces` (issue 35): the namespaces the request's token
/// may name ([`crate::namespace::visible`]), and whether it has every
/// namespace (then it may also name none, acting across them).
async fn namespaces(
    State(app): State<Shared>,
    grant: Option<Extension<crate::namespace::Grant>>,
) -> Answer {
    let grant = grant.map_or(crate::namespace::Grant::Every, |Extension(g)| g);
    blocking(move || {
        let list = crate::namespace::visible(&**app.host.store(), &grant)?;
        let every = matches!(grant, crate::namespace::Grant::Every);
        Ok(Reply(200, json!({"namespaces": list, "every": every})))
    })
    .await
}

async fn no_route(req: Request) -> ApiError {
    ApiError::NotFound(format!("no route {} {}", req.method(), req.uri().path()))
}

async fn metrics_text(State(app): State<Shared>) -> Response {
    let host = app.host.clone();
    let text = tokio::task::spawn_blocking(move || metrics::global().render(Some(host.store())))
        .await
        .unwrap_or_else(|e| format!("# metrics failed: {e}\n"));
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// A register body that carries the source beside the artifact (issue
/// 35, `crate::source`): `{"artifact": ARTIFACT, "source": {"file",
/// "text"}}`. Any other body is the artifact itself.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WithSource<'a> {
    #[serde(borrow)]
    artifact: &'a serde_json::value::RawValue,
    source: Option<crate::source::ArtifactSource>,
}

/// The request's namespace scope (the guard puts it in every request to
/// a route; [`crate::namespace::Scope::operator`] elsewhere).
type ScopeExt = Option<Extension<crate::namespace::Scope>>;

fn scope_of(ext: ScopeExt) -> crate::namespace::Scope {
    ext.map_or_else(crate::namespace::Scope::operator, |Extension(s)| s)
}

async fn register(State(app): State<Shared>, scope: ScopeExt, q: RawQuery, body: Body) -> Answer {
    let scope = scope_of(scope);
    let q = query(&q)?;
    let body = read_body(body, app.cfg.max_body).await?;
    blocking(move || {
        let name = qget(&q, "name").filter(|n| !n.is_empty());
        let (artifact, source) = match serde_json::from_slice::<WithSource>(&body) {
            Ok(w) => (w.artifact.get().as_bytes(), w.source),
            Err(_) => (&body[..], None),
        };
        if let Some(s) = &source {
            crate::source::check(s).map_err(ApiError::BadRequest)?;
        }
        let hash = app
            .host
            .register_in(scope.creates_in(), artifact, name.as_deref())?;
        if let Some(s) = &source {
            crate::source::rows::put(&**app.host.store(), &hash, s)?;
        }
        let file = source.map(|s| s.file);
        Ok(Reply(
            201,
            json!({"hash": hash, "name": name, "source": file}),
        ))
    })
    .await
}

async fn artifact(State(app): State<Shared>, uri: Uri) -> Answer {
    let hash = param(&uri)?;
    blocking(move || match app.host.store().get_artifact(&hash)? {
        Some(b) => serde_json::from_slice(&b)
            .map(|j| Reply(200, j))
            .map_err(|e| ApiError::Internal(e.to_string())),
        None => Err(ApiError::NotFound(format!("no artifact {hash:?}"))),
    })
    .await
}

async fn programs(State(app): State<Shared>, scope: ScopeExt) -> Answer {
    let scope = scope_of(scope);
    blocking(move || {
        let store = app.host.store();
        let mine = crate::namespace::programs(&**store, &scope)?;
        let list: Vec<J> = mine
            .iter()
            .map(|(n, h)| json!({"name": n, "hash": h}))
            .collect();
        // Paused names the scope sees: its own programs', and (tokens of
        // every namespace) names registered nowhere.
        let mut paused = Vec::new();
        if let Some(p) = crate::pause::store_of(&**store) {
            for name in p.paused_programs()? {
                if crate::namespace::sees_program(&**store, &scope, &name)? {
                    paused.push(name);
                }
            }
        }
        Ok(Reply(
            200,
            json!({"programs": list, "paused_programs": paused}),
        ))
    })
    .await
}

/// Starts an execution (`POST /v1/executions`, `201 {"id"}`); with
/// `subscribe`, also answers the subscription to its end
/// ([`crate::notify::done_topic`]) taken before it was created, with the
/// topic's generation then ([`crate::await_result::Subscribed`]).
async fn start_subscribed(
    app: Shared,
    scope: crate::namespace::Scope,
    trace: RequestTrace,
    body: Body,
    subscribe: bool,
) -> Result<(Reply, Option<crate::await_result::Subscribed>), ApiError> {
    use crate::request_json::{Member, Scalar};
    let traceparent = trace
        .for_start()
        .map_err(|e| ApiError::BadRequest(format!("header traceparent: {e}")))?;
    let body = json_body(body, app.cfg.max_body).await?;
    let head = body_head(&body, &["program", "id", "args", "tagged_args"])?;
    let program = head
        .str("program")
        .ok_or_else(|| ApiError::BadRequest("body.program (name or hash) is required".into()))?
        .to_string();
    crate::storable::check("body.program", &program).map_err(ApiError::BadRequest)?;
    // The program first: arguments of an unknown program are not converted.
    let resolving = app.clone();
    let name = program.clone();
    let namespace = scope.creates_in().to_string();
    let resolving_in = namespace.clone();
    let resolved = tokio::task::spawn_blocking(move || {
        resolving
            .host
            .resolve_in(&resolving_in, &name)
            .map_err(ApiError::from)
    })
    .await
    .unwrap_or_else(|e| Err(ApiError::Internal(format!("handler failed: {e}"))))?;
    let args = match (head.has("args"), head.has("tagged_args")) {
        (true, true) => {
            return Err(ApiError::BadRequest(
                "give args or tagged_args, not both".into(),
            ));
        }
        (true, false) => match crate::request_json::body_member(
            &body,
            "args",
            true,
            app.host.store().packs_texts(),
        ) {
            Ok(Some(Member::List(stored))) => TaggedList::from(stored),
            Ok(_) => return Err(ApiError::BadRequest("args must be an array".into())),
            Err(e) => return Err(ApiError::BadRequest(e)),
        },
        (false, true) => match tagged_member(&body, "tagged_args")? {
            J::Array(a) => {
                for v in &a {
                    crate::values::check_tagged(v).map_err(ApiError::BadRequest)?;
                }
                TaggedList::from_values(&a)
            }
            _ => return Err(ApiError::BadRequest("tagged_args must be an array".into())),
        },
        (false, false) => TaggedList::default(),
    };
    let id = match head.get("id") {
        None | Some(Scalar::Null) => None,
        Some(Scalar::Str(s)) => Some(s.clone()),
        Some(Scalar::Other) => {
            return Err(ApiError::BadRequest("body.id must be a string".into()));
        }
    };
    drop(body);
    tokio::task::spawn_blocking(move || {
        let host = &app.host;
        let (id, subscribed) = match subscribe {
            true => {
                let id = id.unwrap_or_else(crate::ids::execution_id);
                let subscribed = crate::await_result::Subscribed::new(host, &id);
                (Some(id), Some(subscribed))
            }
            false => (id, None),
        };
        let id = host.start_resolved(&namespace, resolved, args, id, traceparent.as_ref())?;
        Ok((Reply(201, json!({"id": id})), subscribed))
    })
    .await
    .unwrap_or_else(|e| Err(ApiError::Internal(format!("handler failed: {e}"))))
}

/// The longest long poll (`wait=`): half a second below the request
/// timeout, which would cut it off.
fn longest_wait(cfg: &ServiceConfig) -> Duration {
    cfg.request_timeout
        .saturating_sub(Duration::from_millis(500))
}

/// `POST /v1/executions[?wait=DURATION]`: starts; with `wait`, answers as
/// `GET …/result?wait=` does ([`crate::await_result`]).
async fn start_awaiting(
    app: State<Shared>,
    scope: ScopeExt,
    trace: Option<Extension<RequestTrace>>,
    q: RawQuery,
    body: Body,
) -> Response {
    // Always there: the guard puts it in every request.
    let trace = trace.map_or(
        RequestTrace {
            incoming: Ok(None),
            span: None,
        },
        |Extension(t)| t,
    );
    let wait = match crate::await_result::wait_param(q.0.as_deref()) {
        Ok(w) => w.map(|w| w.min(longest_wait(&app.cfg))),
        Err(e) => return e.into_response(),
    };
    let host = app.host.clone();
    let (started, subscribed) =
        match start_subscribed(app.0, scope_of(scope), trace, body, wait.is_some()).await {
            Ok(r) => r,
            Err(e) => return e.into_response(),
        };
    let (Some(wait), Some(id), Some(subscribed)) =
        (wait, started.1.get("id").and_then(J::as_str), subscribed)
    else {
        return started.into_response();
    };
    // Subscribed before the execution existed: no read until it ends.
    match crate::await_result::until_ended_subscribed(&host, id, wait, subscribed).await {
        Ok((ended, row)) => crate::await_result::ended_response(ended, &row),
        Err(e) => e.into_response(),
    }
}

async fn list(
    State(app): State<Shared>,
    scope: ScopeExt,
    q: RawQuery,
) -> Result<Response, ApiError> {
    let q = query(&q)?;
    let limit = match qget(&q, "limit") {
        Some(l) => l
            .parse::<u32>()
            .map_err(|_| ApiError::BadRequest("limit must be a number".into()))?,
        None => 100,
    }
    .clamp(1, 1000);
    let after = match qget(&q, "after") {
        Some(a) => Some(
            a.parse::<i64>()
                .map_err(|_| ApiError::BadRequest("after must be a cursor number".into()))?,
        ),
        None => None,
    };
    let filter = ListFilter {
        status: qget(&q, "status"),
        program: qget(&q, "program"),
        artifact_missing: qget(&q, "artifact_missing").as_deref() == Some("true"),
        after,
        limit,
        namespace: scope_of(scope).filter(),
    };
    blocking_text(move || {
        let rows = app.host.store().list_executions(&filter)?;
        let next = if rows.len() as u32 == limit {
            rows.last().map(|r| r.seq)
        } else {
            None
        };
        // Each row's status as text, its stored result answered as it is
        // (issue 42, F3); keys in canonical order.
        let mut text = String::from("{\"executions\":[");
        for (i, row) in rows.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            status_text(row, Vec::new())?.write_to(&mut text);
        }
        text.push_str("],\"next_after\":");
        tcc_ir::canonical::write_canonical(&json!(next), &mut text);
        text.push('}');
        Ok(text)
    })
    .await
}

async fn status(
    State(app): State<Shared>,
    checked: Option<Extension<crate::namespace::routes::Checked>>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let id = param(&uri)?;
    // The guard made the status read when it checked the namespace.
    let read = checked
        .and_then(|Extension(c)| c.status)
        .filter(|r| r.row.id == id);
    blocking_answer(move || {
        let read = match read {
            Some(read) => read,
            None => Arc::new(
                crate::status_read::read(&**app.host.store(), &id, crate::ids::now_ms())?
                    .ok_or_else(|| ApiError::NotFound(format!("no execution {id:?}")))?,
            ),
        };
        Ok(crate::status_view::status_answer(&read)?)
    })
    .await
}

/// `DELETE /v1/executions/{id}` (issue 35, `crate::retention::api`).
async fn delete_execution(State(app): State<Shared>, uri: Uri) -> Response {
    match param(&uri) {
        Ok(id) => crate::retention::api::delete(app.host.clone(), id).await,
        Err(e) => e.into_response(),
    }
}

fn attempt_json(a: &crate::store::AttemptRow) -> J {
    json!({"key": a.key, "idempotency_key": a.idempotency_key, "attempt": a.attempt,
           "error": a.error, "at_ms": a.at_ms, "next_attempt_at_ms": a.next_due_ms})
}

/// Whether the namespace guard found execution `id` (existing, visible):
/// then the handler need not read its row to know it exists.
fn guard_found(checked: Option<Extension<crate::namespace::routes::Checked>>, id: &str) -> bool {
    checked.is_some_and(|Extension(c)| c.execution.as_deref() == Some(id))
}

/// Refuses an execution that does not exist, unless the guard found it
/// ([`guard_found`]): one read of the row at most per request.
fn known_execution(store: &dyn crate::store::Store, found: bool, id: &str) -> Result<(), ApiError> {
    if !found && store.get_execution(id)?.is_none() {
        return Err(ApiError::NotFound(format!("no execution {id:?}")));
    }
    Ok(())
}

async fn history(
    State(app): State<Shared>,
    checked: Option<Extension<crate::namespace::routes::Checked>>,
    uri: Uri,
    q: RawQuery,
) -> Answer {
    let id = param(&uri)?;
    let found = guard_found(checked, &id);
    let q = query(&q)?;
    let after = qget(&q, "after").and_then(|a| a.parse().ok()).unwrap_or(0);
    let limit = qget(&q, "limit")
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    blocking(move || {
        let store = app.host.store();
        known_execution(&**store, found, &id)?;
        let list: Vec<J> = store
            .history(&id, after, limit)?
            .into_iter()
            .map(|h| json!({"seq": h.seq, "at_ms": h.at_ms, "kind": h.kind, "detail": h.detail}))
            .collect();
        Ok(Reply(200, json!({"history": list})))
    })
    .await
}

async fn effects(
    State(app): State<Shared>,
    checked: Option<Extension<crate::namespace::routes::Checked>>,
    uri: Uri,
) -> Answer {
    let id = param(&uri)?;
    let found = guard_found(checked, &id);
    blocking(move || {
        let store = app.host.store();
        known_execution(&**store, found, &id)?;
        let list: Vec<J> = store
            .journal_of(&id)?
            .into_iter()
            .map(|j| {
                json!({"idempotency_key": j.idempotency_key, "key": j.key,
                       "input": serde_json::from_str::<J>(&j.input).unwrap_or(J::Null),
                       "status": j.status, "result": j.result})
            })
            .collect();
        let attempts: Vec<J> = store.attempts_of(&id)?.iter().map(attempt_json).collect();
        Ok(Reply(200, json!({"effects": list, "attempts": attempts})))
    })
    .await
}

async fn send_event(State(app): State<Shared>, uri: Uri, body: Body) -> Answer {
    let id = param(&uri)?;
    let body = json_body(body, app.cfg.max_body).await?;
    let head = body_head(&body, &["name", "payload", "tagged_payload"])?;
    let name = head
        .str("name")
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ApiError::BadRequest("body.name (event name) is required".into()))?
        .to_string();
    crate::storable::check("body.name", &name).map_err(ApiError::BadRequest)?;
    let payload = match (head.has("payload"), head.has("tagged_payload")) {
        (true, true) => {
            return Err(ApiError::BadRequest(
                "give payload or tagged_payload, not both".into(),
            ));
        }
        (true, false) => match crate::request_json::body_member(
            &body,
            "payload",
            false,
            app.host.store().packs_texts(),
        ) {
            Ok(Some(crate::request_json::Member::One(stored))) => stored,
            Ok(_) => return Err(ApiError::BadRequest("body.payload is missing".into())),
            Err(e) => return Err(ApiError::BadRequest(e)),
        },
        (false, true) => {
            let t = tagged_member(&body, "tagged_payload")?;
            crate::values::check_tagged(&t).map_err(ApiError::BadRequest)?;
            Stored::Text(tcc_ir::to_canonical(&t))
        }
        (false, false) => Stored::Text(r#"{"t":"null"}"#.to_string()),
    };
    drop(body);
    blocking(move || {
        app.host.store().send_event_stored(&id, &name, &payload)?;
        app.host.notify();
        Ok(Reply(202, json!({"accepted": true})))
    })
    .await
}

async fn cancel(State(app): State<Shared>, uri: Uri) -> Answer {
    let id = param(&uri)?;
    blocking(move || {
        app.host.store().request_cancel(&id)?;
        app.host.notify();
        Ok(Reply(202, json!({"accepted": true})))
    })
    .await
}

async fn terminate(State(app): State<Shared>, uri: Uri) -> Answer {
    let id = param(&uri)?;
    blocking(move || {
        app.host.store().request_terminate(&id)?;
        app.host.notify();
        Ok(Reply(202, json!({"accepted": true})))
    })
    .await
}

/// Operator resume (issue 33): 202 with the failed effect's key and the
/// revision resumed from; 409 `not_resumable` (TCC-H212) for an execution
/// that is not `failed` or failed otherwise.
///
/// The same verb lifts an operator's pause of the execution (issue 35,
/// `crate::pause`): 202 `{"resumed": true, "unpaused": true}`; a paused
/// execution that failed (in the drive running when it was paused) is
/// unpaused and resumed from before its failed effect.
async fn resume(State(app): State<Shared>, uri: Uri) -> Answer {
    let id = param(&uri)?;
    blocking(move || {
        let unpaused = match crate::pause::store_of(&**app.host.store()) {
            Some(_) if crate::pause::state(&**app.host.store(), &id)?.execution => {
                crate::pause::set_execution(&app.host, &id, false)?
            }
            _ => false,
        };
        if unpaused
            && app
                .host
                .store()
                .get_execution(&id)?
                .is_some_and(|r| r.status != "failed")
        {
            return Ok(Reply(
                202,
                json!({"resumed": true, "unpaused": true, "id": id}),
            ));
        }
        resume_failed(&app, id, unpaused)
    })
    .await
}

/// [`resume`] of a failed execution (issue 33).
fn resume_failed(app: &App, id: String, unpaused: bool) -> Answer {
    match app.host.resume(&id)? {
        ResumeOutcome::Resumed { key, revision } => Ok(Reply(
            202,
            json!({"resumed": true, "unpaused": unpaused, "id": id, "effect": key, "revision": revision}),
        )),
        ResumeOutcome::NotFailed(status) => Err(ApiError::NotResumable(format!(
            "execution {id:?} is {status}: only a failed or paused execution can be resumed"
        ))),
        ResumeOutcome::NotResumable(why) => Err(ApiError::NotResumable(format!(
            "execution {id:?} cannot be resumed: {why}"
        ))),
    }
}
