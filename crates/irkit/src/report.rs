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
        Ok(Outcome::Verdict) => ExitCode::from(crate::exit::EXIT_VERDICT),
        Err(error) if crate::pipe::is_closed_pipe(&error) => {
            ExitCode::from(crate::exit::EXIT_CLOSED_PIPE)
        }
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
        CliError::Usage(_)
        | CliError::Io { .. }
        | CliError::Rejected(_)
        | CliError::Unavailable { .. }
            if format == Format::Json =>
        {
            println!("{}", plain_json(error));
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

/// An error without diagnostics as one JSON diagnostic object (the keys of
/// `Diagnostic::to_json`): kind `usage`, `io`, `environment` or `engine`.
fn plain_json(error: &CliError) -> String {
    let (kind, label, message) = match error {
        CliError::Io { path, .. } => ("io", path.clone(), error.to_string()),
        CliError::Unavailable { message, note } => {
            ("environment", String::new(), format!("{message} ({note})"))
        }
        CliError::Rejected(_) => ("engine", String::new(), error.to_string()),
        _ => ("usage", String::new(), error.to_string()),
    };
    serde_json::json!({
        "severity": "error",
        "kind": kind,
        "code": null,
        "message": message,
        "label": label,
        "offset": null,
        "line": null,
        "column": null,
    })
    .to_string()
}

/// Whether the command line asks for `--format json` (read before clap has
/// parsed it, so a bad command line can still answer in JSON).
pub fn json_requested(args: impl Iterator<Item = String>) -> bool {
    let mut previous_was_format = false;
    for arg in args {
        if arg == "--format=json" || (previous_was_format && arg == "json") {
            return true;
        }
        previous_was_format = arg == "--format";
    }
    false
}

/// Prints clap's rendered usage error as one JSON diagnostic on standard output.
pub fn usage_json(rendered: &str) {
    let message = rendered
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    println!(
        "{}",
        serde_json::json!({
            "severity": "error",
            "kind": "usage",
            "code": null,
            "message": message,
            "label": "",
            "offset": null,
            "line": null,
            "column": null,
            "usage": rendered.trim_end(),
        })
    );
}
