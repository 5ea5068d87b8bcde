//! Shared by the C-engine tests: loading examples, host-callable entries,
//! edge-value arguments, and the interpreter/C comparison.
#![allow(dead_code)]

use zlm::decode::Checked;
use zlm::interp::{Interp, Limits, RunError, Value};
use zlm::materialize::c::Emitted;
use zlm::materialize::c::engine::{CRun, Compiler, Program};
use zlm::model::{ReceiverKind, ScalarKind, Type};

/// Example `file` of examples/zlm/run under numeric profile `profile`.
pub fn load(file: &str, profile: &str) -> zlm::Module {
    let p = format!(
        "{}/../../examples/zlm/run/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(p).unwrap();
    zlm::text::parse(&text.replace("profile exact", &format!("profile {profile}"))).unwrap()
}

/// Functions the interpreter's host can call (type or no receiver).
pub fn entries(checked: &Checked) -> Vec<String> {
    let m = checked.module();
    let mut out = Vec::new();
    for d in &m.declarations {
        for f in &d.functions {
            if matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None) {
                out.push(format!("{}.{}", d.name, f.name));
            }
        }
    }
    out
}

/// A strict compiler, or the one named by `ZLM_TEST_CC`.
pub fn compiler(default: &str) -> Compiler {
    let mut c = Compiler::strict(&std::env::var("ZLM_TEST_CC").unwrap_or(default.to_string()));
    if let Ok(extra) = std::env::var("ZLM_TEST_CFLAGS") {
        c.flags.extend(extra.split_whitespace().map(String::from));
    }
    c
}

/// Compiles `unit` (panics with the compiler's message if it is rejected).
pub fn build(unit: &Emitted, cc: &Compiler) -> Program {
    Program::build(unit, cc).unwrap_or_else(|e| panic!("{e}"))
}

/// Canonical edge words of a parameter type.
pub fn edge_words(t: &Type) -> Vec<u64> {
    match t {
        Type::Unit => vec![0],
        // The host allocator (the interpreter's host supplies it).
        Type::Ref(a) if **a == Type::AllocatorBytesError => vec![0],
        Type::Scalar(ScalarKind::Bool) => vec![0, 1],
        Type::Scalar(k) => {
            let w = match k {
                ScalarKind::Byte | ScalarKind::UInt8 | ScalarKind::Int8 => 8,
                ScalarKind::Int16 | ScalarKind::UInt16 => 16,
                ScalarKind::Int32 | ScalarKind::UInt32 => 32,
                _ => 64,
            };
            if k.is_signed() {
                let max = (1u64 << (w - 1)) - 1;
                let min = (-(1i128 << (w - 1))) as u64;
                vec![0, 1, u64::MAX, 2, 7, 100, max, min]
            } else {
                let max = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                vec![0, 1, 2, 7, 100, max]
            }
        }
        _ => vec![],
    }
}

/// One comparison case.
pub struct Case<'a> {
    /// Printed on mismatch.
    pub label: &'a str,
    /// `Decl.function`.
    pub entry: &'a str,
}

/// What one engine observed, in a comparable form.
#[derive(Debug, PartialEq, Eq)]
pub enum Seen {
    /// Rendered result, steps, drop log lines.
    Done(String, u64, Vec<String>),
    /// Fault display, drop log lines.
    Fault(String, Vec<String>),
}

/// The interpreter's observation.
pub fn interp_run(it: &Interp<'_>, entry: &str, args: &[u64]) -> Option<Seen> {
    let at = it.find(entry).ok()?;
    let tys = it.params(at);
    let vals: Vec<Value> = tys
        .iter()
        .zip(args)
        .map(|(t, w)| {
            if *t == Type::Unit {
                Value::Unit
            } else {
                Value::Scalar(*w)
            }
        })
        .collect();
    match it.run(entry, &vals) {
        Ok(out) => Some(Seen::Done(
            it.render(&out.value, &out.ty),
            out.steps,
            out.drops.iter().map(|d| d.to_string()).collect(),
        )),
        Err(RunError::Fault { fault, drops }) => Some(Seen::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        )),
        Err(e) => panic!("interpreter: {e}"),
    }
}

/// The C engine's observation.
pub fn c_run(p: &Program, entry: &str, args: &[u64], limits: Limits) -> Seen {
    match p.run(entry, args, limits) {
        Ok(CRun::Done(o)) => Seen::Done(
            o.rendered,
            o.steps,
            o.drops.iter().map(|d| d.to_string()).collect(),
        ),
        Ok(CRun::Fault { fault, drops }) => Seen::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        ),
        Err(e) => panic!("C engine: {e}"),
    }
}

/// Argument vectors: the product of edge words, at most `cap`, in a fixed order.
pub fn arg_vectors(tys: &[Type], cap: usize) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = vec![vec![]];
    for t in tys {
        let ws = edge_words(t);
        out = out
            .iter()
            .flat_map(|pre| {
                ws.iter().map(move |w| {
                    let mut v = pre.clone();
                    v.push(*w);
                    v
                })
            })
            .collect();
    }
    if out.len() > cap {
        let step = out.len() / cap;
        out = out.into_iter().step_by(step.max(1)).take(cap).collect();
    }
    out
}

/// Compiles `unit`, runs the entry on both engines with edge arguments
/// under the default and tight limits, asserts equality, and returns the
/// number of comparisons.
pub fn compare_entry(checked: &Checked, program: &Program, case: &Case<'_>) -> usize {
    let mut limits = vec![
        Limits::default(),
        Limits {
            steps: 7,
            ..Limits::default()
        },
    ];
    let it = Interp::new(checked).unwrap();
    let allocates = it.find(case.entry).is_ok_and(|at| {
        it.params(at)
            .iter()
            .any(|t| matches!(t, Type::Ref(a) if **a == Type::AllocatorBytesError))
    });
    if allocates {
        // Allocations and growth beyond the byte budget are errors.
        limits.push(Limits {
            bytes: 3,
            ..Limits::default()
        });
    }
    compare_with(checked, program, case, 8, &limits)
}

/// [`compare_entry`] with the argument cap and limit set given.
pub fn compare_with(
    checked: &Checked,
    program: &Program,
    case: &Case<'_>,
    cap: usize,
    limit_set: &[Limits],
) -> usize {
    let it = Interp::new(checked).unwrap();
    let at = it.find(case.entry).unwrap();
    let tys = it.params(at);
    let mut n = 0;
    for args in arg_vectors(&tys, cap) {
        for &limits in limit_set {
            let want = {
                let it = Interp::new(checked).unwrap().with_limits(limits);
                interp_run(&it, case.entry, &args)
            };
            let got = c_run(program, case.entry, &args, limits);
            assert_eq!(
                Some(&got),
                want.as_ref(),
                "{} args {args:x?} limits {limits:?}",
                case.label
            );
            n += 1;
        }
    }
    n
}
