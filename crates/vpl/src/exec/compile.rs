//! Lowering a verified stage to the executor's operations: registers,
//! parameters and constants get fixed frame offsets, blocks are laid out
//! in list order and terminators become jumps, storage paths become word
//! accesses. Only the verified module and its `ModuleInfo` are read.

use super::error::ExecError;
use super::layout::Layout;
use super::program::{
    Access, Arith, Compare, CompiledFunction, CompiledStage, DynamicIndex, Kind, Op, Part, Space,
};
use crate::ir::{
    BinaryOp, Builtin, Callee, Function, Handle, InstructionKind, Literal, Module, Operand,
    Reference, ScalarKind, SelectorKind, Stage, StorageKind, TerminatorKind, Type, TypeInner,
    Value,
};
use crate::verify::ModuleInfo;
use std::collections::HashMap;

/// The largest frame, in words, of one function.
pub const MAX_FRAME_WORDS: u64 = 1 << 20;

/// Compiles `stage` of `module`.
pub(crate) fn compile_stage(
    module: &Module,
    info: &ModuleInfo,
    layout: &Layout,
    uniform_offsets: &[u32],
    stage: &Stage,
) -> Result<CompiledStage, ExecError> {
    let mut io_offsets = Vec::with_capacity(stage.interface.len());
    let mut io_words = 0u64;
    for var in &stage.interface {
        io_offsets.push(io_words as u32);
        io_words += u64::from(layout.words(var.ty));
        if io_words > MAX_FRAME_WORDS {
            return Err(ExecError::Limit("stage interface too large".into()));
        }
    }
    let context = Context {
        module,
        layout,
        uniform_offsets,
        io_offsets: &io_offsets,
    };
    let mut functions = Vec::with_capacity(stage.functions.len());
    for (_, function) in stage.functions.iter() {
        functions.push(context.function(function)?);
    }
    let entry = stage
        .entry
        .ok_or_else(|| ExecError::Unsupported("stage without entry".into()))?;
    let stage_info = info.stage(stage.kind);
    let max_depth = stage_info.call_depth(entry).unwrap_or(0) + 1;
    Ok(CompiledStage {
        functions,
        entry: entry.index() as u32,
        io_offsets,
        io_words: io_words as u32,
        max_depth,
    })
}

struct Context<'a> {
    module: &'a Module,
    layout: &'a Layout,
    uniform_offsets: &'a [u32],
    io_offsets: &'a [u32],
}

/// A function being compiled: its frame assignment.
struct Frame {
    constants: Vec<u32>,
    constant_slots: HashMap<(u8, u32), u32>,
    parameters: Vec<u32>,
    registers: HashMap<u64, u32>,
    words: u64,
}

impl Frame {
    fn constant(&mut self, literal: Literal) -> u32 {
        let key = match literal {
            Literal::Bool(b) => (0, u32::from(b)),
            Literal::Int(i) => (1, i as u32),
            Literal::Float(f) => (2, f.to_bits()),
        };
        if let Some(&at) = self.constant_slots.get(&key) {
            return at;
        }
        let at = self.constants.len() as u32;
        self.constants.push(key.1);
        self.constant_slots.insert(key, at);
        at
    }
}

fn unsupported(what: &str) -> ExecError {
    ExecError::Unsupported(what.to_string())
}

impl Context<'_> {
    fn inner(&self, ty: Handle<Type>) -> &TypeInner {
        &self.module.types[ty].inner
    }

    fn function(&self, function: &Function) -> Result<CompiledFunction, ExecError> {
        // Constants first: collect them from every operand so their
        // offsets are the frame's prefix.
        let mut frame = Frame {
            constants: Vec::new(),
            constant_slots: HashMap::new(),
            parameters: Vec::new(),
            registers: HashMap::new(),
            words: 0,
        };
        for (_, block) in function.blocks.iter() {
            for i in &block.instructions {
                for op in i.kind.operands_iter() {
                    if let Value::Constant(c) = op.value {
                        frame.constant(c.value);
                    }
                }
                if let Some(r) = i.kind.references() {
                    for s in &r.path {
                        if let SelectorKind::Index(Operand {
                            value: Value::Constant(c),
                            ..
                        }) = &s.kind
                        {
                            frame.constant(c.value);
                        }
                    }
                }
            }
            if let Some(t) = &block.terminator {
                match &t.kind {
                    TerminatorKind::BranchIf { condition, .. } => {
                        if let Value::Constant(c) = condition.value {
                            frame.constant(c.value);
                        }
                    }
                    TerminatorKind::Return { value: Some(v) } => {
                        if let Value::Constant(c) = v.value {
                            frame.constant(c.value);
                        }
                    }
                    _ => {}
                }
            }
        }
        frame.words = frame.constants.len() as u64;
        for p in &function.parameters {
            frame.parameters.push(frame.words as u32);
            frame.words += u64::from(self.layout.words(p.ty));
        }
        for d in function.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = &d.kind {
                frame.registers.insert(register.index, frame.words as u32);
                frame.words += u64::from(self.layout.words(register.ty));
            }
        }
        if frame.words > MAX_FRAME_WORDS {
            return Err(ExecError::Limit(format!(
                "function {:?} needs {} frame words, beyond the executor's {MAX_FRAME_WORDS}",
                function.name, frame.words
            )));
        }
        // Blocks in order; jumps are patched from block indices to op indices.
        let mut ops = Vec::new();
        let mut block_start = Vec::with_capacity(function.blocks.len());
        for (_, block) in function.blocks.iter() {
            block_start.push(ops.len() as u32);
            for i in &block.instructions {
                self.instruction(&mut frame, &i.kind, &mut ops)?;
            }
            let t = block
                .terminator
                .as_ref()
                .ok_or_else(|| unsupported("block without terminator"))?;
            ops.push(match &t.kind {
                TerminatorKind::Branch { target } => Op::Jump {
                    target: target.index() as u32,
                },
                TerminatorKind::BranchIf {
                    condition,
                    if_true,
                    if_false,
                } => Op::JumpIf {
                    condition: self.operand(&mut frame, condition)?,
                    if_true: if_true.index() as u32,
                    if_false: if_false.index() as u32,
                },
                TerminatorKind::Return { value } => Op::Return {
                    value: match value {
                        Some(v) => Some((self.operand(&mut frame, v)?, self.layout.words(v.ty()))),
                        None => None,
                    },
                },
                TerminatorKind::Discard => Op::Discard,
            });
        }
        for op in &mut ops {
            match op {
                Op::Jump { target } => *target = block_start[*target as usize],
                Op::JumpIf {
                    if_true, if_false, ..
                } => {
                    *if_true = block_start[*if_true as usize];
                    *if_false = block_start[*if_false as usize];
                }
                _ => {}
            }
        }
        Ok(CompiledFunction {
            ops,
            frame_words: frame.words as u32,
            constants: frame.constants,
            parameters: frame.parameters,
        })
    }

    fn operand(&self, frame: &mut Frame, operand: &Operand) -> Result<u32, ExecError> {
        match operand.value {
            Value::Constant(c) => Ok(frame.constant(c.value)),
            Value::Register(r) => frame
                .registers
                .get(&{ r.index })
                .copied()
                .ok_or_else(|| unsupported("undeclared register")),
        }
    }

    fn register(&self, frame: &Frame, index: u64) -> Result<u32, ExecError> {
        frame
            .registers
            .get(&index)
            .copied()
            .ok_or_else(|| unsupported("undeclared register"))
    }

    fn access(&self, frame: &mut Frame, reference: &Reference) -> Result<Access, ExecError> {
        let slot = usize::try_from(reference.slot).unwrap_or(usize::MAX);
        let (space, mut offset) = match reference.storage {
            StorageKind::Local => (Space::Frame, self.register(frame, reference.slot)?),
            StorageKind::Parameter => (
                Space::Frame,
                *frame
                    .parameters
                    .get(slot)
                    .ok_or_else(|| unsupported("parameter slot"))?,
            ),
            StorageKind::Uniform => (
                Space::Uniform,
                *self
                    .uniform_offsets
                    .get(slot)
                    .ok_or_else(|| unsupported("uniform slot"))?,
            ),
            StorageKind::StageIo => (
                Space::Io,
                *self
                    .io_offsets
                    .get(slot)
                    .ok_or_else(|| unsupported("interface slot"))?,
            ),
        };
        let mut ty = reference.root_ty;
        let mut dynamic = Vec::new();
        for selector in &reference.path {
            match (&selector.kind, self.inner(ty)) {
                (SelectorKind::Member(name), TypeInner::Record(r)) => {
                    let (index, _) = r.field(name).ok_or_else(|| unsupported("unknown field"))?;
                    offset += self.layout.field_offset(ty, index);
                }
                (SelectorKind::Index(index), TypeInner::Array { element, length }) => {
                    let stride = self.layout.words(*element);
                    match index.value {
                        Value::Constant(c) => {
                            let Literal::Int(i) = c.value else {
                                return Err(unsupported("non-integer index"));
                            };
                            offset += (i.max(0) as u32).saturating_mul(stride);
                        }
                        Value::Register(r) => dynamic.push(DynamicIndex {
                            index: self.register(frame, r.index)?,
                            stride,
                            count: (*length).min(u64::from(u32::MAX)) as u32,
                        }),
                    }
                }
                _ => return Err(unsupported("storage path shape")),
            }
            ty = selector.ty;
        }
        Ok(Access {
            space,
            offset,
            dynamic: dynamic.into_boxed_slice(),
            len: self.layout.words(ty),
        })
    }

    fn kind_of(&self, ty: Handle<Type>) -> Kind {
        match self.inner(ty).scalar_kind() {
            Some(ScalarKind::Bool) => Kind::Bool,
            Some(ScalarKind::Int) => Kind::Int,
            _ => Kind::Float,
        }
    }

    fn instruction(
        &self,
        frame: &mut Frame,
        kind: &InstructionKind,
        ops: &mut Vec<Op>,
    ) -> Result<(), ExecError> {
        match kind {
            InstructionKind::DeclareLocal { .. } => {}
            InstructionKind::Copy { result, source } => ops.push(Op::Copy {
                dst: self.register(frame, result.index)?,
                src: self.operand(frame, source)?,
                len: self.layout.words(result.ty),
            }),
            InstructionKind::Load { result, source } => ops.push(Op::Load {
                dst: self.register(frame, result.index)?,
                from: self.access(frame, source)?,
            }),
            InstructionKind::Store { target, value } => ops.push(Op::Store {
                to: self.access(frame, target)?,
                src: self.operand(frame, value)?,
            }),
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                let dst = self.register(frame, result.index)?;
                let a = self.operand(frame, lhs)?;
                let b = self.operand(frame, rhs)?;
                ops.push(self.binary(*op, dst, a, b, lhs.ty(), rhs.ty(), result.ty)?);
            }
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => match callee {
                Callee::Builtin(Builtin::Texture) => {
                    let (Some(result), [sampler, coordinate]) = (result, arguments.as_slice())
                    else {
                        return Err(unsupported("texture call shape"));
                    };
                    ops.push(Op::Texture {
                        dst: self.register(frame, result.index)?,
                        sampler: self.operand(frame, sampler)?,
                        coordinate: self.operand(frame, coordinate)?,
                    });
                }
                Callee::Function(h) => {
                    let mut args = Vec::with_capacity(arguments.len());
                    for (slot, a) in arguments.iter().enumerate() {
                        // The callee's parameter offsets are assigned the
                        // same way: constants, then parameters in order.
                        args.push((
                            self.operand(frame, a)?,
                            slot as u32,
                            self.layout.words(a.ty()),
                        ));
                    }
                    let result = match result {
                        Some(r) => Some((self.register(frame, r.index)?, self.layout.words(r.ty))),
                        None => None,
                    };
                    ops.push(Op::Call {
                        function: h.index() as u32,
                        arguments: args.into_boxed_slice(),
                        result,
                    });
                }
            },
            InstructionKind::Construct {
                result,
                ty,
                arguments,
            } => {
                let dst = self.register(frame, result.index)?;
                let parts = self.construct(frame, *ty, arguments)?;
                ops.push(Op::Construct {
                    dst,
                    len: self.layout.words(*ty),
                    parts: parts.into_boxed_slice(),
                });
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                let mut p = [0u8; 4];
                for (slot, c) in p.iter_mut().zip(pattern) {
                    *slot = c.index() as u8;
                }
                ops.push(Op::Swizzle {
                    dst: self.register(frame, result.index)?,
                    src: self.operand(frame, source)?,
                    pattern: p,
                    len: pattern.len() as u32,
                });
            }
            InstructionKind::Member {
                result,
                source,
                field,
            } => {
                let TypeInner::Record(r) = self.inner(source.ty()) else {
                    return Err(unsupported("member of a non-record"));
                };
                let (index, _) = r.field(field).ok_or_else(|| unsupported("unknown field"))?;
                ops.push(Op::Copy {
                    dst: self.register(frame, result.index)?,
                    src: self.operand(frame, source)?
                        + self.layout.field_offset(source.ty(), index),
                    len: self.layout.words(result.ty),
                });
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                let TypeInner::Array { element, length } = self.inner(source.ty()) else {
                    return Err(unsupported("index of a non-array"));
                };
                let stride = self.layout.words(*element);
                let base = self.operand(frame, source)?;
                let from = match index.value {
                    Value::Constant(c) => {
                        let Literal::Int(i) = c.value else {
                            return Err(unsupported("non-integer index"));
                        };
                        Access {
                            space: Space::Frame,
                            offset: base + (i.max(0) as u32).saturating_mul(stride),
                            dynamic: Box::new([]),
                            len: stride,
                        }
                    }
                    Value::Register(r) => Access {
                        space: Space::Frame,
                        offset: base,
                        dynamic: Box::new([DynamicIndex {
                            index: self.register(frame, r.index)?,
                            stride,
                            count: (*length).min(u64::from(u32::MAX)) as u32,
                        }]),
                        len: stride,
                    },
                };
                ops.push(Op::Load {
                    dst: self.register(frame, result.index)?,
                    from,
                });
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &self,
        op: BinaryOp,
        dst: u32,
        a: u32,
        b: u32,
        lhs: Handle<Type>,
        rhs: Handle<Type>,
        result: Handle<Type>,
    ) -> Result<Op, ExecError> {
        let kind = self.kind_of(lhs);
        let compare = match op {
            BinaryOp::Equal => Some(Compare::Equal),
            BinaryOp::NotEqual => Some(Compare::NotEqual),
            BinaryOp::Less => Some(Compare::Less),
            BinaryOp::LessEqual => Some(Compare::LessEqual),
            BinaryOp::Greater => Some(Compare::Greater),
            BinaryOp::GreaterEqual => Some(Compare::GreaterEqual),
            _ => None,
        };
        if let Some(op) = compare {
            return Ok(Op::Compare {
                op,
                kind,
                dst,
                a,
                b,
            });
        }
        let arith = match op {
            BinaryOp::Add => Arith::Add,
            BinaryOp::Subtract => Arith::Subtract,
            BinaryOp::Multiply => Arith::Multiply,
            _ => Arith::Divide,
        };
        let (l, r) = (self.inner(lhs), self.inner(rhs));
        if arith == Arith::Multiply {
            match (l, r) {
                (
                    TypeInner::Matrix { rows, columns },
                    TypeInner::Matrix {
                        columns: b_columns, ..
                    },
                ) => {
                    return Ok(Op::MatMul {
                        dst,
                        a,
                        b,
                        rows: u32::from(*rows),
                        inner: u32::from(*columns),
                        columns: u32::from(*b_columns),
                    });
                }
                (TypeInner::Matrix { rows, columns }, TypeInner::Vector { .. }) => {
                    return Ok(Op::MatMul {
                        dst,
                        a,
                        b,
                        rows: u32::from(*rows),
                        inner: u32::from(*columns),
                        columns: 1,
                    });
                }
                _ => {}
            }
        }
        let scalar = |t: &TypeInner| matches!(t, TypeInner::Scalar(_));
        let len = self.layout.words(result);
        Ok(Op::Arith {
            op: arith,
            kind,
            dst,
            a,
            b,
            len,
            a_step: u32::from(!scalar(l) || len == 1),
            b_step: u32::from(!scalar(r) || len == 1),
        })
    }

    fn construct(
        &self,
        frame: &mut Frame,
        ty: Handle<Type>,
        arguments: &[Operand],
    ) -> Result<Vec<Part>, ExecError> {
        let target = self.inner(ty).clone();
        let float_target = matches!(
            target,
            TypeInner::Scalar(ScalarKind::Float)
                | TypeInner::Vector {
                    kind: ScalarKind::Float,
                    ..
                }
                | TypeInner::Matrix { .. }
        );
        let is_int_scalar =
            |t: Handle<Type>| matches!(self.inner(t), TypeInner::Scalar(ScalarKind::Int));
        let mut parts = Vec::with_capacity(arguments.len());
        if let [single] = arguments {
            let src = self.operand(frame, single)?;
            let convert = float_target && is_int_scalar(single.ty());
            if matches!(self.inner(single.ty()), TypeInner::Scalar(_)) {
                match target {
                    TypeInner::Vector { size, .. } => {
                        parts.push(Part::Fill {
                            src,
                            count: u32::from(size),
                            convert,
                        });
                        return Ok(parts);
                    }
                    TypeInner::Matrix { rows, columns } => {
                        parts.push(Part::Diagonal {
                            src,
                            rows: u32::from(rows),
                            columns: u32::from(columns),
                            convert,
                        });
                        return Ok(parts);
                    }
                    _ => {}
                }
            }
        }
        for a in arguments {
            let src = self.operand(frame, a)?;
            if float_target && is_int_scalar(a.ty()) {
                parts.push(Part::IntToFloat { src });
            } else {
                parts.push(Part::Words {
                    src,
                    len: self.layout.words(a.ty()),
                });
            }
        }
        Ok(parts)
    }
}
