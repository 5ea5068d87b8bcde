//! What both lowerings share: the durable primitives' names, the nesting
//! limit and exact number literals.

/// Deepest statement/expression nesting the lowering accepts.
pub const MAX_DEPTH: u32 = 200;

/// The durable primitives (and the `program` marker) a source may import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prim {
    /// `effect(key, callback?)`
    Effect,
    /// `wait_for_event(name)` / `waitForEvent(name)`
    WaitForEvent,
    /// `sleep(ms)`
    Sleep,
    /// `invoke(name, args…)`
    Invoke,
    /// `gather(…)` (Python)
    Gather,
    /// `race(…)` (Python)
    Race,
    /// `@program` entry marker (Python)
    Program,
}

impl Prim {
    /// The Python spelling.
    pub fn from_python(name: &str) -> Option<Self> {
        Some(match name {
            "effect" => Prim::Effect,
            "wait_for_event" => Prim::WaitForEvent,
            "sleep" => Prim::Sleep,
            "invoke" => Prim::Invoke,
            "gather" => Prim::Gather,
            "race" => Prim::Race,
            "program" => Prim::Program,
            _ => return None,
        })
    }

    /// The TypeScript spelling.
    pub fn from_typescript(name: &str) -> Option<Self> {
        Some(match name {
            "effect" => Prim::Effect,
            "waitForEvent" => Prim::WaitForEvent,
            "sleep" => Prim::Sleep,
            "invoke" => Prim::Invoke,
            _ => return None,
        })
    }
}

/// The binary64 value of a decimal integer literal, when it is exact.
pub fn number_literal(text: &str) -> Option<f64> {
    let n: f64 = text.parse().ok()?;
    if !n.is_finite() {
        return None;
    }
    let back = format!("{n:.0}");
    let canon = text.trim_start_matches('+');
    let canon = match canon.strip_prefix('-') {
        Some(rest) => format!("-{}", rest.trim_start_matches('0')),
        None => canon.trim_start_matches('0').to_string(),
    };
    let canon = if canon.is_empty() || canon == "-" {
        "0".to_string()
    } else {
        canon
    };
    (back == canon || (n == 0.0 && canon == "0")).then_some(n)
}
