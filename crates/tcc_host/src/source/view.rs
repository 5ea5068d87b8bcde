//! The execution page's source members (`crate::ui::execution_doc`):
//! where the execution stands in its source, where each history step
//! stood, and the current values of its slots. Built from the stored
//! checkpoint chain (one pass over it, as `Host::load_continuation`
//! makes) and the artifact's spans.

use super::locate::location;
use super::rows::ArtifactSource;
use crate::store::{CheckpointRow, HistoryRow};
use crate::values::tagged_to_plain;
use serde_json::{Value as J, json};
use std::collections::HashMap;
use tcc_engine::continuation::Status;
use tcc_engine::{Continuation, Limits, apply_delta_text};

/// Longest canonical text of a slot value shown whole; a longer one is
/// shown as its first [`PREVIEW_CHARS`] characters.
pub const MAX_SLOT_TEXT: usize = 4096;
/// Characters of a long slot value's preview.
pub const PREVIEW_CHARS: usize = 512;

/// Where one checkpoint of the chain stood: its revision, its status and
/// its frames (`(func_id, pc)`, entry frame first).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Checkpoint revision.
    pub revision: u64,
    /// Its continuation's status.
    pub status: Status,
    /// Its frames, entry frame first.
    pub frames: Vec<(u32, u32)>,
}

impl Step {
    fn of(c: &Continuation) -> Step {
        Step {
            revision: c.revision,
            status: c.status,
            frames: c.frames.iter().map(|f| (f.func_id, f.pc)).collect(),
        }
    }
}

/// Replays a checkpoint chain (a snapshot, then deltas): the latest
/// continuation and the [`Step`] of every checkpoint. An error names the
/// checkpoint that could not be read.
pub fn replay(
    rows: &[CheckpointRow],
    limits: &Limits,
) -> Result<(Option<Continuation>, Vec<Step>), String> {
    let mut it = rows.iter();
    let Some(first) = it.next() else {
        return Ok((None, Vec::new()));
    };
    if first.kind != "snapshot" {
        return Err("the checkpoint chain does not start with a snapshot".into());
    }
    let first_text = first
        .body
        .text()
        .map_err(|e| format!("checkpoint r{}: {e}", first.revision))?;
    let mut c = Continuation::decode(first_text.as_bytes(), limits)
        .map_err(|e| format!("checkpoint r{}: {e}", first.revision))?;
    c.revision = first.revision;
    let mut steps = vec![Step::of(&c)];
    for row in it {
        let text = row
            .body
            .text()
            .map_err(|e| format!("checkpoint r{}: {e}", row.revision))?;
        c = apply_delta_text(&c, text.as_bytes(), limits)
            .map_err(|e| format!("checkpoint r{}: {e}", row.revision))?;
        c.revision = row.revision;
        steps.push(Step::of(&c));
    }
    Ok((Some(c), steps))
}

/// The instruction a frame stands at: a suspended continuation's top
/// frame has moved past the instruction that suspended it (its pc is the
/// next one), every other frame stands at its pc (a call's caller: past
/// the call; an effect in flight: at the Effect instruction).
pub fn shown_pc(status: Status, top: bool, pc: u32) -> u32 {
    if top && status == Status::Suspended {
        pc.saturating_sub(1)
    } else {
        pc
    }
}

/// The location of a step's top frame ([`location`]), if it has one.
pub fn step_location(artifact: &J, step: &Step, source: Option<&ArtifactSource>) -> Option<J> {
    let &(func_id, pc) = step.frames.last()?;
    location(
        artifact,
        u64::from(func_id),
        u64::from(shown_pc(step.status, true, pc)),
        source,
    )
}

/// The instruction `pc` of function `func_id` in an artifact's JSON.
fn instruction(artifact: &J, func_id: u64, pc: u64) -> Option<&J> {
    artifact["program"]["functions"]
        .as_array()?
        .iter()
        .find(|f| f["id"].as_u64() == Some(func_id))?["instructions"]
        .as_array()?
        .get(usize::try_from(pc).ok()?)
}

/// The Effect instruction that calls effect `key`: the first one whose
/// key is the constant loaded just before it (`(func_id, pc)`). A key
/// computed at run time has none.
pub fn effect_site(artifact: &J, key: &str) -> Option<(u64, u64)> {
    artifact["program"]["functions"]
        .as_array()?
        .iter()
        .find_map(|f| {
            let ins = f["instructions"].as_array()?;
            let pc = ins.windows(2).position(|w| {
                w[1]["op"] == "Effect"
                    && w[0]["op"] == "LoadConst"
                    && w[0]["value"]["t"] == "string"
                    && w[0]["value"]["v"] == key
            })?;
            Some((f["id"].as_u64()?, pc as u64 + 1))
        })
}

/// The location of each history entry, in order:
///
/// - an effect's (`effect`, `effect_attempt_failed`) is its Effect
///   instruction ([`effect_site`]), or, for a key computed at run time,
///   where the latest checkpoint before it stood when that is an Effect
///   instruction (a drive may run several effects between checkpoints);
/// - a `checkpoint` entry's is where its revision stood: from the chain
///   while it holds the revision, else from the top frame the entry
///   recorded (`func_id`, `pc`: hosts from issue 35 on record it, so a
///   finished execution's earlier steps keep their lines after its chain
///   was compacted to its last snapshot);
/// - any other entry's is where the latest checkpoint before it stood
///   (what the execution was doing then: an event arrives at the
///   checkpoint that waits).
///
/// Entries before the first checkpoint, and those of a revision no longer
/// in the chain whose checkpoint entry recorded no frame, have none.
pub fn history_locations(
    history: &[HistoryRow],
    steps: &[Step],
    artifact: &J,
    source: Option<&ArtifactSource>,
) -> Vec<Option<J>> {
    let by_revision: HashMap<u64, &Step> = steps.iter().map(|s| (s.revision, s)).collect();
    let mut recorded: HashMap<u64, Step> = HashMap::new();
    let mut cache: HashMap<u64, Option<J>> = HashMap::new();
    let mut current: Option<u64> = None;
    history
        .iter()
        .map(|h| {
            if h.kind == "checkpoint" {
                current = h.detail["revision"].as_u64();
                if let Some(step) = recorded_step(&h.detail) {
                    recorded.entry(step.revision).or_insert(step);
                }
            }
            let effect = h.kind == "effect" || h.kind == "effect_attempt_failed";
            if effect
                && let Some((func_id, pc)) = h.detail["key"]
                    .as_str()
                    .and_then(|k| effect_site(artifact, k))
            {
                return location(artifact, func_id, pc, source);
            }
            let revision = current?;
            let at = cache
                .entry(revision)
                .or_insert_with(|| {
                    by_revision
                        .get(&revision)
                        .copied()
                        .or_else(|| recorded.get(&revision))
                        .and_then(|s| step_location(artifact, s, source))
                        .map(|mut l| {
                            l["revision"] = revision.into();
                            l
                        })
                })
                .clone()?;
            let stands_at_effect = || {
                let (f, pc) = (at["func_id"].as_u64()?, at["pc"].as_u64()?);
                Some(instruction(artifact, f, pc)?["op"] == "Effect")
            };
            if effect && stands_at_effect() != Some(true) {
                return None;
            }
            Some(at)
        })
        .collect()
}

/// The step a `checkpoint` history entry recorded: its revision, and its
/// top frame (`func_id`, `pc`) when it has them. Only a suspension moves
/// the shown pc ([`shown_pc`]), so any other status reads as runnable.
fn recorded_step(detail: &J) -> Option<Step> {
    let revision = detail["revision"].as_u64()?;
    let func_id = u32::try_from(detail["func_id"].as_u64()?).ok()?;
    let pc = u32::try_from(detail["pc"].as_u64()?).ok()?;
    let status = if detail["status"] == "suspended" {
        Status::Suspended
    } else {
        Status::Runnable
    };
    Some(Step {
        revision,
        status,
        frames: vec![(func_id, pc)],
    })
}

/// A slot value as the page shows it: plain and tagged, or a preview of
/// its plain text when that is longer than [`MAX_SLOT_TEXT`].
fn slot_value(tagged: &J) -> J {
    let plain = tagged_to_plain(tagged);
    let text = tcc_ir::to_canonical(&plain);
    if text.len() > MAX_SLOT_TEXT {
        let preview: String = text.chars().take(PREVIEW_CHARS).collect();
        json!({"preview": preview, "truncated": true, "bytes": text.len()})
    } else {
        json!({"plain": plain, "tagged": tagged})
    }
}

/// Every frame of a continuation with its slots: `{func_id, function, pc,
/// source, slots: [{slot, param, value}]}`, entry frame first. Values are
/// inlined from the continuation's heap (a closure or a cycle, which
/// cannot be inlined, shows as its reference).
pub fn frames_with_slots(
    c: &Continuation,
    artifact: &J,
    source: Option<&ArtifactSource>,
) -> Vec<J> {
    let functions = artifact["program"]["functions"].as_array();
    let last = c.frames.len().saturating_sub(1);
    c.frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let func = functions.and_then(|fs| {
                fs.iter()
                    .find(|x| x["id"].as_u64() == Some(u64::from(f.func_id)))
            });
            let params = func.and_then(|x| x["param_count"].as_u64()).unwrap_or(0);
            let slots: Vec<J> = f
                .locals
                .iter()
                .enumerate()
                .map(|(slot, v)| {
                    let tagged = tcc_engine::json::export(&c.heap, v)
                        .unwrap_or_else(|_| tcc_engine::json::value_json(v));
                    json!({"slot": slot, "param": (slot as u64) < params, "value": slot_value(&tagged)})
                })
                .collect();
            let pc = shown_pc(c.status, i == last, f.pc);
            json!({
                "func_id": f.func_id,
                "function": func.map_or(J::Null, |x| x["name"].clone()),
                "pc": f.pc,
                "source": location(artifact, u64::from(f.func_id), u64::from(pc), source),
                "slots": slots,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suspended_top_frame_stands_at_the_instruction_before_its_pc() {
        assert_eq!(shown_pc(Status::Suspended, true, 8), 7);
        assert_eq!(shown_pc(Status::Suspended, false, 8), 8);
        assert_eq!(shown_pc(Status::Runnable, true, 8), 8);
        assert_eq!(shown_pc(Status::Suspended, true, 0), 0);
    }

    #[test]
    fn history_entries_stand_where_the_latest_checkpoint_stood() {
        let artifact = json!({"program": {"functions": [{"id": 0, "instructions": [
            {"op": "LoadLocal", "local": 0}, {"op": "Effect"}, {"op": "WaitForEvent"}], "spans": [
            {"file": "a.py", "start_line": 1, "start_column": 0, "end_line": 1, "end_column": 1},
            {"file": "a.py", "start_line": 2, "start_column": 0, "end_line": 2, "end_column": 1},
            {"file": "a.py", "start_line": 3, "start_column": 0, "end_line": 3, "end_column": 1}]}]}});
        let steps = [
            Step {
                revision: 1,
                status: Status::Runnable,
                frames: vec![(0, 1)],
            },
            Step {
                revision: 2,
                status: Status::Suspended,
                frames: vec![(0, 3)],
            },
        ];
        let h = |kind: &str, detail: J| HistoryRow {
            seq: 0,
            at_ms: 0,
            kind: kind.into(),
            detail,
        };
        let history = [
            h("created", json!({})),
            h("checkpoint", json!({"revision": 1})),
            h("effect", json!({})),
            h("checkpoint", json!({"revision": 2})),
            h("event_received", json!({})),
            // Its key computed at run time, and the checkpoint before it
            // stands at a wait: where it ran is not known.
            h("effect", json!({"key": "dynamic"})),
        ];
        let lines: Vec<Option<u64>> = history_locations(&history, &steps, &artifact, None)
            .iter()
            .map(|l| l.as_ref().and_then(|l| l["line"].as_u64()))
            .collect();
        assert_eq!(lines, [None, Some(2), Some(2), Some(3), Some(3), None]);
        // The chain holds only the last revision (compacted): the entries
        // that recorded their frame keep their line.
        let history = [
            h(
                "checkpoint",
                json!({"revision": 1, "status": "runnable", "func_id": 0, "pc": 1}),
            ),
            h("event_received", json!({})),
            h(
                "checkpoint",
                json!({"revision": 2, "status": "suspended", "func_id": 0, "pc": 3}),
            ),
            h("checkpoint", json!({"revision": 3, "status": "suspended"})),
            h("checkpoint", json!({"revision": 4, "status": "completed"})),
        ];
        let only_last = [Step {
            revision: 4,
            status: Status::Completed,
            frames: Vec::new(),
        }];
        let lines: Vec<Option<u64>> = history_locations(&history, &only_last, &artifact, None)
            .iter()
            .map(|l| l.as_ref().and_then(|l| l["line"].as_u64()))
            .collect();
        assert_eq!(lines, [Some(2), Some(2), Some(3), None, None]);
    }

    #[test]
    fn an_effect_is_found_by_its_constant_key() {
        let a = json!({"program": {"functions": [{"id": 3, "instructions": [
            {"op": "LoadConst", "value": {"t": "string", "v": "a"}}, {"op": "Effect"},
            {"op": "LoadLocal", "local": 0}, {"op": "Effect"},
            {"op": "LoadConst", "value": {"t": "string", "v": "b"}}, {"op": "Effect", "has_input": true}]}]}});
        assert_eq!(effect_site(&a, "a"), Some((3, 1)));
        assert_eq!(effect_site(&a, "b"), Some((3, 5)));
        assert_eq!(effect_site(&a, "c"), None);
    }

    #[test]
    fn long_slot_values_are_previewed() {
        let long = json!({"t": "string", "v": "x".repeat(MAX_SLOT_TEXT + 1)});
        let v = slot_value(&long);
        assert_eq!(v["truncated"], true);
        assert_eq!(
            v["preview"].as_str().map(|p| p.chars().count()),
            Some(PREVIEW_CHARS)
        );
        assert_eq!(slot_value(&json!({"t": "number", "v": 3}))["plain"], 3);
    }
}
