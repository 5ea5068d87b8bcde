//! Host protocol v1 (facts note (f)): requests the engine hands the host,
//! responses the host sends back, and the outcome envelope of
//! `run_until_host`. Every message carries `host_protocol_version: 1`.
//! Values are tagged and inlined (no refs).

use crate::error::EngineError;
use crate::json::{ValueContext, expect_object, field, obj, str_field, to_canonical, u64_field};
use serde_json::{Map, Value as J};

/// The host protocol version implemented.
pub const HOST_PROTOCOL_VERSION: u32 = 1;

const CTX: ValueContext = ValueContext::Message;

/// Checkpoint kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointKind {
    /// Full continuation in `materialize`.
    Snapshot,
    /// Changes against `base_revision` in `delta`.
    Delta,
}

/// A request from the engine to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostRequest {
    /// Durably store a checkpoint, then answer `persist_confirmed`.
    PersistCheckpoint {
        /// New revision (current + 1).
        revision: u64,
        /// Snapshot or delta.
        kind: CheckpointKind,
        /// Last confirmed revision (0 if none).
        base_revision: u64,
        /// The full continuation for a snapshot (`None` for a delta). On the
        /// wire `materialize` is a boolean, as the reference engine sends it
        /// (true for a snapshot): a host reading JSON obtains the continuation
        /// with [`crate::Execution::continuation_json`], as the reference's
        /// hosts do; an in-process host may take it from here.
        materialize: Option<J>,
        /// Delta (delta kind) or `null`.
        delta: Option<J>,
    },
    /// Run an effect, answer `effect_result` or `effect_failed`.
    RunEffect {
        /// Effect key.
        key: String,
        /// `{exec}:{key}`.
        idempotency_key: String,
        /// Inlined input (`{}` when the instruction has none).
        input: J,
    },
    /// Journal an effect's outcome, answer `ack`.
    PersistEffect {
        /// Effect key.
        key: String,
        /// `{exec}:{key}`.
        idempotency_key: String,
        /// `completed` or `failed`.
        status: &'static str,
        /// Result value, or the failure message as a tagged string (the
        /// reference's spelling; journals written before it hold a bare string,
        /// which [`failure_message`] also reads).
        result: J,
    },
    /// Register a timer, answer `ack`.
    RegisterTimer {
        /// Sleep argument.
        resume_at_ms: u64,
        /// Branch id inside a join.
        branch: Option<String>,
    },
    /// Register an event wait, answer `ack`.
    RegisterWait {
        /// Wait id: the branch id inside a join (the reference's rule), else
        /// `{exec}:{event}::{pc}`.
        wait_id: String,
        /// Event name.
        event_name: String,
        /// Branch id inside a join (equal to `wait_id` there; not written on
        /// the wire, where the wait id is the branch id).
        branch: Option<String>,
    },
    /// Create a child execution, answer `ack`.
    CreateChild {
        /// Invoke id.
        invoke_id: String,
        /// Child execution id.
        child_execution_id: String,
        /// Program name.
        program_name: String,
        /// Inlined arguments, source order.
        args: Vec<J>,
        /// Branch id inside a join (equal to `invoke_id` there; not written
        /// on the wire, where the invoke id is the branch id).
        branch: Option<String>,
    },
}

impl HostRequest {
    /// The `type` of the request.
    pub fn type_name(&self) -> &'static str {
        match self {
            HostRequest::PersistCheckpoint { .. } => "persist_checkpoint",
            HostRequest::RunEffect { .. } => "run_effect",
            HostRequest::PersistEffect { .. } => "persist_effect",
            HostRequest::RegisterTimer { .. } => "register_timer",
            HostRequest::RegisterWait { .. } => "register_wait",
            HostRequest::CreateChild { .. } => "create_child",
        }
    }

    /// The request as a JSON message.
    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        m.insert("host_protocol_version".into(), HOST_PROTOCOL_VERSION.into());
        m.insert("type".into(), self.type_name().into());
        let branch = |m: &mut Map<String, J>, b: &Option<String>| {
            if let Some(b) = b {
                m.insert("branch".into(), b.as_str().into());
            }
        };
        match self {
            HostRequest::PersistCheckpoint {
                revision,
                kind,
                base_revision,
                materialize,
                delta,
            } => {
                m.insert("revision".into(), (*revision).into());
                m.insert(
                    "kind".into(),
                    match kind {
                        CheckpointKind::Snapshot => "snapshot",
                        CheckpointKind::Delta => "delta",
                    }
                    .into(),
                );
                m.insert("base_revision".into(), (*base_revision).into());
                m.insert(
                    "materialize".into(),
                    J::Bool(*kind == CheckpointKind::Snapshot || materialize.is_some()),
                );
                m.insert("delta".into(), delta.clone().unwrap_or(J::Null));
            }
            HostRequest::RunEffect {
                key,
                idempotency_key,
                input,
            } => {
                m.insert("key".into(), key.as_str().into());
                m.insert("idempotency_key".into(), idempotency_key.as_str().into());
                m.insert("input".into(), input.clone());
            }
            HostRequest::PersistEffect {
                key,
                idempotency_key,
                status,
                result,
            } => {
                m.insert("key".into(), key.as_str().into());
                m.insert("idempotency_key".into(), idempotency_key.as_str().into());
                m.insert("status".into(), (*status).into());
                m.insert("result".into(), result.clone());
            }
            HostRequest::RegisterTimer {
                resume_at_ms,
                branch: b,
            } => {
                m.insert("resume_at_ms".into(), (*resume_at_ms).into());
                branch(&mut m, b);
            }
            HostRequest::RegisterWait {
                wait_id,
                event_name,
                ..
            } => {
                m.insert("wait_id".into(), wait_id.as_str().into());
                m.insert("event_name".into(), event_name.as_str().into());
                m.insert("correlation_key".into(), J::Null);
                m.insert("timeout_ms".into(), J::Null);
            }
            HostRequest::CreateChild {
                invoke_id,
                child_execution_id,
                program_name,
                args,
                ..
            } => {
                m.insert("invoke_id".into(), invoke_id.as_str().into());
                m.insert(
                    "child_execution_id".into(),
                    child_execution_id.as_str().into(),
                );
                m.insert("program_name".into(), program_name.as_str().into());
                if !args.is_empty() {
                    m.insert("args".into(), J::Array(args.clone()));
                }
            }
        }
        J::Object(m)
    }
}

/// A wake whose value the host gives as text
/// ([`crate::Execution::respond_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextWake {
    /// An `event_payload`.
    Event {
        /// Branch id inside a join.
        branch: Option<String>,
    },
    /// A `child_result`.
    Child {
        /// Branch id inside a join.
        branch: Option<String>,
        /// The child's execution id; when present it must name the
        /// awaited child.
        child_execution_id: Option<String>,
    },
}

/// A response from the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostResponse {
    /// Acknowledges a request; commits nothing.
    Ack,
    /// The checkpoint of this revision is durable.
    PersistConfirmed {
        /// Revision committed.
        revision: u64,
    },
    /// An effect's result (tagged, inlined).
    EffectResult {
        /// The value.
        value: J,
    },
    /// An effect failed.
    EffectFailed {
        /// Failure message (thrown as a string).
        message: String,
    },
    /// An event arrived.
    EventPayload {
        /// The payload.
        value: J,
        /// Branch id inside a join.
        branch: Option<String>,
    },
    /// A timer fired.
    TimerFired {
        /// Branch id inside a join.
        branch: Option<String>,
    },
    /// A child execution finished.
    ChildResult {
        /// Its result.
        value: J,
        /// Branch id inside a join.
        branch: Option<String>,
        /// The child's execution id, as the reference sends it; when present
        /// it must name the awaited child.
        child_execution_id: Option<String>,
    },
    /// irkit's catchable child failure (`irkit.catchable_child_failure`):
    /// the awaited child failed or was cancelled; `message` is thrown at
    /// the parent's `Invoke` (or fails its branch).
    ChildFailed {
        /// The child's status and failure message.
        message: String,
        /// Branch id inside a join.
        branch: Option<String>,
        /// The child's execution id; when present it must name the awaited child.
        child_execution_id: Option<String>,
    },
    /// Cancel the execution at once (the reference's `cancel`; irkit's
    /// `terminate`).
    Cancel,
    /// irkit's catchable cancellation (`irkit.catchable_cancel`): throw a
    /// cancellation error at the execution's current wait or effect, or
    /// at its next durable operation, so its handlers compensate.
    RequestCancel,
    /// An artifact the engine asked for.
    Artifact {
        /// Its hash.
        hash: String,
    },
}

impl HostResponse {
    /// The `type` of the response.
    pub fn type_name(&self) -> &'static str {
        match self {
            HostResponse::Ack => "ack",
            HostResponse::PersistConfirmed { .. } => "persist_confirmed",
            HostResponse::EffectResult { .. } => "effect_result",
            HostResponse::EffectFailed { .. } => "effect_failed",
            HostResponse::EventPayload { .. } => "event_payload",
            HostResponse::TimerFired { .. } => "timer_fired",
            HostResponse::ChildResult { .. } => "child_result",
            HostResponse::ChildFailed { .. } => "child_failed",
            HostResponse::Cancel => "cancel",
            HostResponse::RequestCancel => "request_cancel",
            HostResponse::Artifact { .. } => "artifact",
        }
    }

    /// The response as a JSON message.
    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        m.insert("host_protocol_version".into(), HOST_PROTOCOL_VERSION.into());
        m.insert("type".into(), self.type_name().into());
        let branch = |m: &mut Map<String, J>, b: &Option<String>| {
            if let Some(b) = b {
                m.insert("branch".into(), b.as_str().into());
            }
        };
        match self {
            HostResponse::Ack | HostResponse::Cancel | HostResponse::RequestCancel => {}
            HostResponse::PersistConfirmed { revision } => {
                m.insert("revision".into(), (*revision).into());
            }
            HostResponse::EffectResult { value } => {
                m.insert("value".into(), value.clone());
            }
            HostResponse::EffectFailed { message } => {
                m.insert("message".into(), message.as_str().into());
            }
            HostResponse::EventPayload { value, branch: b } => {
                m.insert("value".into(), value.clone());
                branch(&mut m, b);
            }
            HostResponse::ChildResult {
                value,
                branch: b,
                child_execution_id,
            } => {
                m.insert("value".into(), value.clone());
                branch(&mut m, b);
                if let Some(c) = child_execution_id {
                    m.insert("child_execution_id".into(), c.as_str().into());
                }
            }
            HostResponse::ChildFailed {
                message,
                branch: b,
                child_execution_id,
            } => {
                m.insert("message".into(), message.as_str().into());
                branch(&mut m, b);
                if let Some(c) = child_execution_id {
                    m.insert("child_execution_id".into(), c.as_str().into());
                }
            }
            HostResponse::TimerFired { branch: b } => branch(&mut m, b),
            HostResponse::Artifact { hash } => {
                m.insert("hash".into(), hash.as_str().into());
            }
        }
        J::Object(m)
    }

    /// Decodes a response message, checking `host_protocol_version` first.
    pub fn from_json(j: &J) -> Result<HostResponse, EngineError> {
        let m = expect_object(
            CTX,
            j,
            "$",
            &[
                "host_protocol_version",
                "type",
                "revision",
                "value",
                "message",
                "branch",
                "hash",
                "child_execution_id",
            ],
        )?;
        check_protocol_version(m)?;
        let ty = str_field(CTX, field(CTX, m, "type", "$")?, "$.type")?;
        let allow = |keys: &[&str]| -> Result<(), EngineError> {
            for k in m.keys() {
                if k != "host_protocol_version" && k != "type" && !keys.contains(&k.as_str()) {
                    return Err(EngineError::message(
                        format!("$.{k}"),
                        format!("unknown key for {ty}"),
                    ));
                }
            }
            Ok(())
        };
        let branch = || -> Result<Option<String>, EngineError> {
            match m.get("branch") {
                None | Some(J::Null) => Ok(None),
                Some(b) => Ok(Some(str_field(CTX, b, "$.branch")?.to_string())),
            }
        };
        let value = || field(CTX, m, "value", "$").cloned();
        Ok(match ty {
            "ack" => {
                allow(&[])?;
                HostResponse::Ack
            }
            "cancel" => {
                allow(&[])?;
                HostResponse::Cancel
            }
            "request_cancel" => {
                allow(&[])?;
                HostResponse::RequestCancel
            }
            "persist_confirmed" => {
                allow(&["revision"])?;
                HostResponse::PersistConfirmed {
                    revision: u64_field(CTX, field(CTX, m, "revision", "$")?, "$.revision")?,
                }
            }
            "effect_result" => {
                allow(&["value"])?;
                HostResponse::EffectResult { value: value()? }
            }
            "effect_failed" => {
                allow(&["message"])?;
                HostResponse::EffectFailed {
                    message: str_field(CTX, field(CTX, m, "message", "$")?, "$.message")?
                        .to_string(),
                }
            }
            "event_payload" => {
                allow(&["value", "branch"])?;
                HostResponse::EventPayload {
                    value: value()?,
                    branch: branch()?,
                }
            }
            "timer_fired" => {
                allow(&["branch"])?;
                HostResponse::TimerFired { branch: branch()? }
            }
            "child_result" => {
                allow(&["value", "branch", "child_execution_id"])?;
                HostResponse::ChildResult {
                    value: value()?,
                    branch: branch()?,
                    child_execution_id: match m.get("child_execution_id") {
                        None | Some(J::Null) => None,
                        Some(c) => Some(str_field(CTX, c, "$.child_execution_id")?.to_string()),
                    },
                }
            }
            "child_failed" => {
                allow(&["message", "branch", "child_execution_id"])?;
                HostResponse::ChildFailed {
                    message: str_field(CTX, field(CTX, m, "message", "$")?, "$.message")?
                        .to_string(),
                    branch: branch()?,
                    child_execution_id: match m.get("child_execution_id") {
                        None | Some(J::Null) => None,
                        Some(c) => Some(str_field(CTX, c, "$.child_execution_id")?.to_string()),
                    },
                }
            }
            "artifact" => {
                allow(&["hash"])?;
                HostResponse::Artifact {
                    hash: str_field(CTX, field(CTX, m, "hash", "$")?, "$.hash")?.to_string(),
                }
            }
            other => {
                return Err(EngineError::message(
                    "$.type",
                    format!("unknown response type {other:?}"),
                ));
            }
        })
    }

    /// Decodes a response from bytes.
    pub fn decode(bytes: &[u8]) -> Result<HostResponse, EngineError> {
        let j = crate::json::parse_strict(bytes)
            .map_err(|e| EngineError::message("$", crate::json::strict_error_text(&e)))?;
        HostResponse::from_json(&j)
    }
}

/// The message of a failed effect's `persist_effect` result: a tagged string
/// (what the engine writes), or a bare string (journals written before the
/// reference's spelling was adopted). `None` for anything else.
pub fn failure_message(result: &J) -> Option<&str> {
    match result {
        J::String(s) => Some(s),
        J::Object(m) if m.get("t").and_then(J::as_str) == Some("string") => {
            m.get("v").and_then(J::as_str)
        }
        _ => None,
    }
}

/// Checks `host_protocol_version` of a message object.
pub fn check_protocol_version(m: &Map<String, J>) -> Result<(), EngineError> {
    match m.get("host_protocol_version") {
        None => Err(EngineError::MissingHostProtocolVersion),
        Some(v) if v.as_u64() == Some(u64::from(HOST_PROTOCOL_VERSION)) => Ok(()),
        Some(v) => Err(EngineError::UnsupportedHostProtocol {
            got: to_canonical(v),
            supported: HOST_PROTOCOL_VERSION,
        }),
    }
}

/// What `run_until_host` stopped at.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The host must answer this request.
    Host(HostRequest),
    /// The execution completed with this (inlined) result.
    Completed(J),
    /// The execution failed with an uncaught throw.
    Failed {
        /// The thrown value, inlined.
        value: J,
        /// The value itself when a string, else its JSON.
        message: String,
    },
    /// The execution was cancelled.
    Cancelled,
    /// The step budget ran out; call again to continue.
    BudgetExhausted,
    /// Waiting for a wake from the host.
    Suspended,
}

impl Outcome {
    /// The outcome envelope as a JSON message.
    pub fn to_json(&self) -> J {
        let v = J::from(HOST_PROTOCOL_VERSION);
        match self {
            Outcome::Host(r) => obj([
                ("host_protocol_version", v),
                ("type", "host".into()),
                ("request", r.to_json()),
            ]),
            Outcome::Completed(result) => obj([
                ("host_protocol_version", v),
                ("type", "completed".into()),
                ("result", result.clone()),
            ]),
            // The reference's envelope: the message only (the value stays
            // in the struct and the last checkpoint's `result`).
            Outcome::Failed { message, .. } => obj([
                ("host_protocol_version", v),
                ("type", "failed".into()),
                ("message", message.as_str().into()),
            ]),
            Outcome::Cancelled => obj([("host_protocol_version", v), ("type", "cancelled".into())]),
            Outcome::BudgetExhausted => obj([
                ("host_protocol_version", v),
                ("type", "budget_exhausted".into()),
            ]),
            Outcome::Suspended => obj([("host_protocol_version", v), ("type", "suspended".into())]),
        }
    }
}
