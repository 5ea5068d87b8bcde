//! Provider kind `worker`: the effect becomes a task for external workers
//! and the calling host thread waits for its answer.
//!
//! The wait is woken by the task's topic ([`task_topic`]: in-process, or
//! through the PostgreSQL bridge when another node took the answer). An
//! answer this node took is handed over with the wake-up
//! ([`TaskBoard::expect`]); otherwise the thread re-reads the task, and
//! does so at least every [`RECHECK`] in case a notification was lost. The execution's lease is renewed meanwhile by the host's
//! heartbeat, like during any slow provider call. When nobody answers
//! within the route's `timeout_ms` the task is failed and the effect fails
//! with a message saying so (catchable; a late answer is refused). When the
//! host shuts down while waiting, the call is abandoned: nothing is
//! journalled and the execution resumes from its last checkpoint — on this
//! or another node — where the same idempotency key finds the same task.

use super::board::TaskBoard;
use super::{NewTask, TaskAnswer};
use crate::notify::task_topic;
use crate::providers::{EffectCall, EffectProvider, ProviderOutcome};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait between two reads of a task being waited for.
pub const RECHECK: Duration = Duration::from_secs(2);

/// Default of a route's `timeout_ms`: how long the host waits for a worker.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A `worker` route's provider.
pub struct WorkerProvider {
    board: Arc<TaskBoard>,
    timeout: Duration,
}

impl WorkerProvider {
    /// Queues on `board`, waiting at most `timeout` for a worker's answer.
    pub fn new(board: Arc<TaskBoard>, timeout: Duration) -> WorkerProvider {
        WorkerProvider { board, timeout }
    }
}

impl EffectProvider for WorkerProvider {
    fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        let hub = self.board.hub().clone();
        let sub = hub.subscribe(&task_topic(call.idempotency_key));
        let started = Instant::now();
        let expected = self.board.expect(call.idempotency_key);
        let mut generation = sub.signal().generation();
        let task = NewTask {
            idempotency_key: call.idempotency_key.to_string(),
            execution_id: call.execution_id.to_string(),
            key: call.key.to_string(),
            input: tcc_ir::to_canonical(call.input),
            traceparent: call.traceparent.map(str::to_string),
        };
        let mut row = match self.board.enqueue(&task) {
            Ok(r) => r,
            Err(e) => return ProviderOutcome::Abandoned(format!("worker task queue: {e}")),
        };
        loop {
            match row.state.as_str() {
                "completed" => {
                    return ProviderOutcome::Result(
                        row.result
                            .clone()
                            .unwrap_or_else(|| serde_json::json!({"t": "null"})),
                    );
                }
                "failed" => {
                    return ProviderOutcome::Failed(
                        row.message
                            .clone()
                            .unwrap_or_else(|| "worker task failed".into()),
                    );
                }
                _ => {}
            }
            if hub.is_closed() {
                return ProviderOutcome::Abandoned("the host is shutting down".into());
            }
            let elapsed = started.elapsed();
            if elapsed >= self.timeout {
                let message = format!(
                    "no worker answered effect {:?} within {} ms",
                    call.key,
                    self.timeout.as_millis()
                );
                if let Err(e) = self.board.expire(call.idempotency_key, &message) {
                    return ProviderOutcome::Abandoned(format!("worker task queue: {e}"));
                }
            } else {
                sub.signal()
                    .wait_past(generation, (self.timeout - elapsed).min(RECHECK));
            }
            generation = sub.signal().generation();
            match expected.take() {
                Some(TaskAnswer::Completed(result)) => return ProviderOutcome::Result(result),
                Some(TaskAnswer::Failed(message)) => return ProviderOutcome::Failed(message),
                None => {}
            }
            row = match self.board.get(call.idempotency_key) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    return ProviderOutcome::Abandoned("worker task disappeared".into());
                }
                Err(e) => return ProviderOutcome::Abandoned(format!("worker task queue: {e}")),
            };
        }
    }
}
