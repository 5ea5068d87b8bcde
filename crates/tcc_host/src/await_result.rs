//! Awaiting an execution's end without polling the store:
//! `GET /v1/executions/{id}/result?wait=DURATION` and `POST
//! /v1/executions?wait=DURATION` (the latter in [`crate::service`]).
//!
//! A waiter subscribes to the execution's topic ([`done_topic`]), reads the
//! execution once, and sleeps until the topic is woken — by this node's
//! worker that committed the terminal checkpoint, or through the
//! PostgreSQL bridge ([`crate::notify_pg`]) by another node's — or until
//! its deadline. It reads the execution again only when woken and at the
//! deadline: waiting costs no store reads per waiter. `POST
//! /v1/executions?wait=` subscribes before it creates the execution and
//! skips that first read ([`Subscribed`]). The answer is `200`
//! with the status JSON once the execution is `completed`, `failed` or
//! `cancelled`, else `202` with its status at the deadline.
//!
//! The wait is capped below the service's request timeout (a longer one
//! would be cut off by it); clients wait longer by asking again.

use crate::api_error::ApiError;
use crate::host::Host;
use crate::notify::{Subscription, done_topic};
use crate::status_view::status_text;
use crate::store::ExecutionRow;
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, RawQuery};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value as J;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest `wait=` accepted before capping: one hour.
pub const WAIT_MAX: Duration = Duration::from_secs(3600);

/// Parses a `wait=` duration: a non-negative integer followed by `ms`,
/// `s` or `m`; a bare integer is seconds. At most [`WAIT_MAX`].
pub fn parse_wait(text: &str) -> Result<Duration, ApiError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let bad = || {
        ApiError::BadRequest(format!(
            "wait={text:?}: expected a duration such as 500ms, 30s or 2m"
        ))
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "" | "s" => Duration::from_secs(n.min(WAIT_MAX.as_secs() + 1)),
        "m" => Duration::from_secs(n.min(WAIT_MAX.as_secs()).saturating_mul(60)),
        _ => return Err(bad()),
    };
    Ok(d.min(WAIT_MAX))
}

/// The `wait=` of a raw query, if any (its value has no escapes).
pub fn wait_param(query: Option<&str>) -> Result<Option<Duration>, ApiError> {
    for pair in query.unwrap_or("").split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k == "wait" {
            return parse_wait(v).map(Some);
        }
    }
    Ok(None)
}

async fn read_row(host: &Arc<Host>, id: &str) -> Result<ExecutionRow, ApiError> {
    let (host, key) = (host.clone(), id.to_string());
    tokio::task::spawn_blocking(move || host.store().get_execution(&key))
        .await
        .map_err(|e| ApiError::Internal(format!("reading the execution failed: {e}")))??
        .ok_or_else(|| ApiError::NotFound(format!("no execution {id:?}")))
}

/// A subscription to an execution's end taken before the execution was
/// created (`POST /v1/executions?wait=`), with the topic's generation
/// then: until the topic is woken past it, the execution has not ended,
/// and [`until_ended_subscribed`] need not read it.
pub struct Subscribed {
    sub: Subscription,
    generation: u64,
}

impl Subscribed {
    /// Subscribes to the end of `id` (to be created after this).
    pub fn new(host: &Host, id: &str) -> Subscribed {
        let sub = host.hub().subscribe(&done_topic(id));
        let generation = sub.signal().generation();
        Subscribed { sub, generation }
    }
}

/// Waits until execution `id` has ended or `wait` has passed; returns
/// whether it ended, and its row.
pub async fn until_ended(
    host: &Arc<Host>,
    id: &str,
    wait: Duration,
) -> Result<(bool, ExecutionRow), ApiError> {
    let sub = host.hub().subscribe(&done_topic(id));
    wait_on(host, id, wait, sub, None).await
}

/// [`until_ended`] of an execution created after `subscribed` was taken:
/// the execution is read only once its topic was woken, or at the
/// deadline.
pub async fn until_ended_subscribed(
    host: &Arc<Host>,
    id: &str,
    wait: Duration,
    subscribed: Subscribed,
) -> Result<(bool, ExecutionRow), ApiError> {
    wait_on(host, id, wait, subscribed.sub, Some(subscribed.generation)).await
}

/// The wait of [`until_ended`] on `sub`; with `unchanged_since`, the first
/// read is skipped while the topic has not been woken past that
/// generation.
async fn wait_on(
    host: &Arc<Host>,
    id: &str,
    wait: Duration,
    sub: Subscription,
    mut unchanged_since: Option<u64>,
) -> Result<(bool, ExecutionRow), ApiError> {
    let deadline = tokio::time::Instant::from_std(Instant::now() + wait);
    loop {
        let woken = sub.signal().notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let skip_read = unchanged_since
            .take()
            .is_some_and(|g| sub.signal().generation() == g)
            && tokio::time::Instant::now() < deadline;
        if !skip_read {
            let row = read_row(host, id).await?;
            if row.is_terminal() {
                return Ok((true, row));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok((false, row));
            }
        }
        tokio::select! {
            _ = &mut woken => {}
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// A JSON answer: `200` with the status once ended, else `202` (the
/// stored result answered as its text: [`status_text`]).
pub fn ended_response(ended: bool, row: &ExecutionRow) -> Response {
    match status_text(row, Vec::new()) {
        Ok(text) => json_answer_response(if ended { 200 } else { 202 }, text),
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// A JSON response with `status`.
pub fn json_response(status: u16, body: &J) -> Response {
    json_text_response(status, tcc_ir::to_canonical(body))
}

/// A response with `status` whose body is this JSON text.
pub fn json_text_response(status: u16, text: String) -> Response {
    json_body_response(status, Body::from(text))
}

/// A response with `status` whose body is this JSON text, sent in its
/// parts.
pub fn json_answer_response(status: u16, text: crate::answer_text::AnswerText) -> Response {
    json_body_response(status, text.into_body())
}

/// A response with `status` and this JSON body.
fn json_body_response(status: u16, body: Body) -> Response {
    let mut r = Response::new(body);
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The path parameter, percent-decoded by axum; a rejection (not UTF-8)
/// is a `bad_request`.
pub fn path_param(p: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    p.map(|Path(s)| s)
        .map_err(|e| ApiError::BadRequest(format!("path: {e}")))
}

/// `GET /v1/executions/{id}/result[?wait=DURATION]`; waits are capped at
/// `longest_wait`.
pub fn router<S: Clone + Send + Sync + 'static>(
    host: Arc<Host>,
    longest_wait: Duration,
) -> Router<S> {
    Router::new().route(
        "/v1/executions/{id}/result",
        get(
            move |p: Result<Path<String>, PathRejection>,
                  q: RawQuery,
                  checked: Option<Extension<crate::namespace::routes::Checked>>| async move {
                let answer = async {
                    let id = path_param(p)?;
                    let wait = wait_param(q.0.as_deref())?
                        .unwrap_or(Duration::ZERO)
                        .min(longest_wait);
                    // The namespace guard read the row when it checked the
                    // request: an ended execution, or a request without a
                    // wait, is answered from that read (one statement). A
                    // wait subscribes first and reads again, so that an end
                    // after the guard's read is not missed.
                    if let Some(read) = checked
                        .and_then(|Extension(c)| c.status)
                        .filter(|r| r.row.id == id)
                        && (read.row.is_terminal() || wait.is_zero())
                    {
                        return Ok(ended_response(read.row.is_terminal(), &read.row));
                    }
                    let (ended, row) = until_ended(&host, &id, wait).await?;
                    Ok::<_, ApiError>(ended_response(ended, &row))
                };
                answer.await.unwrap_or_else(IntoResponse::into_response)
            },
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_parse_with_units_and_are_capped() {
        assert_eq!(parse_wait("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_wait("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_wait("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_wait("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_wait("99999m").unwrap(), WAIT_MAX);
        for bad in ["", "s", "-1s", "1h", "1.5s", "ms5"] {
            assert!(parse_wait(bad).is_err(), "{bad}");
        }
        assert_eq!(
            wait_param(Some("a=1&wait=2s")).unwrap(),
            Some(Duration::from_secs(2))
        );
        assert_eq!(wait_param(None).unwrap(), None);
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_is_refused_and_never_exceeds_the_cap(text in "\\PC{0,12}") {
            if let Ok(d) = parse_wait(&text) {
                proptest::prop_assert!(d <= WAIT_MAX);
            }
        }

        #[test]
        fn durations_with_units_read_back(n in 0u64..100_000, unit in 0usize..4) {
            let (text, want) = match unit {
                0 => (format!("{n}ms"), Duration::from_millis(n)),
                1 => (format!("{n}s"), Duration::from_secs(n)),
                2 => (format!("{n}"), Duration::from_secs(n)),
                _ => (format!("{n}m"), Duration::from_secs(n * 60)),
            };
            proptest::prop_assert_eq!(parse_wait(&text).unwrap(), want.min(WAIT_MAX));
        }
    }
}
