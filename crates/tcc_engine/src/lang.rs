//! Language rules chosen by `language_semantics_version` (facts note (b), (g)).
//!
//! The instruction encoding is shared; the meaning of equality, arithmetic,
//! indexing and argument binding is not. Engine type errors are
//! [`Outcome::Fatal`](EvalError::Fatal); Python runtime errors that the
//! language lets a program catch (`ZeroDivisionError`, `IndexError`) are
//! [`EvalError::Throw`] of their name as a string.

use crate::error::{EngineError, FatalKind};
use crate::value::{Cell, Heap, Value};
use std::sync::Arc;

/// The language rule sets of format 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `ts.subset.v1`
    Ts,
    /// `py.subset.v1`
    Py,
    /// `rust.subset.v1`
    Rust,
}

impl Language {
    /// The language of a `language_semantics_version`, if known.
    pub fn from_version(v: &str) -> Option<Language> {
        match v {
            "ts.subset.v1" => Some(Language::Ts),
            "py.subset.v1" => Some(Language::Py),
            "rust.subset.v1" => Some(Language::Rust),
            _ => None,
        }
    }
}

/// An error raised while evaluating one operation.
#[derive(Debug, Clone)]
pub enum EvalError {
    /// Uncatchable engine error.
    Fatal(EngineError),
    /// A catchable error value (thrown into the program's handlers).
    Throw(Value),
}

impl From<EngineError> for EvalError {
    fn from(e: EngineError) -> Self {
        EvalError::Fatal(e)
    }
}

fn type_error(message: String) -> EvalError {
    EvalError::Fatal(EngineError::fatal(FatalKind::TypeError, message))
}

fn throw(name: &str) -> EvalError {
    EvalError::Throw(Value::string(name))
}

/// Truthiness, the same for every language: undefined/null false; a
/// boolean itself; a number false iff ±0 or NaN; a string false iff empty;
/// any reference true.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Undefined | Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => !(*n == 0.0 || n.is_nan()),
        Value::Str(s) => !s.is_empty(),
        Value::Ref(_) => true,
    }
}

/// Most cells a Python structural comparison may visit.
const MAX_EQ_VISITS: usize = 1 << 22;

/// `StrictEq` under the language's rules.
pub fn strict_eq(lang: Language, heap: &Heap, a: &Value, b: &Value) -> Result<bool, EvalError> {
    match lang {
        Language::Ts | Language::Rust => Ok(ts_eq(a, b)),
        Language::Py => py_eq(heap, a, b),
    }
}

/// TypeScript `===`: numbers by IEEE equality, refs by id, other tags by
/// value, different tags unequal.
pub fn ts_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Ref(x), Value::Ref(y)) => x == y,
        _ => false,
    }
}

fn py_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// The element pairs of one container pair still to compare.
enum Pairs<'h> {
    Array(std::iter::Zip<std::slice::Iter<'h, Value>, std::slice::Iter<'h, Value>>),
    Object(
        std::iter::Zip<crate::object_map::Values<'h, Value>, crate::object_map::Values<'h, Value>>,
    ),
}

impl<'h> Iterator for Pairs<'h> {
    type Item = (&'h Value, &'h Value);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Pairs::Array(it) => it.next(),
            Pairs::Object(it) => it.next(),
        }
    }
}

/// Python `==`: structural over arrays and objects, bool as 1/0 against
/// numbers; meeting a cycle during the walk is fatal.
///
/// The walk keeps an explicit stack of the container pairs being compared
/// (no recursion on the values, so a value nested a million deep cannot
/// overflow the thread's stack, and the stack holds one iterator per level,
/// not one entry per element). Elements are compared in order and the walk
/// stops at the first unequal pair, as CPython's element-wise comparison
/// does. The container pairs on the path are also kept in a set for the
/// cycle check; at most [`MAX_EQ_VISITS`] container pairs are visited.
fn py_eq<'h>(heap: &'h Heap, a: &'h Value, b: &'h Value) -> Result<bool, EvalError> {
    let mut stack: Vec<((u32, u32), Pairs<'h>)> = Vec::new();
    let mut path: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
    let mut visits = 0usize;
    let mut next = Some((a, b));
    loop {
        let (a, b) = match next.take() {
            Some(pair) => pair,
            None => {
                let Some((ids, pairs)) = stack.last_mut() else {
                    return Ok(true);
                };
                match pairs.next() {
                    Some(pair) => pair,
                    None => {
                        path.remove(ids);
                        stack.pop();
                        continue;
                    }
                }
            }
        };
        if let (Some(x), Some(y)) = (py_number(a), py_number(b))
            && (matches!(a, Value::Number(_)) || matches!(b, Value::Number(_)))
        {
            if x != y {
                return Ok(false);
            }
            continue;
        }
        let (Value::Ref(x), Value::Ref(y)) = (a, b) else {
            if !ts_eq(a, b) {
                return Ok(false);
            }
            continue;
        };
        // CPython compares container elements with an identity shortcut
        // (`PyObject_RichCompareBool`), so a container equals itself even when
        // it holds NaN or itself; the reference engine agrees.
        if x == y {
            continue;
        }
        if path.contains(&(*x, *y)) {
            return Err(EvalError::Fatal(EngineError::fatal(
                FatalKind::Cycle,
                "cycle met while comparing values structurally",
            )));
        }
        visits += 1;
        if visits > MAX_EQ_VISITS {
            return Err(EvalError::Fatal(EngineError::limit(
                "structural comparison visits",
                MAX_EQ_VISITS as u64,
            )));
        }
        let pairs = match (heap.get(*x)?, heap.get(*y)?) {
            (Cell::Array(l), Cell::Array(r)) if l.len() == r.len() => {
                Pairs::Array(l.iter().zip(r.iter()))
            }
            (Cell::Object(l), Cell::Object(r)) if l.len() == r.len() && l.keys().eq(r.keys()) => {
                Pairs::Object(l.values().zip(r.values()))
            }
            _ => return Ok(false),
        };
        path.insert((*x, *y));
        stack.push(((*x, *y), pairs));
    }
}

/// Numeric comparison operands: both must be numbers.
pub fn numbers(op: &str, a: &Value, b: &Value) -> Result<(f64, f64), EvalError> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Ok((*x, *y)),
        _ => Err(type_error(format!(
            "{op} requires two numbers, got {} and {}",
            a.tag(),
            b.tag()
        ))),
    }
}

/// Arithmetic operators of the compute group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `**`
    Pow,
    /// `//`
    FloorDiv,
}

impl ArithOp {
    fn name(self) -> &'static str {
        match self {
            ArithOp::Add => "Add",
            ArithOp::Sub => "Sub",
            ArithOp::Mul => "Mul",
            ArithOp::Div => "Div",
            ArithOp::Rem => "Rem",
            ArithOp::Pow => "Pow",
            ArithOp::FloorDiv => "FloorDiv",
        }
    }
}

/// Binary arithmetic under the language's rules.
pub fn arith(
    lang: Language,
    op: ArithOp,
    a: &Value,
    b: &Value,
    max_string_bytes: usize,
) -> Result<Value, EvalError> {
    // Fast path shared by every language.
    if let (Value::Number(x), Value::Number(y)) = (a, b) {
        return number_arith(lang, op, *x, *y);
    }
    match lang {
        Language::Ts => {
            if op == ArithOp::Add && (matches!(a, Value::Str(_)) || matches!(b, Value::Str(_))) {
                let l = ts_to_string(a)?;
                let r = ts_to_string(b)?;
                return concat(&l, &r, max_string_bytes);
            }
        }
        Language::Py => {
            if op == ArithOp::Add
                && let (Value::Str(l), Value::Str(r)) = (a, b)
            {
                return concat(l, r, max_string_bytes);
            }
            if let (Some(x), Some(y)) = (py_number(a), py_number(b)) {
                return number_arith(lang, op, x, y);
            }
        }
        Language::Rust => {
            if op == ArithOp::Add
                && let (Value::Str(l), Value::Str(r)) = (a, b)
            {
                return concat(l, r, max_string_bytes);
            }
        }
    }
    Err(type_error(format!(
        "{} is not defined on {} and {}",
        op.name(),
        a.tag(),
        b.tag()
    )))
}

fn concat(l: &str, r: &str, max: usize) -> Result<Value, EvalError> {
    if l.len() + r.len() > max {
        return Err(EvalError::Fatal(EngineError::limit(
            "string bytes",
            max as u64,
        )));
    }
    let mut s = String::with_capacity(l.len() + r.len());
    s.push_str(l);
    s.push_str(r);
    Ok(Value::Str(Arc::new(s)))
}

fn number_arith(lang: Language, op: ArithOp, x: f64, y: f64) -> Result<Value, EvalError> {
    let n = match (lang, op) {
        (_, ArithOp::Add) => x + y,
        (_, ArithOp::Sub) => x - y,
        (_, ArithOp::Mul) => x * y,
        (Language::Py, ArithOp::Div) => {
            if y == 0.0 {
                return Err(throw("ZeroDivisionError"));
            }
            x / y
        }
        (_, ArithOp::Div) => x / y,
        (Language::Py, ArithOp::Rem) => {
            if y == 0.0 {
                return Err(throw("ZeroDivisionError"));
            }
            py_mod(x, y)
        }
        (_, ArithOp::Rem) => js_rem(x, y),
        (Language::Py, ArithOp::FloorDiv) => {
            if y == 0.0 {
                return Err(throw("ZeroDivisionError"));
            }
            py_floor_div(x, y)
        }
        (_, ArithOp::FloorDiv) => (x / y).floor(),
        (Language::Py, ArithOp::Pow) => {
            if x == 0.0 && y < 0.0 {
                return Err(throw("ZeroDivisionError"));
            }
            if x < 0.0 && y.is_finite() && y.fract() != 0.0 {
                return Err(throw("ValueError"));
            }
            let r = x.powf(y);
            // CPython's float `**` reports a finite-operand overflow
            // (ERANGE with an infinite result) as OverflowError; an
            // underflow to zero is not an error.
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(throw("OverflowError"));
            }
            r
        }
        (_, ArithOp::Pow) => js_pow(x, y),
    };
    Ok(Value::Number(n))
}

/// JavaScript `**`: like `powf` except that a NaN exponent gives NaN and
/// `(±1) ** ±Infinity` is NaN.
pub fn js_pow(x: f64, y: f64) -> f64 {
    if y.is_nan() || (x.abs() == 1.0 && y.is_infinite()) {
        f64::NAN
    } else {
        x.powf(y)
    }
}

/// IEEE remainder (JavaScript `%`, C `fmod`): the result takes the sign of
/// the dividend. Integral operands below 2^52 take an exact integer path,
/// much faster than the software `fmod`; every other case (including
/// integers in [2^52, 2^53), which `fmod` also computes exactly) takes
/// `fmod`, so the result is the same bits either way.
#[inline(always)]
pub fn js_rem(x: f64, y: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    // NaN fails the compares; a zero divisor takes the IEEE path (NaN).
    if ax < TWO_52 && (1.0..TWO_52).contains(&ay) {
        // Adding 2^52 to a value in [0, 2^52) lands in [2^52, 2^53), where
        // doubles are exactly the integers: the sum is exact iff the value
        // is integral (checked by subtracting back, exact by Sterbenz), and
        // then its low 52 mantissa bits are the value as an integer. No
        // float-to-int conversion (with its range checks) is needed.
        let (tx, ty) = (ax + TWO_52, ay + TWO_52);
        if tx - TWO_52 == ax && ty - TWO_52 == ay {
            let (ix, iy) = (tx.to_bits() & MANTISSA, ty.to_bits() & MANTISSA);
            // iy >= 1; the remainder is below 2^52, so the signed
            // conversion (one instruction) is exact.
            let r = (ix % iy) as i64 as f64;
            return if x.is_sign_negative() { -r } else { r };
        }
    }
    x % y
}

/// 2^52: the doubles in [2^52, 2^53) are exactly the integers there.
const TWO_52: f64 = 4_503_599_627_370_496.0;
/// The mantissa bits of a binary64.
const MANTISSA: u64 = (1 << 52) - 1;

/// Python float `%`: the result takes the sign of the divisor.
pub fn py_mod(x: f64, y: f64) -> f64 {
    let m = js_rem(x, y);
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) { m + y } else { m }
    } else {
        0.0f64.copysign(y)
    }
}

/// Python float `//`, following CPython's `float_floor_div`.
pub fn py_floor_div(x: f64, y: f64) -> f64 {
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(y);
    }
    let _ = m;
    if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(x / y)
    }
}

/// Unary minus (Python also negates booleans as 1/0).
pub fn neg(lang: Language, v: &Value) -> Result<Value, EvalError> {
    match (lang, v) {
        (_, Value::Number(n)) => Ok(Value::Number(-n)),
        (Language::Py, Value::Bool(b)) => Ok(Value::Number(if *b { -1.0 } else { -0.0 })),
        _ => Err(type_error(format!("Neg is not defined on {}", v.tag()))),
    }
}

/// TypeScript string conversion of a primitive for `+`.
fn ts_to_string(v: &Value) -> Result<String, EvalError> {
    Ok(match v {
        Value::Undefined => "undefined".to_string(),
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number_to_string(*n),
        Value::Str(s) => s.to_string(),
        Value::Ref(_) => {
            return Err(type_error(
                "string concatenation with an object or array".to_string(),
            ));
        }
    })
}

/// ECMAScript `Number::toString(10)`: shortest round-trip digits, exponent
/// form below 1e-6 and from 1e21 on.
pub fn js_number_to_string(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // `{:e}` gives the shortest round-trip digits: "d.ddde±x".
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let point = exp + 1; // position of the decimal point relative to the digits
    let body = if k <= point && point <= 21 {
        let mut s = digits.clone();
        s.extend(std::iter::repeat_n('0', (point - k) as usize));
        s
    } else if 0 < point && point <= 21 {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    } else if -6 < point && point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else {
        let e = point - 1;
        let e_text = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if k == 1 {
            format!("{digits}e{e_text}")
        } else {
            format!("{}.{}e{e_text}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// Length of a string under the language's rules: UTF-16 units for
/// TypeScript, code points for Python, UTF-8 bytes for Rust.
pub fn string_length(lang: Language, s: &str) -> usize {
    match lang {
        Language::Ts => s.encode_utf16().count(),
        Language::Py => s.chars().count(),
        Language::Rust => s.len(),
    }
}

/// A character of a string by index under the language's rules, if in range.
pub fn string_index(lang: Language, s: &str, i: usize) -> Option<String> {
    match lang {
        Language::Ts => {
            let unit = s.encode_utf16().nth(i)?;
            Some(String::from_utf16_lossy(&[unit]))
        }
        Language::Py => s.chars().nth(i).map(String::from),
        Language::Rust => s.chars().nth(i).map(String::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_number_strings() {
        for (n, t) in [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (123.456, "123.456"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(js_number_to_string(n), t, "{n}");
        }
    }

    #[test]
    fn python_modulo_and_floor_division() {
        assert_eq!(py_mod(-7.0, 3.0), 2.0);
        assert_eq!(py_mod(7.0, -3.0), -2.0);
        assert!(py_mod(6.0, -3.0).is_sign_negative());
        assert_eq!(py_floor_div(-7.0, 2.0), -4.0);
        assert_eq!(py_floor_div(7.0, 2.0), 3.0);
        assert_eq!(py_floor_div(7.5, -2.0), -4.0);
    }

    #[test]
    fn integer_remainder_path_matches_fmod() {
        for (x, y) in [
            (7.0, 3.0),
            (-7.0, 3.0),
            (7.0, -3.0),
            (-6.0, 3.0),
            (0.0, 5.0),
            (-0.0, 5.0),
            (5.5, 2.0),
            (1e300, 7.0),
            (3.0, f64::INFINITY),
        ] {
            let (a, b) = (js_rem(x, y), x % y);
            assert!(a.to_bits() == b.to_bits(), "{x} % {y}: {a} vs {b}");
        }
        assert!(js_rem(1.0, 0.0).is_nan());
        assert!(js_rem(f64::NAN, 3.0).is_nan());
        assert!(js_rem(3.0, f64::NAN).is_nan());
        // Edges of the integer path, fractional divisors and a sweep of
        // pseudo-random integral and fractional operands.
        let edge = 9_007_199_254_740_991.0;
        let mut cases = vec![
            (edge, 2.0),
            (-edge, edge),
            (edge + 1.0, 3.0),
            // Around 2^52, where the integer path ends.
            (TWO_52 - 1.0, 7.0),
            (TWO_52 - 0.5, 3.0),
            (-(TWO_52 - 0.5), 3.0),
            (TWO_52, 7.0),
            (TWO_52 + 1.0, 5.0),
            (TWO_52 + 3.0, TWO_52 - 1.0),
            (TWO_52 - 1.0, TWO_52 - 1.0),
            (TWO_52 - 2.0, TWO_52 - 1.0),
            (12.0, TWO_52 + 1.0),
            (1.0, 1.0),
            (0.99, 1.0),
            (3.0, 0.999_999_999_999_999_9),
            (-0.0, 3.0),
            (f64::INFINITY, 3.0),
            (f64::MIN_POSITIVE, 1.0),
            (5.0, 5e-324),
            (7.0, 0.5),
            (-7.25, 0.75),
            (4.0, -0.0),
            (-0.0, -1.0),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = (seed >> 11) as i64;
            let x = (bits % (1 << (seed % 54))) as f64;
            let y = ((seed >> 7) % 1000) as f64 - 500.0;
            let frac = if seed & 1 == 0 { 0.0 } else { 0.25 };
            cases.push((x, y));
            cases.push((-x + frac, y));
        }
        for (x, y) in cases {
            let (a, b) = (js_rem(x, y), x % y);
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x} % {y}: {a} vs {b}"
            );
        }
    }

    #[test]
    fn js_pow_edge_cases() {
        assert!(js_pow(1.0, f64::NAN).is_nan());
        assert!(js_pow(-1.0, f64::INFINITY).is_nan());
        assert_eq!(js_pow(2.0, 10.0), 1024.0);
    }

    #[test]
    fn truthiness() {
        assert!(!truthy(&Value::Number(-0.0)));
        assert!(!truthy(&Value::Number(f64::NAN)));
        assert!(truthy(&Value::Number(2.0)));
        assert!(!truthy(&Value::string("")));
        assert!(truthy(&Value::Ref(0)));
        assert!(!truthy(&Value::Null));
    }
}
