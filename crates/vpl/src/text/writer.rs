//! Canonical text printing (section 11).
//!
//! Layout: a form with child forms prints its head on one line and each
//! child on its own line, indented two more spaces, with the closing
//! parenthesis after the last child; an empty list prints as `(head)`.
//! Instructions, terminators, references and operands print on one line.
//! Binding IDs are generated: `t` + first-discovery index for types, `u`,
//! `s`, `f`, `p`, `b` + list position, registers keep their numbers.

use super::error::MAX_REFERENCE_DEPTH;
use crate::ir::{
    Callee, Direction, Function, Handle, InstructionKind, Literal, Module, Operand, Reference,
    SelectorKind, Stage, StorageKind, TerminatorKind, Type, TypeInner, UniformKind, Value,
};
use std::fmt::Write as _;

/// Prints a module that the caller has verified. Errors describe what
/// cannot be expressed in text (e.g. over-deep references).
///
/// With `parallel`, the functions of a large stage are printed on two
/// threads (each part into its own buffer, joined in order); the text and
/// the first error are those of printing on one thread.
pub(crate) fn print(module: &Module, parallel: bool) -> Result<String, String> {
    let ids = TypeIds::discover(module);
    let mut p = Printer {
        out: String::with_capacity(estimate(module)),
        ids: &ids,
        parallel,
    };
    p.module(module)?;
    Ok(p.out)
}

/// The types [`print`] declares, in declaration order.
pub(crate) fn type_order(module: &Module) -> Vec<Handle<Type>> {
    TypeIds::discover(module).order
}

/// A generous output size, to avoid reallocation: typical text takes
/// about 44 bytes an instruction, and capacity beyond what is written is
/// never touched (so costs no page faults), while growing a large buffer
/// copies it into fresh pages.
fn estimate(module: &Module) -> usize {
    let mut n = 256 + module.types.len() * 32 + module.uniforms.len() * 40;
    for stage in module.stages() {
        n += stage.interface.len() * 48;
        for (_, f) in stage.functions.iter() {
            n += 64 + f.parameters.len() * 24;
            for (_, b) in f.blocks.iter() {
                n += 32 + b.instructions.len() * 56;
            }
        }
    }
    n
}

/// Type IDs in first-discovery order.
struct TypeIds {
    /// Type-table index → type ID number.
    id: Vec<Option<u32>>,
    /// Type ID number → handle.
    order: Vec<Handle<Type>>,
}

impl TypeIds {
    /// Walks the module in text order and numbers every type that needs a
    /// declaration, each followed (depth first) by its components.
    fn discover(module: &Module) -> TypeIds {
        let mut ids = TypeIds {
            id: vec![None; module.types.len()],
            order: Vec::new(),
        };
        for u in &module.uniforms {
            match (u.kind, module.types.inner(u.ty)) {
                (UniformKind::Array, Some(TypeInner::Array { element, .. })) => {
                    ids.visit(module, *element)
                }
                _ => ids.visit(module, u.ty),
            }
        }
        for stage in module.stages() {
            for v in &stage.interface {
                ids.visit(module, v.ty);
            }
            for (_, f) in stage.functions.iter() {
                ids.visit(module, f.return_type);
                for p in &f.parameters {
                    ids.visit(module, p.ty);
                }
                for d in f.declared_registers() {
                    if let InstructionKind::DeclareLocal { register } = &d.kind {
                        ids.visit(module, register.ty);
                    }
                }
            }
        }
        ids
    }

    /// Never panics, even on an unverified module (`write` prints while
    /// the verifier runs): a handle outside the type table is skipped and
    /// printed as an ID no declaration has, which the read back rejects.
    fn visit(&mut self, module: &Module, root: Handle<Type>) {
        let mut stack = vec![root];
        while let Some(h) = stack.pop() {
            let (Some(slot), Some(inner)) = (self.id.get_mut(h.index()), module.types.inner(h))
            else {
                continue;
            };
            if slot.is_some() {
                continue;
            }
            *slot = Some(self.order.len() as u32);
            self.order.push(h);
            match inner {
                TypeInner::Array { element, .. } => stack.push(*element),
                TypeInner::Record(r) => stack.extend(r.fields.iter().rev().map(|f| f.ty)),
                _ => {}
            }
        }
    }

    fn get(&self, h: Handle<Type>) -> u32 {
        // Every type the printer names was discovered above.
        self.id
            .get(h.index())
            .copied()
            .flatten()
            .unwrap_or(u32::MAX)
    }
}

struct Printer<'a> {
    out: String,
    ids: &'a TypeIds,
    /// Whether large stages print their functions on two threads.
    parallel: bool,
}

/// Appends a double-quoted string: `\\`, `\"` and `\uHHHH` for controls.
fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends the decimal digits of `n` (what `{n}` prints, without the
/// formatting machinery: IDs and numbers dominate the output).
fn push_u64(out: &mut String, mut n: u64) {
    // One digit (`r0`, `b1`, `t2`) is the commonest case.
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // ASCII digits, pushed without a UTF-8 check of the buffer.
    out.reserve(buf.len() - i);
    for &digit in &buf[i..] {
        out.push(char::from(digit));
    }
}

/// Appends `prefix` followed by the decimal digits of `n`.
fn push_id(out: &mut String, prefix: &str, n: usize) {
    out.push_str(prefix);
    push_u64(out, n as u64);
}

/// Appends what `{f:?}` prints: the shortest decimal that reads back to the
/// same binary32 bits. Nonzero multiples of 1/8 below 2^16 in magnitude
/// (e.g. `1.0`, `0.5`, `-2.75`) take a fast path; their exact expansion is
/// that shortest decimal (a shorter candidate is at least 0.005 away, more
/// than half a unit in the last place there), see `float_fast_path_matches_debug`.
fn push_f32(out: &mut String, f: f32) {
    let eighths = f * 8.0;
    if f != 0.0 && f.abs() < 65536.0 && eighths == eighths.trunc() {
        const FRACTIONS: [&str; 8] = [".0", ".125", ".25", ".375", ".5", ".625", ".75", ".875"];
        // |eighths| < 2^19: exact in i32.
        let eighths = eighths as i32;
        if eighths < 0 {
            out.push('-');
        }
        let magnitude = eighths.unsigned_abs();
        push_u64(out, u64::from(magnitude / 8));
        out.push_str(FRACTIONS[(magnitude % 8) as usize]);
    } else {
        let _ = write!(out, "{f:?}");
    }
}

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

impl Printer<'_> {
    fn ty(&mut self, h: Handle<Type>) {
        let id = self.ids.get(h) as usize;
        push_id(&mut self.out, "t", id);
    }

    fn module(&mut self, module: &Module) -> Result<(), String> {
        self.out.push_str("(module 1");
        // Types.
        indent(&mut self.out, 1);
        self.out.push_str("(types");
        for i in 0..self.ids.order.len() {
            let h = self.ids.order[i];
            indent(&mut self.out, 2);
            let _ = write!(self.out, "(type t{i} ");
            let Some(inner) = module.types.inner(h) else {
                return Err("type handle outside the type table".into());
            };
            match inner {
                TypeInner::Void => self.out.push_str("void"),
                TypeInner::Scalar(k) => self.out.push_str(k.keyword()),
                TypeInner::Sampler(_) => self.out.push_str("sampler2D"),
                TypeInner::Vector { kind, size } => {
                    let _ = write!(self.out, "vector {} {size}", kind.keyword());
                }
                TypeInner::Matrix { rows, columns } => {
                    let _ = write!(self.out, "matrix {rows} {columns}");
                }
                TypeInner::Array { element, length } => {
                    self.out.push_str("array ");
                    self.ty(*element);
                    let _ = write!(self.out, " {length}");
                }
                TypeInner::Record(r) => {
                    self.out.push_str("record ");
                    quote(&mut self.out, &r.name);
                    for f in &r.fields {
                        self.out.push_str(" (field ");
                        quote(&mut self.out, &f.name);
                        self.out.push(' ');
                        self.ty(f.ty);
                        self.out.push(')');
                    }
                }
            }
            self.out.push(')');
        }
        self.out.push(')');
        // Uniforms.
        indent(&mut self.out, 1);
        self.out.push_str("(uniforms");
        for (slot, u) in module.uniforms.iter().enumerate() {
            indent(&mut self.out, 2);
            let (kw, ty, count) = match (u.kind, module.types.inner(u.ty)) {
                (UniformKind::Array, Some(TypeInner::Array { element, length })) => {
                    ("array", *element, Some(*length))
                }
                (UniformKind::Array, _) => return Err("array uniform without array type".into()),
                (UniformKind::Record, _) => ("record", u.ty, None),
                (UniformKind::Scalar, _) => ("scalar", u.ty, None),
            };
            let _ = write!(self.out, "({kw} u{slot} ");
            quote(&mut self.out, &u.name);
            self.out.push(' ');
            self.ty(ty);
            if let Some(n) = count {
                let _ = write!(self.out, " {n}");
            }
            self.out.push(')');
        }
        self.out.push(')');
        self.stage(module, &module.vertex)?;
        self.stage(module, &module.fragment)?;
        self.out.push_str(")\n");
        Ok(())
    }

    fn stage(&mut self, module: &Module, stage: &Stage) -> Result<(), String> {
        indent(&mut self.out, 1);
        let entry = stage.entry.ok_or("stage without entry")?;
        let _ = write!(self.out, "({} f{}", stage.kind.keyword(), entry.index());
        indent(&mut self.out, 2);
        self.out.push_str("(interface");
        for (slot, v) in stage.interface.iter().enumerate() {
            indent(&mut self.out, 3);
            let dir = match v.direction {
                Direction::In => "in",
                Direction::Out => "out",
            };
            let _ = write!(self.out, "({dir} s{slot} ");
            quote(&mut self.out, &v.name);
            self.out.push(' ');
            self.ty(v.ty);
            let _ = write!(self.out, " {} {})", v.location, v.semantic.keyword());
        }
        self.out.push(')');
        indent(&mut self.out, 2);
        self.out.push_str("(functions");
        let split = match self.parallel {
            true => crate::parallel::stage_split(stage),
            false => None,
        };
        match split {
            Some(mid) => {
                let ids = self.ids;
                let capacity = self.out.capacity() / 2;
                let second_part = || {
                    let mut p = Printer {
                        out: String::with_capacity(capacity),
                        ids,
                        parallel: false,
                    };
                    for (h, f) in stage.functions.iter().skip(mid) {
                        p.function(module, h, f)?;
                    }
                    Ok::<String, String>(p.out)
                };
                let (first, second) = crate::parallel::join(
                    || {
                        for (h, f) in stage.functions.iter().take(mid) {
                            self.function(module, h, f)?;
                        }
                        Ok::<(), String>(())
                    },
                    second_part,
                );
                first?;
                self.out.push_str(&second?);
            }
            None => {
                for (h, f) in stage.functions.iter() {
                    self.function(module, h, f)?;
                }
            }
        }
        self.out.push_str("))");
        Ok(())
    }

    fn function(
        &mut self,
        module: &Module,
        h: Handle<crate::ir::Function>,
        f: &Function,
    ) -> Result<(), String> {
        let _ = module;
        indent(&mut self.out, 3);
        push_id(&mut self.out, "(function f", h.index());
        self.out.push(' ');
        quote(&mut self.out, &f.name);
        self.out.push(' ');
        self.ty(f.return_type);
        indent(&mut self.out, 4);
        self.out.push_str("(parameters");
        for (slot, p) in f.parameters.iter().enumerate() {
            indent(&mut self.out, 5);
            push_id(&mut self.out, "(parameter p", slot);
            self.out.push(' ');
            self.ty(p.ty);
            self.out.push(')');
        }
        self.out.push(')');
        indent(&mut self.out, 4);
        self.out.push_str("(registers");
        for d in f.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = &d.kind {
                indent(&mut self.out, 5);
                self.out.push_str("(register r");
                push_u64(&mut self.out, register.index);
                self.out.push(' ');
                self.ty(register.ty);
                self.out.push(')');
            }
        }
        self.out.push(')');
        for (bh, block) in f.blocks.iter() {
            indent(&mut self.out, 4);
            push_id(&mut self.out, "(block b", bh.index());
            for instruction in &block.instructions {
                if matches!(instruction.kind, InstructionKind::DeclareLocal { .. }) {
                    continue;
                }
                indent(&mut self.out, 5);
                self.instruction(&instruction.kind)?;
            }
            indent(&mut self.out, 5);
            let terminator = block
                .terminator
                .as_ref()
                .ok_or("block without terminator")?;
            match &terminator.kind {
                TerminatorKind::Branch { target } => {
                    push_id(&mut self.out, "(branch b", target.index());
                    self.out.push(')');
                }
                TerminatorKind::BranchIf {
                    condition,
                    if_true,
                    if_false,
                } => {
                    self.out.push_str("(branch_if ");
                    self.operand(condition);
                    push_id(&mut self.out, " b", if_true.index());
                    push_id(&mut self.out, " b", if_false.index());
                    self.out.push(')');
                }
                TerminatorKind::Return { value: None } => self.out.push_str("(return)"),
                TerminatorKind::Return { value: Some(v) } => {
                    self.out.push_str("(return ");
                    self.operand(v);
                    self.out.push(')');
                }
                TerminatorKind::Discard => self.out.push_str("(discard)"),
            }
            self.out.push(')');
        }
        self.out.push(')');
        Ok(())
    }

    fn register(&mut self, index: u64) {
        self.out.push('r');
        push_u64(&mut self.out, index);
    }

    fn operands(&mut self, ops: &[Operand]) {
        for op in ops {
            self.out.push(' ');
            self.operand(op);
        }
    }

    fn instruction(&mut self, kind: &InstructionKind) -> Result<(), String> {
        match kind {
            InstructionKind::DeclareLocal { .. } => {}
            InstructionKind::Copy { result, source } => {
                self.out.push_str("(copy ");
                self.register(result.index);
                self.out.push(' ');
                self.operand(source);
            }
            InstructionKind::Load { result, source } => {
                self.out.push_str("(load ");
                self.register(result.index);
                self.out.push(' ');
                self.reference(source)?;
            }
            InstructionKind::Store { target, value } => {
                self.out.push_str("(store ");
                self.reference(target)?;
                self.out.push(' ');
                self.operand(value);
            }
            InstructionKind::Binary {
                result,
                op,
                lhs,
                rhs,
            } => {
                self.out.push('(');
                self.out.push_str(op.keyword());
                self.out.push(' ');
                self.register(result.index);
                self.out.push(' ');
                self.operand(lhs);
                self.out.push(' ');
                self.operand(rhs);
            }
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => match callee {
                Callee::Function(f) => {
                    self.out.push_str("(call ");
                    match result {
                        Some(r) => self.register(r.index),
                        None => self.out.push_str("void"),
                    }
                    let _ = write!(self.out, " f{}", f.index());
                    self.operands(arguments);
                }
                Callee::Builtin(crate::ir::Builtin::Texture) => {
                    let Some(r) = result else {
                        return Err("a texture call without destination cannot be written".into());
                    };
                    if arguments.len() != 2 {
                        return Err(format!(
                            "a texture call with {} arguments cannot be written (the text form takes 2)",
                            arguments.len()
                        ));
                    }
                    self.out.push_str("(texture ");
                    self.register(r.index);
                    self.operands(arguments);
                }
            },
            InstructionKind::Construct {
                result, arguments, ..
            } => {
                self.out.push_str("(construct ");
                self.register(result.index);
                self.operands(arguments);
            }
            InstructionKind::Swizzle {
                result,
                source,
                pattern,
            } => {
                self.out.push_str("(swizzle ");
                self.register(result.index);
                self.out.push(' ');
                self.operand(source);
                self.out.push_str(" \"");
                self.out.extend(pattern.iter().map(|c| c.letter()));
                self.out.push('"');
            }
            InstructionKind::Member {
                result,
                source,
                field,
            } => {
                self.out.push_str("(member ");
                self.register(result.index);
                self.out.push(' ');
                self.operand(source);
                self.out.push(' ');
                quote(&mut self.out, field);
            }
            InstructionKind::Index {
                result,
                source,
                index,
            } => {
                self.out.push_str("(index ");
                self.register(result.index);
                self.out.push(' ');
                self.operand(source);
                self.out.push(' ');
                self.operand(index);
            }
        }
        self.out.push(')');
        Ok(())
    }

    fn reference(&mut self, r: &Reference) -> Result<(), String> {
        if r.path.len() > MAX_REFERENCE_DEPTH {
            return Err(format!(
                "derived reference depth {} exceeds the writer's limit of {MAX_REFERENCE_DEPTH}",
                r.path.len()
            ));
        }
        for s in r.path.iter().rev() {
            self.out.push_str(match s.kind {
                SelectorKind::Member(_) => "(member_ref ",
                SelectorKind::Index(_) => "(index_ref ",
            });
        }
        self.out.push_str(match r.storage {
            StorageKind::Local => "(local r",
            StorageKind::Parameter => "(parameter p",
            StorageKind::Uniform => "(uniform u",
            StorageKind::StageIo => "(stage s",
        });
        push_u64(&mut self.out, r.slot);
        self.out.push(')');
        for s in &r.path {
            self.out.push(' ');
            match &s.kind {
                SelectorKind::Member(name) => quote(&mut self.out, name),
                SelectorKind::Index(op) => self.operand(op),
            }
            self.out.push(')');
        }
        Ok(())
    }

    fn operand(&mut self, op: &Operand) {
        match op.value {
            Value::Register(r) => self.register(r.index),
            Value::Constant(c) => {
                match c.value {
                    Literal::Bool(b) => {
                        self.out
                            .push_str(if b { "(bool true" } else { "(bool false" });
                    }
                    Literal::Int(i) => {
                        self.out.push_str(if i < 0 { "(int -" } else { "(int " });
                        push_u64(&mut self.out, u64::from(i.unsigned_abs()));
                    }
                    // The shortest decimal that reads back to the same
                    // binary32 bits, including `-0.0`.
                    Literal::Float(f) => {
                        self.out.push_str("(float ");
                        push_f32(&mut self.out, f);
                    }
                }
                self.out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{push_f32, push_u64};

    #[test]
    fn integer_digits_match_display() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::from(u32::MAX), u64::MAX] {
            let mut out = String::new();
            push_u64(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }

    #[test]
    fn float_fast_path_matches_debug() {
        // Every multiple of 1/8 the fast path takes, and its neighbours.
        let mut out = String::new();
        for eighths in -(1i32 << 19) - 8..=(1 << 19) + 8 {
            let f = eighths as f32 / 8.0;
            for g in [
                f,
                f32::from_bits(f.to_bits() + 1),
                f32::from_bits(f.to_bits().wrapping_sub(1)),
            ] {
                out.clear();
                push_f32(&mut out, g);
                assert_eq!(out, format!("{g:?}"), "bits {:#010x}", g.to_bits());
            }
        }
        for g in [
            0.0f32,
            -0.0,
            f32::MIN_POSITIVE,
            1e-7,
            1e20,
            f32::MAX,
            0.1,
            65536.0,
            -65536.125,
        ] {
            out.clear();
            push_f32(&mut out, g);
            assert_eq!(out, format!("{g:?}"));
        }
    }
}
