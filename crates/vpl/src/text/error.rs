//! Text errors (section 11) and the version-1 limits the reader and writer
//! enforce: a leaf that the lexer, reader and writer share.

use crate::ir::Span;
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

impl Error {
    /// The stable diagnostic code: the verifier rule family's (`VPL-V-…`)
    /// when verification failed, else the class's ([`crate::code`]).
    pub fn code(&self) -> &'static str {
        match (&self.verify, self.kind) {
            (Some(verify), _) => verify.rule.code(),
            (None, ErrorKind::Lexical) => crate::code::LEXICAL,
            (None, ErrorKind::Syntactic) => crate::code::SYNTACTIC,
            (None, ErrorKind::Semantic) => crate::code::SEMANTIC,
        }
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
