//! The library's JSON, exactly as the reference writes it (System.Text.Json
//! with `WriteIndented=false`, nulls omitted, string enums, no naming policy).

mod reader;
mod writer;

use crate::library::CompiledLibrary;

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
    /// Byte offset into the payload, where known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            JsonError::Syntax { offset, .. } | JsonError::TooDeep { offset } => Some(*offset),
            JsonError::Schema { .. } => None,
        }
    }
}

/// The compact payload the container carries, for container `version` (3 omits struct keys).
pub fn to_compact_json(library: &CompiledLibrary, version: i32) -> String {
    let mut emitter = writer::Emitter::new(false);
    writer::write_library(&mut emitter, library, version);
    emitter.finish()
}

/// `WriteJson`: the whole library as indented JSON (two spaces, `\n` line ends),
/// with no container. For inspection and diffs; the reader refuses it.
pub fn write_json(library: &CompiledLibrary) -> String {
    let mut emitter = writer::Emitter::new(true);
    writer::write_library(&mut emitter, library, crate::container::WRITE_VERSION);
    emitter.finish()
}

/// Decodes a payload written for container `version`.
pub fn from_json(payload: &[u8], version: i32) -> Result<CompiledLibrary, JsonError> {
    check_depth(payload)?;
    let value: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| JsonError::Syntax {
            offset: offset_of(payload, e.line(), e.column()),
            message: strip_position(&e.to_string()),
        })?;
    reader::read_library(&value, version)
}

/// Refuses nesting deeper than [`MAX_DEPTH`] before anything recursive runs.
fn check_depth(payload: &[u8]) -> Result<(), JsonError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &b) in payload.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(JsonError::TooDeep { offset });
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// serde_json reports 1-based line and column; turn them into a byte offset.
fn offset_of(payload: &[u8], line: usize, column: usize) -> usize {
    let mut current = 1usize;
    let mut start = 0usize;
    if line > 1 {
        for (i, &b) in payload.iter().enumerate() {
            if b == b'\n' {
                current += 1;
                if current == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    (start + column.saturating_sub(1)).min(payload.len())
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
