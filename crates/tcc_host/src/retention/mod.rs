//! Retention and archive (issue 35): terminal executions older than a
//! configured age are deleted with everything keyed by them (checkpoints,
//! journal, failed effect calls, waits, events, history), in small
//! batches, optionally written first to a JSON Lines archive, one file per
//! UTC day.
//!
//! - Age: an execution is expired when it is terminal and its row was last
//!   updated (its end) before `now - max_age`.
//! - A pass ([`run_pass`]) takes batches of at most [`RetentionConfig::batch`]
//!   expired executions. Each batch is *taken* first
//!   ([`RetentionStore::take_expired`]: one short transaction marks the rows
//!   with this node as owner for [`TAKE_LEASE_MS`], skipping rows another
//!   node took, `FOR UPDATE SKIP LOCKED` on PostgreSQL), then archived
//!   outside any transaction, then deleted
//!   ([`RetentionStore::delete_taken`], only rows this node still holds:
//!   transactions of at most [`DELETE_CHUNK`] executions on both stores). Two nodes never take the same rows, so an
//!   execution is archived once; a node that dies between its archive
//!   write and its delete leaves the rows to be taken again when the mark
//!   expires (its line may then appear twice: the `id` tells).
//! - Workers never wait on it: a batch's transactions are short, terminal
//!   rows are never claimed by a drive, each step of a batch is followed
//!   by a sleep of [`YIELD_FACTOR`] times its length, and a pass sleeps
//!   [`RetentionConfig::pause_between`] between batches (the SQLite writer,
//!   the PostgreSQL server and the CPUs are shared with the workers).
//! - [`RetentionStore::delete_execution`] deletes one terminal execution
//!   at once (`DELETE /v1/executions/{id}`); a non-terminal one is a
//!   `Conflict`.
//! - A child execution is its own row: it is deleted by its own age.

use crate::store::{ExecutionRow, Store, StoreError};
use serde_json::{Value as J, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod api;
pub mod task;

/// How long a taken batch stays this node's: past it, another node (or
/// this one, restarted) may take the rows again.
pub const TAKE_LEASE_MS: i64 = 60_000;
/// Most history entries archived per execution.
pub const ARCHIVE_HISTORY_LIMIT: u32 = 10_000;
/// Largest batch.
pub const MAX_BATCH: u32 = 10_000;
/// Most executions deleted in one transaction (SQLite: one write job, a
/// savepoint of a group commit; PostgreSQL: one transaction on a
/// connection of its own): a few milliseconds.
pub const DELETE_CHUNK: usize = 50;
/// After each step of a batch (the take, the archive, each deleted
/// chunk), the deleting thread sleeps this many times the step's wall time
/// (its wait for the writer or the database included): retention takes at
/// most a tenth of the time of the one thread it runs on, and less as the
/// workers load the store (a loaded store makes each step slower, and the
/// sleep after it longer).
pub const YIELD_FACTOR: u32 = 9;

/// Sleeps [`YIELD_FACTOR`] times the time since `started`.
pub fn yield_after(started: std::time::Instant) {
    std::thread::sleep(started.elapsed() * YIELD_FACTOR);
}

/// The rows both stores keep for retention.
pub trait RetentionStore: Send + Sync {
    /// Takes up to `limit` terminal executions last updated before
    /// `cutoff_ms` for `owner` until `until_ms` (oldest first, by status),
    /// skipping those another owner holds; returns their rows.
    fn take_expired(
        &self,
        cutoff_ms: i64,
        owner: &str,
        now: i64,
        until_ms: i64,
        limit: u32,
    ) -> Result<Vec<ExecutionRow>, StoreError>;
    /// Deletes the executions of `ids` that `owner` still holds and that
    /// are terminal, with everything keyed by them; returns how many.
    fn delete_taken(&self, ids: &[String], owner: &str) -> Result<u64, StoreError>;
    /// Deletes terminal execution `id` now, with everything keyed by it.
    /// `NotFound` for an unknown id, `Conflict` for an unfinished one.
    fn delete_execution(&self, id: &str) -> Result<(), StoreError>;
}

/// The retention rows of `store`, when its backend keeps them (both of
/// this crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn RetentionStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

/// Why retention cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RetentionError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The archive could not be written (nothing of that batch was deleted).
    #[error("archive {path}: {source}")]
    Archive {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What a node's retention does.
#[derive(Debug, Clone)]
pub struct RetentionConfig {
    /// Terminal executions whose end is older than this are deleted.
    pub max_age_ms: i64,
    /// Write each one to `DIR/executions-YYYY-MM-DD.jsonl` first.
    pub archive_dir: Option<PathBuf>,
    /// Executions per batch.
    pub batch: u32,
    /// Most batches per pass (the next pass goes on).
    pub max_batches: u32,
    /// Sleep between two batches of a pass.
    pub pause_between: Duration,
    /// This node's owner id (marks a taken batch).
    pub owner: String,
}

impl RetentionConfig {
    /// Retention of executions older than `max_age_ms` for `owner`, with
    /// the default batch (500), pass (200 batches) and pause (5 ms).
    pub fn new(max_age_ms: i64, owner: impl Into<String>) -> RetentionConfig {
        RetentionConfig {
            max_age_ms,
            archive_dir: None,
            batch: 500,
            max_batches: 200,
            pause_between: Duration::from_millis(5),
            owner: owner.into(),
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Executions deleted.
    pub deleted: u64,
    /// Executions written to the archive.
    pub archived: u64,
    /// Batches taken.
    pub batches: u32,
}

/// The archive line of an execution: its row's fields and its history.
pub fn archive_line(store: &dyn Store, row: &ExecutionRow) -> Result<String, StoreError> {
    let history: Vec<J> = store
        .history(&row.id, 0, ARCHIVE_HISTORY_LIMIT)?
        .into_iter()
        .map(|h| json!({"seq": h.seq, "at_ms": h.at_ms, "kind": h.kind, "detail": h.detail}))
        .collect();
    let parse = |text: &str| serde_json::from_str::<J>(text).unwrap_or(J::String(text.into()));
    let result = match &row.result {
        Some(r) => Some(parse(&r.text().map_err(|e| {
            StoreError::Corrupt(format!("execution {}: {e}", row.id))
        })?)),
        None => None,
    };
    let line = json!({
        "id": row.id,
        "program": row.program_name,
        "artifact_hash": row.artifact_hash,
        "status": row.status,
        "args": parse(&crate::store::args_text(&row.args)?),
        "result": result,
        "message": row.message,
        "error": row.error,
        "parent_id": row.parent_id,
        "parent_branch": row.parent_branch,
        "revision": row.revision,
        "created_ms": row.created_ms,
        "ended_ms": row.updated_ms,
        "history": history,
    });
    Ok(tcc_ir::to_canonical(&line))
}

/// The archive file of executions that ended at `ended_ms`:
/// `DIR/executions-YYYY-MM-DD.jsonl` (UTC).
pub fn archive_path(dir: &Path, ended_ms: i64) -> PathBuf {
    let day = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ended_ms)
        .map(|d| {
            use chrono::Datelike;
            format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())
        })
        .unwrap_or_else(|| "unknown-day".into());
    dir.join(format!("executions-{day}.jsonl"))
}

/// Appends `lines` to their day's files, one write per file, and syncs
/// them: once it returns, the lines survive a crash.
fn append(dir: &Path, lines: &[(i64, String)]) -> Result<(), RetentionError> {
    let mut by_file: std::collections::BTreeMap<PathBuf, String> = Default::default();
    for (ended, line) in lines {
        let text = by_file.entry(archive_path(dir, *ended)).or_default();
        text.push_str(line);
        text.push('\n');
    }
    for (path, text) in by_file {
        let err = |source| RetentionError::Archive {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(err)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(err)?;
        f.write_all(text.as_bytes()).map_err(err)?;
        f.sync_data().map_err(err)?;
    }
    Ok(())
}

/// One batch at `now`: takes, archives, deletes; `None` when nothing was
/// expired.
pub fn run_batch(
    store: &dyn Store,
    cfg: &RetentionConfig,
    now: i64,
) -> Result<Option<PassReport>, RetentionError> {
    let Some(rs) = store_of(store) else {
        return Err(StoreError::Unsupported("retention".into()).into());
    };
    let cutoff = now.saturating_sub(cfg.max_age_ms);
    let started = std::time::Instant::now();
    let rows = rs.take_expired(
        cutoff,
        &cfg.owner,
        now,
        now.saturating_add(TAKE_LEASE_MS),
        cfg.batch.clamp(1, MAX_BATCH),
    )?;
    if rows.is_empty() {
        return Ok(None);
    }
    yield_after(started);
    let mut archived = 0;
    if let Some(dir) = &cfg.archive_dir {
        // Reading the histories and writing the lines is CPU and I/O the
        // workers share: paced as the deletes are.
        let started = std::time::Instant::now();
        let mut lines = Vec::with_capacity(rows.len());
        for row in &rows {
            lines.push((row.updated_ms, archive_line(store, row)?));
        }
        append(dir, &lines)?;
        archived = lines.len() as u64;
        yield_after(started);
    }
    let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
    let deleted = rs.delete_taken(&ids, &cfg.owner)?;
    crate::metrics::global().retention(deleted, archived);
    Ok(Some(PassReport {
        deleted,
        archived,
        batches: 1,
    }))
}

/// Batches at `now` until nothing is expired or [`RetentionConfig::max_batches`].
pub fn run_pass(
    store: &dyn Store,
    cfg: &RetentionConfig,
    now: i64,
) -> Result<PassReport, RetentionError> {
    let mut total = PassReport::default();
    while total.batches < cfg.max_batches {
        match run_batch(store, cfg, now)? {
            None => break,
            Some(r) => {
                total.deleted += r.deleted;
                total.archived += r.archived;
                total.batches += 1;
            }
        }
        if !cfg.pause_between.is_zero() {
            std::thread::sleep(cfg.pause_between);
        }
    }
    Ok(total)
}

/// Deletes one terminal execution (`DELETE /v1/executions/{id}`), counted.
pub fn delete_one(store: &dyn Store, id: &str) -> Result<(), StoreError> {
    let rs = store_of(store).ok_or_else(|| StoreError::Unsupported("retention".into()))?;
    rs.delete_execution(id)?;
    crate::metrics::global().retention(1, 0);
    Ok(())
}
