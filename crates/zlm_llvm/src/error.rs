//! Why an LLVM engine could not produce a result.

use zlm::materialize::c::Refusal;

/// An LLVM engine error, each kind with a stable code ([`LlvmError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlvmError {
    /// The lowering does not support the package (C0-EXEC-002).
    #[error("{0}")]
    Refused(Refusal),
    /// The target record is malformed or cannot be honoured (C0-EXEC-003).
    #[error("C0-EXEC-003: target record: {0}")]
    Record(String),
    /// LLVM rejected the lowered module or failed to generate code (a
    /// lowering bug: the emitted IR must verify).
    #[error("LLVM backend: {0}")]
    Backend(String),
    /// A file or process operation failed.
    #[error("LLVM engine I/O: {0}")]
    Io(String),
    /// The linker rejected the object.
    #[error("link failed: {0}")]
    Link(String),
    /// The entry is not a host-callable function of the unit.
    #[error("{0}")]
    Usage(String),
    /// The built program's report did not parse (or it crashed).
    #[error("the AOT executable misbehaved: {0}")]
    Protocol(String),
}

impl LlvmError {
    /// The stable diagnostic code.
    pub fn code(&self) -> &'static str {
        match self {
            LlvmError::Refused(_) => zlm::materialize::c::REFUSED,
            LlvmError::Record(_) => "C0-EXEC-003",
            LlvmError::Backend(_) => "ZLM-LLVM-BACKEND",
            LlvmError::Io(_) => "ZLM-LLVM-IO",
            LlvmError::Link(_) => "ZLM-LLVM-LINK",
            LlvmError::Usage(_) => "ZLM-LLVM-USAGE",
            LlvmError::Protocol(_) => "ZLM-LLVM-PROTOCOL",
        }
    }
}

impl From<Refusal> for LlvmError {
    fn from(r: Refusal) -> Self {
        LlvmError::Refused(r)
    }
}
