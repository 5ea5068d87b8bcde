//! The target diagnostics of the naga targets.

use crate::ir::Span;
use std::fmt;

/// Why a module cannot be lowered for a naga target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("target error [{kind}]: {message}")]
pub struct LowerError {
    /// The class, with a stable code.
    pub kind: LowerErrorKind,
    /// What is wrong, naming the object.
    pub message: String,
    /// The offending object's position in the published text, if known.
    pub span: Option<Span>,
}

/// Classes of [`LowerError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LowerErrorKind {
    /// A type outside the subset (record, array, sampler).
    UnsupportedType,
    /// A uniform (not lowered yet).
    UnsupportedUniform,
    /// An instruction outside the subset (member access, texture calls,
    /// vector comparisons, truncating or matrix constructions).
    UnsupportedInstruction,
    /// A stage interface the targets cannot express (Boolean or matrix
    /// variables, overlapping locations).
    UnsupportedInterface,
    /// The writer of the target failed.
    Writer,
    /// naga's validator rejected the lowered module (a lowering defect).
    Validation,
    /// A GLSL 4.20 target restriction (section 12.4) or location error
    /// (12.2), which the naga targets share; reported with its code.
    Restriction(crate::backends::glsl::TargetErrorKind),
}

impl LowerErrorKind {
    /// The stable code printed in diagnostics.
    pub fn code(self) -> &'static str {
        match self {
            LowerErrorKind::UnsupportedType => "naga-unsupported-type",
            LowerErrorKind::UnsupportedUniform => "naga-unsupported-uniform",
            LowerErrorKind::UnsupportedInstruction => "naga-unsupported-instruction",
            LowerErrorKind::UnsupportedInterface => "naga-unsupported-interface",
            LowerErrorKind::Writer => "naga-writer",
            LowerErrorKind::Validation => "naga-validation",
            LowerErrorKind::Restriction(kind) => kind.code(),
        }
    }
}

impl fmt::Display for LowerErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl LowerError {
    pub(crate) fn new(
        kind: LowerErrorKind,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        LowerError {
            kind,
            message: message.into(),
            span,
        }
    }
}
