//! Fixed-width scalar arithmetic under the numeric profiles: exact and
//! approximate fault on an out-of-range result, modular wraps at the
//! declared width; division, remainder, comparison and shifts use the
//! declared signedness.

use super::fault::FaultKind;
use crate::model::{Block, Function, NumericProfile, Op, OpRef, Operand, ScalarKind, Type, tag};

/// The bit width of a scalar kind (Bool: 1).
pub fn width(k: ScalarKind) -> u32 {
    use ScalarKind::*;
    match k {
        Bool => 1,
        Byte | Int8 | UInt8 => 8,
        Int16 | UInt16 => 16,
        Int32 | UInt32 => 32,
        Int64 | UInt64 | Index => 64,
    }
}

/// The scalar kind of an operation's first operand (a comparison's
/// operand kind): its constant's kind, its producer's or its place's scalar
/// type. `blocks` are the body's blocks in ID order.
pub fn operand_kind(f: &Function, blocks: &[&Block], op: &Op) -> Option<ScalarKind> {
    match op.operands.first() {
        Some(Operand::Const(c)) => Some(c.kind),
        Some(Operand::Value(OpRef::Flow { block, ordinal })) => blocks
            .get(*block as usize)
            .and_then(|b| b.ops.get(*ordinal as usize))
            .and_then(|o| match &o.result {
                Some(Type::Scalar(k)) => Some(*k),
                _ => None,
            }),
        Some(Operand::Place(k)) => {
            f.body
                .paths
                .iter()
                .find(|x| &x.key == k)
                .and_then(|x| match x.ty {
                    Type::Scalar(k) => Some(k),
                    _ => None,
                })
        }
        _ => None,
    }
}

/// The canonical word of `bits` (unsigned bits at the kind's width).
pub fn canon(k: ScalarKind, bits: u64) -> u64 {
    let w = width(k);
    if w == 64 {
        return bits;
    }
    let mask = (1u64 << w) - 1;
    let b = bits & mask;
    if k.is_signed() && b >> (w - 1) & 1 == 1 {
        b | !mask
    } else {
        b
    }
}

fn to_i128(k: ScalarKind, w: u64) -> i128 {
    if k.is_signed() {
        i128::from(w as i64)
    } else {
        i128::from(w)
    }
}

fn range(k: ScalarKind) -> (i128, i128) {
    let w = width(k);
    if k.is_signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

#[inline]
fn fit(k: ScalarKind, p: NumericProfile, v: i128) -> Result<u64, FaultKind> {
    let (lo, hi) = range(k);
    if v < lo || v > hi {
        if p == NumericProfile::Modular {
            return Ok(canon(k, v as u64));
        }
        return Err(FaultKind::Overflow);
    }
    Ok(canon(k, v as u64))
}

/// Applies arithmetic tag `t` (NEG, ADD..REM, bit ops, shifts) at kind `k`.
#[inline]
pub fn arith(t: u32, k: ScalarKind, p: NumericProfile, a: u64, b: u64) -> Result<u64, FaultKind> {
    // 64-bit add/subtract/multiply: the machine's overflow flag is exactly
    // the range check, and the wrapped word is exactly the modular result.
    if width(k) == 64 && matches!(t, tag::ADD | tag::SUB | tag::MUL) {
        let (r, over) = if k.is_signed() {
            let (x, y) = (a as i64, b as i64);
            let (r, o) = match t {
                tag::ADD => x.overflowing_add(y),
                tag::SUB => x.overflowing_sub(y),
                _ => x.overflowing_mul(y),
            };
            (r as u64, o)
        } else {
            match t {
                tag::ADD => a.overflowing_add(b),
                tag::SUB => a.overflowing_sub(b),
                _ => a.overflowing_mul(b),
            }
        };
        if over && p != NumericProfile::Modular {
            return Err(FaultKind::Overflow);
        }
        return Ok(r);
    }
    let (x, y) = (to_i128(k, a), to_i128(k, b));
    match t {
        tag::NEG => fit(k, p, -x),
        tag::ADD => fit(k, p, x + y),
        tag::SUB => fit(k, p, x - y),
        tag::MUL => fit(k, p, x * y),
        tag::DIV | tag::REM => {
            if y == 0 {
                return Err(FaultKind::DivideByZero);
            }
            // Truncating division; MIN / -1 overflows (wraps under modular).
            let q = x / y;
            if t == tag::DIV {
                fit(k, p, q)
            } else {
                fit(k, p, x - q * y).or(Ok(0))
            }
        }
        tag::BIT_AND => Ok(canon(k, a & b)),
        tag::BIT_OR => Ok(canon(k, a | b)),
        tag::BIT_XOR => Ok(canon(k, a ^ b)),
        tag::SHIFT_LEFT | tag::SHIFT_RIGHT => {
            let w = width(k);
            if b >= u64::from(w) {
                if p == NumericProfile::Modular {
                    // Every bit shifted out: zero, or the sign fill.
                    return Ok(
                        if t == tag::SHIFT_RIGHT && k.is_signed() && (a as i64) < 0 {
                            canon(k, u64::MAX)
                        } else {
                            0
                        },
                    );
                }
                return Err(FaultKind::ShiftRange);
            }
            if t == tag::SHIFT_LEFT {
                fit(k, p, x << b)
            } else if k.is_signed() {
                Ok(canon(k, ((a as i64) >> b) as u64))
            } else {
                Ok(canon(k, a >> b))
            }
        }
        _ => Err(FaultKind::Tag),
    }
}

/// Comparison tag `t` (EQ, NE, LT, LE, GT, GE) at kind `k`.
pub fn compare(t: u32, k: ScalarKind, a: u64, b: u64) -> bool {
    let (x, y) = (to_i128(k, a), to_i128(k, b));
    match t {
        tag::EQ => x == y,
        tag::NE => x != y,
        tag::LT => x < y,
        tag::LE => x <= y,
        tag::GT => x > y,
        _ => x >= y,
    }
}

/// The flow operation a contract arithmetic operation (contract tags 5 and
/// 7–16) or comparison (17–22) computes; `None` for the other tags.
pub fn contract_flow_tag(contract_tag: u32) -> Option<u32> {
    Some(match contract_tag {
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
        16 => tag::BIT_OR,
        17 => tag::EQ,
        18 => tag::NE,
        19 => tag::LT,
        20 => tag::LE,
        21 => tag::GT,
        22 => tag::GE,
        _ => return None,
    })
}

/// The kind a contract comparison of `a` and `b` in clause `e` of `f`
/// compares at: a constant operand's kind, else the first operand's exact
/// scalar type (`UInt64` when it has none). `self_type` is the type of
/// `f`'s declaration.
pub fn contract_compare_kind(
    self_type: &Type,
    f: &Function,
    e: &crate::model::Expr,
    a: &crate::model::ContractOperand,
    b: &crate::model::ContractOperand,
) -> ScalarKind {
    use crate::model::{ContractOperand, ReceiverKind};
    match (a, b) {
        (ContractOperand::Const(c), _) | (_, ContractOperand::Const(c)) => c.kind,
        (o, _) => {
            let recv = crate::catalog::receiver_type(self_type, f.receiver)
                .filter(|_| !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None));
            match crate::ids::contract_operand_type(f, recv.as_ref(), e, o) {
                Ok(Type::Scalar(k)) => k,
                _ => ScalarKind::UInt64,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The i128 reference for 64-bit add/sub/mul under every profile.
    fn reference(
        t: u32,
        k: ScalarKind,
        p: NumericProfile,
        a: u64,
        b: u64,
    ) -> Result<u64, FaultKind> {
        let (x, y) = (to_i128(k, a), to_i128(k, b));
        let v = match t {
            tag::ADD => x.checked_add(y),
            tag::SUB => x.checked_sub(y),
            _ => x.checked_mul(y),
        };
        match v {
            Some(v) => fit(k, p, v),
            // Beyond i128: certainly out of the 64-bit range.
            None if p == NumericProfile::Modular => Ok(a.wrapping_mul(b)),
            None => Err(FaultKind::Overflow),
        }
    }

    #[test]
    fn the_64_bit_fast_path_matches_the_i128_reference() {
        let edge = [
            0u64,
            1,
            2,
            3,
            u64::MAX,
            u64::MAX - 1,
            i64::MAX as u64,
            i64::MIN as u64,
            (i64::MAX as u64) + 1,
            1 << 32,
            (1 << 32) - 1,
            0xdead_beef_dead_beef,
        ];
        for k in [ScalarKind::Int64, ScalarKind::UInt64, ScalarKind::Index] {
            for p in [
                NumericProfile::Exact,
                NumericProfile::Modular,
                NumericProfile::Approximate,
            ] {
                for t in [tag::ADD, tag::SUB, tag::MUL] {
                    for &a in &edge {
                        for &b in &edge {
                            assert_eq!(
                                arith(t, k, p, a, b),
                                reference(t, k, p, a, b),
                                "{t} {k:?} {p:?} {a:#x} {b:#x}"
                            );
                        }
                    }
                }
            }
        }
    }
}
