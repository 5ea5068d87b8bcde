//! Fixed-width scalar arithmetic under the numeric profiles: exact and
//! approximate fault on an out-of-range result, modular wraps at the
//! declared width; division, remainder, comparison and shifts use the
//! declared signedness.

use super::FaultKind;
use crate::model::{NumericProfile, ScalarKind, tag};

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
