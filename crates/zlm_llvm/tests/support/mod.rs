//! Shared by the LLVM-engine tests: example modules, host-callable entries,
//! edge-value arguments, and one comparable observation per engine.
#![allow(dead_code)]

use zlm::decode::Checked;
use zlm::interp::{Interp, Limits, RunError, Value};
use zlm::materialize::c::engine::CRun;
use zlm::model::{ReceiverKind, ScalarKind, Type};
use zlm_llvm::LlvmError;

/// The run examples every engine test covers.
pub const EXAMPLES: [&str; 9] = [
    "arms.zlt",
    "bytes.zlt",
    "control.zlt",
    "deep.zlt",
    "drops.zlt",
    "faults.zlt",
    "loop.zlt",
    "ops.zlt",
    "own.zlt",
];

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

/// Canonical edge words of a parameter type.
pub fn edge_words(t: &Type) -> Vec<u64> {
    match t {
        Type::Unit => vec![0],
        // The host allocator capability carries no data.
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

/// What one engine observed, in a comparable form.
#[derive(Debug, PartialEq, Eq, Clone)]
pub enum Seen {
    /// Rendered result, steps, drop log lines.
    Done(String, u64, Vec<String>),
    /// Fault display, drop log lines.
    Fault(String, Vec<String>),
}

/// The interpreter's observation.
pub fn interp_run(it: &Interp<'_>, entry: &str, args: &[u64]) -> Seen {
    let at = it.find(entry).unwrap();
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
        Ok(out) => Seen::Done(
            it.render(&out.value, &out.ty),
            out.steps,
            out.drops.iter().map(|d| d.to_string()).collect(),
        ),
        Err(RunError::Fault { fault, drops }) => Seen::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        ),
        Err(e) => panic!("interpreter: {e}"),
    }
}

/// The observation of a C, JIT or AOT run.
pub fn seen(r: Result<CRun, impl std::fmt::Display>, engine: &str) -> Seen {
    match r {
        Ok(CRun::Done(o)) => Seen::Done(
            o.rendered,
            o.steps,
            o.drops.iter().map(|d| d.to_string()).collect(),
        ),
        Ok(CRun::Fault { fault, drops }) => Seen::Fault(
            fault.to_string(),
            drops.iter().map(|d| d.to_string()).collect(),
        ),
        Err(e) => panic!("{engine}: {e}"),
    }
}

/// The host's convenience target record.
pub fn host_record() -> zlm_llvm::TargetRecord {
    zlm_llvm::TargetRecord::convenience("cc").unwrap()
}

/// Whether `e` is a refusal (C0-EXEC-002).
pub fn is_refusal(e: &LlvmError) -> bool {
    e.code() == "C0-EXEC-002"
}

/// The example tests' limit sets: a loop given an extreme bound runs to
/// the step limit (200 000 steps keep the interpreter's share small), a
/// step limit inside most bodies, a depth limit that stops nested calls,
/// and a byte budget smaller than the arrays the examples allocate.
pub fn example_limits() -> [Limits; 4] {
    [
        steps(200_000),
        steps(7),
        Limits {
            depth: 3,
            ..steps(200_000)
        },
        Limits {
            bytes: 3,
            ..steps(200_000)
        },
    ]
}

/// `loop.zlt` (exact profile), checked, and its whole module lowered.
pub fn loop_unit() -> (Checked, zlm_llvm::Lowered) {
    let checked = zlm::decode::from_model(&load("loop.zlt", "exact"), &[]).unwrap();
    let unit = zlm_llvm::lower(&checked, &zlm_llvm::Scope::Module).unwrap();
    (checked, unit)
}

/// Limits with `steps` steps.
pub fn steps(n: u64) -> Limits {
    Limits {
        steps: n,
        ..Limits::default()
    }
}
