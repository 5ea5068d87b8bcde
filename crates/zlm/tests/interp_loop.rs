use zlm::interp::{Interp, Value};

#[test]
fn loop_sums() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .unwrap();
    let m = zlm::text::parse(&src).unwrap();
    let it = Interp::new(&m).unwrap();
    let out = it.run("Main.sum", &[Value::Scalar(10)]).unwrap();
    assert_eq!(out.value, Value::Scalar(45));
}
