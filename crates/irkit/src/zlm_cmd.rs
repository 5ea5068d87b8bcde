//! `irkit zlm <verb>`: ZLM1 schema-1.9 artifacts (zlm1-core0-artifacts.md).

use crate::diag::{Diagnostic, Format, emit};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::path::PathBuf;
use std::process::ExitCode;

/// Verbs of `irkit zlm`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Assemble a text module (.zlt) into a canonical ZLM1 artifact.
    Asm {
        /// Input text (`-` for stdin).
        file: PathBuf,
        /// Output artifact (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Decode, validate and print an artifact as text.
    Dis {
        /// Input artifact.
        file: PathBuf,
        /// Output text (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Validate an artifact (exit 0 valid, 1 invalid, 2 usage/I-O).
    /// Imports are resolved against the provider artifacts given with `--dep`.
    Validate {
        /// Input artifact.
        file: PathBuf,
        /// Provider artifacts of imported modules.
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print every logical identity, one JSON object per line.
    Ids {
        /// Input artifact.
        file: PathBuf,
        /// Output format (json only).
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Run a checked module in the reference interpreter (or `--engine c`).
    Run(crate::zlm_run_cmd::RunArgs),
    /// Materialize a checked artifact as portable C11 (C0-EXEC-002).
    EmitC(crate::zlm_c_cmd::EmitCArgs),
    /// Build a checked artifact with LLVM under a target record (C0-EXEC-003).
    Build(crate::zlm_llvm_cmd::BuildArgs),
    /// Print the canonical interface text (.zli) of each module of a package.
    Zli(crate::zlm_zli_cmd::ZliArgs),
    /// Print the canonical semantic reflection (JSON) of a package.
    Reflect(crate::zlm_zli_cmd::ReflectArgs),
    /// Print the exact artifact content address.
    Address {
        /// Input artifact.
        file: PathBuf,
        /// Diagnostic format.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
}

fn diag(label: &str, e: &zlm::Error, source: Option<&str>) -> Diagnostic {
    let (line, column) = match (source, e.offset) {
        (Some(s), Some(off)) => {
            let off = (off as usize).min(s.len());
            let before = &s[..s.floor_char_boundary(off)];
            let line = before.matches('\n').count() as u64 + 1;
            let col = before
                .rsplit('\n')
                .next()
                .map(|l| l.chars().count() as u64 + 1)
                .unwrap_or(1);
            (Some(line), Some(col))
        }
        _ => (None, None),
    };
    Diagnostic {
        kind: if source.is_some() {
            "syntactic".into()
        } else {
            "encoding".into()
        },
        code: Some(e.code.to_string()),
        message: e.message.clone(),
        label: label.to_string(),
        offset: e.offset,
        line,
        column,
    }
}

fn io_error(msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_USAGE)
}

fn load(file: &std::path::Path, format: Format) -> Result<zlm::decode::Checked, ExitCode> {
    let (label, bytes) = read_input(file).map_err(io_error)?;
    zlm::decode::decode(&bytes).map_err(|e| {
        emit(&[diag(&label, &e, None)], format, None);
        ExitCode::from(EXIT_INVALID)
    })
}

/// Decodes the provider artifacts given with `--dep` (each checked on its
/// own), then `file` with its imports resolved against them before it is
/// checked. `zlm validate` and `zlm run` share this gate.
pub(crate) fn load_linked(
    file: &std::path::Path,
    deps: &[PathBuf],
    format: Format,
) -> Result<zlm::decode::Checked, ExitCode> {
    let mut providers = Vec::new();
    for dep in deps {
        providers.push(load(dep, format)?);
    }
    let providers: Vec<&zlm::decode::Checked> = providers.iter().collect();
    let (label, bytes) = read_input(file).map_err(io_error)?;
    zlm::decode::decode_linked(&bytes, &providers).map_err(|e| {
        emit(&[diag(&label, &e, None)], format, None);
        ExitCode::from(EXIT_INVALID)
    })
}

/// Runs one `irkit zlm` verb.
pub fn run(verb: Verb) -> ExitCode {
    let result = match verb {
        Verb::Asm {
            file,
            output,
            format,
        } => (|| {
            let (label, bytes) = read_input(&file).map_err(io_error)?;
            let text =
                String::from_utf8(bytes).map_err(|_| io_error(format!("{label} is not UTF-8")))?;
            let bytes = zlm::text::parse(&text)
                .and_then(|m| zlm::write::write(&m))
                .map_err(|e| {
                    let src = if e.code == "ZLM-SYNTAX" {
                        Some(text.as_str())
                    } else {
                        None
                    };
                    emit(&[diag(&label, &e, src)], format, src);
                    ExitCode::from(EXIT_INVALID)
                })?;
            write_output(output.as_deref(), &bytes).map_err(io_error)
        })(),
        Verb::Dis {
            file,
            output,
            format,
        } => (|| {
            let d = load(&file, format)?;
            let text = zlm::text::print(d.module()).map_err(|e| io_error(e.to_string()))?;
            write_output(output.as_deref(), text.as_bytes()).map_err(io_error)
        })(),
        Verb::Validate { file, deps, format } => load_linked(&file, &deps, format).map(|_| ()),
        Verb::Ids { file, format } => (|| {
            let d = load(&file, format)?;
            let (_, facts) =
                zlm::ids::compute(d.module(), true).map_err(|e| io_error(e.to_string()))?;
            let mut out = String::new();
            for f in facts {
                out.push_str(&f.to_json(false));
                out.push('\n');
            }
            write_output(None, out.as_bytes()).map_err(io_error)
        })(),
        Verb::Run(args) => crate::zlm_run_cmd::run(args),
        Verb::EmitC(args) => return crate::zlm_c_cmd::emit_c(args),
        Verb::Build(args) => return crate::zlm_llvm_cmd::build(args),
        Verb::Zli(args) => return crate::zlm_zli_cmd::zli(args),
        Verb::Reflect(args) => return crate::zlm_zli_cmd::reflect(args),
        Verb::Address { file, format } => (|| {
            let (label, bytes) = read_input(&file).map_err(io_error)?;
            if let Err(e) = zlm::decode::decode(&bytes) {
                emit(&[diag(&label, &e, None)], format, None);
                return Err(ExitCode::from(EXIT_INVALID));
            }
            let line = format!("{}\n", zlm::hash::to_hex(&zlm::address(&bytes)));
            write_output(None, line.as_bytes()).map_err(io_error)
        })(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
