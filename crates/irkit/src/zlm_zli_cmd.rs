//! `irkit zlm zli FILE [--dep P.zlm ...]` (canonical `.zli` interface text of
//! each module, docs/zlm/interface.md) and `irkit zlm reflect FILE [--dep
//! P.zlm ...] --format json` (canonical semantic reflection, C0-REFL-001,
//! docs/zlm/reflection.md). Both take a package: the root artifact and its
//! providers, each decoded and checked with its imports resolved against the
//! others.

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Format;
use crate::error::{CliError, Origin, Outcome};
use crate::io::{create_dir, read, write};
use crate::zlm_load::invalid;
use std::path::{Path, PathBuf};
use zlm::decode::Checked;

/// Arguments of `irkit zlm zli`.
#[derive(clap::Args)]
pub struct ZliArgs {
    // The root module: a ZLM1 artifact or a `.zlt` text module.
    #[command(flatten)]
    input: InputArgs,
    /// The package's other modules (artifacts or text modules).
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Output directory (created): one `MODULE.zli` per module. Without it
    /// every module's text goes to stdout, in package order, separated by
    /// one empty line.
    #[arg(short, long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
}

/// Arguments of `irkit zlm reflect`.
#[derive(clap::Args)]
pub struct ReflectArgs {
    // The root module: a ZLM1 artifact or a `.zlt` text module.
    #[command(flatten)]
    input: InputArgs,
    /// The package's other modules (artifacts or text modules).
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Output and diagnostic format (json only: reflection is a JSON document).
    /// Not the shared `FormatArgs`: its default is `json`, not `human`.
    #[arg(long, value_enum, default_value = "json")]
    pub(crate) format: Format,
}

fn usage(msg: String) -> CliError {
    CliError::Usage(msg)
}

/// The canonical artifact bytes of an input: a `ZLM1` artifact as is, a
/// `.zlt` text module assembled by the canonical writer.
fn artifact(label: &str, bytes: Vec<u8>) -> Result<Vec<u8>, CliError> {
    if bytes.starts_with(b"ZLM1") {
        return Ok(bytes);
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| usage(format!("{label} is neither a ZLM1 artifact nor UTF-8 text")))?;
    let module = zlm::text::parse(&text)
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(label, Some(&text))))?;
    zlm::write::write(&module).map_err(|e| invalid(&e, label))
}

/// Decodes every artifact of the package (the root first), each checked on
/// its own, then each again with its imports resolved against the others,
/// so a missing or stale provider rejects with `ZLM-IMPORT`. Returns the
/// linked modules (root at index 0) and the root's label.
fn load_package(file: &Path, deps: &[PathBuf]) -> Result<(Vec<Checked>, String), CliError> {
    let mut providers = Vec::with_capacity(deps.len());
    for path in deps {
        let (label, bytes) = read(path)?;
        let bytes = artifact(&label, bytes)?;
        let checked = zlm::decode::decode(&bytes).map_err(|e| invalid(&e, &label))?;
        providers.push((label, bytes, checked));
    }
    // A `.zlt` root may name its providers' members (`func:module::Decl.f`,
    // docs/zlm/text.md "Imported names").
    let provider_refs: Vec<&Checked> = providers.iter().map(|(_, _, c)| c).collect();
    let (label, bytes, source) = crate::zlm_load::read_module_source_with(file, &provider_refs)?;
    let root = zlm::decode::decode(&bytes)
        .map_err(|e| crate::zlm_load::invalid_at(&e, &label, &bytes, source.as_ref()))?;
    let mut inputs = vec![(label, bytes)];
    let mut alone = vec![root];
    for (label, bytes, checked) in providers {
        inputs.push((label, bytes));
        alone.push(checked);
    }
    let mut linked = Vec::with_capacity(inputs.len());
    for (i, (label, bytes)) in inputs.iter().enumerate() {
        let providers: Vec<&Checked> = alone
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, c)| c)
            .collect();
        linked.push(zlm::decode::decode_linked(bytes, &providers).map_err(|e| invalid(&e, label))?);
    }
    Ok((linked, inputs[0].0.clone()))
}

/// `irkit zlm zli`.
pub fn zli(args: ZliArgs) -> Result<Outcome, CliError> {
    let (modules, label) = load_package(&args.input.file, &args.deps)?;
    let refs: Vec<&Checked> = modules.iter().collect();
    let texts = zlm::zli::package(&refs).map_err(|e| invalid(&e, &label))?;
    match &args.output {
        Some(dir) => {
            create_dir(dir)?;
            for (module, text) in &texts {
                write(Some(&dir.join(format!("{module}.zli"))), text.as_bytes())?;
            }
        }
        None => {
            let all: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
            write(None, all.join("\n").as_bytes())?;
        }
    }
    Ok(Outcome::Success)
}

/// `irkit zlm reflect`.
pub fn reflect(args: ReflectArgs) -> Result<Outcome, CliError> {
    if args.format != Format::Json {
        return Err(usage(
            "reflection is a JSON document: use --format json".into(),
        ));
    }
    let (modules, label) = load_package(&args.input.file, &args.deps)?;
    let refs: Vec<&Checked> = modules.iter().collect();
    let doc = zlm::reflect::package(&refs, 0).map_err(|e| invalid(&e, &label))?;
    write(args.output.as_deref(), doc.as_bytes())?;
    Ok(Outcome::Success)
}
