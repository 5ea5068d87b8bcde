//! Rows of the PostgreSQL backend: the execution row decoder and the
//! journal range condition, shared by the queries and the folded writes.

use crate::store::{ExecutionRow, StoreError, parse_json};
use postgres::Row;

/// The SQL condition selecting the journal rows of the execution whose id
/// is the SQL expression `$id`: the range of its keys (every key is
/// `{escaped id}:{effect key}`, `store::journal_key`, the escape written
/// here in SQL; checked by `journal_put`), read through the
/// primary key in byte order, and the id itself (an execution named
/// `a` must not see the keys of one named `a:b`).
macro_rules! in_journal_of {
    ($id:literal) => {
        concat!(
            "idempotency_key >= (replace(replace(",
            $id,
            ", '%', '%25'), ':', '%3A') || ':') COLLATE \"C\" AND idempotency_key < (replace(replace(",
            $id,
            ", '%', '%25'), ':', '%3A') || ';') COLLATE \"C\" AND execution_id = ",
            $id
        )
    };
}
pub(crate) use in_journal_of;

/// Decodes an execution row read as `EXEC_COLS`.
pub(crate) fn exec_row(r: &Row) -> Result<ExecutionRow, StoreError> {
    let args = crate::values::TaggedList::from_stored(r.try_get(3)?);
    Ok(ExecutionRow {
        id: r.try_get(0)?,
        artifact_hash: r.try_get(1)?,
        program_name: r.try_get(2)?,
        args,
        status: r.try_get(4)?,
        revision: r.try_get::<_, i64>(5)?.max(0) as u64,
        owner: r.try_get(6)?,
        lease_until: r.try_get(7)?,
        cancel_requested: r.try_get(8)?,
        result: r
            .try_get::<_, Option<String>>(9)?
            .map(crate::tagged_text::TaggedText::from_stored),
        message: r.try_get(10)?,
        error: r.try_get(11)?,
        pending: parse_json(r.try_get(12)?)?,
        parent_id: r.try_get(13)?,
        parent_branch: r.try_get(14)?,
        created_ms: r.try_get(15)?,
        updated_ms: r.try_get(16)?,
        seq: r.try_get(17)?,
        drive_attempts: r.try_get::<_, i32>(18)?.max(0) as u32,
        terminate_requested: r.try_get(19)?,
        namespace: r.try_get(20)?,
        stored_traceparent: None,
    })
}
