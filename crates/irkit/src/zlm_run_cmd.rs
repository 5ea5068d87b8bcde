//! `irkit zlm run FILE --entry NAME [--args …]`: runs a checked module in
//! the reference interpreter (C0-EXEC-001). FILE is a canonical artifact
//! (decoded and fully validated) or a `.zlt` text module (assembled, then
//! validated); either way only a module that passed every structural and
//! semantic check executes.

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Format;
use crate::error::{CliError, Origin, Outcome};
use crate::io::{read, write};
use crate::zlm_llvm_args::LlvmEngine;
use crate::zlm_load::{load_providers, package_of};
use std::path::PathBuf;
use zlm::interp::{Interp, Limits, RunError, Value};
use zlm::materialize::c::engine::COutcome;
use zlm::model::{ScalarKind, Type};

/// Arguments of `irkit zlm run`.
#[derive(clap::Args)]
pub struct RunArgs {
    // An artifact (`ZLM1` bytes) or a text module (`.zlt`).
    #[command(flatten)]
    input: InputArgs,
    /// Provider artifacts of imported modules (as for `zlm validate`): every
    /// import must resolve against one, with its exact interface digest; the
    /// root runs as a package with the providers it links against, calling
    /// into their public functions.
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Entry function, `Decl.function` (or a unique bare name). It must have
    /// a type receiver; Ref<Allocator<BytesError>> parameters receive the
    /// host allocator and take no argument.
    #[arg(long)]
    entry: String,
    /// Scalar arguments in parameter order: integers in decimal, Bool as
    /// true/false, Unit as ().
    #[arg(long, num_args = 0.., allow_negative_numbers = true)]
    args: Vec<String>,
    /// Arguments of any type that crosses the typed call boundary, as one
    /// JSON array in slot order (receiver first; docs/zlm/boundary.md):
    /// records as objects, variants as "Name" or {"Name": {fields}},
    /// Result as {"Ok": v} or {"Err": e}, bytes as arrays of 0..=255.
    /// Borrowed slots are lent and printed back after the result; the
    /// result is printed in the same JSON form. Every engine; what a
    /// native engine cannot call typed is refused with ZLM-ARG-ENGINE.
    #[arg(long = "json-args", conflicts_with = "args")]
    json_args: Option<String>,
    /// Print the drop log (one line per destroyed owner) before the result.
    #[arg(long)]
    drops: bool,
    /// Print the entry function's canonical contract clauses
    /// (`zerglang.zli.contract-printer/1`) as one `contract:` line before
    /// running (human format) or as a `contract` field (JSON).
    #[arg(long)]
    contracts: bool,
    /// Step limit.
    #[arg(long, default_value_t = Limits::default().steps)]
    max_steps: u64,
    /// Call-depth limit.
    #[arg(long, default_value_t = Limits::default().depth)]
    max_depth: usize,
    /// Byte-array byte limit (also the host allocator's budget).
    #[arg(long, default_value_t = Limits::default().bytes)]
    max_bytes: u64,
    // The diagnostics' and the result's format.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    /// Engine: the reference interpreter, or the portable C materializer
    /// compiled with `--cc` into a temporary executable.
    #[arg(long, value_enum, default_value_t)]
    engine: crate::zlm_c_cmd::Engine,
    /// C compiler for `--engine c`.
    #[arg(long, default_value = "cc")]
    cc: String,
}

impl RunArgs {
    /// Whether the run needs an LLVM engine (`--engine jit|aot`).
    pub fn uses_llvm(&self) -> bool {
        self.engine.llvm().is_some()
    }
}

/// Runs an LLVM engine: entry `at` of the root of the package with the
/// interpreter's argument values and limits (`zlm_llvm_cmd::run_llvm`; only
/// `irkit-llvm` links it, see docs/startup.md).
pub type LlvmRun = fn(
    LlvmEngine,
    &zlm::package::Package,
    &Interp<'_>,
    (usize, usize),
    &[Value],
    Limits,
    &str,
) -> Result<Result<COutcome, RunError>, CliError>;

/// Runs an LLVM engine across the typed boundary: entry `at` of the root
/// of the package with its slot values (as `zlm::boundary::parse_args`
/// returns them) and the interpreter's limits
/// (`zlm_llvm_cmd::run_llvm_typed`).
pub type LlvmTypedRun = fn(
    LlvmEngine,
    &zlm::package::Package,
    &Interp<'_>,
    (usize, usize),
    &[Value],
    Limits,
    &str,
) -> Result<Result<crate::zlm_c_cmd::TypedRan, RunError>, CliError>;

/// The LLVM engines' runs (only `irkit-llvm` links them).
#[derive(Clone, Copy)]
pub struct LlvmHooks {
    /// Scalar `--args` runs.
    pub run: LlvmRun,
    /// `--json-args` runs.
    pub typed: LlvmTypedRun,
}

/// The verified source map of artifact `bytes`, if it carries one; a
/// rejected container or map is reported as a warning and not used.
fn artifact_map(bytes: &[u8], label: &str) -> Option<zlm::ancillary::SourceMap> {
    match zlm::ancillary::Records::of_file(bytes) {
        Ok(Some(records)) => match records.source_map? {
            Ok(map) => Some(map),
            Err(e) => {
                eprintln!("warning: {label}: source map not used: {e}");
                None
            }
        },
        Ok(None) => None,
        Err(e) => {
            eprintln!("warning: {label}: ancillary data not used: {e}");
            None
        }
    }
}

/// The code of an `--entry` that names no function of the root module, or
/// several: an unknown name given as an argument (exit 1, kind `name`, as
/// `rvn calls` and `vpl render --uniform` report theirs).
pub const UNKNOWN_ENTRY: &str = "ZLM-ENTRY";

fn unknown_entry(label: &str, message: String) -> CliError {
    let diagnostic = crate::diag::Diagnostic::new("name", Some(UNKNOWN_ENTRY), message, label);
    CliError::invalid(vec![diagnostic], None)
}

fn usage(msg: String) -> CliError {
    CliError::Usage(msg)
}

fn parse_arg(t: &Type, s: &str) -> Result<Value, String> {
    let bad = || format!("argument {s:?} is not a {t}");
    match t {
        Type::Unit if s == "()" => Ok(Value::Unit),
        Type::Scalar(ScalarKind::Bool) => match s {
            "true" => Ok(Value::Scalar(1)),
            "false" => Ok(Value::Scalar(0)),
            _ => Err(bad()),
        },
        Type::Scalar(k) => {
            let v: i128 = s.parse().map_err(|_| bad())?;
            let (w, signed) = match k {
                ScalarKind::Byte | ScalarKind::UInt8 => (8, false),
                ScalarKind::Int8 => (8, true),
                ScalarKind::Int16 => (16, true),
                ScalarKind::UInt16 => (16, false),
                ScalarKind::Int32 => (32, true),
                ScalarKind::UInt32 => (32, false),
                ScalarKind::Int64 => (64, true),
                _ => (64, false),
            };
            let (lo, hi) = if signed {
                (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
            } else {
                (0, (1i128 << w) - 1)
            };
            if v < lo || v > hi {
                return Err(format!("argument {s} is out of range for {}", k.text()));
            }
            Ok(Value::Scalar(v as u64))
        }
        _ => Err(format!(
            "parameters of type {t} cannot be supplied on the command line"
        )),
    }
}

/// Runs the verb; `llvm` runs `--engine jit|aot` (absent in `irkit`, which
/// hands those runs to `irkit-llvm` before calling this).
pub fn run(a: RunArgs, llvm: Option<LlvmHooks>) -> Result<Outcome, CliError> {
    let format = a.fmt.format;
    let providers = load_providers(&a.deps)?;
    let provider_refs: Vec<&zlm::decode::Checked> = providers.iter().collect();
    let (label, bytes) = read(&a.input.file)?;
    // Only decoding produces a checked module: a text module is written to
    // its canonical bytes and decoded like an artifact.
    // The source map faults are located with: the text's own positions, or
    // the artifact's ancillary source map (docs/zlm/ancillary.md).
    let (checked, map) = if bytes.starts_with(b"ZLM1") {
        let artifact = crate::zlm_load::ModuleSource::Artifact(a.input.file.clone());
        let checked = zlm::decode::decode_linked(&bytes, &provider_refs)
            .map_err(|e| crate::zlm_load::invalid_at(&e, &label, &bytes, Some(&artifact)))?;
        (checked, artifact_map(&bytes, &label))
    } else {
        let text = String::from_utf8(bytes)
            .map_err(|_| usage(format!("{label} is neither a ZLM1 artifact nor UTF-8 text")))?;
        let names = crate::zlm_load::provider_names(&provider_refs);
        let (module, positions) = zlm::text::parse_with_providers(&text, &names)
            .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, Some(&text))))?;
        let map = zlm::ancillary::SourceMap::from_text(&label, &module, &positions).ok();
        let source = crate::zlm_load::TextSource::new(text, &module, positions);
        let checked = zlm::decode::from_model(&module, &provider_refs)
            .map_err(|e| crate::zlm_load::invalid_in(&e, &label, Some(&source)))?;
        (checked, map)
    };
    drop(provider_refs);
    // The root and the providers it (and they) link against run as one package.
    let package = package_of(checked, providers, &label)?;
    let limits = Limits {
        steps: a.max_steps,
        depth: a.max_depth.max(1),
        bytes: a.max_bytes,
    };
    let it = Interp::of_package(&package).with_limits(limits);
    let at = it
        .find(&a.entry)
        .map_err(|e| unknown_entry(&label, format!("{e}{}", entry_hint(&it, &a.entry))))?;
    let contract = if a.contracts {
        let r = it.resolved();
        let f = &r.module.declarations[at.0].functions[at.1];
        Some(
            zlm::check::contracts::print_clauses(r, at.0, f)
                .map_err(|m| usage(format!("contract of {}: {m}", a.entry)))?,
        )
    } else {
        None
    };
    if let (Some(c), Format::Human) = (&contract, format) {
        write(None, format!("contract: {c}\n").as_bytes())?;
    }
    if let Some(doc) = &a.json_args {
        return run_typed(
            &a,
            &it,
            at,
            doc,
            &label,
            map.as_ref(),
            &package,
            contract,
            llvm,
        );
    }
    let mut values = Vec::new();
    let mut given = a.args.iter();
    for t in it.params(at) {
        if matches!(&t, Type::Ref(x) if **x == Type::AllocatorBytesError) {
            values.push(Value::Allocator);
            continue;
        }
        let s = given
            .next()
            .ok_or_else(|| usage(format!("{} needs more arguments", a.entry)))?;
        values.push(parse_arg(&t, s).map_err(usage)?);
    }
    if given.next().is_some() {
        return Err(usage(format!("too many arguments for {}", a.entry)));
    }
    let print_drops = |drops: &[zlm::interp::DropEvent]| -> Vec<String> {
        drops.iter().map(|d| d.to_string()).collect()
    };
    let outcome = match a.engine {
        crate::zlm_c_cmd::Engine::Interp => {
            it.run(&a.entry, &values).map(|out| crate::zlm_c_cmd::Ran {
                rendered: it.render(&out.value, &out.ty),
                ty: out.ty,
                steps: out.steps,
                drops: out.drops,
            })
        }
        crate::zlm_c_cmd::Engine::C => {
            crate::zlm_c_cmd::run_c(&package, &it, at, &values, limits, &a.cc, &label)?
        }
        crate::zlm_c_cmd::Engine::Jit | crate::zlm_c_cmd::Engine::Aot => {
            let (Some(e), Some(llvm)) = (a.engine.llvm(), llvm) else {
                return Err(usage("the LLVM engines run in irkit-llvm".into()));
            };
            let ty = it.resolved().module.declarations[at.0].functions[at.1]
                .result
                .clone();
            (llvm.run)(e, &package, &it, at, &values, limits, &label)?.map(|o| {
                crate::zlm_c_cmd::Ran {
                    rendered: o.rendered,
                    ty,
                    steps: o.steps,
                    drops: o.drops,
                }
            })
        }
    };
    match outcome {
        Ok(out) => {
            let rendered = out.rendered;
            let text = match format {
                Format::Json => format!(
                    "{}\n",
                    serde_json::json!({
                        "result": rendered,
                        "type": zlm::interp::type_name(it.resolved(), &out.ty),
                        "steps": out.steps,
                        "drops": print_drops(&out.drops),
                        "contract": contract,
                    })
                ),
                Format::Human => {
                    let mut s = String::new();
                    if a.drops {
                        for d in print_drops(&out.drops) {
                            s.push_str(&d);
                            s.push('\n');
                        }
                    }
                    s.push_str(&rendered);
                    s.push('\n');
                    s
                }
            };
            write(None, text.as_bytes())?;
            Ok(Outcome::Success)
        }
        Err(RunError::Fault { mut fault, drops }) => {
            spell_contract(&it, &mut fault);
            if a.drops && format == Format::Human {
                let mut s = String::new();
                for d in print_drops(&drops) {
                    s.push_str(&d);
                    s.push('\n');
                }
                write(None, s.as_bytes())?;
            }
            let located = map.as_ref().and_then(|m| m.locate(package.root(), &fault));
            // A fault is a verdict about a valid module (exit 3), not invalid input.
            let (diagnostics, source) = crate::zlm_source::fault_diagnostics(
                &fault,
                located.as_ref(),
                &a.input.file,
                &label,
            );
            crate::diag::emit(&diagnostics, format, source.as_deref());
            Ok(Outcome::Verdict)
        }
        Err(e) => Err(usage(e.to_string())),
    }
}

/// The code of an engine that cannot take an argument document's values.
pub const BOUNDARY_ENGINE: &str = "ZLM-ARG-ENGINE";

/// A rejected `--json-args` document: its code, located at the JSON
/// path (or line and column) of the value concerned.
fn bad_args(e: &zlm::boundary::ArgError) -> CliError {
    let mut diagnostic = crate::diag::Diagnostic::new(
        "encoding",
        Some(e.code),
        format!("{} (at {})", e.message, e.location),
        "--json-args",
    );
    if let Some((line, column)) = e.position {
        diagnostic.line = Some(line as u64);
        diagnostic.column = Some(column as u64);
    }
    CliError::invalid(vec![diagnostic], None)
}

/// `zlm run --json-args`: a call across the typed boundary
/// (docs/zlm/boundary.md). The result and every lent value come back in
/// the JSON form the arguments were written in.
#[allow(clippy::too_many_arguments)]
fn run_typed(
    a: &RunArgs,
    it: &Interp<'_>,
    at: (usize, usize),
    doc: &str,
    label: &str,
    map: Option<&zlm::ancillary::SourceMap>,
    package: &zlm::package::Package,
    contract: Option<String>,
    llvm: Option<LlvmHooks>,
) -> Result<Outcome, CliError> {
    let format = a.fmt.format;
    let r = it.resolved();
    let slots = zlm::boundary::slots(r, at);
    let values = zlm::boundary::parse_args(r, &slots, doc).map_err(|e| bad_args(&e))?;
    let refuse = |message: String| {
        let diagnostic =
            crate::diag::Diagnostic::new("unsupported", Some(BOUNDARY_ENGINE), message, label);
        Err(CliError::invalid(vec![diagnostic], None))
    };
    let ran = match a.engine {
        crate::zlm_c_cmd::Engine::Interp => it.call_host(at, values).map(|call| {
            let out = call.outcome;
            crate::zlm_c_cmd::TypedRan {
                words: zlm::boundary::TypedWords {
                    value: out.value,
                    returned: call.returned,
                },
                steps: out.steps,
                drops: out.drops,
            }
        }),
        engine => {
            let name = match engine {
                crate::zlm_c_cmd::Engine::C => "the C engine",
                _ => "the LLVM engines",
            };
            if let Err(why) = crate::zlm_c_cmd::typed_c_support(it, at) {
                return refuse(format!(
                    "{} cannot be called across the typed boundary on {name}: {why}",
                    a.entry
                ));
            }
            let bytes = zlm::boundary::host_bytes(&values);
            if bytes > it.limits().bytes {
                return Err(usage(format!(
                    "the arguments hold {bytes} array bytes, over the byte limit {}",
                    it.limits().bytes
                )));
            }
            let limits = it.limits();
            match (engine.llvm(), llvm) {
                (None, _) => {
                    crate::zlm_c_cmd::run_c_typed(package, it, at, &values, limits, &a.cc, label)?
                }
                (Some(e), Some(llvm)) => (llvm.typed)(e, package, it, at, &values, limits, label)?,
                (Some(_), None) => {
                    return Err(usage("the LLVM engines run in irkit-llvm".into()));
                }
            }
        }
    };
    let ty = r.module.declarations[at.0].functions[at.1].result.clone();
    match ran {
        Ok(out) => {
            let value = zlm::boundary::json_of_value(r, &out.words.value, &ty);
            let mut returned = serde_json::Map::new();
            for (slot, lent) in slots.iter().zip(&out.words.returned) {
                if let Some(v) = lent {
                    returned.insert(
                        slot.name.clone(),
                        zlm::boundary::json_of_value(r, v, &slot.host),
                    );
                }
            }
            let drops: Vec<String> = out.drops.iter().map(|d| d.to_string()).collect();
            let text = match format {
                Format::Json => format!(
                    "{}\n",
                    serde_json::json!({
                        "result": it.render(&out.words.value, &ty),
                        "value": value,
                        "returned": returned,
                        "type": zlm::interp::type_name(r, &ty),
                        "steps": out.steps,
                        "drops": drops,
                        "contract": contract,
                    })
                ),
                Format::Human => {
                    let mut s = String::new();
                    if a.drops {
                        for d in &drops {
                            s.push_str(d);
                            s.push('\n');
                        }
                    }
                    s.push_str(&value.to_string());
                    s.push('\n');
                    for (name, v) in &returned {
                        s.push_str(&format!("{name}: {v}\n"));
                    }
                    s
                }
            };
            write(None, text.as_bytes())?;
            Ok(Outcome::Success)
        }
        Err(RunError::Fault { mut fault, drops }) => {
            spell_contract(it, &mut fault);
            if a.drops && format == Format::Human {
                let s: String = drops.iter().map(|d| format!("{d}\n")).collect();
                write(None, s.as_bytes())?;
            }
            let located = map.and_then(|m| m.locate(package.root(), &fault));
            let (diagnostics, source) = crate::zlm_source::fault_diagnostics(
                &fault,
                located.as_ref(),
                &a.input.file,
                label,
            );
            crate::diag::emit(&diagnostics, format, source.as_deref());
            Ok(Outcome::Verdict)
        }
        Err(e) => Err(usage(e.to_string())),
    }
}

/// Completes a contract fault's clause (`requires 0`) with the clause as the
/// contract printer spells it (`requires 0: (n >= 0i64)`), where the faulting
/// function and its clause are found.
fn spell_contract(it: &Interp<'_>, fault: &mut zlm::interp::Fault) {
    let zlm::interp::FaultKind::Contract(clause) = &mut fault.kind else {
        return;
    };
    let Ok((decl, function)) = it.find(&fault.function) else {
        return;
    };
    let r = it.resolved();
    let f = &r.module.declarations[decl].functions[function];
    let Some((part, index)) = clause.split_once(' ') else {
        return;
    };
    let list = match part {
        "requires" => &f.requires,
        "ensures" => &f.ensures,
        _ => return,
    };
    let expression = index.parse::<usize>().ok().and_then(|i| list.get(i));
    if let Some(printed) =
        expression.and_then(|e| zlm::check::contracts::print_expr(r, decl, f, e).ok())
    {
        clause.push_str(": ");
        clause.push_str(&printed);
    }
}

/// "; did you mean `Decl.fn`?" for an entry that names no function of the
/// root module, or nothing.
fn entry_hint(it: &Interp<'_>, entry: &str) -> String {
    let module = &it.resolved().module;
    let names: Vec<String> = module
        .declarations
        .iter()
        .flat_map(|d| {
            d.functions
                .iter()
                .map(move |f| format!("{}.{}", d.name, f.name))
        })
        .collect();
    crate::suggest::hint(entry, names.iter().map(String::as_str))
}
