//! Lowering of a published module to `naga` IR, and the targets naga
//! writes from it (SPIR-V, WGSL, GLSL ES 3.00, MSL, HLSL).
//!
//! [`lower`] takes a [`crate::VerifiedModule`] and works on its snapshot and
//! the snapshot's [`crate::verify::ModuleInfo`] (functions are lowered in the verifier's call
//! order, callees first, as naga requires). The lowered module must pass
//! naga's validator; a failure there is reported as an internal target
//! error, never emitted.
//!
//! The supported subset: scalar (`float`, `int`, `bool`), vector and
//! matrix types; stage interfaces of numeric scalars and vectors; every
//! instruction on such values except member access; calls; any control
//! flow (a straight-line body, or a dispatch loop over a block selector as
//! the GLSL backend lowers it). Uniforms, records, arrays and samplers are
//! refused with a [`LowerError`] whose code names the construct, never
//! emitted wrong. Stage interface variables become private globals that an
//! entry-point wrapper fills from its arguments and returns in its result
//! structure, so helper functions reach them as the VPL functions do.

pub mod layout;
mod lower;
mod targets;

pub use targets::{Output, Target, compile};

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

pub use lower::{Lowered, Resource, ResourceKind, lower};
