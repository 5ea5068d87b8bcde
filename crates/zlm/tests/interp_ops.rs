//! Scalar, bit, replacement and one-word try operations.

use zlm::interp::{FaultKind, Interp, RunError, Value};

fn module() -> zlm::Module {
    let p = format!(
        "{}/../../examples/zlm/run/ops.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    zlm::text::parse(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn i(x: i64) -> Value {
    Value::Scalar(x as u64)
}

#[test]
fn scalar_operations() {
    let m = module();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(it.run("Main.scalar", &[i(2), i(3)]).unwrap().value, i(-1));
    assert_eq!(it.run("Main.scalar", &[i(5), i(3)]).unwrap().value, i(-8));
    let Err(RunError::Fault { fault, .. }) = it.run("Main.scalar", &[i(4), i(4)]) else {
        panic!("a == b must fail the assertion")
    };
    assert_eq!((fault.kind, fault.op), (FaultKind::Assert, Some(9)));
}

#[test]
fn bit_operations_and_shift_faults() {
    let m = module();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(
        it.run("Main.bits", &[i(0x1234), i(4)]).unwrap().value,
        i(0x12cb)
    );
    let Err(RunError::Fault { fault, .. }) = it.run("Main.bits", &[i(0x8000_0000), i(1)]) else {
        panic!("exact shift overflow")
    };
    assert_eq!(fault.kind, FaultKind::Overflow);
    let Err(RunError::Fault { fault, .. }) = it.run("Main.bits", &[i(1), i(32)]) else {
        panic!("shift count out of range")
    };
    assert_eq!(fault.kind, FaultKind::ShiftRange);
}

#[test]
fn unit_value() {
    let m = module();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.unit", &[]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "()");
}

#[test]
fn replace_commit_drops_the_old_owner_once() {
    let m = module();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.swap", &[]).unwrap();
    assert_eq!(out.value, i(2));
    let log: Vec<String> = out.drops.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        log,
        [
            "Main.swap: drop l0 (replaced) : Box",
            "Main.swap: drop l1 : Box"
        ]
    );
}

#[test]
fn one_word_try() {
    let m = module();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let ok = it.run("Main.half", &[i(8)]).unwrap();
    assert_eq!(it.render(&ok.value, &ok.ty), "Ok(4)");
    let err = it.run("Main.half", &[i(7)]).unwrap();
    assert_eq!(it.render(&err.value, &err.ty), "Err(Oops.Odd)");
}

#[test]
fn rich_try_on_a_one_word_carrier_rejects() {
    let src = std::fs::read_to_string(format!(
        "{}/../../examples/zlm/run/ops.zlt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace("result_try Int32 %0.1", "result_try_rich Int32 %0.1");
    let m = zlm::text::parse(&src).unwrap();
    assert_eq!(zlm::check::check(&m).unwrap_err().code, "ZLM-C-TRY");
}
