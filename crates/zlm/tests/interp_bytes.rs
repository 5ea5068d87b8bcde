//! The sdk.bytes facade executed by the reference interpreter: finish
//! relabels the builder's token (no copy, no drop), the caller-side tag-43
//! facade form slices the private storage, the transient Slice local feeds
//! the catalog Slice selectors, and bounds faults unwind exactly.

use zlm::interp::{FaultKind, Interp, RunError, Value};

fn load() -> zlm::Module {
    let p = format!(
        "{}/../../examples/zlm/run/bytes.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    zlm::text::parse(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn log(drops: &[zlm::interp::DropEvent]) -> Vec<String> {
    drops.iter().map(|d| d.to_string()).collect()
}

fn u(v: u64) -> Value {
    Value::Scalar(v)
}

#[test]
fn finish_then_facade_slice_reads_through_the_slice_local() {
    let m = load();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    for (start, end, first) in [(0, 3, 10), (1, 3, 20), (2, 3, 30)] {
        let out = it
            .run("Main.demo", &[Value::Allocator, u(start), u(end)])
            .unwrap();
        assert_eq!(it.render(&out.value, &out.ty), format!("Ok({first})"));
        // The builder is never dropped: finish retagged its token, so the
        // only destruction is the Bytes owner (and its storage) at return.
        assert_eq!(
            log(&out.drops),
            [
                "Main.demo: drop l0 : Bytes",
                "Main.demo: drop l0.storage : Array<Byte>",
            ]
        );
    }
}

#[test]
fn empty_window_faults_on_get_and_unwinds_the_bytes_owner() {
    let m = load();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let Err(RunError::Fault { fault, drops }) =
        it.run("Main.demo", &[Value::Allocator, u(3), u(3)])
    else {
        panic!("an empty slice has no byte 0");
    };
    assert_eq!(fault.kind, FaultKind::Bounds);
    assert_eq!((fault.block, fault.op), (Some(0), Some(33)));
    assert_eq!(
        log(&drops),
        [
            "Main.demo: drop l0 : Bytes",
            "Main.demo: drop l0.storage : Array<Byte>",
        ]
    );
}

#[test]
fn facade_precondition_false_faults_at_tag_43_before_any_loan() {
    let m = load();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    for (start, end) in [(2, 1), (0, 4)] {
        let Err(RunError::Fault { fault, drops }) =
            it.run("Main.demo", &[Value::Allocator, u(start), u(end)])
        else {
            panic!("start <= end <= length is the facade precondition");
        };
        assert_eq!(fault.kind, FaultKind::Bounds);
        assert_eq!((fault.block, fault.op), (Some(0), Some(23)));
        assert_eq!(
            log(&drops),
            [
                "Main.demo: drop l0 : Bytes",
                "Main.demo: drop l0.storage : Array<Byte>",
            ]
        );
    }
}

#[test]
fn byte_budget_exhaustion_takes_the_try_error_edge() {
    let m = load();
    // Three bytes of budget: with_capacity(4) fails, Err(4) is returned
    // through try-error edge 0 with nothing to drop.
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked)
        .unwrap()
        .with_limits(zlm::interp::Limits {
            bytes: 3,
            ..Default::default()
        });
    let out = it
        .run("Main.demo", &[Value::Allocator, u(0), u(1)])
        .unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "Err(4)");
    assert!(out.drops.is_empty());
}
