//! C types of ZLM values that are not one word: value declarations become
//! structs, enum and error declarations tagged structs, `Result<T, E>`
//! carriers tagged structs. Each field slot has a presence flag (the
//! interpreter's `None` for a moved-out field), so drops and renders see
//! exactly what the interpreter's value tree holds. Every non-Copy type
//! gets a drop function that logs and destroys it as the interpreter's
//! `drop_value` does (fields in reverse ordinal order, a Result payload as
//! `.value`/`.error`), and every type a render function. The shape table
//! (which types a native engine holds, and how) is public: the LLVM
//! engines lay out the same shapes.

use crate::check::Resolved;
use crate::interp::type_name;
use crate::model::*;
use std::fmt::Write;

/// One field slot: its ordinal, name and type.
#[derive(Clone)]
pub struct Slot {
    pub ordinal: u32,
    pub name: String,
    pub ty: Type,
}

/// The shape of a non-word type.
pub enum Shape {
    /// A value declaration: fields by ordinal.
    Record { decl: usize, fields: Vec<Slot> },
    /// An enum or error declaration: (tag, name, payload fields) per
    /// variant, in declaration order (member names use that index).
    Variants {
        decl: usize,
        variants: Vec<(u32, String, Vec<Slot>)>,
    },
    /// `Result<T, E>`.
    Result(Type, Type),
    /// `Array<Byte>` (the runtime's `zbytes`).
    Bytes,
    /// `Slice<Byte>` (the runtime's `zslice`).
    Slice,
}

/// The emitted unit's non-word types, in definition order (every member's
/// type is defined before the struct that holds it).
#[derive(Default)]
pub struct Types {
    tys: Vec<(Type, Shape)>,
}

/// How a host renders a word of this type (the runtime's render kinds).
pub fn render_kind(t: &Type) -> Option<u32> {
    match t {
        Type::Scalar(ScalarKind::Bool) => Some(2),
        Type::Scalar(k) if k.is_signed() => Some(1),
        Type::Scalar(_) => Some(0),
        Type::Unit => Some(3),
        // Never has no values: the uninhabited side of a `Result` is a
        // word slot no operation writes, rendered (never) as Unit is.
        Type::Never => Some(3),
        // The host allocator capability carries no data.
        Type::AllocatorBytesError => Some(3),
        Type::Ref(a) if **a == Type::AllocatorBytesError => Some(3),
        _ => None,
    }
}

/// The target type of a Ref/Mut loan of a scalar, record, enum or Result
/// (loans of bytes and the allocator are not lowered).
pub fn pointee(t: &Type) -> Option<&Type> {
    match t {
        Type::Ref(a) | Type::Mut(a)
            if !matches!(**a, Type::SliceByte | Type::AllocatorBytesError) =>
        {
            Some(a)
        }
        _ => None,
    }
}

/// A shared loan of a byte slice: the slice itself.
fn slice_loan(t: &Type) -> bool {
    matches!(t, Type::Ref(a) if **a == Type::SliceByte)
}

/// The C members holding field `ordinal` of a record (`variant` `None`)
/// or of the variant at index `variant` of a tagged struct: the value
/// member and its presence flag (`f3`/`h3`, `v1_f3`/`v1_h3`). Every walk
/// over a struct (definition, drop, render, host codecs, the lowering's
/// places) names members through this.
pub fn members(variant: Option<usize>, ordinal: impl std::fmt::Display) -> (String, String) {
    match variant {
        Some(vi) => (format!("v{vi}_f{ordinal}"), format!("v{vi}_h{ordinal}")),
        None => (format!("f{ordinal}"), format!("h{ordinal}")),
    }
}

/// Whether values of `t` are one canonical word.
pub fn is_word(t: &Type) -> bool {
    render_kind(t).is_some()
}

fn slots(fields: &[Field]) -> Vec<Slot> {
    let mut v: Vec<Slot> = fields
        .iter()
        .map(|f| Slot {
            ordinal: f.ordinal,
            name: f.name.clone(),
            ty: f.ty.clone(),
        })
        .collect();
    v.sort_by_key(|s| s.ordinal);
    v
}

/// A C string literal.
pub(super) fn cstr(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => o.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(o, "\\{b:03o}");
                }
            }
        }
    }
    o.push('"');
    o
}

impl Types {
    /// The index of `t`, adding it (and its members) when new; `None` for
    /// a word. A type the runtime cannot hold is an error naming it.
    pub fn add(&mut self, r: &Resolved<'_>, t: &Type) -> Result<Option<usize>, String> {
        self.add_inner(r, t, &mut Vec::new())
    }

    fn add_inner(
        &mut self,
        r: &Resolved<'_>,
        t: &Type,
        open: &mut Vec<Type>,
    ) -> Result<Option<usize>, String> {
        if is_word(t) {
            return Ok(None);
        }
        if let Some(inner) = pointee(t) {
            // A loan: a pointer to its target's storage (top level only).
            if !open.is_empty() || pointee(inner).is_some() {
                return Err(format!("loans inside values ({})", type_name(r, t)));
            }
            self.add_inner(r, inner, open)?;
            return Ok(None);
        }
        if slice_loan(t) {
            return self.add_inner(r, &Type::SliceByte, open);
        }
        if let Some(i) = self.index(t) {
            return Ok(Some(i));
        }
        if open.contains(t) {
            return Err(format!("recursive type {}", type_name(r, t)));
        }
        let shape = match t {
            Type::Nominal(_) => {
                let Some(d) = r.decl_of(t) else {
                    return Err(format!("type {} of another module", type_name(r, t)));
                };
                let decl = &r.module.declarations[d];
                if decl.kind == DeclKind::Value {
                    Shape::Record {
                        decl: d,
                        fields: slots(&decl.fields),
                    }
                } else {
                    Shape::Variants {
                        decl: d,
                        variants: decl
                            .variants
                            .iter()
                            .map(|v| (v.tag, v.name.clone(), slots(&v.fields)))
                            .collect(),
                    }
                }
            }
            Type::Result(a, b) => Shape::Result((**a).clone(), (**b).clone()),
            Type::ArrayByte => Shape::Bytes,
            Type::SliceByte if open.is_empty() => Shape::Slice,
            t => return Err(format!("values of type {}", type_name(r, t))),
        };
        open.push(t.clone());
        let members: Vec<Type> = match &shape {
            Shape::Record { fields, .. } => fields.iter().map(|s| s.ty.clone()).collect(),
            Shape::Variants { variants, .. } => variants
                .iter()
                .flat_map(|v| v.2.iter().map(|s| s.ty.clone()))
                .collect(),
            Shape::Result(a, b) => vec![a.clone(), b.clone()],
            Shape::Bytes | Shape::Slice => vec![],
        };
        for m in &members {
            self.add_inner(r, m, open)?;
        }
        open.pop();
        self.tys.push((t.clone(), shape));
        Ok(Some(self.tys.len() - 1))
    }

    /// The index of an already added non-word type.
    pub fn index(&self, t: &Type) -> Option<usize> {
        self.tys.iter().position(|(x, _)| x == t)
    }

    /// Every added type with its shape, by index (members first).
    pub fn iter(&self) -> impl Iterator<Item = (&Type, &Shape)> {
        self.tys.iter().map(|(t, s)| (t, s))
    }

    /// The C type of an already added type.
    pub fn c(&self, t: &Type) -> String {
        if let Some(inner) = pointee(t) {
            return format!("{} *", self.c(inner));
        }
        if slice_loan(t) {
            return self.c(&Type::SliceByte);
        }
        match self.index(t) {
            Some(i) => format!("zt{i}"),
            None => "uint64_t".into(),
        }
    }

    /// The shape of an already added non-word type.
    pub fn shape(&self, t: &Type) -> Option<&Shape> {
        self.index(t).map(|i| &self.tys[i].1)
    }

    /// The drop and render functions [`Types::emit`] defines.
    pub fn functions(&self, r: &Resolved<'_>) -> Vec<String> {
        let mut v = Vec::new();
        for (i, (t, _)) in self.tys.iter().enumerate() {
            if !r.is_copy(t) && !t.is_borrow() {
                v.push(format!("zd{i}"));
            }
            v.push(format!("zp{i}"));
        }
        v
    }

    /// Typedefs, drop and render functions of every type.
    pub fn emit(&self, r: &Resolved<'_>) -> String {
        let mut out = String::new();
        for (i, (t, shape)) in self.tys.iter().enumerate() {
            let _ = writeln!(out, "/* {} */", type_name(r, t));
            match shape {
                Shape::Bytes => {
                    let _ = writeln!(
                        out,
                        "typedef zbytes zt{i};\nstatic void zd{i}(zrt *z, const char *fn, const zname *nm, const zt{i} *v) {{\n  zlm_drop_line(z, fn, nm, \"Array<Byte>\");\n  zlm_bytes_free(z, (zbytes *)v);\n}}\nstatic void zp{i}(FILE *o, const zt{i} *v) {{ zlm_bytes_render(o, v); }}\n"
                    );
                    continue;
                }
                Shape::Slice => {
                    let _ = writeln!(
                        out,
                        "typedef zslice zt{i};\nstatic void zp{i}(FILE *o, const zt{i} *v) {{ fprintf(o, \"Slice(%llu..%llu)\", (unsigned long long)v->s, (unsigned long long)v->e); }}\n"
                    );
                    continue;
                }
                _ => {}
            }
            let _ = writeln!(out, "typedef struct zt{i} {{");
            match shape {
                Shape::Bytes | Shape::Slice => {}
                Shape::Record { fields, .. } => {
                    for s in fields {
                        let (m, h) = members(None, s.ordinal);
                        let _ = writeln!(out, "  {} {m};\n  unsigned char {h};", self.c(&s.ty));
                    }
                    out.push_str("  unsigned char zpad;\n");
                }
                Shape::Variants { variants, .. } => {
                    out.push_str("  uint32_t tag;\n  unsigned char built;\n");
                    for (vi, (_, _, fields)) in variants.iter().enumerate() {
                        for s in fields {
                            let (m, h) = members(Some(vi), s.ordinal);
                            let _ = writeln!(out, "  {} {m};\n  unsigned char {h};", self.c(&s.ty));
                        }
                    }
                }
                Shape::Result(a, b) => {
                    let _ = writeln!(
                        out,
                        "  uint32_t tag;\n  {} ok;\n  {} err;",
                        self.c(a),
                        self.c(b)
                    );
                }
            }
            let _ = writeln!(out, "}} zt{i};");
            if !r.is_copy(t) && !t.is_borrow() {
                out.push_str(&self.drop_fn(r, i, t, shape));
            }
            out.push_str(&self.render_fn(r, i, shape));
            out.push('\n');
        }
        out
    }

    /// A call destroying `v` (a `ztN *`) named by `nm` (a `const zname *`)
    /// in the frame of function `fnv` (a `const char *`),
    /// or nothing for Copy and word types.
    pub fn drop_call(&self, r: &Resolved<'_>, t: &Type, fnv: &str, nm: &str, v: &str) -> String {
        match self.index(t) {
            Some(i) if !r.is_copy(t) && !t.is_borrow() => format!("zd{i}(z, {fnv}, {nm}, {v});"),
            _ => String::new(),
        }
    }

    fn drop_fn(&self, r: &Resolved<'_>, i: usize, t: &Type, shape: &Shape) -> String {
        let mut s = format!(
            "static void zd{i}(zrt *z, const char *fn, const zname *nm, const zt{i} *v) {{\n  zlm_drop_line(z, fn, nm, {});\n",
            cstr(&type_name(r, t))
        );
        let field = |s: &mut String, ty: &Type, seg: &str, member: &str, flag: Option<&str>| {
            let call = self.drop_call(
                r,
                ty,
                "fn",
                &format!("&(zname){{nm, {}}}", cstr(seg)),
                member,
            );
            if call.is_empty() {
                return;
            }
            match flag {
                Some(h) => {
                    let _ = writeln!(s, "  if ({h}) {call}");
                }
                None => {
                    let _ = writeln!(s, "  {call}");
                }
            }
        };
        match shape {
            Shape::Record { fields, .. } => {
                for f in fields.iter().rev() {
                    let (m, h) = members(None, f.ordinal);
                    field(
                        &mut s,
                        &f.ty,
                        &format!(".{}", f.name),
                        &format!("&v->{m}"),
                        Some(&format!("v->{h}")),
                    );
                }
            }
            Shape::Variants { variants, .. } => {
                for (vi, (tag, _, fields)) in variants.iter().enumerate() {
                    let mut body = String::new();
                    for f in fields.iter().rev() {
                        let (m, h) = members(Some(vi), f.ordinal);
                        field(
                            &mut body,
                            &f.ty,
                            &format!(".{}", f.name),
                            &format!("&v->{m}"),
                            Some(&format!("v->{h}")),
                        );
                    }
                    if !body.is_empty() {
                        let _ = write!(s, "  if (v->built && v->tag == {tag}u) {{\n{body}  }}\n");
                    }
                }
            }
            Shape::Bytes | Shape::Slice => {}
            Shape::Result(a, b) => {
                let mut ok = String::new();
                field(&mut ok, a, ".value", "&v->ok", None);
                let mut err = String::new();
                field(&mut err, b, ".error", "&v->err", None);
                let _ = write!(s, "  if (v->tag == 0) {{\n{ok}  }} else {{\n{err}  }}\n");
            }
        }
        s.push_str("  (void)z;\n  (void)v;\n}\n");
        s
    }

    /// A statement rendering `v` (a value of `t`, not a pointer) to `o`.
    pub fn render_call(&self, t: &Type, v: &str) -> String {
        match (self.index(t), render_kind(t)) {
            (Some(i), _) => format!("zp{i}(o, &{v});"),
            (None, Some(k)) => format!("zlm_render_scalar(o, {k}, {v});"),
            (None, None) => "fputs(\"()\", o);".into(),
        }
    }

    fn render_fn(&self, r: &Resolved<'_>, i: usize, shape: &Shape) -> String {
        let mut s = format!("static void zp{i}(FILE *o, const zt{i} *v) {{\n");
        let parts = |s: &mut String, fields: &[Slot], member: &dyn Fn(u32) -> (String, String)| {
            for (k, f) in fields.iter().enumerate() {
                let (val, flag) = member(f.ordinal);
                let sep = if k == 0 { "" } else { ", " };
                let _ = writeln!(
                    s,
                    "  fputs({}, o);\n  if ({flag}) {{ {} }} else fputs(\"<moved>\", o);",
                    cstr(&format!("{sep}{}: ", f.name)),
                    self.render_call(&f.ty, &val)
                );
            }
        };
        match shape {
            Shape::Record { decl, fields } => {
                let _ = writeln!(
                    s,
                    "  fputs({}, o);",
                    cstr(&format!("{}(", r.module.declarations[*decl].name))
                );
                parts(&mut s, fields, &|o| {
                    let (m, h) = members(None, o);
                    (format!("v->{m}"), format!("v->{h}"))
                });
                s.push_str("  fputs(\")\", o);\n");
            }
            Shape::Variants { decl, variants } => {
                let dn = &r.module.declarations[*decl].name;
                s.push_str("  switch (v->tag) {\n");
                for (vi, (tag, name, fields)) in variants.iter().enumerate() {
                    let _ = writeln!(s, "  case {tag}u:");
                    if fields.is_empty() {
                        let _ = writeln!(
                            s,
                            "  fputs({}, o);\n  break;",
                            cstr(&format!("{dn}.{name}"))
                        );
                        continue;
                    }
                    let _ = writeln!(s, "  fputs({}, o);", cstr(&format!("{dn}.{name}(")));
                    parts(&mut s, fields, &|o| {
                        let (m, h) = members(Some(vi), o);
                        (format!("v->{m}"), format!("v->built && v->{h}"))
                    });
                    s.push_str("  fputs(\")\", o);\n  break;\n");
                }
                s.push_str(
                    "  default: fprintf(o, \"<variant %lu>\", (unsigned long)v->tag); break;\n  }\n",
                );
            }
            Shape::Bytes | Shape::Slice => {}
            Shape::Result(a, b) => {
                let _ = writeln!(
                    s,
                    "  if (v->tag == 0) {{ fputs(\"Ok(\", o); {} }} else {{ fputs(\"Err(\", o); {} }}\n  fputs(\")\", o);",
                    self.render_call(a, "v->ok"),
                    self.render_call(b, "v->err")
                );
            }
        }
        s.push_str("  (void)v;\n}\n");
        s
    }
}
