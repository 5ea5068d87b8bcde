//! The pause rows of the PostgreSQL backend (`crate::pause`):
//! `executions.paused` and `paused_programs`. A program's pause is read by
//! every claim (`NOT EXISTS` on `paused_programs`), so an execution started
//! by another node while the pause commits is held too.

use super::PgStore;
use super::queries::add_history;
use crate::pause::rows::{PauseState, PauseStore};
use crate::store::{StoreError, TERMINAL};

impl PauseStore for PgStore {
    fn set_execution_paused(&self, id: &str, paused: bool, now: i64) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let Some(row) = c.query_opt(
                "SELECT status, paused FROM executions WHERE id = $1 FOR UPDATE",
                &[&id],
            )?
            else {
                return Err(StoreError::NotFound(format!("execution {id:?}")).into());
            };
            let status: String = row.try_get(0)?;
            let was: bool = row.try_get(1)?;
            if paused && TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!(
                    "execution {id:?} is {status}: only an unfinished execution can be paused"
                ))
                .into());
            }
            if was == paused {
                return Ok(false);
            }
            c.execute(
                "UPDATE executions SET paused = $2, updated_ms = $3 WHERE id = $1",
                &[&id, &paused, &now],
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
                c.execute(
                    "INSERT INTO paused_programs (name, paused_ms) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                    &[&name, &now],
                )?
            } else {
                c.execute("DELETE FROM paused_programs WHERE name = $1", &[&name])?
            };
            Ok(n == 1)
        })
    }

    fn paused_programs(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let rows = c.query("SELECT name FROM paused_programs ORDER BY name", &[])?;
            Ok(rows
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?)
        })
    }

    fn pause_state(&self, id: &str) -> Result<Option<PauseState>, StoreError> {
        self.read(|c| {
            let row = c.query_opt(
                "SELECT e.paused, EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   FROM executions e WHERE e.id = $1",
                &[&id],
            )?;
            match row {
                None => Ok(None),
                Some(r) => Ok(Some(PauseState {
                    execution: r.try_get(0)?,
                    program: r.try_get(1)?,
                })),
            }
        })
    }
}
