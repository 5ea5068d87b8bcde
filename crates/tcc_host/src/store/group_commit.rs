//! The group-commit engine both backends write through (docs/tcc/host.md,
//! "Group commit").
//!
//! Every write is a job put in the engine's queue. A caller that finds one
//! of the engine's connections idle takes it and leads: it runs the oldest
//! waiting jobs (its own first, at most `max_group`) as one group on that
//! connection — the backend's group function commits them in one
//! transaction and answers each job only after `COMMIT` — and then hands
//! the connection to the caller of the oldest job still waiting, who leads
//! the next group, or puts it back idle when no job waits. There are no
//! committer threads: a lone writer's commits run on its own thread, and
//! callers arriving during a commit form the next group.
//!
//! A job whose caller was handed a connection (or found one idle) is run
//! by that caller's group only, and is never handed a second connection,
//! so a caller hears at most one hand-off, always before its own outcome,
//! and the one-value [`Slot`] it waits on never holds two replies.

use super::StoreError;
use crate::slot::Slot;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// What the caller of a queued job hears.
pub(crate) enum Reply<R, C> {
    /// The job's outcome, and (optionally) the job itself, so that what it
    /// captured is freed by its caller and not in the leader's serial work.
    Done(Result<R, StoreError>, Option<Box<dyn std::any::Any + Send>>),
    /// Lead the next group on this connection.
    Lead(C),
}

/// Where the caller of a job waits.
pub(crate) type Waiter<R, C> = Slot<Reply<R, C>>;

/// A job's way to answer its caller. Dropped unanswered (its group
/// panicked), it answers "write job dropped", so no caller waits forever.
pub(crate) struct Answer<R, C> {
    slot: Arc<Waiter<R, C>>,
    answered: bool,
}

impl<R, C> Answer<R, C> {
    /// The answer to the caller waiting on `slot`.
    pub(crate) fn new(slot: Arc<Waiter<R, C>>) -> Answer<R, C> {
        Answer {
            slot,
            answered: false,
        }
    }

    /// Hands `conn` to the caller: it leads the next group.
    pub(crate) fn lead(&self, conn: C) {
        self.slot.put(Reply::Lead(conn));
    }

    /// Marks the job answered and returns the caller's slot, for a reply
    /// that carries the job itself (see [`Reply::Done`]).
    pub(crate) fn settle(&mut self) -> Arc<Waiter<R, C>> {
        self.answered = true;
        self.slot.clone()
    }

    /// Answers the caller with the job's outcome.
    pub(crate) fn send(mut self, outcome: Result<R, StoreError>) {
        self.settle().put(Reply::Done(outcome, None));
    }
}

impl<R, C> Drop for Answer<R, C> {
    fn drop(&mut self) {
        if !self.answered {
            self.slot
                .put(Reply::Done(Err(StoreError::db("write job dropped")), None));
        }
    }
}

/// A queued job as the engine sees it.
pub(crate) trait Queued<C>: Send {
    /// Hands `conn` to the job's caller, who then leads the next group.
    fn lead(&self, conn: C);
}

struct Entry<J> {
    /// The submitting caller's number (to find its own job when it leads).
    ticket: u64,
    /// Whether its caller holds a connection (then only its group runs it).
    led: bool,
    job: J,
}

struct State<C, J> {
    jobs: VecDeque<Entry<J>>,
    idle: Vec<C>,
    next_ticket: u64,
}

/// The engine: a queue of jobs and the connections groups run on.
pub(crate) struct GroupCommit<C, J> {
    state: Mutex<State<C, J>>,
    max_group: usize,
    /// Commits one group on a connection and answers every job in it.
    run: fn(&mut C, Vec<J>),
    /// Puts a connection whose group panicked back in order (rollback).
    recover: fn(&mut C),
    /// The `backend` label of the group-size metric.
    label: &'static str,
}

impl<C: Send, J: Queued<C>> GroupCommit<C, J> {
    /// An engine over `conns` (at least one), groups of at most
    /// `max_group` jobs run by `run`.
    pub(crate) fn new(
        conns: Vec<C>,
        max_group: usize,
        label: &'static str,
        run: fn(&mut C, Vec<J>),
        recover: fn(&mut C),
    ) -> GroupCommit<C, J> {
        GroupCommit {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                idle: conns,
                next_ticket: 0,
            }),
            max_group: max_group.max(1),
            run,
            recover,
            label,
        }
    }

    /// The state. A panic never happens while it is locked (groups run
    /// outside the lock), so a poisoned lock still holds a consistent state.
    fn lock(&self) -> MutexGuard<'_, State<C, J>> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `job` and waits on `waiter` (made by this thread, and the
    /// one `job` answers) for its outcome, leading a group whenever this
    /// caller finds or is handed a connection.
    pub(crate) fn submit<R>(&self, job: J, waiter: &Waiter<R, C>) -> Result<R, StoreError> {
        let (ticket, mut conn) = {
            let mut state = self.lock();
            let ticket = state.next_ticket;
            state.next_ticket = ticket.wrapping_add(1);
            let conn = state.idle.pop();
            state.jobs.push_back(Entry {
                ticket,
                led: conn.is_some(),
                job,
            });
            (ticket, conn)
        };
        loop {
            if let Some(c) = conn.take() {
                self.lead(ticket, c);
            }
            match waiter.take() {
                Some(Reply::Done(outcome, job)) => {
                    drop(job);
                    return outcome;
                }
                Some(Reply::Lead(c)) => conn = Some(c),
                None => return Err(StoreError::db("write reply poisoned")),
            }
        }
    }

    /// Runs the group of the caller holding `ticket` on `conn`: its own job
    /// and the oldest jobs no other caller leads; then hands `conn` on.
    fn lead(&self, ticket: u64, mut conn: C) {
        let group: Vec<J> = {
            let mut state = self.lock();
            let mut group = Vec::with_capacity(state.jobs.len().min(self.max_group));
            let mut others = 0;
            let mut i = 0;
            // Usually the group is a prefix of the queue (removals at the
            // front, O(1) each).
            while i < state.jobs.len() {
                let entry = &state.jobs[i];
                let mine = entry.ticket == ticket;
                if !mine && (entry.led || others + 1 >= self.max_group) {
                    i += 1;
                    continue;
                }
                if let Some(entry) = state.jobs.remove(i) {
                    if mine {
                        group.insert(0, entry.job);
                    } else {
                        others += 1;
                        group.push(entry.job);
                    }
                }
            }
            group
        };
        crate::metrics::global().group_commit(self.label, group.len());
        let run = self.run;
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&mut conn, group)));
        if ran.is_err() {
            // The group's jobs were dropped unanswered: their callers hear
            // an error; the connection's transaction is rolled back.
            (self.recover)(&mut conn);
        }
        self.hand_on(conn);
    }

    /// Hands `conn` to the caller of the oldest job no one leads, or puts
    /// it back idle.
    fn hand_on(&self, conn: C) {
        let mut state = self.lock();
        match state.jobs.iter_mut().find(|e| !e.led) {
            Some(entry) => {
                entry.led = true;
                entry.job.lead(conn);
            }
            None => state.idle.push(conn),
        }
    }

    /// Calls `f` on every idle connection.
    pub(crate) fn for_each_idle(&self, mut f: impl FnMut(&C)) {
        for c in &self.lock().idle {
            f(c);
        }
    }

    /// Takes an idle connection out (tests: writes then queue until it is
    /// given back with `GroupCommit::give_back`).
    #[cfg(test)]
    pub(crate) fn hold(&self) -> Option<C> {
        self.lock().idle.pop()
    }

    /// Gives a connection taken with `GroupCommit::hold` back.
    #[cfg(test)]
    pub(crate) fn give_back(&self, conn: C) {
        self.hand_on(conn);
    }

    /// Jobs waiting.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.lock().jobs.len()
    }
}

/// What a job's body did in its group's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// It succeeded: its writes stay.
    Keep,
    /// It failed: its writes are undone (its outcome is its error).
    Undo,
    /// It hit a deadlock or serialization failure and may run again.
    Retry,
}

/// One group's transaction on a backend connection, as [`run_group`]
/// drives it.
pub(crate) trait GroupTx<J> {
    /// Starts the transaction.
    fn begin(&mut self) -> Result<(), StoreError>;
    /// Commits it.
    fn commit(&mut self) -> Result<(), StoreError>;
    /// Rolls it back.
    fn rollback(&mut self) -> Result<(), StoreError>;
    /// Opens a savepoint for the next job.
    fn savepoint(&mut self) -> Result<(), StoreError>;
    /// Closes the job's savepoint, undoing its writes first when `undo`.
    fn release(&mut self, undo: bool) -> Result<(), StoreError>;
    /// Runs the writes of the group that the backend folds into one
    /// statement per kind; returns which jobs that ran (an error: run the
    /// group job by job instead).
    fn fold(&mut self, group: &mut [J]) -> Result<Vec<bool>, StoreError> {
        Ok(vec![false; group.len()])
    }
    /// Runs one job's body.
    fn run(&mut self, job: &mut J) -> Ran;
}

/// Runs `group` in one transaction, the same way on both backends: first
/// optimistically without savepoints (most jobs succeed: no savepoint
/// round trips); a lone job is retried after a retryable failure (up to
/// `attempts` times), and its failure just rolls back (its outcome is its
/// error). When a job of a larger group fails, or its folded writes do,
/// the transaction is rolled back and the group run again with one
/// savepoint per job, so that only the failing job's writes are undone.
/// `Ok` means the transaction's fate is settled (each job's own outcome
/// stands); an error is the group's outcome.
pub(crate) fn run_group<J, T: GroupTx<J>>(
    tx: &mut T,
    group: &mut [J],
    attempts: usize,
) -> Result<(), StoreError> {
    let lone = group.len() == 1;
    let mut retries = 0;
    'optimistic: loop {
        tx.begin()?;
        let folded = match tx.fold(group) {
            Ok(done) => done,
            Err(_) => {
                tx.rollback()?;
                break 'optimistic;
            }
        };
        for (job, folded) in group.iter_mut().zip(folded) {
            if folded {
                continue;
            }
            match tx.run(job) {
                Ran::Keep => {}
                Ran::Retry if lone && retries < attempts => {
                    retries += 1;
                    tx.rollback()?;
                    continue 'optimistic;
                }
                // A lone job's failure needs no savepoint: undo it all.
                _ if lone => return tx.rollback(),
                _ => {
                    tx.rollback()?;
                    break 'optimistic;
                }
            }
        }
        return tx.commit();
    }
    tx.begin()?;
    for job in group.iter_mut() {
        loop {
            tx.savepoint()?;
            match tx.run(job) {
                Ran::Keep => {
                    tx.release(false)?;
                    break;
                }
                Ran::Undo => {
                    tx.release(true)?;
                    break;
                }
                Ran::Retry => tx.release(true)?,
            }
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A test job: adds its value to the connection's total.
    struct Add {
        value: usize,
        answer: Answer<usize, Total>,
    }

    struct Total(Arc<AtomicUsize>, Arc<AtomicUsize>);

    impl Queued<Total> for Add {
        fn lead(&self, conn: Total) {
            self.answer.lead(conn);
        }
    }

    fn run(conn: &mut Total, group: Vec<Add>) {
        conn.1.fetch_add(1, Ordering::SeqCst);
        for job in group {
            assert_ne!(job.value, 13, "job panics on purpose");
            let total = conn.0.fetch_add(job.value, Ordering::SeqCst) + job.value;
            job.answer.send(Ok(total));
        }
    }

    fn engine(
        conns: usize,
    ) -> (
        Arc<GroupCommit<Total, Add>>,
        Arc<AtomicUsize>,
        Arc<AtomicUsize>,
    ) {
        let (sum, groups) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let conns = (0..conns)
            .map(|_| Total(sum.clone(), groups.clone()))
            .collect();
        (
            Arc::new(GroupCommit::new(conns, 4, "test", run, |_| {})),
            sum,
            groups,
        )
    }

    fn add(engine: &GroupCommit<Total, Add>, value: usize) -> Result<usize, StoreError> {
        let waiter = Arc::new(Waiter::for_current_thread());
        let job = Add {
            value,
            answer: Answer::new(waiter.clone()),
        };
        engine.submit(job, &waiter)
    }

    /// Jobs queued while the connection is out form groups of at most
    /// `max_group`, every job runs once and every caller hears its outcome;
    /// the connections end up idle again.
    #[test]
    fn queued_jobs_run_once_in_bounded_groups() {
        for conns in [1, 3] {
            let (engine, sum, groups) = engine(conns);
            let held: Vec<Total> = (0..conns).filter_map(|_| engine.hold()).collect();
            let threads: Vec<_> = (1..=10)
                .map(|v| {
                    let e = engine.clone();
                    std::thread::spawn(move || add(&e, v))
                })
                .collect();
            let start = std::time::Instant::now();
            while engine.queued() < 10 {
                assert!(start.elapsed() < std::time::Duration::from_secs(10));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            for c in held {
                engine.give_back(c);
            }
            for t in threads {
                assert!(t.join().unwrap().is_ok());
            }
            assert_eq!(sum.load(Ordering::SeqCst), 55);
            let g = groups.load(Ordering::SeqCst);
            assert!((3..=10).contains(&g), "{g} groups");
            let mut idle = 0;
            engine.for_each_idle(|_| idle += 1);
            assert_eq!(idle, conns);
        }
    }

    /// A panicking group fails its callers with an error and keeps the
    /// connection for the next write.
    #[test]
    fn a_panicking_group_fails_its_caller_and_the_engine_goes_on() {
        let (engine, _, _) = engine(1);
        let e = engine.clone();
        let r = std::thread::spawn(move || add(&e, 13)).join().unwrap();
        assert!(matches!(r, Err(StoreError::Db(_))), "{r:?}");
        assert_eq!(add(&engine, 2).unwrap(), 2);
    }

    /// A transaction that logs what the engine asks of it; job `v` fails
    /// (`Undo`) when `v` is odd, or asks for a retry when `v` is 2.
    struct Log(Vec<String>);

    impl GroupTx<usize> for Log {
        fn begin(&mut self) -> Result<(), StoreError> {
            self.0.push("begin".into());
            Ok(())
        }
        fn commit(&mut self) -> Result<(), StoreError> {
            self.0.push("commit".into());
            Ok(())
        }
        fn rollback(&mut self) -> Result<(), StoreError> {
            self.0.push("rollback".into());
            Ok(())
        }
        fn savepoint(&mut self) -> Result<(), StoreError> {
            self.0.push("savepoint".into());
            Ok(())
        }
        fn release(&mut self, undo: bool) -> Result<(), StoreError> {
            self.0.push(if undo { "undo" } else { "release" }.into());
            Ok(())
        }
        fn run(&mut self, job: &mut usize) -> Ran {
            self.0.push(format!("run {job}"));
            match *job {
                2 => {
                    *job = 4;
                    Ran::Retry
                }
                v if v % 2 == 1 => Ran::Undo,
                _ => Ran::Keep,
            }
        }
    }

    fn logged(group: &mut [usize]) -> String {
        let mut log = Log(Vec::new());
        run_group(&mut log, group, 3).unwrap();
        log.0.join(", ")
    }

    /// Optimistic first; a failing job in a larger group makes the group
    /// run again with a savepoint per job; a lone job is retried, and its
    /// failure only rolls back.
    #[test]
    fn a_group_runs_optimistically_then_with_a_savepoint_per_job() {
        assert_eq!(logged(&mut [0, 4]), "begin, run 0, run 4, commit");
        assert_eq!(
            logged(&mut [0, 1, 4]),
            "begin, run 0, run 1, rollback, begin, savepoint, run 0, release, \
             savepoint, run 1, undo, savepoint, run 4, release, commit"
        );
        assert_eq!(logged(&mut [1]), "begin, run 1, rollback");
        assert_eq!(
            logged(&mut [2]),
            "begin, run 2, rollback, begin, run 4, commit"
        );
    }
}
