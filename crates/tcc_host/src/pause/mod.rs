//! Pause and resume (issue 35): an operator holds one execution, or every
//! execution of a program, so that nothing new starts running until it is
//! resumed.
//!
//! - The pause is stored: `executions.paused` for one execution, a row of
//!   `paused_programs` for a program (so it holds across nodes and
//!   restarts, and covers executions of the program started while it is
//!   paused: they are accepted and wait).
//! - A paused execution is not found as work (`Store::find_work`), cannot
//!   be claimed (`Store::claim`, the authoritative gate, in the same
//!   statement that takes the lease), and its timers do not count for
//!   `Store::next_timer_due` (the scheduler does not spin on them).
//! - A drive that was running when the pause committed stops at its next
//!   wait: it does not deliver a ready wake (`Host::drive` checks
//!   [`held`] when the program suspends). Steps and effects it runs
//!   before then are part of that drive.
//! - Resuming lifts the pause: timers that came due meanwhile are ready at
//!   once, and events received meanwhile are delivered.
//! - Operator resume of a failed execution (issue 33) is the same verb:
//!   `POST /v1/executions/{id}/resume` lifts a pause of the execution, and
//!   resumes a failed one from before its failed effect (both, for a
//!   paused execution that failed in the drive that was running). Resuming
//!   one execution does not lift its program's pause.
//!
//! [`api`]: the routes; the stores implement [`PauseStore`]
//! (`store::sqlite::pause`, `store::pg::pause`).

use crate::store::{Store, StoreError};

pub mod api;

/// Why an execution is held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseState {
    /// The execution itself is paused.
    pub execution: bool,
    /// Its program is paused.
    pub program: bool,
}

impl PauseState {
    /// Whether it is held at all.
    pub fn held(self) -> bool {
        self.execution || self.program
    }

    /// `execution`, `program` or `execution+program` (`None`: not held).
    pub fn by(self) -> Option<&'static str> {
        match (self.execution, self.program) {
            (true, true) => Some("execution+program"),
            (true, false) => Some("execution"),
            (false, true) => Some("program"),
            (false, false) => None,
        }
    }
}

/// The pause rows, which both stores keep (schema: `executions.paused`,
/// `paused_programs`).
pub trait PauseStore: Send + Sync {
    /// Pauses (`true`) or resumes (`false`) execution `id` and writes a
    /// `paused` / `unpaused` history entry when that changed it; returns
    /// whether it did. `NotFound` for an unknown id; pausing a terminal
    /// execution is a `Conflict`.
    fn set_execution_paused(&self, id: &str, paused: bool, now: i64) -> Result<bool, StoreError>;
    /// Pauses or resumes program `name` (any name: a program registered
    /// later, or started by that name later, is held too); returns whether
    /// that changed it.
    fn set_program_paused(&self, name: &str, paused: bool, now: i64) -> Result<bool, StoreError>;
    /// The paused program names, by name.
    fn paused_programs(&self) -> Result<Vec<String>, StoreError>;
    /// Why execution `id` is held (`None` for an unknown id).
    fn pause_state(&self, id: &str) -> Result<Option<PauseState>, StoreError>;
}

/// The pause rows of `store`, when its backend keeps them (both of this
/// crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn PauseStore> {
    let any = store.as_any()?;
    if let Some(s) = any.downcast_ref::<crate::store::sqlite::SqliteStore>() {
        return Some(s);
    }
    if let Some(s) = any.downcast_ref::<crate::store::pg::PgStore>() {
        return Some(s);
    }
    None
}

fn unsupported() -> StoreError {
    StoreError::Unsupported("pause and resume".into())
}

/// Whether execution `id` is held now (`false` for an unknown id, or a
/// store without pauses).
pub fn held(store: &dyn Store, id: &str) -> Result<bool, StoreError> {
    match store_of(store) {
        Some(p) => Ok(p.pause_state(id)?.is_some_and(PauseState::held)),
        None => Ok(false),
    }
}

/// [`PauseStore::pause_state`], or none held for a store without pauses.
pub fn state(store: &dyn Store, id: &str) -> Result<PauseState, StoreError> {
    match store_of(store) {
        Some(p) => Ok(p.pause_state(id)?.unwrap_or_default()),
        None => Ok(PauseState::default()),
    }
}

/// Pauses or resumes one execution; counts it and wakes the scheduler when
/// it resumed one.
pub fn set_execution(host: &crate::host::Host, id: &str, paused: bool) -> Result<bool, StoreError> {
    let store = store_of(&**host.store()).ok_or_else(unsupported)?;
    let changed = store.set_execution_paused(id, paused, crate::ids::now_ms())?;
    if changed {
        crate::metrics::global().pause_change(if paused { "paused" } else { "resumed" });
        tracing::info!(execution_id = %id, paused, "execution pause changed by operator");
        if !paused {
            host.notify();
        }
    }
    Ok(changed)
}

/// Pauses or resumes a program; counts it and wakes the scheduler when it
/// resumed one.
pub fn set_program(host: &crate::host::Host, name: &str, paused: bool) -> Result<bool, StoreError> {
    let store = store_of(&**host.store()).ok_or_else(unsupported)?;
    let changed = store.set_program_paused(name, paused, crate::ids::now_ms())?;
    if changed {
        crate::metrics::global().pause_change(if paused {
            "program_paused"
        } else {
            "program_resumed"
        });
        tracing::info!(program = %name, paused, "program pause changed by operator");
        if !paused {
            host.notify();
        }
    }
    Ok(changed)
}

/// The status JSON's pause members for a held, unfinished execution:
/// `status` reads `paused`, `paused_by` says why and `stored_status` keeps
/// the stored one (`runnable` or `suspended`).
pub fn status_members(
    row: &crate::store::ExecutionRow,
    state: PauseState,
) -> Vec<(String, serde_json::Value)> {
    match state.by() {
        Some(by) if !row.is_terminal() => vec![
            ("status".into(), "paused".into()),
            ("paused_by".into(), by.into()),
            ("stored_status".into(), row.status.clone().into()),
        ],
        _ => Vec::new(),
    }
}
