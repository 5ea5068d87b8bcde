//! Renders a verb's result once, in the verb's `--format`, and turns it into
//! the exit status (0 ok, 1 invalid input, 2 usage or I/O).

use crate::diag::{Format, emit};
use crate::error::{CliError, Outcome};
use std::process::ExitCode;

/// Prints `result`'s error (if any) and returns the exit status.
pub fn finish(result: Result<Outcome, CliError>, format: Format) -> ExitCode {
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Failure) => ExitCode::from(crate::exit::EXIT_INVALID),
        Err(error) => {
            render(&error, format);
            ExitCode::from(error.exit_status())
        }
    }
}

/// Prints one error: diagnostics in `format`, anything else as an `error:`
/// line on standard error.
fn render(error: &CliError, format: Format) {
    match error {
        CliError::Invalid(report) | CliError::Toolchain(report) => {
            emit(&report.diagnostics, format, report.source.as_deref());
        }
        CliError::Unavailable { message, note } => {
            eprintln!("error: {message}");
            eprintln!("note: {note}");
        }
        CliError::Several(errors) => {
            for e in errors {
                render(e, format);
            }
        }
        CliError::Usage(_) | CliError::Io { .. } | CliError::Rejected(_) => {
            eprintln!("error: {error}");
        }
    }
}
