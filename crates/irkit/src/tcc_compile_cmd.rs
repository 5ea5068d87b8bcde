//! `irkit tcc compile FILE.py|FILE.ts`: the Python and TypeScript frontends
//! (crates/tcc_frontend), and the hook that lets `run`, `step`, `start` and
//! `register` take a source file wherever they take an artifact.

use crate::diag::{Diagnostic, Format, emit};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcc_frontend::{FrontendError, Language};

/// Arguments of `irkit tcc compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// Source file: `.py` (Python subset), `.ts` (TypeScript subset) or `.rs` (Rust subset).
    pub file: PathBuf,
    /// Output artifact (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Diagnostic format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

fn diagnostic(e: &FrontendError, label: &str) -> Diagnostic {
    Diagnostic {
        kind: "frontend".into(),
        code: Some(e.code.as_str().into()),
        message: e.message.clone(),
        label: label.into(),
        offset: Some(e.offset as u64),
        line: Some(u64::from(e.line)),
        column: Some(u64::from(e.column)),
    }
}

/// Compiles the source at `path` to an artifact; returns the input label,
/// the artifact and the source text. On a frontend error the diagnostics
/// are printed in `format` and the exit code is returned.
fn compile_file(
    path: &Path,
    language: Language,
    format: Format,
) -> Result<(String, tcc_ir::Artifact, String), ExitCode> {
    let (label, bytes) = read_input(path).map_err(|m| {
        eprintln!("error: {m}");
        ExitCode::from(EXIT_USAGE)
    })?;
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("error: {label}: source is not UTF-8");
        return Err(ExitCode::from(EXIT_INVALID));
    };
    let file = path
        .file_name()
        .map_or_else(|| label.clone(), |n| n.to_string_lossy().into_owned());
    match tcc_frontend::compile(&text, &file, language) {
        Ok(artifact) => Ok((label, artifact, text)),
        Err(e) => {
            emit(&[diagnostic(&e, &label)], format, Some(&text));
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// `irkit tcc compile`.
pub fn compile(a: CompileArgs) -> ExitCode {
    let Some(language) = Language::from_path(&a.file) else {
        eprintln!(
            "error: {}: not a .py, .ts or .rs source (TCC-F019)",
            a.file.display()
        );
        return ExitCode::from(EXIT_USAGE);
    };
    let mut bytes = match compile_file(&a.file, language, a.format) {
        Ok((_, artifact, _)) => tcc_ir::encode_artifact(&artifact),
        Err(code) => return code,
    };
    if a.output.as_ref().is_none_or(|p| p.as_os_str() == "-") {
        bytes.push(b'\n');
    }
    match write_output(a.output.as_deref(), &bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("error: {m}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// A program input as read: artifact bytes, or a source compiled to an
/// artifact (not re-serialised) together with its text.
pub enum ProgramInput {
    /// Artifact JSON, still to decode.
    Bytes(Vec<u8>),
    /// A `.py`/`.ts`/`.rs` source compiled by the frontend; its spans point
    /// into `source`.
    Compiled {
        /// The compiled artifact (hash computed, validated).
        artifact: Box<tcc_ir::Artifact>,
        /// The source text.
        source: String,
    },
}

/// Reads a program input: an artifact file as it is, or a source compiled
/// first. Returns the input label; the error is a usage/I/O message. A
/// source that does not compile prints its diagnostics and exits with
/// status 1.
pub fn read_program_input(path: &Path) -> Result<(String, ProgramInput), String> {
    match Language::from_path(path) {
        None => read_input(path).map(|(label, bytes)| (label, ProgramInput::Bytes(bytes))),
        Some(language) => match compile_file(path, language, Format::Human) {
            Ok((label, artifact, source)) => Ok((
                label,
                ProgramInput::Compiled {
                    artifact: Box::new(artifact),
                    source,
                },
            )),
            Err(_) => std::process::exit(i32::from(EXIT_INVALID)),
        },
    }
}

/// Reads a program input as artifact bytes: an artifact as it is, or a
/// `.py`/`.ts`/`.rs` source compiled and encoded. Same contract as
/// [`read_input`]; a source that does not compile prints its diagnostics
/// and exits with status 1.
pub fn read_program(path: &Path) -> Result<(String, Vec<u8>), String> {
    let (label, input) = read_program_input(path)?;
    Ok(match input {
        ProgramInput::Bytes(bytes) => (label, bytes),
        ProgramInput::Compiled { artifact, .. } => (label, tcc_ir::encode_artifact(&artifact)),
    })
}
