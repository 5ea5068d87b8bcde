//! SQLite backend: WAL journal, `synchronous=FULL` (`NORMAL` for groups of
//! lazy writes only, see [`SqliteStore::write_lazy`]), versioned migrations
//! (`PRAGMA user_version`), and group commit through the store's engine
//! (`store::group_commit`) over the one writer connection: a group runs in
//! a single transaction (optimistically without savepoints; when one job
//! fails, again with a savepoint per job, so one job's conflict does not
//! undo the others) and answers each job only after `COMMIT`.
//!
//! Files: `migrations`, `cached` (the statement cache), `queries` (the
//! [`Store`](super::Store) implementation); this module holds the store, its
//! connections and its write path.

use super::StoreError;
use super::group_commit::{Answer, GroupCommit, GroupTx, Queued, Ran, Reply, Waiter, run_group};
use cached::Cached;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};

mod cached;
mod flow;
pub mod migrations;
mod namespace;
mod pause;
mod queries;
mod retention;
mod schedules;
mod source;
mod status;
#[cfg(test)]
mod tests;
mod traces;
pub mod write_gate;

pub use migrations::{MIGRATIONS, migrate};

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Db(super::DbError::with_source(e.to_string(), e))
    }
}

/// A queued write: its body (re-runnable: an optimistic group that has to
/// be undone is run again, job by job, each in its own savepoint) and the
/// caller waiting for it.
trait WriteJob: Send {
    /// Runs the body on the writer connection, keeping its outcome;
    /// returns whether it succeeded.
    fn run(&mut self, conn: &Connection) -> bool;
    /// Answers the caller once the transaction's fate is known: its own
    /// outcome if the transaction committed, else the commit's error. The
    /// job itself goes back to the caller too, so that what it captured is
    /// freed there and not by the group's leader.
    fn finish(self: Box<Self>, commit: Result<(), StoreError>);
    /// Answers the caller with `e` without running the job.
    fn fail(self: Box<Self>, e: StoreError);
    /// Hands the writer connection to the caller waiting on this job: it
    /// leads the next group.
    fn lead(&self, conn: WriterConn);
    /// How durable its commit must be.
    fn durability(&self) -> Durability;
}

type Job = Box<dyn WriteJob>;

impl Queued<WriterConn> for Job {
    fn lead(&self, conn: WriterConn) {
        WriteJob::lead(&**self, conn);
    }
}

struct TypedJob<R, F> {
    body: F,
    outcome: Option<Result<R, StoreError>>,
    /// Its caller (a job dropped unanswered, e.g. by a panic in its group,
    /// answers with an error).
    answer: Answer<R, WriterConn>,
    durability: Durability,
}

impl<R, F> WriteJob for TypedJob<R, F>
where
    R: Send + 'static,
    F: FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
{
    fn run(&mut self, conn: &Connection) -> bool {
        let r = (self.body)(conn);
        let ok = r.is_ok();
        self.outcome = Some(r);
        ok
    }

    fn finish(mut self: Box<Self>, commit: Result<(), StoreError>) {
        let r = match (commit, self.outcome.take()) {
            (Ok(()), Some(r)) => r,
            (Ok(()), None) => Err(StoreError::db("write job did not run")),
            (Err(e), _) => Err(e),
        };
        let waiter = self.answer.settle();
        waiter.put(Reply::Done(r, Some(self)));
    }

    fn fail(mut self: Box<Self>, e: StoreError) {
        let waiter = self.answer.settle();
        waiter.put(Reply::Done(Err(e), Some(self)));
    }

    fn lead(&self, conn: WriterConn) {
        self.answer.lead(conn);
    }

    fn durability(&self) -> Durability {
        self.durability
    }
}

/// How durable a write's commit must be before its caller is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// `synchronous=FULL`: on disk (WAL fsync) before the answer.
    Full,
    /// `synchronous=NORMAL`: committed and visible, in the WAL but not yet
    /// fsynced; made durable by the next `Full` commit (see [`SqliteStore::write_lazy`]).
    Lazy,
}

/// The writer connection and its state.
struct WriterConn {
    conn: Connection,
    /// The `synchronous` level the connection is set to.
    sync: Durability,
    /// The last history sequence number handed out by
    /// `irkit_history_seq()` (re-read at the start of every group).
    history_seq: Arc<std::sync::atomic::AtomicI64>,
    /// Taken around each group's transaction ([`write_gate`]).
    gate: write_gate::WriteGate,
}

/// Registers `irkit_history_seq()` on the writer connection: the next
/// number of the one sequence that orders history rows and journal rows.
fn register_history_seq(
    conn: &Connection,
) -> Result<Arc<std::sync::atomic::AtomicI64>, StoreError> {
    let counter = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let c = counter.clone();
    conn.create_scalar_function(
        "irkit_history_seq",
        0,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8,
        move |_| Ok(c.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1),
    )?;
    Ok(counter)
}

/// Sets the history sequence to the largest number in use, read inside
/// the group's write transaction (so another process writing the same file
/// between two groups cannot make a number repeat). The journal row with
/// the largest rowid is the last one inserted, so it has the largest
/// `history_seq` of the journal; history rows are never deleted.
fn reset_history_seq(w: &WriterConn) -> rusqlite::Result<()> {
    let last: i64 = w.conn.query_row_cached(
        "SELECT MAX(COALESCE((SELECT MAX(seq) FROM history), 0), COALESCE((SELECT history_seq FROM effects ORDER BY rowid DESC LIMIT 1), 0))",
        [],
        |r| r.get(0),
    )?;
    w.history_seq
        .store(last, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// The SQLite store.
pub struct SqliteStore {
    /// Read connections (WAL readers do not block the writer nor each
    /// other); a read takes a free one, else waits for one.
    readers: Vec<Mutex<Connection>>,
    next_reader: std::sync::atomic::AtomicUsize,
    /// The write side: the one writer connection and its queue.
    writer: GroupCommit<WriterConn, Job>,
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let mode: String = conn.query_row_cached("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::db(format!("could not enable WAL (got {mode})")));
    }
    conn.execute_batch(
        "PRAGMA synchronous=FULL; PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;",
    )?;
    // Query-planner stability: a statement is planned once, not re-planned
    // whenever a bound value changes (the work query's `now` changes on
    // every call, and re-preparing it was ~5 % of the CPU of a busy host).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    // Every statement the store issues fits, so none is parsed twice.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(())
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and migrates it.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let mut writer = Connection::open(path)?;
        configure(&writer)?;
        migrate(&mut writer)?;
        let history_seq = register_history_seq(&writer)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader = Connection::open(path)?;
            configure(&reader)?;
            readers.push(Mutex::new(reader));
        }
        Ok(SqliteStore {
            readers,
            next_reader: std::sync::atomic::AtomicUsize::new(0),
            writer: GroupCommit::new(
                vec![WriterConn {
                    conn: writer,
                    sync: Durability::Full,
                    history_seq,
                    gate: write_gate::WriteGate::for_file(path),
                }],
                MAX_GROUP,
                "sqlite",
                run_batch,
                |w| {
                    if !w.conn.is_autocommit() {
                        let _ = w.conn.execute_batch("ROLLBACK");
                    }
                },
            ),
        })
    }

    fn read<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let start = self
            .next_reader
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let n = self.readers.len();
        let free = (0..n).find_map(|i| self.readers[(start + i) % n].try_lock().ok());
        let conn = match free {
            Some(c) => c,
            None => self.readers[start % n]
                .lock()
                .map_err(|_| StoreError::db("reader lock poisoned"))?,
        };
        f(&conn)
    }

    /// Runs `f` inside the next group commit; returns after `COMMIT` has
    /// reached the disk (`synchronous=FULL`).
    fn write<R: Send + 'static>(
        &self,
        f: impl FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_job(Durability::Full, f)
    }

    /// Like [`Self::write`], but when every job of the group is lazy the
    /// group commits with `synchronous=NORMAL`: committed and visible (it
    /// survives a crash of this process: the WAL frames are in the
    /// operating system's cache), but not fsynced. The WAL is one ordered
    /// log and recovery replays only an unbroken prefix of it (frames
    /// carry chained checksums), and every `Full` commit fsyncs the whole
    /// WAL file; so the next durable commit — for an effect, the checkpoint
    /// that follows it — makes this write durable too, and a power loss can
    /// lose it only together with everything after it. Used, as on
    /// PostgreSQL (`synchronous_commit=off`), for writes whose loss is
    /// already a recoverable state: effect journal rows (loss = a crash
    /// before the journal write: the provider is called again with the same
    /// idempotency key), lease claim/renew/release (loss = the lease was
    /// never taken; the checkpoint compare-and-set still checks the owner),
    /// history appends.
    fn write_lazy<R: Send + 'static>(
        &self,
        f: impl FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.write_job(Durability::Lazy, f)
    }

    fn write_job<R: Send + 'static>(
        &self,
        durability: Durability,
        f: impl FnMut(&Connection) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let waiter = Arc::new(Waiter::for_current_thread());
        let job: Job = Box::new(TypedJob {
            body: f,
            outcome: None,
            answer: Answer::new(waiter.clone()),
            durability,
        });
        self.writer.submit(job, &waiter)
    }
}

/// Most jobs in one group commit.
pub const MAX_GROUP: usize = 512;
/// Read connections.
pub const READERS: usize = 3;

/// A group's transaction on the writer connection (see `run_group`):
/// `BEGIN IMMEDIATE`, and the history sequence re-read inside it.
struct SqliteTx<'a>(&'a WriterConn);

impl GroupTx<Job> for SqliteTx<'_> {
    fn begin(&mut self) -> Result<(), StoreError> {
        let conn = &self.0.conn;
        if let Err(e) = conn
            .exec_cached("BEGIN IMMEDIATE", [])
            .and_then(|_| reset_history_seq(self.0))
        {
            let _ = conn.exec_cached("ROLLBACK", []);
            return Err(e.into());
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        let conn = &self.0.conn;
        conn.exec_cached("COMMIT", []).map_err(|e| {
            let _ = conn.exec_cached("ROLLBACK", []);
            StoreError::from(e)
        })?;
        Ok(())
    }

    fn rollback(&mut self) -> Result<(), StoreError> {
        self.0.conn.exec_cached("ROLLBACK", [])?;
        Ok(())
    }

    fn savepoint(&mut self) -> Result<(), StoreError> {
        self.0.conn.exec_cached("SAVEPOINT job", [])?;
        Ok(())
    }

    fn release(&mut self, undo: bool) -> Result<(), StoreError> {
        if undo {
            self.0.conn.exec_cached("ROLLBACK TO job", [])?;
        }
        self.0.conn.exec_cached("RELEASE job", [])?;
        Ok(())
    }

    fn run(&mut self, job: &mut Job) -> Ran {
        if job.run(&self.0.conn) {
            Ran::Keep
        } else {
            Ran::Undo
        }
    }
}

/// Runs one group commit as the engine's transaction (`run_group`: first
/// without savepoints, then with one per job if a job fails). The group
/// commits with `synchronous=NORMAL` only when every job in it is lazy.
fn run_batch(w: &mut WriterConn, batch: Vec<Job>) {
    let sync = if batch.iter().all(|j| j.durability() == Durability::Lazy) {
        Durability::Lazy
    } else {
        Durability::Full
    };
    let fail_all = |batch: Vec<Job>, e: rusqlite::Error| {
        let err = StoreError::from(e);
        for job in batch {
            job.fail(err.clone());
        }
    };
    if sync != w.sync {
        let pragma = match sync {
            Durability::Full => "PRAGMA synchronous=FULL",
            Durability::Lazy => "PRAGMA synchronous=NORMAL",
        };
        if let Err(e) = w.conn.execute_batch(pragma) {
            return fail_all(batch, e);
        }
        w.sync = sync;
    }
    let mut batch = batch;
    let gate = w.gate.clone();
    let held = gate.enter();
    let commit = run_group(&mut SqliteTx(w), &mut batch, 0);
    drop(held);
    for job in batch {
        job.finish(commit.clone());
    }
}
