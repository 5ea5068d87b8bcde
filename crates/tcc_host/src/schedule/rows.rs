//! Schedule rows and their storage trait (`crate::schedule`), which both
//! store backends implement (`store::sqlite::schedules`,
//! `store::pg::schedules`).

use crate::store::{NewExecution, StoreError};
use crate::values::TaggedList;

/// A schedule row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRow {
    /// Unique name (`crate::schedule::check_name`).
    pub name: String,
    /// Program name (or artifact hash) each tick starts, resolved at the tick.
    pub program: String,
    /// Entry arguments of every execution (tagged, stored text).
    pub args: TaggedList,
    /// `cron` or `every`.
    pub spec_kind: String,
    /// The expression or interval.
    pub spec: String,
    /// `Overlap` name.
    pub overlap: String,
    /// `Catchup` name.
    pub catchup: String,
    /// A tick handled later than this after its due time is missed.
    pub catchup_window_ms: i64,
    /// Paused: no tick is handled; ticks that come due meanwhile are not
    /// started on resume.
    pub paused: bool,
    /// The first tick not yet handled.
    pub next_due_ms: i64,
    /// A tick waiting for the running execution to end (`buffer_one`).
    pub buffered_ms: Option<i64>,
    /// The execution the schedule started last.
    pub last_execution_id: Option<String>,
    /// Why the last tick could not start (e.g. an unknown program).
    pub last_error: Option<String>,
    /// Executions started.
    pub ticks_started: i64,
    /// Ticks skipped (by the overlap or catch-up policy, or an error).
    pub ticks_skipped: i64,
    /// Creation time.
    pub created_ms: i64,
    /// Last change.
    pub updated_ms: i64,
    /// Namespace (`crate::namespace`): its ticks' executions are there, and
    /// its program name is resolved there.
    pub namespace: String,
}

/// One handled pass of a schedule, committed by
/// [`ScheduleStore::advance_schedule`] only if the row's cursor is still
/// where the plan read it (`expected_*`) and the schedule is not paused.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleAdvance {
    /// Schedule name.
    pub name: String,
    /// The `next_due_ms` the plan was made from.
    pub expected_next_due_ms: i64,
    /// The `buffered_ms` the plan was made from.
    pub expected_buffered_ms: Option<i64>,
    /// New cursor.
    pub next_due_ms: i64,
    /// New waiting tick.
    pub buffered_ms: Option<i64>,
    /// The executions to start (inserted only if their id is absent), by tick.
    pub executions: Vec<(i64, NewExecution)>,
    /// Ticks skipped by this pass.
    pub skipped: u64,
    /// Error to record (`None` clears it).
    pub last_error: Option<String>,
    /// Time of the pass.
    pub now_ms: i64,
}

/// What [`ScheduleStore::advance_schedule`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advanced {
    /// The advance committed; this many executions were inserted (an id
    /// that exists is not inserted again).
    Committed(u64),
    /// The cursor had moved (another node's advance committed first), or
    /// the schedule was paused or deleted: nothing written.
    Moved,
    /// The row still matches the plan, but another transaction holds it
    /// (PostgreSQL only, `SKIP LOCKED`): nothing written. The holder may
    /// be an advance that will commit, or one from a stale read that will
    /// miss; the caller tries again once the holder's transaction ended.
    Busy,
}

/// Schedule storage; both stores implement it (`crate::schedule::store_of`).
pub trait ScheduleStore: Send + Sync {
    /// Inserts a schedule (conflict if the name exists).
    fn create_schedule(&self, row: &ScheduleRow) -> Result<(), StoreError>;
    /// One schedule.
    fn get_schedule(&self, name: &str) -> Result<Option<ScheduleRow>, StoreError>;
    /// Every schedule, by name.
    fn list_schedules(&self) -> Result<Vec<ScheduleRow>, StoreError>;
    /// Unpaused schedules with a tick due at `now` or a waiting tick, by
    /// due time, at most `limit`.
    fn due_schedules(&self, now: i64, limit: u32) -> Result<Vec<ScheduleRow>, StoreError>;
    /// Pauses or resumes a schedule (not found if absent); resuming sets
    /// the cursor to `next_due_ms` (the first tick after the resume).
    fn set_schedule_paused(
        &self,
        name: &str,
        paused: bool,
        next_due_ms: Option<i64>,
        now: i64,
    ) -> Result<(), StoreError>;
    /// Deletes a schedule (not found if absent). Its executions stay.
    fn delete_schedule(&self, name: &str) -> Result<(), StoreError>;
    /// Commits one pass (see [`ScheduleAdvance`] and [`Advanced`]). The
    /// row is locked only when its cursor matches the plan's: an advance
    /// that will miss never holds it.
    fn advance_schedule(&self, a: &ScheduleAdvance) -> Result<Advanced, StoreError>;
}
