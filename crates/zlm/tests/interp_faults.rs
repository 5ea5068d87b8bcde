//! Deterministic faults with function and operation, and the numeric profiles.

use zlm::interp::{FaultKind, Interp, RunError, Value};

fn text(name: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

fn fault(it: &Interp<'_>, entry: &str, args: &[Value]) -> (zlm::interp::Fault, Vec<String>) {
    match it.run(entry, args) {
        Err(RunError::Fault { fault, drops }) => {
            (fault, drops.iter().map(|d| d.to_string()).collect())
        }
        other => panic!("expected a fault, got {other:?}"),
    }
}

fn i32v(x: i32) -> Value {
    Value::Scalar(x as i64 as u64)
}

#[test]
fn exact_overflow_faults_at_the_operation() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let (f, _) = fault(&it, "Main.add", &[i32v(i32::MAX), i32v(1)]);
    assert_eq!(f.kind, FaultKind::Overflow);
    assert_eq!(
        (f.function.as_str(), f.block, f.op),
        ("Main.add", Some(0), Some(2))
    );
    assert_eq!(
        it.run("Main.add", &[i32v(-5), i32v(3)]).unwrap().value,
        i32v(-2)
    );
}

#[test]
fn modular_profile_wraps_at_the_declared_width() {
    let m =
        zlm::text::parse(&text("faults.zlt").replace("profile exact", "profile modular")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(
        it.run("Main.add", &[i32v(i32::MAX), i32v(1)])
            .unwrap()
            .value,
        i32v(i32::MIN)
    );
    assert_eq!(
        it.run("Main.div", &[i32v(i32::MIN), i32v(-1)])
            .unwrap()
            .value,
        i32v(i32::MIN)
    );
}

#[test]
fn approximate_profile_faults_like_exact() {
    let m = zlm::text::parse(&text("faults.zlt").replace("profile exact", "profile approximate"))
        .unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(
        fault(&it, "Main.add", &[i32v(i32::MIN), i32v(-1)]).0.kind,
        FaultKind::Overflow
    );
    assert_eq!(
        fault(&it, "Main.div", &[i32v(i32::MIN), i32v(-1)]).0.kind,
        FaultKind::Overflow
    );
}

#[test]
fn division_by_zero_faults_under_every_profile() {
    for p in ["exact", "modular", "approximate"] {
        let m =
            zlm::text::parse(&text("faults.zlt").replace("profile exact", &format!("profile {p}")))
                .unwrap();
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let it = Interp::new(&checked).unwrap();
        let (f, _) = fault(&it, "Main.div", &[i32v(7), i32v(0)]);
        assert_eq!(f.kind, FaultKind::DivideByZero);
        assert_eq!(f.op, Some(2));
    }
}

#[test]
fn signed_division_truncates() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(
        it.run("Main.div", &[i32v(-7), i32v(2)]).unwrap().value,
        i32v(-3)
    );
}

#[test]
fn assertion_failure() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let (f, _) = fault(&it, "Main.positive", &[i32v(0)]);
    assert_eq!((f.kind, f.op), (FaultKind::Assert, Some(3)));
    assert_eq!(
        it.run("Main.positive", &[i32v(3)]).unwrap().value,
        Value::Scalar(1)
    );
}

#[test]
fn byte_array_bounds_fault_unwinds_the_owner() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let ok = it
        .run("Main.byte_at", &[Value::Allocator, Value::Scalar(0)])
        .unwrap();
    assert_eq!(it.render(&ok.value, &ok.ty), "Ok(42)");
    assert_eq!(ok.drops.len(), 1);
    let (f, drops) = fault(&it, "Main.byte_at", &[Value::Allocator, Value::Scalar(1)]);
    assert_eq!((f.kind, f.op), (FaultKind::Bounds, Some(10)));
    assert_eq!(drops, ["Main.byte_at: drop l0 : Array<Byte>"]);
}

#[test]
fn allocator_exhaustion_takes_the_try_error_edge() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked)
        .unwrap()
        .with_limits(zlm::interp::Limits {
            bytes: 2,
            ..Default::default()
        });
    let out = it
        .run("Main.byte_at", &[Value::Allocator, Value::Scalar(0)])
        .unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "Err(4)");
    assert!(out.drops.is_empty());
}

#[test]
fn requires_failure_is_a_contract_fault() {
    let m = zlm::text::parse(&text("loop.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let (f, _) = fault(&it, "Main.sum", &[Value::Scalar(-1i64 as u64)]);
    assert_eq!(f.kind, FaultKind::Contract("requires 0".into()));
    assert_eq!(f.block, None);
}

#[test]
fn ensures_failure_is_a_contract_fault() {
    // Flip the ensures to `result < 0`.
    let src = text("loop.zlt").replace(
        "cop ge Bool result c:Int64:0",
        "cop lt Bool result c:Int64:0",
    );
    let m = zlm::text::parse(&src).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let (f, _) = fault(&it, "Main.sum", &[Value::Scalar(3)]);
    assert_eq!(f.kind, FaultKind::Contract("ensures 0".into()));
}

#[test]
fn step_limit() {
    let m = zlm::text::parse(&text("loop.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked)
        .unwrap()
        .with_limits(zlm::interp::Limits {
            steps: 1000,
            ..Default::default()
        });
    assert_eq!(
        fault(&it, "Main.sum", &[Value::Scalar(1_000_000)]).0.kind,
        FaultKind::StepLimit
    );
}

#[test]
fn unchecked_modules_never_run() {
    let src = text("loop.zlt").replace("add Int64 %2.0 %2.1", "add Int32 %2.0 %2.1");
    let m = zlm::text::parse(&src).unwrap();
    // Structural validation (the writer's typing table) or the checked
    // semantics reject it; either way it never executes.
    match zlm::decode::from_model(&m, &[]) {
        Err(e) => {
            assert!(e.code == "ZLM-C-TYPE" || e.code == "ZLM-SHAPE", "{e}")
        }
        Ok(_) => panic!("an invalid module must not run"),
    }
    assert_eq!(zlm::check::check(&m).unwrap_err().code, "ZLM-C-TYPE");
}

#[test]
fn byte_slices_and_their_precondition() {
    let m = zlm::text::parse(&text("faults.zlt")).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let ok = it
        .run(
            "Main.window",
            &[Value::Allocator, Value::Scalar(0), Value::Scalar(1)],
        )
        .unwrap();
    assert_eq!(it.render(&ok.value, &ok.ty), "Ok(1)");
    let empty = it
        .run(
            "Main.window",
            &[Value::Allocator, Value::Scalar(1), Value::Scalar(1)],
        )
        .unwrap();
    assert_eq!(it.render(&empty.value, &empty.ty), "Ok(0)");
    for (s, e) in [(1u64, 0u64), (0, 2)] {
        let (f, drops) = fault(
            &it,
            "Main.window",
            &[Value::Allocator, Value::Scalar(s), Value::Scalar(e)],
        );
        assert_eq!((f.kind, f.op), (FaultKind::Bounds, Some(10)));
        assert_eq!(drops, ["Main.window: drop l0 : Array<Byte>"]);
    }
}
