//! Error types with stable codes.
//!
//! Decoding fails with [`IrError::InvalidEncoding`] (code `TCC-E001`), which
//! carries the JSON path and byte offset of the offending item. Validation
//! fails with a [`ValidationError`], whose codes `TCC-V0xx` are listed in
//! `docs/tcc/format.md`.

use crate::id::FunctionId;

/// Why an input is not a valid encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EncodingErrorKind {
    /// Not JSON (or not UTF-8), or trailing data after the value.
    Syntax,
    /// A JSON value of the wrong type (e.g. a string where a number belongs).
    WrongType,
    /// A required key is absent.
    MissingKey,
    /// A key the format does not define for this object.
    UnknownKey,
    /// A key that appears twice in one object.
    DuplicateKey,
    /// An `op` that names no instruction.
    UnknownOp,
    /// A constant tag `t` that is not a constant tag.
    UnknownTag,
    /// A number outside the field's range (not a u32, non-integral, overflow).
    OutOfRange,
    /// A string on the number tag other than `NaN`, `Infinity`, `-Infinity`.
    BadNumberString,
    /// Input exceeds a documented decoder limit.
    LimitExceeded,
}

impl EncodingErrorKind {
    /// Stable snake_case name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            EncodingErrorKind::Syntax => "syntax",
            EncodingErrorKind::WrongType => "wrong_type",
            EncodingErrorKind::MissingKey => "missing_key",
            EncodingErrorKind::UnknownKey => "unknown_key",
            EncodingErrorKind::DuplicateKey => "duplicate_key",
            EncodingErrorKind::UnknownOp => "unknown_op",
            EncodingErrorKind::UnknownTag => "unknown_tag",
            EncodingErrorKind::OutOfRange => "out_of_range",
            EncodingErrorKind::BadNumberString => "bad_number_string",
            EncodingErrorKind::LimitExceeded => "limit_exceeded",
        }
    }
}

/// Errors of the artifact codec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrError {
    /// The bytes are not a valid artifact encoding.
    #[error("invalid encoding at {path} (byte {offset}): {message}")]
    InvalidEncoding {
        /// What is wrong.
        kind: EncodingErrorKind,
        /// JSON path of the offending item, e.g. `$.program.functions[0].instructions[3].op`.
        path: String,
        /// Byte offset into the input where the offending item starts.
        offset: usize,
        /// Human-readable detail.
        message: String,
    },
    /// The decoded artifact is not valid.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
}

impl IrError {
    /// Stable code: `TCC-E001` for encoding errors, the validation code otherwise.
    pub fn code(&self) -> &'static str {
        match self {
            IrError::InvalidEncoding { .. } => "TCC-E001",
            IrError::Invalid(v) => v.code(),
        }
    }
}

/// Where in the program a validation error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    /// Id of the function.
    pub function: FunctionId,
    /// Position of the function in `program.functions`.
    pub function_index: usize,
    /// Instruction index, where the error concerns one instruction.
    pub pc: Option<u32>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "function {}", self.function)?;
        if let Some(pc) = self.pc {
            write!(f, " pc {pc}")?;
        }
        Ok(())
    }
}

/// A rule of the spec's "Validation" section that an artifact breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// `engine_format_version` is not 1.
    #[error("unsupported engine_format_version {found} (this engine implements 1)")]
    UnsupportedFormatVersion {
        /// The version found.
        found: u32,
    },
    /// `artifact_hash` is empty.
    #[error("artifact_hash is empty")]
    EmptyArtifactHash,
    /// `frontend_id` is empty.
    #[error("frontend_id is empty")]
    EmptyFrontendId,
    /// `language_semantics_version` is not one of the known versions.
    #[error("unknown language_semantics_version {found:?}")]
    UnknownSemanticsVersion {
        /// The version found.
        found: String,
    },
    /// A required engine feature id that irkit does not know.
    #[error("unknown engine feature {feature:?}")]
    UnknownEngineFeature {
        /// The id.
        feature: String,
    },
    /// A known engine feature the implementing engine does not support.
    #[error("engine feature {feature:?} is not supported by this engine")]
    UnsupportedEngineFeature {
        /// The id.
        feature: String,
    },
    /// A required host capability id that irkit does not know.
    #[error("unknown host capability {capability:?}")]
    UnknownHostCapability {
        /// The id.
        capability: String,
    },
    /// A known host capability the host does not provide.
    #[error("host capability {capability:?} is not provided by this host")]
    UnsupportedHostCapability {
        /// The id.
        capability: String,
    },
    /// The program has no functions.
    #[error("program has no functions")]
    EmptyProgram,
    /// Two functions share an id.
    #[error("duplicate function id {id} (functions[{first}] and functions[{second}])")]
    DuplicateFunctionId {
        /// The id.
        id: FunctionId,
        /// Position of the first function with it.
        first: usize,
        /// Position of the repeat.
        second: usize,
    },
    /// `program.entry` names no function.
    #[error("entry function {entry} does not exist")]
    MissingEntry {
        /// The entry id.
        entry: FunctionId,
    },
    /// A jump, try or join target is not a pc of its function.
    #[error("{at}: {op} {field} {target} is out of range (function has {len} instructions)")]
    TargetOutOfRange {
        /// Where.
        at: Location,
        /// The instruction name.
        op: &'static str,
        /// The field (`target`, `catch`, `finally`, `join_pc`).
        field: &'static str,
        /// The target pc.
        target: u32,
        /// Instruction count.
        len: usize,
    },
    /// `LoadLocal` / `StoreLocal` index not below `local_count`.
    #[error("{at}: {op} local {local} is out of range (local_count {local_count})")]
    LocalOutOfRange {
        /// Where.
        at: Location,
        /// The instruction name.
        op: &'static str,
        /// The slot.
        local: u32,
        /// The function's local count.
        local_count: u32,
    },
    /// `param_count > local_count`.
    #[error("{at}: param_count {param_count} exceeds local_count {local_count}")]
    ParamCountExceedsLocals {
        /// Where.
        at: Location,
        /// Parameters.
        param_count: u32,
        /// Locals.
        local_count: u32,
    },
    /// The span array's length differs from the instruction count.
    #[error("{at}: {spans} spans for {instructions} instructions")]
    SpanCountMismatch {
        /// Where.
        at: Location,
        /// Span count.
        spans: usize,
        /// Instruction count.
        instructions: usize,
    },
    /// `param_defaults` length differs from `param_count`.
    #[error("{at}: {defaults} param_defaults for param_count {param_count}")]
    ParamDefaultsMismatch {
        /// Where.
        at: Location,
        /// Entries in `param_defaults`.
        defaults: usize,
        /// Parameter count.
        param_count: u32,
    },
    /// A call (or closure/function reference) names no function.
    #[error("{at}: {op} names function {func}, which does not exist")]
    UnknownFunction {
        /// Where.
        at: Location,
        /// The instruction name.
        op: &'static str,
        /// The missing id.
        func: FunctionId,
    },
    /// `Fork.count` outside 1..=32.
    #[error("{at}: Fork count {count} is outside 1..=32")]
    ForkCountOutOfRange {
        /// Where.
        at: Location,
        /// The count.
        count: u32,
    },
    /// An instruction needs an engine feature the envelope does not declare.
    #[error("{at}: {op} requires engine feature {feature:?}, which the envelope does not declare")]
    UndeclaredFeature {
        /// Where.
        at: Location,
        /// The instruction name.
        op: &'static str,
        /// The feature.
        feature: &'static str,
    },
    /// More than 1024 functions.
    #[error("program has {count} functions (at most {max})")]
    TooManyFunctions {
        /// The count.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// More than 100 000 instructions in one function.
    #[error("{at}: {count} instructions (at most {max})")]
    TooManyInstructions {
        /// Where.
        at: Location,
        /// The count.
        count: usize,
        /// The cap.
        max: usize,
    },
    /// More than 4096 locals.
    #[error("{at}: local_count {count} (at most {max})")]
    TooManyLocals {
        /// Where.
        at: Location,
        /// The count.
        count: u32,
        /// The cap.
        max: u32,
    },
    /// A constant string or property key longer than 1 MiB in UTF-8 bytes.
    #[error("{at}: {what} of {bytes} bytes (at most {max})")]
    StringTooLong {
        /// Where.
        at: Location,
        /// `const string`, `property key` or `param default`.
        what: &'static str,
        /// Length in bytes.
        bytes: usize,
        /// The cap.
        max: usize,
    },
}

impl ValidationError {
    /// Stable code of the rule.
    pub fn code(&self) -> &'static str {
        use ValidationError::*;
        match self {
            UnsupportedFormatVersion { .. } => "TCC-V001",
            EmptyArtifactHash => "TCC-V002",
            EmptyFrontendId => "TCC-V003",
            UnknownSemanticsVersion { .. } => "TCC-V004",
            UnknownEngineFeature { .. } => "TCC-V005",
            UnsupportedEngineFeature { .. } => "TCC-V006",
            UnknownHostCapability { .. } => "TCC-V007",
            UnsupportedHostCapability { .. } => "TCC-V008",
            EmptyProgram => "TCC-V009",
            DuplicateFunctionId { .. } => "TCC-V010",
            MissingEntry { .. } => "TCC-V011",
            TargetOutOfRange { .. } => "TCC-V012",
            LocalOutOfRange { .. } => "TCC-V013",
            ParamCountExceedsLocals { .. } => "TCC-V014",
            SpanCountMismatch { .. } => "TCC-V015",
            ParamDefaultsMismatch { .. } => "TCC-V016",
            UnknownFunction { .. } => "TCC-V017",
            ForkCountOutOfRange { .. } => "TCC-V018",
            UndeclaredFeature { .. } => "TCC-V019",
            TooManyFunctions { .. } => "TCC-V020",
            TooManyInstructions { .. } => "TCC-V021",
            TooManyLocals { .. } => "TCC-V022",
            StringTooLong { .. } => "TCC-V023",
        }
    }

    /// Where in the program the error is, when it concerns one function.
    pub fn location(&self) -> Option<Location> {
        use ValidationError::*;
        match self {
            TargetOutOfRange { at, .. }
            | LocalOutOfRange { at, .. }
            | ParamCountExceedsLocals { at, .. }
            | SpanCountMismatch { at, .. }
            | ParamDefaultsMismatch { at, .. }
            | UnknownFunction { at, .. }
            | ForkCountOutOfRange { at, .. }
            | UndeclaredFeature { at, .. }
            | TooManyInstructions { at, .. }
            | TooManyLocals { at, .. }
            | StringTooLong { at, .. } => Some(*at),
            _ => None,
        }
    }
}
