//! Running one group on a writer connection: a lone single-statement job
//! in autocommit; a group of one kind folded into one statement per kind;
//! otherwise one transaction, first without savepoints and, if a job
//! fails, again with a savepoint per job so that only that job is undone.

use super::conn::{Cache, Conn};
use super::job::{ATTEMPTS, Job, Merge, STEP_KIND};
use super::rows::{exec_row, in_journal_of};
use crate::store::group_commit::{GroupTx, Ran, run_group};
use crate::store::{EXEC_COLS, ExecutionRow, StoreError};
use postgres::Client;

/// Runs a group: a lone single-statement job without `BEGIN`/`COMMIT`, a
/// group of one foldable kind as one statement in autocommit, any other
/// group as the engine's transaction (`run_group`: optimistic first, then
/// a savepoint per job if one fails), its foldable writes folded.
pub(crate) fn run_batch(
    client: &mut Client,
    cache: &mut Cache,
    batch: &mut [Job],
) -> Result<(), StoreError> {
    if let [job] = batch
        && job.single
    {
        // Autocommit: the statement commits (durably on the durable lane,
        // whose session keeps `synchronous_commit = on`) before it answers,
        // or fails and leaves nothing. Retryable failures run it again.
        while let Ran::Retry = (job.run)(&mut Conn { c: client, cache }) {}
        return Ok(());
    }
    // A group that folds into one statement (only journal rows, or only
    // plain steps) runs it in autocommit: one round trip for the group.
    let kinds: Vec<Option<u8>> = batch
        .iter()
        .map(|j| j.merge.as_ref().map(|(m, _)| m.kind()))
        .collect();
    let one_kind =
        kinds.first().is_some_and(|k| k.is_some()) && kinds.windows(2).all(|w| w[0] == w[1]);
    // A lone checkpoint that is not one statement (a snapshot, which drops
    // the older rows, or a terminal one, which closes the open waits)
    // folds alone too: one statement in autocommit instead of `BEGIN`,
    // three or four statements and `COMMIT`.
    let lone_step = batch.len() == 1 && kinds.first() == Some(&Some(STEP_KIND));
    if (batch.len() > 1 || lone_step)
        && one_kind
        && let Ok(done) = run_merged(client, cache, batch)
        && done.iter().all(|d| *d)
    {
        return Ok(());
    }
    let r = run_group(&mut PgTx { client, cache }, batch, ATTEMPTS);
    if r.is_err() && !client.is_closed() {
        let _ = client.batch_execute("ROLLBACK");
    }
    r
}

/// A group's journal rows in one statement.
const JOURNAL_INSERT_MANY: &str = "INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, at_ms, history_seq)
     SELECT k, e, y, i, s, r, $7, nextval('history_seq_seq')
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(k, e, y, i, s, r)
     ON CONFLICT (idempotency_key) DO NOTHING";

/// A group's checkpoints in one statement: each one's compare-and-set,
/// and only where that hit: its checkpoint row, its history entries (in
/// order), for a snapshot the deletion of the older checkpoint rows, for a
/// terminal status the closing of its open waits; returns the executions
/// whose checkpoint was taken. (`e.id = ANY($1)` gives the planner the
/// index lookup outright: joined to the unnested rows alone, a plan made
/// while the table was small scanned all of it for every group.) Every
/// part reads the tables as they were before the statement, so the
/// deletion never sees the row inserted beside it.
const STEP_MANY: &str = "WITH d AS (SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
            AS d(id, owner, rev, status, result, message, pending, kind, body)),
          cas AS (UPDATE executions e SET revision = d.rev, status = d.status, result = d.result, message = d.message, pending = d.pending, updated_ms = $10,
              owner = CASE WHEN d.status IN ('completed', 'failed', 'cancelled') THEN NULL ELSE e.owner END,
              lease_until = CASE WHEN d.status IN ('completed', 'failed', 'cancelled') THEN 0 ELSE e.lease_until END
            FROM d WHERE e.id = ANY($1::text[]) AND e.id = d.id AND e.owner = d.owner AND e.revision = d.rev - 1 RETURNING e.id),
          taken AS (SELECT d.* FROM d JOIN cas ON cas.id = d.id),
          h AS (INSERT INTO history (execution_id, at_ms, kind, detail)
            SELECT h.id, $10, h.kind, h.detail FROM UNNEST($11::text[], $12::text[], $13::text[]) WITH ORDINALITY AS h(id, kind, detail, n)
            JOIN cas ON cas.id = h.id ORDER BY h.n),
          old AS (DELETE FROM checkpoints c USING taken t WHERE t.kind = 'snapshot' AND c.execution_id = t.id AND c.revision < t.rev),
          closed AS (UPDATE waits w SET delivered = TRUE FROM taken t
            WHERE t.status IN ('completed', 'failed', 'cancelled') AND w.execution_id = t.id AND NOT w.delivered)
     INSERT INTO checkpoints (execution_id, revision, kind, body)
       SELECT id, rev, kind, body FROM taken RETURNING execution_id";

/// A group's lease claims in one statement, as [`PgStore::claim_for_drive`]
/// takes each: rows already locked by another transaction are skipped
/// (`FOR UPDATE SKIP LOCKED`), never waited for; returns each claimed row,
/// its execution's journal keys and its stored `traceparent`.
fn claim_many_sql() -> String {
    format!(
        "WITH d AS (SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[]) AS d(id, owner, until, now)),
              free AS (SELECT e.id FROM executions e JOIN d ON d.id = e.id
                WHERE e.id = ANY($1::text[]) AND (e.owner IS NULL OR e.owner = d.owner OR e.lease_until < d.now) AND e.error IS NULL
                  AND NOT e.paused AND NOT EXISTS (SELECT 1 FROM paused_programs p WHERE p.name = e.program_name)
                FOR UPDATE OF e SKIP LOCKED)
         UPDATE executions e SET owner = d.owner, lease_until = d.until, drive_attempts = e.drive_attempts + 1
           FROM d JOIN free ON free.id = d.id WHERE e.id = d.id
         RETURNING {}, ARRAY(SELECT idempotency_key FROM effects WHERE {}),
           (SELECT t.traceparent FROM execution_traces t WHERE t.execution_id = e.id)",
        crate::store::drive_cols("e."),
        in_journal_of!("e.id")
    )
}

/// A group's lease releases in one statement.
const RELEASE_MANY: &str =
    "UPDATE executions e SET owner = NULL, lease_until = 0, drive_attempts = 0
     FROM UNNEST($1::text[], $2::text[]) AS d(id, owner)
     WHERE e.id = ANY($1::text[]) AND e.id = d.id AND e.owner = d.owner";

/// Folds the group's mergeable jobs (see [`Merge`]), two or more of a
/// kind (checkpoints: one or more), into one statement per kind, and sets
/// each one's outcome; returns which jobs it ran. An error leaves the
/// outcomes to a re-run job by job.
fn run_merged(
    client: &mut Client,
    cache: &mut Cache,
    batch: &mut [Job],
) -> Result<Vec<bool>, StoreError> {
    let mut done = vec![false; batch.len()];
    let journal: Vec<usize> = (0..batch.len())
        .filter(|&i| matches!(batch[i].merge, Some((Merge::Journal { .. }, _))))
        .collect();
    let steps: Vec<usize> = (0..batch.len())
        .filter(|&i| matches!(batch[i].merge, Some((Merge::Step { .. }, _))))
        .collect();
    let mut conn = Conn { c: client, cache };
    if journal.len() >= 2 {
        let mut cols: [Vec<&str>; 6] = Default::default();
        for &i in &journal {
            if let Some((
                Merge::Journal {
                    idempotency_key,
                    execution_id,
                    key,
                    input,
                    status,
                    result,
                },
                _,
            )) = &batch[i].merge
            {
                for (col, v) in
                    cols.iter_mut()
                        .zip([idempotency_key, execution_id, key, input, status, result])
                {
                    col.push(v);
                }
            }
        }
        let now = crate::ids::now_ms();
        let [a, b, c, d, e, f] = &cols;
        conn.execute(JOURNAL_INSERT_MANY, &[a, b, c, d, e, f, &now])?;
        for &i in &journal {
            done[i] = true;
        }
    }
    // Two steps of one execution cannot share a group (one lease, one
    // caller); if they ever did, they run one by one.
    let unique = {
        let mut ids: Vec<&str> = steps
            .iter()
            .filter_map(|&i| match &batch[i].merge {
                Some((Merge::Step { id, .. }, _)) => Some(id.as_str()),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.windows(2).all(|w| w[0] != w[1])
    };
    let mut taken = std::collections::HashSet::new();
    if !steps.is_empty() && unique {
        let mut text: [Vec<&str>; 5] = Default::default();
        let mut opt: [Vec<Option<&str>>; 3] = Default::default();
        let mut revs: Vec<i64> = Vec::with_capacity(steps.len());
        let mut entries: [Vec<&str>; 3] = Default::default();
        for &i in &steps {
            if let Some((
                Merge::Step {
                    id,
                    owner,
                    revision,
                    status,
                    result,
                    message,
                    pending,
                    kind,
                    body,
                    history,
                },
                _,
            )) = &batch[i].merge
            {
                for (col, v) in text.iter_mut().zip([id, owner, status, kind, body]) {
                    col.push(v);
                }
                for (col, v) in opt.iter_mut().zip([result, message, pending]) {
                    col.push(v.as_deref());
                }
                revs.push(*revision);
                for (k, d) in history {
                    for (col, v) in entries.iter_mut().zip([id, k, d]) {
                        col.push(v);
                    }
                }
            }
        }
        let now = crate::ids::now_ms();
        let [id, owner, status, kind, body] = &text;
        let [result, message, pending] = &opt;
        let [h_id, h_kind, h_detail] = &entries;
        let rows = conn.query(
            STEP_MANY,
            &[
                id, owner, &revs, status, result, message, pending, kind, body, &now, h_id, h_kind,
                h_detail,
            ],
        )?;
        for r in &rows {
            taken.insert(r.try_get::<_, String>(0)?);
        }
        for &i in &steps {
            done[i] = true;
        }
    }
    // Claims: each id at most once (the scheduler dispatches an execution
    // to one worker; a duplicate would be claimed for both), else one by one.
    let claims: Vec<usize> = (0..batch.len())
        .filter(|&i| matches!(batch[i].merge, Some((Merge::Claim { .. }, _))))
        .collect();
    let mut claimed: std::collections::HashMap<String, (ExecutionRow, Option<Vec<String>>)> =
        std::collections::HashMap::new();
    let claim_ids_unique = {
        let mut ids: Vec<&str> = claims
            .iter()
            .filter_map(|&i| match &batch[i].merge {
                Some((Merge::Claim { id, .. }, _)) => Some(id.as_str()),
                _ => None,
            })
            .collect();
        ids.sort_unstable();
        ids.windows(2).all(|w| w[0] != w[1])
    };
    if claims.len() >= 2 && claim_ids_unique {
        let (mut ids, mut owners, mut untils, mut nows) = (vec![], vec![], vec![], vec![]);
        for &i in &claims {
            if let Some((
                Merge::Claim {
                    id,
                    owner,
                    until,
                    now,
                },
                _,
            )) = &batch[i].merge
            {
                ids.push(id.as_str());
                owners.push(owner.as_str());
                untils.push(*until);
                nows.push(*now);
            }
        }
        let rows = conn.query(&claim_many_sql(), &[&ids, &owners, &untils, &nows])?;
        let keys_at = EXEC_COLS.split(',').count();
        for r in &rows {
            let keys: Vec<String> = r.try_get(keys_at)?;
            // A row that does not decode fails the fold; the group is then
            // run job by job (claiming again what this owner holds is
            // allowed), and that job gets the error.
            let mut row = exec_row(r)?;
            row.stored_traceparent = Some(r.try_get(keys_at + 1)?);
            claimed.insert(row.id.clone(), (row, Some(keys)));
        }
        for &i in &claims {
            done[i] = true;
        }
    }
    let releases: Vec<usize> = (0..batch.len())
        .filter(|&i| matches!(batch[i].merge, Some((Merge::Release { .. }, _))))
        .collect();
    if releases.len() >= 2 {
        let mut cols: [Vec<&str>; 2] = Default::default();
        for &i in &releases {
            if let Some((Merge::Release { id, owner }, _)) = &batch[i].merge {
                cols[0].push(id);
                cols[1].push(owner);
            }
        }
        let [id, owner] = &cols;
        conn.execute(RELEASE_MANY, &[id, owner])?;
        for &i in &releases {
            done[i] = true;
        }
    }
    for (i, job) in batch.iter_mut().enumerate() {
        if !done[i] {
            continue;
        }
        if let Some((m, set)) = &mut job.merge {
            set(match m {
                Merge::Step { id, revision, .. } if !taken.contains(id.as_str()) => {
                    Err(StoreError::Conflict(format!(
                        "execution {id}: lease lost or revision moved (expected {})",
                        *revision - 1
                    )))
                }
                Merge::Claim { id, .. } => Ok(Box::new(claimed.remove(id.as_str()))),
                _ => Ok(Box::new(())),
            });
        }
    }
    Ok(done)
}

/// A group's transaction on a writer connection (see `run_group`).
struct PgTx<'a> {
    client: &'a mut Client,
    cache: &'a mut Cache,
}

impl GroupTx<Job> for PgTx<'_> {
    fn begin(&mut self) -> Result<(), StoreError> {
        Ok(self.client.batch_execute("BEGIN")?)
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        Ok(self.client.batch_execute("COMMIT")?)
    }

    fn rollback(&mut self) -> Result<(), StoreError> {
        Ok(self.client.batch_execute("ROLLBACK")?)
    }

    fn savepoint(&mut self) -> Result<(), StoreError> {
        Ok(self.client.batch_execute("SAVEPOINT job")?)
    }

    fn release(&mut self, undo: bool) -> Result<(), StoreError> {
        Ok(self.client.batch_execute(if undo {
            "ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job"
        } else {
            "RELEASE SAVEPOINT job"
        })?)
    }

    fn fold(&mut self, group: &mut [Job]) -> Result<Vec<bool>, StoreError> {
        if group.len() > 1 {
            run_merged(self.client, self.cache, group)
        } else {
            Ok(vec![false; group.len()])
        }
    }

    fn run(&mut self, job: &mut Job) -> Ran {
        (job.run)(&mut Conn {
            c: &mut *self.client,
            cache: &mut *self.cache,
        })
    }
}
