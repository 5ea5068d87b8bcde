//! The flow-control rows of the PostgreSQL backend (`crate::flow`). An
//! acquisition locks its limits' rows (`SELECT … FOR UPDATE`, in scope
//! order): the nodes count, queue and take a limit's slots one at a time,
//! so no two nodes can both see a last free slot.

use super::PgStore;
use super::conn::{Conn, JobResult};
use crate::flow::rows::{
    AcquireRequest, Admission, FlowStore, LimitRow, LimitUsage, NodeBeat, ReserveRequest,
    ShareRequest, bucket_cap, decide, elsewhere, may_reserve, refill, shared_tokens,
};
use crate::store::StoreError;
use postgres::GenericClient;

/// Ends the deferral of `scope`'s first `n` waiters (they ask again now).
fn wake(c: &mut Conn<'_, impl GenericClient>, scope: &str, now: i64, n: i64) -> JobResult<()> {
    c.execute(
        "UPDATE executions SET lease_until = 0 WHERE drive_attempts = 0 AND lease_until > $2 AND id IN (
           SELECT holder FROM flow_waiters WHERE scope = $1 AND expires_ms >= $2 ORDER BY seq LIMIT $3)",
        &[&scope, &now, &n],
    )?;
    Ok(())
}

/// Gives back every flow slot `owner` holds and drops its running report,
/// waking as many head waiters per scope: a node restarted under the same
/// node id (`Store::release_owner`). Its slots would otherwise be renewed
/// by the new process's heartbeat (renewal goes by owner) and never
/// expire: the limit would lose them for as long as the node lives.
pub(super) fn release_owner_slots(
    c: &mut Conn<'_, impl GenericClient>,
    owner: &str,
    now: i64,
) -> JobResult<()> {
    let freed = c.query(
        "WITH d AS (DELETE FROM flow_slots WHERE owner = $1 RETURNING scope)
         SELECT scope, count(*)::BIGINT FROM d GROUP BY scope ORDER BY scope",
        &[&owner],
    )?;
    c.execute("DELETE FROM flow_running WHERE owner = $1", &[&owner])?;
    for row in &freed {
        let scope: String = row.try_get(0)?;
        let n: i64 = row.try_get(1)?;
        wake(c, &scope, now, n)?;
    }
    Ok(())
}

fn count(
    c: &mut Conn<'_, impl GenericClient>,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> JobResult<i64> {
    Ok(c.query_one(sql, params)?.try_get(0)?)
}

impl FlowStore for PgStore {
    fn put_limit(&self, row: &LimitRow) -> Result<(), StoreError> {
        let row = row.clone();
        self.write(move |c| {
            let tokens = row.burst.unwrap_or(0) as f64;
            c.execute(
                "INSERT INTO flow_limits (scope, max_concurrent, rate_per_s, burst, tokens, refilled_ms, updated_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $6)
                 ON CONFLICT (scope) DO UPDATE SET max_concurrent = excluded.max_concurrent,
                   rate_per_s = excluded.rate_per_s, burst = excluded.burst,
                   tokens = least(flow_limits.tokens, excluded.tokens), updated_ms = excluded.updated_ms",
                &[&row.scope, &row.max_concurrent, &row.rate_per_s, &row.burst, &tokens, &row.updated_ms],
            )?;
            wake(c, &row.scope, row.updated_ms, i64::MAX)
        })
    }

    fn list_limits(&self, now: i64) -> Result<Vec<LimitUsage>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT scope, max_concurrent, rate_per_s, burst, updated_ms,
                   ((SELECT count(*) FROM flow_slots s WHERE s.scope = l.scope AND s.expires_ms >= $1
                       AND s.holder NOT LIKE 'node/%')
                    + (SELECT coalesce(sum(r.running), 0) FROM flow_running r
                        WHERE r.scope = l.scope AND r.expires_ms >= $1))::BIGINT,
                   (SELECT count(*) FROM flow_waiters w WHERE w.scope = l.scope AND w.expires_ms >= $1)
                 FROM flow_limits l ORDER BY scope",
                &[&now],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                out.push(LimitUsage {
                    limit: LimitRow {
                        scope: r.try_get(0)?,
                        max_concurrent: r.try_get(1)?,
                        rate_per_s: r.try_get(2)?,
                        burst: r.try_get(3)?,
                        updated_ms: r.try_get(4)?,
                    },
                    in_use: r.try_get(5)?,
                    waiting: r.try_get(6)?,
                });
            }
            Ok(out)
        })
    }

    fn delete_limit(&self, scope: &str) -> Result<bool, StoreError> {
        let scope = scope.to_string();
        self.write(move |c| {
            wake(c, &scope, crate::ids::now_ms(), i64::MAX)?;
            c.execute("DELETE FROM flow_slots WHERE scope = $1", &[&scope])?;
            c.execute("DELETE FROM flow_waiters WHERE scope = $1", &[&scope])?;
            c.execute("DELETE FROM flow_running WHERE scope = $1", &[&scope])?;
            Ok(c.execute("DELETE FROM flow_limits WHERE scope = $1", &[&scope])? == 1)
        })
    }

    fn acquire(&self, req: &AcquireRequest) -> Result<Admission, StoreError> {
        let mut req = req.clone();
        req.scopes.sort();
        req.scopes.dedup();
        // Lazy (no flush of its own): a take lost to a crash of the
        // database (or, on SQLite, of the machine) is lost together with
        // every later commit, the drive's checkpoints included, so the
        // drive it admitted is lost too; a crash of the node alone loses
        // nothing, and its slots expire with its lease.
        self.write_lazy(move |c| {
            let now = req.now;
            let mut granted = true;
            let mut until = now;
            let mut furthest = 0;
            let mut waited: Option<i64> = None;
            let mut take: Vec<(String, bool, bool)> = Vec::new();
            for scope in &req.scopes {
                let Some(limit) = c.query_opt(
                    "SELECT max_concurrent, rate_per_s, burst, tokens, refilled_ms, shares::TEXT FROM flow_limits WHERE scope = $1 FOR UPDATE",
                    &[scope],
                )?
                else {
                    continue;
                };
                let max: Option<i64> = limit.try_get(0)?;
                let rate: Option<f64> = limit.try_get(1)?;
                let burst: Option<i64> = limit.try_get(2)?;
                let tokens: f64 = limit.try_get(3)?;
                let refilled: i64 = limit.try_get(4)?;
                // Tokens nodes hold in shares count against the bucket.
                let cap = bucket_cap(burst, shared_tokens(limit.try_get(5)?, now)?);
                c.execute(
                    "DELETE FROM flow_slots WHERE scope = $1 AND expires_ms < $2",
                    &[scope, &now],
                )?;
                c.execute(
                    "DELETE FROM flow_waiters WHERE scope = $1 AND expires_ms < $2",
                    &[scope, &now],
                )?;
                let held = c.query_opt(
                    "SELECT owner, expires_ms FROM flow_slots WHERE scope = $1 AND holder = $2",
                    &[scope, &req.holder],
                )?;
                if let Some(row) = held {
                    let owner: String = row.try_get(0)?;
                    // Another node's unexpired slot for this holder: a
                    // drive of the same execution there (one whose lease
                    // this node took over) may still be calling; the two
                    // never share a slot ([`elsewhere`]).
                    if owner != req.owner {
                        let expires: i64 = row.try_get(1)?;
                        granted = false;
                        until = until.max(elsewhere(expires));
                    }
                    take.push((scope.clone(), false, true));
                    continue;
                }
                let mine = c.query_opt(
                    "SELECT seq, enqueued_ms FROM flow_waiters WHERE scope = $1 AND holder = $2",
                    &[scope, &req.holder],
                )?;
                let (ahead, queued_at) = match mine {
                    Some(r) => {
                        let seq: i64 = r.try_get(0)?;
                        let at: i64 = r.try_get(1)?;
                        (
                            count(
                                c,
                                "SELECT count(*) FROM flow_waiters WHERE scope = $1 AND seq < $2",
                                &[scope, &seq],
                            )?,
                            Some(at),
                        )
                    }
                    None => (
                        count(
                            c,
                            "SELECT count(*) FROM flow_waiters WHERE scope = $1",
                            &[scope],
                        )?,
                        None,
                    ),
                };
                let used = count(
                    c,
                    "SELECT count(*) FROM flow_slots WHERE scope = $1",
                    &[scope],
                )?;
                let (ok, wait) = decide(max, rate, cap, tokens, refilled, used, ahead, &req);
                if let Some(rate) = rate {
                    let filled = refill(tokens, refilled, rate, cap, now);
                    c.execute(
                        "UPDATE flow_limits SET tokens = $2, refilled_ms = $3 WHERE scope = $1",
                        &[scope, &filled, &now],
                    )?;
                }
                if let Some(at) = queued_at {
                    waited = Some(waited.unwrap_or(0).max(now - at));
                }
                if !ok {
                    granted = false;
                    until = until.max(wait);
                    furthest = furthest.max(ahead);
                }
                take.push((scope.clone(), rate.is_some(), false));
            }
            if granted {
                let expires = now + req.lease_ms;
                for (scope, token, held) in &take {
                    if *held {
                        c.execute(
                            "UPDATE flow_slots SET expires_ms = $3, owner = $4 WHERE scope = $1 AND holder = $2",
                            &[scope, &req.holder, &expires, &req.owner],
                        )?;
                        continue;
                    }
                    c.execute(
                        "DELETE FROM flow_waiters WHERE scope = $1 AND holder = $2",
                        &[scope, &req.holder],
                    )?;
                    c.execute(
                        "INSERT INTO flow_slots (scope, holder, owner, expires_ms) VALUES ($1, $2, $3, $4)",
                        &[scope, &req.holder, &req.owner, &expires],
                    )?;
                    if *token {
                        c.execute(
                            "UPDATE flow_limits SET tokens = tokens - 1 WHERE scope = $1",
                            &[scope],
                        )?;
                    }
                }
                return Ok(Admission::Granted { waited_ms: waited });
            }
            let expires = until + req.lease_ms;
            for (scope, _, held) in &take {
                if *held {
                    continue;
                }
                c.execute(
                    "INSERT INTO flow_waiters (scope, holder, seq, enqueued_ms, expires_ms)
                     VALUES ($1, $2, (SELECT coalesce(max(seq), 0) + 1 FROM flow_waiters WHERE scope = $1), $3, $4)
                     ON CONFLICT (scope, holder) DO UPDATE SET expires_ms = excluded.expires_ms",
                    &[scope, &req.holder, &now, &expires],
                )?;
            }
            Ok(Admission::Wait {
                until_ms: until,
                ahead: furthest,
            })
        })
    }

    fn release(&self, scopes: &[String], holder: &str, now: i64) -> Result<(), StoreError> {
        let (scopes, holder) = (scopes.to_vec(), holder.to_string());
        self.write_lazy(move |c| {
            for scope in &scopes {
                let n = c.execute(
                    "DELETE FROM flow_slots WHERE scope = $1 AND holder = $2",
                    &[scope, &holder],
                )?;
                c.execute(
                    "DELETE FROM flow_waiters WHERE scope = $1 AND holder = $2",
                    &[scope, &holder],
                )?;
                if n > 0 {
                    wake(c, scope, now, 1)?;
                }
            }
            Ok(())
        })
    }

    fn reserve(&self, req: &ReserveRequest) -> Result<bool, StoreError> {
        let req = req.clone();
        self.write(move |c| {
            let Some(limit) = c.query_opt(
                "SELECT max_concurrent FROM flow_limits WHERE scope = $1 FOR UPDATE",
                &[&req.scope],
            )?
            else {
                return Ok(false);
            };
            let max: Option<i64> = limit.try_get(0)?;
            c.execute(
                "DELETE FROM flow_slots WHERE scope = $1 AND expires_ms < $2",
                &[&req.scope, &req.now],
            )?;
            c.execute(
                "DELETE FROM flow_waiters WHERE scope = $1 AND expires_ms < $2",
                &[&req.scope, &req.now],
            )?;
            let waiting = count(
                c,
                "SELECT count(*) FROM flow_waiters WHERE scope = $1",
                &[&req.scope],
            )?;
            let used = count(
                c,
                "SELECT count(*) FROM flow_slots WHERE scope = $1",
                &[&req.scope],
            )?;
            if !may_reserve(max, used, waiting, req.holders.len() as i64) {
                return Ok(false);
            }
            let expires = req.now + req.lease_ms;
            // Every reserved slot in one statement (one round trip while
            // the limit's row is locked, not one per slot).
            c.execute(
                "INSERT INTO flow_slots (scope, holder, owner, expires_ms)
                 SELECT $1, h, $3, $4 FROM UNNEST($2::text[]) AS h",
                &[&req.scope, &req.holders, &req.owner, &expires],
            )?;
            Ok(true)
        })
    }

    fn give_back(&self, scope: &str, holders: &[String], now: i64) -> Result<(), StoreError> {
        let (scope, holders) = (scope.to_string(), holders.to_vec());
        self.write(move |c| {
            let n = c.execute(
                "DELETE FROM flow_slots WHERE scope = $1 AND holder = ANY($2)",
                &[&scope, &holders],
            )? as i64;
            if n > 0 {
                wake(c, &scope, now, n)?;
            }
            Ok(())
        })
    }

    fn renew_slots(&self, owner: &str, until_ms: i64) -> Result<(), StoreError> {
        let owner = owner.to_string();
        self.write_lazy(move |c| {
            c.execute(
                "UPDATE flow_slots SET expires_ms = $2 WHERE owner = $1",
                &[&owner, &until_ms],
            )?;
            Ok(())
        })
    }

    fn beat(&self, beat: &NodeBeat) -> Result<(), StoreError> {
        let owner = beat.owner.clone();
        let (until, renew) = (beat.until_ms, beat.renew_slots);
        let (scopes, counts): (Vec<String>, Vec<i64>) = beat.running.iter().cloned().unzip();
        // One statement, lazy as the renewal was: the slots renewed (when
        // the node holds any), the node's report replaced.
        self.write_one(false, move |c| {
            c.query_one(
                "WITH r AS (UPDATE flow_slots SET expires_ms = $2 WHERE owner = $1 AND $3 RETURNING 1),
                      d AS (DELETE FROM flow_running WHERE owner = $1 AND NOT (scope = ANY($4)) RETURNING 1),
                      u AS (INSERT INTO flow_running (scope, owner, running, expires_ms)
                            SELECT s, $1, n, $2 FROM UNNEST($4::TEXT[], $5::BIGINT[]) AS t(s, n)
                            ON CONFLICT (scope, owner) DO UPDATE
                              SET running = excluded.running, expires_ms = excluded.expires_ms
                            RETURNING 1)
                 SELECT (SELECT count(*) FROM r) + (SELECT count(*) FROM d) + (SELECT count(*) FROM u)",
                &[&owner, &until, &renew, &scopes, &counts],
            )?;
            Ok(())
        })
    }

    fn queued(&self, holder: &str, now: i64) -> Result<Vec<(String, i64)>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT w.scope, (SELECT count(*) FROM flow_waiters a WHERE a.scope = w.scope AND a.seq < w.seq AND a.expires_ms >= $2)
                 FROM flow_waiters w WHERE w.holder = $1 AND w.expires_ms >= $2 ORDER BY w.scope",
                &[&holder, &now],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                out.push((r.try_get(0)?, r.try_get(1)?));
            }
            Ok(out)
        })
    }

    fn take_share(&self, req: &ShareRequest) -> Result<i64, StoreError> {
        let req = req.clone();
        let unused = req.unused.max(0) as f64;
        let expires = req.now + req.ttl_ms;
        // One statement (`flow::rows::take_share`'s arithmetic in SQL):
        // the limit's row locked, the shares' sums computed from the
        // locked version (every input is in that row, so a take that
        // waited for another node's sees its share), the row updated and
        // the head waiters woken when tokens come back to a queue. Lazy,
        // as `acquire`.
        self.write_one(false, move |c| {
            let row = c.query_opt(
                "WITH l AS (
                   SELECT scope, rate_per_s, burst, tokens, refilled_ms, shares FROM flow_limits
                    WHERE scope = $1 AND rate_per_s IS NOT NULL
                      AND (max_concurrent IS NULL OR max_concurrent >= $7) FOR UPDATE),
                 s AS (
                   SELECT l.scope, l.rate_per_s, l.burst, l.tokens, l.refilled_ms,
                     (SELECT coalesce(jsonb_object_agg(k, v), '{}'::jsonb) FROM jsonb_each(l.shares) AS e(k, v)
                       WHERE k <> $2 AND (v->>1)::bigint >= $3) AS kept,
                     (SELECT coalesce(sum((v->>0)::float8), 0) FROM jsonb_each(l.shares) AS e(k, v)
                       WHERE k <> $2 AND (v->>1)::bigint >= $3) AS others,
                     (SELECT coalesce(sum((v->>0)::float8), 0) FROM jsonb_each(l.shares) AS e(k, v)
                       WHERE k = $2 AND (v->>1)::bigint >= $3) AS mine,
                     EXISTS (SELECT 1 FROM flow_waiters w WHERE w.scope = $1 AND w.expires_ms >= $3) AS queued
                   FROM l),
                 a AS (
                   SELECT s.*, least(greatest(coalesce(burst, 1), 1) - others - mine,
                                     tokens + greatest($3 - refilled_ms, 0) * rate_per_s / 1000.0)
                               + least($5::float8, mine) AS avail
                   FROM s),
                 g AS (
                   SELECT a.*, CASE WHEN queued THEN 0::bigint
                                    ELSE greatest(0, least($4::bigint, floor(avail)::bigint)) END AS n
                   FROM a),
                 u AS (
                   UPDATE flow_limits f SET tokens = g.avail - g.n, refilled_ms = $3,
                     shares = CASE WHEN g.n > 0
                                   THEN g.kept || jsonb_build_object($2::text, jsonb_build_array(g.n, $6::bigint))
                                   ELSE g.kept END
                   FROM g WHERE f.scope = g.scope
                   RETURNING g.n),
                 wk AS (
                   UPDATE executions SET lease_until = 0
                    WHERE drive_attempts = 0 AND lease_until > $3 AND id IN (
                      SELECT holder FROM flow_waiters WHERE scope = $1 AND expires_ms >= $3 ORDER BY seq
                       LIMIT (SELECT CASE WHEN queued THEN greatest(floor(avail), 0)::bigint ELSE 0 END FROM g)))
                 SELECT n FROM u",
                &[&req.scope, &req.owner, &req.now, &req.want, &unused, &expires, &crate::flow::allot::MIN_LIMIT],
            )?;
            Ok(match row {
                Some(r) => r.try_get::<_, i64>(0)?,
                None => 0,
            })
        })
    }
}
