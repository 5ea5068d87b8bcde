//! The pause rows of the SQLite backend (`crate::pause`):
//! `executions.paused` and `paused_programs`.

use super::SqliteStore;
use super::cached::Cached;
use super::queries::add_history;
use crate::pause::rows::{PauseState, PauseStore};
use crate::store::{StoreError, TERMINAL};
use rusqlite::{OptionalExtension, params};

impl PauseStore for SqliteStore {
    fn set_execution_paused(&self, id: &str, paused: bool, now: i64) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let row: Option<(String, i64)> = c
                .query_row_cached(
                    "SELECT status, paused FROM executions WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((status, was)) = row else {
                return Err(StoreError::NotFound(format!("execution {id:?}")));
            };
            if paused && TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!(
                    "execution {id:?} is {status}: only an unfinished execution can be paused"
                )));
            }
            if (was != 0) == paused {
                return Ok(false);
            }
            c.exec_cached(
                "UPDATE executions SET paused = ?2, updated_ms = ?3 WHERE id = ?1",
                params![id, i64::from(paused), now],
            )?;
            let kind = if paused { "paused" } else { "unpaused" };
            add_history(c, &id, now, kind, &serde_json::json!({"by": "operator"}))?;
            Ok(true)
        })
    }

    fn set_program_paused(&self, name: &str, paused: bool, now: i64) -> Result<bool, StoreError> {
        let name = name.to_string();
        self.write(move |c| {
            let n = if paused {
                c.exec_cached(
                    "INSERT OR IGNORE INTO paused_programs (name, paused_ms) VALUES (?1, ?2)",
                    params![name, now],
                )?
            } else {
                c.exec_cached("DELETE FROM paused_programs WHERE name = ?1", params![name])?
            };
            Ok(n == 1)
        })
    }

    fn paused_programs(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached("SELECT name FROM paused_programs ORDER BY name")?;
            let v = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn pause_state(&self, id: &str) -> Result<Option<PauseState>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT e.paused, EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   FROM executions e WHERE e.id = ?1",
                params![id],
                |r| {
                    Ok(PauseState {
                        execution: r.get::<_, i64>(0)? != 0,
                        program: r.get::<_, i64>(1)? != 0,
                    })
                },
            )
            .optional()?)
        })
    }
}
