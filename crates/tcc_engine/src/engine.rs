//! The execution: stepper, exceptions, durable operations, joins,
//! cancellation and checkpoints (facts note (b)–(f)).
//!
//! An [`Execution`] runs a validated artifact until a host boundary:
//! [`Execution::run_until_host`] returns an [`Outcome`]; when it is
//! [`Outcome::Host`], the host answers with [`Execution::respond`]. Wakes
//! (`timer_fired`, `event_payload`, `child_result`) and `cancel` are also
//! delivered through `respond` while no request is outstanding.

use crate::continuation::{
    Branch, BranchOp, Continuation, Frame, Join, JoinKind, JoinState, Pending, Phase, Reentry,
    Status, TryHandler, WaitKind, compute_delta,
};
use crate::error::{EngineError, FatalKind, Site};
use crate::fast::{self, Fast, Res, Tail};
use crate::json::{ValueContext, absorb, export, obj, to_canonical};
use crate::lang::{self, ArithOp, EvalError, Language};
use crate::limits::Limits;
use crate::liveness::Liveness;
use crate::protocol::{CheckpointKind, HostRequest, HostResponse, Outcome};
use crate::value::{Cell, Heap, Value};
use serde_json::Value as J;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tcc_ir::{Artifact, FeatureSet, Function, Instruction};

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
    entry_pos: usize,
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
            .ok_or_else(|| EngineError::fatal(FatalKind::Unsupported, "missing entry"))?;
        let fast = artifact
            .program
            .functions
            .iter()
            .map(|f| fast::prepare(&f.instructions, f.local_count))
            .collect();
        Ok(Program {
            artifact,
            lang,
            consts,
            fast,
            entry_pos,
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

    fn function(&self, pos: usize) -> &Function {
        &self.artifact.program.functions[pos]
    }

    fn position(&self, id: u32) -> Option<usize> {
        self.artifact.program.function_position(id)
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
    Checkpoint {
        revision: u64,
        state: Box<Continuation>,
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
    /// Last confirmed continuation (base of deltas).
    base: Option<Continuation>,
    deltas_since_snapshot: u32,
    allow_delta: bool,
    liveness: BTreeMap<usize, Liveness>,
    poisoned: Option<EngineError>,
    steps: u64,
    /// The canonical text of the last emitted checkpoint's body, by
    /// revision, when it was written while choosing delta or snapshot
    /// (see [`Execution::take_checkpoint_text`]).
    checkpoint_text: Option<(u64, String)>,
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
        };
        Ok(Execution::with_state(program, state, limits, None))
    }

    fn with_state(
        program: Arc<Program>,
        state: Continuation,
        limits: Limits,
        base: Option<Continuation>,
    ) -> Execution {
        Execution {
            program,
            state,
            limits,
            outstanding: None,
            checkpoint_text: None,
            queue: VecDeque::new(),
            base,
            deltas_since_snapshot: 0,
            allow_delta: true,
            liveness: BTreeMap::new(),
            poisoned: None,
            steps: 0,
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
        if state.stack.len() > limits.max_stack || state.heap.cells.len() > limits.max_heap_cells {
            return Err(EngineError::limit(
                "continuation size",
                limits.max_stack as u64,
            ));
        }
        let base = state.clone();
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
        match &self.outstanding {
            Some((_, Awaiting::Checkpoint { state, .. })) => state.encode(),
            _ => self.state.encode(),
        }
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

    /// Takes the canonical JSON text of the outstanding checkpoint's body
    /// (its `delta`, or its `materialize` for a snapshot) if the engine
    /// wrote it while choosing between the two: byte-identical to
    /// `to_canonical` of that body, which a host storing the text need not
    /// write again. `None` when `revision` is not the outstanding
    /// checkpoint's, or the text was not written (or already taken).
    pub fn take_checkpoint_text(&mut self, revision: u64) -> Option<String> {
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
                CheckpointKind::Snapshot => (Some(self.state.to_json()), None),
                CheckpointKind::Delta => (
                    None,
                    self.base
                        .as_ref()
                        .and_then(|base| compute_delta(base, &self.state)),
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
        self.state.heap.collect(roots);
    }

    fn emit_checkpoint(&mut self) -> Result<(), EngineError> {
        self.prepare_checkpoint();
        let revision = self.state.revision + 1;
        self.state.revision = revision;
        let base_revision = self.base.as_ref().map_or(0, |b| b.revision);
        // A delta when allowed, possible and shorter than the snapshot; the
        // snapshot's JSON tree is built only when it is the one sent. The
        // text written to compare them is kept for the host.
        let mut text = None;
        let delta = if self.allow_delta && self.deltas_since_snapshot < MAX_DELTAS_PER_SNAPSHOT {
            self.base
                .as_ref()
                .and_then(|base| compute_delta(base, &self.state))
                .and_then(|d| {
                    let delta_text = to_canonical(&d);
                    let snapshot_text = self.state.encode();
                    if delta_text.len() < snapshot_text.len() {
                        text = Some(delta_text);
                        Some(d)
                    } else {
                        text = Some(snapshot_text);
                        None
                    }
                })
        } else {
            None
        };
        self.checkpoint_text = text.map(|t| (revision, t));
        let (kind, materialize) = match delta {
            Some(_) => (CheckpointKind::Delta, None),
            None => (CheckpointKind::Snapshot, Some(self.state.to_json())),
        };
        let req = HostRequest::PersistCheckpoint {
            revision,
            kind,
            base_revision,
            materialize,
            delta,
        };
        self.outstanding = Some((
            req,
            Awaiting::Checkpoint {
                revision,
                state: Box::new(self.state.clone()),
            },
        ));
        Ok(())
    }

    // ------------------------------------------------------------ responses

    /// Applies a host response (or a wake / `cancel` while no request is
    /// outstanding). A response that does not match is
    /// [`EngineError::UnexpectedHostResponse`] and changes nothing.
    pub fn respond(&mut self, response: HostResponse) -> Result<(), EngineError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        let unexpected = |expected: &str| EngineError::UnexpectedHostResponse {
            response: response.type_name().to_string(),
            expected: expected.to_string(),
        };
        let Some((_, pending)) = &self.outstanding else {
            return self.wake(response);
        };
        // Check the pairing on a borrow first, so that a response that does
        // not match changes nothing and the outstanding request (with a
        // checkpoint's whole state) is moved out, not cloned.
        let matches = match (pending, &response) {
            (
                Awaiting::Checkpoint { revision, .. },
                HostResponse::PersistConfirmed { revision: r },
            ) => {
                if r != revision {
                    return Err(unexpected(&format!(
                        "persist_confirmed for revision {revision}"
                    )));
                }
                true
            }
            (Awaiting::Checkpoint { .. }, HostResponse::Ack)
            | (Awaiting::PersistEffect, HostResponse::Ack)
            | (Awaiting::Registration { .. }, HostResponse::Ack)
            | (
                Awaiting::EffectResult { .. },
                HostResponse::EffectResult { .. } | HostResponse::EffectFailed { .. },
            ) => true,
            _ => false,
        };
        if !matches {
            return Err(unexpected(match pending {
                Awaiting::Checkpoint { .. } => "persist_confirmed or ack",
                Awaiting::EffectResult { .. } => "effect_result or effect_failed",
                Awaiting::PersistEffect | Awaiting::Registration { .. } => "ack",
            }));
        }
        let Some((req, awaiting)) = self.outstanding.take() else {
            return self.wake(response);
        };
        match (awaiting, &response) {
            (Awaiting::Checkpoint { mut state, .. }, HostResponse::PersistConfirmed { .. }) => {
                // A confirmed checkpoint leaves a running execution `runnable`,
                // in the state and in the delta base alike (the reference
                // engine's rule: the next checkpoint after more steps writes
                // `running` again).
                if self.state.status == Status::Running {
                    self.state.status = Status::Runnable;
                }
                if state.status == Status::Running {
                    state.status = Status::Runnable;
                }
                if matches!(
                    req,
                    HostRequest::PersistCheckpoint {
                        kind: CheckpointKind::Snapshot,
                        ..
                    }
                ) {
                    self.deltas_since_snapshot = 0;
                } else {
                    self.deltas_since_snapshot += 1;
                }
                self.base = Some(*state);
                Ok(())
            }
            (Awaiting::Checkpoint { .. }, HostResponse::Ack) => {
                // Allowed, but commits nothing: the base stays the last confirmed one.
                self.outstanding = None;
                Ok(())
            }
            (Awaiting::PersistEffect, HostResponse::Ack) => {
                self.outstanding = None;
                // Inside a group the journalled branch leaves the execution
                // `runnable` (the reference's status rule); outside, it runs on.
                if self.state.join.is_some() && self.state.status == Status::Running {
                    self.state.status = Status::Runnable;
                }
                Ok(())
            }
            (Awaiting::Registration { branch }, HostResponse::Ack) => {
                self.outstanding = None;
                match branch {
                    Some(b) => {
                        let join = self.join_mut()?;
                        join.branches[b as usize].phase = Phase::Registered;
                        self.state.pending = None;
                        if self.state.status == Status::Running {
                            self.state.status = Status::Runnable;
                        }
                        self.fold_join_reached()?;
                    }
                    None => self.state.status = Status::Suspended,
                }
                self.queue.push_back(Action::Checkpoint);
                Ok(())
            }
            (Awaiting::EffectResult { in_branch }, HostResponse::EffectResult { value }) => {
                let v = match absorb(
                    ValueContext::Message,
                    value,
                    "$.value",
                    &mut self.state.heap,
                    &self.limits,
                ) {
                    Ok(v) => v,
                    Err(e) => {
                        // Still outstanding (as before the response).
                        self.outstanding = Some((req, Awaiting::EffectResult { in_branch }));
                        return Err(e);
                    }
                };
                let HostRequest::RunEffect {
                    key,
                    idempotency_key,
                    ..
                } = req
                else {
                    return Err(unexpected("internal"));
                };
                self.outstanding = None;
                self.state.pending = None;
                self.advance_pc();
                match in_branch {
                    Some(b) => {
                        let join = self.join_mut()?;
                        let br = &mut join.branches[b as usize];
                        br.phase = Phase::Completed;
                        br.result = Some(v);
                        self.fold_join_reached()?;
                    }
                    None => self.push_value(v)?,
                }
                self.queue
                    .push_back(Action::Emit(HostRequest::PersistEffect {
                        key,
                        idempotency_key,
                        status: "completed",
                        result: value.clone(),
                    }));
                self.queue.push_back(Action::Checkpoint);
                Ok(())
            }
            (Awaiting::EffectResult { in_branch }, HostResponse::EffectFailed { message }) => {
                let HostRequest::RunEffect {
                    key,
                    idempotency_key,
                    ..
                } = req
                else {
                    return Err(unexpected("internal"));
                };
                self.outstanding = None;
                self.state.pending = None;
                self.queue
                    .push_back(Action::Emit(HostRequest::PersistEffect {
                        key,
                        idempotency_key,
                        status: "failed",
                        result: obj([("t", "string".into()), ("v", message.as_str().into())]),
                    }));
                // A failure that throws (outside a group, or a JoinAll's
                // fail-fast) leaves the pc at the `Effect`, as the reference
                // does; a race's failed branch is recorded and the program
                // goes on to the next branch.
                match in_branch {
                    Some(b) => {
                        let join = self.join_mut()?;
                        let br = &mut join.branches[b as usize];
                        br.phase = Phase::Failed;
                        br.error = Some(message.clone());
                        if join.kind == JoinKind::All {
                            self.fail_fast(b)?;
                        } else {
                            self.advance_pc();
                            self.fold_join_reached()?;
                        }
                        self.queue.push_back(Action::Checkpoint);
                    }
                    // The throw runs on; the next durable transition (or the
                    // failure, when nothing catches it) checkpoints, as the
                    // reference does: the journal row replays the failure.
                    None => self.queue.push_back(Action::Throw(Value::string(message))),
                }
                Ok(())
            }
            (awaiting, _) => {
                // Unreachable: the pairing was checked above.
                self.outstanding = Some((req, awaiting));
                Err(unexpected("a response matching the outstanding request"))
            }
        }
    }

    /// After the last branch of the open group was bound and answered, with
    /// the frame at the group's `JoinAll`/`JoinAny`: the checkpoint being
    /// queued is the one the join needs (the reference's concurrency.md: one
    /// settle checkpoint), so no second one is written on reaching the join
    /// instruction. A race settles now (its winner is persisted before the
    /// parent continues); a group still waiting suspends now; a `JoinAll`
    /// whose branches all completed stays `active` and settles, without a
    /// checkpoint, when its instruction runs next (every result is in this
    /// checkpoint already). Otherwise nothing changes.
    fn fold_join_reached(&mut self) -> Result<(), EngineError> {
        let Some(join) = &self.state.join else {
            return Ok(());
        };
        let at_join = self.state.frames.len() == 1
            && self.state.frames[0].pos == self.program.entry_pos
            && self.state.frames[0].pc == join.join_pc;
        if !at_join
            || join.state != JoinState::Active
            || join.branches.iter().any(|b| b.phase == Phase::Planned)
        {
            return Ok(());
        }
        let all_completed = join.branches.iter().all(|b| b.phase == Phase::Completed);
        let waiting = match join.kind {
            JoinKind::All => !all_completed,
            JoinKind::Any => !self.try_settle()?,
        };
        if waiting {
            self.state.status = Status::Suspended;
        }
        Ok(())
    }

    fn join_mut(&mut self) -> Result<&mut Join, EngineError> {
        self.state
            .join
            .as_mut()
            .ok_or_else(|| EngineError::fatal(FatalKind::IllegalDurableOp, "no open join"))
    }

    /// JoinAll fail-fast: settle failed, detach the others (the re-entry is
    /// recorded when the failure is delivered).
    fn fail_fast(&mut self, b: u32) -> Result<(), EngineError> {
        let join = self.join_mut()?;
        join.state = JoinState::Failed;
        join.failure_branch = Some(b);
        for br in &mut join.branches {
            if matches!(br.phase, Phase::Planned | Phase::Registered) {
                br.phase = Phase::Detached;
            }
        }
        Ok(())
    }

    fn record_reentry(&mut self, site: u32, next: u32) {
        match self.state.reentries.binary_search_by_key(&site, |r| r.site) {
            Ok(i) => self.state.reentries[i].next = next,
            Err(i) => self.state.reentries.insert(i, Reentry { site, next }),
        }
    }

    fn next_reentry(&self, site: u32) -> u32 {
        self.state
            .reentries
            .binary_search_by_key(&site, |r| r.site)
            .map_or(0, |i| self.state.reentries[i].next)
    }

    /// Whether a branch id names a branch of an earlier, settled group of
    /// this execution (late deliveries to those are ignored).
    fn is_past_branch(&self, id: &str) -> bool {
        let Some(rest) = id.strip_prefix(&format!("{}:", self.state.execution_id)) else {
            return false;
        };
        let parts: Vec<&str> = rest.split(':').collect();
        let [site, reentry, _index] = parts.as_slice() else {
            return false;
        };
        match (site.parse::<u32>(), reentry.parse::<u32>()) {
            (Ok(s), Ok(r)) => {
                let current = self.state.join.as_ref().map(|j| (j.site, j.reentry));
                current != Some((s, r)) && r < self.next_reentry(s)
            }
            _ => false,
        }
    }

    fn wake(&mut self, response: HostResponse) -> Result<(), EngineError> {
        let unexpected = |expected: &str| EngineError::UnexpectedHostResponse {
            response: response.type_name().to_string(),
            expected: expected.to_string(),
        };
        if matches!(response, HostResponse::Cancel) {
            if self.state.status.is_terminal() {
                return Err(unexpected("nothing: the execution has ended"));
            }
            self.state.status = Status::Cancelled;
            self.state.pending = None;
            self.state.join = None;
            self.queue.push_back(Action::Checkpoint);
            return Ok(());
        }
        if !self.queue.is_empty() || self.state.status != Status::Suspended {
            return Err(unexpected(
                "no response: no request is outstanding and the execution is not suspended",
            ));
        }
        if let HostResponse::ChildResult {
            branch,
            child_execution_id: Some(child),
            ..
        } = &response
            && let Some(awaited) = self.awaited_child(branch.as_deref())
            && awaited != *child
        {
            return Err(unexpected(&format!(
                "child_result for child {awaited:?}, got {child:?}"
            )));
        }
        let (branch, value) = match &response {
            HostResponse::TimerFired { branch } => (branch.clone(), None),
            HostResponse::EventPayload { value, branch }
            | HostResponse::ChildResult { value, branch, .. } => {
                (branch.clone(), Some(value.clone()))
            }
            _ => {
                return Err(unexpected(
                    "a wake (timer_fired, event_payload, child_result) or cancel",
                ));
            }
        };
        let kind_matches_pending = |p: &Option<Pending>| {
            matches!(
                (p, &response),
                (
                    Some(Pending::Wait(WaitKind::Timer { .. })),
                    HostResponse::TimerFired { .. }
                ) | (
                    Some(Pending::Wait(WaitKind::Event { .. })),
                    HostResponse::EventPayload { .. }
                ) | (
                    Some(Pending::Wait(WaitKind::Child { .. })),
                    HostResponse::ChildResult { .. }
                )
            )
        };
        match (&self.state.join, branch) {
            (None, Some(b)) => {
                if self.is_past_branch(&b) {
                    return Ok(());
                }
                Err(unexpected("a wake without a branch (no join is open)"))
            }
            (Some(_), None) => Err(unexpected("a wake carrying the branch id of the open join")),
            (None, None) => {
                if !kind_matches_pending(&self.state.pending) {
                    return Err(unexpected("the wake matching the pending wait"));
                }
                let v = match value {
                    Some(j) => absorb(
                        ValueContext::Message,
                        &j,
                        "$.value",
                        &mut self.state.heap,
                        &self.limits,
                    )?,
                    None => Value::Undefined,
                };
                self.push_value(v)?;
                self.state.pending = None;
                self.state.status = Status::Runnable;
                self.queue.push_back(Action::Checkpoint);
                Ok(())
            }
            (Some(join), Some(b)) => {
                let Some(idx) = join.branches.iter().position(|x| x.branch_id == b) else {
                    if self.is_past_branch(&b) {
                        return Ok(());
                    }
                    return Err(unexpected("a branch id of the open join"));
                };
                let br = &join.branches[idx];
                if br.phase != Phase::Registered || join.state != JoinState::Active {
                    return Ok(()); // late or duplicate delivery: ignored
                }
                let kind_ok = matches!(
                    (&br.op, &response),
                    (
                        Some(BranchOp::Timer { .. }),
                        HostResponse::TimerFired { .. }
                    ) | (
                        Some(BranchOp::Event { .. }),
                        HostResponse::EventPayload { .. }
                    ) | (
                        Some(BranchOp::Child { .. }),
                        HostResponse::ChildResult { .. }
                    )
                );
                if !kind_ok {
                    return Err(unexpected("the wake kind the branch registered"));
                }
                let v = match value {
                    Some(j) => absorb(
                        ValueContext::Message,
                        &j,
                        "$.value",
                        &mut self.state.heap,
                        &self.limits,
                    )?,
                    None => Value::Undefined,
                };
                let join = self.join_mut()?;
                join.branches[idx].phase = Phase::Completed;
                join.branches[idx].result = Some(v);
                match join.kind {
                    // The last result makes the group runnable; `JoinAll`
                    // (where the frame waits) settles it without a checkpoint.
                    JoinKind::All => {
                        if join.branches.iter().all(|b| b.phase == Phase::Completed) {
                            self.state.status = Status::Runnable;
                        }
                    }
                    JoinKind::Any => {
                        self.try_settle()?;
                    }
                }
                self.queue.push_back(Action::Checkpoint);
                Ok(())
            }
        }
    }

    /// The execution id of the child a `child_result` for `branch` (or, with
    /// no branch, for the pending wait) would answer, if one is awaited.
    pub fn awaited_child(&self, branch: Option<&str>) -> Option<String> {
        match (branch, &self.state.join) {
            (Some(b), Some(join)) => join.branches.iter().find_map(|x| match &x.op {
                Some(BranchOp::Child {
                    child_execution_id, ..
                }) if x.branch_id == b => Some(child_execution_id.clone()),
                _ => None,
            }),
            (None, _) => match &self.state.pending {
                Some(Pending::Wait(WaitKind::Child {
                    child_execution_id, ..
                })) => Some(child_execution_id.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Settles the open join if its rule allows; returns whether it settled.
    /// Only called at the join instruction or on a delivery while suspended there.
    fn try_settle(&mut self) -> Result<bool, EngineError> {
        let join = self.join_mut()?;
        if join.state != JoinState::Active {
            return Ok(true);
        }
        let settled = match join.kind {
            JoinKind::All => {
                if join.branches.iter().all(|b| b.phase == Phase::Completed) {
                    join.state = JoinState::Succeeded;
                    true
                } else {
                    false
                }
            }
            JoinKind::Any => {
                match join
                    .branches
                    .iter()
                    .position(|b| matches!(b.phase, Phase::Completed | Phase::Failed))
                {
                    Some(w) => {
                        join.winner_branch = Some(w as u32);
                        join.state = if join.branches[w].phase == Phase::Failed {
                            join.failure_branch = Some(w as u32);
                            JoinState::Failed
                        } else {
                            JoinState::Succeeded
                        };
                        for b in &mut join.branches {
                            if b.phase == Phase::Registered || b.phase == Phase::Planned {
                                b.phase = Phase::Detached;
                            }
                        }
                        true
                    }
                    None => false,
                }
            }
        };
        if settled {
            self.state.status = Status::Runnable;
        }
        Ok(settled)
    }

    /// After a settled join was persisted: push its value or throw its error.
    fn deliver_settled_join(&mut self) -> Result<bool, EngineError> {
        let Some(join) = &self.state.join else {
            return Ok(false);
        };
        if join.state == JoinState::Active {
            return Ok(false);
        }
        let join = self.state.join.take().expect("checked above");
        // The site's next re-entry is recorded with the delivery, as the
        // reference does (a settle checkpoint does not carry it yet).
        self.record_reentry(join.site, join.reentry + 1);
        match join.state {
            JoinState::Failed => {
                let b = join.failure_branch.unwrap_or(0) as usize;
                let msg = join
                    .branches
                    .get(b)
                    .and_then(|b| b.error.clone())
                    .unwrap_or_default();
                self.throw_value(Value::string(&msg));
                // Caught: the unwound state is checkpointed, `runnable` (the
                // reference does; an uncaught one checkpoints the failure).
                if self.state.status.is_runnable()
                    && !self.queue.iter().any(|a| matches!(a, Action::Checkpoint))
                {
                    self.state.status = Status::Runnable;
                    self.queue.push_back(Action::Checkpoint);
                }
            }
            _ => {
                let value = match join.kind {
                    JoinKind::All => {
                        let items: Vec<Value> = join
                            .branches
                            .iter()
                            .map(|b| b.result.clone().unwrap_or(Value::Undefined))
                            .collect();
                        Value::Ref(self.state.heap.alloc(Cell::Array(items), &self.limits)?)
                    }
                    JoinKind::Any => {
                        let w = join.winner_branch.unwrap_or(0) as usize;
                        join.branches
                            .get(w)
                            .and_then(|b| b.result.clone())
                            .unwrap_or(Value::Undefined)
                    }
                };
                if let Some(f) = self.state.frames.last_mut() {
                    f.pc = join.join_pc + 1;
                }
                self.push_value(value)?;
            }
        }
        Ok(true)
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
                self.state.status = Status::Failed;
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

    // ------------------------------------------------------------ stepper

    /// Runs up to `budget` steps; returns how many ran. Stops early when a
    /// step queues host work or changes the status.
    fn run_steps(&mut self, budget: u64) -> Result<u64, EngineError> {
        let program = self.program.clone();
        let mut ran = 0;
        while ran < budget {
            let fast = self.run_fast(&program, budget - ran);
            ran += fast;
            self.steps += fast;
            if ran >= budget {
                break;
            }
            ran += 1;
            self.steps += 1;
            let (pos, pc) = match self.state.frames.last() {
                Some(f) => (f.pos, f.pc),
                None => {
                    return Err(EngineError::fatal(
                        FatalKind::Unsupported,
                        "runnable execution without frames",
                    ));
                }
            };
            let func = program.function(pos);
            let site = Site { func: func.id, pc };
            let Some(ins) = func.instructions.get(pc as usize) else {
                return Err(EngineError::fatal(
                    FatalKind::Unsupported,
                    "pc ran off the end of the function",
                )
                .at(site));
            };
            match self.step(&program, pos, pc, ins) {
                Ok(true) => {}
                Ok(false) => return Ok(ran),
                Err(EvalError::Fatal(e)) => return Err(e.at(site)),
                Err(EvalError::Throw(v)) => {
                    self.throw_value(v);
                    if !self.state.status.is_runnable() {
                        return Ok(ran);
                    }
                }
            }
            // `step` returns false whenever it queues host work or changes
            // the status, so the common path checks nothing else.
            debug_assert!(self.queue.is_empty() && self.outstanding.is_none());
        }
        Ok(ran)
    }

    /// The hot loop: straight-line locals, constants, jumps and number
    /// arithmetic/compares within the top frame, without per-step
    /// bookkeeping. It stops, leaving the state untouched, before any
    /// instruction it does not handle or whose operands are not the simple
    /// case; the full stepper then executes (or rejects) that instruction.
    ///
    /// Kept out of line so the loop gets its own register allocation.
    #[inline(never)]
    fn run_fast(&mut self, program: &Program, budget: u64) -> u64 {
        let max_stack = self.limits.max_stack;
        let py = program.lang == Language::Py;
        let state = &mut self.state;
        let Some(frame) = state.frames.last_mut() else {
            return 0;
        };
        let prepared = &program.fast[frame.pos];
        // Every local index in `ops` is below the function's local count
        // (`fast::prepare`); a frame of another length is left to the stepper.
        if frame.locals.len() != prepared.local_count {
            return 0;
        }
        let ops = &prepared.ops[..];
        let consts = &program.consts[frame.pos][..];
        let stack = &mut state.stack;
        let locals = &mut frame.locals[..];
        // `fast::num` without the bounds check, which is the hot loop's
        // most frequent operation.
        #[inline(always)]
        #[allow(unsafe_code)] // the workspace's one engine fast path (see SAFETY below)
        fn num(locals: &[Value], o: fast::Operand) -> Option<f64> {
            match o {
                fast::Operand::Num(n) => Some(n),
                // SAFETY: `Program::fast` is built only by `fast::prepare`,
                // which keeps every local index below the function's local
                // count, and this loop runs only on a frame whose locals
                // have exactly that length (checked above; the slice is
                // never resized here).
                fast::Operand::Local(l) => match unsafe { locals.get_unchecked(l as usize) } {
                    Value::Number(n) => Some(*n),
                    _ => None,
                },
            }
        }
        let mut pc = frame.pc as usize;
        let mut left = budget;
        while let Some(op) = ops.get(pc) {
            let n = u64::from(op.len);
            if n > left {
                break;
            }
            let next = pc + op.len as usize;
            // Applies a fused op's tail: the result is pushed, stored or
            // branched on, and `pc` moves on.
            macro_rules! finish {
                ($result:expr, $tail:expr) => {{
                    let r: Res = $result;
                    pc = match $tail {
                        Tail::Push => {
                            stack.push(r.value());
                            next
                        }
                        Tail::Store(l) => {
                            locals[l as usize] = r.value();
                            next
                        }
                        Tail::StoreJump(l, target) => {
                            locals[l as usize] = r.value();
                            target as usize
                        }
                        Tail::JumpIfFalse(target) => {
                            if r.truthy() {
                                next
                            } else {
                                target as usize
                            }
                        }
                        Tail::JumpIfTrue(target) => {
                            if r.truthy() {
                                target as usize
                            } else {
                                next
                            }
                        }
                    };
                }};
            }
            match op.form {
                Fast::Slow => break,
                Fast::Nop => pc = next,
                Fast::Pop => {
                    if stack.pop().is_none() {
                        break;
                    }
                    pc = next;
                }
                Fast::LoadLocal(l) => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    stack.push(locals[l as usize].clone());
                    pc = next;
                }
                Fast::StoreLocal(l) => {
                    let Some(v) = stack.pop() else { break };
                    locals[l as usize] = v;
                    pc = next;
                }
                Fast::LoadConst => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    let Some(v) = consts.get(pc) else { break };
                    stack.push(v.clone());
                    pc = next;
                }
                Fast::Jump(t) => pc = t as usize,
                Fast::JumpIf(when, t) => {
                    let Some(v) = stack.pop() else { break };
                    pc = if lang::truthy(&v) == when {
                        t as usize
                    } else {
                        next
                    };
                }
                Fast::Bin(b, t) => {
                    let len = stack.len();
                    let (x, y) = match stack.get(len.wrapping_sub(2)..) {
                        Some([Value::Number(x), Value::Number(y)]) => (*x, *y),
                        _ => break,
                    };
                    let Some(r) = fast::apply(py, b, x, y) else {
                        break;
                    };
                    stack.truncate(len - 2);
                    finish!(r, t);
                }
                // The stepper would push each operand before the operator
                // consumes it: a form whose loads would pass the stack
                // limit is left to the stepper, which reports it there.
                Fast::StackOp(o, b, t) => {
                    if stack.len() >= max_stack {
                        break;
                    }
                    let (Some(Value::Number(x)), Some(y)) = (stack.last(), num(locals, o)) else {
                        break;
                    };
                    let Some(r) = fast::apply(py, b, *x, y) else {
                        break;
                    };
                    stack.pop();
                    finish!(r, t);
                }
                Fast::OpOp(o1, o2, b, t) => {
                    if stack.len() + 2 > max_stack {
                        break;
                    }
                    let (Some(x), Some(y)) = (num(locals, o1), num(locals, o2)) else {
                        break;
                    };
                    let Some(r) = fast::apply(py, b, x, y) else {
                        break;
                    };
                    finish!(r, t);
                }
                Fast::CmpJump(o1, o2, b, when, target) => {
                    if stack.len() + 2 > max_stack {
                        break;
                    }
                    let (Some(x), Some(y)) = (num(locals, o1), num(locals, o2)) else {
                        break;
                    };
                    let Some(c) = fast::compare(b, x, y) else {
                        break;
                    };
                    pc = if c == when { target as usize } else { next };
                }
                Fast::Chain(o1, o2, b1, o3, b2, t) => {
                    // The stepper would hold up to three more values at once;
                    // anything near the limit is left to it.
                    if stack.len() + 4 > max_stack {
                        break;
                    }
                    let (Some(x), Some(y), Some(z)) =
                        (num(locals, o1), num(locals, o2), num(locals, o3))
                    else {
                        break;
                    };
                    let Some(r1) = fast::arith(py, b1, x, y) else {
                        break;
                    };
                    let Some(r) = fast::apply(py, b2, r1, z) else {
                        break;
                    };
                    finish!(r, t);
                }
                Fast::Accum(a, o1, o2, b1, o3, b2, b3, t) => {
                    if stack.len() + 4 > max_stack {
                        break;
                    }
                    let (Some(a), Some(x), Some(y), Some(z)) = (
                        num(locals, a),
                        num(locals, o1),
                        num(locals, o2),
                        num(locals, o3),
                    ) else {
                        break;
                    };
                    let Some(r1) = fast::arith(py, b1, x, y) else {
                        break;
                    };
                    let Some(r2) = fast::arith(py, b2, r1, z) else {
                        break;
                    };
                    let Some(r) = fast::apply(py, b3, a, r2) else {
                        break;
                    };
                    finish!(r, t);
                }
            }
            left -= n;
        }
        frame.pc = pc as u32;
        budget - left
    }

    #[inline(always)]
    fn pop(&mut self) -> Result<Value, EvalError> {
        self.state
            .stack
            .pop()
            .ok_or_else(|| fatal(FatalKind::StackUnderflow, "pop from an empty operand stack"))
    }

    #[inline(always)]
    fn push(&mut self, v: Value) -> Result<(), EvalError> {
        if self.state.stack.len() >= self.limits.max_stack {
            return Err(EvalError::Fatal(EngineError::limit(
                "operand stack",
                self.limits.max_stack as u64,
            )));
        }
        self.state.stack.push(v);
        Ok(())
    }

    fn pop_ref(&mut self, what: &str) -> Result<u32, EvalError> {
        match self.pop()? {
            Value::Ref(id) => Ok(id),
            other => Err(type_error(format!(
                "{what} expects an object or array, got {}",
                other.tag()
            ))),
        }
    }

    fn pop_string(&mut self, what: &str) -> Result<String, EvalError> {
        match self.pop()? {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(type_error(format!(
                "{what} expects a string, got {}",
                other.tag()
            ))),
        }
    }

    fn pop_args(&mut self, n: u32) -> Result<Vec<Value>, EvalError> {
        let n = n as usize;
        if n > self.state.stack.len() {
            return Err(fatal(
                FatalKind::StackUnderflow,
                format!("{n} arguments expected on the stack"),
            ));
        }
        let at = self.state.stack.len() - n;
        Ok(self.state.stack.split_off(at))
    }

    fn set_pc(&mut self, pc: u32) {
        if let Some(f) = self.state.frames.last_mut() {
            f.pc = pc;
        }
    }

    fn local(&mut self, local: u32) -> Result<&mut Value, EvalError> {
        self.state
            .frames
            .last_mut()
            .and_then(|f| f.locals.get_mut(local as usize))
            .ok_or_else(|| {
                fatal(
                    FatalKind::Unsupported,
                    format!("local {local} out of range"),
                )
            })
    }

    fn alloc(&mut self, cell: Cell) -> Result<u32, EvalError> {
        if self.state.heap.cells.len() >= self.limits.max_heap_cells {
            // Collect before giving up; ids stay stable, trailing holes trimmed.
            let roots = self.state.roots();
            self.state.heap.collect(roots);
        }
        Ok(self.state.heap.alloc(cell, &self.limits)?)
    }

    fn check_len(&self, len: usize) -> Result<(), EvalError> {
        if len >= self.limits.max_collection_len {
            return Err(EvalError::Fatal(EngineError::limit(
                "collection length",
                self.limits.max_collection_len as u64,
            )));
        }
        Ok(())
    }

    fn call(
        &mut self,
        program: &Program,
        func: u32,
        args: Vec<Value>,
        env: Option<u32>,
    ) -> Result<(), EvalError> {
        if self.state.frames.len() >= self.limits.max_call_depth {
            return Err(EvalError::Fatal(EngineError::limit(
                "call depth",
                self.limits.max_call_depth as u64,
            )));
        }
        let pos = program
            .position(func)
            .ok_or_else(|| fatal(FatalKind::Unsupported, format!("unknown function {func}")))?;
        let f = program.function(pos);
        let locals = match env {
            None => bind_params(program.lang, f, 0, args)?,
            Some(env) => {
                let mut l = bind_params(program.lang, f, 1, args)?;
                l[0] = Value::Ref(env);
                l
            }
        };
        self.advance_pc();
        self.state.frames.push(Frame {
            func_id: f.id,
            pc: 0,
            locals,
            pos,
        });
        Ok(())
    }

    fn durable_allowed(&self, program: &Program, op: &str) -> Result<(), EvalError> {
        if self.state.frames.len() != 1 || self.state.frames[0].pos != program.entry_pos {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                format!("{op} is only allowed in the entry function's only frame"),
            ));
        }
        Ok(())
    }

    /// The next planned branch of the open join, if a join is open.
    fn bind_branch(&mut self, op: BranchOp) -> Result<Option<(u32, String)>, EvalError> {
        let Some(join) = self.state.join.as_mut() else {
            return Ok(None);
        };
        if join.state != JoinState::Active {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                "durable operation after the join settled",
            ));
        }
        let Some(b) = join.branches.iter_mut().find(|b| b.phase == Phase::Planned) else {
            return Err(fatal(
                FatalKind::IllegalDurableOp,
                "more durable operations than the Fork's branch count",
            ));
        };
        b.op = Some(op);
        Ok(Some((b.index, b.branch_id.clone())))
    }

    fn idempotency_key(&self, key: &str) -> String {
        format!("{}:{key}", self.state.execution_id)
    }

    /// Executes one instruction. Returns `Ok(false)` when the step hands
    /// control to the host.
    #[inline]
    fn step(
        &mut self,
        program: &Program,
        pos: usize,
        pc: u32,
        ins: &Instruction,
    ) -> Result<bool, EvalError> {
        use Instruction as I;
        let lang = program.lang;
        let mut next = pc + 1;
        match ins {
            I::Nop => {}
            I::Jump { target } => next = *target,
            I::JumpIfTrue { target } => {
                if lang::truthy(&self.pop()?) {
                    next = *target;
                }
            }
            I::JumpIfFalse { target } => {
                if !lang::truthy(&self.pop()?) {
                    next = *target;
                }
            }
            I::Call { func, argc } => {
                let args = self.pop_args(*argc)?;
                self.call(program, *func, args, None)?;
                return Ok(true);
            }
            I::Return => {
                let result = self.state.stack.pop().unwrap_or(Value::Undefined);
                let depth = self.state.frames.len() as u32 - 1;
                while self
                    .state
                    .try_stack
                    .last()
                    .is_some_and(|h| h.frame >= depth)
                {
                    self.state.try_stack.pop();
                }
                self.state.frames.pop();
                if self.state.frames.is_empty() {
                    self.state.status = Status::Completed;
                    self.state.result = Some(result);
                    self.queue.push_back(Action::Checkpoint);
                    return Ok(false);
                }
                self.push(result)?;
                return Ok(true);
            }
            I::LoadLocal { local } => {
                let v = self.local(*local)?.clone();
                self.push(v)?;
            }
            I::StoreLocal { local } => {
                let v = self.pop()?;
                *self.local(*local)? = v;
            }
            I::LoadConst { .. } => {
                let v = program.consts[pos][pc as usize].clone();
                self.push(v)?;
            }
            I::Pop => {
                self.pop()?;
            }
            I::NewObject => {
                let id = self.alloc(Cell::Object(BTreeMap::new()))?;
                self.push(Value::Ref(id))?;
            }
            I::SetProp { key } => {
                let v = self.pop()?;
                let id = self.pop_ref("SetProp")?;
                let max = self.limits.max_collection_len;
                match self.state.heap.get_mut(id)? {
                    Cell::Object(m) => {
                        if m.len() >= max && !m.contains_key(key.as_str()) {
                            return Err(EvalError::Fatal(EngineError::limit(
                                "collection length",
                                max as u64,
                            )));
                        }
                        m.insert(key.clone(), v);
                    }
                    other => return Err(type_error(format!("SetProp on a {}", other.tag()))),
                }
                self.push(Value::Ref(id))?;
            }
            I::GetProp { key } => {
                let id = self.pop_ref("GetProp")?;
                let v = match self.state.heap.get(id)? {
                    Cell::Object(m) => m.get(key.as_str()).cloned().unwrap_or(Value::Undefined),
                    other => return Err(type_error(format!("GetProp on a {}", other.tag()))),
                };
                self.push(v)?;
            }
            I::NewArray => {
                let id = self.alloc(Cell::Array(Vec::new()))?;
                self.push(Value::Ref(id))?;
            }
            I::ArrayPush => {
                let v = self.pop()?;
                let id = self.pop_ref("ArrayPush")?;
                if self.state.iterating.contains(&id) {
                    return Err(fatal(
                        FatalKind::IteratorInvalidated,
                        "ArrayPush on an array being iterated",
                    ));
                }
                let len = match self.state.heap.get(id)? {
                    Cell::Array(a) => a.len(),
                    other => return Err(type_error(format!("ArrayPush on a {}", other.tag()))),
                };
                self.check_len(len)?;
                if let Cell::Array(a) = self.state.heap.get_mut(id)? {
                    a.push(v);
                }
                self.push(Value::Ref(id))?;
            }
            I::ArrayIndex { index } => {
                let Some(Value::Ref(id)) = self.state.stack.last() else {
                    return Err(type_error(
                        "ArrayIndex expects an array on top of the stack",
                    ));
                };
                let v = match self.state.heap.get(*id)? {
                    Cell::Array(a) => a.get(*index as usize).cloned().unwrap_or(Value::Undefined),
                    other => return Err(type_error(format!("ArrayIndex on a {}", other.tag()))),
                };
                self.push(v)?;
            }
            I::StrictEq | I::StrictNeq => {
                let r = self.pop()?;
                let l = self.pop()?;
                let eq = lang::strict_eq(lang, &self.state.heap, &l, &r)?;
                self.push(Value::Bool(eq == matches!(ins, I::StrictEq)))?;
            }
            I::Lt | I::Le | I::Gt | I::Ge => {
                let r = self.pop()?;
                let l = self.pop()?;
                let (a, b) = lang::numbers(ins.name(), &l, &r)?;
                let v = match ins {
                    I::Lt => a < b,
                    I::Le => a <= b,
                    I::Gt => a > b,
                    _ => a >= b,
                };
                self.push(Value::Bool(v))?;
            }
            I::Not => {
                let v = self.pop()?;
                self.push(Value::Bool(!lang::truthy(&v)))?;
            }

            // ---- durable operations
            I::Effect { has_input } => {
                self.durable_allowed(program, "Effect")?;
                let key = self.pop_string("Effect key")?;
                let input = if *has_input {
                    let v = self.pop()?;
                    export(&self.state.heap, &v)?
                } else {
                    obj([("t", "object".into()), ("v", J::Object(Default::default()))])
                };
                let idempotency_key = self.idempotency_key(&key);
                let in_branch = self
                    .bind_branch(BranchOp::Effect { key: key.clone() })?
                    .map(|(i, _)| i);
                self.state.pending = Some(Pending::Effect {
                    key: key.clone(),
                    idempotency_key: idempotency_key.clone(),
                });
                // pc is not advanced: the result response advances it.
                self.outstanding = Some((
                    HostRequest::RunEffect {
                        key,
                        idempotency_key,
                        input,
                    },
                    Awaiting::EffectResult { in_branch },
                ));
                return Ok(false);
            }
            I::Sleep => {
                self.durable_allowed(program, "Sleep")?;
                let n = match self.pop()? {
                    Value::Number(n) => n,
                    other => {
                        return Err(type_error(format!(
                            "Sleep expects a number, got {}",
                            other.tag()
                        )));
                    }
                };
                let resume_at_ms = if n.is_nan() || n <= 0.0 {
                    0
                } else {
                    n.trunc() as u64
                };
                let bound = self.bind_branch(BranchOp::Timer { resume_at_ms })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Timer { resume_at_ms }));
                }
                self.outstanding = Some((
                    HostRequest::RegisterTimer {
                        resume_at_ms,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::WaitForEvent => {
                self.durable_allowed(program, "WaitForEvent")?;
                let event_name = self.pop_string("WaitForEvent")?;
                let bound = self.bind_branch(BranchOp::Event {
                    event_name: event_name.clone(),
                })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                // Inside a group the wait id is the branch id (the reference's
                // rule: a pc-only id aliases across loop iterations).
                let wait_id = match &branch {
                    Some(b) => b.clone(),
                    None => format!("{}:{event_name}::{pc}", self.state.execution_id),
                };
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Event {
                        wait_id: wait_id.clone(),
                        event_name: event_name.clone(),
                        correlation_key: None,
                    }));
                }
                self.outstanding = Some((
                    HostRequest::RegisterWait {
                        wait_id,
                        event_name,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::Invoke { arg_count } => {
                self.durable_allowed(program, "Invoke")?;
                let program_name = self.pop_string("Invoke program name")?;
                let args = self.pop_args(*arg_count)?;
                let mut exported = Vec::with_capacity(args.len());
                for a in &args {
                    exported.push(export(&self.state.heap, a)?);
                }
                let branch_id = self.state.join.as_ref().and_then(|j| {
                    j.branches
                        .iter()
                        .find(|b| b.phase == Phase::Planned)
                        .map(|b| b.branch_id.clone())
                });
                let invoke_id =
                    branch_id.unwrap_or_else(|| format!("{}:invoke:{pc}", self.state.execution_id));
                let child_execution_id = format!("child:{invoke_id}");
                let bound = self.bind_branch(BranchOp::Child {
                    program_name: program_name.clone(),
                    invoke_id: invoke_id.clone(),
                    child_execution_id: child_execution_id.clone(),
                })?;
                self.set_pc(next);
                let (branch_index, branch) = split(bound);
                if branch.is_none() {
                    self.state.pending = Some(Pending::Wait(WaitKind::Child {
                        invoke_id: invoke_id.clone(),
                        child_execution_id: child_execution_id.clone(),
                    }));
                }
                self.outstanding = Some((
                    HostRequest::CreateChild {
                        invoke_id,
                        child_execution_id,
                        program_name,
                        args: exported,
                        branch,
                    },
                    Awaiting::Registration {
                        branch: branch_index,
                    },
                ));
                return Ok(false);
            }
            I::Fork { count, join_pc } => {
                self.durable_allowed(program, "Fork")?;
                if self.state.join.is_some() {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "nested concurrent groups",
                    ));
                }
                if !(1..=32).contains(count) {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "Fork count must be 1 through 32",
                    ));
                }
                let kind = match program.function(pos).instructions.get(*join_pc as usize) {
                    Some(I::JoinAll) => JoinKind::All,
                    Some(I::JoinAny) => JoinKind::Any,
                    _ => {
                        return Err(fatal(
                            FatalKind::IllegalDurableOp,
                            "Fork join_pc does not name a JoinAll or JoinAny",
                        ));
                    }
                };
                let reentry = self.next_reentry(pc);
                let exec = &self.state.execution_id;
                let branches = (0..*count)
                    .map(|index| Branch {
                        index,
                        branch_id: format!("{exec}:{pc}:{reentry}:{index}"),
                        op: None,
                        phase: Phase::Planned,
                        result: None,
                        error: None,
                    })
                    .collect();
                self.state.join = Some(Join {
                    kind,
                    site: pc,
                    reentry,
                    join_pc: *join_pc,
                    state: JoinState::Active,
                    winner_branch: None,
                    failure_branch: None,
                    branches,
                });
            }
            I::JoinAll | I::JoinAny => {
                self.durable_allowed(program, ins.name())?;
                let want = if matches!(ins, I::JoinAll) {
                    JoinKind::All
                } else {
                    JoinKind::Any
                };
                let Some(join) = &self.state.join else {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        format!("{} without an open group", ins.name()),
                    ));
                };
                if join.kind != want || join.join_pc != pc {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        format!("{} does not close the open group", ins.name()),
                    ));
                }
                if join.branches.iter().any(|b| b.phase == Phase::Planned) {
                    return Err(fatal(
                        FatalKind::IllegalDurableOp,
                        "join reached before every branch was bound to a durable operation",
                    ));
                }
                // A `JoinAll` that settles delivers at once: its results were
                // persisted with the branches. A race's winner, or a suspension,
                // is persisted first (usually folded into the last branch's
                // checkpoint already, see `fold_join_reached`).
                let settled = self.try_settle()?;
                if !settled {
                    self.state.status = Status::Suspended;
                }
                if !settled || want == JoinKind::Any {
                    self.queue.push_back(Action::Checkpoint);
                }
                return Ok(false);
            }

            // ---- exceptions
            I::Throw => {
                let v = self.pop()?;
                return Err(EvalError::Throw(v));
            }
            I::PushTry { catch, finally } => {
                if self.state.try_stack.len() >= self.limits.max_try_depth {
                    return Err(EvalError::Fatal(EngineError::limit(
                        "try depth",
                        self.limits.max_try_depth as u64,
                    )));
                }
                self.state.try_stack.push(TryHandler {
                    catch: *catch,
                    finally: *finally,
                    stack_len: self.state.stack.len() as u32,
                    frame: self.state.frames.len() as u32 - 1,
                });
            }
            I::PopTry => {
                let depth = self.state.frames.len() as u32 - 1;
                match self.state.try_stack.last() {
                    Some(h) if h.frame == depth => {
                        self.state.try_stack.pop();
                    }
                    _ => {
                        return Err(fatal(
                            FatalKind::StackUnderflow,
                            "PopTry without a handler in this frame",
                        ));
                    }
                }
            }

            // ---- lang.compute
            I::Add | I::Sub | I::Mul | I::Div | I::Rem | I::Pow | I::FloorDiv => {
                let r = self.pop()?;
                let l = self.pop()?;
                let op = match ins {
                    I::Add => ArithOp::Add,
                    I::Sub => ArithOp::Sub,
                    I::Mul => ArithOp::Mul,
                    I::Div => ArithOp::Div,
                    I::Rem => ArithOp::Rem,
                    I::Pow => ArithOp::Pow,
                    _ => ArithOp::FloorDiv,
                };
                let v = lang::arith(lang, op, &l, &r, self.limits.max_string_bytes)?;
                self.push(v)?;
            }
            I::Neg => {
                let v = self.pop()?;
                self.push(lang::neg(lang, &v)?)?;
            }
            I::GetIndex => {
                let index = self.pop()?;
                let coll = self.pop()?;
                let v = self.get_index(lang, &coll, &index)?;
                self.push(v)?;
            }
            I::SetIndex => {
                let v = self.pop()?;
                let index = self.pop()?;
                let id = self.pop_ref("SetIndex")?;
                match self.state.heap.get_mut(id)? {
                    Cell::Array(a) => {
                        let i = array_index(lang, &index, a.len()).ok_or_else(|| {
                            fatal(FatalKind::IndexOutOfRange, "SetIndex index out of range")
                        })?;
                        a[i] = v;
                    }
                    Cell::Object(m) => match index {
                        Value::Str(k) => {
                            m.insert(k.to_string(), v);
                        }
                        other => {
                            return Err(type_error(format!(
                                "object key must be a string, got {}",
                                other.tag()
                            )));
                        }
                    },
                    other => return Err(type_error(format!("SetIndex on a {}", other.tag()))),
                }
                self.push(Value::Ref(id))?;
            }
            I::Length => {
                let v = self.pop()?;
                let n = match &v {
                    Value::Str(s) => lang::string_length(lang, s),
                    Value::Ref(id) => match self.state.heap.get(*id)? {
                        Cell::Array(a) => a.len(),
                        Cell::Object(m) if lang == Language::Py => m.len(),
                        other => return Err(type_error(format!("Length of a {}", other.tag()))),
                    },
                    other => return Err(type_error(format!("Length of a {}", other.tag()))),
                };
                self.push(Value::Number(n as f64))?;
            }
            I::WatchIter => {
                let Some(Value::Ref(id)) = self.state.stack.last() else {
                    return Err(type_error("WatchIter expects an array on top of the stack"));
                };
                let id = *id;
                if !matches!(self.state.heap.get(id)?, Cell::Array(_)) {
                    return Err(type_error("WatchIter expects an array"));
                }
                self.check_len(self.state.iterating.len())?;
                self.state.iterating.push(id);
            }
            I::UnwatchIter => {
                if self.state.iterating.pop().is_none() {
                    return Err(fatal(
                        FatalKind::StackUnderflow,
                        "UnwatchIter without WatchIter",
                    ));
                }
            }
            I::Same => {
                let r = self.pop()?;
                let l = self.pop()?;
                self.push(Value::Bool(lang::ts_eq(&l, &r)))?;
            }
            I::NewCell => {
                let v = self.pop()?;
                let id = self.alloc(Cell::Var(v))?;
                self.push(Value::Ref(id))?;
            }
            I::NewEnv { count } => {
                let cells = self.pop_args(*count)?;
                let mut ids = Vec::with_capacity(cells.len());
                for c in cells {
                    match c {
                        Value::Ref(id) if matches!(self.state.heap.get(id)?, Cell::Var(_)) => {
                            ids.push(id)
                        }
                        other => {
                            return Err(type_error(format!(
                                "NewEnv expects cell refs, got {}",
                                other.tag()
                            )));
                        }
                    }
                }
                let id = self.alloc(Cell::Env(ids))?;
                self.push(Value::Ref(id))?;
            }
            I::NewClosure { func } => {
                let env = self.pop_ref("NewClosure")?;
                if !matches!(self.state.heap.get(env)?, Cell::Env(_)) {
                    return Err(type_error("NewClosure expects an environment"));
                }
                let id = self.alloc(Cell::Closure { func: *func, env })?;
                self.push(Value::Ref(id))?;
            }
            I::EnvGet { index } => {
                let env = self.pop_ref("EnvGet")?;
                let cell = self.env_slot(env, *index)?;
                let v = match self.state.heap.get(cell)? {
                    Cell::Var(v) => v.clone(),
                    _ => return Err(type_error("environment slot is not a cell")),
                };
                self.push(v)?;
            }
            I::EnvSet { index } => {
                let v = self.pop()?;
                let env = self.pop_ref("EnvSet")?;
                let cell = self.env_slot(env, *index)?;
                match self.state.heap.get_mut(cell)? {
                    Cell::Var(slot) => *slot = v,
                    _ => return Err(type_error("environment slot is not a cell")),
                }
            }
            I::EnvSlot { index } => {
                let env = self.pop_ref("EnvSlot")?;
                let cell = self.env_slot(env, *index)?;
                self.push(Value::Ref(cell))?;
            }
            I::CallClosure { argc } => {
                let args = self.pop_args(*argc)?;
                let id = self.pop_ref("CallClosure")?;
                let (func, env) = match self.state.heap.get(id)? {
                    Cell::Closure { func, env } => (*func, *env),
                    other => return Err(type_error(format!("CallClosure on a {}", other.tag()))),
                };
                self.call(program, func, args, Some(env))?;
                return Ok(true);
            }
            I::LoadFunc { func } => {
                let fpos = program.position(*func).ok_or_else(|| {
                    fatal(FatalKind::Unsupported, format!("unknown function {func}"))
                })?;
                let cached = self.state.func_refs.get(fpos).copied().flatten();
                let id = match cached {
                    Some(id) => id,
                    None => {
                        let env = self.alloc(Cell::Env(Vec::new()))?;
                        let id = self.alloc(Cell::Closure { func: *func, env })?;
                        if self.state.func_refs.len() <= fpos {
                            self.state.func_refs.resize(fpos + 1, None);
                        }
                        self.state.func_refs[fpos] = Some(id);
                        id
                    }
                };
                self.push(Value::Ref(id))?;
            }
        }
        self.set_pc(next);
        Ok(true)
    }

    fn env_slot(&self, env: u32, index: u32) -> Result<u32, EvalError> {
        match self.state.heap.get(env)? {
            Cell::Env(ids) => ids
                .get(index as usize)
                .copied()
                .ok_or_else(|| fatal(FatalKind::IndexOutOfRange, "environment index out of range")),
            other => Err(type_error(format!(
                "expected an environment, got a {}",
                other.tag()
            ))),
        }
    }

    fn get_index(&self, lang: Language, coll: &Value, index: &Value) -> Result<Value, EvalError> {
        match coll {
            Value::Ref(id) => match self.state.heap.get(*id)? {
                Cell::Array(a) => {
                    if !matches!(index, Value::Number(_)) {
                        return Err(type_error(format!(
                            "array index must be a number, got {}",
                            index.tag()
                        )));
                    }
                    match array_index(lang, index, a.len()) {
                        Some(i) => Ok(a[i].clone()),
                        None if lang == Language::Py => {
                            Err(EvalError::Throw(Value::string("IndexError")))
                        }
                        None => Ok(Value::Undefined),
                    }
                }
                Cell::Object(m) => match index {
                    Value::Str(k) => match m.get(&**k) {
                        Some(v) => Ok(v.clone()),
                        None if lang == Language::Py => {
                            Err(EvalError::Throw(Value::string("KeyError")))
                        }
                        None => Ok(Value::Undefined),
                    },
                    other => Err(type_error(format!(
                        "object key must be a string, got {}",
                        other.tag()
                    ))),
                },
                other => Err(type_error(format!("GetIndex on a {}", other.tag()))),
            },
            Value::Str(s) => {
                let len = lang::string_length(lang, s);
                match array_index(lang, index, len).and_then(|i| lang::string_index(lang, s, i)) {
                    Some(c) => Ok(Value::string(&c)),
                    None if lang == Language::Py => {
                        Err(EvalError::Throw(Value::string("IndexError")))
                    }
                    None => Ok(Value::Undefined),
                }
            }
            other => Err(type_error(format!("GetIndex on a {}", other.tag()))),
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

fn split(bound: Option<(u32, String)>) -> (Option<u32>, Option<String>) {
    match bound {
        Some((i, id)) => (Some(i), Some(id)),
        None => (None, None),
    }
}

/// An in-range element index: integral numbers only; Python wraps negatives.
fn array_index(lang: Language, index: &Value, len: usize) -> Option<usize> {
    let Value::Number(n) = index else { return None };
    if n.fract() != 0.0 || !n.is_finite() {
        return None;
    }
    let i = if *n < 0.0 && lang == Language::Py {
        *n + len as f64
    } else {
        *n
    };
    if i >= 0.0 && (i as usize) < len {
        Some(i as usize)
    } else {
        None
    }
}
