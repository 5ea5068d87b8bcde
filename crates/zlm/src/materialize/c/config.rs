//! The explicit target configuration of the C materializer
//! (docs/zlm/c-materializer.md): `key = value` lines, `#` comments.

use super::unit::Refusal;

/// What the emitted C may assume about its compiler and ABI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetConfig {
    /// C standard (`c11` or `c17`).
    pub standard: String,
    /// Bits of `char`.
    pub char_bits: u32,
    /// Bits of `short`.
    pub short_bits: u32,
    /// Bits of `int`.
    pub int_bits: u32,
    /// Bits of `long`.
    pub long_bits: u32,
    /// Bits of `long long`.
    pub long_long_bits: u32,
    /// Bits of a data pointer.
    pub pointer_bits: u32,
    /// The runtime's allocation hook (a C function `void *(size_t)`).
    pub alloc: String,
    /// The runtime's release hook (a C function `void (void *)`).
    pub free: String,
    /// Host stack the emitted program may use for ZLM calls before a call
    /// faults with the depth limit.
    pub stack_bytes: u64,
}

impl Default for TargetConfig {
    /// The LP64 host configuration (`c11`, 8/16/32/64/64-bit integers,
    /// 64-bit pointers, `malloc`/`free`, 4 MiB of call stack).
    fn default() -> Self {
        TargetConfig {
            standard: "c11".into(),
            char_bits: 8,
            short_bits: 16,
            int_bits: 32,
            long_bits: 64,
            long_long_bits: 64,
            pointer_bits: 64,
            alloc: "malloc".into(),
            free: "free".into(),
            stack_bytes: 4 << 20,
        }
    }
}

fn bad(message: String) -> Refusal {
    Refusal {
        function: None,
        block: None,
        op: None,
        message,
    }
}

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && cs.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl TargetConfig {
    /// Parses the text form. Every key is optional (the default is used);
    /// an unknown key, a repeated key or a malformed value is refused.
    pub fn parse(text: &str) -> Result<Self, Refusal> {
        let mut c = TargetConfig::default();
        let mut seen = std::collections::BTreeSet::new();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(bad(format!(
                    "target config line {}: expected key = value",
                    n + 1
                )));
            };
            let (k, v) = (k.trim(), v.trim());
            if !seen.insert(k.to_string()) {
                return Err(bad(format!("target config line {}: {k} repeated", n + 1)));
            }
            let num = || -> Result<u64, Refusal> {
                v.parse::<u64>()
                    .map_err(|_| bad(format!("target config line {}: {k} needs a number", n + 1)))
            };
            let bits = || -> Result<u32, Refusal> {
                let b = num()?;
                u32::try_from(b)
                    .ok()
                    .filter(|b| *b <= 128)
                    .ok_or_else(|| bad(format!("target config line {}: {k} out of range", n + 1)))
            };
            match k {
                "standard" => c.standard = v.to_string(),
                "char_bits" => c.char_bits = bits()?,
                "short_bits" => c.short_bits = bits()?,
                "int_bits" => c.int_bits = bits()?,
                "long_bits" => c.long_bits = bits()?,
                "long_long_bits" => c.long_long_bits = bits()?,
                "pointer_bits" => c.pointer_bits = bits()?,
                "alloc" => c.alloc = v.to_string(),
                "free" => c.free = v.to_string(),
                "stack_bytes" => c.stack_bytes = num()?,
                _ => {
                    return Err(bad(format!(
                        "target config line {}: unknown key {k}",
                        n + 1
                    )));
                }
            }
        }
        Ok(c)
    }

    /// Refuses a target the emitted C cannot serve exactly.
    pub fn check(&self) -> Result<(), Refusal> {
        if !matches!(self.standard.as_str(), "c11" | "c17") {
            return Err(bad(format!(
                "C standard {} is not supported (c11 or c17)",
                self.standard
            )));
        }
        if self.char_bits != 8 {
            return Err(bad("the runtime needs 8-bit char (exact uint8_t)".into()));
        }
        if self.short_bits < 16 || self.int_bits < 32 || self.long_bits < 32 {
            return Err(bad(
                "the runtime needs short >= 16, int >= 32 and long >= 32 bits".into(),
            ));
        }
        if self.long_long_bits != 64 {
            return Err(bad(
                "the runtime prints words as unsigned long long and needs it 64-bit".into(),
            ));
        }
        if !matches!(self.pointer_bits, 32 | 64) {
            return Err(bad("pointers must be 32 or 64 bits".into()));
        }
        if !is_ident(&self.alloc) || !is_ident(&self.free) {
            return Err(bad("allocation hooks must be C identifiers".into()));
        }
        if self.stack_bytes < (64 << 10) {
            return Err(bad("stack_bytes must be at least 65536".into()));
        }
        Ok(())
    }
}
