//! The dashboard (`/ui`, issue 27): one embedded page (`assets`) and the
//! JSON routes its script reads (`/ui/api/…`). Its actions (send an event,
//! cancel) are the API's own `POST /v1/executions/{id}/…` routes.
//!
//! Auth is the API's: the service's guard covers every route here. The
//! page and its script and style sheet hold no data and are served without
//! a token (like `GET /v1/health`); every datum comes from a route that
//! needs `Authorization: Bearer TOKEN` when a token is configured. The
//! script asks for the token once and keeps it in the tab's
//! `sessionStorage` (never in a cookie, so no other site can make the
//! browser act with it).
//!
//! Listing: [`crate::store::Store::page_executions`], newest first, keyset
//! paged (the `next` cursor is the last row's `seq`, or its id when
//! searching by id prefix).

pub mod assets;
pub mod query;
pub mod view;

use crate::api_error::ApiError;
use crate::host::Host;
use crate::store::{PageQuery, StoreError};
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value as J, json};
use std::sync::Arc;

/// History entries the execution page shows (the oldest first).
pub const HISTORY_LIMIT: u32 = 2000;

/// The routes that serve the page itself (no data), reachable without a
/// token so that a browser can load the page that then asks for it.
pub const PUBLIC_ROUTES: &[&str] = &[
    "/ui",
    "/ui/",
    "/ui/executions/{id}",
    "/ui/programs",
    "/ui/programs/{hash}",
    "/ui/schedules",
    "/ui/assets/app.js",
    "/ui/assets/app.css",
];

/// Whether the matched route `route` is one of [`PUBLIC_ROUTES`].
pub fn is_public(route: &str) -> bool {
    PUBLIC_ROUTES.contains(&route)
}

/// The dashboard's routes, for any router state (they carry their own).
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>) -> Router<S> {
    Router::new()
        .route("/ui", get(page))
        .route("/ui/", get(page))
        .route("/ui/executions/{id}", get(page))
        .route("/ui/programs", get(page))
        .route("/ui/programs/{hash}", get(page))
        .route("/ui/schedules", get(page))
        .route("/ui/assets/app.js", get(script))
        .route("/ui/assets/app.css", get(style))
        .route("/ui/api/executions", get(list))
        .route("/ui/api/executions/{id}", get(execution))
        .route("/ui/api/programs", get(programs))
        .route("/ui/api/artifacts/{hash}", get(artifact))
        .with_state(host)
}

fn text(body: &'static str, content_type: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r.headers_mut().insert(
        header::HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    r
}

async fn page() -> Response {
    let mut r = text(assets::INDEX_HTML, "text/html; charset=utf-8");
    // The page runs only its own script, loads nothing from elsewhere and
    // may not be framed.
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ),
    );
    r
}

async fn script() -> Response {
    text(assets::APP_JS, "text/javascript; charset=utf-8")
}

async fn style() -> Response {
    text(assets::APP_CSS, "text/css; charset=utf-8")
}

/// A JSON answer or an error in the API's shape.
struct Json(u16, J);

impl IntoResponse for Json {
    fn into_response(self) -> Response {
        let mut r = Response::new(Body::from(tcc_ir::to_canonical(&self.1)));
        *r.status_mut() = StatusCode::from_u16(self.0).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }
}

/// An error answer, in the API's shape ([`ApiError::body`]).
fn error(e: impl Into<ApiError>) -> Json {
    let e = e.into();
    Json(e.status(), e.body())
}

/// Runs store work on the blocking pool.
async fn blocking(f: impl FnOnce() -> Json + Send + 'static) -> Json {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| error(ApiError::Internal(format!("handler failed: {e}"))))
}

/// Parses the listing's query: `status`, `program`, `q` (id prefix),
/// `before` (cursor) and `limit` (default 50, at most 500).
pub fn page_query(raw: &str) -> Result<PageQuery, String> {
    let p = query::pairs(raw).ok_or("malformed query string")?;
    let limit = match query::get(&p, "limit") {
        Some(l) => l
            .parse::<u32>()
            .map_err(|_| "limit must be a number".to_string())?,
        None => 50,
    };
    let id_prefix = query::get(&p, "q").map(str::to_string);
    let before = query::get(&p, "before");
    let (before_seq, before_id) = match (&id_prefix, before) {
        (_, None) => (None, None),
        (Some(_), Some(b)) => (None, Some(b.to_string())),
        (None, Some(b)) => (
            Some(
                b.parse::<i64>()
                    .map_err(|_| "before must be the cursor of the previous page".to_string())?,
            ),
            None,
        ),
    };
    Ok(PageQuery {
        status: query::get(&p, "status").map(str::to_string),
        program: query::get(&p, "program").map(str::to_string),
        id_prefix,
        before_seq,
        before_id,
        limit,
        namespace: None,
    })
}

/// One page of the executions list as the page reads it: rows, the cursor
/// of the next page (`null` on the last) and the order (`seq` or `id`).
pub fn list_page(host: &Host, q: &PageQuery) -> Result<J, StoreError> {
    let rows = host.store().page_executions(q)?;
    let now = crate::ids::now_ms();
    let by_id = q.id_prefix.is_some();
    let next = if rows.len() as u32 == q.page_size() {
        rows.last().map(|r| {
            if by_id {
                J::from(r.id.clone())
            } else {
                J::from(r.seq.to_string())
            }
        })
    } else {
        None
    };
    Ok(json!({
        "executions": rows.iter().map(|r| view::list_row(r, now)).collect::<Vec<_>>(),
        "next": next,
        "order": if by_id { "id" } else { "seq" },
    }))
}

/// The execution page's document (see [`view::execution_page`]); `None`
/// for an unknown id.
pub fn execution_doc(host: &Host, id: &str) -> Result<Option<J>, StoreError> {
    match crate::status_read::read(&**host.store(), id, crate::ids::now_ms())? {
        Some(read) => execution_doc_of(host, &read).map(Some),
        None => Ok(None),
    }
}

/// [`execution_doc`] of an execution whose status was read already
/// (`crate::status_read`: the row and its pause marks).
pub fn execution_doc_of(
    host: &Host,
    read: &crate::status_read::StatusRead,
) -> Result<J, StoreError> {
    let store = host.store();
    let id = read.row.id.as_str();
    // The status read leaves the arguments out; the page shows them.
    let mut row = read.row.clone();
    if let Some(full) = store.get_execution(id)? {
        row.args = full.args;
    }
    let row = &row;
    let history = store.history(id, 0, HISTORY_LIMIT)?;
    let journal = store.journal_of(id)?;
    let waits = store.waits_of(id)?;
    // The checkpoint chain, replayed once: the latest continuation (where
    // the pc is, and the slots) and where each checkpoint stood (issue 35,
    // `crate::source::view`). A terminal execution has no pc to show.
    let (latest, steps) = match crate::source::view::replay(
        &store.load_checkpoints(id)?,
        &host.config().limits,
    ) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(execution_id = %id, error = %e, "dashboard: continuation not readable");
            (None, Vec::new())
        }
    };
    let latest = latest.filter(|_| !row.is_terminal());
    let frames = latest
        .as_ref()
        .map(|c| c.frames.iter().map(|f| (f.func_id, f.pc)).collect());
    let mut doc = view::execution_page(
        row,
        &history,
        HISTORY_LIMIT as usize,
        &journal,
        &waits,
        frames,
        crate::ids::now_ms(),
    );
    source_members(host, row, &history, latest.as_ref(), &steps, &mut doc)?;
    // A held execution reads `paused` (issue 35, `crate::pause`).
    if !row.is_terminal()
        && let Some(execution) = doc.get_mut("execution").and_then(J::as_object_mut)
    {
        for (k, v) in crate::pause::status_members(row, read.pause) {
            execution.insert(k, v);
        }
    }
    Ok(doc)
}

/// The execution page's source members (issue 35, `crate::source`):
/// `source` (where the pc stands: file, line, columns, and the line's
/// text when the source was kept), `source_file` (the kept source's file
/// name, `null` when none was kept), `slots` (every frame of the latest
/// continuation with its slots' values; `null` for a terminal execution)
/// and each history entry's `source` (where the execution stood).
fn source_members(
    host: &Host,
    row: &crate::store::ExecutionRow,
    history: &[crate::store::HistoryRow],
    latest: Option<&tcc_engine::Continuation>,
    steps: &[crate::source::view::Step],
    doc: &mut J,
) -> Result<(), StoreError> {
    use crate::source::view;
    // Parsed once per hash, not per poll (`crate::source::cache`).
    let artifact = match host.artifact_views().get_or_parse(&row.artifact_hash, || {
        host.store().get_artifact(&row.artifact_hash)
    }) {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(execution_id = %row.id, error = %e, "dashboard: artifact not readable");
            None
        }
    };
    let source = crate::source::rows::get(&**host.store(), &row.artifact_hash)?;
    doc["source_file"] = source.as_ref().map(|s| s.file.clone()).into();
    let Some(artifact) = artifact else {
        doc["source"] = J::Null;
        doc["slots"] = J::Null;
        return Ok(());
    };
    doc["source"] = match (latest, steps.last()) {
        (Some(_), Some(step)) => view::step_location(&artifact, step, source.as_ref()).into(),
        _ => J::Null,
    };
    doc["slots"] = latest
        .map(|c| view::frames_with_slots(c, &artifact, source.as_ref()))
        .into();
    let locations = view::history_locations(history, steps, &artifact, source.as_ref());
    if let Some(entries) = doc.get_mut("history").and_then(J::as_array_mut) {
        for (e, l) in entries.iter_mut().zip(locations) {
            if let Some(l) = l {
                e["source"] = l;
            }
        }
    }
    Ok(())
}

/// The request's namespace scope (put there by the service's guard; issue
/// 35, `crate::namespace`).
type ScopeExt = Option<axum::Extension<crate::namespace::Scope>>;

fn scope_of(ext: ScopeExt) -> crate::namespace::Scope {
    ext.map_or_else(crate::namespace::Scope::operator, |axum::Extension(s)| s)
}

async fn list(State(host): State<Arc<Host>>, scope: ScopeExt, q: RawQuery) -> Json {
    let mut q = match page_query(q.0.as_deref().unwrap_or("")) {
        Ok(q) => q,
        Err(m) => return error(ApiError::BadRequest(m)),
    };
    q.namespace = scope_of(scope).filter();
    blocking(move || match list_page(&host, &q) {
        Ok(j) => Json(200, j),
        Err(e) => error(e),
    })
    .await
}

async fn execution(
    State(host): State<Arc<Host>>,
    checked: Option<axum::Extension<crate::namespace::routes::Checked>>,
    Path(id): Path<String>,
) -> Json {
    // The guard made the status read when it checked the namespace.
    let read = checked
        .and_then(|axum::Extension(c)| c.status)
        .filter(|r| r.row.id == id);
    blocking(move || {
        let read = match read {
            Some(read) => Ok(Some(read)),
            None => crate::status_read::read(&**host.store(), &id, crate::ids::now_ms())
                .map(|r| r.map(Arc::new)),
        };
        let doc = read.and_then(|read| match read {
            Some(read) => execution_doc_of(&host, &read).map(|j| Some((j, read))),
            None => Ok(None),
        });
        match doc {
            Ok(Some((mut j, read))) => {
                crate::flow::mark_page(&mut j, read.queued.clone());
                Json(200, j)
            }
            Ok(None) => error(ApiError::NotFound(format!("no execution {id:?}"))),
            Err(e) => error(e),
        }
    })
    .await
}

fn stored_artifact(host: &Host, hash: &str) -> Result<Option<J>, StoreError> {
    match host.store().get_artifact(hash)? {
        Some(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("artifact {hash}: {e}"))),
        None => Ok(None),
    }
}

async fn programs(State(host): State<Arc<Host>>, scope: ScopeExt) -> Json {
    let scope = scope_of(scope);
    blocking(move || {
        let run = || -> Result<J, StoreError> {
            let mut list = Vec::new();
            let paused = match crate::pause::store_of(&**host.store()) {
                Some(p) => p.paused_programs()?,
                None => Vec::new(),
            };
            for (name, hash) in crate::namespace::programs(&**host.store(), &scope)? {
                let a = stored_artifact(&host, &hash)?;
                let mut summary = view::program_summary(&name, &hash, a.as_ref());
                if let Some(m) = summary.as_object_mut() {
                    m.insert("paused".into(), paused.contains(&name).into());
                }
                list.push(summary);
            }
            Ok(json!({"programs": list}))
        };
        match run() {
            Ok(j) => Json(200, j),
            Err(e) => error(e),
        }
    })
    .await
}

async fn artifact(State(host): State<Arc<Host>>, Path(hash): Path<String>) -> Json {
    blocking(move || {
        let run = || -> Result<Option<J>, StoreError> {
            let Some(a) = stored_artifact(&host, &hash)? else {
                return Ok(None);
            };
            let names: Vec<String> = host
                .store()
                .programs()?
                .into_iter()
                .filter(|(_, h)| *h == hash)
                .map(|(n, _)| n)
                .collect();
            Ok(Some(view::artifact_listing(&hash, &names, &a)))
        };
        match run() {
            Ok(Some(j)) => Json(200, j),
            Ok(None) => error(ApiError::NotFound(format!("no artifact {hash:?}"))),
            Err(e) => error(e),
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_query_picks_its_cursor_by_order() {
        let q = page_query("status=suspended&before=42&limit=10").unwrap();
        assert_eq!(q.status.as_deref(), Some("suspended"));
        assert_eq!((q.before_seq, q.before_id.as_deref()), (Some(42), None));
        assert_eq!(q.page_size(), 10);
        let q = page_query("q=e-01&before=e-0199").unwrap();
        assert_eq!(q.id_prefix.as_deref(), Some("e-01"));
        assert_eq!(
            (q.before_seq, q.before_id.as_deref()),
            (None, Some("e-0199"))
        );
        assert_eq!(q.page_size(), 50);
        assert!(page_query("before=e-01").is_err());
        assert!(page_query("limit=x").is_err());
        assert_eq!(page_query("limit=100000").unwrap().page_size(), 500);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_listing_queries_are_parsed_or_refused(q in ".{0,80}") {
            if let Ok(p) = page_query(&q) {
                proptest::prop_assert!((1..=500).contains(&p.page_size()));
                proptest::prop_assert!(p.before_seq.is_none() || p.id_prefix.is_none());
            }
        }
    }

    #[test]
    fn only_the_page_itself_is_public() {
        assert!(is_public("/ui/executions/{id}"));
        assert!(is_public("/ui/assets/app.js"));
        assert!(!is_public("/ui/api/executions"));
        assert!(!is_public("/ui/api/executions/{id}"));
        assert!(!is_public("/v1/executions"));
    }
}
