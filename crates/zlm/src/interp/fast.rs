//! The pre-decoded fast form of the scalar operations that dominate loops
//! (CONST, LOAD_LOCAL/STORE_LOCAL of Copy scalar roots, arithmetic,
//! comparisons, and JUMP/JUMP_IF_FALSE whose cleanup edges have no recipe).
//!
//! Each instruction performs exactly what the general path does for its
//! operation (same checks, same faults) on a frame's *registers*: one word
//! per flat operation (the scalar SSA value it produced) followed by the
//! function's constant words, so every operand is a register number and no
//! value is cloned or matched. A result that a general-path operation reads
//! is also written to its SSA value slot (`mirror`); the general path writes
//! the word of every SSA value it produces into the register, so the two
//! views never disagree. Fused code also keeps the Copy scalar places it
//! loads and stores in *place registers* after the constants while a chain
//! runs (see [`Regs::valid`]); they are written back to their slots when it
//! stops.
//!
//! Each operation has its own instruction (used when the step budget cannot
//! cover a whole run, so the step-limit fault lands on the exact operation).
//! A run of fast operations also has a *fused* form, executed when the whole
//! run is charged at once: up to two loads become *pre-loads* of the
//! instruction after them, a STORE_LOCAL of the previous result, a JUMP, and
//! a JUMP_IF_FALSE on the previous result become that instruction's
//! [`Then`], and a CONST whose
//! value only fast operations read is folded into their constant registers
//! (the checker's dominance rule guarantees the CONST ran before any read).
//! A fused instruction still performs every write of the operations it
//! covers, and a fault names the operation that faulted.
//! Cycles of blocks that fused runs cover whole are compiled further into
//! fused loops (`interp/loops.rs`).

use super::fault::FaultKind;
use super::numeric;
use super::value::Value;
use crate::model::{NumericProfile, ScalarKind, tag};

/// What an instruction does. Binary codes compute `r[d] = r[a] op r[b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Code {
    /// No fast form: the general path executes the operation.
    Slow,
    /// CONST: `r[d] = r[a]` (a constant register).
    Const,
    /// LOAD_LOCAL of a Copy scalar root: `r[d] = place a`.
    Load,
    /// STORE_LOCAL into a Copy scalar local root: `place d = r[a]`.
    Store,
    /// LOAD_LOCAL in fused code: `r[d] =` place register `b` of place
    /// `tag` (see [`Regs::valid`]).
    LoadR,
    /// STORE_LOCAL in fused code: place register `d` `= r[a]`.
    StoreR,
    /// Int64 add, subtract, multiply faulting on overflow (exact and
    /// approximate profiles).
    AddS,
    SubS,
    MulS,
    /// UInt64/Index add, subtract, multiply faulting on overflow.
    AddU,
    SubU,
    MulU,
    /// 64-bit add, subtract, multiply wrapping (modular profile).
    AddW,
    SubW,
    MulW,
    /// Any other arithmetic at `kind`, through [`numeric::arith`].
    Arith,
    /// Equality of canonical words (the same for every kind).
    Eq,
    Ne,
    /// Ordering of signed kinds (canonical words are sign-extended).
    LtS,
    LeS,
    GtS,
    GeS,
    /// Ordering of unsigned kinds and Bool (zero-extended words).
    LtU,
    LeU,
    GtU,
    GeU,
    /// JUMP to block `d`.
    Jump,
    /// JUMP_IF_FALSE on `r[a]`: block `b` when true (the next block), `d`
    /// when false.
    Branch,
}

/// A fused LOAD_LOCAL: `r[d] = r[reg]`, the place register of place
/// `place` whose [`Regs::valid`] bit is `bit`, operation ordinal `at`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pre {
    pub d: u32,
    pub place: u32,
    pub reg: u32,
    pub bit: u64,
    /// Whether `r[d]` is written: false when the instruction the load is
    /// fused into is the value's only reader (it reads `r[reg]` instead).
    pub keep: bool,
    pub at: u32,
    pub mirror: bool,
}

const NO_PRE: Pre = Pre {
    d: 0,
    place: 0,
    reg: 0,
    bit: 0,
    keep: true,
    at: 0,
    mirror: false,
};

/// What a fused instruction does after its result `w` is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Then {
    /// Nothing: the next instruction.
    Next,
    /// STORE_LOCAL of `w` into register `r`, place register `k`.
    Store(u32, u32),
    /// JUMP to a block.
    Jump(u32),
    /// STORE_LOCAL of `w` into a register and place register, then JUMP to
    /// a block.
    StoreJump(u32, u32, u32),
    /// JUMP_IF_FALSE on `w`: the first block when true, the second when
    /// false.
    Branch(u32, u32),
}

/// One pre-decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ins {
    pub code: Code,
    /// Whether the result is also written to the operation's SSA value slot
    /// (some general-path operation reads it).
    pub mirror: bool,
    /// The operation ordinal (in its block) of the instruction's own
    /// operation; a fused STORE_LOCAL is the one after it.
    pub at: u32,
    /// How many of `pre` run first.
    pub npre: u8,
    /// Fused LOAD_LOCALs executed before the instruction.
    pub pre: [Pre; 2],
    /// The fused continuation.
    pub then: Then,
    /// The kind of [`Code::Arith`].
    pub kind: ScalarKind,
    /// The operation tag of [`Code::Arith`].
    pub tag: u32,
    pub d: u32,
    pub a: u32,
    pub b: u32,
}

impl Ins {
    /// The general-path marker.
    pub const SLOW: Ins = Ins::new(Code::Slow, 0, 0, 0);

    /// An instruction without the arithmetic extras.
    pub const fn new(code: Code, d: u32, a: u32, b: u32) -> Ins {
        Ins {
            code,
            mirror: false,
            at: 0,
            npre: 0,
            pre: [NO_PRE; 2],
            then: Then::Next,
            kind: ScalarKind::UInt64,
            tag: 0,
            d,
            a,
            b,
        }
    }

    /// Whether the instruction ends its block.
    pub fn is_terminator(&self) -> bool {
        matches!(self.code, Code::Jump | Code::Branch)
            || matches!(
                self.then,
                Then::Jump(_) | Then::StoreJump(..) | Then::Branch(..)
            )
    }

    /// Whether the instruction computes a word into `r[d]` (and so can take
    /// a fused STORE_LOCAL, JUMP or branch).
    pub fn produces(&self) -> bool {
        !matches!(
            self.code,
            Code::Slow | Code::Store | Code::StoreR | Code::Jump | Code::Branch
        )
    }
}

/// Whether an instruction of code `c` (before fusing) reads register `a`.
fn reads_a(c: Code) -> bool {
    !matches!(
        c,
        Code::Slow | Code::Load | Code::LoadR | Code::StoreR | Code::Jump
    )
}

/// Whether an instruction of code `c` reads register `b`.
fn reads_b(c: Code) -> bool {
    !matches!(
        c,
        Code::Slow
            | Code::Const
            | Code::Load
            | Code::Store
            | Code::LoadR
            | Code::StoreR
            | Code::Jump
            | Code::Branch
    )
}

/// The instruction for arithmetic tag `t` at kind `k` under profile `p`.
pub(super) fn arith(t: u32, k: ScalarKind, p: NumericProfile, d: u32, a: u32, b: u32) -> Ins {
    let wide = matches!(
        k,
        ScalarKind::Int64 | ScalarKind::UInt64 | ScalarKind::Index
    );
    if !wide || !matches!(t, tag::ADD | tag::SUB | tag::MUL) {
        return Ins {
            kind: k,
            tag: t,
            ..Ins::new(Code::Arith, d, a, b)
        };
    }
    let code = match (t, p == NumericProfile::Modular, k.is_signed()) {
        (tag::ADD, true, _) => Code::AddW,
        (tag::SUB, true, _) => Code::SubW,
        (_, true, _) => Code::MulW,
        (tag::ADD, false, true) => Code::AddS,
        (tag::SUB, false, true) => Code::SubS,
        (_, false, true) => Code::MulS,
        (tag::ADD, false, false) => Code::AddU,
        (tag::SUB, false, false) => Code::SubU,
        (_, false, false) => Code::MulU,
    };
    Ins::new(code, d, a, b)
}

/// The instruction for comparison tag `t` at operand kind `k`.
pub(super) fn compare(t: u32, k: ScalarKind, d: u32, a: u32, b: u32) -> Ins {
    let code = match (t, k.is_signed()) {
        (tag::EQ, _) => Code::Eq,
        (tag::NE, _) => Code::Ne,
        (tag::LT, true) => Code::LtS,
        (tag::LE, true) => Code::LeS,
        (tag::GT, true) => Code::GtS,
        (_, true) => Code::GeS,
        (tag::LT, false) => Code::LtU,
        (tag::LE, false) => Code::LeU,
        (tag::GT, false) => Code::GtU,
        (_, false) => Code::GeU,
    };
    Ins::new(code, d, a, b)
}

/// Writes a scalar word into a value slot, in place when it already holds
/// one (no drop of the previous value, no whole-enum store).
#[inline(always)]
pub(super) fn put(slot: &mut Option<Value>, w: u64) {
    match slot {
        Some(Value::Scalar(x)) => *x = w,
        other => *other = Some(Value::Scalar(w)),
    }
}

/// A run's fused code: `code[start..end]` of its function, covering
/// operations `j0..j0 + steps` of one block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seg {
    pub start: u32,
    pub end: u32,
    pub j0: u32,
    pub steps: u32,
    /// The fused loop entered at this run (`u32::MAX`: none; see
    /// [`super::loops`]).
    pub lp: u32,
}

/// Fuses the instructions `ops` (one per operation, a run starting at
/// ordinal `j0`) onto `code`, returning the run's segment. `preg` maps each
/// place to its place register (`u32::MAX`: none); every place the run
/// loads or stores has one. `readers[i]` counts the operands, fast or not,
/// that read SSA value `i`.
pub(super) fn fuse(
    ops: &[Ins],
    j0: u32,
    preg: &[u32],
    pbase: u32,
    readers: &[u32],
    code: &mut Vec<Ins>,
) -> Option<Seg> {
    let start = u32::try_from(code.len()).ok()?;
    let n = ops.len();
    let reg = |pi: u32| {
        preg.get(pi as usize)
            .copied()
            .filter(|&k| k < 64)
            .and_then(|k| Some((pbase.checked_add(k)?, k)))
    };
    // Loads waiting to become pre-loads of the next instruction.
    let mut pending: Vec<Pre> = Vec::new();
    let flush = |pending: &mut Vec<Pre>, code: &mut Vec<Ins>| {
        // Loads with no instruction to join: the last is the main one.
        if let Some(last) = pending.pop() {
            let mut ins = Ins::new(Code::LoadR, last.d, last.reg, last.bit.trailing_zeros());
            ins.tag = last.place;
            ins.mirror = last.mirror;
            ins.at = last.at;
            ins.npre = pending.len() as u8;
            for (slot, p) in ins.pre.iter_mut().zip(pending.drain(..)) {
                *slot = p;
            }
            code.push(ins);
        }
    };
    let mut k = 0;
    while k < n {
        let mut ins = ops[k];
        ins.at = j0 + u32::try_from(k).ok()?;
        k += 1;
        if ins.code == Code::Const && !ins.mirror {
            // Every fast reader reads the constant register instead.
            continue;
        }
        if ins.code == Code::Load {
            if pending.len() == 2 {
                flush(&mut pending, code);
            }
            let (reg, k) = reg(ins.a)?;
            pending.push(Pre {
                d: ins.d,
                place: ins.a,
                reg,
                bit: 1 << k,
                keep: true,
                at: ins.at,
                mirror: ins.mirror,
            });
            continue;
        }
        ins.npre = pending.len() as u8;
        for (slot, mut p) in ins.pre.iter_mut().zip(pending.drain(..)) {
            // An operand that is a pre-load's value reads its place register,
            // which holds the same word.
            let (mut a, mut b) = (false, false);
            if reads_a(ins.code) && ins.a == p.d {
                (ins.a, a) = (p.reg, true);
            }
            if reads_b(ins.code) && ins.b == p.d {
                (ins.b, b) = (p.reg, true);
            }
            let read_here = u32::from(a) + u32::from(b);
            if readers.get(p.d as usize) == Some(&read_here) && !p.mirror {
                p.keep = false;
            }
            *slot = p;
        }
        if ins.code == Code::Store {
            ins.code = Code::StoreR;
            (ins.d, ins.b) = reg(ins.d)?;
        }
        let next = |k: usize, c: Code| ops.get(k).filter(|o| o.code == c).copied();
        if ins.produces() {
            if let Some(st) = next(k, Code::Store).filter(|o| o.a == ins.d) {
                k += 1;
                let (to, bit) = reg(st.d)?;
                ins.then = match next(k, Code::Jump) {
                    Some(j) => {
                        k += 1;
                        Then::StoreJump(to, bit, j.d)
                    }
                    None => Then::Store(to, bit),
                };
            } else if let Some(br) = next(k, Code::Branch).filter(|o| o.a == ins.d) {
                k += 1;
                ins.then = Then::Branch(br.b, br.d);
            } else if let Some(j) = next(k, Code::Jump) {
                k += 1;
                ins.then = Then::Jump(j.d);
            }
        } else if ins.code == Code::StoreR
            && let Some(j) = next(k, Code::Jump)
        {
            k += 1;
            ins.then = Then::Jump(j.d);
        }
        code.push(ins);
    }
    flush(&mut pending, code);
    Some(Seg {
        start,
        end: u32::try_from(code.len()).ok()?,
        j0,
        steps: u32::try_from(n).ok()?,
        lp: u32::MAX,
    })
}

/// Where control goes after an instruction.
pub(super) enum Flow {
    /// The next operation of the block.
    Next,
    /// The start of a block.
    Block(usize),
}

/// The register count of a small function's fixed register file.
pub(super) const SMALL: usize = 64;

/// A register file: a slice, or for a function with at most [`SMALL`]
/// registers a fixed array, whose accesses need no bounds check (every
/// register number of such a function is below [`SMALL`]).
pub(super) trait File {
    /// Reads a register (zero when out of range).
    fn rd(&self, i: u32) -> u64;
    /// Writes a register; false when out of range.
    fn wr(&mut self, i: u32, w: u64) -> bool;
}

impl File for [u64; SMALL] {
    #[inline(always)]
    fn rd(&self, i: u32) -> u64 {
        self[i as usize % SMALL]
    }
    #[inline(always)]
    fn wr(&mut self, i: u32, w: u64) -> bool {
        self[i as usize % SMALL] = w;
        true
    }
}

impl File for [u64] {
    #[inline(always)]
    fn rd(&self, i: u32) -> u64 {
        self.get(i as usize).copied().unwrap_or(0)
    }
    #[inline(always)]
    fn wr(&mut self, i: u32, w: u64) -> bool {
        match self.get_mut(i as usize) {
            Some(slot) => {
                *slot = w;
                true
            }
            None => false,
        }
    }
}

/// One frame's storage as the instructions see it.
pub(super) struct Regs<'f, R: File + ?Sized> {
    /// Register words (SSA words, constants, then place registers).
    pub r: &'f mut R,
    /// SSA value slots, by flat operation.
    pub ssa: &'f mut [Option<Value>],
    /// Owned-path slots.
    pub places: &'f mut [Option<Value>],
    /// The register of place register zero.
    pub pbase: u32,
    /// Bit `k`: place register `k` holds its place's scalar word. Fused code
    /// keeps the Copy scalar places it loads and stores in registers while a
    /// chain runs: the first load of one reads its slot (faulting `Internal`
    /// when the slot holds no scalar, as the slot load does), a store sets
    /// the bit, and every valid register is written back to its slot when
    /// the chain stops ([`store_places`]).
    pub valid: u64,
}

/// Writes every valid place register back to its slot (place register `k`
/// is place `fplaces[k]`).
#[inline(always)]
pub(super) fn store_places<R: File + ?Sized>(f: &mut Regs<'_, R>, fplaces: &[u32]) {
    let mut valid = f.valid;
    while valid != 0 {
        let k = valid.trailing_zeros();
        valid &= valid - 1;
        if let Some(slot) = fplaces
            .get(k as usize)
            .and_then(|&pi| f.places.get_mut(pi as usize))
        {
            put(slot, f.r.rd(f.pbase.wrapping_add(k)));
        }
    }
    f.valid = 0;
}

/// Reads place register `reg` (valid bit `bit`) of place `place`, from the
/// slot when the register does not hold it yet.
#[inline(always)]
fn load_reg<R: File + ?Sized>(
    r: &mut R,
    places: &[Option<Value>],
    valid: &mut u64,
    reg: u32,
    bit: u64,
    place: u32,
) -> Option<u64> {
    if *valid & bit != 0 {
        return Some(r.rd(reg));
    }
    let w = load_slot(places, place)?;
    if r.wr(reg, w) {
        *valid |= bit;
    }
    Some(w)
}

/// The scalar word of place `place`'s slot (once per chain and place).
#[cold]
#[inline(never)]
fn load_slot(places: &[Option<Value>], place: u32) -> Option<u64> {
    match places.get(place as usize) {
        Some(Some(Value::Scalar(w))) => Some(*w),
        _ => None,
    }
}

/// Executes one instruction. Register and slot numbers were bounded when
/// the function was prepared; a number out of range reads zero and faults
/// `Internal` on a write, never panics. A fault carries the ordinal of the
/// operation that faulted.
#[inline(always)]
pub(super) fn step<R: File + ?Sized>(
    ins: &Ins,
    f: &mut Regs<'_, R>,
    profile: NumericProfile,
) -> Result<Flow, (u32, FaultKind)> {
    let r = &mut *f.r;
    if ins.npre > 0 {
        preload(&ins.pre[0], r, f.ssa, f.places, &mut f.valid)?;
        if ins.npre > 1 {
            preload(&ins.pre[1], r, f.ssa, f.places, &mut f.valid)?;
        }
    }
    let rd = |r: &R, i: u32| r.rd(i);
    // Operands are read in the arms that use them.
    macro_rules! x {
        () => {
            rd(r, ins.a)
        };
    }
    macro_rules! xy {
        (|$x:ident, $y:ident| $e:expr) => {{
            let ($x, $y) = (rd(r, ins.a), rd(r, ins.b));
            $e
        }};
    }
    let checked = |(w, over): (u64, bool)| {
        if over {
            Err((ins.at, FaultKind::Overflow))
        } else {
            Ok(w)
        }
    };
    let signed = |(w, over): (i64, bool)| (w as u64, over);
    let w = match ins.code {
        Code::Slow => return Err((ins.at, FaultKind::Internal)),
        Code::Const => x!(),
        Code::Load => match f.places.get(ins.a as usize) {
            Some(Some(Value::Scalar(w))) => *w,
            _ => return Err((ins.at, FaultKind::Internal)),
        },
        Code::Store => {
            let x = x!();
            return match f.places.get_mut(ins.d as usize) {
                Some(slot) => {
                    put(slot, x);
                    Ok(Flow::Next)
                }
                None => Err((ins.at, FaultKind::Internal)),
            };
        }
        Code::LoadR => match load_reg(r, f.places, &mut f.valid, ins.a, 1 << (ins.b % 64), ins.tag)
        {
            Some(w) => w,
            None => return Err((ins.at, FaultKind::Internal)),
        },
        Code::StoreR => {
            let x = x!();
            store_reg(f, ins.d, ins.b, x, ins.at)?;
            return then(ins.then, f, x, ins.at);
        }
        Code::AddS => xy!(|x, y| checked(signed((x as i64).overflowing_add(y as i64)))?),
        Code::SubS => xy!(|x, y| checked(signed((x as i64).overflowing_sub(y as i64)))?),
        Code::MulS => xy!(|x, y| checked(signed((x as i64).overflowing_mul(y as i64)))?),
        Code::AddU => xy!(|x, y| checked(x.overflowing_add(y))?),
        Code::SubU => xy!(|x, y| checked(x.overflowing_sub(y))?),
        Code::MulU => xy!(|x, y| checked(x.overflowing_mul(y))?),
        Code::AddW => xy!(|x, y| x.wrapping_add(y)),
        Code::SubW => xy!(|x, y| x.wrapping_sub(y)),
        Code::MulW => xy!(|x, y| x.wrapping_mul(y)),
        Code::Arith => {
            xy!(|x, y| numeric::arith(ins.tag, ins.kind, profile, x, y).map_err(|k| (ins.at, k))?)
        }
        Code::Eq => xy!(|x, y| u64::from(x == y)),
        Code::Ne => xy!(|x, y| u64::from(x != y)),
        Code::LtS => xy!(|x, y| u64::from((x as i64) < y as i64)),
        Code::LeS => xy!(|x, y| u64::from(x as i64 <= y as i64)),
        Code::GtS => xy!(|x, y| u64::from(x as i64 > y as i64)),
        Code::GeS => xy!(|x, y| u64::from(x as i64 >= y as i64)),
        Code::LtU => xy!(|x, y| u64::from(x < y)),
        Code::LeU => xy!(|x, y| u64::from(x <= y)),
        Code::GtU => xy!(|x, y| u64::from(x > y)),
        Code::GeU => xy!(|x, y| u64::from(x >= y)),
        Code::Jump => return Ok(Flow::Block(ins.d as usize)),
        Code::Branch => {
            let target = if x!() != 0 { ins.b } else { ins.d };
            return Ok(Flow::Block(target as usize));
        }
    };
    write(r, f.ssa, ins.d, ins.mirror, w).map_err(|k| (ins.at, k))?;
    then(ins.then, f, w, ins.at)
}

/// Executes a fused LOAD_LOCAL from place register `p.place`.
#[inline(always)]
fn preload<R: File + ?Sized>(
    p: &Pre,
    r: &mut R,
    ssa: &mut [Option<Value>],
    places: &[Option<Value>],
    valid: &mut u64,
) -> Result<(), (u32, FaultKind)> {
    let Some(w) = load_reg(r, places, valid, p.reg, p.bit, p.place) else {
        return Err((p.at, FaultKind::Internal));
    };
    if !p.keep {
        return Ok(());
    }
    write(r, ssa, p.d, p.mirror, w).map_err(|k| (p.at, k))
}

/// Writes result `w` to register `d` (and its SSA slot when mirrored).
#[inline(always)]
fn write<R: File + ?Sized>(
    r: &mut R,
    ssa: &mut [Option<Value>],
    d: u32,
    mirror: bool,
    w: u64,
) -> Result<(), FaultKind> {
    if !r.wr(d, w) {
        return Err(FaultKind::Internal);
    }
    if mirror {
        match ssa.get_mut(d as usize) {
            Some(slot) => put(slot, w),
            None => return Err(FaultKind::Internal),
        }
    }
    Ok(())
}

/// Stores `w` into register `reg`, place register `k`, for the operation at
/// ordinal `at`.
#[inline(always)]
fn store_reg<R: File + ?Sized>(
    f: &mut Regs<'_, R>,
    reg: u32,
    k: u32,
    w: u64,
    at: u32,
) -> Result<(), (u32, FaultKind)> {
    if !f.r.wr(reg, w) {
        return Err((at, FaultKind::Internal));
    }
    f.valid |= 1u64 << (k % 64);
    Ok(())
}

/// The fused continuation after result `w` of the operation at ordinal
/// `at` (a fused STORE_LOCAL is the next operation).
#[inline(always)]
fn then<R: File + ?Sized>(
    t: Then,
    f: &mut Regs<'_, R>,
    w: u64,
    at: u32,
) -> Result<Flow, (u32, FaultKind)> {
    match t {
        Then::Next => Ok(Flow::Next),
        Then::Store(reg, k) => store_reg(f, reg, k, w, at + 1).map(|()| Flow::Next),
        Then::Jump(b) => Ok(Flow::Block(b as usize)),
        Then::StoreJump(reg, k, b) => {
            store_reg(f, reg, k, w, at + 1).map(|()| Flow::Block(b as usize))
        }
        Then::Branch(t, e) => {
            let target = if w != 0 { t } else { e };
            Ok(Flow::Block(target as usize))
        }
    }
}
