//! The dashboard's JSON documents, built from store rows (pure functions:
//! no store access, no HTTP). The browser code renders them as they are.

use crate::store::{ExecutionRow, HistoryRow, JournalRow, WaitRow};
use crate::values::tagged_to_plain;
use serde_json::{Value as J, json};

/// Who holds an execution's lease at `now`: the owner (a node id on
/// PostgreSQL, `--node-id`) while its lease has not expired.
pub fn lease_json(row: &ExecutionRow, now: i64) -> J {
    match &row.owner {
        Some(owner) if row.lease_until > now => {
            json!({"owner": owner, "until_ms": row.lease_until, "active": true})
        }
        Some(owner) => json!({"owner": owner, "until_ms": row.lease_until, "active": false}),
        None => J::Null,
    }
}

/// A value as the page shows it: the plain form and, when the plain form
/// loses information (`undefined`, non-finite numbers), the tagged one.
fn value_json(tagged: &J) -> J {
    let plain = tagged_to_plain(tagged);
    json!({"plain": plain, "tagged": tagged})
}

/// One row of the executions list.
pub fn list_row(row: &ExecutionRow, now: i64) -> J {
    json!({
        "id": row.id,
        "status": row.status,
        "program": row.program_name,
        "namespace": row.namespace,
        "artifact_hash": row.artifact_hash,
        "revision": row.revision,
        "created_ms": row.created_ms,
        "updated_ms": row.updated_ms,
        "cancel_requested": row.cancel_requested,
        "error": row.error,
        "parent": row.parent_id,
        "lease": lease_json(row, now),
    })
}

/// The whole execution page: the row, its lease, its history as a
/// timeline (each `effect` entry joined with its journal row: input and
/// result), its waits (timers, events, children) and the frames of the
/// latest continuation (`(func_id, pc)`, entry frame first).
pub fn execution_page(
    row: &ExecutionRow,
    history: &[HistoryRow],
    history_limit: usize,
    journal: &[JournalRow],
    waits: &[WaitRow],
    frames: Option<Vec<(u32, u32)>>,
    now: i64,
) -> J {
    let timeline: Vec<J> = history
        .iter()
        .map(|h| {
            let mut e = json!({"seq": h.seq, "at_ms": h.at_ms, "kind": h.kind, "detail": h.detail});
            if h.kind == "effect" {
                let key = h.detail.get("idempotency_key").and_then(J::as_str);
                if let Some(j) = journal.iter().find(|j| Some(j.idempotency_key.as_str()) == key) {
                    e["effect"] = json!({
                        "key": j.key,
                        "status": j.status,
                        "input": serde_json::from_str::<J>(&j.input).map_or(J::Null, |i| value_json(&i)),
                        "result": if j.status == "completed" { value_json(&j.result) } else { J::Null },
                        "failure": if j.status == "completed" { J::Null } else { tagged_to_plain(&j.result) },
                    });
                }
            }
            e
        })
        .collect();
    let waits: Vec<J> = waits
        .iter()
        .map(|w| {
            json!({"id": w.id, "kind": w.kind, "name": w.name, "branch": w.branch,
                   "due_ms": w.due_ms, "delivered": w.delivered})
        })
        .collect();
    let frames = frames.map(|f| {
        f.into_iter()
            .map(|(func_id, pc)| json!({"func_id": func_id, "pc": pc}))
            .collect::<Vec<_>>()
    });
    json!({
        "execution": {
            "id": row.id,
            "status": row.status,
            "terminal": row.is_terminal(),
            "program": row.program_name,
            "namespace": row.namespace,
            "artifact_hash": row.artifact_hash,
            "revision": row.revision,
            "args": row.args.parse().unwrap_or_default().iter().map(tagged_to_plain).collect::<Vec<_>>(),
            "result": row.result.as_ref().and_then(|r| r.to_json().ok()).as_ref().map(value_json),
            "message": row.message,
            "error": row.error,
            "pending": row.pending,
            "cancel_requested": row.cancel_requested,
            "parent": row.parent_id,
            "parent_branch": row.parent_branch,
            "created_ms": row.created_ms,
            "updated_ms": row.updated_ms,
        },
        "lease": lease_json(row, now),
        "history": timeline,
        "history_truncated": history.len() >= history_limit,
        "waits": waits,
        "frames": frames,
        "now_ms": now,
    })
}

/// One instruction as a listing line: the op, then its other fields as
/// `name=value` (canonical JSON), in the artifact's key order.
pub fn instruction_text(ins: &J) -> String {
    let Some(m) = ins.as_object() else {
        return tcc_ir::to_canonical(ins);
    };
    let mut out = m.get("op").and_then(J::as_str).unwrap_or("?").to_string();
    for (k, v) in m.iter().filter(|(k, _)| *k != "op") {
        out.push(' ');
        out.push_str(k);
        out.push('=');
        out.push_str(&tcc_ir::to_canonical(v));
    }
    out
}

/// The envelope fields the programs page shows.
fn envelope_json(artifact: &J) -> J {
    let env = &artifact["envelope"];
    json!({
        "frontend_id": env["frontend_id"],
        "frontend_version": env["frontend_version"],
        "language_semantics_version": env["language_semantics_version"],
        "required_engine_features": env["required_engine_features"],
        "required_host_capabilities": env["required_host_capabilities"],
    })
}

/// A program of the programs page: name, hash, envelope summary and size.
pub fn program_summary(name: &str, hash: &str, artifact: Option<&J>) -> J {
    let mut j = json!({"name": name, "hash": hash, "stored": artifact.is_some()});
    if let Some(a) = artifact {
        j["envelope"] = envelope_json(a);
        let functions = a["program"]["functions"].as_array();
        j["functions"] = functions.map_or(0, Vec::len).into();
        j["instructions"] = functions
            .map_or(0, |f| {
                f.iter()
                    .map(|f| f["instructions"].as_array().map_or(0, Vec::len))
                    .sum()
            })
            .into();
    }
    j
}

/// An artifact's listing: envelope summary and every function's
/// instructions as text lines, by pc.
pub fn artifact_listing(hash: &str, names: &[String], artifact: &J) -> J {
    let entry = artifact["program"]["entry"].as_u64();
    let functions: Vec<J> = artifact["program"]["functions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let lines: Vec<J> = f["instructions"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(pc, ins)| json!({"pc": pc, "text": instruction_text(ins)}))
                .collect();
            json!({
                "id": f["id"],
                "name": f["name"],
                "param_count": f["param_count"],
                "local_count": f["local_count"],
                "entry": f["id"].as_u64().is_some() && f["id"].as_u64() == entry,
                "instructions": lines,
            })
        })
        .collect();
    json!({
        "hash": hash,
        "names": names,
        "envelope": envelope_json(artifact),
        "functions": functions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_list_their_op_then_fields_in_key_order() {
        let ins = json!({"op": "Effect", "key": "charge", "has_input": true});
        assert_eq!(
            instruction_text(&ins),
            "Effect key=\"charge\" has_input=true"
        );
        assert_eq!(instruction_text(&json!({"op": "Return"})), "Return");
        assert_eq!(instruction_text(&json!(3)), "3");
    }

    #[test]
    fn a_program_without_its_artifact_is_listed_as_not_stored() {
        let j = program_summary("p", "h", None);
        assert_eq!(j["stored"], false);
        assert!(j.get("envelope").is_none());
        let a = json!({"envelope": {"frontend_id": "f"}, "program": {"entry": 0, "functions": [
            {"id": 0, "instructions": [{"op": "Nop"}, {"op": "Return"}]}, {"id": 1, "instructions": []}]}});
        let j = program_summary("p", "h", Some(&a));
        assert_eq!(
            (j["functions"].as_u64(), j["instructions"].as_u64()),
            (Some(2), Some(2))
        );
        let l = artifact_listing("h", &[], &a);
        assert_eq!(l["functions"][0]["entry"], true);
        assert_eq!(l["functions"][1]["entry"], false);
        assert_eq!(l["functions"][0]["instructions"][1]["text"], "Return");
    }

    #[test]
    fn a_lease_is_active_until_it_expires() {
        let mut row = ExecutionRow {
            id: "e".into(),
            artifact_hash: "h".into(),
            program_name: None,
            args: Default::default(),
            status: "runnable".into(),
            revision: 0,
            owner: Some("node-a".into()),
            lease_until: 1_000,
            cancel_requested: false,
            terminate_requested: false,
            result: None,
            message: None,
            error: None,
            pending: None,
            parent_id: None,
            parent_branch: None,
            created_ms: 0,
            updated_ms: 0,
            seq: 1,
            drive_attempts: 0,
            namespace: "default".into(),
            stored_traceparent: None,
        };
        assert_eq!(lease_json(&row, 999)["active"], true);
        assert_eq!(lease_json(&row, 1_000)["active"], false);
        assert_eq!(lease_json(&row, 999)["owner"], "node-a");
        row.owner = None;
        assert_eq!(lease_json(&row, 0), J::Null);
    }
}
