//! Generated GLSL names and literal spellings (spec sections 12.2, 12.3).
//!
//! No identifier from the input reaches the GLSL: every function, register,
//! parameter, record, field, block and binding name is a `vpl_` prefix plus
//! a number derived from list positions, so display names cannot inject
//! code and cannot collide with GLSL keywords or built-ins.

use std::fmt::Write as _;

/// Appends the decimal digits of `n` (faster than `write!` on hot paths).
pub fn push_decimal(out: &mut String, mut n: u64) {
    // One digit is the commonest case (registers and functions of a small function).
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
        return;
    }
    let mut buffer = [0u8; 20];
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in &buffer[at..] {
        out.push(digit as char);
    }
}

/// `vpl_f<index>`: a function, by its position in the stage's list.
pub fn function(out: &mut String, index: usize) {
    out.push_str("vpl_f");
    push_decimal(out, index as u64);
}

/// `vpl_r<index>`: a register, by its numeric ID.
pub fn register(out: &mut String, index: u64) {
    out.push_str("vpl_r");
    push_decimal(out, index);
}

/// `vpl_p<slot>`: a parameter, by its slot.
pub fn parameter(out: &mut String, slot: usize) {
    out.push_str("vpl_p");
    push_decimal(out, slot as u64);
}

/// `vpl_u<slot>`: a uniform (or a block instance), by its uniform slot.
pub fn uniform(slot: usize) -> String {
    format!("vpl_u{slot}")
}

/// `vpl_Block<slot>`: the interface block of a record uniform.
pub fn block(slot: usize) -> String {
    format!("vpl_Block{slot}")
}

/// `vpl_R<k>`: the k-th record declaration in type-table order.
pub fn record(ordinal: usize) -> String {
    format!("vpl_R{ordinal}")
}

/// `vpl_m<i>`: the i-th field of a record.
pub fn field(index: usize) -> String {
    format!("vpl_m{index}")
}

/// `vpl_attribute<location>`: a vertex input.
pub fn attribute(location: i32) -> String {
    format!("vpl_attribute{location}")
}

/// `vpl_varying<location>`: a linked vertex output / fragment input.
pub fn varying(location: i32) -> String {
    format!("vpl_varying{location}")
}

/// `vpl_output<location>`: a fragment output.
pub fn output(location: i32) -> String {
    format!("vpl_output{location}")
}

/// The function-local block selector of dispatch lowering.
pub const SELECTOR: &str = "vpl_block";

/// The never-assigned local returned by unreachable fallback code of
/// non-void functions.
pub const FALLBACK: &str = "vpl_fallback";

/// An `int` literal. Negative values are parenthesized; `i32::MIN` is
/// spelled `(-2147483647 - 1)` because `2147483648` is out of range.
pub fn int_literal(out: &mut String, value: i32) {
    if value == i32::MIN {
        out.push_str("(-2147483647 - 1)");
    } else if value < 0 {
        out.push_str("(-");
        push_decimal(out, u64::from(value.unsigned_abs()));
        out.push(')');
    } else {
        push_decimal(out, value as u64);
    }
}

/// A finite `float` literal with nine significant digits (enough to name
/// every binary32 value exactly), locale-independent, keeping the sign of
/// `-0.0`: the exact value rounded to nine digits, spelled like C's
/// `%.8e` without the exponent's padding. Negative values are
/// parenthesized.
pub fn float_literal(out: &mut String, value: f32) {
    let negative = value.is_sign_negative();
    if negative {
        out.push_str("(-");
    }
    let magnitude = value.abs();
    if !exact_short_literal(out, magnitude) {
        let _ = write!(out, "{magnitude:.8e}");
    }
    if negative {
        out.push(')');
    }
}

/// Fast path of [`float_literal`]: when the shortest round-trip decimal of
/// `value` equals the binary32 value exactly (0.5, 1.25, 16777216, ...),
/// padding it with zeros to nine digits is the exact nine-digit spelling,
/// and no arbitrary-precision rounding is needed. Returns false (writing
/// nothing) when the shortest decimal is not exact or the exactness check
/// does not fit in 128 bits.
fn exact_short_literal(out: &mut String, value: f32) -> bool {
    if value == 0.0 {
        out.push_str("0.00000000e0");
        return true;
    }
    let mut shortest = String::with_capacity(24);
    let _ = write!(shortest, "{value:e}");
    let Some((mantissa, exponent)) = shortest.split_once('e') else {
        return false;
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return false;
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if digits.len() > 9 {
        return false;
    }
    let Ok(d) = digits.parse::<u128>() else {
        return false;
    };
    // shortest = d * 10^q
    let q = exponent - (digits.len() as i32 - 1);
    // value = m * 2^e
    let bits = value.to_bits();
    let biased = ((bits >> 23) & 0xff) as i32;
    let fraction = u128::from(bits & 0x7f_ffff);
    let (m, e) = if biased == 0 {
        (fraction, -149)
    } else {
        (fraction | 0x80_0000, biased - 150)
    };
    let pow = |base: u128, n: i32| base.checked_pow(n.max(0) as u32);
    let lhs = pow(10, q)
        .and_then(|p| d.checked_mul(p))
        .and_then(|x| pow(2, -e).and_then(|p| x.checked_mul(p)));
    let rhs = pow(2, e)
        .and_then(|p| m.checked_mul(p))
        .and_then(|x| pow(10, -q).and_then(|p| x.checked_mul(p)));
    match (lhs, rhs) {
        (Some(l), Some(r)) if l == r => {
            let mut padded = digits.into_bytes();
            padded.resize(9, b'0');
            out.push(padded[0] as char);
            out.push('.');
            // ASCII digits only.
            out.push_str(std::str::from_utf8(&padded[1..]).unwrap_or("00000000"));
            let _ = write!(out, "e{exponent}");
            true
        }
        _ => false,
    }
}

/// A per-compilation memo of float spellings (shaders repeat their
/// constants), bounded so hostile input cannot grow it without limit.
#[derive(Default)]
pub struct FloatLiterals {
    spelled: std::collections::HashMap<u32, Box<str>, BuildBitsHasher>,
}

impl FloatLiterals {
    const CAPACITY: usize = 1 << 16;

    /// Appends the spelling of `value` (see [`float_literal`]).
    pub fn push(&mut self, out: &mut String, value: f32) {
        let bits = value.to_bits();
        if let Some(s) = self.spelled.get(&bits) {
            out.push_str(s);
            return;
        }
        let start = out.len();
        float_literal(out, value);
        if self.spelled.len() < Self::CAPACITY {
            self.spelled.insert(bits, out[start..].into());
        }
    }
}

/// A multiplicative hasher for `u32` keys (the memo's keys are float bits).
#[derive(Default, Clone, Copy)]
pub struct BuildBitsHasher;

/// See [`BuildBitsHasher`].
#[derive(Default)]
pub struct BitsHasher(u64);

impl std::hash::BuildHasher for BuildBitsHasher {
    type Hasher = BitsHasher;
    fn build_hasher(&self) -> BitsHasher {
        BitsHasher(0)
    }
}

impl std::hash::Hasher for BitsHasher {
    fn finish(&self) -> u64 {
        // A product's low bits depend only on the key's low bits, which are
        // all zero for short float constants: fold the mixed high half in.
        self.0 ^ (self.0 >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (u64::from(n) ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_match_display() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::from(u32::MAX), u64::MAX] {
            let mut out = String::from("vpl_r");
            push_decimal(&mut out, n);
            assert_eq!(out, format!("vpl_r{n}"));
        }
    }

    fn float(v: f32) -> String {
        let mut s = String::new();
        float_literal(&mut s, v);
        s
    }

    fn parse_back(s: &str) -> f32 {
        s.trim_matches(|c| c == '(' || c == ')').parse().unwrap()
    }

    #[test]
    fn float_literals_keep_binary32_bits_and_negative_zero() {
        assert_eq!(float(1.0), "1.00000000e0");
        assert_eq!(float(-0.0), "(-0.00000000e0)");
        assert_eq!(float(0.1), "1.00000001e-1");
        for v in [
            0.1f32,
            1.0 / 3.0,
            f32::MAX,
            f32::MIN_POSITIVE,
            1.0e-45,
            -123456.79,
            16777217.0,
            -0.0,
        ] {
            assert_eq!(parse_back(&float(v)).to_bits(), v.to_bits(), "{v}");
        }
    }

    #[test]
    fn float_literals_round_trip_for_many_bit_patterns() {
        let mut state = 0x2545_f491u32;
        for _ in 0..20_000 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = f32::from_bits(state % 0x7f80_0000);
            for v in [v, -v] {
                let spelled = float(v);
                assert_eq!(parse_back(&spelled).to_bits(), v.to_bits());
                let exact = format!("{:.8e}", v.abs());
                assert!(spelled.contains(&exact), "{spelled} vs {exact}");
            }
        }
    }

    #[test]
    fn the_fast_path_equals_exact_rounding() {
        let mut values: Vec<f32> = (0..2000).map(|k| k as f32 * 0.125).collect();
        values.extend((0..200).map(|k| (k as f32 - 100.0) * 1.0e-3));
        values.extend([
            16777216.0,
            2147483648.0,
            3.0e38,
            1.0e-38,
            1.5e-45,
            0.1,
            0.2,
            0.3,
        ]);
        for v in values {
            let mut fast = String::new();
            let mut slow = String::new();
            if exact_short_literal(&mut fast, v.abs()) {
                let _ = write!(slow, "{:.8e}", v.abs());
                assert_eq!(fast, slow, "{v}");
            }
        }
        let mut s = String::new();
        assert!(exact_short_literal(&mut s, 0.125));
        assert!(!exact_short_literal(&mut String::new(), 0.1));
    }

    #[test]
    fn int_literals_avoid_out_of_range_spellings() {
        let mut s = String::new();
        for v in [0, 7, -7, i32::MAX, i32::MIN] {
            int_literal(&mut s, v);
            s.push(' ');
        }
        assert_eq!(s, "0 7 (-7) 2147483647 (-2147483647 - 1) ");
    }
}
