//! The task table on SQLite: one connection of its own to the host's
//! database file (WAL, busy timeout 30 s), so the execution store's write
//! path is not touched; the two writers take SQLite's write lock in turn.
//! Expiries commit with `synchronous=FULL`; queuing, claims, heartbeats and
//! answers with `synchronous=NORMAL` (lazy: see [`super`]).

use super::{
    Claim, Commit, LeasedAnswer, NewTask, TABLE, TaskAnswer, TaskRow, TaskStore, like_pattern,
};
use crate::providers::pattern_matches;
use crate::store::StoreError;
use crate::store::sqlite::write_gate::WriteGate;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use std::path::Path;
use std::sync::Mutex;

/// Columns read into a [`TaskRow`], in order.
const COLUMNS: &str = "idempotency_key, execution_id, key, input, state, attempt, lease_token, worker, lease_until, result, message, traceparent";

/// The SQLite task table.
pub struct SqliteTasks {
    conn: Mutex<Conn>,
    /// Taken around each write, shared with the execution store's writer
    /// (`store::sqlite::write_gate`).
    gate: WriteGate,
}

/// The connection and the commit kind its `synchronous` setting is for.
struct Conn {
    conn: Connection,
    mode: Commit,
}

fn db(e: rusqlite::Error) -> StoreError {
    StoreError::db(format!("worker tasks: {e}"))
}

fn row(r: &Row<'_>) -> rusqlite::Result<(TaskRow, String, Option<String>)> {
    let input: String = r.get(3)?;
    let result: Option<String> = r.get(9)?;
    Ok((
        TaskRow {
            idempotency_key: r.get(0)?,
            execution_id: r.get(1)?,
            key: r.get(2)?,
            input: serde_json::Value::Null,
            state: r.get(4)?,
            attempt: r.get(5)?,
            lease_token: r.get(6)?,
            worker: r.get(7)?,
            lease_until: r.get(8)?,
            result: None,
            message: r.get(10)?,
            traceparent: r.get(11)?,
        },
        input,
        result,
    ))
}

/// Parses the JSON columns of a row read by [`row`].
fn decode(
    (mut t, input, result): (TaskRow, String, Option<String>),
) -> Result<TaskRow, StoreError> {
    t.input = serde_json::from_str(&input)
        .map_err(|e| StoreError::Corrupt(format!("worker task input: {e}")))?;
    t.result = match result {
        Some(r) => Some(
            serde_json::from_str(&r)
                .map_err(|e| StoreError::Corrupt(format!("worker task result: {e}")))?,
        ),
        None => None,
    };
    Ok(t)
}

impl SqliteTasks {
    /// Opens the task table in the database file at `path` (created if
    /// missing).
    pub fn open(path: &Path) -> Result<SqliteTasks, StoreError> {
        let conn = Connection::open(path).map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(db)?;
        let _mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(db)?;
        conn.execute_batch("PRAGMA synchronous=FULL;").map_err(db)?;
        let table = TABLE
            .replace("{SEQ}", "INTEGER PRIMARY KEY")
            .replace("{INT}", "INTEGER");
        conn.execute_batch(&format!("BEGIN IMMEDIATE; {table} COMMIT;"))
            .map_err(db)?;
        // A table made before the `traceparent` column (issue 35).
        let has_traceparent: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM pragma_table_info('worker_tasks') WHERE name = 'traceparent'",
                [],
                |r| r.get(0),
            )
            .map_err(db)?;
        if !has_traceparent {
            conn.execute_batch(super::ADD_TRACEPARENT).map_err(db)?;
        }
        Ok(SqliteTasks {
            conn: Mutex::new(Conn {
                conn,
                mode: Commit::Durable,
            }),
            gate: WriteGate::for_file(path),
        })
    }

    /// Runs a read `f` on the connection as it is (a read commits
    /// nothing: its `synchronous` setting is not switched for it).
    fn read<R>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut c = self
            .conn
            .lock()
            .map_err(|_| StoreError::db("worker tasks: connection lock poisoned"))?;
        f(&mut c.conn)
    }

    /// Runs `f` on the connection, its commits of the `commit` kind.
    fn with<R>(
        &self,
        commit: Commit,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut c = self
            .conn
            .lock()
            .map_err(|_| StoreError::db("worker tasks: connection lock poisoned"))?;
        if c.mode != commit {
            let pragma = match commit {
                Commit::Durable => "PRAGMA synchronous=FULL;",
                Commit::Lazy => "PRAGMA synchronous=NORMAL;",
            };
            c.conn.execute_batch(pragma).map_err(db)?;
            c.mode = commit;
        }
        let _held = self.gate.enter();
        f(&mut c.conn)
    }
}

fn get(c: &Connection, key: &str) -> Result<Option<TaskRow>, StoreError> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM worker_tasks WHERE idempotency_key = ?1"
    ))
    .map_err(db)?
    .query_row([key], row)
    .optional()
    .map_err(db)?
    .map(decode)
    .transpose()
}

/// Stores one answer of a task leased under `token`; `false` when that
/// lease is gone.
fn store_answer(
    c: &Connection,
    idempotency_key: &str,
    token: &str,
    answer: &TaskAnswer,
    now: i64,
) -> Result<bool, StoreError> {
    let (state, result, message) = answer.columns();
    let n = c
        .prepare_cached(
            "UPDATE worker_tasks SET state = ?3, result = ?4, message = ?5, lease_token = NULL,
               updated_ms = ?6
             WHERE idempotency_key = ?1 AND lease_token = ?2 AND state = 'leased'",
        )
        .and_then(|mut st| st.execute(params![idempotency_key, token, state, result, message, now]))
        .map_err(db)?;
    Ok(n == 1)
}

impl TaskStore for SqliteTasks {
    fn enqueue(&self, task: &NewTask, now: i64) -> Result<TaskRow, StoreError> {
        self.with(Commit::Lazy, |c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            tx.prepare_cached(
                "INSERT INTO worker_tasks (idempotency_key, execution_id, key, input, state, created_ms, updated_ms, traceparent)
                 VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?5, ?6)
                 ON CONFLICT (idempotency_key) DO UPDATE SET state = 'queued', result = NULL,
                   message = NULL, lease_token = NULL, lease_until = 0, updated_ms = ?5,
                   traceparent = excluded.traceparent
                 WHERE worker_tasks.state = 'failed'",
            )
            .and_then(|mut st| {
                st.execute(params![
                    task.idempotency_key,
                    task.execution_id,
                    task.key,
                    task.input,
                    now,
                    task.traceparent
                ])
            })
            .map_err(db)?;
            let r = get(&tx, &task.idempotency_key)?
                .ok_or_else(|| StoreError::db("worker task vanished after insert"))?;
            tx.commit().map_err(db)?;
            Ok(r)
        })
    }

    fn get(&self, idempotency_key: &str) -> Result<Option<TaskRow>, StoreError> {
        self.read(|c| get(c, idempotency_key))
    }

    fn claim(&self, claim: &Claim<'_>) -> Result<Vec<TaskRow>, StoreError> {
        if claim.patterns.is_empty() || claim.max == 0 {
            return Ok(Vec::new());
        }
        self.with(Commit::Lazy, |c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let likes: Vec<String> = claim.patterns.iter().map(|p| like_pattern(p)).collect();
            let cond: Vec<String> = (0..likes.len())
                .map(|i| format!("key LIKE ?{} ESCAPE '\\'", i + 3))
                .collect();
            let sql = format!(
                "SELECT {COLUMNS} FROM worker_tasks
                 WHERE state IN ('queued', 'leased') AND (state = 'queued' OR lease_until < ?1)
                   AND ({}) {} ORDER BY seq LIMIT ?2",
                cond.join(" OR "),
                match claim.namespace {
                    Some(_) => format!(
                        "AND execution_id IN (SELECT id FROM executions WHERE namespace = ?{})",
                        likes.len() + 3
                    ),
                    None => String::new(),
                }
            );
            let mut values: Vec<rusqlite::types::Value> = vec![
                claim.now.into(),
                ((claim.max as i64).saturating_mul(4)).into(),
            ];
            values.extend(likes.into_iter().map(rusqlite::types::Value::from));
            if let Some(ns) = claim.namespace {
                values.push(ns.to_string().into());
            }
            let candidates: Vec<TaskRow> = {
                // Prepared once per connection (SQLite's statement cache).
                let mut st = tx.prepare_cached(&sql).map_err(db)?;
                let rows = st
                    .query_map(rusqlite::params_from_iter(values), row)
                    .map_err(db)?;
                let mut out = Vec::new();
                for r in rows {
                    out.push(decode(r.map_err(db)?)?);
                }
                out
            };
            let mut taken = Vec::new();
            for mut t in candidates {
                if taken.len() >= claim.max {
                    break;
                }
                if !claim.patterns.iter().any(|p| pattern_matches(p, &t.key)) {
                    continue;
                }
                let token = crate::ids::random_id("l-");
                let until = claim.now.saturating_add(claim.lease_ms);
                tx.prepare_cached(
                    "UPDATE worker_tasks SET state = 'leased', lease_token = ?2, worker = ?3,
                       lease_until = ?4, attempt = attempt + 1, updated_ms = ?5
                     WHERE idempotency_key = ?1",
                )
                .and_then(|mut st| {
                    st.execute(params![
                        t.idempotency_key,
                        token,
                        claim.worker,
                        until,
                        claim.now
                    ])
                })
                .map_err(db)?;
                t.state = "leased".into();
                t.lease_token = Some(token);
                t.worker = Some(claim.worker.to_string());
                t.lease_until = until;
                t.attempt += 1;
                taken.push(t);
            }
            tx.commit().map_err(db)?;
            Ok(taken)
        })
    }

    fn heartbeat(
        &self,
        idempotency_key: &str,
        token: &str,
        lease_ms: i64,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        let until = now.saturating_add(lease_ms);
        self.with(Commit::Lazy, |c| {
            let n = c
                .prepare_cached(
                    "UPDATE worker_tasks SET lease_until = ?3, updated_ms = ?4
                     WHERE idempotency_key = ?1 AND lease_token = ?2 AND state = 'leased'",
                )
                .and_then(|mut st| st.execute(params![idempotency_key, token, until, now]))
                .map_err(db)?;
            Ok((n == 1).then_some(until))
        })
    }

    fn answer(
        &self,
        idempotency_key: &str,
        token: &str,
        answer: &TaskAnswer,
        now: i64,
    ) -> Result<bool, StoreError> {
        self.with(Commit::Lazy, |c| {
            store_answer(c, idempotency_key, token, answer, now)
        })
    }

    fn answer_many(&self, answers: &[LeasedAnswer], now: i64) -> Result<Vec<bool>, StoreError> {
        self.with(Commit::Lazy, |c| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let done = answers
                .iter()
                .map(|a| store_answer(&tx, &a.idempotency_key, &a.token, &a.answer, now))
                .collect::<Result<Vec<bool>, StoreError>>()?;
            tx.commit().map_err(db)?;
            Ok(done)
        })
    }

    fn expire(&self, idempotency_key: &str, message: &str, now: i64) -> Result<bool, StoreError> {
        self.with(Commit::Durable, |c| {
            let n = c
                .prepare_cached(
                    "UPDATE worker_tasks SET state = 'failed', message = ?2, lease_token = NULL,
                       updated_ms = ?3
                     WHERE idempotency_key = ?1 AND state IN ('queued', 'leased')",
                )
                .and_then(|mut st| st.execute(params![idempotency_key, message, now]))
                .map_err(db)?;
            Ok(n == 1)
        })
    }

    fn next_lease_expiry(&self) -> Result<Option<i64>, StoreError> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT MIN(lease_until) FROM worker_tasks WHERE state IN ('queued', 'leased') AND state = 'leased'",
            )
            .map_err(db)?
            .query_row([], |r| r.get::<_, Option<i64>>(0))
            .map_err(db)
        })
    }
}
