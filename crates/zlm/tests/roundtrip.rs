use zlm::{decode::decode, sample, write::write};

#[test]
fn sample_round_trips() {
    let m = sample::module("geo.shapes", 3);
    let bytes = write(&m).expect("write");
    let d = decode(&bytes).expect("decode");
    assert_eq!(write(&d.module).unwrap(), bytes);
}
