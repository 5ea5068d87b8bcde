//! Lowering of checked functions to C: one C function per ZLM function.
//!
//! Covered: every numeric operation at its annotated width, signedness and
//! profile, comparisons, assertions, locals of every lowered type, calls
//! between functions of the module (with the depth check before the call
//! commits), records, variants and Result carriers with try, owned paths
//! with the interpreter's custody list, cleanup recipes, drop logs and the
//! reverse-custody unwind on a fault, Ref/Mut loans as pointers (shared,
//! exclusive and owned receivers), byte arrays, slices and the bytes
//! intrinsics, requires/ensures (including pure calls and receiver field
//! reads), and the step limit with the interpreter's exact accounting.
//! Everything else is refused.

use super::config::TargetConfig;
use super::plan::{self, ContractBytes, FunctionPlan, PlaceRole};
use super::types::{Shape, Types, cstr, is_word, members};
use super::unit::{Refusal, Scope};
use super::walk::{self, At};
use crate::check::{Checked, Resolved};
use crate::interp::{root_name, width};
use crate::materialize::lowered::{
    self, Arith, ByteArg, ByteArray, ByteOp, ByteSource, ByteView, CallInst, Clause, ContractExpr,
    ContractNode, ContractValue, Dest, EdgeDrop, Inst, IsVariantInst, Loan, LoweredFunction,
    ReplaceInst, Site, Subject, Value, heading_lines,
};
use crate::model::*;
use std::collections::BTreeSet;
use std::fmt::Write;

fn word(w: u64) -> String {
    format!("UINT64_C(0x{w:x})")
}

/// A comment-safe rendering.
fn comment(s: &str) -> String {
    s.replace("*/", "* /")
}

struct Unit<'a, 'm> {
    r: &'a Resolved<'m>,
    target: &'a TargetConfig,
    types: Types,
}

impl<'m> Unit<'_, 'm> {
    fn f(&self, at: At) -> &'m Function {
        &self.r.module.declarations[at.0].functions[at.1]
    }

    fn cname(&self, at: At) -> String {
        walk::symbol(self.r, at)
    }

    fn refuse(&self, at: At, b: Option<u32>, o: Option<u32>, msg: impl Into<String>) -> Refusal {
        walk::refuse(self.r, at, b, o, msg)
    }

    fn header(&self, at: At) -> String {
        let f = self.f(at);
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let mut s = format!(
            "static int {}(zrt *z, {} *zret",
            self.cname(at),
            self.types.c(&f.result)
        );
        if let Some(t) = self.receiver_binding(at) {
            let _ = write!(s, ", {} arecv", self.types.c(&t));
        }
        for p in &ps {
            let _ = write!(s, ", {} a{}", self.types.c(&p.ty), p.ordinal);
        }
        s.push(')');
        s
    }

    /// The type a runtime receiver is bound with (`Ref<Self>`, `Mut<Self>`,
    /// `Self`), or `None` for type receivers.
    fn receiver_binding(&self, at: At) -> Option<Type> {
        let kind = self.f(at).receiver;
        if matches!(kind, ReceiverKind::Type | ReceiverKind::None) {
            return None;
        }
        crate::catalog::receiver_type(&self.r.self_type(at.0), kind)
    }

    /// Adds every type function `at` holds values of to the type table.
    fn collect_types(&mut self, at: At) -> Result<(), Refusal> {
        let r = self.r;
        let f = self.f(at);
        let recv = self.receiver_binding(at);
        for t in plan::held_types(f, recv.as_ref()) {
            if let Err(m) = self.types.add(r, t) {
                return Err(self.refuse(at, None, None, m));
            }
        }
        Ok(())
    }

    /// The source declaration, for the comment above the C function.
    fn source(&self, at: At) -> String {
        walk::source(self.r, at)
    }
}

/// Emits the translation unit and its host-callable entries.
pub(super) fn unit(
    checked: &Checked,
    target: &TargetConfig,
    scope: &Scope,
) -> Result<(String, Vec<String>, Vec<String>), Refusal> {
    walk::imports(checked)?;
    let r = Resolved::of_checked(checked);
    unit_of(&r, std::slice::from_ref(checked), target, scope)
}

/// Emits the translation unit of a package: every function of the root
/// module that the scope names and every function of any module of the
/// package they reach.
pub(super) fn package_unit(
    package: &crate::package::Package,
    target: &TargetConfig,
    scope: &Scope,
) -> Result<(String, Vec<String>, Vec<String>), Refusal> {
    let r = package.resolved();
    unit_of(&r, package.modules(), target, scope)
}

fn unit_of(
    r: &Resolved<'_>,
    modules: &[Checked],
    target: &TargetConfig,
    scope: &Scope,
) -> Result<(String, Vec<String>, Vec<String>), Refusal> {
    let mut u = Unit {
        r,
        target,
        types: Types::default(),
    };
    let m = r.module;
    let set = walk::select(r, scope)?;
    for &at in &set {
        u.collect_types(at)?;
    }
    // Typed host entries: every function whose slots and result cross
    // the typed boundary (their host types join the table).
    let typed: Vec<At> = set
        .iter()
        .copied()
        .filter(|&at| super::host::add_types(&mut u.types, r, at).is_ok())
        .collect();
    let mut out = String::new();
    let heading = heading_lines(m, modules, "emitted by irkit zlm emit-c", comment);
    let _ = writeln!(out, "/* {} */", heading.join("\n * "));
    let _ = writeln!(
        out,
        "#define ZLM_ALLOC(n) {}(n)\n#define ZLM_FREE(p) {}(p)\n",
        target.alloc, target.free
    );
    let _ = writeln!(out, "#include \"zlm_rt.h\"\n");
    out.push_str(&u.types.emit(r));
    out.push_str(&super::host::codecs(&u.types));
    for &at in &set {
        let _ = writeln!(out, "{};", u.header(at));
    }
    out.push('\n');
    for &at in &set {
        out.push_str(&CFunction::new(&u, at)?.emit()?);
        out.push('\n');
    }
    // Host entries: type or no receiver, word parameters; the wrapper
    // renders the result.
    let mut entries = Vec::new();
    let mut table = String::new();
    for &at in &set {
        let f = u.f(at);
        if !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None)
            || !f.params.iter().all(|p| is_word(&p.ty))
            || !(is_word(&f.result) || u.types.shape(&f.result).is_some())
        {
            continue;
        }
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let i = entries.len();
        let args: Vec<String> = (0..ps.len()).map(|k| format!(", a[{k}]")).collect();
        let _ = writeln!(
            out,
            "static int ze_{i}(zrt *z, const uint64_t *a, int print) {{\n  {} r;\n  FILE *o = z->out;\n  int rc;\n  memset(&r, 0, sizeof r);\n  (void)a;\n  rc = {}(z, &r{});\n  if (rc == 0 && print) {{\n    fprintf(o, \"OK\\t%llu\\t\", (unsigned long long)(z->limit - z->left));\n    {}\n    fputs(\"\\n\", o);\n  }}\n  return rc;\n}}",
            u.types.c(&f.result),
            u.cname(at),
            args.concat(),
            u.types.render_call(&f.result, "r")
        );
        let _ = writeln!(
            table,
            "  {{{}, {}, ze_{i}}},",
            cstr(&r.fn_name(at.0, at.1)),
            ps.len()
        );
        entries.push(r.fn_name(at.0, at.1));
    }
    let mut typed_entries = Vec::new();
    let mut typed_table = String::new();
    for (k, &at) in typed.iter().enumerate() {
        out.push_str(&super::host::wrapper(&u.types, r, at, k, &u.cname(at)));
        let _ = writeln!(
            typed_table,
            "  {{{}, zh{k}}},",
            cstr(&r.fn_name(at.0, at.1))
        );
        typed_entries.push(r.fn_name(at.0, at.1));
    }
    let max_params = set
        .iter()
        .map(|&at| u.f(at).params.len())
        .max()
        .unwrap_or(0);
    let _ = write!(
        out,
        "\ntypedef int (*zlm_entry_fn)(zrt *, const uint64_t *, int);\n\
         static const struct {{ const char *name; unsigned params; zlm_entry_fn fn; }} zlm_entries[] = {{\n\
         {table}  {{0, 0, 0}}\n}};\n\n\
         typedef int (*zlm_typed_fn)(zrt *, const uint64_t *, uint64_t, int);\n\
         static const struct {{ const char *name; zlm_typed_fn fn; }} zlm_typed[] = {{\n\
         {typed_table}  {{0, 0}}\n}};\n\n\
         /* argv: entry index (`t` and the index of a typed entry), step limit,\n\
         \x20  depth limit, byte limit, argument words (hex). */\n\
         int main(int argc, char **argv) {{\n\
         \x20 zrt z;\n\
         \x20 uint64_t args[{}];\n\
         \x20 uint64_t entry, steps, depth, bytes;\n\
         \x20 uintptr_t here;\n\
         \x20 int i, rc;\n\
         \x20 const char *repeat;\n\
         \x20 int typed = argc > 1 && argv[1][0] == 't';\n",
        max_params + 1
    );
    for &at in &set {
        let _ = writeln!(out, "  (void){};", u.cname(at));
    }
    for name in super::host::codec_names(&u.types) {
        let _ = writeln!(out, "  (void){name};");
    }
    for name in u.types.functions(r) {
        let _ = writeln!(out, "  (void){name};");
    }
    let _ = write!(
        out,
        "  if (argc < 5 || zlm_parse_word(argv[1] + typed, &entry) || zlm_parse_word(argv[2], &steps) ||\n\
         \x20     zlm_parse_word(argv[3], &depth) || zlm_parse_word(argv[4], &bytes))\n\
         \x20   return 2;\n\
         \x20 z.bytes = 0;\n\
         \x20 z.byte_limit = bytes;\n\
         \x20 if (!typed) {{\n\
         \x20   {untyped_check}\n\
         \x20   for (i = 5; i < argc; i++)\n\
         \x20     if (zlm_parse_word(argv[i], &args[i - 5])) return 2;\n\
         \x20 }} else {typed_check}\n\
         \x20 z.left = steps;\n\
         \x20 z.limit = steps;\n\
         \x20 z.depth = 0;\n\
         \x20 z.max_depth = depth;\n\
         \x20 z.out = stdout;\n\
         \x20 here = zlm_here();\n\
         \x20 z.floor = here > (uintptr_t){stack} ? here - (uintptr_t){stack} : 0;\n\
         \x20 if (typed) {{\n\
         \x20   /* A typed entry: the argument words are its slot values' stream. */\n\
         \x20   uint64_t *tw = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(argc - 4));\n\
         \x20   if (tw == 0) return 2;\n\
         \x20   for (i = 5; i < argc; i++)\n\
         \x20     if (zlm_parse_word(argv[i], &tw[i - 5])) {{ free(tw); return 2; }}\n\
         \x20   rc = zlm_typed[entry].fn(&z, tw, (uint64_t)(argc - 5), 1);\n\
         \x20   free(tw);\n\
         \x20   if (rc < 0) return 2;\n\
         \x20   if (rc) zlm_report_fault(stdout);\n\
         \x20   zlm_mem_release_all();\n\
         \x20   return fflush(stdout) == 0 ? 0 : 3;\n\
         \x20 }}\n\
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
         \x20     if (zlm_entries[entry].fn(&z, args, 0) != 0) break;\n\
         \x20     zlm_mem_release_all();\n\
         \x20     z.bytes = 0;\n\
         \x20   }}\n\
         \x20   timespec_get(&t1, TIME_UTC);\n\
         \x20   zlm_mem_release_all();\n\
         \x20   z.left = steps;\n\
         \x20   z.depth = 0;\n\
         \x20   z.bytes = 0;\n\
         \x20   fprintf(stdout, \"TIME\\t%.0f\\n\", ((double)t1.tv_sec - (double)t0.tv_sec) * 1e9 + ((double)t1.tv_nsec - (double)t0.tv_nsec));\n\
         \x20 }}\n\
         \x20 rc = zlm_entries[entry].fn(&z, args, 1);\n\
         \x20 if (rc) zlm_report_fault(stdout);\n\
         \x20 zlm_mem_release_all();\n\
         \x20 return fflush(stdout) == 0 ? 0 : 3;\n\
         }}\n",
        untyped_check = if entries.is_empty() {
            "return 2;".to_string()
        } else {
            format!(
                "if (entry >= {} || (unsigned)(argc - 5) != zlm_entries[entry].params) return 2;",
                entries.len()
            )
        },
        typed_check = if typed_entries.is_empty() {
            "return 2;".to_string()
        } else {
            format!("if (entry >= {}) return 2;", typed_entries.len())
        },
        stack = u.target.stack_bytes,
    );
    Ok((out, entries, typed_entries))
}

/// Where an owned path's value lives: its root's storage and the members
/// below it, with the interpreter's presence conditions.
struct CPlace {
    /// The C expression of the place's binding value (a borrow root's
    /// pointer; otherwise the value itself).
    binding: String,
    /// The C lvalue of the value the place denotes (through a borrow
    /// root's pointer).
    target: String,
    /// The condition under which the interpreter's `deref` of the path
    /// finds a value (root present, every field on the way present).
    present: String,
    /// The presence flag of the path's own slot (`None`: a word root,
    /// which the checker keeps initialized).
    flag: Option<String>,
    /// Storage, loan and custody role, and drop-log name.
    role: PlaceRole,
}

impl std::ops::Deref for CPlace {
    type Target = PlaceRole;
    fn deref(&self) -> &PlaceRole {
        &self.role
    }
}

/// One function printed as C: the shared plan's decisions
/// (`plan::FunctionPlan`) spelled over C storage.
struct CFunction<'a, 'u, 'm> {
    u: &'a Unit<'u, 'm>,
    at: At,
    f: &'m Function,
    name: String,
    /// Paths, temporaries, slots and edges, decided once for both printers.
    plan: FunctionPlan<'u, 'm>,
    /// The migrated operations, lowered once for both printers.
    lowered: LoweredFunction,
    places: Vec<CPlace>,
    labels: BTreeSet<u32>,
    careful_labels: BTreeSet<u32>,
    /// Blocks whose step cost their unique predecessor's last check prepays.
    covered: BTreeSet<u32>,
    fresh: u32,
    /// While emitting ensures: a fault first drops the protected result.
    in_ensures: bool,
}

impl<'a, 'u, 'm> CFunction<'a, 'u, 'm> {
    fn new(u: &'a Unit<'u, 'm>, at: At) -> Result<Self, Refusal> {
        let f = u.f(at);
        let r = u.r;
        let name = r.fn_name(at.0, at.1);
        let frame = walk::frame(r, at, u.receiver_binding(at).is_some())?;
        // Each path as C expressions over its root's storage `pl<root>`
        // and presence flag `ph<root>`.
        let mut paths = Vec::new();
        for (p, plan) in f.body.paths.iter().zip(&frame.paths) {
            let (ri, borrowed) = (plan.root, plan.borrowed);
            let mut lvalue = if borrowed {
                format!("(*pl{ri})")
            } else {
                format!("pl{ri}")
            };
            let mut present = if !borrowed && (plan.agg || !plan.steps.is_empty()) {
                format!("ph{ri}")
            } else {
                "1".to_string()
            };
            let mut flag =
                (!borrowed && plan.agg && plan.steps.is_empty()).then(|| format!("ph{ri}"));
            for step in &plan.steps {
                let fo = step.field.ordinal;
                if step.variant.is_some() {
                    present = format!("{present} && {lvalue}.built");
                }
                let (m, h) = members(step.variant, fo);
                if !matches!(
                    u.types.shape(&step.base),
                    Some(Shape::Record { .. } | Shape::Variants { .. })
                ) {
                    return Err(u.refuse(at, None, None, "owned path below a non-record"));
                }
                let h = format!("{lvalue}.{h}");
                present = format!("{present} && {h}");
                flag = Some(h);
                lvalue = format!("{lvalue}.{m}");
            }
            let binding = if borrowed && p.key.fields.is_empty() {
                format!("pl{ri}")
            } else {
                lvalue.clone()
            };
            paths.push(CPlace {
                binding,
                target: lvalue,
                present,
                flag,
                role: PlaceRole::of(plan),
            });
        }
        let plan = FunctionPlan::new(r, at, frame);
        let lowered = LoweredFunction::of(&plan, &u.types, |_| true);
        Ok(CFunction {
            u,
            at,
            f,
            name,
            plan,
            lowered,
            places: paths,
            labels: BTreeSet::new(),
            careful_labels: BTreeSet::new(),
            covered: BTreeSet::new(),
            fresh: 0,
            in_ensures: false,
        })
    }

    fn refuse(&self, b: u32, j: u32, msg: impl Into<String>) -> Refusal {
        self.u.refuse(self.at, Some(b), Some(j), msg)
    }

    fn zn(&self) -> String {
        format!("zn_{}", self.u.cname(self.at))
    }

    /// Drops the protected result while a fault leaves the ensures.
    fn ensures_drop(&self) -> String {
        if !self.in_ensures {
            return String::new();
        }
        let d = self.u.types.drop_call(
            self.u.r,
            &self.f.result,
            &self.zn(),
            "&(zname){0, \"result\"}",
            "&zr",
        );
        if d.is_empty() { d } else { format!("{d} ") }
    }

    /// Leaves the function with the fault already raised (`zk`): unwinds
    /// the frame's custody first.
    fn propagate(&self) -> String {
        if self.plan.frame.cust {
            format!("{{ {}goto ZUNWIND; }}", self.ensures_drop())
        } else {
            format!("{{ {}z->depth--; return zk; }}", self.ensures_drop())
        }
    }

    fn fault(&self, kind: &str, b: Option<u32>, o: Option<u32>, detail: Option<&str>) -> String {
        let n = |x: Option<u32>| x.map(|v| format!("{v}L")).unwrap_or_else(|| "-1L".into());
        let raise = format!(
            "zlm_raise({kind}, {}, {}, {}, {})",
            self.zn(),
            n(b),
            n(o),
            detail.map(cstr).unwrap_or_else(|| "0".into())
        );
        if self.plan.frame.cust {
            format!("{{ {}zk = {raise}; goto ZUNWIND; }}", self.ensures_drop())
        } else {
            format!(
                "{{ {}z->left = zl; z->depth--; return {raise}; }}",
                self.ensures_drop()
            )
        }
    }

    /// Statements bringing root `pi` into custody.
    fn push(&self, pi: usize, b: u32, j: u32) -> String {
        format!(
            "    if (ZLM_UNLIKELY(zcn >= {cap}u)) {}\n    zc[zcn++] = {pi}u;\n",
            self.fault("ZK_INTERNAL", Some(b), Some(j), None),
            cap = self.f.body.paths.len() + 1
        )
    }

    /// The interpreter's `drop_place`: takes the value at path `pi` (root:
    /// out of custody) and destroys it under the path's name.
    fn drop_place(&self, pi: usize) -> String {
        let p = &self.places[pi];
        let ty = &self.f.body.paths[pi].ty;
        let call = self.u.types.drop_call(
            self.u.r,
            ty,
            &self.zn(),
            &format!("&(zname){{0, {}}}", cstr(&p.name)),
            &format!("&{}", p.target),
        );
        let mut s = String::new();
        if p.owner || (p.agg && p.flag.as_deref() == Some(&format!("ph{pi}"))) {
            let _ = writeln!(s, "    zlm_cust_remove(zc, &zcn, {pi}u);");
        }
        if let Some(flag) = &p.flag {
            let _ = writeln!(s, "    if ({}) {{ {flag} = 0; {call} }}", p.present);
        }
        s
    }

    /// An edge's cleanup drops, each with its own step tick at (block,
    /// recipe).
    fn edge_drops(&self, b: u32, drops: &[EdgeDrop]) -> String {
        let mut s = String::new();
        for d in drops {
            let _ = write!(
                s,
                "    if (ZLM_UNLIKELY(zl == 0)) {}\n    zl--;\n{}",
                self.fault("ZK_STEPS", Some(b), Some(d.recipe), None),
                self.drop_place(d.path)
            );
        }
        s
    }

    /// The runtime call of a checked word operation (`None` for a bit
    /// operation, which never faults).
    fn arith_call(
        &self,
        op: Arith,
        k: ScalarKind,
        p: NumericProfile,
        a: &str,
        c: &str,
        dst: &str,
    ) -> Option<String> {
        let (w, s, p) = (width(k), u32::from(k.is_signed()), p.tag());
        Some(match op {
            Arith::Neg => format!("zlm_neg({w}, {s}, {p}, {a}, &{dst})"),
            Arith::Add => format!("zlm_add({w}, {s}, {p}, {a}, {c}, &{dst})"),
            Arith::Sub => format!("zlm_sub({w}, {s}, {p}, {a}, {c}, &{dst})"),
            Arith::Mul => format!("zlm_mul({w}, {s}, {p}, {a}, {c}, &{dst})"),
            Arith::Div => format!("zlm_div({w}, {s}, {p}, 0, {a}, {c}, &{dst})"),
            Arith::Rem => format!("zlm_div({w}, {s}, {p}, 1, {a}, {c}, &{dst})"),
            Arith::Shl => format!("zlm_shl({w}, {s}, {p}, {a}, {c}, &{dst})"),
            Arith::Shr => format!("zlm_shr({w}, {s}, {p}, {a}, {c}, &{dst})"),
            Arith::And | Arith::Or | Arith::Xor => return None,
        })
    }

    /// A bit operation's canonical result at kind `k`.
    fn bits(op: Arith, k: ScalarKind, a: &str, c: &str) -> String {
        let sym = match op {
            Arith::And => "&",
            Arith::Or => "|",
            _ => "^",
        };
        format!(
            "zlm_canon({}, {}, {a} {sym} {c})",
            width(k),
            u32::from(k.is_signed())
        )
    }

    /// A lowered value.
    fn value(&self, v: &Value) -> String {
        match v {
            Value::Flow(b, j) => format!("v{b}_{j}"),
            Value::Temp(t) => format!("pl{t}"),
            Value::Word(w) => word(*w),
            Value::Place(pi) => self.places[*pi].binding.clone(),
        }
    }

    /// A lowered argument: an owner temporary leaves custody first (the
    /// statements go to `pre`).
    fn take_lowered(&self, t: &lowered::Take, pre: &mut String) -> String {
        if let Some(o) = t.release {
            let _ = writeln!(pre, "    zlm_cust_remove(zc, &zcn, {o}u); ph{o} = 0;");
        }
        self.value(&t.value)
    }

    fn dest(d: &Dest) -> String {
        match d {
            Dest::Flow(b, j) => format!("v{b}_{j}"),
            Dest::Owner(t) => format!("pl{t}"),
        }
    }

    fn fault_at(&self, kind: &str, site: Site) -> String {
        self.fault(kind, Some(site.block), Some(site.op), None)
    }

    /// Prints one lowered instruction of block `b`.
    fn print(&mut self, inst: &Inst, b: u32, careful: bool) -> String {
        let mut s = String::new();
        match inst {
            Inst::Copy { dst, src, .. } => {
                let _ = writeln!(s, "    {} = {};", Self::dest(dst), self.value(&src.value));
            }
            Inst::Unit { dst } => {
                let _ = writeln!(s, "    {} = 0;", Self::dest(dst));
            }
            Inst::Arith(arith) => {
                let dst = Self::dest(&arith.dst);
                let (a, c) = (self.value(&arith.a), self.value(&arith.b));
                let (op, kind) = (arith.op, arith.kind);
                match self.arith_call(op, kind, arith.profile, &a, &c, &dst) {
                    Some(call) => {
                        let _ = writeln!(
                            s,
                            "    if (ZLM_UNLIKELY((zk = {call}) != 0)) {}",
                            self.fault_at("zk", arith.site)
                        );
                    }
                    None => {
                        let _ = writeln!(s, "    {dst} = {};", Self::bits(op, kind, &a, &c));
                    }
                }
            }
            Inst::Compare(compare) => {
                let _ = writeln!(
                    s,
                    "    {} = zlm_cmp({}, {}, {}, {});",
                    Self::dest(&compare.dst),
                    compare.op.code(),
                    u32::from(compare.signed),
                    self.value(&compare.a),
                    self.value(&compare.b)
                );
            }
            Inst::Not { dst, a } => {
                let _ = writeln!(
                    s,
                    "    {} = (uint64_t)({} == 0);",
                    Self::dest(dst),
                    self.value(a)
                );
            }
            Inst::AssertTrue { a, site } => {
                let _ = writeln!(
                    s,
                    "    if ({} == 0) {}",
                    self.value(a),
                    self.fault_at("ZK_ASSERT", *site)
                );
            }
            Inst::AssertEq { a, b: c, site } => {
                // Through `zlm_cmp`: an assertion of a value against itself
                // is valid ZLM and must not be a C self-comparison (which
                // strict compilers reject).
                let _ = writeln!(
                    s,
                    "    if (zlm_cmp({}, 0, {}, {})) {}",
                    lowered::Compare::Ne.code(),
                    self.value(a),
                    self.value(c),
                    self.fault_at("ZK_ASSERT", *site)
                );
            }
            Inst::Jump { edge } => {
                let recipes = self.edge_drops(b, &edge.drops);
                let g = self.label(edge.target, careful);
                let _ = writeln!(s, "{recipes}    {g}");
            }
            Inst::Branch(branch) => {
                let (on_true, on_false) = (&branch.on_true, &branch.on_false);
                let c = self.value(&branch.cond);
                let rt = self.edge_drops(b, &on_true.drops);
                let rf = self.edge_drops(b, &on_false.drops);
                let yes = self.label(on_true.target, careful);
                let no = self.label(on_false.target, careful);
                if rt.is_empty() {
                    let _ = writeln!(s, "    if ({c} != 0) {yes}\n{rf}    {no}");
                } else {
                    let _ = writeln!(
                        s,
                        "    if ({c} != 0) {{\n{rt}    {yes}\n    }}\n{rf}    {no}"
                    );
                }
            }
            Inst::Return { value, drops } => {
                let mut pre = String::new();
                let v = self.take_lowered(value, &mut pre);
                let recipes = self.edge_drops(b, drops);
                let _ = writeln!(s, "{pre}    zr = {v};\n{recipes}    goto ZEXIT;");
            }
            Inst::Call(call) => {
                let CallInst {
                    dst, callee, site, ..
                } = call;
                let mut pre = String::new();
                let args: Vec<String> = call
                    .args
                    .iter()
                    .map(|a| format!(", {}", self.take_lowered(a, &mut pre)))
                    .collect();
                let _ = writeln!(
                    s,
                    "    if (z->depth >= z->max_depth) {}\n{pre}    z->left = zl;\n    zk = {}(z, &{}{});\n    zl = z->left;\n    if (zk != 0) {}",
                    self.fault_at("ZK_DEPTH", *site),
                    self.u.cname(*callee),
                    Self::dest(dst),
                    args.concat(),
                    self.propagate()
                );
            }
            Inst::Store {
                path,
                value,
                flag,
                custody,
                site,
                ..
            } => {
                let mut pre = String::new();
                let v = self.take_lowered(value, &mut pre);
                let _ = writeln!(s, "{pre}    pl{path} = {v};");
                if *flag {
                    let _ = writeln!(s, "    ph{path} = 1;");
                }
                if *custody {
                    s.push_str(&self.push(*path, site.block, site.op));
                }
            }
            Inst::Move {
                dst, path, release, ..
            } => {
                let p = &self.places[*path];
                if *release {
                    let _ = writeln!(s, "    zlm_cust_remove(zc, &zcn, {path}u);");
                }
                let _ = writeln!(s, "    {} = {};", Self::dest(dst), p.target);
                if let Some(flag) = &p.flag {
                    let _ = writeln!(s, "    {flag} = 0;");
                }
            }
            Inst::Drop { path } => s.push_str(&self.drop_place(*path)),
            Inst::Variant {
                dst,
                variant,
                tag,
                built,
                fields,
                ..
            } => {
                let dst = Self::dest(dst);
                let mut pre = String::new();
                let mut set = String::new();
                if *built {
                    let _ = writeln!(set, "    {dst}.built = 1;");
                    for (k, (a, _)) in fields.iter().enumerate() {
                        let v = self.take_lowered(a, &mut pre);
                        let (m, h) = members(Some(*variant), k);
                        let _ = writeln!(set, "    {dst}.{m} = {v};\n    {dst}.{h} = 1;");
                    }
                }
                let _ = write!(
                    s,
                    "{pre}    memset(&{dst}, 0, sizeof {dst});\n    {dst}.tag = {tag}u;\n{set}"
                );
            }
            Inst::Record { dst, fields, .. } => {
                let dst = Self::dest(dst);
                let mut pre = String::new();
                let mut set = String::new();
                for (k, (a, _)) in fields.iter().enumerate() {
                    let v = self.take_lowered(a, &mut pre);
                    let (m, h) = members(None, k);
                    let _ = writeln!(set, "    {dst}.{m} = {v};\n    {dst}.{h} = 1;");
                }
                let _ = write!(s, "{pre}{set}");
            }
            Inst::Carrier {
                dst, err, value, ..
            } => {
                let dst = Self::dest(dst);
                let mut pre = String::new();
                let v = self.take_lowered(value, &mut pre);
                let (t, m) = if *err { (1, "err") } else { (0, "ok") };
                let _ = writeln!(
                    s,
                    "{pre}    memset(&{dst}, 0, sizeof {dst});\n    {dst}.tag = {t}u;\n    {dst}.{m} = {v};"
                );
            }
            Inst::IsVariant(test) => {
                let IsVariantInst { dst, tag, site, .. } = test;
                let (present, subject) = match &test.subject {
                    Subject::Place(pi) => (
                        self.places[*pi].present.clone(),
                        self.places[*pi].target.clone(),
                    ),
                    Subject::Value(v) => ("1".to_string(), self.value(v)),
                };
                let _ = writeln!(
                    s,
                    "    if (!({present})) {}\n    {} = (uint64_t)({subject}.tag == {tag}u);",
                    self.fault_at("ZK_TAG", *site),
                    Self::dest(dst)
                );
            }
            Inst::Field {
                dst,
                path,
                variant,
                ordinal: ord,
                take,
                site,
                ..
            } => {
                let p = &self.places[*path];
                let (m, h) = members(variant.map(|(vi, _)| vi), ord);
                let (cond, member, flag) = match variant {
                    Some((_, t)) => (
                        format!(
                            "{} && {lv}.tag == {t}u && {lv}.built",
                            p.present,
                            lv = p.target
                        ),
                        format!("{}.{m}", p.target),
                        format!("{}.{h}", p.target),
                    ),
                    None => (
                        p.present.clone(),
                        format!("{}.{m}", p.target),
                        format!("{}.{h}", p.target),
                    ),
                };
                let _ = writeln!(
                    s,
                    "    if (!({cond})) {}\n    {} = {member};",
                    self.fault_at("ZK_TAG", *site),
                    Self::dest(dst)
                );
                if *take {
                    let _ = writeln!(s, "    {flag} = 0;");
                }
            }
            Inst::Borrow { dst, source, .. } => {
                let v = match source {
                    Loan::SliceView(pi) => self.places[*pi].binding.clone(),
                    Loan::Place(pi) => format!("&{}", self.places[*pi].target),
                    Loan::Value(t) => self.value(&t.value),
                };
                let _ = writeln!(s, "    {} = {v};", Self::dest(dst));
            }
            Inst::Replace(replace) => {
                let ReplaceInst {
                    value, ty, site, ..
                } = replace;
                let (pi, candidate, dropped_as) =
                    (replace.path, replace.candidate, &replace.dropped_as);
                let ct = self.u.types.c(ty);
                let mut pre = String::new();
                let _ = writeln!(
                    pre,
                    "    zcand = {};",
                    candidate
                        .map(|c| format!("zlm_cust_pos(zc, zcn, {c}u)"))
                        .unwrap_or_else(|| "-1L".into())
                );
                let v = self.take_lowered(value, &mut pre);
                let p = &self.places[pi];
                let call = self.u.types.drop_call(
                    self.u.r,
                    ty,
                    &self.zn(),
                    &format!("&(zname){{0, {}}}", cstr(dropped_as)),
                    "&zold",
                );
                if replace.root {
                    let _ = writeln!(
                        s,
                        "{pre}    {{\n      {ct} zold = pl{pi};\n      unsigned char zhad = ph{pi};\n      zlm_cust_replace(zc, &zcn, {pi}u, zcand);\n      pl{pi} = {v};\n      ph{pi} = 1;\n      if (zhad) {{ {call} }}\n    }}"
                    );
                } else {
                    let _ = writeln!(
                        s,
                        "{pre}    if (!({})) {}\n    {{\n      {ct} zold = {lv};\n      {lv} = {v};\n      {call}\n    }}",
                        p.present,
                        self.fault_at("ZK_TAG", *site),
                        lv = p.target
                    );
                }
            }
            Inst::Slice(slice) => {
                let (arr, present) = self.byte_array(&slice.array);
                let (st, en) = (self.value(&slice.start), self.value(&slice.end));
                let (dst, site) = (Self::dest(&slice.dst), &slice.site);
                // `start > end` through `zlm_cmp` (unsigned): the same value
                // as both bounds is valid ZLM and must not be a C
                // self-comparison (which strict compilers reject).
                let _ = writeln!(
                    s,
                    "    if (!({present})) {}\n    if (zlm_cmp({}, 0, {st}, {en}) || {en} > ({arr})->len) {}\n    {dst}.b = {arr};\n    {dst}.s = {st};\n    {dst}.e = {en};",
                    self.fault_at("ZK_TAG", *site),
                    lowered::Compare::Gt.code(),
                    self.fault_at("ZK_BOUNDS", *site)
                );
            }
            Inst::Bytes {
                dst,
                op,
                args,
                site,
            } => s.push_str(&self.print_bytes(dst, op, args, *site)),
            Inst::Finish {
                builder: pi,
                result: t,
                fields,
                site,
                ..
            } => {
                // One relabel: the builder's custody position now holds the
                // result, and its storage moves without a copy of the bytes.
                let _ = writeln!(
                    s,
                    "    zcand = zlm_cust_pos(zc, zcn, {pi}u);\n    if (zcand < 0 || !ph{pi}) {}\n    zc[zcand] = {t}u;",
                    self.fault_at("ZK_INTERNAL", *site)
                );
                for o in fields {
                    let (m, h) = members(None, o);
                    let _ = writeln!(
                        s,
                        "    pl{t}.{m} = pl{pi}.{m};\n    pl{t}.{h} = pl{pi}.{h};"
                    );
                }
                let _ = writeln!(s, "    ph{t} = 1;\n    ph{pi} = 0;");
            }
            Inst::Try {
                dst,
                value,
                drops,
                site,
                ..
            } => {
                let mut pre = String::new();
                let v = self.take_lowered(value, &mut pre);
                let recipes = self.edge_drops(b, drops);
                let _ = writeln!(
                    s,
                    "{pre}    if ({v}.tag == 0) {} = {v}.ok;\n    else if ({v}.tag == 1) {{\n{recipes}      memset(&zr, 0, sizeof zr);\n      zr.tag = 1;\n      zr.err = {v}.err;\n      goto ZEXIT;\n    }} else {}",
                    Self::dest(dst),
                    self.fault_at("ZK_TAG", *site)
                );
            }
        }
        s
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
    fn op(&mut self, b: u32, j: u32, careful: bool) -> Result<String, Refusal> {
        let mut s = String::new();
        if careful {
            let _ = write!(
                s,
                "    if (ZLM_UNLIKELY(zl == 0)) {}\n    zl--;\n",
                self.fault("ZK_STEPS", Some(b), Some(j), None)
            );
        }
        let Some(l) = self.lowered.at(b, j) else {
            return Err(self.refuse(b, j, "operation outside the lowered form"));
        };
        let l = l?;
        s.push_str(&self.print(&l.inst, b, careful));
        if let Some(t) = l.custody {
            let _ = writeln!(s, "    ph{t} = 1;");
            s.push_str(&self.push(t, b, j));
        }
        Ok(s)
    }

    /// The C spelling of a slice window's array: (its address, the
    /// condition under which a place source is present).
    fn byte_array(&self, a: &ByteArray) -> (String, String) {
        let (array, present) = match &a.source {
            ByteSource::Place(pi) => (
                format!("&{}", self.places[*pi].target),
                self.places[*pi].present.clone(),
            ),
            ByteSource::Loan(v) => (format!("&(*{})", self.value(v)), "1".into()),
        };
        match a.holder {
            None => (array, present),
            Some(_) => (format!("&({}).f0", &array[1..]), present),
        }
    }

    /// (length, buffer start up to the index) of the bytes at `a`.
    fn byte_view(view: ByteView, a: &str) -> (String, String) {
        match view {
            ByteView::Slice => (format!("({a}.e - {a}.s)"), format!("{a}.b->p[{a}.s + ")),
            ByteView::Array => (format!("{a}->len"), format!("{a}->p[")),
        }
    }

    /// Prints a catalog byte intrinsic.
    fn print_bytes(&self, dst: &Dest, op: &ByteOp, args: &[ByteArg], site: Site) -> String {
        let mut s = String::new();
        let args: Vec<String> = args
            .iter()
            .map(|a| match a {
                ByteArg::Array(pi) => format!("(&{})", self.places[*pi].target),
                ByteArg::Value(t) => self.take_lowered(t, &mut s),
            })
            .collect();
        // The lowering checked the arity.
        let arg = |k: usize| args.get(k).cloned().unwrap_or_default();
        let dst = Self::dest(dst);
        let _ = match op {
            ByteOp::Len(v) => writeln!(s, "    {dst} = {};", Self::byte_view(*v, &arg(0)).0),
            ByteOp::At(v) => {
                let (len, at) = Self::byte_view(*v, &arg(0));
                let i = arg(1);
                writeln!(
                    s,
                    "    if ({i} >= {len}) {}\n    {dst} = (uint64_t){at}{i}];",
                    self.fault_at("ZK_BOUNDS", site)
                )
            }
            ByteOp::Alloc { .. } => writeln!(
                s,
                "    memset(&{dst}, 0, sizeof {dst});\n    if ((zk = zlm_bytes_alloc(z, {}, &{dst}.tag, &{dst}.ok, &{dst}.err)) != 0) {}",
                arg(1),
                self.fault_at("zk", site)
            ),
            ByteOp::Push { .. } => writeln!(
                s,
                "    memset(&{dst}, 0, sizeof {dst});\n    if ((zk = zlm_bytes_push(z, {}, {}, &{dst}.tag, &{dst}.err)) != 0) {}",
                arg(0),
                arg(2),
                self.fault_at("zk", site)
            ),
            ByteOp::Poke => {
                let (a, i, byte) = (arg(0), arg(1), arg(2));
                writeln!(
                    s,
                    "    if ({i} >= {a}->len) {}\n    {a}->p[{i}] = (unsigned char){byte};\n    {dst} = 0;",
                    self.fault_at("ZK_BOUNDS", site)
                )
            }
            ByteOp::Clear => writeln!(s, "    {}->len = 0;\n    {dst} = 0;", arg(0)),
            ByteOp::Left => writeln!(
                s,
                "    {dst} = z->byte_limit >= z->bytes ? z->byte_limit - z->bytes : 0;"
            ),
        };
        s
    }

    /// A contract value's C expression (an operation's: evaluated into
    /// `s` first).
    fn cvalue(&mut self, v: &ContractValue, s: &mut String) -> String {
        match v {
            ContractValue::Word(w) => word(*w),
            ContractValue::Slot { path, .. } => format!("pl{path}"),
            ContractValue::Result { .. } => "zr".into(),
            ContractValue::Expr(e) => self.cexpr(e, s),
        }
    }

    /// Emits a lowered contract operation into `s`; returns its C
    /// variable.
    fn cexpr(&mut self, e: &ContractExpr, s: &mut String) -> String {
        let v = format!("c{}", self.fresh);
        self.fresh += 1;
        let _ = writeln!(
            s,
            "    uint64_t {v} = 0;\n    if (ZLM_UNLIKELY(zl == 0)) {}\n    zl--;",
            self.fault("ZK_STEPS", None, Some(e.index), None)
        );
        let mut vals = Vec::new();
        for o in &e.operands {
            vals.push(self.cvalue(o, s));
        }
        // The lowering checked each node's operand count.
        let a = vals.first().cloned().unwrap_or_default();
        let c = vals.get(1).cloned().unwrap_or_else(|| "0".into());
        let contract_fault = self.fault("zk", None, None, None);
        let _ = match &e.node {
            ContractNode::Short { or, rest } => {
                let cond = if *or {
                    format!("{a} != 0")
                } else {
                    format!("{a} == 0")
                };
                let mut inner = String::new();
                let r = self.cvalue(rest, &mut inner);
                writeln!(
                    s,
                    "    if ({cond}) {v} = (uint64_t)({a} != 0);\n    else {{\n{inner}    {v} = {r};\n    }}"
                )
            }
            ContractNode::Copy => writeln!(s, "    {v} = {a};"),
            ContractNode::Not => writeln!(s, "    {v} = (uint64_t)({a} == 0);"),
            ContractNode::Arith { op, kind, profile } => {
                match self.arith_call(*op, *kind, *profile, &a, &c, &v) {
                    Some(call) => writeln!(
                        s,
                        "    if (ZLM_UNLIKELY((zk = {call}) != 0)) {contract_fault}"
                    ),
                    None => writeln!(s, "    {v} = {};", Self::bits(*op, *kind, &a, &c)),
                }
            }
            ContractNode::Compare { op, signed } => writeln!(
                s,
                "    {v} = zlm_cmp({}, {}, {a}, {c});",
                op.code(),
                u32::from(*signed)
            ),
            ContractNode::Field { path, ordinal } => {
                let t = &self.places[*path].target;
                let (m, h) = members(None, ordinal);
                writeln!(
                    s,
                    "    if (!({t}.{h})) {}\n    {v} = {t}.{m};",
                    self.fault("ZK_TAG", None, None, None)
                )
            }
            ContractNode::Call { callee, loan } => {
                // A synchronous shared child loan of the binding.
                if let Some(pi) = loan
                    && let Some(first) = vals.first_mut()
                {
                    *first = format!("&pl{pi}");
                }
                let args: Vec<String> = vals.iter().map(|a| format!(", {a}")).collect();
                writeln!(
                    s,
                    "    z->left = zl;\n    zk = {}(z, &{v}{});\n    zl = z->left;\n    if (zk != 0) {}",
                    self.u.cname(*callee),
                    args.concat(),
                    self.propagate()
                )
            }
            ContractNode::ByteLen(bytes) => {
                writeln!(s, "    {v} = {};", Self::contract_bytes(*bytes, &a).0)
            }
            ContractNode::ByteAt(bytes) => {
                let (len, at) = Self::contract_bytes(*bytes, &a);
                writeln!(
                    s,
                    "    if ({c} >= {len}) {}\n    {v} = (uint64_t){at}{c}];",
                    self.fault("ZK_BOUNDS", None, Some(e.index), None)
                )
            }
            ContractNode::BytesLeft => writeln!(
                s,
                "    {v} = z->byte_limit >= z->bytes ? z->byte_limit - z->bytes : 0;"
            ),
        };
        v
    }

    /// (length, buffer start up to the index) of a contract binding's
    /// bytes.
    fn contract_bytes(bytes: ContractBytes, a: &str) -> (String, String) {
        Self::byte_view(
            match bytes {
                ContractBytes::ArrayLoan => ByteView::Array,
                ContractBytes::Slice => ByteView::Slice,
            },
            a,
        )
    }

    /// A lowered clause: the fault with its detail when the root is zero.
    fn clause(&mut self, c: &Result<Clause, Refusal>) -> Result<String, Refusal> {
        let c = c.clone()?;
        let mut s = String::new();
        let v = self.cexpr(&c.root, &mut s);
        Ok(format!(
            "  {{\n{s}    if ({v} == 0) {}\n  }}\n",
            self.fault("ZK_CONTRACT", None, None, Some(&c.detail))
        ))
    }

    fn emit(mut self) -> Result<String, Refusal> {
        let f = self.f;
        // Step prepayment, shared with the LLVM engines.
        let pre = walk::prepayment(f, &self.plan.frame.blocks);
        self.covered = pre.covered;
        let extra = pre.extra;
        // Two-block loops (`walk::Prepaid::unroll`): the header's fast entry
        // first checks the cost of two iterations and, when covered, runs an
        // unrolled copy (header, body, header) with no check in between, so
        // a loop costs one budget check per two iterations. The copy is the
        // same fast text with the same step charges; with less budget the
        // ordinary path below runs, so faults and step counts are unchanged.
        let unroll = pre.unroll;
        // Body first: it decides which labels are targets.
        let mut body = String::new();
        for bi in 0..self.plan.frame.blocks.len() {
            let block = self.plan.frame.blocks[bi];
            let b = block.id;
            let segs = plan::segments(block);
            let mut text = String::new();
            if self.covered.contains(&b) {
                // One segment, prepaid on the fast entry.
                let mut careful = String::new();
                let mut fast = String::new();
                for &(j, _) in segs.iter().flatten() {
                    careful.push_str(&self.op(b, j, true)?);
                    fast.push_str(&self.op(b, j, false)?);
                }
                let _ = write!(
                    text,
                    "  zl -= {n};\n{fast}@BC{b}@\n{careful}",
                    n = block.ops.len()
                );
            } else {
                for (si, seg) in segs.iter().enumerate() {
                    let mut careful = String::new();
                    let mut fast = String::new();
                    for &(j, _) in seg {
                        careful.push_str(&self.op(b, j, true)?);
                        fast.push_str(&self.op(b, j, false)?);
                    }
                    let need = plan::segment_need(seg, si, segs.len(), b, &extra);
                    if let Some(&s) = unroll.get(&b).filter(|_| segs.len() == 1) {
                        let mut body_fast = String::new();
                        let found: Option<&'m Block> =
                            self.plan.frame.blocks.iter().find(|x| x.id == s).copied();
                        if let Some(sb) = found {
                            for j in 0..sb.ops.len() {
                                body_fast.push_str(&self.op(s, j as u32, false)?);
                            }
                            let ns = sb.ops.len();
                            let _ = write!(
                                text,
                                "  if (!ZLM_UNLIKELY(zl < {twice})) {{\n    zl -= {n};\n    {{\n{first}    }}\nBU{s}:;\n    zl -= {ns};\n    {{\n{again}    }}\nBU{b}:;\n    zl -= {n};\n    {{\n{fast}    }}\n  }}\n",
                                twice = need + seg.len() + ns,
                                n = seg.len(),
                                first =
                                    fast.replace(&format!("goto B{s};"), &format!("goto BU{s};")),
                                again = body_fast
                                    .replace(&format!("goto B{b};"), &format!("goto BU{b};")),
                            );
                        }
                    }
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
        let types = &self.u.types;
        let decl = |out: &mut String, t: &Type, v: &str| {
            if is_word(t) {
                let _ = writeln!(out, "  uint64_t {v} = 0;");
            } else {
                let _ = writeln!(out, "  {} {v};\n  memset(&{v}, 0, sizeof {v});", types.c(t));
            }
        };
        let mut voids = String::new();
        out.push_str("  uint64_t zl;\n  int zk = 0;\n");
        decl(&mut out, &f.result, "zr");
        for (i, p) in f.body.paths.iter().enumerate() {
            if p.key.fields.is_empty() && self.places[i].borrowed {
                let _ = writeln!(out, "  {} *pl{i} = 0;", types.c(&p.ty));
                let _ = writeln!(voids, "  (void)pl{i};");
            } else if p.key.fields.is_empty() {
                decl(&mut out, &p.ty, &format!("pl{i}"));
                let _ = writeln!(voids, "  (void)pl{i};");
                if self.places[i].agg {
                    let _ = writeln!(out, "  unsigned char ph{i} = 0;");
                    let _ = writeln!(voids, "  (void)ph{i};");
                }
            }
        }
        for b in &self.plan.frame.blocks {
            for (j, op) in b.ops.iter().enumerate() {
                if let Some(t) = &op.result
                    && !self.plan.frame.temps.contains_key(&(b.id, j as u32))
                {
                    decl(&mut out, t, &format!("v{}_{j}", b.id));
                    let _ = writeln!(voids, "  (void)v{}_{j};", b.id);
                }
            }
        }
        if self.plan.frame.cust {
            let _ = writeln!(
                out,
                "  uint16_t zc[{}] = {{0}};\n  unsigned zcn = 0;\n  long zcand = -1;",
                f.body.paths.len() + 1
            );
            voids.push_str("  (void)zc;\n  (void)zcn;\n  (void)zcand;\n");
        }
        out.push_str("  (void)zk;\n  (void)zr;\n  (void)zret;\n");
        out.push_str(&voids);
        let _ = writeln!(
            out,
            "  if (z->depth >= z->max_depth || zlm_here() < z->floor) return zlm_raise(ZK_DEPTH, {}, -1L, -1L, 0);\n  z->depth++;\n  zl = z->left;",
            self.zn()
        );
        let mut ps: Vec<&Param> = f.params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        let mut args: Vec<String> = Vec::new();
        if self.u.receiver_binding(self.at).is_some() {
            args.push("arecv".into());
        }
        args.extend(ps.iter().map(|p| format!("a{}", p.ordinal)));
        for (k, arg) in args.iter().enumerate() {
            match self.plan.frame.slots[k] {
                Some(pi) => {
                    let _ = writeln!(out, "  pl{pi} = {arg};");
                    if self.places[pi].agg {
                        let _ = writeln!(out, "  ph{pi} = 1;");
                    }
                    if self.places[pi].owner {
                        let _ = writeln!(out, "  zc[zcn++] = {pi}u;");
                    }
                }
                None => {
                    let _ = writeln!(out, "  (void){arg};");
                }
            }
        }
        for c in self.lowered.requires().to_vec() {
            let text = self.clause(&c)?;
            out.push_str(&text);
        }
        let mut ensures = String::new();
        self.in_ensures = true;
        for c in self.lowered.ensures().to_vec() {
            let text = self.clause(&c)?;
            ensures.push_str(&text);
        }
        self.in_ensures = false;
        for bi in 0..self.plan.frame.blocks.len() {
            let b = self.plan.frame.blocks[bi].id;
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
            "  goto ZEXIT;\nZEXIT:;\n{ensures}  *zret = zr;\n  z->left = zl;\n  z->depth--;\n  return 0;\n"
        );
        if self.plan.frame.cust {
            // Abrupt unwind: owners in reverse custody order.
            out.push_str("ZUNWIND:\n  while (zcn > 0) {\n    zcn--;\n    switch (zc[zcn]) {\n");
            for (pi, p) in self.places.iter().enumerate() {
                if !p.owner || !p.agg {
                    continue;
                }
                let ty = &f.body.paths[pi].ty;
                let call = self.u.types.drop_call(
                    self.u.r,
                    ty,
                    &self.zn(),
                    &format!(
                        "&(zname){{0, {}}}",
                        cstr(&root_name(&f.body.paths[pi].key.root))
                    ),
                    &format!("&pl{pi}"),
                );
                let _ = writeln!(
                    out,
                    "    case {pi}u: if (ph{pi}) {{ ph{pi} = 0; {call} }} break;"
                );
            }
            out.push_str(
                "    default: break;\n    }\n  }\n  z->left = zl;\n  z->depth--;\n  return zk;\n",
            );
        }
        out.push_str("}\n");
        Ok(out)
    }
}
