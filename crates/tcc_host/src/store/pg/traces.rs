//! The stored `traceparent`s of the PostgreSQL backend
//! (`crate::otel::store`).

use super::PgStore;
use crate::otel::store::TraceStore;
use crate::store::StoreError;

impl TraceStore for PgStore {
    fn put_traceparent(&self, execution_id: &str, traceparent: &str) -> Result<(), StoreError> {
        let (id, tp) = (execution_id.to_string(), traceparent.to_string());
        // Lazy: the execution row's durable commit, which follows, flushes it.
        self.write_lazy(move |c| {
            c.execute(
                "INSERT INTO execution_traces (execution_id, traceparent) VALUES ($1, $2) ON CONFLICT (execution_id) DO NOTHING",
                &[&id, &tp],
            )?;
            Ok(())
        })
    }

    fn traceparent(&self, execution_id: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_opt(
                "SELECT traceparent FROM execution_traces WHERE execution_id = $1",
                &[&execution_id],
            )?
            .map(|r| r.try_get(0))
            .transpose()?)
        })
    }
}
