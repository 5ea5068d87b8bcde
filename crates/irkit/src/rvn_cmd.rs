//! `irkit rvn <verb>`: Raven `.rvnlib` compiled shader libraries (rvnlib-ir.md).

use crate::diag::{Diagnostic, Format, emit};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use rvnlib::link::{LinkError, LinkInput, LinkOptions};
use rvnlib::verify::VerifyError;
use rvnlib::{CompiledLibrary, ReadError};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Verbs of `irkit rvn`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Print a library as the indented inspection JSON (no container, not readable back).
    Inspect {
        /// The .rvnlib file (`-` for standard input).
        file: PathBuf,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Read and verify libraries (container, JSON schema, IR verifier).
    Verify {
        /// The .rvnlib files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Link libraries into one module by key and write it as a .rvnlib.
    Link {
        /// The libraries, in link order.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// The consumer's own library: its names are reserved first and its items are roots.
        #[arg(long)]
        consumer: Option<PathBuf>,
        /// Keep only what these function keys (and the consumer) reach; takes several
        /// keys, so put it after the files or repeat it.
        #[arg(long = "entry", value_name = "KEY", num_args = 1..)]
        entries: Vec<String>,
        /// Name of the linked library (default: the consumer's name, else `linked`).
        #[arg(long)]
        name: Option<String>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Report what changed between two versions of a library and whether a
    /// consumer built against OLD still links against NEW (exit 0 compatible,
    /// 1 breaking).
    Diff {
        /// The version consumers were built against.
        old: PathBuf,
        /// The new version.
        new: PathBuf,
        /// Output format (`json`: one object per change, then a summary).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print the call graph reachable from a function key.
    Calls {
        /// The .rvnlib file.
        file: PathBuf,
        /// The function key to start from.
        key: String,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

/// Runs one `irkit rvn` verb.
pub fn run(verb: Verb) -> ExitCode {
    match verb {
        Verb::Inspect {
            file,
            output,
            format,
        } => inspect(&file, output.as_deref(), format),
        Verb::Verify { files, format } => verify(&files, format),
        Verb::Link {
            files,
            output,
            consumer,
            entries,
            name,
            format,
        } => link(&files, &output, consumer.as_deref(), entries, name, format),
        Verb::Calls { file, key, format } => calls(&file, &key, format),
        Verb::Diff { old, new, format } => diff(&old, &new, format),
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

fn diagnostic(
    kind: &str,
    code: Option<&str>,
    message: String,
    label: &str,
    offset: Option<u64>,
) -> Diagnostic {
    Diagnostic {
        kind: kind.to_string(),
        code: code.map(str::to_string),
        message,
        label: label.to_string(),
        offset,
        line: None,
        column: None,
    }
}

fn verify_diagnostic(error: &VerifyError, label: &str) -> Diagnostic {
    let mut message = String::new();
    if let Some(item) = &error.item {
        message.push_str(&format!("in `{item}`"));
    }
    if !error.path.is_empty() {
        message.push_str(&format!(" at {}", error.path));
    }
    if !message.is_empty() {
        message.push_str(": ");
    }
    message.push_str(&error.message);
    diagnostic("verify", Some(error.code), message, label, None)
}

fn read_diagnostics(error: &ReadError, label: &str) -> Vec<Diagnostic> {
    match error {
        ReadError::Invalid(errors) => errors.iter().map(|e| verify_diagnostic(e, label)).collect(),
        other => vec![diagnostic(
            other.kind(),
            None,
            other.to_string(),
            label,
            other.offset(),
        )],
    }
}

/// Reads and verifies one library; `Err` carries the exit code after reporting.
fn load(path: &Path, format: Format, verified: bool) -> Result<(String, CompiledLibrary), u8> {
    let (label, bytes) = read_input(path).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })?;
    let result = if verified {
        rvnlib::read(&bytes)
    } else {
        rvnlib::read_unverified(&bytes).map(|(_, library)| library)
    };
    match result {
        Ok(library) => Ok((label, library)),
        Err(error) => {
            emit(&read_diagnostics(&error, &label), format, None);
            Err(EXIT_INVALID)
        }
    }
}

fn inspect(file: &Path, output: Option<&Path>, format: Format) -> ExitCode {
    let (_, library) = match load(file, format, false) {
        Ok(loaded) => loaded,
        Err(code) => return ExitCode::from(code),
    };
    let mut text = rvnlib::write_json(&library);
    text.push('\n');
    match write_output(output, text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(&e),
    }
}

fn verify(files: &[PathBuf], format: Format) -> ExitCode {
    let mut status = 0u8;
    for file in files {
        match load(file, format, true) {
            Ok((label, library)) => {
                if format == Format::Human {
                    println!(
                        "{label}: ok: library `{}`, {} struct(s), {} function(s), {} type(s)",
                        library.name,
                        library.ir.structs.len(),
                        library.ir.functions.len(),
                        library.types.len()
                    );
                }
            }
            Err(code) => status = status.max(code),
        }
    }
    ExitCode::from(status)
}

fn link(
    files: &[PathBuf],
    output: &Path,
    consumer: Option<&Path>,
    entries: Vec<String>,
    name: Option<String>,
    format: Format,
) -> ExitCode {
    let mut loaded = Vec::new();
    let mut failed = None;
    for file in files {
        match load(file, format, true) {
            Ok(l) => loaded.push(l),
            Err(code) => failed = Some(failed.unwrap_or(0).max(code)),
        }
    }
    let consumer = match consumer.map(|c| load(c, format, true)).transpose() {
        Ok(c) => c,
        Err(code) => return ExitCode::from(code),
    };
    if let Some(code) = failed {
        return ExitCode::from(code);
    }
    let inputs: Vec<LinkInput<'_>> = loaded
        .iter()
        .map(|(label, library)| LinkInput {
            origin: label,
            library,
        })
        .collect();
    let options = LinkOptions {
        name: name.unwrap_or_else(|| {
            consumer
                .as_ref()
                .map_or_else(|| "linked".to_string(), |(_, c)| c.name.clone())
        }),
        consumer: consumer.as_ref().map(|(label, library)| LinkInput {
            origin: label,
            library,
        }),
        entries,
    };
    let out_label = output.display().to_string();
    match rvnlib::link::link(&inputs, &options) {
        Ok(linked) => {
            for warning in &linked.warnings {
                emit(
                    &[diagnostic(
                        "warning",
                        Some(warning.code),
                        warning.message.clone(),
                        &out_label,
                        None,
                    )],
                    format,
                    None,
                );
            }
            if format == Format::Human {
                for rename in &linked.renames {
                    eprintln!(
                        "note: {} `{}` is named `{}` in the module (key `{}`)",
                        rename.what, rename.from, rename.to, rename.key
                    );
                }
            }
            let bytes = match rvnlib::write(&linked.library) {
                Ok(bytes) => bytes,
                Err(e) => return usage_error(&e.to_string()),
            };
            if let Err(e) = write_output(Some(output), &bytes) {
                return usage_error(&e);
            }
            let version = rvnlib::version::version_for(&linked.library);
            let why = if version == rvnlib::version::RAVEN_VERSION {
                "the version Raven reads"
            } else {
                "a struct key differs from its name; Raven's reader accepts only version 3"
            };
            match format {
                Format::Human => eprintln!(
                    "linked {} struct(s) and {} function(s) into {out_label} as container version {version} ({why})",
                    linked.library.ir.structs.len(),
                    linked.library.ir.functions.len()
                ),
                Format::Json => println!(
                    "{}",
                    serde_json::json!({
                        "kind": "written",
                        "path": out_label,
                        "version": version,
                        "raven_readable": version == rvnlib::version::RAVEN_VERSION,
                        "structs": linked.library.ir.structs.len(),
                        "functions": linked.library.ir.functions.len(),
                    })
                ),
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            let diagnostics: Vec<Diagnostic> = errors
                .iter()
                .map(|e| match e {
                    LinkError::Verify {
                        origin,
                        error,
                        library,
                    } => {
                        let mut d = verify_diagnostic(error, origin);
                        d.message = format!("library `{library}`: {}", d.message);
                        d
                    }
                    other => diagnostic(
                        other.kind(),
                        other.code(),
                        other.to_string(),
                        &out_label,
                        None,
                    ),
                })
                .collect();
            emit(&diagnostics, format, None);
            ExitCode::from(EXIT_INVALID)
        }
    }
}

fn calls(file: &Path, key: &str, format: Format) -> ExitCode {
    let (label, library) = match load(file, format, true) {
        Ok(loaded) => loaded,
        Err(code) => return ExitCode::from(code),
    };
    let Some(edges) = rvnlib::walk::call_graph(&library, key) else {
        emit(
            &[diagnostic(
                "unknown-key",
                None,
                format!(
                    "no function of library `{}` has the key `{key}`",
                    library.name
                ),
                &label,
                None,
            )],
            format,
            None,
        );
        return ExitCode::from(EXIT_INVALID);
    };
    let mut out = String::new();
    match format {
        Format::Human => {
            out.push_str(key);
            out.push('\n');
            for edge in &edges {
                let note = if edge.resolved {
                    ""
                } else {
                    "  (not in this library)"
                };
                out.push_str(&format!("  {} -> {}{note}\n", edge.caller, edge.callee));
            }
        }
        Format::Json => {
            for edge in &edges {
                let line = serde_json::json!({
                    "caller": edge.caller,
                    "callee": edge.callee,
                    "resolved": edge.resolved,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
    }
    match write_output(None, out.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(&e),
    }
}

fn diff(old: &Path, new: &Path, format: Format) -> ExitCode {
    let old = load(old, format, true);
    let new = load(new, format, true);
    let ((old_label, old), (new_label, new)) = match (old, new) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(a), Err(b)) => return ExitCode::from(a.max(b)),
        (Err(code), _) | (_, Err(code)) => return ExitCode::from(code),
    };
    let report = rvnlib::diff::diff(&old, &new);
    let breaking = report.breaking().count();
    let mut out = String::new();
    match format {
        Format::Human => {
            out.push_str(&format!(
                "{old_label} (`{}`) -> {new_label} (`{}`)\n",
                old.name, new.name
            ));
            for change in &report.changes {
                out.push_str(&format!(
                    "{:<10} {} `{}`: {}\n",
                    if change.breaking() {
                        "breaking"
                    } else {
                        "compatible"
                    },
                    change.kind.name(),
                    change.subject,
                    change.detail
                ));
            }
            out.push_str(&format!(
                "{} change(s), {breaking} breaking: {}\n",
                report.changes.len(),
                if report.compatible() {
                    "a consumer built against the old version links against the new one"
                } else {
                    "a consumer built against the old version breaks against the new one"
                }
            ));
        }
        Format::Json => {
            for change in &report.changes {
                let line = serde_json::json!({
                    "kind": "change",
                    "change": change.kind.name(),
                    "breaking": change.breaking(),
                    "subject": change.subject,
                    "detail": change.detail,
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
            let summary = serde_json::json!({
                "kind": "summary",
                "old": old_label,
                "new": new_label,
                "changes": report.changes.len(),
                "breaking": breaking,
                "compatible": report.compatible(),
            });
            out.push_str(&summary.to_string());
            out.push('\n');
        }
    }
    if let Err(e) = write_output(None, out.as_bytes()) {
        return usage_error(&e);
    }
    if report.compatible() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    }
}
