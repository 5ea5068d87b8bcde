//! The source route (issue 35): `GET /v1/artifacts/{hash}/source` → 200
//! `{"hash", "file", "text"}`, the text kept beside the artifact when it
//! was registered with it (`POST /v1/artifacts` with `{"artifact",
//! "source"}`, `crate::service`); 404 `not_found` when the artifact has
//! none kept (or is not stored).

use crate::api_error::ApiError;
use crate::await_result::{json_response, path_param};
use crate::host::Host;
use axum::Router;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::sync::Arc;

async fn source(host: Arc<Host>, hash: String) -> Response {
    let answer = tokio::task::spawn_blocking(move || -> Result<Response, ApiError> {
        match super::rows::get(&**host.store(), &hash)? {
            Some(s) => Ok(json_response(
                200,
                &json!({"hash": hash, "file": s.file, "text": s.text}),
            )),
            None => Err(ApiError::NotFound(format!(
                "no source kept for artifact {hash:?}"
            ))),
        }
    })
    .await
    .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))
    .and_then(|r| r);
    answer.unwrap_or_else(IntoResponse::into_response)
}

/// The route over `host`'s store.
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>) -> Router<S> {
    Router::new().route(
        "/v1/artifacts/{hash}/source",
        get(move |p: Result<Path<String>, PathRejection>| async move {
            match path_param(p) {
                Ok(hash) => source(host, hash).await,
                Err(e) => e.into_response(),
            }
        }),
    )
}
