//! `irkit zlm build FILE --target-record REC -o OUT` (AOT under an explicit
//! target record, C0-EXEC-003) and the LLVM engines of
//! `irkit zlm run --engine jit|aot` (docs/zlm/llvm-engines.md). Only the
//! `irkit-llvm` executable compiles this module: `irkit` itself links no LLVM
//! and hands these verbs over (`zlm_llvm_exec.rs`, docs/startup.md).

use crate::diag::Diagnostic;
use crate::error::{CliError, Diagnose, Origin, Outcome, Report};
use crate::io::read;
use crate::zlm_llvm_args::{BuildArgs, LlvmEngine};
use crate::zlm_load::load_package;
use std::path::{Path, PathBuf};
use zlm::interp::{Interp, Limits, RunError, Value};
use zlm::materialize::c::engine::{COutcome, CRun};
use zlm::model::ReceiverKind;
use zlm_llvm::{LlvmError, Scope, TargetRecord};

impl Diagnose for zlm_llvm::LlvmError {
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let (kind, message) = match self {
            zlm_llvm::LlvmError::Refused(r) => ("unsupported", r.detail()),
            zlm_llvm::LlvmError::Record(m) => ("target-record", format!("target record: {m}")),
            e => ("engine", e.to_string()),
        };
        vec![Diagnostic::new(
            kind,
            Some(self.code()),
            message,
            origin.label,
        )]
    }
}

/// A refusal or a bad target record is the input's (exit 1); any other
/// engine failure is the toolchain's (exit 2).
fn failed(label: &str, e: &LlvmError) -> CliError {
    let report = Report {
        diagnostics: e.diagnostics(&Origin::binary(label)),
        source: None,
    };
    match e {
        LlvmError::Refused(_) | LlvmError::Record(_) => CliError::Invalid(report),
        _ => CliError::Toolchain(report),
    }
}

fn io(msg: String) -> CliError {
    CliError::Usage(msg)
}

/// `OUT.o`, `OUT.so`, `OUT` → `OUT`.
fn stem(out: &Path) -> String {
    let s = out.to_string_lossy();
    s.strip_suffix(".o")
        .or_else(|| s.strip_suffix(".so"))
        .or_else(|| s.strip_suffix(".ll"))
        .unwrap_or(&s)
        .to_string()
}

/// `OUT.o` → `OUT.target.json`; `OUT` → `OUT.target.json`.
fn record_path(out: &Path) -> PathBuf {
    PathBuf::from(format!("{}.target.json", stem(out)))
}

/// Runs `irkit zlm build`.
pub fn build(a: BuildArgs) -> Result<Outcome, CliError> {
    // The root and the providers it (and they) link against build as one package.
    let package = load_package(&a.input.file, &a.deps)?;
    let record = match &a.target_record {
        Some(p) => {
            let (label, bytes) = read(p)?;
            let text = String::from_utf8(bytes).map_err(|_| io(format!("{label} is not UTF-8")))?;
            Some(TargetRecord::parse(&text).map_err(|e| failed(&label, &e))?)
        }
        None if a.output.to_string_lossy().ends_with(".ll") => None,
        None => {
            let r = TargetRecord::convenience("cc").map_err(|e| failed("cc", &e))?;
            eprintln!(
                "warning: no --target-record: built for LLVM's default triple {}; the record is not reproducibility evidence",
                r.triple
            );
            Some(r)
        }
    };
    let label = a.input.file.display().to_string();
    let scope = match &a.entry {
        Some(e) => Scope::Entry(e.clone()),
        None => Scope::Module,
    };
    let unit = zlm_llvm::lower_package(&package, &scope)
        .map_err(|r| failed(&label, &LlvmError::Refused(r)))?;
    let out = &a.output;
    let name = out.to_string_lossy();
    let fail = |e: LlvmError| failed(&label, &e);
    if name.ends_with(".ll") {
        // Target-independent IR: no record applies.
        std::fs::write(out, &unit.ir).map_err(|e| io(format!("{name}: {e}")))?;
        return Ok(Outcome::Success);
    }
    let Some(record) = record else {
        return Err(io("no target record".into()));
    };
    let obj = zlm_llvm::aot::object(&unit, &record).map_err(fail)?;
    if name.ends_with(".o") {
        std::fs::write(out, obj).map_err(|e| io(format!("{name}: {e}")))?;
    } else {
        let shared = name.ends_with(".so");
        let tmp = PathBuf::from(format!("{name}.{}.o", std::process::id()));
        std::fs::write(&tmp, obj).map_err(|e| io(format!("{}: {e}", tmp.display())))?;
        let linked = if shared {
            zlm_llvm::aot::link_shared(&tmp, out, &record)
        } else {
            zlm_llvm::aot::link(&tmp, out, &record)
        };
        let _ = std::fs::remove_file(&tmp);
        linked.map_err(fail)?;
        if shared {
            let header = PathBuf::from(format!("{}.h", stem(out)));
            // The fixed interface, then the typed entries' structs and
            // calls generated from their checked signatures.
            let text = format!(
                "{}{}",
                zlm_llvm::aot::LIBRARY_H,
                zlm_llvm::header::typed_header(&package.resolved(), &unit.typed)
            );
            std::fs::write(&header, text).map_err(|e| io(format!("{}: {e}", header.display())))?;
        }
    }
    // The record names the payload it was built from (C0-ART-004).
    let built = record.built_from(&zlm::address(&read(&a.input.file)?.1));
    let rp = record_path(out);
    std::fs::write(&rp, built.record).map_err(|e| io(format!("{}: {e}", rp.display())))?;
    Ok(Outcome::Success)
}

/// Runs entry `at` of the root of `package` on an LLVM engine with the
/// interpreter's argument values and limits: a completed run or the
/// interpreter's fault.
pub fn run_llvm(
    engine: LlvmEngine,
    package: &zlm::package::Package,
    it: &Interp<'_>,
    at: (usize, usize),
    values: &[Value],
    limits: Limits,
    label: &str,
) -> Result<Result<COutcome, RunError>, CliError> {
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
    let fail = |e: LlvmError| failed(label, &e);
    let unit = zlm_llvm::lower_package(package, &Scope::Entry(name.clone()))
        .map_err(|r| fail(LlvmError::Refused(r)))?;
    let mut words = Vec::new();
    for v in values {
        match v {
            Value::Scalar(w) => words.push(*w),
            Value::Unit | Value::Allocator => words.push(0),
            _ => {
                return Err(fail(LlvmError::Refused(zlm_llvm::Refusal {
                    function: Some(name),
                    block: None,
                    op: None,
                    message: "host arguments other than scalars and Unit".into(),
                })));
            }
        }
    }
    let ran = match engine {
        LlvmEngine::Jit => {
            zlm_llvm::jit::with_jit(&unit, |p| p.run(&name, &words, limits)).and_then(|r| r)
        }
        LlvmEngine::Aot => TargetRecord::convenience("cc")
            .and_then(|rec| zlm_llvm::aot::AotProgram::build(&unit, &rec))
            .and_then(|p| p.run(&name, &words, limits)),
    }
    .map_err(fail)?;
    Ok(match ran {
        CRun::Done(o) => Ok(o),
        CRun::Fault { fault, drops } => Err(RunError::Fault { fault, drops }),
    })
}

/// Runs entry `at` of the root of `package` on an LLVM engine across the
/// typed boundary (docs/zlm/boundary.md) with its slot values (as
/// `zlm::boundary::parse_args` returns them) and the interpreter's limits.
pub fn run_llvm_typed(
    engine: LlvmEngine,
    package: &zlm::package::Package,
    it: &Interp<'_>,
    at: (usize, usize),
    values: &[Value],
    limits: Limits,
    label: &str,
) -> Result<Result<crate::zlm_c_cmd::TypedRan, RunError>, CliError> {
    let r = it.resolved();
    let f = &r.module.declarations[at.0].functions[at.1];
    let slots = zlm::boundary::slots(r, at);
    let name = r.fn_name(at.0, at.1);
    let fail = |e: LlvmError| failed(label, &e);
    let unit = zlm_llvm::lower_package(package, &Scope::Entry(name.clone()))
        .map_err(|r| fail(LlvmError::Refused(r)))?;
    let words = zlm::boundary::slot_words(r, &slots, values);
    let ran = match engine {
        LlvmEngine::Jit => {
            zlm_llvm::jit::with_jit(&unit, |p| p.run_typed(&name, &words, limits)).and_then(|r| r)
        }
        LlvmEngine::Aot => TargetRecord::convenience("cc")
            .and_then(|rec| zlm_llvm::aot::AotProgram::build(&unit, &rec))
            .and_then(|p| p.run_typed(&name, &words, limits)),
    }
    .map_err(fail)?;
    match ran {
        CRun::Done(o) => {
            let Some(decoded) = zlm::boundary::typed_of_report(r, &f.result, &slots, &o.rendered)
            else {
                return Err(fail(LlvmError::Protocol(format!(
                    "the typed report did not decode: {:?}",
                    o.rendered
                ))));
            };
            Ok(Ok(crate::zlm_c_cmd::TypedRan {
                words: decoded,
                steps: o.steps,
                drops: o.drops,
            }))
        }
        CRun::Fault { fault, drops } => Ok(Err(RunError::Fault { fault, drops })),
    }
}
