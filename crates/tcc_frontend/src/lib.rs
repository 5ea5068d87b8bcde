//! TCC language frontends: Python (`py.subset.v1`) and TypeScript
//! (`ts.subset.v1`) source → TCC program artifacts.
//!
//! Data flow: source text → parser (`rustpython-parser`, `oxc_parser`) →
//! language lowering ([`python`], [`typescript`]: names resolved, subset
//! checked, language rules chosen) → [`hir::Module`] → [`codegen`] →
//! [`tcc_ir::Artifact`] with a derived envelope and its hash, checked with
//! [`tcc_ir::validate`] before it is returned. Anything outside the subset
//! is a [`FrontendError`] with a stable `TCC-F…` code and a position.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod array_methods;
pub mod codegen;
pub mod error;
pub mod hir;
mod lowering;
pub mod primitives;
pub mod python;
pub mod repetition;
pub mod rust;
pub mod typescript;

use std::path::Path;

use tcc_ir::{
    Artifact, ENGINE_FORMAT_VERSION, Envelope, FeatureSet, Instruction, InstructionGroup,
    LanguageSemantics, Program, features as f,
};

pub use error::{Code, FrontendError, LineIndex};
pub use primitives::{MAX_DEPTH, Prim, number_literal};

/// Version written as `frontend_version`.
pub const FRONTEND_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Largest source accepted (bytes).
pub const MAX_SOURCE_BYTES: usize = 16 * 1024 * 1024;

/// A source language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python subset, `.py`.
    Python,
    /// TypeScript subset, `.ts`.
    TypeScript,
    /// Rust subset, `.rs`.
    Rust,
}

impl Language {
    /// The language of a path by its extension (`.py`, `.ts`).
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("py") => Some(Language::Python),
            Some("ts") | Some("mts") => Some(Language::TypeScript),
            Some("rs") => Some(Language::Rust),
            _ => None,
        }
    }

    /// `frontend_id` of irkit's frontend for this language.
    pub fn frontend_id(self) -> &'static str {
        match self {
            Language::Python => "irkit-python",
            Language::TypeScript => "irkit-typescript",
            Language::Rust => "irkit-rust",
        }
    }

    /// The semantics version the artifact declares.
    pub fn semantics(self) -> LanguageSemantics {
        match self {
            Language::Python => LanguageSemantics::PySubsetV1,
            Language::TypeScript => LanguageSemantics::TsSubsetV1,
            Language::Rust => LanguageSemantics::RustSubsetV1,
        }
    }
}

/// Runs only the parser of `language` (the baseline of the compile
/// benchmark); `Err` carries the parser's first error.
pub fn parse_only(source: &str, language: Language) -> Result<(), FrontendError> {
    match language {
        Language::Python => python::parse_only(source),
        Language::TypeScript => typescript::parse_only(source),
        Language::Rust => rust::parse_only(source),
    }
}

/// Compiles `source` (named `file` in spans and diagnostics) to an artifact.
pub fn compile(source: &str, file: &str, language: Language) -> Result<Artifact, FrontendError> {
    let lines = LineIndex::new(source);
    if source.len() > MAX_SOURCE_BYTES {
        return Err(FrontendError::new(
            Code::Limit,
            format!("source larger than {MAX_SOURCE_BYTES} bytes"),
            hir::Pos::default(),
        )
        .locate(&lines));
    }
    // Parsers and the lowering recurse over the syntax tree; a stack that
    // grows with the input keeps deep but legal nesting from overflowing.
    let stack = (64 << 20) + source.len().saturating_mul(2048).min(1 << 30);
    let result = std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(s, || compile_here(source, file, language, &lines));
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(FrontendError::new(
                    Code::Internal,
                    "internal frontend error (panic)",
                    hir::Pos::default(),
                ))
            }),
            Err(e) => Err(FrontendError::new(
                Code::Limit,
                format!("cannot start the compiler thread: {e}"),
                hir::Pos::default(),
            )),
        }
    });
    result.map_err(|e| e.locate(&lines))
}

fn compile_here(
    source: &str,
    file: &str,
    language: Language,
    lines: &LineIndex,
) -> Result<Artifact, FrontendError> {
    let mut module = match language {
        Language::Python => python::lower(source, file)?,
        Language::TypeScript => typescript::lower(source, file)?,
        Language::Rust => rust::lower(source, file)?,
    };
    if module.funcs.len() > 1024 {
        return Err(FrontendError::new(
            Code::Limit,
            "more than 1024 functions",
            hir::Pos::default(),
        ));
    }
    repetition::make_repetition_safe(&mut module)?;
    let functions = codegen::generate(&module, language.semantics(), file, lines)?;
    let program = Program {
        entry: module.entry as u32,
        functions,
    };
    let (features, capabilities) = requirements(&program);
    let envelope = Envelope {
        artifact_hash: String::new(),
        frontend_id: language.frontend_id().to_string(),
        frontend_version: FRONTEND_VERSION.to_string(),
        language_semantics_version: language.semantics().as_str().to_string(),
        engine_format_version: ENGINE_FORMAT_VERSION,
        required_engine_features: features,
        required_host_capabilities: capabilities,
        runtime_modules: Vec::new(),
    };
    let mut artifact = Artifact { envelope, program };
    artifact.envelope.artifact_hash = tcc_ir::compute_hash(&artifact);
    if let Err(e) = tcc_ir::validate(
        &artifact,
        &FeatureSet::all_engine_features(),
        &FeatureSet::all_host_capabilities(),
    ) {
        let pos = module
            .funcs
            .get(module.entry)
            .map(|f| f.pos)
            .unwrap_or_default();
        let code = match e {
            tcc_ir::ValidationError::TooManyFunctions { .. }
            | tcc_ir::ValidationError::TooManyInstructions { .. }
            | tcc_ir::ValidationError::TooManyLocals { .. }
            | tcc_ir::ValidationError::StringTooLong { .. } => Code::Limit,
            _ => Code::Internal,
        };
        return Err(FrontendError::new(
            code,
            format!("the program exceeds an artifact limit: {e}"),
            pos,
        ));
    }
    Ok(artifact)
}

/// Engine features and host capabilities, derived from the instructions:
/// `ts.control_flow` and `host.persist_checkpoint` first, then each in the
/// order of first use (functions in id order, instructions by pc), and
/// last `irkit.catchable_cancel` when the entry function has both a
/// durable operation and a `PushTry`, then `irkit.catchable_child_failure`
/// when it has both an `Invoke` and a `PushTry`.
pub fn requirements(program: &Program) -> (Vec<String>, Vec<String>) {
    // Ids by small index; a bit set says which are listed (the loop runs
    // once per instruction, so it compares no strings).
    const FEATURES: [&str; 10] = [
        f::CONTROL_FLOW,
        f::EFFECT,
        f::SLEEP,
        f::WAIT_FOR_EVENT,
        f::INVOKE,
        f::CONCURRENT_GROUP,
        f::EXCEPTIONS,
        f::LANG_COMPUTE,
        f::CATCHABLE_CANCEL,
        f::CATCHABLE_CHILD_FAILURE,
    ];
    const CAPS: [&str; 5] = [
        "host.persist_checkpoint",
        "host.effect",
        "host.timer",
        "host.event",
        "host.child",
    ];
    let mut features = vec![0usize];
    let mut caps = vec![0usize];
    let (mut seen_f, mut seen_c) = (1u16, 1u16);
    // Durable operations run in the entry function only; one that runs
    // inside a `try` there makes a cancellation catchable (below).
    let (mut entry_awaits, mut entry_tries, mut entry_invokes) = (false, false, false);
    for func in &program.functions {
        let is_entry = func.id == program.entry;
        for ins in &func.instructions {
            if is_entry {
                match ins {
                    Instruction::Invoke { .. } => {
                        entry_awaits = true;
                        entry_invokes = true;
                    }
                    Instruction::Effect { .. }
                    | Instruction::Sleep
                    | Instruction::WaitForEvent
                    | Instruction::Fork { .. } => entry_awaits = true,
                    Instruction::PushTry { .. } => entry_tries = true,
                    _ => {}
                }
            }
            let (feature, cap) = match ins {
                Instruction::Effect { .. } => (1, 1),
                Instruction::Sleep => (2, 2),
                Instruction::WaitForEvent => (3, 3),
                Instruction::Invoke { .. } => (4, 4),
                Instruction::Fork { .. } | Instruction::JoinAll | Instruction::JoinAny => (5, 0),
                Instruction::Throw | Instruction::PushTry { .. } | Instruction::PopTry => (6, 0),
                other if other.group() == InstructionGroup::Compute => (7, 0),
                _ => (0, 0),
            };
            if seen_f & (1 << feature) == 0 {
                seen_f |= 1 << feature;
                features.push(feature);
            }
            if seen_c & (1 << cap) == 0 {
                seen_c |= 1 << cap;
                caps.push(cap);
            }
        }
    }
    // An entry function that both awaits and handles errors is cancelled
    // through its handlers (`irkit.catchable_cancel`, docs/tcc/frontends.md):
    // the feature makes an engine without it refuse the artifact rather
    // than end it at once without its compensation.
    if entry_awaits && entry_tries {
        features.push(8);
    }
    // A child's failure is thrown in a parent that invokes inside a `try`
    // (`irkit.catchable_child_failure`), instead of failing the parent.
    if entry_invokes && entry_tries {
        features.push(9);
    }
    (
        features.iter().map(|&i| FEATURES[i].to_string()).collect(),
        caps.iter().map(|&i| CAPS[i].to_string()).collect(),
    )
}
