//! The interpreter's fused fast runs (a whole run charged at once) and its
//! one-operation path (taken when the step budget cannot cover a run) must
//! agree exactly: the step-limit fault lands on the operation that exceeds
//! the limit and an arithmetic fault inside a fused instruction names its
//! own operation, whatever the limit.

use zlm::interp::{FaultKind, Interp, Limits, RunError, Value};

fn loop_src() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .unwrap()
}

/// The counting loop with the increment `1` replaced by 2^62, so the
/// second increment (block 2, operation 5) overflows Int64.
fn overflowing(profile: &str) -> zlm::decode::Checked {
    let src = loop_src()
        .replace(
            "const Int64 c:Int64:1 |",
            "const Int64 c:Int64:4611686018427387904 |",
        )
        .replace("profile exact", profile);
    let m = zlm::text::parse(&src).unwrap();
    zlm::decode::from_model(&m, &[]).unwrap()
}

fn limits(steps: u64) -> Limits {
    Limits {
        steps,
        ..Limits::default()
    }
}

#[test]
fn step_limit_and_overflow_land_on_the_same_operation_for_every_limit() {
    let checked = overflowing("profile exact");
    // (block, operation) of each executed step: the requires clause, block
    // 0, the loop twice (the second pass faults at block 2 operation 5).
    let mut trace: Vec<(Option<u32>, Option<u32>)> = vec![(None, Some(0))];
    for (block, ops) in [(0, 4), (1, 4), (2, 8), (1, 4), (2, 6)] {
        trace.extend((0..ops).map(|j| (Some(block), Some(j))));
    }
    for limit in 0..40u64 {
        let it = Interp::new(&checked).unwrap().with_limits(limits(limit));
        let Err(RunError::Fault { fault, drops }) =
            it.run("Main.sum", &[Value::Scalar(i64::MAX as u64)])
        else {
            panic!("limit {limit}: the run must fault");
        };
        assert!(drops.is_empty());
        // Step `limit + 1` exceeds the limit, unless the overflow comes first.
        let (kind, at) = match trace.get(limit as usize) {
            Some(&at) => (FaultKind::StepLimit, at),
            None => (FaultKind::Overflow, (Some(2), Some(5))),
        };
        assert_eq!(
            (fault.kind, fault.block, fault.op),
            (kind, at.0, at.1),
            "limit {limit}"
        );
    }
}

#[test]
fn modular_wraps_in_the_fast_forms() {
    // Under the modular profile the increment wraps and the loop never
    // ends: the step limit stops it, at a loop operation.
    let checked = overflowing("profile modular");
    let it = Interp::new(&checked).unwrap().with_limits(limits(1000));
    let Err(RunError::Fault { fault, .. }) = it.run("Main.sum", &[Value::Scalar(i64::MAX as u64)])
    else {
        panic!("the run must fault");
    };
    assert_eq!(fault.kind, FaultKind::StepLimit);
    assert!(matches!(fault.block, Some(1 | 2)), "{fault:?}");
}

#[test]
fn a_limit_of_exactly_the_steps_completes_and_one_less_faults() {
    let m = zlm::text::parse(&loop_src()).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    for n in [0u64, 1, 2, 7, 100] {
        let it = Interp::new(&checked).unwrap();
        let out = it.run("Main.sum", &[Value::Scalar(n)]).unwrap();
        assert_eq!(out.value, Value::Scalar(n * n.saturating_sub(1) / 2));
        // requires, block 0, 12 per iteration, the last test, block 3, ensures.
        assert_eq!(out.steps, 1 + 4 + 12 * n + 4 + 2 + 1);
        let it = Interp::new(&checked)
            .unwrap()
            .with_limits(limits(out.steps));
        assert_eq!(
            it.run("Main.sum", &[Value::Scalar(n)]).unwrap().value,
            out.value
        );
        let it = Interp::new(&checked)
            .unwrap()
            .with_limits(limits(out.steps - 1));
        let Err(RunError::Fault { fault, .. }) = it.run("Main.sum", &[Value::Scalar(n)]) else {
            panic!("n {n}: one step short must fault");
        };
        // The last step is the ensures clause.
        assert_eq!(
            (fault.kind, fault.block, fault.op),
            (FaultKind::StepLimit, None, Some(0))
        );
    }
}

/// The counting loop with `acc + i` computed by a call (a general-path
/// operation between fused runs): the locals the fused code keeps in
/// registers must reach their slots before the call and be read back after
/// it, in every iteration.
fn with_call() -> zlm::decode::Checked {
    let add = "  func message type add public -> Int64 effects []
    param 0 a Int64
    param 1 b Int64
    path p0 Int64
    path p1 Int64
    block 0
      load_local Int64 $p0 | path:p0 -
      load_local Int64 $p1 | path:p1 -
      add Int64 %0.0 %0.1 | - -
      return - %0.2 | - -
    edge 0 return 0 exit
";
    let src = loop_src()
        .replace(
            "      add Int64 %2.0 %2.1 | - -\n",
            "      call Int64 %2.0 %2.1 | func:Main.add effects:[]\n",
        )
        .replace(
            "  func message type sum",
            &format!("{add}  func message type sum"),
        );
    let m = zlm::text::parse(&src).unwrap();
    zlm::decode::from_model(&m, &[]).unwrap()
}

#[test]
fn locals_in_registers_survive_general_operations_between_runs() {
    let checked = with_call();
    for n in [0u64, 1, 5, 300] {
        let it = Interp::new(&checked).unwrap();
        let out = it.run("Main.sum", &[Value::Scalar(n)]).unwrap();
        assert_eq!(out.value, Value::Scalar(n * n.saturating_sub(1) / 2));
        // As the loop, plus the callee's four operations per iteration.
        assert_eq!(out.steps, 12 + 16 * n);
    }
    // Every limit of a three-iteration run faults on the exact operation,
    // in the caller or the callee.
    let n = 3u64;
    let mut trace: Vec<(&str, Option<u32>, Option<u32>)> = vec![("Main.sum", None, Some(0))];
    trace.extend((0..4).map(|j| ("Main.sum", Some(0), Some(j))));
    for _ in 0..n {
        trace.extend((0..4).map(|j| ("Main.sum", Some(1), Some(j))));
        trace.extend((0..3).map(|j| ("Main.sum", Some(2), Some(j))));
        trace.extend((0..4).map(|j| ("Main.add", Some(0), Some(j))));
        trace.extend((3..8).map(|j| ("Main.sum", Some(2), Some(j))));
    }
    trace.extend((0..4).map(|j| ("Main.sum", Some(1), Some(j))));
    trace.extend((0..2).map(|j| ("Main.sum", Some(3), Some(j))));
    trace.push(("Main.sum", None, Some(0)));
    assert_eq!(trace.len() as u64, 12 + 16 * n);
    for (limit, &(function, block, op)) in trace.iter().enumerate() {
        let it = Interp::new(&checked)
            .unwrap()
            .with_limits(limits(limit as u64));
        let Err(RunError::Fault { fault, .. }) = it.run("Main.sum", &[Value::Scalar(n)]) else {
            panic!("limit {limit}: the run must fault");
        };
        assert_eq!(
            (fault.kind, fault.function.as_str(), fault.block, fault.op),
            (FaultKind::StepLimit, function, block, op),
            "limit {limit}"
        );
    }
}
