//! The PostgreSQL schema: ordered migrations applied at open, tracked in
//! `irkit_tcc_schema_version`, under a session advisory lock so that nodes
//! starting together migrate once.

use crate::store::StoreError;
use postgres::Client;

/// Schema migrations; migration `i` brings the stored version from `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE artifacts (hash TEXT PRIMARY KEY, body BYTEA NOT NULL, created_ms BIGINT NOT NULL);
CREATE TABLE programs (name TEXT PRIMARY KEY, hash TEXT NOT NULL, updated_ms BIGINT NOT NULL);
CREATE TABLE executions (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  artifact_hash TEXT NOT NULL,
  program_name TEXT,
  args TEXT NOT NULL,
  status TEXT NOT NULL,
  revision BIGINT NOT NULL DEFAULT 0,
  owner TEXT,
  lease_until BIGINT NOT NULL DEFAULT 0,
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  result TEXT,
  message TEXT,
  error TEXT,
  pending TEXT,
  parent_id TEXT,
  parent_branch TEXT,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE INDEX executions_status ON executions (status, lease_until);
CREATE INDEX executions_hash ON executions (artifact_hash);
CREATE INDEX executions_parent ON executions (parent_id);
CREATE TABLE checkpoints (
  execution_id TEXT NOT NULL, revision BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (execution_id, revision)
);
CREATE TABLE effects (
  idempotency_key TEXT PRIMARY KEY, execution_id TEXT NOT NULL, key TEXT NOT NULL,
  input TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, seq BIGSERIAL NOT NULL
);
CREATE INDEX effects_exec ON effects (execution_id, seq);
CREATE TABLE waits (
  id BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, kind TEXT NOT NULL,
  name TEXT, wait_id TEXT, branch TEXT, due_ms BIGINT, delivered BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX waits_open ON waits (kind, due_ms) WHERE NOT delivered;
CREATE INDEX waits_exec ON waits (execution_id) WHERE NOT delivered;
CREATE TABLE events (
  seq BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, name TEXT NOT NULL,
  payload TEXT NOT NULL, consumed_by BIGINT, received_ms BIGINT NOT NULL
);
CREATE INDEX events_open ON events (execution_id, name) WHERE consumed_by IS NULL;
CREATE TABLE history (
  seq BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, at_ms BIGINT NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX history_exec ON history (execution_id, seq);
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#,
    // No history row per journalled effect: a journal row is listed in its
    // execution's history as the `effect` entry (see `history`), numbered
    // from the history's own sequence. Rows journalled before this
    // migration have no `history_seq`: their entries are history rows.
    r#"
ALTER TABLE effects ADD COLUMN at_ms BIGINT;
ALTER TABLE effects ADD COLUMN history_seq BIGINT;
"#,
    // The work query is one indexed branch per reason to run (see
    // `find_work`); cancellations of suspended executions get their own
    // small index.
    r#"
CREATE INDEX executions_cancel ON executions (seq) WHERE cancel_requested;
"#,
    // No index holds a lease column, so that a claim, a renewal or a
    // release (which change only `owner` and `lease_until`) is a HOT
    // update: one heap record, no entry in any of the table's indexes.
    // Listing by status and the work query's runnable branch read
    // `(status, seq)` in the order they return.
    r#"
DROP INDEX executions_status;
CREATE INDEX executions_status_seq ON executions (status, seq);
"#,
    // No journal index by execution: an execution's journal is the range
    // of keys `{id}:` up to `{id};` of the primary key (see
    // `in_journal_of!`), which the byte order of the "C" collation keeps
    // contiguous. One index entry per journal row instead of two.
    r#"
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM effects WHERE left(idempotency_key, length(execution_id) + 1) <> execution_id || ':') THEN
    RAISE EXCEPTION 'effects: a journal key does not start with its execution id followed by a colon';
  END IF;
END $$;
ALTER TABLE effects ALTER COLUMN idempotency_key TYPE TEXT COLLATE "C";
DROP INDEX effects_exec;
"#,
    // The dashboard: listing by program newest first (`(status, seq)`
    // serves the listing by status), the id search as a range of ids in
    // byte order (the unique index follows the database's collation, under
    // which a prefix need not be one range), and every wait of one
    // execution (`waits_exec` holds only the open ones). None holds a
    // column an update changes, so claims and steps stay HOT updates.
    r#"
CREATE INDEX executions_program_seq ON executions (program_name, seq);
CREATE INDEX executions_id_bytes ON executions ((id COLLATE "C"));
CREATE INDEX waits_by_exec ON waits (execution_id, id);
"#,
    // Poison-execution quarantine (issue 42): drives begun since the last
    // one that ended normally (see `ExecutionRow::drive_attempts`). Not
    // indexed, so claims and releases stay HOT updates.
    r#"
ALTER TABLE executions ADD COLUMN drive_attempts INTEGER NOT NULL DEFAULT 0;
"#,
    // Journal keys that cannot collide (issue 42, F7): the execution id
    // part of a key is escaped (`%` → `%25`, `:` → `%3A`; see
    // `store::journal_key`). Keys of ids without either are unchanged.
    r#"
UPDATE effects
  SET idempotency_key = replace(replace(execution_id, '%', '%25'), ':', '%3A') || substr(idempotency_key, length(execution_id) + 1)
  WHERE strpos(execution_id, ':') > 0 OR strpos(execution_id, '%') > 0;
"#,
    // Durable effect retries (issue 33): one row per failed call of an
    // effect whose route has a retry policy. An execution's rows are the
    // key range of its journal keys ("C" collation), as for `effects`.
    r#"
CREATE TABLE effect_attempts (
  idempotency_key TEXT COLLATE "C" NOT NULL,
  attempt INTEGER NOT NULL,
  execution_id TEXT NOT NULL,
  key TEXT NOT NULL,
  error TEXT NOT NULL,
  at_ms BIGINT NOT NULL,
  next_due_ms BIGINT,
  PRIMARY KEY (idempotency_key, attempt)
);
"#,
    // Catchable cancellation (issue 33): `terminate` cancels at once,
    // without the program's handlers; `cancel` of an artifact requiring
    // `irkit.catchable_cancel` throws into them. Not indexed (the work
    // query finds a termination through `cancel_requested`).
    r#"
ALTER TABLE executions ADD COLUMN terminate_requested BOOLEAN NOT NULL DEFAULT FALSE;
"#,
    // Operator resume (issue 33): the journal key of the failed effect a
    // `failed` checkpoint directly followed; the checkpoint rows before it
    // are kept (`Store::resume_failed`). Not indexed, so claims and steps
    // stay HOT updates.
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
  catchup_window_ms BIGINT NOT NULL,
  paused BOOLEAN NOT NULL DEFAULT FALSE,
  next_due_ms BIGINT NOT NULL,
  buffered_ms BIGINT,
  last_execution_id TEXT,
  last_error TEXT,
  ticks_started BIGINT NOT NULL DEFAULT 0,
  ticks_skipped BIGINT NOT NULL DEFAULT 0,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE INDEX schedules_due ON schedules (paused, next_due_ms);
"#,
    // Traces (issue 35, `crate::otel`): the `traceparent` an execution was
    // started with, its drives' parent on any node.
    r#"
CREATE TABLE execution_traces (
  execution_id TEXT PRIMARY KEY,
  traceparent TEXT NOT NULL
);
"#,
    // Pause and resume (issue 35, `crate::pause`): an execution's own
    // pause, and the paused program names (read by every claim).
    r#"
ALTER TABLE executions ADD COLUMN paused BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE paused_programs (name TEXT PRIMARY KEY, paused_ms BIGINT NOT NULL);
"#,
    // Retention (issue 35, `crate::retention`): an execution's events,
    // consumed ones included, are deleted with it.
    r#"
CREATE INDEX events_exec ON events (execution_id);
"#,
    // Flow control (issue 35, `crate::flow`): limits with their token
    // bucket, the slots held (leased) and the FIFO queue of waiters. An
    // acquisition locks its limit's row (`FOR UPDATE`): nodes take a
    // limit's slots one at a time.
    r#"
CREATE TABLE flow_limits (
  scope TEXT PRIMARY KEY,
  max_concurrent BIGINT,
  rate_per_s DOUBLE PRECISION,
  burst BIGINT,
  tokens DOUBLE PRECISION NOT NULL,
  refilled_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE TABLE flow_slots (
  scope TEXT NOT NULL,
  holder TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_ms BIGINT NOT NULL,
  PRIMARY KEY (scope, holder)
);
CREATE INDEX flow_slots_owner ON flow_slots (owner);
CREATE TABLE flow_waiters (
  scope TEXT NOT NULL,
  holder TEXT NOT NULL,
  seq BIGINT NOT NULL,
  enqueued_ms BIGINT NOT NULL,
  expires_ms BIGINT NOT NULL,
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
  updated_ms BIGINT NOT NULL
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
ALTER TABLE flow_limits ADD COLUMN shares JSONB NOT NULL DEFAULT '{}';
"#,
    // What each node runs under a limit without a slot row of its own
    // (issue 35, `crate::flow::FlowStore::beat`): reserved slots lent and
    // admissions made with a token share, reported by its heartbeat and
    // counted in a limit's `in_use` until `expires_ms`.
    r#"
CREATE TABLE flow_running (
  scope TEXT NOT NULL,
  owner TEXT NOT NULL,
  running BIGINT NOT NULL,
  expires_ms BIGINT NOT NULL,
  PRIMARY KEY (scope, owner)
);
"#,
];

/// Advisory-lock key guarding migrations (per schema).
fn migration_lock_key(schema: &str) -> i64 {
    // FNV-1a, stable across builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in b"irkit-tcc-migrate:".iter().chain(schema.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// Applies pending migrations under an advisory lock; refuses a database
/// of a newer schema. Returns the schema version.
pub(crate) fn migrate(client: &mut Client, schema: Option<&str>) -> Result<u32, StoreError> {
    let key = migration_lock_key(schema.unwrap_or(""));
    client.execute("SELECT pg_advisory_lock($1)", &[&key])?;
    // Concurrent `CREATE SCHEMA IF NOT EXISTS` can still collide: under the lock too.
    let r = match schema {
        Some(s) => client
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {s}"))
            .map_err(StoreError::from)
            .and_then(|()| migrate_locked(client)),
        None => migrate_locked(client),
    };
    let unlock = client.execute("SELECT pg_advisory_unlock($1)", &[&key]);
    let v = r?;
    unlock?;
    Ok(v)
}

fn migrate_locked(client: &mut Client) -> Result<u32, StoreError> {
    client.batch_execute(
        "CREATE TABLE IF NOT EXISTS irkit_tcc_schema_version (version INTEGER NOT NULL)",
    )?;
    let current: Option<i32> = client
        .query_opt("SELECT version FROM irkit_tcc_schema_version", &[])?
        .map(|r| r.get(0));
    let current = match current {
        Some(v) => v.max(0) as usize,
        None => {
            client.execute("INSERT INTO irkit_tcc_schema_version VALUES (0)", &[])?;
            0
        }
    };
    if current > MIGRATIONS.len() {
        return Err(StoreError::Corrupt(format!(
            "database schema version {current} is newer than this irkit ({})",
            MIGRATIONS.len()
        )));
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(current) {
        let mut tx = client.transaction()?;
        tx.batch_execute(m)?;
        tx.execute(
            "UPDATE irkit_tcc_schema_version SET version = $1",
            &[&((i + 1) as i32)],
        )?;
        tx.commit()?;
    }
    Ok(MIGRATIONS.len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migration_lock_keys_differ_per_schema() {
        assert_ne!(migration_lock_key("a"), migration_lock_key("b"));
        assert_eq!(migration_lock_key("a"), migration_lock_key("a"));
    }
}
