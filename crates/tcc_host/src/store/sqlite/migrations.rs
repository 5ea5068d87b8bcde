//! The SQLite schema: ordered migrations applied at open, tracked in
//! `PRAGMA user_version`.

use super::cached::Cached;
use crate::store::StoreError;
use rusqlite::Connection;

/// Schema migrations; migration `i` brings `user_version` from `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE artifacts (hash TEXT PRIMARY KEY, body BLOB NOT NULL, created_ms INTEGER NOT NULL);
CREATE TABLE programs (name TEXT PRIMARY KEY, hash TEXT NOT NULL, updated_ms INTEGER NOT NULL);
CREATE TABLE executions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  artifact_hash TEXT NOT NULL,
  program_name TEXT,
  args TEXT NOT NULL,
  status TEXT NOT NULL,
  revision INTEGER NOT NULL DEFAULT 0,
  owner TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  message TEXT,
  error TEXT,
  pending TEXT,
  parent_id TEXT,
  parent_branch TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX executions_status ON executions (status);
CREATE INDEX executions_hash ON executions (artifact_hash);
CREATE TABLE checkpoints (
  execution_id TEXT NOT NULL, revision INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (execution_id, revision)
);
CREATE TABLE effects (
  idempotency_key TEXT PRIMARY KEY, execution_id TEXT NOT NULL, key TEXT NOT NULL,
  input TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, seq INTEGER NOT NULL
);
CREATE INDEX effects_exec ON effects (execution_id, seq);
CREATE TABLE waits (
  id INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, kind TEXT NOT NULL,
  name TEXT, wait_id TEXT, branch TEXT, due_ms INTEGER, delivered INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX waits_open ON waits (delivered, kind, due_ms);
CREATE INDEX waits_exec ON waits (execution_id, delivered);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, name TEXT NOT NULL,
  payload TEXT NOT NULL, consumed_by INTEGER, received_ms INTEGER NOT NULL
);
CREATE INDEX events_open ON events (execution_id, name, consumed_by);
CREATE TABLE history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX history_exec ON history (execution_id, seq);
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#,
    r#"
CREATE INDEX executions_cancel ON executions (cancel_requested, status);
CREATE INDEX events_unconsumed ON events (consumed_by);
"#,
    // One b-tree fewer per journalled effect (one WAL page fewer per step):
    // an execution's journal rows are found as the range of the
    // idempotency-key index that starts with `{execution id}:` (every key
    // does: `journal_put` refuses any other), not through an index of
    // their own.
    r#"
DROP INDEX effects_exec;
"#,
    // History without `AUTOINCREMENT`: every insert had read and rewritten
    // its `sqlite_sequence` row (serial work in the group leader, and one
    // more WAL page per group). History rows are never deleted, so the
    // plain rowid rule (largest + 1) hands out the same increasing `seq`.
    r#"
CREATE TABLE history_v4 (
  seq INTEGER PRIMARY KEY, execution_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
INSERT INTO history_v4 (seq, execution_id, at_ms, kind, detail)
  SELECT seq, execution_id, at_ms, kind, detail FROM history ORDER BY seq;
DROP TABLE history;
ALTER TABLE history_v4 RENAME TO history;
CREATE INDEX history_exec ON history (execution_id, seq);
DELETE FROM sqlite_sequence WHERE name = 'history';
"#,
    // No history row per journalled effect: a journal row is listed in its
    // execution's history as the `effect` entry (see `history`), at the
    // place `history_seq` gives it among the history rows (one sequence
    // for both, `irkit_history_seq()`). Rows journalled before this
    // migration have no `history_seq`: their entries are history rows.
    r#"
ALTER TABLE effects ADD COLUMN at_ms INTEGER;
ALTER TABLE effects ADD COLUMN history_seq INTEGER;
"#,
    // The dashboard's listing by program, newest first: the index holds
    // `(program_name, rowid)`, so a page is one range read backwards from
    // the cursor. (Listing by status reads `executions_status` the same
    // way; the id search reads the id's unique index.) Written only when
    // an execution is created: the name never changes.
    r#"
CREATE INDEX executions_program ON executions (program_name);
"#,
    // Poison-execution quarantine (issue 42): drives begun since the last
    // one that ended normally (see `ExecutionRow::drive_attempts`).
    r#"
ALTER TABLE executions ADD COLUMN drive_attempts INTEGER NOT NULL DEFAULT 0;
"#,
    // Journal keys that cannot collide (issue 42, F7): the execution id
    // part of a key is escaped (`%` → `%25`, `:` → `%3A`; see
    // `store::journal_key`). Keys of ids without either are unchanged.
    r#"
UPDATE effects
  SET idempotency_key = replace(replace(execution_id, '%', '%25'), ':', '%3A') || substr(idempotency_key, length(execution_id) + 1)
  WHERE instr(execution_id, ':') > 0 OR instr(execution_id, '%') > 0;
"#,
    // Durable effect retries (issue 33): one row per failed call of an
    // effect whose route has a retry policy. An execution's rows are the
    // key range of its journal keys, as for `effects`.
    r#"
CREATE TABLE effect_attempts (
  idempotency_key TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  execution_id TEXT NOT NULL,
  key TEXT NOT NULL,
  error TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  next_due_ms INTEGER,
  PRIMARY KEY (idempotency_key, attempt)
) WITHOUT ROWID;
"#,
    // Catchable cancellation (issue 33): `terminate` cancels at once,
    // without the program's handlers; `cancel` of an artifact requiring
    // `irkit.catchable_cancel` throws into them.
    r#"
ALTER TABLE executions ADD COLUMN terminate_requested INTEGER NOT NULL DEFAULT 0;
"#,
    // Operator resume (issue 33): the journal key of the failed effect a
    // `failed` checkpoint directly followed; the checkpoint rows before it
    // are kept (`Store::resume_failed`). Not indexed.
    r#"
ALTER TABLE executions ADD COLUMN resume_key TEXT;
"#,
    // Schedules (issue 35, `crate::schedule`): one row per schedule, its
    // cursor (`next_due_ms`) moved by compare-and-set with each pass.
    r#"
CREATE TABLE schedules (
  name TEXT PRIMARY KEY,
  program TEXT NOT NULL,
  args TEXT NOT NULL,
  spec_kind TEXT NOT NULL,
  spec TEXT NOT NULL,
  overlap TEXT NOT NULL,
  catchup TEXT NOT NULL,
  catchup_window_ms INTEGER NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  next_due_ms INTEGER NOT NULL,
  buffered_ms INTEGER,
  last_execution_id TEXT,
  last_error TEXT,
  ticks_started INTEGER NOT NULL DEFAULT 0,
  ticks_skipped INTEGER NOT NULL DEFAULT 0,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX schedules_due ON schedules (paused, next_due_ms);
"#,
    // Traces (issue 35, `crate::otel`): the `traceparent` an execution was
    // started with, its drives' parent on any node.
    r#"
CREATE TABLE execution_traces (
  execution_id TEXT PRIMARY KEY,
  traceparent TEXT NOT NULL
) WITHOUT ROWID;
"#,
    // Pause and resume (issue 35, `crate::pause`): an execution's own
    // pause, and the paused program names (read by every claim).
    r#"
ALTER TABLE executions ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
CREATE TABLE paused_programs (name TEXT PRIMARY KEY, paused_ms INTEGER NOT NULL);
"#,
    // Flow control (issue 35, `crate::flow`): limits with their token
    // bucket, the slots held (leased) and the FIFO queue of waiters.
    r#"
CREATE TABLE flow_limits (
  scope TEXT PRIMARY KEY,
  max_concurrent INTEGER,
  rate_per_s REAL,
  burst INTEGER,
  tokens REAL NOT NULL,
  refilled_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE flow_slots (
  scope TEXT NOT NULL,
  holder TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (scope, holder)
);
CREATE INDEX flow_slots_owner ON flow_slots (owner);
CREATE TABLE flow_waiters (
  scope TEXT NOT NULL,
  holder TEXT NOT NULL,
  seq INTEGER NOT NULL,
  enqueued_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (scope, holder)
);
CREATE INDEX flow_waiters_seq ON flow_waiters (scope, seq);
CREATE INDEX flow_waiters_holder ON flow_waiters (holder);
"#,
    // Source text beside an artifact (issue 35, `crate::source`): kept
    // with the artifact it was compiled to, outside the artifact's hash.
    r#"
CREATE TABLE artifact_sources (
  hash TEXT PRIMARY KEY,
  file TEXT NOT NULL,
  text TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
);
"#,
    // Namespaces (issue 35, `crate::namespace`): the namespace owning each
    // execution, registered program name and schedule; rows of a store
    // from before are in `default`. Ids and names stay global keys.
    r#"
ALTER TABLE executions ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
CREATE INDEX executions_namespace ON executions (namespace, seq);
ALTER TABLE programs ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
ALTER TABLE schedules ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
"#,
    // Token shares of rate limits (issue 35, `crate::flow::share`): the
    // tokens each node took from a limit's bucket to admit locally, as
    // `{"OWNER": [tokens, expires_ms]}`; they count against the bucket
    // until given back or expired.
    r#"
ALTER TABLE flow_limits ADD COLUMN shares TEXT NOT NULL DEFAULT '{}';
"#,
    // What each node runs under a limit without a slot row of its own
    // (issue 35, `crate::flow::FlowStore::beat`): reserved slots lent and
    // admissions made with a token share, reported by its heartbeat and
    // counted in a limit's `in_use` until `expires_ms`.
    r#"
CREATE TABLE flow_running (
  scope TEXT NOT NULL,
  owner TEXT NOT NULL,
  running INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (scope, owner)
);
"#,
];

/// Applies pending migrations; refuses a database of a newer schema.
pub fn migrate(conn: &mut Connection) -> Result<u32, StoreError> {
    let current: u32 = conn.query_row_cached("PRAGMA user_version", [], |r| r.get(0))?;
    if current as usize > MIGRATIONS.len() {
        return Err(StoreError::Corrupt(format!(
            "database schema version {current} is newer than this irkit ({})",
            MIGRATIONS.len()
        )));
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(m)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(MIGRATIONS.len() as u32)
}
