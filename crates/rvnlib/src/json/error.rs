//! Decoding errors and the nesting limit, shared by the JSON reader and its entry points.

/// Maximum JSON nesting depth, System.Text.Json's default `MaxDepth`: a
/// payload the reference could not read is refused here too.
pub const MAX_DEPTH: usize = 64;

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// Not well-formed JSON.
    #[error("malformed JSON at payload byte {offset}: {message}")]
    Syntax {
        /// Byte offset into the payload.
        offset: usize,
        /// The parser's message.
        message: String,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("JSON nesting deeper than {MAX_DEPTH} levels at payload byte {offset}")]
    TooDeep {
        /// Byte offset of the bracket that went too deep.
        offset: usize,
    },
    /// Well-formed JSON that does not have the library's shape.
    #[error("{path}: {message}")]
    Schema {
        /// JSONPath-like location (`$.Ir.Functions[0].Body`).
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl JsonError {
    /// The stable code (`docs/diagnostics.md`): `RVN-JSON-SYNTAX` for text that
    /// is not JSON (or nests too deep), `RVN-JSON-SCHEMA` for JSON of the wrong shape.
    pub fn code(&self) -> &'static str {
        match self {
            JsonError::Syntax { .. } | JsonError::TooDeep { .. } => "RVN-JSON-SYNTAX",
            JsonError::Schema { .. } => "RVN-JSON-SCHEMA",
        }
    }

    /// Byte offset into the payload, where known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            JsonError::Syntax { offset, .. } | JsonError::TooDeep { offset } => Some(*offset),
            JsonError::Schema { .. } => None,
        }
    }
}
