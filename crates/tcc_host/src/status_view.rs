//! The status JSON of an execution: what `GET /v1/executions/{id}`
//! answers and `irkit tcc status` prints (also the answer of the result
//! routes, [`crate::await_result`]).

use crate::answer_text::AnswerText;
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
/// result (issue 42, F3: a read costs the value's bytes, not a tree per
/// value): the stored result text is written as it is, inflated straight
/// into the part of the answer that ends with it, and its plain form,
/// written from there, starts the next part ([`AnswerText`]). A stored
/// result that does not inflate or is not JSON is [`StoreError::Corrupt`].
pub fn status_text(row: &ExecutionRow, extra: Vec<(String, J)>) -> Result<AnswerText, StoreError> {
    let mut m = status_members(row);
    for (k, v) in extra {
        m.insert(k, v);
    }
    let result = row.result.as_ref();
    if result.is_some() {
        m.remove("result");
        m.remove("result_plain");
    }
    let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
    if result.is_some() {
        keys.extend(["result", "result_plain"]);
    }
    keys.sort_unstable();
    // Each member's key and text (`None`: the result's two, written from
    // the stored text).
    let members: Vec<(String, Option<String>)> = keys
        .into_iter()
        .map(|k| {
            let value = m.get(k).map(|v| {
                let mut text = String::new();
                tcc_ir::canonical::write_canonical(v, &mut text);
                text
            });
            (tcc_ir::encode::canonical_string(k), value)
        })
        .collect();
    let corrupt = |e: String| StoreError::Corrupt(format!("execution {}: {e}", row.id));
    // The first part ends with the result's text; each part is written
    // into a buffer of its length (a vector grown by doubling held up to
    // twice the answer, and both its old and new buffers while it moved).
    let split = members
        .iter()
        .position(|(_, v)| v.is_none())
        .map_or(members.len(), |i| i + 1);
    let member_len =
        |(k, v): &(String, Option<String>)| k.len() + 2 + v.as_ref().map_or(0, String::len);
    let result_len = result.map_or(0, |r| r.len());
    let mut parts = Vec::new();
    let mut out = String::with_capacity(
        2 + members[..split].iter().map(member_len).sum::<usize>() + result_len,
    );
    out.push('{');
    let mut result_at = 0;
    for (i, (k, v)) in members.iter().enumerate() {
        if i == split && i > 0 {
            parts.push(std::mem::take(&mut out));
            out = String::with_capacity(
                1 + members[split..].iter().map(member_len).sum::<usize>() + result_len / 4,
            );
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push(':');
        match (v, result) {
            (Some(text), _) => out.push_str(text),
            (None, Some(r)) if i + 1 == split => {
                result_at = out.len();
                r.write_to(&mut out).map_err(corrupt)?;
            }
            // `result_plain`, from the result's text that ends the part
            // before.
            (None, _) => {
                let text = parts.last().map_or("", |p: &String| &p[result_at..]);
                crate::tagged_text::write_plain(text, &mut out).map_err(corrupt)?;
            }
        }
    }
    out.push('}');
    parts.push(out);
    Ok(AnswerText::from_parts(parts))
}

/// The answer of `GET /v1/executions/{id}`: [`status_text`] of a
/// [`StatusRead`] with the members it adds while the execution is
/// unfinished, in this order (a later one replacing an earlier one of the
/// same name): `retry` (the durable retry it waits for, issue 33), the
/// pause members (`crate::pause::status_members`) and the flow-control
/// ones (`crate::flow::queued_members`: `throttled` wins over `paused`).
pub fn status_answer(read: &StatusRead) -> Result<AnswerText, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::{Packed, Stored};
    use crate::tagged_text::TaggedText;
    use proptest::prelude::*;

    fn row(result: Option<TaggedText>) -> ExecutionRow {
        ExecutionRow {
            id: "e1".into(),
            artifact_hash: "h".into(),
            program_name: Some("p".into()),
            args: Default::default(),
            status: "completed".into(),
            revision: 3,
            owner: None,
            lease_until: 0,
            cancel_requested: false,
            terminate_requested: false,
            result,
            message: None,
            error: None,
            pending: None,
            parent_id: None,
            parent_branch: None,
            created_ms: 1,
            updated_ms: 2,
            seq: 1,
            drive_attempts: 0,
            namespace: "default".into(),
            stored_traceparent: None,
        }
    }

    /// The stored forms of a tagged value's text: as text, and deflated as
    /// SQLite holds a long one (read back through its column type).
    fn stored_forms(text: &str) -> Vec<TaggedText> {
        let mut forms = vec![TaggedText::from_stored(text.to_string())];
        if let Packed::Deflated(blob) = Packed::copied(text) {
            let c = rusqlite::Connection::open_in_memory().unwrap();
            let read: Stored = c.query_row("SELECT ?1", [&blob], |r| r.get(0)).unwrap();
            assert!(matches!(read, Stored::Deflated { .. }));
            forms.push(TaggedText::from(read));
        }
        forms
    }

    /// The answer as it was written before it came in parts: the canonical
    /// text of the tree.
    fn through_the_tree(row: &ExecutionRow, extra: &[(String, J)]) -> String {
        let J::Object(mut m) = status_json(row) else {
            unreachable!()
        };
        for (k, v) in extra {
            m.insert(k.clone(), v.clone());
        }
        if let Some(r) = &row.result {
            // The stored text itself, not a re-written tree of it.
            m.insert("result".into(), r.to_json().unwrap());
        }
        tcc_ir::to_canonical(&J::Object(m))
    }

    #[test]
    fn a_long_result_is_answered_from_its_deflated_text_in_two_parts() {
        let item = r#"{"t":"number","v":0}"#;
        let text = format!(r#"{{"t":"array","v":[{}]}}"#, vec![item; 20_000].join(","));
        let extra = vec![("retry".to_string(), serde_json::json!({"attempt": 2}))];
        let forms = stored_forms(&text);
        assert_eq!(forms.len(), 2, "a long text of zeros deflates");
        for result in forms {
            let row = row(Some(result));
            let answer = status_text(&row, extra.clone()).unwrap();
            // The first part ends with the result's text.
            assert_eq!(answer.parts().len(), 2);
            assert!(answer.parts()[0].ends_with(&text));
            assert!(answer.parts()[1].starts_with(r#","result_plain":[0,0,"#));
            assert_eq!(answer.into_string(), through_the_tree(&row, &extra));
        }
        // No result: one part.
        let answer = status_text(&row(None), Vec::new()).unwrap();
        assert_eq!(answer.parts().len(), 1);
        assert_eq!(answer.into_string(), through_the_tree(&row(None), &[]));
    }

    #[test]
    fn a_damaged_deflated_result_is_a_corrupt_store_error() {
        let text = format!(r#"{{"t":"string","v":"{}"}}"#, "ab".repeat(40_000));
        let Packed::Deflated(mut blob) = Packed::copied(&text) else {
            panic!("not deflated");
        };
        let end = blob.len() - 3;
        blob.truncate(end);
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let read: Stored = c.query_row("SELECT ?1", [&blob], |r| r.get(0)).unwrap();
        let err = status_text(&row(Some(TaggedText::from(read))), Vec::new()).unwrap_err();
        assert!(
            matches!(err, StoreError::Corrupt(ref m) if m.contains("e1")),
            "{err}"
        );
    }

    fn tagged_value() -> impl Strategy<Value = J> {
        use serde_json::json;
        let leaf = prop_oneof![
            Just(json!({"t": "null"})),
            Just(json!({"t": "undefined"})),
            any::<bool>().prop_map(|b| json!({"t": "bool", "v": b})),
            any::<i32>().prop_map(|n| json!({"t": "number", "v": n})),
            (-1e9f64..1e9).prop_map(|n| json!({"t": "number", "v": n})),
            "[a-z\"\\\\é]{0,6}".prop_map(|s| json!({"t": "string", "v": s})),
        ];
        leaf.prop_recursive(4, 400, 40, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..40)
                    .prop_map(|v| json!({"t": "array", "v": v})),
                prop::collection::btree_map("[a-c]{1,2}", inner, 0..6)
                    .prop_map(|m| json!({"t": "object", "v": m})),
            ]
        })
    }

    proptest! {
        /// Whatever the value and its stored form, the answer written in
        /// parts is the canonical text of the status tree.
        #[test]
        fn the_answer_in_parts_is_the_trees_text(value in tagged_value(), copies in 1usize..400) {
            let text = tcc_ir::to_canonical(&serde_json::json!({
                "t": "array", "v": vec![value; copies]
            }));
            for result in stored_forms(&text) {
                let row = row(Some(result));
                prop_assert_eq!(
                    status_text(&row, Vec::new()).unwrap().into_string(),
                    through_the_tree(&row, &[])
                );
            }
        }
    }
}
