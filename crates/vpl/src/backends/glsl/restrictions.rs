//! Initial target restrictions (spec section 12.4).
//!
//! These run after target-neutral verification: the module is assumed to
//! satisfy sections 3–9, and only what GLSL 4.20 core cannot express is
//! rejected here. Location ranges and overlaps are checked by
//! [`super::locations`].

use super::artifact::GlslType;
use super::error::{TargetError, TargetErrorKind};
use super::types::TypeMap;
use crate::ir::{
    Direction, Function, Handle, Module, ScalarKind, Semantic, Stage, StageKind, Type, TypeInner,
};
use crate::verify::{AliasProblemKind, ModuleInfo, SamplerChains};

pub use crate::verify::AliasRoot;

/// Checks every restriction of section 12.4 on a verified module; the
/// sampler alias chains are the ones verification traced (`info`).
pub fn check(module: &Module, info: &ModuleInfo, types: &TypeMap) -> Result<(), TargetError> {
    check_used_types(module, info)?;
    let has_samplers = module
        .types
        .iter()
        .any(|(_, t)| matches!(t.inner, TypeInner::Sampler(_)));
    for stage in module.stages() {
        check_interface(stage, types)?;
        if !has_samplers {
            continue;
        }
        let stage_info = info.stage(stage.kind);
        for (handle, function) in stage.functions.iter() {
            let chains = stage_info.function(handle).map(|f| f.samplers());
            check_function_samplers(module, function, chains)?;
        }
    }
    Ok(())
}

fn is_sampler(module: &Module, ty: Handle<Type>) -> bool {
    matches!(module.types.inner(ty), Some(TypeInner::Sampler(_)))
}

/// The types a program actually uses, closed under element/field types.
/// Every operand is a register of a declared type or a scalar constant, and a construction's type is its result register's
/// (verified), so the register tables verification built stand for the
/// instructions; scalar types, which no restriction concerns, may be
/// missing. The order is the canonical text's (see the end).
fn used_types(module: &Module, info: &ModuleInfo) -> Vec<Handle<Type>> {
    let mut seen = vec![false; module.types.len()];
    let mut roots: Vec<Handle<Type>> = Vec::new();
    let mut mark = |ty: Handle<Type>, roots: &mut Vec<Handle<Type>>| {
        if let Some(slot) = seen.get_mut(ty.index())
            && !*slot
        {
            *slot = true;
            roots.push(ty);
        }
    };
    for u in &module.uniforms {
        mark(u.ty, &mut roots);
    }
    for stage in module.stages() {
        for v in &stage.interface {
            mark(v.ty, &mut roots);
        }
        let facts = info.stage(stage.kind);
        for (handle, function) in stage.functions.iter() {
            mark(function.return_type, &mut roots);
            for p in &function.parameters {
                mark(p.ty, &mut roots);
            }
            for ty in facts
                .function(handle)
                .into_iter()
                .flat_map(|f| f.register_types())
            {
                mark(ty, &mut roots);
            }
        }
    }
    let mut used = Vec::new();
    while let Some(ty) = roots.pop() {
        used.push(ty);
        match module.types.inner(ty) {
            Some(TypeInner::Array { element, .. }) => mark(*element, &mut roots),
            Some(TypeInner::Record(record)) => {
                for f in &record.fields {
                    mark(f.ty, &mut roots);
                }
            }
            _ => {}
        }
    }
    // The first violation reported must not depend on the type table's
    // order, which publishing changes (a snapshot's table lists records
    // first): walk in the canonical text's declaration order, which a
    // module and its published snapshot share, then the undeclared types
    // (arrays that array uniforms imply) in uniform order.
    let mut rank = vec![usize::MAX; module.types.len()];
    let declared = crate::text::type_declaration_order(module);
    let implied = module.uniforms.iter().map(|u| u.ty);
    for (position, ty) in declared.into_iter().chain(implied).enumerate() {
        if let Some(slot) = rank.get_mut(ty.index())
            && *slot == usize::MAX
        {
            *slot = position;
        }
    }
    used.sort_unstable_by_key(|ty| (rank.get(ty.index()).copied(), *ty));
    used
}

fn check_used_types(module: &Module, info: &ModuleInfo) -> Result<(), TargetError> {
    for ty in used_types(module, info) {
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

fn check_function_samplers(
    module: &Module,
    function: &Function,
    chains: Option<&SamplerChains>,
) -> Result<(), TargetError> {
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
    let Some(problem) = chains.and_then(SamplerChains::problem) else {
        return Ok(());
    };
    let span = problem.span;
    let alias = |message: String| {
        TargetError::new(
            TargetErrorKind::SamplerAlias,
            span,
            format!("in function {name:?}: {message}"),
        )
    };
    Err(match problem.kind {
        AliasProblemKind::CopiedFromNonRegister { register } => alias(format!(
            "sampler register r{register} is copied from a non-register"
        )),
        AliasProblemKind::LoadedFromAggregate => TargetError::new(
            TargetErrorKind::SamplerInAggregate,
            span,
            "a sampler cannot be loaded from aggregate storage",
        ),
        AliasProblemKind::LoadedFromStageIo => TargetError::new(
            TargetErrorKind::InterfaceType,
            span,
            "a sampler cannot be loaded from a stage interface",
        ),
        AliasProblemKind::StoredFromNonRegister { register } => alias(format!(
            "sampler register r{register} is stored from a non-register"
        )),
        AliasProblemKind::ParameterWritten { parameter } => TargetError::new(
            TargetErrorKind::SamplerParameterMutation,
            span,
            format!(
                "in function {name:?}: sampler parameter p{parameter} is written; sampler parameters are read-only aliases"
            ),
        ),
        AliasProblemKind::StoredToNonLocal => {
            alias("a sampler is stored to non-local storage".into())
        }
        AliasProblemKind::AssignedByOtherOperation { register } => alias(format!(
            "sampler register r{register} is assigned by an operation other than load, copy or local store"
        )),
        AliasProblemKind::Returned => TargetError::new(
            TargetErrorKind::SamplerReturn,
            span,
            format!("function {name:?} returns a sampler"),
        ),
        AliasProblemKind::SeveralDefinitions { register, count } => alias(format!(
            "sampler register r{register} has {count} alias definitions; exactly one load, copy or local store may define it"
        )),
        AliasProblemKind::Undefined { register } => alias(format!(
            "sampler register r{register} is used but has no load, copy or local-store alias definition"
        )),
        AliasProblemKind::RootNotSampler => {
            alias("a sampler alias chain does not end at a sampler uniform or parameter".into())
        }
        AliasProblemKind::Cycle { register } => alias(format!(
            "the alias definitions of sampler register r{register} form a cycle"
        )),
    })
}
