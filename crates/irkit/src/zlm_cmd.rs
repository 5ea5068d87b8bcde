//! `irkit zlm <verb>`: ZLM1 schema-1.9 artifacts (zlm1-core0-artifacts.md).

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Format;
use crate::error::{CliError, Origin, Outcome};
use crate::io::{read, write};
use crate::zlm_load::{
    TextSource, invalid, invalid_at, invalid_in, load, load_linked, load_providers,
    read_module_source,
};
use std::path::PathBuf;

/// Verbs of `irkit zlm`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Assemble a text module (.zlt) into a canonical ZLM1 artifact, checked
    /// like `validate` first (exit 1 and nothing written when the checker
    /// rejects it; `--no-check` writes the bytes unchecked).
    Asm {
        #[command(flatten)]
        input: InputArgs,
        /// Output artifact (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Write the canonical payload alone, without the ancillary source
        /// map and provenance after it (docs/zlm/ancillary.md).
        #[arg(long)]
        no_ancillary: bool,
        /// Provider artifacts (.zlm or .zlt) of imported modules: the check then
        /// resolves the imports against them (without, the module is checked on its own).
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
        /// Write the canonical bytes without running the checker (the header's
        /// mode is then a claim `validate` has not verified).
        #[arg(long)]
        no_check: bool,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Decode, validate and print an artifact (or a text module) as canonical text.
    Dis {
        #[command(flatten)]
        input: InputArgs,
        /// Output text (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Provider artifacts of imported modules: their members are printed
        /// by module-qualified name (`func:module::Decl.function`) instead of `#hex`.
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Validate an artifact or text module (exit 0 valid, 1 invalid, 2 usage/I-O).
    /// Imports are resolved against the provider artifacts given with `--dep`;
    /// ancillary data after the payload is checked on its own hashes.
    Validate {
        #[command(flatten)]
        input: InputArgs,
        /// Provider artifacts of imported modules.
        #[arg(long = "dep")]
        deps: Vec<PathBuf>,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print every logical identity, one JSON object per line (`--format`
    /// chooses only the diagnostics' form).
    Ids {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Run a checked module in the reference interpreter (or `--engine c`).
    Run(crate::zlm_run_cmd::RunArgs),
    /// Materialize a checked artifact as portable C11 (C0-EXEC-002).
    EmitC(crate::zlm_c_cmd::EmitCArgs),
    /// Build a checked artifact with LLVM under a target record (C0-EXEC-003).
    Build(crate::zlm_llvm_args::BuildArgs),
    /// Print the canonical interface text (.zli) of each module of a package.
    Zli(crate::zlm_zli_cmd::ZliArgs),
    /// Print the canonical semantic reflection (JSON) of a package.
    Reflect(crate::zlm_zli_cmd::ReflectArgs),
    /// Print the exact artifact content address.
    Address {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
}

impl Verb {
    /// The verb's `--format`.
    pub fn format(&self) -> Format {
        match self {
            Verb::Asm { fmt, .. }
            | Verb::Dis { fmt, .. }
            | Verb::Validate { fmt, .. }
            | Verb::Ids { fmt, .. }
            | Verb::Address { fmt, .. } => fmt.format,
            Verb::Run(a) => a.fmt.format,
            Verb::EmitC(a) => a.fmt.format,
            Verb::Build(a) => a.fmt.format,
            Verb::Zli(a) => a.fmt.format,
            Verb::Reflect(a) => a.format,
        }
    }
}

/// Runs one `irkit zlm` verb.
pub fn run(verb: Verb) -> Result<Outcome, CliError> {
    match verb {
        Verb::Asm {
            input,
            output,
            no_ancillary,
            deps,
            no_check,
            ..
        } => {
            let (label, bytes) = read(&input.file)?;
            let text = String::from_utf8(bytes)
                .map_err(|_| CliError::usage(format!("{label} is not UTF-8")))?;
            // The `--dep` providers name their members in the text
            // (`func:module::Decl.function`) and link the check.
            let providers = load_providers(&deps)?;
            let providers: Vec<&zlm::decode::Checked> = providers.iter().collect();
            let names = crate::zlm_load::provider_names(&providers);
            let (module, positions) = zlm::text::parse_with_providers(&text, &names)
                .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, Some(&text))))?;
            let source = TextSource::new(text.clone(), &module, positions.clone());
            let at_line = |e: zlm::Error| invalid_in(&e, &label, Some(&source));
            let mut bytes = zlm::write::write(&module).map_err(at_line)?;
            if !no_check {
                // As `validate` checks: on its own without `--dep` (imports
                // resolved later), against the providers with them.
                if providers.is_empty() {
                    zlm::decode::decode(&bytes).map_err(at_line)?;
                } else {
                    zlm::decode::decode_linked(&bytes, &providers).map_err(at_line)?;
                }
            }
            if !no_ancillary {
                bytes = zlm::ancillary::annotate(
                    &bytes,
                    &label,
                    &text,
                    &module,
                    &positions,
                    "irkit",
                    env!("CARGO_PKG_VERSION"),
                )
                .map_err(|e| invalid(&e, &label))?;
            }
            write(output.as_deref(), &bytes)?;
        }
        Verb::Dis {
            input,
            output,
            deps,
            ..
        } => {
            let providers = load_providers(&deps)?;
            let providers: Vec<&zlm::decode::Checked> = providers.iter().collect();
            let checked = if providers.is_empty() {
                load(&input.file)?
            } else {
                load_linked(&input.file, &deps)?
            };
            let names = crate::zlm_load::provider_names(&providers);
            let text = zlm::text::print_with_providers(checked.module(), &names)
                .map_err(|e| CliError::usage(e.to_string()))?;
            write(output.as_deref(), text.as_bytes())?;
        }
        Verb::Validate { input, deps, fmt } => {
            let checked = load_linked(&input.file, &deps)?;
            // Ancillary data after the payload is checked on its own.
            let (label, bytes) = read(&input.file)?;
            crate::zlm_source::check_ancillary(&bytes, &label)?;
            if fmt.format == Format::Human {
                let line = format!("{label}: ok: module `{}`\n", checked.module().name);
                write(None, line.as_bytes())?;
            }
        }
        Verb::Ids { input, .. } => {
            let checked = load(&input.file)?;
            let (_, facts) = zlm::ids::compute(checked.module(), true)
                .map_err(|e| CliError::usage(e.to_string()))?;
            let mut out = String::new();
            for f in facts {
                out.push_str(&f.to_json(false));
                out.push('\n');
            }
            write(None, out.as_bytes())?;
        }
        // The LLVM verbs run in `irkit-llvm` (zlm_llvm_exec.rs).
        Verb::Build(_) => return crate::zlm_llvm_exec::delegate(),
        Verb::Run(args) if args.uses_llvm() => return crate::zlm_llvm_exec::delegate(),
        Verb::Run(args) => return crate::zlm_run_cmd::run(args, None),
        Verb::EmitC(args) => return crate::zlm_c_cmd::emit_c(args),
        Verb::Zli(args) => return crate::zlm_zli_cmd::zli(args),
        Verb::Reflect(args) => return crate::zlm_zli_cmd::reflect(args),
        Verb::Address { input, .. } => {
            let (label, bytes, source) = read_module_source(&input.file)?;
            zlm::decode::decode(&bytes)
                .map_err(|e| invalid_at(&e, &label, &bytes, source.as_ref()))?;
            let line = format!("{}\n", zlm::hash::to_hex(&zlm::address(&bytes)));
            write(None, line.as_bytes())?;
        }
    }
    Ok(Outcome::Success)
}
