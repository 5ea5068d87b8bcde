//! Canonical text format, version 1 (spec sections 10 and 11).
//!
//! [`read`] decodes, parses, binds and verifies a `.vpl` text; [`write`]
//! verifies a module and prints its canonical text, reading it back through
//! the verifier before returning it.

use crate::ir::{Module, Span};
use std::fmt;

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

/// Reads a module from canonical text. `label` names the source in errors.
pub fn read(bytes: &[u8], label: &str) -> Result<Module, Error> {
    let _ = bytes;
    Err(Error {
        kind: ErrorKind::Syntactic,
        message: "unsupported: the text reader is not implemented yet".into(),
        label: label.into(),
        position: Span {
            offset: 0,
            line: 1,
            column: 1,
        },
        verify: None,
    })
}

/// Verifies `module` and returns its canonical text.
pub fn write(module: &Module) -> Result<String, Error> {
    crate::verify::verify(module).map_err(|e| Error {
        kind: ErrorKind::Semantic,
        message: e.to_string(),
        label: "<module>".into(),
        position: e.span.unwrap_or(Span {
            offset: 0,
            line: 1,
            column: 1,
        }),
        verify: Some(Box::new(e)),
    })?;
    Err(Error {
        kind: ErrorKind::Semantic,
        message: "unsupported: the text writer is not implemented yet".into(),
        label: "<module>".into(),
        position: Span {
            offset: 0,
            line: 1,
            column: 1,
        },
        verify: None,
    })
}
