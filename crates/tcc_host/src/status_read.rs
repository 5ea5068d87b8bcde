//! Everything the status of one execution shows, read in one statement
//! (`GET /v1/executions/{id}`, the dashboard's execution page): the row,
//! the durable retry it waits for (issue 33), why it is paused and the
//! flow-control queues it waits in (issue 35). Both stores answer it with
//! one SQL statement ([`StatusStore`]); a status poll used to cost four
//! reads (the row, its failed calls, its pause marks, its queues).

use crate::pause::PauseState;
use crate::store::{AttemptRow, ExecutionRow, Store, StoreError};

/// What [`read`] returns: the row and what its status members are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusRead {
    /// The execution row, its `args` left out (an empty list): the status
    /// answer does not show them, and every poll would read them
    /// (`store::status_cols`).
    pub row: ExecutionRow,
    /// The last failed call of an effect with a durable retry policy when
    /// a next call is due and the effect has no journalled outcome yet:
    /// the retry the execution waits for. `None` for a terminal execution.
    pub retry: Option<AttemptRow>,
    /// Why it is held (none for a terminal execution).
    pub pause: PauseState,
    /// The flow-control queues it waits in at the time of the read, by
    /// scope (the limit's key), with the waiters ahead in each (none for a
    /// terminal execution).
    pub queued: Vec<(String, i64)>,
}

/// The one-statement status read both stores implement.
pub trait StatusStore: Send + Sync {
    /// [`StatusRead`] of execution `id` with queues as of `now` (ms);
    /// `None` for an unknown id.
    fn status_read(&self, id: &str, now: i64) -> Result<Option<StatusRead>, StoreError>;
}

/// The status read of `store`, when its backend has one (both of this
/// crate's do).
fn store_of(store: &dyn Store) -> Option<&dyn StatusStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

/// [`StatusStore::status_read`] of `store`; a store of another crate (a
/// test double) is read the long way ([`read_apart`]).
pub fn read(store: &dyn Store, id: &str, now: i64) -> Result<Option<StatusRead>, StoreError> {
    match store_of(store) {
        Some(s) => s.status_read(id, now),
        None => read_apart(store, id, now),
    }
}

/// [`read`] the long way, as the status route read it before the one
/// statement: the row, the execution's failed calls and the journal of
/// the last one, its pause marks, its flow-control queues (what the tests
/// compare the one statement with).
pub fn read_apart(store: &dyn Store, id: &str, now: i64) -> Result<Option<StatusRead>, StoreError> {
    let Some(mut row) = store.get_execution(id)? else {
        return Ok(None);
    };
    // As the one statement reads it: without the arguments.
    row.args = Default::default();
    if row.is_terminal() {
        return Ok(Some(StatusRead {
            row,
            retry: None,
            pause: PauseState::default(),
            queued: Vec::new(),
        }));
    }
    let mut retry = None;
    if let Some(last) = store.attempts_of(id)?.pop()
        && last.next_due_ms.is_some()
        && store.journal_get(&last.idempotency_key)?.is_none()
    {
        retry = Some(last);
    }
    let pause = crate::pause::state(store, id)?;
    let queued = match crate::flow::store_of(store) {
        Some(f) => f.queued(id, now)?,
        None => Vec::new(),
    };
    Ok(Some(StatusRead {
        row,
        retry,
        pause,
        queued,
    }))
}

/// The queues column of both stores' statement: a JSON array of
/// `[scope, ahead]` pairs (SQL `NULL` or `[]` for none), in its order.
pub(crate) fn parse_queued(text: Option<String>) -> Result<Vec<(String, i64)>, StoreError> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    serde_json::from_str(&text)
        .map_err(|e| StoreError::Corrupt(format!("flow queues of a status read: {e}")))
}

/// The retry a status read's attempt columns stand for: the last failed
/// call (when there is one) while a next call is due and its effect is not
/// journalled.
pub(crate) fn waiting(last: Option<AttemptRow>, journalled: bool) -> Option<AttemptRow> {
    last.filter(|a| a.next_due_ms.is_some() && !journalled)
}
