//! Generated GLSL names and literal spellings (spec sections 12.2, 12.3).
//!
//! No identifier from the input reaches the GLSL: every function, register,
//! parameter, record, field, block and binding name is a `vpl_` prefix plus
//! a number derived from list positions, so display names cannot inject
//! code and cannot collide with GLSL keywords or built-ins.

use std::fmt::Write as _;

/// `vpl_f<index>`: a function, by its position in the stage's list.
pub fn function(out: &mut String, index: usize) {
    let _ = write!(out, "vpl_f{index}");
}

/// `vpl_r<index>`: a register, by its numeric ID.
pub fn register(out: &mut String, index: u64) {
    let _ = write!(out, "vpl_r{index}");
}

/// `vpl_p<slot>`: a parameter, by its slot.
pub fn parameter(out: &mut String, slot: usize) {
    let _ = write!(out, "vpl_p{slot}");
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
        let _ = write!(out, "({value})");
    } else {
        let _ = write!(out, "{value}");
    }
}

/// A finite `float` literal with nine significant digits (enough to name
/// every binary32 value exactly), locale-independent, keeping the sign of
/// `-0.0`. Negative values are parenthesized.
pub fn float_literal(out: &mut String, value: f32) {
    if value.is_sign_negative() {
        let _ = write!(out, "({value:.8e})");
    } else {
        let _ = write!(out, "{value:.8e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                assert_eq!(parse_back(&float(v)).to_bits(), v.to_bits());
            }
        }
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
