//! PostgreSQL backend (`--database postgres://user:pw@host/db[?schema=NAME]`),
//! for several `irkit tcc serve` nodes sharing one database.
//!
//! - Migrations: an ordered list applied at open, tracked in
//!   `irkit_tcc_schema_version`, under a session advisory lock so that
//!   nodes starting together migrate once.
//! - Group commit: the store's engine (`store::group_commit`), as in the
//!   SQLite backend, over [`COMMITTERS`] durable writer connections and one
//!   lazy one; a group runs first without savepoints and, if a job fails,
//!   again with one savepoint per job so that only the failing job is
//!   undone (`batch`). A job that hits a deadlock or serialization failure
//!   is retried.
//! - Leases: `claim` takes an execution with
//!   `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED)`, so nodes racing
//!   for the same execution never wait on each other and exactly one wins;
//!   a lease whose expiry has passed is taken over by any node. Leases are
//!   never freed wholesale at start (other nodes may be alive):
//!   [`Store::reset_leases`](super::Store::reset_leases) is a no-op here.
//! - Reads use a small pool of connections in autocommit mode.
//!
//! `?schema=NAME` (letters, digits, `_`) puts every table in that schema
//! (created if missing); the tests use it to isolate themselves.
//!
//! TLS follows libpq's `sslmode` (default `prefer`) and `sslrootcert`
//! parameters (`PgTls`; docs/tcc/host.md, section TLS).

//!
//! Files: `url` (URL and TLS parameters, connecting), `migrations`,
//! `conn` (statement cache, error conversion), `job` (write jobs and the
//! writes a group folds), `batch` (running a group), `rows` (row
//! decoding), `queries` (the [`Store`](super::Store) implementation); this module holds
//! the store, its connections and its write paths.

use super::StoreError;
use super::group_commit::{Answer, GroupCommit, Queued, Ran, Reply, Waiter};
use batch::run_batch;
use conn::{Cache, Conn, JobError, JobResult, WriterConn, retryable};
use job::{ATTEMPTS, Job, Merge, SetFn};
use postgres::Client;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use url::{Target, parse_url};

mod batch;
mod conn;
mod flow;
mod job;
pub mod migrations;
mod namespace;
mod pause;
mod queries;
mod retention;
mod rows;
mod schedules;
mod source;
mod status;
mod traces;
pub mod url;

pub use migrations::MIGRATIONS;
pub use url::{SslModeParam, check_url, connect};

/// Number of pooled read connections.
pub const READERS: usize = 4;
/// Durable writer connections (each runs its own group commits; plus one
/// for lazy writes, see [`PgStore::write_lazy`]): the server overlaps
/// their round trips and shares WAL flushes between their commits.
pub const COMMITTERS: usize = 3;
/// Most jobs in one group commit.
pub const MAX_GROUP: usize = 512;

/// The PostgreSQL store.
pub struct PgStore {
    target: Target,
    readers: Vec<Mutex<Option<(Client, Cache)>>>,
    next_reader: AtomicUsize,
    /// Durable writes: [`COMMITTERS`] connections.
    durable: Lane,
    /// Lazy writes: one connection whose session has `synchronous_commit = off`.
    lazy: Lane,
}

/// A write queue and its writer connections.
type Lane = GroupCommit<WriterConn, Job>;

impl Queued<WriterConn> for Job {
    fn lead(&self, conn: WriterConn) {
        (self.lead)(conn);
    }
}

/// A new lane over `conns`.
fn lane(conns: Vec<WriterConn>) -> Lane {
    GroupCommit::new(conns, MAX_GROUP, "postgres", commit_group, |w| {
        if !w.client.is_closed() {
            let _ = w.client.batch_execute("ROLLBACK");
        }
    })
}

/// Adds a `-c name=value` setting to the sessions `target` opens.
pub(crate) fn add_session_option(target: &mut Target, option: &str) {
    let options = match target.config.get_options() {
        Some(o) => format!("{o} {option}"),
        None => option.to_string(),
    };
    target.config.options(&options);
}

impl PgStore {
    /// Connects to `url`, creates the schema if asked, migrates, and opens
    /// the writer connections.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        let mut target = parse_url(url)?;
        // Every statement the store runs reaches its rows by key. A prepared
        // statement keeps, after its fifth run, a generic plan costed on the
        // tables as they were then: made on a young database it scanned
        // `executions` for every group, ever slower as the table grew (a
        // long bench run fell from 7 900 to 2 700 steps/s over 6 000
        // executions). With sequential scans priced out, every cached plan
        // takes the index, however small the table was when it was made;
        // a statement with no index to use still scans. Tested by
        // `every_cached_plan_reaches_its_rows_by_index` (tests/host.rs).
        add_session_option(&mut target, "-c enable_seqscan=off");
        let mut first = target.connect()?;
        migrations::migrate(&mut first, target.schema.as_deref())?;
        // Durable writes: COMMITTERS connections. Lazy writes: one more,
        // whose session commits with `synchronous_commit = off`.
        let mut lazy_target = target.clone();
        add_session_option(&mut lazy_target, "-c synchronous_commit=off");
        let mut durable = Vec::with_capacity(COMMITTERS);
        let mut conn = Some(first);
        for _ in 0..COMMITTERS {
            let client = match conn.take() {
                Some(c) => c,
                None => target.connect()?,
            };
            durable.push(WriterConn {
                client,
                cache: Cache::new(),
                target: target.clone(),
            });
        }
        let lazy = WriterConn {
            client: lazy_target.connect()?,
            cache: Cache::new(),
            target: lazy_target,
        };
        Ok(PgStore {
            target,
            readers: (0..READERS).map(|_| Mutex::new(None)).collect(),
            next_reader: AtomicUsize::new(0),
            durable: lane(durable),
            lazy: lane(vec![lazy]),
        })
    }

    /// The schema this store lives in (`None`: the connection's default).
    pub fn schema(&self) -> Option<&str> {
        self.target.schema.as_deref()
    }

    /// The generic plan (`EXPLAIN` text) of every statement the store's
    /// idle connections have prepared so far, by SQL text, as a session
    /// like the store's would cache it; for tests that check the plans.
    #[doc(hidden)]
    pub fn cached_generic_plans(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut statements: Vec<(String, usize)> = Vec::new();
        let mut collect = |cache: &Cache| {
            for (sql, st) in cache {
                statements.push((sql.clone(), st.params().len()));
            }
        };
        for r in &self.readers {
            let g = r
                .lock()
                .map_err(|_| StoreError::db("reader lock poisoned"))?;
            if let Some((_, cache)) = g.as_ref() {
                collect(cache);
            }
        }
        for lane in [&self.durable, &self.lazy] {
            lane.for_each_idle(|w| collect(&w.cache));
        }
        statements.sort();
        statements.dedup();
        let mut client = self.target.connect()?;
        client.batch_execute("SET plan_cache_mode = force_generic_plan")?;
        let mut plans = Vec::new();
        for (i, (sql, params)) in statements.into_iter().enumerate() {
            client.batch_execute(&format!("PREPARE irkit_plan_{i} AS {sql}"))?;
            let args = vec!["NULL"; params].join(", ");
            let args = if params == 0 {
                String::new()
            } else {
                format!("({args})")
            };
            let rows = client.query(&format!("EXPLAIN EXECUTE irkit_plan_{i}{args}"), &[])?;
            let plan: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
            plans.push((sql, plan.join("\n")));
        }
        Ok(plans)
    }

    fn read<R>(
        &self,
        f: impl FnOnce(&mut Conn<'_, Client>) -> JobResult<R>,
    ) -> Result<R, StoreError> {
        // Any free pooled connection, else wait for one in turn.
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let mut guard = None;
        for i in 0..READERS {
            if let Ok(g) = self.readers[(start + i) % READERS].try_lock() {
                guard = Some(g);
                break;
            }
        }
        let mut guard = match guard {
            Some(g) => g,
            None => self.readers[start % READERS]
                .lock()
                .map_err(|_| StoreError::db("reader lock poisoned"))?,
        };
        if guard.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            *guard = Some((self.target.connect()?, Cache::new()));
        }
        let (client, cache) = guard
            .as_mut()
            .ok_or_else(|| StoreError::db("no connection"))?;
        f(&mut Conn { c: client, cache }).map_err(StoreError::from)
    }

    /// Runs `f` inside the next group commit; returns after `COMMIT` has
    /// reached the disk.
    fn write<R: Send + 'static>(
        &self,
        f: impl FnMut(&mut Conn<'_, Client>) -> JobResult<R> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_job(true, false, None, f)
    }

    /// Like [`Self::write`], but group-committed on a separate writer
    /// connection whose session has `synchronous_commit = off`: committed and
    /// visible, but its WAL flush is left to the next durable commit.
    /// PostgreSQL's WAL is one ordered log, so any later durable commit
    /// (e.g. the checkpoint that follows an effect) makes this write durable
    /// too; only a crash of the database server itself can lose it, and
    /// only together with everything after it. Used for writes whose loss
    /// is already a recoverable state: effect journal rows (loss = a crash
    /// before the journal write: the provider is called again with the same
    /// idempotency key), lease claim/renew/release (loss = the lease was
    /// never taken; the compare-and-set still guards every checkpoint),
    /// history appends.
    fn write_lazy<R: Send + 'static>(
        &self,
        f: impl FnMut(&mut Conn<'_, Client>) -> JobResult<R> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_job(false, false, None, f)
    }

    /// A write whose job runs exactly one SQL statement (`durable` or
    /// lazy). Alone in its group it runs without `BEGIN`/`COMMIT` (a single
    /// statement is its own atomic transaction: one round trip instead of
    /// three); in a larger group, like any other job.
    fn write_one<R: Send + 'static>(
        &self,
        durable: bool,
        f: impl FnMut(&mut Conn<'_, Client>) -> JobResult<R> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_job(durable, true, None, f)
    }

    /// `merge`: what the job writes, for a group to fold it with others of
    /// its kind (see [`Merge`]), and the job's value when that succeeds.
    fn write_job<R: Send + 'static>(
        &self,
        durable: bool,
        single: bool,
        merge: Option<Merge>,
        mut f: impl FnMut(&mut Conn<'_, Client>) -> JobResult<R> + Send + 'static,
    ) -> Result<R, StoreError> {
        let waiter: Arc<Waiter<R, WriterConn>> = Arc::new(Waiter::for_current_thread());
        let reply = Answer::new(waiter.clone());
        let lead_slot = waiter.clone();
        let slot: Arc<Mutex<Option<Result<R, StoreError>>>> = Arc::new(Mutex::new(None));
        let slot2 = slot.clone();
        let merge = merge.map(|m| {
            let slot = slot.clone();
            let set: SetFn = Box::new(
                move |r: Result<Box<dyn std::any::Any + Send>, StoreError>| {
                    let r = r.and_then(|v| {
                        v.downcast::<R>()
                            .map(|v| *v)
                            .map_err(|_| StoreError::db("folded write: unexpected result type"))
                    });
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(r);
                    }
                },
            );
            (m, set)
        });
        let mut attempts = 0;
        let job = Job {
            run: Box::new(move |tx: &mut Conn<'_, Client>| {
                attempts += 1;
                let r = f(tx);
                let outcome = match &r {
                    Ok(_) => Ran::Keep,
                    Err(JobError::Pg(e)) if retryable(e) && attempts < ATTEMPTS => Ran::Retry,
                    Err(_) => Ran::Undo,
                };
                if let Ok(mut s) = slot2.lock() {
                    *s = Some(r.map_err(StoreError::from));
                }
                outcome
            }),
            finish: Box::new(move |commit: Result<(), StoreError>| {
                let r = slot
                    .lock()
                    .ok()
                    .and_then(|mut s| s.take())
                    .unwrap_or_else(|| Err(StoreError::db("write job did not run")));
                reply.send(commit.and(r));
            }),
            lead: Box::new(move |conn| lead_slot.put(Reply::Lead(conn))),
            single,
            merge,
        };
        let lane = if durable { &self.durable } else { &self.lazy };
        lane.submit(job, &waiter)
    }
}

/// Runs one group commit on a writer connection (re-opened if broken) and
/// answers every job in it.
fn commit_group(w: &mut WriterConn, mut batch: Vec<Job>) {
    if w.client.is_closed() {
        match w.target.connect() {
            Ok(c) => {
                w.client = c;
                w.cache.clear();
            }
            Err(e) => {
                for job in batch {
                    (job.finish)(Err(e.clone()));
                }
                return;
            }
        }
    }
    let commit = run_batch(&mut w.client, &mut w.cache, &mut batch);
    for job in batch {
        (job.finish)(commit.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::test_support::ScratchSchema;
    use serde_json::Value as J;

    /// A job that panics fails its caller with an error (no caller waits
    /// forever) and the lane keeps its connection for the next write.
    #[test]
    fn a_panicking_write_fails_its_caller_and_the_lane_goes_on() {
        let Some(db) = ScratchSchema::create("t_panic").unwrap() else {
            return;
        };
        let store = Arc::new(PgStore::open(&db.url()).unwrap());
        for durable in [true, false] {
            let s = store.clone();
            let r = std::thread::spawn(move || {
                s.write_job(durable, false, None, |_| -> JobResult<()> {
                    panic!("job panics on purpose")
                })
            })
            .join()
            .unwrap();
            assert!(matches!(r, Err(StoreError::Db(_))), "{r:?}");
            store.kv_set("after", &J::from(1)).unwrap();
            assert_eq!(store.kv_get("after").unwrap(), Some(J::from(1)));
        }
    }
}
