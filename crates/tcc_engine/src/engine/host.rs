//! The host protocol's state machine: applying a host response, a wake or
//! `cancel` to an [`Execution`], settling concurrent groups (joins).

use super::{Action, Awaiting, CANCELLED_ERROR, Execution};
use crate::continuation::{
    BranchOp, CancelPhase, DeltaBase, Join, JoinKind, JoinState, Pending, Phase, Reentry, Status,
    WaitKind,
};
use crate::error::{EngineError, FatalKind};
use crate::json::{ValueContext, absorb, obj};
use crate::limits::Limits;
use crate::protocol::{CheckpointKind, HostRequest, HostResponse, TextWake};
use crate::value::{Cell, Heap, Value};
use serde_json::Value as J;

impl Execution {
    /// Applies a host response (or a wake / `cancel` while no request is
    /// outstanding). A response that does not match is
    /// [`EngineError::UnexpectedHostResponse`] and changes nothing.
    pub fn respond(&mut self, response: HostResponse) -> Result<(), EngineError> {
        self.respond_with(response, None)
    }

    /// Delivers a wake whose value is the canonical JSON text of an
    /// inlined tagged value (a stored event payload or child result),
    /// absorbed into the heap without a tree
    /// ([`crate::absorb_text::absorb_value_text`]; issue 42, F3). Otherwise
    /// exactly [`Execution::respond`] with the matching `event_payload` or
    /// `child_result`.
    pub fn respond_text(&mut self, wake: TextWake, value: &str) -> Result<(), EngineError> {
        self.respond_value_text(wake, WakeText::Str(value))
    }

    /// [`Execution::respond_text`] of a text read in pieces from `source`
    /// ([`crate::absorb_text::absorb_value_source`]: a long stored text
    /// is not held whole beside the heap).
    pub fn respond_source(
        &mut self,
        wake: TextWake,
        source: &dyn crate::absorb_text::TextSource,
    ) -> Result<(), EngineError> {
        self.respond_value_text(wake, WakeText::Source(source))
    }

    fn respond_value_text(
        &mut self,
        wake: TextWake,
        value: WakeText<'_>,
    ) -> Result<(), EngineError> {
        let response = match wake {
            TextWake::Event { branch } => HostResponse::EventPayload {
                value: J::Null,
                branch,
            },
            TextWake::Child {
                branch,
                child_execution_id,
            } => HostResponse::ChildResult {
                value: J::Null,
                branch,
                child_execution_id,
            },
        };
        self.respond_with(response, Some(value))
    }

    /// [`Execution::respond`]; a wake's value is `text` when given (the
    /// response's own value is then not read).
    fn respond_with(
        &mut self,
        response: HostResponse,
        text: Option<WakeText<'_>>,
    ) -> Result<(), EngineError> {
        if let Some(e) = &self.poisoned {
            return Err(e.clone());
        }
        let unexpected = |expected: &str| EngineError::UnexpectedHostResponse {
            response: response.type_name().to_string(),
            expected: expected.to_string(),
        };
        if matches!(response, HostResponse::RequestCancel) {
            return self.request_cancel();
        }
        let Some((_, pending)) = &self.outstanding else {
            return self.wake(response, text);
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
            return self.wake(response, text);
        };
        match (awaiting, &response) {
            (Awaiting::Checkpoint { .. }, HostResponse::PersistConfirmed { .. }) => {
                // A confirmed checkpoint leaves a running execution `runnable`,
                // in the state and in the delta base alike (the reference
                // engine's rule: the next checkpoint after more steps writes
                // `running` again).
                if self.state.status == Status::Running {
                    self.state.status = Status::Runnable;
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
                // Nothing runs while a checkpoint is outstanding, so the
                // state is the one it committed: it becomes the delta base.
                // The old base goes first (issue 42, F3: two copies of the
                // heap at most, not three).
                self.base = None;
                let digest = match self.checkpoint_heap.take() {
                    _ if !self.allow_delta => None,
                    Some((revision, digest)) if revision == self.state.revision => Some(digest),
                    _ => Some(self.state.heap.digest()),
                };
                self.base = digest.map(|digest| DeltaBase::of(&mut self.state, digest));
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

    /// `request_cancel` (`irkit.catchable_cancel`): thrown at once when the
    /// execution waits (suspended) or when its effect is outstanding (not
    /// run: the cancellation is thrown at the `Effect`), else recorded and
    /// thrown at the next durable operation. Refused for an artifact
    /// without the feature, an ended execution, a second request, and
    /// while any other request is outstanding.
    fn request_cancel(&mut self) -> Result<(), EngineError> {
        let unexpected = |expected: &str| EngineError::UnexpectedHostResponse {
            response: HostResponse::RequestCancel.type_name().to_string(),
            expected: expected.to_string(),
        };
        if !self.program.catchable_cancel() {
            return Err(unexpected(
                "cancel: the artifact does not require irkit.catchable_cancel",
            ));
        }
        if self.state.status.is_terminal() {
            return Err(unexpected("nothing: the execution has ended"));
        }
        if self.state.cancel.is_some() {
            return Err(unexpected("nothing: a cancellation was requested already"));
        }
        match &self.outstanding {
            Some((_, Awaiting::EffectResult { .. })) => {
                // The effect was not run: nothing is journalled for it.
                self.outstanding = None;
                let v = self.deliver_cancel()?;
                self.queue.push_back(Action::Throw(v));
                Ok(())
            }
            Some(_) => Err(unexpected(
                "the answer to the outstanding request (request_cancel is accepted at a wait, an effect or between steps)",
            )),
            None if !self.queue.is_empty() => Err(unexpected(
                "no response: the engine has queued work (call run_until_host first)",
            )),
            None if self.state.status == Status::Suspended => {
                let v = self.deliver_cancel()?;
                self.state.status = Status::Runnable;
                self.queue.push_back(Action::Throw(v));
                self.queue.push_back(Action::Checkpoint);
                Ok(())
            }
            None => {
                self.state.cancel = Some(CancelPhase::Requested);
                Ok(())
            }
        }
    }

    /// Marks the cancellation delivered and abandons what the execution
    /// waits on (its pending operation; an open group, whose site counts
    /// the run, as a settled group's does); returns the value to throw.
    pub(super) fn deliver_cancel(&mut self) -> Result<Value, EngineError> {
        self.state.cancel = Some(CancelPhase::Delivered);
        self.state.pending = None;
        if let Some(join) = self.state.join.take() {
            self.record_reentry(join.site, join.reentry + 1);
        }
        Ok(Value::string(CANCELLED_ERROR))
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
    pub(super) fn fold_join_reached(&mut self) -> Result<(), EngineError> {
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

    pub(super) fn join_mut(&mut self) -> Result<&mut Join, EngineError> {
        self.state
            .join
            .as_mut()
            .ok_or_else(|| EngineError::fatal(FatalKind::IllegalDurableOp, "no open join"))
    }

    /// JoinAll fail-fast: settle failed, detach the others (the re-entry is
    /// recorded when the failure is delivered).
    pub(super) fn fail_fast(&mut self, b: u32) -> Result<(), EngineError> {
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

    pub(super) fn record_reentry(&mut self, site: u32, next: u32) {
        match self.state.reentries.binary_search_by_key(&site, |r| r.site) {
            Ok(i) => self.state.reentries[i].next = next,
            Err(i) => self.state.reentries.insert(i, Reentry { site, next }),
        }
    }

    pub(super) fn next_reentry(&self, site: u32) -> u32 {
        self.state
            .reentries
            .binary_search_by_key(&site, |r| r.site)
            .map_or(0, |i| self.state.reentries[i].next)
    }

    /// Whether a branch id names a branch of an earlier, settled group of
    /// this execution (late deliveries to those are ignored).
    pub(super) fn is_past_branch(&self, id: &str) -> bool {
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

    pub(super) fn wake(
        &mut self,
        response: HostResponse,
        text: Option<WakeText<'_>>,
    ) -> Result<(), EngineError> {
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
        if matches!(response, HostResponse::ChildFailed { .. })
            && !self.program.catchable_child_failure()
        {
            return Err(unexpected(
                "child_result: the artifact does not require irkit.catchable_child_failure",
            ));
        }
        if let HostResponse::ChildResult {
            branch,
            child_execution_id: Some(child),
            ..
        }
        | HostResponse::ChildFailed {
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
        // A failed child (`irkit.catchable_child_failure`): its message is
        // thrown at the `Invoke`, or fails its branch.
        let failure = match &response {
            HostResponse::ChildFailed { message, .. } => Some(Value::string(message)),
            _ => None,
        };
        let (branch, value) = match &response {
            HostResponse::TimerFired { branch } | HostResponse::ChildFailed { branch, .. } => {
                (branch.clone(), None)
            }
            HostResponse::EventPayload { value, branch }
            | HostResponse::ChildResult { value, branch, .. } => (
                branch.clone(),
                Some(match text {
                    Some(t) => WakeValue::Text(t),
                    None => WakeValue::Tree(value),
                }),
            ),
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
                    HostResponse::ChildResult { .. } | HostResponse::ChildFailed { .. }
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
                if let Some(error) = failure {
                    self.state.pending = None;
                    self.state.status = Status::Runnable;
                    self.queue.push_back(Action::Throw(error));
                    self.queue.push_back(Action::Checkpoint);
                    return Ok(());
                }
                let v = match value {
                    Some(v) => v.absorb(&mut self.state.heap, &self.limits)?,
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
                        HostResponse::ChildResult { .. } | HostResponse::ChildFailed { .. }
                    )
                );
                if !kind_ok {
                    return Err(unexpected("the wake kind the branch registered"));
                }
                if let Some(error) = failure {
                    let message = match &error {
                        Value::Str(s) => s.to_string(),
                        _ => String::new(),
                    };
                    let join = self.join_mut()?;
                    join.branches[idx].phase = Phase::Failed;
                    join.branches[idx].error = Some(message);
                    // As a failed effect branch: a `JoinAll` fails fast, a
                    // race may be won by the failure.
                    if join.kind == JoinKind::All {
                        self.fail_fast(idx as u32)?;
                        self.state.status = Status::Runnable;
                    } else {
                        self.try_settle()?;
                    }
                    self.queue.push_back(Action::Checkpoint);
                    return Ok(());
                }
                let v = match value {
                    Some(v) => v.absorb(&mut self.state.heap, &self.limits)?,
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
    pub(super) fn try_settle(&mut self) -> Result<bool, EngineError> {
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
    pub(super) fn deliver_settled_join(&mut self) -> Result<bool, EngineError> {
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
}

/// A wake's value given as text beside its response.
pub(super) enum WakeText<'a> {
    /// The text.
    Str(&'a str),
    /// The text, read in pieces.
    Source(&'a dyn crate::absorb_text::TextSource),
}

/// A wake's value: the response's tree, or text given beside it.
enum WakeValue<'a> {
    Tree(&'a J),
    Text(WakeText<'a>),
}

impl WakeValue<'_> {
    fn absorb(&self, heap: &mut Heap, limits: &Limits) -> Result<Value, EngineError> {
        match self {
            WakeValue::Tree(j) => absorb(ValueContext::Message, j, "$.value", heap, limits),
            WakeValue::Text(WakeText::Str(t)) => {
                crate::absorb_text::absorb_value_text(t, "$.value", heap, limits)
            }
            WakeValue::Text(WakeText::Source(source)) => {
                crate::absorb_text::absorb_value_source(*source, "$.value", heap, limits)
            }
        }
    }
}
