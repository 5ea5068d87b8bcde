//! The loopback HTTP server (axum) of the renderer page and the
//! playground: embedded static assets and two JSON endpoints.
//!
//! - `GET /` the playground, `GET /render.html` the bare renderer page,
//!   `GET /webgl.js`, `/playground.js`, `/playground.css` their scripts;
//! - `GET /api/programs` the built-in programs `[{name, source}]`;
//! - `POST /api/compile` `{source, label?}` → the verifier's diagnostics,
//!   every target's code and the WebGL preview (`crate::api`);
//! - `GET /graph`, `/graph.js` the Graph tab, `POST /api/graph` (body: a
//!   graph document) its compiler and preview (`crate::graph`).

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::net::SocketAddr;

/// The largest request body `POST /api/compile` accepts.
pub const MAX_BODY: usize = 4 << 20;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const RENDER_HTML: &str = include_str!("../assets/render.html");
const WEBGL_JS: &str = include_str!("../assets/webgl.js");
const PLAYGROUND_JS: &str = include_str!("../assets/playground.js");
const PLAYGROUND_CSS: &str = include_str!("../assets/playground.css");
const GRAPH_HTML: &str = include_str!("../assets/graph.html");
const GRAPH_JS: &str = include_str!("../assets/graph.js");

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

#[derive(serde::Deserialize)]
struct CompileRequest {
    source: String,
    #[serde(default)]
    label: Option<String>,
}

async fn compile(body: axum::body::Bytes) -> Response {
    let request: CompileRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            let error =
                serde_json::json!({"error": {"code": "bad-request", "message": e.to_string()}});
            return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
    };
    let label = request
        .label
        .unwrap_or_else(|| "playground.vpl".to_string());
    let result =
        tokio::task::spawn_blocking(move || crate::api::compile(&request.source, &label)).await;
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => {
            let error =
                serde_json::json!({"error": {"code": "internal", "message": e.to_string()}});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(error)).into_response()
        }
    }
}

fn router() -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/render.html",
            get(|| async { asset("text/html; charset=utf-8", RENDER_HTML) }),
        )
        .route(
            "/webgl.js",
            get(|| async { asset("text/javascript; charset=utf-8", WEBGL_JS) }),
        )
        .route(
            "/playground.js",
            get(|| async { asset("text/javascript; charset=utf-8", PLAYGROUND_JS) }),
        )
        .route(
            "/playground.css",
            get(|| async { asset("text/css; charset=utf-8", PLAYGROUND_CSS) }),
        )
        .route(
            "/api/programs",
            get(|| async { axum::Json(crate::api::programs()) }),
        )
        .route("/api/compile", post(compile))
        .route(
            "/graph",
            get(|| async { asset("text/html; charset=utf-8", GRAPH_HTML) }),
        )
        .route(
            "/graph.js",
            get(|| async { asset("text/javascript; charset=utf-8", GRAPH_JS) }),
        )
        .route("/api/graph", post(crate::graph::handler))
        .route(
            "/api/graph/catalogue",
            get(|| async { axum::Json(vpl_graph::nodes::catalogue()) }),
        )
        .route(
            "/api/graph/examples",
            get(|| async { axum::Json(crate::graph::examples()) }),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(crate::admission::guard))
}

/// A running server on its own thread and Tokio runtime; dropping it
/// stops it.
pub struct Server {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free one) and starts serving.
    pub fn start(addr: SocketAddr) -> std::io::Result<Server> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("vpl-web-server".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    // Stopping drops the runtime with every connection task,
                    // so a browser's idle keep-alive connection cannot hold
                    // the shutdown.
                    tokio::select! {
                        served = crate::admission::serve(listener, router()) => served,
                        _ = rx => Ok(()),
                    }
                })
            })?;
        Ok(Server {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Serves until the process ends (or the server fails).
    pub fn wait(mut self) -> std::io::Result<()> {
        // Keep the shutdown sender alive: dropping it would stop serving.
        let _keep = self.shutdown.take();
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
