//! `irkit zlm zli FILE [--dep P.zlm ...]` (canonical `.zli` interface text of
//! each module, docs/zlm/interface.md) and `irkit zlm reflect FILE [--dep
//! P.zlm ...] --format json` (canonical semantic reflection, C0-REFL-001,
//! docs/zlm/reflection.md). Both take a package: the root artifact and its
//! providers, each decoded and checked with its imports resolved against the
//! others.

use crate::diag::{Diagnostic, Format, emit};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use zlm::decode::Checked;

/// Arguments of `irkit zlm zli`.
#[derive(clap::Args)]
pub struct ZliArgs {
    /// The root module: a ZLM1 artifact or a `.zlt` text module (`-` for stdin).
    file: PathBuf,
    /// The package's other modules (artifacts or text modules).
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Output directory (created): one `MODULE.zli` per module. Without it
    /// every module's text goes to stdout, in package order, separated by
    /// one empty line.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Diagnostic format.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `irkit zlm reflect`.
#[derive(clap::Args)]
pub struct ReflectArgs {
    /// The root module: a ZLM1 artifact or a `.zlt` text module (`-` for stdin).
    file: PathBuf,
    /// The package's other modules (artifacts or text modules).
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Output and diagnostic format (json only: reflection is a JSON document).
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
}

fn usage(msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(EXIT_USAGE)
}

fn invalid(label: &str, e: &zlm::Error, kind: &str, format: Format) -> ExitCode {
    let d = Diagnostic {
        kind: kind.into(),
        code: Some(e.code.to_string()),
        message: e.message.clone(),
        label: label.to_string(),
        offset: e.offset,
        line: None,
        column: None,
    };
    emit(&[d], format, None);
    ExitCode::from(EXIT_INVALID)
}

/// A text-form error, located by line and column in `text`.
fn invalid_text(label: &str, e: &zlm::Error, text: &str, format: Format) -> ExitCode {
    let (line, column) = match e.offset {
        Some(off) => {
            let before = &text[..text.floor_char_boundary((off as usize).min(text.len()))];
            let line = before.matches('\n').count() as u64 + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1;
            (Some(line), Some(column))
        }
        None => (None, None),
    };
    let d = Diagnostic {
        kind: "syntactic".into(),
        code: Some(e.code.to_string()),
        message: e.message.clone(),
        label: label.to_string(),
        offset: e.offset,
        line,
        column,
    };
    emit(&[d], format, Some(text));
    ExitCode::from(EXIT_INVALID)
}

/// The canonical artifact bytes of an input: a `ZLM1` artifact as is, a
/// `.zlt` text module assembled by the canonical writer.
fn artifact(label: &str, bytes: Vec<u8>, format: Format) -> Result<Vec<u8>, ExitCode> {
    if bytes.starts_with(b"ZLM1") {
        return Ok(bytes);
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| usage(format!("{label} is neither a ZLM1 artifact nor UTF-8 text")))?;
    let module = zlm::text::parse(&text).map_err(|e| invalid_text(label, &e, &text, format))?;
    zlm::write::write(&module).map_err(|e| invalid(label, &e, "semantic", format))
}

/// Decodes every artifact of the package (the root first), each checked on
/// its own, then each again with its imports resolved against the others,
/// so a missing or stale provider rejects with `ZLM-IMPORT`. Returns the
/// linked modules (root at index 0) and the root's label.
fn load_package(
    file: &Path,
    deps: &[PathBuf],
    format: Format,
) -> Result<(Vec<Checked>, String), ExitCode> {
    let mut inputs = Vec::with_capacity(deps.len() + 1);
    for path in std::iter::once(file).chain(deps.iter().map(PathBuf::as_path)) {
        let (label, bytes) = read_input(path).map_err(usage)?;
        let bytes = artifact(&label, bytes, format)?;
        inputs.push((label, bytes));
    }
    let mut alone = Vec::with_capacity(inputs.len());
    for (label, bytes) in &inputs {
        alone.push(zlm::decode::decode(bytes).map_err(|e| invalid(label, &e, "encoding", format))?);
    }
    let mut linked = Vec::with_capacity(inputs.len());
    for (i, (label, bytes)) in inputs.iter().enumerate() {
        let providers: Vec<&Checked> = alone
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, c)| c)
            .collect();
        linked.push(
            zlm::decode::decode_linked(bytes, &providers)
                .map_err(|e| invalid(label, &e, "encoding", format))?,
        );
    }
    Ok((linked, inputs[0].0.clone()))
}

/// `irkit zlm zli`.
pub fn zli(args: ZliArgs) -> ExitCode {
    let run = || -> Result<(), ExitCode> {
        let (modules, label) = load_package(&args.file, &args.deps, args.format)?;
        let refs: Vec<&Checked> = modules.iter().collect();
        let texts =
            zlm::zli::package(&refs).map_err(|e| invalid(&label, &e, "semantic", args.format))?;
        match &args.output {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
                for (module, text) in &texts {
                    let path = dir.join(format!("{module}.zli"));
                    write_output(Some(&path), text.as_bytes()).map_err(usage)?;
                }
                Ok(())
            }
            None => {
                let all: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
                write_output(None, all.join("\n").as_bytes()).map_err(usage)
            }
        }
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// `irkit zlm reflect`.
pub fn reflect(args: ReflectArgs) -> ExitCode {
    if args.format != Format::Json {
        return usage("reflection is a JSON document: use --format json".into());
    }
    let run = || -> Result<(), ExitCode> {
        let (modules, label) = load_package(&args.file, &args.deps, args.format)?;
        let refs: Vec<&Checked> = modules.iter().collect();
        let doc = zlm::reflect::package(&refs, 0)
            .map_err(|e| invalid(&label, &e, "semantic", args.format))?;
        write_output(args.output.as_deref(), doc.as_bytes()).map_err(usage)
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
