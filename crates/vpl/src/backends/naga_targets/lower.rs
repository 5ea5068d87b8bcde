//! VPL → naga IR.

use super::{LowerError, LowerErrorKind};
use crate::VerifiedModule;
use crate::ir::{
    BinaryOp, Callee, Direction, Function, Handle, InstructionKind, Literal, Module, Operand,
    Reference, ScalarKind, SelectorKind, Semantic, Span, Stage, StageKind, StorageKind,
    TerminatorKind, Type, TypeInner, Value,
};
use naga::{
    AddressSpace, Binding, Block, BuiltIn, EntryPoint, Expression, FunctionArgument,
    FunctionResult, GlobalVariable, Interpolation, LocalVariable, Range, Sampling, ShaderStage,
    Statement, StructMember, SwitchCase, SwitchValue, VectorSize,
};
use std::collections::HashMap;

/// A lowered module that naga's validator accepted.
#[derive(Debug)]
pub struct Lowered {
    /// The naga module.
    pub module: naga::Module,
    /// naga's validation result (the writers need it).
    pub info: naga::valid::ModuleInfo,
    /// Entry-point names, vertex then fragment.
    pub entry_points: [String; 2],
    /// Resolved interface locations per stage and slot (`None` for
    /// built-ins).
    pub locations: [Vec<Option<u32>>; 2],
}

fn unsupported(kind: LowerErrorKind, span: Option<Span>, message: impl Into<String>) -> LowerError {
    LowerError::new(kind, span, message)
}

/// Lowers the snapshot of `published` and validates the result.
pub fn lower(published: &VerifiedModule) -> Result<Lowered, LowerError> {
    let module = published.module();
    let info = published.info();
    if let Some(u) = module.uniforms.first() {
        return Err(unsupported(
            LowerErrorKind::UnsupportedUniform,
            u.span,
            format!(
                "uniform {:?}: uniforms are not lowered to naga targets yet",
                u.name
            ),
        ));
    }
    let mut cx = Lowering {
        module,
        out: naga::Module::default(),
        types: HashMap::new(),
        io: [Vec::new(), Vec::new()],
        functions: [Vec::new(), Vec::new()],
    };
    let resolved = crate::backends::glsl::interface_locations(module, info)
        .map_err(|e| unsupported(LowerErrorKind::UnsupportedInterface, e.span, e.message))?;
    let mut locations: [Vec<Option<u32>>; 2] = [Vec::new(), Vec::new()];
    for (si, stage) in module.stages().into_iter().enumerate() {
        let per_slot = match stage.kind {
            StageKind::Vertex => &resolved.vertex,
            StageKind::Fragment => &resolved.fragment,
        };
        locations[si] = cx.interface(stage, per_slot)?;
    }
    for (si, stage) in module.stages().into_iter().enumerate() {
        let facts = info.stage(stage.kind);
        cx.functions[si] = vec![None; stage.functions.len()];
        for &h in facts.call_order() {
            let lowered = cx.function(si, stage, h)?;
            let handle = cx.out.functions.append(lowered, naga::Span::UNDEFINED);
            cx.functions[si][h.index()] = Some(handle);
        }
    }
    let mut entry_points = [String::new(), String::new()];
    for (si, stage) in module.stages().into_iter().enumerate() {
        let name = match stage.kind {
            StageKind::Vertex => "vpl_vertex_main",
            StageKind::Fragment => "vpl_fragment_main",
        };
        let ep = cx.entry_point(si, stage, name, &locations[si])?;
        cx.out.entry_points.push(ep);
        entry_points[si] = name.to_string();
    }
    let naga_info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&cx.out)
    .map_err(|e| {
        unsupported(
            LowerErrorKind::Validation,
            None,
            format!("naga rejected the lowered module: {}", e.as_inner()),
        )
    })?;
    Ok(Lowered {
        module: cx.out,
        info: naga_info,
        entry_points,
        locations,
    })
}

struct Lowering<'a> {
    module: &'a Module,
    out: naga::Module,
    types: HashMap<Handle<Type>, naga::Handle<naga::Type>>,
    /// Private global of each interface slot, per stage.
    io: [Vec<naga::Handle<GlobalVariable>>; 2],
    /// Lowered function of each VPL function, per stage.
    functions: [Vec<Option<naga::Handle<naga::Function>>>; 2],
}

fn scalar(kind: ScalarKind) -> naga::Scalar {
    match kind {
        ScalarKind::Bool => naga::Scalar::BOOL,
        ScalarKind::Int => naga::Scalar::I32,
        ScalarKind::Float => naga::Scalar::F32,
    }
}

fn vector_size(n: u8) -> Option<VectorSize> {
    match n {
        2 => Some(VectorSize::Bi),
        3 => Some(VectorSize::Tri),
        4 => Some(VectorSize::Quad),
        _ => None,
    }
}

impl Lowering<'_> {
    fn span_of(&self, ty: Handle<Type>) -> Option<Span> {
        self.module.types.get(ty).and_then(|t| t.span)
    }

    /// The naga type of a VPL value type.
    fn ty(&mut self, ty: Handle<Type>) -> Result<naga::Handle<naga::Type>, LowerError> {
        if let Some(&h) = self.types.get(&ty) {
            return Ok(h);
        }
        let bad = |what: &str| {
            unsupported(
                LowerErrorKind::UnsupportedType,
                self.span_of(ty),
                format!("{what} types are not lowered to naga targets yet"),
            )
        };
        let inner = match self.module.types.inner(ty) {
            Some(TypeInner::Scalar(k)) => naga::TypeInner::Scalar(scalar(*k)),
            Some(TypeInner::Vector { kind, size }) => naga::TypeInner::Vector {
                size: vector_size(*size).ok_or_else(|| bad("odd-sized vector"))?,
                scalar: scalar(*kind),
            },
            Some(TypeInner::Matrix { rows, columns }) => naga::TypeInner::Matrix {
                columns: vector_size(*columns).ok_or_else(|| bad("odd-sized matrix"))?,
                rows: vector_size(*rows).ok_or_else(|| bad("odd-sized matrix"))?,
                scalar: naga::Scalar::F32,
            },
            Some(TypeInner::Record(_)) => return Err(bad("record")),
            Some(TypeInner::Array { .. }) => return Err(bad("array")),
            Some(TypeInner::Sampler(_)) => return Err(bad("sampler")),
            Some(TypeInner::Void) | None => return Err(bad("void")),
        };
        let h = self
            .out
            .types
            .insert(naga::Type { name: None, inner }, naga::Span::UNDEFINED);
        self.types.insert(ty, h);
        Ok(h)
    }

    fn is_void(&self, ty: Handle<Type>) -> bool {
        matches!(self.module.types.inner(ty), Some(TypeInner::Void))
    }

    /// Private globals for the stage's interface; returns the locations
    /// (`None` for the position built-in) from the section 12.2 rules.
    fn interface(
        &mut self,
        stage: &Stage,
        resolved: &[i32],
    ) -> Result<Vec<Option<u32>>, LowerError> {
        let si = stage_index(stage.kind);
        let mut locations = Vec::with_capacity(stage.interface.len());
        for (slot, var) in stage.interface.iter().enumerate() {
            let ty = self.ty(var.ty).map_err(|mut e| {
                e.span = var.span.or(e.span);
                e
            })?;
            let bad = |m: String| unsupported(LowerErrorKind::UnsupportedInterface, var.span, m);
            match self.module.types.inner(var.ty) {
                Some(TypeInner::Scalar(ScalarKind::Bool))
                | Some(TypeInner::Vector {
                    kind: ScalarKind::Bool,
                    ..
                }) => {
                    return Err(bad(format!(
                        "interface variable {:?} is Boolean; stage interfaces carry numbers only",
                        var.name
                    )));
                }
                Some(TypeInner::Matrix { .. }) => {
                    return Err(bad(format!(
                        "interface variable {:?} is a matrix; not lowered to naga targets yet",
                        var.name
                    )));
                }
                _ => {}
            }
            let location = match var.semantic {
                Semantic::Position => None,
                _ => match resolved.get(slot).and_then(|&l| u32::try_from(l).ok()) {
                    Some(l) => Some(l),
                    None => {
                        return Err(bad(format!(
                            "interface variable {:?} has no location",
                            var.name
                        )));
                    }
                },
            };
            let name = format!("vpl_{}_s{slot}", stage.kind.keyword());
            let g = self.out.global_variables.append(
                GlobalVariable {
                    name: Some(name),
                    space: AddressSpace::Private,
                    binding: None,
                    ty,
                    init: None,
                    memory_decorations: Default::default(),
                },
                naga::Span::UNDEFINED,
            );
            self.io[si].push(g);
            locations.push(location);
        }
        Ok(locations)
    }

    fn function(
        &mut self,
        si: usize,
        stage: &Stage,
        h: Handle<Function>,
    ) -> Result<naga::Function, LowerError> {
        let f = &stage.functions[h];
        let mut out = naga::Function {
            name: Some(format!("vpl_{}_f{}", stage.kind.keyword(), h.index())),
            ..Default::default()
        };
        if !self.is_void(f.return_type) {
            out.result = Some(FunctionResult {
                ty: self.ty(f.return_type)?,
                binding: None,
            });
        }
        let mut body = Block::new();
        let mut params = Vec::with_capacity(f.parameters.len());
        for (slot, p) in f.parameters.iter().enumerate() {
            let ty = self.ty(p.ty)?;
            out.arguments.push(FunctionArgument {
                name: Some(format!("vpl_p{slot}")),
                ty,
                binding: None,
            });
            let local = out.local_variables.append(
                LocalVariable {
                    name: Some(format!("vpl_p{slot}_local")),
                    ty,
                    init: None,
                },
                naga::Span::UNDEFINED,
            );
            params.push(local);
        }
        let mut registers = HashMap::new();
        for d in f.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = &d.kind {
                let ty = self.ty(register.ty).map_err(|mut e| {
                    e.span = e.span.or(d.span);
                    e
                })?;
                let local = out.local_variables.append(
                    LocalVariable {
                        name: Some(format!("vpl_r{}", register.index)),
                        ty,
                        init: None,
                    },
                    naga::Span::UNDEFINED,
                );
                registers.insert(register.index, local);
            }
        }
        let int = self.out.types.insert(
            naga::Type {
                name: None,
                inner: naga::TypeInner::Scalar(naga::Scalar::I32),
            },
            naga::Span::UNDEFINED,
        );
        let mut fb = FnBuilder {
            cx: self,
            si,
            f: out,
            registers,
            params: params.clone(),
            selector: None,
        };
        for (slot, &local) in params.iter().enumerate() {
            let arg = fb.expr(&mut body, Expression::FunctionArgument(slot as u32));
            let ptr = fb.expr(&mut body, Expression::LocalVariable(local));
            body.push(
                Statement::Store {
                    pointer: ptr,
                    value: arg,
                },
                naga::Span::UNDEFINED,
            );
        }
        let blocks = f.blocks.as_slice();
        let straight = blocks.len() == 1
            && matches!(
                blocks[0].terminator.as_ref().map(|t| &t.kind),
                Some(TerminatorKind::Return { .. } | TerminatorKind::Discard)
            );
        if straight {
            fb.block(&mut body, &blocks[0])?;
        } else {
            let selector = fb.f.local_variables.append(
                LocalVariable {
                    name: Some("vpl_block".into()),
                    ty: int,
                    init: None,
                },
                naga::Span::UNDEFINED,
            );
            fb.selector = Some(selector);
            let zero = fb.expr(&mut body, Expression::Literal(naga::Literal::I32(0)));
            let ptr = fb.expr(&mut body, Expression::LocalVariable(selector));
            body.push(
                Statement::Store {
                    pointer: ptr,
                    value: zero,
                },
                naga::Span::UNDEFINED,
            );
            let mut loop_body = Block::new();
            let ptr = fb.expr(&mut loop_body, Expression::LocalVariable(selector));
            let value = fb.expr(&mut loop_body, Expression::Load { pointer: ptr });
            let mut cases = Vec::with_capacity(blocks.len() + 1);
            for (index, block) in blocks.iter().enumerate() {
                let mut case = Block::new();
                fb.block(&mut case, block)?;
                cases.push(SwitchCase {
                    value: SwitchValue::I32(index as i32),
                    body: case,
                    fall_through: false,
                });
            }
            let mut default = Block::new();
            let fallback =
                fb.f.result
                    .as_ref()
                    .map(|r| r.ty)
                    .map(|ty| fb.expr(&mut default, Expression::ZeroValue(ty)));
            default.push(Statement::Return { value: fallback }, naga::Span::UNDEFINED);
            cases.push(SwitchCase {
                value: SwitchValue::Default,
                body: default,
                fall_through: false,
            });
            loop_body.push(
                Statement::Switch {
                    selector: value,
                    cases,
                },
                naga::Span::UNDEFINED,
            );
            body.push(
                Statement::Loop {
                    body: loop_body,
                    continuing: Block::new(),
                    break_if: None,
                },
                naga::Span::UNDEFINED,
            );
        }
        let mut f = fb.f;
        f.body = body;
        Ok(f)
    }

    fn entry_point(
        &mut self,
        si: usize,
        stage: &Stage,
        name: &str,
        locations: &[Option<u32>],
    ) -> Result<EntryPoint, LowerError> {
        let mut f = naga::Function {
            name: Some(name.to_string()),
            ..Default::default()
        };
        let mut body = Block::new();
        let mut members = Vec::new();
        let mut outputs = Vec::new();
        let vertex = stage.kind == StageKind::Vertex;
        for (slot, var) in stage.interface.iter().enumerate() {
            let ty = self.ty(var.ty)?;
            let integer = matches!(
                self.module.types.inner(var.ty),
                Some(TypeInner::Scalar(ScalarKind::Int))
                    | Some(TypeInner::Vector {
                        kind: ScalarKind::Int,
                        ..
                    })
            );
            let binding = match (locations[slot], var.semantic) {
                (None, _) => Binding::BuiltIn(BuiltIn::Position { invariant: false }),
                (Some(location), _) => {
                    let varying = (vertex && var.direction == Direction::Out)
                        || (!vertex && var.direction == Direction::In);
                    let (interpolation, sampling) = match (varying, integer) {
                        (false, _) => (None, None),
                        (true, true) => (Some(Interpolation::Flat), None),
                        (true, false) => (Some(Interpolation::Perspective), Some(Sampling::Center)),
                    };
                    Binding::Location {
                        location,
                        interpolation,
                        sampling,
                        blend_src: None,
                        per_primitive: false,
                    }
                }
            };
            let global = self.io[si][slot];
            match var.direction {
                Direction::In => {
                    let index = f.arguments.len() as u32;
                    f.arguments.push(FunctionArgument {
                        name: Some(format!("vpl_in{slot}")),
                        ty,
                        binding: Some(binding),
                    });
                    let arg = push(&mut f, &mut body, Expression::FunctionArgument(index));
                    let ptr = push(&mut f, &mut body, Expression::GlobalVariable(global));
                    body.push(
                        Statement::Store {
                            pointer: ptr,
                            value: arg,
                        },
                        naga::Span::UNDEFINED,
                    );
                }
                Direction::Out => {
                    members.push(StructMember {
                        name: Some(format!("vpl_out{slot}")),
                        ty,
                        binding: Some(binding),
                        offset: 0,
                    });
                    outputs.push(global);
                }
            }
        }
        let entry = stage
            .entry
            .and_then(|e| self.functions[si].get(e.index()).copied().flatten())
            .ok_or_else(|| {
                unsupported(
                    LowerErrorKind::Validation,
                    None,
                    "the stage's entry was not lowered",
                )
            })?;
        body.push(
            Statement::Call {
                function: entry,
                arguments: Vec::new(),
                result: None,
            },
            naga::Span::UNDEFINED,
        );
        // Struct member offsets: naga lays out members; use a running
        // offset of 16 bytes per member (interface structs are not
        // host-shareable, only distinct offsets matter).
        for (i, m) in members.iter_mut().enumerate() {
            m.offset = 16 * i as u32;
        }
        let span = 16 * members.len() as u32;
        let result_ty = self.out.types.insert(
            naga::Type {
                name: Some(format!("VplOutput{}", stage.kind.keyword())),
                inner: naga::TypeInner::Struct { members, span },
            },
            naga::Span::UNDEFINED,
        );
        let mut components = Vec::with_capacity(outputs.len());
        for g in outputs {
            let ptr = push(&mut f, &mut body, Expression::GlobalVariable(g));
            components.push(push(&mut f, &mut body, Expression::Load { pointer: ptr }));
        }
        let result = push(
            &mut f,
            &mut body,
            Expression::Compose {
                ty: result_ty,
                components,
            },
        );
        body.push(
            Statement::Return {
                value: Some(result),
            },
            naga::Span::UNDEFINED,
        );
        f.result = Some(FunctionResult {
            ty: result_ty,
            binding: None,
        });
        f.body = body;
        Ok(EntryPoint {
            name: name.to_string(),
            stage: match stage.kind {
                StageKind::Vertex => ShaderStage::Vertex,
                StageKind::Fragment => ShaderStage::Fragment,
            },
            early_depth_test: None,
            workgroup_size: [0, 0, 0],
            workgroup_size_overrides: None,
            function: f,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        })
    }
}

fn stage_index(kind: StageKind) -> usize {
    match kind {
        StageKind::Vertex => 0,
        StageKind::Fragment => 1,
    }
}

/// Appends `e` to `f`'s expressions, with the `Emit` naga requires for
/// expressions that are evaluated where they stand.
fn push(f: &mut naga::Function, block: &mut Block, e: Expression) -> naga::Handle<Expression> {
    let needs_emit = !matches!(
        e,
        Expression::Literal(_)
            | Expression::Constant(_)
            | Expression::ZeroValue(_)
            | Expression::FunctionArgument(_)
            | Expression::GlobalVariable(_)
            | Expression::LocalVariable(_)
            | Expression::CallResult(_)
    );
    let h = f.expressions.append(e, naga::Span::UNDEFINED);
    if needs_emit {
        block.push(
            Statement::Emit(Range::new_from_bounds(h, h)),
            naga::Span::UNDEFINED,
        );
    }
    h
}

struct FnBuilder<'a, 'b> {
    cx: &'a mut Lowering<'b>,
    si: usize,
    f: naga::Function,
    registers: HashMap<u64, naga::Handle<LocalVariable>>,
    params: Vec<naga::Handle<LocalVariable>>,
    selector: Option<naga::Handle<LocalVariable>>,
}

impl FnBuilder<'_, '_> {
    fn expr(&mut self, block: &mut Block, e: Expression) -> naga::Handle<Expression> {
        push(&mut self.f, block, e)
    }

    fn refuse(&self, span: Option<Span>, message: impl Into<String>) -> LowerError {
        unsupported(LowerErrorKind::UnsupportedInstruction, span, message)
    }

    fn register(
        &self,
        index: u64,
        span: Option<Span>,
    ) -> Result<naga::Handle<LocalVariable>, LowerError> {
        self.registers.get(&index).copied().ok_or_else(|| {
            unsupported(
                LowerErrorKind::Validation,
                span,
                format!("register r{index} is not declared"),
            )
        })
    }

    fn value(
        &mut self,
        block: &mut Block,
        op: &Operand,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        Ok(match op.value {
            Value::Register(r) => {
                let local = self.register(r.index, op.span)?;
                let ptr = self.expr(block, Expression::LocalVariable(local));
                self.expr(block, Expression::Load { pointer: ptr })
            }
            Value::Constant(c) => self.expr(
                block,
                Expression::Literal(match c.value {
                    Literal::Bool(b) => naga::Literal::Bool(b),
                    Literal::Int(i) => naga::Literal::I32(i),
                    Literal::Float(x) => naga::Literal::F32(x),
                }),
            ),
        })
    }

    fn pointer(
        &mut self,
        block: &mut Block,
        r: &Reference,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let slot = usize::try_from(r.slot).unwrap_or(usize::MAX);
        let mut base = match r.storage {
            StorageKind::Local => {
                let local = self.register(r.slot, r.span)?;
                self.expr(block, Expression::LocalVariable(local))
            }
            StorageKind::Parameter => {
                let local = *self
                    .params
                    .get(slot)
                    .ok_or_else(|| self.refuse(r.span, "parameter out of range"))?;
                self.expr(block, Expression::LocalVariable(local))
            }
            StorageKind::StageIo => {
                let g = *self.cx.io[self.si]
                    .get(slot)
                    .ok_or_else(|| self.refuse(r.span, "interface slot out of range"))?;
                self.expr(block, Expression::GlobalVariable(g))
            }
            StorageKind::Uniform => {
                return Err(
                    self.refuse(r.span, "uniform storage is not lowered to naga targets yet")
                );
            }
        };
        for s in &r.path {
            base = match &s.kind {
                SelectorKind::Member(_) => {
                    return Err(self.refuse(
                        s.span.or(r.span),
                        "member access is not lowered to naga targets yet",
                    ));
                }
                SelectorKind::Index(op) => match op.value {
                    Value::Constant(c) => match c.value {
                        Literal::Int(i) if i >= 0 => self.expr(
                            block,
                            Expression::AccessIndex {
                                base,
                                index: i as u32,
                            },
                        ),
                        _ => return Err(self.refuse(s.span, "negative constant index")),
                    },
                    Value::Register(_) => {
                        let index = self.value(block, op)?;
                        self.expr(block, Expression::Access { base, index })
                    }
                },
            };
        }
        Ok(base)
    }

    fn store_register(
        &mut self,
        block: &mut Block,
        index: u64,
        value: naga::Handle<Expression>,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        let local = self.register(index, span)?;
        let ptr = self.expr(block, Expression::LocalVariable(local));
        block.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            naga::Span::UNDEFINED,
        );
        Ok(())
    }

    fn type_inner(&self, ty: Handle<Type>) -> Option<&TypeInner> {
        self.cx.module.types.inner(ty)
    }

    fn block(&mut self, out: &mut Block, block: &crate::ir::Block) -> Result<(), LowerError> {
        for instruction in &block.instructions {
            self.instruction(out, &instruction.kind, instruction.span)?;
        }
        let Some(t) = &block.terminator else {
            return Err(unsupported(
                LowerErrorKind::Validation,
                None,
                "a block has no terminator",
            ));
        };
        match &t.kind {
            TerminatorKind::Branch { target } => self.select(out, target.index(), t.span),
            TerminatorKind::BranchIf {
                condition,
                if_true,
                if_false,
            } => {
                let condition = self.value(out, condition)?;
                let accept = self.expr(
                    out,
                    Expression::Literal(naga::Literal::I32(if_true.index() as i32)),
                );
                let reject = self.expr(
                    out,
                    Expression::Literal(naga::Literal::I32(if_false.index() as i32)),
                );
                let value = self.expr(
                    out,
                    Expression::Select {
                        condition,
                        accept,
                        reject,
                    },
                );
                let ptr = match self.selector {
                    Some(s) => self.expr(out, Expression::LocalVariable(s)),
                    None => {
                        return Err(unsupported(
                            LowerErrorKind::Validation,
                            t.span,
                            "a branch in a straight-line body",
                        ));
                    }
                };
                out.push(
                    Statement::Store {
                        pointer: ptr,
                        value,
                    },
                    naga::Span::UNDEFINED,
                );
                Ok(())
            }
            TerminatorKind::Return { value } => {
                let value = match value {
                    Some(v) => Some(self.value(out, v)?),
                    None => None,
                };
                out.push(Statement::Return { value }, naga::Span::UNDEFINED);
                Ok(())
            }
            TerminatorKind::Discard => {
                out.push(Statement::Kill, naga::Span::UNDEFINED);
                Ok(())
            }
        }
    }

    fn select(
        &mut self,
        out: &mut Block,
        target: usize,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        let value = self.expr(out, Expression::Literal(naga::Literal::I32(target as i32)));
        let ptr = match self.selector {
            Some(s) => self.expr(out, Expression::LocalVariable(s)),
            None => {
                return Err(unsupported(
                    LowerErrorKind::Validation,
                    span,
                    "a branch in a straight-line body",
                ));
            }
        };
        out.push(
            Statement::Store {
                pointer: ptr,
                value,
            },
            naga::Span::UNDEFINED,
        );
        Ok(())
    }

    fn instruction(
        &mut self,
        out: &mut Block,
        kind: &InstructionKind,
        span: Option<Span>,
    ) -> Result<(), LowerError> {
        match kind {
            InstructionKind::DeclareLocal { .. } => Ok(()),
            InstructionKind::Copy { result, source } => {
                let v = self.value(out, source)?;
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Load { result, source } => {
                let ptr = self.pointer(out, source)?;
                let v = self.expr(out, Expression::Load { pointer: ptr });
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Store { target, value } => {
                let v = self.value(out, value)?;
                let ptr = self.pointer(out, target)?;
                out.push(
                    Statement::Store {
                        pointer: ptr,
                        value: v,
                    },
                    naga::Span::UNDEFINED,
                );
                Ok(())
            }
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                let comparison = matches!(
                    op,
                    BinaryOp::Equal
                        | BinaryOp::NotEqual
                        | BinaryOp::Less
                        | BinaryOp::LessEqual
                        | BinaryOp::Greater
                        | BinaryOp::GreaterEqual
                );
                if comparison && !matches!(self.type_inner(lhs.ty()), Some(TypeInner::Scalar(_))) {
                    return Err(self.refuse(
                        span,
                        "comparisons of vectors and matrices are not lowered to naga targets yet",
                    ));
                }
                let left = self.value(out, lhs)?;
                let right = self.value(out, rhs)?;
                let op = match op {
                    BinaryOp::Add => naga::BinaryOperator::Add,
                    BinaryOp::Subtract => naga::BinaryOperator::Subtract,
                    BinaryOp::Multiply => naga::BinaryOperator::Multiply,
                    BinaryOp::Divide => naga::BinaryOperator::Divide,
                    BinaryOp::Equal => naga::BinaryOperator::Equal,
                    BinaryOp::NotEqual => naga::BinaryOperator::NotEqual,
                    BinaryOp::Less => naga::BinaryOperator::Less,
                    BinaryOp::LessEqual => naga::BinaryOperator::LessEqual,
                    BinaryOp::Greater => naga::BinaryOperator::Greater,
                    BinaryOp::GreaterEqual => naga::BinaryOperator::GreaterEqual,
                };
                let v = self.expr(out, Expression::Binary { op, left, right });
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => {
                let Callee::Function(h) = callee else {
                    return Err(
                        self.refuse(span, "texture sampling is not lowered to naga targets yet")
                    );
                };
                let function = self.cx.functions[self.si]
                    .get(h.index())
                    .copied()
                    .flatten()
                    .ok_or_else(|| {
                        unsupported(
                            LowerErrorKind::Validation,
                            span,
                            "a callee was not lowered before its caller",
                        )
                    })?;
                let mut args = Vec::with_capacity(arguments.len());
                for a in arguments {
                    args.push(self.value(out, a)?);
                }
                let result_expr = result.map(|_| {
                    self.f
                        .expressions
                        .append(Expression::CallResult(function), naga::Span::UNDEFINED)
                });
                out.push(
                    Statement::Call {
                        function,
                        arguments: args,
                        result: result_expr,
                    },
                    naga::Span::UNDEFINED,
                );
                if let (Some(r), Some(e)) = (result, result_expr) {
                    self.store_register(out, r.index, e, span)?;
                }
                Ok(())
            }
            InstructionKind::Construct {
                result,
                ty,
                arguments,
            } => {
                let v = self.construct(out, *ty, arguments, span)?;
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                let vector = self.value(out, source)?;
                let v = if pattern.len() == 1 {
                    self.expr(
                        out,
                        Expression::AccessIndex {
                            base: vector,
                            index: pattern[0] as u32,
                        },
                    )
                } else {
                    let size = vector_size(pattern.len() as u8)
                        .ok_or_else(|| self.refuse(span, "swizzle size"))?;
                    let mut p = [naga::SwizzleComponent::X; 4];
                    for (slot, c) in p.iter_mut().zip(pattern.iter()) {
                        *slot = match *c as u32 {
                            0 => naga::SwizzleComponent::X,
                            1 => naga::SwizzleComponent::Y,
                            2 => naga::SwizzleComponent::Z,
                            _ => naga::SwizzleComponent::W,
                        };
                    }
                    self.expr(
                        out,
                        Expression::Swizzle {
                            size,
                            vector,
                            pattern: p,
                        },
                    )
                };
                self.store_register(out, result.index, v, span)
            }
            InstructionKind::Member { .. } => {
                Err(self.refuse(span, "member access is not lowered to naga targets yet"))
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                let base = self.value(out, source)?;
                let v = match index.value {
                    Value::Constant(c) => match c.value {
                        Literal::Int(i) if i >= 0 => self.expr(
                            out,
                            Expression::AccessIndex {
                                base,
                                index: i as u32,
                            },
                        ),
                        _ => return Err(self.refuse(span, "negative constant index")),
                    },
                    Value::Register(_) => {
                        let index = self.value(out, index)?;
                        self.expr(out, Expression::Access { base, index })
                    }
                };
                self.store_register(out, result.index, v, span)
            }
        }
    }

    fn construct(
        &mut self,
        out: &mut Block,
        ty: Handle<Type>,
        arguments: &[Operand],
        span: Option<Span>,
    ) -> Result<naga::Handle<Expression>, LowerError> {
        let target = self.cx.ty(ty)?;
        let inner = self.type_inner(ty).cloned();
        let kind_of = |me: &Self, t: Handle<Type>| match me.type_inner(t) {
            Some(TypeInner::Scalar(k)) | Some(TypeInner::Vector { kind: k, .. }) => Some(*k),
            Some(TypeInner::Matrix { .. }) => Some(ScalarKind::Float),
            _ => None,
        };
        let size_of = |me: &Self, t: Handle<Type>| match me.type_inner(t) {
            Some(TypeInner::Scalar(_)) => Some(1u32),
            Some(TypeInner::Vector { size, .. }) => Some(u32::from(*size)),
            _ => None,
        };
        match inner {
            Some(TypeInner::Scalar(k)) => {
                let [a] = arguments else {
                    return Err(self.refuse(span, "a scalar construction takes one argument"));
                };
                if size_of(self, a.ty()) != Some(1) {
                    return Err(self.refuse(
                        span,
                        "scalar construction from a vector is not lowered to naga targets yet",
                    ));
                }
                let v = self.value(out, a)?;
                Ok(self.convert(out, v, kind_of(self, a.ty()), k))
            }
            Some(TypeInner::Vector { kind, size }) => {
                let mut total = 0u32;
                let mut parts = Vec::with_capacity(arguments.len());
                for a in arguments {
                    let n = size_of(self, a.ty()).ok_or_else(|| {
                        self.refuse(
                            span,
                            "vector construction from a matrix is not lowered to naga targets yet",
                        )
                    })?;
                    total += n;
                    let v = self.value(out, a)?;
                    parts.push(self.convert(out, v, kind_of(self, a.ty()), kind));
                }
                match (parts.as_slice(), total) {
                    ([single], 1) => {
                        let vsize =
                            vector_size(size).ok_or_else(|| self.refuse(span, "vector size"))?;
                        Ok(self.expr(
                            out,
                            Expression::Splat {
                                size: vsize,
                                value: *single,
                            },
                        ))
                    }
                    (_, t) if t == u32::from(size) => Ok(self.expr(
                        out,
                        Expression::Compose {
                            ty: target,
                            components: parts,
                        },
                    )),
                    _ => Err(self.refuse(
                        span,
                        "truncating vector constructions are not lowered to naga targets yet",
                    )),
                }
            }
            Some(TypeInner::Matrix { rows, columns }) => {
                let column_ok = arguments.len() == usize::from(columns)
                    && arguments.iter().all(|a| matches!(self.type_inner(a.ty()), Some(TypeInner::Vector { kind: ScalarKind::Float, size }) if *size == rows));
                if !column_ok {
                    return Err(
                        self.refuse(span, "matrices are lowered only from their column vectors")
                    );
                }
                let mut parts = Vec::with_capacity(arguments.len());
                for a in arguments {
                    parts.push(self.value(out, a)?);
                }
                Ok(self.expr(
                    out,
                    Expression::Compose {
                        ty: target,
                        components: parts,
                    },
                ))
            }
            _ => Err(self.refuse(
                span,
                "constructions of this type are not lowered to naga targets yet",
            )),
        }
    }

    /// Converts a scalar or vector value of kind `from` to kind `to`.
    fn convert(
        &mut self,
        out: &mut Block,
        v: naga::Handle<Expression>,
        from: Option<ScalarKind>,
        to: ScalarKind,
    ) -> naga::Handle<Expression> {
        if from == Some(to) {
            return v;
        }
        let kind = scalar(to).kind;
        let convert = match to {
            ScalarKind::Bool => Some(1),
            _ => Some(4),
        };
        self.expr(
            out,
            Expression::As {
                expr: v,
                kind,
                convert,
            },
        )
    }
}
