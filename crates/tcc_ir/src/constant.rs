//! Constants: undefined, null, boolean, binary64 number and string.
//!
//! Encoded as tagged objects `{"t": tag, "v": payload}`; `undefined` and
//! `null` have no `v`. Finite numbers (including `-0`) are JSON numbers;
//! NaN and the infinities are the strings `"NaN"`, `"Infinity"` and
//! `"-Infinity"` under the same `number` tag.

use std::fmt;

/// A constant operand of `LoadConst` (and of `param_defaults`).
#[derive(Debug, Clone)]
pub enum Constant {
    /// `{"t":"undefined"}`
    Undefined,
    /// `{"t":"null"}`
    Null,
    /// `{"t":"bool","v":true}`
    Bool(bool),
    /// `{"t":"number","v":1.5}`; any binary64, including -0, NaN and ±Infinity.
    Number(f64),
    /// `{"t":"string","v":"…"}`
    String(String),
}

impl Constant {
    /// The wire tag (`t`) of this constant.
    pub fn tag(&self) -> &'static str {
        match self {
            Constant::Undefined => "undefined",
            Constant::Null => "null",
            Constant::Bool(_) => "bool",
            Constant::Number(_) => "number",
            Constant::String(_) => "string",
        }
    }
}

/// Equality is encoding equality: numbers compare bit for bit (so `-0 != 0`),
/// except that every NaN equals every NaN (all NaNs encode as `"NaN"`).
impl PartialEq for Constant {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Constant::Undefined, Constant::Undefined) | (Constant::Null, Constant::Null) => true,
            (Constant::Bool(a), Constant::Bool(b)) => a == b,
            (Constant::Number(a), Constant::Number(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Constant::String(a), Constant::String(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Constant {}

/// Human-readable form used by listings: `undefined`, `null`, `true`,
/// `-0`, `NaN`, `"text"` (string escaped as in Rust's `Debug`).
impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Constant::Undefined => f.write_str("undefined"),
            Constant::Null => f.write_str("null"),
            Constant::Bool(b) => write!(f, "{b}"),
            Constant::Number(n) => f.write_str(&number_text(*n)),
            Constant::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// The canonical spelling of a binary64 number: Rust's `Display` for finite
/// values (no exponent, `-0` kept), `NaN`, `Infinity`, `-Infinity` otherwise.
pub fn number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_string()
    } else if n == f64::INFINITY {
        "Infinity".to_string()
    } else if n == f64::NEG_INFINITY {
        "-Infinity".to_string()
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_tags() {
        let cases = [
            (Constant::Undefined, "undefined", "undefined"),
            (Constant::Null, "null", "null"),
            (Constant::Bool(true), "bool", "true"),
            (Constant::Number(-0.0), "number", "-0"),
            (Constant::Number(f64::NAN), "number", "NaN"),
            (Constant::Number(f64::NEG_INFINITY), "number", "-Infinity"),
            (Constant::Number(2.5), "number", "2.5"),
            (Constant::String("a\"b".into()), "string", "\"a\\\"b\""),
        ];
        for (c, tag, text) in cases {
            assert_eq!(c.tag(), tag);
            assert_eq!(c.to_string(), text);
        }
    }

    #[test]
    fn equality_is_encoding_equality() {
        assert_ne!(Constant::Number(0.0), Constant::Number(-0.0));
        assert_eq!(Constant::Number(f64::NAN), Constant::Number(-f64::NAN));
        assert_ne!(
            Constant::Number(f64::NAN),
            Constant::String("NaN".to_string())
        );
        assert_ne!(Constant::Null, Constant::Undefined);
        assert_eq!(Constant::Number(1.0), Constant::Number(1.0));
    }
}
