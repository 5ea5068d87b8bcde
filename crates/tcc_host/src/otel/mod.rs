//! Traces (issue 35): OpenTelemetry spans exported over OTLP/HTTP, and the
//! W3C `traceparent` a caller passes on start.
//!
//! Off unless configured ([`Telemetry::new`] from `--otlp-endpoint` or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`); then the host makes a span per
//! execution drive (`tcc.drive`), effect provider call (`tcc.effect`),
//! checkpoint commit (`tcc.checkpoint`) and HTTP request (`http.request`,
//! its route template as the name's suffix), each with the attribute
//! `tcc.execution_id` where it concerns one execution. Spans are batched
//! and exported by the SDK's batch processor on a thread of its own
//! ([`export::OtlpJsonExporter`]).
//!
//! An execution's trace: the `traceparent` it was started with — the
//! caller's, or the span of the HTTP request that started it — is stored
//! beside it ([`store::TraceStore`]); each of its drives is a child of
//! that context, on any node, so an execution's drives, effects and
//! checkpoints make one trace with the request that started it. An effect
//! passes its own span's context on (the `traceparent` header of a webhook
//! call, the `traceparent` field of a worker task); with tracing off, the
//! stored `traceparent` itself is passed on unchanged.
//!
//! Files: `traceparent` (the header), `export` (OTLP JSON over HTTP),
//! `store` (the stored context: trait; its tables in the backends), `drive`
//! (a drive's spans), `http` (a request's span).

pub(crate) mod drive;
pub mod export;
pub mod http;
pub mod store;
pub mod traceparent;

use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId,
    TraceState, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};
use std::time::Duration;
pub use traceparent::{TraceParent, TraceParentError};

/// The attribute naming the execution a span belongs to.
pub const EXECUTION_ID: &str = "tcc.execution_id";

/// Why tracing could not be configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TelemetryError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("OTLP endpoint {0:?} must be an http:// or https:// URL")]
    Endpoint(String),
}

/// The traces URL of an OTLP/HTTP endpoint given as a base URL (as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is): `{base}/v1/traces`; a URL already
/// ending in `/v1/traces` is kept.
pub fn traces_url(endpoint: &str) -> Result<String, TelemetryError> {
    let trimmed = endpoint.trim();
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => {}
        _ => return Err(TelemetryError::Endpoint(endpoint.to_string())),
    }
    if trimmed.ends_with("/v1/traces") {
        return Ok(trimmed.to_string());
    }
    Ok(format!("{}/v1/traces", trimmed.trim_end_matches('/')))
}

/// A configured trace pipeline: one tracer, its batch exporter.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    url: String,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").field("url", &self.url).finish()
    }
}

impl Telemetry {
    /// Exports spans of `service` to the OTLP/HTTP `endpoint` (a base URL,
    /// see [`traces_url`]), in batches at most `delay` apart.
    pub fn new(
        endpoint: &str,
        service: &str,
        delay: Duration,
    ) -> Result<Telemetry, TelemetryError> {
        let url = traces_url(endpoint)?;
        let exporter = export::OtlpJsonExporter::new(url.clone(), service, Duration::from_secs(10));
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                opentelemetry_sdk::trace::BatchConfigBuilder::default()
                    .with_scheduled_delay(delay)
                    .build(),
            )
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .build();
        let tracer = provider.tracer("irkit-tcc");
        Ok(Telemetry {
            provider,
            tracer,
            url,
        })
    }

    /// The traces URL spans are sent to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Starts a span named `name`, a child of `parent` when given (a new
    /// trace otherwise).
    pub fn span(
        &self,
        name: impl Into<std::borrow::Cow<'static, str>>,
        kind: SpanKind,
        parent: Option<&TraceParent>,
        attributes: Vec<KeyValue>,
    ) -> OpSpan {
        let cx = match parent {
            Some(p) => Context::new().with_remote_span_context(SpanContext::new(
                TraceId::from_bytes(p.trace_id),
                SpanId::from_bytes(p.span_id),
                TraceFlags::new(p.flags),
                true,
                TraceState::default(),
            )),
            None => Context::new(),
        };
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &cx);
        OpSpan { span: Some(span) }
    }

    /// Exports every span ended so far (waits for the export).
    pub fn flush(&self) -> Result<(), String> {
        self.provider.force_flush().map_err(|e| e.to_string())
    }

    /// Exports what is left and stops the exporter (at shutdown).
    pub fn shutdown(&self) -> Result<(), String> {
        self.provider.shutdown().map_err(|e| e.to_string())
    }
}

/// A span being recorded, or none (tracing off). Ends when dropped.
#[derive(Default)]
pub struct OpSpan {
    span: Option<opentelemetry_sdk::trace::Span>,
}

impl OpSpan {
    /// Starts a span on `telemetry` when tracing is on (see
    /// [`Telemetry::span`]); none otherwise.
    pub fn start(
        telemetry: Option<&Telemetry>,
        name: &'static str,
        kind: SpanKind,
        parent: Option<&TraceParent>,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> OpSpan {
        match telemetry {
            Some(t) => t.span(name, kind, parent, attributes()),
            None => OpSpan::default(),
        }
    }

    /// Whether a span is being recorded.
    pub fn is_on(&self) -> bool {
        self.span.is_some()
    }

    /// This span's context as a `traceparent` (to pass on), when one is
    /// being recorded.
    pub fn traceparent(&self) -> Option<TraceParent> {
        let cx = self.span.as_ref()?.span_context();
        cx.is_valid().then(|| TraceParent {
            trace_id: cx.trace_id().to_bytes(),
            span_id: cx.span_id().to_bytes(),
            flags: cx.trace_flags().to_u8(),
        })
    }

    /// Sets an attribute.
    pub fn set(&mut self, key: &'static str, value: impl Into<Value>) {
        if let Some(s) = &mut self.span {
            s.set_attribute(KeyValue::new(key, value));
        }
    }

    /// Marks the span failed with `message`.
    pub fn fail(&mut self, message: impl Into<String>) {
        if let Some(s) = &mut self.span {
            s.set_status(Status::error(message.into()));
        }
    }

    /// Ends the span now.
    pub fn end(mut self) {
        if let Some(s) = &mut self.span {
            s.end();
        }
    }
}

/// The trace contexts of `store`, when its backend keeps them (both of
/// this crate's do).
pub fn traces_of(store: &dyn crate::store::Store) -> Option<&dyn store::TraceStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}
