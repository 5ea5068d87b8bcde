//! Initial target restrictions (spec section 12.4).
//!
//! These run after target-neutral verification: the module is assumed to
//! satisfy sections 3–9, and only what GLSL 4.20 core cannot express is
//! rejected here. Location ranges and overlaps are checked by
//! [`super::locations`].

use super::artifact::GlslType;
use super::types::TypeMap;
use super::{TargetError, TargetErrorKind};
use crate::ir::{
    Direction, Function, Handle, InstructionKind, Module, ScalarKind, Semantic, Span, Stage,
    StageKind, StorageKind, TerminatorKind, Type, TypeInner, Value,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The storage a sampler register statically aliases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasRoot {
    /// A sampler uniform, by uniform slot.
    Uniform(usize),
    /// A sampler parameter of the same function, by parameter slot.
    Parameter(usize),
}

/// Resolved sampler aliases of every function, per stage: the emitter
/// spells a sampler register as its root's GLSL name.
#[derive(Debug, Default)]
pub struct SamplerAliases {
    vertex: Vec<HashMap<u64, AliasRoot>>,
    fragment: Vec<HashMap<u64, AliasRoot>>,
}

impl SamplerAliases {
    /// The alias of register `index` of `function` in `stage`, if it is a
    /// used (resolved) sampler register.
    pub fn get(&self, stage: StageKind, function: usize, index: u64) -> Option<AliasRoot> {
        let per_stage = match stage {
            StageKind::Vertex => &self.vertex,
            StageKind::Fragment => &self.fragment,
        };
        per_stage.get(function)?.get(&index).copied()
    }
}

/// Checks every restriction of section 12.4 and resolves sampler aliases.
pub fn check(module: &Module, types: &TypeMap) -> Result<SamplerAliases, TargetError> {
    check_used_types(module)?;
    let mut aliases = SamplerAliases::default();
    let has_samplers = module
        .types
        .iter()
        .any(|(_, t)| matches!(t.inner, TypeInner::Sampler(_)));
    for stage in module.stages() {
        check_interface(stage, types)?;
        let mut per_function = Vec::with_capacity(stage.functions.len());
        for (_, function) in stage.functions.iter() {
            per_function.push(if has_samplers {
                check_function_samplers(module, function)?
            } else {
                HashMap::new()
            });
        }
        match stage.kind {
            StageKind::Vertex => aliases.vertex = per_function,
            StageKind::Fragment => aliases.fragment = per_function,
        }
    }
    Ok(aliases)
}

fn is_sampler(module: &Module, ty: Handle<Type>) -> bool {
    matches!(module.types.inner(ty), Some(TypeInner::Sampler(_)))
}

/// The types a program actually uses, closed under element/field types.
fn used_types(module: &Module) -> BTreeSet<Handle<Type>> {
    let mut roots: Vec<Handle<Type>> = module.uniforms.iter().map(|u| u.ty).collect();
    for stage in module.stages() {
        roots.extend(stage.interface.iter().map(|v| v.ty));
        for (_, function) in stage.functions.iter() {
            roots.push(function.return_type);
            roots.extend(function.parameters.iter().map(|p| p.ty));
            for (_, block) in function.blocks.iter() {
                for instruction in &block.instructions {
                    match &instruction.kind {
                        InstructionKind::DeclareLocal { register } => roots.push(register.ty),
                        InstructionKind::Construct { ty, .. } => roots.push(*ty),
                        _ => {}
                    }
                    if let InstructionKind::Construct { arguments, .. }
                    | InstructionKind::Call { arguments, .. } = &instruction.kind
                    {
                        roots.extend(arguments.iter().map(|o| o.ty()));
                    } else {
                        roots.extend(instruction.kind.operands().iter().map(|o| o.ty()));
                    }
                }
            }
        }
    }
    let mut used = BTreeSet::new();
    while let Some(ty) = roots.pop() {
        if !used.insert(ty) {
            continue;
        }
        match module.types.inner(ty) {
            Some(TypeInner::Array { element, .. }) => roots.push(*element),
            Some(TypeInner::Record(record)) => roots.extend(record.fields.iter().map(|f| f.ty)),
            _ => {}
        }
    }
    used
}

fn check_used_types(module: &Module) -> Result<(), TargetError> {
    for ty in used_types(module) {
        let Some(entry) = module.types.get(ty) else {
            continue;
        };
        let span = entry.span;
        match &entry.inner {
            TypeInner::Record(record) => {
                if record.fields.is_empty() {
                    return Err(TargetError::new(
                        TargetErrorKind::EmptyRecord,
                        span,
                        format!(
                            "record {:?} has no fields; GLSL structs need at least one member",
                            record.name
                        ),
                    ));
                }
                if let Some(field) = record.fields.iter().find(|f| is_sampler(module, f.ty)) {
                    return Err(TargetError::new(
                        TargetErrorKind::SamplerInAggregate,
                        field.span.or(span),
                        format!(
                            "field {:?} of record {:?} is a sampler; samplers cannot be record members",
                            field.name, record.name
                        ),
                    ));
                }
            }
            TypeInner::Array { element, length } => {
                if *length > i32::MAX as u64 {
                    return Err(TargetError::new(
                        TargetErrorKind::ArrayLength,
                        span,
                        format!(
                            "array length {length} exceeds the signed GL integer range (at most {})",
                            i32::MAX
                        ),
                    ));
                }
                match module.types.inner(*element) {
                    Some(TypeInner::Array { .. }) => {
                        return Err(TargetError::new(
                            TargetErrorKind::ArrayOfArrays,
                            span,
                            "arrays of arrays are not supported by GLSL 4.20",
                        ));
                    }
                    Some(TypeInner::Sampler(_)) => {
                        return Err(TargetError::new(
                            TargetErrorKind::SamplerInAggregate,
                            span,
                            "arrays of samplers are not supported; declare separate sampler uniforms",
                        ));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn contains_bool_or_opaque(ty: &GlslType) -> bool {
    match ty {
        GlslType::Scalar(k) | GlslType::Vector { kind: k, .. } => *k == ScalarKind::Bool,
        GlslType::Matrix { .. } => false,
        GlslType::Sampler2D => true,
        GlslType::Array { element, .. } => contains_bool_or_opaque(element),
        GlslType::Record(r) => r.fields.iter().any(|f| contains_bool_or_opaque(&f.ty)),
    }
}

fn is_numeric_scalar_or_vector(ty: &GlslType) -> bool {
    matches!(
        ty,
        GlslType::Scalar(ScalarKind::Int | ScalarKind::Float)
            | GlslType::Vector {
                kind: ScalarKind::Int | ScalarKind::Float,
                ..
            }
    )
}

fn check_interface(stage: &Stage, types: &TypeMap) -> Result<(), TargetError> {
    for var in &stage.interface {
        let ty = types.get(var.ty)?;
        let what = format!(
            "{} {} {:?}",
            stage.kind.keyword(),
            match var.direction {
                Direction::In => "input",
                Direction::Out => "output",
            },
            var.name
        );
        if contains_bool_or_opaque(ty) {
            return Err(TargetError::new(
                TargetErrorKind::InterfaceType,
                var.span,
                format!(
                    "{what} has type {}; Boolean and opaque types cannot cross a GLSL stage interface",
                    ty.spelling()
                ),
            ));
        }
        if var.semantic == Semantic::Position {
            continue;
        }
        let supported = match (stage.kind, var.direction) {
            (StageKind::Vertex, Direction::In) => {
                is_numeric_scalar_or_vector(ty) || matches!(ty, GlslType::Matrix { .. })
            }
            (StageKind::Fragment, Direction::Out) => {
                is_numeric_scalar_or_vector(ty)
                    || matches!(ty, GlslType::Array { element, .. } if is_numeric_scalar_or_vector(element))
            }
            // Varyings: any numeric aggregate (bool/opaque already excluded).
            _ => true,
        };
        if !supported {
            let allowed = match var.direction {
                Direction::In => "numeric scalars, vectors and floating matrices",
                Direction::Out => "numeric scalars and vectors and one-dimensional arrays of them",
            };
            return Err(TargetError::new(
                TargetErrorKind::InterfaceShape,
                var.span,
                format!(
                    "{what} has type {}; this direction supports only {allowed}",
                    ty.spelling()
                ),
            ));
        }
    }
    Ok(())
}

/// One alias definition of a sampler register.
#[derive(Debug, Clone, Copy)]
enum Definition {
    Register(u64),
    Root(AliasRoot),
}

fn check_function_samplers(
    module: &Module,
    function: &Function,
) -> Result<HashMap<u64, AliasRoot>, TargetError> {
    let name = &function.name;
    if is_sampler(module, function.return_type) {
        return Err(TargetError::new(
            TargetErrorKind::SamplerReturn,
            function.span,
            format!(
                "function {name:?} returns a sampler; GLSL functions cannot return opaque types"
            ),
        ));
    }
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
    // Uses in program order, for deterministic error selection.
    let mut uses: Vec<(u64, Option<Span>)> = Vec::new();
    let alias_error = |span: Option<Span>, message: String| {
        TargetError::new(
            TargetErrorKind::SamplerAlias,
            span,
            format!("in function {name:?}: {message}"),
        )
    };
    let sampler_operand = |value: &Value| match value {
        Value::Register(r) if sampler_registers.contains(&r.index) => Some(r.index),
        _ => None,
    };
    for (_, block) in function.blocks.iter() {
        for instruction in &block.instructions {
            let span = instruction.span;
            for operand in instruction.kind.operands() {
                if let Some(r) = sampler_operand(&operand.value) {
                    uses.push((r, operand.span.or(span)));
                }
            }
            match &instruction.kind {
                InstructionKind::DeclareLocal { .. } => {}
                InstructionKind::Copy { result, source }
                    if sampler_registers.contains(&result.index) =>
                {
                    let Some(from) = sampler_operand(&source.value) else {
                        return Err(alias_error(
                            span,
                            format!(
                                "sampler register r{} is copied from a non-register",
                                result.index
                            ),
                        ));
                    };
                    definitions
                        .entry(result.index)
                        .or_default()
                        .push((Definition::Register(from), span));
                }
                InstructionKind::Load { result, source }
                    if sampler_registers.contains(&result.index) =>
                {
                    if source.is_derived() {
                        return Err(TargetError::new(
                            TargetErrorKind::SamplerInAggregate,
                            span,
                            "a sampler cannot be loaded from aggregate storage",
                        ));
                    }
                    let slot = usize::try_from(source.slot).unwrap_or(usize::MAX);
                    let definition = match source.storage {
                        StorageKind::Uniform => Definition::Root(AliasRoot::Uniform(slot)),
                        StorageKind::Parameter => Definition::Root(AliasRoot::Parameter(slot)),
                        StorageKind::Local => Definition::Register(source.slot),
                        StorageKind::StageIo => {
                            return Err(TargetError::new(
                                TargetErrorKind::InterfaceType,
                                span,
                                "a sampler cannot be loaded from a stage interface",
                            ));
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
                                return Err(alias_error(
                                    span,
                                    format!(
                                        "sampler register r{} is stored from a non-register",
                                        target.slot
                                    ),
                                ));
                            };
                            definitions
                                .entry(target.slot)
                                .or_default()
                                .push((Definition::Register(from), span));
                        }
                        StorageKind::Parameter => {
                            return Err(TargetError::new(
                                TargetErrorKind::SamplerParameterMutation,
                                span,
                                format!(
                                    "in function {name:?}: sampler parameter p{} is written; sampler parameters are read-only aliases",
                                    target.slot
                                ),
                            ));
                        }
                        StorageKind::Uniform | StorageKind::StageIo => {
                            return Err(alias_error(
                                span,
                                "a sampler is stored to non-local storage".into(),
                            ));
                        }
                    }
                }
                other => {
                    if let Some(result) = other.result()
                        && sampler_registers.contains(&result.index)
                    {
                        return Err(alias_error(
                            span,
                            format!(
                                "sampler register r{} is assigned by an operation other than load, copy or local store",
                                result.index
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(terminator) = &block.terminator
            && let TerminatorKind::Return { value: Some(v) } = &terminator.kind
            && sampler_operand(&v.value).is_some()
        {
            return Err(TargetError::new(
                TargetErrorKind::SamplerReturn,
                terminator.span,
                format!("function {name:?} returns a sampler"),
            ));
        }
    }
    // At most one definition per register, used or not.
    let mut defined: Vec<_> = definitions.iter().collect();
    defined.sort_by_key(|(r, _)| **r);
    for (register, defs) in defined {
        if defs.len() > 1 {
            return Err(alias_error(
                defs[1].1,
                format!(
                    "sampler register r{register} has {} alias definitions; exactly one load, copy or local store may define it",
                    defs.len()
                ),
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
                    return Err(alias_error(
                        span,
                        format!(
                            "sampler register r{current} is used but has no load, copy or local-store alias definition"
                        ),
                    ));
                }
                Some((Definition::Root(root), def_span)) => {
                    check_root(module, function, *root, *def_span, name)?;
                    break *root;
                }
                Some((Definition::Register(next), def_span)) => {
                    if chain.contains(next) {
                        return Err(alias_error(
                            *def_span,
                            format!(
                                "the alias definitions of sampler register r{register} form a cycle"
                            ),
                        ));
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

fn check_root(
    module: &Module,
    function: &Function,
    root: AliasRoot,
    span: Option<Span>,
    name: &str,
) -> Result<(), TargetError> {
    let ty = match root {
        AliasRoot::Uniform(slot) => module.uniforms.get(slot).map(|u| u.ty),
        AliasRoot::Parameter(slot) => function.parameters.get(slot).map(|p| p.ty),
    };
    match ty {
        Some(ty) if is_sampler(module, ty) => Ok(()),
        _ => Err(TargetError::new(
            TargetErrorKind::SamplerAlias,
            span,
            format!(
                "in function {name:?}: a sampler alias chain does not end at a sampler uniform or parameter"
            ),
        )),
    }
}
