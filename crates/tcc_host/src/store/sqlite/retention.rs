//! Retention of the SQLite backend (`crate::retention`): batches taken by
//! marking their rows' owner (a lazy group commit: a mark lost to a crash
//! only lets the rows be taken again), deleted in write jobs of at most
//! [`DELETE_CHUNK`] executions each, paced by [`crate::retention::YIELD_FACTOR`], so that
//! the workers' jobs queued on the single writer run between two of them.
//!
//! Every delete reads an index (EXPLAIN QUERY PLAN): journal rows
//! (`effects`, `effect_attempts`) and worker tasks are the range of their
//! idempotency-key index that starts with the escaped execution id and
//! `:` (`effects` has no `execution_id` index since the migration that
//! dropped `effects_exec`; deleting by `execution_id` scanned the whole
//! journal once per execution, ~2 s per batch of 500 with 20 000 expired).

use super::SqliteStore;
use super::cached::Cached;
use super::queries::get_exec;
use crate::retention::{DELETE_CHUNK, RetentionStore, yield_after};
use crate::store::{ExecutionRow, StoreError, TERMINAL, escape_execution_id};
use rusqlite::{Connection, OptionalExtension, params};

/// Deletes execution `id` and everything keyed by it.
fn delete_all(c: &Connection, id: &str) -> Result<(), StoreError> {
    let prefix = format!("{}:", escape_execution_id(id));
    let upper = format!("{};", escape_execution_id(id));
    c.exec_cached(
        "DELETE FROM checkpoints WHERE execution_id = ?1",
        params![id],
    )?;
    c.exec_cached(
        "DELETE FROM effects WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1",
        params![id, prefix, upper],
    )?;
    c.exec_cached(
        "DELETE FROM effect_attempts WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1",
        params![id, prefix, upper],
    )?;
    c.exec_cached("DELETE FROM waits WHERE execution_id = ?1", params![id])?;
    c.exec_cached("DELETE FROM events WHERE execution_id = ?1", params![id])?;
    c.exec_cached("DELETE FROM history WHERE execution_id = ?1", params![id])?;
    c.exec_cached(
        "DELETE FROM execution_traces WHERE execution_id = ?1",
        params![id],
    )?;
    let tasks: bool = c.query_row_cached(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'worker_tasks')",
        [],
        |r| r.get(0),
    )?;
    if tasks {
        // A task's key is the journal key of its effect.
        c.exec_cached(
            "DELETE FROM worker_tasks WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1",
            params![id, prefix, upper],
        )?;
    }
    c.exec_cached("DELETE FROM executions WHERE id = ?1", params![id])?;
    Ok(())
}

impl RetentionStore for SqliteStore {
    fn take_expired(
        &self,
        cutoff_ms: i64,
        owner: &str,
        now: i64,
        until_ms: i64,
        limit: u32,
    ) -> Result<Vec<ExecutionRow>, StoreError> {
        let owner = owner.to_string();
        self.write_lazy(move |c| {
            let mut ids: Vec<String> = Vec::new();
            // One status at a time: each walks `executions_status` in `seq`
            // order and stops at the limit.
            for status in TERMINAL {
                let left = i64::from(limit) - ids.len() as i64;
                if left <= 0 {
                    break;
                }
                let mut st = c.prepare_cached(
                    "SELECT id FROM executions WHERE status = ?1 AND updated_ms < ?2
                       AND (owner IS NULL OR owner = ?3 OR lease_until < ?4) ORDER BY seq LIMIT ?5",
                )?;
                let found = st
                    .query_map(params![status, cutoff_ms, owner, now, left], |r| r.get(0))?
                    .collect::<Result<Vec<String>, _>>()?;
                ids.extend(found);
            }
            let mut rows = Vec::with_capacity(ids.len());
            for id in &ids {
                c.exec_cached(
                    "UPDATE executions SET owner = ?2, lease_until = ?3 WHERE id = ?1",
                    params![id, owner, until_ms],
                )?;
                if let Some(row) = get_exec(c, id)? {
                    rows.push(row);
                }
            }
            Ok(rows)
        })
    }

    fn delete_taken(&self, ids: &[String], owner: &str) -> Result<u64, StoreError> {
        let mut deleted = 0;
        for chunk in ids.chunks(DELETE_CHUNK) {
            let started = std::time::Instant::now();
            deleted += self.delete_chunk(chunk.to_vec(), owner.to_string())?;
            yield_after(started);
        }
        Ok(deleted)
    }

    fn delete_execution(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let status: Option<String> = c
                .query_row_cached(
                    "SELECT status FROM executions WHERE id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .optional()?;
            match status {
                None => Err(StoreError::NotFound(format!("execution {id:?}"))),
                Some(s) if !TERMINAL.contains(&s.as_str()) => Err(StoreError::Conflict(format!(
                    "execution {id:?} is {s}: only a completed, failed or cancelled execution can be deleted"
                ))),
                Some(_) => delete_all(c, &id),
            }
        })
    }
}

impl SqliteStore {
    /// Deletes the executions of `ids` that `owner` still holds and that
    /// are terminal, in one write job; returns how many.
    fn delete_chunk(&self, ids: Vec<String>, owner: String) -> Result<u64, StoreError> {
        // Lazy (no flush of its own, as the take): a delete lost to a crash
        // of the machine leaves the rows to be taken (and archived) again;
        // nothing is deleted unarchived either way.
        self.write_lazy(move |c| {
            let mut deleted = 0;
            for id in &ids {
                let held: Option<String> = c
                    .query_row_cached(
                        "SELECT status FROM executions WHERE id = ?1 AND owner = ?2",
                        params![id, owner],
                        |r| r.get(0),
                    )
                    .optional()?;
                if held.is_some_and(|s| TERMINAL.contains(&s.as_str())) {
                    delete_all(c, id)?;
                    deleted += 1;
                }
            }
            Ok(deleted)
        })
    }
}
