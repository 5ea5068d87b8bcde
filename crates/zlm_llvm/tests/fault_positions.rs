//! Faults at source positions on the LLVM engines (docs/zlm/ancillary.md):
//! the JIT's and the AOT executable's faults on the fault examples, located
//! through the source map of the `.zlt`, name the line of the operation
//! that faulted and its function — the same lines as the interpreter and
//! the C engine (`crates/zlm/tests/fault_positions.rs`). The engines never
//! see the map: it is consulted only after a run has faulted.

mod support;

use support::host_record;
use zlm::ancillary::SourceMap;
use zlm::interp::{Fault, Limits};
use zlm::materialize::c::engine::CRun;
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;
use zlm_llvm::{Scope, lower};

/// (example, entry, argument words, the text of the line the fault is at;
/// `None`: the function's `func` line, for a contract outside the body).
const CASES: &[(&str, &str, &[u64], Option<&str>)] = &[
    (
        "faults.zlt",
        "Main.add",
        &[0x7fff_ffff, 1],
        Some("add Int32 %0.0 %0.1 | - -"),
    ),
    (
        "faults.zlt",
        "Main.div",
        &[7, 0],
        Some("div Int32 %0.0 %0.1 | - -"),
    ),
    (
        "faults.zlt",
        "Main.positive",
        &[0],
        Some("assert_true - %0.2 | - -"),
    ),
    (
        "faults.zlt",
        "Main.byte_at",
        &[0, 9],
        Some("intrinsic_call Byte %0.8 %0.9 | cfunc:2 effects:[]"),
    ),
    ("loop.zlt", "Main.sum", &[u64::MAX], None),
];

fn text(file: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

/// The 1-based line the fault of `entry` must be located at.
fn expected_line(text: &str, entry: &str, needle: Option<&str>) -> u32 {
    let (decl, function) = entry.split_once('.').unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    let decl_at = lines
        .iter()
        .position(|l| l.trim() == format!("decl value {decl} public"))
        .unwrap();
    let func_at = (decl_at..lines.len())
        .find(|&i| {
            lines[i]
                .trim_start()
                .starts_with(&format!("func message type {function} "))
        })
        .unwrap();
    let at = match needle {
        None => func_at,
        Some(n) => (func_at..lines.len())
            .find(|&i| lines[i].trim() == n)
            .unwrap(),
    };
    at as u32 + 1
}

fn check(engine: &str, run: impl Fn(&zlm_llvm::Lowered, &str, &[u64]) -> CRun) {
    for (file, entry, args, needle) in CASES {
        let text = text(file);
        let (m, positions) = zlm::text::parse_with_positions(&text).unwrap();
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let map = SourceMap::from_text(file, &m, &positions).unwrap();
        let unit = lower(&checked, &Scope::Entry((*entry).into())).unwrap();
        let fault: Fault = match run(&unit, entry, args) {
            CRun::Fault { fault, .. } => fault,
            CRun::Done(o) => panic!("{engine} {entry}: expected a fault, got {}", o.rendered),
        };
        let at = map
            .locate(&checked, &fault)
            .unwrap_or_else(|| panic!("{engine} {entry}: {fault} not located"));
        assert_eq!(
            (at.file.as_str(), at.function.as_str()),
            (*file, *entry),
            "{engine}"
        );
        assert_eq!(
            at.line,
            expected_line(&text, entry, *needle),
            "{engine}: {fault} at {at}"
        );
    }
}

#[test]
fn jit_faults_name_their_zlt_line() {
    check("jit", |unit, entry, args| {
        with_jit(unit, |p| p.run(entry, args, Limits::default()))
            .and_then(|r| r)
            .unwrap_or_else(|e| panic!("jit: {e}"))
    });
}

#[test]
fn aot_faults_name_their_zlt_line() {
    let record = host_record();
    check("aot", |unit, entry, args| {
        AotProgram::build(unit, &record)
            .and_then(|p| p.run(entry, args, Limits::default()))
            .unwrap_or_else(|e| panic!("aot: {e}"))
    });
}
