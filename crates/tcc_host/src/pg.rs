//! PostgreSQL backend (`--database postgres://user:pw@host/db[?schema=NAME]`),
//! for several `irkit tcc serve` nodes sharing one database.
//!
//! - Migrations: an ordered list applied at open, tracked in
//!   `irkit_tcc_schema_version`, under a session advisory lock so that
//!   nodes starting together migrate once.
//! - Group commit: as in the SQLite backend, every write is a job put in a
//!   queue; a caller that finds one of the writer connections ([`COMMITTERS`]
//!   per node) idle takes it and runs all jobs waiting at that moment in one
//!   transaction, batch after batch until the queue is empty, and answers
//!   each job only after `COMMIT` (no committer threads: a lone execution's
//!   commits run on its own worker thread). The batch runs first without
//!   savepoints; if a job fails it is re-run with one savepoint per job so
//!   that only the failing job is undone. A job that hits a deadlock or
//!   serialization failure is retried.
//! - Leases: `claim` takes an execution with
//!   `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED)`, so nodes racing
//!   for the same execution never wait on each other and exactly one wins;
//!   a lease whose expiry has passed is taken over by any node. Leases are
//!   never freed wholesale at start (other nodes may be alive):
//!   [`Store::reset_leases`] is a no-op here.
//! - Reads use a small pool of connections in autocommit mode.
//!
//! `?schema=NAME` (letters, digits, `_`) puts every table in that schema
//! (created if missing); the tests use it to isolate themselves.
//!
//! TLS follows libpq's `sslmode` (default `prefer`) and `sslrootcert`
//! parameters (`PgTls`; docs/tcc/host.md, section TLS).

use crate::slot::Slot;
use crate::store::*;
use postgres::config::SslMode;
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, GenericClient, NoTls, Row, Statement};
use serde_json::Value as J;
use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Schema migrations; migration `i` brings the stored version from `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE artifacts (hash TEXT PRIMARY KEY, body BYTEA NOT NULL, created_ms BIGINT NOT NULL);
CREATE TABLE programs (name TEXT PRIMARY KEY, hash TEXT NOT NULL, updated_ms BIGINT NOT NULL);
CREATE TABLE executions (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  artifact_hash TEXT NOT NULL,
  program_name TEXT,
  args TEXT NOT NULL,
  status TEXT NOT NULL,
  revision BIGINT NOT NULL DEFAULT 0,
  owner TEXT,
  lease_until BIGINT NOT NULL DEFAULT 0,
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  result TEXT,
  message TEXT,
  error TEXT,
  pending TEXT,
  parent_id TEXT,
  parent_branch TEXT,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
CREATE INDEX executions_status ON executions (status, lease_until);
CREATE INDEX executions_hash ON executions (artifact_hash);
CREATE INDEX executions_parent ON executions (parent_id);
CREATE TABLE checkpoints (
  execution_id TEXT NOT NULL, revision BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (execution_id, revision)
);
CREATE TABLE effects (
  idempotency_key TEXT PRIMARY KEY, execution_id TEXT NOT NULL, key TEXT NOT NULL,
  input TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL, seq BIGSERIAL NOT NULL
);
CREATE INDEX effects_exec ON effects (execution_id, seq);
CREATE TABLE waits (
  id BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, kind TEXT NOT NULL,
  name TEXT, wait_id TEXT, branch TEXT, due_ms BIGINT, delivered BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX waits_open ON waits (kind, due_ms) WHERE NOT delivered;
CREATE INDEX waits_exec ON waits (execution_id) WHERE NOT delivered;
CREATE TABLE events (
  seq BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, name TEXT NOT NULL,
  payload TEXT NOT NULL, consumed_by BIGINT, received_ms BIGINT NOT NULL
);
CREATE INDEX events_open ON events (execution_id, name) WHERE consumed_by IS NULL;
CREATE TABLE history (
  seq BIGSERIAL PRIMARY KEY, execution_id TEXT NOT NULL, at_ms BIGINT NOT NULL,
  kind TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE INDEX history_exec ON history (execution_id, seq);
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"#,
    // No history row per journalled effect: a journal row is listed in its
    // execution's history as the `effect` entry (see `history`), numbered
    // from the history's own sequence. Rows journalled before this
    // migration have no `history_seq`: their entries are history rows.
    r#"
ALTER TABLE effects ADD COLUMN at_ms BIGINT;
ALTER TABLE effects ADD COLUMN history_seq BIGINT;
"#,
    // The work query is one indexed branch per reason to run (see
    // `find_work`); cancellations of suspended executions get their own
    // small index.
    r#"
CREATE INDEX executions_cancel ON executions (seq) WHERE cancel_requested;
"#,
    // No index holds a lease column, so that a claim, a renewal or a
    // release (which change only `owner` and `lease_until`) is a HOT
    // update: one heap record, no entry in any of the table's indexes.
    // Listing by status and the work query's runnable branch read
    // `(status, seq)` in the order they return.
    r#"
DROP INDEX executions_status;
CREATE INDEX executions_status_seq ON executions (status, seq);
"#,
    // No journal index by execution: an execution's journal is the range
    // of keys `{id}:` up to `{id};` of the primary key (see
    // `in_journal_of!`), which the byte order of the "C" collation keeps
    // contiguous. One index entry per journal row instead of two.
    r#"
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM effects WHERE left(idempotency_key, length(execution_id) + 1) <> execution_id || ':') THEN
    RAISE EXCEPTION 'effects: a journal key does not start with its execution id followed by a colon';
  END IF;
END $$;
ALTER TABLE effects ALTER COLUMN idempotency_key TYPE TEXT COLLATE "C";
DROP INDEX effects_exec;
"#,
    // The dashboard: listing by program newest first (`(status, seq)`
    // serves the listing by status), the id search as a range of ids in
    // byte order (the unique index follows the database's collation, under
    // which a prefix need not be one range), and every wait of one
    // execution (`waits_exec` holds only the open ones). None holds a
    // column an update changes, so claims and steps stay HOT updates.
    r#"
CREATE INDEX executions_program_seq ON executions (program_name, seq);
CREATE INDEX executions_id_bytes ON executions ((id COLLATE "C"));
CREATE INDEX waits_by_exec ON waits (execution_id, id);
"#,
];

/// The SQL condition selecting the journal rows of the execution whose id
/// is the SQL expression `$id`: the range of its keys (every key is
/// `{id}:{effect key}`, checked by `journal_put`), read through the
/// primary key in byte order, and the id itself (an execution named
/// `a` must not see the keys of one named `a:b`).
macro_rules! in_journal_of {
    ($id:literal) => {
        concat!(
            "idempotency_key >= (",
            $id,
            " || ':') COLLATE \"C\" AND idempotency_key < (",
            $id,
            " || ';') COLLATE \"C\" AND execution_id = ",
            $id
        )
    };
}

/// Advisory-lock key guarding migrations (per schema).
fn migration_lock_key(schema: &str) -> i64 {
    // FNV-1a, stable across builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in b"irkit-tcc-migrate:".iter().chain(schema.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        match e.as_db_error() {
            Some(db) => StoreError::Db(format!("{} ({})", db.message(), db.code().code())),
            None => StoreError::Db(e.to_string()),
        }
    }
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// An error inside a job: a database error (maybe retryable) or a store-level one.
enum JobError {
    Pg(postgres::Error),
    Store(StoreError),
}

impl From<postgres::Error> for JobError {
    fn from(e: postgres::Error) -> JobError {
        JobError::Pg(e)
    }
}

impl From<StoreError> for JobError {
    fn from(e: StoreError) -> JobError {
        JobError::Store(e)
    }
}

impl From<JobError> for StoreError {
    fn from(e: JobError) -> StoreError {
        match e {
            JobError::Pg(e) => e.into(),
            JobError::Store(e) => e,
        }
    }
}

/// Prepared statements of one connection, by SQL text.
type Cache = HashMap<String, Statement>;

/// A connection or transaction with its connection's prepared-statement
/// cache: a cached statement executes in one round trip (an unprepared
/// query with parameters needs a prepare round trip first).
struct Conn<'a, C> {
    c: &'a mut C,
    cache: &'a mut Cache,
}

impl<C: GenericClient> Conn<'_, C> {
    fn stmt(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.c.prepare(sql)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.execute(&s, params)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query(&s, params)
    }

    fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query_opt(&s, params)
    }

    fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query_one(&s, params)
    }
}
type JobResult<R> = Result<R, JobError>;

/// A write job: `run` may be called again (in a fresh savepoint) after a
/// retryable failure; it returns whether the job's writes should stay.
/// `finish` answers the caller with the commit's outcome.
struct Job {
    run: RunFn,
    finish: Box<dyn FnOnce(Result<(), StoreError>) + Send>,
    /// The job runs exactly one statement (see [`PgStore::write_one`]).
    single: bool,
    /// What the job writes, when a group may fold it with the other jobs
    /// of its kind into one statement, and where that statement's outcome
    /// for this job goes.
    merge: Option<(Merge, SetFn)>,
}

/// Sets a folded job's outcome: its value (the job's own result type,
/// boxed), or its error.
type SetFn = Box<dyn FnMut(Result<Box<dyn std::any::Any + Send>, StoreError>) + Send>;

/// A write that a group folds, with the others of its kind, into one
/// statement (one round trip for the whole group instead of one per job).
/// Its job's `run` does the same write alone (used when the group has to
/// be re-run job by job).
enum Merge {
    /// An effect journal row ([`Store::journal_put`]).
    Journal {
        idempotency_key: String,
        execution_id: String,
        key: String,
        input: String,
        status: String,
        result: String,
    },
    /// A checkpoint with nothing registered or consumed: a delta or a
    /// snapshot (which drops the older checkpoint rows), terminal or not
    /// (a terminal one closes the execution's open waits), with its history
    /// entries ([`Store::commit_checkpoint`]).
    Step {
        id: String,
        owner: String,
        revision: i64,
        status: String,
        result: Option<String>,
        message: Option<String>,
        pending: Option<String>,
        kind: String,
        body: String,
        /// History entries: kind and detail (canonical JSON).
        history: Vec<(String, String)>,
    },
    /// A lease release ([`Store::release`]).
    Release { id: String, owner: String },
    /// A lease claim for a drive ([`Store::claim_for_drive`]); its value is
    /// the claimed row and the journal keys, or `None`.
    Claim {
        id: String,
        owner: String,
        until: i64,
        now: i64,
    },
}

impl Merge {
    /// Which folded statement the write belongs to.
    fn kind(&self) -> u8 {
        match self {
            Merge::Journal { .. } => 0,
            Merge::Step { .. } => 1,
            Merge::Release { .. } => 2,
            Merge::Claim { .. } => 3,
        }
    }
}

/// A job's body (re-runnable).
type RunFn = Box<dyn FnMut(&mut Conn<'_, Client>) -> RunOutcome + Send>;

enum RunOutcome {
    Keep,
    Undo,
    Retry,
}

/// Parsed `--database` URL: connection config plus the optional schema.
#[derive(Clone)]
struct Target {
    config: Config,
    schema: Option<String>,
    tls: PgTls,
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslModeParam {
    /// Plain connections only.
    Disable,
    /// TLS when the server offers it, else plain (the default).
    Prefer,
    /// TLS, the certificate not checked unless `sslrootcert` is given.
    Require,
    /// TLS, the chain checked against `sslrootcert`, not the host name.
    VerifyCa,
    /// TLS, chain and host name checked.
    VerifyFull,
}

impl SslModeParam {
    /// The libpq name.
    pub fn name(self) -> &'static str {
        match self {
            SslModeParam::Disable => "disable",
            SslModeParam::Prefer => "prefer",
            SslModeParam::Require => "require",
            SslModeParam::VerifyCa => "verify-ca",
            SslModeParam::VerifyFull => "verify-full",
        }
    }

    fn parse(s: &str) -> Result<SslModeParam, StoreError> {
        Ok(match s {
            "disable" => SslModeParam::Disable,
            "prefer" => SslModeParam::Prefer,
            "require" => SslModeParam::Require,
            "verify-ca" => SslModeParam::VerifyCa,
            "verify-full" => SslModeParam::VerifyFull,
            "allow" => {
                return Err(StoreError::Db(
                    "sslmode=allow is not supported (use disable, prefer, require, verify-ca or verify-full)".into(),
                ));
            }
            other => {
                return Err(StoreError::Db(format!(
                    "unknown sslmode {other:?} (use disable, prefer, require, verify-ca or verify-full)"
                )));
            }
        })
    }
}

/// How connections of a [`Target`] negotiate TLS.
#[derive(Clone)]
struct PgTls {
    /// The `sslmode` in force.
    mode: SslModeParam,
    /// The rustls configuration (`None` for `disable`).
    config: Option<Arc<rustls::ClientConfig>>,
}

impl PgTls {
    /// Builds the TLS side of `sslmode`/`sslrootcert` as libpq reads them:
    /// `prefer` and `require` encrypt without checking the certificate,
    /// unless a root certificate is given, in which case they check the
    /// chain like `verify-ca`; `verify-ca` checks the chain, `verify-full`
    /// the chain and the host name. The roots are `sslrootcert` (a PEM
    /// file; `system`: Mozilla's roots, which like libpq makes
    /// `verify-full` the default and refuses weaker modes), else
    /// `~/.postgresql/root.crt` when it exists, which
    /// `verify-ca`/`verify-full` require. `mode`: as given in the URL.
    fn new(mode: Option<SslModeParam>, rootcert: Option<&str>) -> Result<PgTls, StoreError> {
        use crate::tls::{Verify, client_config, load_roots, mozilla_roots};
        let err = |e: String| StoreError::Db(format!("PostgreSQL TLS: {e}"));
        if rootcert == Some("system") {
            match mode {
                None | Some(SslModeParam::VerifyFull) => {}
                Some(m) => {
                    return Err(err(format!(
                        "sslrootcert=system needs sslmode=verify-full (not {})",
                        m.name()
                    )));
                }
            }
        }
        let mode = match (mode, rootcert) {
            (Some(m), _) => m,
            (None, Some("system")) => SslModeParam::VerifyFull,
            (None, _) => SslModeParam::Prefer,
        };
        if mode == SslModeParam::Disable {
            return Ok(PgTls { mode, config: None });
        }
        let roots = match rootcert {
            Some("system") => Some(mozilla_roots()),
            Some(path) => Some(load_roots(std::path::Path::new(path)).map_err(err)?),
            None => match std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"))
                .filter(|p| p.is_file())
            {
                Some(p) => Some(load_roots(&p).map_err(err)?),
                None => None,
            },
        };
        let verify = match (mode, &roots) {
            (SslModeParam::VerifyFull, Some(_)) => Verify::Full,
            (SslModeParam::VerifyCa, Some(_)) => Verify::ChainOnly,
            (SslModeParam::VerifyFull | SslModeParam::VerifyCa, None) => {
                return Err(err(
                    "sslmode=verify-ca and verify-full need a root certificate: add sslrootcert=PATH (a PEM file) or sslrootcert=system, or create ~/.postgresql/root.crt".into(),
                ));
            }
            (_, Some(_)) => Verify::ChainOnly,
            (_, None) => Verify::EncryptOnly,
        };
        let roots = roots.unwrap_or_else(rustls::RootCertStore::empty);
        let config = client_config(verify, roots, &[b"postgresql"]).map_err(err)?;
        Ok(PgTls {
            mode,
            config: Some(Arc::new(config)),
        })
    }
}

fn parse_url(url: &str) -> Result<Target, StoreError> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut schema = None;
    let mut sslmode = None;
    let mut rootcert = None;
    let mut rest = Vec::new();
    for pair in query.into_iter().flat_map(|q| q.split('&')) {
        match pair.split_once('=') {
            Some(("schema", s)) => {
                if s.is_empty()
                    || s.len() > 63
                    || !s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    || s.as_bytes()[0].is_ascii_digit()
                {
                    return Err(StoreError::Db(format!(
                        "schema {s:?}: use 1 to 63 letters, digits or '_', not starting with a digit"
                    )));
                }
                schema = Some(s.to_ascii_lowercase());
            }
            Some(("sslmode", m)) => sslmode = Some(SslModeParam::parse(&percent_decode(m)?)?),
            Some(("sslrootcert", p)) => rootcert = Some(percent_decode(p)?),
            Some((k @ ("sslcert" | "sslkey" | "sslpassword" | "sslcrl" | "sslcrldir"), _)) => {
                return Err(StoreError::Db(format!(
                    "PostgreSQL URL parameter {k} is not supported (no client certificates or CRLs)"
                )));
            }
            _ if !pair.is_empty() => rest.push(pair),
            _ => {}
        }
    }
    let cleaned = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    let mut config: Config = cleaned
        .parse()
        .map_err(|e| StoreError::Db(format!("bad PostgreSQL URL: {e}")))?;
    config.connect_timeout(std::time::Duration::from_secs(10));
    if config.get_application_name().is_none() {
        config.application_name("irkit-tcc");
    }
    if let Some(s) = &schema {
        config.options(&format!("-c search_path={s}"));
    }
    let tls = PgTls::new(sslmode, rootcert.as_deref())?;
    config.ssl_mode(match tls.mode {
        SslModeParam::Disable => SslMode::Disable,
        SslModeParam::Prefer => SslMode::Prefer,
        _ => SslMode::Require,
    });
    Ok(Target {
        config,
        schema,
        tls,
    })
}

/// Decodes `%XX` escapes of a URL query value.
fn percent_decode(s: &str) -> Result<String, StoreError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    StoreError::Db(format!("bad %-escape in PostgreSQL URL value {s:?}"))
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| StoreError::Db(format!("PostgreSQL URL value {s:?} is not UTF-8")))
}

/// Opens one connection to `url` exactly as the store does (`sslmode`,
/// `sslrootcert`, `schema` as search path): for diagnostics and tests.
pub fn connect(url: &str) -> Result<Client, StoreError> {
    parse_url(url)?.connect()
}

/// Checks a `postgres://` URL (and its `schema`) without connecting.
pub fn check_url(url: &str) -> Result<(), StoreError> {
    parse_url(url).map(|_| ())
}

impl Target {
    fn connect(&self) -> Result<Client, StoreError> {
        let r = match &self.tls.config {
            None => self.config.connect(NoTls),
            Some(c) => self
                .config
                .connect(tokio_postgres_rustls::MakeRustlsConnect::new((**c).clone())),
        };
        r.map_err(|e| {
            // The chain of causes: a TLS failure's reason (e.g. "invalid
            // peer certificate: UnknownIssuer") is only in the sources.
            let mut message = match e.as_db_error() {
                Some(db) => format!("{} ({})", db.message(), db.code().code()),
                None => e.to_string(),
            };
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                let text = c.to_string();
                if !message.contains(&text) {
                    message = format!("{message}: {text}");
                }
                cause = c.source();
            }
            let hint = match self.tls.mode {
                _ if !message.contains("TLS") => String::new(),
                SslModeParam::Disable => String::new(),
                m => format!(" (sslmode={})", m.name()),
            };
            StoreError::Db(format!("cannot connect to PostgreSQL: {message}{hint}"))
        })
    }
}

/// Number of pooled read connections.
pub const READERS: usize = 4;
/// Durable writer connections (each runs its own group commits; plus one
/// for lazy writes, see [`PgStore::write_lazy`]): the server overlaps
/// their round trips and shares WAL flushes between their commits.
pub const COMMITTERS: usize = 3;
/// Most jobs in one group commit.
pub const MAX_GROUP: usize = 512;
/// Attempts of a job that hits a deadlock or serialization failure.
const ATTEMPTS: usize = 5;

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

/// A write queue and its idle writer connections.
struct Lane {
    pool: Mutex<LanePool>,
}

struct LanePool {
    jobs: VecDeque<Job>,
    idle: Vec<WriterConn>,
}

/// A writer connection (re-opened from `target` when broken).
struct WriterConn {
    client: Client,
    cache: Cache,
    target: Target,
}

impl Lane {
    fn new(conns: Vec<WriterConn>) -> Lane {
        Lane {
            pool: Mutex::new(LanePool {
                jobs: VecDeque::new(),
                idle: conns,
            }),
        }
    }
}

/// Adds a `-c name=value` setting to the sessions `target` opens.
fn add_session_option(target: &mut Target, option: &str) {
    let options = match target.config.get_options() {
        Some(o) => format!("{o} {option}"),
        None => option.to_string(),
    };
    target.config.options(&options);
}

/// Applies pending migrations under an advisory lock; refuses a database
/// of a newer schema. Returns the schema version.
fn migrate(client: &mut Client, schema: Option<&str>) -> Result<u32, StoreError> {
    let key = migration_lock_key(schema.unwrap_or(""));
    client.execute("SELECT pg_advisory_lock($1)", &[&key])?;
    // Concurrent `CREATE SCHEMA IF NOT EXISTS` can still collide: under the lock too.
    let r = match schema {
        Some(s) => client
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {s}"))
            .map_err(StoreError::from)
            .and_then(|()| migrate_locked(client)),
        None => migrate_locked(client),
    };
    let unlock = client.execute("SELECT pg_advisory_unlock($1)", &[&key]);
    let v = r?;
    unlock?;
    Ok(v)
}

fn migrate_locked(client: &mut Client) -> Result<u32, StoreError> {
    client.batch_execute(
        "CREATE TABLE IF NOT EXISTS irkit_tcc_schema_version (version INTEGER NOT NULL)",
    )?;
    let current: Option<i32> = client
        .query_opt("SELECT version FROM irkit_tcc_schema_version", &[])?
        .map(|r| r.get(0));
    let current = match current {
        Some(v) => v.max(0) as usize,
        None => {
            client.execute("INSERT INTO irkit_tcc_schema_version VALUES (0)", &[])?;
            0
        }
    };
    if current > MIGRATIONS.len() {
        return Err(StoreError::Corrupt(format!(
            "database schema version {current} is newer than this irkit ({})",
            MIGRATIONS.len()
        )));
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(current) {
        let mut tx = client.transaction()?;
        tx.batch_execute(m)?;
        tx.execute(
            "UPDATE irkit_tcc_schema_version SET version = $1",
            &[&((i + 1) as i32)],
        )?;
        tx.commit()?;
    }
    Ok(MIGRATIONS.len() as u32)
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
        migrate(&mut first, target.schema.as_deref())?;
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
            durable: Lane::new(durable),
            lazy: Lane::new(vec![lazy]),
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
                .map_err(|_| StoreError::Db("reader lock poisoned".into()))?;
            if let Some((_, cache)) = g.as_ref() {
                collect(cache);
            }
        }
        for lane in [&self.durable, &self.lazy] {
            let pool = lane
                .pool
                .lock()
                .map_err(|_| StoreError::Db("writer lock poisoned".into()))?;
            for w in &pool.idle {
                collect(&w.cache);
            }
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
                .map_err(|_| StoreError::Db("reader lock poisoned".into()))?,
        };
        if guard.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            *guard = Some((self.target.connect()?, Cache::new()));
        }
        let (client, cache) = guard
            .as_mut()
            .ok_or_else(|| StoreError::Db("no connection".into()))?;
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
        let reply = Answer {
            slot: Arc::new(Slot::for_current_thread()),
            answered: false,
        };
        let waiter = reply.slot.clone();
        let slot: Arc<Mutex<Option<Result<R, StoreError>>>> = Arc::new(Mutex::new(None));
        let slot2 = slot.clone();
        let merge = merge.map(|m| {
            let slot = slot.clone();
            let set: SetFn = Box::new(
                move |r: Result<Box<dyn std::any::Any + Send>, StoreError>| {
                    let r = r.and_then(|v| {
                        v.downcast::<R>().map(|v| *v).map_err(|_| {
                            StoreError::Db("folded write: unexpected result type".into())
                        })
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
                    Ok(_) => RunOutcome::Keep,
                    Err(JobError::Pg(e)) if retryable(e) && attempts < ATTEMPTS => {
                        RunOutcome::Retry
                    }
                    Err(_) => RunOutcome::Undo,
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
                    .unwrap_or_else(|| Err(StoreError::Db("write job did not run".into())));
                reply.send(commit.and(r));
            }),
            single,
            merge,
        };
        let lane = if durable { &self.durable } else { &self.lazy };
        let poisoned = || StoreError::Db("writer lock poisoned".into());
        let mut conn = {
            let mut pool = lane.pool.lock().map_err(|_| poisoned())?;
            pool.jobs.push_back(job);
            pool.idle.pop()
        };
        // With an idle connection, this caller runs the queue (its own job
        // first) batch after batch until the queue is empty; every job that
        // arrives while all connections are busy is taken by one of their
        // holders before it gives its connection back.
        while let Some(mut c) = conn.take() {
            let batch: Vec<Job> = {
                let mut pool = lane.pool.lock().map_err(|_| poisoned())?;
                if pool.jobs.is_empty() {
                    pool.idle.push(c);
                    break;
                }
                let n = pool.jobs.len().min(MAX_GROUP);
                pool.jobs.drain(..n).collect()
            };
            // A panicking job must not cost the lane its connection: its
            // group's callers hear an error (their reply channels are
            // dropped) and the transaction is rolled back.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                commit_group(&mut c, batch)
            }));
            if ran.is_err() && !c.client.is_closed() {
                let _ = c.client.batch_execute("ROLLBACK");
            }
            conn = Some(c);
        }
        waiter
            .take()
            .unwrap_or_else(|| Err(StoreError::Db("write job reply poisoned".into())))
    }
}

/// A write job's way to answer its caller; a job dropped unanswered (its
/// group panicked) answers with an error, so no caller waits forever.
struct Answer<R> {
    slot: Arc<Slot<Result<R, StoreError>>>,
    answered: bool,
}

impl<R> Answer<R> {
    fn send(mut self, r: Result<R, StoreError>) {
        self.answered = true;
        self.slot.put(r);
    }
}

impl<R> Drop for Answer<R> {
    fn drop(&mut self) {
        if !self.answered {
            self.slot
                .put(Err(StoreError::Db("write job dropped".into())));
        }
    }
}

/// Runs one group commit on a writer connection (re-opened if broken) and
/// answers every job in it.
fn commit_group(w: &mut WriterConn, mut batch: Vec<Job>) {
    crate::metrics::global().group_commit("postgres", batch.len());
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

/// Runs a batch in one transaction. First optimistically without
/// savepoints (most jobs succeed; two round trips fewer per job); if a
/// job fails, the transaction is rolled back and the batch re-run with a
/// savepoint per job, so that only the failing job's writes are undone.
/// A lone single-statement job runs without `BEGIN`/`COMMIT`.
fn run_batch(client: &mut Client, cache: &mut Cache, batch: &mut [Job]) -> Result<(), StoreError> {
    if let [job] = batch
        && job.single
    {
        // Autocommit: the statement commits (durably on the durable lane,
        // whose session keeps `synchronous_commit = on`) before it answers,
        // or fails and leaves nothing. Retryable failures run it again.
        while let RunOutcome::Retry = (job.run)(&mut Conn { c: client, cache }) {}
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
    if batch.len() > 1
        && one_kind
        && let Ok(done) = run_merged(client, cache, batch)
        && done.iter().all(|d| *d)
    {
        return Ok(());
    }
    let r = run_transaction(client, cache, batch);
    if r.is_err() && !client.is_closed() {
        let _ = client.batch_execute("ROLLBACK");
    }
    r
}

/// A journal row, as [`Store::journal_put`] writes it.
const JOURNAL_INSERT: &str = "INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, at_ms, history_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('history_seq_seq')) ON CONFLICT (idempotency_key) DO NOTHING";

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
/// (`FOR UPDATE SKIP LOCKED`), never waited for; returns each claimed row
/// and its execution's journal keys.
fn claim_many_sql() -> String {
    let cols: Vec<String> = EXEC_COLS
        .split(',')
        .map(|c| format!("e.{}", c.trim()))
        .collect();
    format!(
        "WITH d AS (SELECT * FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::int8[]) AS d(id, owner, until, now)),
              free AS (SELECT e.id FROM executions e JOIN d ON d.id = e.id
                WHERE e.id = ANY($1::text[]) AND (e.owner IS NULL OR e.owner = d.owner OR e.lease_until < d.now) AND e.error IS NULL
                FOR UPDATE OF e SKIP LOCKED)
         UPDATE executions e SET owner = d.owner, lease_until = d.until
           FROM d JOIN free ON free.id = d.id WHERE e.id = d.id
         RETURNING {}, ARRAY(SELECT idempotency_key FROM effects WHERE {})",
        cols.join(", "),
        in_journal_of!("e.id")
    )
}

/// A group's lease releases in one statement.
const RELEASE_MANY: &str = "UPDATE executions e SET owner = NULL, lease_until = 0
     FROM UNNEST($1::text[], $2::text[]) AS d(id, owner)
     WHERE e.id = ANY($1::text[]) AND e.id = d.id AND e.owner = d.owner";

/// Folds the group's mergeable jobs (see [`Merge`]), two or more of a
/// kind, into one statement per kind, and sets each one's outcome; returns
/// which jobs it ran. An error leaves the outcomes to a re-run job by job.
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
        let now = crate::now_ms();
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
    if steps.len() >= 2 && unique {
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
        let now = crate::now_ms();
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
            let row = exec_row(r)?;
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

fn run_transaction(
    client: &mut Client,
    cache: &mut Cache,
    batch: &mut [Job],
) -> Result<(), StoreError> {
    let mut retries = 0;
    let n = batch.len();
    'optimistic: loop {
        client.batch_execute("BEGIN")?;
        let merged = if n > 1 {
            match run_merged(client, cache, batch) {
                Ok(done) => done,
                Err(_) => {
                    client.batch_execute("ROLLBACK")?;
                    break 'optimistic;
                }
            }
        } else {
            vec![false; n]
        };
        for (job, merged) in batch.iter_mut().zip(merged) {
            if merged {
                continue;
            }
            match (job.run)(&mut Conn {
                c: &mut *client,
                cache: &mut *cache,
            }) {
                RunOutcome::Keep => {}
                RunOutcome::Retry if n == 1 && retries < ATTEMPTS => {
                    retries += 1;
                    client.batch_execute("ROLLBACK")?;
                    continue 'optimistic;
                }
                // A lone job's failure needs no savepoint: undo it all.
                _ if n == 1 => {
                    client.batch_execute("ROLLBACK")?;
                    return Ok(());
                }
                _ => {
                    client.batch_execute("ROLLBACK")?;
                    break 'optimistic;
                }
            }
        }
        return Ok(client.batch_execute("COMMIT")?);
    }
    client.batch_execute("BEGIN")?;
    for job in batch.iter_mut() {
        loop {
            client.batch_execute("SAVEPOINT job")?;
            match (job.run)(&mut Conn {
                c: &mut *client,
                cache: &mut *cache,
            }) {
                RunOutcome::Keep => {
                    client.batch_execute("RELEASE SAVEPOINT job")?;
                    break;
                }
                RunOutcome::Undo => {
                    client.batch_execute("ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job")?;
                    break;
                }
                RunOutcome::Retry => {
                    client.batch_execute("ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job")?
                }
            }
        }
    }
    client.batch_execute("COMMIT")?;
    Ok(())
}

fn exec_row(r: &Row) -> Result<ExecutionRow, StoreError> {
    let args = match parse_json(Some(r.try_get(3)?))? {
        Some(J::Array(a)) => a,
        _ => return Err(StoreError::Corrupt("execution args".into())),
    };
    Ok(ExecutionRow {
        id: r.try_get(0)?,
        artifact_hash: r.try_get(1)?,
        program_name: r.try_get(2)?,
        args,
        status: r.try_get(4)?,
        revision: r.try_get::<_, i64>(5)?.max(0) as u64,
        owner: r.try_get(6)?,
        lease_until: r.try_get(7)?,
        cancel_requested: r.try_get(8)?,
        result: parse_json(r.try_get(9)?)?,
        message: r.try_get(10)?,
        error: r.try_get(11)?,
        pending: parse_json(r.try_get(12)?)?,
        parent_id: r.try_get(13)?,
        parent_branch: r.try_get(14)?,
        created_ms: r.try_get(15)?,
        updated_ms: r.try_get(16)?,
        seq: r.try_get(17)?,
    })
}

fn get_exec(c: &mut Conn<'_, impl GenericClient>, id: &str) -> JobResult<Option<ExecutionRow>> {
    let row = c.query_opt(
        &format!("SELECT {EXEC_COLS} FROM executions WHERE id = $1"),
        &[&id],
    )?;
    Ok(row.as_ref().map(exec_row).transpose()?)
}

fn insert_exec(
    c: &mut Conn<'_, impl GenericClient>,
    new: &NewExecution,
    now: i64,
) -> JobResult<u64> {
    let (pid, pbranch) = match &new.parent {
        Some((p, b)) => (Some(p.as_str()), b.as_deref()),
        None => (None, None),
    };
    let args = json_text(&J::Array(new.args.clone()));
    let n = c.execute(
        "INSERT INTO executions (id, artifact_hash, program_name, args, status, parent_id, parent_branch, created_ms, updated_ms) VALUES ($1, $2, $3, $4, 'runnable', $5, $6, $7, $7) ON CONFLICT (id) DO NOTHING",
        &[&new.id, &new.artifact_hash, &new.program_name, &args, &pid, &pbranch, &now],
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

fn add_history(
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
                        value: parse_json(Some(ev.try_get(1)?))?,
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
    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError> {
        let (hash, body) = (hash.to_string(), body.to_vec());
        self.write(move |c| {
            c.execute(
                "INSERT INTO artifacts (hash, body, created_ms) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING",
                &[&hash, &body, &crate::now_ms()],
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
                &[&name, &hash, &crate::now_ms()],
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
        let new = new.to_vec();
        self.write(move |c| {
            let now = crate::now_ms();
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

    fn list_executions(&self, f: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                &format!(
                    "SELECT {EXEC_COLS} FROM executions WHERE seq > $1 AND ($2::TEXT IS NULL OR status = $2) AND ($3::TEXT IS NULL OR program_name = $3) AND (NOT $4 OR error LIKE 'artifact_missing%') ORDER BY seq LIMIT $5"
                ),
                p(&[
                    &f.after.unwrap_or(0),
                    &f.status,
                    &f.program,
                    &f.artifact_missing,
                    &i64::from(f.limit.clamp(1, 1000)),
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
                        None => serde_json::json!({
                            "key": r.try_get::<_, Option<String>>(4)?,
                            "idempotency_key": r.try_get::<_, Option<String>>(5)?,
                            "status": r.try_get::<_, Option<String>>(6)?,
                        }),
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
                    "UPDATE executions SET owner = $2, lease_until = $3 WHERE id = (
                       SELECT id FROM executions WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until < $4) AND error IS NULL
                       FOR UPDATE SKIP LOCKED)
                     RETURNING {EXEC_COLS}, ARRAY(SELECT idempotency_key FROM effects WHERE {})",
                    in_journal_of!("$1")
                ),
                &[&id, &owner, &until, &now],
            )?;
            match row {
                None => Ok(None),
                Some(r) => {
                    let keys: Vec<String> = r.try_get(EXEC_COLS.split(',').count())?;
                    Ok(Some((exec_row(&r)?, Some(keys))))
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

    fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        let (id, owner) = (id.to_string(), owner.to_string());
        let merge = Merge::Release {
            id: id.clone(),
            owner: owner.clone(),
        };
        self.write_job(false, true, Some(merge), move |c| {
            c.execute(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE id = $1 AND owner = $2",
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
                        body: r.try_get(2)?,
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
        let merge = (tx.registrations.is_empty() && tx.consumed.is_none()).then(|| Merge::Step {
            id: tx.id.clone(),
            owner: tx.owner.clone(),
            revision: tx.revision as i64,
            status: tx.status.clone(),
            result: tx.result.as_ref().map(json_text),
            message: tx.message.clone(),
            pending: tx.pending.as_ref().map(json_text),
            kind: tx.kind.clone(),
            body: tx.body.clone(),
            history: tx
                .history
                .iter()
                .map(|(k, d)| (k.clone(), json_text(d)))
                .collect(),
        });
        self.write_job(true, single, merge, move |c| {
            let now = crate::now_ms();
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
                    &tx.result.as_ref().map(json_text),
                    &tx.message,
                    &tx.pending.as_ref().map(json_text),
                    &now,
                    &(rev - 1),
                    &tx.kind,
                    &tx.body,
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
            if tx.kind == "snapshot" {
                c.execute(
                    "DELETE FROM checkpoints WHERE execution_id = $1 AND revision < $2",
                    &[&tx.id, &rev],
                )?;
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
        let merge = Merge::Journal {
            idempotency_key: row.idempotency_key.clone(),
            execution_id: row.execution_id.clone(),
            key: row.key.clone(),
            input: row.input.clone(),
            status: row.status.clone(),
            result: result.clone(),
        };
        self.write_job(false, true, Some(merge), move |c| {
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
                    &crate::now_ms(),
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

    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                // One indexed branch per reason to run, so that the cost
                // follows the work to do, not the number of executions ever
                // stored (the scheduler calls this after every drive).
                "SELECT id FROM (
                   SELECT seq, id FROM executions
                     WHERE status = 'runnable' AND error IS NULL AND lease_until < $1
                   UNION
                   SELECT seq, id FROM executions
                     WHERE cancel_requested AND status = 'suspended' AND error IS NULL AND lease_until < $1
                   UNION
                   SELECT e.seq, e.id FROM waits w JOIN executions e ON e.id = w.execution_id
                     WHERE NOT w.delivered AND w.kind = 'timer' AND w.due_ms <= $1
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1
                   UNION
                   SELECT e.seq, e.id FROM events v
                     JOIN waits w ON w.execution_id = v.execution_id AND w.name = v.name
                     JOIN executions e ON e.id = v.execution_id
                     WHERE v.consumed_by IS NULL AND NOT w.delivered AND w.kind = 'event'
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1
                   UNION
                   SELECT e.seq, e.id FROM waits w
                     JOIN executions k ON k.id = w.name
                     JOIN executions e ON e.id = w.execution_id
                     WHERE NOT w.delivered AND w.kind = 'child' AND k.status IN ('completed', 'failed', 'cancelled')
                       AND e.status = 'suspended' AND e.error IS NULL AND e.lease_until < $1
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
            Ok(c.query_one(
                "SELECT MIN(due_ms) FROM waits WHERE NOT delivered AND kind = 'timer'",
                &[],
            )?
            .try_get(0)?)
        })
    }

    fn ready_wake(&self, id: &str, now: i64) -> Result<Option<Wake>, StoreError> {
        self.read(|c| ready_wake_conn(c, id, now))
    }

    fn send_event(&self, id: &str, name: &str, payload: &J) -> Result<(), StoreError> {
        let (id, name, payload) = (id.to_string(), name.to_string(), json_text(payload));
        self.write(move |c| {
            let status: Option<String> = c
                .query_opt("SELECT status FROM executions WHERE id = $1", &[&id])?
                .map(|r| r.try_get(0))
                .transpose()?;
            let status = status.ok_or_else(|| StoreError::NotFound(format!("execution {id:?}")))?;
            if TERMINAL.contains(&status.as_str()) {
                return Err(StoreError::Conflict(format!("execution {id:?} is {status}")).into());
            }
            let now = crate::now_ms();
            c.execute(
                "INSERT INTO events (execution_id, name, payload, received_ms) VALUES ($1, $2, $3, $4)",
                &[&id, &name, &payload, &now],
            )?;
            add_history(c, &id, now, "event_received", &serde_json::json!({"name": name}))?;
            Ok(())
        })
    }

    fn request_cancel(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.write(move |c| {
            let n = c.execute(
                "UPDATE executions SET cancel_requested = TRUE WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled')",
                &[&id],
            )?;
            if n == 0 {
                return Err(match get_exec(c, &id)? {
                    None => StoreError::NotFound(format!("execution {id:?}")),
                    Some(e) => StoreError::Conflict(format!("execution {id:?} is {}", e.status)),
                }
                .into());
            }
            let now = crate::now_ms();
            add_history(c, &id, now, "cancel_requested", &J::Null)?;
            // Cancelling a parent cancels its unfinished descendants.
            let children = c.query(
                "WITH RECURSIVE d(id) AS (SELECT id FROM executions WHERE parent_id = $1 UNION SELECT e.id FROM executions e JOIN d ON e.parent_id = d.id)
                 UPDATE executions SET cancel_requested = TRUE WHERE id IN (SELECT id FROM d) AND NOT cancel_requested AND status NOT IN ('completed', 'failed', 'cancelled') RETURNING id",
                &[&id],
            )?;
            for child in children {
                let child: String = child.try_get(0)?;
                add_history(c, &child, now, "cancel_requested", &serde_json::json!({"by": id}))?;
            }
            Ok(())
        })
    }

    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError> {
        let (id, owner, error) = (id.to_string(), owner.to_string(), error.to_string());
        self.write(move |c| {
            let now = crate::now_ms();
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
        self.write_lazy(move |c| add_history(c, &id, crate::now_ms(), &kind, &detail))
    }

    /// Multi-node: other nodes may hold live leases, so nothing is freed;
    /// a dead node's leases are taken over when they expire.
    fn reset_leases(&self) -> Result<u64, StoreError> {
        Ok(0)
    }

    fn release_owner(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_string();
        self.write(move |c| {
            Ok(c.execute(
                "UPDATE executions SET owner = NULL, lease_until = 0 WHERE owner = $1",
                &[&owner],
            )?)
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

    fn counts(&self) -> Result<crate::store::StoreCounts, StoreError> {
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
            Ok(crate::store::StoreCounts {
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

/// Test support: a uniquely named schema in the test database, dropped
/// with everything in it when this value is dropped.
///
/// The database is `$IRKIT_TEST_POSTGRES`, else
/// `postgres://irkit:irkit@127.0.0.1:5432/irkit_test` (what
/// `scripts/start-postgres.sh` sets up).
pub struct ScratchSchema {
    base: String,
    /// The schema name.
    pub schema: String,
}

/// The test database URL (without a schema).
pub fn test_database_url() -> String {
    std::env::var("IRKIT_TEST_POSTGRES")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "postgres://irkit:irkit@127.0.0.1:5432/irkit_test".into())
}

/// A second test database whose default collation is ICU's `en-US`
/// (punctuation sorts apart from byte order): `$IRKIT_TEST_POSTGRES_ICU`,
/// else `irkit_test_icu` beside the default test database, as
/// `.ci/services/postgres.sh` creates it.
pub fn test_database_url_icu() -> String {
    std::env::var("IRKIT_TEST_POSTGRES_ICU")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "postgres://irkit:irkit@127.0.0.1:5432/irkit_test_icu".into())
}

impl ScratchSchema {
    /// Creates a fresh schema named `{tag}_{random}` in the test database
    /// ([`test_database_url`]). When the database is not reachable:
    /// `Ok(None)` after printing a skip message, or an error when
    /// `IRKIT_REQUIRE_POSTGRES=1` (CI, where PostgreSQL must run).
    pub fn create(tag: &str) -> Result<Option<ScratchSchema>, String> {
        ScratchSchema::create_in(test_database_url(), tag)
    }

    /// Like [`ScratchSchema::create`], in the database at `base`.
    pub fn create_in(base: String, tag: &str) -> Result<Option<ScratchSchema>, String> {
        let required = std::env::var("IRKIT_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
        let mut client = match parse_url(&base)
            .map_err(|e| e.to_string())
            .and_then(|mut t| {
                t.config.connect_timeout(std::time::Duration::from_secs(3));
                t.connect().map_err(|e| e.to_string())
            }) {
            Ok(c) => c,
            Err(e) if required => {
                return Err(format!(
                    "IRKIT_REQUIRE_POSTGRES=1 but PostgreSQL at {base} is not reachable: {e}"
                ));
            }
            Err(e) => {
                eprintln!(
                    "skipping PostgreSQL test {tag}: {base} not reachable ({e}); run scripts/start-postgres.sh"
                );
                return Ok(None);
            }
        };
        let schema = format!("{tag}_{}", &crate::random_id("")[..16]).to_ascii_lowercase();
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .map_err(|e| format!("CREATE SCHEMA {schema}: {e}"))?;
        Ok(Some(ScratchSchema { base, schema }))
    }

    /// The `--database` URL selecting this schema.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}schema={}", self.base, self.schema)
    }

    /// Runs SQL statements (no parameters) inside this schema.
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        let t = parse_url(&self.url()).map_err(|e| e.to_string())?;
        let mut c = t.connect().map_err(|e| e.to_string())?;
        c.batch_execute(sql).map_err(|e| e.to_string())
    }

    /// The first column of the first row of `sql`, as text (`None`: no row or NULL).
    pub fn query_text(&self, sql: &str) -> Result<Option<String>, String> {
        let t = parse_url(&self.url()).map_err(|e| e.to_string())?;
        let mut c = t.connect().map_err(|e| e.to_string())?;
        let rows = c.simple_query(sql).map_err(|e| e.to_string())?;
        for m in rows {
            if let postgres::SimpleQueryMessage::Row(r) = m {
                return Ok(r.get(0).map(str::to_string));
            }
        }
        Ok(None)
    }
}

impl Drop for ScratchSchema {
    fn drop(&mut self) {
        if let Ok(t) = parse_url(&self.base)
            && let Ok(mut c) = t.connect()
        {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn urls_with_a_schema_are_parsed() {
        let t = parse_url("postgres://u:p@127.0.0.1:5432/db?schema=Tcc_1&sslmode=disable").unwrap();
        assert_eq!(t.schema.as_deref(), Some("tcc_1"));
        assert_eq!(t.config.get_dbname(), Some("db"));
        assert_eq!(t.config.get_options(), Some("-c search_path=tcc_1"));
        assert!(parse_url("postgres://u@h/db?schema=a;drop").is_err());
        assert!(parse_url("postgres://u@h/db?schema=1a").is_err());
        assert!(parse_url("postgres://u@h/db?schema=").is_err());
        let t = parse_url("postgresql://u@h/db").unwrap();
        assert_eq!(t.schema, None);
        assert!(parse_url("postgres://u@h/db?bogus=1").is_err());
    }

    #[test]
    fn sslmode_and_sslrootcert_are_read_like_libpq() {
        let mode = |url: &str| {
            let t = parse_url(url).unwrap();
            (t.tls.mode, t.config.get_ssl_mode(), t.tls.config.is_some())
        };
        assert_eq!(
            mode("postgres://u@h/db?sslmode=disable"),
            (SslModeParam::Disable, SslMode::Disable, false)
        );
        assert_eq!(
            mode("postgres://u@h/db?sslmode=require"),
            (SslModeParam::Require, SslMode::Require, true)
        );
        let home_root = std::env::var_os("HOME")
            .map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"))
            .is_some_and(|p| p.is_file());
        if !home_root {
            // libpq's default is prefer; no root certificate: encrypt only.
            assert_eq!(
                mode("postgres://u@h/db"),
                (SslModeParam::Prefer, SslMode::Prefer, true)
            );
            for m in ["verify-ca", "verify-full"] {
                let e = parse_url(&format!("postgres://u@h/db?sslmode={m}"))
                    .err()
                    .unwrap()
                    .to_string();
                assert!(e.contains("sslrootcert"), "{e}");
            }
        }
        // sslrootcert=system: Mozilla's roots, verify-full by default, and
        // (like libpq) no weaker mode.
        assert_eq!(
            mode("postgres://u@h/db?sslrootcert=system"),
            (SslModeParam::VerifyFull, SslMode::Require, true)
        );
        assert_eq!(
            mode("postgres://u@h/db?sslmode=verify-full&sslrootcert=system"),
            (SslModeParam::VerifyFull, SslMode::Require, true)
        );
        let e = parse_url("postgres://u@h/db?sslmode=require&sslrootcert=system")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("needs sslmode=verify-full"), "{e}");
        let e = parse_url("postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
        for bad in [
            "postgres://u@h/db?sslmode=allow",
            "postgres://u@h/db?sslmode=verify_full",
            "postgres://u@h/db?sslcert=c.pem",
            "postgres://u@h/db?sslkey=k.pem",
            "postgres://u@h/db?sslrootcert=%zz",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_decode("/a%20b/c.pem").unwrap(), "/a b/c.pem");
    }

    #[test]
    fn migration_lock_keys_differ_per_schema() {
        assert_ne!(migration_lock_key("a"), migration_lock_key("b"));
        assert_eq!(migration_lock_key("a"), migration_lock_key("a"));
    }
}
