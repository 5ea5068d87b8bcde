//! Canonical text format, version 1 (spec sections 10 and 11).
//!
//! [`read`] decodes, parses, binds and verifies a `.vpl` text; [`write()`]
//! verifies a module and prints its canonical text, reading it back through
//! the verifier before returning it.

use crate::ir::{Module, Span};
use std::fmt;

mod lexer;
mod reader;
mod writer;

/// The class of a text error (section 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Encoding, trivia, string, number and word errors (`LexicalError`).
    Lexical,
    /// Malformed form shapes or token categories, trailing input, nesting
    /// limits (`SyntacticalError`).
    Syntactic,
    /// Unknown/duplicate bindings, invalid types and verifier failures
    /// (`SemanticalError`).
    Semantic,
}

impl ErrorKind {
    /// The stable lower-case name (`lexical`, `syntactic`, `semantic`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Lexical => "lexical",
            ErrorKind::Syntactic => "syntactic",
            ErrorKind::Semantic => "semantic",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A located text error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{label}:{}:{}: {kind} error: {message}", position.line, position.column)]
pub struct Error {
    /// Lexical, syntactic or semantic.
    pub kind: ErrorKind,
    /// What is wrong.
    pub message: String,
    /// The source label given to [`read`].
    pub label: String,
    /// Byte offset and 1-based line/column (code points).
    pub position: Span,
    /// The verifier's diagnostic, when verification failed.
    pub verify: Option<Box<crate::verify::VerifyError>>,
}

/// Version-1 limit on syntactic form/atom nesting (section 10.2). The
/// module form is level 1; the atoms of a form at level `n` are at `n + 1`.
pub const MAX_NESTING: u32 = 128;

/// Version-1 limit on named-type dependency depth: dependency edges on the
/// longest path, over all declarations (section 10.2).
pub const MAX_TYPE_DEPTH: u32 = 128;

/// The writer's limit on derived-reference depth (section 10.2).
pub const MAX_REFERENCE_DEPTH: usize = 120;

/// Reads a module from canonical text and verifies it.
///
/// `label` names the source in errors. Every failure is an [`Error`] of
/// kind lexical, syntactic or semantic with a byte offset and a 1-based
/// line/column counted in code points.
pub fn read(bytes: &[u8], label: &str) -> Result<Module, Error> {
    let text = lexer::decode(bytes, label).map_err(|e| *e)?;
    read_decoded(text, label)
}

/// [`read`] after UTF-8 validation.
fn read_decoded(text: &str, label: &str) -> Result<Module, Error> {
    let module = reader::parse(text, label).map_err(|e| *e)?;
    verify_as_text_error(&module, label, text)?;
    Ok(module)
}

/// Verifies `module` and maps a failure to a semantic [`Error`]; objects
/// without a span fall back to the module opening.
fn verify_as_text_error(module: &Module, label: &str, _text: &str) -> Result<(), Error> {
    crate::verify::verify(module).map_err(|e| Error {
        kind: ErrorKind::Semantic,
        message: e.to_string(),
        label: label.to_string(),
        position: e.span.or(module.span).unwrap_or(START),
        verify: Some(Box::new(e)),
    })
}

const START: Span = Span {
    offset: 0,
    line: 1,
    column: 1,
};

/// Verifies `module` and returns its canonical text (section 11). The text
/// is read back through the reader and verifier before it is returned.
pub fn write(module: &Module) -> Result<String, Error> {
    verify_as_text_error(module, WRITER_LABEL, "")?;
    let text = writer::print(module).map_err(|message| Error {
        kind: ErrorKind::Semantic,
        message,
        label: WRITER_LABEL.to_string(),
        position: module.span.unwrap_or(START),
        verify: None,
    })?;
    // The full read back: every check of `read` except re-validating UTF-8,
    // which a `String` already guarantees.
    let text_checked = lexer::decode_str(&text, WRITER_LABEL).map_err(|e| *e)?;
    read_decoded(text_checked, WRITER_LABEL)?;
    Ok(text)
}

/// The label of errors about a module given to [`write()`].
pub const WRITER_LABEL: &str = "<written module>";
