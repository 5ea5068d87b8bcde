//! Where an execution's `traceparent` is kept: one row per execution that
//! has one (table `execution_traces`), written before the execution row
//! and never changed (a second start under the same id keeps the first).

use crate::store::{Store, StoreError};

/// The stored trace contexts of executions.
pub trait TraceStore: Send + Sync {
    /// Stores `traceparent` for `execution_id` unless one is stored.
    fn put_traceparent(&self, execution_id: &str, traceparent: &str) -> Result<(), StoreError>;
    /// The stored `traceparent` of `execution_id`.
    fn traceparent(&self, execution_id: &str) -> Result<Option<String>, StoreError>;
}

/// The trace contexts of `store`, when its backend keeps them (both of
/// this crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn TraceStore> {
    let any = store.as_any()?;
    if let Some(s) = any.downcast_ref::<crate::store::sqlite::SqliteStore>() {
        return Some(s);
    }
    if let Some(s) = any.downcast_ref::<crate::store::pg::PgStore>() {
        return Some(s);
    }
    None
}
