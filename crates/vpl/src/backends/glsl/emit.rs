//! Code emission and control-flow lowering (spec section 12.3).
//!
//! Each stage becomes one translation unit: `#version 420 core`, record
//! structs in dependency order, every uniform (both stages declare the
//! same set, so linked declarations agree), the stage's interface, forward
//! declarations of every function, the function definitions and a `main`
//! that calls the selected entry. Registers become function-scope locals
//! declared at the top of their function, except sampler registers, which
//! are static aliases spelled as the uniform or parameter they alias.
//!
//! A function whose single block ends in `return` or `discard` is emitted
//! as straight-line code. Any other graph is lowered to an integer block
//! selector, an infinite loop and a `switch` with one case per block:
//! branches set the selector and `break` out of the switch, returns leave
//! the function, `discard` abandons the fragment.

use super::artifact::{Binding, GlslType, InterfaceBinding, ProgramArtifact, UniformBinding};
use super::error::{TargetError, TargetErrorKind, VERSION_420};
use super::locations::Locations;
use super::naming;
use super::types::TypeMap;
use crate::ir::{
    Builtin, Callee, Direction, Function, InstructionKind, Literal, Module, Operand, Reference,
    SelectorKind, Semantic, Stage, StageKind, StorageKind, TerminatorKind, TypeInner, UniformKind,
    Value,
};
use crate::verify::{AliasRoot, ModuleInfo, StageInfo};
use std::collections::HashSet;
use std::fmt::Write as _;

fn invalid(message: impl Into<String>) -> TargetError {
    TargetError::new(TargetErrorKind::InvalidModule, None, message)
}

/// Emits both shaders and assembles the artifact.
pub fn program(
    module: &Module,
    types: &TypeMap,
    info: &ModuleInfo,
    locations: &Locations,
    parallel: bool,
) -> Result<ProgramArtifact, TargetError> {
    #[cfg(test)]
    crate::steps::count(crate::steps::Step::Emit);
    let uniforms = uniform_bindings(module, types)?;
    let vertex_interface = interface_bindings(&module.vertex, types, &locations.vertex)?;
    let fragment_interface = interface_bindings(&module.fragment, types, &locations.fragment)?;
    let primary = fragment_interface
        .iter()
        .find(|b| b.direction == Direction::Out && b.semantic == Semantic::FragmentColor)
        .ok_or_else(|| invalid("the fragment stage declares no fragment_color output"))?;
    let fragment_color_output = primary.binding.gl_name().to_string();
    let fragment_color_location = primary.binding.location;

    let mut prelude = String::new();
    prelude.push_str("#version 420 core\n");
    emit_records(&mut prelude, module, types)?;
    emit_uniforms(&mut prelude, &uniforms);

    let vertex_code = emit_stage(
        module,
        &module.vertex,
        types,
        info.stage(StageKind::Vertex),
        &prelude,
        &vertex_interface,
        parallel,
    )?;
    let fragment_code = emit_stage(
        module,
        &module.fragment,
        types,
        info.stage(StageKind::Fragment),
        &prelude,
        &fragment_interface,
        parallel,
    )?;
    Ok(ProgramArtifact {
        version: VERSION_420,
        vertex_code,
        fragment_code,
        uniforms,
        vertex_interface,
        fragment_interface,
        fragment_color_output,
        fragment_color_location,
    })
}

fn uniform_bindings(module: &Module, types: &TypeMap) -> Result<Vec<UniformBinding>, TargetError> {
    let mut next_block = 0i32;
    let mut next_unit = 0i32;
    let mut bindings = Vec::with_capacity(module.uniforms.len());
    for (slot, uniform) in module.uniforms.iter().enumerate() {
        let ty = types.get(uniform.ty)?.clone();
        let is_block = uniform.kind == UniformKind::Record && matches!(ty, GlslType::Record(_));
        let (block_name, block_binding) = if is_block {
            next_block += 1;
            (Some(naming::block(slot)), next_block - 1)
        } else {
            (None, -1)
        };
        let texture_unit = if ty == GlslType::Sampler2D {
            next_unit += 1;
            next_unit - 1
        } else {
            -1
        };
        bindings.push(UniformBinding {
            binding: Binding::new(&uniform.name, naming::uniform(slot), ty, slot, -1),
            kind: uniform.kind,
            block_name,
            block_binding,
            texture_unit,
        });
    }
    Ok(bindings)
}

fn interface_bindings(
    stage: &Stage,
    types: &TypeMap,
    locations: &[i32],
) -> Result<Vec<InterfaceBinding>, TargetError> {
    let mut bindings = Vec::with_capacity(stage.interface.len());
    for (slot, var) in stage.interface.iter().enumerate() {
        let ty = types.get(var.ty)?.clone();
        let location = locations.get(slot).copied().unwrap_or(-1);
        let (gl_name, flat) = match (stage.kind, var.direction, var.semantic) {
            (StageKind::Vertex, Direction::Out, Semantic::Position) => {
                ("gl_Position".to_string(), false)
            }
            (StageKind::Fragment, Direction::In, Semantic::Position) => {
                ("gl_FragCoord".to_string(), false)
            }
            (StageKind::Vertex, Direction::In, _) => (naming::attribute(location), false),
            (StageKind::Fragment, Direction::Out, _) => (naming::output(location), false),
            _ => (naming::varying(location), ty.contains_integer()),
        };
        let location = if gl_name.starts_with("gl_") {
            -1
        } else {
            location
        };
        bindings.push(InterfaceBinding {
            binding: Binding::new(&var.name, gl_name, ty, slot, location),
            direction: var.direction,
            semantic: var.semantic,
            flat,
        });
    }
    Ok(bindings)
}

/// Writes `TYPE NAME` or, for arrays, `ELEMENT NAME[LENGTH]`.
fn declare(out: &mut String, ty: &GlslType, name: &str) {
    match ty {
        GlslType::Array { element, length } => {
            element.write_spelling(out);
            let _ = write!(out, " {name}[{length}]");
        }
        _ => {
            ty.write_spelling(out);
            out.push(' ');
            out.push_str(name);
        }
    }
}

/// Struct declarations, each after the records its fields use.
fn emit_records(out: &mut String, module: &Module, types: &TypeMap) -> Result<(), TargetError> {
    let mut done = HashSet::new();
    for &root in &types.records {
        // Iterative post-order walk over record dependencies.
        let mut stack = vec![(root, false)];
        while let Some((handle, expanded)) = stack.pop() {
            if done.contains(&handle) {
                continue;
            }
            if expanded {
                done.insert(handle);
                let GlslType::Record(record) = types.get(handle)? else {
                    continue;
                };
                if record.fields.is_empty() {
                    continue;
                }
                let _ = writeln!(out, "struct {} {{", record.gl_name);
                for field in &record.fields {
                    out.push_str("    ");
                    declare(out, &field.ty, &field.gl_name);
                    out.push_str(";\n");
                }
                out.push_str("};\n");
                continue;
            }
            stack.push((handle, true));
            if let Some(TypeInner::Record(record)) = module.types.inner(handle) {
                for field in record.fields.iter().rev() {
                    let mut ty = field.ty;
                    while let Some(TypeInner::Array { element, .. }) = module.types.inner(ty) {
                        ty = *element;
                    }
                    if matches!(module.types.inner(ty), Some(TypeInner::Record(_)))
                        && !done.contains(&ty)
                    {
                        stack.push((ty, false));
                    }
                }
            }
        }
    }
    Ok(())
}

fn emit_uniforms(out: &mut String, uniforms: &[UniformBinding]) {
    for u in uniforms {
        let name = u.binding.gl_name();
        match (&u.block_name, &u.binding.ty) {
            (Some(block), GlslType::Record(record)) => {
                let _ = writeln!(
                    out,
                    "layout(std140, binding = {}) uniform {block} {{",
                    u.block_binding
                );
                for field in &record.fields {
                    out.push_str("    ");
                    declare(out, &field.ty, &field.gl_name);
                    out.push_str(";\n");
                }
                let _ = writeln!(out, "}} {name};");
            }
            _ => {
                if u.texture_unit >= 0 {
                    let _ = write!(out, "layout(binding = {}) ", u.texture_unit);
                }
                out.push_str("uniform ");
                declare(out, &u.binding.ty, name);
                out.push_str(";\n");
            }
        }
    }
}

fn emit_stage(
    module: &Module,
    stage: &Stage,
    types: &TypeMap,
    facts: &StageInfo,
    prelude: &str,
    interface: &[InterfaceBinding],
    parallel: bool,
) -> Result<String, TargetError> {
    let instructions: usize = stage
        .functions
        .iter()
        .map(|(_, f)| {
            f.blocks
                .iter()
                .map(|(_, b)| b.instructions.len())
                .sum::<usize>()
        })
        .sum();
    // Generous: about 50 bytes an instruction are typical, and capacity
    // beyond what is written is never touched (so costs no page faults),
    // while growing a large buffer copies it into fresh pages.
    let mut out = String::with_capacity(prelude.len() + 4096 + instructions * 64);
    out.push_str(prelude);
    for b in interface {
        if b.binding.location < 0 {
            continue;
        }
        let _ = write!(out, "layout(location = {}) ", b.binding.location);
        if b.flat {
            out.push_str("flat ");
        }
        out.push_str(match b.direction {
            Direction::In => "in ",
            Direction::Out => "out ",
        });
        declare(&mut out, &b.binding.ty, b.binding.gl_name());
        out.push_str(";\n");
    }
    let io_names: Vec<&str> = interface.iter().map(|b| b.binding.gl_name()).collect();
    let floats = std::cell::RefCell::new(naming::FloatLiterals::default());
    let emitter = FunctionEmitter {
        floats: &floats,
        module,
        stage,
        types,
        facts,
        io_names: &io_names,
        function_index: 0,
        function: None,
    };
    for (handle, function) in stage.functions.iter() {
        emitter.signature(&mut out, handle.index(), function)?;
        out.push_str(";\n");
    }
    // Large stages emit their definitions on two threads, each part into
    // its own buffer with its own literal memo; the parts are joined in
    // order, and the first part's error wins as it comes first.
    let define = |out: &mut String, emitter: &FunctionEmitter<'_>, skip: usize, take: usize| {
        for (handle, function) in stage.functions.iter().skip(skip).take(take) {
            let mut e = emitter.clone();
            e.function_index = handle.index();
            e.function = Some(function);
            e.definition(out)?;
        }
        Ok::<(), TargetError>(())
    };
    let split = match parallel {
        true => crate::parallel::stage_split(stage),
        false => None,
    };
    match split {
        Some(mid) => {
            let capacity = out.capacity() / 2;
            let io_names = &io_names;
            let (first, second) = crate::parallel::join(
                || define(&mut out, &emitter, 0, mid),
                || {
                    let floats = std::cell::RefCell::new(naming::FloatLiterals::default());
                    let emitter = FunctionEmitter {
                        floats: &floats,
                        module,
                        stage,
                        types,
                        facts,
                        io_names,
                        function_index: 0,
                        function: None,
                    };
                    let mut part = String::with_capacity(capacity);
                    define(&mut part, &emitter, mid, usize::MAX).map(|()| part)
                },
            );
            first?;
            out.push_str(&second?);
        }
        None => define(&mut out, &emitter, 0, usize::MAX)?,
    }
    let entry = stage
        .entry
        .ok_or_else(|| invalid(format!("the {} stage has no entry", stage.kind.keyword())))?;
    out.push_str("void main() {\n    ");
    naming::function(&mut out, entry.index());
    out.push_str("();\n}\n");
    Ok(out)
}

#[derive(Clone)]
struct FunctionEmitter<'a> {
    module: &'a Module,
    stage: &'a Stage,
    types: &'a TypeMap,
    facts: &'a StageInfo,
    io_names: &'a [&'a str],
    floats: &'a std::cell::RefCell<naming::FloatLiterals>,
    function_index: usize,
    function: Option<&'a Function>,
}

impl<'a> FunctionEmitter<'a> {
    fn is_void(&self, function: &Function) -> bool {
        matches!(
            self.module.types.inner(function.return_type),
            Some(TypeInner::Void)
        )
    }

    fn signature(
        &self,
        out: &mut String,
        index: usize,
        function: &Function,
    ) -> Result<(), TargetError> {
        if self.is_void(function) {
            out.push_str("void");
        } else {
            self.types.get(function.return_type)?.write_spelling(out);
        }
        out.push(' ');
        naming::function(out, index);
        out.push('(');
        for (slot, parameter) in function.parameters.iter().enumerate() {
            if slot > 0 {
                out.push_str(", ");
            }
            let mut name = String::new();
            naming::parameter(&mut name, slot);
            declare(out, self.types.get(parameter.ty)?, &name);
        }
        out.push(')');
        Ok(())
    }

    fn definition(&self, out: &mut String) -> Result<(), TargetError> {
        let function = self.function.ok_or_else(|| invalid("no function"))?;
        let void = self.is_void(function);
        self.signature(out, self.function_index, function)?;
        out.push_str(" {\n");
        for declaration in function.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = declaration.kind {
                let ty = self.types.get(register.ty)?;
                if *ty == GlslType::Sampler2D {
                    continue;
                }
                let mut name = String::new();
                naming::register(&mut name, register.index);
                out.push_str("    ");
                declare(out, ty, &name);
                out.push_str(";\n");
            }
        }
        let blocks = function.blocks.as_slice();
        let straight = blocks.len() == 1
            && matches!(
                blocks[0].terminator.as_ref().map(|t| &t.kind),
                Some(TerminatorKind::Return { .. } | TerminatorKind::Discard)
            );
        if !void && !straight {
            out.push_str("    ");
            declare(out, self.types.get(function.return_type)?, naming::FALLBACK);
            out.push_str(";\n");
        }
        if straight {
            self.block_body(out, &blocks[0], "    ", void, true)?;
        } else {
            // Pushed piece by piece rather than through `writeln!` (once
            // per function and block of a large module).
            out.push_str("    int ");
            out.push_str(naming::SELECTOR);
            out.push_str(" = 0;\n    for (;;) {\n        switch (");
            out.push_str(naming::SELECTOR);
            out.push_str(") {\n");
            for (index, block) in blocks.iter().enumerate() {
                out.push_str("        case ");
                naming::push_decimal(out, index as u64);
                out.push_str(": {\n");
                self.block_body(out, block, "            ", void, false)?;
                out.push_str("        }\n");
            }
            out.push_str("        default:\n");
            if void {
                out.push_str("            return;\n");
            } else {
                out.push_str("            return ");
                out.push_str(naming::FALLBACK);
                out.push_str(";\n");
            }
            out.push_str("        }\n    }\n");
        }
        out.push_str("}\n");
        Ok(())
    }

    fn block_body(
        &self,
        out: &mut String,
        block: &crate::ir::Block,
        indent: &str,
        void: bool,
        straight: bool,
    ) -> Result<(), TargetError> {
        for instruction in &block.instructions {
            self.instruction(out, &instruction.kind, indent)?;
        }
        let terminator = block
            .terminator
            .as_ref()
            .ok_or_else(|| invalid("a block has no terminator"))?;
        out.push_str(indent);
        match &terminator.kind {
            TerminatorKind::Branch { target } => {
                out.push_str(naming::SELECTOR);
                out.push_str(" = ");
                naming::push_decimal(out, target.index() as u64);
                out.push_str(";\n");
                out.push_str(indent);
                out.push_str("break;\n");
            }
            TerminatorKind::BranchIf {
                condition,
                if_true,
                if_false,
            } => {
                out.push_str(naming::SELECTOR);
                out.push_str(" = ");
                self.operand(out, condition)?;
                out.push_str(" ? ");
                naming::push_decimal(out, if_true.index() as u64);
                out.push_str(" : ");
                naming::push_decimal(out, if_false.index() as u64);
                out.push_str(";\n");
                out.push_str(indent);
                out.push_str("break;\n");
            }
            TerminatorKind::Return { value: None } => out.push_str("return;\n"),
            TerminatorKind::Return { value: Some(v) } => {
                out.push_str("return ");
                self.operand(out, v)?;
                out.push_str(";\n");
            }
            TerminatorKind::Discard => {
                out.push_str("discard;\n");
                if !straight {
                    // Unreachable: discard ends the invocation. It keeps
                    // the dispatch loop from ever continuing after it.
                    out.push_str(indent);
                    if void {
                        out.push_str("return;\n");
                    } else {
                        let _ = writeln!(out, "return {};", naming::FALLBACK);
                    }
                }
            }
        }
        Ok(())
    }

    fn is_sampler(&self, ty: crate::ir::Handle<crate::ir::Type>) -> bool {
        matches!(self.module.types.inner(ty), Some(TypeInner::Sampler(_)))
    }

    fn operand(&self, out: &mut String, operand: &Operand) -> Result<(), TargetError> {
        match operand.value {
            Value::Register(r) => {
                if self.is_sampler(r.ty) {
                    let root = self
                        .facts
                        .function(crate::ir::Handle::from_index(self.function_index as u32))
                        .and_then(|f| f.samplers().root(r.index));
                    match root {
                        Some(AliasRoot::Uniform(slot)) => out.push_str(&naming::uniform(slot)),
                        Some(AliasRoot::Parameter(slot)) => naming::parameter(out, slot),
                        None => {
                            return Err(invalid(format!(
                                "sampler register r{} has no resolved alias",
                                { r.index }
                            )));
                        }
                    }
                } else {
                    naming::register(out, r.index);
                }
            }
            Value::Constant(c) => match c.value {
                Literal::Bool(b) => out.push_str(if b { "true" } else { "false" }),
                Literal::Int(i) => naming::int_literal(out, i),
                Literal::Float(f) => self.floats.borrow_mut().push(out, f),
            },
        }
        Ok(())
    }

    fn field_index(
        &self,
        record_ty: crate::ir::Handle<crate::ir::Type>,
        field: &str,
    ) -> Result<usize, TargetError> {
        match self.module.types.inner(record_ty) {
            Some(TypeInner::Record(record)) => record
                .field(field)
                .map(|(i, _)| i)
                .ok_or_else(|| invalid(format!("record {:?} has no field {field:?}", record.name))),
            _ => Err(invalid("member access on a non-record value")),
        }
    }

    fn reference(&self, out: &mut String, reference: &Reference) -> Result<(), TargetError> {
        let slot = usize::try_from(reference.slot).unwrap_or(usize::MAX);
        match reference.storage {
            StorageKind::Local => naming::register(out, reference.slot),
            StorageKind::Parameter => naming::parameter(out, slot),
            StorageKind::Uniform => out.push_str(&naming::uniform(slot)),
            StorageKind::StageIo => out.push_str(
                self.io_names
                    .get(slot)
                    .ok_or_else(|| invalid("interface slot out of range"))?,
            ),
        }
        let mut current = reference.root_ty;
        for selector in &reference.path {
            match &selector.kind {
                SelectorKind::Member(field) => {
                    let _ = write!(out, ".vpl_m{}", self.field_index(current, field)?);
                }
                SelectorKind::Index(index) => {
                    out.push('[');
                    self.operand(out, index)?;
                    out.push(']');
                }
            }
            current = selector.ty;
        }
        Ok(())
    }

    fn assign(&self, out: &mut String, indent: &str, result: crate::ir::Register) {
        out.push_str(indent);
        naming::register(out, result.index);
        out.push_str(" = ");
    }

    fn instruction(
        &self,
        out: &mut String,
        kind: &InstructionKind,
        indent: &str,
    ) -> Result<(), TargetError> {
        match kind {
            InstructionKind::DeclareLocal { .. } => return Ok(()),
            InstructionKind::Copy { result, source } => {
                if self.is_sampler(result.ty) {
                    return Ok(());
                }
                self.assign(out, indent, *result);
                self.operand(out, source)?;
            }
            InstructionKind::Load { result, source } => {
                if self.is_sampler(result.ty) {
                    return Ok(());
                }
                self.assign(out, indent, *result);
                let whole_block = source.storage == StorageKind::Uniform
                    && !source.is_derived()
                    && self
                        .module
                        .uniforms
                        .get(usize::try_from(source.slot).unwrap_or(usize::MAX))
                        .is_some_and(|u| u.kind == UniformKind::Record);
                match self.types.get(source.root_ty)? {
                    GlslType::Record(record) if whole_block => {
                        // A block instance is not a struct value: build one.
                        let _ = write!(out, "{}(", record.gl_name);
                        for (i, field) in record.fields.iter().enumerate() {
                            if i > 0 {
                                out.push_str(", ");
                            }
                            let _ = write!(out, "vpl_u{}.{}", source.slot, field.gl_name);
                        }
                        out.push(')');
                    }
                    _ => self.reference(out, source)?,
                }
            }
            InstructionKind::Store { target, value } => {
                if target.storage == StorageKind::Local
                    && !target.is_derived()
                    && self.is_sampler(target.root_ty)
                {
                    return Ok(());
                }
                out.push_str(indent);
                self.reference(out, target)?;
                out.push_str(" = ");
                self.operand(out, value)?;
            }
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                use crate::ir::BinaryOp::*;
                self.assign(out, indent, *result);
                self.operand(out, lhs)?;
                out.push_str(match op {
                    Add => " + ",
                    Subtract => " - ",
                    Multiply => " * ",
                    Divide => " / ",
                    Equal => " == ",
                    NotEqual => " != ",
                    Less => " < ",
                    LessEqual => " <= ",
                    Greater => " > ",
                    GreaterEqual => " >= ",
                });
                self.operand(out, rhs)?;
            }
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => {
                match result {
                    Some(r) => self.assign(out, indent, *r),
                    None => out.push_str(indent),
                }
                match callee {
                    Callee::Function(h) => {
                        if !self.stage.functions.contains(*h) {
                            return Err(invalid("call to a function of another stage"));
                        }
                        naming::function(out, h.index());
                    }
                    Callee::Builtin(Builtin::Texture) => out.push_str("texture"),
                }
                self.arguments(out, arguments)?;
            }
            InstructionKind::Construct {
                result,
                ty,
                arguments,
            } => {
                self.assign(out, indent, *result);
                let glsl_ty = self.types.get(*ty)?;
                glsl_ty.write_spelling(out);
                match (glsl_ty, arguments.as_slice()) {
                    (GlslType::Matrix { rows, columns }, [scalar]) if rows != columns => {
                        self.diagonal(out, scalar, *rows, *columns)?;
                    }
                    _ => self.arguments(out, arguments)?,
                }
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                self.assign(out, indent, *result);
                self.operand(out, source)?;
                out.push('.');
                out.extend(pattern.iter().map(|c| c.letter()));
            }
            InstructionKind::Member {
                result,
                source,
                field,
            } => {
                self.assign(out, indent, *result);
                self.operand(out, source)?;
                let _ = write!(out, ".vpl_m{}", self.field_index(source.ty(), field)?);
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                self.assign(out, indent, *result);
                self.operand(out, source)?;
                out.push('[');
                self.operand(out, index)?;
                out.push(']');
            }
        }
        out.push_str(";\n");
        Ok(())
    }

    /// The arguments of a diagonal non-square matrix construction, every
    /// component spelled out in column-major order (`mat4x2(s)` becomes
    /// `mat4x2(s, 0, 0, s, 0, 0, 0, 0)`). The same matrix by GLSL 4.20's
    /// constructor rules; Mesa's GLSL compiler (22.3, llvmpipe) folds a
    /// constant `mat4x2(s)` with `s` also in column 3, row 0
    /// (`docs/vpl/glsl-backend.md`), so no scalar form is left to fold.
    fn diagonal(
        &self,
        out: &mut String,
        scalar: &Operand,
        rows: u8,
        columns: u8,
    ) -> Result<(), TargetError> {
        out.push('(');
        for column in 0..columns {
            for row in 0..rows {
                if column > 0 || row > 0 {
                    out.push_str(", ");
                }
                if row == column {
                    self.operand(out, scalar)?;
                } else {
                    self.floats.borrow_mut().push(out, 0.0);
                }
            }
        }
        out.push(')');
        Ok(())
    }

    fn arguments(&self, out: &mut String, arguments: &[Operand]) -> Result<(), TargetError> {
        out.push('(');
        for (i, a) in arguments.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.operand(out, a)?;
        }
        out.push(')');
        Ok(())
    }
}
