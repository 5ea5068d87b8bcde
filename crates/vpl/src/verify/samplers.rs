//! Sampler alias chains (section 5 registers of sampler type; consumed by
//! the target restrictions of section 12.4).
//!
//! A sampler register is a static alias: every use must reach, through
//! its alias definitions (a `load` of a sampler uniform or parameter, a
//! `copy` or a local `store` from another sampler register), exactly one
//! sampler uniform or parameter. Verification records these chains as
//! facts; whether a target accepts a function whose chains are not of that
//! shape is the target's decision, so the first irregularity is kept as an
//! [`AliasProblem`] rather than rejected here.

use crate::ir::{
    Function, Handle, InstructionKind, Module, Span, StorageKind, TerminatorKind, Type, TypeInner,
    Value,
};
use std::collections::{HashMap, HashSet};

/// The storage a sampler register statically aliases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasRoot {
    /// A sampler uniform, by uniform slot.
    Uniform(usize),
    /// A sampler parameter of the same function, by parameter slot.
    Parameter(usize),
}

/// The first irregular sampler alias of a function, in program order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasProblem {
    /// What is irregular.
    pub kind: AliasProblemKind,
    /// The offending instruction, operand or terminator.
    pub span: Option<Span>,
}

/// The shapes of [`AliasProblem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasProblemKind {
    /// A sampler register is copied from a constant.
    CopiedFromNonRegister { register: u64 },
    /// A sampler register is loaded through a member or index path.
    LoadedFromAggregate,
    /// A sampler register is loaded from a stage interface variable.
    LoadedFromStageIo,
    /// A sampler register is stored from a constant.
    StoredFromNonRegister { register: u64 },
    /// A sampler parameter is written.
    ParameterWritten { parameter: u64 },
    /// A sampler is stored to uniform or stage storage.
    StoredToNonLocal,
    /// A sampler register is the result of another operation.
    AssignedByOtherOperation { register: u64 },
    /// A sampler value is returned.
    Returned,
    /// A sampler register has several alias definitions.
    SeveralDefinitions { register: u64, count: usize },
    /// A used sampler register has no alias definition.
    Undefined { register: u64 },
    /// A chain ends at a uniform or parameter that is not a sampler.
    RootNotSampler,
    /// The alias definitions of a used register form a cycle.
    Cycle { register: u64 },
}

/// The sampler alias facts of one function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SamplerChains {
    /// Used sampler registers (and the registers on their chains) that
    /// resolve to a root; complete only when `problem` is `None`.
    resolved: HashMap<u64, AliasRoot>,
    problem: Option<AliasProblem>,
}

impl SamplerChains {
    /// The root a used sampler register aliases.
    pub fn root(&self, register: u64) -> Option<AliasRoot> {
        self.resolved.get(&register).copied()
    }

    /// The first irregular alias, if any.
    pub fn problem(&self) -> Option<&AliasProblem> {
        self.problem.as_ref()
    }
}

/// One alias definition of a sampler register.
#[derive(Debug, Clone, Copy)]
enum Definition {
    Register(u64),
    Root(AliasRoot),
}

fn is_sampler(module: &Module, ty: Handle<Type>) -> bool {
    matches!(module.types.inner(ty), Some(TypeInner::Sampler(_)))
}

/// Whether the module has a sampler type at all (else every function's
/// chains are empty and need no analysis).
pub(crate) fn module_has_samplers(module: &Module) -> bool {
    module
        .types
        .iter()
        .any(|(_, t)| matches!(t.inner, TypeInner::Sampler(_)))
}

/// Traces the alias chains of a function that passed the type rules.
pub(crate) fn trace(module: &Module, function: &Function) -> SamplerChains {
    match trace_or_problem(module, function) {
        Ok(resolved) => SamplerChains {
            resolved,
            problem: None,
        },
        Err(problem) => SamplerChains {
            resolved: HashMap::new(),
            problem: Some(problem),
        },
    }
}

fn trace_or_problem(
    module: &Module,
    function: &Function,
) -> Result<HashMap<u64, AliasRoot>, AliasProblem> {
    let problem = |kind, span| AliasProblem { kind, span };
    let sampler_registers: HashSet<u64> = function
        .declared_registers()
        .filter_map(|i| match i.kind {
            InstructionKind::DeclareLocal { register } if is_sampler(module, register.ty) => {
                Some(register.index)
            }
            _ => None,
        })
        .collect();
    if sampler_registers.is_empty() {
        return Ok(HashMap::new());
    }
    let mut definitions: HashMap<u64, Vec<(Definition, Option<Span>)>> = HashMap::new();
    // Uses in program order, for a deterministic first problem.
    let mut uses: Vec<(u64, Option<Span>)> = Vec::new();
    let sampler_operand = |value: &Value| match value {
        Value::Register(r) if sampler_registers.contains(&{ r.index }) => Some(r.index),
        _ => None,
    };
    for (_, block) in function.blocks.iter() {
        for instruction in &block.instructions {
            let span = instruction.span;
            for operand in instruction.kind.operands_iter() {
                if let Some(r) = sampler_operand(&operand.value) {
                    uses.push((r, operand.span.or(span)));
                }
            }
            match &instruction.kind {
                InstructionKind::DeclareLocal { .. } => {}
                InstructionKind::Copy { result, source }
                    if sampler_registers.contains(&{ result.index }) =>
                {
                    let Some(from) = sampler_operand(&source.value) else {
                        return Err(problem(
                            AliasProblemKind::CopiedFromNonRegister {
                                register: result.index,
                            },
                            span,
                        ));
                    };
                    definitions
                        .entry(result.index)
                        .or_default()
                        .push((Definition::Register(from), span));
                }
                InstructionKind::Load { result, source }
                    if sampler_registers.contains(&{ result.index }) =>
                {
                    if source.is_derived() {
                        return Err(problem(AliasProblemKind::LoadedFromAggregate, span));
                    }
                    let slot = usize::try_from(source.slot).unwrap_or(usize::MAX);
                    let definition = match source.storage {
                        StorageKind::Uniform => Definition::Root(AliasRoot::Uniform(slot)),
                        StorageKind::Parameter => Definition::Root(AliasRoot::Parameter(slot)),
                        StorageKind::Local => Definition::Register(source.slot),
                        StorageKind::StageIo => {
                            return Err(problem(AliasProblemKind::LoadedFromStageIo, span));
                        }
                    };
                    definitions
                        .entry(result.index)
                        .or_default()
                        .push((definition, span));
                }
                InstructionKind::Store { target, value } => {
                    let root_is_sampler =
                        !target.is_derived() && is_sampler(module, target.root_ty);
                    match target.storage {
                        _ if !root_is_sampler => {}
                        StorageKind::Local => {
                            let Some(from) = sampler_operand(&value.value) else {
                                return Err(problem(
                                    AliasProblemKind::StoredFromNonRegister {
                                        register: target.slot,
                                    },
                                    span,
                                ));
                            };
                            definitions
                                .entry(target.slot)
                                .or_default()
                                .push((Definition::Register(from), span));
                        }
                        StorageKind::Parameter => {
                            return Err(problem(
                                AliasProblemKind::ParameterWritten {
                                    parameter: target.slot,
                                },
                                span,
                            ));
                        }
                        StorageKind::Uniform | StorageKind::StageIo => {
                            return Err(problem(AliasProblemKind::StoredToNonLocal, span));
                        }
                    }
                }
                other => {
                    if let Some(result) = other.result()
                        && sampler_registers.contains(&{ result.index })
                    {
                        return Err(problem(
                            AliasProblemKind::AssignedByOtherOperation {
                                register: result.index,
                            },
                            span,
                        ));
                    }
                }
            }
        }
        if let Some(terminator) = &block.terminator
            && let TerminatorKind::Return { value: Some(v) } = &terminator.kind
            && sampler_operand(&v.value).is_some()
        {
            return Err(problem(AliasProblemKind::Returned, terminator.span));
        }
    }
    // At most one definition per register, used or not.
    let mut defined: Vec<_> = definitions.iter().collect();
    defined.sort_by_key(|(r, _)| **r);
    for (register, defs) in defined {
        if defs.len() > 1 {
            return Err(problem(
                AliasProblemKind::SeveralDefinitions {
                    register: *register,
                    count: defs.len(),
                },
                defs[1].1,
            ));
        }
    }
    let mut resolved = HashMap::new();
    for (register, span) in uses {
        if resolved.contains_key(&register) {
            continue;
        }
        let mut chain = vec![register];
        let mut current = register;
        let root = loop {
            match definitions.get(&current).and_then(|d| d.first()) {
                None => {
                    return Err(problem(
                        AliasProblemKind::Undefined { register: current },
                        span,
                    ));
                }
                Some((Definition::Root(root), def_span)) => {
                    let ty = match *root {
                        AliasRoot::Uniform(slot) => module.uniforms.get(slot).map(|u| u.ty),
                        AliasRoot::Parameter(slot) => function.parameters.get(slot).map(|p| p.ty),
                    };
                    if !ty.is_some_and(|ty| is_sampler(module, ty)) {
                        return Err(problem(AliasProblemKind::RootNotSampler, *def_span));
                    }
                    break *root;
                }
                Some((Definition::Register(next), def_span)) => {
                    if chain.contains(next) {
                        return Err(problem(AliasProblemKind::Cycle { register }, *def_span));
                    }
                    chain.push(*next);
                    current = *next;
                }
            }
        };
        for r in chain {
            resolved.insert(r, root);
        }
    }
    Ok(resolved)
}
