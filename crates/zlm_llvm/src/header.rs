//! The typed part of a shared library's C header (docs/zlm/c-header.md):
//! for every typed entry of the library ([`crate::Lowered::typed`]) C
//! structs of its slot and result types and a function
//! `zlm_call_Decl_function` generated from the checked signature. The
//! functions are `static inline` in the header: they write the arguments
//! as the boundary's word stream (`zlm::boundary::words_of_value`), call
//! `zlm_lib_typed_call` of the library and read the result and the values
//! lent exclusively back from the words it answers with.

use std::fmt::Write;
use zlm::boundary::{self, Passing};
use zlm::check::Resolved;
use zlm::materialize::c::host;
use zlm::materialize::c::types::{Shape, Types, pointee};
use zlm::model::*;

/// The C words that cannot name a field, a parameter or a type.
const KEYWORDS: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
];

/// A C identifier for a ZLM name: itself, `_`-suffixed when it is a C
/// keyword or starts with `zlm_` (the header's own names), any other character than `[A-Za-z0-9_]` replaced by `_`.
fn ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if KEYWORDS.contains(&s.as_str())
        || s.starts_with(|c: char| c.is_ascii_digit())
        || s.starts_with("zlm_")
    {
        s.push('_');
    }
    s
}

/// The helpers every typed header carries.
const PRELUDE: &str = r#"
/* Typed entries (docs/zlm/c-header.md), generated from the checked
 * signatures. A byte array the library hands back (in a result or a value
 * lent exclusively) is allocated with malloc: release it with
 * zlm_byte_array_free, and a struct holding byte arrays with its
 * zlm_free_NAME. */
#ifndef ZLM_LIB_TYPED_H
#define ZLM_LIB_TYPED_H
#include <stdlib.h>
#include <string.h>

/* Array<Byte> and Slice<Byte>: `len` bytes at `data`. */
typedef struct zlm_byte_array {
  uint8_t *data;
  uint64_t len;
} zlm_byte_array;

typedef struct zlm_words {
  uint64_t *w;
  uint64_t n, cap;
  int bad;
} zlm_words;

static inline void zlm_put(zlm_words *b, uint64_t x) {
  if (b->bad) return;
  if (b->n == b->cap) {
    uint64_t cap = b->cap ? b->cap * 2 : 16;
    uint64_t *p = (uint64_t *)realloc(b->w, cap * sizeof *p);
    if (p == 0) {
      b->bad = 1;
      return;
    }
    b->w = p;
    b->cap = cap;
  }
  b->w[b->n++] = x;
}

static inline int zlm_take(const uint64_t **w, const uint64_t *e, uint64_t *x) {
  if (*w >= e) return 1;
  *x = *(*w)++;
  return 0;
}

static inline void zlm_put_bytes(zlm_words *b, const zlm_byte_array *a) {
  uint64_t i;
  zlm_put(b, a->len);
  for (i = 0; i < a->len; i++) zlm_put(b, a->data[i]);
}

/* Frees a byte array the library handed back and leaves it empty (a second
 * call does nothing). */
static inline void zlm_byte_array_free(zlm_byte_array *a) {
  free(a->data);
  a->data = 0;
  a->len = 0;
}

static inline int zlm_take_bytes(const uint64_t **w, const uint64_t *e, zlm_byte_array *a) {
  uint64_t n, i;
  if (zlm_take(w, e, &n) || n > (uint64_t)(e - *w)) return 1;
  a->data = (uint8_t *)malloc(n ? n : 1);
  if (a->data == 0) return 1;
  for (i = 0; i < n; i++) a->data[i] = (uint8_t)(*w)[i];
  *w += n;
  a->len = n;
  return 0;
}
"#;

/// The typed header section for `typed` (names `Decl.function` of the
/// root of `r`; typed entry `k` is `typed[k]`), or just the helpers when
/// no function of the root is typed.
pub fn typed_header(r: &Resolved<'_>, typed: &[String]) -> String {
    let mut at_of = Vec::new();
    for (k, name) in typed.iter().enumerate() {
        for (d, decl) in r.module.declarations.iter().enumerate() {
            for (f, _) in decl.functions.iter().enumerate() {
                if r.fn_name(d, f) == *name && host::support(r, (d, f)).is_ok() {
                    at_of.push((k, (d, f)));
                }
            }
        }
    }
    let mut types = Types::default();
    for &(_, at) in &at_of {
        let _ = host::add_types(&mut types, r, at);
    }
    let mut out = String::from(PRELUDE);
    // Whether a value of type `i` holds a byte array (members are defined
    // before the types holding them, so one pass in order decides).
    let mut owns = Vec::new();
    for (i, (t, shape)) in types.iter().enumerate() {
        out.push_str(&definition(r, &types, i, t, shape));
        let holds = shape_owns(&types, &owns, shape);
        owns.push(holds);
        if holds {
            out.push_str(&free_helper(r, &types, &owns, t, shape));
        }
    }
    for &(k, at) in &at_of {
        out.push_str(&function(r, &types, k, at));
    }
    out.push_str("#endif\n");
    out
}

/// The C type of a host value of `t`.
fn ctype(r: &Resolved<'_>, types: &Types, t: &Type) -> String {
    match t {
        Type::Scalar(k) => match k {
            ScalarKind::Bool | ScalarKind::Byte | ScalarKind::UInt8 => "uint8_t",
            ScalarKind::Int8 => "int8_t",
            ScalarKind::Int16 => "int16_t",
            ScalarKind::UInt16 => "uint16_t",
            ScalarKind::Int32 => "int32_t",
            ScalarKind::UInt32 => "uint32_t",
            ScalarKind::Int64 => "int64_t",
            _ => "uint64_t",
        }
        .to_string(),
        Type::Unit => "uint8_t".to_string(),
        Type::ArrayByte | Type::SliceByte => "zlm_byte_array".to_string(),
        t => match types
            .index(t)
            .and_then(|i| types.iter().nth(i).map(|x| (i, x.1)))
        {
            Some((_, Shape::Record { decl, .. } | Shape::Variants { decl, .. })) => {
                format!("zlm_{}", ident(&r.module.declarations[*decl].name))
            }
            Some((i, _)) => format!("zlm_r{i}"),
            None => "uint64_t".to_string(),
        },
    }
}

/// Statements writing the value `lv` (an lvalue) of `t` to `b`.
fn put(types: &Types, t: &Type, lv: &str) -> String {
    match t {
        Type::Scalar(k) if k.is_signed() => format!("zlm_put(b, (uint64_t)(int64_t)({lv}));"),
        Type::Scalar(ScalarKind::Bool) => format!("zlm_put(b, ({lv}) ? 1u : 0u);"),
        Type::Scalar(_) => format!("zlm_put(b, (uint64_t)({lv}));"),
        Type::Unit => "zlm_put(b, 0);".to_string(),
        Type::ArrayByte | Type::SliceByte => format!("zlm_put_bytes(b, &({lv}));"),
        t => match types.index(t) {
            Some(i) => format!("zlm_put{i}(b, &({lv}));"),
            None => format!("zlm_put(b, (uint64_t)({lv}));"),
        },
    }
}

/// Statements reading a value of `t` into lvalue `lv` (`return 1` on a
/// malformed answer).
fn take(r: &Resolved<'_>, types: &Types, t: &Type, lv: &str) -> String {
    match t {
        Type::ArrayByte | Type::SliceByte => {
            format!("if (zlm_take_bytes(w, e, &({lv}))) return 1;")
        }
        Type::Scalar(_) | Type::Unit => format!(
            "{{ if (zlm_take(w, e, &x)) return 1; {lv} = ({})x; }}",
            ctype(r, types, t)
        ),
        t => match types.index(t) {
            Some(i) => format!("if (zlm_take{i}(w, e, &({lv}))) return 1;"),
            None => format!("{{ if (zlm_take(w, e, &x)) return 1; {lv} = x; }}"),
        },
    }
}

/// The struct of type `i` and its writer `zlm_put{i}` and reader `zlm_take{i}`.
fn definition(r: &Resolved<'_>, types: &Types, i: usize, t: &Type, shape: &Shape) -> String {
    let name = ctype(r, types, t);
    let mut def = format!(
        "\n/* {} */\ntypedef struct {name} {{\n",
        zlm::interp::type_name(r, t)
    );
    let mut wr = format!("static inline void zlm_put{i}(zlm_words *b, const {name} *v) {{\n");
    let mut rd = format!(
        "static inline int zlm_take{i}(const uint64_t **w, const uint64_t *e, {name} *v) {{\n  uint64_t x = 0;\n  (void)x;\n"
    );
    let mut consts = String::new();
    // A field: always written present; read with its presence flag.
    let field = |def: &mut String,
                 wr: &mut String,
                 rd: &mut String,
                 indent: &str,
                 path: &str,
                 f: &zlm::materialize::c::types::Slot| {
        let fname = ident(&f.name);
        let _ = writeln!(
            def,
            "{indent}{} {fname};\n{indent}uint8_t {fname}_present; /* 0: moved out (results only) */",
            ctype(r, types, &f.ty)
        );
        let _ = writeln!(
            wr,
            "  zlm_put(b, 1);\n  {}",
            put(types, &f.ty, &format!("v->{path}{fname}"))
        );
        let _ = writeln!(
            rd,
            "  if (zlm_take(w, e, &x)) return 1;\n  v->{path}{fname}_present = x != 0;\n  if (x) {{ {} }}",
            take(r, types, &f.ty, &format!("v->{path}{fname}"))
        );
    };
    match shape {
        Shape::Record { fields, .. } => {
            if fields.is_empty() {
                def.push_str("  uint8_t empty;\n");
            }
            for f in fields {
                field(&mut def, &mut wr, &mut rd, "  ", "", f);
            }
        }
        Shape::Variants { variants, .. } => {
            def.push_str("  uint64_t tag; /* one of the constants below */\n");
            wr.push_str("  zlm_put(b, v->tag);\n  switch (v->tag) {\n");
            rd.push_str("  if (zlm_take(w, e, &x)) return 1;\n  v->tag = x;\n  switch (x) {\n");
            for (tag, vname, fields) in variants {
                let vn = ident(vname);
                let _ = writeln!(consts, "#define {name}_{vn} UINT64_C({tag})");
                let _ = writeln!(wr, "  case {tag}u:");
                let _ = writeln!(rd, "  case {tag}u:");
                if !fields.is_empty() {
                    def.push_str("  struct {\n");
                    for f in fields {
                        field(&mut def, &mut wr, &mut rd, "    ", &format!("{vn}."), f);
                    }
                    let _ = writeln!(def, "  }} {vn};");
                }
                wr.push_str("    break;\n");
                rd.push_str("    break;\n");
            }
            wr.push_str("  default:\n    b->bad = 1;\n  }\n");
            rd.push_str("  default:\n    return 1;\n  }\n");
        }
        Shape::Result(a, e) => {
            let _ = writeln!(
                def,
                "  uint64_t is_err; /* 0: ok holds the value; 1: err */\n  {} ok;\n  {} err;",
                ctype(r, types, a),
                ctype(r, types, e)
            );
            let _ = writeln!(
                wr,
                "  zlm_put(b, v->is_err ? 1u : 0u);\n  if (v->is_err) {{ {} }} else {{ {} }}",
                put(types, e, "v->err"),
                put(types, a, "v->ok")
            );
            let _ = writeln!(
                rd,
                "  if (zlm_take(w, e, &x) || x > 1) return 1;\n  v->is_err = x;\n  if (x) {{ {} }} else {{ {} }}",
                take(r, types, e, "v->err"),
                take(r, types, a, "v->ok")
            );
        }
        Shape::Bytes | Shape::Slice => return String::new(),
    }
    let _ = writeln!(def, "}} {name};");
    wr.push_str("  (void)b;\n  (void)v;\n}\n");
    rd.push_str("  return 0;\n}\n");
    format!("{def}{consts}{wr}{rd}")
}

/// The typed call `zlm_call_Decl_function` of typed entry `k` (function `at`).
fn function(r: &Resolved<'_>, types: &Types, k: usize, at: (usize, usize)) -> String {
    let f = &r.module.declarations[at.0].functions[at.1];
    let slots = boundary::slots(r, at);
    let result_t = pointee(&f.result).unwrap_or(&f.result).clone();
    let fname = format!(
        "zlm_call_{}_{}",
        ident(&r.module.declarations[at.0].name),
        ident(&f.name)
    );
    let mut params = String::new();
    let mut doc = String::new();
    for s in &slots {
        let how = match s.passing {
            Passing::Allocator => continue,
            Passing::Copied => "copied",
            Passing::Moved => "moved (the library consumes its copy)",
            Passing::Shared => "lent shared (unchanged)",
            Passing::Exclusive => "lent exclusively (updated in place)",
        };
        let constness = if s.passing == Passing::Exclusive {
            ""
        } else {
            "const "
        };
        let _ = write!(
            params,
            ", {constness}{} *{}",
            ctype(r, types, &host::storage(&s.host)),
            ident(&s.name)
        );
        let _ = writeln!(
            doc,
            " *   {}: {} ({how})",
            ident(&s.name),
            zlm::interp::type_name(r, &s.ty)
        );
    }
    let mut body = String::new();
    // The argument stream (locals are `zlm_`-prefixed: no slot is).
    body.push_str("  zlm_words zlm_words_in = {0, 0, 0, 0}, *zlm_b = &zlm_words_in;\n  const uint64_t *zlm_reply = 0;\n  const uint64_t **zlm_w = &zlm_reply, *zlm_e;\n  uint64_t zlm_n = 0, zlm_x = 0;\n  int zlm_rc;\n  (void)zlm_x;\n  (void)zlm_b;\n");
    for s in &slots {
        if s.passing != Passing::Allocator {
            let _ = writeln!(
                body,
                "  {}",
                call_put(
                    types,
                    &host::storage(&s.host),
                    &format!("*{}", ident(&s.name))
                )
            );
        }
    }
    let _ = writeln!(
        body,
        "  if (zlm_words_in.bad) {{\n    free(zlm_words_in.w);\n    return -1;\n  }}\n  zlm_rc = zlm_lib_typed_call(UINT64_C({k}), zlm_words_in.w, zlm_words_in.n, zlm_limits_in, zlm_log, zlm_log_context, zlm_out, &zlm_reply, &zlm_n);\n  free(zlm_words_in.w);\n  if (zlm_rc != 0) return -1;\n  if (zlm_out->faulted) return 0;\n  zlm_e = zlm_reply + zlm_n;"
    );
    let _ = writeln!(body, "  {}", take_fn(r, types, &result_t, "*zlm_result"));
    for s in &slots {
        let name = ident(&s.name);
        match s.passing {
            Passing::Exclusive => {
                let _ = writeln!(
                    body,
                    "  {}",
                    take_fn(r, types, &host::storage(&s.host), &format!("*{name}"))
                );
            }
            Passing::Shared => {
                // Handed back unchanged: skip as many words as it was written in.
                let _ = writeln!(
                    body,
                    "  {{\n    zlm_words zlm_again = {{0, 0, 0, 0}}, *zlm_b = &zlm_again;\n    {}\n    free(zlm_again.w);\n    if (zlm_again.bad || zlm_again.n > (uint64_t)(zlm_e - *zlm_w)) return -1;\n    *zlm_w += zlm_again.n;\n  }}",
                    call_put(types, &host::storage(&s.host), &format!("*{name}"))
                );
            }
            _ => {}
        }
    }
    body.push_str("  return *zlm_w == zlm_e ? 0 : -1;\n");
    format!(
        "\n/* {}: {}\n * Arguments:\n{doc} * Returns 0 when it ran (zlm_out->faulted says whether it completed; only\n * then is *zlm_result set), -1 for a malformed call or answer. */\nstatic inline int {fname}(const zlm_limits *zlm_limits_in, zlm_log_fn zlm_log,\n    void *zlm_log_context, zlm_outcome *zlm_out{params}, {} *zlm_result) {{\n{body}}}\n",
        r.fn_name(at.0, at.1),
        zlm::interp::type_name(r, &f.result),
        ctype(r, types, &result_t)
    )
}

/// [`put`] with a call function's buffer `zlm_b`.
fn call_put(types: &Types, t: &Type, lv: &str) -> String {
    put(types, t, lv).replacen("(b, ", "(zlm_b, ", 1)
}

/// A statement reading a value of `t` into `lv` in a call function (-1 on
/// a malformed answer).
fn take_fn(r: &Resolved<'_>, types: &Types, t: &Type, lv: &str) -> String {
    take(r, types, t, lv)
        .replace("return 1;", "return -1;")
        .replace("(w, e, &x)", "(zlm_w, zlm_e, &zlm_x)")
        .replace("(w, e, &(", "(zlm_w, zlm_e, &(")
        .replace(")x; }", ")zlm_x; }")
        .replace(" = x; }", " = zlm_x; }")
}

/// Whether a value of `t` holds a byte array the library allocates
/// (`owns[i]`: whether type `i` of `types` does, for the types before it).
fn type_owns(types: &Types, owns: &[bool], t: &Type) -> bool {
    match t {
        Type::ArrayByte | Type::SliceByte => true,
        t => types
            .index(t)
            .is_some_and(|i| owns.get(i).copied().unwrap_or(false)),
    }
}

/// Whether a struct of `shape` holds a byte array (see [`type_owns`]).
fn shape_owns(types: &Types, owns: &[bool], shape: &Shape) -> bool {
    match shape {
        Shape::Record { fields, .. } => fields.iter().any(|f| type_owns(types, owns, &f.ty)),
        Shape::Variants { variants, .. } => variants
            .iter()
            .any(|(_, _, fields)| fields.iter().any(|f| type_owns(types, owns, &f.ty))),
        Shape::Result(a, e) => type_owns(types, owns, a) || type_owns(types, owns, e),
        Shape::Bytes | Shape::Slice => false,
    }
}

/// The name of the free helper of C struct `name` (`zlm_X`): `zlm_free_X`.
fn free_name(name: &str) -> String {
    format!("zlm_free_{}", name.strip_prefix("zlm_").unwrap_or(name))
}

/// A statement freeing what lvalue `lv` of `t` holds, or nothing when a
/// value of `t` holds no byte array.
fn free_value(r: &Resolved<'_>, types: &Types, owns: &[bool], t: &Type, lv: &str) -> String {
    match t {
        Type::ArrayByte | Type::SliceByte => format!("zlm_byte_array_free(&({lv}));"),
        t if type_owns(types, owns, t) => {
            format!("{}(&({lv}));", free_name(&ctype(r, types, t)))
        }
        _ => String::new(),
    }
}

/// `zlm_free_X(zlm_X *v)` for a struct type holding byte arrays: frees
/// every byte array of a value as the library hands it back (present
/// fields, the variant its tag names, the side `is_err` names), leaving
/// them empty, so a second call does nothing.
fn free_helper(r: &Resolved<'_>, types: &Types, owns: &[bool], t: &Type, shape: &Shape) -> String {
    let name = ctype(r, types, t);
    let mut body = String::new();
    let field =
        |body: &mut String, indent: &str, path: &str, f: &zlm::materialize::c::types::Slot| {
            let fname = ident(&f.name);
            let release = free_value(r, types, owns, &f.ty, &format!("v->{path}{fname}"));
            if !release.is_empty() {
                let _ = writeln!(body, "{indent}if (v->{path}{fname}_present) {release}");
            }
        };
    match shape {
        Shape::Record { fields, .. } => {
            for f in fields {
                field(&mut body, "  ", "", f);
            }
        }
        Shape::Variants { variants, .. } => {
            body.push_str("  switch (v->tag) {\n");
            for (tag, vname, fields) in variants {
                let vn = ident(vname);
                if fields.iter().any(|f| type_owns(types, owns, &f.ty)) {
                    let _ = writeln!(body, "  case {tag}u:");
                    for f in fields {
                        field(&mut body, "    ", &format!("{vn}."), f);
                    }
                    body.push_str("    break;\n");
                }
            }
            body.push_str("  default:\n    break;\n  }\n");
        }
        Shape::Result(a, e) => {
            let _ = writeln!(
                body,
                "  if (v->is_err) {{ {} }} else {{ {} }}",
                free_value(r, types, owns, e, "v->err"),
                free_value(r, types, owns, a, "v->ok")
            );
        }
        Shape::Bytes | Shape::Slice => {}
    }
    format!(
        "/* Frees every byte array of a {} the library handed back (in a result or\n * a slot lent exclusively) and leaves it empty; a second call does nothing. */\nstatic inline void {}({name} *v) {{\n{body}}}\n",
        name,
        free_name(&name)
    )
}
