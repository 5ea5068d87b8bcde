//! Printing a [`Program`] as canonical VPL text: the layout, binding IDs
//! and type discovery order of the canonical writer (spec section 11), so
//! that the text is a fixed point of `vpl::text::write` (tested).

use crate::program::{Function, Inst, Operand, Place, Program, Stage, Terminator, push_id};
use crate::types::{Records, Ty};
use std::collections::HashMap;
use std::io::Write as _;

/// Up to this many types, IDs are found by a linear scan.
const FEW_TYPES: usize = 24;

/// Type IDs in first-discovery order.
struct TypeIds<'a> {
    records: &'a Records,
    id: HashMap<Ty, usize>,
    order: Vec<Ty>,
}

impl TypeIds<'_> {
    /// Numbers `t` and then (depth first) its components.
    /// The ID of `t`, if numbered: a linear scan while there are few types
    /// (registers repeat a handful of types; hashing each costs more).
    fn lookup(&self, t: &Ty) -> Option<usize> {
        if self.order.len() <= FEW_TYPES {
            self.order.iter().position(|x| x == t)
        } else {
            self.id.get(t).copied()
        }
    }

    fn visit(&mut self, t: &Ty) {
        if self.lookup(t).is_some() {
            return;
        }
        self.id.insert(t.clone(), self.order.len());
        self.order.push(t.clone());
        match t {
            Ty::Array(e, _) => self.visit(e),
            Ty::Record(r) => {
                let fields: Vec<Ty> = self
                    .records
                    .fields_of(*r)
                    .iter()
                    .map(|(_, t)| t.clone())
                    .collect();
                for f in &fields {
                    self.visit(f);
                }
            }
            _ => {}
        }
    }

    fn stage(&mut self, s: &Stage) {
        for v in &s.interface {
            self.visit(&v.ty);
        }
        for f in &s.functions {
            self.visit(&f.ret);
            for p in &f.params {
                self.visit(p);
            }
            for r in &f.registers {
                self.visit(r);
            }
        }
    }

    fn get(&self, t: &Ty) -> usize {
        self.lookup(t).unwrap_or(usize::MAX)
    }
}

/// A newline and the deepest indentation the layout uses (level 5).
const INDENTS: &str = "\n          ";

fn indent(out: &mut Vec<u8>, level: usize) {
    match INDENTS.as_bytes().get(..1 + 2 * level) {
        Some(s) => out.extend_from_slice(s),
        None => {
            out.push(b'\n');
            for _ in 0..level {
                out.extend_from_slice(b"  ");
            }
        }
    }
}

/// Appends a double-quoted string as the canonical writer does.
fn quote(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '\\' => out.extend_from_slice(b"\\\\"),
            '"' => out.extend_from_slice(b"\\\""),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'"');
}

/// The canonical text of `p`.
pub fn print(p: &Program, records: &Records) -> String {
    let mut ids = TypeIds {
        records,
        id: HashMap::new(),
        order: Vec::new(),
    };
    for u in &p.uniforms {
        match &u.ty {
            Ty::Array(e, _) => ids.visit(e),
            t => ids.visit(t),
        }
    }
    ids.stage(&p.vertex);
    ids.stage(&p.fragment);
    // About 30 bytes per instruction (and register): sized once, so the
    // text is not copied as it grows.
    let mut out = Vec::with_capacity(4096 + 40 * p.instruction_count());
    out.extend_from_slice(b"(module 1");
    indent(&mut out, 1);
    out.extend_from_slice(b"(types");
    for (i, t) in ids.order.iter().enumerate() {
        indent(&mut out, 2);
        push_id(&mut out, b"(type t", i);
        out.push(b' ');
        match t {
            Ty::Void => out.extend_from_slice(b"void"),
            Ty::Scalar(k) => out.extend_from_slice(k.keyword().as_bytes()),
            Ty::Sampler => out.extend_from_slice(b"sampler2D"),
            Ty::Vector(k, n) => {
                let _ = write!(out, "vector {} {n}", k.keyword());
            }
            Ty::Matrix(r, c) => {
                let _ = write!(out, "matrix {r} {c}");
            }
            Ty::Array(e, n) => {
                let _ = write!(out, "array t{} {n}", ids.get(e));
            }
            Ty::Record(r) => {
                out.extend_from_slice(b"record ");
                quote(
                    &mut out,
                    records.names.get(*r).map(String::as_str).unwrap_or(""),
                );
                for (name, ft) in records.fields_of(*r) {
                    out.extend_from_slice(b" (field ");
                    quote(&mut out, name);
                    let _ = write!(out, " t{})", ids.get(ft));
                }
            }
        }
        out.push(b')');
    }
    out.push(b')');
    indent(&mut out, 1);
    out.extend_from_slice(b"(uniforms");
    for (slot, u) in p.uniforms.iter().enumerate() {
        indent(&mut out, 2);
        let (kw, ty, count) = match &u.ty {
            Ty::Array(e, n) => ("array", &**e, Some(*n)),
            Ty::Record(_) => ("record", &u.ty, None),
            t => ("scalar", t, None),
        };
        let _ = write!(out, "({kw} u{slot} ");
        quote(&mut out, &u.name);
        let _ = write!(out, " t{}", ids.get(ty));
        if let Some(n) = count {
            let _ = write!(out, " {n}");
        }
        out.push(b')');
    }
    out.push(b')');
    stage(&mut out, &p.vertex, &ids);
    stage(&mut out, &p.fragment, &ids);
    out.extend_from_slice(b")\n");
    // Every byte pushed is ASCII or a whole UTF-8 sequence.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn stage(out: &mut Vec<u8>, s: &Stage, ids: &TypeIds) {
    indent(out, 1);
    let _ = write!(out, "({} f0", s.kind.keyword());
    indent(out, 2);
    out.extend_from_slice(b"(interface");
    for (slot, v) in s.interface.iter().enumerate() {
        indent(out, 3);
        let _ = write!(out, "({} s{slot} ", if v.input { "in" } else { "out" });
        quote(out, &v.name);
        let _ = write!(
            out,
            " t{} {} {})",
            ids.get(&v.ty),
            v.location,
            v.semantic.keyword()
        );
    }
    out.push(b')');
    indent(out, 2);
    out.extend_from_slice(b"(functions");
    for (i, f) in s.functions.iter().enumerate() {
        function(out, i, f, ids);
    }
    out.extend_from_slice(b"))");
}

fn function(out: &mut Vec<u8>, index: usize, f: &Function, ids: &TypeIds) {
    indent(out, 3);
    let _ = write!(out, "(function f{index} ");
    quote(out, &f.name);
    let _ = write!(out, " t{}", ids.get(&f.ret));
    indent(out, 4);
    out.extend_from_slice(b"(parameters");
    for (slot, p) in f.params.iter().enumerate() {
        indent(out, 5);
        let _ = write!(out, "(parameter p{slot} t{})", ids.get(p));
    }
    out.push(b')');
    indent(out, 4);
    out.extend_from_slice(b"(registers");
    for (n, r) in f.registers.iter().enumerate() {
        indent(out, 5);
        push_id(out, b"(register r", n);
        push_id(out, b" t", ids.get(r));
        out.push(b')');
    }
    out.push(b')');
    for (b, block) in f.blocks.iter().enumerate() {
        indent(out, 4);
        push_id(out, b"(block b", b);
        for inst in &block.instructions {
            indent(out, 5);
            instruction(out, inst);
        }
        indent(out, 5);
        terminator(out, &block.terminator);
        out.push(b')');
    }
    out.push(b')');
}

fn operands(out: &mut Vec<u8>, list: &[Operand]) {
    for o in list {
        out.push(b' ');
        o.push(out);
    }
}

fn place(out: &mut Vec<u8>, p: Place) {
    match p {
        Place::Stage(n) => push_id(out, b"(stage s", n),
        Place::Uniform(n) => push_id(out, b"(uniform u", n),
        Place::Parameter(n) => push_id(out, b"(parameter p", n),
    }
    out.push(b')');
}

fn instruction(out: &mut Vec<u8>, inst: &Inst) {
    match inst {
        Inst::Comment(text) => {
            out.extend_from_slice(text.as_bytes());
            return;
        }
        Inst::Op {
            op,
            result,
            operands: list,
        } => {
            out.push(b'(');
            out.extend_from_slice(op.keyword().as_bytes());
            push_id(out, b" r", *result as usize);
            operands(out, list.as_slice());
        }
        Inst::Swizzle {
            result,
            source,
            pattern,
        } => {
            push_id(out, b"(swizzle r", *result as usize);
            out.push(b' ');
            source.push(out);
            out.push(b' ');
            quote(out, pattern);
        }
        Inst::Member {
            result,
            source,
            field,
        } => {
            push_id(out, b"(member r", *result as usize);
            out.push(b' ');
            source.push(out);
            out.push(b' ');
            quote(out, field);
        }
        Inst::Copy { result, source } => {
            push_id(out, b"(copy r", *result as usize);
            out.push(b' ');
            source.push(out);
        }
        Inst::Call {
            result,
            function,
            arguments,
        } => {
            push_id(out, b"(call r", *result as usize);
            push_id(out, b" f", *function);
            operands(out, arguments);
        }
        Inst::Load { result, place: p } => {
            push_id(out, b"(load r", *result as usize);
            out.push(b' ');
            place(out, *p);
        }
        Inst::Store { place: p, value } => {
            out.extend_from_slice(b"(store ");
            place(out, *p);
            out.push(b' ');
            value.push(out);
        }
    }
    out.push(b')');
}

fn terminator(out: &mut Vec<u8>, t: &Terminator) {
    match t {
        Terminator::Branch(b) => {
            push_id(out, b"(branch b", *b);
            out.push(b')');
        }
        Terminator::BranchIf(condition, t, f) => {
            out.extend_from_slice(b"(branch_if ");
            condition.push(out);
            push_id(out, b" b", *t);
            push_id(out, b" b", *f);
            out.push(b')');
        }
        Terminator::Return => out.extend_from_slice(b"(return)"),
        Terminator::ReturnValue(v) => {
            out.extend_from_slice(b"(return ");
            v.push(out);
            out.push(b')');
        }
    }
}
