//! The pause routes (issue 35):
//!
//! - `POST /v1/executions/{id}/pause` → 200 `{"id", "paused": true,
//!   "changed"}` (`changed`: false when it was paused already); 404 for an
//!   unknown id, 409 `conflict` (TCC-H204) for a terminal execution. It is
//!   resumed by `POST /v1/executions/{id}/resume` (`crate::service`), which
//!   also resumes a failed execution (issue 33).
//! - `POST /v1/programs/{name}/pause`, `POST /v1/programs/{name}/resume`
//!   → 200 `{"program", "paused", "changed"}`. Any name may be paused,
//!   registered or not: executions started by that name later are held.
//! - `GET /v1/programs` lists the paused names as `paused_programs`.

use crate::api_error::ApiError;
use crate::await_result::{json_response, path_param};
use crate::host::Host;
use axum::Router;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;
use std::sync::Arc;

async fn blocking(f: impl FnOnce() -> Result<Response, ApiError> + Send + 'static) -> Response {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))
        .and_then(|r| r)
        .unwrap_or_else(IntoResponse::into_response)
}

async fn pause_execution(host: Arc<Host>, id: String) -> Response {
    blocking(move || {
        let changed = super::set_execution(&host, &id, true)?;
        Ok(json_response(
            200,
            &json!({"id": id, "paused": true, "changed": changed}),
        ))
    })
    .await
}

async fn set_program(host: Arc<Host>, name: String, paused: bool) -> Response {
    blocking(move || {
        crate::storable::check("program", &name).map_err(ApiError::BadRequest)?;
        let changed = super::set_program(&host, &name, paused)?;
        Ok(json_response(
            200,
            &json!({"program": name, "paused": paused, "changed": changed}),
        ))
    })
    .await
}

type Param = Result<Path<String>, PathRejection>;

/// The routes over `host`'s store.
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>) -> Router<S> {
    let (h1, h2, h3) = (host.clone(), host.clone(), host);
    Router::new()
        .route(
            "/v1/executions/{id}/pause",
            post(move |p: Param| async move {
                match path_param(p) {
                    Ok(id) => pause_execution(h1, id).await,
                    Err(e) => e.into_response(),
                }
            }),
        )
        .route(
            "/v1/programs/{name}/pause",
            post(move |p: Param| async move {
                match path_param(p) {
                    Ok(name) => set_program(h2, name, true).await,
                    Err(e) => e.into_response(),
                }
            }),
        )
        .route(
            "/v1/programs/{name}/resume",
            post(move |p: Param| async move {
                match path_param(p) {
                    Ok(name) => set_program(h3, name, false).await,
                    Err(e) => e.into_response(),
                }
            }),
        )
}
