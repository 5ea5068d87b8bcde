//! One ZLM function lowered to one LLVM function, with the portable C
//! engine's semantics (docs/zlm/c-materializer.md, "What is lowered").
//!
//! Words are canonical 64-bit values exactly as in the interpreter (signed
//! kinds sign-extended, unsigned and Bool zero-extended); every arithmetic
//! operation is computed at its annotated width with LLVM's overflow
//! intrinsics (`llvm.{s,u}{add,sub,mul}.with.overflow.iW`), faulting under
//! the exact and approximate profiles and wrapping under modular. No
//! instruction carries `nsw`/`nuw`/`exact`, divisors and shift amounts are
//! made safe before use (a division by zero, `MIN / -1` or an oversized
//! shift is never executed), and every local and storage slot starts
//! initialized (zero), so no poison or undefined value reaches a branch.
//!
//! Values that are not one word live in slot storage (`types`); owned
//! paths, custody, drops, recipes, Result carriers and try, loans and the
//! bytes facade follow the C lowering (`zlm::materialize::c`), with the
//! same presence conditions, custody order and drop-log names.
//!
//! Steps follow the C engine's accounting: a segment checks its whole cost
//! once and runs without ticks, or runs a careful copy with a tick per
//! operation; prepaid successors of a block are checked by its last
//! segment (`walk::prepayment`).

use crate::types::at;
use crate::unit::fk;
use crate::unitctx::{Unit, arg_ty};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use zlm::interp::{root_name, width};
use zlm::materialize::c::Refusal;
use zlm::materialize::c::plan::{self, FunctionPlan, PlaceRole};
use zlm::materialize::c::types::{Shape, is_word};
use zlm::materialize::c::walk::{self, At};
use zlm::materialize::lowered::LoweredFunction;
use zlm::model::*;

mod arith;
mod bytes;
mod contracts;
mod owned;
mod print;

/// Field indices of the run state (`%zrt`, all 64-bit).
pub(crate) mod zf {
    pub const LEFT: u32 = 0;
    pub const DEPTH: u32 = 2;
    pub const MAX_DEPTH: u32 = 3;
    pub const FLOOR: u32 = 4;
    pub const BYTES: u32 = 11;
    pub const BYTE_LIMIT: u32 = 12;
}

/// An `i64` literal.
fn lit(w: u64) -> String {
    (w as i64).to_string()
}

/// A presence slot: a root's own flag (`%ph`) or a slot below the root's
/// target storage.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Flag {
    Root(usize),
    Slot(u32),
    /// The root's target slot holds the tag `.1` (with `.0` its offset).
    Tag(u32, u64),
}

/// Where an owned path's value lives: its root's storage and the offset
/// below it, with the interpreter's presence conditions.
struct SlotPlace {
    root: usize,
    /// Slot offset of the value in the root's target storage.
    off: u32,
    /// The conditions under which the interpreter's `deref` of the path
    /// finds a value.
    present: Vec<Flag>,
    /// The presence flag of the path's own slot (`None`: a word root).
    flag: Option<Flag>,
    /// Storage, loan and custody role, and drop-log name.
    role: PlaceRole,
    ty: Type,
}

impl std::ops::Deref for SlotPlace {
    type Target = PlaceRole;
    fn deref(&self) -> &PlaceRole {
        &self.role
    }
}

/// One function printed as LLVM IR: the shared plan's decisions
/// (`plan::FunctionPlan`) spelled over slot storage, a linear text
/// builder with fresh names.
pub(crate) struct IrFunction<'a, 'u, 'm> {
    u: &'a Unit<'u, 'm>,
    at: At,
    f: &'m Function,
    fnix: usize,
    /// Paths, temporaries, slots and edges, decided once for both printers.
    plan: FunctionPlan<'u, 'm>,
    /// The migrated operations, lowered once for both printers.
    lowered: LoweredFunction,
    places: Vec<SlotPlace>,
    covered: BTreeSet<u32>,
    allocas: Vec<String>,
    s: String,
    /// The current LLVM block ended with a terminator.
    closed: bool,
    fresh: u32,
    /// The step counter's current SSA value, while it is known.
    zl_cur: Option<String>,
    /// Word flow values defined in the current segment copy.
    local: HashMap<(u32, u32), String>,
    /// Word flow values used outside their own segment (kept in an alloca).
    escaping: BTreeSet<(u32, u32)>,
    /// While emitting ensures: a fault first drops the protected result.
    in_ensures: bool,
    /// In an unrolled loop copy: the fast branch to this block goes to
    /// that label instead.
    redirect: Option<(u32, String)>,
}

/// Iterations per budget check in a two-block loop's unrolled copy.
const UNROLL: usize = 4;

/// A function's step plan: each block's prepaid extra and the two-block
/// loops whose header runs an unrolled copy (`walk::Prepaid`).
struct Steps {
    extra: BTreeMap<u32, usize>,
    unroll: BTreeMap<u32, u32>,
}

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    pub(crate) fn new(u: &'a Unit<'u, 'm>, at: At) -> Result<Self, Refusal> {
        let f = u.f(at);
        let lay = &u.layouts;
        let frame = walk::frame(u.r, at, u.receiver_binding(at).is_some())?;
        // Each path as slot offsets below its root's storage and the
        // presence flags on the way.
        let mut paths = Vec::new();
        for (p, plan) in f.body.paths.iter().zip(&frame.paths) {
            let (ri, borrowed) = (plan.root, plan.borrowed);
            let mut present = if !borrowed && (plan.agg || !plan.steps.is_empty()) {
                vec![Flag::Root(ri)]
            } else {
                vec![]
            };
            let mut flag =
                (!borrowed && plan.agg && plan.steps.is_empty()).then_some(Flag::Root(ri));
            let mut off = 0u32;
            for step in &plan.steps {
                let fa = match (step.variant, lay.types.shape(&step.base)) {
                    (Some(vi), Some(Shape::Variants { .. })) => {
                        present.push(Flag::Slot(off + at::BUILT));
                        lay.variant_field(&step.base, vi, step.field.ordinal)
                    }
                    (None, Some(Shape::Record { .. })) => lay.field(&step.base, step.field.ordinal),
                    _ => None,
                };
                let Some(fa) = fa else {
                    return Err(u.refuse(at, None, None, "owned path below a non-record"));
                };
                present.push(Flag::Slot(off + fa.flag));
                flag = Some(Flag::Slot(off + fa.flag));
                off += fa.value;
            }
            paths.push(SlotPlace {
                root: ri,
                off,
                present,
                flag,
                role: PlaceRole::of(plan),
                ty: p.ty.clone(),
            });
        }
        let fnix = u.index.get(&at).copied().unwrap_or(0);
        let plan = FunctionPlan::new(u.r, at, frame);
        let index = &u.index;
        let lowered = LoweredFunction::of(&plan, &lay.types, |at| index.contains_key(&at));
        Ok(IrFunction {
            u,
            at,
            f,
            fnix,
            plan,
            lowered,
            places: paths,
            covered: BTreeSet::new(),
            allocas: Vec::new(),
            s: String::new(),
            closed: false,
            fresh: 0,
            zl_cur: None,
            local: HashMap::new(),
            escaping: BTreeSet::new(),
            in_ensures: false,
            redirect: None,
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

    /// Entry-block storage of `slots` 64-bit slots, zeroed.
    fn storage(&mut self, name: &str, slots: u32) {
        self.allocas.push(format!(
            "  %{name} = alloca [{slots} x i64], align 8\n  call void @llvm.memset.p0.i64(ptr %{name}, i8 0, i64 {}, i1 false)",
            u64::from(slots) * 8
        ));
    }

    fn alloca(&mut self, name: &str) {
        self.storage(name, 1);
    }

    /// Fresh zeroed entry-block storage; returns its pointer.
    fn scratch(&mut self, slots: u32) -> String {
        self.fresh += 1;
        let n = format!("s{}", self.fresh);
        self.storage(&n, slots);
        format!("%{n}")
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

    /// Defines word flow value (b, j) in the current copy.
    fn def(&mut self, b: u32, j: u32, v: String) {
        if self.escaping.contains(&(b, j)) {
            self.i(format!("store i64 {v}, ptr %v{b}_{j}"));
        }
        self.local.insert((b, j), v);
    }

    fn load(&mut self, ptr: &str) -> String {
        self.v(format!("load i64, ptr {ptr}"))
    }

    /// `ptr + slots` (64-bit slots).
    fn gep(&mut self, ptr: &str, slots: u32) -> String {
        if slots == 0 {
            return ptr.to_string();
        }
        self.v(format!(
            "getelementptr inbounds i64, ptr {ptr}, i64 {slots}"
        ))
    }

    /// Copies `slots` slots from `src` to `dst`.
    fn copy(&mut self, dst: &str, src: &str, slots: u32) {
        if slots == 1 {
            let x = self.v(format!("load i64, ptr {src}"));
            self.i(format!("store i64 {x}, ptr {dst}"));
        } else {
            self.i(format!(
                "call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {}, i1 false)",
                u64::from(slots) * 8
            ));
        }
    }

    fn zero(&mut self, dst: &str, slots: u32) {
        self.i(format!(
            "call void @llvm.memset.p0.i64(ptr {dst}, i8 0, i64 {}, i1 false)",
            u64::from(slots) * 8
        ));
    }

    fn size(&self, t: &Type) -> u32 {
        self.u.layouts.size(t)
    }

    /// Address of path `pi`'s root target storage (through the loan of a
    /// borrowed root).
    fn root_target(&mut self, pi: usize) -> String {
        let ri = self.places[pi].root;
        if self.places[pi].borrowed {
            self.v(format!("load ptr, ptr %pl{ri}"))
        } else {
            format!("%pl{ri}")
        }
    }

    /// Address of the value path `pi` denotes.
    fn target(&mut self, pi: usize) -> String {
        let base = self.root_target(pi);
        let off = self.places[pi].off;
        self.gep(&base, off)
    }

    /// The storage of path `pi`'s binding value: a borrowed root's loan
    /// slot, otherwise the value itself.
    fn binding(&mut self, pi: usize) -> String {
        let p = &self.places[pi];
        if p.borrowed && self.f.body.paths[pi].key.fields.is_empty() {
            format!("%pl{}", p.root)
        } else {
            self.target(pi)
        }
    }

    /// Address of a presence slot of path `pi`.
    fn flag_addr(&mut self, pi: usize, fl: &Flag) -> String {
        match fl {
            Flag::Root(ri) => format!("%ph{ri}"),
            Flag::Slot(off) | Flag::Tag(off, _) => {
                let base = self.root_target(pi);
                self.gep(&base, *off)
            }
        }
    }

    /// `i1` of the conjunction of flags (every slot is initialized, so all
    /// are read without short-circuit).
    fn test(&mut self, pi: usize, flags: &[Flag]) -> String {
        let mut ok = "true".to_string();
        for fl in flags {
            let a = self.flag_addr(pi, fl);
            let x = self.load(&a);
            let c = match fl {
                Flag::Tag(_, t) => self.v(format!("icmp eq i64 {x}, {t}")),
                _ => self.v(format!("icmp ne i64 {x}, 0")),
            };
            ok = if ok == "true" {
                c
            } else {
                self.v(format!("and i1 {ok}, {c}"))
            };
        }
        ok
    }

    fn present(&mut self, pi: usize) -> String {
        let flags = self.places[pi].present.clone();
        self.test(pi, &flags)
    }

    fn set_flag(&mut self, pi: usize, v: u32) {
        if let Some(fl) = self.places[pi].flag.clone() {
            let a = self.flag_addr(pi, &fl);
            self.i(format!("store i64 {v}, ptr {a}"));
        }
    }

    /// Raises a fault (kind `kind`, an `i32` value or literal) and leaves
    /// the frame: through the custody unwind when the frame keeps one.
    fn fault_call(&mut self, kind: &str, b: Option<u32>, o: Option<u32>, d: Option<usize>) {
        let n = |x: Option<u32>| x.map(i64::from).unwrap_or(-1);
        let d = d.map(|x| x as i64).unwrap_or(-1);
        self.ensures_drop();
        if self.plan.frame.cust {
            let k = self.v(format!(
                "call i32 @zlm_raise(ptr %z, i32 {kind}, i64 {}, i64 {}, i64 {}, i64 {d})",
                self.fnix,
                n(b),
                n(o),
            ));
            self.i(format!("store i32 {k}, ptr %zk"));
            self.term("br label %ZUNWIND");
            return;
        }
        // The counter as the fault site sees it. A value loaded here is not
        // cached: this block is a dead end, so a load in it dominates
        // nothing after the branch that leads here (caching it made the
        // continuation use it: LLVM's "does not dominate all uses").
        let zl = match &self.zl_cur {
            Some(v) => v.clone(),
            None => self.load("%zl"),
        };
        let k = self.v(format!(
            "call i32 @zlm_fault(ptr %z, i64 {zl}, i32 {kind}, i64 {}, i64 {}, i64 {}, i64 {d})",
            self.fnix,
            n(b),
            n(o),
        ));
        self.term(format!("ret i32 {k}"));
    }

    /// Branches to a fault when `cond` holds, continuing in a fresh block.
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
        // The fault block leaves the function: whatever it defines stays
        // out of the continuation's view.
        let before = self.zl_cur.clone();
        self.label_cont(&lf);
        self.fault_call(kind, b, o, d);
        self.zl_cur = before;
        self.label_cont(&lc);
    }

    /// Faults unless `cond` (an `i1`) holds.
    fn fault_unless(&mut self, cond: &str, kind: u32, b: u32, j: u32) {
        if cond == "true" {
            return;
        }
        let bad = self.v(format!("xor i1 {cond}, true"));
        self.fault_if(&bad, &kind.to_string(), Some(b), Some(j), None);
    }

    /// Leaves the frame with the callee's fault `k` already raised.
    fn propagate(&mut self, k: &str) {
        self.ensures_drop();
        if self.plan.frame.cust {
            self.i(format!("store i32 {k}, ptr %zk"));
            self.term("br label %ZUNWIND");
            return;
        }
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let d1 = self.v(format!("sub i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        self.term(format!("ret i32 {k}"));
    }

    /// Stores argument `(ty, v)` of type `t` into storage `dst`.
    fn put(&mut self, dst: &str, t: &Type, a: &(String, String)) {
        if a.0 == "i64" {
            self.i(format!("store i64 {}, ptr {dst}", a.1));
        } else {
            let n = self.size(t);
            self.copy(dst, &a.1, n);
        }
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

    fn block_label(&self, b: u32, careful: bool) -> String {
        if let Some((t, l)) = &self.redirect
            && !careful
            && *t == b
        {
            l.clone()
        } else if careful && self.covered.contains(&b) {
            format!("BC{b}")
        } else {
            format!("B{b}")
        }
    }

    /// A call of a lowered function; the result goes to storage `dst`. On
    /// the callee's fault the frame is left (unwinding its custody).
    fn call(&mut self, callee: At, dst: &str, args: &[(String, String)]) {
        let zl = self.zl();
        self.i(format!("store i64 {zl}, ptr %z"));
        let a: String = args.iter().map(|(t, x)| format!(", {t} {x}")).collect();
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
        self.propagate(&k);
        self.label_cont(&lc);
    }

    /// One flow operation (`careful`: with its own step tick).
    fn op(&mut self, b: u32, j: u32, careful: bool) -> Result<(), Refusal> {
        if careful {
            self.tick(Some(b), Some(j));
        }
        let Some(l) = self.lowered.at(b, j) else {
            return Err(self.refuse(b, j, "operation outside the lowered form"));
        };
        let l = l?;
        self.print(&l.inst, b, j, careful)?;
        // A result held by an owner temporary enters custody.
        if let Some(t) = l.custody {
            self.i(format!("store i64 1, ptr %ph{t}"));
            self.push(t, b, j);
        }
        Ok(())
    }

    /// Which word values escape their segment, the step prepayment, and
    /// the branch targets' existence; returns each block's prepaid extra
    /// and the two-block loops to unroll.
    fn prepare(&mut self) -> Result<Steps, Refusal> {
        let f = self.f;
        // Word flow values used outside their own segment, and call
        // results, live in allocas; the others stay SSA values of their
        // segment copy.
        self.escaping = self.lowered.escaping().clone();
        // Step prepayment, exactly as the C engine decides it.
        let pre = walk::prepayment(f, &self.plan.frame.blocks);
        self.covered = pre.covered;
        let (preds, extra, unroll) = (pre.preds, pre.extra, pre.unroll);
        // Every block a branch names must exist.
        let ids: BTreeSet<u32> = self.plan.frame.blocks.iter().map(|b| b.id).collect();
        for (&t, ps) in &preds {
            if !ids.contains(&t) {
                let src = ps.iter().next().copied().unwrap_or(0);
                return Err(self
                    .u
                    .refuse(self.at, Some(src), None, "branch to a missing block"));
            }
        }
        Ok(Steps { extra, unroll })
    }

    /// The fast copy of a two-block loop's header `h` entered with the
    /// budget of [`UNROLL`] iterations: header, then body and header
    /// `UNROLL − 1` times, with the same charges and no check in between;
    /// the last header branches to the ordinary prepaid body. Like the C engine's
    /// unrolled copy (there two iterations), a loop checks its budget once
    /// per `UNROLL` iterations; with less budget the ordinary path runs,
    /// so faults and step counts are unchanged.
    fn unrolled(&mut self, h: &'m Block, body: &'m Block) -> Result<(), Refusal> {
        let (hb, sb) = (h.id, body.id);
        let copy = |me: &mut Self, blk: &'m Block, to: Option<(u32, String)>| {
            me.pay(blk.ops.len());
            me.local.clear();
            me.redirect = to;
            let r = blk
                .ops
                .iter()
                .enumerate()
                .try_for_each(|(j, _)| me.op(blk.id, j as u32, false));
            me.redirect = None;
            r
        };
        for k in 1..UNROLL {
            let (lbody, lhead) = (format!("BU{sb}_{k}"), format!("BU{hb}_{k}"));
            copy(self, h, Some((sb, lbody.clone())))?;
            self.label(&lbody);
            copy(self, body, Some((hb, lhead.clone())))?;
            self.label(&lhead);
        }
        copy(self, h, None)
    }

    /// The body's blocks, each in segment copies.
    fn body(&mut self, steps: &Steps) -> Result<(), Refusal> {
        let extra = &steps.extra;
        for bi in 0..self.plan.frame.blocks.len() {
            let block = self.plan.frame.blocks[bi];
            let b = block.id;
            self.label(&format!("B{b}"));
            let segs = plan::segments(block);
            let next = self
                .plan
                .frame
                .blocks
                .get(bi + 1)
                .map(|n| format!("B{}", n.id))
                .unwrap_or_else(|| "ZEXIT".into());
            if self.covered.contains(&b) {
                self.pay(block.ops.len());
                self.local.clear();
                for &(j, _) in segs.iter().flatten() {
                    self.op(b, j, false)?;
                }
                if !self.closed {
                    self.term(format!("br label %{next}"));
                }
                self.label(&format!("BC{b}"));
                self.local.clear();
                for &(j, _) in segs.iter().flatten() {
                    self.op(b, j, true)?;
                }
            } else {
                for (si, seg) in segs.iter().enumerate() {
                    let need = plan::segment_need(seg, si, segs.len(), b, extra);
                    if let Some(&sid) = steps.unroll.get(&b).filter(|_| segs.len() == 1)
                        && let Some(sb) =
                            self.plan.frame.blocks.iter().find(|x| x.id == sid).copied()
                    {
                        let twice = need + (UNROLL - 1) * (seg.len() + sb.ops.len());
                        let (lunroll, lplain) = (self.l(), self.l());
                        let zl = self.zl();
                        let c = self.v(format!("icmp ult i64 {zl}, {twice}"));
                        self.term(format!(
                            "br i1 {c}, label %{lplain}, label %{lunroll}, !prof !0"
                        ));
                        self.label_cont(&lunroll);
                        self.unrolled(block, sb)?;
                        self.label(&lplain);
                    }
                    let (lcare, lfast, ljoin) = (self.l(), self.l(), self.l());
                    let zl = self.zl();
                    let c = self.v(format!("icmp ult i64 {zl}, {need}"));
                    self.term(format!(
                        "br i1 {c}, label %{lcare}, label %{lfast}, !prof !0"
                    ));
                    self.label(&lcare);
                    self.local.clear();
                    for &(j, _) in seg {
                        self.op(b, j, true)?;
                    }
                    if !self.closed {
                        self.term(format!("br label %{ljoin}"));
                    }
                    self.label(&lfast);
                    self.pay(seg.len());
                    self.local.clear();
                    for &(j, _) in seg {
                        self.op(b, j, false)?;
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
        Ok(())
    }

    /// Lowers the body alone and drops the text: a refusal in the body
    /// comes before one in the contracts, in the C lowering's order.
    pub(crate) fn check_body(mut self) -> Result<(), Refusal> {
        let steps = self.prepare()?;
        self.body(&steps)
    }

    /// The function's IR.
    pub(crate) fn emit(mut self) -> Result<String, Refusal> {
        let f = self.f;
        let steps = self.prepare()?;
        // Prologue: depth and host-stack check, then the runtime slots.
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
        let slot_tys = self.u.slot_types(self.at);
        let mut params = String::new();
        for (k, t) in slot_tys.iter().enumerate() {
            let _ = write!(params, ", {} %a{k}", arg_ty(t));
            let Some(pi) = self.plan.frame.slots.get(k).copied().flatten() else {
                continue;
            };
            let a = (arg_ty(t).to_string(), format!("%a{k}"));
            self.put(&format!("%pl{pi}"), t, &a);
            if self.places[pi].agg {
                self.i(format!("store i64 1, ptr %ph{pi}"));
            }
            if self.places[pi].owner {
                let n = self.load("%zcn");
                let p = self.v(format!("getelementptr inbounds i64, ptr %zc, i64 {n}"));
                self.i(format!("store i64 {pi}, ptr {p}"));
                let n1 = self.v(format!("add i64 {n}, 1"));
                self.i(format!("store i64 {n1}, ptr %zcn"));
            }
        }
        for c in self.lowered.requires().to_vec() {
            self.clause(&c)?;
        }
        self.body(&steps)?;
        self.label("ZEXIT");
        self.in_ensures = true;
        for c in self.lowered.ensures().to_vec() {
            self.clause(&c)?;
        }
        self.in_ensures = false;
        let rt = f.result.clone();
        let rn = self.size(&rt);
        self.copy("%zret", "%zr", rn);
        let zl = self.zl();
        self.i(format!("store i64 {zl}, ptr %z"));
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let d1 = self.v(format!("sub i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        self.term("ret i32 0");
        if self.plan.frame.cust {
            self.unwind();
        }
        // Storage: the counter, the result, each root path, each flow value.
        self.alloca("zl");
        self.storage("zr", rn);
        for (i, p) in f.body.paths.iter().enumerate() {
            if !p.key.fields.is_empty() {
                continue;
            }
            let n = if self.places[i].borrowed {
                1
            } else {
                self.size(&p.ty)
            };
            self.storage(&format!("pl{i}"), n);
            if self.places[i].agg {
                self.alloca(&format!("ph{i}"));
            }
        }
        for bi in 0..self.plan.frame.blocks.len() {
            let b = self.plan.frame.blocks[bi];
            for (j, op) in b.ops.iter().enumerate() {
                let key = (b.id, j as u32);
                match &op.result {
                    Some(t) if !is_word(t) => {
                        if !self.plan.frame.temps.contains_key(&key) {
                            let n = self.size(t);
                            self.storage(&format!("v{}_{j}", b.id), n);
                        }
                    }
                    _ => {
                        if (op.result.is_some() || self.lowered.is_call(b.id, j as u32))
                            && self.escaping.contains(&key)
                        {
                            self.alloca(&format!("v{}_{j}", b.id));
                        }
                    }
                }
            }
        }
        if self.plan.frame.cust {
            let cap = f.body.paths.len() + 1;
            self.storage("zc", cap as u32);
            self.alloca("zcn");
            self.allocas
                .push("  %zk = alloca i32, align 4\n  store i32 0, ptr %zk".into());
        }
        let mut out = String::new();
        let _ = writeln!(out, "; {}", self.u.source(self.at));
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
