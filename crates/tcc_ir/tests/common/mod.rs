//! Helpers shared by the integration tests.
#![allow(dead_code)]

use tcc_ir::{Artifact, Envelope, Function, Instruction, Program};

/// A small valid artifact: one entry function with two locals.
pub fn base() -> Artifact {
    let instructions = vec![
        Instruction::LoadLocal { local: 0 },
        Instruction::StoreLocal { local: 1 },
        Instruction::LoadLocal { local: 1 },
        Instruction::Return,
    ];
    let artifact = Artifact {
        envelope: Envelope {
            artifact_hash: String::new(),
            frontend_id: "typescript".into(),
            frontend_version: "26.10.0".into(),
            language_semantics_version: "ts.subset.v1".into(),
            engine_format_version: 1,
            required_engine_features: vec!["ts.control_flow".into()],
            required_host_capabilities: vec!["host.persist_checkpoint".into()],
            runtime_modules: vec![],
        },
        program: Program {
            entry: 0,
            functions: vec![Function {
                id: 0,
                name: "run".into(),
                param_count: 1,
                local_count: 2,
                spans: vec![None; instructions.len()],
                instructions,
                param_defaults: None,
            }],
        },
    };
    tcc_ir::encode::with_computed_hash(&artifact)
}

/// `base()` with the entry function's instructions replaced (spans follow).
pub fn with_code(instructions: Vec<Instruction>) -> Artifact {
    let mut a = base();
    let f = &mut a.program.functions[0];
    f.spans = vec![None; instructions.len()];
    f.instructions = instructions;
    a
}

/// Canonical JSON text of an artifact.
pub fn json(a: &Artifact) -> String {
    tcc_ir::encode_artifact_string(a)
}
