//! Building a [`Program`] as VPL's object model (`vpl::ir::Module`), the
//! module the verifier checks: the same module the printed text
//! ([`crate::emit`]) reads back to, without printing and parsing it. Types
//! are created on first use, so the module holds exactly the types the
//! text declares (tests compare `vpl::text::write` of the module with the
//! printed text byte for byte).

use crate::program::{self, Inst, Op, Operand, Place, Program, Terminator};
use crate::types::{Records, Scalar, Ty};
use vpl::ir::{
    self, Builtin, Callee, Direction, Field, Handle, InstructionKind, Literal, Reference, Register,
    ScalarKind, StorageKind, SwizzleComponent, TerminatorKind, Type, TypeArena, UniformKind,
};

/// Type handles, created on first use.
struct Types<'a> {
    arena: TypeArena,
    records: &'a Records,
    record_handles: Vec<Option<Handle<Type>>>,
}

fn scalar_kind(k: Scalar) -> ScalarKind {
    match k {
        Scalar::Bool => ScalarKind::Bool,
        Scalar::Int => ScalarKind::Int,
        Scalar::Float => ScalarKind::Float,
    }
}

impl Types<'_> {
    fn handle(&mut self, t: &Ty) -> Handle<Type> {
        match t {
            Ty::Void => self.arena.void(),
            Ty::Scalar(k) => self.arena.scalar(scalar_kind(*k)),
            Ty::Vector(k, n) => self.arena.vector(scalar_kind(*k), *n),
            Ty::Matrix(r, c) => self.arena.matrix(*r, *c),
            Ty::Sampler => self.arena.sampler2d(),
            Ty::Array(e, n) => {
                let e = self.handle(e);
                self.arena.array(e, u64::from(*n))
            }
            Ty::Record(r) => {
                if let Some(Some(h)) = self.record_handles.get(*r) {
                    return *h;
                }
                // Records cannot contain themselves (checked), so this
                // recursion ends.
                let fields = self
                    .records
                    .fields_of(*r)
                    .iter()
                    .map(|(name, ft)| Field {
                        name: name.clone(),
                        ty: self.handle(ft),
                        span: None,
                    })
                    .collect();
                let name = self.records.names.get(*r).cloned().unwrap_or_default();
                let h = self.arena.declare_record(name, fields, None);
                if let Some(slot) = self.record_handles.get_mut(*r) {
                    *slot = Some(h);
                }
                h
            }
        }
    }
}

/// Handles of one stage's storage roots, for references.
struct Roots<'a> {
    interface: &'a [Handle<Type>],
    uniforms: &'a [Handle<Type>],
    parameters: &'a [Handle<Type>],
}

impl Roots<'_> {
    fn reference(&self, place: Place) -> Reference {
        let (storage, slot, list) = match place {
            Place::Stage(n) => (StorageKind::StageIo, n, self.interface),
            Place::Uniform(n) => (StorageKind::Uniform, n, self.uniforms),
            Place::Parameter(n) => (StorageKind::Parameter, n, self.parameters),
        };
        // An out-of-range slot would be a lowering defect; the verifier
        // reports the dangling handle rather than this code panicking.
        let ty = list
            .get(slot)
            .copied()
            .unwrap_or(Handle::from_index(u32::MAX));
        Reference::root(storage, slot as u64, ty)
    }
}

/// One function's registers, for operands.
struct Registers<'a> {
    types: &'a [Handle<Type>],
    bool_ty: Handle<Type>,
    int_ty: Handle<Type>,
    float_ty: Handle<Type>,
}

impl Registers<'_> {
    fn register(&self, r: u32) -> Register {
        let ty = self
            .types
            .get(r as usize)
            .copied()
            .unwrap_or(Handle::from_index(u32::MAX));
        Register::new(u64::from(r), ty)
    }

    fn operand(&self, o: Operand) -> ir::Operand {
        match o {
            Operand::Reg(r) => ir::Operand::register(self.register(r)),
            Operand::Bool(b) => ir::Operand::constant(self.bool_ty, Literal::Bool(b)),
            Operand::Int(i) => ir::Operand::constant(self.int_ty, Literal::Int(i)),
            Operand::Float(f) => ir::Operand::constant(self.float_ty, Literal::Float(f)),
        }
    }

    fn operands(&self, list: &[Operand]) -> Vec<ir::Operand> {
        list.iter().map(|o| self.operand(*o)).collect()
    }
}

/// The module `p` describes. An instruction the lowering could not have
/// made (an operation with the wrong operand count, a swizzle letter
/// outside `xyzw`) is an error naming it: a compiler defect.
pub fn module(p: &Program, records: &Records) -> Result<ir::Module, String> {
    let mut types = Types {
        arena: TypeArena::new(),
        records,
        record_handles: vec![None; records.names.len()],
    };
    let mut m = ir::Module::new();
    let mut uniform_types = Vec::with_capacity(p.uniforms.len());
    for u in &p.uniforms {
        let kind = match &u.ty {
            Ty::Array(..) => UniformKind::Array,
            Ty::Record(_) => UniformKind::Record,
            _ => UniformKind::Scalar,
        };
        let ty = types.handle(&u.ty);
        uniform_types.push(ty);
        m.add_uniform(kind, u.name.clone(), ty);
    }
    for (source, target) in [(&p.vertex, &mut m.vertex), (&p.fragment, &mut m.fragment)] {
        stage(source, target, &uniform_types, &mut types)?;
    }
    m.types = types.arena;
    Ok(m)
}

fn stage(
    source: &program::Stage,
    target: &mut ir::Stage,
    uniforms: &[Handle<Type>],
    types: &mut Types,
) -> Result<(), String> {
    let mut interface = Vec::with_capacity(source.interface.len());
    for v in &source.interface {
        let ty = types.handle(&v.ty);
        interface.push(ty);
        let direction = if v.input {
            Direction::In
        } else {
            Direction::Out
        };
        target.add_interface(direction, v.name.clone(), ty, v.location, v.semantic);
    }
    for f in &source.functions {
        let function = function(f, &interface, uniforms, types)?;
        target.add_function(function);
    }
    target.entry = target.functions.handles().next();
    Ok(())
}

fn function(
    f: &program::Function,
    interface: &[Handle<Type>],
    uniforms: &[Handle<Type>],
    types: &mut Types,
) -> Result<ir::Function, String> {
    let ret = types.handle(&f.ret);
    let mut out = ir::Function::new(f.name.clone(), ret);
    let parameters: Vec<Handle<Type>> = f.params.iter().map(|t| types.handle(t)).collect();
    for &p in &parameters {
        out.add_parameter(p);
    }
    // Registers share a few types: a short list of those seen saves a
    // type-table lookup per register.
    let mut seen: Vec<(&Ty, Handle<Type>)> = Vec::new();
    let register_types: Vec<Handle<Type>> = f
        .registers
        .iter()
        .map(|t| match seen.iter().find(|(s, _)| *s == t) {
            Some((_, h)) => *h,
            None => {
                let h = types.handle(t);
                if seen.len() < 32 {
                    seen.push((t, h));
                }
                h
            }
        })
        .collect();
    let registers = Registers {
        types: &register_types,
        bool_ty: types.arena.scalar(ScalarKind::Bool),
        int_ty: types.arena.scalar(ScalarKind::Int),
        float_ty: types.arena.scalar(ScalarKind::Float),
    };
    let roots = Roots {
        interface,
        uniforms,
        parameters: &parameters,
    };
    let handles: Vec<Handle<ir::Block>> = f.blocks.iter().map(|_| out.add_block()).collect();
    for (index, (block, &h)) in f.blocks.iter().zip(&handles).enumerate() {
        let target = &mut out.blocks[h];
        target.instructions.reserve(block.instructions.len());
        if index == 0 {
            // Register declarations are the entry block's prefix.
            target.instructions.reserve(register_types.len());
            for r in 0..register_types.len() {
                target.push(InstructionKind::DeclareLocal {
                    register: registers.register(r as u32),
                });
            }
        }
        for inst in &block.instructions {
            if let Some(kind) = instruction(inst, &registers, &roots)? {
                target.push(kind);
            }
        }
        let block_handle = |b: usize| {
            handles
                .get(b)
                .copied()
                .unwrap_or(Handle::from_index(u32::MAX))
        };
        target.terminate(match &block.terminator {
            Terminator::Branch(b) => TerminatorKind::Branch {
                target: block_handle(*b),
            },
            Terminator::BranchIf(c, t, f) => TerminatorKind::BranchIf {
                condition: registers.operand(*c),
                if_true: block_handle(*t),
                if_false: block_handle(*f),
            },
            Terminator::Return => TerminatorKind::Return { value: None },
            Terminator::ReturnValue(v) => TerminatorKind::Return {
                value: Some(registers.operand(*v)),
            },
        });
    }
    Ok(out)
}

fn instruction(
    inst: &Inst,
    registers: &Registers,
    roots: &Roots,
) -> Result<Option<InstructionKind>, String> {
    Ok(Some(match inst {
        Inst::Comment(_) => return Ok(None),
        Inst::Op {
            op,
            result,
            operands,
        } => {
            let result = registers.register(*result);
            match (op, operands.as_slice()) {
                (Op::Construct, args) => InstructionKind::Construct {
                    result,
                    ty: result.ty,
                    arguments: registers.operands(args),
                },
                (Op::Binary(op), [lhs, rhs]) => InstructionKind::Binary {
                    result,
                    op: *op,
                    lhs: registers.operand(*lhs),
                    rhs: registers.operand(*rhs),
                },
                (Op::Index, [source, index]) => InstructionKind::Index {
                    result,
                    source: registers.operand(*source),
                    index: registers.operand(*index),
                },
                (Op::Texture, args) => InstructionKind::Call {
                    result: Some(result),
                    callee: Callee::Builtin(Builtin::Texture),
                    arguments: registers.operands(args),
                },
                (Op::Binary(_) | Op::Index, args) => {
                    return Err(format!("`{}` with {} operands", op.keyword(), args.len()));
                }
            }
        }
        Inst::Swizzle {
            result,
            source,
            pattern,
        } => InstructionKind::Swizzle {
            result: registers.register(*result),
            source: registers.operand(*source),
            pattern: pattern
                .chars()
                .map(|c| {
                    SwizzleComponent::from_letter(c).ok_or_else(|| format!("swizzle letter {c:?}"))
                })
                .collect::<Result<_, _>>()?,
        },
        Inst::Member {
            result,
            source,
            field,
        } => InstructionKind::Member {
            result: registers.register(*result),
            source: registers.operand(*source),
            field: field.clone(),
        },
        Inst::Copy { result, source } => InstructionKind::Copy {
            result: registers.register(*result),
            source: registers.operand(*source),
        },
        Inst::Call {
            result,
            function,
            arguments,
        } => InstructionKind::Call {
            result: Some(registers.register(*result)),
            callee: Callee::Function(Handle::from_index(
                u32::try_from(*function).unwrap_or(u32::MAX),
            )),
            arguments: registers.operands(arguments),
        },
        Inst::Load { result, place } => InstructionKind::Load {
            result: registers.register(*result),
            source: roots.reference(*place),
        },
        Inst::Store { place, value } => InstructionKind::Store {
            target: roots.reference(*place),
            value: registers.operand(*value),
        },
    }))
}
