//! The stored `traceparent`s of the SQLite backend (`crate::otel::store`).

use super::SqliteStore;
use super::cached::Cached;
use crate::otel::store::TraceStore;
use crate::store::StoreError;
use rusqlite::{OptionalExtension, params};

impl TraceStore for SqliteStore {
    fn put_traceparent(&self, execution_id: &str, traceparent: &str) -> Result<(), StoreError> {
        let (id, tp) = (execution_id.to_string(), traceparent.to_string());
        // Lazy: the execution row's durable commit, which follows, flushes it.
        self.write_lazy(move |c| {
            c.exec_cached(
                "INSERT OR IGNORE INTO execution_traces (execution_id, traceparent) VALUES (?1, ?2)",
                params![id, tp],
            )?;
            Ok(())
        })
    }

    fn traceparent(&self, execution_id: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT traceparent FROM execution_traces WHERE execution_id = ?1",
                params![execution_id],
                |r| r.get(0),
            )
            .optional()?)
        })
    }
}
