//! The flow-limit routes:
//!
//! - `GET /v1/limits` → `{"limits": [...]}`, by scope, each with its
//!   `in_use` slots and `waiting` executions.
//! - `PUT /v1/limits/{scope}` `{"max_concurrent", "rate", "burst"}` → 200
//!   with the limit (created or replaced; applies on every node within
//!   [`super::REFRESH_MS`]).
//! - `GET /v1/limits/{scope}`, `DELETE /v1/limits/{scope}` (its waiters
//!   are let go at once).

use super::{FlowStore, LimitError, Settings, limit_json, limit_row};
use crate::api_error::ApiError;
use crate::await_result::{json_response, path_param};
use crate::host::Host;
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

fn one(host: &Host, scope: &str) -> Result<J, ApiError> {
    let all = flow_of(host)?.list_limits(crate::ids::now_ms())?;
    all.iter()
        .find(|u| u.limit.scope == scope)
        .map(limit_json)
        .ok_or_else(|| ApiError::NotFound(format!("no limit {scope:?}")))
}

async fn list(host: Arc<Host>) -> Result<Response, ApiError> {
    blocking(move || {
        let all = flow_of(&host)?.list_limits(crate::ids::now_ms())?;
        let limits: Vec<J> = all.iter().map(limit_json).collect();
        Ok(json_response(200, &json!({"limits": limits})))
    })
    .await
}

async fn put(
    host: Arc<Host>,
    scope: String,
    max_body: usize,
    body: Body,
) -> Result<Response, ApiError> {
    let bytes = to_bytes(body, max_body)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit: max_body })?;
    let body: J = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))?;
    let row = limit_row(&scope, Settings::from_json(&body)?, crate::ids::now_ms())?;
    blocking(move || {
        flow_of(&host)?.put_limit(&row)?;
        host.flow().invalidate();
        host.notify();
        Ok(json_response(200, &one(&host, &row.scope)?))
    })
    .await
}

async fn show(host: Arc<Host>, scope: String) -> Result<Response, ApiError> {
    blocking(move || Ok(json_response(200, &one(&host, &scope)?))).await
}

async fn delete(host: Arc<Host>, scope: String) -> Result<Response, ApiError> {
    blocking(move || {
        if !flow_of(&host)?.delete_limit(&scope)? {
            return Err(ApiError::NotFound(format!("no limit {scope:?}")));
        }
        host.flow().invalidate();
        host.notify();
        Ok(json_response(200, &json!({"deleted": scope})))
    })
    .await
}

fn respond(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

type ScopeParam = Result<Path<String>, PathRejection>;

/// The routes over `host`'s store.
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>, max_body: usize) -> Router<S> {
    let (h1, h2, h3, h4) = (host.clone(), host.clone(), host.clone(), host);
    Router::new()
        .route(
            "/v1/limits",
            get(move || async move { respond(list(h1).await) }),
        )
        .route(
            "/v1/limits/{scope}",
            get(move |p: ScopeParam| async move {
                respond(async { show(h2, path_param(p)?).await }.await)
            })
            .put(move |p: ScopeParam, body: Body| async move {
                respond(async { put(h3, path_param(p)?, max_body, body).await }.await)
            })
            .delete(move |p: ScopeParam| async move {
                respond(async { delete(h4, path_param(p)?).await }.await)
            }),
        )
}
