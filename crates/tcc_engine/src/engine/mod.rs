//! The execution (facts note (b)–(f)), in three parts: this module holds
//! the [`Program`], the [`Execution`] state, starting and resuming, and the
//! checkpoint bookkeeping that every durable transition ends in; the host
//! protocol's state machine (answers, wakes, `cancel`, joins) is `host`; the
//! instruction stepper (the fast path and the full `step`) is `step`.
//!
//! An [`Execution`] runs a validated artifact until a host boundary:
//! [`Execution::run_until_host`] returns an [`Outcome`]; when it is
//! [`Outcome::Host`], the host answers with [`Execution::respond`]. Wakes
//! (`timer_fired`, `event_payload`, `child_result`) and `cancel` are also
//! delivered through `respond` while no request is outstanding.

mod host;
mod step;

use crate::continuation::{CancelPhase, Continuation, DeltaBase, Frame, Pending, Status};
use crate::error::{EngineError, FatalKind};
use crate::fast::{self};
use crate::heap_digest::HeapDigest;
use crate::json::{TextOut, ValueContext, absorb, export, obj, to_canonical};
use crate::lang::{EvalError, Language};
use crate::limits::Limits;
use crate::liveness::Liveness;
use crate::position::FuncPos;
use crate::protocol::{CheckpointKind, HostRequest, Outcome};
use crate::value::{Cell, Heap, Value};
use serde_json::Value as J;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tcc_ir::{Artifact, FeatureSet, Function, FunctionId, Instruction};

/// The value a catchable cancellation throws (`irkit.catchable_cancel`):
/// a string, as every error the engine raises, named as Python names it.
pub const CANCELLED_ERROR: &str = "CancelledError: the execution was cancelled";

/// At most this many deltas follow a snapshot.
pub const MAX_DELTAS_PER_SNAPSHOT: u32 = 32;

/// Engine features this engine implements.
pub fn engine_features() -> FeatureSet {
    FeatureSet::all_engine_features()
}

/// A validated artifact prepared for execution (shared by executions).
#[derive(Debug)]
pub struct Program {
    artifact: Artifact,
    lang: Language,
    /// `LoadConst` values by function position and pc.
    consts: Vec<Vec<Value>>,
    /// Pre-decoded fast-path ops by function position and pc.
    fast: Vec<fast::Prepared>,
    entry_pos: FuncPos,
    /// The artifact requires `irkit.catchable_cancel`.
    catchable_cancel: bool,
    /// The artifact requires `irkit.catchable_child_failure`.
    catchable_child_failure: bool,
}

impl Program {
    /// Validates `artifact` against this engine and `host_capabilities`
    /// and prepares it.
    pub fn new(artifact: Artifact, host_capabilities: &FeatureSet) -> Result<Program, EngineError> {
        tcc_ir::validate(&artifact, &engine_features(), host_capabilities)?;
        // Runtime modules are required helpers; this engine provides none,
        // and ignoring a requirement is not valid execution.
        if let Some(m) = artifact.envelope.runtime_modules.first() {
            return Err(EngineError::fatal(
                FatalKind::Unsupported,
                format!(
                    "runtime module {:?} (kind {:?}) is required; this engine provides no runtime modules",
                    m.id, m.kind
                ),
            ));
        }
        let lang = Language::from_version(&artifact.envelope.language_semantics_version)
            .ok_or_else(|| {
                EngineError::fatal(FatalKind::Unsupported, "unknown language semantics version")
            })?;
        let consts = artifact
            .program
            .functions
            .iter()
            .map(|f| {
                f.instructions
                    .iter()
                    .map(|i| match i {
                        Instruction::LoadConst { value } => Value::from(value),
                        _ => Value::Undefined,
                    })
                    .collect()
            })
            .collect();
        let entry_pos = artifact
            .program
            .function_position(artifact.program.entry)
            .map(FuncPos::new)
            .ok_or_else(|| EngineError::fatal(FatalKind::Unsupported, "missing entry"))?;
        let fast = artifact
            .program
            .functions
            .iter()
            .map(|f| fast::prepare(&f.instructions, f.local_count))
            .collect();
        let requires = |id: &str| {
            artifact
                .envelope
                .required_engine_features
                .iter()
                .any(|f| f == id)
        };
        let catchable_cancel = requires(tcc_ir::features::CATCHABLE_CANCEL);
        let catchable_child_failure = requires(tcc_ir::features::CATCHABLE_CHILD_FAILURE);
        Ok(Program {
            artifact,
            lang,
            consts,
            fast,
            entry_pos,
            catchable_cancel,
            catchable_child_failure,
        })
    }

    /// The artifact.
    pub fn artifact(&self) -> &Artifact {
        &self.artifact
    }

    /// The language rules in force.
    pub fn language(&self) -> Language {
        self.lang
    }

    /// Whether the artifact requires `irkit.catchable_cancel`: a host
    /// cancels it with [`HostResponse::RequestCancel`](crate::HostResponse)
    /// (its handlers run) and terminates it with `Cancel`.
    pub fn catchable_cancel(&self) -> bool {
        self.catchable_cancel
    }

    /// Whether the artifact requires `irkit.catchable_child_failure`: a
    /// host reports a failed child with
    /// [`HostResponse::ChildFailed`](crate::HostResponse) (thrown in the
    /// parent) instead of failing the parent.
    pub fn catchable_child_failure(&self) -> bool {
        self.catchable_child_failure
    }

    fn function(&self, pos: FuncPos) -> &Function {
        &self.artifact.program.functions[pos.index()]
    }

    fn position(&self, id: FunctionId) -> Option<FuncPos> {
        self.artifact
            .program
            .function_position(id)
            .map(FuncPos::new)
    }
}

/// Work queued behind the current host request.
#[derive(Debug, Clone)]
enum Action {
    Emit(HostRequest),
    Checkpoint,
    Throw(Value),
}

/// What the outstanding request is waiting for.
#[derive(Debug, Clone)]
enum Awaiting {
    /// A checkpoint of the current state (which does not change until
    /// it is answered).
    Checkpoint {
        revision: u64,
    },
    EffectResult {
        in_branch: Option<u32>,
    },
    PersistEffect,
    Registration {
        branch: Option<u32>,
    },
}

/// One running execution.
#[derive(Debug)]
pub struct Execution {
    program: Arc<Program>,
    state: Continuation,
    limits: Limits,
    outstanding: Option<(HostRequest, Awaiting)>,
    queue: VecDeque<Action>,
    /// Last confirmed continuation (base of deltas), without its heap's
    /// cells (issue 42, F3: the heap is not held twice).
    base: Option<DeltaBase>,
    /// The outstanding checkpoint's revision and its state's heap digest
    /// (the state a confirmation makes the base; nothing runs between).
    checkpoint_heap: Option<(u64, HeapDigest)>,
    deltas_since_snapshot: u32,
    allow_delta: bool,
    /// The host takes checkpoint bodies as text only
    /// ([`Execution::set_text_checkpoints`]).
    text_checkpoints: bool,
    liveness: BTreeMap<FuncPos, Liveness>,
    poisoned: Option<EngineError>,
    steps: u64,
    /// The heap length at which the stepper next sweeps unreachable cells
    /// (`Heap::next_sweep`; not part of the continuation).
    sweep_at: usize,
    /// The canonical text of the last emitted checkpoint's body, by
    /// revision, when it was written while choosing delta or snapshot
    /// (see [`Execution::take_checkpoint_text`]).
    checkpoint_text: Option<(u64, CheckpointText)>,
}

/// `req` (a checkpoint request) with the given body.
fn with_body(req: &HostRequest, materialize: Option<J>, delta: Option<J>) -> HostRequest {
    match req {
        HostRequest::PersistCheckpoint {
            revision,
            kind,
            base_revision,
            ..
        } => HostRequest::PersistCheckpoint {
            revision: *revision,
            kind: *kind,
            base_revision: *base_revision,
            materialize,
            delta,
        },
        other => other.clone(),
    }
}

fn fatal(kind: FatalKind, m: impl Into<String>) -> EvalError {
    EvalError::Fatal(EngineError::fatal(kind, m))
}

fn type_error(m: impl Into<String>) -> EvalError {
    fatal(FatalKind::TypeError, m)
}

/// Binds an argument vector to a function's parameter slots under the
/// callee's language rules. `first_slot` is 1 for closures: slot 0 holds
/// the environment and `param_count` counts the user parameters only, which
/// occupy slots `1..=param_count` (the reference engine's convention).
fn bind_params(
    lang: Language,
    f: &Function,
    first_slot: usize,
    args: Vec<Value>,
) -> Result<Vec<Value>, EngineError> {
    let params = f.param_count as usize;
    if first_slot + params > f.local_count as usize {
        return Err(EngineError::fatal(
            FatalKind::Arity,
            format!(
                "{} needs {} local slots for its environment and {params} parameters, has local_count {}",
                f.name,
                first_slot + params,
                f.local_count
            ),
        ));
    }
    let mut locals = vec![Value::Undefined; f.local_count as usize];
    let argc = args.len();
    match lang {
        Language::Ts => {}
        Language::Py => {
            let defaults = f.param_defaults.as_deref().unwrap_or(&[]);
            if argc > params {
                return Err(EngineError::fatal(
                    FatalKind::Arity,
                    format!("{} takes {params} arguments, {argc} given", f.name),
                ));
            }
            for i in argc..params {
                match defaults.get(i).and_then(Option::as_ref) {
                    Some(d) => locals[first_slot + i] = Value::from(d),
                    None => {
                        return Err(EngineError::fatal(
                            FatalKind::Arity,
                            format!("{} missing argument {}", f.name, i + 1),
                        ));
                    }
                }
            }
        }
        Language::Rust => {
            if argc != params {
                return Err(EngineError::fatal(
                    FatalKind::Arity,
                    format!("{} takes {params} arguments, {argc} given", f.name),
                ));
            }
        }
    }
    for (i, a) in args.into_iter().take(params).enumerate() {
        locals[first_slot + i] = a;
    }
    Ok(locals)
}

impl Execution {
    /// Starts a fresh execution of the entry function with `args` (inlined
    /// tagged values), bound by the artifact's language rules.
    pub fn start(
        program: Arc<Program>,
        execution_id: &str,
        args: &[J],
        limits: Limits,
    ) -> Result<Execution, EngineError> {
        let mut heap = Heap::default();
        let mut values = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            values.push(absorb(
                ValueContext::Message,
                a,
                &format!("$.args[{i}]"),
                &mut heap,
                &limits,
            )?);
        }
        Execution::start_absorbed(program, execution_id, heap, values, limits)
    }

    /// [`Execution::start`] with the arguments as the JSON text of an array
    /// of inlined tagged values, absorbed without a tree
    /// ([`crate::absorb_text`]; issue 42).
    pub fn start_text(
        program: Arc<Program>,
        execution_id: &str,
        args: &str,
        limits: Limits,
    ) -> Result<Execution, EngineError> {
        let mut heap = Heap::default();
        let values = crate::absorb_text::absorb_list_text(args, "$.args", &mut heap, &limits)?;
        Execution::start_absorbed(program, execution_id, heap, values, limits)
    }

    /// [`Execution::start_text`] of arguments read in pieces from
    /// `args` (a host's long stored text, inflated as it is read: never
    /// held whole beside the heap; issue 42, F3).
    pub fn start_source(
        program: Arc<Program>,
        execution_id: &str,
        args: &dyn crate::absorb_text::TextSource,
        limits: Limits,
    ) -> Result<Execution, EngineError> {
        let mut heap = Heap::default();
        let values = crate::absorb_text::absorb_list_source(args, "$.args", &mut heap, &limits)?;
        Execution::start_absorbed(program, execution_id, heap, values, limits)
    }

    /// A fresh execution whose arguments are absorbed into `heap`.
    fn start_absorbed(
        program: Arc<Program>,
        execution_id: &str,
        heap: Heap,
        values: Vec<Value>,
        limits: Limits,
    ) -> Result<Execution, EngineError> {
        let entry = program.function(program.entry_pos);
        let locals = bind_params(program.lang, entry, 0, values)?;
        let env = &program.artifact.envelope;
        let state = Continuation {
            execution_id: execution_id.to_string(),
            artifact_hash: env.artifact_hash.clone(),
            engine_format_version: env.engine_format_version,
            language_semantics_version: env.language_semantics_version.clone(),
            revision: 0,
            status: Status::Runnable,
            frames: vec![Frame {
                func_id: entry.id,
                pc: 0,
                locals,
                pos: program.entry_pos,
            }],
            stack: Vec::new(),
            pending: None,
            result: None,
            try_stack: Vec::new(),
            join: None,
            reentries: Vec::new(),
            heap,
            iterating: Vec::new(),
            func_refs: Vec::new(),
            cancel: None,
        };
        Ok(Execution::with_state(program, state, limits, None))
    }

    fn with_state(
        program: Arc<Program>,
        state: Continuation,
        limits: Limits,
        base: Option<DeltaBase>,
    ) -> Execution {
        let state_sweep_at = state.heap.next_sweep(state.heap.cells().len());
        Execution {
            program,
            state,
            limits,
            outstanding: None,
            checkpoint_text: None,
            queue: VecDeque::new(),
            base,
            checkpoint_heap: None,
            deltas_since_snapshot: 0,
            allow_delta: true,
            text_checkpoints: false,
            liveness: BTreeMap::new(),
            poisoned: None,
            steps: 0,
            sweep_at: state_sweep_at,
        }
    }

    /// Resumes from a continuation after the resume checks (artifact
    /// pinning, versions, functions, locals length, pc range). Parameters
    /// are not bound again. The continuation becomes the delta base.
    pub fn resume(
        program: Arc<Program>,
        mut state: Continuation,
        limits: Limits,
    ) -> Result<Execution, EngineError> {
        let env = &program.artifact.envelope;
        if state.artifact_hash != env.artifact_hash {
            return Err(EngineError::ArtifactMismatch {
                continuation: state.artifact_hash.clone(),
                artifact: env.artifact_hash.clone(),
            });
        }
        if state.engine_format_version != env.engine_format_version {
            return Err(EngineError::ResumeMismatch(format!(
                "engine_format_version {} differs from the artifact's {}",
                state.engine_format_version, env.engine_format_version
            )));
        }
        if state.language_semantics_version != env.language_semantics_version {
            return Err(EngineError::ResumeMismatch(format!(
                "language_semantics_version {:?} differs from the artifact's {:?}",
                state.language_semantics_version, env.language_semantics_version
            )));
        }
        if state.frames.is_empty() && !state.status.is_terminal() {
            return Err(EngineError::ResumeMismatch("no frames".into()));
        }
        for (i, f) in state.frames.iter_mut().enumerate() {
            let pos = program.position(f.func_id).ok_or_else(|| {
                EngineError::ResumeMismatch(format!("frame {i}: unknown function {}", f.func_id))
            })?;
            let func = program.function(pos);
            if f.locals.len() != func.local_count as usize {
                return Err(EngineError::ResumeMismatch(format!(
                    "frame {i}: {} locals, function {} has local_count {}",
                    f.locals.len(),
                    f.func_id,
                    func.local_count
                )));
            }
            if f.pc as usize >= func.instructions.len() {
                return Err(EngineError::ResumeMismatch(format!(
                    "frame {i}: pc {} out of range ({} instructions)",
                    f.pc,
                    func.instructions.len()
                )));
            }
            f.pos = pos;
        }
        if state
            .frames
            .first()
            .is_some_and(|f| f.pos != program.entry_pos)
        {
            return Err(EngineError::ResumeMismatch(
                "frame 0 is not the entry function".into(),
            ));
        }
        for h in &state.try_stack {
            let ok =
                state.frames.get(h.frame as usize).is_some_and(|f| {
                    (h.catch as usize) < program.function(f.pos).instructions.len()
                }) && h.stack_len as usize <= state.stack.len();
            if !ok {
                return Err(EngineError::ResumeMismatch(
                    "try handler out of range".into(),
                ));
            }
        }
        if state.func_refs.len() > program.artifact.program.functions.len() {
            return Err(EngineError::ResumeMismatch(
                "func_refs longer than the program".into(),
            ));
        }
        for id in state.func_refs.iter().flatten() {
            if let Ok(Cell::Closure { func, .. }) = state.heap.get(*id)
                && program.position(*func).is_none()
            {
                return Err(EngineError::ResumeMismatch(format!(
                    "closure of unknown function {func}"
                )));
            }
        }
        let in_flight = match &state.pending {
            Some(Pending::Effect {
                key,
                idempotency_key,
            }) => Some(in_flight_effect(&program, &state, key, idempotency_key)?),
            _ => None,
        };
        if state.stack.len() > limits.max_stack || state.heap.cells().len() > limits.max_heap_cells
        {
            return Err(EngineError::limit(
                "continuation size",
                limits.max_stack as u64,
            ));
        }
        let digest = state.heap.digest();
        let base = DeltaBase::of(&mut state, digest);
        let mut e = Execution::with_state(program, state, limits, Some(base));
        // The effect is asked for again under the same identity; the host's
        // journal answers it if it already ran.
        e.outstanding = in_flight.map(|req| (req, Awaiting::EffectResult { in_branch: None }));
        Ok(e)
    }

    /// The current state (the continuation as it would be checkpointed,
    /// before dead-local clearing and GC).
    pub fn state(&self) -> &Continuation {
        &self.state
    }

    /// The continuation as canonical JSON text: while a `persist_checkpoint`
    /// is outstanding, the state that checkpoint commits (its revision
    /// included). This is how a host driving the engine over JSON obtains a
    /// snapshot (`materialize: true`), as the reference engine's hosts do.
    pub fn continuation_json(&self) -> String {
        // While a checkpoint is outstanding nothing runs: the state is the
        // one it commits.
        self.state.encode()
    }

    /// The program.
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// Instructions executed by this `Execution` value.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Disables delta checkpoints (host without `host.persist_checkpoint_delta`).
    pub fn set_delta_checkpoints(&mut self, allowed: bool) {
        self.allow_delta = allowed;
    }

    /// For a host that stores checkpoint bodies as text and takes each
    /// one with [`Execution::take_checkpoint_text`]: a snapshot's
    /// `persist_checkpoint` then carries no `materialize` tree, and a
    /// delta's no `delta` tree (a tree costs hundreds of bytes per heap
    /// value, its text tens; issue 42): the body is the text alone.
    ///
    /// Such a host confirms each checkpoint it commits (it never answers
    /// one with `Ack`): the delta base is dropped when a snapshot is
    /// chosen, as the snapshot replaces it once confirmed. After an `Ack`,
    /// the next checkpoint is then a snapshot rather than a delta (either
    /// is a valid body).
    pub fn set_text_checkpoints(&mut self, on: bool) {
        self.text_checkpoints = on;
    }

    /// Takes the canonical JSON text of the outstanding checkpoint's body
    /// (its `delta`, or its `materialize` for a snapshot) if the engine
    /// wrote it, or chose it for a host taking text, while choosing between
    /// the two: byte-identical to `to_canonical` of that body, which a host
    /// storing the text need not write again. `None` when `revision` is not
    /// the outstanding checkpoint's, or there is no text (or it was already
    /// taken).
    pub fn take_checkpoint_text(&mut self, revision: u64) -> Option<String> {
        let text = self.take_outstanding_text(revision)?;
        Some(match text {
            CheckpointText::Written(text) => text,
            CheckpointText::Snapshot { len: Some(len) } => self.state.encode_sized(len),
            CheckpointText::Snapshot { len: None } => {
                if self.state.heap.values() >= Self::SIZE_SNAPSHOTS_FROM {
                    self.state.encode_sized(self.state.encoded_len())
                } else {
                    self.state.encode()
                }
            }
            CheckpointText::Delta { plan, len } => plan.write(&self.state, len),
        })
    }

    /// [`Execution::take_checkpoint_text`] appended to `out` in pieces (a
    /// host deflating a long body as it is written never holds it whole
    /// beside the heap; issue 42, F3); `false` when there is no text.
    pub fn write_checkpoint_text_to<O: TextOut>(&mut self, revision: u64, out: &mut O) -> bool {
        let Some(text) = self.take_outstanding_text(revision) else {
            return false;
        };
        match text {
            CheckpointText::Written(text) => out.push_str(&text),
            CheckpointText::Snapshot { .. } => self.state.encode_text_to(out),
            CheckpointText::Delta { plan, .. } => plan.write_to(&self.state, out),
        }
        true
    }

    /// The outstanding checkpoint's text, taken, when `revision` is its.
    fn take_outstanding_text(&mut self, revision: u64) -> Option<CheckpointText> {
        let outstanding = matches!(
            &self.outstanding,
            Some((HostRequest::PersistCheckpoint { revision: r, .. }, _)) if *r == revision
        );
        match self.checkpoint_text.take() {
            Some((r, text)) if outstanding && r == revision => Some(text),
            _ => None,
        }
    }

    /// The request the host must answer, if any.
    pub fn outstanding(&self) -> Option<HostRequest> {
        let (req, _) = self.outstanding.as_ref()?;
        Some(match self.checkpoint_body(req) {
            Some((materialize, delta)) => with_body(req, materialize, delta),
            None => req.clone(),
        })
    }

    /// A checkpoint request's body when it has been handed out already:
    /// rebuilt from the state it was made from (unchanged until the
    /// response). `None` for any other request, or one still holding its body.
    fn checkpoint_body(&self, req: &HostRequest) -> Option<(Option<J>, Option<J>)> {
        match req {
            HostRequest::PersistCheckpoint {
                kind,
                materialize: None,
                delta: None,
                ..
            } => Some(match kind {
                _ if self.text_checkpoints => return None,
                CheckpointKind::Snapshot => (Some(self.state.to_json()), None),
                CheckpointKind::Delta => (
                    None,
                    self.base
                        .as_ref()
                        .and_then(|base| base.delta(&self.state, base.digest_of(&self.state.heap))),
                ),
            }),
            _ => None,
        }
    }

    /// The outstanding request for the host. A checkpoint's body (a whole
    /// continuation, or a delta) is moved out of the stored request rather
    /// than copied, and rebuilt if the request is asked for again.
    fn hand_out(&mut self) -> Option<HostRequest> {
        let (req, _) = self.outstanding.as_ref()?;
        if let Some((materialize, delta)) = self.checkpoint_body(req) {
            return Some(with_body(req, materialize, delta));
        }
        let (req, _) = self.outstanding.as_mut()?;
        if let HostRequest::PersistCheckpoint {
            materialize, delta, ..
        } = req
        {
            let (materialize, delta) = (materialize.take(), delta.take());
            return Some(with_body(req, materialize, delta));
        }
        Some(req.clone())
    }

    /// Runs at most `budget` instructions, stopping at the first host
    /// boundary. A budget of 0 runs none.
    pub fn run_until_host(&mut self, budget: u64) -> Result<Outcome, EngineError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        // Asked to run with nothing queued, a runnable execution reads
        // `running` until its next checkpoint is confirmed (the reference
        // engine's status rule; checkpoints taken before it runs on, such as
        // the one after a wake, keep `runnable`).
        if self.outstanding.is_none()
            && self.queue.is_empty()
            && self.state.status == Status::Runnable
        {
            self.state.status = Status::Running;
        }
        let r = self.run_inner(budget);
        if let Err(e) = &r {
            self.poisoned = Some(e.clone());
        }
        r
    }

    fn run_inner(&mut self, mut budget: u64) -> Result<Outcome, EngineError> {
        loop {
            if let Some(req) = self.hand_out() {
                return Ok(Outcome::Host(req));
            }
            if let Some(action) = self.queue.pop_front() {
                match action {
                    Action::Emit(req) => self.emit(req)?,
                    Action::Checkpoint => self.emit_checkpoint()?,
                    Action::Throw(v) => {
                        if !self.state.status.is_terminal() {
                            self.throw_value(v);
                        }
                    }
                }
                continue;
            }
            match self.state.status {
                Status::Completed => {
                    let v = self.state.result.clone().unwrap_or(Value::Undefined);
                    return Ok(Outcome::Completed(export(&self.state.heap, &v)?));
                }
                Status::Failed => {
                    let v = self.state.result.clone().unwrap_or(Value::Undefined);
                    let value = export(&self.state.heap, &v).unwrap_or_else(|_| {
                        obj([("t", "string".into()), ("v", "<unexportable value>".into())])
                    });
                    let message = match &v {
                        Value::Str(s) => s.to_string(),
                        _ => to_canonical(&value),
                    };
                    return Ok(Outcome::Failed { value, message });
                }
                Status::Cancelled => return Ok(Outcome::Cancelled),
                Status::Suspended => return Ok(Outcome::Suspended),
                Status::Runnable | Status::Running => {}
            }
            if self.deliver_settled_join()? {
                continue;
            }
            if budget == 0 {
                return Ok(Outcome::BudgetExhausted);
            }
            let ran = self.run_steps(budget)?;
            budget -= ran;
        }
    }

    fn emit(&mut self, req: HostRequest) -> Result<(), EngineError> {
        let awaiting = match &req {
            HostRequest::PersistEffect { .. } => Awaiting::PersistEffect,
            _ => {
                return Err(EngineError::fatal(
                    FatalKind::Unsupported,
                    "internal: unexpected queued request",
                ));
            }
        };
        self.outstanding = Some((req, awaiting));
        Ok(())
    }

    // ------------------------------------------------------------ checkpoints

    /// The continuation as it is persisted: dead locals cleared, heap collected.
    fn prepare_checkpoint(&mut self) {
        for fi in 0..self.state.frames.len() {
            let pos = self.state.frames[fi].pos;
            let program = self.program.clone();
            let live = self
                .liveness
                .entry(pos)
                .or_insert_with(|| Liveness::analyse(program.function(pos)));
            let catches: Vec<u32> = self
                .state
                .try_stack
                .iter()
                .filter(|h| h.frame as usize == fi)
                .map(|h| h.catch)
                .collect();
            let frame = &mut self.state.frames[fi];
            let pc = frame.pc;
            for (slot, v) in frame.locals.iter_mut().enumerate() {
                if !live.is_live_with(pc, &catches, slot) {
                    *v = Value::Undefined;
                }
            }
        }
        let roots = self.state.roots();
        let live = self.state.heap.collect(roots);
        self.sweep_at = self.state.heap.next_sweep(live);
    }

    /// Heap values from which a text snapshot is counted before it is
    /// written, to be written into one buffer of its length: counting
    /// costs about as much as writing, which a small heap's snapshot need
    /// not pay for a buffer of a few kilobytes.
    const SIZE_SNAPSHOTS_FROM: usize = 16 * 1024;

    fn emit_checkpoint(&mut self) -> Result<(), EngineError> {
        self.prepare_checkpoint();
        let revision = self.state.revision + 1;
        self.state.revision = revision;
        let base_revision = self.base.as_ref().map_or(0, DeltaBase::revision);
        // The state's heap digest, kept for the confirmation (it makes
        // this state the base) and compared with the base's; a host
        // without deltas keeps no base.
        self.checkpoint_heap = None;
        let heap_digest = self.allow_delta.then(|| match &self.base {
            // Not read again when it has not changed since the base.
            Some(base) => base.digest_of(&self.state.heap),
            None => self.state.heap.digest(),
        });
        if let Some(digest) = heap_digest {
            self.checkpoint_heap = Some((revision, digest));
        }
        // A delta when allowed, possible and shorter than the snapshot; the
        // snapshot's JSON tree is built only when it is the one sent. The
        // text written to compare them is kept for the host.
        // A host taking text (`set_text_checkpoints`) gets a delta's text
        // written without a tree, and no tree in the request.
        let mut text = None;
        let mut delta = None;
        if self.allow_delta && self.deltas_since_snapshot < MAX_DELTAS_PER_SNAPSHOT {
            if self.text_checkpoints {
                // Both lengths are counted before either text is written,
                // the heap's text once, and only the shorter is written,
                // into one buffer of its length (issue 42, F3: a changed
                // heap is written whole; writing the delta to compare it
                // held its text beside the snapshot's, each in a buffer
                // grown by doubling). A delta without its heap that is
                // shorter than the snapshot without its heap wins without
                // counting the heap at all.
                let plan = self
                    .base
                    .as_ref()
                    .zip(heap_digest)
                    .and_then(|(base, digest)| base.plan(&self.state, digest));
                if let Some(plan) = plan {
                    let state = &self.state;
                    let heap_len = std::cell::OnceCell::new();
                    let heap_len_of = || *heap_len.get_or_init(|| state.heap_text_len());
                    let delta_len = plan.len(heap_len_of);
                    let without_heap = state.encoded_len_without_heap();
                    let snapshot_len = (delta_len >= without_heap)
                        .then(|| state.encoded_len_with_bare(without_heap, heap_len_of));
                    // Written when the host takes it (into its own writer).
                    match snapshot_len {
                        Some(snapshot_len) if delta_len >= snapshot_len => {
                            drop(plan);
                            self.base = None;
                            text = Some(CheckpointText::Snapshot {
                                len: Some(snapshot_len),
                            });
                        }
                        _ => {
                            text = Some(CheckpointText::Delta {
                                plan,
                                len: delta_len,
                            });
                            delta = Some(None);
                        }
                    }
                }
            } else {
                let candidate = self
                    .base
                    .as_ref()
                    .zip(heap_digest)
                    .and_then(|(base, digest)| base.delta(&self.state, digest))
                    .map(|d| (to_canonical(&d), d));
                // The snapshot's length is counted, not written; its text
                // is written only when it is the one sent, after the
                // delta's is dropped (issue 42, F3: one copy of the heap's
                // text at a time).
                if let Some((delta_text, tree)) = candidate {
                    let snapshot_len = self.state.encoded_len();
                    if delta_text.len() < snapshot_len {
                        text = Some(CheckpointText::Written(delta_text));
                        delta = Some(Some(tree));
                    } else {
                        drop(delta_text);
                        text = Some(CheckpointText::Written(
                            self.state.encode_sized(snapshot_len),
                        ));
                    }
                }
            }
        }
        let (kind, materialize, delta) = match delta {
            Some(tree) => (CheckpointKind::Delta, None, tree),
            None if self.text_checkpoints => {
                // A host taking text confirms every checkpoint it commits
                // (`set_text_checkpoints`), so a snapshot's base is not
                // needed again: it goes before the snapshot's text is
                // written, which is written at its length (issue 42, F3:
                // the heap, its base and the text are not held at once,
                // nor the text twice while its buffer grows).
                self.base = None;
                if text.is_none() {
                    text = Some(CheckpointText::Snapshot { len: None });
                }
                (CheckpointKind::Snapshot, None, None)
            }
            None => (CheckpointKind::Snapshot, Some(self.state.to_json()), None),
        };
        self.checkpoint_text = text.map(|t| (revision, t));
        let req = HostRequest::PersistCheckpoint {
            revision,
            kind,
            base_revision,
            materialize,
            delta,
        };
        self.outstanding = Some((req, Awaiting::Checkpoint { revision }));
        Ok(())
    }

    fn advance_pc(&mut self) {
        if let Some(f) = self.state.frames.last_mut() {
            f.pc += 1;
        }
    }

    fn push_value(&mut self, v: Value) -> Result<(), EngineError> {
        if self.state.stack.len() >= self.limits.max_stack {
            return Err(EngineError::limit(
                "operand stack",
                self.limits.max_stack as u64,
            ));
        }
        self.state.stack.push(v);
        Ok(())
    }

    /// Throws `v`: unwind to the innermost handler, or fail the execution.
    fn throw_value(&mut self, v: Value) {
        match self.state.try_stack.pop() {
            Some(h) => {
                self.state.frames.truncate(h.frame as usize + 1);
                self.state.stack.truncate(h.stack_len as usize);
                self.state.stack.push(v);
                if let Some(f) = self.state.frames.last_mut() {
                    f.pc = h.catch;
                }
            }
            None => {
                // A cancellation error that leaves the entry function ends
                // the execution `cancelled`; any other error, even one the
                // compensation raised, `failed`.
                let cancelled = self.state.cancel == Some(CancelPhase::Delivered)
                    && matches!(&v, Value::Str(s) if s.as_str() == CANCELLED_ERROR);
                self.state.status = if cancelled {
                    Status::Cancelled
                } else {
                    Status::Failed
                };
                self.state.result = Some(v);
                self.state.pending = None;
                self.state.join = None;
                // One checkpoint records the failure (an effect failure has one queued already).
                if !self.queue.iter().any(|a| matches!(a, Action::Checkpoint)) {
                    self.queue.push_back(Action::Checkpoint);
                }
            }
        }
    }
}

/// The `run_effect` request to re-issue when resuming a continuation whose
/// pending operation is an effect in flight (facts (c): pc still at the
/// `Effect`, key and input already popped). The continuation records the
/// key and idempotency key but not the input, so only an effect without
/// input (input `{}`) can be asked for again; anything else is refused.
fn in_flight_effect(
    program: &Program,
    state: &Continuation,
    key: &str,
    idempotency_key: &str,
) -> Result<HostRequest, EngineError> {
    let refuse = |why: &str| {
        Err(EngineError::ResumeMismatch(format!(
            "cannot resume with effect {key:?} in flight: {why}"
        )))
    };
    if !state.status.is_runnable() {
        return refuse("the status is not runnable");
    }
    if state.join.is_some() {
        return refuse("unsupported inside a concurrent group");
    }
    let [frame] = &state.frames[..] else {
        return refuse("durable operations run in the entry function's only frame");
    };
    if idempotency_key != format!("{}:{key}", state.execution_id) {
        return refuse("its idempotency key is not {execution_id}:{key}");
    }
    match program
        .function(frame.pos)
        .instructions
        .get(frame.pc as usize)
    {
        Some(Instruction::Effect { has_input: false }) => Ok(HostRequest::RunEffect {
            key: key.to_string(),
            idempotency_key: idempotency_key.to_string(),
            input: obj([("t", "object".into()), ("v", J::Object(Default::default()))]),
        }),
        Some(Instruction::Effect { has_input: true }) => {
            refuse("unsupported: the continuation does not carry the effect's input")
        }
        _ => refuse("the frame's pc is not at an Effect instruction"),
    }
}

/// The outstanding checkpoint's body as text: written, or chosen and
/// written when the host takes it ([`Execution::take_checkpoint_text`],
/// [`Execution::write_checkpoint_text_to`]; the state does not change
/// before the host answers the checkpoint).
#[derive(Debug)]
enum CheckpointText {
    /// Written (a host taking trees: the text was written to compare).
    Written(String),
    /// The snapshot: the state's text, `len` bytes when counted.
    Snapshot {
        /// Its length, when counted.
        len: Option<usize>,
    },
    /// A delta, `len` bytes.
    Delta {
        /// What it holds.
        plan: crate::continuation::DeltaPlan,
        /// Its length.
        len: usize,
    },
}
