//! The schedules of the SQLite backend (`crate::schedule`, schema v12).

use super::SqliteStore;
use super::cached::Cached;
use super::queries::{add_history, insert_exec};
use crate::schedule::rows::{Advanced, ScheduleAdvance, ScheduleRow, ScheduleStore};
use crate::store::StoreError;
use crate::values::TaggedList;
use rusqlite::{OptionalExtension, Row, params};

const COLS: &str = "name, program, args, spec_kind, spec, overlap, catchup, catchup_window_ms, paused, next_due_ms, buffered_ms, last_execution_id, last_error, ticks_started, ticks_skipped, created_ms, updated_ms, namespace";

fn schedule_row(r: &Row) -> rusqlite::Result<ScheduleRow> {
    Ok(ScheduleRow {
        name: r.get(0)?,
        program: r.get(1)?,
        args: TaggedList::from_stored(r.get(2)?),
        spec_kind: r.get(3)?,
        spec: r.get(4)?,
        overlap: r.get(5)?,
        catchup: r.get(6)?,
        catchup_window_ms: r.get(7)?,
        paused: r.get::<_, i64>(8)? != 0,
        next_due_ms: r.get(9)?,
        buffered_ms: r.get(10)?,
        last_execution_id: r.get(11)?,
        last_error: r.get(12)?,
        ticks_started: r.get(13)?,
        ticks_skipped: r.get(14)?,
        created_ms: r.get(15)?,
        updated_ms: r.get(16)?,
        namespace: r.get(17)?,
    })
}

fn not_found(name: &str) -> StoreError {
    StoreError::NotFound(format!("schedule {name:?}"))
}

impl ScheduleStore for SqliteStore {
    fn create_schedule(&self, row: &ScheduleRow) -> Result<(), StoreError> {
        let row = row.clone();
        self.write(move |c| {
            let args = crate::store::args_text(&row.args)?;
            let n = c.exec_cached(
                &format!("INSERT OR IGNORE INTO schedules ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"),
                params![
                    row.name,
                    row.program,
                    args.as_ref(),
                    row.spec_kind,
                    row.spec,
                    row.overlap,
                    row.catchup,
                    row.catchup_window_ms,
                    i64::from(row.paused),
                    row.next_due_ms,
                    row.buffered_ms,
                    row.last_execution_id,
                    row.last_error,
                    row.ticks_started,
                    row.ticks_skipped,
                    row.created_ms,
                    row.updated_ms,
                    row.namespace
                ],
            )?;
            if n == 0 {
                return Err(StoreError::Conflict(format!(
                    "schedule {:?} already exists",
                    row.name
                )));
            }
            Ok(())
        })
    }

    fn get_schedule(&self, name: &str) -> Result<Option<ScheduleRow>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                &format!("SELECT {COLS} FROM schedules WHERE name = ?1"),
                params![name],
                schedule_row,
            )
            .optional()?)
        })
    }

    fn list_schedules(&self) -> Result<Vec<ScheduleRow>, StoreError> {
        self.read(|c| {
            let mut st =
                c.prepare_cached(&format!("SELECT {COLS} FROM schedules ORDER BY name"))?;
            let rows = st.query_map([], schedule_row)?.collect::<Result<_, _>>()?;
            Ok(rows)
        })
    }

    fn due_schedules(&self, now: i64, limit: u32) -> Result<Vec<ScheduleRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {COLS} FROM schedules WHERE paused = 0 AND (next_due_ms <= ?1 OR buffered_ms IS NOT NULL) ORDER BY next_due_ms LIMIT ?2"
            ))?;
            let rows = st
                .query_map(params![now, limit], schedule_row)?
                .collect::<Result<_, _>>()?;
            Ok(rows)
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
            let n = c.exec_cached(
                "UPDATE schedules SET paused = ?2, next_due_ms = coalesce(?3, next_due_ms), updated_ms = ?4 WHERE name = ?1",
                params![name, i64::from(paused), next_due_ms, now],
            )?;
            if n == 0 {
                return Err(not_found(&name));
            }
            Ok(())
        })
    }

    fn delete_schedule(&self, name: &str) -> Result<(), StoreError> {
        let name = name.to_string();
        self.write(move |c| {
            if c.exec_cached("DELETE FROM schedules WHERE name = ?1", params![name])? == 0 {
                return Err(not_found(&name));
            }
            Ok(())
        })
    }

    fn advance_schedule(&self, a: &ScheduleAdvance) -> Result<Advanced, StoreError> {
        let a = a.clone();
        self.write(move |c| {
            let last = a.executions.last().map(|(_, e)| e.id.clone());
            let moved = c.exec_cached(
                "UPDATE schedules SET next_due_ms = ?4, buffered_ms = ?5, last_execution_id = coalesce(?6, last_execution_id), last_error = ?7, ticks_skipped = ticks_skipped + ?8, updated_ms = ?9 WHERE name = ?1 AND paused = 0 AND next_due_ms = ?2 AND buffered_ms IS ?3",
                params![
                    a.name,
                    a.expected_next_due_ms,
                    a.expected_buffered_ms,
                    a.next_due_ms,
                    a.buffered_ms,
                    last,
                    a.last_error,
                    a.skipped as i64,
                    a.now_ms
                ],
            )?;
            if moved == 0 {
                return Ok(Advanced::Moved);
            }
            let mut inserted = 0u64;
            for (tick, new) in &a.executions {
                let args = crate::store::args_text(&new.args)?;
                let args = crate::store::packed::Packed::borrowed(&args);
                if insert_exec(c, new, &args, a.now_ms)? == 1 {
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
            c.exec_cached(
                "UPDATE schedules SET ticks_started = ticks_started + ?2 WHERE name = ?1",
                params![a.name, inserted as i64],
            )?;
            Ok(Advanced::Committed(inserted))
        })
    }
}
