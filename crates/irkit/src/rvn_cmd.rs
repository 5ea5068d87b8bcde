//! `irkit rvn <verb>`: Raven `.rvnlib` compiled shader libraries (rvnlib-ir.md).

use crate::args::{FormatArgs, InputArgs, InputsArgs};
use crate::diag::{Diagnostic, Format, emit};
use crate::error::{CliError, Diagnose, Origin, Outcome};
use crate::io::{read, write};
use rvnlib::CompiledLibrary;
use rvnlib::link::{LinkInput, LinkOptions};
use std::path::{Path, PathBuf};

/// Verbs of `irkit rvn`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Print a library as the indented inspection JSON (no container, not readable back).
    Inspect {
        #[command(flatten)]
        input: InputArgs,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Read and verify libraries (container, JSON schema, IR verifier).
    Verify {
        #[command(flatten)]
        inputs: InputsArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Link libraries into one module by key and write it as a .rvnlib.
    Link {
        #[command(flatten)]
        inputs: InputsArgs,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// The consumer's own library: its names are reserved first and its items are roots.
        #[arg(long)]
        consumer: Option<PathBuf>,
        /// Keep only what these functions (and the consumer) reach: whole keys,
        /// unique key prefixes or short names, as `rvn calls` takes; takes several,
        /// so put it after the files or repeat it.
        #[arg(long = "entry", value_name = "KEY", num_args = 1..)]
        entries: Vec<String>,
        /// Name of the linked library (default: the consumer's name, else `linked`).
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Report what changed between two versions of a library and whether a
    /// consumer built against OLD still links against NEW (exit 0 compatible,
    /// 3 breaking, 1 unreadable or invalid input; `--format json`: one object
    /// per change, then a summary).
    Diff {
        /// The version consumers were built against.
        old: PathBuf,
        /// The new version.
        new: PathBuf,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print the call graph reachable from a function.
    Calls {
        #[command(flatten)]
        input: InputArgs,
        /// The function to start from: its whole key, a unique prefix of the
        /// key, or its short name (`Of`, `Geometry.Of`); `irkit rvn keys` lists them.
        key: String,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// List the struct and function keys of a library (with each function's name).
    Keys {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Turn the inspection JSON (`irkit rvn inspect`, possibly edited by hand)
    /// back into a verified .rvnlib container.
    Pack {
        /// The inspection JSON (`-` for standard input).
        file: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        fmt: FormatArgs,
    },
}

impl Verb {
    /// The verb's `--format`.
    pub fn format(&self) -> Format {
        match self {
            Verb::Inspect { fmt, .. }
            | Verb::Verify { fmt, .. }
            | Verb::Link { fmt, .. }
            | Verb::Diff { fmt, .. }
            | Verb::Calls { fmt, .. }
            | Verb::Keys { fmt, .. }
            | Verb::Pack { fmt, .. } => fmt.format,
        }
    }
}

/// Runs one `irkit rvn` verb.
pub fn run(verb: Verb) -> Result<Outcome, CliError> {
    match verb {
        Verb::Inspect { input, output, .. } => inspect(&input.file, output.as_deref()),
        Verb::Verify { inputs, fmt } => verify(&inputs.files, fmt.format),
        Verb::Link {
            inputs,
            output,
            consumer,
            entries,
            name,
            fmt,
        } => link(
            &inputs.files,
            &output,
            consumer.as_deref(),
            entries,
            name,
            fmt.format,
        ),
        Verb::Calls { input, key, fmt } => calls(&input.file, &key, fmt.format),
        Verb::Diff { old, new, fmt } => diff(&old, &new, fmt.format),
        Verb::Keys { input, fmt } => keys(&input.file, fmt.format),
        Verb::Pack { file, output, fmt } => pack(&file, &output, fmt.format),
    }
}

/// Reads one library, verified unless `verified` is false.
fn load(path: &Path, verified: bool) -> Result<(String, CompiledLibrary), CliError> {
    let (label, bytes) = read(path)?;
    let result = if verified {
        rvnlib::read(&bytes)
    } else {
        rvnlib::read_unverified(&bytes).map(|(_, library)| library)
    };
    match result {
        Ok(library) => Ok((label, library)),
        Err(error) => Err(CliError::diagnosed(&error, &Origin::binary(&label))),
    }
}

fn inspect(file: &Path, output: Option<&Path>) -> Result<Outcome, CliError> {
    let (_, library) = load(file, false)?;
    let mut text = rvnlib::write_json(&library);
    text.push('\n');
    write(output, text.as_bytes())?;
    Ok(Outcome::Success)
}

fn verify(files: &[PathBuf], format: Format) -> Result<Outcome, CliError> {
    let mut errors = Vec::new();
    for file in files {
        match load(file, true) {
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
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(Outcome::Success)
    } else {
        Err(CliError::several(errors))
    }
}

fn link(
    files: &[PathBuf],
    output: &Path,
    consumer: Option<&Path>,
    entries: Vec<String>,
    name: Option<String>,
    format: Format,
) -> Result<Outcome, CliError> {
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        match load(file, true) {
            Ok(l) => loaded.push(l),
            Err(e) => errors.push(e),
        }
    }
    let consumer = match consumer.map(|c| load(c, true)).transpose() {
        Ok(c) => c,
        Err(e) => {
            errors.push(e);
            return Err(CliError::several(errors));
        }
    };
    if !errors.is_empty() {
        return Err(CliError::several(errors));
    }
    let entries = resolve_entries(&loaded, consumer.as_ref(), entries)?;
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
    let linked = match rvnlib::link::link(&inputs, &options) {
        Ok(linked) => linked,
        Err(errors) => {
            // Each error names its input; one about no input points at `--entry`.
            let origin = Origin::binary(ENTRY_LABEL);
            let diagnostics = errors.iter().flat_map(|e| e.diagnostics(&origin)).collect();
            return Err(CliError::invalid(diagnostics, None));
        }
    };
    // Warnings belong between the link and its summary line, so they are
    // printed here rather than returned; each points at the input it is about.
    for warning in &linked.warnings {
        let d = Diagnostic::new(
            "link",
            Some(warning.code),
            warning.message.clone(),
            &warning.origin,
        );
        emit(&[d], format, None);
    }
    if format == Format::Human {
        for rename in &linked.renames {
            eprintln!(
                "note: {} `{}` is named `{}` in the module (key `{}`)",
                rename.what, rename.from, rename.to, rename.key
            );
        }
    }
    let bytes = rvnlib::write(&linked.library).map_err(|e| CliError::usage(e.to_string()))?;
    write(Some(output), &bytes)?;
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
                "renames": linked.renames.iter().map(|r| serde_json::json!({
                    "what": r.what,
                    "key": r.key,
                    "from": r.from,
                    "to": r.to,
                })).collect::<Vec<_>>(),
            })
        ),
    }
    Ok(Outcome::Success)
}

fn calls(file: &Path, query: &str, format: Format) -> Result<Outcome, CliError> {
    let (label, library) = load(file, true)?;
    let key = rvnlib::lookup::find_function(&library.ir.functions, query)
        .map_err(|e| CliError::diagnosed(&e, &Origin::binary(&label)))?;
    let Some(edges) = rvnlib::walk::call_graph(&library, key) else {
        // `find_function` answers only keys of the library's functions.
        return Err(CliError::usage(format!("`{key}` vanished from `{label}`")));
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
    write(None, out.as_bytes())?;
    Ok(Outcome::Success)
}

fn diff(old: &Path, new: &Path, format: Format) -> Result<Outcome, CliError> {
    let old = load(old, true);
    let new = load(new, true);
    let ((old_label, old), (new_label, new)) = match (old, new) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(a), Err(b)) => return Err(CliError::Several(vec![a, b])),
        (Err(e), _) | (_, Err(e)) => return Err(e),
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
    write(None, out.as_bytes())?;
    Ok(if report.compatible() {
        Outcome::Success
    } else {
        Outcome::Verdict
    })
}

/// The label of diagnostics about `--entry` arguments.
const ENTRY_LABEL: &str = "--entry";

/// Each `--entry` as the whole key of one function of the inputs (or the consumer).
fn resolve_entries(
    loaded: &[(String, CompiledLibrary)],
    consumer: Option<&(String, CompiledLibrary)>,
    entries: Vec<String>,
) -> Result<Vec<String>, CliError> {
    let functions: Vec<&rvnlib::LibraryIrFunction> = consumer
        .into_iter()
        .chain(loaded)
        .flat_map(|(_, library)| &library.ir.functions)
        .collect();
    let mut keys = Vec::with_capacity(entries.len());
    let mut diagnostics = Vec::new();
    for entry in &entries {
        match rvnlib::lookup::find_function(functions.iter().copied(), entry) {
            Ok(key) => keys.push(key.to_string()),
            Err(e) => diagnostics.extend(e.diagnostics(&Origin::binary(ENTRY_LABEL))),
        }
    }
    if diagnostics.is_empty() {
        Ok(keys)
    } else {
        Err(CliError::invalid(diagnostics, None))
    }
}

fn keys(file: &Path, format: Format) -> Result<Outcome, CliError> {
    let (_, library) = load(file, false)?;
    let mut out = String::new();
    let structs = library
        .ir
        .structs
        .iter()
        .map(|s| ("struct", &s.key, &s.name));
    let functions = library
        .ir
        .functions
        .iter()
        .map(|f| ("function", &f.key, &f.name));
    for (what, key, name) in structs.chain(functions) {
        match format {
            Format::Human => out.push_str(&format!("{what:<8} {key}  (name `{name}`)\n")),
            Format::Json => {
                let line = serde_json::json!({ "kind": what, "key": key, "name": name });
                out.push_str(&line.to_string());
                out.push('\n');
            }
        }
    }
    write(None, out.as_bytes())?;
    Ok(Outcome::Success)
}

fn pack(file: &Path, output: &Path, format: Format) -> Result<Outcome, CliError> {
    let (label, bytes) = read(file)?;
    let text = String::from_utf8_lossy(&bytes);
    let origin = Origin::text(&label, Some(&text));
    let library =
        rvnlib::from_inspection_json(&bytes).map_err(|e| CliError::diagnosed(&e, &origin))?;
    let errors = rvnlib::verify::verify_library(&library);
    if !errors.is_empty() {
        let diagnostics = errors
            .iter()
            .flat_map(|e| e.diagnostics(&Origin::binary(&label)))
            .collect();
        return Err(CliError::invalid(diagnostics, None));
    }
    let container = rvnlib::write(&library).map_err(|e| CliError::usage(e.to_string()))?;
    write(Some(output), &container)?;
    let out_label = output.display().to_string();
    let version = rvnlib::version::version_for(&library);
    match format {
        Format::Human => eprintln!(
            "packed library `{}` ({} struct(s), {} function(s)) into {out_label} as container version {version}",
            library.name,
            library.ir.structs.len(),
            library.ir.functions.len()
        ),
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "kind": "written",
                "path": out_label,
                "version": version,
                "raven_readable": version == rvnlib::version::RAVEN_VERSION,
                "structs": library.ir.structs.len(),
                "functions": library.ir.functions.len(),
            })
        ),
    }
    Ok(Outcome::Success)
}
