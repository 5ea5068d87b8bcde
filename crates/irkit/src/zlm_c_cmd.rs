//! `irkit zlm emit-c FILE -o DIR [--target-config FILE]` and the C engine
//! of `irkit zlm run --engine c` (C0-EXEC-002, docs/zlm/c-materializer.md).

use crate::args::{FormatArgs, InputArgs};
use crate::error::{CliError, Origin, Outcome};
use crate::io::read;
use crate::zlm_load::load_package;
use std::path::PathBuf;
use zlm::interp::{DropEvent, Interp, Limits, RunError, Value};
use zlm::materialize::c::engine::{CRun, Compiler, Program};
use zlm::materialize::c::{Refusal, Scope, TargetConfig};
use zlm::model::{ReceiverKind, Type};

/// Which engine `zlm run` uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter.
    #[default]
    Interp,
    /// The portable C materializer, compiled with `--cc`.
    C,
    /// LLVM, compiled and run in-process (crates/zlm_llvm).
    Jit,
    /// LLVM, built for the host, linked with `cc` and run (crates/zlm_llvm).
    Aot,
}

impl Engine {
    /// The LLVM engine this is, if it is one (they run in `irkit-llvm`).
    pub fn llvm(self) -> Option<crate::zlm_llvm_args::LlvmEngine> {
        match self {
            Engine::Jit => Some(crate::zlm_llvm_args::LlvmEngine::Jit),
            Engine::Aot => Some(crate::zlm_llvm_args::LlvmEngine::Aot),
            Engine::Interp | Engine::C => None,
        }
    }
}

/// A completed run of either engine.
pub struct Ran {
    /// The rendered result.
    pub rendered: String,
    /// Its type.
    pub ty: Type,
    /// Operations executed.
    pub steps: u64,
    /// The drop log.
    pub drops: Vec<DropEvent>,
}

/// Arguments of `irkit zlm emit-c`.
#[derive(clap::Args)]
pub struct EmitCArgs {
    // A canonical ZLM1 artifact: the root module of the package.
    #[command(flatten)]
    input: InputArgs,
    /// Provider artifacts of imported modules: the package's other modules
    /// (those the root, or a provider, links against).
    #[arg(long = "dep")]
    deps: Vec<PathBuf>,
    /// Output directory (created): `zlm_rt.h` and `module.c`.
    #[arg(short, long)]
    output: PathBuf,
    /// Target configuration (`key = value` lines); the LP64 host default
    /// when absent.
    #[arg(long)]
    target_config: Option<PathBuf>,
    /// Emit only this entry (`Decl.function`) and what it calls, instead of
    /// every function.
    #[arg(long)]
    entry: Option<String>,
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
}

fn refused(label: &str, r: &Refusal) -> CliError {
    CliError::diagnosed(r, &Origin::binary(label))
}

fn usage(msg: String) -> CliError {
    CliError::Usage(msg)
}

/// Runs `irkit zlm emit-c`.
pub fn emit_c(a: EmitCArgs) -> Result<Outcome, CliError> {
    let package = load_package(&a.input.file, &a.deps)?;
    let target = match &a.target_config {
        None => TargetConfig::default(),
        Some(p) => {
            let (label, bytes) = read(p)?;
            let text =
                String::from_utf8(bytes).map_err(|_| usage(format!("{label} is not UTF-8")))?;
            TargetConfig::parse(&text).map_err(|r| refused(&label, &r))?
        }
    };
    let scope = match &a.entry {
        Some(e) => Scope::Entry(e.clone()),
        None => Scope::Module,
    };
    let label = a.input.file.display().to_string();
    let unit = zlm::materialize::c::emit_package(&package, &target, &scope)
        .map_err(|r| refused(&label, &r))?;
    zlm::materialize::c::engine::write_files(&unit, &a.output).map_err(|e| usage(e.to_string()))?;
    Ok(Outcome::Success)
}

/// Runs entry `at` of `package` on the C engine with the interpreter's
/// argument values and limits: the same outcome type as the interpreter.
pub fn run_c(
    package: &zlm::package::Package,
    it: &Interp<'_>,
    at: (usize, usize),
    values: &[Value],
    limits: Limits,
    cc: &str,
    label: &str,
) -> Result<Result<Ran, RunError>, CliError> {
    let r = it.resolved();
    let f = &r.module.declarations[at.0].functions[at.1];
    if matches!(
        f.receiver,
        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
    ) {
        return Ok(Err(RunError::Usage(
            "the entry function must have a type receiver (a host lends no receiver)".into(),
        )));
    }
    let name = r.fn_name(at.0, at.1);
    let unit = zlm::materialize::c::emit_package(
        package,
        &TargetConfig::default(),
        &Scope::Entry(name.clone()),
    )
    .map_err(|e| refused(label, &e))?;
    let mut words = Vec::new();
    for v in values {
        match v {
            Value::Scalar(w) => words.push(*w),
            // Unit and the host allocator capability carry no data.
            Value::Unit | Value::Allocator => words.push(0),
            _ => {
                return Err(refused(
                    label,
                    &Refusal {
                        function: Some(name),
                        block: None,
                        op: None,
                        message: "host arguments other than scalars and Unit".into(),
                    },
                ));
            }
        }
    }
    let program = Program::build(&unit, &Compiler::strict(cc)).map_err(|e| usage(e.to_string()))?;
    match program.run(&name, &words, limits) {
        Ok(CRun::Done(o)) => Ok(Ok(Ran {
            rendered: o.rendered,
            ty: f.result.clone(),
            steps: o.steps,
            drops: o.drops,
        })),
        Ok(CRun::Fault { fault, drops }) => Ok(Err(RunError::Fault { fault, drops })),
        Err(e) => Err(usage(e.to_string())),
    }
}

/// A completed typed call: the result and, per slot, the lent value
/// handed back (docs/zlm/boundary.md).
pub struct TypedRan {
    /// The result and the lent values.
    pub words: zlm::boundary::TypedWords,
    /// Operations executed.
    pub steps: u64,
    /// Drops performed, in order.
    pub drops: Vec<DropEvent>,
}

/// Why entry `at` cannot take `--json-args` on the C engine, if it cannot.
pub fn typed_c_support(it: &Interp<'_>, at: (usize, usize)) -> Result<(), String> {
    zlm::materialize::c::host::support(it.resolved(), at)
}

/// Runs entry `at` on the C engine across the typed boundary with slot
/// values `values` (as `zlm::boundary::parse_args` returns them).
pub fn run_c_typed(
    package: &zlm::package::Package,
    it: &Interp<'_>,
    at: (usize, usize),
    values: &[Value],
    limits: Limits,
    cc: &str,
    label: &str,
) -> Result<Result<TypedRan, RunError>, CliError> {
    let r = it.resolved();
    let f = &r.module.declarations[at.0].functions[at.1];
    let slots = zlm::boundary::slots(r, at);
    let name = r.fn_name(at.0, at.1);
    let unit = zlm::materialize::c::emit_package(
        package,
        &TargetConfig::default(),
        &Scope::Entry(name.clone()),
    )
    .map_err(|e| refused(label, &e))?;
    let words = zlm::boundary::slot_words(r, &slots, values);
    let program = Program::build(&unit, &Compiler::strict(cc)).map_err(|e| usage(e.to_string()))?;
    match program.run_typed(&name, &words, limits) {
        Ok(CRun::Done(o)) => {
            let Some(decoded) = zlm::boundary::typed_of_report(r, &f.result, &slots, &o.rendered)
            else {
                return Err(usage(format!(
                    "the C executable's typed report did not decode: {:?}",
                    o.rendered
                )));
            };
            Ok(Ok(TypedRan {
                words: decoded,
                steps: o.steps,
                drops: o.drops,
            }))
        }
        Ok(CRun::Fault { fault, drops }) => Ok(Err(RunError::Fault { fault, drops })),
        Err(e) => Err(usage(e.to_string())),
    }
}
