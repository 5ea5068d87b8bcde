//! Decodes a generated module repeatedly (for profiling).
fn main() {
    let width: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(80_000);
    let bytes = zlm::write::write(&zlm::sample::module("bench.big", width)).unwrap();
    let t = std::time::Instant::now();
    zlm::decode::decode(&bytes).unwrap();
    eprintln!("{} bytes decoded in {:?}", bytes.len(), t.elapsed());
}
