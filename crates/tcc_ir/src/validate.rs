//! Validation (spec section "Validation"): the checks an engine runs on a
//! decoded artifact before executing it.
//!
//! Validation never trusts the artifact: every index is range-checked, and
//! the work is linear in the artifact's size. Resume-time checks of a
//! continuation against its artifact belong to the engine; they use
//! [`Program::function`](crate::Program::function) and
//! [`Function::instruction_count`](crate::Function::instruction_count).

use crate::artifact::{Artifact, ENGINE_FORMAT_VERSION, Function, LANGUAGE_SEMANTICS_VERSIONS};
use crate::constant::Constant;
use crate::error::{Location, ValidationError as E};
use crate::features::{FeatureSet, is_known_engine_feature, is_known_host_capability};
use crate::instruction::Instruction;
use std::collections::BTreeSet;

/// At most this many functions per program.
pub const MAX_FUNCTIONS: usize = 1024;
/// At most this many instructions per function.
pub const MAX_INSTRUCTIONS: usize = 100_000;
/// At most this many locals per function.
pub const MAX_LOCALS: u32 = 4096;
/// At most this many UTF-8 bytes per constant string or property key.
pub const MAX_STRING_BYTES: usize = 1_048_576;
/// Fork branch counts are `1..=MAX_FORK_COUNT`.
pub const MAX_FORK_COUNT: u32 = 32;
/// [`validate_all`] stops after this many errors.
pub const MAX_REPORTED_ERRORS: usize = 256;

/// Validates `artifact` for an engine implementing `engine_features` on a
/// host providing `host_capabilities`; returns the first error found.
pub fn validate(
    artifact: &Artifact,
    engine_features: &FeatureSet,
    host_capabilities: &FeatureSet,
) -> Result<(), E> {
    let mut v = Validator {
        errors: Vec::new(),
        limit: 1,
    };
    v.run(artifact, engine_features, host_capabilities);
    match v.errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Like [`validate`], but collects every error (up to
/// [`MAX_REPORTED_ERRORS`]) in a deterministic order: envelope first, then
/// program-level rules, then functions in order and instructions by pc.
pub fn validate_all(
    artifact: &Artifact,
    engine_features: &FeatureSet,
    host_capabilities: &FeatureSet,
) -> Vec<E> {
    let mut v = Validator {
        errors: Vec::new(),
        limit: MAX_REPORTED_ERRORS,
    };
    v.run(artifact, engine_features, host_capabilities);
    v.errors
}

struct Validator {
    errors: Vec<E>,
    limit: usize,
}

impl Validator {
    fn full(&self) -> bool {
        self.errors.len() >= self.limit
    }

    fn push(&mut self, e: E) {
        if !self.full() {
            self.errors.push(e);
        }
    }

    fn run(&mut self, artifact: &Artifact, engine: &FeatureSet, host: &FeatureSet) {
        let env = &artifact.envelope;
        if env.engine_format_version != ENGINE_FORMAT_VERSION {
            self.push(E::UnsupportedFormatVersion {
                found: env.engine_format_version,
            });
        }
        if env.artifact_hash.is_empty() {
            self.push(E::EmptyArtifactHash);
        }
        if env.frontend_id.is_empty() {
            self.push(E::EmptyFrontendId);
        }
        if !LANGUAGE_SEMANTICS_VERSIONS.contains(&env.language_semantics_version.as_str()) {
            self.push(E::UnknownSemanticsVersion {
                found: env.language_semantics_version.clone(),
            });
        }
        for feature in &env.required_engine_features {
            if !is_known_engine_feature(feature) {
                self.push(E::UnknownEngineFeature {
                    feature: feature.clone(),
                });
            } else if !engine.contains(feature) {
                self.push(E::UnsupportedEngineFeature {
                    feature: feature.clone(),
                });
            }
        }
        for capability in &env.required_host_capabilities {
            if !is_known_host_capability(capability) {
                self.push(E::UnknownHostCapability {
                    capability: capability.clone(),
                });
            } else if !host.contains(capability) {
                self.push(E::UnsupportedHostCapability {
                    capability: capability.clone(),
                });
            }
        }

        let program = &artifact.program;
        if program.functions.is_empty() {
            self.push(E::EmptyProgram);
            return;
        }
        if program.functions.len() > MAX_FUNCTIONS {
            self.push(E::TooManyFunctions {
                count: program.functions.len(),
                max: MAX_FUNCTIONS,
            });
        }
        let mut by_id: Vec<(u32, usize)> = program
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id, i))
            .collect();
        by_id.sort_unstable();
        let mut duplicates: Vec<E> = by_id
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .map(|w| E::DuplicateFunctionId {
                id: w[0].0,
                first: w[0].1,
                second: w[1].1,
            })
            .collect();
        duplicates.sort_by_key(|e| match e {
            E::DuplicateFunctionId { second, .. } => *second,
            _ => 0,
        });
        for e in duplicates {
            self.push(e);
        }
        let exists = |id: u32| by_id.binary_search_by_key(&id, |&(fid, _)| fid).is_ok();
        if !exists(program.entry) {
            self.push(E::MissingEntry {
                entry: program.entry,
            });
        }
        let declared: BTreeSet<&str> = env
            .required_engine_features
            .iter()
            .map(String::as_str)
            .collect();
        for (index, function) in program.functions.iter().enumerate() {
            if self.full() {
                return;
            }
            self.function(index, function, &exists, &declared);
        }
    }

    fn function(
        &mut self,
        index: usize,
        f: &Function,
        exists: &dyn Fn(u32) -> bool,
        declared: &BTreeSet<&str>,
    ) {
        let at = |pc: Option<u32>| Location {
            function: f.id,
            function_index: index,
            pc,
        };
        if f.local_count > MAX_LOCALS {
            self.push(E::TooManyLocals {
                at: at(None),
                count: f.local_count,
                max: MAX_LOCALS,
            });
        }
        if f.param_count > f.local_count {
            self.push(E::ParamCountExceedsLocals {
                at: at(None),
                param_count: f.param_count,
                local_count: f.local_count,
            });
        }
        let len = f.instructions.len();
        if len > MAX_INSTRUCTIONS {
            self.push(E::TooManyInstructions {
                at: at(None),
                count: len,
                max: MAX_INSTRUCTIONS,
            });
        }
        if f.spans.len() != len {
            self.push(E::SpanCountMismatch {
                at: at(None),
                spans: f.spans.len(),
                instructions: len,
            });
        }
        if let Some(defaults) = &f.param_defaults {
            if defaults.len() != f.param_count as usize {
                self.push(E::ParamDefaultsMismatch {
                    at: at(None),
                    defaults: defaults.len(),
                    param_count: f.param_count,
                });
            }
            for d in defaults.iter().flatten() {
                if let Constant::String(s) = d {
                    self.string(at(None), "param default string", s);
                }
            }
        }
        let mut reported_features: Vec<&'static str> = Vec::new();
        for (pc, ins) in f.instructions.iter().enumerate() {
            if self.full() {
                return;
            }
            // pc < len <= usize; functions over u32::MAX instructions are
            // already rejected by the cap and cannot be addressed anyway.
            let Ok(pc) = u32::try_from(pc) else {
                return;
            };
            let here = at(Some(pc));
            let op = ins.name();
            for (field, target) in ins.pc_operands() {
                if target as usize >= len {
                    self.push(E::TargetOutOfRange {
                        at: here,
                        op,
                        field,
                        target,
                        len,
                    });
                }
            }
            if let Some(local) = ins.local_operand()
                && local >= f.local_count
            {
                self.push(E::LocalOutOfRange {
                    at: here,
                    op,
                    local,
                    local_count: f.local_count,
                });
            }
            if let Some(func) = ins.function_operand()
                && !exists(func)
            {
                self.push(E::UnknownFunction { at: here, op, func });
            }
            if let Some(feature) = ins.required_feature()
                && !declared.contains(feature)
                && !reported_features.contains(&feature)
            {
                reported_features.push(feature);
                self.push(E::UndeclaredFeature {
                    at: here,
                    op,
                    feature,
                });
            }
            match ins {
                Instruction::Fork { count, .. } if !(1..=MAX_FORK_COUNT).contains(count) => {
                    self.push(E::ForkCountOutOfRange {
                        at: here,
                        count: *count,
                    });
                }
                Instruction::LoadConst {
                    value: Constant::String(s),
                } => self.string(here, "const string", s),
                Instruction::SetProp { key } | Instruction::GetProp { key } => {
                    self.string(here, "property key", key)
                }
                _ => {}
            }
        }
    }

    fn string(&mut self, at: Location, what: &'static str, s: &str) {
        if s.len() > MAX_STRING_BYTES {
            self.push(E::StringTooLong {
                at,
                what,
                bytes: s.len(),
                max: MAX_STRING_BYTES,
            });
        }
    }
}
