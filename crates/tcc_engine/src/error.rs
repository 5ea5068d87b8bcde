//! Engine errors with stable codes (`TCC-R0xx`, listed in `docs/tcc/engine.md`).
//!
//! A [`EngineError::Fatal`] is an engine type error: it is not catchable by
//! the program's `PushTry` handlers (catchable errors are values thrown by
//! `Throw`, effect failures, join failures and Python runtime errors).

/// Kinds of fatal runtime errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FatalKind {
    /// An operand of the wrong type (e.g. `Lt` on a string).
    TypeError,
    /// Pop from an empty operand stack.
    StackUnderflow,
    /// A reference to a heap cell that does not exist.
    DanglingRef,
    /// A durable operation outside the entry frame, or a malformed join.
    IllegalDurableOp,
    /// An index out of range on a write.
    IndexOutOfRange,
    /// A cycle met while walking a value (Python equality, export).
    Cycle,
    /// A structural mutation of an array being iterated.
    IteratorInvalidated,
    /// A value that cannot cross the host boundary (closure, cycle).
    NotExportable,
    /// Wrong argument count for the callee's language.
    Arity,
    /// An instruction the engine does not implement.
    Unsupported,
}

impl FatalKind {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FatalKind::TypeError => "type_error",
            FatalKind::StackUnderflow => "stack_underflow",
            FatalKind::DanglingRef => "dangling_ref",
            FatalKind::IllegalDurableOp => "illegal_durable_op",
            FatalKind::IndexOutOfRange => "index_out_of_range",
            FatalKind::Cycle => "cycle",
            FatalKind::IteratorInvalidated => "iterator_invalidated",
            FatalKind::NotExportable => "not_exportable",
            FatalKind::Arity => "arity",
            FatalKind::Unsupported => "unsupported",
        }
    }
}

/// Where in the program an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// Function id.
    pub func: u32,
    /// Instruction index.
    pub pc: u32,
}

/// Errors of the engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// An uncatchable engine type error.
    #[error("fatal {}: {message}{}", kind.as_str(), site_text(site))]
    Fatal {
        /// What went wrong.
        kind: FatalKind,
        /// Detail.
        message: String,
        /// Function and pc, when known.
        site: Option<Site>,
    },
    /// A resource limit was reached.
    #[error("limit exceeded: {what} (at most {max}){}", site_text(site))]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The limit's value.
        max: u64,
        /// Function and pc, when known.
        site: Option<Site>,
    },
    /// The artifact failed validation.
    #[error("invalid artifact: {0}")]
    InvalidArtifact(#[from] tcc_ir::ValidationError),
    /// A continuation (or delta) is malformed.
    #[error("invalid continuation at {path}: {message}")]
    InvalidContinuation {
        /// JSON path of the offending item.
        path: String,
        /// Detail.
        message: String,
    },
    /// The continuation was produced from a different artifact (pinning).
    #[error("artifact mismatch: continuation has {continuation}, artifact is {artifact}")]
    ArtifactMismatch {
        /// Hash recorded in the continuation.
        continuation: String,
        /// Hash of the artifact offered.
        artifact: String,
    },
    /// A continuation does not fit the artifact (versions, frames, pcs).
    #[error("resume check failed: {0}")]
    ResumeMismatch(String),
    /// A host message is malformed.
    #[error("invalid host message at {path}: {message}")]
    InvalidMessage {
        /// JSON path of the offending item.
        path: String,
        /// Detail.
        message: String,
    },
    /// `host_protocol_version` is missing from a host message.
    #[error("host message lacks host_protocol_version")]
    MissingHostProtocolVersion,
    /// `host_protocol_version` names another protocol.
    #[error("unsupported host protocol version {got} (supported: {supported})")]
    UnsupportedHostProtocol {
        /// Version received.
        got: String,
        /// Version implemented.
        supported: u32,
    },
    /// A response that does not answer the outstanding request or state.
    #[error("unexpected host response {response}: {expected}")]
    UnexpectedHostResponse {
        /// The response type received.
        response: String,
        /// What the engine was waiting for.
        expected: String,
    },
}

fn site_text(site: &Option<Site>) -> String {
    match site {
        Some(s) => format!(" (fn {} pc {})", s.func, s.pc),
        None => String::new(),
    }
}

impl EngineError {
    /// A fatal error without a site (the stepper adds it).
    pub fn fatal(kind: FatalKind, message: impl Into<String>) -> EngineError {
        EngineError::Fatal {
            kind,
            message: message.into(),
            site: None,
        }
    }

    /// A limit error without a site.
    pub fn limit(what: &'static str, max: u64) -> EngineError {
        EngineError::Limit {
            what,
            max,
            site: None,
        }
    }

    /// A continuation decoding error.
    pub fn continuation(path: impl Into<String>, message: impl Into<String>) -> EngineError {
        EngineError::InvalidContinuation {
            path: path.into(),
            message: message.into(),
        }
    }

    /// A host message decoding error.
    pub fn message(path: impl Into<String>, message: impl Into<String>) -> EngineError {
        EngineError::InvalidMessage {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Attaches a site to fatal and limit errors that lack one.
    pub fn at(mut self, at: Site) -> EngineError {
        match &mut self {
            EngineError::Fatal { site, .. } | EngineError::Limit { site, .. } if site.is_none() => {
                *site = Some(at)
            }
            _ => {}
        }
        self
    }

    /// Stable code.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::Fatal { .. } => "TCC-R001",
            EngineError::Limit { .. } => "TCC-R010",
            EngineError::InvalidArtifact(e) => e.code(),
            EngineError::InvalidContinuation { .. } => "TCC-R020",
            EngineError::ArtifactMismatch { .. } => "TCC-R021",
            EngineError::ResumeMismatch(_) => "TCC-R022",
            EngineError::InvalidMessage { .. } => "TCC-R030",
            EngineError::MissingHostProtocolVersion => "TCC-R031",
            EngineError::UnsupportedHostProtocol { .. } => "TCC-R032",
            EngineError::UnexpectedHostResponse { .. } => "TCC-R033",
        }
    }

    /// Stable kind name for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            EngineError::Fatal { .. } => "fatal",
            EngineError::Limit { .. } => "limit",
            EngineError::InvalidArtifact(_) => "validation",
            EngineError::InvalidContinuation { .. } => "continuation",
            EngineError::ArtifactMismatch { .. } => "artifact_mismatch",
            EngineError::ResumeMismatch(_) => "resume",
            EngineError::InvalidMessage { .. }
            | EngineError::MissingHostProtocolVersion
            | EngineError::UnsupportedHostProtocol { .. }
            | EngineError::UnexpectedHostResponse { .. } => "protocol",
        }
    }
}
