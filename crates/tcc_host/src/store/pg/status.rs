//! The one-statement status read of the PostgreSQL backend
//! (`crate::status_read`): one round trip where a status poll made four.

use super::PgStore;
use super::rows::{exec_row, in_journal_of};
use crate::pause::PauseState;
use crate::status_read::{StatusRead, StatusStore, parse_queued, waiting};
use crate::store::{AttemptRow, StoreError, status_cols};

/// `status_cols()` (columns 0 to 20), then `paused` (21), the program's pause
/// (22), the last failed call of an unfinished execution (23 to 29),
/// whether its effect is journalled (30) and the queues it waits in (31,
/// JSON `[[scope, ahead], …]` in the order `ORDER BY scope` gives, as
/// `FlowStore::queued` lists them). The last failed call is the row the
/// execution's attempts sort last by (`at_ms`, key, attempt), as
/// `attempts_of` lists them.
fn statement() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        format!(
            concat!(
                "SELECT e.*,
                   EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name),
                   a.idempotency_key, a.attempt, a.execution_id, a.key, a.error, a.at_ms, a.next_due_ms,
                   EXISTS (SELECT 1 FROM effects j WHERE j.idempotency_key = a.idempotency_key),
                   CASE WHEN e.status NOT IN ('completed', 'failed', 'cancelled') THEN
                     (SELECT json_agg(json_build_array(w.scope,
                        (SELECT count(*) FROM flow_waiters b WHERE b.scope = w.scope AND b.seq < w.seq AND b.expires_ms >= $2)) ORDER BY w.scope)::TEXT
                      FROM flow_waiters w WHERE w.holder = $1 AND w.expires_ms >= $2)
                   END
                 FROM (SELECT {cols}, paused FROM executions WHERE id = $1) e
                 LEFT JOIN LATERAL (
                   SELECT idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms
                     FROM effect_attempts
                    WHERE e.status NOT IN ('completed', 'failed', 'cancelled') AND ",
                in_journal_of!("$1"),
                "
                    ORDER BY at_ms DESC, idempotency_key DESC, attempt DESC LIMIT 1
                 ) a ON TRUE"
            ),
            cols = status_cols()
        )
    })
}

impl StatusStore for PgStore {
    fn status_read(&self, id: &str, now: i64) -> Result<Option<StatusRead>, StoreError> {
        self.read(|c| {
            let Some(r) = c.query_opt(statement(), &[&id, &now])? else {
                return Ok(None);
            };
            let row = exec_row(&r)?;
            let terminal = row.is_terminal();
            let last = match r.try_get::<_, Option<String>>(23)? {
                Some(idempotency_key) => Some(AttemptRow {
                    idempotency_key,
                    attempt: r.try_get::<_, i32>(24)?.max(0) as u32,
                    execution_id: r.try_get(25)?,
                    key: r.try_get(26)?,
                    error: r.try_get(27)?,
                    at_ms: r.try_get(28)?,
                    next_due_ms: r.try_get(29)?,
                }),
                None => None,
            };
            let pause = PauseState {
                execution: r.try_get(21)?,
                program: r.try_get(22)?,
            };
            Ok(Some(StatusRead {
                row,
                retry: waiting(last, r.try_get(30)?),
                pause: if terminal {
                    PauseState::default()
                } else {
                    pause
                },
                queued: parse_queued(r.try_get(31)?)?,
            }))
        })
    }
}
