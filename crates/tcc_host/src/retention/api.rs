//! `DELETE /v1/executions/{id}` (issue 35): deletes one terminal execution
//! with everything keyed by it → 200 `{"id", "deleted": true}`; 404
//! `not_found` (TCC-H202) for an unknown id, 409 `conflict` (TCC-H204)
//! for an unfinished one.

use crate::api_error::ApiError;
use crate::await_result::json_response;
use crate::host::Host;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// The route's handler: `id` already decoded by the service.
pub async fn delete(host: Arc<Host>, id: String) -> Response {
    tokio::task::spawn_blocking(move || {
        super::delete_one(&**host.store(), &id)?;
        Ok::<_, ApiError>(json_response(200, &json!({"id": id, "deleted": true})))
    })
    .await
    .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))
    .and_then(|r| r)
    .unwrap_or_else(IntoResponse::into_response)
}
