//! The one-statement status read of the SQLite backend
//! (`crate::status_read`).

use super::SqliteStore;
use super::cached::Cached;
use super::queries::{exec_row, finish_row, journal_range};
use crate::pause::PauseState;
use crate::status_read::{StatusRead, StatusStore, parse_queued, waiting};
use crate::store::{AttemptRow, StoreError, status_cols};
use rusqlite::{OptionalExtension, params};

/// `status_cols()` (columns 0 to 20), then `paused` (21), the program's pause
/// (22), the last failed call of an unfinished execution (23 to 29),
/// whether its effect is journalled (30) and the queues it waits in (31,
/// a JSON array of `[scope, ahead]`, sorted here). The last failed call is the row the
/// execution's attempts sort last by (`at_ms`, key, attempt), as
/// `attempts_of` lists them.
fn statement() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        format!(
            "SELECT e.*,
               EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name),
               a.idempotency_key, a.attempt, a.execution_id, a.key, a.error, a.at_ms, a.next_due_ms,
               EXISTS (SELECT 1 FROM effects j WHERE j.idempotency_key = a.idempotency_key),
               CASE WHEN e.status NOT IN ('completed', 'failed', 'cancelled') THEN
                 (SELECT json_group_array(json_array(w.scope,
                    (SELECT count(*) FROM flow_waiters b WHERE b.scope = w.scope AND b.seq < w.seq AND b.expires_ms >= ?4)))
                  FROM flow_waiters w WHERE w.holder = ?1 AND w.expires_ms >= ?4)
               END
             FROM (SELECT {cols}, paused FROM executions WHERE id = ?1) e
             LEFT JOIN effect_attempts a
               ON e.status NOT IN ('completed', 'failed', 'cancelled')
              AND (a.idempotency_key, a.attempt) = (SELECT t.idempotency_key, t.attempt FROM effect_attempts t
                               WHERE t.idempotency_key >= ?2 AND t.idempotency_key < ?3 AND t.execution_id = ?1
                               ORDER BY t.at_ms DESC, t.idempotency_key DESC, t.attempt DESC LIMIT 1)",
            cols = status_cols()
        )
    })
}

impl StatusStore for SqliteStore {
    fn status_read(&self, id: &str, now: i64) -> Result<Option<StatusRead>, StoreError> {
        let (from, to) = journal_range(id);
        self.read(|c| {
            let read = c
                .query_row_cached(statement(), params![id, from, to, now], |r| {
                    let row = exec_row(r)?;
                    let pause = PauseState {
                        execution: r.get::<_, i64>(21)? != 0,
                        program: r.get::<_, i64>(22)? != 0,
                    };
                    let last = match r.get::<_, Option<String>>(23)? {
                        Some(idempotency_key) => Some(AttemptRow {
                            idempotency_key,
                            attempt: r.get(24)?,
                            execution_id: r.get(25)?,
                            key: r.get(26)?,
                            error: r.get(27)?,
                            at_ms: r.get(28)?,
                            next_due_ms: r.get(29)?,
                        }),
                        None => None,
                    };
                    let journalled = r.get::<_, i64>(30)? != 0;
                    let queued: Option<String> = r.get(31)?;
                    Ok((row, pause, waiting(last, journalled), queued))
                })
                .optional()?;
            let Some((row, pause, retry, queued)) = read else {
                return Ok(None);
            };
            let row = finish_row(row)?;
            let terminal = row.is_terminal();
            Ok(Some(StatusRead {
                row,
                retry,
                pause: if terminal {
                    PauseState::default()
                } else {
                    pause
                },
                // By scope, as `FlowStore::queued` lists them (SQLite's
                // BINARY collation orders text by its bytes).
                queued: {
                    let mut q = parse_queued(queued)?;
                    q.sort();
                    q
                },
            }))
        })
    }
}
