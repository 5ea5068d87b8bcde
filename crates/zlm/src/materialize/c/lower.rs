//! Lowering of checked functions to C: one C function per ZLM function.
//!
//! Covered: the scalar core — every numeric operation at its annotated
//! width, signedness and profile, comparisons, Bool negation, assertions,
//! Copy scalar and Unit locals, calls between covered functions (with the
//! depth check before the call commits), JUMP/JUMP_IF_FALSE/RETURN over
//! cleanup edges without recipes, requires/ensures over scalars (including
//! pure calls of declared functions), and the step limit with the
//! interpreter's exact accounting. Everything else is refused.

use super::config::TargetConfig;
use super::unit::{Refusal, Scope};
use crate::check::{Checked, Resolved};
use crate::model::*;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

type At = (usize, usize);

fn width(k: ScalarKind) -> u32 {
    use ScalarKind::*;
    match k {
        Bool => 1,
        Byte | Int8 | UInt8 => 8,
        Int16 | UInt16 => 16,
        Int32 | UInt32 => 32,
        Int64 | UInt64 | Index => 64,
    }
}

fn canon(k: ScalarKind, bits: u64) -> u64 {
    let w = width(k);
    if w == 64 {
        return bits;
    }
    let mask = (1u64 << w) - 1;
    let b = bits & mask;
    if k.is_signed() && (b >> (w - 1)) & 1 == 1 {
        b | !mask
    } else {
        b
    }
}

fn word(w: u64) -> String {
    format!("UINT64_C(0x{w:x})")
}

/// A C string literal.
fn cstr(s: &str) -> String {
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

/// A comment-safe rendering.
fn comment(s: &str) -> String {
    s.replace("*/", "* /")
}

fn ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// How a host renders a word of this type (the runtime's render kinds).
fn render_kind(t: &Type) -> Option<u32> {
    match t {
        Type::Scalar(ScalarKind::Bool) => Some(2),
        Type::Scalar(k) if k.is_signed() => Some(1),
        Type::Scalar(_) => Some(0),
        Type::Unit => Some(3),
        _ => None,
    }
}

fn is_word(t: &Type) -> bool {
    render_kind(t).is_some()
}

/// The type's spelling with local nominal names (the interpreter's).
fn type_name(r: &Resolved<'_>, t: &Type) -> String {
    match t {
        Type::Nominal(_) => match r.decl_of(t) {
            Some(d) => r.m.declarations[d].name.clone(),
            None => t.to_string(),
        },
        Type::Result(a, b) => format!("Result<{}, {}>", type_name(r, a), type_name(r, b)),
        Type::Ref(a) => format!("Ref<{}>", type_name(r, a)),
        Type::Mut(a) => format!("Mut<{}>", type_name(r, a)),
        t => t.to_string(),
    }
}

struct Unit<'a, 'm> {
    r: &'a Resolved<'m>,
    target: &'a TargetConfig,
}

impl<'m> Unit<'_, 'm> {
    fn f(&self, at: At) -> &'m Function {
        &self.r.m.declarations[at.0].functions[at.1]
    }

    fn cname(&self, at: At) -> String {
        let d = &self.r.m.declarations[at.0];
        let sig = self.r.ids.decls[at.0].functions[at.1].sig;
        format!(
            "zf_{}_{}_{}",
            ident(&d.name),
            ident(&d.functions[at.1].name),
            &crate::hash::to_hex(&sig)[..16]
        )
    }

    fn refuse(&self, at: At, b: Option<u32>, o: Option<u32>, msg: impl Into<String>) -> Refusal {
        Refusal {
            function: Some(self.r.fn_name(at.0, at.1)),
            block: b,
            op: o,
            message: msg.into(),
        }
    }

    /// The functions a body or contract of `at` calls.
    fn callees(&self, at: At) -> Vec<At> {
        let f = self.f(at);
        let mut out = Vec::new();
        for b in &f.body.blocks {
            for op in &b.ops {
                if let (tag::CALL, Aux::Func(sig)) = (op.tag, &op.aux0)
                    && let Some(&c) = self.r.funcs.get(sig)
                {
                    out.push(c);
                }
            }
        }
        for e in f.requires.iter().chain(&f.ensures) {
            for op in &e.ops {
                if op.tag == 3
                    && op.aux0 == 0
                    && let Some(c) = op.reference.and_then(|s| self.r.funcs.get(&s).copied())
                {
                    out.push(c);
                }
            }
        }
        out
    }

    fn find(&self, entry: &str) -> Result<At, Refusal> {
        let mut hits = Vec::new();
        for (di, d) in self.r.m.declarations.iter().enumerate() {
            for (fi, f) in d.functions.iter().enumerate() {
                if format!("{}.{}", d.name, f.name) == entry || f.name == entry {
                    hits.push((di, fi));
                }
            }
        }
        match hits.as_slice() {
            [one] => Ok(*one),
            _ => Err(Refusal {
                function: None,
                block: None,
                op: None,
                message: format!("no unique function named {entry}"),
            }),
        }
    }

    fn header(&self, at: At) -> String {
        let f = self.f(at);
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let mut s = format!("static int {}(zrt *z, uint64_t *zret", self.cname(at));
        for p in &ps {
            let _ = write!(s, ", uint64_t a{}", p.ordinal);
        }
        s.push(')');
        s
    }

    /// The source declaration, for the comment above the C function.
    fn source(&self, at: At) -> String {
        let d = &self.r.m.declarations[at.0];
        let f = self.f(at);
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let params: Vec<String> = ps
            .iter()
            .map(|p| format!("{}: {}", p.name, type_name(self.r, &p.ty)))
            .collect();
        let effects: Vec<&str> = f.effects.iter().map(|e| e.text()).collect();
        format!(
            "{} {} {}.{}({}) -> {} effects [{}] (module {})",
            f.callable.text(),
            f.receiver.text(),
            d.name,
            f.name,
            params.join(", "),
            type_name(self.r, &f.result),
            effects.join(", "),
            self.r.m.name
        )
    }
}

/// Emits the translation unit and its host-callable entries.
pub(super) fn unit(
    checked: &Checked,
    target: &TargetConfig,
    scope: &Scope,
) -> Result<(String, Vec<String>), Refusal> {
    if !checked.imports_resolved() {
        return Err(Refusal {
            function: None,
            block: None,
            op: None,
            message: "the module's imports were not resolved against their providers".into(),
        });
    }
    let r = Resolved::of_checked(checked);
    let u = Unit { r: &r, target };
    let m = r.m;
    let mut set = BTreeSet::new();
    match scope {
        Scope::Module => {
            for (di, d) in m.declarations.iter().enumerate() {
                for fi in 0..d.functions.len() {
                    set.insert((di, fi));
                }
            }
        }
        Scope::Entry(_) | Scope::Entries(_) => {
            let names = match scope {
                Scope::Entry(n) => std::slice::from_ref(n),
                Scope::Entries(ns) => ns.as_slice(),
                Scope::Module => &[],
            };
            let mut todo = Vec::new();
            for n in names {
                todo.push(u.find(n)?);
            }
            while let Some(at) = todo.pop() {
                if set.insert(at) {
                    todo.extend(u.callees(at));
                }
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* Module {} (package {}), profile {}: emitted by irkit zlm emit-c.\n * Content identity {}. */",
        comment(&m.name),
        comment(&m.package),
        m.profile.text(),
        crate::hash::to_hex(&checked.module_content())
    );
    let _ = writeln!(out, "#include \"zlm_rt.h\"\n");
    let _ = writeln!(
        out,
        "#define ZLM_ALLOC(n) {}(n)\n#define ZLM_FREE(p) {}(p)\n",
        target.alloc, target.free
    );
    for &at in &set {
        let _ = writeln!(out, "{};", u.header(at));
    }
    out.push('\n');
    for &at in &set {
        out.push_str(&Fl::new(&u, at)?.emit()?);
        out.push('\n');
    }
    // Host entries: type or no receiver, word parameters and result.
    let mut entries = Vec::new();
    let mut table = String::new();
    for &at in &set {
        let f = u.f(at);
        if !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None)
            || !f.params.iter().all(|p| is_word(&p.ty))
        {
            continue;
        }
        let Some(rk) = render_kind(&f.result) else {
            continue;
        };
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let i = entries.len();
        let args: Vec<String> = (0..ps.len()).map(|k| format!(", a[{k}]")).collect();
        let _ = writeln!(
            out,
            "static int ze_{i}(zrt *z, uint64_t *r, const uint64_t *a) {{\n  (void)a;\n  return {}(z, r{});\n}}",
            u.cname(at),
            args.concat()
        );
        let _ = writeln!(
            table,
            "  {{{}, {}, {rk}, ze_{i}}},",
            cstr(&r.fn_name(at.0, at.1)),
            ps.len()
        );
        entries.push(r.fn_name(at.0, at.1));
    }
    let max_params = set
        .iter()
        .map(|&at| u.f(at).params.len())
        .max()
        .unwrap_or(0);
    let _ = write!(
        out,
        "\ntypedef int (*zlm_entry_fn)(zrt *, uint64_t *, const uint64_t *);\n\
         static const struct {{ const char *name; unsigned params; int render; zlm_entry_fn fn; }} zlm_entries[] = {{\n\
         {table}  {{0, 0, 0, 0}}\n}};\n\n\
         /* argv: entry index, step limit, depth limit, byte limit, argument words (hex). */\n\
         int main(int argc, char **argv) {{\n\
         \x20 zrt z;\n\
         \x20 uint64_t args[{}];\n\
         \x20 uint64_t entry, steps, depth, bytes, result = 0;\n\
         \x20 uintptr_t here;\n\
         \x20 int i, rc;\n\
         \x20 const char *repeat;\n",
        max_params + 1
    );
    for &at in &set {
        let _ = writeln!(out, "  (void){};", u.cname(at));
    }
    let _ = write!(
        out,
        "  if (argc < 5 || zlm_parse_word(argv[1], &entry) || zlm_parse_word(argv[2], &steps) ||\n\
         \x20     zlm_parse_word(argv[3], &depth) || zlm_parse_word(argv[4], &bytes))\n\
         \x20   return 2;\n\
         \x20 (void)bytes;\n\
         \x20 if (entry >= {n} || (unsigned)(argc - 5) != zlm_entries[entry].params) return 2;\n\
         \x20 for (i = 5; i < argc; i++)\n\
         \x20   if (zlm_parse_word(argv[i], &args[i - 5])) return 2;\n\
         \x20 z.left = steps;\n\
         \x20 z.limit = steps;\n\
         \x20 z.depth = 0;\n\
         \x20 z.max_depth = depth;\n\
         \x20 z.out = stdout;\n\
         \x20 here = zlm_here();\n\
         \x20 z.floor = here > (uintptr_t){stack} ? here - (uintptr_t){stack} : 0;\n\
         \x20 repeat = getenv(\"ZLM_REPEAT\");\n\
         \x20 if (repeat != 0) {{\n\
         \x20   /* Benchmarks: run the entry N times, report the elapsed time. */\n\
         \x20   uint64_t n = 0, k;\n\
         \x20   struct timespec t0, t1;\n\
         \x20   if (zlm_parse_word(repeat, &n)) return 2;\n\
         \x20   timespec_get(&t0, TIME_UTC);\n\
         \x20   for (k = 0; k < n; k++) {{\n\
         \x20     z.left = steps;\n\
         \x20     z.depth = 0;\n\
         \x20     if (zlm_entries[entry].fn(&z, &result, args) != 0) break;\n\
         \x20   }}\n\
         \x20   timespec_get(&t1, TIME_UTC);\n\
         \x20   z.left = steps;\n\
         \x20   z.depth = 0;\n\
         \x20   fprintf(stdout, \"TIME\\t%.0f\\n\", ((double)t1.tv_sec - (double)t0.tv_sec) * 1e9 + ((double)t1.tv_nsec - (double)t0.tv_nsec));\n\
         \x20 }}\n\
         \x20 rc = zlm_entries[entry].fn(&z, &result, args);\n\
         \x20 if (rc) {{\n\
         \x20   zlm_report_fault(stdout);\n\
         \x20 }} else {{\n\
         \x20   fprintf(stdout, \"OK\\t%llu\\t\", (unsigned long long)(z.limit - z.left));\n\
         \x20   zlm_render_scalar(stdout, zlm_entries[entry].render, result);\n\
         \x20   fputs(\"\\n\", stdout);\n\
         \x20 }}\n\
         \x20 return fflush(stdout) == 0 ? 0 : 3;\n\
         }}\n",
        n = entries.len(),
        stack = u.target.stack_bytes,
    );
    Ok((out, entries))
}

/// One function's lowering.
struct Fl<'a, 'u, 'm> {
    u: &'a Unit<'u, 'm>,
    at: At,
    f: &'m Function,
    name: String,
    blocks: Vec<&'m Block>,
    path_ix: HashMap<&'m PathKey, usize>,
    /// Path index per runtime slot (parameters in ordinal order).
    slots: Vec<Option<usize>>,
    labels: BTreeSet<u32>,
    careful_labels: BTreeSet<u32>,
    /// Blocks whose step cost their unique predecessor's last check prepays.
    covered: BTreeSet<u32>,
    fresh: u32,
}

impl<'a, 'u, 'm> Fl<'a, 'u, 'm> {
    fn new(u: &'a Unit<'u, 'm>, at: At) -> Result<Self, Refusal> {
        let f = u.f(at);
        let name = u.r.fn_name(at.0, at.1);
        if !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None) {
            return Err(u.refuse(at, None, None, "runtime receivers are not lowered yet"));
        }
        for p in &f.params {
            if !is_word(&p.ty) {
                return Err(u.refuse(
                    at,
                    None,
                    None,
                    format!("parameter type {}", type_name(u.r, &p.ty)),
                ));
            }
        }
        if !is_word(&f.result) {
            return Err(u.refuse(
                at,
                None,
                None,
                format!("result type {}", type_name(u.r, &f.result)),
            ));
        }
        for p in &f.body.paths {
            if !p.key.fields.is_empty() || !is_word(&p.ty) {
                return Err(u.refuse(
                    at,
                    None,
                    None,
                    format!("owned path of type {}", type_name(u.r, &p.ty)),
                ));
            }
        }
        if !f.body.loans.is_empty() {
            return Err(u.refuse(at, None, None, "loans are not lowered yet"));
        }
        if let Some(e) = f.body.edges.iter().find(|e| !e.drops.is_empty()) {
            return Err(u.refuse(
                at,
                Some(e.source),
                None,
                "cleanup recipes are not lowered yet",
            ));
        }
        let mut blocks: Vec<&Block> = f.body.blocks.iter().collect();
        blocks.sort_by_key(|b| b.id);
        let path_ix = f
            .body
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (&p.key, i))
            .collect::<HashMap<_, _>>();
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let slots = ps
            .iter()
            .map(|p| {
                path_ix
                    .get(&PathKey {
                        root: Root::Param(p.ordinal),
                        fields: vec![],
                    })
                    .copied()
            })
            .collect();
        Ok(Fl {
            u,
            at,
            f,
            name,
            blocks,
            path_ix,
            slots,
            labels: BTreeSet::new(),
            careful_labels: BTreeSet::new(),
            covered: BTreeSet::new(),
            fresh: 0,
        })
    }

    fn refuse(&self, b: u32, j: u32, msg: impl Into<String>) -> Refusal {
        self.u.refuse(self.at, Some(b), Some(j), msg)
    }

    fn zn(&self) -> String {
        format!("zn_{}", self.u.cname(self.at))
    }

    fn fault(&self, kind: &str, b: Option<u32>, o: Option<u32>, detail: Option<&str>) -> String {
        let n = |x: Option<u32>| x.map(|v| format!("{v}L")).unwrap_or_else(|| "-1L".into());
        format!(
            "{{ z->left = zl; z->depth--; return zlm_raise({kind}, {}, {}, {}, {}); }}",
            self.zn(),
            n(b),
            n(o),
            detail.map(cstr).unwrap_or_else(|| "0".into())
        )
    }

    fn place(&self, k: &PathKey, b: u32, j: u32) -> Result<String, Refusal> {
        self.path_ix
            .get(k)
            .map(|i| format!("pl{i}"))
            .ok_or_else(|| self.refuse(b, j, "place without an owned path"))
    }

    fn operand(&self, o: &Operand, b: u32, j: u32) -> Result<String, Refusal> {
        match o {
            Operand::Value(OpRef::Flow { block, ordinal }) => Ok(format!("v{block}_{ordinal}")),
            Operand::Const(c) => Ok(word(canon(c.kind, c.bits))),
            Operand::Place(k) => self.place(k, b, j),
            _ => Err(self.refuse(b, j, "operand form")),
        }
    }

    /// The interpreter's operand kind of a comparison: its first operand's.
    fn operand_kind(&self, op: &Op) -> ScalarKind {
        let k = match op.operands.first() {
            Some(Operand::Const(c)) => Some(c.kind),
            Some(Operand::Value(OpRef::Flow { block, ordinal })) => self
                .blocks
                .get(*block as usize)
                .and_then(|b| b.ops.get(*ordinal as usize))
                .and_then(|o| match &o.result {
                    Some(Type::Scalar(k)) => Some(*k),
                    _ => None,
                }),
            Some(Operand::Place(k)) => {
                self.f
                    .body
                    .paths
                    .iter()
                    .find(|x| &x.key == k)
                    .and_then(|x| match x.ty {
                        Type::Scalar(k) => Some(k),
                        _ => None,
                    })
            }
            _ => None,
        };
        k.unwrap_or(ScalarKind::UInt64)
    }

    fn profile(&self) -> u32 {
        self.u.r.m.profile.tag()
    }

    fn arith_call(&self, t: u32, k: ScalarKind, a: &str, c: &str, dst: &str) -> Option<String> {
        let (w, s, p) = (width(k), u32::from(k.is_signed()), self.profile());
        Some(match t {
            tag::NEG => format!("zlm_neg({w}, {s}, {p}, {a}, &{dst})"),
            tag::ADD => format!("zlm_add({w}, {s}, {p}, {a}, {c}, &{dst})"),
            tag::SUB => format!("zlm_sub({w}, {s}, {p}, {a}, {c}, &{dst})"),
            tag::MUL => format!("zlm_mul({w}, {s}, {p}, {a}, {c}, &{dst})"),
            tag::DIV => format!("zlm_div({w}, {s}, {p}, 0, {a}, {c}, &{dst})"),
            tag::REM => format!("zlm_div({w}, {s}, {p}, 1, {a}, {c}, &{dst})"),
            tag::SHIFT_LEFT => format!("zlm_shl({w}, {s}, {p}, {a}, {c}, &{dst})"),
            tag::SHIFT_RIGHT => format!("zlm_shr({w}, {s}, {p}, {a}, {c}, &{dst})"),
            _ => return None,
        })
    }

    /// A jump to block `b`: from a careful copy, a covered block's careful
    /// entry (its step cost was not prepaid); otherwise its fast entry.
    fn label(&mut self, b: u32, careful: bool) -> String {
        if careful && self.covered.contains(&b) {
            self.careful_labels.insert(b);
            return format!("goto BC{b};");
        }
        self.labels.insert(b);
        format!("goto B{b};")
    }

    /// One flow operation (`careful`: with its own step tick).
    fn op(&mut self, b: u32, j: u32, op: &'m Op, careful: bool) -> Result<String, Refusal> {
        let mut s = String::new();
        if careful {
            let _ = write!(
                s,
                "    if (ZLM_UNLIKELY(zl == 0)) {}\n    zl--;\n",
                self.fault("ZK_STEPS", Some(b), Some(j), None)
            );
        }
        let dst = format!("v{b}_{j}");
        if let Some(t) = &op.result
            && !is_word(t)
        {
            return Err(self.refuse(b, j, format!("result type {}", type_name(self.u.r, t))));
        }
        let opd = |k: usize| -> Result<String, Refusal> {
            op.operands
                .get(k)
                .ok_or_else(|| self.refuse(b, j, "missing operand"))
                .and_then(|o| self.operand(o, b, j))
        };
        let fault_here = |s: &Self, k: &str| s.fault(k, Some(b), Some(j), None);
        match op.tag {
            tag::CONST | tag::LOAD_LOCAL => {
                let _ = writeln!(s, "    {dst} = {};", opd(0)?);
            }
            tag::UNIT_VALUE => {
                let _ = writeln!(s, "    {dst} = 0;");
            }
            tag::STORE_LOCAL => {
                let _ = writeln!(s, "    {} = {};", opd(0)?, opd(1)?);
            }
            tag::NEG
            | tag::ADD
            | tag::SUB
            | tag::MUL
            | tag::DIV
            | tag::REM
            | tag::SHIFT_LEFT
            | tag::SHIFT_RIGHT => {
                let Some(Type::Scalar(k)) = &op.result else {
                    return Err(self.refuse(b, j, "arithmetic without a scalar result"));
                };
                let a = opd(0)?;
                let c = if op.tag == tag::NEG {
                    "0".to_string()
                } else {
                    opd(1)?
                };
                let call = self
                    .arith_call(op.tag, *k, &a, &c, &dst)
                    .ok_or_else(|| self.refuse(b, j, "arithmetic tag"))?;
                let _ = writeln!(
                    s,
                    "    if (ZLM_UNLIKELY((zk = {call}) != 0)) {{ z->left = zl; z->depth--; return zlm_raise(zk, {}, {b}L, {j}L, 0); }}",
                    self.zn()
                );
            }
            tag::BIT_AND | tag::BIT_OR | tag::BIT_XOR => {
                let Some(Type::Scalar(k)) = &op.result else {
                    return Err(self.refuse(b, j, "bit operation without a scalar result"));
                };
                let sym = match op.tag {
                    tag::BIT_AND => "&",
                    tag::BIT_OR => "|",
                    _ => "^",
                };
                let _ = writeln!(
                    s,
                    "    {dst} = zlm_canon({}, {}, {} {sym} {});",
                    width(*k),
                    u32::from(k.is_signed()),
                    opd(0)?,
                    opd(1)?
                );
            }
            tag::EQ | tag::NE | tag::LT | tag::LE | tag::GT | tag::GE => {
                let k = self.operand_kind(op);
                let _ = writeln!(
                    s,
                    "    {dst} = zlm_cmp({}, {}, {}, {});",
                    op.tag,
                    u32::from(k.is_signed()),
                    opd(0)?,
                    opd(1)?
                );
            }
            tag::NOT_BOOL => {
                let _ = writeln!(s, "    {dst} = (uint64_t)({} == 0);", opd(0)?);
            }
            tag::ASSERT_TRUE => {
                let _ = writeln!(
                    s,
                    "    if ({} == 0) {}",
                    opd(0)?,
                    fault_here(self, "ZK_ASSERT")
                );
            }
            tag::ASSERT_EQ => {
                let _ = writeln!(
                    s,
                    "    if ({} != {}) {}",
                    opd(0)?,
                    opd(1)?,
                    fault_here(self, "ZK_ASSERT")
                );
            }
            tag::JUMP => {
                let Some(Operand::Block(t)) = op.operands.first() else {
                    return Err(self.refuse(b, j, "jump target"));
                };
                let g = self.label(*t, careful);
                let _ = writeln!(s, "    {g}");
            }
            tag::JUMP_IF_FALSE => {
                let Some(Operand::Block(t)) = op.operands.get(1) else {
                    return Err(self.refuse(b, j, "branch target"));
                };
                let c = opd(0)?;
                let yes = self.label(b + 1, careful);
                let no = self.label(*t, careful);
                let _ = writeln!(s, "    if ({c} != 0) {yes}\n    {no}");
            }
            tag::RETURN => {
                let _ = writeln!(s, "    zr = {};\n    goto ZEXIT;", opd(0)?);
            }
            tag::CALL => {
                let Aux::Func(sig) = &op.aux0 else {
                    return Err(self.refuse(b, j, "call without a callee"));
                };
                let Some(&callee) = self.u.r.funcs.get(sig) else {
                    return Err(self.refuse(b, j, "calls into other modules"));
                };
                let mut args = Vec::new();
                for k in 0..op.operands.len() {
                    args.push(format!(", {}", opd(k)?));
                }
                let _ = writeln!(
                    s,
                    "    if (z->depth >= z->max_depth) {}\n    z->left = zl;\n    zk = {}(z, &{dst}{});\n    zl = z->left;\n    if (zk != 0) {{ z->depth--; return zk; }}",
                    fault_here(self, "ZK_DEPTH"),
                    self.u.cname(callee),
                    args.concat()
                );
            }
            t => {
                return Err(self.refuse(
                    b,
                    j,
                    format!(
                        "operation {} is not lowered yet",
                        tag::name(t).unwrap_or("?")
                    ),
                ));
            }
        }
        Ok(s)
    }

    fn slot_value(&self, slot: usize) -> String {
        match self.slots.get(slot).copied().flatten() {
            Some(pi) => format!("pl{pi}"),
            None => "UINT64_C(0)".into(),
        }
    }

    /// Emits contract operation `i` of `e` (lazily, re-evaluating shared
    /// operands exactly as the interpreter does); returns its C variable.
    fn cexpr(
        &mut self,
        e: &'m Expr,
        i: usize,
        result: bool,
        s: &mut String,
    ) -> Result<String, Refusal> {
        let op = e
            .ops
            .get(i)
            .ok_or_else(|| self.u.refuse(self.at, None, None, "contract operand order"))?;
        let v = format!("c{}", self.fresh);
        self.fresh += 1;
        let _ = writeln!(
            s,
            "    uint64_t {v} = 0;\n    if (ZLM_UNLIKELY(zl == 0)) {}\n    zl--;",
            self.fault("ZK_STEPS", None, Some(i as u32), None)
        );
        let refuse = |me: &Self, m: &str| me.u.refuse(me.at, None, None, m.to_string());
        if matches!(op.tag, 23 | 24) {
            let a = self.coperand(e, &op.operands[0], result, s)?;
            let cond = if op.tag == 23 {
                format!("{a} == 0")
            } else {
                format!("{a} != 0")
            };
            let mut inner = String::new();
            let c = self.coperand(e, &op.operands[1], result, &mut inner)?;
            let _ = writeln!(
                s,
                "    if ({cond}) {v} = (uint64_t)({a} != 0);\n    else {{\n{inner}    {v} = {c};\n    }}"
            );
            return Ok(v);
        }
        let mut vals = Vec::new();
        for o in &op.operands {
            vals.push(self.coperand(e, o, result, s)?);
        }
        if !is_word(&op.result) {
            return Err(refuse(
                self,
                "non-scalar contract values are not lowered yet",
            ));
        }
        let kind = match &op.result {
            Type::Scalar(k) => *k,
            _ => ScalarKind::Bool,
        };
        let contract_fault = self.fault("zk", None, None, None);
        match op.tag {
            0 => {
                let _ = writeln!(s, "    {v} = {};", vals[0]);
            }
            4 => {
                let _ = writeln!(s, "    {v} = (uint64_t)({} == 0);", vals[0]);
            }
            5 | 7..=16 => {
                let t = match op.tag {
                    5 => tag::NEG,
                    7 => tag::ADD,
                    8 => tag::SUB,
                    9 => tag::MUL,
                    10 => tag::DIV,
                    11 => tag::REM,
                    12 => tag::SHIFT_LEFT,
                    13 => tag::SHIFT_RIGHT,
                    14 => tag::BIT_AND,
                    15 => tag::BIT_XOR,
                    _ => tag::BIT_OR,
                };
                let c = vals.get(1).cloned().unwrap_or_else(|| "0".into());
                match self.arith_call(t, kind, &vals[0], &c, &v) {
                    Some(call) => {
                        let _ = writeln!(
                            s,
                            "    if (ZLM_UNLIKELY((zk = {call}) != 0)) {contract_fault}"
                        );
                    }
                    None => {
                        let sym = match t {
                            tag::BIT_AND => "&",
                            tag::BIT_OR => "|",
                            _ => "^",
                        };
                        let _ = writeln!(
                            s,
                            "    {v} = zlm_canon({}, {}, {} {sym} {c});",
                            width(kind),
                            u32::from(kind.is_signed()),
                            vals[0]
                        );
                    }
                }
            }
            17..=22 => {
                let t =
                    [tag::EQ, tag::NE, tag::LT, tag::LE, tag::GT, tag::GE][op.tag as usize - 17];
                let k = match (&op.operands[0], &op.operands[1]) {
                    (ContractOperand::Const(c), _) | (_, ContractOperand::Const(c)) => c.kind,
                    (o, _) => {
                        let recv = crate::catalog::receiver_type(
                            &self.u.r.self_type(self.at.0),
                            self.f.receiver,
                        )
                        .filter(|_| {
                            !matches!(self.f.receiver, ReceiverKind::Type | ReceiverKind::None)
                        });
                        match crate::ids::contract_operand_type(self.f, recv.as_ref(), e, o) {
                            Ok(Type::Scalar(k)) => k,
                            _ => ScalarKind::UInt64,
                        }
                    }
                };
                let _ = writeln!(
                    s,
                    "    {v} = zlm_cmp({t}, {}, {}, {});",
                    u32::from(k.is_signed()),
                    vals[0],
                    vals[1]
                );
            }
            3 if op.aux0 == 0 => {
                let Some(&callee) = op.reference.and_then(|sig| self.u.r.funcs.get(&sig)) else {
                    return Err(refuse(self, "contract calls into other modules"));
                };
                if self.u.f(callee).receiver == ReceiverKind::Shared {
                    return Err(refuse(self, "contract calls with a shared receiver"));
                }
                let args: Vec<String> = vals.iter().map(|a| format!(", {a}")).collect();
                let _ = writeln!(
                    s,
                    "    z->left = zl;\n    zk = {}(z, &{v}{});\n    zl = z->left;\n    if (zk != 0) {{ z->depth--; return zk; }}",
                    self.u.cname(callee),
                    args.concat()
                );
            }
            _ => return Err(refuse(self, "contract operation is not lowered yet")),
        }
        Ok(v)
    }

    fn coperand(
        &mut self,
        e: &'m Expr,
        o: &ContractOperand,
        result: bool,
        s: &mut String,
    ) -> Result<String, Refusal> {
        Ok(match o {
            ContractOperand::Const(c) => word(canon(c.kind, c.bits)),
            ContractOperand::Receiver => self.slot_value(0),
            ContractOperand::Param(k) => self.slot_value(*k as usize),
            ContractOperand::Result if result => "zr".into(),
            ContractOperand::Result => "UINT64_C(0)".into(),
            ContractOperand::Value(i) => self.cexpr(e, *i as usize, result, s)?,
        })
    }

    fn emit(mut self) -> Result<String, Refusal> {
        let f = self.f;
        // Step prepayment: a block (not the entry, without calls) whose only
        // predecessor is an uncovered block has its cost checked by that
        // predecessor's last segment. Block IDs are a depth-first preorder,
        // so the predecessor's status is known first.
        let mut preds: std::collections::BTreeMap<u32, BTreeSet<u32>> = Default::default();
        for block in &self.blocks {
            if let Some(op) = block.ops.last() {
                let mut add = |t: u32| {
                    preds.entry(t).or_default().insert(block.id);
                };
                match (op.tag, op.operands.as_slice()) {
                    (tag::JUMP, [Operand::Block(t)]) => add(*t),
                    (tag::JUMP_IF_FALSE, [_, Operand::Block(t)]) => {
                        add(block.id + 1);
                        add(*t);
                    }
                    _ => {}
                }
            }
        }
        let mut extra: std::collections::BTreeMap<u32, usize> = Default::default();
        for block in &self.blocks {
            let b = block.id;
            let Some(ps) = preds.get(&b) else { continue };
            if b == 0 || ps.len() != 1 || block.ops.iter().any(|o| o.tag == tag::CALL) {
                continue;
            }
            let Some(&p) = ps.iter().next() else { continue };
            if p == b || self.covered.contains(&p) {
                continue;
            }
            self.covered.insert(b);
            let e = extra.entry(p).or_default();
            *e = (*e).max(block.ops.len());
        }
        // Body first: it decides which labels are targets.
        let mut body = String::new();
        for bi in 0..self.blocks.len() {
            let block = self.blocks[bi];
            let b = block.id;
            let mut segs: Vec<Vec<(u32, &Op)>> = vec![Vec::new()];
            for (j, op) in block.ops.iter().enumerate() {
                if let Some(last) = segs.last_mut() {
                    last.push((j as u32, op));
                }
                if op.tag == tag::CALL {
                    segs.push(Vec::new());
                }
            }
            segs.retain(|s| !s.is_empty());
            let mut text = String::new();
            if self.covered.contains(&b) {
                // One segment, prepaid on the fast entry.
                let mut careful = String::new();
                let mut fast = String::new();
                for &(j, op) in segs.iter().flatten() {
                    careful.push_str(&self.op(b, j, op, true)?);
                    fast.push_str(&self.op(b, j, op, false)?);
                }
                let _ = write!(
                    text,
                    "  zl -= {n};\n{fast}@BC{b}@\n{careful}",
                    n = block.ops.len()
                );
            } else {
                let last = segs.len().saturating_sub(1);
                for (si, seg) in segs.iter().enumerate() {
                    let mut careful = String::new();
                    let mut fast = String::new();
                    for &(j, op) in seg {
                        careful.push_str(&self.op(b, j, op, true)?);
                        fast.push_str(&self.op(b, j, op, false)?);
                    }
                    let need = seg.len()
                        + if si == last {
                            extra.get(&b).copied().unwrap_or(0)
                        } else {
                            0
                        };
                    let _ = write!(
                        text,
                        "  if (ZLM_UNLIKELY(zl < {need})) {{\n{careful}  }} else {{\n    zl -= {n};\n{fast}  }}\n",
                        n = seg.len()
                    );
                }
            }
            body.push_str(&format!("@B{b}@\n"));
            body.push_str(&text);
        }
        let mut out = String::new();
        let _ = writeln!(out, "/* {} */", comment(&self.u.source(self.at)));
        let _ = writeln!(
            out,
            "static const char {}[] = {};",
            self.zn(),
            cstr(&self.name)
        );
        let _ = writeln!(out, "{} {{", self.u.header(self.at));
        out.push_str("  uint64_t zl, zr = 0;\n  int zk = 0;\n");
        for (i, _) in f.body.paths.iter().enumerate() {
            let _ = writeln!(out, "  uint64_t pl{i} = 0;");
        }
        for b in &self.blocks {
            for (j, op) in b.ops.iter().enumerate() {
                if op.result.is_some() {
                    let _ = writeln!(out, "  uint64_t v{}_{j} = 0;", b.id);
                }
            }
        }
        out.push_str("  (void)zk;\n  (void)zr;\n  (void)zret;\n");
        for (i, _) in f.body.paths.iter().enumerate() {
            let _ = writeln!(out, "  (void)pl{i};");
        }
        for b in &self.blocks {
            for (j, op) in b.ops.iter().enumerate() {
                if op.result.is_some() {
                    let _ = writeln!(out, "  (void)v{}_{j};", b.id);
                }
            }
        }
        let _ = writeln!(
            out,
            "  if (z->depth >= z->max_depth || zlm_here() < z->floor) return zlm_raise(ZK_DEPTH, {}, -1L, -1L, 0);\n  z->depth++;\n  zl = z->left;",
            self.zn()
        );
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        for (k, p) in ps.iter().enumerate() {
            match self.slots[k] {
                Some(pi) => {
                    let _ = writeln!(out, "  pl{pi} = a{};", p.ordinal);
                }
                None => {
                    let _ = writeln!(out, "  (void)a{};", p.ordinal);
                }
            }
        }
        for (i, e) in f.requires.iter().enumerate() {
            let mut s = String::new();
            let root = e.ops.len().saturating_sub(1);
            let v = self.cexpr(e, root, false, &mut s)?;
            let _ = writeln!(
                out,
                "  {{\n{s}    if ({v} == 0) {}\n  }}",
                self.fault("ZK_CONTRACT", None, None, Some(&format!("requires {i}")))
            );
        }
        let mut ensures = String::new();
        for (i, e) in f.ensures.iter().enumerate() {
            let mut s = String::new();
            let root = e.ops.len().saturating_sub(1);
            let v = self.cexpr(e, root, true, &mut s)?;
            let _ = writeln!(
                ensures,
                "  {{\n{s}    if ({v} == 0) {}\n  }}",
                self.fault("ZK_CONTRACT", None, None, Some(&format!("ensures {i}")))
            );
        }
        for bi in 0..self.blocks.len() {
            let b = self.blocks[bi].id;
            let mark = format!("@B{b}@\n");
            let lab = if self.labels.contains(&b) {
                format!("B{b}:;\n")
            } else {
                String::new()
            };
            body = body.replacen(&mark, &lab, 1);
            let mark = format!("@BC{b}@\n");
            let lab = if self.careful_labels.contains(&b) {
                format!("BC{b}:;\n")
            } else {
                String::new()
            };
            body = body.replacen(&mark, &lab, 1);
        }
        out.push_str(&body);
        let _ = write!(
            out,
            "  goto ZEXIT;\nZEXIT:;\n{ensures}  *zret = zr;\n  z->left = zl;\n  z->depth--;\n  return 0;\n}}\n"
        );
        Ok(out)
    }
}
