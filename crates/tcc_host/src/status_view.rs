//! The status JSON of an execution: what `GET /v1/executions/{id}`
//! answers and `irkit tcc status` prints (also the answer of the result
//! routes, [`crate::await_result`]).

use crate::status_read::StatusRead;
use crate::store::{ExecutionRow, StoreError};
use serde_json::Value as J;

/// The status JSON of an execution (what `irkit tcc status` prints). Its
/// result is parsed into a tree: the service answers [`status_text`]
/// instead, which does not.
pub fn status_json(row: &ExecutionRow) -> J {
    let mut m = status_members(row);
    if let Some(r) = row.result.as_ref().and_then(|r| r.to_json().ok()) {
        // The same value as plain JSON, beside the tagged one (issue 33).
        m.insert("result_plain".into(), crate::values::tagged_to_plain(&r));
        m.insert("result".into(), r);
    }
    J::Object(m)
}

/// The canonical JSON text of [`status_json`] with `extra` members added
/// (a member of the same name replaced), written without a tree of the
/// result: the stored result text is answered as it is, and its plain form
/// written from it (issue 42, F3: a read costs the value's bytes, not a
/// tree per value). A stored result that is not JSON is
/// [`StoreError::Corrupt`].
pub fn status_text(row: &ExecutionRow, extra: Vec<(String, J)>) -> Result<String, StoreError> {
    let mut m = status_members(row);
    for (k, v) in extra {
        m.insert(k, v);
    }
    let plain = match &row.result {
        Some(r) => Some(
            r.to_plain_text()
                .map_err(|e| StoreError::Corrupt(format!("execution {}: {e}", row.id)))?,
        ),
        None => None,
    };
    // The stored text itself, not a copy: a read holds the value's text
    // once, beside its plain form and the answer.
    let mut raw: Vec<(&str, &str)> = Vec::new();
    if let (Some(r), Some(p)) = (&row.result, &plain) {
        raw.push(("result", r.as_str()));
        raw.push(("result_plain", p.as_str()));
    }
    let mut keys: Vec<&str> = m
        .keys()
        .map(String::as_str)
        .filter(|k| !raw.iter().any(|(r, _)| r == k))
        .chain(raw.iter().map(|(k, _)| *k))
        .collect();
    keys.sort_unstable();
    // Each member's text, then the answer written once at its length: a
    // vector grown by doubling held up to twice the answer (and both its
    // old and new buffers while it moved), issue 42, F3.
    let members: Vec<(String, std::borrow::Cow<'_, str>)> = keys
        .into_iter()
        .map(|k| {
            let value = match raw.iter().find(|(r, _)| *r == k) {
                Some((_, text)) => std::borrow::Cow::Borrowed(*text),
                None => {
                    let mut text = String::new();
                    tcc_ir::canonical::write_canonical(&m[k], &mut text);
                    std::borrow::Cow::Owned(text)
                }
            };
            (tcc_ir::encode::canonical_string(k), value)
        })
        .collect();
    let len = 2 + members
        .iter()
        .map(|(k, v)| k.len() + 1 + v.len() + 1)
        .sum::<usize>();
    let mut out = String::with_capacity(len);
    out.push('{');
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
    debug_assert!(out.len() <= len, "{} > {len}", out.len());
    Ok(out)
}

/// The answer of `GET /v1/executions/{id}`: [`status_text`] of a
/// [`StatusRead`] with the members it adds while the execution is
/// unfinished, in this order (a later one replacing an earlier one of the
/// same name): `retry` (the durable retry it waits for, issue 33), the
/// pause members (`crate::pause::status_members`) and the flow-control
/// ones (`crate::flow::queued_members`: `throttled` wins over `paused`).
pub fn status_answer(read: &StatusRead) -> Result<String, StoreError> {
    let row = &read.row;
    let mut extra = Vec::new();
    if !row.is_terminal() {
        if let Some(retry) = &read.retry {
            extra.push(("retry".to_string(), retry.history_detail()));
        }
        extra.extend(crate::pause::status_members(row, read.pause));
    }
    extra.extend(crate::flow::queued_members(row, read.queued.clone()));
    status_text(row, extra)
}

/// Every member of the status JSON but the result's two.
fn status_members(row: &ExecutionRow) -> serde_json::Map<String, J> {
    let mut m = serde_json::Map::new();
    m.insert("id".into(), row.id.clone().into());
    m.insert("status".into(), row.status.clone().into());
    m.insert("revision".into(), row.revision.into());
    m.insert("artifact_hash".into(), row.artifact_hash.clone().into());
    m.insert("program".into(), row.program_name.clone().into());
    m.insert("namespace".into(), row.namespace.clone().into());
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
    m
}
