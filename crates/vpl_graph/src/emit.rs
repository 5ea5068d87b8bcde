//! Printing a [`Program`] as canonical VPL text: the layout, binding IDs
//! and type discovery order of the canonical writer (spec section 11), so
//! that the text is a fixed point of `vpl::text::write` (tested).

use crate::program::{Function, Inst, Operand, Place, Program, Stage, Terminator, push_id};
use crate::types::{Records, Ty};
use std::collections::HashMap;
use std::fmt::Write as _;

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

fn indent(out: &mut String, level: usize) {
    match INDENTS.get(..1 + 2 * level) {
        Some(s) => out.push_str(s),
        None => {
            out.push('\n');
            for _ in 0..level {
                out.push_str("  ");
            }
        }
    }
}

/// Appends a double-quoted string as the canonical writer does.
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
    let mut out = String::with_capacity(4096 + 40 * p.instruction_count());
    out.push_str("(module 1");
    indent(&mut out, 1);
    out.push_str("(types");
    for (i, t) in ids.order.iter().enumerate() {
        indent(&mut out, 2);
        let _ = write!(out, "(type t{i} ");
        match t {
            Ty::Void => out.push_str("void"),
            Ty::Scalar(k) => out.push_str(k.keyword()),
            Ty::Sampler => out.push_str("sampler2D"),
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
                out.push_str("record ");
                quote(
                    &mut out,
                    records.names.get(*r).map(String::as_str).unwrap_or(""),
                );
                for (name, ft) in records.fields_of(*r) {
                    out.push_str(" (field ");
                    quote(&mut out, name);
                    let _ = write!(out, " t{})", ids.get(ft));
                }
            }
        }
        out.push(')');
    }
    out.push(')');
    indent(&mut out, 1);
    out.push_str("(uniforms");
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
        out.push(')');
    }
    out.push(')');
    stage(&mut out, &p.vertex, &ids);
    stage(&mut out, &p.fragment, &ids);
    out.push_str(")\n");
    out
}

fn stage(out: &mut String, s: &Stage, ids: &TypeIds) {
    indent(out, 1);
    let _ = write!(out, "({} f0", s.kind.keyword());
    indent(out, 2);
    out.push_str("(interface");
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
    out.push(')');
    indent(out, 2);
    out.push_str("(functions");
    for (i, f) in s.functions.iter().enumerate() {
        function(out, i, f, ids);
    }
    out.push_str("))");
}

fn function(out: &mut String, index: usize, f: &Function, ids: &TypeIds) {
    indent(out, 3);
    let _ = write!(out, "(function f{index} ");
    quote(out, &f.name);
    let _ = write!(out, " t{}", ids.get(&f.ret));
    indent(out, 4);
    out.push_str("(parameters");
    for (slot, p) in f.params.iter().enumerate() {
        indent(out, 5);
        let _ = write!(out, "(parameter p{slot} t{})", ids.get(p));
    }
    out.push(')');
    indent(out, 4);
    out.push_str("(registers");
    for (n, r) in f.registers.iter().enumerate() {
        indent(out, 5);
        push_id(out, "(register r", n);
        push_id(out, " t", ids.get(r));
        out.push(')');
    }
    out.push(')');
    for (b, block) in f.blocks.iter().enumerate() {
        indent(out, 4);
        let _ = write!(out, "(block b{b}");
        for inst in &block.instructions {
            indent(out, 5);
            instruction(out, inst);
        }
        indent(out, 5);
        terminator(out, &block.terminator);
        out.push(')');
    }
    out.push(')');
}

fn operands(out: &mut String, list: &[Operand]) {
    for o in list {
        out.push(' ');
        o.push(out);
    }
}

fn place(out: &mut String, p: Place) {
    let _ = match p {
        Place::Stage(n) => write!(out, "(stage s{n})"),
        Place::Uniform(n) => write!(out, "(uniform u{n})"),
        Place::Parameter(n) => write!(out, "(parameter p{n})"),
    };
}

fn instruction(out: &mut String, inst: &Inst) {
    match inst {
        Inst::Comment(text) => {
            out.push_str(text);
            return;
        }
        Inst::Op {
            op,
            result,
            operands: list,
        } => {
            out.push('(');
            out.push_str(op.keyword());
            push_id(out, " r", *result as usize);
            operands(out, list.as_slice());
        }
        Inst::Swizzle {
            result,
            source,
            pattern,
        } => {
            push_id(out, "(swizzle r", *result as usize);
            out.push(' ');
            source.push(out);
            out.push(' ');
            quote(out, pattern);
        }
        Inst::Member {
            result,
            source,
            field,
        } => {
            let _ = write!(out, "(member r{result} ");
            source.push(out);
            out.push(' ');
            quote(out, field);
        }
        Inst::Copy { result, source } => {
            push_id(out, "(copy r", *result as usize);
            out.push(' ');
            source.push(out);
        }
        Inst::Call {
            result,
            function,
            arguments,
        } => {
            let _ = write!(out, "(call r{result} f{function}");
            operands(out, arguments);
        }
        Inst::Load { result, place: p } => {
            push_id(out, "(load r", *result as usize);
            out.push(' ');
            place(out, *p);
        }
        Inst::Store { place: p, value } => {
            out.push_str("(store ");
            place(out, *p);
            out.push(' ');
            value.push(out);
        }
    }
    out.push(')');
}

fn terminator(out: &mut String, t: &Terminator) {
    match t {
        Terminator::Branch(b) => {
            push_id(out, "(branch b", *b);
            out.push(')');
        }
        Terminator::BranchIf(condition, t, f) => {
            out.push_str("(branch_if ");
            condition.push(out);
            push_id(out, " b", *t);
            push_id(out, " b", *f);
            out.push(')');
        }
        Terminator::Return => out.push_str("(return)"),
        Terminator::ReturnValue(v) => {
            out.push_str("(return ");
            v.push(out);
            out.push(')');
        }
    }
}
