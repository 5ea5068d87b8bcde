//! The [`Store`] implementation of the PostgreSQL backend: every query
//! it runs, each write as a job of the store's group commit.

use super::PgStore;
use super::conn::{Conn, JobError, JobResult};
use super::job::Merge;
use super::rows::{exec_row, in_journal_of};
use crate::store::packed::Packed;
use crate::store::{
    AttemptRow, CheckpointRow, CheckpointTx, EXEC_COLS, ExecutionRow, HistoryRow, JournalRow,
    ListFilter, NewExecution, PageQuery, Registration, ResumeOutcome, Store, StoreCounts,
    StoreError, TERMINAL, WaitRow, Wake, journal_history_detail, json_text, parse_json,
};
use postgres::types::ToSql;
use postgres::{GenericClient, Row};
use serde_json::Value as J;

/// A journal row, as [`Store::journal_put`] writes it.
/// Longest body and result (or effect input and result) together that a
/// write is folded with others for (`Merge`): folding copies them, so a
/// long one is written by a statement of its own (issue 42, F3).
const MERGE_TEXT_MAX: usize = 64 * 1024;

const JOURNAL_INSERT: &str = "INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, at_ms, history_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('history_seq_seq')) ON CONFLICT (idempotency_key) DO NOTHING";

pub(super) fn get_exec(
    c: &mut Conn<'_, impl GenericClient>,
    id: &str,
) -> JobResult<Option<ExecutionRow>> {
    let row = c.query_opt(
        &format!("SELECT {EXEC_COLS} FROM executions WHERE id = $1"),
        &[&id],
    )?;
    Ok(row.as_ref().map(exec_row).transpose()?)
}

pub(super) fn insert_exec(
    c: &mut Conn<'_, impl GenericClient>,
    new: &NewExecution,
    now: i64,
) -> JobResult<u64> {
    let (pid, pbranch) = match &new.parent {
        Some((p, b)) => (Some(p.as_str()), b.as_deref()),
        None => (None, None),
    };
    let args = crate::store::args_text(&new.args)?;
    let args = args.as_ref();
    let n = c.execute(
        "INSERT INTO executions (id, artifact_hash, program_name, args, status, parent_id, parent_branch, created_ms, updated_ms, namespace) VALUES ($1, $2, $3, $4, 'runnable', $5, $6, $7, $7, COALESCE((SELECT p.namespace FROM executions p WHERE p.id = $5), $8)) ON CONFLICT (id) DO NOTHING",
        &[&new.id, &new.artifact_hash, &new.program_name, &args, &pid, &pbranch, &now, &new.namespace],
    )?;
    if n == 1 {
        add_history(
            c,
            &new.id,
            now,
            "created",
            &serde_json::json!({"artifact_hash": new.artifact_hash, "program": new.program_name, "parent": pid}),
        )?;
    }
    Ok(n)
}

/// [`insert_exec`] as one statement: the execution row and, when it was
/// inserted, its `created` history entry; the number of rows inserted.
fn insert_exec_one(
    c: &mut Conn<'_, impl GenericClient>,
    new: &NewExecution,
    now: i64,
) -> JobResult<i64> {
    let (pid, pbranch) = match &new.parent {
        Some((p, b)) => (Some(p.as_str()), b.as_deref()),
        None => (None, None),
    };
    let args = crate::store::args_text(&new.args)?;
    let args = args.as_ref();
    let detail = json_text(
        &serde_json::json!({"artifact_hash": new.artifact_hash, "program": new.program_name, "parent": pid}),
    );
    let row = c.query_one(
        "WITH ins AS (
           INSERT INTO executions (id, artifact_hash, program_name, args, status, parent_id, parent_branch, created_ms, updated_ms, namespace) VALUES ($1, $2, $3, $4, 'runnable', $5, $6, $7, $7, COALESCE((SELECT p.namespace FROM executions p WHERE p.id = $5), $8)) ON CONFLICT (id) DO NOTHING
           RETURNING id),
         h AS (INSERT INTO history (execution_id, at_ms, kind, detail) SELECT id, $7, 'created', $9 FROM ins)
         SELECT count(*) FROM ins",
        &[&new.id, &new.artifact_hash, &new.program_name, &args, &pid, &pbranch, &now, &new.namespace, &detail],
    )?;
    Ok(row.try_get(0)?)
}

fn attempt_row(r: &Row) -> Result<AttemptRow, StoreError> {
    Ok(AttemptRow {
        idempotency_key: r.try_get(0)?,
        attempt: r.try_get::<_, i32>(1)?.max(0) as u32,
        execution_id: r.try_get(2)?,
        key: r.try_get(3)?,
        error: r.try_get(4)?,
        at_ms: r.try_get(5)?,
        next_due_ms: r.try_get(6)?,
    })
}

pub(super) fn add_history(
    c: &mut Conn<'_, impl GenericClient>,
    id: &str,
    now: i64,
    kind: &str,
    detail: &J,
) -> JobResult<()> {
    c.execute(
        "INSERT INTO history (execution_id, at_ms, kind, detail) VALUES ($1, $2, $3, $4)",
        &[&id, &now, &kind, &json_text(detail)],
    )?;
    Ok(())
}

fn ready_wake_conn(
    c: &mut Conn<'_, impl GenericClient>,
    id: &str,
    now: i64,
) -> JobResult<Option<Wake>> {
    let waits = c.query(
        "SELECT id, kind, name, branch, due_ms FROM waits WHERE execution_id = $1 AND NOT delivered ORDER BY id",
        &[&id],
    )?;
    for w in waits {
        let wid: i64 = w.try_get(0)?;
        let kind: String = w.try_get(1)?;
        let name: Option<String> = w.try_get(2)?;
        let branch: Option<String> = w.try_get(3)?;
        let due: Option<i64> = w.try_get(4)?;
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
                let ev = c.query_opt(
                    "SELECT seq, payload FROM events WHERE execution_id = $1 AND name = $2 AND consumed_by IS NULL ORDER BY seq LIMIT 1",
                    &[&id, &name],
                )?;
                if let Some(ev) = ev {
                    return Ok(Some(Wake {
                        wait_id: wid,
                        kind,
                        branch,
                        value: Some(crate::tagged_text::TaggedText::from_stored(ev.try_get(1)?)),
                        event_seq: Some(ev.try_get(0)?),
                        child_failure: None,
                    }));
                }
            }
            "child" => {
                let child = match &name {
                    Some(n) => get_exec(c, n)?,
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

fn journal_row(key: String, id: String, r: &Row) -> Result<JournalRow, StoreError> {
    Ok(JournalRow {
        idempotency_key: key,
        execution_id: id,
        key: r.try_get("key")?,
        input: r.try_get("input")?,
        status: r.try_get("status")?,
        result: parse_json(Some(r.try_get("result")?))?.unwrap_or(J::Null),
    })
}

fn p<'a>(v: &'a [&'a (dyn ToSql + Sync)]) -> &'a [&'a (dyn ToSql + Sync)] {
    v
}

impl Store for PgStore {
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError> {
        let (hash, body) = (hash.to_string(), body.to_vec());
        self.write(move |c| {
            c.execute(
                "INSERT INTO artifacts (hash, body, created_ms) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING",
                &[&hash, &body, &crate::ids::now_ms()],
            )?;
            c.execute(
                "UPDATE executions SET error = NULL WHERE artifact_hash = $1 AND error LIKE 'artifact_missing%'",
                &[&hash],
            )?;
            Ok(())
        })
    }

    fn get_artifact(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(|c| {
            Ok(
                c.query_opt("SELECT body FROM artifacts WHERE hash = $1", &[&hash])?
                    .map(|r| r.try_get(0))
                    .transpose()?,
            )
        })
    }

    fn set_program(&self, name: &str, hash: &str) -> Result<(), StoreError> {
        let (name, hash) = (name.to_string(), hash.to_string());
        self.write(move |c| {
            c.execute(
                "INSERT INTO programs (name, hash, updated_ms) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms",
                &[&name, &hash, &crate::ids::now_ms()],
            )?;
            Ok(())
        })
    }

    fn resolve_program(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(
                c.query_opt("SELECT hash FROM programs WHERE name = $1", &[&name])?
                    .map(|r| r.try_get(0))
                    .transpose()?,
            )
        })
    }

    fn programs(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.read(|c| {
            let rows = c.query("SELECT name, hash FROM programs ORDER BY name", &[])?;
            Ok(rows
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, postgres::Error>>()?)
        })
    }

    fn create_executions(&self, new: &[NewExecution]) -> Result<(), StoreError> {
        if let [one] = new {
            // One execution (a start): its row and its `created` history
            // entry in one statement, alone in its group without
            // `BEGIN`/`COMMIT` (one round trip instead of four).
            let one = one.clone();
            return self.write_one(true, move |c| {
                if insert_exec_one(c, &one, crate::ids::now_ms())? == 0 {
                    return Err(StoreError::Conflict(format!(
                        "execution {:?} already exists",
                        one.id
                    ))
                    .into());
                }
                Ok(())
            });
        }
        let new = new.to_vec();
        self.write(move |c| {
            let now = crate::ids::now_ms();
            for n in &new {
                if insert_exec(c, n, now)? == 0 {
                    return Err(StoreError::Conflict(format!(
                        "execution {:?} already exists",
                        n.id
                    ))
                    .into());
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
            let row = c.query_opt(
                "SELECT cancel_requested FROM executions WHERE id = $1",
                &[&id],
            )?;
            Ok(match row {
                Some(r) => r.try_get::<_, bool>(0)?,
                None => false,
            })
        })
    }

    fn list_executions(&self, f: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {EXEC_COLS} FROM executions WHERE seq > $1 AND ($2::TEXT IS NULL OR status = $2) AND ($3::TEXT IS NULL OR program_name = $3) AND (NOT $4 OR error LIKE 'artifact_missing%') AND ($6::TEXT IS NULL OR namespace = $6) ORDER BY seq LIMIT $5"
                ),
                p(&[
                    &f.after.unwrap_or(0),
                    &f.status,
                    &f.program,
                    &f.artifact_missing,
                    &i64::from(f.limit.clamp(1, 1000)),
                    &f.namespace,
                ]),
            )?;
            Ok(rows.iter().map(exec_row).collect::<Result<_, _>>()?)
        })
    }

    fn history(&self, id: &str, after: i64, limit: u32) -> Result<Vec<HistoryRow>, StoreError> {
        self.read(|c| {
            // History rows and, as `effect` entries, the journal rows that
            // have a place in the sequence (journalled since migration 2).
            let rows = c.query(
                concat!(
                    "SELECT seq, at_ms, kind, detail, NULL, NULL, NULL FROM history WHERE execution_id = $1 AND seq > $2
                     UNION ALL
                     SELECT history_seq, COALESCE(at_ms, 0), 'effect', NULL, key, idempotency_key, status FROM effects
                       WHERE ",
                    in_journal_of!("$1"),
                    " AND history_seq > $2
                     ORDER BY 1 LIMIT $3"
                ),
                &[&id, &after, &i64::from(limit.clamp(1, 10_000))],
            )?;
            rows.iter()
                .map(|r| {
                    let detail = match r.try_get::<_, Option<String>>(3)? {
                        Some(d) => parse_json(Some(d))
                            .map_err(JobError::Store)?
                            .unwrap_or(J::Null),
                        None => journal_history_detail(r.try_get(4)?, r.try_get(5)?, r.try_get(6)?),
                    };
                    Ok(HistoryRow {
                        seq: r.try_get(0)?,
                        at_ms: r.try_get(1)?,
                        kind: r.try_get(2)?,
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
        Ok(self
            .claim_for_drive(id, owner, now, lease_ms)?
            .map(|(row, _)| row))
    }

    fn claim_for_drive(
        &self,
        id: &str,
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<(ExecutionRow, Option<Vec<String>>)>, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        let merge = Merge::Claim {
            id: id.clone(),
            owner: owner.clone(),
            until: now + lease_ms,
            now,
        };
        self.write_job(false, true, Some(merge), move |c| {
            let until = now + lease_ms;
            // The journal's keys come back with the row: one round trip
            // fewer per drive than a separate `journal_keys` read.
            let row = c.query_opt(
                &format!(
                    "UPDATE executions SET owner = $2, lease_until = $3, drive_attempts = drive_attempts + 1 WHERE id = (
                       SELECT id FROM executions WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until < $4) AND error IS NULL
                         AND NOT paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = executions.program_name)
                       FOR UPDATE SKIP LOCKED)
                     RETURNING {}, ARRAY(SELECT idempotency_key FROM effects WHERE {}),
                       (SELECT traceparent FROM execution_traces WHERE execution_id = $1)",
                    crate::store::drive_cols(""),
                    in_journal_of!("$1")
                ),
                &[&id, &owner, &until, &now],
            )?;
            match row {
                None => Ok(None),
                Some(r) => {
                    let keys_at = EXEC_COLS.split(',').count();
                    let keys: Vec<String> = r.try_get(keys_at)?;
                    // The stored `traceparent` too: the drive reads it
                    // for its first effect otherwise.
                    let mut row = exec_row(&r)?;
                    row.stored_traceparent = Some(r.try_get(keys_at + 1)?);
                    Ok(Some((row, Some(keys))))
                }
            }
        })
    }

    fn renew(&self, id: &str, owner: &str, now: i64, lease_ms: i64) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write_one(false, move |c| {
            Ok(c.execute(
                "UPDATE executions SET lease_until = $3 WHERE id = $1 AND owner = $2",
                &[&id, &owner, &(now + lease_ms)],
            )? == 1)
        })
    }

    fn renew_all(
        &self,
        ids: &[String],
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let (all, owner_text) = (ids.to_vec(), owner.to_string());
        // Rows another transaction holds (a checkpoint being committed) are
        // skipped, never waited for: a statement locking many rows while
        // waiting for one could deadlock with a folded checkpoint locking
        // them in another order. The statement answers the leases held but
        // skipped, which are then renewed one by one (a lease not held is
        // left, as `renew` leaves it).
        let skipped: Vec<String> = self.write_one(false, move |c| {
            Ok(c.query(
                "WITH held AS (SELECT id FROM executions WHERE id = ANY($1) AND owner = $2),
                      u AS (UPDATE executions SET lease_until = $3 WHERE id IN (
                        SELECT id FROM executions WHERE id = ANY($1) AND owner = $2 FOR UPDATE SKIP LOCKED)
                        RETURNING id)
                 SELECT id FROM held WHERE id NOT IN (SELECT id FROM u)",
                &[&all, &owner_text, &(now + lease_ms)],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?)
        })?;
        for id in &skipped {
            self.renew(id, owner, now, lease_ms)?;
        }
        Ok(())
    }

    fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        let merge = Merge::Release {
            id: id.clone(),
            owner: owner.clone(),
        };
        self.write_job(false, true, Some(merge), move |c| {
            c.execute(
                "UPDATE executions SET owner = NULL, lease_until = 0, drive_attempts = 0 WHERE id = $1 AND owner = $2",
                &[&id, &owner],
            )?;
            Ok(())
        })
    }

    fn load_checkpoints(&self, id: &str) -> Result<Vec<CheckpointRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT revision, kind, body FROM checkpoints WHERE execution_id = $1 AND revision >= COALESCE((SELECT MAX(revision) FROM checkpoints WHERE execution_id = $1 AND kind = 'snapshot'), 0) ORDER BY revision",
                &[&id],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    Ok(CheckpointRow {
                        revision: r.try_get::<_, i64>(0)?.max(0) as u64,
                        kind: r.try_get(1)?,
                        body: crate::packed::Stored::Text(r.try_get(2)?),
                    })
                })
                .collect::<Result<_, postgres::Error>>()?)
        })
    }

    fn commit_checkpoint(&self, tx: CheckpointTx) -> Result<(), StoreError> {
        // A plain step (delta, nothing registered or consumed, not
        // terminal) is the one compare-and-set statement below.
        let single = tx.kind != "snapshot"
            && tx.registrations.is_empty()
            && tx.consumed.is_none()
            && !TERMINAL.contains(&tx.status.as_str());
        // A failure keeping its resume point is not folded (the folded
        // statement deletes a snapshot's older rows). Nor is a long body or
        // result: folding copies them, and one statement of their own costs
        // little beside their bytes (issue 42, F3).
        // This store keeps text (`Store::packs_texts` is false): the body
        // and result come as text.
        let mut tx = tx;
        let body = std::mem::replace(&mut tx.body, Packed::from(String::new()))
            .into_text()
            .map_err(StoreError::Corrupt)?;
        let result = tx
            .result
            .take()
            .map(Packed::into_text)
            .transpose()
            .map_err(StoreError::Corrupt)?;
        let merge = (tx.registrations.is_empty()
            && tx.consumed.is_none()
            && tx.resume_key.is_none()
            && body.len() + result.as_ref().map_or(0, String::len) < MERGE_TEXT_MAX)
            .then(|| Merge::Step {
                id: tx.id.clone(),
                owner: tx.owner.clone(),
                revision: tx.revision as i64,
                status: tx.status.clone(),
                result: result.clone(),
                message: tx.message.clone(),
                pending: tx.pending.as_ref().map(json_text),
                kind: tx.kind.clone(),
                body: body.clone(),
                history: tx
                    .history
                    .iter()
                    .map(|(k, d)| (k.clone(), json_text(d)))
                    .collect(),
            });
        self.write_job(true, single, merge, move |c| {
            let now = crate::ids::now_ms();
            let rev = tx.revision as i64;
            // The compare-and-set, the checkpoint row and the history
            // entries in one statement (one round trip): the rows are
            // inserted only if the update hit.
            let (kinds, details): (Vec<&str>, Vec<String>) = tx
                .history
                .iter()
                .map(|(k, d)| (k.as_str(), json_text(d)))
                .unzip();
            let n = c.execute(
                "WITH cas AS (UPDATE executions SET revision = $3, status = $4, result = $5, message = $6, pending = $7, updated_ms = $8,
                        owner = CASE WHEN $4 IN ('completed', 'failed', 'cancelled') THEN NULL ELSE owner END,
                        lease_until = CASE WHEN $4 IN ('completed', 'failed', 'cancelled') THEN 0 ELSE lease_until END
                      WHERE id = $1 AND owner = $2 AND revision = $9 RETURNING id),
                      h AS (INSERT INTO history (execution_id, at_ms, kind, detail) SELECT cas.id, $8, h.kind, h.detail FROM cas, UNNEST($12::text[], $13::text[]) WITH ORDINALITY AS h(kind, detail, n) ORDER BY h.n)
                 INSERT INTO checkpoints (execution_id, revision, kind, body) SELECT id, $3, $10, $11 FROM cas",
                p(&[
                    &tx.id,
                    &tx.owner,
                    &rev,
                    &tx.status,
                    &result,
                    &tx.message,
                    &tx.pending.as_ref().map(json_text),
                    &now,
                    &(rev - 1),
                    &tx.kind,
                    &body,
                    &kinds,
                    &details,
                ]),
            )?;
            if n != 1 {
                return Err(StoreError::Conflict(format!(
                    "execution {}: lease lost or revision moved (expected {})",
                    tx.id,
                    rev - 1
                ))
                .into());
            }
            // A failure right after a failed effect keeps the checkpoint
            // before it (the operator's resume point).
            match &tx.resume_key {
                Some(key) => {
                    c.execute(
                        "UPDATE executions SET resume_key = $2 WHERE id = $1",
                        &[&tx.id, key],
                    )?;
                }
                None if tx.kind == "snapshot" => {
                    c.execute(
                        "DELETE FROM checkpoints WHERE execution_id = $1 AND revision < $2",
                        &[&tx.id, &rev],
                    )?;
                }
                None => {}
            }
            for r in &tx.registrations {
                match r {
                    Registration::Timer { due_ms, branch } => {
                        c.execute(
                            "INSERT INTO waits (execution_id, kind, branch, due_ms) VALUES ($1, 'timer', $2, $3)",
                            &[&tx.id, branch, due_ms],
                        )?;
                    }
                    Registration::Event {
                        name,
                        wait_id,
                        branch,
                    } => {
                        c.execute(
                            "INSERT INTO waits (execution_id, kind, name, wait_id, branch) VALUES ($1, 'event', $2, $3, $4)",
                            &[&tx.id, name, wait_id, branch],
                        )?;
                    }
                    Registration::Child { child, branch } => {
                        insert_exec(c, child, now)?;
                        c.execute(
                            "INSERT INTO waits (execution_id, kind, name, branch) VALUES ($1, 'child', $2, $3)",
                            &[&tx.id, &child.id, branch],
                        )?;
                    }
                }
            }
            if let Some(w) = &tx.consumed {
                c.execute(
                    "UPDATE waits SET delivered = TRUE WHERE id = $1",
                    &[&w.wait_id],
                )?;
                if let Some(seq) = w.event_seq {
                    c.execute(
                        "UPDATE events SET consumed_by = $1 WHERE seq = $2",
                        &[&w.wait_id, &seq],
                    )?;
                }
            }
            if TERMINAL.contains(&tx.status.as_str()) {
                c.execute(
                    "UPDATE waits SET delivered = TRUE WHERE execution_id = $1 AND NOT delivered",
                    &[&tx.id],
                )?;
            }
            Ok(())
        })
    }

    fn journal_get(&self, key: &str) -> Result<Option<JournalRow>, StoreError> {
        self.read(|c| {
            let r = c.query_opt(
                "SELECT execution_id, key, input, status, result FROM effects WHERE idempotency_key = $1",
                &[&key],
            )?;
            Ok(r.map(|r| journal_row(key.to_string(), r.try_get(0)?, &r))
                .transpose()?)
        })
    }

    fn journal_put(&self, row: &JournalRow) -> Result<(), StoreError> {
        // The journal's reads by execution depend on it (`in_journal_of!`).
        row.check_key()?;
        let row = row.clone();
        let result = json_text(&row.result);
        // A long input or result is written alone, not copied into a fold.
        let fold = row.input.len() + result.len() < MERGE_TEXT_MAX;
        let merge = fold.then(|| Merge::Journal {
            idempotency_key: row.idempotency_key.clone(),
            execution_id: row.execution_id.clone(),
            key: row.key.clone(),
            input: row.input.clone(),
            status: row.status.clone(),
            result: result.clone(),
        });
        self.write_job(false, true, merge, move |c| {
            // The row is also the execution's `effect` history entry (see
            // `history`), numbered from the history's sequence.
            c.execute(
                JOURNAL_INSERT,
                &[
                    &row.idempotency_key,
                    &row.execution_id,
                    &row.key,
                    &row.input,
                    &row.status,
                    &result,
                    &crate::ids::now_ms(),
                ],
            )?;
            Ok(())
        })
    }

    fn journal_keys(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                concat!(
                    "SELECT idempotency_key FROM effects WHERE ",
                    in_journal_of!("$1")
                ),
                &[&id],
            )?;
            Ok(rows
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?)
        })
    }

    fn journal_of(&self, id: &str) -> Result<Vec<JournalRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                concat!(
                    "SELECT idempotency_key, key, input, status, result FROM effects WHERE ",
                    in_journal_of!("$1"),
                    " ORDER BY seq"
                ),
                &[&id],
            )?;
            Ok(rows
                .iter()
                .map(|r| journal_row(r.try_get(0)?, id.to_string(), r))
                .collect::<Result<_, _>>()?)
        })
    }

    fn record_attempt(&self, row: &AttemptRow) -> Result<(), StoreError> {
        let row = row.clone();
        let detail = row.history_detail();
        self.write(move |c| {
            let attempt = i32::try_from(row.attempt).unwrap_or(i32::MAX);
            let added = c.execute(
                "INSERT INTO effect_attempts (idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                &[
                    &row.idempotency_key,
                    &attempt,
                    &row.execution_id,
                    &row.key,
                    &row.error,
                    &row.at_ms,
                    &row.next_due_ms,
                ],
            )?;
            if added == 1 {
                add_history(c, &row.execution_id, row.at_ms, "effect_attempt_failed", &detail)?;
            }
            Ok(())
        })
    }

    fn attempts(&self, idempotency_key: &str) -> Result<Vec<AttemptRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms FROM effect_attempts WHERE idempotency_key = $1 ORDER BY attempt",
                &[&idempotency_key],
            )?;
            Ok(rows.iter().map(attempt_row).collect::<Result<_, _>>()?)
        })
    }

    fn attempts_of(&self, id: &str) -> Result<Vec<AttemptRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                concat!(
                    "SELECT idempotency_key, attempt, execution_id, key, error, at_ms, next_due_ms FROM effect_attempts WHERE ",
                    in_journal_of!("$1"),
                    " ORDER BY at_ms, idempotency_key, attempt"
                ),
                &[&id],
            )?;
            Ok(rows.iter().map(attempt_row).collect::<Result<_, _>>()?)
        })
    }

    fn defer(&self, id: &str, owner: &str, until_ms: i64) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE executions SET lease_until = $3, drive_attempts = 0 WHERE id = $1 AND owner = $2",
                &[&id, &owner, &until_ms],
            )? == 1)
        })
    }

    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                // One indexed branch per reason to run, so that the cost
                // follows the work to do, not the number of executions ever
                // stored (the scheduler calls this after every drive).
                "SELECT id FROM (
                   SELECT seq, id FROM executions e
                     WHERE status = 'runnable' AND error IS NULL AND lease_until < $1 AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT seq, id FROM executions e
                     WHERE cancel_requested AND status = 'suspended' AND error IS NULL AND lease_until < $1 AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM waits w JOIN executions e ON e.id = w.execution_id
                     WHERE NOT w.delivered AND w.kind = 'timer' AND w.due_ms <= $1
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1 AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM events v
                     JOIN waits w ON w.execution_id = v.execution_id AND w.name = v.name
                     JOIN executions e ON e.id = v.execution_id
                     WHERE v.consumed_by IS NULL AND NOT w.delivered AND w.kind = 'event'
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1 AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   UNION
                   SELECT e.seq, e.id FROM waits w
                     JOIN executions k ON k.id = w.name
                     JOIN executions e ON e.id = w.execution_id
                     WHERE NOT w.delivered AND w.kind = 'child' AND k.status IN ('completed', 'failed', 'cancelled')
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1 AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                 ) work
                 ORDER BY seq LIMIT $2",
                &[&now, &i64::from(limit)],
            )?;
            Ok(rows
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, _>>()?)
        })
    }

    fn next_timer_due(&self) -> Result<Option<i64>, StoreError> {
        self.read(|c| {
            // In due order along `waits_open`: the first timer of an
            // execution that is not paused (`crate::pause`).
            match c.query_opt(
                "SELECT w.due_ms FROM waits w JOIN executions e ON e.id = w.execution_id
                   WHERE NOT w.delivered AND w.kind = 'timer'
                     AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                   ORDER BY w.due_ms LIMIT 1",
                &[],
            )? {
                Some(r) => Ok(r.try_get(0)?),
                None => Ok(None),
            }
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
        let payload = payload
            .text()
            .map_err(|e| StoreError::Corrupt(format!("an event payload: {e}")))?
            .into_owned();
        let (id, name) = (id.to_string(), name.to_string());
        self.write(move |c| {
            let status: Option<String> = c
                .query_opt("SELECT status FROM executions WHERE id = $1", &[&id])?
                .map(|r| r.try_get(0))
                .transpose()?;
            let status = status.ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!("execution {id:?} is {status}")).into());
            }
            let now = crate::ids::now_ms();
            c.execute(
                "INSERT INTO events (execution_id, name, payload, received_ms) VALUES ($1, $2, $3, $4)",
                &[&id, &name, &payload, &now],
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
            // The row lock orders concurrent resumes (and any commit):
            // the second reads the first one's `runnable`.
            let locked = c.query_opt(
                "SELECT resume_key FROM executions WHERE id = $1 FOR UPDATE",
                &[&id],
            )?;
            let Some(locked) = locked else {
                return Err(StoreError::NotFound(format!("execution {id:?}")).into());
            };
            let resume_key: Option<String> = locked.try_get(0)?;
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
            let effect = match &resume_key {
                Some(k) => c.query_opt(
                    "SELECT key, result FROM effects WHERE idempotency_key = $1",
                    &[k],
                )?,
                None => None,
            };
            let (Some(resume_key), Some(effect)) = (resume_key, effect) else {
                return Ok(ResumeOutcome::NotResumable(
                    crate::store::not_resumable_reason(&e),
                ));
            };
            let key: String = effect.try_get(0)?;
            let result: String = effect.try_get(1)?;
            let revision = e.revision.saturating_sub(1);
            let rev = revision as i64;
            c.execute(
                "DELETE FROM checkpoints WHERE execution_id = $1 AND revision > $2",
                &[&id, &rev],
            )?;
            c.execute(
                "DELETE FROM effects WHERE idempotency_key = $1",
                &[&resume_key],
            )?;
            c.execute(
                "DELETE FROM effect_attempts WHERE idempotency_key = $1",
                &[&resume_key],
            )?;
            let now = crate::ids::now_ms();
            c.execute(
                "UPDATE executions SET status = 'runnable', revision = $2, result = NULL, message = NULL, pending = NULL, resume_key = NULL, owner = NULL, lease_until = 0, drive_attempts = 0, updated_ms = $3 WHERE id = $1",
                &[&id, &rev, &now],
            )?;
            let detail = crate::store::resumed_detail(&key, &resume_key, revision, &result);
            add_history(c, &id, now, "resumed_by_operator", &detail)?;
            Ok(ResumeOutcome::Resumed { key, revision })
        })
    }

    fn clear_cancel_request(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            c.execute(
                "UPDATE executions SET cancel_requested = FALSE WHERE id = $1 AND cancel_requested AND NOT terminate_requested",
                &[&id],
            )?;
            Ok(())
        })
    }

    fn drop_waits(&self, id: &str, owner: &str) -> Result<bool, StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        self.write(move |c| {
            let held = c
                .query_opt(
                    "SELECT 1 FROM executions WHERE id = $1 AND owner = $2",
                    &[&id, &owner],
                )?
                .is_some();
            if held {
                c.execute(
                    "UPDATE waits SET delivered = TRUE WHERE execution_id = $1 AND NOT delivered",
                    &[&id],
                )?;
            }
            Ok(held)
        })
    }

    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError> {
        let (id, owner, error) = (id.to_string(), owner.to_string(), error.to_string());
        self.write(move |c| {
            let now = crate::ids::now_ms();
            c.execute(
                "UPDATE executions SET status = 'failed', error = $3, message = $3, owner = NULL, lease_until = 0, updated_ms = $4 WHERE id = $1 AND (owner = $2 OR owner IS NULL)",
                &[&id, &owner, &error, &now],
            )?;
            c.execute(
                "UPDATE waits SET delivered = TRUE WHERE execution_id = $1 AND NOT delivered",
                &[&id],
            )?;
            add_history(c, &id, now, "host_error", &J::String(error.clone()))?;
            Ok(())
        })
    }

    fn set_error(&self, id: &str, error: &str) -> Result<(), StoreError> {
        let (id, error) = (id.to_string(), error.to_string());
        self.write(move |c| {
            c.execute(
                "UPDATE executions SET error = $2, owner = NULL, lease_until = 0 WHERE id = $1",
                &[&id, &error],
            )?;
            Ok(())
        })
    }

    fn append_history(&self, id: &str, kind: &str, detail: &J) -> Result<(), StoreError> {
        let (id, kind, detail) = (id.to_string(), kind.to_string(), detail.clone());
        self.write_lazy(move |c| add_history(c, &id, crate::ids::now_ms(), &kind, &detail))
    }

    /// Multi-node: other nodes may hold live leases, so nothing is freed;
    /// a dead node's leases are taken over when they expire.
    fn reset_leases(&self) -> Result<u64, StoreError> {
        Ok(0)
    }

    fn release_owner(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_string();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE owner = $1",
                &[&owner],
            )?;
            super::flow::release_owner_slots(c, &owner, crate::ids::now_ms())?;
            Ok(n)
        })
    }

    fn kv_get(&self, key: &str) -> Result<Option<J>, StoreError> {
        self.read(|c| {
            let v: Option<String> = c
                .query_opt("SELECT value FROM kv WHERE key = $1", &[&key])?
                .map(|r| r.try_get(0))
                .transpose()?;
            Ok(parse_json(v)?)
        })
    }

    fn counts(&self) -> Result<StoreCounts, StoreError> {
        self.read(|c| {
            let mut by_status = Vec::new();
            for r in c.query(
                "SELECT status, count(*) FROM executions GROUP BY status ORDER BY status",
                &[],
            )? {
                by_status.push((r.try_get(0)?, r.try_get::<_, i64>(1)? as u64));
            }
            let events: i64 = c
                .query_one("SELECT count(*) FROM events WHERE consumed_by IS NULL", &[])?
                .try_get(0)?;
            Ok(StoreCounts {
                by_status,
                events_pending: events as u64,
            })
        })
    }

    fn page_executions(&self, q: &PageQuery) -> Result<Vec<ExecutionRow>, StoreError> {
        let mut conds: Vec<String> = Vec::new();
        let mut args: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        let mut arg = |v: Box<dyn ToSql + Sync>| {
            args.push(v);
            format!("${}", args.len())
        };
        let order = match &q.id_prefix {
            Some(prefix) => {
                let (lo, hi, pf) = (
                    arg(Box::new(prefix.clone())),
                    arg(Box::new(PageQuery::id_upper_bound(prefix))),
                    arg(Box::new(prefix.clone())),
                );
                conds.push(format!(
                    "id COLLATE \"C\" >= {lo} AND id COLLATE \"C\" < {hi} AND starts_with(id, {pf})"
                ));
                if let Some(b) = &q.before_id {
                    let b = arg(Box::new(b.clone()));
                    conds.push(format!("id COLLATE \"C\" < {b}"));
                }
                "id COLLATE \"C\" DESC"
            }
            None => {
                if let Some(b) = q.before_seq {
                    let b = arg(Box::new(b));
                    conds.push(format!("seq < {b}"));
                }
                "seq DESC"
            }
        };
        if let Some(st) = &q.status {
            let a = arg(Box::new(st.clone()));
            conds.push(format!("status = {a}"));
        }
        if let Some(p) = &q.program {
            let a = arg(Box::new(p.clone()));
            conds.push(format!("program_name = {a}"));
        }
        if let Some(n) = &q.namespace {
            let a = arg(Box::new(n.clone()));
            conds.push(format!("namespace = {a}"));
        }
        let limit = arg(Box::new(i64::from(q.page_size())));
        let filter = if conds.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conds.join(" AND "))
        };
        let sql =
            format!("SELECT {EXEC_COLS} FROM executions {filter} ORDER BY {order} LIMIT {limit}");
        self.read(|c| {
            let params: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref()).collect();
            let rows = c.query(&sql, &params)?;
            Ok(rows.iter().map(exec_row).collect::<Result<_, _>>()?)
        })
    }

    fn waits_of(&self, id: &str) -> Result<Vec<WaitRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT id, kind, name, branch, due_ms, delivered FROM waits WHERE execution_id = $1 ORDER BY id",
                &[&id],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    Ok(WaitRow {
                        id: r.try_get(0)?,
                        kind: r.try_get(1)?,
                        name: r.try_get(2)?,
                        branch: r.try_get(3)?,
                        due_ms: r.try_get(4)?,
                        delivered: r.try_get(5)?,
                    })
                })
                .collect::<Result<_, postgres::Error>>()?)
        })
    }

    fn kv_set(&self, key: &str, value: &J) -> Result<(), StoreError> {
        let (key, value) = (key.to_string(), json_text(value));
        self.write(move |c| {
            c.execute(
                "INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &value],
            )?;
            Ok(())
        })
    }
}

/// Ends the wait of an execution deferred until its next durable retry
/// (`Store::defer`: `runnable`, a lease holder, no drive counted — a drive
/// in progress has counted its claim), so that a stop request is delivered
/// at once instead of when the retry is due (issue 33).
fn cut_retry_wait(c: &mut Conn<'_, impl GenericClient>, id: &str) -> JobResult<()> {
    c.execute(
        "UPDATE executions SET lease_until = 0 WHERE id = $1 AND status = 'runnable' AND owner IS NOT NULL AND drive_attempts = 0",
        &[&id],
    )?;
    Ok(())
}

impl super::PgStore {
    /// `request_cancel` (`terminate` false) and `request_terminate`: sets
    /// the flags of `id` and of its unfinished descendants, with a history
    /// entry for each.
    fn request_stop(&self, id: &str, terminate: bool) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE executions SET cancel_requested = TRUE, terminate_requested = terminate_requested OR $2 WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')",
                &[&id, &terminate],
            )?;
            if n == 0 {
                return Err(match get_exec(c, &id)? {
                    None => StoreError::NotFound(format!("execution {id:?}")),
                    Some(e) => StoreError::Conflict(format!("execution {id:?} is {}", e.status)),
                }
                .into());
            }
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
            let children = c.query(
                "WITH RECURSIVE d(id) AS (SELECT id FROM executions WHERE parent_id = $1 UNION SELECT e.id FROM executions e JOIN d ON e.parent_id = d.id)
                 UPDATE executions SET cancel_requested = TRUE, terminate_requested = terminate_requested OR $2 WHERE id IN (SELECT id FROM d) AND (NOT cancel_requested OR (NOT terminate_requested AND $2)) AND status NOT IN ('completed', 'failed', 'cancelled') RETURNING id",
                &[&id, &terminate],
            )?;
            for child in children {
                let child: String = child.try_get(0)?;
                add_history(c, &child, now, kind, &serde_json::json!({"by": id}))?;
                cut_retry_wait(c, &child)?;
            }
            Ok(())
        })
    }
}
