//! Which operations, operand shapes, constructions, types, storage paths,
//! terminators and declarations a module uses, counted from its IR, so a
//! test can hold the generator to covering the whole language.

use crate::ir::Handle;
use crate::ir::{
    BinaryOp, Callee, InstructionKind, Module, ScalarKind, SelectorKind, StorageKind,
    TerminatorKind, Type, TypeInner, UniformKind, Value,
};
use std::collections::BTreeMap;

/// Every feature the generator must cover (see [`coverage`]).
pub const REQUIRED: &[&str] = &[
    "instr:copy",
    "instr:load",
    "instr:store",
    "instr:binary",
    "instr:call",
    "instr:construct",
    "instr:swizzle",
    "instr:member",
    "instr:index",
    "call:texture",
    "call:void",
    "call:value",
    "add:int",
    "subtract:int",
    "multiply:int",
    "divide:int",
    "add:int-vector",
    "subtract:int-vector",
    "multiply:int-vector",
    "divide:int-vector",
    "add:float",
    "subtract:float",
    "multiply:float",
    "divide:float",
    "add:float-vector",
    "subtract:float-vector",
    "multiply:float-vector",
    "divide:float-vector",
    "add:matrix",
    "subtract:matrix",
    "divide:matrix",
    "multiply:matrix*matrix",
    "multiply:matrix*vector",
    "multiply:aggregate*scalar",
    "multiply:scalar*aggregate",
    "divide:aggregate/scalar",
    "equal:int",
    "not_equal:int",
    "less:int",
    "less_equal:int",
    "greater:int",
    "greater_equal:int",
    "equal:float",
    "not_equal:float",
    "less:float",
    "less_equal:float",
    "greater:float",
    "greater_equal:float",
    "equal:bool",
    "not_equal:bool",
    "construct:int-to-float",
    "construct:vector-fill",
    "construct:vector-pieces",
    "construct:vector-int-component",
    "construct:matrix-diagonal",
    "construct:matrix-pieces",
    "construct:array",
    "construct:record",
    "construct:bool-vector",
    "type:bool",
    "type:int",
    "type:float",
    "type:bvec2",
    "type:bvec3",
    "type:bvec4",
    "type:ivec2",
    "type:ivec3",
    "type:ivec4",
    "type:vec2",
    "type:vec3",
    "type:vec4",
    "type:mat2x2",
    "type:mat2x3",
    "type:mat2x4",
    "type:mat3x2",
    "type:mat3x3",
    "type:mat3x4",
    "type:mat4x2",
    "type:mat4x3",
    "type:mat4x4",
    "type:sampler",
    "type:array",
    "type:record",
    "storage:local",
    "storage:parameter",
    "storage:uniform",
    "storage:stage",
    "path:member",
    "path:index-constant",
    "path:index-dynamic",
    "store:parameter",
    "store:stage",
    "store:local-derived",
    "store:local-whole",
    "term:branch",
    "term:branch_if",
    "term:return-value",
    "term:return-void",
    "term:discard",
    "uniform:record",
    "uniform:array",
    "uniform:scalar",
    "function:storage-parameters",
    "function:sampler-parameter",
];

fn shape(module: &Module, ty: Handle<Type>) -> &TypeInner {
    &module.types[ty].inner
}

fn class(module: &Module, op: BinaryOp, lhs: Handle<Type>, rhs: Handle<Type>) -> &'static str {
    use TypeInner::*;
    match (shape(module, lhs), shape(module, rhs)) {
        (Scalar(ScalarKind::Int), Scalar(_)) => "int",
        (Scalar(ScalarKind::Float), Scalar(_)) => "float",
        (Scalar(ScalarKind::Bool), _) => "bool",
        (
            Vector {
                kind: ScalarKind::Int,
                ..
            },
            Vector { .. },
        ) => "int-vector",
        (Vector { .. }, Vector { .. }) => "float-vector",
        (Matrix { .. }, Matrix { .. }) if op == BinaryOp::Multiply => "matrix*matrix",
        (Matrix { .. }, Matrix { .. }) => "matrix",
        (Matrix { .. }, Vector { .. }) => "matrix*vector",
        (_, Scalar(_)) if op == BinaryOp::Divide => "aggregate/scalar",
        (_, Scalar(_)) => "aggregate*scalar",
        _ => "scalar*aggregate",
    }
}

fn type_name(inner: &TypeInner) -> Option<String> {
    Some(match inner {
        TypeInner::Scalar(k) => k.keyword().to_string(),
        TypeInner::Vector { kind, size } => {
            let p = match kind {
                ScalarKind::Bool => "bvec",
                ScalarKind::Int => "ivec",
                ScalarKind::Float => "vec",
            };
            format!("{p}{size}")
        }
        TypeInner::Matrix { rows, columns } => format!("mat{rows}x{columns}"),
        TypeInner::Sampler(_) => "sampler".into(),
        TypeInner::Array { .. } => "array".into(),
        TypeInner::Record(_) => "record".into(),
        TypeInner::Void => return None,
    })
}

/// Feature counts of `module` (keys as in [`REQUIRED`]).
pub fn coverage(module: &Module) -> BTreeMap<String, usize> {
    let mut c: BTreeMap<String, usize> = BTreeMap::new();
    let mut add = |k: String| *c.entry(k).or_default() += 1;
    for u in &module.uniforms {
        add(match u.kind {
            UniformKind::Scalar => "uniform:scalar".into(),
            UniformKind::Record => "uniform:record".into(),
            UniformKind::Array => "uniform:array".into(),
        });
    }
    for stage in module.stages() {
        for (handle, f) in stage.functions.iter() {
            let helper = stage.entry != Some(handle);
            if helper
                && f.parameters
                    .iter()
                    .any(|p| matches!(shape(module, p.ty), TypeInner::Sampler(_)))
            {
                add("function:sampler-parameter".into());
            }
            for (_, block) in f.blocks.iter() {
                for i in &block.instructions {
                    if let Some(r) = i.kind.references() {
                        add(format!(
                            "storage:{}",
                            match r.storage {
                                StorageKind::Local => "local",
                                StorageKind::Parameter => "parameter",
                                StorageKind::Uniform => "uniform",
                                StorageKind::StageIo => "stage",
                            }
                        ));
                        for s in &r.path {
                            add(match &s.kind {
                                SelectorKind::Member(_) => "path:member".into(),
                                SelectorKind::Index(op) => match op.value {
                                    Value::Constant(_) => "path:index-constant".into(),
                                    Value::Register(_) => "path:index-dynamic".into(),
                                },
                            });
                        }
                    }
                    match &i.kind {
                        InstructionKind::DeclareLocal { register } => {
                            if let Some(n) = type_name(shape(module, register.ty)) {
                                add(format!("type:{n}"));
                            }
                        }
                        InstructionKind::Copy { .. } => add("instr:copy".into()),
                        InstructionKind::Load { .. } => add("instr:load".into()),
                        InstructionKind::Store { target, .. } => {
                            add("instr:store".into());
                            match (target.storage, target.is_derived()) {
                                (StorageKind::Parameter, _) => {
                                    add("store:parameter".into());
                                    if helper {
                                        add("function:storage-parameters".into());
                                    }
                                }
                                (StorageKind::StageIo, _) => add("store:stage".into()),
                                (StorageKind::Local, true) => add("store:local-derived".into()),
                                (StorageKind::Local, false) => add("store:local-whole".into()),
                                _ => {}
                            }
                        }
                        InstructionKind::Binary { op, lhs, rhs, .. } => {
                            add("instr:binary".into());
                            add(format!(
                                "{}:{}",
                                op.keyword(),
                                class(module, *op, lhs.ty(), rhs.ty())
                            ));
                        }
                        InstructionKind::Call { result, callee, .. } => {
                            add("instr:call".into());
                            match callee {
                                Callee::Builtin(_) => add("call:texture".into()),
                                Callee::Function(_) if result.is_none() => add("call:void".into()),
                                Callee::Function(_) => add("call:value".into()),
                            }
                        }
                        InstructionKind::Construct { ty, arguments, .. } => {
                            add("instr:construct".into());
                            let int_arg = arguments.iter().any(|a| {
                                matches!(shape(module, a.ty()), TypeInner::Scalar(ScalarKind::Int))
                            });
                            let one_scalar = arguments.len() == 1
                                && matches!(shape(module, arguments[0].ty()), TypeInner::Scalar(_));
                            let k = match shape(module, *ty) {
                                TypeInner::Scalar(_) if int_arg => "int-to-float",
                                TypeInner::Scalar(_) => "scalar",
                                TypeInner::Vector {
                                    kind: ScalarKind::Bool,
                                    ..
                                } => "bool-vector",
                                TypeInner::Vector { .. } if one_scalar => "vector-fill",
                                TypeInner::Vector {
                                    kind: ScalarKind::Float,
                                    ..
                                } if int_arg => "vector-int-component",
                                TypeInner::Vector { .. } => "vector-pieces",
                                TypeInner::Matrix { .. } if one_scalar => "matrix-diagonal",
                                TypeInner::Matrix { .. } => "matrix-pieces",
                                TypeInner::Array { .. } => "array",
                                TypeInner::Record(_) => "record",
                                _ => "other",
                            };
                            add(format!("construct:{k}"));
                        }
                        InstructionKind::Swizzle { .. } => add("instr:swizzle".into()),
                        InstructionKind::Member { .. } => add("instr:member".into()),
                        InstructionKind::Index { .. } => add("instr:index".into()),
                    }
                }
                if let Some(t) = &block.terminator {
                    add(match &t.kind {
                        TerminatorKind::Branch { .. } => "term:branch".into(),
                        TerminatorKind::BranchIf { .. } => "term:branch_if".into(),
                        TerminatorKind::Return { value: Some(_) } => "term:return-value".into(),
                        TerminatorKind::Return { value: None } => "term:return-void".into(),
                        TerminatorKind::Discard => "term:discard".into(),
                    });
                }
            }
        }
    }
    c
}
