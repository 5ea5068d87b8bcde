//! The task queue as the host and the HTTP API use it: the [`TaskStore`]
//! of the host's database and the [`Hub`] that announces new tasks
//! ([`QUEUE_TOPIC`]) and answers ([`task_topic`]).
//!
//! An answer taken on the node whose host thread waits for it is also
//! handed to that thread in memory ([`TaskBoard::expect`]), after its
//! commit: the thread does not read the row back (one store read fewer
//! per worker step). A thread on another node, or one woken without a
//! handed answer, reads the row as before.

use super::pg::PgTasks;
use super::sqlite::SqliteTasks;
use super::{Claim, LeasedAnswer, NewTask, TaskAnswer, TaskRow, TaskStore};
use crate::notify::{Hub, QUEUE_TOPIC, task_topic};
use crate::store::StoreError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The task queue.
pub struct TaskBoard {
    store: Box<dyn TaskStore>,
    hub: Arc<Hub>,
    /// Answers for the host threads of this process waiting for them, by
    /// idempotency key (`None` until answered).
    handed: Mutex<HashMap<String, Option<TaskAnswer>>>,
}

/// A host thread's wait for the answer of one task on this node
/// ([`TaskBoard::expect`]); forgotten when dropped.
pub struct Expected<'a> {
    board: &'a TaskBoard,
    key: String,
}

impl Expected<'_> {
    /// The answer handed over since the wait began, if any (taken: a
    /// second call answers `None`).
    pub fn take(&self) -> Option<TaskAnswer> {
        self.board
            .handed
            .lock()
            .ok()
            .and_then(|mut m| m.get_mut(&self.key).and_then(Option::take))
    }
}

impl Drop for Expected<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.board.handed.lock() {
            m.remove(&self.key);
        }
    }
}

impl TaskBoard {
    /// The queue in the database named by `--database` (a SQLite file or a
    /// `postgres://` URL; the execution store must have been opened on it
    /// first), announcing through `hub`.
    pub fn open(database: &str, hub: Arc<Hub>) -> Result<Arc<TaskBoard>, StoreError> {
        let store: Box<dyn TaskStore> = if crate::store::factory::is_postgres_url(database) {
            let tasks = PgTasks::open(database)?;
            tasks.set_origin(hub.origin_line());
            Box::new(tasks)
        } else {
            Box::new(SqliteTasks::open(std::path::Path::new(database))?)
        };
        Ok(Arc::new(TaskBoard {
            store,
            hub,
            handed: Mutex::new(HashMap::new()),
        }))
    }

    /// The hub it announces through.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Begins waiting, on this node, for the answer of the task with this
    /// idempotency key: an answer or expiry committed through this board
    /// is handed over ([`Expected::take`]) before its topic is woken.
    pub fn expect(&self, idempotency_key: &str) -> Expected<'_> {
        if let Ok(mut m) = self.handed.lock() {
            m.insert(idempotency_key.to_string(), None);
        }
        Expected {
            board: self,
            key: idempotency_key.to_string(),
        }
    }

    /// Wakes `topic`'s waiters of this node, and of the other nodes unless
    /// the store's statement notified them already.
    fn announce(&self, topic: &str) {
        if self.store.announces() {
            self.hub.wake(topic);
        } else {
            self.hub.publish(topic);
        }
    }

    /// Hands `answer` to this node's waiting thread, if one waits.
    fn hand_over(&self, idempotency_key: &str, answer: TaskAnswer) {
        if let Ok(mut m) = self.handed.lock()
            && let Some(slot) = m.get_mut(idempotency_key)
        {
            *slot = Some(answer);
        }
    }

    /// Queues a task (see [`TaskStore::enqueue`]) and, when it is waiting
    /// for a worker, wakes the workers' polls.
    pub fn enqueue(&self, task: &NewTask) -> Result<TaskRow, StoreError> {
        let row = self.store.enqueue(task, crate::ids::now_ms())?;
        if row.state == "queued" {
            self.announce(QUEUE_TOPIC);
        }
        Ok(row)
    }

    /// The task with this idempotency key.
    pub fn get(&self, idempotency_key: &str) -> Result<Option<TaskRow>, StoreError> {
        self.store.get(idempotency_key)
    }

    /// Hands out tasks (see [`TaskStore::claim`]).
    pub fn claim(&self, claim: &Claim<'_>) -> Result<Vec<TaskRow>, StoreError> {
        self.store.claim(claim)
    }

    /// Hands out tasks, or when there are none the earliest lease expiry
    /// (see [`TaskStore::claim_or_next_expiry`]).
    pub fn claim_or_next_expiry(
        &self,
        claim: &Claim<'_>,
    ) -> Result<(Vec<TaskRow>, Option<i64>), StoreError> {
        self.store.claim_or_next_expiry(claim)
    }

    /// Extends a lease (see [`TaskStore::heartbeat`]).
    pub fn heartbeat(
        &self,
        idempotency_key: &str,
        token: &str,
        lease_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        self.store
            .heartbeat(idempotency_key, token, lease_ms, crate::ids::now_ms())
    }

    /// Stores a worker's answer and wakes the host thread waiting for it;
    /// `false` when the lease is gone.
    pub fn answer(
        &self,
        idempotency_key: &str,
        token: &str,
        answer: &TaskAnswer,
    ) -> Result<bool, StoreError> {
        let done = self
            .store
            .answer(idempotency_key, token, answer, crate::ids::now_ms())?;
        if done {
            self.answered(idempotency_key, answer);
        }
        Ok(done)
    }

    /// [`TaskBoard::answer`] for a batch (one transaction on SQLite); one
    /// flag per answer, in order.
    pub fn answer_many(&self, answers: &[LeasedAnswer]) -> Result<Vec<bool>, StoreError> {
        let done = self.store.answer_many(answers, crate::ids::now_ms())?;
        for (a, stored) in answers.iter().zip(&done) {
            if *stored {
                self.answered(&a.idempotency_key, &a.answer);
            }
        }
        Ok(done)
    }

    /// Hands a stored answer to the waiting host thread and wakes the
    /// task's topic.
    fn answered(&self, idempotency_key: &str, answer: &TaskAnswer) {
        // As a read of the stored row would give it: the result through
        // its canonical text.
        let stored = match answer {
            TaskAnswer::Completed(v) => serde_json::from_str(&tcc_ir::to_canonical(v))
                .ok()
                .map(TaskAnswer::Completed),
            TaskAnswer::Failed(m) => Some(TaskAnswer::Failed(m.clone())),
        };
        if let Some(a) = stored {
            self.hand_over(idempotency_key, a);
        }
        self.announce(&task_topic(idempotency_key));
    }

    /// Fails a task nobody answered in time (see [`TaskStore::expire`]).
    pub fn expire(&self, idempotency_key: &str, message: &str) -> Result<bool, StoreError> {
        let done = self
            .store
            .expire(idempotency_key, message, crate::ids::now_ms())?;
        if done {
            self.hand_over(idempotency_key, TaskAnswer::Failed(message.to_string()));
            self.announce(&task_topic(idempotency_key));
        }
        Ok(done)
    }

    /// The earliest expiry of a current lease.
    pub fn next_lease_expiry(&self) -> Result<Option<i64>, StoreError> {
        self.store.next_lease_expiry()
    }
}
