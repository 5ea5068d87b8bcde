//! The flow-limit routes. Each acts in the request's namespace
//! (`TCC-Namespace` / `?namespace=`, `crate::namespace`): a request
//! naming one (or made with a token of one) reads and sets that
//! namespace's limits; a token of every namespace naming none, the
//! global ones. Setting and deleting need a token of every namespace
//! (`namespace::routes::Rule::Operator`): a tenant reads its limits but
//! does not lift them.
//!
//! - `GET /v1/limits` → `{"limits": [...]}`, by scope, each with its
//!   `namespace` (`null`: global), `in_use` (what runs under it across
//!   nodes, [`super::LimitUsage::in_use`]) and `waiting` executions (a token of every namespace naming none lists every
//!   limit, global and per namespace).
//! - `PUT /v1/limits/{scope}` `{"max_concurrent", "rate", "burst"}` → 200
//!   with the limit (created or replaced; applies on every node within
//!   [`super::REFRESH_MS`]).
//! - `GET /v1/limits/{scope}`, `DELETE /v1/limits/{scope}` (its waiters
//!   are let go at once).

use super::{FlowStore, LimitError, Settings, limit_json, limit_key, limit_row, split_key};
use crate::api_error::ApiError;
use crate::await_result::{json_response, path_param};
use crate::host::Host;
use crate::namespace::Scope;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value as J, json};
use std::sync::Arc;

impl From<LimitError> for ApiError {
    fn from(e: LimitError) -> ApiError {
        ApiError::BadRequest(format!("{}: {e}", e.code()))
    }
}

async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, ApiError> + Send + 'static,
) -> Result<R, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))?
}

fn flow_of(host: &Host) -> Result<&dyn FlowStore, ApiError> {
    super::store_of(&**host.store())
        .ok_or_else(|| ApiError::Internal("this store keeps no flow limits".into()))
}

/// The namespace a limit route acts on: the one the request names (or
/// its token's own), `None` for a token of every namespace naming none
/// (the global limits).
fn namespace_of(scope: &Scope) -> Option<&str> {
    scope.namespace.as_deref()
}

/// The stored key of the path's scope in the request's namespace; the
/// path holds a bare scope (`program:NAME`, `route:PATTERN`): the
/// namespace comes from the header or query only.
fn key_of(scope: &Scope, path_scope: &str) -> Result<String, ApiError> {
    super::Scope::parse(path_scope)?;
    Ok(limit_key(namespace_of(scope), path_scope))
}

fn one(host: &Host, key: &str) -> Result<J, ApiError> {
    let all = flow_of(host)?.list_limits(crate::ids::now_ms())?;
    all.iter()
        .find(|u| u.limit.scope == key)
        .map(limit_json)
        .ok_or_else(|| ApiError::NotFound(format!("no limit {:?}", split_key(key).1)))
}

async fn list(host: Arc<Host>, scope: Scope) -> Result<Response, ApiError> {
    blocking(move || {
        let all = flow_of(&host)?.list_limits(crate::ids::now_ms())?;
        let limits: Vec<J> = all
            .iter()
            .filter(|u| {
                scope.namespace.is_none() || split_key(&u.limit.scope).0 == namespace_of(&scope)
            })
            .map(limit_json)
            .collect();
        Ok(json_response(200, &json!({"limits": limits})))
    })
    .await
}

async fn put(
    host: Arc<Host>,
    scope: Scope,
    path_scope: String,
    max_body: usize,
    body: Body,
) -> Result<Response, ApiError> {
    let bytes = to_bytes(body, max_body)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit: max_body })?;
    let body: J = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))?;
    let key = key_of(&scope, &path_scope)?;
    let row = limit_row(&key, Settings::from_json(&body)?, crate::ids::now_ms())?;
    blocking(move || {
        flow_of(&host)?.put_limit(&row)?;
        host.flow().invalidate();
        host.notify();
        Ok(json_response(200, &one(&host, &row.scope)?))
    })
    .await
}

async fn show(host: Arc<Host>, scope: Scope, path_scope: String) -> Result<Response, ApiError> {
    let key = key_of(&scope, &path_scope)?;
    blocking(move || Ok(json_response(200, &one(&host, &key)?))).await
}

async fn delete(host: Arc<Host>, scope: Scope, path_scope: String) -> Result<Response, ApiError> {
    let key = key_of(&scope, &path_scope)?;
    blocking(move || {
        if !flow_of(&host)?.delete_limit(&key)? {
            return Err(ApiError::NotFound(format!("no limit {path_scope:?}")));
        }
        host.flow().invalidate();
        host.notify();
        let mut answer = json!({"deleted": path_scope});
        if let Some(ns) = namespace_of(&scope) {
            answer["namespace"] = json!(ns);
        }
        Ok(json_response(200, &answer))
    })
    .await
}

fn respond(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

type ScopeParam = Result<Path<String>, PathRejection>;

/// The request's namespace scope (put there by the service's guard).
type ScopeExt = Option<axum::Extension<Scope>>;

fn scope_of(ext: ScopeExt) -> Scope {
    ext.map_or_else(Scope::operator, |axum::Extension(s)| s)
}

/// The routes over `host`'s store.
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>, max_body: usize) -> Router<S> {
    let (h1, h2, h3, h4) = (host.clone(), host.clone(), host.clone(), host);
    Router::new()
        .route(
            "/v1/limits",
            get(move |ns: ScopeExt| async move { respond(list(h1, scope_of(ns)).await) }),
        )
        .route(
            "/v1/limits/{scope}",
            get(move |ns: ScopeExt, p: ScopeParam| async move {
                respond(async { show(h2, scope_of(ns), path_param(p)?).await }.await)
            })
            .put(move |ns: ScopeExt, p: ScopeParam, body: Body| async move {
                respond(async { put(h3, scope_of(ns), path_param(p)?, max_body, body).await }.await)
            })
            .delete(move |ns: ScopeExt, p: ScopeParam| async move {
                respond(async { delete(h4, scope_of(ns), path_param(p)?).await }.await)
            }),
        )
}
