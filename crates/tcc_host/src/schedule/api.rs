//! The schedule routes:
//!
//! - `POST /v1/schedules` `{"name", "program", "cron" | "every", "args" |
//!   "tagged_args", "overlap", "catchup", "catchup_window", "paused"}` →
//!   201 with the schedule.
//! - `GET /v1/schedules` → `{"schedules": [...]}`, by name.
//! - `GET /v1/schedules/{name}`, `DELETE /v1/schedules/{name}`.
//! - `POST /v1/schedules/{name}/pause`, `POST /v1/schedules/{name}/resume`
//!   → the schedule. Resuming sets the cursor to the first tick after now:
//!   ticks that came due while paused are not started.

use super::{
    Catchup, DEFAULT_CATCHUP_WINDOW_MS, NewSchedule, Overlap, ScheduleError, ScheduleStore, Spec,
    schedule_json,
};
use crate::api_error::ApiError;
use crate::await_result::{json_response, path_param};
use crate::host::Host;
use crate::namespace::Scope;
use crate::store::StoreError;
use crate::values::TaggedList;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value as J, json};
use std::sync::Arc;

impl From<ScheduleError> for ApiError {
    fn from(e: ScheduleError) -> ApiError {
        ApiError::BadRequest(e.to_string())
    }
}

async fn body_json(body: Body, max_body: usize) -> Result<J, ApiError> {
    let bytes = to_bytes(body, max_body)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit: max_body })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    crate::values::count_values(&bytes, crate::values::MAX_VALUES).map_err(|e| match e {
        crate::values::CountError::TooMany { limit } => ApiError::TooManyValues { limit },
        crate::values::CountError::NotJson(e) => {
            ApiError::BadRequest(format!("body is not JSON: {e}"))
        }
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))
}

async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, ApiError> + Send + 'static,
) -> Result<R, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))?
}

fn schedules_of(host: &Host) -> Result<&dyn ScheduleStore, ApiError> {
    super::store_of(&**host.store())
        .ok_or_else(|| ApiError::Store(StoreError::Unsupported("schedules".into())))
}

fn str_field<'a>(body: &'a J, name: &str) -> Result<Option<&'a str>, ApiError> {
    match body.get(name) {
        None | Some(J::Null) => Ok(None),
        Some(J::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::BadRequest(format!(
            "body.{name} must be a string"
        ))),
    }
}

/// The new schedule a create request describes.
pub fn new_schedule(body: &J) -> Result<NewSchedule, ApiError> {
    let name = str_field(body, "name")?
        .ok_or_else(|| ApiError::BadRequest("body.name is required".into()))?;
    let program = str_field(body, "program")?
        .ok_or_else(|| ApiError::BadRequest("body.program (name or hash) is required".into()))?;
    crate::storable::check("body.program", program).map_err(ApiError::BadRequest)?;
    let spec = match (str_field(body, "cron")?, str_field(body, "every")?) {
        (Some(c), None) => Spec::parse("cron", c)?,
        (None, Some(e)) => Spec::parse("every", e)?,
        _ => {
            return Err(ApiError::BadRequest(
                "give one of body.cron (a cron expression) and body.every (an interval)".into(),
            ));
        }
    };
    let args = match (body.get("args"), body.get("tagged_args")) {
        (Some(_), Some(_)) => {
            return Err(ApiError::BadRequest(
                "give args or tagged_args, not both".into(),
            ));
        }
        (Some(J::Array(a)), None) => TaggedList::from_values(
            &a.iter()
                .map(crate::values::plain_to_tagged)
                .collect::<Result<Vec<_>, _>>()
                .map_err(ApiError::BadRequest)?,
        ),
        (None, Some(J::Array(a))) => {
            for v in a {
                crate::values::check_tagged(v).map_err(ApiError::BadRequest)?;
            }
            TaggedList::from_values(a)
        }
        (None, None) => TaggedList::default(),
        _ => {
            return Err(ApiError::BadRequest(
                "args / tagged_args must be an array".into(),
            ));
        }
    };
    let overlap = Overlap::parse(str_field(body, "overlap")?.unwrap_or("skip"))?;
    let catchup = Catchup::parse(str_field(body, "catchup")?.unwrap_or("latest"))?;
    let catchup_window_ms = match body.get("catchup_window") {
        None | Some(J::Null) => DEFAULT_CATCHUP_WINDOW_MS,
        Some(J::String(s)) => super::parse_duration_ms(s)
            .map_err(|m| ApiError::BadRequest(format!("body.catchup_window: {m}")))?,
        Some(J::Number(n)) => n.as_i64().ok_or_else(|| {
            ApiError::BadRequest("body.catchup_window: milliseconds or a duration".into())
        })?,
        Some(_) => {
            return Err(ApiError::BadRequest(
                "body.catchup_window: milliseconds or a duration".into(),
            ));
        }
    };
    let paused = match body.get("paused") {
        None | Some(J::Null) => false,
        Some(J::Bool(b)) => *b,
        Some(_) => return Err(ApiError::BadRequest("body.paused must be a boolean".into())),
    };
    Ok(NewSchedule {
        name: name.to_string(),
        program: program.to_string(),
        args,
        spec,
        overlap,
        catchup,
        catchup_window_ms,
        paused,
    })
}

async fn create(
    host: Arc<Host>,
    max_body: usize,
    scope: Scope,
    body: Body,
) -> Result<Response, ApiError> {
    let body = body_json(body, max_body).await?;
    let new = new_schedule(&body)?;
    blocking(move || {
        let namespace = scope.creates_in().to_string();
        host.resolve_in(&namespace, &new.program)?;
        let mut row = new.row(crate::ids::now_ms())?;
        row.namespace = namespace;
        schedules_of(&host)?.create_schedule(&row)?;
        Ok(json_response(201, &schedule_json(&row)))
    })
    .await
}

async fn list(host: Arc<Host>, scope: Scope) -> Result<Response, ApiError> {
    blocking(move || {
        let rows = schedules_of(&host)?.list_schedules()?;
        let list: Vec<J> = rows
            .iter()
            .filter(|r| scope.sees(&r.namespace))
            .map(schedule_json)
            .collect();
        Ok(json_response(200, &json!({"schedules": list})))
    })
    .await
}

fn get_one(store: &dyn ScheduleStore, name: &str) -> Result<super::ScheduleRow, ApiError> {
    store
        .get_schedule(name)?
        .ok_or_else(|| ApiError::Store(StoreError::NotFound(format!("schedule {name:?}"))))
}

async fn show(host: Arc<Host>, name: String) -> Result<Response, ApiError> {
    blocking(move || {
        let row = get_one(schedules_of(&host)?, &name)?;
        Ok(json_response(200, &schedule_json(&row)))
    })
    .await
}

async fn delete(host: Arc<Host>, name: String) -> Result<Response, ApiError> {
    blocking(move || {
        schedules_of(&host)?.delete_schedule(&name)?;
        Ok(json_response(200, &json!({"deleted": name})))
    })
    .await
}

async fn set_paused(host: Arc<Host>, name: String, paused: bool) -> Result<Response, ApiError> {
    blocking(move || {
        let store = schedules_of(&host)?;
        let row = get_one(store, &name)?;
        let now = crate::ids::now_ms();
        let next = if paused {
            None
        } else {
            let spec = Spec::parse(&row.spec_kind, &row.spec)?;
            Some(spec.next_after(now).unwrap_or(i64::MAX))
        };
        store.set_schedule_paused(&name, paused, next, now)?;
        let row = get_one(store, &name)?;
        Ok(json_response(200, &schedule_json(&row)))
    })
    .await
}

fn respond(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

type NameParam = Result<Path<String>, PathRejection>;

/// The request's namespace scope (put there by the service's guard).
type ScopeExt = Option<axum::Extension<Scope>>;

fn scope_of(ext: ScopeExt) -> Scope {
    ext.map_or_else(Scope::operator, |axum::Extension(s)| s)
}

/// The routes over `host`'s store.
pub fn router<S: Clone + Send + Sync + 'static>(host: Arc<Host>, max_body: usize) -> Router<S> {
    let (h1, h2, h3, h4, h5, h6) = (
        host.clone(),
        host.clone(),
        host.clone(),
        host.clone(),
        host.clone(),
        host,
    );
    Router::new()
        .route(
            "/v1/schedules",
            post(move |scope: ScopeExt, body: Body| async move {
                respond(create(h1, max_body, scope_of(scope), body).await)
            })
            .get(move |scope: ScopeExt| async move { respond(list(h2, scope_of(scope)).await) }),
        )
        .route(
            "/v1/schedules/{name}",
            get(move |p: NameParam| async move {
                respond(async { show(h3, path_param(p)?).await }.await)
            })
            .delete(move |p: NameParam| async move {
                respond(async { delete(h4, path_param(p)?).await }.await)
            }),
        )
        .route(
            "/v1/schedules/{name}/pause",
            post(move |p: NameParam| async move {
                respond(async { set_paused(h5, path_param(p)?, true).await }.await)
            }),
        )
        .route(
            "/v1/schedules/{name}/resume",
            post(move |p: NameParam| async move {
                respond(async { set_paused(h6, path_param(p)?, false).await }.await)
            }),
        )
}
