//! The workers' HTTP routes:
//!
//! - `POST /v1/tasks/poll` `{"patterns": ["payment.*"], "worker": NAME,
//!   "lease_ms": 30000, "max": 1, "wait": "20s"}`: a long poll that
//!   answers `{"tasks": [...]}` as soon as tasks matching a pattern are
//!   queued (or a lease expired), or with no tasks at the deadline. Each
//!   task: `id` (= `idempotency_key`), `execution_id`, `key`, `input`
//!   (plain JSON), `tagged_input`, `attempt`, `lease` (the token to
//!   answer with) and `lease_until_ms`.
//! - `POST /v1/tasks/{id}/heartbeat` `{"lease", "lease_ms"}` → `{"lease_until_ms"}`.
//! - `POST /v1/tasks/{id}/complete` `{"lease", "result" | "tagged_result"}`.
//! - `POST /v1/tasks/{id}/fail` `{"lease", "message"}`.
//! - `GET /v1/tasks/{id}`: the task (without its lease token).
//!
//! An answer or heartbeat whose lease is not the task's current one (it
//! expired and was handed out again, or the task was answered or expired
//! by the host) is refused with `409 conflict`.
//!
//! The poll waits on [`QUEUE_TOPIC`] and, when tasks are leased, until the
//! earliest lease expires (that task is then available again); it reads
//! the table only when woken or at those times.

use super::board::TaskBoard;
use super::{Claim, LeasedAnswer, TaskAnswer, TaskRow};
use crate::api_error::ApiError;
use crate::await_result::{json_response, parse_wait, path_param};
use crate::notify::QUEUE_TOPIC;
use crate::store::{Store, StoreError};
use crate::values::{plain_to_tagged, tagged_to_plain};
use axum::body::{Body, to_bytes};
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Value as J, json};
use std::sync::Arc;
use std::time::Duration;

/// Default lease of a polled task.
pub const DEFAULT_LEASE_MS: i64 = 30_000;
/// Default wait of a poll.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(20);
/// Most tasks one poll hands out.
pub const MAX_TASKS: usize = 100;

/// The limits the routes apply.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest body.
    pub max_body: usize,
    /// Longest poll (below the request timeout).
    pub longest_wait: Duration,
}

/// A task as the API shows it; `lease` only for the worker that took it.
pub fn task_json(t: &TaskRow, with_lease: bool) -> J {
    let mut j = json!({
        "id": t.idempotency_key,
        "idempotency_key": t.idempotency_key,
        "execution_id": t.execution_id,
        "key": t.key,
        "input": tagged_to_plain(&t.input),
        "tagged_input": t.input,
        "state": t.state,
        "attempt": t.attempt,
        "worker": t.worker,
        "lease_until_ms": t.lease_until,
    });
    if let Some(tp) = &t.traceparent {
        j["traceparent"] = json!(tp);
    }
    if with_lease {
        j["lease"] = json!(t.lease_token);
    }
    if let Some(r) = &t.result {
        j["result"] = tagged_to_plain(r);
    }
    if let Some(m) = &t.message {
        j["message"] = json!(m);
    }
    j
}

/// Reads a JSON body; its values are counted before a tree is built, and
/// a body of more than [`crate::values::MAX_VALUES`] values (a result, or
/// a batch's results together) is refused with 413, as on every route.
async fn body_json(body: Body, max_body: usize) -> Result<J, ApiError> {
    let bytes = to_bytes(body, max_body)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit: max_body })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match crate::values::count_values(&bytes, crate::values::MAX_VALUES) {
        Ok(_) => {}
        Err(crate::values::CountError::TooMany { limit }) => {
            return Err(ApiError::TooManyValues { limit });
        }
        Err(crate::values::CountError::NotJson(e)) => {
            return Err(ApiError::BadRequest(format!("body is not JSON: {e}")));
        }
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::BadRequest(format!("body is not JSON: {e}")))
}

async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, StoreError> + Send + 'static,
) -> Result<R, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(format!("handler failed: {e}")))?
        .map_err(ApiError::from)
}

fn int_field(body: &J, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ApiError> {
    match body.get(name) {
        None | Some(J::Null) => Ok(default),
        Some(v) => v
            .as_i64()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| {
                ApiError::BadRequest(format!("body.{name} must be an integer in {min}..={max}"))
            }),
    }
}

/// `text` unless it holds what the stores cannot (a NUL: 400, issue 42's
/// F6, `crate::storable`).
fn storable(what: &str, text: String) -> Result<String, ApiError> {
    crate::storable::check(what, &text).map_err(ApiError::BadRequest)?;
    Ok(text)
}

fn lease_of(body: &J) -> Result<String, ApiError> {
    body.get("lease")
        .and_then(J::as_str)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            ApiError::BadRequest("body.lease (the token the poll gave) is required".into())
        })
        .and_then(|l| storable("body.lease", l))
}

fn lease_lost(id: &str) -> ApiError {
    ApiError::Store(StoreError::Conflict(format!(
        "task {id:?} is not leased under this token (the lease expired and the task was handed out again, or it was answered)"
    )))
}

async fn poll(
    board: Arc<TaskBoard>,
    limits: Limits,
    scope: crate::namespace::Scope,
    body: Body,
) -> Result<Response, ApiError> {
    let body = body_json(body, limits.max_body).await?;
    let patterns: Vec<String> = match body.get("patterns") {
        Some(J::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|p| {
                p.as_str()
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        ApiError::BadRequest("body.patterns must be non-empty strings".into())
                    })
                    .and_then(|p| storable("body.patterns", p))
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(ApiError::BadRequest(
                "body.patterns (a non-empty array of effect key patterns) is required".into(),
            ));
        }
    };
    let worker = match body.get("worker") {
        None | Some(J::Null) => "worker".to_string(),
        Some(J::String(s)) if !s.is_empty() && s.len() <= 200 => {
            storable("body.worker", s.clone())?
        }
        Some(_) => {
            return Err(ApiError::BadRequest(
                "body.worker must be 1 to 200 bytes".into(),
            ));
        }
    };
    let lease_ms = int_field(&body, "lease_ms", DEFAULT_LEASE_MS, 100, 3_600_000)?;
    let max = int_field(&body, "max", 1, 1, MAX_TASKS as i64)? as usize;
    let wait = match body.get("wait") {
        None | Some(J::Null) => DEFAULT_WAIT,
        Some(J::String(s)) => parse_wait(s)?,
        Some(J::Number(n)) => Duration::from_millis(n.as_u64().ok_or_else(|| {
            ApiError::BadRequest("body.wait: a duration string or milliseconds".into())
        })?),
        Some(_) => {
            return Err(ApiError::BadRequest(
                "body.wait: a duration string or milliseconds".into(),
            ));
        }
    }
    .min(limits.longest_wait);
    let deadline = tokio::time::Instant::now() + wait;
    let sub = board.hub().subscribe(QUEUE_TOPIC);
    loop {
        let woken = sub.signal().notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let (b, p, w, ns) = (
            board.clone(),
            patterns.clone(),
            worker.clone(),
            scope.filter(),
        );
        let (tasks, expiry) = blocking(move || {
            let now = crate::ids::now_ms();
            b.claim_or_next_expiry(&Claim {
                patterns: &p,
                worker: &w,
                lease_ms,
                max,
                now,
                namespace: ns.as_deref(),
            })
        })
        .await?;
        let now = tokio::time::Instant::now();
        if !tasks.is_empty() || now >= deadline {
            let list: Vec<J> = tasks.iter().map(|t| task_json(t, true)).collect();
            return Ok(json_response(200, &json!({"tasks": list})));
        }
        let until = match expiry {
            Some(at) => {
                let ms = at.saturating_sub(crate::ids::now_ms()).max(0) as u64 + 5;
                deadline.min(now + Duration::from_millis(ms))
            }
            None => deadline,
        };
        tokio::select! {
            _ = &mut woken => {}
            _ = tokio::time::sleep_until(until) => {}
        }
    }
}

/// Who is asking, for the answer of a refused heartbeat or answer: `404`
/// for a task the scope does not see, else the lease's `409`
/// ([`crate::namespace::routes::task_refusal`]).
#[derive(Clone)]
struct Asker {
    store: Arc<dyn Store>,
    scope: crate::namespace::Scope,
}

impl Asker {
    async fn refusal(self, id: String) -> ApiError {
        let lost = lease_lost(&id);
        tokio::task::spawn_blocking(move || {
            crate::namespace::routes::task_refusal(&*self.store, &self.scope, &id, lost)
        })
        .await
        .unwrap_or_else(|e| ApiError::Internal(format!("handler failed: {e}")))
    }
}

async fn heartbeat(
    board: Arc<TaskBoard>,
    limits: Limits,
    asker: Asker,
    id: String,
    body: Body,
) -> Result<Response, ApiError> {
    let body = body_json(body, limits.max_body).await?;
    let lease = lease_of(&body)?;
    let lease_ms = int_field(&body, "lease_ms", DEFAULT_LEASE_MS, 100, 3_600_000)?;
    let key = id.clone();
    match blocking(move || board.heartbeat(&key, &lease, lease_ms)).await? {
        Some(until) => Ok(json_response(200, &json!({"lease_until_ms": until}))),
        None => Err(asker.refusal(id).await),
    }
}

/// The answer `body` gives: `result` or `tagged_result` (or neither, a
/// `null` result) for a completion, `message` for a failure; `field`
/// names `body` in diagnostics.
fn answer_of(body: &J, completed: bool, field: &str) -> Result<TaskAnswer, ApiError> {
    if completed {
        match (body.get("result"), body.get("tagged_result")) {
            (Some(_), Some(_)) => Err(ApiError::BadRequest(format!(
                "{field}: give result or tagged_result, not both"
            ))),
            (Some(r), None) => Ok(TaskAnswer::Completed(
                plain_to_tagged(r).map_err(ApiError::BadRequest)?,
            )),
            (None, Some(t)) => {
                crate::values::check_tagged(t).map_err(ApiError::BadRequest)?;
                Ok(TaskAnswer::Completed(t.clone()))
            }
            (None, None) => Ok(TaskAnswer::Completed(json!({"t": "null"}))),
        }
    } else {
        let message = body
            .get("message")
            .and_then(J::as_str)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| ApiError::BadRequest(format!("{field}.message is required")))?;
        // Free text: kept, each NUL replaced (`crate::storable::message`).
        Ok(TaskAnswer::Failed(
            crate::storable::message(message).into_owned(),
        ))
    }
}

async fn answer(
    board: Arc<TaskBoard>,
    limits: Limits,
    asker: Asker,
    id: String,
    body: Body,
    completed: bool,
) -> Result<Response, ApiError> {
    let body = body_json(body, limits.max_body).await?;
    let lease = lease_of(&body)?;
    let answer = answer_of(&body, completed, "body")?;
    let key = id.clone();
    if blocking(move || board.answer(&key, &lease, &answer)).await? {
        Ok(json_response(200, &json!({"accepted": true})))
    } else {
        Err(asker.refusal(id).await)
    }
}

/// `POST /v1/tasks/answers`: several answers in one request (and, on
/// SQLite, one transaction). Each item is `{"id", "lease", "outcome":
/// "complete" | "fail", …}` with the fields of the single answer routes;
/// the reply lists, in order, `{"id", "accepted": true}` or `{"id",
/// "accepted": false, "status", "code", "error": {"code", "message"}}`
/// (what the single route would have answered: `409 conflict` for a lost
/// lease, `404 not_found` for a task the token does not see). A malformed item refuses the whole
/// request (400) before anything is stored.
async fn answer_batch(
    board: Arc<TaskBoard>,
    limits: Limits,
    asker: Asker,
    body: Body,
) -> Result<Response, ApiError> {
    let body = body_json(body, limits.max_body).await?;
    let items = match body.get("answers") {
        Some(J::Array(a)) if !a.is_empty() && a.len() <= MAX_TASKS => a,
        _ => {
            return Err(ApiError::BadRequest(format!(
                "body.answers (an array of 1 to {MAX_TASKS} answers) is required"
            )));
        }
    };
    let mut answers = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("body.answers[{i}]");
        let id = item
            .get("id")
            .and_then(J::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| ApiError::BadRequest(format!("{field}.id is required")))
            .and_then(|id| storable(&format!("{field}.id"), id.to_string()))?;
        let token = item
            .get("lease")
            .and_then(J::as_str)
            .filter(|l| !l.is_empty())
            .ok_or_else(|| ApiError::BadRequest(format!("{field}.lease is required")))
            .and_then(|l| storable(&format!("{field}.lease"), l.to_string()))?;
        let completed = match item.get("outcome").and_then(J::as_str) {
            Some("complete") => true,
            Some("fail") => false,
            _ => {
                return Err(ApiError::BadRequest(format!(
                    "{field}.outcome must be \"complete\" or \"fail\""
                )));
            }
        };
        answers.push(LeasedAnswer {
            idempotency_key: id,
            token,
            answer: answer_of(item, completed, &field)?,
        });
    }
    let (store, scope) = (asker.store.clone(), asker.scope.clone());
    let replies = blocking(move || {
        // A token of one namespace answers only its namespace's tasks (the
        // single routes' guard); the others are refused as unknown.
        let mut visible = Vec::with_capacity(answers.len());
        for a in &answers {
            visible.push(
                scope.namespace.is_none()
                    || crate::namespace::routes::task_visible(&*store, &scope, &a.idempotency_key)?,
            );
        }
        // Only a batch with answers the token does not see is copied.
        let stored = if visible.iter().all(|v| *v) {
            board.answer_many(&answers)?
        } else {
            let shown: Vec<LeasedAnswer> = answers
                .iter()
                .zip(&visible)
                .filter(|(_, v)| **v)
                .map(|(a, _)| a.clone())
                .collect();
            board.answer_many(&shown)?
        };
        let mut stored = stored.into_iter();
        let mut replies = Vec::with_capacity(answers.len());
        for (a, seen) in answers.iter().zip(visible) {
            let id = &a.idempotency_key;
            let refusal = if !seen {
                Some(ApiError::NotFound(format!("no worker task {id:?}")))
            } else if stored.next() == Some(true) {
                None
            } else {
                Some(crate::namespace::routes::task_refusal(
                    &*store,
                    &scope,
                    id,
                    lease_lost(id),
                ))
            };
            replies.push(match refusal {
                None => json!({"id": id, "accepted": true}),
                Some(e) => {
                    let mut j = e.body();
                    j["id"] = json!(id);
                    j["accepted"] = json!(false);
                    j["status"] = json!(e.status());
                    j
                }
            });
        }
        Ok(replies)
    })
    .await?;
    Ok(json_response(200, &json!({"answers": replies})))
}

async fn show(board: Arc<TaskBoard>, id: String) -> Result<Response, ApiError> {
    let key = id.clone();
    match blocking(move || board.get(&key)).await? {
        Some(t) => Ok(json_response(200, &task_json(&t, false))),
        None => Err(ApiError::NotFound(format!("no worker task {id:?}"))),
    }
}

fn respond(r: Result<Response, ApiError>) -> Response {
    r.unwrap_or_else(IntoResponse::into_response)
}

type IdParam = Result<Path<String>, PathRejection>;

/// The task id of the path (400 when it holds a NUL, which no store keeps).
fn task_id(p: IdParam) -> Result<String, ApiError> {
    storable("the task id", path_param(p)?)
}

/// The routes over `board`; `store` is the execution store (a refused
/// heartbeat or answer checks whether the asker sees the task's
/// execution).
pub fn router<S: Clone + Send + Sync + 'static>(
    board: Arc<TaskBoard>,
    store: Arc<dyn Store>,
    limits: Limits,
) -> Router<S> {
    let (s1, s2, s3, s4) = (store.clone(), store.clone(), store.clone(), store);
    let (b1, b2, b3, b4, b5, b6) = (
        board.clone(),
        board.clone(),
        board.clone(),
        board.clone(),
        board.clone(),
        board,
    );
    Router::new()
        .route(
            "/v1/tasks/answers",
            post(
                move |Extension(scope): Extension<crate::namespace::Scope>, body: Body| async move {
                    let asker = Asker { store: s4, scope };
                    respond(answer_batch(b6, limits, asker, body).await)
                },
            ),
        )
        .route(
            "/v1/tasks/poll",
            post(
                move |Extension(scope): Extension<crate::namespace::Scope>, body: Body| async move {
                    respond(poll(b1, limits, scope, body).await)
                },
            ),
        )
        .route(
            "/v1/tasks/{id}",
            get(move |p: IdParam| async move {
                respond(async { show(b2, task_id(p)?).await }.await)
            }),
        )
        .route(
            "/v1/tasks/{id}/heartbeat",
            post(
                move |Extension(scope): Extension<crate::namespace::Scope>,
                      p: IdParam,
                      body: Body| async move {
                    let asker = Asker { store: s1, scope };
                    respond(
                        async { heartbeat(b3, limits, asker, task_id(p)?, body).await }.await,
                    )
                },
            ),
        )
        .route(
            "/v1/tasks/{id}/complete",
            post(
                move |Extension(scope): Extension<crate::namespace::Scope>,
                      p: IdParam,
                      body: Body| async move {
                    let asker = Asker { store: s2, scope };
                    respond(
                        async { answer(b4, limits, asker, task_id(p)?, body, true).await }.await,
                    )
                },
            ),
        )
        .route(
            "/v1/tasks/{id}/fail",
            post(
                move |Extension(scope): Extension<crate::namespace::Scope>,
                      p: IdParam,
                      body: Body| async move {
                    let asker = Asker { store: s3, scope };
                    respond(
                        async { answer(b5, limits, asker, task_id(p)?, body, false).await }
                            .await,
                    )
                },
            ),
        )
}
