use zlm::interp::{Interp, Value};

#[test]
fn loop_sums() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .unwrap();
    let m = zlm::text::parse(&src).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.sum", &[Value::Scalar(10)]).unwrap();
    assert_eq!(out.value, Value::Scalar(45));
}
