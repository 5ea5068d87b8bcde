//! What every part of the GLSL backend shares: the target version and
//! the structured target diagnostics (section 12.4). A leaf module, so
//! that the parts need not import their parent.

use crate::ir::Span;
use std::fmt;

/// The only implemented target version: GLSL 4.20 core.
pub const VERSION_420: u32 = 420;

/// Target restriction classes (section 12.4), each with a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetErrorKind {
    /// A version other than 420 was requested.
    UnsupportedVersion,
    /// A used record type has no fields.
    EmptyRecord,
    /// An array whose element type is an array.
    ArrayOfArrays,
    /// A sampler inside an array or record.
    SamplerInAggregate,
    /// An array length beyond the signed GL integer range.
    ArrayLength,
    /// A Boolean or opaque type in a stage interface.
    InterfaceType,
    /// An interface shape the direction does not support (attributes,
    /// varyings, fragment outputs).
    InterfaceShape,
    /// Overlapping or out-of-range interface locations, or an unlinked
    /// fragment input.
    Location,
    /// A sampler register without exactly one alias definition chain
    /// ending at a sampler uniform or parameter (including cycles).
    SamplerAlias,
    /// A function returning a sampler.
    SamplerReturn,
    /// A store to sampler parameter storage.
    SamplerParameterMutation,
    /// Vertex input locations beyond the profile's minimum vertex
    /// attributes (section 13, `limits`).
    VertexAttributeLimit,
    /// Vertex output or fragment input locations beyond the profile's
    /// minimum varyings.
    VaryingLimit,
    /// Fragment output locations beyond the profile's minimum draw buffers.
    DrawBufferLimit,
    /// More sampler uniforms in a stage than the profile's minimum
    /// texture units per stage.
    TextureUnitLimit,
    /// A stage's uniforms beyond the profile's minimum default-block
    /// components, uniform blocks per stage or uniform block size.
    UniformLimit,
    /// A module the backend cannot interpret (it failed a consistency
    /// assumption that verification is meant to guarantee).
    InvalidModule,
}

impl TargetErrorKind {
    /// The stable code printed in diagnostics.
    pub fn code(self) -> &'static str {
        match self {
            TargetErrorKind::UnsupportedVersion => "unsupported-version",
            TargetErrorKind::EmptyRecord => "empty-record",
            TargetErrorKind::ArrayOfArrays => "array-of-arrays",
            TargetErrorKind::SamplerInAggregate => "sampler-in-aggregate",
            TargetErrorKind::ArrayLength => "array-length",
            TargetErrorKind::InterfaceType => "interface-type",
            TargetErrorKind::InterfaceShape => "interface-shape",
            TargetErrorKind::Location => "location",
            TargetErrorKind::SamplerAlias => "sampler-alias",
            TargetErrorKind::SamplerReturn => "sampler-return",
            TargetErrorKind::SamplerParameterMutation => "sampler-parameter-mutation",
            TargetErrorKind::VertexAttributeLimit => "limit-vertex-attributes",
            TargetErrorKind::VaryingLimit => "limit-varyings",
            TargetErrorKind::DrawBufferLimit => "limit-draw-buffers",
            TargetErrorKind::TextureUnitLimit => "limit-texture-units",
            TargetErrorKind::UniformLimit => "limit-uniforms",
            TargetErrorKind::InvalidModule => "invalid-module",
        }
    }
}

impl fmt::Display for TargetErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A structured target diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("target error [{kind}]: {message}")]
pub struct TargetError {
    /// The restriction class.
    pub kind: TargetErrorKind,
    /// What is wrong, naming the object.
    pub message: String,
    /// The offending object's source position, when read from text.
    pub span: Option<Span>,
}

impl TargetError {
    pub(crate) fn new(
        kind: TargetErrorKind,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        TargetError {
            kind,
            message: message.into(),
            span,
        }
    }
}
