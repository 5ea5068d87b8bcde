//! SQLite backend: WAL journal, `synchronous=FULL` (`NORMAL` for groups of
//! lazy writes only, see [`SqliteStore::write_lazy`]), versioned migrations
//! (`PRAGMA user_version`), and group commit — every write is a job put in
//! one queue; the caller that finds no leader runs all jobs waiting at that
//! moment in a single transaction (optimistically without savepoints; when
//! one fails, again with a savepoint per job, so one job's conflict does
//! not undo the others) and answers each job only after `COMMIT`.

use crate::slot::Slot;
use crate::store::*;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value as J;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Schema migrations; migration `i` brings `user_version` from `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE artifacts (hash TEXT PRIMARY KEY, body BLOB NOT NULL, created_ms INTEGER NOT NULL);
CREATE TABLE programs (name TEXT PRIMARY KEY, hash TEXT NOT NULL, updated_ms INTEGER NOT NULL);
CREATE TABLE executions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  artifact_hash TEXT NOT NULL,
  program_name TEXT,
  args TEXT NOT NULL,
  status TEXT NOT NULL,
  revision INTEGER NOT NULL DEFAULT 0,
  owner TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  message TEXT,
  error TEXT,
  pending TEXT,
  parent_id TEXT,
  parent_branch TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX executions_status ON executions (status);
CREATE INDEX executions_hash ON executions (artifact_hash);
CREATE TABLE checkpoints (
  execution_id TEXT NOT NULL, revision INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (execution_id, revision)
);
CREATE TABLE effects (
  idempotency_key TEXT PRIMARY KEY, execution_id TEXT NOT NULL, key TEXT NOT NULL,
  input TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, seq INTEGER NOT NULL
);
CREATE INDEX effects_exec ON effects (execution_id, seq);
CREATE TABLE waits (
  id INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, kind TEXT NOT NULL,
  name TEXT, wait_id TEXT, branch TEXT, due_ms INTEGER, delivered INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX waits_open ON waits (delivered, kind, due_ms);
CREATE INDEX waits_exec ON waits (execution_id, delivered);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, name TEXT NOT NULL,
  payload TEXT NOT NULL, consumed_by INTEGER, received_ms INTEGER NOT NULL
);
CREATE INDEX events_open ON events (execution_id, name, consumed_by);
CREATE TABLE history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, execution_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX history_exec ON history (execution_id, seq);
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#,
    r#"
CREATE INDEX executions_cancel ON executions (cancel_requested, status);
CREATE INDEX events_unconsumed ON events (consumed_by);
"#,
    // One b-tree fewer per journalled effect (one WAL page fewer per step):
    // an execution's journal rows are found as the range of the
    // idempotency-key index that starts with `{execution id}:` (every key
    // does: `journal_put` refuses any other), not through an index of
    // their own.
    r#"
DROP INDEX effects_exec;
"#,
    // History without `AUTOINCREMENT`: every insert had read and rewritten
    // its `sqlite_sequence` row (serial work in the group leader, and one
    // more WAL page per group). History rows are never deleted, so the
    // plain rowid rule (largest + 1) hands out the same increasing `seq`.
    r#"
CREATE TABLE history_v4 (
  seq INTEGER PRIMARY KEY, execution_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
INSERT INTO history_v4 (seq, execution_id, at_ms, kind, detail)
  SELECT seq, execution_id, at_ms, kind, detail FROM history ORDER BY seq;
DROP TABLE history;
ALTER TABLE history_v4 RENAME TO history;
CREATE INDEX history_exec ON history (execution_id, seq);
DELETE FROM sqlite_sequence WHERE name = 'history';
"#,
    // No history row per journalled effect: a journal row is listed in its
    // execution's history as the `effect` entry (see `history`), at the
    // place `history_seq` gives it among the history rows (one sequence
    // for both, `irkit_history_seq()`). Rows journalled before this
    // migration have no `history_seq`: their entries are history rows.
    r#"
ALTER TABLE effects ADD COLUMN at_ms INTEGER;
ALTER TABLE effects ADD COLUMN history_seq INTEGER;
"#,
    // The dashboard's listing by program, newest first: the index holds
    // `(program_name, rowid)`, so a page is one range read backwards from
    // the cursor. (Listing by status reads `executions_status` the same
    // way; the id search reads the id's unique index.) Written only when
    // an execution is created: the name never changes.
    r#"
CREATE INDEX executions_program ON executions (program_name);
"#,
];

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
    /// Makes the caller waiting on this job the next leader.
    fn lead(&self);
    /// How durable its commit must be.
    fn durability(&self) -> Durability;
}

type Job = Box<dyn WriteJob>;

/// Where a caller waits for its write: filled by the group's leader.
type Waiter<R> = Slot<Reply<R>>;

/// Waits for the next reply (on the caller's thread).
fn next_reply<R>(waiter: &Waiter<R>) -> Reply<R> {
    waiter
        .take()
        .unwrap_or_else(|| Reply::Done(Err(StoreError::Db("writer reply poisoned".into())), None))
}

struct TypedJob<R, F> {
    body: F,
    outcome: Option<Result<R, StoreError>>,
    waiter: Arc<Waiter<R>>,
    durability: Durability,
    /// Whether the caller has been answered (a job dropped unanswered, e.g.
    /// by a panic in its group, answers with an error).
    answered: bool,
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
            (Ok(()), None) => Err(StoreError::Db("write job did not run".into())),
            (Err(e), _) => Err(e),
        };
        self.answered = true;
        let waiter = self.waiter.clone();
        waiter.put(Reply::Done(r, Some(self)));
    }

    fn fail(mut self: Box<Self>, e: StoreError) {
        self.answered = true;
        let waiter = self.waiter.clone();
        waiter.put(Reply::Done(Err(e), Some(self)));
    }

    fn lead(&self) {
        self.waiter.put(Reply::Lead);
    }

    fn durability(&self) -> Durability {
        self.durability
    }
}

impl<R, F> Drop for TypedJob<R, F> {
    fn drop(&mut self) {
        if !self.answered {
            self.waiter.put(Reply::Done(
                Err(StoreError::Db("write job dropped".into())),
                None,
            ));
        }
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

/// What a caller waiting for its write hears.
enum Reply<R> {
    /// The write's outcome (after its transaction committed or failed),
    /// and the job, to be freed by the caller.
    Done(Result<R, StoreError>, Option<Job>),
    /// The previous leader left: run the waiting jobs (this one first).
    Lead,
}

/// The write side: one connection and a queue of jobs. Group commit
/// without a committer thread: the caller that finds no leader becomes
/// the leader, takes every job waiting (its own first) into one
/// transaction, answers each after `COMMIT`, and then hands leadership to
/// the owner of the oldest job that arrived meanwhile (or gives it up when
/// none did). A lone execution's commits run on its own worker thread, with
/// no thread hand-off; under load, callers arriving during a commit form
/// the next group.
struct Writer {
    conn: Mutex<WriterConn>,
    queue: Mutex<Queue>,
}

struct WriterConn {
    conn: Connection,
    /// The `synchronous` level the connection is set to.
    sync: Durability,
    /// The last history sequence number handed out by
    /// `irkit_history_seq()` (re-read at the start of every group).
    history_seq: Arc<std::sync::atomic::AtomicI64>,
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

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// Whether some caller is leader (running or about to run the queue).
    leader: bool,
}

/// The SQLite store.
pub struct SqliteStore {
    /// Read connections (WAL readers do not block the writer nor each
    /// other); a read takes a free one, else waits for one.
    readers: Vec<Mutex<Connection>>,
    next_reader: std::sync::atomic::AtomicUsize,
    writer: Writer,
}

/// Statements through the connection's statement cache: the store runs the
/// same few statements for every step, and parsing them each time was a
/// measurable share of a step's CPU.
trait Cached {
    fn exec_cached<P: rusqlite::Params>(&self, sql: &str, p: P) -> rusqlite::Result<usize>;
    fn query_row_cached<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn exec_cached<P: rusqlite::Params>(&self, sql: &str, p: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(p)
    }
    fn query_row_cached<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(p, f)
    }
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let mode: String = conn.query_row_cached("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Db(format!("could not enable WAL (got {mode})")));
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

/// Applies pending migrations; refuses a database of a newer schema.
pub fn migrate(conn: &mut Connection) -> Result<u32, StoreError> {
    let current: u32 = conn.query_row_cached("PRAGMA user_version", [], |r| r.get(0))?;
    if current as usize > MIGRATIONS.len() {
        return Err(StoreError::Corrupt(format!(
            "database schema version {current} is newer than this irkit ({})",
            MIGRATIONS.len()
        )));
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(m)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(MIGRATIONS.len() as u32)
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
            writer: Writer {
                conn: Mutex::new(WriterConn {
                    conn: writer,
                    sync: Durability::Full,
                    history_seq,
                }),
                queue: Mutex::new(Queue::default()),
            },
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
                .map_err(|_| StoreError::Db("reader lock poisoned".into()))?,
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
            waiter: waiter.clone(),
            durability,
            answered: false,
        });
        let lead_now = {
            let mut q = self
                .writer
                .queue
                .lock()
                .map_err(|_| StoreError::Db("writer queue poisoned".into()))?;
            q.jobs.push(job);
            !std::mem::replace(&mut q.leader, true)
        };
        if !lead_now {
            // `Lead` is always consumed before this job runs, so the one
            // slot never holds two replies.
            match next_reply(&waiter) {
                Reply::Done(r, job) => {
                    drop(job);
                    return r;
                }
                Reply::Lead => {}
            }
        }
        self.writer.lead()?;
        match next_reply(&waiter) {
            Reply::Done(r, job) => {
                drop(job);
                r
            }
            Reply::Lead => Err(StoreError::Db("write job did not run".into())),
        }
    }
}

/// Most jobs in one group commit.
pub const MAX_GROUP: usize = 512;
/// Read connections.
pub const READERS: usize = 3;

impl Writer {
    /// Runs one group (the caller's job is the oldest waiting one, so it is
    /// in it), then hands leadership on.
    fn lead(&self) -> Result<(), StoreError> {
        let poisoned = || StoreError::Db("writer lock poisoned".into());
        {
            let mut conn = self.conn.lock().map_err(|_| poisoned())?;
            let batch: Vec<Job> = {
                let mut q = self.queue.lock().map_err(|_| poisoned())?;
                let n = q.jobs.len().min(MAX_GROUP);
                q.jobs.drain(..n).collect()
            };
            // A panicking job must not leave the writer stuck: its group's
            // callers hear an error (a job dropped unanswered answers "write
            // job dropped") and the connection's transaction is rolled back.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_batch(&mut conn, batch)
            }));
            if ran.is_err() && !conn.conn.is_autocommit() {
                let _ = conn.conn.execute_batch("ROLLBACK");
            }
        }
        let mut q = self.queue.lock().map_err(|_| poisoned())?;
        match q.jobs.first() {
            Some(next) => next.lead(),
            None => q.leader = false,
        }
        Ok(())
    }
}

/// Runs one group commit. First without savepoints (jobs rarely fail);
/// if a job fails, the transaction is rolled back and the group re-run
/// with a savepoint per job, so that only the failing job's writes are
/// undone. The group commits with `synchronous=NORMAL` only when every
/// job in it is lazy.
fn run_batch(w: &mut WriterConn, batch: Vec<Job>) {
    crate::metrics::global().group_commit("sqlite", batch.len());
    let conn = &w.conn;
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
        if let Err(e) = conn.execute_batch(pragma) {
            return fail_all(batch, e);
        }
        w.sync = sync;
    }
    let mut batch = batch;
    if let Err(e) = conn
        .exec_cached("BEGIN IMMEDIATE", [])
        .and_then(|_| reset_history_seq(w))
    {
        let _ = conn.exec_cached("ROLLBACK", []);
        return fail_all(batch, e);
    }
    // Jobs after a failing one are not run in the optimistic pass.
    let all_ok = batch.iter_mut().all(|job| job.run(conn));
    let all_ok = if !all_ok && batch.len() > 1 {
        // Undo the whole group and run it again, each job in a savepoint.
        let _ = conn.exec_cached("ROLLBACK", []);
        if let Err(e) = conn
            .exec_cached("BEGIN IMMEDIATE", [])
            .and_then(|_| reset_history_seq(w))
        {
            let _ = conn.exec_cached("ROLLBACK", []);
            return fail_all(batch, e);
        }
        for job in batch.iter_mut() {
            let sp = conn.exec_cached("SAVEPOINT job", []);
            let ok = job.run(conn);
            if sp.is_ok() {
                if !ok {
                    let _ = conn.exec_cached("ROLLBACK TO job", []);
                }
                let _ = conn.exec_cached("RELEASE job", []);
            }
        }
        true
    } else {
        all_ok
    };
    let commit = if all_ok {
        conn.exec_cached("COMMIT", [])
            .map(|_| ())
            .map_err(StoreError::from)
    } else {
        // A lone job failed: nothing of it stays, the outcome is its error.
        conn.exec_cached("ROLLBACK", [])
            .map(|_| ())
            .map_err(StoreError::from)
    };
    if commit.is_err() && all_ok {
        let _ = conn.exec_cached("ROLLBACK", []);
    }
    for job in batch {
        job.finish(commit.clone());
    }
}

fn exec_row(r: &Row) -> rusqlite::Result<(ExecutionRow, String, Option<String>, Option<String>)> {
    Ok((
        ExecutionRow {
            id: r.get(0)?,
            artifact_hash: r.get(1)?,
            program_name: r.get(2)?,
            args: Vec::new(),
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
        },
        r.get::<_, String>(3)?,
        r.get::<_, Option<String>>(9)?,
        r.get::<_, Option<String>>(12)?,
    ))
}

fn finish_row(
    t: (ExecutionRow, String, Option<String>, Option<String>),
) -> Result<ExecutionRow, StoreError> {
    let (mut row, args, result, pending) = t;
    row.args = match parse_json(Some(args))? {
        Some(J::Array(a)) => a,
        _ => return Err(StoreError::Corrupt("execution args".into())),
    };
    row.result = parse_json(result)?;
    row.pending = parse_json(pending)?;
    Ok(row)
}

fn get_exec(conn: &Connection, id: &str) -> Result<Option<ExecutionRow>, StoreError> {
    let t = conn
        .query_row_cached(
            &format!("SELECT {EXEC_COLS} FROM executions WHERE id = ?1"),
            params![id],
            exec_row,
        )
        .optional()?;
    t.map(finish_row).transpose()
}

fn insert_exec(conn: &Connection, new: &NewExecution, now: i64) -> Result<usize, StoreError> {
    let (pid, pbranch) = match &new.parent {
        Some((p, b)) => (Some(p.as_str()), b.as_deref()),
        None => (None, None),
    };
    let n = conn.exec_cached(
        "INSERT OR IGNORE INTO executions (id, artifact_hash, program_name, args, status, parent_id, parent_branch, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, 'runnable', ?5, ?6, ?7, ?7)",
        params![
            new.id,
            new.artifact_hash,
            new.program_name,
            json_text(&J::Array(new.args.clone())),
            pid,
            pbranch,
            now
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
/// every key is `{id}:{effect key}` (the engine's rule, checked by
/// `journal_put`), i.e. at least `{id}:` and below `{id};` (`;` follows `:`
/// in the binary collation).
fn journal_range(id: &str) -> (String, String) {
    (format!("{id}:"), format!("{id};"))
}

/// The detail of the `effect` history entry a journal row stands for: what
/// the host records for an effect (see `Store::history_lists_journal`).
fn journal_history_detail(
    key: Option<String>,
    idempotency_key: Option<String>,
    status: Option<String>,
) -> J {
    serde_json::json!({"key": key, "idempotency_key": idempotency_key, "status": status})
}

fn add_history(
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
                let first: Option<(i64, String)> = st
                    .query_map(params![id, name], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .next()
                    .transpose()?;
                if let Some((seq, payload)) = first {
                    return Ok(Some(Wake {
                        wait_id: wid,
                        kind,
                        branch,
                        value: parse_json(Some(payload))?,
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
    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError> {
        let (hash, body) = (hash.to_string(), body.to_vec());
        self.write(move |c| {
            c.exec_cached(
                "INSERT OR IGNORE INTO artifacts (hash, body, created_ms) VALUES (?1, ?2, ?3)",
                params![hash, body, crate::now_ms()],
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
                params![name, hash, crate::now_ms()],
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
        let new = new.to_vec();
        self.write(move |c| {
            let now = crate::now_ms();
            for n in &new {
                if insert_exec(c, n, now)? == 0 {
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

    fn list_executions(&self, f: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {EXEC_COLS} FROM executions WHERE seq > ?1 AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR program_name = ?3) AND (?4 = 0 OR error LIKE 'artifact_missing%') ORDER BY seq LIMIT ?5"
            ))?;
            let rows = st
                .query_map(
                    params![
                        f.after.unwrap_or(0),
                        f.status,
                        f.program,
                        f.artifact_missing as i64,
                        f.limit.clamp(1, 1000)
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
                "UPDATE executions SET owner = ?2, lease_until = ?3 WHERE id = ?1 AND (owner IS NULL OR owner = ?2 OR lease_until < ?4) AND error IS NULL",
                params![id, owner, now + lease_ms, now],
            )?;
            if n == 0 {
                return Ok(None);
            }
            get_exec(c, &id)
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
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE id = ?1 AND owner = ?2",
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
                        body: r.get(2)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn commit_checkpoint(&self, tx: CheckpointTx) -> Result<(), StoreError> {
        // JSON is serialised here, by the caller, not inside the job: the
        // job runs on the group's leader, serially for every caller.
        let (result, pending) = (
            tx.result.as_ref().map(json_text),
            tx.pending.as_ref().map(json_text),
        );
        let history: Vec<String> = tx.history.iter().map(|(_, d)| json_text(d)).collect();
        self.write(move |c| {
            let now = crate::now_ms();
            let params = params![
                tx.id,
                tx.owner,
                tx.revision as i64,
                tx.status,
                result,
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
            if tx.kind == "snapshot" {
                c.exec_cached(
                    "DELETE FROM checkpoints WHERE execution_id = ?1 AND revision < ?2",
                    params![tx.id, tx.revision as i64],
                )?;
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
                        insert_exec(c, child, now)?;
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
            let r: Option<(String, String, String, String, String)> = c
                .query_row_cached(
                    "SELECT execution_id, key, input, status, result FROM effects WHERE idempotency_key = ?1",
                    params![key],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?;
            r.map(|(execution_id, k, input, status, result)| {
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
        let result = json_text(&row.result);
        self.write_lazy(move |c| {
            c.exec_cached(
                "INSERT OR IGNORE INTO effects (idempotency_key, execution_id, key, input, status, result, seq, at_ms, history_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT COALESCE(MAX(rowid), 0) + 1 FROM effects), ?7, irkit_history_seq())",
                params![
                    row.idempotency_key,
                    row.execution_id,
                    row.key,
                    row.input,
                    row.status,
                    result,
                    crate::now_ms()
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
            let rows: Vec<(String, String, String, String, String)> = st
                .query_map(params![id, from, to], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect::<Result<_, _>>()?;
            rows.into_iter()
                .map(|(k, key, input, status, result)| {
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

    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                // One indexed branch per reason to run, so that the cost
                // follows the work to do, not the number of executions
                // ever stored (the scheduler calls this after every drive).
                "SELECT id FROM (
                   SELECT seq, id FROM executions
                     WHERE status = 'runnable' AND error IS NULL AND lease_until < ?1
                   UNION
                   SELECT seq, id FROM executions
                     WHERE cancel_requested = 1 AND status = 'suspended' AND error IS NULL AND lease_until < ?1
                   UNION
                   SELECT e.seq, e.id FROM waits w JOIN executions e ON e.id = w.execution_id
                     WHERE w.delivered = 0 AND w.kind = 'timer' AND w.due_ms <= ?1
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1
                   UNION
                   SELECT e.seq, e.id FROM events v
                     JOIN waits w ON w.execution_id = v.execution_id AND w.name = v.name
                     JOIN executions e ON e.id = v.execution_id
                     WHERE v.consumed_by IS NULL AND w.delivered = 0 AND w.kind = 'event'
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1
                   UNION
                   SELECT e.seq, e.id FROM waits w
                     JOIN executions k ON k.id = w.name
                     JOIN executions e ON e.id = w.execution_id
                     WHERE w.delivered = 0 AND w.kind = 'child' AND k.status IN ('completed', 'failed', 'cancelled')
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < ?1
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
            Ok(c.query_row_cached(
                "SELECT MIN(due_ms) FROM waits WHERE delivered = 0 AND kind = 'timer'",
                [],
                |r| r.get(0),
            )?)
        })
    }

    fn ready_wake(&self, id: &str, now: i64) -> Result<Option<Wake>, StoreError> {
        self.read(|c| ready_wake_conn(c, id, now))
    }

    fn send_event(&self, id: &str, name: &str, payload: &J) -> Result<(), StoreError> {
        let (id, name, payload) = (id.to_string(), name.to_string(), payload.clone());
        self.write(move |c| {
            let e = get_exec(c, &id)?
                .ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if e.is_terminal() {
                return Err(StoreError::Conflict(format!(
                    "execution {id:?} is {}",
                    e.status
                )));
            }
            let now = crate::now_ms();
            c.exec_cached(
                "INSERT INTO events (execution_id, name, payload, received_ms) VALUES (?1, ?2, ?3, ?4)",
                params![id, name, json_text(&payload), now],
            )?;
            add_history(c, &id, now, "event_received", &serde_json::json!({"name": name}))?;
            Ok(())
        })
    }

    fn request_cancel(&self, id: &str) -> Result<(), StoreError> {
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
            c.exec_cached(
                "UPDATE executions SET cancel_requested = 1 WHERE id = ?1",
                params![id],
            )?;
            let now = crate::now_ms();
            add_history(c, &id, now, "cancel_requested", &J::Null)?;
            // Cancelling a parent cancels its unfinished descendants.
            let mut st = c.prepare_cached(
                "WITH RECURSIVE d(id) AS (SELECT id FROM executions WHERE parent_id = ?1 UNION SELECT e.id FROM executions e JOIN d ON e.parent_id = d.id)
                 UPDATE executions SET cancel_requested = 1 WHERE id IN (SELECT id FROM d) AND cancel_requested = 0 AND status NOT IN ('completed', 'failed', 'cancelled') RETURNING id",
            )?;
            let children: Vec<String> = st
                .query_map(params![id], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for child in children {
                add_history(c, &child, now, "cancel_requested", &serde_json::json!({"by": id}))?;
            }
            Ok(())
        })
    }

    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError> {
        let (id, owner, error) = (id.to_string(), owner.to_string(), error.to_string());
        self.write(move |c| {
            c.exec_cached(
                "UPDATE executions SET status = 'failed', error = ?3, message = ?3, owner = NULL, lease_until = 0, updated_ms = ?4 WHERE id = ?1 AND (owner = ?2 OR owner IS NULL)",
                params![id, owner, error, crate::now_ms()],
            )?;
            c.exec_cached(
                "UPDATE waits SET delivered = 1 WHERE execution_id = ?1",
                params![id],
            )?;
            add_history(c, &id, crate::now_ms(), "host_error", &J::String(error.clone()))?;
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
        self.write_lazy(move |c| add_history(c, &id, crate::now_ms(), &kind, &detail))
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
            Ok(c.exec_cached(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE owner = ?1",
                params![owner],
            )? as u64)
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

    fn counts(&self) -> Result<crate::store::StoreCounts, StoreError> {
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
            Ok(crate::store::StoreCounts {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> (std::path::PathBuf, SqliteStore) {
        let dir = std::env::temp_dir().join(crate::random_id(name));
        std::fs::create_dir_all(&dir).unwrap();
        let store = SqliteStore::open(&dir.join("t.db")).unwrap();
        (dir, store)
    }

    /// A job that panics fails its caller with an error (no caller waits
    /// forever) and the writer goes on with the next write.
    #[test]
    fn a_panicking_write_fails_its_caller_and_the_writer_goes_on() {
        let (dir, store) = scratch("t-panic");
        let store = Arc::new(store);
        for lazy in [false, true] {
            let s = store.clone();
            let r = std::thread::spawn(move || {
                let job =
                    |_: &Connection| -> Result<(), StoreError> { panic!("job panics on purpose") };
                if lazy {
                    s.write_lazy(job)
                } else {
                    s.write(job)
                }
            })
            .join()
            .unwrap();
            assert!(matches!(r, Err(StoreError::Db(_))), "{r:?}");
            store.kv_set("after", &J::from(1)).unwrap();
            assert_eq!(store.kv_get("after").unwrap(), Some(J::from(1)));
        }
        drop(store);
        let _ = std::fs::remove_dir_all(dir);
    }

    fn writer_sync(store: &SqliteStore) -> (i64, Durability) {
        let w = store.writer.conn.lock().unwrap();
        let level: i64 = w
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        (level, w.sync)
    }

    fn new_exec(id: &str) -> NewExecution {
        NewExecution {
            id: id.into(),
            artifact_hash: "h".into(),
            program_name: None,
            args: vec![],
            parent: None,
        }
    }

    /// A group of lazy jobs only (journal row, lease) commits with
    /// `synchronous=NORMAL`; any durable write commits with FULL again.
    #[test]
    fn lazy_groups_commit_normal_and_durable_ones_full() {
        let (dir, store) = scratch("tcc-sqlite-lazy-");
        store.create_execution(&new_exec("e")).unwrap();
        assert_eq!(writer_sync(&store), (2, Durability::Full));
        assert!(store.claim("e", "me", 0, 1000).unwrap().is_some());
        store.journal_put(&journal("e", "k", "completed")).unwrap();
        assert_eq!(writer_sync(&store), (1, Durability::Lazy));
        // Committed and visible to the readers at once.
        assert!(store.journal_get("e:k").unwrap().is_some());
        store
            .commit_checkpoint(first_snapshot(vec![(
                "effect".into(),
                serde_json::json!({"key": "k"}),
            )]))
            .unwrap();
        assert_eq!(writer_sync(&store), (2, Durability::Full));
        assert_eq!(store.get_execution("e").unwrap().unwrap().revision, 1);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Execution `e`'s first checkpoint (revision 1) by owner `me`.
    fn first_snapshot(history: Vec<(String, serde_json::Value)>) -> CheckpointTx {
        CheckpointTx {
            id: "e".into(),
            owner: "me".into(),
            revision: 1,
            kind: "snapshot".into(),
            body: "{}".into(),
            status: "runnable".into(),
            result: None,
            message: None,
            pending: None,
            registrations: vec![],
            consumed: None,
            history,
        }
    }

    /// What a power loss can leave of the WAL is a prefix of it (SQLite
    /// replays complete commits of an unbroken, checksummed frame chain;
    /// the lazy, un-fsynced tail is what can go). Whatever prefix survives,
    /// a checkpoint committed after an effect's lazy journal row never
    /// survives without that row: the row's frames come first in the WAL,
    /// and the checkpoint's FULL commit fsyncs them with its own.
    #[test]
    fn every_wal_prefix_with_the_checkpoint_has_the_journal_row_before_it() {
        let (dir, store) = scratch("tcc-sqlite-prefix-");
        let wal = dir.join("t.db-wal");
        store.create_execution(&new_exec("e")).unwrap();
        let durable_start = std::fs::metadata(&wal).unwrap().len();
        assert!(store.claim("e", "me", 0, 1000).unwrap().is_some());
        store.journal_put(&journal("e", "k", "completed")).unwrap();
        store.commit_checkpoint(first_snapshot(vec![])).unwrap();
        let page: u64 = store
            .read(|c| Ok(c.query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))? as u64))
            .unwrap();
        let (db, log) = (
            std::fs::read(dir.join("t.db")).unwrap(),
            std::fs::read(&wal).unwrap(),
        );
        let frame = 24 + page;
        let mut seen = Vec::new();
        let mut cut = 32;
        while cut <= log.len() as u64 {
            let copy = dir.join(format!("cut{cut}.db"));
            std::fs::write(&copy, &db).unwrap();
            std::fs::write(dir.join(format!("cut{cut}.db-wal")), &log[..cut as usize]).unwrap();
            let c = Connection::open(&copy).unwrap();
            let revision: Option<i64> = c
                .query_row("SELECT revision FROM executions WHERE id = 'e'", [], |r| {
                    r.get(0)
                })
                .optional()
                .unwrap_or(None);
            let journalled: i64 = c
                .query_row(
                    "SELECT COUNT(*) FROM effects WHERE idempotency_key = 'e:k'",
                    [],
                    |r| r.get(0),
                )
                .unwrap_or(0);
            if revision == Some(1) {
                assert_eq!(
                    journalled, 1,
                    "WAL cut at {cut}: checkpoint without its journal row"
                );
            }
            seen.push((cut, revision, journalled));
            cut += frame;
        }
        // The cuts cover: before the journal row, the row alone, both.
        assert!(
            seen.iter()
                .any(|&(c, r, j)| c >= durable_start && r == Some(0) && j == 0),
            "{seen:?}"
        );
        assert!(
            seen.iter().any(|&(_, r, j)| r == Some(0) && j == 1),
            "{seen:?}"
        );
        assert!(
            seen.iter().any(|&(_, r, j)| r == Some(1) && j == 1),
            "{seen:?}"
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Jobs that queue while a commit runs form one group; a failing job in
    /// it (a duplicate execution id) is undone alone: the optimistic group
    /// is rolled back and re-run with a savepoint per job.
    #[test]
    fn a_failing_job_in_a_group_undoes_only_itself() {
        let (dir, store) = scratch("tcc-sqlite-group-");
        let store = std::sync::Arc::new(store);
        // Hold the connection so that the first caller waits as leader and
        // the others queue behind it.
        let held = store.writer.conn.lock().unwrap();
        let ids = ["a", "a", "b", "c"];
        let threads: Vec<_> = ids
            .iter()
            .map(|id| {
                let (store, id) = (store.clone(), id.to_string());
                std::thread::spawn(move || store.create_execution(&new_exec(&id)))
            })
            .collect();
        let start = std::time::Instant::now();
        while store.writer.queue.lock().unwrap().jobs.len() < ids.len() {
            assert!(start.elapsed() < std::time::Duration::from_secs(10));
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        drop(held);
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let conflicts = results
            .iter()
            .filter(|r| matches!(r, Err(StoreError::Conflict(_))))
            .count();
        assert_eq!(conflicts, 1, "{results:?}");
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 3);
        for id in ["a", "b", "c"] {
            assert!(store.get_execution(id).unwrap().is_some(), "{id}");
        }
        // One `created` history entry for "a": the failed duplicate left none.
        assert_eq!(store.history("a", 0, 100).unwrap().len(), 1);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A database written by the first schema version is upgraded in place
    /// by the later migrations, and the indexed work query runs on it.
    #[test]
    fn version_one_database_is_upgraded() {
        let (dir, path) = database_at_version("tcc-sqlite-upgrade-", 1, "");
        let store = SqliteStore::open(&path).unwrap();
        let version: u32 = store
            .read(|c| Ok(c.query_row_cached("PRAGMA user_version", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(version as usize, MIGRATIONS.len());
        let index: i64 = store
            .read(|c| {
                Ok(c.query_row_cached(
                    "SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_unconsumed'",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(index, 1);
        assert!(store.find_work(crate::now_ms(), 10).unwrap().is_empty());
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Migration 3 drops the journal's per-execution index: an execution's
    /// journal is read as a key range, which holds exactly its rows (not
    /// those of an execution whose id extends it), and a key outside that
    /// range is refused before anything is written.
    #[test]
    fn the_journal_is_read_by_key_range_and_foreign_keys_are_refused() {
        let (dir, store) = scratch("tcc-sqlite-range-");
        let row = |exec: &str, key: &str| JournalRow {
            idempotency_key: key.into(),
            execution_id: exec.into(),
            key: "k".into(),
            input: "{}".into(),
            status: "completed".into(),
            result: J::Null,
        };
        for (exec, key) in [("e", "e:b"), ("e", "e:a"), ("e1", "e1:a"), ("e:x", "e:x:a")] {
            store.journal_put(&row(exec, key)).unwrap();
        }
        // Journal order is insertion order, not key order.
        let of_e: Vec<String> = store
            .journal_of("e")
            .unwrap()
            .into_iter()
            .map(|r| r.idempotency_key)
            .collect();
        assert_eq!(of_e, vec!["e:b".to_string(), "e:a".to_string()]);
        let mut keys = store.journal_keys("e").unwrap();
        keys.sort();
        assert_eq!(keys, vec!["e:a".to_string(), "e:b".to_string()]);
        assert_eq!(store.journal_keys("e1").unwrap(), vec!["e1:a".to_string()]);
        assert_eq!(
            store.journal_keys("e:x").unwrap(),
            vec!["e:x:a".to_string()]
        );
        let err = store.journal_put(&row("e", "f:a")).unwrap_err();
        assert!(matches!(err, StoreError::Unsupported(_)), "{err:?}");
        assert!(store.journal_get("f:a").unwrap().is_none());
        let index: i64 = store
            .read(|c| {
                Ok(c.query_row_cached(
                    "SELECT COUNT(*) FROM sqlite_master WHERE name = 'effects_exec'",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(index, 0);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Migration 4 (history without `AUTOINCREMENT`) keeps every entry and
    /// its `seq`, and later entries continue above them.
    /// A database file at schema `version` (its first migrations applied,
    /// as an older build left it) holding the rows `sql` inserts.
    fn database_at_version(
        name: &str,
        version: usize,
        sql: &str,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(crate::random_id(name));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("v{version}.db"));
        let conn = Connection::open(&path).unwrap();
        for m in &MIGRATIONS[..version] {
            conn.execute_batch(m).unwrap();
        }
        conn.execute_batch(&format!("PRAGMA user_version = {version}; {sql}"))
            .unwrap();
        (dir, path)
    }

    #[test]
    fn history_keeps_its_sequence_across_migration_four() {
        let (dir, path) = database_at_version(
            "tcc-sqlite-v4-",
            3,
            "INSERT INTO history (execution_id, at_ms, kind, detail) VALUES
               ('a', 1, 'created', 'null'), ('b', 2, 'created', 'null'), ('a', 3, 'effect', 'null');",
        );
        let store = SqliteStore::open(&path).unwrap();
        let autoincrement: i64 = store
            .read(|c| {
                Ok(c.query_row_cached(
                    "SELECT COUNT(*) FROM sqlite_master WHERE name = 'history' AND sql LIKE '%AUTOINCREMENT%'",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(autoincrement, 0);
        store.append_history("a", "later", &J::Null).unwrap();
        let h = store.history("a", 0, 100).unwrap();
        let seqs: Vec<i64> = h.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![1, 3, 4]);
        assert_eq!(h[2].kind, "later");
        assert_eq!(store.history("a", 1, 100).unwrap().len(), 2);
        assert_eq!(store.history("b", 0, 100).unwrap()[0].seq, 2);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A journal row of execution `id` for effect `key` (input `{}`,
    /// result tagged null).
    fn journal(id: &str, key: &str, status: &str) -> JournalRow {
        JournalRow {
            idempotency_key: format!("{id}:{key}"),
            execution_id: id.into(),
            key: key.into(),
            input: "{}".into(),
            status: status.into(),
            result: serde_json::json!({"t": "null"}),
        }
    }

    #[test]
    fn journal_rows_are_the_effect_entries_of_the_history_in_order() {
        let (dir, store) = scratch("tcc-sqlite-hist-");
        assert!(store.history_lists_journal());
        store.create_execution(&new_exec("x")).unwrap();
        store.create_execution(&new_exec("x2")).unwrap();
        store.append_history("x", "before", &J::Null).unwrap();
        store.journal_put(&journal("x", "a", "completed")).unwrap();
        store.journal_put(&journal("x2", "a", "completed")).unwrap();
        store.append_history("x", "between", &J::Null).unwrap();
        store.journal_put(&journal("x", "b", "failed")).unwrap();
        // A replayed effect (its row already there) adds no entry.
        store.journal_put(&journal("x", "a", "completed")).unwrap();
        store.append_history("x", "after", &J::Null).unwrap();
        let h = store.history("x", 0, 100).unwrap();
        let kinds: Vec<&str> = h.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["created", "before", "effect", "between", "effect", "after"]
        );
        assert_eq!(
            h[2].detail,
            serde_json::json!({"key": "a", "idempotency_key": "x:a", "status": "completed"})
        );
        assert_eq!(h[4].detail["status"], "failed");
        assert!(h.windows(2).all(|w| w[0].seq < w[1].seq), "{h:?}");
        assert!(h[2].at_ms > 0);
        // Paging by `seq` runs through both kinds of entry.
        let page: Vec<String> = store
            .history("x", h[1].seq, 2)
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(page, ["effect", "between"]);
        // The other execution's journal row is its own.
        let h2 = store.history("x2", 0, 100).unwrap();
        assert_eq!(
            h2.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
            ["created", "effect"]
        );
        // Sequence numbers are never handed out twice, also across reopening.
        drop(store);
        let store = SqliteStore::open(&dir.join("t.db")).unwrap();
        store.journal_put(&journal("x", "c", "completed")).unwrap();
        store.append_history("x", "last", &J::Null).unwrap();
        let again = store.history("x", 0, 100).unwrap();
        assert_eq!(again.len(), 8);
        assert!(again.windows(2).all(|w| w[0].seq < w[1].seq), "{again:?}");
        assert!(again[5].seq < again[6].seq);
        assert_eq!(
            (again[6].kind.as_str(), again[7].kind.as_str()),
            ("effect", "last")
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn journal_rows_from_before_migration_five_are_not_listed_twice() {
        // As version 4 wrote them: a journal row, and its history row.
        let (dir, path) = database_at_version(
            "tcc-sqlite-v5-",
            4,
            "INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, seq)
               VALUES ('a:k', 'a', 'k', '{}', 'completed', '1', 1);
             INSERT INTO history (execution_id, at_ms, kind, detail) VALUES
               ('a', 1, 'created', 'null'), ('a', 2, 'effect', '{\"key\":\"k\"}');",
        );
        let store = SqliteStore::open(&path).unwrap();
        store.journal_put(&journal("a", "k2", "completed")).unwrap();
        let h = store.history("a", 0, 100).unwrap();
        let seqs: Vec<(i64, &str)> = h.iter().map(|e| (e.seq, e.kind.as_str())).collect();
        assert_eq!(seqs, [(1, "created"), (2, "effect"), (3, "effect")]);
        assert_eq!(h[2].detail["key"], "k2");
        assert_eq!(store.journal_of("a").unwrap().len(), 2);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
