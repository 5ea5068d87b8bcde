//! Retention of the PostgreSQL backend (`crate::retention`). Two nodes
//! taking batches at once: `FOR UPDATE SKIP LOCKED` passes over the rows
//! the other is marking, and the mark (owner, lease) keeps them apart
//! until the other's delete.
//!
//! Each call runs on a connection of its own, outside the store's group
//! commits: a batch's deletes never hold up the workers' checkpoints that
//! would otherwise share its transaction.

use super::PgStore;
use super::conn::{Cache, Conn, JobResult};
use super::queries::get_exec;
use super::rows::in_journal_of;
use crate::retention::{DELETE_CHUNK, RetentionStore, yield_after};
use crate::store::{ExecutionRow, StoreError, TERMINAL};
use postgres::GenericClient;

impl PgStore {
    /// Runs `f` in one transaction on a connection of its own.
    fn retention_tx<R>(
        &self,
        f: impl FnOnce(&mut Conn<'_, postgres::Transaction<'_>>) -> JobResult<R>,
    ) -> Result<R, StoreError> {
        let mut client = self.target.connect()?;
        in_tx(&mut client, f)
    }
}

/// Runs `f` in one transaction on `client`.
fn in_tx<R>(
    client: &mut postgres::Client,
    f: impl FnOnce(&mut Conn<'_, postgres::Transaction<'_>>) -> JobResult<R>,
) -> Result<R, StoreError> {
    let mut tx = client.transaction()?;
    let mut cache = Cache::new();
    let r = f(&mut Conn {
        c: &mut tx,
        cache: &mut cache,
    })
    .map_err(StoreError::from)?;
    tx.commit()?;
    Ok(r)
}

/// Deletes execution `$1` and everything keyed by it.
fn delete_all(c: &mut Conn<'_, impl GenericClient>, id: &str) -> JobResult<()> {
    c.execute("DELETE FROM checkpoints WHERE execution_id = $1", &[&id])?;
    // The journal's key range (`effects` has no `execution_id` index since
    // the migration that dropped `effects_exec`).
    c.execute(
        concat!("DELETE FROM effects WHERE ", in_journal_of!("$1")),
        &[&id],
    )?;
    c.execute(
        concat!("DELETE FROM effect_attempts WHERE ", in_journal_of!("$1")),
        &[&id],
    )?;
    c.execute("DELETE FROM waits WHERE execution_id = $1", &[&id])?;
    c.execute("DELETE FROM events WHERE execution_id = $1", &[&id])?;
    c.execute("DELETE FROM history WHERE execution_id = $1", &[&id])?;
    c.execute(
        "DELETE FROM execution_traces WHERE execution_id = $1",
        &[&id],
    )?;
    let tasks: bool = c
        .query_one("SELECT to_regclass('worker_tasks') IS NOT NULL", &[])?
        .try_get(0)?;
    if tasks {
        c.execute("DELETE FROM worker_tasks WHERE execution_id = $1", &[&id])?;
    }
    c.execute("DELETE FROM executions WHERE id = $1", &[&id])?;
    Ok(())
}

impl RetentionStore for PgStore {
    fn take_expired(
        &self,
        cutoff_ms: i64,
        owner: &str,
        now: i64,
        until_ms: i64,
        limit: u32,
    ) -> Result<Vec<ExecutionRow>, StoreError> {
        self.retention_tx(|c| {
            let mut ids: Vec<String> = Vec::new();
            // One status at a time: each walks `executions_status_seq`.
            for status in TERMINAL {
                let left = i64::from(limit) - ids.len() as i64;
                if left <= 0 {
                    break;
                }
                let rows = c.query(
                    "UPDATE executions SET owner = $3, lease_until = $5 WHERE id IN (
                       SELECT id FROM executions WHERE status = $1 AND updated_ms < $2
                         AND (owner IS NULL OR owner = $3 OR lease_until < $4)
                         ORDER BY seq LIMIT $6 FOR UPDATE SKIP LOCKED)
                     RETURNING id",
                    &[status, &cutoff_ms, &owner, &now, &until_ms, &left],
                )?;
                for r in &rows {
                    ids.push(r.try_get(0)?);
                }
            }
            let mut rows = Vec::with_capacity(ids.len());
            for id in &ids {
                if let Some(row) = get_exec(c, id)? {
                    rows.push(row);
                }
            }
            rows.sort_by_key(|r| r.seq);
            Ok(rows)
        })
    }

    fn delete_taken(&self, ids: &[String], owner: &str) -> Result<u64, StoreError> {
        let mut deleted = 0;
        // Short transactions on one connection, each followed by a pause:
        // the database's CPU and I/O are the workers' too.
        let mut client = self.target.connect()?;
        for chunk in ids.chunks(DELETE_CHUNK) {
            let started = std::time::Instant::now();
            deleted += in_tx(&mut client, |c| {
                let terminal: Vec<String> = TERMINAL.iter().map(|s| s.to_string()).collect();
                let held = c.query(
                    "SELECT id FROM executions WHERE id = ANY($1) AND owner = $2 AND status = ANY($3) FOR UPDATE",
                    &[&chunk, &owner, &terminal],
                )?;
                let mut deleted = 0;
                for r in &held {
                    let id: String = r.try_get(0)?;
                    delete_all(c, &id)?;
                    deleted += 1;
                }
                Ok(deleted)
            })?;
            yield_after(started);
        }
        Ok(deleted)
    }

    fn delete_execution(&self, id: &str) -> Result<(), StoreError> {
        self.retention_tx(|c| {
            let row = c.query_opt(
                "SELECT status FROM executions WHERE id = $1 FOR UPDATE",
                &[&id],
            )?;
            let Some(row) = row else {
                return Err(StoreError::NotFound(format!("execution {id:?}")).into());
            };
            let status: String = row.try_get(0)?;
            if !TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!(
                    "execution {id:?} is {status}: only a completed, failed or cancelled execution can be deleted"
                ))
                .into());
            }
            delete_all(c, id)
        })
    }
}
