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
//! and fault, or not, exactly as before. LOAD_LOCALs emit nothing when their
//! value is only read in their own block before its place is stored again
//! (the readers read the place register), a STORE_LOCAL of the value just
//! computed is that micro-operation's second destination, and a
//! JUMP_IF_FALSE on a comparison just computed is that comparison's exit
//! test. Every other register, slot and place write of the covered
//! operations is performed as in the fused runs, and a fault names the
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum UCode {
    /// `r[d] = r[d2] = r[a]`: a STORE_LOCAL, a LOAD_LOCAL whose value needs
    /// its own register, or a mirrored CONST.
    Mov,
    /// Writes `r[d]` to SSA value slot `d`.
    Mirror,
    /// A JUMP_IF_FALSE on `r[a]` that is not fused into a comparison.
    Test,
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
    /// A comparison or test leaves the loop when its word equals this
    /// ([`STAY`]: never).
    exit_on: u8,
    /// The kind of [`UCode::Arith`].
    kind: ScalarKind,
    /// The operation tag of [`UCode::Arith`].
    tag: u32,
    d: u32,
    /// The second destination (`d` when there is none).
    d2: u32,
    a: u32,
    b: u32,
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
    /// The register of place register zero.
    pub pbase: u32,
    /// The frame's register count.
    pub nregs: usize,
}

impl Facts<'_> {
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
        [u.d, u.d2, u.a, u.b]
            .iter()
            .all(|&r| (r as usize) < f.nregs)
            && (u.code != UCode::Mirror || (u.d as usize) < n)
    });
    in_range.then_some(lp)
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
    // The register holding each value of this block: its own, or the place
    // register of the place it was loaded from.
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
            d2: d,
            a,
            b,
            blk: blk32,
            at,
            refund: cost.checked_sub(before.checked_add(at)?.checked_add(1)?)?,
            to: 0,
            exit_refund: 0,
        })
    };
    let code = &mut lp.code;
    // The last micro-operation when it computed the previous operation's
    // value into that value's register: a STORE_LOCAL or JUMP_IF_FALSE of
    // it fuses into it.
    let mut fresh: Option<(usize, u32)> = None;
    for (k, x) in ins.iter().enumerate() {
        let v = u32::try_from(start + k).ok()?;
        let prev = fresh.take();
        match x.code {
            Code::Const => {
                // Fast readers read the constant register; a general-path
                // reader reads the slot.
                if x.mirror {
                    code.push(uop(UCode::Mov, k, v, x.a, 0)?);
                    code.push(uop(UCode::Mirror, k, v, 0, 0)?);
                }
            }
            Code::Load => {
                let (reg, bit) = preg_of(x.a)?;
                lp.places |= 1 << bit;
                let stored_before_last_read =
                    (k + 1..last[k]).any(|s| ins[s].code == Code::Store && ins[s].d == x.a);
                let own = x.mirror
                    || f.readers.get(v as usize) != Some(&inb[k])
                    || stored_before_last_read;
                if own {
                    code.push(uop(UCode::Mov, k, v, reg, 0)?);
                    if x.mirror {
                        code.push(uop(UCode::Mirror, k, v, 0, 0)?);
                    } else {
                        fresh = Some((code.len() - 1, v));
                    }
                } else {
                    home[k] = reg;
                }
            }
            Code::Store => {
                let (reg, bit) = preg_of(x.d)?;
                lp.places |= 1 << bit;
                match prev {
                    Some((ci, r)) if r == x.a && code[ci].d2 == code[ci].d => code[ci].d2 = reg,
                    _ => code.push(uop(UCode::Mov, k, reg, map(&home, x.a), 0)?),
                }
            }
            Code::Jump => {
                if x.d as usize != next {
                    return None;
                }
            }
            Code::Branch => {
                let (t, e) = (x.b as usize, x.d as usize);
                if t == e {
                    if t != next {
                        return None;
                    }
                    continue;
                }
                let (exit_on, to) = if t == next {
                    (0, e)
                } else if e == next {
                    (1, t)
                } else {
                    return None;
                };
                let ci = match prev {
                    Some((ci, r)) if r == x.a && compares(code[ci].code) => ci,
                    _ => {
                        code.push(uop(UCode::Test, k, 0, map(&home, x.a), 0)?);
                        code.len() - 1
                    }
                };
                let exit_refund = uop(UCode::Test, k, 0, 0, 0)?.refund;
                let u = &mut code[ci];
                u.exit_on = exit_on;
                u.to = u32::try_from(to).ok()?;
                u.exit_refund = exit_refund;
            }
            c => {
                let mut u = uop(ucode(c)?, k, v, map(&home, x.a), map(&home, x.b))?;
                u.kind = x.kind;
                u.tag = x.tag;
                code.push(u);
                if x.mirror {
                    code.push(uop(UCode::Mirror, k, v, 0, 0)?);
                } else {
                    fresh = Some((code.len() - 1, v));
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
            macro_rules! exit_if {
                ($w:expr) => {
                    if $w == u64::from(u.exit_on) {
                        s = s.saturating_sub(u64::from(u.exit_refund));
                        break 'run Exit::Block(u.to as usize);
                    }
                };
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
            macro_rules! cmp {
                (|$x:ident, $y:ident| $e:expr) => {{
                    let ($x, $y) = (r.rd(u.a), r.rd(u.b));
                    let w = u64::from($e);
                    if !(r.wr(u.d, w) & r.wr(u.d2, w)) {
                        fault!(FaultKind::Internal);
                    }
                    exit_if!(w);
                    continue;
                }};
            }
            let (x, y) = (r.rd(u.a), r.rd(u.b));
            let w = match u.code {
                UCode::Mov => x,
                UCode::Mirror => {
                    match ssa.get_mut(u.d as usize) {
                        Some(slot) => put(slot, r.rd(u.d)),
                        None => fault!(FaultKind::Internal),
                    }
                    continue;
                }
                UCode::Test => {
                    exit_if!(u64::from(x != 0));
                    continue;
                }
                UCode::AddS => over!((x as i64).overflowing_add(y as i64)),
                UCode::SubS => over!((x as i64).overflowing_sub(y as i64)),
                UCode::MulS => over!((x as i64).overflowing_mul(y as i64)),
                UCode::AddU => over!(x.overflowing_add(y)),
                UCode::SubU => over!(x.overflowing_sub(y)),
                UCode::MulU => over!(x.overflowing_mul(y)),
                UCode::AddW => x.wrapping_add(y),
                UCode::SubW => x.wrapping_sub(y),
                UCode::MulW => x.wrapping_mul(y),
                UCode::Arith => match numeric::arith(u.tag, u.kind, profile, x, y) {
                    Ok(w) => w,
                    Err(kind) => fault!(kind),
                },
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
            };
            if !(r.wr(u.d, w) & r.wr(u.d2, w)) {
                fault!(FaultKind::Internal);
            }
        }
    };
    *steps = s;
    exit
}
