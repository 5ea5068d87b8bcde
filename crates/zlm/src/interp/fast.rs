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
//! views never disagree.

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

/// One pre-decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ins {
    pub code: Code,
    /// Whether the result is also written to the operation's SSA value slot
    /// (some general-path operation reads it).
    pub mirror: bool,
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
    }
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

/// Where control goes after an instruction.
pub(super) enum Flow {
    /// The next operation of the block.
    Next,
    /// The start of a block.
    Block(usize),
}

/// One frame's storage as the instructions see it.
pub(super) struct Regs<'f> {
    /// Register words (SSA words, then constants).
    pub r: &'f mut [u64],
    /// SSA value slots, by flat operation.
    pub ssa: &'f mut [Option<Value>],
    /// Owned-path slots.
    pub places: &'f mut [Option<Value>],
}

/// Executes one instruction. Register and slot numbers were bounded when
/// the function was prepared; a number out of range reads zero and faults
/// `Internal` on a write, never panics.
#[inline(always)]
pub(super) fn step(
    ins: &Ins,
    f: &mut Regs<'_>,
    profile: NumericProfile,
) -> Result<Flow, FaultKind> {
    let r = &mut *f.r;
    let rd = |r: &[u64], i: u32| r.get(i as usize).copied().unwrap_or(0);
    let (x, y) = (rd(r, ins.a), rd(r, ins.b));
    let checked = |(w, over): (u64, bool)| {
        if over {
            Err(FaultKind::Overflow)
        } else {
            Ok(w)
        }
    };
    let signed = |(w, over): (i64, bool)| (w as u64, over);
    let w = match ins.code {
        Code::Slow => return Err(FaultKind::Internal),
        Code::Const => x,
        Code::Load => match f.places.get(ins.a as usize) {
            Some(Some(Value::Scalar(w))) => *w,
            _ => return Err(FaultKind::Internal),
        },
        Code::Store => {
            return match f.places.get_mut(ins.d as usize) {
                Some(slot) => {
                    put(slot, x);
                    Ok(Flow::Next)
                }
                None => Err(FaultKind::Internal),
            };
        }
        Code::AddS => checked(signed((x as i64).overflowing_add(y as i64)))?,
        Code::SubS => checked(signed((x as i64).overflowing_sub(y as i64)))?,
        Code::MulS => checked(signed((x as i64).overflowing_mul(y as i64)))?,
        Code::AddU => checked(x.overflowing_add(y))?,
        Code::SubU => checked(x.overflowing_sub(y))?,
        Code::MulU => checked(x.overflowing_mul(y))?,
        Code::AddW => x.wrapping_add(y),
        Code::SubW => x.wrapping_sub(y),
        Code::MulW => x.wrapping_mul(y),
        Code::Arith => numeric::arith(ins.tag, ins.kind, profile, x, y)?,
        Code::Eq => u64::from(x == y),
        Code::Ne => u64::from(x != y),
        Code::LtS => u64::from((x as i64) < y as i64),
        Code::LeS => u64::from(x as i64 <= y as i64),
        Code::GtS => u64::from(x as i64 > y as i64),
        Code::GeS => u64::from(x as i64 >= y as i64),
        Code::LtU => u64::from(x < y),
        Code::LeU => u64::from(x <= y),
        Code::GtU => u64::from(x > y),
        Code::GeU => u64::from(x >= y),
        Code::Jump => return Ok(Flow::Block(ins.d as usize)),
        Code::Branch => {
            let target = if x != 0 { ins.b } else { ins.d };
            return Ok(Flow::Block(target as usize));
        }
    };
    match r.get_mut(ins.d as usize) {
        Some(slot) => *slot = w,
        None => return Err(FaultKind::Internal),
    }
    if ins.mirror {
        match f.ssa.get_mut(ins.d as usize) {
            Some(slot) => put(slot, w),
            None => return Err(FaultKind::Internal),
        }
    }
    Ok(Flow::Next)
}
