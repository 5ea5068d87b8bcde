#[test]
fn sample_passes_semantic_check() {
    let m = zlm::sample::module("demo.sample", 3);
    zlm::check::check(&m).unwrap();
}
