//! The task queue as the host and the HTTP API use it: the [`TaskStore`]
//! of the host's database and the [`Hub`] that announces new tasks
//! ([`QUEUE_TOPIC`]) and answers ([`task_topic`]).

use super::pg::PgTasks;
use super::sqlite::SqliteTasks;
use super::{Claim, NewTask, TaskAnswer, TaskRow, TaskStore};
use crate::notify::{Hub, QUEUE_TOPIC, task_topic};
use crate::store::StoreError;
use std::sync::Arc;

/// The task queue.
pub struct TaskBoard {
    store: Box<dyn TaskStore>,
    hub: Arc<Hub>,
}

impl TaskBoard {
    /// The queue in the database named by `--database` (a SQLite file or a
    /// `postgres://` URL; the execution store must have been opened on it
    /// first), announcing through `hub`.
    pub fn open(database: &str, hub: Arc<Hub>) -> Result<Arc<TaskBoard>, StoreError> {
        let store: Box<dyn TaskStore> = if crate::store::factory::is_postgres_url(database) {
            Box::new(PgTasks::open(database)?)
        } else {
            Box::new(SqliteTasks::open(std::path::Path::new(database))?)
        };
        Ok(Arc::new(TaskBoard { store, hub }))
    }

    /// The hub it announces through.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Queues a task (see [`TaskStore::enqueue`]) and, when it is waiting
    /// for a worker, wakes the workers' polls.
    pub fn enqueue(&self, task: &NewTask) -> Result<TaskRow, StoreError> {
        let row = self.store.enqueue(task, crate::ids::now_ms())?;
        if row.state == "queued" {
            self.hub.publish(QUEUE_TOPIC);
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
            self.hub.publish(&task_topic(idempotency_key));
        }
        Ok(done)
    }

    /// Fails a task nobody answered in time (see [`TaskStore::expire`]).
    pub fn expire(&self, idempotency_key: &str, message: &str) -> Result<bool, StoreError> {
        let done = self
            .store
            .expire(idempotency_key, message, crate::ids::now_ms())?;
        if done {
            self.hub.publish(&task_topic(idempotency_key));
        }
        Ok(done)
    }

    /// The earliest expiry of a current lease.
    pub fn next_lease_expiry(&self) -> Result<Option<i64>, StoreError> {
        self.store.next_lease_expiry()
    }
}
