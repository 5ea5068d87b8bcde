//! The [`Store`] implementation of the SQLite backend: every query it
//! runs, each write as a job of the store's group commit.

use super::SqliteStore;
use super::cached::Cached;
use crate::store::packed::{Packed, Stored, Unpacked};
use crate::store::{
    AttemptRow, CheckpointRow, CheckpointTx, EXEC_COLS, ExecutionRow, HistoryRow, JournalRow,
    ListFilter, NewExecution, PageQuery, Registration, ResumeOutcome, Store, StoreCounts,
    StoreError, TERMINAL, WaitRow, Wake, journal_history_detail, json_text, parse_json,
};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value as J;

pub(super) fn exec_row(
    r: &Row,
) -> rusqlite::Result<(ExecutionRow, Stored, Option<Stored>, Option<String>)> {
    Ok((
        ExecutionRow {
            id: r.get(0)?,
            artifact_hash: r.get(1)?,
            program_name: r.get(2)?,
            args: Default::default(),
            status: r.get(4)?,
            revision: r.get::<_, i64>(5)? as u64,
            owner: r.get(6)?,
            lease_until: r.get(7)?,
            cancel_requested: r.get::<_, i64>(8)? != 0,
            result: None,
            message: r.get(10)?,
            error: r.get(11)?,
            pending: None,
            parent_id: r.get(13)?,
            parent_branch: r.get(14)?,
            created_ms: r.get(15)?,
            updated_ms: r.get(16)?,
            seq: r.get(17)?,
            drive_attempts: r.get::<_, i64>(18)?.clamp(0, i64::from(u32::MAX)) as u32,
            terminate_requested: r.get::<_, i64>(19)? != 0,
            namespace: r.get(20)?,
            stored_traceparent: None,
        },
        r.get::<_, Stored>(3)?,
        r.get::<_, Option<Stored>>(9)?,
        r.get::<_, Option<String>>(12)?,
    ))
}

pub(super) fn finish_row(
    t: (ExecutionRow, Stored, Option<Stored>, Option<String>),
) -> Result<ExecutionRow, StoreError> {
    let (mut row, args, result, pending) = t;
    row.args = crate::values::TaggedList::from(args);
    row.result = result.map(crate::tagged_text::TaggedText::from);
    row.pending = parse_json(pending)?;
    Ok(row)
}

pub(super) fn get_exec(conn: &Connection, id: &str) -> Result<Option<ExecutionRow>, StoreError> {
    let t = conn
        .query_row_cached(
            &format!("SELECT {EXEC_COLS} FROM executions WHERE id = ?1"),
            params![id],
            exec_row,
        )
        .optional()?;
    t.map(finish_row).transpose()
}

/// Inserts `new` with its arguments bound as `args` (its `args` packed:
/// long ones deflated, `crate::store::packed`).
pub(super) fn insert_exec(
    conn: &Connection,
    new: &NewExecution,
    args: &Packed<'_>,
    now: i64,
) -> Result<usize, StoreError> {
    let (pid, pbranch) = match &new.parent {
        Some((p, b)) => (Some(p.as_str()), b.as_deref()),
        None => (None, None),
    };
    let n = conn.exec_cached(
        "INSERT OR IGNORE INTO executions (id, artifact_hash, program_name, args, status, parent_id, parent_branch, created_ms, updated_ms, namespace) VALUES (?1, ?2, ?3, ?4, 'runnable', ?5, ?6, ?7, ?7, COALESCE((SELECT p.namespace FROM executions p WHERE p.id = ?5), ?8))",
        params![
            new.id,
            new.artifact_hash,
            new.program_name,
            args,
            pid,
            pbranch,
            now,
            new.namespace
        ],
    )?;
    if n == 1 {
        add_history(
            conn,
            &new.id,
            now,
            "created",
            &serde_json::json!({"artifact_hash": new.artifact_hash, "program": new.program_name, "parent": pid}),
        )?;
    }
    Ok(n)
}

/// The range of idempotency keys that holds execution `id`'s journal:
/// every key is `{escaped id}:{effect key}` (`store::journal_key`, checked
/// by `journal_put`), i.e. at least `{escaped id}:` and below
/// `{escaped id};` (`;` follows `:` in the binary collation).
pub(super) fn journal_range(id: &str) -> (String, String) {
    let id = crate::store::escape_execution_id(id);
    (format!("{id}:"), format!("{id};"))
}

fn attempt_row(r: &Row) -> rusqlite::Result<AttemptRow> {
    Ok(AttemptRow {
        idempotency_key: r.get(0)?,
        attempt: r.get(1)?,
        execution_id: r.get(2)?,
        key: r.get(3)?,
        error: r.get(4)?,
        at_ms: r.get(5)?,
        next_due_ms: r.get(6)?,
    })
}

pub(super) fn add_history(
    conn: &Connection,
    id: &str,
    now: i64,
    kind: &str,
    detail: &J,
) -> Result<(), StoreError> {
    add_history_text(conn, id, now, kind, &json_text(detail))
}

/// [`add_history`] with the detail already serialised: callers of group
/// commits serialise before they enqueue, so the group's leader (one thread
/// for every caller) only runs the statement.
fn add_history_text(
    conn: &Connection,
    id: &str,
    now: i64,
    kind: &str,
    detail: &str,
) -> Result<(), StoreError> {
    conn.exec_cached(
        "INSERT INTO history (seq, execution_id, at_ms, kind, detail) VALUES (irkit_history_seq(), ?1, ?2, ?3, ?4)",
        params![id, now, kind, detail],
    )?;
    Ok(())
}

fn ready_wake_conn(conn: &Connection, id: &str, now: i64) -> Result<Option<Wake>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, kind, name, branch, due_ms FROM waits WHERE execution_id = ?1 AND delivered = 0 ORDER BY id",
    )?;
    type WaitRow = (i64, String, Option<String>, Option<String>, Option<i64>);
    let waits: Vec<WaitRow> = stmt
        .query_map(params![id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    // The first ready wait wins, so each scan delivers at most one wake.
    for (wid, kind, name, branch, due) in waits {
        match kind.as_str() {
            "timer" if due.unwrap_or(0) <= now => {
                return Ok(Some(Wake {
                    wait_id: wid,
                    kind,
                    branch,
                    value: None,
                    event_seq: None,
                    child_failure: None,
                }));
            }
            "event" => {
                let mut st = conn.prepare_cached(
                    "SELECT seq, payload FROM events WHERE execution_id = ?1 AND name = ?2 AND consumed_by IS NULL ORDER BY seq LIMIT 1",
                )?;
                let first: Option<(i64, Stored)> = st
                    .query_map(params![id, name], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .next()
                    .transpose()?;
                if let Some((seq, payload)) = first {
                    return Ok(Some(Wake {
                        wait_id: wid,
                        kind,
                        branch,
                        value: Some(crate::tagged_text::TaggedText::from(payload)),
                        event_seq: Some(seq),
                        child_failure: None,
                    }));
                }
            }
            "child" => {
                let child = match &name {
                    Some(n) => get_exec(conn, n)?,
                    None => None,
                };
                if let Some(wake) = child.and_then(|ch| Wake::for_child(wid, kind, branch, &ch)) {
                    return Ok(Some(wake));
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

impl Store for SqliteStore {
    fn packs_texts(&self) -> bool {
        true
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError> {
        let (hash, body) = (hash.to_string(), body.to_vec());
        self.write(move |c| {
            c.exec_cached(
                "INSERT OR IGNORE INTO artifacts (hash, body, created_ms) VALUES (?1, ?2, ?3)",
                params![hash, body, crate::ids::now_ms()],
            )?;
            c.exec_cached(
                "UPDATE executions SET error = NULL WHERE artifact_hash = ?1 AND error LIKE 'artifact_missing%'",
                params![hash],
            )?;
            Ok(())
        })
    }

    fn get_artifact(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT body FROM artifacts WHERE hash = ?1",
                params![hash],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn set_program(&self, name: &str, hash: &str) -> Result<(), StoreError> {
        let (name, hash) = (name.to_string(), hash.to_string());
        self.write(move |c| {
            c.exec_cached(
                "INSERT INTO programs (name, hash, updated_ms) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms",
                params![name, hash, crate::ids::now_ms()],
            )?;
            Ok(())
        })
    }

    fn resolve_program(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT hash FROM programs WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn programs(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare("SELECT name, hash FROM programs ORDER BY name")?;
            let v = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn create_executions(&self, new: &[NewExecution]) -> Result<(), StoreError> {
        // Arguments are packed here, by the caller, not inside the job (a
        // long list is deflated, and not copied whole).
        let new: Vec<(NewExecution, Packed<'static>)> = new
            .iter()
            .map(|n| {
                let row = NewExecution {
                    id: n.id.clone(),
                    artifact_hash: n.artifact_hash.clone(),
                    program_name: n.program_name.clone(),
                    args: Default::default(),
                    parent: n.parent.clone(),
                    namespace: n.namespace.clone(),
                };
                // A deflated list (a long request's) is bound as it is.
                Ok((row, n.args.stored().to_packed()))
            })
            .collect::<Result<_, StoreError>>()?;
        self.write(move |c| {
            let now = crate::ids::now_ms();
            for (n, args) in &new {
                if insert_exec(c, n, args, now)? == 0 {
                    return Err(StoreError::Conflict(format!(
                        "execution {:?} already exists",
                        n.id
                    )));
                }
            }
            Ok(())
        })
    }

    fn get_execution(&self, id: &str) -> Result<Option<ExecutionRow>, StoreError> {
        self.read(|c| get_exec(c, id))
    }

    fn cancel_requested(&self, id: &str) -> Result<bool, StoreError> {
        self.read(|c| {
            let requested: Option<i64> = c
                .query_row_cached(
                    "SELECT cancel_requested FROM executions WHERE id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(requested.is_some_and(|r| r != 0))
        })
    }

    fn list_executions(&self, f: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {EXEC_COLS} FROM executions WHERE seq > ?1 AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR program_name = ?3) AND (?4 = 0 OR error LIKE 'artifact_missing%') AND (?6 IS NULL OR namespace = ?6) ORDER BY seq LIMIT ?5"
            ))?;
            let rows = st
                .query_map(
                    params![
                        f.after.unwrap_or(0),
                        f.status,
                        f.program,
                        f.artifact_missing as i64,
                        f.limit.clamp(1, 1000),
                        f.namespace
                    ],
                    exec_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_row).collect()
        })
    }

    fn history(&self, id: &str, after: i64, limit: u32) -> Result<Vec<HistoryRow>, StoreError> {
        let (from, to) = journal_range(id);
        self.read(|c| {
            // History rows and, as `effect` entries, the journal rows that
            // have a place in the sequence (journalled since migration 5).
            let mut st = c.prepare_cached(
                "SELECT seq, at_ms, kind, detail, NULL, NULL, NULL FROM history WHERE execution_id = ?1 AND seq > ?2
                 UNION ALL
                 SELECT history_seq, at_ms, 'effect', NULL, key, idempotency_key, status FROM effects
                   WHERE idempotency_key >= ?4 AND idempotency_key < ?5 AND execution_id = ?1 AND history_seq > ?2
                 ORDER BY 1 LIMIT ?3",
            )?;
            type Entry = (i64, i64, String, Option<String>, Option<String>, Option<String>, Option<String>);
            let rows: Vec<Entry> = st
                .query_map(
                    params![id, after, limit.clamp(1, 10_000), from, to],
                    |r| {
                        Ok((
                            r.get(0)?,
                            r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                            r.get(6)?,
                        ))
                    },
                )?
                .collect::<Result<_, _>>()?;
            rows.into_iter()
                .map(|(seq, at_ms, kind, detail, key, idempotency_key, status)| {
                    let detail = match detail {
                        Some(d) => parse_json(Some(d))?.unwrap_or(J::Null),
                        None => journal_history_detail(key, idempotency_key, status),
                    };
                    Ok(HistoryRow {
                        seq,
                        at_ms,
                        kind,
                        detail,
                    })
                })
                .collect()
        })
    }

    fn history_lists_journal(&self) -> bool {
        true
    }

    fn claim(
        &self,
        id: &str,
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<ExecutionRow>, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write_lazy(move |c| {
            let n = c.exec_cached(
                "UPDATE executions SET owner = ?2, lease_until = ?3, drive_attempts = drive_attempts + 1 WHERE id = ?1 AND (owner IS NULL OR owner = ?2 OR lease_until < ?4) AND error IS NULL AND paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = executions.program_name)",
                params![id, owner, now + lease_ms, now],
            )?;
            if n == 0 {
                return Ok(None);
            }
            static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
            let sql = SQL.get_or_init(|| {
                format!(
                    "SELECT {} FROM executions WHERE id = ?1",
                    crate::store::drive_cols("")
                )
            });
            let t = c.query_row_cached(sql, params![id], exec_row).optional()?;
            t.map(finish_row).transpose()
        })
    }

    fn renew(&self, id: &str, owner: &str, now: i64, lease_ms: i64) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write_lazy(move |c| {
            Ok(c.exec_cached(
                "UPDATE executions SET lease_until = ?3 WHERE id = ?1 AND owner = ?2",
                params![id, owner, now + lease_ms],
            )? == 1)
        })
    }

    fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write_lazy(move |c| {
            c.exec_cached(
                "UPDATE executions SET owner = NULL, lease_until = 0, drive_attempts = 0 WHERE id = ?1 AND owner = ?2",
                params![id, owner],
            )?;
            Ok(())
        })
    }

    fn load_checkpoints(&self, id: &str) -> Result<Vec<CheckpointRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT revision, kind, body FROM checkpoints WHERE execution_id = ?1 AND revision >= COALESCE((SELECT MAX(revision) FROM checkpoints WHERE execution_id = ?1 AND kind = 'snapshot'), 0) ORDER BY revision",
            )?;
            let v = st
                .query_map(params![id], |r| {
                    Ok(CheckpointRow {
                        revision: r.get::<_, i64>(0)? as u64,
                        kind: r.get(1)?,
                        body: r.get::<_, Stored>(2)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn commit_checkpoint(&self, tx: CheckpointTx) -> Result<(), StoreError> {
        // JSON is serialised here, by the caller, not inside the job: the
        // job runs on the group's leader, serially for every caller. The
        // body and result come packed (`Store::pack`: long ones deflated).
        let pending = tx.pending.as_ref().map(json_text);
        let history: Vec<String> = tx.history.iter().map(|(_, d)| json_text(d)).collect();
        self.write(move |c| {
            let now = crate::ids::now_ms();
            let params = params![
                tx.id,
                tx.owner,
                tx.revision as i64,
                tx.status,
                tx.result,
                tx.message,
                pending,
                now,
                tx.revision as i64 - 1
            ];
            // Most checkpoints keep the status (runnable → runnable): then
            // the update leaves `status` alone, so its two indexes are not
            // rewritten (two pages fewer in the WAL per step).
            let mut n = c.exec_cached(
                "UPDATE executions SET revision = ?3, result = ?5, message = ?6, pending = ?7, updated_ms = ?8 WHERE id = ?1 AND owner = ?2 AND revision = ?9 AND status = ?4",
                params,
            )?;
            if n == 0 {
                n = c.exec_cached(
                    "UPDATE executions SET revision = ?3, status = ?4, result = ?5, message = ?6, pending = ?7, updated_ms = ?8,
                       owner = CASE WHEN ?4 IN ('completed', 'failed', 'cancelled') THEN NULL ELSE owner END,
                       lease_until = CASE WHEN ?4 IN ('completed', 'failed', 'cancelled') THEN 0 ELSE lease_until END
                     WHERE id = ?1 AND owner = ?2 AND revision = ?9",
                    params,
                )?;
            }
            if n != 1 {
                return Err(StoreError::Conflict(format!(
                    "execution {}: lease lost or revision moved (expected {})",
                    tx.id,
                    tx.revision - 1
                )));
            }
            c.exec_cached(
                "INSERT INTO checkpoints (execution_id, revision, kind, body) VALUES (?1, ?2, ?3, ?4)",
                params![tx.id, tx.revision as i64, tx.kind, tx.body],
            )?;
            // A failure right after a failed effect keeps the checkpoint
            // before it (the operator's resume point).
            match &tx.resume_key {
                Some(key) => {
                    c.exec_cached(
                        "UPDATE executions SET resume_key = ?2 WHERE id = ?1",
                        params![tx.id, key],
                    )?;
                }
                None if tx.kind == "snapshot" => {
                    c.exec_cached(
                        "DELETE FROM checkpoints WHERE execution_id = ?1 AND revision < ?2",
                        params![tx.id, tx.revision as i64],
                    )?;
                }
                None => {}
            }
            for r in &tx.registrations {
                match r {
                    Registration::Timer { due_ms, branch } => {
                        c.exec_cached(
                            "INSERT INTO waits (execution_id, kind, branch, due_ms) VALUES (?1, 'timer', ?2, ?3)",
                            params![tx.id, branch, due_ms],
                        )?;
                    }
                    Registration::Event {
                        name,
                        wait_id,
                        branch,
                    } => {
                        c.exec_cached(
                            "INSERT INTO waits (execution_id, kind, name, wait_id, branch) VALUES (?1, 'event', ?2, ?3, ?4)",
                            params![tx.id, name, wait_id, branch],
                        )?;
                    }
                    Registration::Child { child, branch } => {
                        insert_exec(c, child, &Packed::borrowed(&crate::store::args_text(&child.args)?), now)?;
                        c.exec_cached(
                            "INSERT INTO waits (execution_id, kind, name, branch) VALUES (?1, 'child', ?2, ?3)",
                            params![tx.id, child.id, branch],
                        )?;
                    }
                }
            }
            if let Some(w) = &tx.consumed {
                c.exec_cached(
                    "UPDATE waits SET delivered = 1 WHERE id = ?1",
                    params![w.wait_id],
                )?;
                if let Some(seq) = w.event_seq {
                    c.exec_cached(
                        "UPDATE events SET consumed_by = ?1 WHERE seq = ?2",
                        params![w.wait_id, seq],
                    )?;
                }
            }
            if TERMINAL.contains(&tx.status.as_str()) {
                c.exec_cached(
                    "UPDATE waits SET delivered = 1 WHERE execution_id = ?1",
                    params![tx.id],
                )?;
            }
            for ((kind, _), detail) in tx.history.iter().zip(&history) {
                add_history_text(c, &tx.id, now, kind, detail)?;
            }
            Ok(())
        })
    }

    fn journal_get(&self, key: &str) -> Result<Option<JournalRow>, StoreError> {
        self.read(|c| {
            let r: Option<(String, String, Unpacked, String, Unpacked)> = c
                .query_row_cached(
                    "SELECT execution_id, key, input, status, result FROM effects WHERE idempotency_key = ?1",
                    params![key],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?;
            r.map(|(execution_id, k, Unpacked(input), status, Unpacked(result))| {
                Ok(JournalRow {
                    idempotency_key: key.to_string(),
                    execution_id,
                    key: k,
                    input,
                    status,
                    result: parse_json(Some(result))?.unwrap_or(J::Null),
                })
            })
            .transpose()
        })
    }

    fn journal_put(&self, row: &JournalRow) -> Result<(), StoreError> {
        // The journal's reads by execution depend on it (`journal_range`).
        row.check_key()?;
        let row = row.clone();
        let input = Packed::copied(&row.input);
        let result = Packed::owned(json_text(&row.result));
        self.write_lazy(move |c| {
            c.exec_cached(
                "INSERT OR IGNORE INTO effects (idempotency_key, execution_id, key, input, status, result, seq, at_ms, history_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT COALESCE(MAX(rowid), 0) + 1 FROM effects), ?7, irkit_history_seq())",
                params![
                    row.idempotency_key,
                    row.execution_id,
                    row.key,
                    input,
                    row.status,
                    result,
                    crate::ids::now_ms()
                ],
            )?;
            // The row is also the execution's `effect` history entry (see
            // `history`): no history row of its own.
            Ok(())
        })
    }

    fn journal_keys(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT idempotency_key FROM effects WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1",
            )?;
            let (from, to) = journal_range(id);
            let v = st
                .query_map(params![id, from, to], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn journal_of(&self, id: &str) -> Result<Vec<JournalRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(
                "SELECT idempotency_key, key, input, status, result FROM effects WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1 ORDER BY seq",
            )?;
            let (from, to) = journal_range(id);
            let rows: Vec<(String, String, Unpacked, String, Unpacked)> = st
                .query_map(params![id, from, to], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect::<Result<_, _>>()?;
            rows.into_iter()
                .map(|(k, key, Unpacked(input), status, Unpacked(result))| {
                    Ok(JournalRow {
                        idempotency_key: k,
                        execution_id: id.to_string(),
                        key,
                        input,
                        status,
                        result: parse_json(Some(result))?.unwrap_or(J::Null),
                    })
                })
                .collect()
        })
    }

    fn record_attempt(&self, row: &AttemptRow) -> Result<(), StoreError> {
        let row = row.clone();
        let detail = json_text(&row.history_detail());
        self.write(move |c| {
            let added = c.exec_cached(
                "INSERT OR IGNORE INTO effect_attempts (idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    row.idempotency_key,
                    row.attempt,
                    row.execution_id,
                    row.key,
                    row.error,
                    row.at_ms,
                    row.next_due_ms
                ],
            )?;
            if added == 1 {
                add_history_text(c, &row.execution_id, row.at_ms, "effect_attempt_failed", &detail)?;
            }
            Ok(())
        })
    }

    fn attempts(&self, idempotency_key: &str) -> Result<Vec<AttemptRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms FROM effect_attempts WHERE idempotency_key = ?1 ORDER BY attempt",
            )?;
            let v = st
                .query_map(params![idempotency_key], attempt_row)?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn attempts_of(&self, id: &str) -> Result<Vec<AttemptRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms FROM effect_attempts WHERE idempotency_key >= ?2 AND idempotency_key < ?3 AND execution_id = ?1 ORDER BY at_ms, idempotency_key, attempt",
            )?;
            let (from, to) = journal_range(id);
            let v = st
                .query_map(params![id, from, to], attempt_row)?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn defer(&self, id: &str, owner: &str, until_ms: i64) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write(move |c| {
            Ok(c.exec_cached(
                "UPDATE executions SET lease_until = ?3, drive_attempts = 0 WHERE id = ?1 AND owner = ?2",
                params![id, owner, until_ms],
            )? == 1)
        })
    }

    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                // One indexed branch per reason to run, so that the cost
                // follows the work to do, not the number of executions
                // ever stored (the scheduler calls this after every drive).
                "SELECT id FROM (
                   SELECT seq, id FROM executions e
                     WHERE status = 'runnable' AND error IS NULL AND lease_until < ?1 AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT seq, id FROM executions e
                     WHERE cancel_requested = 1 AND status = 'suspended' AND error IS NULL AND lease_until < ?1 AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM waits w JOIN executions e ON e.id = w.execution_id
                     WHERE w.delivered = 0 AND w.kind = 'timer' AND w.due_ms <= ?1
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1 AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM events v
                     JOIN waits w ON w.execution_id = v.execution_id AND w.name = v.name
                     JOIN executions e ON e.id = v.execution_id
                     WHERE v.consumed_by IS NULL AND w.delivered = 0 AND w.kind = 'event'
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1 AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM waits w
                     JOIN executions k ON k.id = w.name
                     JOIN executions e ON e.id = w.execution_id
                     WHERE w.delivered = 0 AND w.kind = 'child' AND k.status IN ('completed', 'failed', 'cancelled')
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1 AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                 ) ORDER BY seq LIMIT ?2",
            )?;
            let v = st
                .query_map(params![now, limit], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn next_timer_due(&self) -> Result<Option<i64>, StoreError> {
        self.read(|c| {
            // In due order along `waits_open`: the first timer of an
            // execution that is not paused (`crate::pause`).
            Ok(c.query_row_cached(
                "SELECT w.due_ms FROM waits w JOIN executions e ON e.id = w.execution_id
                   WHERE w.delivered = 0 AND w.kind = 'timer'
                     AND e.paused = 0 AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   ORDER BY w.delivered, w.kind, w.due_ms LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
        })
    }

    fn ready_wake(&self, id: &str, now: i64) -> Result<Option<Wake>, StoreError> {
        self.read(|c| ready_wake_conn(c, id, now))
    }

    fn send_event_stored(
        &self,
        id: &str,
        name: &str,
        payload: &crate::packed::Stored,
    ) -> Result<(), StoreError> {
        let (id, name, payload) = (id.to_string(), name.to_string(), payload.to_packed());
        self.write(move |c| {
            // The status alone: the row's texts are not read (issue 42, F3).
            let status: String = c
                .query_row_cached(
                    "SELECT status FROM executions WHERE id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!("execution {id:?} is {status}")));
            }
            let now = crate::ids::now_ms();
            c.exec_cached(
                "INSERT INTO events (execution_id, name, payload, received_ms) VALUES (?1, ?2, ?3, ?4)",
                params![id, name, payload, now],
            )?;
            add_history(c, &id, now, "event_received", &serde_json::json!({"name": name}))?;
            Ok(())
        })
    }

    fn request_cancel(&self, id: &str) -> Result<(), StoreError> {
        self.request_stop(id, false)
    }

    fn request_terminate(&self, id: &str) -> Result<(), StoreError> {
        self.request_stop(id, true)
    }

    fn resume_failed(&self, id: &str) -> Result<ResumeOutcome, StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let e = get_exec(c, &id)?
                .ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if e.status != "failed" {
                return Ok(ResumeOutcome::NotFailed(e.status));
            }
            if e.parent_id.is_some() {
                return Ok(ResumeOutcome::NotResumable(
                    crate::store::CHILD_NOT_RESUMABLE.into(),
                ));
            }
            let resume_key: Option<String> = c.query_row_cached(
                "SELECT resume_key FROM executions WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            let effect: Option<(String, Unpacked)> = match &resume_key {
                Some(k) => c
                    .query_row_cached(
                        "SELECT key, result FROM effects WHERE idempotency_key = ?1",
                        params![k],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?,
                None => None,
            };
            let (Some(resume_key), Some((key, Unpacked(result)))) = (resume_key, effect) else {
                return Ok(ResumeOutcome::NotResumable(crate::store::not_resumable_reason(&e)));
            };
            let revision = e.revision.saturating_sub(1);
            c.exec_cached(
                "DELETE FROM checkpoints WHERE execution_id = ?1 AND revision > ?2",
                params![id, revision as i64],
            )?;
            c.exec_cached(
                "DELETE FROM effects WHERE idempotency_key = ?1",
                params![resume_key],
            )?;
            c.exec_cached(
                "DELETE FROM effect_attempts WHERE idempotency_key = ?1",
                params![resume_key],
            )?;
            let now = crate::ids::now_ms();
            c.exec_cached(
                "UPDATE executions SET status = 'runnable', revision = ?2, result = NULL, message = NULL, pending = NULL, resume_key = NULL, owner = NULL, lease_until = 0, drive_attempts = 0, updated_ms = ?3 WHERE id = ?1",
                params![id, revision as i64, now],
            )?;
            let detail = crate::store::resumed_detail(&key, &resume_key, revision, &result);
            add_history(c, &id, now, "resumed_by_operator", &detail)?;
            Ok(ResumeOutcome::Resumed { key, revision })
        })
    }

    fn clear_cancel_request(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            c.exec_cached(
                "UPDATE executions SET cancel_requested = 0 WHERE id = ?1 AND cancel_requested = 1 AND terminate_requested = 0",
                params![id],
            )?;
            Ok(())
        })
    }

    fn drop_waits(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write(move |c| {
            let held: Option<i64> = c
                .query_row_cached(
                    "SELECT 1 FROM executions WHERE id = ?1 AND owner = ?2",
                    params![id, owner],
                    |r| r.get(0),
                )
                .optional()?;
            if held.is_none() {
                return Ok(false);
            }
            c.exec_cached(
                "UPDATE waits SET delivered = 1 WHERE execution_id = ?1 AND delivered = 0",
                params![id],
            )?;
            Ok(true)
        })
    }

    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError> {
        let (id, owner, error) = (id.to_string(), owner.to_string(), error.to_string());
        self.write(move |c| {
            c.exec_cached(
                "UPDATE executions SET status = 'failed', error = ?3, message = ?3, owner = NULL, lease_until = 0, updated_ms = ?4 WHERE id = ?1 AND (owner = ?2 OR owner IS NULL)",
                params![id, owner, error, crate::ids::now_ms()],
            )?;
            c.exec_cached(
                "UPDATE waits SET delivered = 1 WHERE execution_id = ?1",
                params![id],
            )?;
            add_history(c, &id, crate::ids::now_ms(), "host_error", &J::String(error.clone()))?;
            Ok(())
        })
    }

    fn set_error(&self, id: &str, error: &str) -> Result<(), StoreError> {
        let (id, error) = (id.to_string(), error.to_string());
        self.write(move |c| {
            c.exec_cached(
                "UPDATE executions SET error = ?2, owner = NULL, lease_until = 0 WHERE id = ?1",
                params![id, error],
            )?;
            Ok(())
        })
    }

    fn append_history(&self, id: &str, kind: &str, detail: &J) -> Result<(), StoreError> {
        let (id, kind, detail) = (id.to_string(), kind.to_string(), detail.clone());
        self.write_lazy(move |c| add_history(c, &id, crate::ids::now_ms(), &kind, &detail))
    }

    fn reset_leases(&self) -> Result<u64, StoreError> {
        self.write(|c| {
            Ok(c.exec_cached(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE owner IS NOT NULL",
                [],
            )? as u64)
        })
    }

    fn release_owner(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_string();
        self.write(move |c| {
            let n = c.exec_cached(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE owner = ?1",
                params![owner],
            )? as u64;
            super::flow::release_owner_slots(c, &owner, crate::ids::now_ms())?;
            Ok(n)
        })
    }

    fn kv_get(&self, key: &str) -> Result<Option<J>, StoreError> {
        self.read(|c| {
            let v: Option<String> = c
                .query_row_cached("SELECT value FROM kv WHERE key = ?1", params![key], |r| {
                    r.get(0)
                })
                .optional()?;
            parse_json(v)
        })
    }

    fn counts(&self) -> Result<StoreCounts, StoreError> {
        self.read(|c| {
            let mut st =
                c.prepare_cached("SELECT status, count(*) FROM executions GROUP BY status")?;
            let by_status = st
                .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
                .collect::<Result<_, _>>()?;
            let events: i64 = c.query_row_cached(
                "SELECT count(*) FROM events WHERE consumed_by IS NULL",
                [],
                |r| r.get(0),
            )?;
            Ok(StoreCounts {
                by_status,
                events_pending: events as u64,
            })
        })
    }

    fn page_executions(&self, q: &PageQuery) -> Result<Vec<ExecutionRow>, StoreError> {
        use rusqlite::types::Value as V;
        let mut conds: Vec<&str> = Vec::new();
        let mut args: Vec<V> = Vec::new();
        let order = match &q.id_prefix {
            Some(prefix) => {
                conds.push("id >= ? AND id < ? AND substr(id, 1, length(?)) = ?");
                args.push(V::Text(prefix.clone()));
                args.push(V::Text(PageQuery::id_upper_bound(prefix)));
                args.push(V::Text(prefix.clone()));
                args.push(V::Text(prefix.clone()));
                if let Some(b) = &q.before_id {
                    conds.push("id < ?");
                    args.push(V::Text(b.clone()));
                }
                "id DESC"
            }
            None => {
                if let Some(b) = q.before_seq {
                    conds.push("seq < ?");
                    args.push(V::Integer(b));
                }
                "seq DESC"
            }
        };
        // One index serves each page; a unary `+` keeps SQLite (which has
        // no statistics here) off the other. The id search reads the id
        // index. With both filters, a status other than `completed` (the
        // bulk of a long-lived store) is the rarer one and leads; for
        // `completed` the program's rows are read instead.
        let status_leads = q.id_prefix.is_none()
            && q.status
                .as_deref()
                .is_some_and(|s| q.program.is_none() || s != "completed");
        let program_leads = q.id_prefix.is_none() && q.program.is_some() && !status_leads;
        if let Some(st) = &q.status {
            conds.push(if status_leads {
                "status = ?"
            } else {
                "+status = ?"
            });
            args.push(V::Text(st.clone()));
        }
        if let Some(p) = &q.program {
            conds.push(if program_leads {
                "program_name = ?"
            } else {
                "+program_name = ?"
            });
            args.push(V::Text(p.clone()));
        }
        if let Some(n) = &q.namespace {
            conds.push("+namespace = ?");
            args.push(V::Text(n.clone()));
        }
        args.push(V::Integer(i64::from(q.page_size())));
        let filter = if conds.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conds.join(" AND "))
        };
        let sql = format!("SELECT {EXEC_COLS} FROM executions {filter} ORDER BY {order} LIMIT ?");
        self.read(|c| {
            let mut st = c.prepare_cached(&sql)?;
            let rows = st
                .query_map(rusqlite::params_from_iter(args), exec_row)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_row).collect()
        })
    }

    fn waits_of(&self, id: &str) -> Result<Vec<WaitRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, kind, name, branch, due_ms, delivered FROM waits WHERE execution_id = ?1 ORDER BY id",
            )?;
            let rows = st
                .query_map(params![id], |r| {
                    Ok(WaitRow {
                        id: r.get(0)?,
                        kind: r.get(1)?,
                        name: r.get(2)?,
                        branch: r.get(3)?,
                        due_ms: r.get(4)?,
                        delivered: r.get::<_, i64>(5)? != 0,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    fn kv_set(&self, key: &str, value: &J) -> Result<(), StoreError> {
        let (key, value) = (key.to_string(), value.clone());
        self.write(move |c| {
            c.exec_cached(
                "INSERT INTO kv (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, json_text(&value)],
            )?;
            Ok(())
        })
    }
}

/// Ends the wait of an execution deferred until its next durable retry
/// (`Store::defer`: `runnable`, a lease holder, no drive counted — a drive
/// in progress has counted its claim), so that a stop request is delivered
/// at once instead of when the retry is due (issue 33).
fn cut_retry_wait(c: &Connection, id: &str) -> Result<(), StoreError> {
    c.exec_cached(
        "UPDATE executions SET lease_until = 0 WHERE id = ?1 AND status = 'runnable' AND owner IS NOT NULL AND drive_attempts = 0",
        params![id],
    )?;
    Ok(())
}

impl super::SqliteStore {
    /// `request_cancel` (`terminate` false) and `request_terminate`: sets
    /// the flags of `id` and of its unfinished descendants, with a history
    /// entry for each.
    fn request_stop(&self, id: &str, terminate: bool) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let e = get_exec(c, &id)?
                .ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if e.is_terminal() {
                return Err(StoreError::Conflict(format!(
                    "execution {id:?} is {}",
                    e.status
                )));
            }
            let t = i64::from(terminate);
            c.exec_cached(
                "UPDATE executions SET cancel_requested = 1, terminate_requested = MAX(terminate_requested, ?2) WHERE id = ?1",
                params![id, t],
            )?;
            let now = crate::ids::now_ms();
            let kind = if terminate {
                "terminate_requested"
            } else {
                "cancel_requested"
            };
            add_history(c, &id, now, kind, &J::Null)?;
            cut_retry_wait(c, &id)?;
            // Cancelling (terminating) a parent cancels (terminates) its
            // unfinished descendants.
            let mut st = c.prepare_cached(
                "WITH RECURSIVE d(id) AS (SELECT id FROM executions WHERE parent_id = ?1 UNION SELECT e.id FROM executions e JOIN d ON e.parent_id = d.id)
                 UPDATE executions SET cancel_requested = 1, terminate_requested = MAX(terminate_requested, ?2) WHERE id IN (SELECT id FROM d) AND (cancel_requested = 0 OR terminate_requested < ?2) AND status NOT IN ('completed', 'failed', 'cancelled') RETURNING id",
            )?;
            let children: Vec<String> = st
                .query_map(params![id, t], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for child in children {
                add_history(c, &child, now, kind, &serde_json::json!({"by": id}))?;
                cut_retry_wait(c, &child)?;
            }
            Ok(())
        })
    }
}
