//! Write jobs of the PostgreSQL backend, and the writes a group may fold
//! into one statement per kind.

use super::conn::{Conn, WriterConn};
use crate::store::StoreError;
use crate::store::group_commit::Ran;
use postgres::Client;

/// Attempts of a job that hits a deadlock or serialization failure.
pub(crate) const ATTEMPTS: usize = 5;

/// A write job: `run` may be called again (in a fresh savepoint) after a
/// retryable failure; it returns whether the job's writes should stay.
/// `finish` answers the caller with the commit's outcome.
pub(crate) struct Job {
    pub(crate) run: RunFn,
    pub(crate) finish: Box<dyn FnOnce(Result<(), StoreError>) + Send>,
    /// Hands a writer connection to the job's caller (it leads the next group).
    pub(crate) lead: Box<dyn Fn(WriterConn) + Send>,
    /// The job runs exactly one statement (see `PgStore::write_one`).
    pub(crate) single: bool,
    /// What the job writes, when a group may fold it with the other jobs
    /// of its kind into one statement, and where that statement's outcome
    /// for this job goes.
    pub(crate) merge: Option<(Merge, SetFn)>,
}

/// Sets a folded job's outcome: its value (the job's own result type,
/// boxed), or its error.
pub(crate) type SetFn = Box<dyn FnMut(Result<Box<dyn std::any::Any + Send>, StoreError>) + Send>;

/// A write that a group folds, with the others of its kind, into one
/// statement (one round trip for the whole group instead of one per job).
/// Its job's `run` does the same write alone (used when the group has to
/// be re-run job by job).
pub(crate) enum Merge {
    /// An effect journal row (`Store::journal_put`).
    Journal {
        idempotency_key: String,
        execution_id: String,
        key: String,
        input: String,
        status: String,
        result: String,
    },
    /// A checkpoint with nothing registered or consumed: a delta or a
    /// snapshot (which drops the older checkpoint rows), terminal or not
    /// (a terminal one closes the execution's open waits), with its history
    /// entries (`Store::commit_checkpoint`).
    Step {
        id: String,
        owner: String,
        revision: i64,
        status: String,
        result: Option<String>,
        message: Option<String>,
        pending: Option<String>,
        kind: String,
        body: String,
        /// History entries: kind and detail (canonical JSON).
        history: Vec<(String, String)>,
    },
    /// A lease release (`Store::release`).
    Release { id: String, owner: String },
    /// A lease claim for a drive (`Store::claim_for_drive`); its value is
    /// the claimed row and the journal keys, or `None`.
    Claim {
        id: String,
        owner: String,
        until: i64,
        now: i64,
    },
}

/// [`Merge::kind`] of a checkpoint ([`Merge::Step`]).
pub(crate) const STEP_KIND: u8 = 1;

impl Merge {
    /// Which folded statement the write belongs to.
    pub(crate) fn kind(&self) -> u8 {
        match self {
            Merge::Journal { .. } => 0,
            Merge::Step { .. } => STEP_KIND,
            Merge::Release { .. } => 2,
            Merge::Claim { .. } => 3,
        }
    }
}

/// A job's body (re-runnable).
pub(crate) type RunFn = Box<dyn FnMut(&mut Conn<'_, Client>) -> Ran + Send>;
