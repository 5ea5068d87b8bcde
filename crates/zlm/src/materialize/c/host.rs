//! Typed host entries of an emitted unit (docs/zlm/boundary.md, "Words"):
//! every function whose runtime slots and result can cross the typed
//! boundary gets a wrapper that reads its slot values from the argument
//! word stream ([`crate::boundary::words_of_value`]), lends or moves them
//! into the function exactly as its signature says, and writes back the
//! result and every lent value as words. Per non-word type the unit
//! carries a reader `zrN` and a writer `zwN` of that stream.

use super::types::{Shape, Types, members, pointee};
use crate::boundary::{self, Passing};
use crate::check::Resolved;
use crate::interp::type_name;
use crate::model::*;
use std::fmt::Write;

/// Why function `at` cannot be called across the typed boundary on the C
/// engine, or `Ok` when it can: every slot's host value and the result
/// must be values the unit can hold (a returned `Ref<T>`/`Mut<T>` is
/// written as the `T` it observes; a returned slice is not supported).
pub fn support(r: &Resolved<'_>, at: (usize, usize)) -> Result<(), String> {
    let mut types = Types::default();
    add_types(&mut types, r, at)
}

/// Adds the host types of `at`'s slots and its result to `types` (the
/// LLVM engines lay out the same host storage).
pub fn add_types(types: &mut Types, r: &Resolved<'_>, at: (usize, usize)) -> Result<(), String> {
    let f = &r.module.declarations[at.0].functions[at.1];
    for s in boundary::slots(r, at) {
        if s.passing == Passing::Allocator {
            continue;
        }
        if matches!(s.host, Type::Never) || matches!(&s.ty, Type::Mut(x) if **x == Type::SliceByte)
        {
            return Err(format!("slot {} of type {}", s.name, type_name(r, &s.ty)));
        }
        types
            .add(r, &storage(&s.host))
            .map_err(|m| format!("slot {}: {m}", s.name))?;
    }
    let result = pointee(&f.result).unwrap_or(&f.result);
    if matches!(result, Type::SliceByte | Type::Never)
        || matches!(&f.result, Type::Ref(a) if **a == Type::SliceByte)
    {
        return Err(format!("a result of type {}", type_name(r, &f.result)));
    }
    types
        .add(r, result)
        .map_err(|m| format!("the result: {m}"))?;
    Ok(())
}

/// The type of the host storage of a slot's value: a lent slice views a
/// host-held array (the LLVM engines' typed entries and the library's C
/// header hold the same).
pub fn storage(host: &Type) -> Type {
    match host {
        Type::SliceByte => Type::ArrayByte,
        t => t.clone(),
    }
}

/// Whether a slot's argument is a slice over its host array.
pub fn is_slice(t: &Type) -> bool {
    matches!(t, Type::SliceByte) || matches!(t, Type::Ref(x) if **x == Type::SliceByte)
}

/// A statement reading a value of `t` into lvalue `lv` (`return 1` on a
/// malformed stream).
fn read(types: &Types, t: &Type, lv: &str) -> String {
    match types.index(t) {
        Some(j) => format!("if (zr{j}(z, w, e, &{lv})) return 1;"),
        None => format!("if (zlm_word_in(w, e, &{lv})) return 1;"),
    }
}

/// A statement writing value `v` of `t` to `o`.
fn write(types: &Types, t: &Type, v: &str) -> String {
    match types.index(t) {
        Some(j) => format!("zw{j}(o, &{v});"),
        None => format!("zlm_word_out(o, {v});"),
    }
}

/// The reader and writer of every non-word type of `types`.
pub(super) fn codecs(types: &Types) -> String {
    let mut out = String::new();
    for (i, (_, shape)) in types.iter().enumerate() {
        let mut rd = format!(
            "static int zr{i}(zrt *z, const uint64_t **w, const uint64_t *e, zt{i} *v) {{\n  uint64_t x = 0;\n  (void)z;\n  (void)x;\n"
        );
        let mut wr = format!("static void zw{i}(FILE *o, const zt{i} *v) {{\n");
        let field = |rd: &mut String,
                     wr: &mut String,
                     t: &Type,
                     val: &str,
                     flag: &str,
                     built: &str| {
            let _ = writeln!(
                rd,
                "  if (zlm_word_in(w, e, &x)) return 1;\n  {flag} = 0;\n  if (x) {{ {} {flag} = 1; }}",
                read(types, t, val)
            );
            let _ = writeln!(
                wr,
                "  if ({built}{flag}) {{ zlm_word_out(o, 1); {} }} else zlm_word_out(o, 0);",
                write(types, t, val)
            );
        };
        match shape {
            Shape::Bytes => {
                rd.push_str("  if (zlm_bytes_in(z, w, e, v)) return 1;\n");
                wr.push_str("  zlm_bytes_out(o, v->p, v->len);\n");
            }
            Shape::Slice => {
                // A slice is never read from the stream (the host lends an
                // array); written, it is the bytes it views.
                rd.push_str("  (void)w;\n  (void)e;\n  (void)v;\n  return 1;\n");
                wr.push_str("  zlm_bytes_out(o, v->b->p + v->s, v->e - v->s);\n");
            }
            Shape::Record { fields, .. } => {
                for s in fields {
                    let (m, h) = members(None, s.ordinal);
                    field(
                        &mut rd,
                        &mut wr,
                        &s.ty,
                        &format!("v->{m}"),
                        &format!("v->{h}"),
                        "",
                    );
                }
            }
            Shape::Variants { variants, .. } => {
                rd.push_str(
                    "  if (zlm_word_in(w, e, &x)) return 1;\n  v->built = 1;\n  switch (x) {\n",
                );
                wr.push_str("  zlm_word_out(o, v->tag);\n  switch (v->tag) {\n");
                for (vi, (tag, _, fields)) in variants.iter().enumerate() {
                    let _ = writeln!(rd, "  case {tag}u:\n  v->tag = {tag}u;");
                    let _ = writeln!(wr, "  case {tag}u:");
                    for s in fields {
                        let (m, h) = members(Some(vi), s.ordinal);
                        field(
                            &mut rd,
                            &mut wr,
                            &s.ty,
                            &format!("v->{m}"),
                            &format!("v->{h}"),
                            "v->built && ",
                        );
                    }
                    rd.push_str("  break;\n");
                    wr.push_str("  break;\n");
                }
                rd.push_str("  default: return 1;\n  }\n");
                wr.push_str("  default: break;\n  }\n");
            }
            Shape::Result(a, b) => {
                let _ = writeln!(
                    rd,
                    "  if (zlm_word_in(w, e, &x)) return 1;\n  if (x > 1) return 1;\n  v->tag = (uint32_t)x;\n  if (x == 0) {{ {} }} else {{ {} }}",
                    read(types, a, "v->ok"),
                    read(types, b, "v->err")
                );
                let _ = writeln!(
                    wr,
                    "  zlm_word_out(o, v->tag);\n  if (v->tag == 0) {{ {} }} else {{ {} }}",
                    write(types, a, "v->ok"),
                    write(types, b, "v->err")
                );
            }
        }
        rd.push_str("  return 0;\n}\n");
        wr.push_str("  (void)v;\n  (void)o;\n}\n");
        out.push_str(&rd);
        out.push_str(&wr);
    }
    out
}

/// The names [`codecs`] defines (for the unused-function guard in `main`).
pub(super) fn codec_names(types: &Types) -> Vec<String> {
    (0..types.iter().count())
        .flat_map(|i| [format!("zr{i}"), format!("zw{i}")])
        .collect()
}

/// The typed wrapper `zh{k}` of function `at` (C name `cname`): reads the
/// slot values from words `a[0..n]` (returning -1 on a malformed or
/// over-long stream), calls, and on success with `print` writes `OK`,
/// the steps, then the result's words and, for each lent slot, `;` and
/// the lent value's words as the call left it.
pub(super) fn wrapper(
    types: &Types,
    r: &Resolved<'_>,
    at: (usize, usize),
    k: usize,
    cname: &str,
) -> String {
    let f = &r.module.declarations[at.0].functions[at.1];
    let slots = boundary::slots(r, at);
    let mut s = format!("static int zh{k}_read(zrt *z, const uint64_t **w, const uint64_t *e");
    for (n, slot) in slots.iter().enumerate() {
        if slot.passing != Passing::Allocator {
            let _ = write!(s, ", {} *h{n}", types.c(&storage(&slot.host)));
        }
    }
    s.push_str(") {\n  (void)z;\n  (void)w;\n  (void)e;\n");
    for (n, slot) in slots.iter().enumerate() {
        if slot.passing != Passing::Allocator {
            let _ = writeln!(
                s,
                "  {}",
                read(types, &storage(&slot.host), &format!("*h{n}"))
            );
        }
    }
    s.push_str("  return *w == e ? 0 : 1;\n}\n");
    let result_c = types.c(&f.result);
    let _ = writeln!(
        s,
        "static int zh{k}(zrt *z, const uint64_t *a, uint64_t n, int print) {{\n  {result_c} r;\n  FILE *o = z->out;\n  const uint64_t *w = a, *e = a + n;\n  int rc;"
    );
    for (n, slot) in slots.iter().enumerate() {
        if slot.passing == Passing::Allocator {
            continue;
        }
        let _ = writeln!(
            s,
            "  {} h{n};\n  memset(&h{n}, 0, sizeof h{n});",
            types.c(&storage(&slot.host))
        );
        if is_slice(&slot.ty) {
            let _ = writeln!(s, "  {} l{n};", types.c(&slot.ty));
        }
    }
    s.push_str("  memset(&r, 0, sizeof r);\n");
    let mut readers = String::new();
    let mut args = String::new();
    for (n, slot) in slots.iter().enumerate() {
        if slot.passing == Passing::Allocator {
            args.push_str(", UINT64_C(0)");
            continue;
        }
        let _ = write!(readers, ", &h{n}");
        let slice = is_slice(&slot.ty);
        if slice {
            let _ = write!(args, ", l{n}");
        } else if matches!(slot.passing, Passing::Shared | Passing::Exclusive) {
            let _ = write!(args, ", &h{n}");
        } else {
            let _ = write!(args, ", h{n}");
        }
    }
    let _ = writeln!(s, "  if (zh{k}_read(z, &w, e{readers})) return -1;");
    for (n, slot) in slots.iter().enumerate() {
        let slice = is_slice(&slot.ty);
        if slice {
            let _ = writeln!(s, "  l{n}.b = &h{n};\n  l{n}.s = 0;\n  l{n}.e = h{n}.len;");
        }
    }
    let _ = writeln!(s, "  rc = {cname}(z, &r{args});");
    s.push_str(
        "  if (rc == 0 && print) {\n    fprintf(o, \"OK\\t%llu\\t\", (unsigned long long)(z->limit - z->left));\n",
    );
    match pointee(&f.result) {
        Some(t) => {
            let _ = writeln!(s, "    {}", write(types, t, "*r"));
        }
        None => {
            let _ = writeln!(s, "    {}", write(types, &f.result, "r"));
        }
    }
    for (n, slot) in slots.iter().enumerate() {
        if matches!(slot.passing, Passing::Shared | Passing::Exclusive) {
            let _ = writeln!(
                s,
                "    fputs(\";\", o);\n    {}",
                write(types, &storage(&slot.host), &format!("h{n}"))
            );
        }
    }
    s.push_str("    fputs(\"\\n\", o);\n  }\n  return rc;\n}\n");
    s
}
