//! Lowering of a checked module to textual LLVM IR: one LLVM function per
//! ZLM function, with the scalar core of the portable C engine.
//!
//! Values are canonical 64-bit words exactly as in the interpreter (signed
//! kinds sign-extended, unsigned and Bool zero-extended); every arithmetic
//! operation is computed at its annotated width with LLVM's overflow
//! intrinsics (`llvm.{s,u}{add,sub,mul}.with.overflow.iW`), faulting under
//! the exact and approximate profiles and wrapping under modular. No
//! instruction carries `nsw`/`nuw`/`exact`, divisors and shift amounts are
//! made safe before use (a division by zero, `MIN / -1` or an oversized
//! shift is never executed), and every local starts initialized, so no
//! poison or undefined value reaches a branch.
//!
//! Steps follow the C engine's accounting (docs/zlm/c-materializer.md):
//! a segment checks its whole cost once and runs without ticks, or runs a
//! careful copy with a tick per operation; prepaid successors of a block
//! are checked by its last segment.

use crate::unit::{Lowered, fk};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use zlm::check::{Checked, Resolved};
use zlm::materialize::c::{Refusal, Scope};
use zlm::model::*;

type At = (usize, usize);

/// Field indices of the run state (`%zrt`, all `i64`).
mod zf {
    pub const LEFT: u32 = 0;
    pub const DEPTH: u32 = 2;
    pub const MAX_DEPTH: u32 = 3;
    pub const FLOOR: u32 = 4;
}

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

/// An `i64` literal.
fn lit(w: u64) -> String {
    (w as i64).to_string()
}

/// How a host renders a word of this type: 0 unsigned, 1 signed, 2 Bool, 3 Unit.
pub(crate) fn render_kind(t: &Type) -> Option<u32> {
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

fn ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// An LLVM string constant body (`c"..."` without the quotes).
pub(crate) fn llvm_bytes(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            o.push(b as char);
        } else {
            let _ = write!(o, "\\{b:02X}");
        }
    }
    o
}

struct Unit<'a, 'm> {
    r: &'a Resolved<'m>,
    /// Function index (in the emitted set) of each lowered function.
    index: BTreeMap<At, usize>,
    /// Interned fault details (`requires 0`, …).
    details: std::cell::RefCell<Vec<String>>,
}

impl<'m> Unit<'_, 'm> {
    fn f(&self, at: At) -> &'m Function {
        &self.r.m.declarations[at.0].functions[at.1]
    }

    fn lname(&self, at: At) -> String {
        let d = &self.r.m.declarations[at.0];
        let sig = self.r.ids.decls[at.0].functions[at.1].sig;
        format!(
            "zf_{}_{}_{}",
            ident(&d.name),
            ident(&d.functions[at.1].name),
            &zlm::hash::to_hex(&sig)[..16]
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

    fn detail(&self, s: String) -> usize {
        let mut d = self.details.borrow_mut();
        if let Some(i) = d.iter().position(|x| *x == s) {
            return i;
        }
        d.push(s);
        d.len() - 1
    }

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

    fn sorted_params(&self, at: At) -> Vec<&'m Param> {
        let mut ps: Vec<&Param> = self.f(at).params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        ps
    }

    fn source(&self, at: At) -> String {
        let d = &self.r.m.declarations[at.0];
        let f = self.f(at);
        let params: Vec<String> = self
            .sorted_params(at)
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
        .replace(['\n', '\r'], " ")
    }
}

/// Lowers the functions `scope` selects to one LLVM module (IR text).
pub(crate) fn lower(checked: &Checked, scope: &Scope) -> Result<Lowered, Refusal> {
    if !checked.imports_resolved() {
        return Err(Refusal {
            function: None,
            block: None,
            op: None,
            message: "the module's imports were not resolved against their providers".into(),
        });
    }
    let r = Resolved::of_checked(checked);
    let mut u = Unit {
        r: &r,
        index: BTreeMap::new(),
        details: Default::default(),
    };
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
    u.index = set.iter().enumerate().map(|(i, &at)| (at, i)).collect();
    let functions: Vec<String> = set.iter().map(|&(d, f)| r.fn_name(d, f)).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "; Module {} (package {}), profile {}: lowered by irkit zlm (LLVM engines).\n; Content identity {}.",
        m.name.replace(['\n', '\r'], " "),
        m.package.replace(['\n', '\r'], " "),
        m.profile.text(),
        zlm::hash::to_hex(&checked.module_content())
    );
    out.push_str("source_filename = \"zlm\"\n\n");
    out.push_str(RUNTIME_IR);
    let mut bodies = String::new();
    for &at in &set {
        bodies.push_str(&Fl::new(&u, at)?.emit()?);
        bodies.push('\n');
    }
    out.push_str(&bodies);
    // Host entries: type or no receiver, word parameters and result.
    let mut entries = Vec::new();
    let mut params = Vec::new();
    let mut renders = Vec::new();
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
        let ps = u.sorted_params(at);
        let i = entries.len();
        let _ = writeln!(
            out,
            "define i32 @zlm_entry_{i}(ptr %z, ptr %r, ptr %a) {{\nentry:"
        );
        let mut args = String::new();
        for k in 0..ps.len() {
            let _ = writeln!(
                out,
                "  %p{k} = getelementptr inbounds i64, ptr %a, i64 {k}\n  %a{k} = load i64, ptr %p{k}"
            );
            let _ = write!(args, ", i64 %a{k}");
        }
        let _ = writeln!(
            out,
            "  %k = call i32 @{}(ptr %z, ptr %r{args})\n  ret i32 %k\n}}",
            u.lname(at)
        );
        entries.push(r.fn_name(at.0, at.1));
        params.push(ps.len() as u64);
        renders.push(u64::from(rk));
    }
    // Tables for the AOT driver (the JIT reads the same facts from `Lowered`).
    let details = u.details.borrow().clone();
    let strings = |out: &mut String, prefix: &str, xs: &[String]| {
        for (i, s) in xs.iter().enumerate() {
            let _ = writeln!(
                out,
                "@{prefix}{i} = private unnamed_addr constant [{} x i8] c\"{}\\00\"",
                s.len() + 1,
                llvm_bytes(s)
            );
        }
        let list: Vec<String> = (0..xs.len()).map(|i| format!("ptr @{prefix}{i}")).collect();
        let _ = writeln!(
            out,
            "@{prefix}table = constant [{} x ptr] [{}]",
            xs.len(),
            list.join(", ")
        );
    };
    out.push('\n');
    strings(&mut out, "zlm_fn_", &functions);
    strings(&mut out, "zlm_detail_", &details);
    strings(&mut out, "zlm_entry_name_", &entries);
    let fns: Vec<String> = (0..entries.len())
        .map(|i| format!("ptr @zlm_entry_{i}"))
        .collect();
    let nums = |xs: &[u64]| -> String {
        xs.iter()
            .map(|x| format!("i64 {x}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "@zlm_entry_fns = constant [{n} x ptr] [{}]\n@zlm_entry_params = constant [{n} x i64] [{}]\n@zlm_entry_render = constant [{n} x i64] [{}]\n@zlm_entry_count = constant i64 {n}\n@zlm_fn_count = constant i64 {}\n@zlm_detail_count = constant i64 {}",
        fns.join(", "),
        nums(&params),
        nums(&renders),
        functions.len(),
        details.len(),
        n = entries.len(),
    );
    out.push_str("\n!0 = !{!\"branch_weights\", i32 1, i32 1048576}\n");
    Ok(Lowered {
        ir: out,
        entries,
        params,
        renders,
        functions,
        details,
    })
}

/// Declarations and the fault helpers every module carries.
const RUNTIME_IR: &str = "\
declare ptr @llvm.stacksave.p0()
declare {i8, i1} @llvm.sadd.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.uadd.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.ssub.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.usub.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.smul.with.overflow.i8(i8, i8)
declare {i8, i1} @llvm.umul.with.overflow.i8(i8, i8)
declare {i16, i1} @llvm.sadd.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.uadd.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.ssub.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.usub.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.smul.with.overflow.i16(i16, i16)
declare {i16, i1} @llvm.umul.with.overflow.i16(i16, i16)
declare {i32, i1} @llvm.sadd.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.uadd.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.ssub.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.usub.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.smul.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.umul.with.overflow.i32(i32, i32)
declare {i64, i1} @llvm.sadd.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.uadd.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.ssub.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.usub.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.smul.with.overflow.i64(i64, i64)
declare {i64, i1} @llvm.umul.with.overflow.i64(i64, i64)

; Records a fault (kind, function index, block, op, detail index; -1 when
; absent) in the run state and returns its kind.
define internal i32 @zlm_raise(ptr %z, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d) cold noinline {
entry:
  %kw = zext i32 %k to i64
  %p5 = getelementptr inbounds i64, ptr %z, i64 5
  store i64 %kw, ptr %p5
  %p6 = getelementptr inbounds i64, ptr %z, i64 6
  store i64 %f, ptr %p6
  %p7 = getelementptr inbounds i64, ptr %z, i64 7
  store i64 %b, ptr %p7
  %p8 = getelementptr inbounds i64, ptr %z, i64 8
  store i64 %o, ptr %p8
  %p9 = getelementptr inbounds i64, ptr %z, i64 9
  store i64 %d, ptr %p9
  ret i32 %k
}

; A fault inside a running frame: saves the step counter, leaves the frame.
define internal i32 @zlm_fault(ptr %z, i64 %zl, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d) cold noinline {
entry:
  store i64 %zl, ptr %z
  %pd = getelementptr inbounds i64, ptr %z, i64 2
  %d0 = load i64, ptr %pd
  %d1 = sub i64 %d0, 1
  store i64 %d1, ptr %pd
  %r = call i32 @zlm_raise(ptr %z, i32 %k, i64 %f, i64 %b, i64 %o, i64 %d)
  ret i32 %r
}

";

/// One function's lowering: a linear text builder with fresh names.
struct Fl<'a, 'u, 'm> {
    u: &'a Unit<'u, 'm>,
    at: At,
    f: &'m Function,
    fnix: usize,
    blocks: Vec<&'m Block>,
    path_ix: HashMap<&'m PathKey, usize>,
    slots: Vec<Option<usize>>,
    covered: BTreeSet<u32>,
    allocas: Vec<String>,
    s: String,
    /// The current LLVM block ended with a terminator.
    closed: bool,
    fresh: u32,
    /// The step counter's current SSA value, while it is known (straight-line code).
    zl_cur: Option<String>,
    /// Flow values defined in the current segment copy, by (block, ordinal).
    local: HashMap<(u32, u32), String>,
    /// Flow values used outside their own segment (kept in an alloca), and call results.
    escaping: BTreeSet<(u32, u32)>,
}

impl<'a, 'u, 'm> Fl<'a, 'u, 'm> {
    fn new(u: &'a Unit<'u, 'm>, at: At) -> Result<Self, Refusal> {
        let f = u.f(at);
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
        let path_ix: HashMap<&PathKey, usize> = f
            .body
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| (&p.key, i))
            .collect();
        let slots = u
            .sorted_params(at)
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
        let fnix = u.index.get(&at).copied().unwrap_or(0);
        Ok(Fl {
            u,
            at,
            f,
            fnix,
            blocks,
            path_ix,
            slots,
            covered: BTreeSet::new(),
            allocas: Vec::new(),
            s: String::new(),
            closed: false,
            fresh: 0,
            zl_cur: None,
            local: HashMap::new(),
            escaping: BTreeSet::new(),
        })
    }

    fn refuse(&self, b: u32, j: u32, msg: impl Into<String>) -> Refusal {
        self.u.refuse(self.at, Some(b), Some(j), msg)
    }

    fn t(&mut self) -> String {
        self.fresh += 1;
        format!("%t{}", self.fresh)
    }

    fn l(&mut self) -> String {
        self.fresh += 1;
        format!("L{}", self.fresh)
    }

    /// An instruction into the current block (opening an unreachable one
    /// after a terminator).
    fn i(&mut self, line: impl AsRef<str>) {
        if self.closed {
            let l = self.l();
            self.label(&l);
        }
        self.s.push_str("  ");
        self.s.push_str(line.as_ref());
        self.s.push('\n');
    }

    /// A terminator.
    fn term(&mut self, line: impl AsRef<str>) {
        self.i(line);
        self.closed = true;
    }

    /// A block that may have several predecessors: the cached step counter is dropped.
    fn label(&mut self, l: &str) {
        self.zl_cur = None;
        self.label_cont(l);
    }

    /// A block whose only predecessor is the current one.
    fn label_cont(&mut self, l: &str) {
        if !self.closed {
            self.s.push_str(&format!("  br label %{l}\n"));
        }
        self.s.push_str(&format!("{l}:\n"));
        self.closed = false;
    }

    /// `%x = <rhs>` with a fresh name.
    fn v(&mut self, rhs: impl AsRef<str>) -> String {
        let t = self.t();
        self.i(format!("{t} = {}", rhs.as_ref()));
        t
    }

    fn alloca(&mut self, name: &str) {
        self.allocas.push(format!(
            "  %{name} = alloca i64\n  store i64 0, ptr %{name}"
        ));
    }

    fn zfield(&mut self, field: u32) -> String {
        self.v(format!("getelementptr inbounds i64, ptr %z, i64 {field}"))
    }

    /// The step counter's value.
    fn zl(&mut self) -> String {
        if let Some(v) = &self.zl_cur {
            return v.clone();
        }
        let v = self.load("%zl");
        self.zl_cur = Some(v.clone());
        v
    }

    fn set_zl(&mut self, v: String) {
        self.i(format!("store i64 {v}, ptr %zl"));
        self.zl_cur = Some(v);
    }

    /// Defines flow value (b, j) in the current copy.
    fn def(&mut self, b: u32, j: u32, v: String) {
        if self.escaping.contains(&(b, j)) {
            self.i(format!("store i64 {v}, ptr %v{b}_{j}"));
        }
        self.local.insert((b, j), v);
    }

    fn load(&mut self, ptr: &str) -> String {
        self.v(format!("load i64, ptr {ptr}"))
    }

    fn fault_call(&mut self, kind: &str, b: Option<u32>, o: Option<u32>, d: Option<usize>) {
        let n = |x: Option<u32>| x.map(i64::from).unwrap_or(-1);
        let zl = self.zl();
        let k = self.v(format!(
            "call i32 @zlm_fault(ptr %z, i64 {zl}, i32 {kind}, i64 {}, i64 {}, i64 {}, i64 {})",
            self.fnix,
            n(b),
            n(o),
            d.map(|x| x as i64).unwrap_or(-1)
        ));
        self.term(format!("ret i32 {k}"));
    }

    /// Branches to a fault (kind `kind`, an `i32` value or literal) when
    /// `cond` holds, continuing in a fresh block.
    fn fault_if(
        &mut self,
        cond: &str,
        kind: &str,
        b: Option<u32>,
        o: Option<u32>,
        d: Option<usize>,
    ) {
        let (lf, lc) = (self.l(), self.l());
        self.term(format!("br i1 {cond}, label %{lf}, label %{lc}, !prof !0"));
        self.label_cont(&lf);
        self.fault_call(kind, b, o, d);
        self.label_cont(&lc);
    }

    fn place(&self, k: &PathKey, b: u32, j: u32) -> Result<String, Refusal> {
        self.path_ix
            .get(k)
            .map(|i| format!("%pl{i}"))
            .ok_or_else(|| self.refuse(b, j, "place without an owned path"))
    }

    fn operand(&mut self, o: &Operand, b: u32, j: u32) -> Result<String, Refusal> {
        match o {
            Operand::Value(OpRef::Flow { block, ordinal }) => {
                match self.local.get(&(*block, *ordinal)) {
                    Some(v) => Ok(v.clone()),
                    None => Ok(self.load(&format!("%v{block}_{ordinal}"))),
                }
            }
            Operand::Const(c) => Ok(lit(canon(c.kind, c.bits))),
            Operand::Place(k) => {
                let p = self.place(k, b, j)?;
                Ok(self.load(&p))
            }
            _ => Err(self.refuse(b, j, "operand form")),
        }
    }

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

    fn modular(&self) -> bool {
        self.u.r.m.profile == NumericProfile::Modular
    }

    /// `x` truncated to the kind's width.
    fn tr(&mut self, k: ScalarKind, x: &str) -> String {
        match width(k) {
            64 => x.to_string(),
            w => self.v(format!("trunc i64 {x} to i{w}")),
        }
    }

    /// `x` (of the kind's width) extended to its canonical word.
    fn ext(&mut self, k: ScalarKind, x: &str) -> String {
        match width(k) {
            64 => x.to_string(),
            w => {
                let e = if k.is_signed() { "sext" } else { "zext" };
                self.v(format!("{e} i{w} {x} to i64"))
            }
        }
    }

    fn canon_v(&mut self, k: ScalarKind, x: &str) -> String {
        let t = self.tr(k, x);
        self.ext(k, &t)
    }

    /// An add/sub/mul at the kind's width: (canonical result, overflow bit).
    fn ovf(&mut self, op: &str, k: ScalarKind, a: &str, b: &str) -> (String, String) {
        let w = width(k);
        let s = if k.is_signed() { "s" } else { "u" };
        let (ta, tb) = (self.tr(k, a), self.tr(k, b));
        let r = self.v(format!(
            "call {{i{w}, i1}} @llvm.{s}{op}.with.overflow.i{w}(i{w} {ta}, i{w} {tb})"
        ));
        let x = self.v(format!("extractvalue {{i{w}, i1}} {r}, 0"));
        let o = self.v(format!("extractvalue {{i{w}, i1}} {r}, 1"));
        (self.ext(k, &x), o)
    }

    /// Arithmetic tag `t` at kind `k`: the canonical result and an `i32`
    /// fault kind (0: none). Nothing here executes an undefined operation.
    fn arith(&mut self, t: u32, k: ScalarKind, a: &str, b: &str) -> Option<(String, String)> {
        let w = width(k);
        let modular = self.modular();
        let faulting = |me: &mut Self, o: &str| -> String {
            if modular {
                "0".to_string()
            } else {
                me.v(format!("select i1 {o}, i32 {}, i32 0", fk::OVERFLOW))
            }
        };
        Some(match t {
            tag::ADD | tag::SUB | tag::MUL | tag::NEG => {
                let (name, a, b) = match t {
                    tag::ADD => ("add", a, b),
                    tag::SUB => ("sub", a, b),
                    tag::MUL => ("mul", a, b),
                    _ => ("sub", "0", a),
                };
                let (x, o) = self.ovf(name, k, a, b);
                (x, faulting(self, &o))
            }
            tag::DIV | tag::REM => {
                let rem = t == tag::REM;
                let zero = self.v(format!("icmp eq i64 {b}, 0"));
                if k.is_signed() {
                    let m1 = self.v(format!("icmp eq i64 {b}, -1"));
                    let bad = self.v(format!("or i1 {zero}, {m1}"));
                    let safe = self.v(format!("select i1 {bad}, i64 1, i64 {b}"));
                    let ins = if rem { "srem" } else { "sdiv" };
                    let q = self.v(format!("{ins} i64 {a}, {safe}"));
                    let q = self.canon_v(k, &q);
                    let (res, fk1) = if rem {
                        (
                            self.v(format!("select i1 {m1}, i64 0, i64 {q}")),
                            "0".into(),
                        )
                    } else {
                        let (n, o) = self.ovf("sub", k, "0", a);
                        let r = self.v(format!("select i1 {m1}, i64 {n}, i64 {q}"));
                        let f = if modular {
                            "0".to_string()
                        } else {
                            let of = self.v(format!("and i1 {m1}, {o}"));
                            self.v(format!("select i1 {of}, i32 {}, i32 0", fk::OVERFLOW))
                        };
                        (r, f)
                    };
                    let f = self.v(format!("select i1 {zero}, i32 {}, i32 {fk1}", fk::DIV_ZERO));
                    (res, f)
                } else {
                    let safe = self.v(format!("select i1 {zero}, i64 1, i64 {b}"));
                    let ins = if rem { "urem" } else { "udiv" };
                    let q = self.v(format!("{ins} i64 {a}, {safe}"));
                    let f = self.v(format!("select i1 {zero}, i32 {}, i32 0", fk::DIV_ZERO));
                    (q, f)
                }
            }
            tag::SHIFT_LEFT | tag::SHIFT_RIGHT => {
                let big = self.v(format!("icmp uge i64 {b}, {w}"));
                let amt = self.v(format!("select i1 {big}, i64 0, i64 {b}"));
                if t == tag::SHIFT_LEFT {
                    let sh = self.v(format!("shl i64 {a}, {amt}"));
                    let r = self.canon_v(k, &sh);
                    if modular {
                        (
                            self.v(format!("select i1 {big}, i64 0, i64 {r}")),
                            "0".into(),
                        )
                    } else {
                        let ov = if k.is_signed() {
                            let e = self.v(format!("sub i64 {}, {amt}", w - 1));
                            let p = self.v(format!("shl i64 1, {e}"));
                            let hi = self.v(format!("sub i64 {p}, 1"));
                            let lo = self.v(format!("xor i64 {hi}, -1"));
                            let c1 = self.v(format!("icmp slt i64 {a}, {lo}"));
                            let c2 = self.v(format!("icmp sgt i64 {a}, {hi}"));
                            self.v(format!("or i1 {c1}, {c2}"))
                        } else {
                            let umax = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                            let lim = self.v(format!("lshr i64 {}, {amt}", lit(umax)));
                            self.v(format!("icmp ugt i64 {a}, {lim}"))
                        };
                        let f1 = self.v(format!("select i1 {ov}, i32 {}, i32 0", fk::OVERFLOW));
                        let f = self.v(format!("select i1 {big}, i32 {}, i32 {f1}", fk::SHIFT));
                        (r, f)
                    }
                } else {
                    let ins = if k.is_signed() { "ashr" } else { "lshr" };
                    let sh = self.v(format!("{ins} i64 {a}, {amt}"));
                    let r = self.canon_v(k, &sh);
                    if modular {
                        let fill = if k.is_signed() {
                            self.v(format!("ashr i64 {a}, 63"))
                        } else {
                            "0".to_string()
                        };
                        (
                            self.v(format!("select i1 {big}, i64 {fill}, i64 {r}")),
                            "0".into(),
                        )
                    } else {
                        let f = self.v(format!("select i1 {big}, i32 {}, i32 0", fk::SHIFT));
                        (r, f)
                    }
                }
            }
            tag::BIT_AND | tag::BIT_OR | tag::BIT_XOR => {
                let ins = match t {
                    tag::BIT_AND => "and",
                    tag::BIT_OR => "or",
                    _ => "xor",
                };
                let x = self.v(format!("{ins} i64 {a}, {b}"));
                (self.canon_v(k, &x), "0".into())
            }
            _ => return None,
        })
    }

    fn cmp(&mut self, t: u32, signed: bool, a: &str, b: &str) -> String {
        let s = if signed { "s" } else { "u" };
        let pred = match t {
            tag::EQ => "eq".to_string(),
            tag::NE => "ne".to_string(),
            tag::LT => format!("{s}lt"),
            tag::LE => format!("{s}le"),
            tag::GT => format!("{s}gt"),
            _ => format!("{s}ge"),
        };
        let c = self.v(format!("icmp {pred} i64 {a}, {b}"));
        self.v(format!("zext i1 {c} to i64"))
    }

    /// `zl -= n`.
    fn pay(&mut self, n: usize) {
        let zl = self.zl();
        let x = self.v(format!("sub i64 {zl}, {n}"));
        self.set_zl(x);
    }

    /// One tick: faults with the step limit when none is left.
    fn tick(&mut self, b: Option<u32>, o: Option<u32>) {
        let zl = self.zl();
        let c = self.v(format!("icmp eq i64 {zl}, 0"));
        self.fault_if(&c, &fk::STEPS.to_string(), b, o, None);
        let x = self.v(format!("sub i64 {zl}, 1"));
        self.set_zl(x);
    }

    fn target(&self, b: u32, careful: bool) -> String {
        if careful && self.covered.contains(&b) {
            format!("BC{b}")
        } else {
            format!("B{b}")
        }
    }

    /// A call of a lowered function; the result goes to `dst` (a pointer).
    fn call(&mut self, callee: At, dst: &str, args: &[String]) {
        let zl = self.zl();
        self.i(format!("store i64 {zl}, ptr %z"));
        let a: String = args.iter().map(|x| format!(", i64 {x}")).collect();
        let k = self.v(format!(
            "call i32 @{}(ptr %z, ptr {dst}{a})",
            self.u.lname(callee)
        ));
        let left = self.load("%z");
        self.set_zl(left);
        let bad = self.v(format!("icmp ne i32 {k}, 0"));
        let (lf, lc) = (self.l(), self.l());
        self.term(format!("br i1 {bad}, label %{lf}, label %{lc}, !prof !0"));
        self.label_cont(&lf);
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let d1 = self.v(format!("sub i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        self.term(format!("ret i32 {k}"));
        self.label_cont(&lc);
    }

    fn op(&mut self, b: u32, j: u32, op: &'m Op, careful: bool) -> Result<(), Refusal> {
        if careful {
            self.tick(Some(b), Some(j));
        }
        let dst = format!("%v{b}_{j}");
        if let Some(t) = &op.result
            && !is_word(t)
        {
            return Err(self.refuse(b, j, format!("result type {}", type_name(self.u.r, t))));
        }
        let opd = |me: &mut Self, k: usize| -> Result<String, Refusal> {
            let o = op
                .operands
                .get(k)
                .ok_or_else(|| me.refuse(b, j, "missing operand"))?;
            me.operand(o, b, j)
        };
        let here = (Some(b), Some(j));
        match op.tag {
            tag::CONST | tag::LOAD_LOCAL => {
                let x = opd(self, 0)?;
                self.def(b, j, x);
            }
            tag::UNIT_VALUE => self.def(b, j, "0".into()),
            tag::STORE_LOCAL => {
                let Some(Operand::Place(k)) = op.operands.first() else {
                    return Err(self.refuse(b, j, "store without a place"));
                };
                let p = self.place(k, b, j)?;
                let x = opd(self, 1)?;
                self.i(format!("store i64 {x}, ptr {p}"));
            }
            tag::NEG
            | tag::ADD
            | tag::SUB
            | tag::MUL
            | tag::DIV
            | tag::REM
            | tag::SHIFT_LEFT
            | tag::SHIFT_RIGHT
            | tag::BIT_AND
            | tag::BIT_OR
            | tag::BIT_XOR => {
                let Some(Type::Scalar(k)) = &op.result else {
                    return Err(self.refuse(b, j, "arithmetic without a scalar result"));
                };
                let a = opd(self, 0)?;
                let c = if op.tag == tag::NEG {
                    "0".to_string()
                } else {
                    opd(self, 1)?
                };
                let (x, f) = self
                    .arith(op.tag, *k, &a, &c)
                    .ok_or_else(|| self.refuse(b, j, "arithmetic tag"))?;
                if f != "0" {
                    let bad = self.v(format!("icmp ne i32 {f}, 0"));
                    self.fault_if(&bad, &f, here.0, here.1, None);
                }
                self.def(b, j, x);
            }
            tag::EQ | tag::NE | tag::LT | tag::LE | tag::GT | tag::GE => {
                let k = self.operand_kind(op);
                let (x, y) = (opd(self, 0)?, opd(self, 1)?);
                let r = self.cmp(op.tag, k.is_signed(), &x, &y);
                self.def(b, j, r);
            }
            tag::NOT_BOOL => {
                let x = opd(self, 0)?;
                let c = self.v(format!("icmp eq i64 {x}, 0"));
                let r = self.v(format!("zext i1 {c} to i64"));
                self.def(b, j, r);
            }
            tag::ASSERT_TRUE => {
                let x = opd(self, 0)?;
                let c = self.v(format!("icmp eq i64 {x}, 0"));
                self.fault_if(&c, &fk::ASSERT.to_string(), here.0, here.1, None);
            }
            tag::ASSERT_EQ => {
                let (x, y) = (opd(self, 0)?, opd(self, 1)?);
                let c = self.v(format!("icmp ne i64 {x}, {y}"));
                self.fault_if(&c, &fk::ASSERT.to_string(), here.0, here.1, None);
            }
            tag::JUMP => {
                let Some(Operand::Block(t)) = op.operands.first() else {
                    return Err(self.refuse(b, j, "jump target"));
                };
                let l = self.target(*t, careful);
                self.term(format!("br label %{l}"));
            }
            tag::JUMP_IF_FALSE => {
                let Some(Operand::Block(t)) = op.operands.get(1) else {
                    return Err(self.refuse(b, j, "branch target"));
                };
                let c = opd(self, 0)?;
                let yes = self.target(b + 1, careful);
                let no = self.target(*t, careful);
                let nz = self.v(format!("icmp ne i64 {c}, 0"));
                self.term(format!("br i1 {nz}, label %{yes}, label %{no}"));
            }
            tag::RETURN => {
                let x = opd(self, 0)?;
                self.i(format!("store i64 {x}, ptr %zr"));
                self.term("br label %ZEXIT");
            }
            tag::CALL => {
                let Aux::Func(sig) = &op.aux0 else {
                    return Err(self.refuse(b, j, "call without a callee"));
                };
                let Some(&callee) = self.u.r.funcs.get(sig) else {
                    return Err(self.refuse(b, j, "calls into other modules"));
                };
                if !self.u.index.contains_key(&callee) {
                    return Err(self.refuse(b, j, "callee outside the lowered set"));
                }
                let mut args = Vec::new();
                for k in 0..op.operands.len() {
                    args.push(opd(self, k)?);
                }
                let pd = self.zfield(zf::DEPTH);
                let d = self.load(&pd);
                let pm = self.zfield(zf::MAX_DEPTH);
                let md = self.load(&pm);
                let c = self.v(format!("icmp uge i64 {d}, {md}"));
                self.fault_if(&c, &fk::DEPTH.to_string(), here.0, here.1, None);
                self.call(callee, &dst, &args);
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
        Ok(())
    }

    fn slot_value(&mut self, slot: usize) -> String {
        match self.slots.get(slot).copied().flatten() {
            Some(pi) => self.load(&format!("%pl{pi}")),
            None => "0".into(),
        }
    }

    /// Contract operation `i` of `e`, evaluated lazily from the root as the
    /// interpreter does; returns a pointer to its value.
    fn cexpr(&mut self, e: &'m Expr, i: usize, result: bool) -> Result<String, Refusal> {
        let op = e
            .ops
            .get(i)
            .ok_or_else(|| self.u.refuse(self.at, None, None, "contract operand order"))?;
        self.fresh += 1;
        let v = format!("c{}", self.fresh);
        self.alloca(&v);
        let v = format!("%{v}");
        self.tick(None, Some(i as u32));
        let refuse = |me: &Self, m: &str| me.u.refuse(me.at, None, None, m.to_string());
        if matches!(op.tag, 23 | 24) {
            let a = self.coperand(e, &op.operands[0], result)?;
            let short = if op.tag == 23 {
                self.v(format!("icmp eq i64 {a}, 0"))
            } else {
                self.v(format!("icmp ne i64 {a}, 0"))
            };
            let (ls, li, lj) = (self.l(), self.l(), self.l());
            self.term(format!("br i1 {short}, label %{ls}, label %{li}"));
            self.label(&ls);
            let nz = self.v(format!("icmp ne i64 {a}, 0"));
            let w = self.v(format!("zext i1 {nz} to i64"));
            self.i(format!("store i64 {w}, ptr {v}"));
            self.term(format!("br label %{lj}"));
            self.label(&li);
            let c = self.coperand(e, &op.operands[1], result)?;
            self.i(format!("store i64 {c}, ptr {v}"));
            self.label(&lj);
            return Ok(v);
        }
        let mut vals = Vec::new();
        for o in &op.operands {
            vals.push(self.coperand(e, o, result)?);
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
        match op.tag {
            0 => self.i(format!("store i64 {}, ptr {v}", vals[0])),
            4 => {
                let c = self.v(format!("icmp eq i64 {}, 0", vals[0]));
                let w = self.v(format!("zext i1 {c} to i64"));
                self.i(format!("store i64 {w}, ptr {v}"));
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
                let (x, f) = self
                    .arith(t, kind, &vals[0], &c)
                    .ok_or_else(|| refuse(self, "contract arithmetic"))?;
                if f != "0" {
                    let bad = self.v(format!("icmp ne i32 {f}, 0"));
                    self.fault_if(&bad, &f, None, None, None);
                }
                self.i(format!("store i64 {x}, ptr {v}"));
            }
            17..=22 => {
                let t =
                    [tag::EQ, tag::NE, tag::LT, tag::LE, tag::GT, tag::GE][op.tag as usize - 17];
                let k = match (&op.operands[0], &op.operands[1]) {
                    (ContractOperand::Const(c), _) | (_, ContractOperand::Const(c)) => c.kind,
                    (o, _) => {
                        let recv = zlm::catalog::receiver_type(
                            &self.u.r.self_type(self.at.0),
                            self.f.receiver,
                        )
                        .filter(|_| {
                            !matches!(self.f.receiver, ReceiverKind::Type | ReceiverKind::None)
                        });
                        match zlm::ids::contract_operand_type(self.f, recv.as_ref(), e, o) {
                            Ok(Type::Scalar(k)) => k,
                            _ => ScalarKind::UInt64,
                        }
                    }
                };
                let r = self.cmp(t, k.is_signed(), &vals[0], &vals[1]);
                self.i(format!("store i64 {r}, ptr {v}"));
            }
            3 if op.aux0 == 0 => {
                let Some(&callee) = op.reference.and_then(|sig| self.u.r.funcs.get(&sig)) else {
                    return Err(refuse(self, "contract calls into other modules"));
                };
                if self.u.f(callee).receiver == ReceiverKind::Shared {
                    return Err(refuse(self, "contract calls with a shared receiver"));
                }
                if !self.u.index.contains_key(&callee) {
                    return Err(refuse(self, "callee outside the lowered set"));
                }
                self.call(callee, &v, &vals);
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
    ) -> Result<String, Refusal> {
        Ok(match o {
            ContractOperand::Const(c) => lit(canon(c.kind, c.bits)),
            ContractOperand::Receiver => self.slot_value(0),
            ContractOperand::Param(k) => self.slot_value(*k as usize),
            ContractOperand::Result if result => self.load("%zr"),
            ContractOperand::Result => "0".into(),
            ContractOperand::Value(i) => {
                let p = self.cexpr(e, *i as usize, result)?;
                self.load(&p)
            }
        })
    }

    fn clause(&mut self, e: &'m Expr, result: bool, what: String) -> Result<(), Refusal> {
        let root = e.ops.len().saturating_sub(1);
        let p = self.cexpr(e, root, result)?;
        let x = self.load(&p);
        let c = self.v(format!("icmp eq i64 {x}, 0"));
        let d = self.u.detail(what);
        self.fault_if(&c, &fk::CONTRACT.to_string(), None, None, Some(d));
        Ok(())
    }

    fn emit(mut self) -> Result<String, Refusal> {
        let f = self.f;
        // Flow values used outside their own segment, and call results, live
        // in allocas; the others stay SSA values of their segment copy.
        let mut seg: HashMap<(u32, u32), (u32, usize)> = HashMap::new();
        for block in &self.blocks {
            let mut k = 0;
            for (j, op) in block.ops.iter().enumerate() {
                seg.insert((block.id, j as u32), (block.id, k));
                if op.tag == tag::CALL {
                    self.escaping.insert((block.id, j as u32));
                    k += 1;
                }
            }
        }
        for block in &self.blocks {
            for (j, op) in block.ops.iter().enumerate() {
                let here = seg.get(&(block.id, j as u32));
                for o in &op.operands {
                    if let Operand::Value(OpRef::Flow { block: ob, ordinal }) = o
                        && seg.get(&(*ob, *ordinal)) != here
                    {
                        self.escaping.insert((*ob, *ordinal));
                    }
                }
            }
        }
        // Step prepayment, exactly as the C engine decides it.
        let mut preds: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
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
        let mut extra: BTreeMap<u32, usize> = BTreeMap::new();
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
        // Every block a branch names must exist.
        let ids: BTreeSet<u32> = self.blocks.iter().map(|b| b.id).collect();
        for (&t, ps) in &preds {
            if !ids.contains(&t) {
                let src = ps.iter().next().copied().unwrap_or(0);
                return Err(self
                    .u
                    .refuse(self.at, Some(src), None, "branch to a missing block"));
            }
        }
        // Prologue: depth and host-stack check, then parameters.
        self.s.push_str("entry:\n");
        self.i("br label %START");
        self.closed = true;
        self.label("START");
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let pm = self.zfield(zf::MAX_DEPTH);
        let md = self.load(&pm);
        let deep = self.v(format!("icmp uge i64 {d}, {md}"));
        let sp = self.v("call ptr @llvm.stacksave.p0()");
        let spi = self.v(format!("ptrtoint ptr {sp} to i64"));
        let pf = self.zfield(zf::FLOOR);
        let floor = self.load(&pf);
        let low = self.v(format!("icmp ult i64 {spi}, {floor}"));
        let bad = self.v(format!("or i1 {deep}, {low}"));
        let (lf, lc) = (self.l(), self.l());
        self.term(format!("br i1 {bad}, label %{lf}, label %{lc}, !prof !0"));
        self.label(&lf);
        let k = self.v(format!(
            "call i32 @zlm_raise(ptr %z, i32 {}, i64 {}, i64 -1, i64 -1, i64 -1)",
            fk::DEPTH,
            self.fnix
        ));
        self.term(format!("ret i32 {k}"));
        self.label(&lc);
        let d1 = self.v(format!("add i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        let pl = self.zfield(zf::LEFT);
        let left = self.load(&pl);
        self.set_zl(left);
        let ps = self.u.sorted_params(self.at);
        for (k, p) in ps.iter().enumerate() {
            if let Some(pi) = self.slots[k] {
                self.i(format!("store i64 %a{}, ptr %pl{pi}", p.ordinal));
            }
        }
        for (i, e) in f.requires.iter().enumerate() {
            self.clause(e, false, format!("requires {i}"))?;
        }
        // Body.
        for bi in 0..self.blocks.len() {
            let block = self.blocks[bi];
            let b = block.id;
            self.label(&format!("B{b}"));
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
            let next = self
                .blocks
                .get(bi + 1)
                .map(|n| format!("B{}", n.id))
                .unwrap_or_else(|| "ZEXIT".into());
            if self.covered.contains(&b) {
                self.pay(block.ops.len());
                self.local.clear();
                for &(j, op) in segs.iter().flatten() {
                    self.op(b, j, op, false)?;
                }
                if !self.closed {
                    self.term(format!("br label %{next}"));
                }
                self.label(&format!("BC{b}"));
                self.local.clear();
                for &(j, op) in segs.iter().flatten() {
                    self.op(b, j, op, true)?;
                }
            } else {
                let last = segs.len().saturating_sub(1);
                for (si, seg) in segs.iter().enumerate() {
                    let need = seg.len()
                        + if si == last {
                            extra.get(&b).copied().unwrap_or(0)
                        } else {
                            0
                        };
                    let (lcare, lfast, ljoin) = (self.l(), self.l(), self.l());
                    let zl = self.zl();
                    let c = self.v(format!("icmp ult i64 {zl}, {need}"));
                    self.term(format!(
                        "br i1 {c}, label %{lcare}, label %{lfast}, !prof !0"
                    ));
                    self.label(&lcare);
                    self.local.clear();
                    for &(j, op) in seg {
                        self.op(b, j, op, true)?;
                    }
                    if !self.closed {
                        self.term(format!("br label %{ljoin}"));
                    }
                    self.label(&lfast);
                    self.pay(seg.len());
                    self.local.clear();
                    for &(j, op) in seg {
                        self.op(b, j, op, false)?;
                    }
                    if !self.closed {
                        self.term(format!("br label %{ljoin}"));
                    }
                    self.label(&ljoin);
                }
            }
            // A block without a terminator falls into the next one.
            if !self.closed {
                self.term(format!("br label %{next}"));
            }
        }
        self.label("ZEXIT");
        for (i, e) in f.ensures.iter().enumerate() {
            self.clause(e, true, format!("ensures {i}"))?;
        }
        let r = self.load("%zr");
        self.i(format!("store i64 {r}, ptr %zret"));
        let zl = self.zl();
        self.i(format!("store i64 {zl}, ptr %z"));
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let d1 = self.v(format!("sub i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        self.term("ret i32 0");
        // Allocas: the counter, the result, one per path and per flow value.
        self.alloca("zl");
        self.alloca("zr");
        for i in 0..f.body.paths.len() {
            self.alloca(&format!("pl{i}"));
        }
        for b in &self.blocks {
            for (j, op) in b.ops.iter().enumerate() {
                if (op.result.is_some() || op.tag == tag::CALL)
                    && self.escaping.contains(&(b.id, j as u32))
                {
                    self.allocas.push(format!(
                        "  %v{}_{j} = alloca i64\n  store i64 0, ptr %v{}_{j}",
                        b.id, b.id
                    ));
                }
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "; {}", self.u.source(self.at));
        let params: String = ps
            .iter()
            .map(|p| format!(", i64 %a{}", p.ordinal))
            .collect();
        let _ = writeln!(
            out,
            "define internal i32 @{}(ptr %z, ptr %zret{params}) {{",
            self.u.lname(self.at)
        );
        // The allocas go first in the entry block.
        let body = std::mem::take(&mut self.s);
        let (head, rest) = body.split_once('\n').unwrap_or((&body, ""));
        out.push_str(head);
        out.push('\n');
        for a in &self.allocas {
            out.push_str(a);
            out.push('\n');
        }
        out.push_str(rest);
        out.push_str("}\n");
        Ok(out)
    }
}
