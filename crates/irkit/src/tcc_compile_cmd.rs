//! `irkit tcc compile FILE.py|FILE.ts|FILE.rs`: the Python, TypeScript and
//! Rust frontends (crates/tcc_frontend), and the hook that lets `run`,
//! `step`, `start` and `register` take a source file wherever they take an
//! artifact.

use crate::args::{FormatArgs, InputArgs};
use crate::error::{CliError, Origin, Outcome};
use crate::io::{read, write};
use std::path::{Path, PathBuf};
use tcc_frontend::Language;

/// Arguments of `irkit tcc compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    // The source: `.py` (Python subset), `.ts` (TypeScript subset) or `.rs` (Rust subset).
    #[command(flatten)]
    pub input: InputArgs,
    /// Output artifact (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub fmt: FormatArgs,
}

/// Compiles the source at `path` to an artifact; returns the input label,
/// the artifact and the source text.
fn compile_file(
    path: &Path,
    language: Language,
) -> Result<(String, tcc_ir::Artifact, String), CliError> {
    let (label, bytes) = read(path)?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(CliError::Rejected(format!("{label}: source is not UTF-8")));
    };
    let file = path
        .file_name()
        .map_or_else(|| label.clone(), |n| n.to_string_lossy().into_owned());
    match tcc_frontend::compile(&text, &file, language) {
        Ok(artifact) => Ok((label, artifact, text)),
        Err(e) => Err(CliError::diagnosed(&e, &Origin::text(&label, Some(&text)))),
    }
}

/// `irkit tcc compile`.
pub fn compile(a: CompileArgs) -> Result<Outcome, CliError> {
    let file = &a.input.file;
    let Some(language) = Language::from_path(file) else {
        return Err(CliError::usage(format!(
            "{}: not a .py, .ts or .rs source (TCC-F019)",
            file.display()
        )));
    };
    let (_, artifact, _) = compile_file(file, language)?;
    let mut bytes = tcc_ir::encode_artifact(&artifact);
    if a.output.as_ref().is_none_or(|p| p.as_os_str() == "-") {
        bytes.push(b'\n');
    }
    write(a.output.as_deref(), &bytes)?;
    Ok(Outcome::Success)
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
/// first. Returns the input label.
pub fn read_program_input(path: &Path) -> Result<(String, ProgramInput), CliError> {
    match Language::from_path(path) {
        None => read(path).map(|(label, bytes)| (label, ProgramInput::Bytes(bytes))),
        Some(language) => {
            let (label, artifact, source) = compile_file(path, language)?;
            Ok((
                label,
                ProgramInput::Compiled {
                    artifact: Box::new(artifact),
                    source,
                },
            ))
        }
    }
}

/// Reads a program input as artifact bytes: an artifact as it is, or a
/// `.py`/`.ts`/`.rs` source compiled and encoded.
pub fn read_program(path: &Path) -> Result<(String, Vec<u8>), CliError> {
    let (label, input) = read_program_input(path)?;
    Ok(match input {
        ProgramInput::Bytes(bytes) => (label, bytes),
        ProgramInput::Compiled { artifact, .. } => (label, tcc_ir::encode_artifact(&artifact)),
    })
}
