//! The pause rows and their storage trait (`crate::pause`), which both
//! store backends implement (`store::sqlite::pause`, `store::pg::pause`),
//! and what the host reads of them.

use crate::store::{Store, StoreError};

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
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
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
