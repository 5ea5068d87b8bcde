//! Deterministic faults: why execution stopped abnormally, and where.

/// Why execution stopped abnormally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// Arithmetic out of range under the exact/approximate profile.
    Overflow,
    /// Division or remainder by zero.
    DivideByZero,
    /// Shift count not below the width under the exact/approximate profile.
    ShiftRange,
    /// A requires or ensures clause evaluated false.
    Contract(String),
    /// ASSERT_TRUE / ASSERT_EQ failed.
    Assert,
    /// Byte-array or slice index out of bounds, or slice precondition false.
    Bounds,
    /// A carrier or variant tag was noncanonical or the wrong variant.
    Tag,
    /// Step limit reached.
    StepLimit,
    /// Call-depth limit reached.
    DepthLimit,
    /// Byte limit reached.
    ByteLimit,
    /// An interpreter state that validation rules out was reached: an
    /// internal invariant violation, reported instead of aborting.
    Internal,
}

impl std::fmt::Display for FaultKind {
    /// The kind in words, as a diagnostic prints it (a contract fault names
    /// its clause as the text form does: `requires 0`, which `irkit zlm run`
    /// completes with the printed expression).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FaultKind::Overflow => f.write_str("arithmetic overflow"),
            FaultKind::DivideByZero => f.write_str("division by zero"),
            FaultKind::ShiftRange => f.write_str("shift count not below the width"),
            FaultKind::Contract(clause) => write!(f, "contract failed: {clause}"),
            FaultKind::Assert => f.write_str("assertion failed"),
            FaultKind::Bounds => f.write_str("index or slice out of bounds"),
            FaultKind::Tag => f.write_str("noncanonical or wrong variant tag"),
            FaultKind::StepLimit => f.write_str("step limit reached"),
            FaultKind::DepthLimit => f.write_str("call-depth limit reached"),
            FaultKind::ByteLimit => f.write_str("byte limit reached"),
            FaultKind::Internal => {
                f.write_str("internal error: a state validation rules out was reached")
            }
        }
    }
}

/// A deterministic fault with its location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault in {function}{}: {kind}", loc(*.block, *.op))]
pub struct Fault {
    /// `Decl.function`.
    pub function: String,
    /// Block, when the fault is in the body.
    pub block: Option<u32>,
    /// Operation ordinal, when the fault is at an operation.
    pub op: Option<u32>,
    /// Kind.
    pub kind: FaultKind,
}

fn loc(b: Option<u32>, o: Option<u32>) -> String {
    match (b, o) {
        (Some(b), Some(o)) => format!(" block {b} op {o}"),
        (Some(b), None) => format!(" block {b}"),
        _ => String::new(),
    }
}
