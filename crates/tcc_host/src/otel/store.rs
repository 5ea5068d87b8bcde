//! Where an execution's `traceparent` is kept: one row per execution that
//! has one (table `execution_traces`), written before the execution row
//! and never changed (a second start under the same id keeps the first).

use crate::store::StoreError;

/// The stored trace contexts of executions.
pub trait TraceStore: Send + Sync {
    /// Stores `traceparent` for `execution_id` unless one is stored.
    fn put_traceparent(&self, execution_id: &str, traceparent: &str) -> Result<(), StoreError>;
    /// The stored `traceparent` of `execution_id`.
    fn traceparent(&self, execution_id: &str) -> Result<Option<String>, StoreError>;
}
