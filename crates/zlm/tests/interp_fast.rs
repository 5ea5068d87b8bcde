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
