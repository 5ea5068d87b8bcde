//! Fused loops: a cycle of blocks that fused runs cover whole (every
//! operation of each block has a fast form, the last one a JUMP or a
//! JUMP_IF_FALSE whose in-cycle arm leads to the next block of the cycle)
//! compiled into one flat sequence of *micro-operations* that repeats until
//! a branch leaves the cycle.
//!
//! Compared with the fused runs of [`super::fast`], a loop pays one step
//! budget check per iteration (the whole iteration is charged at once, and
//! a branch or fault refunds the steps of the operations after it), no
//! segment transitions, and no place-register valid tests: on entry every
//! place the loop loads or stores is brought into its place register (from
//! its slot, when the register does not hold it yet), and when a slot holds
//! no scalar the loop is not entered, so the fused runs execute that visit
//! and fault, or not, exactly as before.
//!
//! A value gets its own (SSA) register only when some reader needs it
//! there: one in another block, a general-path reader (the value is also
//! mirrored into its slot), or one after its place was stored again.
//! Otherwise its readers in the block read the place register that holds
//! it: a LOAD_LOCAL emits nothing, and a result stored by the STORE_LOCAL
//! right after it is written to that place register alone. A comparison
//! that only the JUMP_IF_FALSE after it reads is one exit test that writes
//! nothing, and a constant operand of a 64-bit arithmetic operation or of
//! an exit test is an immediate. Every place write and every value a
//! reader sees is the one the fused runs produce, and a fault names the
//! operation that faulted. When the remaining budget is below one
//! iteration, the loop hands over to the fused runs (and they to the
//! one-operation path), so a step-limit fault lands on the exact operation.

use super::fast::{Code, File, Ins, Regs, put};
use super::fault::FaultKind;
use super::numeric;
use super::value::Value;
use crate::model::{NumericProfile, ScalarKind};

/// The most blocks one fused loop spans.
const MAX_BLOCKS: usize = 4;

/// What a micro-operation does. The binary forms repeat [`Code`]'s as flat
/// variants on purpose: wrapping them (`Op(Code)`) made the loop bench's
/// interpreter 1.7× slower (0.29 s against 0.17 s of CPU for 3 000 runs).
///
/// Every form writes at most one register, `r[d]`: a STORE_LOCAL fused into
/// the operation before it makes `d` the place register when the stored
/// value has no other reader that needs its own register (otherwise it is a
/// [`UCode::Mov`] of its own). The `…I` forms take their second operand from
/// [`Uop::imm`] (a constant register's word). The `X…` forms are a
/// comparison whose word no one reads but the JUMP_IF_FALSE after it: they
/// write nothing and leave the loop when the comparison holds (the exit arm
/// is folded into the condition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UCode {
    /// `r[d] = r[a]`: a STORE_LOCAL, a LOAD_LOCAL whose value needs its own
    /// register, or a mirrored CONST.
    Mov,
    /// Writes `r[d]` to SSA value slot `d`.
    Mirror,
    AddS,
    SubS,
    MulS,
    AddU,
    SubU,
    MulU,
    AddW,
    SubW,
    MulW,
    Arith,
    AddSI,
    SubSI,
    MulSI,
    AddUI,
    SubUI,
    MulUI,
    AddWI,
    SubWI,
    MulWI,
    /// Comparisons that write their word (and leave when it equals
    /// [`Uop::exit_on`]).
    Eq,
    Ne,
    LtS,
    LeS,
    GtS,
    GeS,
    LtU,
    LeU,
    GtU,
    GeU,
    /// Leave when `r[a] <cond> r[b]`.
    XEq,
    XNe,
    XLtS,
    XLeS,
    XGtS,
    XGeS,
    XLtU,
    XLeU,
    XGtU,
    XGeU,
    /// Leave when `r[a] <cond> imm`.
    XEqI,
    XNeI,
    XLtSI,
    XLeSI,
    XGtSI,
    XGeSI,
    XLtUI,
    XLeUI,
    XGtUI,
    XGeUI,
}

/// The micro-operation of an arithmetic or comparison fast form.
fn ucode(c: Code) -> Option<UCode> {
    Some(match c {
        Code::AddS => UCode::AddS,
        Code::SubS => UCode::SubS,
        Code::MulS => UCode::MulS,
        Code::AddU => UCode::AddU,
        Code::SubU => UCode::SubU,
        Code::MulU => UCode::MulU,
        Code::AddW => UCode::AddW,
        Code::SubW => UCode::SubW,
        Code::MulW => UCode::MulW,
        Code::Arith => UCode::Arith,
        Code::Eq => UCode::Eq,
        Code::Ne => UCode::Ne,
        Code::LtS => UCode::LtS,
        Code::LeS => UCode::LeS,
        Code::GtS => UCode::GtS,
        Code::GeS => UCode::GeS,
        Code::LtU => UCode::LtU,
        Code::LeU => UCode::LeU,
        Code::GtU => UCode::GtU,
        Code::GeU => UCode::GeU,
        _ => return None,
    })
}

/// The immediate form of a 64-bit arithmetic micro-operation, and whether
/// its operands commute (so a constant first operand can become the
/// immediate).
fn immediate(c: UCode) -> Option<(UCode, bool)> {
    Some(match c {
        UCode::AddS => (UCode::AddSI, true),
        UCode::SubS => (UCode::SubSI, false),
        UCode::MulS => (UCode::MulSI, true),
        UCode::AddU => (UCode::AddUI, true),
        UCode::SubU => (UCode::SubUI, false),
        UCode::MulU => (UCode::MulUI, true),
        UCode::AddW => (UCode::AddWI, true),
        UCode::SubW => (UCode::SubWI, false),
        UCode::MulW => (UCode::MulWI, true),
        _ => return None,
    })
}

/// A comparison, as the condition of an exit-only micro-operation: one of
/// the fast comparison codes ([`Cond::of`] admits no other).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cond(Code);

impl Cond {
    /// The condition of a comparison code.
    fn of(c: Code) -> Option<Cond> {
        matches!(
            c,
            Code::Eq
                | Code::Ne
                | Code::LtS
                | Code::LeS
                | Code::GtS
                | Code::GeS
                | Code::LtU
                | Code::LeU
                | Code::GtU
                | Code::GeU
        )
        .then_some(Cond(c))
    }

    /// The condition that holds exactly when this one does not.
    fn negate(self) -> Cond {
        Cond(match self.0 {
            Code::Eq => Code::Ne,
            Code::Ne => Code::Eq,
            Code::LtS => Code::GeS,
            Code::LeS => Code::GtS,
            Code::GtS => Code::LeS,
            Code::GeS => Code::LtS,
            Code::LtU => Code::GeU,
            Code::LeU => Code::GtU,
            Code::GtU => Code::LeU,
            Code::GeU => Code::LtU,
            other => other,
        })
    }

    /// The condition on the operands swapped (`b c' a` exactly when
    /// `a c b`).
    fn swap(self) -> Cond {
        Cond(match self.0 {
            Code::LtS => Code::GtS,
            Code::LeS => Code::GeS,
            Code::GtS => Code::LtS,
            Code::GeS => Code::LeS,
            Code::LtU => Code::GtU,
            Code::LeU => Code::GeU,
            Code::GtU => Code::LtU,
            Code::GeU => Code::LeU,
            other => other,
        })
    }

    /// The exit-only micro-operation on two registers, or on a register
    /// and an immediate.
    fn exit(self, imm: bool) -> Option<UCode> {
        Some(match (self.0, imm) {
            (Code::Eq, false) => UCode::XEq,
            (Code::Ne, false) => UCode::XNe,
            (Code::LtS, false) => UCode::XLtS,
            (Code::LeS, false) => UCode::XLeS,
            (Code::GtS, false) => UCode::XGtS,
            (Code::GeS, false) => UCode::XGeS,
            (Code::LtU, false) => UCode::XLtU,
            (Code::LeU, false) => UCode::XLeU,
            (Code::GtU, false) => UCode::XGtU,
            (Code::GeU, false) => UCode::XGeU,
            (Code::Eq, true) => UCode::XEqI,
            (Code::Ne, true) => UCode::XNeI,
            (Code::LtS, true) => UCode::XLtSI,
            (Code::LeS, true) => UCode::XLeSI,
            (Code::GtS, true) => UCode::XGtSI,
            (Code::GeS, true) => UCode::XGeSI,
            (Code::LtU, true) => UCode::XLtUI,
            (Code::LeU, true) => UCode::XLeUI,
            (Code::GtU, true) => UCode::XGtUI,
            (Code::GeU, true) => UCode::XGeUI,
            _ => return None,
        })
    }
}

/// Whether a micro-operation computes a comparison word (0 or 1).
fn compares(c: UCode) -> bool {
    matches!(
        c,
        UCode::Eq
            | UCode::Ne
            | UCode::LtS
            | UCode::LeS
            | UCode::GtS
            | UCode::GeS
            | UCode::LtU
            | UCode::LeU
            | UCode::GtU
            | UCode::GeU
    )
}

/// An exit test that never leaves (a tested word is 0 or 1).
const STAY: u8 = 2;

/// One micro-operation.
#[derive(Clone, Copy, Debug)]
struct Uop {
    code: UCode,
    /// A comparison that writes its word leaves the loop when the word
    /// equals this ([`STAY`]: never).
    exit_on: u8,
    /// The kind of [`UCode::Arith`].
    kind: ScalarKind,
    /// The operation tag of [`UCode::Arith`].
    tag: u32,
    d: u32,
    a: u32,
    b: u32,
    /// The second operand of the immediate forms.
    imm: u64,
    /// The block and operation ordinal a fault names.
    blk: u32,
    at: u32,
    /// The steps of the iteration after operation `at`, refunded on a fault.
    refund: u32,
    /// The block the exit leaves to.
    to: u32,
    /// The steps of the iteration after the exit's JUMP_IF_FALSE.
    exit_refund: u32,
}

/// A compiled loop, entered at its first block.
#[derive(Clone, Debug)]
pub(super) struct Loop {
    code: Vec<Uop>,
    /// The steps of one whole iteration.
    cost: u64,
    /// The place registers the loop loads or stores (bit `k`: place
    /// register `k`).
    places: u64,
}

/// How a loop stopped.
pub(super) enum Exit {
    /// The loop was not entered, or the budget does not cover another
    /// iteration: the fused runs continue at the loop's first block.
    Fallback,
    /// A branch left the loop to the start of a block.
    Block(usize),
    /// A fault at a block and operation ordinal.
    Fault(usize, u32, FaultKind),
}

/// What [`build`] needs of a prepared function.
pub(super) struct Facts<'a> {
    /// Flat index of each block's first operation.
    pub starts: &'a [usize],
    /// The fast form of each flat operation (before fusing).
    pub fast: &'a [Ins],
    /// Per block: one fused run covers the whole block.
    pub whole: &'a [bool],
    /// Per SSA value: how many operands read it.
    pub readers: &'a [u32],
    /// Per place: its place register (`u32::MAX`: none).
    pub preg: &'a [u32],
    /// The register of place register zero (the constant registers lie
    /// between the SSA registers and it).
    pub pbase: u32,
    /// The frame's initial register words (the constant registers' words).
    pub regs: &'a [u64],
}

impl Facts<'_> {
    /// The word of register `r` when it is a constant register.
    fn constant(&self, r: u32) -> Option<u64> {
        let at = r as usize;
        (at >= self.fast.len() && r < self.pbase)
            .then(|| self.regs.get(at).copied())
            .flatten()
    }

    /// The flat operations of block `b`.
    fn ops(&self, b: usize) -> Option<std::ops::Range<usize>> {
        let start = *self.starts.get(b)?;
        let end = self.starts.get(b + 1).copied().unwrap_or(self.fast.len());
        (start < end && end <= self.fast.len()).then_some(start..end)
    }

    /// The successors of a wholly fused block (none for another block).
    fn successors(&self, b: usize) -> impl Iterator<Item = usize> {
        let last = self
            .whole
            .get(b)
            .copied()
            .unwrap_or(false)
            .then(|| self.ops(b).and_then(|r| self.fast.get(r.end - 1)))
            .flatten();
        let (first, second) = match last.map(|i| (i.code, i.b, i.d)) {
            Some((Code::Jump, _, d)) => (Some(d), None),
            Some((Code::Branch, t, e)) => (Some(t), (t != e).then_some(e)),
            _ => (None, None),
        };
        first.into_iter().chain(second).map(|s| s as usize)
    }

    /// A shortest cycle of wholly fused blocks through `header`, at most
    /// [`MAX_BLOCKS`] long, starting there.
    fn cycle(&self, header: usize) -> Option<Vec<usize>> {
        fn dfs(f: &Facts<'_>, path: &mut Vec<usize>, max: usize) -> bool {
            let Some(&last) = path.last() else {
                return false;
            };
            for s in f.successors(last) {
                if s == path[0] {
                    return true;
                }
                if path.len() < max && !path.contains(&s) && f.successors(s).next().is_some() {
                    path.push(s);
                    if dfs(f, path, max) {
                        return true;
                    }
                    path.pop();
                }
            }
            false
        }
        // A block without successors in fused blocks heads no cycle.
        self.successors(header).next()?;
        (1..=MAX_BLOCKS).find_map(|max| {
            let mut path = vec![header];
            dfs(self, &mut path, max).then_some(path)
        })
    }
}

/// Compiles the loop entered at block `header`, if a cycle of wholly fused
/// blocks runs through it. `reads(flat)` lists the SSA values operation
/// `flat` reads.
pub(super) fn build(
    f: &Facts<'_>,
    header: usize,
    reads: impl Fn(usize) -> Vec<u32>,
) -> Option<Loop> {
    let cycle = f.cycle(header)?;
    let lens: Vec<u32> = cycle
        .iter()
        .map(|&b| f.ops(b).and_then(|r| u32::try_from(r.len()).ok()))
        .collect::<Option<_>>()?;
    let cost = lens.iter().try_fold(0u32, |a, &l| a.checked_add(l))?;
    let mut lp = Loop {
        code: Vec::new(),
        cost: u64::from(cost),
        places: 0,
    };
    let mut before = 0;
    for (i, &b) in cycle.iter().enumerate() {
        let next = cycle[(i + 1) % cycle.len()];
        block(f, &reads, b, next, before, cost, &mut lp)?;
        before += lens[i];
    }
    // Every register and slot number is in range, so the executor's
    // out-of-range paths are unreachable.
    let n = f.fast.len();
    let in_range = lp.code.iter().all(|u| {
        [u.d, u.a, u.b].iter().all(|&r| (r as usize) < f.regs.len())
            && (u.code != UCode::Mirror || (u.d as usize) < n)
    });
    in_range.then_some(lp)
}

/// The exit of a JUMP_IF_FALSE `x` in a cycle whose next block is `next`:
/// `None` when neither arm stays in the cycle, `Some(None)` when both do,
/// else the word that leaves (1: the true arm leaves) and the block it
/// leaves to.
fn exit_arm(x: &Ins, next: usize) -> Option<Option<(u8, usize)>> {
    let (t, e) = (x.b as usize, x.d as usize);
    if t == e {
        return (t == next).then_some(None);
    }
    if t == next {
        Some(Some((0, e)))
    } else if e == next {
        Some(Some((1, t)))
    } else {
        None
    }
}

/// Compiles block `blk` of a cycle (`next` is the next block of the cycle,
/// `before` the steps of the cycle's blocks before it, `cost` those of the
/// whole cycle) onto `lp`.
fn block(
    f: &Facts<'_>,
    reads: &impl Fn(usize) -> Vec<u32>,
    blk: usize,
    next: usize,
    before: u32,
    cost: u32,
    lp: &mut Loop,
) -> Option<()> {
    let range = f.ops(blk)?;
    let (start, len) = (range.start, range.len());
    let ins = f.fast.get(range.clone())?;
    // How many operands of this block read each of its values, and the
    // ordinal of the last one.
    let mut inb = vec![0u32; len];
    let mut last = vec![0usize; len];
    for k in 0..len {
        for v in reads(start + k) {
            if let Some(i) = (v as usize).checked_sub(start).filter(|&i| i < len) {
                inb[i] += 1;
                last[i] = k;
            }
        }
    }
    // Whether a STORE_LOCAL to `place` lies in `from..to`.
    let stored_in = |place: u32, from: usize, to: usize| {
        (from..to).any(|s| ins[s].code == Code::Store && ins[s].d == place)
    };
    // The register holding each value of this block: its own, or the place
    // register of the place it was loaded from or stored into.
    let mut home: Vec<u32> = range
        .clone()
        .map(|i| u32::try_from(i).ok())
        .collect::<Option<_>>()?;
    let map = |home: &[u32], r: u32| {
        (r as usize)
            .checked_sub(start)
            .and_then(|i| home.get(i))
            .copied()
            .unwrap_or(r)
    };
    let preg_of = |place: u32| -> Option<(u32, u32)> {
        let k = *f.preg.get(place as usize)?;
        if k >= 64 {
            return None;
        }
        Some((f.pbase.checked_add(k)?, k))
    };
    let blk32 = u32::try_from(blk).ok()?;
    let uop = |code: UCode, k: usize, d: u32, a: u32, b: u32| -> Option<Uop> {
        let at = u32::try_from(k).ok()?;
        Some(Uop {
            code,
            exit_on: STAY,
            kind: ScalarKind::UInt64,
            tag: 0,
            d,
            a,
            b,
            imm: 0,
            blk: blk32,
            at,
            refund: cost.checked_sub(before.checked_add(at)?.checked_add(1)?)?,
            to: 0,
            exit_refund: 0,
        })
    };
    // An exit-only test at ordinal `j` (a JUMP_IF_FALSE): leaves to `to`
    // when `r[a] c r[b]`, or `r[a] c 0` without `b`. A constant register
    // operand becomes the immediate.
    let exit_test = |j: usize, c: Cond, a: u32, b: Option<u32>, to: usize| -> Option<Uop> {
        let (c, a, b, imm) = match b {
            None => (c, a, 0, Some(0)),
            Some(b) => match (f.constant(b), f.constant(a)) {
                (Some(w), _) => (c, a, 0, Some(w)),
                (None, Some(w)) => (c.swap(), b, 0, Some(w)),
                (None, None) => (c, a, b, None),
            },
        };
        let mut u = uop(c.exit(imm.is_some())?, j, 0, a, b)?;
        u.imm = imm.unwrap_or(0);
        u.to = u32::try_from(to).ok()?;
        u.exit_refund = u.refund;
        Some(u)
    };
    let code = &mut lp.code;
    // `k` is the next operation not compiled yet (a fused STORE_LOCAL or
    // JUMP_IF_FALSE is compiled with the operation before it).
    let mut k = 0;
    while k < len {
        let j = k;
        k += 1;
        let x = ins[j];
        let v = u32::try_from(start + j).ok()?;
        // No reader of the value needs its own register (all of them are
        // fast operations of this block).
        let local = !x.mirror && f.readers.get(v as usize) == Some(&inb[j]);
        match x.code {
            Code::Const => {
                // Fast readers read the constant register; a general-path
                // reader reads the slot.
                if x.mirror {
                    code.push(uop(UCode::Mov, j, v, x.a, 0)?);
                    code.push(uop(UCode::Mirror, j, v, 0, 0)?);
                }
            }
            Code::Load => {
                let (reg, bit) = preg_of(x.a)?;
                lp.places |= 1 << bit;
                if local && !stored_in(x.a, k, last[j]) {
                    // Every reader reads the place register.
                    home[j] = reg;
                } else {
                    code.push(uop(UCode::Mov, j, v, reg, 0)?);
                    if x.mirror {
                        code.push(uop(UCode::Mirror, j, v, 0, 0)?);
                    }
                }
            }
            Code::Store => {
                let (reg, bit) = preg_of(x.d)?;
                lp.places |= 1 << bit;
                code.push(uop(UCode::Mov, j, reg, map(&home, x.a), 0)?);
            }
            Code::Jump => {
                if x.d as usize != next {
                    return None;
                }
            }
            Code::Branch => {
                if let Some((exit_on, to)) = exit_arm(&x, next)? {
                    // A Bool word leaves when it is nonzero (`exit_on` 1)
                    // or zero.
                    let c = Cond(if exit_on == 1 { Code::Ne } else { Code::Eq });
                    code.push(exit_test(j, c, map(&home, x.a), None, to)?);
                }
            }
            c => {
                let uc = ucode(c)?;
                let (a, b) = (map(&home, x.a), map(&home, x.b));
                let branch = ins.get(k).filter(|br| br.code == Code::Branch && br.a == v);
                // A comparison only the JUMP_IF_FALSE after it reads: one
                // exit test that writes nothing (and cannot fault).
                if let (Some(cond), Some(br)) = (Cond::of(c), branch)
                    && !x.mirror
                    && f.readers.get(v as usize) == Some(&1)
                {
                    k += 1;
                    if let Some((exit_on, to)) = exit_arm(br, next)? {
                        let cond = if exit_on == 1 { cond } else { cond.negate() };
                        code.push(exit_test(j + 1, cond, a, Some(b), to)?);
                    }
                    continue;
                }
                // A STORE_LOCAL of the value just after it, when no reader
                // needs the value's own register: the result goes to the
                // place register alone, and this block's readers read it
                // there (no other store to the place comes before them).
                let mut d = v;
                if let Some(st) = ins.get(k)
                    && st.code == Code::Store
                    && st.a == v
                    && local
                    && !stored_in(st.d, k + 1, last[j])
                {
                    let (reg, bit) = preg_of(st.d)?;
                    lp.places |= 1 << bit;
                    (d, home[j]) = (reg, reg);
                    k += 1;
                }
                // A fault names this operation and refunds the steps after
                // it (the fused STORE_LOCAL's among them).
                let mut u = uop(uc, j, d, a, b)?;
                u.kind = x.kind;
                u.tag = x.tag;
                if let Some((ui, commutes)) = immediate(uc) {
                    if let Some(w) = f.constant(b) {
                        (u.code, u.b, u.imm) = (ui, 0, w);
                    } else if commutes && let Some(w) = f.constant(a) {
                        (u.code, u.a, u.b, u.imm) = (ui, b, 0, w);
                    }
                }
                code.push(u);
                if x.mirror {
                    code.push(uop(UCode::Mirror, j, v, 0, 0)?);
                } else if compares(uc)
                    && let Some(br) = ins.get(k).filter(|br| br.code == Code::Branch && br.a == v)
                {
                    // A JUMP_IF_FALSE on a comparison whose word is also
                    // read elsewhere is that comparison's exit test.
                    k += 1;
                    if let Some((exit_on, to)) = exit_arm(br, next)? {
                        let exit_refund = uop(UCode::Mov, k - 1, 0, 0, 0)?.refund;
                        if let Some(u) = code.last_mut() {
                            u.exit_on = exit_on;
                            u.to = u32::try_from(to).ok()?;
                            u.exit_refund = exit_refund;
                        }
                    }
                }
            }
        }
    }
    Some(())
}

/// Runs loop `lp` on a frame (`fplaces[k]` is the place of place register
/// `k`), charging `steps` against `limit`, until a branch leaves it, an
/// operation faults, or the budget no longer covers an iteration.
#[inline(never)]
pub(super) fn run<R: File + ?Sized>(
    lp: &Loop,
    f: &mut Regs<'_, R>,
    fplaces: &[u32],
    steps: &mut u64,
    limit: u64,
    profile: NumericProfile,
) -> Exit {
    let mut missing = lp.places & !f.valid;
    while missing != 0 {
        let k = missing.trailing_zeros();
        missing &= missing - 1;
        let w = match fplaces
            .get(k as usize)
            .and_then(|&pi| f.places.get(pi as usize))
        {
            Some(Some(Value::Scalar(w))) => *w,
            _ => return Exit::Fallback,
        };
        if !f.r.wr(f.pbase.wrapping_add(k), w) {
            return Exit::Fallback;
        }
        f.valid |= 1 << k;
    }
    let (r, ssa) = (&mut *f.r, &mut *f.ssa);
    let mut s = *steps;
    let exit = 'run: loop {
        if limit.saturating_sub(s) < lp.cost {
            break Exit::Fallback;
        }
        s += lp.cost;
        for u in &lp.code {
            macro_rules! fault {
                ($kind:expr) => {{
                    s = s.saturating_sub(u64::from(u.refund));
                    break 'run Exit::Fault(u.blk as usize, u.at, $kind);
                }};
            }
            macro_rules! leave {
                () => {{
                    s = s.saturating_sub(u64::from(u.exit_refund));
                    break 'run Exit::Block(u.to as usize);
                }};
            }
            // Writes the result register.
            macro_rules! set {
                ($w:expr) => {{
                    let w = $w;
                    if !r.wr(u.d, w) {
                        fault!(FaultKind::Internal);
                    }
                    w
                }};
            }
            macro_rules! over {
                ($e:expr) => {{
                    let (w, over) = $e;
                    if over {
                        fault!(FaultKind::Overflow);
                    }
                    w as u64
                }};
            }
            // The operands: two registers, or a register and the immediate.
            macro_rules! rr {
                () => {
                    (r.rd(u.a), r.rd(u.b))
                };
            }
            macro_rules! ri {
                () => {
                    (r.rd(u.a), u.imm)
                };
            }
            macro_rules! arith {
                ($ops:ident, |$x:ident, $y:ident| $e:expr) => {{
                    let ($x, $y) = $ops!();
                    set!($e);
                }};
            }
            macro_rules! cmp {
                (|$x:ident, $y:ident| $e:expr) => {{
                    let ($x, $y) = rr!();
                    let w = set!(u64::from($e));
                    if w == u64::from(u.exit_on) {
                        leave!();
                    }
                }};
            }
            macro_rules! exit_if {
                ($ops:ident, |$x:ident, $y:ident| $e:expr) => {{
                    let ($x, $y) = $ops!();
                    if $e {
                        leave!();
                    }
                }};
            }
            match u.code {
                UCode::Mov => {
                    set!(r.rd(u.a));
                }
                UCode::Mirror => match ssa.get_mut(u.d as usize) {
                    Some(slot) => put(slot, r.rd(u.d)),
                    None => fault!(FaultKind::Internal),
                },
                UCode::AddS => arith!(rr, |x, y| over!((x as i64).overflowing_add(y as i64))),
                UCode::SubS => arith!(rr, |x, y| over!((x as i64).overflowing_sub(y as i64))),
                UCode::MulS => arith!(rr, |x, y| over!((x as i64).overflowing_mul(y as i64))),
                UCode::AddU => arith!(rr, |x, y| over!(x.overflowing_add(y))),
                UCode::SubU => arith!(rr, |x, y| over!(x.overflowing_sub(y))),
                UCode::MulU => arith!(rr, |x, y| over!(x.overflowing_mul(y))),
                UCode::AddW => arith!(rr, |x, y| x.wrapping_add(y)),
                UCode::SubW => arith!(rr, |x, y| x.wrapping_sub(y)),
                UCode::MulW => arith!(rr, |x, y| x.wrapping_mul(y)),
                UCode::Arith => arith!(
                    rr,
                    |x, y| match numeric::arith(u.tag, u.kind, profile, x, y) {
                        Ok(w) => w,
                        Err(kind) => fault!(kind),
                    }
                ),
                UCode::AddSI => arith!(ri, |x, y| over!((x as i64).overflowing_add(y as i64))),
                UCode::SubSI => arith!(ri, |x, y| over!((x as i64).overflowing_sub(y as i64))),
                UCode::MulSI => arith!(ri, |x, y| over!((x as i64).overflowing_mul(y as i64))),
                UCode::AddUI => arith!(ri, |x, y| over!(x.overflowing_add(y))),
                UCode::SubUI => arith!(ri, |x, y| over!(x.overflowing_sub(y))),
                UCode::MulUI => arith!(ri, |x, y| over!(x.overflowing_mul(y))),
                UCode::AddWI => arith!(ri, |x, y| x.wrapping_add(y)),
                UCode::SubWI => arith!(ri, |x, y| x.wrapping_sub(y)),
                UCode::MulWI => arith!(ri, |x, y| x.wrapping_mul(y)),
                UCode::Eq => cmp!(|x, y| x == y),
                UCode::Ne => cmp!(|x, y| x != y),
                UCode::LtS => cmp!(|x, y| (x as i64) < y as i64),
                UCode::LeS => cmp!(|x, y| x as i64 <= y as i64),
                UCode::GtS => cmp!(|x, y| x as i64 > y as i64),
                UCode::GeS => cmp!(|x, y| x as i64 >= y as i64),
                UCode::LtU => cmp!(|x, y| x < y),
                UCode::LeU => cmp!(|x, y| x <= y),
                UCode::GtU => cmp!(|x, y| x > y),
                UCode::GeU => cmp!(|x, y| x >= y),
                UCode::XEq => exit_if!(rr, |x, y| x == y),
                UCode::XNe => exit_if!(rr, |x, y| x != y),
                UCode::XLtS => exit_if!(rr, |x, y| (x as i64) < y as i64),
                UCode::XLeS => exit_if!(rr, |x, y| x as i64 <= y as i64),
                UCode::XGtS => exit_if!(rr, |x, y| x as i64 > y as i64),
                UCode::XGeS => exit_if!(rr, |x, y| x as i64 >= y as i64),
                UCode::XLtU => exit_if!(rr, |x, y| x < y),
                UCode::XLeU => exit_if!(rr, |x, y| x <= y),
                UCode::XGtU => exit_if!(rr, |x, y| x > y),
                UCode::XGeU => exit_if!(rr, |x, y| x >= y),
                UCode::XEqI => exit_if!(ri, |x, y| x == y),
                UCode::XNeI => exit_if!(ri, |x, y| x != y),
                UCode::XLtSI => exit_if!(ri, |x, y| (x as i64) < y as i64),
                UCode::XLeSI => exit_if!(ri, |x, y| x as i64 <= y as i64),
                UCode::XGtSI => exit_if!(ri, |x, y| x as i64 > y as i64),
                UCode::XGeSI => exit_if!(ri, |x, y| x as i64 >= y as i64),
                UCode::XLtUI => exit_if!(ri, |x, y| x < y),
                UCode::XLeUI => exit_if!(ri, |x, y| x <= y),
                UCode::XGtUI => exit_if!(ri, |x, y| x > y),
                UCode::XGeUI => exit_if!(ri, |x, y| x >= y),
            }
        }
    };
    *steps = s;
    exit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::Interp;

    /// The micro-operation codes of each fused loop of `Main.sum` in
    /// module text `src` (every loop has the same function).
    fn codes(src: &str) -> Vec<Vec<UCode>> {
        let m = crate::text::parse(src).expect("parse");
        let c = crate::decode::from_model(&m, &[]).expect("check");
        let it = Interp::new(&c).expect("runnable");
        let p = &it.progs[0][0];
        assert_eq!(p.name, "Main.sum");
        p.loops
            .iter()
            .map(|lp| lp.code.iter().map(|u| u.code).collect())
            .collect()
    }

    #[test]
    fn the_counting_loop_is_three_single_write_forms() {
        // `i < n` only tested (leaving when `i >= n`), `acc += i` and
        // `i += 1` writing the place registers alone, the `1` immediate.
        let src = include_str!("../../../../examples/zlm/run/loop.zlt");
        assert_eq!(
            codes(src)[0],
            [UCode::XGeS, UCode::AddS, UCode::AddSI],
            "the loop entered at the header"
        );
    }

    #[test]
    fn constants_stores_and_other_readers_choose_their_forms() {
        use UCode::*;
        let forms = codes(include_str!("../../tests/loops/forms.zlt"));
        assert_eq!(
            forms[0],
            [
                // Block 1: `2 i`, read in block 4 too (its own register,
                // then the STORE_LOCAL); `i < n`, stored in block 3 (written,
                // with the exit test).
                MulSI, Mov, LtS, // Block 2: `1000 > i` leaves when `i >= 1000`.
                XGeSI,
                // Block 3: `i` (stored again before its last read), `3 i`
                // (constant first, commuted), `1005 - i` (constant first,
                // not commuting: the constant register), the two sums into
                // `acc` alone, `i + 1` (read after its place is stored
                // again), three STORE_LOCALs and the Bool of block 1.
                Mov, MulSI, SubS, AddS, AddS, AddSI, Mov, Mov, Mov, Mov,
            ]
        );
        let mirrored = codes(include_str!("../../tests/loops/mirrored.zlt"));
        assert_eq!(
            mirrored[0],
            // `i + 1` (mirrored for RETURN, stored twice), `acc += i`, the
            // comparison stored to `done` alone, the exit on loaded `done`.
            [AddSI, Mirror, Mov, AddS, Mov, GeS, XNeI]
        );
    }
}
