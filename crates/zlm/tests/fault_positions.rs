//! Faults at source positions (docs/zlm/ancillary.md): the interpreter's and
//! the C engine's faults on the fault examples, located through the source
//! map of the `.zlt` they were assembled from, name the line (and column)
//! of the operation that faulted and its function. The map is consulted
//! only after the run has faulted.

mod c_engine_common;

use c_engine_common::{build, compiler};
use zlm::ancillary::SourceMap;
use zlm::interp::{Fault, Interp, Limits, RunError, Value};
use zlm::materialize::c::engine::CRun;
use zlm::materialize::c::{Scope, TargetConfig, emit};

/// A fault case: example file, entry, argument words, and the text of the
/// line the fault must be located at (the first such line inside the
/// entry's function; `None`: the function's own `func` line, for a
/// contract evaluated outside the body).
pub struct Case {
    pub file: &'static str,
    pub entry: &'static str,
    pub args: &'static [u64],
    pub line: Option<&'static str>,
}

pub const CASES: &[Case] = &[
    Case {
        file: "faults.zlt",
        entry: "Main.add",
        args: &[0x7fff_ffff, 1],
        line: Some("add Int32 %0.0 %0.1 | - -"),
    },
    Case {
        file: "faults.zlt",
        entry: "Main.div",
        args: &[7, 0],
        line: Some("div Int32 %0.0 %0.1 | - -"),
    },
    Case {
        file: "faults.zlt",
        entry: "Main.positive",
        args: &[0],
        line: Some("assert_true - %0.2 | - -"),
    },
    Case {
        file: "faults.zlt",
        entry: "Main.byte_at",
        args: &[0, 9],
        line: Some("intrinsic_call Byte %0.8 %0.9 | cfunc:2 effects:[]"),
    },
    Case {
        file: "loop.zlt",
        entry: "Main.sum",
        args: &[u64::MAX],
        line: None,
    },
];

fn text(file: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

/// The 1-based line of `case`'s expected location in its text.
pub fn expected_line(text: &str, case: &Case) -> u32 {
    let (decl, function) = case.entry.split_once('.').unwrap();
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
    let at = match case.line {
        None => func_at,
        Some(needle) => (func_at..lines.len())
            .find(|&i| lines[i].trim() == needle)
            .unwrap(),
    };
    at as u32 + 1
}

fn located(case: &Case, engine: &str, fault: &Fault) {
    let text = text(case.file);
    let (m, positions) = zlm::text::parse_with_positions(&text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let map = SourceMap::from_text(case.file, &m, &positions).unwrap();
    let at = map
        .locate(&checked, fault)
        .unwrap_or_else(|| panic!("{engine} {}: {fault} not located", case.entry));
    assert_eq!(at.file, case.file);
    assert_eq!(at.function, case.entry, "{engine}: {fault}");
    assert_eq!(
        at.line,
        expected_line(&text, case),
        "{engine}: {fault} at {at}"
    );
    assert!(at.column > 1, "{engine}: {at}");
}

#[test]
fn interpreter_faults_name_their_zlt_line() {
    for case in CASES {
        let text = text(case.file);
        let checked = zlm::decode::from_model(&zlm::text::parse(&text).unwrap(), &[]).unwrap();
        let it = Interp::new(&checked).unwrap();
        let at = it.find(case.entry).unwrap();
        let values: Vec<Value> = it
            .params(at)
            .iter()
            .zip(case.args)
            .map(|(t, w)| match t {
                zlm::model::Type::Ref(_) => Value::Allocator,
                _ => Value::Scalar(*w),
            })
            .collect();
        match it.run(case.entry, &values) {
            Err(RunError::Fault { fault, .. }) => located(case, "interp", &fault),
            other => panic!("{}: expected a fault, got {other:?}", case.entry),
        }
    }
}

#[test]
fn c_engine_faults_name_their_zlt_line() {
    let cc = compiler("cc");
    for case in CASES {
        let text = text(case.file);
        let checked = zlm::decode::from_model(&zlm::text::parse(&text).unwrap(), &[]).unwrap();
        let unit = emit(
            &checked,
            &TargetConfig::default(),
            &Scope::Entry(case.entry.into()),
        )
        .unwrap();
        let program = build(&unit, &cc);
        match program.run(case.entry, case.args, Limits::default()) {
            Ok(CRun::Fault { fault, .. }) => located(case, "c", &fault),
            other => panic!("{}: expected a fault, got {other:?}", case.entry),
        }
    }
}
