//! The span of an HTTP request to the service (`{METHOD} {route}`, kind
//! server), a child of the request's `traceparent` header when it has a
//! valid one, and what a handler needs of it ([`RequestTrace`]).

use super::{EXECUTION_ID, OpSpan, Telemetry, TraceParent, TraceParentError};
use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

/// A request's trace context, put in its extensions by the service's guard.
#[derive(Debug, Clone)]
pub struct RequestTrace {
    /// The `traceparent` header as sent: none, valid or not.
    pub incoming: Result<Option<TraceParent>, TraceParentError>,
    /// The request's own span's context (tracing on).
    pub span: Option<TraceParent>,
}

impl RequestTrace {
    /// The context an execution started by this request continues: the
    /// request's span (tracing on), else the caller's header. An invalid
    /// header is refused (a start says which trace it joins on purpose).
    pub fn for_start(&self) -> Result<Option<TraceParent>, TraceParentError> {
        let incoming = self.incoming.clone()?;
        Ok(self.span.or(incoming))
    }
}

/// The `traceparent` header of `headers`.
pub fn incoming(headers: &axum::http::HeaderMap) -> Result<Option<TraceParent>, TraceParentError> {
    match headers.get("traceparent") {
        None => Ok(None),
        Some(v) => match v.to_str() {
            Ok(text) => TraceParent::parse(text).map(Some),
            Err(_) => Err(TraceParentError::Shape),
        },
    }
}

/// The execution id in a path under `/v1/executions/{id}` (percent-decoded
/// by the caller's rules: here only the raw segment).
fn execution_of(route: &str, path: &str) -> Option<String> {
    if !route.starts_with("/v1/executions/{id}") {
        return None;
    }
    path.strip_prefix("/v1/executions/")?
        .split('/')
        .next()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Starts the span of a request (none when tracing is off).
pub fn request_span(
    telemetry: Option<&Telemetry>,
    method: &str,
    route: &str,
    path: &str,
    headers: &axum::http::HeaderMap,
) -> (OpSpan, RequestTrace) {
    let incoming = incoming(headers);
    let parent = incoming.as_ref().ok().copied().flatten();
    let span = match telemetry {
        Some(t) => {
            let mut attributes = vec![
                KeyValue::new("http.request.method", method.to_string()),
                KeyValue::new("http.route", route.to_string()),
            ];
            if let Some(id) = execution_of(route, path) {
                attributes.push(KeyValue::new(EXECUTION_ID, id));
            }
            t.span(
                format!("{method} {route}"),
                SpanKind::Server,
                parent.as_ref(),
                attributes,
            )
        }
        None => OpSpan::default(),
    };
    let trace = RequestTrace {
        incoming,
        span: span.traceparent(),
    };
    (span, trace)
}

/// Ends a request's span with its response status.
pub fn end_request_span(mut span: OpSpan, status: u16) {
    span.set("http.response.status_code", i64::from(status));
    if status >= 500 {
        span.fail(format!("HTTP {status}"));
    }
    span.end();
}
