//! The one error type every verb returns, and what a verb that ran reports.
//!
//! A verb returns `Result<Outcome, CliError>`; `main` renders the error once
//! (`report.rs`) in the verb's `--format`. The exit status follows from the
//! variant: 1 for invalid input, 2 for usage, I/O and an unusable environment.

use crate::diag::Diagnostic;
use crate::exit::{EXIT_INVALID, EXIT_USAGE};

/// A verb that ran to its end: exit 0, or exit 1 for a negative answer the
/// verb has already printed (a breaking diff, a failed workflow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1 with nothing more to print.
    Failure,
    /// Exit 3 ([`crate::exit::EXIT_VERDICT`]): a negative verdict about valid
    /// input that the verb has printed (a breaking change, a faulted run).
    Verdict,
}

/// What an I/O error was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// Reading a file or standard input.
    Read,
    /// Writing a file or standard output.
    Write,
    /// Creating a directory.
    Create,
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Create => "create",
        })
    }
}

/// Diagnostics about one input, and its text for the human form's snippet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The diagnostics, in order.
    pub diagnostics: Vec<Diagnostic>,
    /// The input as text, when it is text.
    pub source: Option<String>,
}

/// Why a verb did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A bad command line, or an input unusable before it is read (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A file, standard input or standard output could not be read or written (exit 2).
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: IoOp,
        /// The path as given, or `standard input` / `standard output`.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A driver, tool or service the verb needs is not there (exit 2); `note`
    /// says what provides it.
    #[error("{message}")]
    Unavailable {
        /// What failed.
        message: String,
        /// What to install or start.
        note: String,
    },
    /// Invalid input, with its diagnostics (exit 1).
    #[error("invalid input ({} diagnostic(s))", .0.diagnostics.len())]
    Invalid(Report),
    /// Input a consumer rejected without a location to point at (exit 1):
    /// a driver, a server or an execution said no.
    #[error("{0}")]
    Rejected(String),
    /// An engine's toolchain failed on valid input; reported as diagnostics (exit 2).
    #[allow(
        dead_code,
        reason = "only the LLVM engines construct it, which only irkit-llvm compiles"
    )]
    #[error("toolchain failure ({} diagnostic(s))", .0.diagnostics.len())]
    Toolchain(Report),
    /// Several inputs failed, each on its own: rendered in order, and the exit
    /// status is the highest of theirs.
    #[error("{} inputs failed", .0.len())]
    Several(Vec<CliError>),
}

impl CliError {
    /// The exit status this error ends the process with.
    pub fn exit_status(&self) -> u8 {
        match self {
            CliError::Invalid(_) | CliError::Rejected(_) => EXIT_INVALID,
            CliError::Usage(_)
            | CliError::Io { .. }
            | CliError::Unavailable { .. }
            | CliError::Toolchain(_) => EXIT_USAGE,
            CliError::Several(errors) => errors
                .iter()
                .map(CliError::exit_status)
                .max()
                .unwrap_or(EXIT_INVALID),
        }
    }

    /// A usage error from anything printable.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage(message.into())
    }

    /// Invalid input: `diagnostics` about the input whose text is `source`.
    pub fn invalid(diagnostics: Vec<Diagnostic>, source: Option<&str>) -> CliError {
        CliError::Invalid(Report {
            diagnostics,
            source: source.map(str::to_string),
        })
    }

    /// The diagnostics of a library error about input `origin`.
    pub fn diagnosed<E: Diagnose + ?Sized>(error: &E, origin: &Origin<'_>) -> CliError {
        CliError::invalid(error.diagnostics(origin), origin.text)
    }

    /// Several errors as one; a single one stays itself.
    pub fn several(mut errors: Vec<CliError>) -> CliError {
        if errors.len() == 1 {
            errors.remove(0)
        } else {
            CliError::Several(errors)
        }
    }
}

/// The input a library error is about: its label in diagnostics (the path as
/// given, or `<stdin>`) and, for a text input, its text.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The label diagnostics name.
    pub label: &'a str,
    /// The input's text, when it is text (lines, columns and the snippet come from it).
    pub text: Option<&'a str>,
}

impl<'a> Origin<'a> {
    /// A binary input, or one whose text diagnostics do not point into.
    pub fn binary(label: &'a str) -> Origin<'a> {
        Origin { label, text: None }
    }

    /// A text input.
    pub fn text(label: &'a str, text: Option<&'a str>) -> Origin<'a> {
        Origin { label, text }
    }
}

/// A library error that becomes CLI diagnostics. Each library error type has
/// exactly one implementation (`diagnose.rs`), so the same error reads the
/// same in every verb.
pub trait Diagnose {
    /// The diagnostics for this error about input `origin`.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_has_its_exit_status_and_several_take_the_highest() {
        let invalid = || CliError::invalid(Vec::new(), None);
        assert_eq!(invalid().exit_status(), EXIT_INVALID);
        assert_eq!(CliError::Rejected("no".into()).exit_status(), EXIT_INVALID);
        assert_eq!(CliError::usage("bad flag").exit_status(), EXIT_USAGE);
        let io = CliError::Io {
            op: IoOp::Read,
            path: "a.txt".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert!(io.to_string().starts_with("cannot read a.txt: "), "{io}");
        assert_eq!(io.exit_status(), EXIT_USAGE);
        let both = CliError::several(vec![invalid(), CliError::usage("x")]);
        assert_eq!(both.exit_status(), EXIT_USAGE);
        assert!(matches!(
            CliError::several(vec![invalid()]),
            CliError::Invalid(_)
        ));
    }
}
