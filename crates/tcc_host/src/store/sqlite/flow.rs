//! The flow-control rows of the SQLite backend (`crate::flow`). Writes are
//! serialized by the store's one writer, so an acquisition reads and
//! updates a limit's slots, queue and bucket without a race.

use super::SqliteStore;
use super::cached::Cached;
use crate::flow::rows::{
    AcquireRequest, Admission, FlowStore, LimitRow, LimitUsage, NodeBeat, ReserveRequest,
    ShareRequest, bucket_cap, decide, elsewhere, may_reserve, may_share, parse_shares, refill,
    shared_tokens, shares_text, take_share,
};
use crate::store::StoreError;
use rusqlite::{Connection, OptionalExtension, params};

/// Ends the deferral of `scope`'s first `n` waiters (they ask again now).
fn wake(c: &Connection, scope: &str, now: i64, n: i64) -> Result<(), StoreError> {
    c.exec_cached(
        "UPDATE executions SET lease_until = 0 WHERE drive_attempts = 0 AND lease_until > ?2 AND id IN (
           SELECT holder FROM flow_waiters WHERE scope = ?1 AND expires_ms >= ?2 ORDER BY seq LIMIT ?3)",
        params![scope, now, n],
    )?;
    Ok(())
}

/// Gives back every flow slot `owner` holds and drops its running report,
/// waking as many head waiters per scope: a node restarted under the same
/// node id (`Store::release_owner`). Its slots would otherwise be renewed
/// by the new process's heartbeat (renewal goes by owner) and never
/// expire: the limit would lose them for as long as the node lives.
pub(super) fn release_owner_slots(c: &Connection, owner: &str, now: i64) -> Result<(), StoreError> {
    let freed: Vec<(String, i64)> = {
        let mut st = c.prepare_cached(
            "SELECT scope, count(*) FROM flow_slots WHERE owner = ?1 GROUP BY scope ORDER BY scope",
        )?;
        st.query_map(params![owner], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    c.exec_cached("DELETE FROM flow_slots WHERE owner = ?1", params![owner])?;
    c.exec_cached("DELETE FROM flow_running WHERE owner = ?1", params![owner])?;
    for (scope, n) in &freed {
        wake(c, scope, now, *n)?;
    }
    Ok(())
}

impl FlowStore for SqliteStore {
    fn put_limit(&self, row: &LimitRow) -> Result<(), StoreError> {
        let row = row.clone();
        self.write(move |c| {
            let tokens = row.burst.unwrap_or(0) as f64;
            c.exec_cached(
                "INSERT INTO flow_limits (scope, max_concurrent, rate_per_s, burst, tokens, refilled_ms, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
                 ON CONFLICT (scope) DO UPDATE SET max_concurrent = excluded.max_concurrent,
                   rate_per_s = excluded.rate_per_s, burst = excluded.burst,
                   tokens = min(flow_limits.tokens, excluded.tokens), updated_ms = excluded.updated_ms",
                params![row.scope, row.max_concurrent, row.rate_per_s, row.burst, tokens, row.updated_ms],
            )?;
            wake(c, &row.scope, row.updated_ms, i64::MAX)
        })
    }

    fn list_limits(&self, now: i64) -> Result<Vec<LimitUsage>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT scope, max_concurrent, rate_per_s, burst, updated_ms,
                   (SELECT count(*) FROM flow_slots s WHERE s.scope = l.scope AND s.expires_ms >= ?1
                      AND s.holder NOT LIKE 'node/%')
                   + (SELECT coalesce(sum(r.running), 0) FROM flow_running r
                       WHERE r.scope = l.scope AND r.expires_ms >= ?1),
                   (SELECT count(*) FROM flow_waiters w WHERE w.scope = l.scope AND w.expires_ms >= ?1)
                 FROM flow_limits l ORDER BY scope",
            )?;
            let rows = st
                .query_map(params![now], |r| {
                    Ok(LimitUsage {
                        limit: LimitRow {
                            scope: r.get(0)?,
                            max_concurrent: r.get(1)?,
                            rate_per_s: r.get(2)?,
                            burst: r.get(3)?,
                            updated_ms: r.get(4)?,
                        },
                        in_use: r.get(5)?,
                        waiting: r.get(6)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
    }

    fn delete_limit(&self, scope: &str) -> Result<bool, StoreError> {
        let scope = scope.to_string();
        self.write(move |c| {
            wake(c, &scope, crate::ids::now_ms(), i64::MAX)?;
            c.exec_cached("DELETE FROM flow_slots WHERE scope = ?1", params![scope])?;
            c.exec_cached("DELETE FROM flow_waiters WHERE scope = ?1", params![scope])?;
            c.exec_cached("DELETE FROM flow_running WHERE scope = ?1", params![scope])?;
            Ok(c.exec_cached("DELETE FROM flow_limits WHERE scope = ?1", params![scope])? == 1)
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
            // (scope, takes a token, already held)
            let mut take: Vec<(String, bool, bool)> = Vec::new();
            for scope in &req.scopes {
                let limit = c
                    .query_row_cached(
                        "SELECT max_concurrent, rate_per_s, burst, tokens, refilled_ms, shares FROM flow_limits WHERE scope = ?1",
                        params![scope],
                        |r| {
                            Ok((
                                r.get::<_, Option<i64>>(0)?,
                                r.get::<_, Option<f64>>(1)?,
                                r.get::<_, Option<i64>>(2)?,
                                r.get::<_, f64>(3)?,
                                r.get::<_, i64>(4)?,
                                r.get::<_, String>(5)?,
                            ))
                        },
                    )
                    .optional()?;
                let Some((max, rate, burst, tokens, refilled, shares)) = limit else {
                    continue;
                };
                // Tokens nodes hold in shares count against the bucket.
                let cap = bucket_cap(burst, shared_tokens(&shares, now)?);
                c.exec_cached(
                    "DELETE FROM flow_slots WHERE scope = ?1 AND expires_ms < ?2",
                    params![scope, now],
                )?;
                c.exec_cached(
                    "DELETE FROM flow_waiters WHERE scope = ?1 AND expires_ms < ?2",
                    params![scope, now],
                )?;
                let held = c
                    .query_row_cached(
                        "SELECT owner, expires_ms FROM flow_slots WHERE scope = ?1 AND holder = ?2",
                        params![scope, req.holder],
                        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
                    )
                    .optional()?;
                if let Some((owner, expires)) = held {
                    // Another node's unexpired slot for this holder: the
                    // two never share a slot ([`elsewhere`]).
                    if owner != req.owner {
                        granted = false;
                        until = until.max(elsewhere(expires));
                    }
                    take.push((scope.clone(), false, true));
                    continue;
                }
                let mine = c
                    .query_row_cached(
                        "SELECT seq, enqueued_ms FROM flow_waiters WHERE scope = ?1 AND holder = ?2",
                        params![scope, req.holder],
                        |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                    )
                    .optional()?;
                let (ahead, queued_at) = match mine {
                    Some((seq, at)) => (
                        c.query_row_cached(
                            "SELECT count(*) FROM flow_waiters WHERE scope = ?1 AND seq < ?2",
                            params![scope, seq],
                            |r| r.get::<_, i64>(0),
                        )?,
                        Some(at),
                    ),
                    None => (
                        c.query_row_cached(
                            "SELECT count(*) FROM flow_waiters WHERE scope = ?1",
                            params![scope],
                            |r| r.get::<_, i64>(0),
                        )?,
                        None,
                    ),
                };
                let used = c.query_row_cached(
                    "SELECT count(*) FROM flow_slots WHERE scope = ?1",
                    params![scope],
                    |r| r.get::<_, i64>(0),
                )?;
                let (ok, wait) = decide(max, rate, cap, tokens, refilled, used, ahead, &req);
                if let Some(rate) = rate {
                    let filled = refill(tokens, refilled, rate, cap, now);
                    c.exec_cached(
                        "UPDATE flow_limits SET tokens = ?2, refilled_ms = ?3 WHERE scope = ?1",
                        params![scope, filled, now],
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
                for (scope, token, held) in &take {
                    let expires = now + req.lease_ms;
                    if *held {
                        c.exec_cached(
                            "UPDATE flow_slots SET expires_ms = ?3, owner = ?4 WHERE scope = ?1 AND holder = ?2",
                            params![scope, req.holder, expires, req.owner],
                        )?;
                        continue;
                    }
                    c.exec_cached(
                        "DELETE FROM flow_waiters WHERE scope = ?1 AND holder = ?2",
                        params![scope, req.holder],
                    )?;
                    c.exec_cached(
                        "INSERT INTO flow_slots (scope, holder, owner, expires_ms) VALUES (?1, ?2, ?3, ?4)",
                        params![scope, req.holder, req.owner, expires],
                    )?;
                    if *token {
                        c.exec_cached(
                            "UPDATE flow_limits SET tokens = tokens - 1 WHERE scope = ?1",
                            params![scope],
                        )?;
                    }
                }
                return Ok(Admission::Granted { waited_ms: waited });
            }
            // Queue (or stay queued) in every scope, until the retry and a
            // lease after it: a waiter whose node died leaves the queue.
            let expires = until + req.lease_ms;
            for (scope, _, held) in &take {
                if *held {
                    continue;
                }
                c.exec_cached(
                    "INSERT INTO flow_waiters (scope, holder, seq, enqueued_ms, expires_ms)
                     VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) + 1 FROM flow_waiters WHERE scope = ?1), ?3, ?4)
                     ON CONFLICT (scope, holder) DO UPDATE SET expires_ms = excluded.expires_ms",
                    params![scope, req.holder, now, expires],
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
                let n = c.exec_cached(
                    "DELETE FROM flow_slots WHERE scope = ?1 AND holder = ?2",
                    params![scope, holder],
                )?;
                c.exec_cached(
                    "DELETE FROM flow_waiters WHERE scope = ?1 AND holder = ?2",
                    params![scope, holder],
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
            let limit = c
                .query_row_cached(
                    "SELECT max_concurrent FROM flow_limits WHERE scope = ?1",
                    params![req.scope],
                    |r| r.get::<_, Option<i64>>(0),
                )
                .optional()?;
            let Some(max) = limit else {
                return Ok(false);
            };
            c.exec_cached(
                "DELETE FROM flow_slots WHERE scope = ?1 AND expires_ms < ?2",
                params![req.scope, req.now],
            )?;
            c.exec_cached(
                "DELETE FROM flow_waiters WHERE scope = ?1 AND expires_ms < ?2",
                params![req.scope, req.now],
            )?;
            let waiting = c.query_row_cached(
                "SELECT count(*) FROM flow_waiters WHERE scope = ?1",
                params![req.scope],
                |r| r.get::<_, i64>(0),
            )?;
            let used = c.query_row_cached(
                "SELECT count(*) FROM flow_slots WHERE scope = ?1",
                params![req.scope],
                |r| r.get::<_, i64>(0),
            )?;
            if !may_reserve(max, used, waiting, req.holders.len() as i64) {
                return Ok(false);
            }
            for holder in &req.holders {
                c.exec_cached(
                    "INSERT INTO flow_slots (scope, holder, owner, expires_ms) VALUES (?1, ?2, ?3, ?4)",
                    params![req.scope, holder, req.owner, req.now + req.lease_ms],
                )?;
            }
            Ok(true)
        })
    }

    fn give_back(&self, scope: &str, holders: &[String], now: i64) -> Result<(), StoreError> {
        let (scope, holders) = (scope.to_string(), holders.to_vec());
        self.write(move |c| {
            let mut n = 0;
            for holder in &holders {
                n += c.exec_cached(
                    "DELETE FROM flow_slots WHERE scope = ?1 AND holder = ?2",
                    params![scope, holder],
                )? as i64;
            }
            if n > 0 {
                wake(c, &scope, now, n)?;
            }
            Ok(())
        })
    }

    fn renew_slots(&self, owner: &str, until_ms: i64) -> Result<(), StoreError> {
        let owner = owner.to_string();
        self.write_lazy(move |c| {
            c.exec_cached(
                "UPDATE flow_slots SET expires_ms = ?2 WHERE owner = ?1",
                params![owner, until_ms],
            )?;
            Ok(())
        })
    }

    fn beat(&self, beat: &NodeBeat) -> Result<(), StoreError> {
        let beat = beat.clone();
        self.write_lazy(move |c| {
            if beat.renew_slots {
                c.exec_cached(
                    "UPDATE flow_slots SET expires_ms = ?2 WHERE owner = ?1",
                    params![beat.owner, beat.until_ms],
                )?;
            }
            c.exec_cached(
                "DELETE FROM flow_running WHERE owner = ?1",
                params![beat.owner],
            )?;
            for (scope, running) in &beat.running {
                c.exec_cached(
                    "INSERT INTO flow_running (scope, owner, running, expires_ms) VALUES (?1, ?2, ?3, ?4)",
                    params![scope, beat.owner, running, beat.until_ms],
                )?;
            }
            Ok(())
        })
    }

    fn queued(&self, holder: &str, now: i64) -> Result<Vec<(String, i64)>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT w.scope, (SELECT count(*) FROM flow_waiters a WHERE a.scope = w.scope AND a.seq < w.seq AND a.expires_ms >= ?2)
                 FROM flow_waiters w WHERE w.holder = ?1 AND w.expires_ms >= ?2 ORDER BY w.scope",
            )?;
            let rows = st
                .query_map(params![holder, now], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
    }

    fn take_share(&self, req: &ShareRequest) -> Result<i64, StoreError> {
        let req = req.clone();
        // Lazy, as `acquire` (the one writer serializes it with every
        // other take of the limit's tokens).
        self.write_lazy(move |c| {
            let limit = c
                .query_row_cached(
                    "SELECT rate_per_s, burst, tokens, refilled_ms, shares,
                       EXISTS (SELECT 1 FROM flow_waiters w WHERE w.scope = l.scope AND w.expires_ms >= ?2),
                       max_concurrent
                     FROM flow_limits l WHERE scope = ?1 AND rate_per_s IS NOT NULL",
                    params![req.scope, req.now],
                    |r| {
                        Ok((
                            r.get::<_, f64>(0)?,
                            r.get::<_, Option<i64>>(1)?,
                            r.get::<_, f64>(2)?,
                            r.get::<_, i64>(3)?,
                            r.get::<_, String>(4)?,
                            r.get::<_, i64>(5)? != 0,
                            r.get::<_, Option<i64>>(6)?,
                        ))
                    },
                )
                .optional()?;
            let Some((rate, burst, tokens, refilled, shares, queued, max)) = limit else {
                return Ok(0);
            };
            if !may_share(max, Some(rate)) {
                return Ok(0);
            }
            let t = take_share(rate, burst, tokens, refilled, parse_shares(&shares)?, queued, &req);
            c.exec_cached(
                "UPDATE flow_limits SET tokens = ?2, refilled_ms = ?3, shares = ?4 WHERE scope = ?1",
                params![req.scope, t.tokens, req.now, shares_text(&t.shares)],
            )?;
            if t.wake > 0 {
                wake(c, &req.scope, req.now, t.wake)?;
            }
            Ok(t.granted)
        })
    }
}
