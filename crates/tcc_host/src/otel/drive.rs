//! The spans of one drive of an execution: the drive's own, and its
//! effect calls' and checkpoints' as its children; and the `traceparent`
//! an effect passes on (see the module comment of [`crate::otel`]).

use super::{EXECUTION_ID, OpSpan, Telemetry, TraceParent, traces_of};
use crate::store::{Store, StoreError};
use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

/// The trace of one drive.
pub(crate) struct DriveTrace<'a> {
    telemetry: Option<&'a Telemetry>,
    store: &'a dyn Store,
    execution_id: &'a str,
    /// The stored `traceparent` of the execution, once read (`Some(None)`:
    /// it has none).
    started_with: Option<Option<TraceParent>>,
    span: OpSpan,
}

impl<'a> DriveTrace<'a> {
    /// The trace of a drive of `execution_id` (nothing recorded yet).
    pub(crate) fn new(
        telemetry: Option<&'a Telemetry>,
        store: &'a dyn Store,
        execution_id: &'a str,
    ) -> DriveTrace<'a> {
        DriveTrace {
            telemetry,
            store,
            execution_id,
            started_with: None,
            span: OpSpan::default(),
        }
    }

    /// The execution's stored `traceparent` (read once per drive).
    fn started_with(&mut self) -> Result<Option<TraceParent>, StoreError> {
        if let Some(tp) = self.started_with {
            return Ok(tp);
        }
        let stored = match traces_of(self.store) {
            Some(s) => s.traceparent(self.execution_id)?,
            None => None,
        };
        // Stored only after parsing; a row that does not parse (written by
        // hand) is ignored.
        let tp = stored.and_then(|t| TraceParent::parse(&t).ok());
        self.started_with = Some(tp);
        Ok(tp)
    }

    /// The execution was claimed at `revision`, its row giving its stored
    /// `traceparent` when the claim fetched it
    /// ([`crate::store::ExecutionRow::stored_traceparent`]: then it is not
    /// read again): starts the drive's span (when tracing is on), a child
    /// of the execution's stored `traceparent`.
    pub(crate) fn claimed(
        &mut self,
        revision: u64,
        stored: Option<&Option<String>>,
    ) -> Result<(), StoreError> {
        if let Some(stored) = stored {
            self.started_with = Some(stored.as_deref().and_then(|t| TraceParent::parse(t).ok()));
        }
        if self.telemetry.is_none() {
            return Ok(());
        }
        let parent = self.started_with()?;
        let id = self.execution_id;
        self.span = OpSpan::start(
            self.telemetry,
            "tcc.drive",
            SpanKind::Internal,
            parent.as_ref(),
            || {
                vec![
                    KeyValue::new(EXECUTION_ID, id.to_string()),
                    KeyValue::new("tcc.revision", i64::try_from(revision).unwrap_or(i64::MAX)),
                ]
            },
        );
        Ok(())
    }

    /// Ends the drive's span with `outcome`.
    pub(crate) fn end(&mut self, outcome: &'static str) {
        self.span.set("tcc.outcome", outcome);
        if matches!(outcome, "failed" | "store_error" | "quarantined") {
            self.span.fail(outcome);
        }
        std::mem::take(&mut self.span).end();
    }

    /// A span for an effect provider call of `key`, and the `traceparent`
    /// to pass to the provider: the span's (tracing on), else the
    /// execution's stored one.
    pub(crate) fn effect(&mut self, key: &str) -> Result<(OpSpan, Option<String>), StoreError> {
        let parent = self.span.traceparent();
        let span = OpSpan::start(
            self.telemetry,
            "tcc.effect",
            SpanKind::Client,
            parent.as_ref(),
            || {
                vec![
                    KeyValue::new(EXECUTION_ID, self.execution_id.to_string()),
                    KeyValue::new("tcc.effect.key", key.to_string()),
                ]
            },
        );
        let pass_on = match span.traceparent() {
            Some(tp) => Some(tp),
            None => self.started_with()?,
        };
        Ok((span, pass_on.map(|tp| tp.to_string())))
    }

    /// The `traceparent` a child execution this drive starts is stored
    /// with: the drive's span (tracing on), else the execution's stored
    /// one (passed on unchanged, as to an effect).
    pub(crate) fn for_child(&mut self) -> Result<Option<TraceParent>, StoreError> {
        match self.span.traceparent() {
            Some(tp) => Ok(Some(tp)),
            None => self.started_with(),
        }
    }

    /// A span for the commit of checkpoint `revision`.
    pub(crate) fn checkpoint(&self, revision: u64, kind: &'static str) -> OpSpan {
        let parent = self.span.traceparent();
        OpSpan::start(
            self.telemetry,
            "tcc.checkpoint",
            SpanKind::Internal,
            parent.as_ref(),
            || {
                vec![
                    KeyValue::new(EXECUTION_ID, self.execution_id.to_string()),
                    KeyValue::new("tcc.revision", i64::try_from(revision).unwrap_or(i64::MAX)),
                    KeyValue::new("tcc.checkpoint.kind", kind),
                ]
            },
        )
    }
}
