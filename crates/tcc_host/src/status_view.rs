//! The status JSON of an execution: what `GET /v1/executions/{id}`
//! answers and `irkit tcc status` prints (also the answer of the result
//! routes, [`crate::await_result`]).

use crate::store::ExecutionRow;
use serde_json::Value as J;

/// The status JSON of an execution (what `irkit tcc status` prints).
pub fn status_json(row: &ExecutionRow) -> J {
    let mut m = serde_json::Map::new();
    m.insert("id".into(), row.id.clone().into());
    m.insert("status".into(), row.status.clone().into());
    m.insert("revision".into(), row.revision.into());
    m.insert("artifact_hash".into(), row.artifact_hash.clone().into());
    m.insert("program".into(), row.program_name.clone().into());
    if let Some(r) = &row.result {
        m.insert("result".into(), r.clone());
        // The same value as plain JSON, beside the tagged one (issue 33).
        m.insert("result_plain".into(), crate::values::tagged_to_plain(r));
    }
    if let Some(msg) = &row.message {
        m.insert("message".into(), msg.clone().into());
    }
    if let Some(e) = &row.error {
        m.insert("error".into(), e.clone().into());
    }
    m.insert(
        "artifact_missing".into(),
        row.error
            .as_deref()
            .is_some_and(|e| e.starts_with("artifact_missing"))
            .into(),
    );
    m.insert("pending".into(), row.pending.clone().unwrap_or(J::Null));
    m.insert("cancel_requested".into(), row.cancel_requested.into());
    if row.terminate_requested {
        m.insert("terminate_requested".into(), true.into());
    }
    if let Some(p) = &row.parent_id {
        m.insert("parent".into(), p.clone().into());
    }
    m.insert("created_ms".into(), row.created_ms.into());
    m.insert("updated_ms".into(), row.updated_ms.into());
    J::Object(m)
}
