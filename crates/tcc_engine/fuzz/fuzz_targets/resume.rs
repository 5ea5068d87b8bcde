//! Arbitrary bytes as an artifact (first half) and a continuation (second
//! half): decode, validate, resume and run a bounded number of steps. Any
//! outcome is fine; a panic, abort, hang or unbounded allocation is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use tcc_engine::{Continuation, Execution, HostResponse, Limits, Outcome, Program};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (art, cont) = data.split_at(split);
    let Ok(artifact) = tcc_ir::decode_artifact(art) else { return };
    let Ok(program) = Program::new(artifact, &tcc_ir::FeatureSet::all_host_capabilities()) else { return };
    let program = Arc::new(program);
    let limits = Limits { max_heap_cells: 1 << 14, max_stack: 1 << 14, ..Limits::default() };
    let exec = match cont.get(1..) {
        Some(c) if !c.is_empty() => match Continuation::decode(c, &limits) {
            Ok(c) => Execution::resume(program, c, limits),
            Err(_) => return,
        },
        _ => Execution::start(program, "fuzz", &[], limits),
    };
    let Ok(mut exec) = exec else { return };
    for _ in 0..16 {
        let r = match exec.run_until_host(10_000) {
            Ok(Outcome::Host(tcc_engine::HostRequest::PersistCheckpoint { revision, .. })) => {
                HostResponse::PersistConfirmed { revision }
            }
            Ok(Outcome::Host(tcc_engine::HostRequest::RunEffect { .. })) => {
                HostResponse::EffectFailed { message: "fuzz".into() }
            }
            Ok(Outcome::Host(_)) => HostResponse::Ack,
            Ok(Outcome::Suspended) => HostResponse::TimerFired { branch: None },
            Ok(Outcome::BudgetExhausted) => continue,
            _ => return,
        };
        let _ = exec.respond(r);
    }
});
