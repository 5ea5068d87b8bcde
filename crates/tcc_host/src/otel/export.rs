//! An OTLP/HTTP JSON span exporter (OTLP 1.x, `POST {endpoint}/v1/traces`,
//! `Content-Type: application/json`).
//!
//! `opentelemetry-otlp`'s HTTP exporters build on `opentelemetry-proto`'s
//! message types, which in every release (0.31–0.33) come with `tonic`
//! and `prost`; this exporter writes the same OTLP JSON encoding with
//! `serde_json` and sends it with the host's own HTTP client
//! ([`crate::http`]), so tracing adds only `opentelemetry` and
//! `opentelemetry_sdk` to the build (docs/tcc/host.md, "Traces").
//!
//! The encoding follows the protobuf JSON mapping as OTLP specifies it:
//! trace and span ids as lower-case hex, 64-bit integers (times, int
//! attributes) as decimal strings, enums as their numbers.

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Array, KeyValue, Value};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use serde_json::{Value as J, json};
use std::time::{Duration, SystemTime};

/// Exports batches of finished spans to one OTLP/HTTP endpoint.
#[derive(Debug)]
pub struct OtlpJsonExporter {
    /// The traces URL (`…/v1/traces`).
    url: String,
    /// Per-request timeout.
    timeout: Duration,
    /// The resource's attributes (service name).
    resource: J,
}

impl OtlpJsonExporter {
    /// An exporter posting to `url` (the full traces URL) as `service`.
    pub fn new(url: String, service: &str, timeout: Duration) -> OtlpJsonExporter {
        OtlpJsonExporter {
            url,
            timeout,
            resource: json!({"attributes": [
                {"key": "service.name", "value": {"stringValue": service}},
                {"key": "telemetry.sdk.name", "value": {"stringValue": "opentelemetry"}},
                {"key": "telemetry.sdk.language", "value": {"stringValue": "rust"}},
            ]}),
        }
    }

    /// The request body for `batch`.
    pub fn encode(&self, batch: &[SpanData]) -> J {
        // One scope list per instrumentation scope, in first-seen order.
        let mut scopes: Vec<(String, Option<String>, Vec<J>)> = Vec::new();
        for span in batch {
            let scope = &span.instrumentation_scope;
            let name = scope.name();
            let spans = match scopes.iter().position(|(n, _, _)| n == name) {
                Some(i) => &mut scopes[i].2,
                None => {
                    scopes.push((
                        name.to_string(),
                        scope.version().map(str::to_string),
                        Vec::new(),
                    ));
                    let last = scopes.len() - 1;
                    &mut scopes[last].2
                }
            };
            spans.push(span_json(span));
        }
        let scope_spans: Vec<J> = scopes
            .into_iter()
            .map(|(name, version, spans)| {
                let mut scope = json!({"name": name});
                if let Some(v) = version {
                    scope["version"] = J::String(v);
                }
                json!({"scope": scope, "spans": spans})
            })
            .collect();
        json!({"resourceSpans": [{"resource": self.resource, "scopeSpans": scope_spans}]})
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unix_nanos(t: SystemTime) -> String {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
        .to_string()
}

fn any_value(v: &Value) -> J {
    match v {
        Value::Bool(b) => json!({"boolValue": b}),
        Value::I64(i) => json!({"intValue": i.to_string()}),
        Value::F64(f) => json!({"doubleValue": f}),
        Value::String(s) => json!({"stringValue": s.as_str()}),
        Value::Array(a) => {
            let values: Vec<J> = match a {
                Array::Bool(v) => v.iter().map(|b| json!({"boolValue": b})).collect(),
                Array::I64(v) => v
                    .iter()
                    .map(|i| json!({"intValue": i.to_string()}))
                    .collect(),
                Array::F64(v) => v.iter().map(|f| json!({"doubleValue": f})).collect(),
                Array::String(v) => v
                    .iter()
                    .map(|s| json!({"stringValue": s.as_str()}))
                    .collect(),
                // A kind added by a later opentelemetry release.
                _ => Vec::new(),
            };
            json!({"arrayValue": {"values": values}})
        }
        // A kind added by a later opentelemetry release: its text.
        other => json!({"stringValue": other.to_string()}),
    }
}

fn attributes(kvs: &[KeyValue]) -> Vec<J> {
    kvs.iter()
        .map(|kv| json!({"key": kv.key.as_str(), "value": any_value(&kv.value)}))
        .collect()
}

/// OTLP's `Span.SpanKind` numbers.
fn kind_number(kind: &SpanKind) -> u8 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn span_json(span: &SpanData) -> J {
    let cx = &span.span_context;
    let mut j = json!({
        "traceId": hex(&cx.trace_id().to_bytes()),
        "spanId": hex(&cx.span_id().to_bytes()),
        "flags": cx.trace_flags().to_u8(),
        "name": span.name,
        "kind": kind_number(&span.span_kind),
        "startTimeUnixNano": unix_nanos(span.start_time),
        "endTimeUnixNano": unix_nanos(span.end_time),
        "attributes": attributes(&span.attributes),
    });
    let parent = span.parent_span_id.to_bytes();
    if parent != [0; 8] {
        j["parentSpanId"] = J::String(hex(&parent));
    }
    if span.dropped_attributes_count > 0 {
        j["droppedAttributesCount"] = json!(span.dropped_attributes_count);
    }
    if !span.events.events.is_empty() {
        j["events"] = span
            .events
            .events
            .iter()
            .map(|e| {
                json!({
                    "timeUnixNano": unix_nanos(e.timestamp),
                    "name": e.name,
                    "attributes": attributes(&e.attributes),
                })
            })
            .collect();
    }
    if !span.links.links.is_empty() {
        j["links"] = span
            .links
            .links
            .iter()
            .map(|l| {
                json!({
                    "traceId": hex(&l.span_context.trace_id().to_bytes()),
                    "spanId": hex(&l.span_context.span_id().to_bytes()),
                    "attributes": attributes(&l.attributes),
                })
            })
            .collect();
    }
    j["status"] = match &span.status {
        Status::Unset => json!({}),
        Status::Ok => json!({"code": 1}),
        Status::Error { description } => json!({"code": 2, "message": description}),
    };
    j
}

impl SpanExporter for OtlpJsonExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if batch.is_empty() {
            return Ok(());
        }
        let body = serde_json::to_vec(&self.encode(&batch))
            .map_err(|e| OTelSdkError::InternalFailure(format!("OTLP body: {e}")))?;
        // The batch processor calls this on its own thread: a blocking
        // request holds up no worker.
        let sent = crate::http::request_with(
            "POST",
            &self.url,
            &[("Content-Type", "application/json")],
            Some(&body),
            self.timeout,
            None,
        );
        match sent {
            Ok(r) if (200..300).contains(&r.status) => Ok(()),
            Ok(r) => {
                let error = format!("OTLP endpoint {} answered {}", self.url, r.status);
                tracing::warn!(spans = batch.len(), %error, "spans not exported");
                crate::metrics::global().trace_export_failed(batch.len());
                Err(OTelSdkError::InternalFailure(error))
            }
            Err(e) => {
                let error = format!("OTLP endpoint {}: {e}", self.url);
                tracing::warn!(spans = batch.len(), %error, "spans not exported");
                crate::metrics::global().trace_export_failed(batch.len());
                Err(OTelSdkError::InternalFailure(error))
            }
        }
    }
}
