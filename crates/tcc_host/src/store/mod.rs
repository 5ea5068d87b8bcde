//! The storage interface (issue 7 "Store"): artifacts by hash, the
//! program-name registry, executions (status, revision, owner lease,
//! result), checkpoint deltas with periodic snapshots, the effect journal,
//! waits (timers, events, children), buffered events and a history.
//!
//! Layers, each calling only those above it: this module (the [`Store`]
//! trait, its row types and [`StoreError`]); `group_commit` (the one
//! write queue both backends use); the backends [`sqlite`] (default,
//! single node) and [`pg`] (`postgres://…`, several nodes); [`factory`]
//! (`--database` to a backend).

use serde_json::Value as J;
use std::sync::Arc;

pub mod backend;
pub mod factory;
pub(crate) mod group_commit;
pub use crate::packed;
pub mod pg;
pub mod sqlite;

/// Storage errors. Cloneable so that one commit failure can be reported to
/// every member of a group commit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The database failed.
    #[error("database: {0}")]
    Db(#[source] DbError),
    /// Not found.
    #[error("not found: {0}")]
    NotFound(String),
    /// Conflict (already exists, terminal, lost lease, revision moved).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A feature this build does not provide.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Stored data is corrupt or of a newer schema.
    #[error("corrupt store: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// A database failure without a driver error behind it.
    pub fn db(message: impl Into<String>) -> StoreError {
        StoreError::Db(DbError::new(message))
    }
}

/// A database failure: what went wrong and, when the database driver
/// reported it, the driver's error ([`std::error::Error::source`]). Reads
/// as its message (`Deref<Target = str>`).
#[derive(Debug, Clone)]
pub struct DbError {
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl DbError {
    /// A failure described by `message` alone.
    pub fn new(message: impl Into<String>) -> DbError {
        DbError {
            message: message.into(),
            source: None,
        }
    }

    /// A failure described by `message`, caused by the driver error `source`.
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> DbError {
        DbError {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Two failures are equal when their messages are (driver errors do not compare).
impl PartialEq for DbError {
    fn eq(&self, other: &DbError) -> bool {
        self.message == other.message
    }
}

impl std::ops::Deref for DbError {
    type Target = str;
    fn deref(&self) -> &str {
        &self.message
    }
}

/// Execution status as stored.
pub const TERMINAL: &[&str] = &["completed", "failed", "cancelled"];

/// A new execution row.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExecution {
    /// Execution id.
    pub id: String,
    /// Artifact hash it runs (pinned for its whole life).
    pub artifact_hash: String,
    /// Program name it was started by, if any.
    pub program_name: Option<String>,
    /// Entry arguments (tagged values, as stored text).
    pub args: crate::values::TaggedList,
    /// Parent execution and branch, for children.
    pub parent: Option<(String, Option<String>)>,
    /// Namespace (`crate::namespace`); a child is always in its parent's.
    pub namespace: String,
}

/// An execution row.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionRow {
    /// Execution id.
    pub id: String,
    /// Artifact hash.
    pub artifact_hash: String,
    /// Program name, if started by name.
    pub program_name: Option<String>,
    /// Entry arguments (tagged, the stored text: parsed only to start).
    pub args: crate::values::TaggedList,
    /// runnable | suspended | completed | failed | cancelled.
    pub status: String,
    /// Last committed revision (0: never checkpointed).
    pub revision: u64,
    /// Lease owner.
    pub owner: Option<String>,
    /// Lease expiry (ms).
    pub lease_until: i64,
    /// Cancellation requested (and, for an artifact with catchable
    /// cancellation, not yet delivered: the host clears it once the
    /// delivery is committed).
    pub cancel_requested: bool,
    /// Termination requested: cancelled at once, handlers not run (also
    /// sets `cancel_requested`, which the scheduler looks for).
    pub terminate_requested: bool,
    /// Result (tagged value, its stored canonical text) when completed or
    /// failed.
    pub result: Option<crate::tagged_text::TaggedText>,
    /// Failure message.
    pub message: Option<String>,
    /// Host-side error (`code: message`), e.g. a fatal engine error or a missing artifact.
    pub error: Option<String>,
    /// Pending operation of the last checkpoint (continuation `pending`).
    pub pending: Option<J>,
    /// Parent execution id.
    pub parent_id: Option<String>,
    /// Parent's join branch.
    pub parent_branch: Option<String>,
    /// Creation time (ms).
    pub created_ms: i64,
    /// Last update (ms).
    pub updated_ms: i64,
    /// Listing order (insertion sequence).
    pub seq: i64,
    /// Drives begun since the last one that ended normally: a claim adds
    /// one, a release (a drive that suspended or handed over) resets it,
    /// and a crash, an abort or a store error leaves it counted. The host
    /// quarantines an execution whose count passes its limit
    /// (`HostConfig::max_drive_attempts`).
    pub drive_attempts: u32,
    /// The namespace owning it (issue 35, `crate::namespace`).
    pub namespace: String,
    /// The execution's stored W3C `traceparent` (`crate::otel::store`),
    /// when the read that gave this row fetched it too: `Some(None)` when
    /// none is stored, `None` when not fetched (the PostgreSQL store's
    /// claims fetch it, so that a drive does not read it apart).
    pub stored_traceparent: Option<Option<String>>,
}

impl ExecutionRow {
    /// Whether the status is terminal.
    pub fn is_terminal(&self) -> bool {
        TERMINAL.contains(&self.status.as_str())
    }
}

/// What [`Store::counts`] reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreCounts {
    /// (status, executions), by status.
    pub by_status: Vec<(String, u64)>,
    /// Events received and not yet consumed by a wait.
    pub events_pending: u64,
}

/// A stored checkpoint.
#[derive(Debug, Clone)]
pub struct CheckpointRow {
    /// Revision.
    pub revision: u64,
    /// `snapshot` or `delta`.
    pub kind: String,
    /// Full continuation (snapshot) or delta JSON text (a long one read
    /// from SQLite left deflated until used).
    pub body: crate::packed::Stored,
}

/// A wait registered together with a checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum Registration {
    /// A durable timer due at `due_ms` (absolute).
    Timer {
        /// Absolute due time.
        due_ms: i64,
        /// Join branch.
        branch: Option<String>,
    },
    /// An event wait.
    Event {
        /// Event name.
        name: String,
        /// Wait id.
        wait_id: String,
        /// Join branch.
        branch: Option<String>,
    },
    /// A child execution (its row is inserted in the same transaction).
    Child {
        /// The child row.
        child: NewExecution,
        /// Join branch.
        branch: Option<String>,
    },
}

/// A wake that is ready to be delivered to a suspended execution.
#[derive(Debug, Clone, PartialEq)]
pub struct Wake {
    /// The wait row id.
    pub wait_id: i64,
    /// `timer` | `event` | `child`.
    pub kind: String,
    /// Join branch.
    pub branch: Option<String>,
    /// Event payload / child result (tagged, the stored text).
    pub value: Option<crate::tagged_text::TaggedText>,
    /// The consumed event's sequence number.
    pub event_seq: Option<i64>,
    /// For a child that did not complete: its status and message.
    pub child_failure: Option<String>,
}

impl Wake {
    /// The wake a child execution gives its parent's `child` wait: `None`
    /// while the child runs; its result when it completed; otherwise a
    /// failure naming its status and message.
    pub fn for_child(
        wait_id: i64,
        kind: String,
        branch: Option<String>,
        child: &ExecutionRow,
    ) -> Option<Wake> {
        if !child.is_terminal() {
            return None;
        }
        let child_failure = (child.status != "completed").then(|| {
            format!(
                "child {} {}: {}",
                child.id,
                child.status,
                child
                    .error
                    .clone()
                    .or(child.message.clone())
                    .unwrap_or_default()
            )
        });
        Some(Wake {
            wait_id,
            kind,
            branch,
            value: child.result.clone(),
            event_seq: None,
            child_failure,
        })
    }
}

/// Everything one `persist_checkpoint` commits atomically.
#[derive(Debug, Clone)]
pub struct CheckpointTx {
    /// Execution id.
    pub id: String,
    /// Lease owner doing the commit.
    pub owner: String,
    /// New revision; the stored one must be `revision - 1`.
    pub revision: u64,
    /// `snapshot` | `delta`.
    pub kind: String,
    /// Snapshot continuation or delta (JSON text), as [`Store::pack`]
    /// made it.
    pub body: packed::Packed<'static>,
    /// Status after the checkpoint.
    pub status: String,
    /// Result (tagged, canonical text) if terminal, as [`Store::pack`]
    /// made it.
    pub result: Option<packed::Packed<'static>>,
    /// Failure message if failed.
    pub message: Option<String>,
    /// Pending operation (continuation `pending`).
    pub pending: Option<J>,
    /// Waits registered since the previous checkpoint.
    pub registrations: Vec<Registration>,
    /// The wake consumed by this transition.
    pub consumed: Option<Wake>,
    /// History entries to append (`kind`, detail).
    pub history: Vec<(String, J)>,
    /// For a `failed` checkpoint that directly follows a failed effect
    /// (issue 33, operator resume): that effect's journal key. The store
    /// keeps it as the execution's resume point and keeps the checkpoint
    /// rows of revision `revision - 1` (a snapshot does not delete them),
    /// so that [`Store::resume_failed`] can go back there.
    pub resume_key: Option<String>,
}

/// What [`Store::resume_failed`] did (issue 33).
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeOutcome {
    /// Resumed: back at `revision`, the checkpoint before the failed effect
    /// `key` (its journal row and failed calls discarded), `runnable`.
    Resumed {
        /// The failed effect's key.
        key: String,
        /// The revision the execution is back at.
        revision: u64,
    },
    /// Refused: the execution is not `failed` (its status).
    NotFailed(String),
    /// Refused: it failed for another reason than an effect failure it
    /// can be resumed from (why).
    NotResumable(String),
}

/// The execution id as it starts a journal key: `%` written `%25` and `:`
/// written `%3A`, so that it holds no `:` (see [`journal_key`]). Ids
/// without either character, every generated one among them, are
/// unchanged.
pub fn escape_execution_id(id: &str) -> std::borrow::Cow<'_, str> {
    if id.contains([':', '%']) {
        std::borrow::Cow::Owned(id.replace('%', "%25").replace(':', "%3A"))
    } else {
        std::borrow::Cow::Borrowed(id)
    }
}

/// The journal's key of effect `key` of execution `execution_id`, which
/// the host also gives providers as the idempotency key: the escaped
/// execution id ([`escape_execution_id`]), `:`, the effect key. Its first
/// `:` ends the execution id, so two executions can never share a key
/// (issue 42, F7: with the engine's `{exec}:{key}`, execution `a:b`'s effect
/// `k` and execution `a`'s effect `b:k` did). For an execution id without
/// `:` or `%` it is the engine's (and the reference's) `{exec}:{key}`.
pub fn journal_key(execution_id: &str, key: &str) -> String {
    format!("{}:{key}", escape_execution_id(execution_id))
}

/// An effect journal row.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalRow {
    /// [`journal_key`] of the execution and the effect key.
    pub idempotency_key: String,
    /// Execution id.
    pub execution_id: String,
    /// Effect key.
    pub key: String,
    /// Canonical input JSON.
    pub input: String,
    /// `completed` | `failed`.
    pub status: String,
    /// Tagged result (completed), or the failure message (failed): a tagged
    /// string as the engine writes it now, a bare string in rows written
    /// before (`tcc_engine::protocol::failure_message` reads both).
    pub result: J,
}

impl JournalRow {
    /// Refuses a key that does not start with the escaped execution id
    /// and `:` ([`journal_key`]): both stores read an execution's journal
    /// as the range of keys with that prefix, which would miss it, and the
    /// prefix is what keeps two executions' keys apart (so a row of
    /// another execution can never hold the same key).
    pub fn check_key(&self) -> Result<(), StoreError> {
        let escaped = escape_execution_id(&self.execution_id);
        match self.idempotency_key.strip_prefix(escaped.as_ref()) {
            Some(rest) if rest.starts_with(':') => Ok(()),
            _ => Err(StoreError::Unsupported(format!(
                "idempotency key {:?} does not start with its escaped execution id {escaped:?} and ':'",
                self.idempotency_key
            ))),
        }
    }
}

/// A failed call of an effect whose route has a durable retry policy
/// (issue 33, `crate::retry`): one row per failed call, written before the
/// host waits for the next one.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRow {
    /// The effect's journal key ([`journal_key`]).
    pub idempotency_key: String,
    /// Execution id.
    pub execution_id: String,
    /// Effect key.
    pub key: String,
    /// Which call failed (1-based).
    pub attempt: u32,
    /// The provider's failure message.
    pub error: String,
    /// When the call failed (ms since the epoch).
    pub at_ms: i64,
    /// When the next call is due; `None` when this was the last one (its
    /// failure is the effect's journalled outcome).
    pub next_due_ms: Option<i64>,
}

impl AttemptRow {
    /// The history entry (`effect_attempt_failed`) written with the row.
    pub fn history_detail(&self) -> J {
        serde_json::json!({
            "key": self.key,
            "idempotency_key": self.idempotency_key,
            "attempt": self.attempt,
            "error": self.error,
            "next_attempt_at_ms": self.next_due_ms,
        })
    }
}

/// Listing filter.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this status.
    pub status: Option<String>,
    /// Only this program name.
    pub program: Option<String>,
    /// Only executions whose artifact is missing.
    pub artifact_missing: bool,
    /// Only executions with `seq` greater than this (pagination cursor).
    pub after: Option<i64>,
    /// Only this namespace (`None`: every namespace).
    pub namespace: Option<String>,
    /// Page size.
    pub limit: u32,
}

/// One history entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    /// Sequence.
    pub seq: i64,
    /// Time (ms).
    pub at_ms: i64,
    /// Entry kind (`created`, `checkpoint`, `effect`, `event_received`, …).
    pub kind: String,
    /// Details.
    pub detail: J,
}

/// A page of the dashboard's execution list ([`Store::page_executions`]):
/// newest first, keyset-paged (the cursor is the last row of the previous
/// page, so every page costs the same however deep it is).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageQuery {
    /// Only this status.
    pub status: Option<String>,
    /// Only this program name.
    pub program: Option<String>,
    /// Only ids starting with this; the page is then ordered by id
    /// (descending; generated ids sort by creation time) instead of `seq`.
    pub id_prefix: Option<String>,
    /// Rows with `seq` below this (listing by `seq`).
    pub before_seq: Option<i64>,
    /// Rows with an id below this (listing by id prefix).
    pub before_id: Option<String>,
    /// Only this namespace (`None`: every namespace).
    pub namespace: Option<String>,
    /// Page size (1..=500).
    pub limit: u32,
}

impl PageQuery {
    /// The page size actually used.
    pub fn page_size(&self) -> u32 {
        self.limit.clamp(1, 500)
    }

    /// The smallest string above every id starting with `prefix` that a
    /// range scan may stop at: `prefix` followed by the largest character.
    /// Rows are also checked to start with the prefix, so the bound only
    /// has to be at least that large for ids made of characters below
    /// U+10FFFF (every id the host generates, and any sane given id).
    pub fn id_upper_bound(prefix: &str) -> String {
        format!("{prefix}{}", char::MAX)
    }
}

/// A wait row of one execution ([`Store::waits_of`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WaitRow {
    /// Row id (registration order).
    pub id: i64,
    /// `timer` | `event` | `child`.
    pub kind: String,
    /// Event name, or the child's execution id.
    pub name: Option<String>,
    /// Join branch.
    pub branch: Option<String>,
    /// Due time of a timer (ms).
    pub due_ms: Option<i64>,
    /// Whether it was delivered.
    pub delivered: bool,
}

/// The storage interface both backends implement. Every method is one
/// transaction; writes may be group-committed with other callers'.
pub trait Store: Send + Sync {
    /// Stores an artifact blob under its hash (idempotent). Clears
    /// `artifact_missing` errors of executions pinned to it.
    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError>;
    /// The artifact blob stored under `hash`.
    fn get_artifact(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Points program `name` at `hash`.
    fn set_program(&self, name: &str, hash: &str) -> Result<(), StoreError>;
    /// The hash program `name` points at.
    fn resolve_program(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// Every (name, hash) pair, by name.
    fn programs(&self) -> Result<Vec<(String, String)>, StoreError>;
    /// Inserts a runnable execution (conflict if the id exists).
    fn create_execution(&self, new: &NewExecution) -> Result<(), StoreError> {
        self.create_executions(std::slice::from_ref(new))
    }
    /// Inserts runnable executions in one transaction: all of them, or
    /// none (conflict if an id exists).
    fn create_executions(&self, new: &[NewExecution]) -> Result<(), StoreError>;
    /// One execution.
    fn get_execution(&self, id: &str) -> Result<Option<ExecutionRow>, StoreError>;
    /// Whether cancelling `id` was requested (`false` for an unknown id):
    /// what a drive checks between engine slices, without reading the
    /// row's stored values (issue 42, F3). By default read from
    /// [`Store::get_execution`].
    fn cancel_requested(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.get_execution(id)?.is_some_and(|r| r.cancel_requested))
    }
    /// Executions matching `filter`, in creation order.
    fn list_executions(&self, filter: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError>;
    /// History entries of an execution after `after_seq`.
    fn history(&self, id: &str, after_seq: i64, limit: u32) -> Result<Vec<HistoryRow>, StoreError>;
    /// Whether [`Store::history`] lists each journal row written by
    /// [`Store::journal_put`] as that effect's `effect` entry
    /// (`{"key", "idempotency_key", "status"}`), in order among the other
    /// entries; then the host does not pass `effect` entries to
    /// [`Store::commit_checkpoint`] (one write fewer per step).
    fn history_lists_journal(&self) -> bool {
        false
    }
    /// [`Store::claim`], and with it the execution's journalled
    /// idempotency keys when the store reads them in the same round trip
    /// (else `None`: the host reads them with [`Store::journal_keys`] when
    /// it first needs them).
    #[allow(clippy::type_complexity)]
    fn claim_for_drive(
        &self,
        id: &str,
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<(ExecutionRow, Option<Vec<String>>)>, StoreError> {
        Ok(self.claim(id, owner, now, lease_ms)?.map(|r| (r, None)))
    }
    /// Takes the lease of `id` if it is free or expired; returns the row,
    /// its `args` only while it has not started (revision 0): a drive
    /// starts from the arguments once and resumes from its checkpoints
    /// after that ([`drive_cols`]).
    fn claim(
        &self,
        id: &str,
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<ExecutionRow>, StoreError>;
    /// Extends a held lease; false if it was lost.
    fn renew(&self, id: &str, owner: &str, now: i64, lease_ms: i64) -> Result<bool, StoreError>;
    /// Extends every lease `owner` holds among `ids` (the host's
    /// heartbeat); a lease already lost is left as it is. The default
    /// renews them one by one (every one tried; the first error returned);
    /// PostgreSQL in one statement.
    fn renew_all(
        &self,
        ids: &[String],
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<(), StoreError> {
        let mut first_error = None;
        for id in ids {
            if let Err(e) = self.renew(id, owner, now, lease_ms) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
    /// Gives a held lease back.
    fn release(&self, id: &str, owner: &str) -> Result<(), StoreError>;
    /// The checkpoints needed to rebuild the latest continuation: the last
    /// snapshot and the deltas after it, by revision.
    fn load_checkpoints(&self, id: &str) -> Result<Vec<CheckpointRow>, StoreError>;
    /// Commits a checkpoint with its registrations and consumed wake, if
    /// `owner` holds the lease and the stored revision is `revision - 1`.
    /// A checkpoint with a terminal status also gives the lease back (the
    /// execution will not be driven again; no [`Store::release`] needed).
    fn commit_checkpoint(&self, tx: CheckpointTx) -> Result<(), StoreError>;
    /// The journal row of an idempotency key.
    fn journal_get(&self, idempotency_key: &str) -> Result<Option<JournalRow>, StoreError>;
    /// Records an effect outcome (first write wins).
    fn journal_put(&self, row: &JournalRow) -> Result<(), StoreError>;
    /// The idempotency keys journalled for an execution (any order): a
    /// driver loads them once per drive and looks up only those keys.
    fn journal_keys(&self, execution_id: &str) -> Result<Vec<String>, StoreError>;
    /// Every journal row of an execution, in write order.
    fn journal_of(&self, execution_id: &str) -> Result<Vec<JournalRow>, StoreError>;
    /// Records a failed call of an effect with a retry policy, and its
    /// `effect_attempt_failed` history entry, durably (first write wins).
    /// A store without it cannot serve routes with a retry policy.
    fn record_attempt(&self, row: &AttemptRow) -> Result<(), StoreError> {
        let _ = row;
        Err(StoreError::Unsupported("durable effect retries".into()))
    }
    /// The failed calls recorded for an idempotency key, by attempt (none
    /// in a store that cannot record them).
    fn attempts(&self, idempotency_key: &str) -> Result<Vec<AttemptRow>, StoreError> {
        let _ = idempotency_key;
        Ok(Vec::new())
    }
    /// Every failed call recorded for an execution's effects, in time order
    /// (none in a store that cannot record them).
    fn attempts_of(&self, execution_id: &str) -> Result<Vec<AttemptRow>, StoreError> {
        let _ = execution_id;
        Ok(Vec::new())
    }
    /// Keeps `owner`'s lease of `id` until `until_ms` and ends the drive as
    /// a normal one (resets `drive_attempts`): nobody takes the execution
    /// up before then (a durable retry's due time). False when `owner`
    /// does not hold the lease.
    fn defer(&self, id: &str, owner: &str, until_ms: i64) -> Result<bool, StoreError> {
        let _ = (id, owner, until_ms);
        Err(StoreError::Unsupported("durable effect retries".into()))
    }
    /// Ids of executions a worker can take now: runnable, suspended with a
    /// ready wake, or cancel requested; lease free or expired; no host error.
    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError>;
    /// Earliest due time of an undelivered timer of a suspended execution.
    fn next_timer_due(&self) -> Result<Option<i64>, StoreError>;
    /// The first wake ready for `id` (registration order).
    fn ready_wake(&self, id: &str, now: i64) -> Result<Option<Wake>, StoreError>;
    /// Buffers an event for `id` (not found / conflict when terminal).
    fn send_event(&self, id: &str, name: &str, payload: &J) -> Result<(), StoreError> {
        self.send_event_stored(id, name, &packed::Stored::Text(json_text(payload)))
    }
    /// [`Store::send_event`] with the payload as canonical tagged JSON
    /// text (what the HTTP API converts a plain payload to, without a
    /// tree), deflated when the API wrote it so for a store that
    /// [`Store::packs_texts`].
    fn send_event_stored(
        &self,
        id: &str,
        name: &str,
        payload: &packed::Stored,
    ) -> Result<(), StoreError>;
    /// Requests cancellation (conflict when terminal), also of the
    /// unfinished descendants.
    fn request_cancel(&self, id: &str) -> Result<(), StoreError>;
    /// Operator resume (issue 33): takes a `failed` execution whose failure
    /// directly followed a failed effect (its resume point, see
    /// [`CheckpointTx::resume_key`]) back to the checkpoint before that
    /// effect: later checkpoint rows, the effect's journal row and its
    /// failed calls are deleted, the row is `runnable` with no owner, and a
    /// `resumed_by_operator` history entry is written, in one transaction
    /// that locks the row (of concurrent calls one resumes, the others see
    /// it `runnable`). `NotFound` for an unknown id.
    fn resume_failed(&self, id: &str) -> Result<ResumeOutcome, StoreError> {
        let _ = id;
        Err(StoreError::Unsupported("operator resume".into()))
    }
    /// Requests termination (conflict when terminal), also of the
    /// unfinished descendants: like a cancellation, without running the
    /// program's handlers (`terminate_requested` and `cancel_requested`).
    fn request_terminate(&self, id: &str) -> Result<(), StoreError> {
        let _ = id;
        Err(StoreError::Unsupported("terminate".into()))
    }
    /// After a catchable cancellation was delivered and committed: clears
    /// `cancel_requested` unless a termination is requested (a later
    /// cancel of the running compensation is then a no-op).
    fn clear_cancel_request(&self, id: &str) -> Result<(), StoreError> {
        let _ = id;
        Err(StoreError::Unsupported("catchable cancellation".into()))
    }
    /// Drops every wait `owner`'s execution `id` has open (its timers,
    /// event waits and children's results are no longer delivered): a
    /// catchable cancellation abandoned them. False when `owner` does
    /// not hold the lease.
    fn drop_waits(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let _ = (id, owner);
        Err(StoreError::Unsupported("catchable cancellation".into()))
    }
    /// Marks an execution failed by the host (fatal engine error, missing
    /// child program) and releases the lease.
    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError>;
    /// Records a host error that keeps the execution from running (e.g.
    /// `artifact_missing`), without changing its status.
    fn set_error(&self, id: &str, error: &str) -> Result<(), StoreError>;
    /// Appends a history entry.
    fn append_history(&self, id: &str, kind: &str, detail: &J) -> Result<(), StoreError>;
    /// Frees every lease (single-node SQLite recovery at start: the process
    /// that held them is gone). A no-op on PostgreSQL, where other nodes
    /// may be alive: there a dead node's leases expire and are taken over.
    fn reset_leases(&self) -> Result<u64, StoreError>;
    /// Frees the leases held by `owner`: a node restarted under the same
    /// node id takes its own executions back at once instead of waiting
    /// for their leases to expire. Node ids must be unique among live nodes.
    fn release_owner(&self, owner: &str) -> Result<u64, StoreError>;
    /// Built-in key-value provider: read.
    fn kv_get(&self, key: &str) -> Result<Option<J>, StoreError>;
    /// Built-in key-value provider: write.
    fn kv_set(&self, key: &str, value: &J) -> Result<(), StoreError>;
    /// Executions by status and events not yet consumed (gauges of the
    /// metrics endpoint).
    fn counts(&self) -> Result<StoreCounts, StoreError> {
        Err(StoreError::Unsupported("store counts".into()))
    }
    /// One page of executions for the dashboard (see [`PageQuery`]);
    /// served from an index in both stores, whatever the page's depth.
    fn page_executions(&self, q: &PageQuery) -> Result<Vec<ExecutionRow>, StoreError> {
        let _ = q;
        Err(StoreError::Unsupported("paged execution listing".into()))
    }
    /// Every wait (timer, event, child) an execution registered, delivered
    /// or not, in registration order.
    fn waits_of(&self, id: &str) -> Result<Vec<WaitRow>, StoreError> {
        let _ = id;
        Err(StoreError::Unsupported("wait listing".into()))
    }
    /// The store as its concrete type, for the features a backend keeps
    /// beside this trait (`crate::schedule::store_of`).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// Whether long texts are handed to this store deflated
    /// ([`packed::Packed::owned`]): the SQLite store keeps them so; the
    /// PostgreSQL store keeps text (its TOAST compresses on the server).
    fn packs_texts(&self) -> bool {
        false
    }

    /// `text` as this store takes it: deflated when long and
    /// [`Store::packs_texts`], else as it is.
    fn pack(&self, text: String) -> packed::Packed<'static> {
        if self.packs_texts() {
            packed::Packed::owned(text)
        } else {
            packed::Packed::from(text)
        }
    }

    /// A writer of a text in pieces that this store takes as [`Store::pack`]
    /// would (a long text deflated as it is written when
    /// [`Store::packs_texts`]).
    fn pack_writer(&self) -> packed::PackWriter {
        packed::PackWriter::new(self.packs_texts())
    }
}

/// The text of stored arguments ([`crate::values::TaggedList::text`]), a
/// deflated text that does not inflate being a corrupt store.
pub(crate) fn args_text(
    args: &crate::values::TaggedList,
) -> Result<std::borrow::Cow<'_, str>, StoreError> {
    args.text()
        .map_err(|e| StoreError::Corrupt(format!("stored args: {e}")))
}

/// A JSON value as the stores keep it: canonical text.
pub(crate) fn json_text(j: &J) -> String {
    tcc_ir::to_canonical(j)
}

/// The detail of the `effect` history entry a journal row stands for: what
/// the host records for an effect (see `Store::history_lists_journal`).
pub(crate) fn journal_history_detail(
    key: Option<String>,
    idempotency_key: Option<String>,
    status: Option<String>,
) -> J {
    serde_json::json!({"key": key, "idempotency_key": idempotency_key, "status": status})
}

/// A stored JSON column back as a value (`None` for SQL NULL).
pub(crate) fn parse_json(s: Option<String>) -> Result<Option<J>, StoreError> {
    match s {
        None => Ok(None),
        Some(s) => serde_json::from_str(&s)
            .map(Some)
            .map_err(|e| StoreError::Corrupt(format!("stored JSON: {e}"))),
    }
}

/// The `executions` columns both stores read, in the order their row
/// readers expect.
pub(crate) const EXEC_COLS: &str = "id, artifact_hash, program_name, args, status, revision, owner, lease_until, cancel_requested, result, message, error, pending, parent_id, parent_branch, created_ms, updated_ms, seq, drive_attempts, terminate_requested, namespace";

/// [`EXEC_COLS`], each column after `prefix` (a table alias and `.`, or
/// nothing), with `args` selected as the SQL expression `args` makes of
/// the prefix.
fn exec_cols_with_args(prefix: &str, args: impl Fn(&str) -> String) -> String {
    EXEC_COLS
        .split(',')
        .map(|c| match c.trim() {
            "args" => format!("{} AS args", args(prefix)),
            c => format!("{prefix}{c}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`EXEC_COLS`] as a claim for a drive selects them, each column after
/// `prefix` (a table alias and `.`, or nothing): `args` only at revision 0,
/// an empty list after that (issue 42, F3: a resumed execution starts from
/// its checkpoint, and a long list would be read, and inflated on SQLite,
/// on every drive).
pub(crate) fn drive_cols(prefix: &str) -> String {
    exec_cols_with_args(prefix, |p| {
        format!("CASE WHEN {p}revision = 0 THEN {p}args ELSE CAST('[]' AS TEXT) END")
    })
}

/// [`EXEC_COLS`] as the status reads select them (`crate::status_read`):
/// `args` as an empty list, not read. The status answer does not show the
/// arguments, and a long list would be read (and inflated, on SQLite) by
/// every poll of an execution's status (issue 42, F3); the dashboard,
/// which shows them, reads them with the row.
pub(crate) fn status_cols() -> String {
    exec_cols_with_args("", |_| "CAST('[]' AS TEXT)".to_string())
}

/// Why a `failed` execution without a resume point cannot be resumed
/// ([`Store::resume_failed`]).
pub(crate) fn not_resumable_reason(row: &ExecutionRow) -> String {
    if let Some(error) = &row.error {
        return format!("it failed with a host error ({error}), not an effect failure");
    }
    "its failure does not directly follow a failed effect (the program's own error, a child's \
     failure, an effect failure inside a group, or an effect, wait or child after the failed \
     effect)"
        .into()
}

/// Why a child execution cannot be resumed.
pub(crate) const CHILD_NOT_RESUMABLE: &str =
    "it is a child execution: its parent has been given its failure";

/// The `resumed_by_operator` history entry: the discarded journal entry
/// (effect key, journal key, its failure) and the revision resumed from.
pub(crate) fn resumed_detail(
    key: &str,
    idempotency_key: &str,
    revision: u64,
    journalled_result: &str,
) -> J {
    let error = serde_json::from_str::<J>(journalled_result)
        .ok()
        .and_then(|r| tcc_engine::protocol::failure_message(&r).map(str::to_string));
    serde_json::json!({
        "key": key,
        "idempotency_key": idempotency_key,
        "revision": revision,
        "discarded_error": error,
    })
}
