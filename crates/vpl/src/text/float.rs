//! Decimal number words to binary32 (section 10.1 float literals).

/// `10^k` for `k <= 10`: every one is exactly representable in binary32
/// (`5^10 < 2^24`).
const POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

/// Converts a decimal number word to the nearest binary32 (ties to even),
/// `None` when it is not a decimal number.
///
/// Fast path (Clinger): a word `[+-]? d* (. d*)?` with at most 7 digits in
/// all is `m / 10^k` with `m < 2^24` and `k <= 7`, two exactly
/// representable binary32 values, so one IEEE division rounds the exact
/// quotient once, nearest-even, exactly as the full conversion does.
/// Everything else (exponents, longer digit strings) takes
/// `str::parse::<f32>`.
pub(crate) fn parse_f32(word: &str) -> Option<f32> {
    parse_short_f32(word.as_bytes()).or_else(|| word.parse().ok())
}

/// The fast path of [`parse_f32`] alone: the value of a word
/// `[+-]? d* (. d*)?` with 1 to 7 digits in all (always finite), `None` for
/// every other word, which [`parse_f32`] hands to `str::parse::<f32>`.
#[inline]
pub(crate) fn parse_short_f32(bytes: &[u8]) -> Option<f32> {
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.len() > 8 {
        return None;
    }
    let mut mantissa = 0u32;
    let mut count = 0usize;
    let mut fraction: Option<usize> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u32::from(b - b'0');
                count += 1;
            }
            b'.' if fraction.is_none() => fraction = Some(count),
            _ => return None,
        }
    }
    if count == 0 || count > 7 {
        return None;
    }
    let scale = count - fraction.unwrap_or(count);
    let magnitude = mantissa as f32 / POW10_F32[scale];
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::parse_f32;
    use proptest::prelude::*;

    /// The fast path agrees bit for bit with `str::parse::<f32>` on short
    /// decimals and on everything that falls back.
    #[test]
    fn parse_f32_matches_std_bit_for_bit() {
        for w in [
            "0",
            "-0",
            "+0",
            "0.",
            "-0.0",
            ".5",
            "-.5",
            "1.",
            "12.375",
            "9999999",
            "0.0000001",
            "1234567",
            "123456.7",
            "-9.999999",
            "16777217",
            "1e3",
            "1.5e-45",
            "3.4028235e38",
            "0.1",
            "0.3",
            "2.675",
            "1.0000001",
            "00000001",
        ] {
            assert_eq!(
                parse_f32(w).map(f32::to_bits),
                w.parse::<f32>().ok().map(f32::to_bits),
                "{w}"
            );
        }
        let config = ProptestConfig {
            cases: 4000,
            ..ProptestConfig::default()
        };
        proptest!(config, |(sign in prop::sample::select(vec!["", "-", "+"]),
                            int in "[0-9]{0,7}", frac in prop::option::of("[0-9]{0,7}"))| {
            let mut w = format!("{sign}{int}");
            if let Some(f) = &frac {
                w.push('.');
                w.push_str(f);
            }
            prop_assert_eq!(
                parse_f32(&w).map(f32::to_bits),
                w.parse::<f32>().ok().map(f32::to_bits),
                "{}", w
            );
        });
    }
}
