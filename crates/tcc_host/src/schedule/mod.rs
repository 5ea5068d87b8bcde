//! Schedules (issue 35): a named schedule starts an execution of a program
//! at each tick of a cron expression or a fixed interval.
//!
//! - [`Spec`]: when the ticks are. A cron expression (croner: POSIX/Vixie
//!   5 fields, or 6 with seconds first), evaluated in UTC; or `every`
//!   DURATION (at least 1 s), whose ticks are the multiples of the
//!   interval since the Unix epoch, so every node computes the same ones.
//! - [`plan`]: which due ticks start an execution, by the schedule's
//!   [`Overlap`] and [`Catchup`] policies (a pure function of the stored
//!   row, whether the last started execution still runs, and the time).
//! - [`ScheduleStore`]: the rows, in both stores (schema v12). A tick is
//!   started by [`ScheduleStore::advance_schedule`]: one transaction that
//!   moves the schedule's cursor by compare-and-set and inserts each tick's
//!   execution if its id is absent. The id is [`tick_execution_id`]
//!   (schedule name and tick time), so a tick starts exactly one
//!   execution whichever node handles it, and however often: a node that
//!   dies before its commit leaves the cursor where it was (another node,
//!   or the same one restarted, handles the tick), and one whose
//!   compare-and-set loses inserts nothing.
//! - [`ticker`]: the loop every `irkit tcc serve` node runs;
//!   [`api`]: the `/v1/schedules` routes.

use crate::store::{NewExecution, Store, StoreError};
use crate::values::TaggedList;

pub mod api;
pub mod rows;
pub mod ticker;

pub use rows::{Advanced, ScheduleAdvance, ScheduleRow, ScheduleStore};

/// The schedules of `store`, when its backend keeps them (both of this
/// crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn ScheduleStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

/// Shortest `every` interval.
pub const MIN_EVERY_MS: i64 = 1_000;
/// Longest `every` interval (a year).
pub const MAX_EVERY_MS: i64 = 366 * 24 * 3_600_000;
/// Default catch-up window: a tick handled later than this after its due
/// time is *missed* (see [`Catchup`]).
pub const DEFAULT_CATCHUP_WINDOW_MS: i64 = 60_000;
/// Shortest catch-up window.
pub const MIN_CATCHUP_WINDOW_MS: i64 = 1_000;
/// Longest catch-up window.
pub const MAX_CATCHUP_WINDOW_MS: i64 = 3_600_000;
/// Most missed ticks `catchup=all` starts after one downtime (the newest
/// ones; older missed ticks are skipped).
pub const CATCHUP_ALL_LIMIT: usize = 100;
/// Most on-time ticks one pass handles per schedule (the rest are handled
/// by the next pass, as on-time or missed ticks then).
pub const MAX_TICKS_PER_PASS: usize = 200;
/// Most ticks counted when reporting skipped ones (a year of per-second
/// ticks is not enumerated to count them).
const COUNT_LIMIT: u64 = 100_000;

/// Why a schedule request is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScheduleError {
    /// The cron expression does not parse.
    #[error("cron expression {text:?}: {message}")]
    Cron {
        /// The expression.
        text: String,
        /// croner's reason.
        message: String,
    },
    /// The interval is not a duration in range.
    #[error("every {text:?}: {message}")]
    Every {
        /// The interval as given.
        text: String,
        /// Why.
        message: String,
    },
    /// The expression has no tick after the given time.
    #[error("schedule {0:?} never comes due")]
    NeverDue(String),
    /// Another field is invalid.
    #[error("{0}")]
    Invalid(String),
}

/// When a schedule's ticks are.
#[derive(Debug, Clone)]
pub enum Spec {
    /// A cron expression, in UTC.
    Cron {
        /// The expression as given.
        text: String,
        /// It parsed.
        cron: Box<croner::Cron>,
    },
    /// Every `ms` milliseconds, at the multiples of `ms` since the epoch.
    Every {
        /// The interval as given (e.g. `30s`).
        text: String,
        /// The interval.
        ms: i64,
    },
}

/// Parses `500ms`, `30s`, `5m`, `2h`, `1d` (a bare number is seconds).
pub fn parse_duration_ms(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: i64 = digits
        .parse()
        .map_err(|_| "expected a duration such as 30s, 5m or 1h".to_string())?;
    let scale = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(format!("unknown unit {unit:?} (ms, s, m, h or d)")),
    };
    n.checked_mul(scale)
        .ok_or_else(|| "duration out of range".to_string())
}

impl Spec {
    /// A spec of `kind` (`cron` or `every`) from its text.
    pub fn parse(kind: &str, text: &str) -> Result<Spec, ScheduleError> {
        match kind {
            "cron" => {
                let cron: croner::Cron =
                    text.parse()
                        .map_err(|e: croner::errors::CronError| ScheduleError::Cron {
                            text: text.to_string(),
                            message: e.to_string(),
                        })?;
                Ok(Spec::Cron {
                    text: text.to_string(),
                    cron: Box::new(cron),
                })
            }
            "every" => {
                let bad = |message: String| ScheduleError::Every {
                    text: text.to_string(),
                    message,
                };
                let ms = parse_duration_ms(text).map_err(bad)?;
                if !(MIN_EVERY_MS..=MAX_EVERY_MS).contains(&ms) {
                    return Err(bad(format!(
                        "the interval must be 1s to 366d (got {ms} ms)"
                    )));
                }
                Ok(Spec::Every {
                    text: text.to_string(),
                    ms,
                })
            }
            other => Err(ScheduleError::Invalid(format!(
                "schedule kind {other:?}: expected cron or every"
            ))),
        }
    }

    /// `cron` or `every` (the stored `spec_kind`).
    pub fn spec_kind(&self) -> &'static str {
        match self {
            Spec::Cron { .. } => "cron",
            Spec::Every { .. } => "every",
        }
    }

    /// The expression or interval as given.
    pub fn text(&self) -> &str {
        match self {
            Spec::Cron { text, .. } | Spec::Every { text, .. } => text,
        }
    }

    /// The first tick strictly after `t` (ms since the epoch); `None` when
    /// there is none (a cron expression that matches no date).
    pub fn next_after(&self, t: i64) -> Option<i64> {
        match self {
            Spec::Every { ms, .. } => t.div_euclid(*ms).checked_add(1)?.checked_mul(*ms),
            Spec::Cron { cron, .. } => {
                // Ticks are whole seconds: the first one after `t` is the
                // first one after `t`'s second.
                let second = t.div_euclid(1000).checked_mul(1000)?;
                let at = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(second)?;
                cron.find_next_occurrence(&at, false)
                    .ok()
                    .map(|d| d.timestamp_millis())
            }
        }
    }

    /// The last tick strictly before `t`; `None` when there is none.
    pub fn previous_before(&self, t: i64) -> Option<i64> {
        match self {
            Spec::Every { ms, .. } => t.checked_sub(1)?.div_euclid(*ms).checked_mul(*ms),
            Spec::Cron { cron, .. } => {
                let second = t.div_euclid(1000).checked_mul(1000)?;
                // `t` inside a second: that second's own tick is before it.
                let inclusive = second < t;
                let at = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(second)?;
                cron.find_previous_occurrence(&at, inclusive)
                    .ok()
                    .map(|d| d.timestamp_millis())
            }
        }
    }

    /// How many ticks lie in `[from, to)`, counted up to [`COUNT_LIMIT`].
    pub fn count_between(&self, from: i64, to: i64) -> u64 {
        if to <= from {
            return 0;
        }
        match self {
            Spec::Every { ms, .. } => {
                let first = from.div_euclid(*ms) + i64::from(from.rem_euclid(*ms) != 0);
                let last = (to - 1).div_euclid(*ms);
                u64::try_from(last - first + 1)
                    .unwrap_or(0)
                    .min(COUNT_LIMIT)
            }
            Spec::Cron { .. } => {
                let mut n = 0;
                let mut t = self.next_after(from - 1);
                while let Some(tick) = t {
                    if tick >= to || n >= COUNT_LIMIT {
                        break;
                    }
                    n += 1;
                    t = self.next_after(tick);
                }
                n
            }
        }
    }
}

/// What happens to a tick that comes due while the execution the schedule
/// started last is still running (not terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// The tick is skipped (counted in `ticks_skipped`). Of several ticks
    /// handled together, only the newest starts (each would overlap the
    /// one before).
    Skip,
    /// The tick waits (one at most: a newer waiting tick replaces it, the
    /// replaced one counts as skipped) and starts once the running
    /// execution has ended, under its own tick's id.
    BufferOne,
    /// The tick starts regardless.
    Allow,
}

impl Overlap {
    /// From its name: `skip`, `buffer_one` or `allow`.
    pub fn parse(text: &str) -> Result<Overlap, ScheduleError> {
        match text {
            "skip" => Ok(Overlap::Skip),
            "buffer_one" => Ok(Overlap::BufferOne),
            "allow" => Ok(Overlap::Allow),
            other => Err(ScheduleError::Invalid(format!(
                "overlap {other:?}: expected skip, buffer_one or allow"
            ))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Overlap::Skip => "skip",
            Overlap::BufferOne => "buffer_one",
            Overlap::Allow => "allow",
        }
    }
}

/// What happens to *missed* ticks: those handled more than the schedule's
/// catch-up window after their due time (every node was down, the
/// schedule's store was unreachable, or the nodes were overloaded). Ticks
/// handled within the window are on time and always considered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catchup {
    /// Missed ticks are skipped.
    Skip,
    /// Of the missed ticks, the newest is considered; the others are skipped.
    Latest,
    /// Every missed tick is considered, up to [`CATCHUP_ALL_LIMIT`] (the
    /// newest ones; older ones are skipped).
    All,
}

impl Catchup {
    /// From its name: `skip`, `latest` or `all`.
    pub fn parse(text: &str) -> Result<Catchup, ScheduleError> {
        match text {
            "skip" => Ok(Catchup::Skip),
            "latest" => Ok(Catchup::Latest),
            "all" => Ok(Catchup::All),
            other => Err(ScheduleError::Invalid(format!(
                "catchup {other:?}: expected skip, latest or all"
            ))),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Catchup::Skip => "skip",
            Catchup::Latest => "latest",
            Catchup::All => "all",
        }
    }
}

/// The execution id of a schedule's tick: `{name}@{tick ms since the
/// epoch}`. The same on every node, so a tick is started once.
pub fn tick_execution_id(name: &str, tick_ms: i64) -> String {
    format!("{name}@{tick_ms}")
}

/// Schedule names: 1 to 100 characters from `A-Z a-z 0-9 . _ -`.
pub fn check_name(name: &str) -> Result<(), ScheduleError> {
    if name.is_empty()
        || name.len() > 100
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(ScheduleError::Invalid(format!(
            "schedule name {name:?}: 1 to 100 characters from A-Z a-z 0-9 . _ -"
        )));
    }
    Ok(())
}

/// A new schedule as requested.
#[derive(Debug, Clone)]
pub struct NewSchedule {
    /// Name.
    pub name: String,
    /// Program name or artifact hash.
    pub program: String,
    /// Entry arguments.
    pub args: TaggedList,
    /// When.
    pub spec: Spec,
    /// Overlap policy.
    pub overlap: Overlap,
    /// Catch-up policy.
    pub catchup: Catchup,
    /// Catch-up window.
    pub catchup_window_ms: i64,
    /// Created paused.
    pub paused: bool,
}

impl NewSchedule {
    /// The row to store at `now`: the cursor at the first tick after it.
    pub fn row(&self, now: i64) -> Result<ScheduleRow, ScheduleError> {
        check_name(&self.name)?;
        if self.program.is_empty() || self.program.len() > 256 {
            return Err(ScheduleError::Invalid(
                "program must be 1 to 256 bytes".into(),
            ));
        }
        if !(MIN_CATCHUP_WINDOW_MS..=MAX_CATCHUP_WINDOW_MS).contains(&self.catchup_window_ms) {
            return Err(ScheduleError::Invalid(format!(
                "catchup_window must be 1s to 1h (got {} ms)",
                self.catchup_window_ms
            )));
        }
        let next = self
            .spec
            .next_after(now)
            .ok_or_else(|| ScheduleError::NeverDue(self.spec.text().to_string()))?;
        Ok(ScheduleRow {
            name: self.name.clone(),
            program: self.program.clone(),
            args: self.args.clone(),
            spec_kind: self.spec.spec_kind().to_string(),
            spec: self.spec.text().to_string(),
            overlap: self.overlap.name().to_string(),
            catchup: self.catchup.name().to_string(),
            catchup_window_ms: self.catchup_window_ms,
            paused: self.paused,
            next_due_ms: next,
            buffered_ms: None,
            last_execution_id: None,
            last_error: None,
            ticks_started: 0,
            ticks_skipped: 0,
            created_ms: now,
            updated_ms: now,
            namespace: crate::namespace::DEFAULT.to_string(),
        })
    }
}

/// What one pass does with a schedule ([`plan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Ticks to start now, ascending.
    pub start: Vec<i64>,
    /// The tick left waiting (`buffer_one`).
    pub buffered: Option<i64>,
    /// Ticks skipped.
    pub skipped: u64,
    /// The new cursor: the first tick not handled.
    pub next_due_ms: i64,
}

/// The policies and cursor a plan reads.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// When.
    pub spec: &'a Spec,
    /// Overlap policy.
    pub overlap: Overlap,
    /// Catch-up policy.
    pub catchup: Catchup,
    /// Catch-up window.
    pub catchup_window_ms: i64,
    /// The first tick not yet handled.
    pub next_due_ms: i64,
    /// The waiting tick.
    pub buffered_ms: Option<i64>,
    /// Whether the execution the schedule started last is still running.
    pub previous_running: bool,
}

/// The pass of a schedule at `now`: the due ticks (missed ones by the
/// catch-up policy, then on-time ones up to [`MAX_TICKS_PER_PASS`]), then
/// the overlap policy over them and the waiting tick.
pub fn plan(input: &PlanInput<'_>, now: i64) -> Plan {
    let spec = input.spec;
    let mut candidates: Vec<i64> = Vec::new();
    let mut skipped = 0u64;
    let mut cursor = Some(input.next_due_ms);
    let window_start = now.saturating_sub(input.catchup_window_ms);
    if input.next_due_ms < window_start && input.next_due_ms <= now {
        // Missed ticks: [next_due, window_start).
        let missed = spec.count_between(input.next_due_ms, window_start);
        let keep = match input.catchup {
            Catchup::Skip => 0,
            Catchup::Latest => 1,
            Catchup::All => CATCHUP_ALL_LIMIT,
        };
        let mut newest = Vec::new();
        let mut t = spec.previous_before(window_start);
        while let Some(tick) = t {
            if tick < input.next_due_ms || newest.len() >= keep {
                break;
            }
            newest.push(tick);
            t = spec.previous_before(tick);
        }
        newest.reverse();
        skipped += missed.saturating_sub(newest.len() as u64);
        candidates.extend(newest);
        cursor = spec.next_after(window_start.saturating_sub(1));
    }
    while let Some(tick) = cursor {
        if tick > now || candidates.len() >= MAX_TICKS_PER_PASS {
            break;
        }
        candidates.push(tick);
        cursor = spec.next_after(tick);
    }
    // No tick after: the cursor stays past every tick.
    let next_due_ms = cursor.unwrap_or(i64::MAX);
    let (start, buffered, overlap_skipped) = match input.overlap {
        Overlap::Allow => {
            let mut start: Vec<i64> = input.buffered_ms.into_iter().collect();
            start.extend(candidates);
            (start, None, 0)
        }
        Overlap::Skip => {
            let n = candidates.len() as u64;
            if input.previous_running {
                (Vec::new(), None, n)
            } else {
                match candidates.last() {
                    Some(&t) => (vec![t], None, n - 1),
                    None => (Vec::new(), None, 0),
                }
            }
        }
        Overlap::BufferOne => {
            let mut queue: Vec<i64> = input.buffered_ms.into_iter().collect();
            queue.extend(candidates);
            let mut start = Vec::new();
            let mut rest = queue.as_slice();
            if !input.previous_running
                && let Some((first, tail)) = queue.split_first()
            {
                start.push(*first);
                rest = tail;
            }
            let buffered = rest.last().copied();
            (start, buffered, rest.len().saturating_sub(1) as u64)
        }
    };
    Plan {
        start,
        buffered,
        skipped: skipped + overlap_skipped,
        next_due_ms,
    }
}

/// The pass of every due schedule at `now`: what [`ticker`] runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Schedules handled (their advance committed).
    pub schedules: u64,
    /// Executions started.
    pub started: u64,
    /// Ticks skipped.
    pub skipped: u64,
    /// Advances another node committed first.
    pub lost: u64,
}

/// Most schedules one pass reads.
pub const PASS_LIMIT: u32 = 500;

/// Most schedules of one pass committed at once (each on a thread of its
/// own: their commits are grouped by the store's group commit instead of
/// waiting for each other).
pub const PASS_THREADS: usize = 8;

/// Handles every due schedule of `store` at `now` (see the module docs).
/// A schedule whose row cannot be read as valid is left as it is (logged).
/// The due schedules are handled by up to [`PASS_THREADS`] threads, from a
/// random place in the list, so that two nodes passing at once mostly
/// handle different schedules first.
pub fn run_pass(store: &dyn Store, now: i64) -> Result<PassReport, StoreError> {
    run_pass_traced(store, None, now)
}

/// [`run_pass`] with tracing (issue 35, [`crate::otel`]): each tick that
/// starts an execution gets a span (`tcc.schedule.tick`, a trace of its
/// own), and the execution is stored with that span's `traceparent`, so
/// its drives are the tick's children.
pub fn run_pass_traced(
    store: &dyn Store,
    telemetry: Option<&crate::otel::Telemetry>,
    now: i64,
) -> Result<PassReport, StoreError> {
    let Some(schedules) = store_of(store) else {
        return Err(StoreError::Unsupported("schedules".into()));
    };
    let mut rows = schedules.due_schedules(now, PASS_LIMIT)?;
    if rows.len() > 1 {
        use std::hash::BuildHasher;
        let offset = std::collections::hash_map::RandomState::new().hash_one(now) as usize;
        let len = rows.len();
        rows.rotate_left(offset % len);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcome = std::sync::Mutex::new(Ok(PassReport::default()));
    let work = || {
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(row) = rows.get(i) else { return };
            let handled = handle(store, schedules, telemetry, row, now);
            let Ok(mut o) = outcome.lock() else { return };
            match (handled, &mut *o) {
                (Err(e), Ok(_)) => *o = Err(e),
                (Ok(Handled::Committed { inserted, skipped }), Ok(report)) => {
                    report.schedules += 1;
                    report.started += inserted;
                    report.skipped += skipped;
                }
                (Ok(Handled::Lost), Ok(report)) => report.lost += 1,
                _ => {}
            }
        }
    };
    let threads = PASS_THREADS.min(rows.len());
    if threads <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(work);
            }
        });
    }
    outcome
        .into_inner()
        .map_err(|_| StoreError::db("schedule pass: a thread panicked"))?
}

/// What [`handle`] did with one schedule.
enum Handled {
    /// Nothing was due.
    Nothing,
    /// Its advance committed.
    Committed {
        /// Executions inserted.
        inserted: u64,
        /// Ticks skipped.
        skipped: u64,
    },
    /// Another node's advance committed first.
    Lost,
}

/// One schedule's pass at `now`.
fn handle(
    store: &dyn Store,
    schedules: &dyn ScheduleStore,
    telemetry: Option<&crate::otel::Telemetry>,
    row: &ScheduleRow,
    now: i64,
) -> Result<Handled, StoreError> {
    let parsed = Spec::parse(&row.spec_kind, &row.spec).and_then(|spec| {
        Ok((
            spec,
            Overlap::parse(&row.overlap)?,
            Catchup::parse(&row.catchup)?,
        ))
    });
    let (spec, overlap, catchup) = match parsed {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(schedule = %row.name, error = %e, "schedule not handled: its row is invalid");
            return Ok(Handled::Nothing);
        }
    };
    let previous_running = match (&row.last_execution_id, overlap) {
        (Some(id), Overlap::Skip | Overlap::BufferOne) => {
            store.get_execution(id)?.is_some_and(|e| !e.is_terminal())
        }
        _ => false,
    };
    let p = plan(
        &PlanInput {
            spec: &spec,
            overlap,
            catchup,
            catchup_window_ms: row.catchup_window_ms,
            next_due_ms: row.next_due_ms,
            buffered_ms: row.buffered_ms,
            previous_running,
        },
        now,
    );
    if p.start.is_empty()
        && p.skipped == 0
        && p.next_due_ms == row.next_due_ms
        && p.buffered == row.buffered_ms
    {
        return Ok(Handled::Nothing);
    }
    let mut skipped = p.skipped;
    let mut last_error = None;
    let mut executions = Vec::new();
    if !p.start.is_empty() {
        match crate::namespace::resolve_program(store, &row.namespace, &row.program)? {
            Some((hash, name)) => {
                for &tick in &p.start {
                    executions.push((
                        tick,
                        NewExecution {
                            id: tick_execution_id(&row.name, tick),
                            artifact_hash: hash.clone(),
                            program_name: name.clone(),
                            args: row.args.clone(),
                            parent: None,
                            namespace: row.namespace.clone(),
                        },
                    ));
                }
            }
            None => {
                skipped += p.start.len() as u64;
                last_error = Some(format!("unknown program {:?}", row.program));
            }
        }
    }
    let mut tick_spans = tick_spans(store, telemetry, &row.name, &executions)?;
    let advance = ScheduleAdvance {
        name: row.name.clone(),
        expected_next_due_ms: row.next_due_ms,
        expected_buffered_ms: row.buffered_ms,
        next_due_ms: p.next_due_ms,
        buffered_ms: p.buffered,
        executions,
        skipped,
        last_error,
        now_ms: now,
    };
    let advanced = advance_waiting_out_holders(schedules, &advance);
    let outcome = match &advanced {
        Ok(Advanced::Committed(_)) => "started",
        Ok(Advanced::Moved | Advanced::Busy) => "lost",
        Err(_) => "store_error",
    };
    for span in &mut tick_spans {
        span.set("tcc.outcome", outcome);
        if advanced.is_err() {
            span.fail(outcome);
        }
    }
    drop(tick_spans);
    Ok(match advanced? {
        Advanced::Committed(inserted) => Handled::Committed { inserted, skipped },
        Advanced::Moved | Advanced::Busy => Handled::Lost,
    })
}

/// Most tries of one advance whose row another transaction holds.
pub const BUSY_TRIES: u32 = 12;

/// Commits `advance`, trying again while its row is [`Advanced::Busy`]:
/// held by another node's transaction while the cursor still matches. The
/// holder either commits its own advance (the next try finds the cursor
/// moved) or misses and lets go (the next try commits this one), so a due
/// tick is not left by both. Waits 10 ms, doubling to at most 200 ms, at
/// most [`BUSY_TRIES`] tries (about 1.7 s); still busy then, the schedule
/// is left to the next pass.
fn advance_waiting_out_holders(
    schedules: &dyn ScheduleStore,
    advance: &ScheduleAdvance,
) -> Result<Advanced, StoreError> {
    let mut wait = std::time::Duration::from_millis(10);
    let mut tries = 1;
    loop {
        let advanced = schedules.advance_schedule(advance)?;
        if advanced != Advanced::Busy || tries >= BUSY_TRIES {
            if advanced == Advanced::Busy {
                tracing::debug!(schedule = %advance.name, "schedule row still held by another node: left to the next pass");
            }
            return Ok(advanced);
        }
        std::thread::sleep(wait);
        wait = (wait * 2).min(std::time::Duration::from_millis(200));
        tries += 1;
    }
}

/// A span per tick about to start an execution (tracing on), each stored
/// as its execution's `traceparent` before the advance commits (the
/// store's lazy write rides on that commit). A node that loses the advance
/// to another may still have stored its own: the first stored is kept, and
/// both spans are exported (the loser's with `tcc.outcome` `lost`).
fn tick_spans(
    store: &dyn Store,
    telemetry: Option<&crate::otel::Telemetry>,
    name: &str,
    executions: &[(i64, NewExecution)],
) -> Result<Vec<crate::otel::OpSpan>, StoreError> {
    use opentelemetry::KeyValue;
    let (Some(telemetry), Some(traces)) = (telemetry, crate::otel::traces_of(store)) else {
        return Ok(Vec::new());
    };
    let mut spans = Vec::with_capacity(executions.len());
    for (tick, new) in executions {
        let span = telemetry.span(
            "tcc.schedule.tick",
            opentelemetry::trace::SpanKind::Producer,
            None,
            vec![
                KeyValue::new("tcc.schedule", name.to_string()),
                KeyValue::new("tcc.schedule.tick_ms", *tick),
                KeyValue::new(crate::otel::EXECUTION_ID, new.id.clone()),
            ],
        );
        if let Some(tp) = span.traceparent() {
            traces.put_traceparent(&new.id, &tp.to_string())?;
        }
        spans.push(span);
    }
    Ok(spans)
}

/// A schedule as the API shows it.
pub fn schedule_json(row: &ScheduleRow) -> serde_json::Value {
    let args: serde_json::Value = row
        .args
        .text()
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let plain = match &args {
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(crate::values::tagged_to_plain).collect())
        }
        _ => serde_json::Value::Null,
    };
    let mut j = serde_json::json!({
        "name": row.name,
        "program": row.program,
        "args": plain,
        "tagged_args": args,
        "overlap": row.overlap,
        "catchup": row.catchup,
        "catchup_window_ms": row.catchup_window_ms,
        "paused": row.paused,
        "next_due_ms": (row.next_due_ms != i64::MAX).then_some(row.next_due_ms),
        "buffered_ms": row.buffered_ms,
        "last_execution_id": row.last_execution_id,
        "last_error": row.last_error,
        "ticks_started": row.ticks_started,
        "ticks_skipped": row.ticks_skipped,
        "created_ms": row.created_ms,
        "updated_ms": row.updated_ms,
    });
    j[row.spec_kind.as_str()] = serde_json::json!(row.spec);
    j
}

#[cfg(test)]
mod tests;
