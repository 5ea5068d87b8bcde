//! The schedules of the PostgreSQL backend (`crate::schedule`, schema v12).
//! Two nodes passing the same schedule at once: the row is locked only by
//! an advance whose compare-and-set matches (`SKIP LOCKED`); the other
//! finds it held (`Advanced::Busy`, tried again) or the cursor moved
//! (`Advanced::Moved`) and writes nothing.

use super::PgStore;
use super::conn::{Conn, JobResult};
use super::queries::{add_history, insert_exec};
use crate::schedule::rows::{Advanced, ScheduleAdvance, ScheduleRow, ScheduleStore};
use crate::store::StoreError;
use crate::values::TaggedList;
use postgres::{GenericClient, Row};

const COLS: &str = "name, program, args, spec_kind, spec, overlap, catchup, catchup_window_ms, paused, next_due_ms, buffered_ms, last_execution_id, last_error, ticks_started, ticks_skipped, created_ms, updated_ms, namespace";

fn schedule_row(r: &Row) -> Result<ScheduleRow, postgres::Error> {
    Ok(ScheduleRow {
        name: r.try_get(0)?,
        program: r.try_get(1)?,
        args: TaggedList::from_stored(r.try_get(2)?),
        spec_kind: r.try_get(3)?,
        spec: r.try_get(4)?,
        overlap: r.try_get(5)?,
        catchup: r.try_get(6)?,
        catchup_window_ms: r.try_get(7)?,
        paused: r.try_get(8)?,
        next_due_ms: r.try_get(9)?,
        buffered_ms: r.try_get(10)?,
        last_execution_id: r.try_get(11)?,
        last_error: r.try_get(12)?,
        ticks_started: r.try_get(13)?,
        ticks_skipped: r.try_get(14)?,
        created_ms: r.try_get(15)?,
        updated_ms: r.try_get(16)?,
        namespace: r.try_get(17)?,
    })
}

fn rows(
    c: &mut Conn<'_, impl GenericClient>,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> JobResult<Vec<ScheduleRow>> {
    let rows = c.query(sql, params)?;
    Ok(rows
        .iter()
        .map(schedule_row)
        .collect::<Result<_, postgres::Error>>()?)
}

fn not_found(name: &str) -> StoreError {
    StoreError::NotFound(format!("schedule {name:?}"))
}

impl ScheduleStore for PgStore {
    fn create_schedule(&self, row: &ScheduleRow) -> Result<(), StoreError> {
        let row = row.clone();
        self.write(move |c| {
            let args = crate::store::args_text(&row.args)?;
            let args = args.as_ref();
            let n = c.execute(
                &format!("INSERT INTO schedules ({COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) ON CONFLICT (name) DO NOTHING"),
                &[
                    &row.name,
                    &row.program,
                    &args,
                    &row.spec_kind,
                    &row.spec,
                    &row.overlap,
                    &row.catchup,
                    &row.catchup_window_ms,
                    &row.paused,
                    &row.next_due_ms,
                    &row.buffered_ms,
                    &row.last_execution_id,
                    &row.last_error,
                    &row.ticks_started,
                    &row.ticks_skipped,
                    &row.created_ms,
                    &row.updated_ms,
                    &row.namespace,
                ],
            )?;
            if n == 0 {
                return Err(StoreError::Conflict(format!(
                    "schedule {:?} already exists",
                    row.name
                ))
                .into());
            }
            Ok(())
        })
    }

    fn get_schedule(&self, name: &str) -> Result<Option<ScheduleRow>, StoreError> {
        self.read(|c| {
            Ok(rows(
                c,
                &format!("SELECT {COLS} FROM schedules WHERE name = $1"),
                &[&name],
            )?
            .into_iter()
            .next())
        })
    }

    fn list_schedules(&self) -> Result<Vec<ScheduleRow>, StoreError> {
        self.read(|c| {
            rows(
                c,
                &format!("SELECT {COLS} FROM schedules ORDER BY name"),
                &[],
            )
        })
    }

    fn due_schedules(&self, now: i64, limit: u32) -> Result<Vec<ScheduleRow>, StoreError> {
        let limit = i64::from(limit);
        self.read(|c| {
            rows(
                c,
                &format!("SELECT {COLS} FROM schedules WHERE NOT paused AND (next_due_ms <= $1 OR buffered_ms IS NOT NULL) ORDER BY next_due_ms LIMIT $2"),
                &[&now, &limit],
            )
        })
    }

    fn set_schedule_paused(
        &self,
        name: &str,
        paused: bool,
        next_due_ms: Option<i64>,
        now: i64,
    ) -> Result<(), StoreError> {
        let name = name.to_string();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE schedules SET paused = $2, next_due_ms = coalesce($3, next_due_ms), updated_ms = $4 WHERE name = $1",
                &[&name, &paused, &next_due_ms, &now],
            )?;
            if n == 0 {
                return Err(not_found(&name).into());
            }
            Ok(())
        })
    }

    fn delete_schedule(&self, name: &str) -> Result<(), StoreError> {
        let name = name.to_string();
        self.write(move |c| {
            if c.execute("DELETE FROM schedules WHERE name = $1", &[&name])? == 0 {
                return Err(not_found(&name).into());
            }
            Ok(())
        })
    }

    fn advance_schedule(&self, a: &ScheduleAdvance) -> Result<Advanced, StoreError> {
        let a = a.clone();
        // The cursor's row is taken with `SKIP LOCKED`, and only when the
        // compare-and-set matches: the due condition is inside the locking
        // statement, so an advance planned from a stale read (it will
        // miss) never holds the row. A row another node's pass holds (its
        // group commit may lock several schedules, in any order) is left
        // instead of waited for, so two nodes batching the same schedules
        // in opposite orders never deadlock; the caller learns it was
        // `Busy` (the row, read again, still matches) and tries again once
        // the holder's transaction ended. A tick is never lost: the cursor
        // moves only with the commit that inserts the tick's execution.
        self.write(move |c| {
            let last = a.executions.last().map(|(_, e)| e.id.clone());
            let skipped = a.skipped as i64;
            let moved = c.execute(
                "UPDATE schedules SET next_due_ms = $4, buffered_ms = $5, last_execution_id = coalesce($6, last_execution_id), last_error = $7, ticks_skipped = ticks_skipped + $8, updated_ms = $9 WHERE name = (SELECT name FROM schedules WHERE name = $1 AND NOT paused AND next_due_ms = $2 AND buffered_ms IS NOT DISTINCT FROM $3 FOR UPDATE SKIP LOCKED) AND NOT paused AND next_due_ms = $2 AND buffered_ms IS NOT DISTINCT FROM $3",
                &[
                    &a.name,
                    &a.expected_next_due_ms,
                    &a.expected_buffered_ms,
                    &a.next_due_ms,
                    &a.buffered_ms,
                    &last,
                    &a.last_error,
                    &skipped,
                    &a.now_ms,
                ],
            )?;
            if moved == 0 {
                // A plain read (this statement's snapshot, no lock): the
                // row still matching means it was skipped as locked.
                let still = c.query(
                    "SELECT 1 FROM schedules WHERE name = $1 AND NOT paused AND next_due_ms = $2 AND buffered_ms IS NOT DISTINCT FROM $3",
                    &[&a.name, &a.expected_next_due_ms, &a.expected_buffered_ms],
                )?;
                return Ok(if still.is_empty() {
                    Advanced::Moved
                } else {
                    Advanced::Busy
                });
            }
            let mut inserted = 0u64;
            for (tick, new) in &a.executions {
                if insert_exec(c, new, a.now_ms)? == 1 {
                    inserted += 1;
                    add_history(
                        c,
                        &new.id,
                        a.now_ms,
                        "scheduled",
                        &serde_json::json!({"schedule": a.name, "tick_ms": tick}),
                    )?;
                }
            }
            let started = inserted as i64;
            c.execute(
                "UPDATE schedules SET ticks_started = ticks_started + $2 WHERE name = $1",
                &[&a.name, &started],
            )?;
            Ok(Advanced::Committed(inserted))
        })
    }
}
