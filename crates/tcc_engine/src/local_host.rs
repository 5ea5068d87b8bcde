//! A simple in-process host: effect results from a map, event payloads
//! from a map, timers fire at once, children run in-process. It stores
//! checkpoints the way a durable host would (snapshot, then deltas applied
//! to it) and can restore the execution from the stored continuation at
//! every checkpoint, which is how the restore property is tested.

use crate::continuation::{Continuation, apply_delta};
use crate::engine::{Execution, Program};
use crate::error::EngineError;
use crate::json::{obj, to_canonical};
use crate::limits::Limits;
use crate::protocol::{CheckpointKind, HostRequest, HostResponse, Outcome};
use serde_json::Value as J;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// How an effect answers.
#[derive(Debug, Clone, PartialEq)]
pub enum EffectAnswer {
    /// `effect_result` with this tagged value.
    Result(J),
    /// `effect_failed` with this message.
    Fail(String),
}

/// Order in which registered waits inside a join are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompletionOrder {
    /// Registration order.
    #[default]
    Source,
    /// Reverse registration order.
    Reverse,
}

/// Errors of the local host (engine errors or host-side problems).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// The engine reported an error.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The host cannot answer (missing effect, event or child program).
    #[error("host: {0}")]
    Host(String),
}

/// The simple host.
#[derive(Debug, Clone, Default)]
pub struct LocalHost {
    /// Effect key → answer.
    pub effects: BTreeMap<String, EffectAnswer>,
    /// Event name → payload (tagged value).
    pub events: BTreeMap<String, J>,
    /// Program name → artifact, for `Invoke`.
    pub children: BTreeMap<String, Arc<Program>>,
    /// Steps per `run_until_host` call.
    pub budget: u64,
    /// Most steps in total before giving up (a hostile loop is cut off).
    pub max_total_steps: u64,
    /// Restore the execution from the stored continuation after every checkpoint.
    pub restore_at_checkpoints: bool,
    /// Cancel instead of delivering the n-th wake (0-based), if set: with
    /// `request_cancel` when the artifact requires `irkit.catchable_cancel`
    /// (its handlers run), else with `cancel`.
    pub cancel_at_wake: Option<usize>,
    /// Delivery order of join waits.
    pub completion_order: CompletionOrder,
    /// Engine limits.
    pub limits: Limits,
    /// Whether deltas are allowed (`host.persist_checkpoint_delta`).
    pub deltas: bool,
    /// Whether the engine hands checkpoints over as text alone
    /// ([`Execution::set_text_checkpoints`], as the durable host takes
    /// them): each body is then read from its text (a snapshot decoded, a
    /// delta applied to the stored continuation), where it is read from
    /// the request's tree otherwise.
    pub text_checkpoints: bool,
}

/// What a run produced.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// Every message in order: outcome envelopes from the engine and the host's responses.
    pub transcript: Vec<J>,
    /// Effects the provider actually ran: `{key, idempotency_key, input}`.
    pub effect_log: Vec<J>,
    /// The final outcome envelope.
    pub outcome: J,
    /// The last stored continuation (the durable state).
    pub stored: Option<Continuation>,
    /// Checkpoints persisted (snapshots, deltas).
    pub checkpoints: (u32, u32),
    /// Restores performed.
    pub restores: u32,
    /// Checkpoints whose body text the engine handed over
    /// ([`Execution::take_checkpoint_text`]), each checked equal to the
    /// canonical JSON of the body it sent.
    pub checkpoint_texts: u32,
}

const MAX_CHILD_DEPTH: usize = 8;

/// The stored continuation a delta against `base_revision` applies to.
fn delta_base(
    stored: Option<&Continuation>,
    base_revision: u64,
) -> Result<&Continuation, HostError> {
    let base = stored.ok_or_else(|| HostError::Host("delta without a stored base".into()))?;
    if base.revision != base_revision {
        return Err(HostError::Host(format!(
            "delta against revision {base_revision}, stored {}",
            base.revision
        )));
    }
    Ok(base)
}

/// Whether `wake` answers something the execution still waits for: a wake
/// without a branch always does; one with a branch only while that branch
/// of the open group is registered.
fn awaited(exec: &Execution, wake: &HostResponse) -> bool {
    let branch = match wake {
        HostResponse::TimerFired { branch }
        | HostResponse::EventPayload { branch, .. }
        | HostResponse::ChildResult { branch, .. }
        | HostResponse::ChildFailed { branch, .. } => branch,
        _ => return true,
    };
    let Some(b) = branch else {
        return true;
    };
    exec.state().join.as_ref().is_some_and(|j| {
        j.branches
            .iter()
            .any(|x| x.branch_id == *b && x.phase == crate::continuation::Phase::Registered)
    })
}

impl LocalHost {
    /// A host with sensible defaults and no effects/events/children.
    pub fn new() -> LocalHost {
        LocalHost {
            budget: 100_000,
            max_total_steps: 100_000_000,
            deltas: true,
            ..LocalHost::default()
        }
    }

    /// Runs `program` to a terminal outcome with `args`.
    pub fn run(
        &self,
        program: Arc<Program>,
        execution_id: &str,
        args: &[J],
    ) -> Result<RunReport, HostError> {
        self.run_depth(program, execution_id, args, 0)
    }

    fn run_depth(
        &self,
        program: Arc<Program>,
        execution_id: &str,
        args: &[J],
        depth: usize,
    ) -> Result<RunReport, HostError> {
        let mut exec = Execution::start(program.clone(), execution_id, args, self.limits.clone())?;
        exec.set_delta_checkpoints(self.deltas);
        exec.set_text_checkpoints(self.text_checkpoints);
        let mut report = RunReport::default();
        let mut journal: BTreeMap<String, (String, EffectAnswer)> = BTreeMap::new();
        let mut wakes: VecDeque<HostResponse> = VecDeque::new();
        let mut wake_count = 0usize;
        let mut total_steps = 0u64;
        loop {
            let before = exec.steps();
            let outcome = exec.run_until_host(self.budget)?;
            total_steps += exec.steps() - before;
            if total_steps > self.max_total_steps {
                return Err(HostError::Host(format!(
                    "execution exceeded {} steps",
                    self.max_total_steps
                )));
            }
            if !matches!(outcome, Outcome::BudgetExhausted) {
                report.transcript.push(outcome.to_json());
            }
            let response = match outcome {
                Outcome::BudgetExhausted => continue,
                Outcome::Completed(_) | Outcome::Failed { .. } | Outcome::Cancelled => {
                    report.outcome = outcome.to_json();
                    return Ok(report);
                }
                Outcome::Suspended => {
                    // A wake for a branch that is no longer registered (a race
                    // settled, a group failed fast) is dropped, not delivered:
                    // the reference's hosts deliver by the continuation's
                    // registered branches, and its engine rejects stale ones.
                    let next = loop {
                        let w = match self.completion_order {
                            CompletionOrder::Source => wakes.pop_front(),
                            CompletionOrder::Reverse => wakes.pop_back(),
                        };
                        match &w {
                            Some(w) if !awaited(&exec, w) => continue,
                            _ => break w,
                        }
                    };
                    let Some(w) = next else {
                        return Err(HostError::Host("suspended with nothing to deliver".into()));
                    };
                    let w = if self.cancel_at_wake == Some(wake_count) {
                        if exec.program().catchable_cancel() {
                            HostResponse::RequestCancel
                        } else {
                            HostResponse::Cancel
                        }
                    } else {
                        w
                    };
                    wake_count += 1;
                    w
                }
                Outcome::Host(req) => match req {
                    HostRequest::PersistCheckpoint {
                        revision,
                        kind,
                        base_revision,
                        materialize,
                        delta,
                    } => {
                        // Every other checkpoint's text is taken in pieces,
                        // as the durable host takes it (into its packing
                        // writer), through a writer with only `push_str`.
                        let text = if self.text_checkpoints && revision % 2 == 1 {
                            let mut pieces = Pieces::default();
                            exec.write_checkpoint_text_to(revision, &mut pieces)
                                .then_some(pieces.0)
                        } else {
                            exec.take_checkpoint_text(revision)
                        };
                        if let Some(text) = &text
                            && !self.text_checkpoints
                        {
                            let body = materialize.as_ref().or(delta.as_ref());
                            if body.map(crate::json::to_canonical).as_deref() != Some(text.as_str())
                            {
                                return Err(HostError::Host(format!(
                                    "checkpoint {revision}: the engine's text is not its body's canonical JSON"
                                )));
                            }
                        }
                        if text.is_some() {
                            report.checkpoint_texts += 1;
                        }
                        let c = match (kind, text) {
                            (CheckpointKind::Snapshot, Some(text)) if self.text_checkpoints => {
                                report.checkpoints.0 += 1;
                                // Every other snapshot read in small pieces,
                                // as the durable host reads a long stored one.
                                match revision % 4 {
                                    1 => Continuation::decode_source(
                                        &Chunked(text.as_bytes()),
                                        text.len(),
                                        &self.limits,
                                    )?,
                                    _ => Continuation::decode(text.as_bytes(), &self.limits)?,
                                }
                            }
                            (CheckpointKind::Delta, Some(text)) if self.text_checkpoints => {
                                report.checkpoints.1 += 1;
                                let base = delta_base(report.stored.as_ref(), base_revision)?;
                                let mut c = crate::continuation::apply_delta_text(
                                    base,
                                    text.as_bytes(),
                                    &self.limits,
                                )?;
                                c.revision = revision;
                                c
                            }
                            (kind, _) => match kind {
                                CheckpointKind::Snapshot => {
                                    report.checkpoints.0 += 1;
                                    let m = materialize.ok_or_else(|| {
                                        HostError::Host("snapshot without materialize".into())
                                    })?;
                                    Continuation::from_json(&m, &self.limits)?
                                }
                                CheckpointKind::Delta => {
                                    report.checkpoints.1 += 1;
                                    let base = delta_base(report.stored.as_ref(), base_revision)?;
                                    let d = delta.ok_or_else(|| {
                                        HostError::Host("delta checkpoint without delta".into())
                                    })?;
                                    let mut c = apply_delta(base, &d, &self.limits)?;
                                    c.revision = revision;
                                    c
                                }
                            },
                        };
                        report.stored = Some(c);
                        let resp = HostResponse::PersistConfirmed { revision };
                        report.transcript.push(resp.to_json());
                        exec.respond(resp)?;
                        if self.restore_at_checkpoints
                            && let Some(stored) = &report.stored
                        {
                            // Through the serialized form, as a crashed host would.
                            let text = stored.encode();
                            let c = Continuation::decode(text.as_bytes(), &self.limits)?;
                            exec = Execution::resume(program.clone(), c, self.limits.clone())?;
                            exec.set_delta_checkpoints(self.deltas);
                            exec.set_text_checkpoints(self.text_checkpoints);
                            report.restores += 1;
                        }
                        continue;
                    }
                    HostRequest::RunEffect {
                        key,
                        idempotency_key,
                        input,
                    } => {
                        let canonical_input = to_canonical(&input);
                        let answer = match journal.get(&idempotency_key) {
                            Some((prev_input, answer)) => {
                                if *prev_input != canonical_input {
                                    return Err(HostError::Host(format!(
                                        "effect {idempotency_key} re-run with a different input"
                                    )));
                                }
                                answer.clone()
                            }
                            None => {
                                let answer = self.effects.get(&key).cloned().ok_or_else(|| {
                                    HostError::Host(format!(
                                        "no result configured for effect {key:?}"
                                    ))
                                })?;
                                report.effect_log.push(obj([
                                    ("key", key.as_str().into()),
                                    ("idempotency_key", idempotency_key.as_str().into()),
                                    ("input", input.clone()),
                                ]));
                                journal.insert(
                                    idempotency_key.clone(),
                                    (canonical_input, answer.clone()),
                                );
                                answer
                            }
                        };
                        match answer {
                            EffectAnswer::Result(value) => HostResponse::EffectResult { value },
                            EffectAnswer::Fail(message) => HostResponse::EffectFailed { message },
                        }
                    }
                    HostRequest::PersistEffect { .. } => HostResponse::Ack,
                    HostRequest::RegisterTimer { branch, .. } => {
                        wakes.push_back(HostResponse::TimerFired { branch });
                        HostResponse::Ack
                    }
                    HostRequest::RegisterWait {
                        event_name, branch, ..
                    } => {
                        let value = self.events.get(&event_name).cloned().ok_or_else(|| {
                            HostError::Host(format!(
                                "no payload configured for event {event_name:?}"
                            ))
                        })?;
                        wakes.push_back(HostResponse::EventPayload { value, branch });
                        HostResponse::Ack
                    }
                    HostRequest::CreateChild {
                        child_execution_id,
                        program_name,
                        args,
                        branch,
                        ..
                    } => {
                        if depth >= MAX_CHILD_DEPTH {
                            return Err(HostError::Host(format!(
                                "child executions nested deeper than {MAX_CHILD_DEPTH}"
                            )));
                        }
                        let child = self.children.get(&program_name).cloned().ok_or_else(|| {
                            HostError::Host(format!(
                                "no artifact configured for program {program_name:?}"
                            ))
                        })?;
                        let sub = self.run_depth(child, &child_execution_id, &args, depth + 1)?;
                        report.effect_log.extend(sub.effect_log);
                        let status = sub.outcome.get("type").and_then(J::as_str);
                        let wake = match status {
                            Some("completed") => HostResponse::ChildResult {
                                value: sub.outcome.get("result").cloned().unwrap_or(J::Null),
                                branch,
                                child_execution_id: Some(child_execution_id),
                            },
                            // `irkit.catchable_child_failure`: thrown in the parent.
                            Some(status @ ("failed" | "cancelled"))
                                if exec.program().catchable_child_failure() =>
                            {
                                HostResponse::ChildFailed {
                                    message: format!(
                                        "child {child_execution_id} {status}: {}",
                                        sub.outcome
                                            .get("message")
                                            .and_then(J::as_str)
                                            .unwrap_or_default()
                                    ),
                                    branch,
                                    child_execution_id: Some(child_execution_id),
                                }
                            }
                            _ => {
                                return Err(HostError::Host(format!(
                                    "child {child_execution_id} did not complete: {}",
                                    to_canonical(&sub.outcome)
                                )));
                            }
                        };
                        wakes.push_back(wake);
                        HostResponse::Ack
                    }
                },
            };
            report.transcript.push(response.to_json());
            exec.respond(response)?;
        }
    }
}

/// A text written in pieces through [`crate::json::TextOut`]'s provided
/// methods (only `push_str` of its own).
#[derive(Default)]
struct Pieces(String);

impl crate::json::TextOut for Pieces {
    fn push_str(&mut self, s: &str) {
        self.0.push_str(s);
    }
}

/// A text read at most seven bytes at a time
/// ([`crate::absorb_text::TextSource`]).
struct Chunked<'a>(&'a [u8]);

impl crate::absorb_text::TextSource for Chunked<'_> {
    fn open(&self) -> Box<dyn std::io::Read + '_> {
        struct Pieces<'a>(&'a [u8]);
        impl std::io::Read for Pieces<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(7).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        Box::new(Pieces(self.0))
    }
}
