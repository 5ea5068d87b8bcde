//! Section 3: modules, stages, functions and blocks; uniform and function
//! names and their uniqueness scopes; entry selection.
//!
//! Ownership in the IR makes some rules hold by construction: a block
//! lives in exactly one function's block arena (so it belongs to one
//! function and appears once in its list), functions live in their stage's
//! arena (so no function or block is shared between stages), and branch
//! targets and callees are handles into the owning function's and stage's
//! arenas. What remains checkable — handles out of range, missing blocks,
//! terminators and entries — is checked here.

use super::diagnostic::{Check, Rule, Subject, fail};
use crate::ir::{
    Function, Handle, Module, Stage, StageKind, TerminatorKind, TypeInner, UniformKind,
};
use std::collections::HashMap;

/// Both stage objects have their designated kinds.
pub(crate) fn check_stage_kinds(module: &Module) -> Check {
    for (stage, expected) in [
        (&module.vertex, StageKind::Vertex),
        (&module.fragment, StageKind::Fragment),
    ] {
        if stage.kind != expected {
            return Err(fail(
                Rule::Container,
                Subject::Stage(expected),
                stage.span.or(module.span),
                format!(
                    "the {} stage object has the {} stage kind",
                    expected.keyword(),
                    stage.kind.keyword()
                ),
            ));
        }
    }
    Ok(())
}

/// Uniforms: nonempty names unique module-wide, value types matching the
/// declaration form.
pub(crate) fn check_uniforms(module: &Module) -> Check {
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (slot, u) in module.uniforms.iter().enumerate() {
        let err = |m: String| fail(Rule::Container, Subject::Uniform(slot), u.span, m);
        if u.name.is_empty() {
            return Err(err("uniform name is empty".into()));
        }
        if let Some(first) = names.insert(u.name.as_str(), slot) {
            return Err(err(format!(
                "uniform name {:?} is already used by uniform u{first} (uniform names are unique module-wide)",
                u.name
            )));
        }
        let Some(t) = module.types.inner(u.ty) else {
            return Err(fail(
                Rule::Type,
                Subject::Uniform(slot),
                u.span,
                "uniform type handle is out of range",
            ));
        };
        let ok = match u.kind {
            UniformKind::Scalar => matches!(
                t,
                TypeInner::Scalar(_)
                    | TypeInner::Vector { .. }
                    | TypeInner::Matrix { .. }
                    | TypeInner::Sampler(_)
            ),
            UniformKind::Record => matches!(t, TypeInner::Record(_)),
            UniformKind::Array => matches!(t, TypeInner::Array { .. }),
        };
        if !ok {
            let what = match u.kind {
                UniformKind::Scalar => "a scalar uniform needs a non-aggregate value type",
                UniformKind::Record => "a record uniform needs a record type",
                UniformKind::Array => "an array uniform needs an array type",
            };
            return Err(fail(
                Rule::Type,
                Subject::Uniform(slot),
                u.span,
                format!(
                    "{what}, not {}",
                    super::types::describe(&module.types, u.ty)
                ),
            ));
        }
    }
    Ok(())
}

/// Function names (nonempty, unique per stage; separate from interface
/// names), the entry selection, and per-function structure: return and
/// parameter types, at least one block, terminators present, branch
/// targets in range (callees: with the call's type rules).
pub(crate) fn check_functions(module: &Module, stage: &Stage) -> Check {
    let kind = stage.kind;
    let mut names: HashMap<&str, Handle<Function>> = HashMap::new();
    for (h, f) in stage.functions.iter() {
        let subject = Subject::Function {
            stage: kind,
            function: h,
        };
        let err = |m: String| fail(Rule::Container, subject, f.span, m);
        if f.name.is_empty() {
            return Err(err("function name is empty".into()));
        }
        if let Some(first) = names.insert(f.name.as_str(), h) {
            return Err(err(format!(
                "function name {:?} is already used by function f{} of this stage",
                f.name,
                first.index()
            )));
        }
        if module.types.inner(f.return_type).is_none() {
            return Err(fail(
                Rule::Type,
                subject,
                f.span,
                "return type handle is out of range",
            ));
        }
        for (slot, p) in f.parameters.iter().enumerate() {
            let ps = Subject::Parameter {
                stage: kind,
                function: h,
                slot,
            };
            match module.types.inner(p.ty) {
                None => {
                    return Err(fail(
                        Rule::Type,
                        ps,
                        p.span,
                        "parameter type handle is out of range",
                    ));
                }
                Some(TypeInner::Void) => {
                    return Err(fail(
                        Rule::Type,
                        ps,
                        p.span,
                        "parameter type is void (void is only a function return type)",
                    ));
                }
                Some(_) => {}
            }
        }
        check_blocks(stage, h, f)?;
    }
    let entry = match stage.entry {
        None => {
            return Err(fail(
                Rule::Container,
                Subject::Stage(kind),
                stage.span.or(module.span),
                "the stage has no entry function (each stage must explicitly select one)",
            ));
        }
        Some(e) => e,
    };
    let Some(f) = stage.functions.get(entry) else {
        return Err(fail(
            Rule::Container,
            Subject::Stage(kind),
            stage.span.or(module.span),
            "the entry function handle does not name a function of this stage",
        ));
    };
    let subject = Subject::Function {
        stage: kind,
        function: entry,
    };
    if !f.parameters.is_empty() {
        return Err(fail(
            Rule::Container,
            subject,
            f.span,
            format!(
                "the entry function {:?} must be parameterless (it has {})",
                f.name,
                f.parameters.len()
            ),
        ));
    }
    if !matches!(module.types.inner(f.return_type), Some(TypeInner::Void)) {
        return Err(fail(
            Rule::Container,
            subject,
            f.span,
            format!(
                "the entry function {:?} must return void, not {}",
                f.name,
                super::types::describe(&module.types, f.return_type)
            ),
        ));
    }
    Ok(())
}

fn check_blocks(stage: &Stage, h: Handle<Function>, f: &Function) -> Check {
    let kind = stage.kind;
    if f.blocks.is_empty() {
        return Err(fail(
            Rule::Container,
            Subject::Function {
                stage: kind,
                function: h,
            },
            f.span,
            "the function has no blocks (the first block is its entry block)",
        ));
    }
    for (bh, block) in f.blocks.iter() {
        let Some(terminator) = &block.terminator else {
            return Err(fail(
                Rule::Container,
                Subject::Block {
                    stage: kind,
                    function: h,
                    block: bh,
                },
                block.span.or(f.span),
                "the block has no terminator",
            ));
        };
        let targets = match terminator.kind {
            TerminatorKind::Branch { target } => vec![target],
            TerminatorKind::BranchIf {
                if_true, if_false, ..
            } => vec![if_true, if_false],
            _ => Vec::new(),
        };
        if targets.iter().any(|t| !f.blocks.contains(*t)) {
            return Err(fail(
                Rule::Container,
                Subject::Terminator {
                    stage: kind,
                    function: h,
                    block: bh,
                },
                terminator.span.or(block.span),
                "branch target is not a block of this function",
            ));
        }
    }
    Ok(())
}
