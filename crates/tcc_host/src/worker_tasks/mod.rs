//! Effects run by external workers that pull (provider kind `worker`).
//!
//! An effect routed to a `worker` provider becomes a durable *task* (one
//! per idempotency key) in the table `worker_tasks` of the host's
//! database. Workers take tasks with a long poll (`POST /v1/tasks/poll`:
//! key patterns, a lease), keep them with heartbeats and answer with
//! complete or fail. The host thread that asked for the effect waits for
//! that answer (woken through [`crate::notify`], not by polling) and hands
//! it to the engine, which journals it like any provider's outcome.
//!
//! - A task is handed to one worker at a time: claiming sets a fresh
//!   random *lease token* and `lease_until`. A task whose lease has
//!   expired (its worker died or stalled) is handed out again with a new
//!   token; every answer and heartbeat must carry the token of the current
//!   lease, so a worker whose lease was lost is refused (`409 conflict`)
//!   and a task is never answered twice.
//! - The task's id is the effect's idempotency key (`{execution}:{key}`),
//!   which workers get with the input: an effect replayed after a host
//!   crash finds its task (and its answer) again instead of queuing a
//!   second one.
//! - A failed task asked for again (a retry of the effect, or a re-drive
//!   after a crash before its failure was journalled) is queued again,
//!   attempt + 1.
//!
//! - Queuing, claims, heartbeats and answers commit *lazily* (PostgreSQL:
//!   sessions with `synchronous_commit = off`; SQLite: `synchronous=NORMAL`
//!   commits), expiries durably. Losing a lazy write to a crash of the
//!   database server (or machine) leaves a state the protocol already
//!   recovers from, the one a crash just before that write leaves: a task
//!   never queued is queued again under the same key when the host
//!   re-drives the execution; a lease never taken or never extended, or an
//!   answer lost, only hands the task out again, so the effect runs again
//!   under the same idempotency key, as after a worker's crash. Nothing is
//!   lost that the execution has moved past: both databases write one
//!   ordered log, and the host's durable checkpoint after the effect (the
//!   store's journal row is lazy too, `docs/tcc/host.md`) makes the task's
//!   writes before it durable. A crash of the host process loses nothing
//!   (the writes are committed).
//!
//! Files: this module holds the rows and the [`TaskStore`] trait; `sqlite`
//! and `pg` implement it on their own connections to the host's database;
//! `board` is the queue with its wake-ups; `provider` the effect provider;
//! `api` the HTTP routes.

use crate::store::StoreError;
use serde_json::Value as J;

pub mod api;
pub mod board;
pub mod pg;
pub mod provider;
pub mod sqlite;

/// The table's definition shared by both backends (their own types
/// substituted for `{SEQ}` and `{INT}`).
pub(crate) const TABLE: &str = "CREATE TABLE IF NOT EXISTS worker_tasks (
  seq {SEQ},
  idempotency_key TEXT NOT NULL UNIQUE,
  execution_id TEXT NOT NULL,
  key TEXT NOT NULL,
  input TEXT NOT NULL,
  state TEXT NOT NULL,
  attempt {INT} NOT NULL DEFAULT 0,
  lease_token TEXT,
  worker TEXT,
  lease_until {INT} NOT NULL DEFAULT 0,
  result TEXT,
  message TEXT,
  created_ms {INT} NOT NULL,
  updated_ms {INT} NOT NULL,
  traceparent TEXT
);
CREATE INDEX IF NOT EXISTS worker_tasks_open ON worker_tasks (seq) WHERE state IN ('queued', 'leased');";

/// Adds the `traceparent` column (issue 35) to a SQLite table made before
/// it (PostgreSQL: `ADD COLUMN IF NOT EXISTS`).
pub(crate) const ADD_TRACEPARENT: &str = "ALTER TABLE worker_tasks ADD COLUMN traceparent TEXT";

/// How a task-table write commits (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// Flushed to disk before it returns: expiries (and reads).
    Durable,
    /// Visible at once, flushed by the next durable commit: queuing,
    /// claims, heartbeats, answers.
    Lazy,
}

/// A task to queue.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// The effect's idempotency key (the task's id).
    pub idempotency_key: String,
    /// The execution that asked.
    pub execution_id: String,
    /// The effect key.
    pub key: String,
    /// The tagged input, canonical JSON.
    pub input: String,
    /// The W3C `traceparent` of the effect's span, handed to the worker
    /// (issue 35, [`crate::otel`]).
    pub traceparent: Option<String>,
}

/// A stored task.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// The effect's idempotency key (the task's id).
    pub idempotency_key: String,
    /// The execution that asked.
    pub execution_id: String,
    /// The effect key.
    pub key: String,
    /// The tagged input.
    pub input: J,
    /// `queued`, `leased`, `completed` or `failed`.
    pub state: String,
    /// How many times it was handed out.
    pub attempt: i64,
    /// The current lease's token (while `leased`).
    pub lease_token: Option<String>,
    /// The worker holding (or last holding) it.
    pub worker: Option<String>,
    /// When the current lease expires (ms since the epoch).
    pub lease_until: i64,
    /// The tagged result (`completed`).
    pub result: Option<J>,
    /// The failure message (`failed`).
    pub message: Option<String>,
    /// The W3C `traceparent` of the effect's latest call (issue 35).
    pub traceparent: Option<String>,
}

/// A worker's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskAnswer {
    /// The effect's tagged result.
    Completed(J),
    /// The effect failed with this message (thrown into the program).
    Failed(String),
}

impl TaskAnswer {
    /// The row's `state`, `result` (canonical tagged text) and `message`
    /// columns for this answer.
    pub fn columns(&self) -> (&'static str, Option<String>, Option<&str>) {
        match self {
            TaskAnswer::Completed(v) => ("completed", Some(tcc_ir::to_canonical(v)), None),
            TaskAnswer::Failed(m) => ("failed", None, Some(m.as_str())),
        }
    }
}

/// What a claim asks for.
#[derive(Debug, Clone)]
pub struct Claim<'a> {
    /// Key patterns (`*` wildcards, as provider routes); a task matches
    /// when its key matches one.
    pub patterns: &'a [String],
    /// The worker's name (kept on the task, for operators).
    pub worker: &'a str,
    /// Lease length.
    pub lease_ms: i64,
    /// Most tasks handed out.
    pub max: usize,
    /// Now (ms since the epoch).
    pub now: i64,
    /// Only tasks of executions in this namespace (`None`: every
    /// namespace; `crate::namespace`).
    pub namespace: Option<&'a str>,
}

/// One answer of a batch ([`TaskStore::answer_many`]).
#[derive(Debug, Clone)]
pub struct LeasedAnswer {
    /// The task's idempotency key.
    pub idempotency_key: String,
    /// The lease token the worker was handed.
    pub token: String,
    /// The answer.
    pub answer: TaskAnswer,
}

/// The task table. Every method is one transaction, durable before it
/// returns.
pub trait TaskStore: Send + Sync {
    /// Queues the task unless it exists; a `failed` one is queued again
    /// (attempt kept, answer cleared). Returns the stored row.
    fn enqueue(&self, task: &NewTask, now: i64) -> Result<TaskRow, StoreError>;
    /// The task with this idempotency key.
    fn get(&self, idempotency_key: &str) -> Result<Option<TaskRow>, StoreError>;
    /// Hands out up to `claim.max` tasks, oldest first, whose key matches a
    /// pattern and which are queued or whose lease has expired; each gets a
    /// fresh lease token.
    fn claim(&self, claim: &Claim<'_>) -> Result<Vec<TaskRow>, StoreError>;
    /// Extends the lease of a task leased under `token`; the new expiry, or
    /// `None` when that lease is gone (handed out again, answered, expired
    /// by the host).
    fn heartbeat(
        &self,
        idempotency_key: &str,
        token: &str,
        lease_ms: i64,
        now: i64,
    ) -> Result<Option<i64>, StoreError>;
    /// Stores the answer of a task leased under `token`; `false` (nothing
    /// written) when that lease is gone.
    fn answer(
        &self,
        idempotency_key: &str,
        token: &str,
        answer: &TaskAnswer,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// [`TaskStore::answer`] for each of `answers`, in order; one flag per
    /// answer. SQLite stores them in one transaction.
    fn answer_many(&self, answers: &[LeasedAnswer], now: i64) -> Result<Vec<bool>, StoreError> {
        answers
            .iter()
            .map(|a| self.answer(&a.idempotency_key, &a.token, &a.answer, now))
            .collect()
    }
    /// Fails a task nobody answered in time, unless it was answered
    /// meanwhile; returns whether it did.
    fn expire(&self, idempotency_key: &str, message: &str, now: i64) -> Result<bool, StoreError>;
    /// The earliest expiry of a current lease (a task then becomes
    /// available again).
    fn next_lease_expiry(&self) -> Result<Option<i64>, StoreError>;
    /// [`TaskStore::claim`], and when it hands out nothing,
    /// [`TaskStore::next_lease_expiry`] (what a worker's poll waits for
    /// next). PostgreSQL answers both in one statement.
    fn claim_or_next_expiry(
        &self,
        claim: &Claim<'_>,
    ) -> Result<(Vec<TaskRow>, Option<i64>), StoreError> {
        let tasks = self.claim(claim)?;
        let expiry = match tasks.is_empty() {
            true => self.next_lease_expiry()?,
            false => None,
        };
        Ok((tasks, expiry))
    }
    /// Whether [`TaskStore::enqueue`], [`TaskStore::answer`] and
    /// [`TaskStore::expire`] notify the other nodes of their topics
    /// themselves (PostgreSQL: `pg_notify` in the same statement); when
    /// not, the [`crate::notify::Hub`]'s bridge does.
    fn announces(&self) -> bool {
        false
    }
}

/// `*` patterns as SQL `LIKE` patterns with `\` as the escape character.
pub(crate) fn like_pattern(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    for c in pattern.chars() {
        match c {
            '*' => out.push('%'),
            '%' | '_' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
