//! The task table on PostgreSQL: a small pool of connections of its own
//! (the URL's `schema`, TLS and other parameters, as the store's), so the
//! execution store's write path is not touched. Claims lock their rows
//! with `FOR UPDATE SKIP LOCKED`: workers polling different nodes at once
//! never wait on each other and each task goes to one of them.
//!
//! Queuing, claims, heartbeats and answers commit lazily, on connections
//! whose sessions run with `synchronous_commit = off`; expiries durably
//! (see [`super`] for why that keeps every guarantee).
//!
//! Queuing, answers and expiries notify the other nodes themselves: the
//! statement that writes the row also runs `pg_notify` on the schema's
//! channel ([`crate::notify_pg`]) with the topic, delivered when that
//! transaction commits — one round trip and one transaction instead of a
//! second statement on the bridge's connection ([`TaskStore::announces`]).

use super::{
    Claim, Commit, LeasedAnswer, NewTask, TABLE, TaskAnswer, TaskRow, TaskStore, like_pattern,
};
use crate::notify::{QUEUE_TOPIC, task_topic};
use crate::notify_pg::PAYLOAD_MAX;
use crate::providers::pattern_matches;
use crate::store::StoreError;
use crate::store::pg::add_session_option;
use crate::store::pg::url::{Target, parse_url};
use postgres::types::ToSql;
use postgres::{Client, Row, Statement};
use std::collections::HashMap;
use std::sync::Mutex;

/// Columns read into a [`TaskRow`], in order.
const COLUMNS: &str = "idempotency_key, execution_id, key, input, state, attempt, lease_token, worker, lease_until, result, message, traceparent";

/// The number of [`COLUMNS`].
const COLUMN_COUNT: usize = 12;

/// [`COLUMNS`] qualified by table alias `alias`.
fn qualified_columns(alias: &str) -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("{alias}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Undoes the lease a claim just took of `t` (queued again, its attempt
/// not counted).
fn give_back(c: &mut Pooled, t: &TaskRow) -> Result<(), StoreError> {
    let st = c.stmt(
        "UPDATE worker_tasks SET state = 'queued', lease_token = NULL, lease_until = 0,
           attempt = attempt - 1 WHERE idempotency_key = $1 AND lease_token = $2",
    )?;
    c.client
        .execute(&st, &[&t.idempotency_key, &t.lease_token])
        .map_err(db)?;
    Ok(())
}

/// Connections kept idle in each pool. Every worker-routed effect in
/// flight, every poll and every answer uses one for a statement: with 4,
/// the peer benchmark's 20 clients made the pool open (and PostgreSQL fork)
/// a new session for most statements, a tenth of the throughput of
/// in-process effects (`docs/tcc/host.md`, "Peer benchmark").
const POOL: usize = 16;

/// Advisory lock key held while the table is created (nodes starting
/// together create it once).
const CREATE_LOCK: i64 = 0x7cc_0034;

/// The PostgreSQL task table.
pub struct PgTasks {
    target: Target,
    /// The notification channel of the database's schema
    /// ([`crate::notify_pg`]), which queuing, answers and expiries notify
    /// in their own statement.
    channel: String,
    /// The origin line its notifications begin with
    /// ([`crate::notify::Hub::origin_line`]), once set.
    origin: std::sync::OnceLock<String>,
    /// `target` with `synchronous_commit = off` for every session.
    lazy_target: Target,
    idle: Mutex<Vec<Pooled>>,
    idle_lazy: Mutex<Vec<Pooled>>,
}

/// A pooled connection with its prepared statements: a prepared statement
/// runs in one round trip, an unprepared one with parameters in two.
struct Pooled {
    client: Client,
    prepared: HashMap<String, Statement>,
}

impl Pooled {
    fn new(client: Client) -> Pooled {
        Pooled {
            client,
            prepared: HashMap::new(),
        }
    }

    /// `sql` prepared on this connection (once).
    fn stmt(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql).map_err(db)?;
        self.prepared.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

fn db(e: postgres::Error) -> StoreError {
    // The server's own message and SQLSTATE, not the driver's "db error".
    match e.as_db_error() {
        Some(d) => StoreError::db(format!(
            "worker tasks: {} (SQLSTATE {})",
            d.message(),
            d.code().code()
        )),
        None => StoreError::db(format!("worker tasks: {e}")),
    }
}

fn decode(r: &Row) -> Result<TaskRow, StoreError> {
    let input: String = r.try_get(3).map_err(db)?;
    let result: Option<String> = r.try_get(9).map_err(db)?;
    Ok(TaskRow {
        idempotency_key: r.try_get(0).map_err(db)?,
        execution_id: r.try_get(1).map_err(db)?,
        key: r.try_get(2).map_err(db)?,
        input: serde_json::from_str(&input)
            .map_err(|e| StoreError::Corrupt(format!("worker task input: {e}")))?,
        state: r.try_get(4).map_err(db)?,
        attempt: r.try_get(5).map_err(db)?,
        lease_token: r.try_get(6).map_err(db)?,
        worker: r.try_get(7).map_err(db)?,
        lease_until: r.try_get(8).map_err(db)?,
        result: match result {
            Some(t) => Some(
                serde_json::from_str(&t)
                    .map_err(|e| StoreError::Corrupt(format!("worker task result: {e}")))?,
            ),
            None => None,
        },
        message: r.try_get(10).map_err(db)?,
        traceparent: r.try_get(11).map_err(db)?,
    })
}

impl PgTasks {
    /// Connects to `url` and creates the task table if missing (the store
    /// has created the URL's schema already).
    pub fn open(url: &str) -> Result<PgTasks, StoreError> {
        let target = parse_url(url)?;
        let mut c = target.connect()?;
        let table = TABLE
            .replace("{SEQ}", "BIGSERIAL PRIMARY KEY")
            .replace("{INT}", "BIGINT");
        let mut tx = c.transaction().map_err(db)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CREATE_LOCK])
            .map_err(db)?;
        // DDL only when something is missing: `CREATE INDEX IF NOT EXISTS`
        // and `ALTER TABLE` lock the table even when they change nothing,
        // and a node starting beside busy nodes then deadlocks with their
        // task transactions (a lock upgrade against their row locks).
        let current: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = 'worker_tasks' \
                 AND column_name = 'traceparent')",
                &[],
            )
            .and_then(|row| row.try_get(0))
            .map_err(db)?;
        if !current {
            tx.batch_execute(&table).map_err(db)?;
            // A table made before the `traceparent` column (issue 35).
            tx.batch_execute("ALTER TABLE worker_tasks ADD COLUMN IF NOT EXISTS traceparent TEXT")
                .map_err(db)?;
        }
        tx.commit().map_err(db)?;
        let mut lazy_target = target.clone();
        add_session_option(&mut lazy_target, "-c synchronous_commit=off");
        Ok(PgTasks {
            channel: crate::notify_pg::channel_name(target.schema.as_deref()),
            origin: std::sync::OnceLock::new(),
            target,
            lazy_target,
            idle: Mutex::new(vec![Pooled::new(c)]),
            idle_lazy: Mutex::new(Vec::new()),
        })
    }

    /// Sets the origin line its notifications begin with (the hub's, so
    /// that this node's listener skips them).
    pub fn set_origin(&self, origin_line: String) {
        let _ = self.origin.set(origin_line);
    }

    /// The payload notifying `topic`.
    fn payload(&self, topic: &str) -> String {
        match self.origin.get() {
            Some(o) => format!("{o}\n{topic}"),
            None => topic.to_string(),
        }
    }

    /// Stores one answer of a task leased under `token` (and notifies the
    /// task's topic in the same statement); `false` when that lease is gone.
    fn store_answer(
        &self,
        c: &mut Pooled,
        idempotency_key: &str,
        token: &str,
        answer: &TaskAnswer,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (state, result, message) = answer.columns();
        let st = c.stmt(&format!(
            "WITH u AS (UPDATE worker_tasks SET state = $3, result = $4, message = $5, lease_token = NULL,
                   updated_ms = $6
                 WHERE idempotency_key = $1 AND lease_token = $2 AND state = 'leased' RETURNING 1)
             , woke AS (SELECT pg_notify($7, $8) FROM u WHERE octet_length($8) <= {PAYLOAD_MAX})
             SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM woke)"
        ))?;
        let topic = self.payload(&task_topic(idempotency_key));
        let n: i64 = c
            .client
            .query_one(
                &st,
                &[
                    &idempotency_key,
                    &token,
                    &state,
                    &result,
                    &message,
                    &now,
                    &self.channel,
                    &topic,
                ],
            )
            .and_then(|r| r.try_get(0))
            .map_err(db)?;
        Ok(n == 1)
    }

    /// Runs `f` on a pooled connection of the `commit` kind (a new one when
    /// none is idle); a connection that failed is dropped, not pooled.
    fn with<R>(
        &self,
        commit: Commit,
        f: impl FnOnce(&mut Pooled) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let (pool, target) = match commit {
            Commit::Durable => (&self.idle, &self.target),
            Commit::Lazy => (&self.idle_lazy, &self.lazy_target),
        };
        let pooled = pool.lock().ok().and_then(|mut v| v.pop());
        let mut c = match pooled {
            Some(c) if !c.client.is_closed() => c,
            _ => Pooled::new(target.connect()?),
        };
        let r = f(&mut c);
        if !c.client.is_closed()
            && r.is_ok()
            && let Ok(mut idle) = pool.lock()
            && idle.len() < POOL
        {
            idle.push(c);
        }
        r
    }

    /// A claim (see [`TaskStore::claim`]); with `expiry`, when it hands
    /// out nothing, the earliest lease expiry read by the same statement
    /// (the picked rows joined to one row that carries it).
    fn claim_with_expiry(
        &self,
        claim: &Claim<'_>,
        expiry: bool,
    ) -> Result<(Vec<TaskRow>, Option<i64>), StoreError> {
        if claim.patterns.is_empty() || claim.max == 0 {
            return Ok((Vec::new(), None));
        }
        let likes: Vec<String> = claim.patterns.iter().map(|p| like_pattern(p)).collect();
        let limit = claim.max as i64;
        // One fresh token per task handed out, the n-th task (in queue
        // order) getting the n-th.
        let tokens: Vec<String> = (0..claim.max)
            .map(|_| crate::ids::random_id("l-"))
            .collect();
        let until = claim.now.saturating_add(claim.lease_ms);
        self.with(Commit::Lazy, |c| {
            let in_namespace = if claim.namespace.is_some() {
                "AND execution_id IN (SELECT id FROM executions WHERE namespace = $7)"
            } else {
                ""
            };
            // The pick, its row locks and the lease in one statement (one
            // round trip, no transaction block). `COLLATE "C"`: `LIKE`
            // compares bytes, as `pattern_matches` does.
            // With `expiry`: the taken rows joined to one row, so that a
            // claim taking nothing answers one row of NULLs carrying the
            // earliest lease expiry (read in the statement's snapshot: no
            // lease was taken or changed by it).
            let update = format!(
                "UPDATE worker_tasks t SET state = 'leased', lease_token = ($4::text[])[numbered.n],
                   worker = $5, lease_until = $6, attempt = t.attempt + 1, updated_ms = $1
                 FROM numbered WHERE t.idempotency_key = numbered.idempotency_key
                 RETURNING {}, t.seq",
                qualified_columns("t")
            );
            let picked = format!(
                "WITH picked AS (
                   SELECT idempotency_key, seq FROM worker_tasks
                   WHERE state IN ('queued', 'leased') AND (state = 'queued' OR lease_until < $1)
                     AND key COLLATE \"C\" LIKE ANY ($2) {in_namespace}
                   ORDER BY seq LIMIT $3
                   FOR UPDATE SKIP LOCKED),
                 numbered AS (SELECT idempotency_key, row_number() OVER (ORDER BY seq) AS n FROM picked)"
            );
            let st = c.stmt(&if expiry {
                format!(
                    "{picked}, taken AS ({update})
                     SELECT taken.*, CASE WHEN taken.seq IS NULL THEN
                       (SELECT MIN(lease_until) FROM worker_tasks WHERE state IN ('queued', 'leased') AND state = 'leased')
                     END
                     FROM (SELECT 1) one LEFT JOIN taken ON TRUE"
                )
            } else {
                format!("{picked} {update}")
            })?;
            let mut params: Vec<&(dyn ToSql + Sync)> =
                vec![&claim.now, &likes, &limit, &tokens, &claim.worker, &until];
            if let Some(ns) = &claim.namespace {
                params.push(ns);
            }
            let rows = c.client.query(&st, &params).map_err(db)?;
            let mut taken: Vec<(i64, TaskRow)> = Vec::with_capacity(rows.len());
            let mut next_expiry = None;
            for r in &rows {
                let Some(seq) = r.try_get::<_, Option<i64>>(COLUMN_COUNT).map_err(db)? else {
                    // The row of a claim that took nothing.
                    next_expiry = r.try_get(COLUMN_COUNT + 1).map_err(db)?;
                    continue;
                };
                taken.push((seq, decode(r)?));
            }
            taken.sort_by_key(|(seq, _)| *seq);
            let mut out = Vec::with_capacity(taken.len());
            for (_, t) in taken {
                if claim.patterns.iter().any(|p| pattern_matches(p, &t.key)) {
                    out.push(t);
                } else {
                    // Never expected (`LIKE` under "C" is the same test):
                    // a task no pattern matches is given back, not handed out.
                    tracing::warn!(task = %t.idempotency_key, "worker tasks: a claim took a task no pattern matches; given back");
                    give_back(c, &t)?;
                }
            }
            Ok((out, next_expiry))
        })
    }
}

impl TaskStore for PgTasks {
    fn enqueue(&self, task: &NewTask, now: i64) -> Result<TaskRow, StoreError> {
        self.with(Commit::Lazy, |c| {
            let st = c.stmt(&format!(
                "WITH ins AS (
                           INSERT INTO worker_tasks (idempotency_key, execution_id, key, input, state, created_ms, updated_ms, traceparent)
                           VALUES ($1, $2, $3, $4, 'queued', $5, $5, $6)
                           ON CONFLICT (idempotency_key) DO UPDATE SET state = 'queued', result = NULL,
                             message = NULL, lease_token = NULL, lease_until = 0, updated_ms = $5,
                             traceparent = excluded.traceparent
                           WHERE worker_tasks.state = 'failed'
                           RETURNING {COLUMNS})
                         , found AS (
                         SELECT {COLUMNS} FROM ins
                         UNION ALL
                         SELECT {COLUMNS} FROM worker_tasks WHERE idempotency_key = $1
                           AND NOT EXISTS (SELECT 1 FROM ins))
                         , woke AS (SELECT pg_notify($7, $8) FROM found
                           WHERE state = 'queued' AND octet_length($8) <= {PAYLOAD_MAX})
                         SELECT {COLUMNS}, (SELECT count(*) FROM woke) FROM found"
            ))?;
            let row = c
                .client
                .query_one(
                    &st,
                    &[
                        &task.idempotency_key,
                        &task.execution_id,
                        &task.key,
                        &task.input,
                        &now,
                        &task.traceparent,
                        &self.channel,
                        &self.payload(QUEUE_TOPIC),
                    ],
                )
                .map_err(db)?;
            decode(&row)
        })
    }

    fn get(&self, idempotency_key: &str) -> Result<Option<TaskRow>, StoreError> {
        self.with(Commit::Durable, |c| {
            let st = c.stmt(&format!(
                "SELECT {COLUMNS} FROM worker_tasks WHERE idempotency_key = $1"
            ))?;
            c.client
                .query_opt(&st, &[&idempotency_key])
                .map_err(db)?
                .as_ref()
                .map(decode)
                .transpose()
        })
    }

    fn claim(&self, claim: &Claim<'_>) -> Result<Vec<TaskRow>, StoreError> {
        self.claim_with_expiry(claim, false).map(|(tasks, _)| tasks)
    }

    fn claim_or_next_expiry(
        &self,
        claim: &Claim<'_>,
    ) -> Result<(Vec<TaskRow>, Option<i64>), StoreError> {
        self.claim_with_expiry(claim, true)
    }

    fn heartbeat(
        &self,
        idempotency_key: &str,
        token: &str,
        lease_ms: i64,
        now: i64,
    ) -> Result<Option<i64>, StoreError> {
        let until = now.saturating_add(lease_ms);
        self.with(Commit::Lazy, |c| {
            let st = c.stmt(
                "UPDATE worker_tasks SET lease_until = $3, updated_ms = $4
                     WHERE idempotency_key = $1 AND lease_token = $2 AND state = 'leased'",
            )?;
            let n = c
                .client
                .execute(&st, &[&idempotency_key, &token, &until, &now])
                .map_err(db)?;
            Ok((n == 1).then_some(until))
        })
    }

    fn answer(
        &self,
        idempotency_key: &str,
        token: &str,
        answer: &TaskAnswer,
        now: i64,
    ) -> Result<bool, StoreError> {
        self.with(Commit::Lazy, |c| {
            self.store_answer(c, idempotency_key, token, answer, now)
        })
    }

    fn answer_many(&self, answers: &[LeasedAnswer], now: i64) -> Result<Vec<bool>, StoreError> {
        let mut ids = std::collections::HashSet::new();
        if !answers
            .iter()
            .all(|a| ids.insert(a.idempotency_key.as_str()))
        {
            // A task answered twice in one batch: one statement would update
            // its row once with either answer; in order, the first decides.
            return answers
                .iter()
                .map(|a| self.answer(&a.idempotency_key, &a.token, &a.answer, now))
                .collect();
        }
        let mut columns: [Vec<Option<String>>; 6] = Default::default();
        for a in answers {
            let (state, result, message) = a.answer.columns();
            for (column, value) in columns.iter_mut().zip([
                Some(a.idempotency_key.clone()),
                Some(a.token.clone()),
                Some(state.to_string()),
                result,
                message.map(str::to_string),
                Some(self.payload(&task_topic(&a.idempotency_key))),
            ]) {
                column.push(value);
            }
        }
        let [keys, tokens, states, results, messages, topics] = &columns;
        self.with(Commit::Lazy, |c| {
            // One statement: the answers as rows, each update joined to its
            // own, each stored one's topic notified at the commit.
            let st = c.stmt(&format!(
                "WITH a AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
                                                $5::text[], $6::text[]) WITH ORDINALITY
                              AS a(k, tok, st, res, msg, topic, n))
                 , u AS (UPDATE worker_tasks t SET state = a.st, result = a.res, message = a.msg,
                           lease_token = NULL, updated_ms = $7
                         FROM a
                         WHERE t.idempotency_key = a.k AND t.lease_token = a.tok AND t.state = 'leased'
                         RETURNING a.n, a.topic)
                 , woke AS (SELECT pg_notify($8, u.topic) FROM u WHERE octet_length(u.topic) <= {PAYLOAD_MAX})
                 SELECT u.n, (SELECT count(*) FROM woke) FROM u"
            ))?;
            let rows = c
                .client
                .query(
                    &st,
                    &[keys, tokens, states, results, messages, topics, &now, &self.channel],
                )
                .map_err(db)?;
            let mut done = vec![false; answers.len()];
            for r in rows {
                let n: i64 = r.try_get(0).map_err(db)?;
                if let Some(d) = usize::try_from(n - 1).ok().and_then(|i| done.get_mut(i)) {
                    *d = true;
                }
            }
            Ok(done)
        })
    }

    fn expire(&self, idempotency_key: &str, message: &str, now: i64) -> Result<bool, StoreError> {
        self.with(Commit::Durable, |c| {
            let st = c.stmt(&format!(
                "WITH u AS (UPDATE worker_tasks SET state = 'failed', message = $2, lease_token = NULL,
                       updated_ms = $3
                     WHERE idempotency_key = $1 AND state IN ('queued', 'leased') RETURNING 1)
                 , woke AS (SELECT pg_notify($4, $5) FROM u WHERE octet_length($5) <= {PAYLOAD_MAX})
                 SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM woke)"
            ))?;
            let topic = self.payload(&task_topic(idempotency_key));
            let n: i64 = c
                .client
                .query_one(
                    &st,
                    &[&idempotency_key, &message, &now, &self.channel, &topic],
                )
                .and_then(|r| r.try_get(0))
                .map_err(db)?;
            Ok(n == 1)
        })
    }

    fn announces(&self) -> bool {
        true
    }

    fn next_lease_expiry(&self) -> Result<Option<i64>, StoreError> {
        self.with(Commit::Durable, |c| {
            let st = c.stmt(
                "SELECT MIN(lease_until) FROM worker_tasks WHERE state IN ('queued', 'leased') AND state = 'leased'",
            )?;
            let r = c.client.query_one(&st, &[]).map_err(db)?;
            r.try_get::<_, Option<i64>>(0).map_err(db)
        })
    }
}
