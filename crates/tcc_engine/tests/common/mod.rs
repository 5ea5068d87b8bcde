//! Helpers: build artifacts in Rust and drive executions.
#![allow(dead_code)]

use serde_json::{Value as J, json};
use std::sync::Arc;
use tcc_engine::local_host::{EffectAnswer, LocalHost};
use tcc_engine::{Execution, HostResponse, Limits, Outcome, Program};
pub use tcc_ir::Instruction;
use tcc_ir::{Artifact, Constant, Envelope, FeatureSet, Function, Program as IrProgram};

pub use Instruction as I;

pub mod generate;

pub fn c_num(n: f64) -> Instruction {
    I::LoadConst {
        value: Constant::Number(n),
    }
}
pub fn c_str(s: &str) -> Instruction {
    I::LoadConst {
        value: Constant::String(s.into()),
    }
}
pub fn c_bool(b: bool) -> Instruction {
    I::LoadConst {
        value: Constant::Bool(b),
    }
}
pub fn c_undef() -> Instruction {
    I::LoadConst {
        value: Constant::Undefined,
    }
}

pub fn func(id: u32, params: u32, locals: u32, code: Vec<Instruction>) -> Function {
    Function {
        id,
        name: format!("f{id}"),
        param_count: params,
        local_count: locals,
        spans: vec![None; code.len()],
        instructions: code,
        param_defaults: None,
    }
}

pub fn artifact(lang: &str, functions: Vec<Function>) -> Artifact {
    let mut features = vec!["ts.control_flow".to_string()];
    let mut caps = vec![
        "host.persist_checkpoint".to_string(),
        "host.persist_checkpoint_delta".to_string(),
    ];
    let all: Vec<&Instruction> = functions
        .iter()
        .flat_map(|f| f.instructions.iter())
        .collect();
    let mut add = |f: &str, c: Option<&str>| {
        if !features.iter().any(|x| x == f) {
            features.push(f.into());
        }
        if let Some(c) = c
            && !caps.iter().any(|x| x == c)
        {
            caps.push(c.into());
        }
    };
    for i in all {
        match i.group() {
            tcc_ir::InstructionGroup::Compute => add("lang.compute", None),
            tcc_ir::InstructionGroup::Exceptions => add("ts.exceptions", None),
            tcc_ir::InstructionGroup::Concurrency => add("durable.concurrent_group", None),
            _ => {}
        }
        match i {
            I::Effect { .. } => add("durable.effect", Some("host.effect")),
            I::Sleep => add("durable.sleep", Some("host.timer")),
            I::WaitForEvent => add("durable.wait_for_event", Some("host.event")),
            I::Invoke { .. } => add("durable.invoke", Some("host.child")),
            I::Call { .. } => add("lang.compute", None),
            _ => {}
        }
    }
    let mut a = Artifact {
        envelope: Envelope {
            artifact_hash: String::new(),
            frontend_id: "irkit-tests".into(),
            frontend_version: "1".into(),
            language_semantics_version: lang.into(),
            engine_format_version: 1,
            required_engine_features: features,
            required_host_capabilities: caps,
            runtime_modules: vec![],
        },
        program: IrProgram {
            entry: functions[0].id,
            functions,
        },
    };
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    a
}

pub fn program(lang: &str, functions: Vec<Function>) -> Arc<Program> {
    Arc::new(
        Program::new(
            artifact(lang, functions),
            &FeatureSet::all_host_capabilities(),
        )
        .expect("valid artifact"),
    )
}

pub fn ts(code: Vec<Instruction>, locals: u32) -> Arc<Program> {
    program("ts.subset.v1", vec![func(0, 0, locals, code)])
}

pub fn num(n: f64) -> J {
    json!({"t": "number", "v": tcc_engine::json::number_json(n)})
}
pub fn string(s: &str) -> J {
    json!({"t": "string", "v": s})
}

/// Runs with the local host and returns the final outcome envelope.
pub fn run_host(p: Arc<Program>, host: &LocalHost) -> J {
    host.run(p, "test", &[]).expect("host run").outcome
}

pub fn host() -> LocalHost {
    LocalHost::new()
}

pub fn host_with_effects(effects: &[(&str, EffectAnswer)]) -> LocalHost {
    let mut h = LocalHost::new();
    for (k, a) in effects {
        h.effects.insert(k.to_string(), a.clone());
    }
    h
}

/// Runs a program with no durable ops and returns the completed result.
pub fn eval(p: Arc<Program>) -> J {
    let out = run_host(p, &host());
    assert_eq!(out["type"], "completed", "{out}");
    out["result"].clone()
}

/// Starts an execution and runs until the first non-checkpoint outcome,
/// confirming checkpoints.
pub fn start(p: Arc<Program>) -> Execution {
    Execution::start(p, "first", &[], Limits::default()).expect("start")
}

pub fn next(e: &mut Execution) -> Outcome {
    loop {
        let o = e.run_until_host(1_000_000).expect("run");
        if let Outcome::Host(tcc_engine::HostRequest::PersistCheckpoint { revision, .. }) = o {
            e.respond(HostResponse::PersistConfirmed { revision })
                .expect("confirm");
            continue;
        }
        return o;
    }
}

pub fn request_json(o: &Outcome) -> J {
    match o {
        Outcome::Host(r) => r.to_json(),
        other => panic!("expected a host request, got {other:?}"),
    }
}
