//! The continuation format (facts note (e)): a flat JSON object holding
//! everything needed to resume an execution without replaying history,
//! plus snapshot/delta checkpoints and delta application.

use crate::error::EngineError;
use crate::heap_digest::HeapDigest;
use crate::json::{
    TextOut, ValueContext, absorb, cell_from_json, cell_json, expect_object, field, obj, str_field,
    u32_field, u64_field, value_json, write_value,
};
use crate::limits::Limits;
use crate::position::FuncPos;
use crate::value::{Cell, Heap, Value};
use serde_json::{Map, Value as J};
use tcc_ir::FunctionId;

const CTX: ValueContext = ValueContext::Continuation;

/// Execution status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Can step: the state at a checkpoint and of a fresh start.
    Runnable,
    /// Can step, and `run_until_host` has been called since the last
    /// checkpoint (the reference engine's `running`: a continuation taken
    /// between checkpoints, e.g. after a budget of 0). A checkpoint writes
    /// [`Status::Runnable`]; both resume the same way.
    Running,
    /// Waiting for a wake (timer, event, child, join branches).
    Suspended,
    /// Returned from the entry function; `result` holds the value.
    Completed,
    /// An uncaught throw; `result` holds the thrown value.
    Failed,
    /// Cancelled by the host.
    Cancelled,
}

impl Status {
    /// Wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Runnable => "runnable",
            Status::Running => "running",
            Status::Suspended => "suspended",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str, path: &str) -> Result<Status, EngineError> {
        Ok(match s {
            "runnable" => Status::Runnable,
            "running" => Status::Running,
            "suspended" => Status::Suspended,
            "completed" => Status::Completed,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            _ => {
                return Err(EngineError::continuation(
                    path,
                    format!("unknown status {s:?}"),
                ));
            }
        })
    }

    /// Whether the execution can step (`runnable` or `running`).
    pub fn is_runnable(self) -> bool {
        matches!(self, Status::Runnable | Status::Running)
    }

    /// Whether the execution has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// One call frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Function id.
    pub func_id: FunctionId,
    /// Next instruction to execute.
    pub pc: u32,
    /// Local slots (length = the function's `local_count`).
    pub locals: Vec<Value>,
    /// Position of the function in the program (runtime cache, not encoded).
    pub pos: FuncPos,
}

/// One exception handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TryHandler {
    /// Handler pc.
    pub catch: u32,
    /// Finally pc (recorded, never jumped to).
    pub finally: Option<u32>,
    /// Operand stack length when the handler was pushed.
    pub stack_len: u32,
    /// Index of the frame that pushed the handler.
    pub frame: u32,
}

/// What a wait is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitKind {
    /// A timer.
    Timer {
        /// The sleep argument, truncated, at least 0.
        resume_at_ms: u64,
    },
    /// An external event.
    Event {
        /// `{exec}:{name}:{correlation}:{pc}`.
        wait_id: String,
        /// Event name.
        event_name: String,
        /// Always `None` in format 1.
        correlation_key: Option<String>,
    },
    /// A child execution.
    Child {
        /// `{exec}:invoke:{pc}` (the branch id inside a join).
        invoke_id: String,
        /// `child:{invoke_id}`.
        child_execution_id: String,
    },
}

/// Where a catchable cancellation (`irkit.catchable_cancel`) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelPhase {
    /// The host asked for it; it is thrown at the next durable operation.
    Requested,
    /// It was thrown; an uncaught cancellation error ends the execution
    /// `cancelled`, and another request is not accepted.
    Delivered,
}

impl CancelPhase {
    /// The continuation's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CancelPhase::Requested => "requested",
            CancelPhase::Delivered => "delivered",
        }
    }

    fn parse(s: &str, path: &str) -> Result<CancelPhase, EngineError> {
        match s {
            "requested" => Ok(CancelPhase::Requested),
            "delivered" => Ok(CancelPhase::Delivered),
            other => Err(EngineError::continuation(
                path,
                format!("unknown cancel phase {other:?}"),
            )),
        }
    }
}

fn cancel_json(c: Option<CancelPhase>) -> J {
    c.map_or(J::Null, |p| p.as_str().into())
}

fn decode_cancel(j: &J, path: &str) -> Result<Option<CancelPhase>, EngineError> {
    match j {
        J::Null => Ok(None),
        other => CancelPhase::parse(str_field(CTX, other, path)?, path).map(Some),
    }
}

/// The durable operation an execution waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// An effect whose result is outstanding.
    Effect {
        /// Effect key.
        key: String,
        /// `{exec}:{key}`.
        idempotency_key: String,
    },
    /// A registered wait.
    Wait(WaitKind),
}

/// Join group kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `JoinAll` (Promise.all).
    All,
    /// `JoinAny` (Promise.race).
    Any,
}

/// Join group state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinState {
    /// Branches outstanding.
    Active,
    /// Settled with a value (persisted before it is delivered).
    Succeeded,
    /// Settled with an error (persisted before it is thrown).
    Failed,
}

/// A branch's life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Not yet bound to a durable op.
    Planned,
    /// Registered with the host, waiting for a delivery.
    Registered,
    /// Has a result.
    Completed,
    /// Has an error.
    Failed,
    /// Abandoned after the group settled; deliveries are ignored.
    Detached,
}

/// The durable op a branch is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchOp {
    /// An effect.
    Effect {
        /// Effect key.
        key: String,
    },
    /// A timer.
    Timer {
        /// Sleep argument.
        resume_at_ms: u64,
    },
    /// An event.
    Event {
        /// Event name.
        event_name: String,
    },
    /// A child execution.
    Child {
        /// Program name.
        program_name: String,
        /// Invoke id (= branch id).
        invoke_id: String,
        /// Child execution id.
        child_execution_id: String,
    },
}

/// One branch of a join group.
#[derive(Debug, Clone)]
pub struct Branch {
    /// Position in the group (input order).
    pub index: u32,
    /// `{exec}:{site}:{reentry}:{index}`.
    pub branch_id: String,
    /// Bound op, once bound.
    pub op: Option<BranchOp>,
    /// Life-cycle phase.
    pub phase: Phase,
    /// Result once completed.
    pub result: Option<Value>,
    /// Error message once failed.
    pub error: Option<String>,
}

/// An open concurrent group.
#[derive(Debug, Clone)]
pub struct Join {
    /// All or any.
    pub kind: JoinKind,
    /// pc of the `Fork`.
    pub site: u32,
    /// Re-entry counter of the site when the group opened.
    pub reentry: u32,
    /// pc of the join instruction.
    pub join_pc: u32,
    /// Group state.
    pub state: JoinState,
    /// Winning branch index (any).
    pub winner_branch: Option<u32>,
    /// Failing branch index.
    pub failure_branch: Option<u32>,
    /// Branches in input order.
    pub branches: Vec<Branch>,
}

/// Re-entry counter of one fork site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reentry {
    /// Fork pc.
    pub site: u32,
    /// Next re-entry value.
    pub next: u32,
}

/// A complete continuation.
#[derive(Debug, Clone)]
pub struct Continuation {
    /// Execution id.
    pub execution_id: String,
    /// Hash of the artifact the execution is pinned to.
    pub artifact_hash: String,
    /// Engine format version of the artifact.
    pub engine_format_version: u32,
    /// Language semantics version of the artifact.
    pub language_semantics_version: String,
    /// Checkpoint revision.
    pub revision: u64,
    /// Status.
    pub status: Status,
    /// Call frames, entry frame first.
    pub frames: Vec<Frame>,
    /// Shared operand stack.
    pub stack: Vec<Value>,
    /// Outstanding durable operation.
    pub pending: Option<Pending>,
    /// Result (completed) or thrown value (failed).
    pub result: Option<Value>,
    /// Exception handlers, innermost last.
    pub try_stack: Vec<TryHandler>,
    /// Open concurrent group.
    pub join: Option<Join>,
    /// Re-entry counters by fork site (sorted by site).
    pub reentries: Vec<Reentry>,
    /// Heap cells.
    pub heap: Heap,
    /// Arrays currently iterated (`WatchIter`).
    pub iterating: Vec<u32>,
    /// Cached closures of `LoadFunc`, by function position.
    pub func_refs: Vec<Option<u32>>,
    /// A catchable cancellation requested or delivered (irkit's
    /// `irkit.catchable_cancel`; written as `cancel` only when set, so
    /// every other continuation reads as the reference's).
    pub cancel: Option<CancelPhase>,
}

// ---------------------------------------------------------------- encoding

fn opt_u32(v: Option<u32>) -> J {
    v.map_or(J::Null, |n| J::Number(n.into()))
}

fn frames_json(frames: &[Frame]) -> J {
    J::Array(
        frames
            .iter()
            .map(|f| {
                obj([
                    ("func_id", J::Number(f.func_id.into())),
                    ("pc", J::Number(f.pc.into())),
                    (
                        "locals",
                        J::Array(f.locals.iter().map(value_json).collect()),
                    ),
                ])
            })
            .collect(),
    )
}

fn stack_json(stack: &[Value]) -> J {
    J::Array(stack.iter().map(value_json).collect())
}

fn pending_json(p: &Option<Pending>) -> J {
    match p {
        None => J::Null,
        Some(Pending::Effect {
            key,
            idempotency_key,
        }) => obj([
            ("type", "effect".into()),
            ("key", key.as_str().into()),
            ("idempotency_key", idempotency_key.as_str().into()),
        ]),
        Some(Pending::Wait(kind)) => obj([("type", "wait".into()), ("kind", wait_kind_json(kind))]),
    }
}

fn wait_kind_json(k: &WaitKind) -> J {
    match k {
        WaitKind::Timer { resume_at_ms } => obj([
            ("type", "timer".into()),
            ("resume_at_ms", J::Number((*resume_at_ms).into())),
        ]),
        WaitKind::Event {
            wait_id,
            event_name,
            correlation_key,
        } => obj([
            ("type", "event".into()),
            ("wait_id", wait_id.as_str().into()),
            ("event_name", event_name.as_str().into()),
            (
                "correlation_key",
                correlation_key.as_deref().map_or(J::Null, J::from),
            ),
        ]),
        WaitKind::Child {
            invoke_id,
            child_execution_id,
        } => obj([
            ("type", "child".into()),
            ("invoke_id", invoke_id.as_str().into()),
            ("child_execution_id", child_execution_id.as_str().into()),
        ]),
    }
}

fn result_json(r: &Option<Value>) -> J {
    r.as_ref().map_or(J::Null, value_json)
}

fn try_stack_json(t: &[TryHandler]) -> J {
    J::Array(
        t.iter()
            .map(|h| {
                obj([
                    ("catch", J::Number(h.catch.into())),
                    ("finally", opt_u32(h.finally)),
                    ("stack_len", J::Number(h.stack_len.into())),
                    ("frame", J::Number(h.frame.into())),
                ])
            })
            .collect(),
    )
}

fn branch_op_json(op: &Option<BranchOp>) -> J {
    match op {
        None => J::Null,
        Some(BranchOp::Effect { key }) => {
            obj([("type", "effect".into()), ("key", key.as_str().into())])
        }
        Some(BranchOp::Timer { resume_at_ms }) => obj([
            ("type", "timer".into()),
            ("resume_at_ms", J::Number((*resume_at_ms).into())),
        ]),
        Some(BranchOp::Event { event_name }) => obj([
            ("type", "event".into()),
            ("event_name", event_name.as_str().into()),
        ]),
        Some(BranchOp::Child {
            program_name,
            invoke_id,
            child_execution_id,
        }) => obj([
            ("type", "child".into()),
            ("program_name", program_name.as_str().into()),
            ("invoke_id", invoke_id.as_str().into()),
            ("child_execution_id", child_execution_id.as_str().into()),
        ]),
    }
}

fn phase_str(p: Phase) -> &'static str {
    match p {
        Phase::Planned => "planned",
        Phase::Registered => "registered",
        Phase::Completed => "completed",
        Phase::Failed => "failed",
        Phase::Detached => "detached",
    }
}

fn join_json(j: &Option<Join>) -> J {
    let Some(j) = j else { return J::Null };
    obj([
        (
            "kind",
            match j.kind {
                JoinKind::All => "all",
                JoinKind::Any => "any",
            }
            .into(),
        ),
        ("site", J::Number(j.site.into())),
        ("reentry", J::Number(j.reentry.into())),
        ("join_pc", J::Number(j.join_pc.into())),
        (
            "state",
            match j.state {
                JoinState::Active => "active",
                JoinState::Succeeded => "succeeded",
                JoinState::Failed => "failed",
            }
            .into(),
        ),
        ("winner_branch", opt_u32(j.winner_branch)),
        ("failure_branch", opt_u32(j.failure_branch)),
        (
            "branches",
            J::Array(
                j.branches
                    .iter()
                    .map(|b| {
                        obj([
                            ("index", J::Number(b.index.into())),
                            ("branch_id", b.branch_id.as_str().into()),
                            ("op", branch_op_json(&b.op)),
                            ("phase", phase_str(b.phase).into()),
                            ("result", result_json(&b.result)),
                            ("error", b.error.as_deref().map_or(J::Null, J::from)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

fn reentries_json(r: &[Reentry]) -> J {
    J::Array(
        r.iter()
            .map(|e| {
                obj([
                    ("site", J::Number(e.site.into())),
                    ("next", J::Number(e.next.into())),
                ])
            })
            .collect(),
    )
}

fn heap_json(h: &Heap) -> J {
    J::Array(h.cells().iter().map(cell_json).collect())
}

fn iterating_json(i: &[u32]) -> J {
    J::Array(i.iter().map(|n| J::Number((*n).into())).collect())
}

fn func_refs_json(f: &[Option<u32>]) -> J {
    J::Array(f.iter().map(|n| opt_u32(*n)).collect())
}

impl Continuation {
    /// The continuation as a JSON tree (optional fields only when non-empty).
    pub fn to_json(&self) -> J {
        let mut m = Map::new();
        m.insert("execution_id".into(), self.execution_id.as_str().into());
        m.insert("artifact_hash".into(), self.artifact_hash.as_str().into());
        m.insert(
            "engine_format_version".into(),
            J::Number(self.engine_format_version.into()),
        );
        m.insert(
            "language_semantics_version".into(),
            self.language_semantics_version.as_str().into(),
        );
        m.insert("revision".into(), J::Number(self.revision.into()));
        if self.cancel.is_some() {
            m.insert("cancel".into(), cancel_json(self.cancel));
        }
        m.insert("status".into(), self.status.as_str().into());
        m.insert("frames".into(), frames_json(&self.frames));
        m.insert("stack".into(), stack_json(&self.stack));
        m.insert("pending".into(), pending_json(&self.pending));
        m.insert("result".into(), result_json(&self.result));
        m.insert("try_stack".into(), try_stack_json(&self.try_stack));
        if self.join.is_some() {
            m.insert("join".into(), join_json(&self.join));
        }
        if !self.reentries.is_empty() {
            m.insert("reentries".into(), reentries_json(&self.reentries));
        }
        if !self.heap.cells().is_empty() {
            m.insert("heap".into(), heap_json(&self.heap));
        }
        if !self.iterating.is_empty() {
            m.insert("iterating".into(), iterating_json(&self.iterating));
        }
        if self.func_refs.iter().any(Option::is_some) {
            m.insert("func_refs".into(), func_refs_json(&self.func_refs));
        }
        J::Object(m)
    }

    /// The continuation's `pending` field as JSON (`null` when none).
    pub fn pending_to_json(&self) -> J {
        pending_json(&self.pending)
    }

    /// Canonical JSON text of the continuation, written directly (no
    /// intermediate tree); byte-identical to `to_canonical(&self.to_json())`.
    pub fn encode(&self) -> String {
        self.encode_with(true)
    }

    /// The length of [`Continuation::encode`]'s text, counted without
    /// writing its heap (issue 42, F3: choosing between a delta and a
    /// snapshot needs only the snapshot's length).
    pub fn encoded_len(&self) -> usize {
        self.encoded_len_with(|| self.heap_text_len())
    }

    /// [`Continuation::encoded_len`] less its heap's text: the text's
    /// length when the heap has no cells, else what
    /// [`Continuation::heap_text_len`] adds to it.
    pub fn encoded_len_without_heap(&self) -> usize {
        let rest = self.encode_with(false).len();
        if self.heap.cells().is_empty() {
            rest
        } else {
            rest + ",\"heap\":".len()
        }
    }

    /// [`Continuation::encoded_len`] given its heap's text length, read
    /// only when the heap has cells.
    pub fn encoded_len_with(&self, heap_text_len: impl FnOnce() -> usize) -> usize {
        self.encoded_len_with_bare(self.encoded_len_without_heap(), heap_text_len)
    }

    /// [`Continuation::encoded_len_with`] given its
    /// [`Continuation::encoded_len_without_heap`].
    pub fn encoded_len_with_bare(
        &self,
        without_heap: usize,
        heap_text_len: impl FnOnce() -> usize,
    ) -> usize {
        if self.heap.cells().is_empty() {
            without_heap
        } else {
            without_heap + heap_text_len()
        }
    }

    /// The length of the text of this continuation's heap (its `heap`
    /// member's value), counted a value at a time.
    pub fn heap_text_len(&self) -> usize {
        heap_text_len(&self.heap)
    }

    /// [`Continuation::encode`] into a buffer of `len` bytes (its
    /// [`Continuation::encoded_len`]): one allocation, not a buffer grown
    /// by doubling, which holds up to twice the text and both the old and
    /// new buffers while it moves (issue 42, F3).
    pub fn encode_sized(&self, len: usize) -> String {
        self.encode_into(true, String::with_capacity(len))
    }

    /// The canonical text, its `heap` member left out unless `with_heap`.
    fn encode_with(&self, with_heap: bool) -> String {
        let cells = if with_heap {
            self.heap.cells().len()
        } else {
            0
        };
        self.encode_into(with_heap, String::with_capacity(256 + 64 * cells))
    }

    /// [`Continuation::encode_with`] written into `out`.
    fn encode_into(&self, with_heap: bool, mut out: String) -> String {
        self.encode_to(with_heap, &mut out);
        out
    }

    /// [`Continuation::encode`] appended to `out` in pieces (the durable
    /// host deflates a long checkpoint body as it is written, so that it is
    /// never held whole beside the heap; issue 42, F3).
    pub fn encode_text_to<O: TextOut>(&self, out: &mut O) {
        self.encode_to(true, out);
    }

    /// [`Continuation::encode_with`] appended to `out`.
    fn encode_to<O: TextOut>(&self, with_heap: bool, out: &mut O) {
        let mut out = out;
        let key = |out: &mut &mut O, k: &str, first: bool| {
            if !first {
                out.push(',');
            }
            out.push('"');
            out.push_str(k);
            out.push_str("\":");
        };
        let small = |out: &mut &mut O, j: J| out.push_json(&j);
        out.push('{');
        key(&mut out, "artifact_hash", true);
        out.push_str(&tcc_ir::encode::canonical_string(&self.artifact_hash));
        if let Some(c) = self.cancel {
            key(&mut out, "cancel", false);
            out.push('"');
            out.push_str(c.as_str());
            out.push('"');
        }
        key(&mut out, "engine_format_version", false);
        out.push_str(&self.engine_format_version.to_string());
        key(&mut out, "execution_id", false);
        out.push_str(&tcc_ir::encode::canonical_string(&self.execution_id));
        key(&mut out, "frames", false);
        out.push('[');
        for (i, f) in self.frames.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"func_id\":");
            out.push_str(&f.func_id.to_string());
            out.push_str(",\"locals\":");
            write_values(&mut *out, &f.locals);
            out.push_str(",\"pc\":");
            out.push_str(&f.pc.to_string());
            out.push('}');
        }
        out.push(']');
        if self.func_refs.iter().any(Option::is_some) {
            key(&mut out, "func_refs", false);
            small(&mut out, func_refs_json(&self.func_refs));
        }
        if with_heap && !self.heap.cells().is_empty() {
            key(&mut out, "heap", false);
            write_heap(&mut *out, &self.heap);
        }
        if !self.iterating.is_empty() {
            key(&mut out, "iterating", false);
            small(&mut out, iterating_json(&self.iterating));
        }
        if self.join.is_some() {
            key(&mut out, "join", false);
            small(&mut out, join_json(&self.join));
        }
        key(&mut out, "language_semantics_version", false);
        out.push_str(&tcc_ir::encode::canonical_string(
            &self.language_semantics_version,
        ));
        key(&mut out, "pending", false);
        small(&mut out, pending_json(&self.pending));
        if !self.reentries.is_empty() {
            key(&mut out, "reentries", false);
            small(&mut out, reentries_json(&self.reentries));
        }
        key(&mut out, "result", false);
        match &self.result {
            Some(v) => write_value(&mut *out, v),
            None => out.push_str("null"),
        }
        key(&mut out, "revision", false);
        out.push_str(&self.revision.to_string());
        key(&mut out, "stack", false);
        write_values(&mut *out, &self.stack);
        key(&mut out, "status", false);
        out.push('"');
        out.push_str(self.status.as_str());
        out.push('"');
        key(&mut out, "try_stack", false);
        small(&mut out, try_stack_json(&self.try_stack));
        out.push('}');
    }

    /// Decodes a continuation (strict: unknown keys, bad tags, dangling
    /// refs are errors; inline objects/arrays are absorbed into the heap).
    pub fn decode(bytes: &[u8], limits: &Limits) -> Result<Continuation, EngineError> {
        if bytes.len() > limits.max_message_bytes {
            return Err(EngineError::limit(
                "continuation bytes",
                limits.max_message_bytes as u64,
            ));
        }
        // The heap straight from the text when the fast path takes it
        // (issue 42, F3); the tree path gives every diagnostic.
        if let Some((members, Some(heap))) = crate::decode_text::split_heap(bytes, limits) {
            return Continuation::from_parts(&J::Object(members), Some(heap), limits);
        }
        let j = crate::json::parse_strict(bytes)
            .map_err(|e| EngineError::continuation("$", crate::json::strict_error_text(&e)))?;
        Continuation::from_json(&j, limits)
    }

    /// [`Continuation::decode`] of a text of `len` bytes read in pieces
    /// from `source` (a host's long stored checkpoint, inflated as it is
    /// read: never held whole beside the heap it makes; issue 42, F3). A
    /// text the fast path does not take is read whole and decoded as
    /// [`Continuation::decode`] does, which gives the diagnostic.
    pub fn decode_source(
        source: &dyn crate::absorb_text::TextSource,
        len: usize,
        limits: &Limits,
    ) -> Result<Continuation, EngineError> {
        if len > limits.max_message_bytes {
            return Err(EngineError::limit(
                "continuation bytes",
                limits.max_message_bytes as u64,
            ));
        }
        if let Some((members, Some(heap))) =
            crate::decode_text::split_heap_reader(source.open(), limits)
        {
            return Continuation::from_parts(&J::Object(members), Some(heap), limits);
        }
        let mut bytes = Vec::with_capacity(len);
        std::io::Read::read_to_end(&mut source.open(), &mut bytes)
            .map_err(|e| EngineError::continuation("$", format!("not readable: {e}")))?;
        Continuation::decode(&bytes, limits)
    }

    /// Decodes a continuation from a JSON tree.
    pub fn from_json(j: &J, limits: &Limits) -> Result<Continuation, EngineError> {
        Continuation::from_parts(j, None, limits)
    }

    /// [`Continuation::from_json`], with the heap already decoded when
    /// `decoded_heap` is given (`j` then has no `heap` member).
    fn from_parts(
        j: &J,
        decoded_heap: Option<Heap>,
        limits: &Limits,
    ) -> Result<Continuation, EngineError> {
        let m = expect_object(
            CTX,
            j,
            "$",
            &[
                "execution_id",
                "artifact_hash",
                "engine_format_version",
                "language_semantics_version",
                "revision",
                "status",
                "frames",
                "stack",
                "pending",
                "result",
                "try_stack",
                "join",
                "reentries",
                "heap",
                "iterating",
                "func_refs",
                "cancel",
            ],
        )?;
        let f = |k: &str| field(CTX, m, k, "$");
        // Heap first: values elsewhere may absorb inline collections, which
        // are appended after the declared cells.
        let mut heap = Heap::default();
        if let Some(decoded) = decoded_heap {
            heap = decoded;
        } else if let Some(h) = m.get("heap") {
            decode_heap(h, "$.heap", &mut heap, limits)?;
        }
        let mut c = Continuation {
            execution_id: str_field(CTX, f("execution_id")?, "$.execution_id")?.to_string(),
            artifact_hash: str_field(CTX, f("artifact_hash")?, "$.artifact_hash")?.to_string(),
            engine_format_version: u32_field(
                CTX,
                f("engine_format_version")?,
                "$.engine_format_version",
            )?,
            language_semantics_version: str_field(
                CTX,
                f("language_semantics_version")?,
                "$.language_semantics_version",
            )?
            .to_string(),
            revision: u64_field(CTX, f("revision")?, "$.revision")?,
            status: Status::parse(str_field(CTX, f("status")?, "$.status")?, "$.status")?,
            frames: Vec::new(),
            stack: Vec::new(),
            pending: decode_pending(f("pending")?, "$.pending")?,
            result: None,
            try_stack: decode_try_stack(f("try_stack")?, "$.try_stack")?,
            join: None,
            reentries: Vec::new(),
            heap: Heap::default(),
            iterating: Vec::new(),
            func_refs: Vec::new(),
            cancel: None,
        };
        c.frames = decode_frames(f("frames")?, "$.frames", &mut heap, limits)?;
        c.stack = decode_values(f("stack")?, "$.stack", &mut heap, limits)?;
        c.result = decode_opt_value(f("result")?, "$.result", &mut heap, limits)?;
        finish_decode(c, m, heap, limits)
    }

    /// Every reference (locals, stack, result, join, heap, iterating,
    /// func_refs) names a live cell of the right kind.
    pub fn check_refs(&self) -> Result<(), EngineError> {
        let bad = |what: &str, e: EngineError| {
            EngineError::continuation(format!("$.{what}"), e.to_string())
        };
        self.heap.check_refs().map_err(|e| bad("heap", e))?;
        for r in self.roots() {
            self.heap
                .get(r)
                .map_err(|e| bad("frames|stack|result|join", e))?;
        }
        for &id in &self.iterating {
            if !matches!(self.heap.get(id), Ok(Cell::Array(_))) {
                return Err(EngineError::continuation(
                    "$.iterating",
                    format!("{id} is not an array"),
                ));
            }
        }
        for id in self.func_refs.iter().flatten() {
            if !matches!(self.heap.get(*id), Ok(Cell::Closure { .. })) {
                return Err(EngineError::continuation(
                    "$.func_refs",
                    format!("{id} is not a closure"),
                ));
            }
        }
        Ok(())
    }

    /// Heap ids referenced from outside the heap (GC roots).
    pub fn roots(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut add = |v: &Value| {
            if let Value::Ref(id) = v {
                out.push(*id);
            }
        };
        for f in &self.frames {
            f.locals.iter().for_each(&mut add);
        }
        self.stack.iter().for_each(&mut add);
        if let Some(r) = &self.result {
            add(r);
        }
        if let Some(j) = &self.join {
            j.branches
                .iter()
                .filter_map(|b| b.result.as_ref())
                .for_each(&mut add);
        }
        out.extend(self.iterating.iter().copied());
        out.extend(self.func_refs.iter().flatten().copied());
        out
    }
}

// ------------------------------------------------------- direct writers

fn write_values<O: TextOut + ?Sized>(out: &mut O, vs: &[Value]) {
    out.push('[');
    for (i, v) in vs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_value(out, v);
    }
    out.push(']');
}

/// The length of [`write_heap`]'s text, counted a value at a time.
fn heap_text_len(heap: &Heap) -> usize {
    let mut scratch = String::new();
    let mut value_len = |v: &Value| {
        scratch.clear();
        write_value(&mut scratch, v);
        scratch.len()
    };
    let commas = |n: usize| n.saturating_sub(1);
    let mut len = "[]".len() + commas(heap.cells().len());
    for c in heap.cells() {
        len += match c {
            Cell::Object(m) => {
                "{\"t\":\"object\",\"v\":{".len()
                    + "}}".len()
                    + commas(m.len())
                    + m.iter()
                        .map(|(k, v)| tcc_ir::encode::canonical_string(k).len() + 1 + value_len(v))
                        .sum::<usize>()
            }
            Cell::Array(a) => {
                "{\"t\":\"array\",\"v\":[".len()
                    + "]}".len()
                    + commas(a.len())
                    + a.iter().map(&mut value_len).sum::<usize>()
            }
            Cell::Var(v) => "{\"t\":\"cell\",\"v\":".len() + "}".len() + value_len(v),
            other => {
                let mut text = String::new();
                write_cell(&mut text, other);
                text.len()
            }
        };
    }
    len
}

fn write_heap<O: TextOut + ?Sized>(out: &mut O, heap: &Heap) {
    out.push('[');
    for (i, c) in heap.cells().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_cell(out, c);
    }
    out.push(']');
}

fn write_cell<O: TextOut + ?Sized>(out: &mut O, c: &Cell) {
    match c {
        Cell::Hole => out.push_str("{\"t\":\"hole\"}"),
        Cell::Object(m) => {
            // BTreeMap<String, _> iterates in byte order: canonical key order.
            out.push_str("{\"t\":\"object\",\"v\":{");
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&tcc_ir::encode::canonical_string(k));
                out.push(':');
                write_value(out, v);
            }
            out.push_str("}}");
        }
        Cell::Array(a) => {
            out.push_str("{\"t\":\"array\",\"v\":");
            write_values(out, a);
            out.push('}');
        }
        Cell::Var(v) => {
            out.push_str("{\"t\":\"cell\",\"v\":");
            write_value(out, v);
            out.push('}');
        }
        other => out.push_json(&cell_json(other)),
    }
}

// ---------------------------------------------------------------- decoding

fn array<'a>(j: &'a J, path: &str) -> Result<&'a Vec<J>, EngineError> {
    j.as_array()
        .ok_or_else(|| EngineError::continuation(path, "expected an array"))
}

fn decode_heap(j: &J, path: &str, heap: &mut Heap, limits: &Limits) -> Result<(), EngineError> {
    let cells = array(j, path)?;
    if cells.len() > limits.max_heap_cells {
        return Err(EngineError::limit(
            "heap cells",
            limits.max_heap_cells as u64,
        ));
    }
    *heap.cells_mut() = vec![Cell::Hole; cells.len()];
    for (i, c) in cells.iter().enumerate() {
        let cell = cell_from_json(c, &format!("{path}[{i}]"), heap, limits)?;
        heap.cells_mut()[i] = cell;
    }
    Ok(())
}

fn decode_values(
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Vec<Value>, EngineError> {
    let items = array(j, path)?;
    let mut out = Vec::with_capacity(items.len().min(4096));
    for (i, x) in items.iter().enumerate() {
        out.push(absorb(CTX, x, &format!("{path}[{i}]"), heap, limits)?);
    }
    Ok(out)
}

fn decode_opt_value(
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Option<Value>, EngineError> {
    if j.is_null() {
        Ok(None)
    } else {
        absorb(CTX, j, path, heap, limits).map(Some)
    }
}

fn decode_frames(
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Vec<Frame>, EngineError> {
    let items = array(j, path)?;
    if items.len() > limits.max_call_depth {
        return Err(EngineError::limit(
            "call depth",
            limits.max_call_depth as u64,
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let m = expect_object(CTX, x, &p, &["func_id", "pc", "locals"])?;
        out.push(Frame {
            func_id: u32_field(CTX, field(CTX, m, "func_id", &p)?, &format!("{p}.func_id"))?,
            pc: u32_field(CTX, field(CTX, m, "pc", &p)?, &format!("{p}.pc"))?,
            locals: decode_values(
                field(CTX, m, "locals", &p)?,
                &format!("{p}.locals"),
                heap,
                limits,
            )?,
            pos: FuncPos::default(),
        });
    }
    Ok(out)
}

fn opt_u32_field(j: &J, path: &str) -> Result<Option<u32>, EngineError> {
    if j.is_null() {
        Ok(None)
    } else {
        u32_field(CTX, j, path).map(Some)
    }
}

fn opt_string(j: &J, path: &str) -> Result<Option<String>, EngineError> {
    if j.is_null() {
        Ok(None)
    } else {
        str_field(CTX, j, path).map(|s| Some(s.to_string()))
    }
}

fn decode_pending(j: &J, path: &str) -> Result<Option<Pending>, EngineError> {
    if j.is_null() {
        return Ok(None);
    }
    let m = expect_object(CTX, j, path, &["type", "key", "idempotency_key", "kind"])?;
    let s = |k: &str| -> Result<String, EngineError> {
        Ok(str_field(CTX, field(CTX, m, k, path)?, &format!("{path}.{k}"))?.to_string())
    };
    match s("type")?.as_str() {
        "effect" => Ok(Some(Pending::Effect {
            key: s("key")?,
            idempotency_key: s("idempotency_key")?,
        })),
        "wait" => {
            let kp = format!("{path}.kind");
            Ok(Some(Pending::Wait(decode_wait_kind(
                field(CTX, m, "kind", path)?,
                &kp,
            )?)))
        }
        other => Err(EngineError::continuation(
            path,
            format!("unknown pending type {other:?}"),
        )),
    }
}

fn decode_wait_kind(j: &J, path: &str) -> Result<WaitKind, EngineError> {
    let m = expect_object(
        CTX,
        j,
        path,
        &[
            "type",
            "resume_at_ms",
            "wait_id",
            "event_name",
            "correlation_key",
            "invoke_id",
            "child_execution_id",
        ],
    )?;
    let s = |k: &str| -> Result<String, EngineError> {
        Ok(str_field(CTX, field(CTX, m, k, path)?, &format!("{path}.{k}"))?.to_string())
    };
    match s("type")?.as_str() {
        "timer" => Ok(WaitKind::Timer {
            resume_at_ms: u64_field(CTX, field(CTX, m, "resume_at_ms", path)?, path)?,
        }),
        "event" => Ok(WaitKind::Event {
            wait_id: s("wait_id")?,
            event_name: s("event_name")?,
            correlation_key: match m.get("correlation_key") {
                None => None,
                Some(c) => opt_string(c, &format!("{path}.correlation_key"))?,
            },
        }),
        "child" => Ok(WaitKind::Child {
            invoke_id: s("invoke_id")?,
            child_execution_id: s("child_execution_id")?,
        }),
        other => Err(EngineError::continuation(
            path,
            format!("unknown wait kind {other:?}"),
        )),
    }
}

fn decode_try_stack(j: &J, path: &str) -> Result<Vec<TryHandler>, EngineError> {
    let items = array(j, path)?;
    let mut out = Vec::with_capacity(items.len().min(4096));
    for (i, x) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let m = expect_object(CTX, x, &p, &["catch", "finally", "stack_len", "frame"])?;
        let g = |k: &str| field(CTX, m, k, &p);
        out.push(TryHandler {
            catch: u32_field(CTX, g("catch")?, &format!("{p}.catch"))?,
            finally: opt_u32_field(g("finally")?, &format!("{p}.finally"))?,
            stack_len: u32_field(CTX, g("stack_len")?, &format!("{p}.stack_len"))?,
            frame: u32_field(CTX, g("frame")?, &format!("{p}.frame"))?,
        });
    }
    Ok(out)
}

fn decode_join(
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Option<Join>, EngineError> {
    if j.is_null() {
        return Ok(None);
    }
    let m = expect_object(
        CTX,
        j,
        path,
        &[
            "kind",
            "site",
            "reentry",
            "join_pc",
            "state",
            "winner_branch",
            "failure_branch",
            "branches",
        ],
    )?;
    let g = |k: &str| field(CTX, m, k, path);
    let kind = match str_field(CTX, g("kind")?, path)? {
        "all" => JoinKind::All,
        "any" => JoinKind::Any,
        other => {
            return Err(EngineError::continuation(
                path,
                format!("unknown join kind {other:?}"),
            ));
        }
    };
    let state = match str_field(CTX, g("state")?, path)? {
        "active" => JoinState::Active,
        "succeeded" => JoinState::Succeeded,
        "failed" => JoinState::Failed,
        other => {
            return Err(EngineError::continuation(
                path,
                format!("unknown join state {other:?}"),
            ));
        }
    };
    let items = array(g("branches")?, &format!("{path}.branches"))?;
    if items.is_empty() || items.len() > 32 {
        return Err(EngineError::continuation(
            path,
            "a join has 1 to 32 branches",
        ));
    }
    let mut branches = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let p = format!("{path}.branches[{i}]");
        let bm = expect_object(
            CTX,
            x,
            &p,
            &["index", "branch_id", "op", "phase", "result", "error"],
        )?;
        let bg = |k: &str| field(CTX, bm, k, &p);
        let phase = match str_field(CTX, bg("phase")?, &p)? {
            "planned" => Phase::Planned,
            "registered" => Phase::Registered,
            "completed" => Phase::Completed,
            "failed" => Phase::Failed,
            "detached" => Phase::Detached,
            other => {
                return Err(EngineError::continuation(
                    &p,
                    format!("unknown phase {other:?}"),
                ));
            }
        };
        let index = u32_field(CTX, bg("index")?, &format!("{p}.index"))?;
        if index as usize != i {
            return Err(EngineError::continuation(&p, "branch index out of order"));
        }
        branches.push(Branch {
            index,
            branch_id: str_field(CTX, bg("branch_id")?, &p)?.to_string(),
            op: decode_branch_op(bg("op")?, &format!("{p}.op"))?,
            phase,
            result: decode_opt_value(bg("result")?, &format!("{p}.result"), heap, limits)?,
            error: opt_string(bg("error")?, &format!("{p}.error"))?,
        });
    }
    let n = branches.len() as u32;
    let winner_branch = opt_u32_field(g("winner_branch")?, path)?;
    let failure_branch = opt_u32_field(g("failure_branch")?, path)?;
    if winner_branch.is_some_and(|w| w >= n) || failure_branch.is_some_and(|w| w >= n) {
        return Err(EngineError::continuation(
            path,
            "winner/failure branch out of range",
        ));
    }
    Ok(Some(Join {
        kind,
        site: u32_field(CTX, g("site")?, path)?,
        reentry: u32_field(CTX, g("reentry")?, path)?,
        join_pc: u32_field(CTX, g("join_pc")?, path)?,
        state,
        winner_branch,
        failure_branch,
        branches,
    }))
}

fn decode_branch_op(j: &J, path: &str) -> Result<Option<BranchOp>, EngineError> {
    if j.is_null() {
        return Ok(None);
    }
    let m = expect_object(
        CTX,
        j,
        path,
        &[
            "type",
            "key",
            "resume_at_ms",
            "event_name",
            "program_name",
            "invoke_id",
            "child_execution_id",
        ],
    )?;
    let s = |k: &str| -> Result<String, EngineError> {
        Ok(str_field(CTX, field(CTX, m, k, path)?, &format!("{path}.{k}"))?.to_string())
    };
    Ok(Some(match s("type")?.as_str() {
        "effect" => BranchOp::Effect { key: s("key")? },
        "timer" => BranchOp::Timer {
            resume_at_ms: u64_field(CTX, field(CTX, m, "resume_at_ms", path)?, path)?,
        },
        "event" => BranchOp::Event {
            event_name: s("event_name")?,
        },
        "child" => BranchOp::Child {
            program_name: s("program_name")?,
            invoke_id: s("invoke_id")?,
            child_execution_id: s("child_execution_id")?,
        },
        other => {
            return Err(EngineError::continuation(
                path,
                format!("unknown branch op {other:?}"),
            ));
        }
    }))
}

fn decode_reentries(j: &J, path: &str) -> Result<Vec<Reentry>, EngineError> {
    let items = array(j, path)?;
    let mut out: Vec<Reentry> = Vec::with_capacity(items.len().min(4096));
    for (i, x) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let m = expect_object(CTX, x, &p, &["site", "next"])?;
        out.push(Reentry {
            site: u32_field(CTX, field(CTX, m, "site", &p)?, &p)?,
            next: u32_field(CTX, field(CTX, m, "next", &p)?, &p)?,
        });
    }
    out.sort_by_key(|r| r.site);
    if out.windows(2).any(|w| w[0].site == w[1].site) {
        return Err(EngineError::continuation(path, "duplicate reentry site"));
    }
    Ok(out)
}

fn decode_u32s(j: &J, path: &str) -> Result<Vec<u32>, EngineError> {
    let items = array(j, path)?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| u32_field(CTX, x, &format!("{path}[{i}]")))
        .collect()
}

fn decode_func_refs(j: &J, path: &str) -> Result<Vec<Option<u32>>, EngineError> {
    let items = array(j, path)?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| opt_u32_field(x, &format!("{path}[{i}]")))
        .collect()
}

// ---------------------------------------------------------------- deltas

fn frames_same_topology(a: &[Frame], b: &[Frame]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.func_id == y.func_id && x.locals.len() == y.locals.len())
}

fn values_same(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_encoding(y))
}

fn opt_value_same(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => x.same_encoding(y),
        _ => false,
    }
}

/// The delta from `base` to `next`, or `None` when the frame topology
/// changed (a snapshot is then required). Absent fields are unchanged.
pub fn compute_delta(base: &Continuation, next: &Continuation) -> Option<J> {
    let members = delta_but_heap(base, next)?;
    Some(delta_tree(
        members,
        next,
        !base.heap.same_encoding(&next.heap),
    ))
}

/// The delta of `members` and, when `heap_changed`, `next`'s heap.
fn delta_tree(mut members: Map<String, J>, next: &Continuation, heap_changed: bool) -> J {
    if heap_changed {
        members.insert("heap".into(), heap_json(&next.heap));
    }
    J::Object(members)
}

/// A confirmed continuation kept as the base of the next delta (an
/// execution's; issue 42, F3): all of it but its heap's cells, which a
/// delta needs only to tell whether the heap changed (a changed heap is
/// written whole), and which their [`HeapDigest`] tells. Deltas from it
/// are those from the whole continuation ([`compute_delta`],
/// [`plan_delta`]) unless SHA-256 collides.
#[derive(Debug, Clone)]
pub struct DeltaBase {
    /// The continuation, its heap empty.
    state: Continuation,
    /// Its heap's digest.
    heap: HeapDigest,
    /// Its heap's change count ([`Heap::changes`]) when it was taken.
    heap_changes: u64,
}

impl DeltaBase {
    /// `state` as a delta base, given its heap's digest (`state` is
    /// borrowed mutably only to leave its heap out of the copy).
    pub fn of(state: &mut Continuation, heap: HeapDigest) -> DeltaBase {
        debug_assert_eq!(heap, state.heap.digest());
        let heap_changes = state.heap.changes();
        let cells = std::mem::take(&mut state.heap);
        let copy = state.clone();
        state.heap = cells;
        DeltaBase {
            state: copy,
            heap,
            heap_changes,
        }
    }

    /// The digest of `heap`, the heap this base was taken from as it is
    /// now: the base's own when the heap has not changed since (no cell
    /// read), else computed.
    pub fn digest_of(&self, heap: &Heap) -> HeapDigest {
        if heap.changes() == self.heap_changes {
            self.heap
        } else {
            heap.digest()
        }
    }

    /// The base's revision.
    pub fn revision(&self) -> u64 {
        self.state.revision
    }

    /// [`compute_delta`] from this base to `next`, whose heap's digest is
    /// `next_heap`.
    pub fn delta(&self, next: &Continuation, next_heap: HeapDigest) -> Option<J> {
        let members = delta_but_heap(&self.state, next)?;
        Some(delta_tree(members, next, self.heap != next_heap))
    }

    /// [`plan_delta`] from this base to `next`, whose heap's digest is
    /// `next_heap`.
    pub fn plan(&self, next: &Continuation, next_heap: HeapDigest) -> Option<DeltaPlan> {
        let members = delta_but_heap(&self.state, next)?;
        Some(DeltaPlan::new(members, self.heap != next_heap))
    }
}

/// [`compute_delta`] written straight to its canonical JSON text:
/// byte-identical to `to_canonical(&compute_delta(base, next)?)`, with no
/// tree of the heap (issue 42, F3: a changed heap is written whole, and
/// its tree costs hundreds of bytes per value).
pub fn compute_delta_text(base: &Continuation, next: &Continuation) -> Option<String> {
    let plan = plan_delta(base, next)?;
    let capacity = 64
        + if plan.heap_changed {
            64 * next.heap.cells().len()
        } else {
            0
        };
    Some(plan.write(next, capacity))
}

/// The delta from a base to the next continuation, measured before it is
/// written ([`plan_delta`]): its members but the heap, and whether the
/// heap changed (a changed heap is written whole).
#[derive(Debug)]
pub struct DeltaPlan {
    /// The members but `heap`.
    members: Map<String, J>,
    /// Whether the delta holds the heap.
    heap_changed: bool,
    /// The delta's text without its heap.
    without_heap: String,
}

/// The delta from `base` to `next` as a [`DeltaPlan`], or `None` when the
/// frame topology changed (a snapshot is then required).
pub fn plan_delta(base: &Continuation, next: &Continuation) -> Option<DeltaPlan> {
    let members = delta_but_heap(base, next)?;
    Some(DeltaPlan::new(
        members,
        !base.heap.same_encoding(&next.heap),
    ))
}

impl DeltaPlan {
    /// The plan of a delta of `members` and, when `heap_changed`, the heap.
    fn new(members: Map<String, J>, heap_changed: bool) -> DeltaPlan {
        let mut without_heap = String::new();
        write_delta(&mut without_heap, &members, None);
        DeltaPlan {
            members,
            heap_changed,
            without_heap,
        }
    }

    /// The delta text's length, given its continuation's
    /// [`Continuation::heap_text_len`] (read only when the heap changed).
    pub fn len(&self, heap_text_len: impl FnOnce() -> usize) -> usize {
        if !self.heap_changed {
            return self.without_heap.len();
        }
        let comma = usize::from(!self.members.is_empty());
        self.without_heap.len() + comma + "\"heap\":".len() + heap_text_len()
    }

    /// The delta's text ([`compute_delta_text`]'s) for `next`, the
    /// continuation it was planned for, into a buffer of `capacity` bytes.
    pub fn write(self, next: &Continuation, capacity: usize) -> String {
        if !self.heap_changed {
            return self.without_heap;
        }
        let mut out = String::with_capacity(capacity);
        write_delta(&mut out, &self.members, Some(&next.heap));
        out
    }

    /// [`DeltaPlan::write`] appended to `out` in pieces.
    pub fn write_to<O: TextOut>(&self, next: &Continuation, out: &mut O) {
        if !self.heap_changed {
            out.push_str(&self.without_heap);
        } else {
            write_delta(out, &self.members, Some(&next.heap));
        }
    }
}

/// Writes a delta of `members` and, when given, `heap`, keys in canonical
/// order.
fn write_delta<O: TextOut + ?Sized>(out: &mut O, members: &Map<String, J>, heap: Option<&Heap>) {
    let mut keys: Vec<&str> = members.keys().map(String::as_str).collect();
    if heap.is_some() {
        keys.push("heap");
    }
    keys.sort_unstable();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&tcc_ir::encode::canonical_string(k));
        out.push(':');
        match (members.get(k), heap) {
            (Some(v), _) => out.push_json(v),
            (None, Some(heap)) => write_heap(out, heap),
            (None, None) => {}
        }
    }
    out.push('}');
}

/// The members of the delta from `base` to `next` but its heap (whose
/// cells are not read); `None` when the frames' topology differs.
fn delta_but_heap(base: &Continuation, next: &Continuation) -> Option<Map<String, J>> {
    if !frames_same_topology(&base.frames, &next.frames) {
        return None;
    }
    let mut m = Map::new();
    let mut frames = Vec::new();
    for (i, (b, n)) in base.frames.iter().zip(&next.frames).enumerate() {
        let mut fm = Map::new();
        if b.pc != n.pc {
            fm.insert("pc".into(), J::Number(n.pc.into()));
        }
        let patches: Vec<J> = b
            .locals
            .iter()
            .zip(&n.locals)
            .enumerate()
            .filter(|(_, (x, y))| !x.same_encoding(y))
            .map(|(slot, (_, y))| {
                obj([
                    ("slot", J::Number((slot as u64).into())),
                    ("value", value_json(y)),
                ])
            })
            .collect();
        if !patches.is_empty() {
            fm.insert("locals".into(), J::Array(patches));
        }
        if !fm.is_empty() {
            fm.insert("index".into(), J::Number((i as u64).into()));
            frames.push(J::Object(fm));
        }
    }
    if !frames.is_empty() {
        m.insert("frames".into(), J::Array(frames));
    }
    if !values_same(&base.stack, &next.stack) {
        m.insert("stack".into(), stack_json(&next.stack));
    }
    if base.pending != next.pending {
        m.insert("pending".into(), pending_json(&next.pending));
    }
    if base.status != next.status {
        m.insert("status".into(), next.status.as_str().into());
    }
    if !opt_value_same(&base.result, &next.result) {
        m.insert("result".into(), result_json(&next.result));
    }
    if base.try_stack != next.try_stack {
        m.insert("try_stack".into(), try_stack_json(&next.try_stack));
    }
    let (bj, nj) = (join_json(&base.join), join_json(&next.join));
    if bj != nj {
        m.insert("join".into(), nj);
    }
    if base.reentries != next.reentries {
        m.insert("reentries".into(), reentries_json(&next.reentries));
    }
    if base.iterating != next.iterating {
        m.insert("iterating".into(), iterating_json(&next.iterating));
    }
    if base.func_refs != next.func_refs {
        m.insert("func_refs".into(), func_refs_json(&next.func_refs));
    }
    if base.cancel != next.cancel {
        m.insert("cancel".into(), cancel_json(next.cancel));
    }
    Some(m)
}

/// Parses a delta's JSON bytes for [`apply_delta`]: like
/// [`Continuation::decode`], a repeated object key is an error
/// (`TCC-R020`), as is input over the message limit.
pub fn decode_delta(bytes: &[u8], limits: &Limits) -> Result<J, EngineError> {
    if bytes.len() > limits.max_message_bytes {
        return Err(EngineError::limit(
            "delta bytes",
            limits.max_message_bytes as u64,
        ));
    }
    crate::json::parse_strict(bytes)
        .map_err(|e| EngineError::continuation("$", crate::json::strict_error_text(&e)))
}

/// Applies a delta to a base continuation (revision left unchanged; the
/// caller records the persisted revision).
pub fn apply_delta(
    base: &Continuation,
    delta: &J,
    limits: &Limits,
) -> Result<Continuation, EngineError> {
    apply_delta_parts(base, delta, None, limits)
}

/// [`decode_delta`] and [`apply_delta`] in one, with a heap the delta
/// carries decoded straight from its text (issue 42, F3; the tree path
/// gives every diagnostic).
pub fn apply_delta_text(
    base: &Continuation,
    bytes: &[u8],
    limits: &Limits,
) -> Result<Continuation, EngineError> {
    if bytes.len() <= limits.max_message_bytes
        && let Some((members, Some(heap))) = crate::decode_text::split_heap(bytes, limits)
    {
        return apply_delta_parts(base, &J::Object(members), Some(heap), limits);
    }
    apply_delta(base, &decode_delta(bytes, limits)?, limits)
}

/// [`apply_delta`], with the delta's heap already decoded when
/// `decoded_heap` is given (`delta` then has no `heap` member).
fn apply_delta_parts(
    base: &Continuation,
    delta: &J,
    decoded_heap: Option<Heap>,
    limits: &Limits,
) -> Result<Continuation, EngineError> {
    let m = expect_object(
        CTX,
        delta,
        "$",
        &[
            "frames",
            "stack",
            "pending",
            "status",
            "result",
            "try_stack",
            "join",
            "reentries",
            "heap",
            "iterating",
            "func_refs",
            "cancel",
        ],
    )?;
    let mut c = base.clone();
    if let Some(decoded) = decoded_heap {
        c.heap = decoded;
    } else if let Some(h) = m.get("heap") {
        let mut heap = Heap::default();
        decode_heap(h, "$.heap", &mut heap, limits)?;
        c.heap = heap;
    }
    let mut heap = std::mem::take(&mut c.heap);
    if let Some(fs) = m.get("frames") {
        for (i, x) in array(fs, "$.frames")?.iter().enumerate() {
            let p = format!("$.frames[{i}]");
            let fm = expect_object(CTX, x, &p, &["index", "pc", "locals"])?;
            let index = u32_field(CTX, field(CTX, fm, "index", &p)?, &p)? as usize;
            let frame = c
                .frames
                .get_mut(index)
                .ok_or_else(|| EngineError::continuation(&p, "frame index out of range"))?;
            if let Some(pc) = fm.get("pc") {
                frame.pc = u32_field(CTX, pc, &format!("{p}.pc"))?;
            }
            if let Some(ls) = fm.get("locals") {
                for (k, patch) in array(ls, &format!("{p}.locals"))?.iter().enumerate() {
                    let pp = format!("{p}.locals[{k}]");
                    let pm = expect_object(CTX, patch, &pp, &["slot", "value"])?;
                    let slot = u32_field(CTX, field(CTX, pm, "slot", &pp)?, &pp)? as usize;
                    let value = absorb(CTX, field(CTX, pm, "value", &pp)?, &pp, &mut heap, limits)?;
                    *frame
                        .locals
                        .get_mut(slot)
                        .ok_or_else(|| EngineError::continuation(&pp, "slot out of range"))? =
                        value;
                }
            }
        }
    }
    if let Some(s) = m.get("stack") {
        c.stack = decode_values(s, "$.stack", &mut heap, limits)?;
    }
    if let Some(p) = m.get("pending") {
        c.pending = decode_pending(p, "$.pending")?;
    }
    if let Some(s) = m.get("status") {
        c.status = Status::parse(str_field(CTX, s, "$.status")?, "$.status")?;
    }
    if let Some(r) = m.get("result") {
        c.result = decode_opt_value(r, "$.result", &mut heap, limits)?;
    }
    if let Some(t) = m.get("try_stack") {
        c.try_stack = decode_try_stack(t, "$.try_stack")?;
    }
    finish_decode(c, m, heap, limits)
}

/// Decodes the optional trailing fields shared by full continuations and
/// deltas (join, re-entry counters, iterators, function references), installs
/// the heap and checks that every reference resolves.
fn finish_decode(
    mut c: Continuation,
    m: &Map<String, J>,
    mut heap: Heap,
    limits: &Limits,
) -> Result<Continuation, EngineError> {
    if let Some(j) = m.get("join") {
        c.join = decode_join(j, "$.join", &mut heap, limits)?;
    }
    if let Some(r) = m.get("reentries") {
        c.reentries = decode_reentries(r, "$.reentries")?;
    }
    if let Some(i) = m.get("iterating") {
        c.iterating = decode_u32s(i, "$.iterating")?;
    }
    if let Some(f) = m.get("func_refs") {
        c.func_refs = decode_func_refs(f, "$.func_refs")?;
    }
    if let Some(x) = m.get("cancel") {
        c.cancel = decode_cancel(x, "$.cancel")?;
    }
    c.heap = heap;
    c.check_refs()?;
    Ok(c)
}

/// Checkpoint equality of two continuations (NaN equals NaN, -0 differs from +0).
pub fn same_continuation(a: &Continuation, b: &Continuation) -> bool {
    a.revision == b.revision && a.encode() == b.encode()
}
