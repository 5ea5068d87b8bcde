//! Continuations written by irkit's engine before the reference-compatibility
//! change (main fd01396; `tests/fixtures/old-continuations/README.md`) resume
//! on today's engine and finish with the program's result.

use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tcc_engine::{Continuation, Execution, HostRequest, HostResponse, Limits, Outcome, Program};
use tcc_ir::FeatureSet;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/old-continuations")
}

fn program(name: &str) -> Arc<Program> {
    let bytes = std::fs::read(dir().join(name)).unwrap();
    let artifact = tcc_ir::decode_artifact(&bytes).unwrap();
    Arc::new(Program::new(artifact, &FeatureSet::all_host_capabilities()).unwrap())
}

/// Resumes `continuation` on `artifact`, confirming checkpoints, acking
/// registrations and answering each suspension with the next of `wakes`;
/// returns the outcome and the revisions checkpointed.
fn resume(artifact: &str, continuation: &str, mut wakes: Vec<HostResponse>) -> (J, Vec<u64>) {
    let text = std::fs::read(dir().join(continuation)).unwrap();
    let c = Continuation::decode(&text, &Limits::default()).unwrap();
    let mut e = Execution::resume(program(artifact), c, Limits::default()).unwrap();
    wakes.reverse();
    let mut revisions = Vec::new();
    loop {
        let response = match e.run_until_host(1_000_000).unwrap() {
            Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) => {
                revisions.push(revision);
                HostResponse::PersistConfirmed { revision }
            }
            Outcome::Host(HostRequest::RunEffect { key, .. }) => {
                panic!("effect {key} re-ran after resume")
            }
            Outcome::Host(_) => HostResponse::Ack,
            Outcome::Suspended => wakes.pop().expect("a wake for the suspension"),
            Outcome::BudgetExhausted => continue,
            done => return (done.to_json(), revisions),
        };
        e.respond(response).unwrap();
    }
}

fn completed(result: J) -> J {
    json!({"host_protocol_version": 1, "type": "completed", "result": result})
}

fn s(v: &str) -> J {
    json!({"t": "string", "v": v})
}

fn event(branch: &str) -> HostResponse {
    HostResponse::EventPayload {
        value: s("ok"),
        branch: Some(branch.into()),
    }
}

#[test]
fn a_join_settled_by_the_old_extra_checkpoint_delivers() {
    let (out, revs) = resume("p-gather.json", "p-gather.settled.json", vec![]);
    assert_eq!(
        out,
        completed(json!({"t": "array", "v": [{"t": "number", "v": 1}, {"t": "number", "v": 2}]}))
    );
    assert_eq!(revs, [4]);
}

#[test]
fn a_join_whose_branches_completed_settles_at_the_join() {
    let (out, revs) = resume("p-gather.json", "p-gather.at-join.json", vec![]);
    assert_eq!(
        out,
        completed(json!({"t": "array", "v": [{"t": "number", "v": 1}, {"t": "number", "v": 2}]}))
    );
    // The JoinAll settles without a checkpoint of its own now.
    assert_eq!(revs, [3]);
}

#[test]
fn a_suspended_race_and_group_take_their_wakes() {
    let (out, _) = resume(
        "p-race.json",
        "p-race.suspended.json",
        vec![event("run:0:0:0")],
    );
    assert_eq!(out, completed(s("ok")));
    let (out, _) = resume(
        "p-gather-waits.json",
        "p-gather-waits.suspended.json",
        vec![event("run:0:0:1"), event("run:0:0:0")],
    );
    assert_eq!(
        out,
        completed(json!({"t": "array", "v": [s("ok"), s("ok")]}))
    );
}

#[test]
fn the_checkpoint_after_a_caught_failure_resumes() {
    let (out, revs) = resume("p-effect-fail.json", "p-effect-fail.caught.json", vec![]);
    assert_eq!(out, completed(s("caught")));
    assert_eq!(revs, [2]);
}
