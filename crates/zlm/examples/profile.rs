//! Decodes a generated module once and reports each decoding phase and the
//! size of every distinct hashed identity preimage relative to the artifact
//! (the floor any conforming validator must hash). Usage: `profile [WIDTH]`.
fn main() {
    let width: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(80_000);
    let module = zlm::sample::module("bench.big", width);
    let bytes = zlm::write::write(&module).unwrap();
    // `profile WIDTH N`: decode N more times first (for `perf record`).
    let repeat: u32 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    for _ in 0..repeat {
        zlm::decode::decode(&bytes).unwrap();
    }
    let t = std::time::Instant::now();
    let (_, phases) = zlm::decode::decode_profiled(&bytes).unwrap();
    let decode = t.elapsed();
    let t = std::time::Instant::now();
    let _ = zlm::hash::sha256(&bytes);
    let sha = t.elapsed();
    let (_, facts) = zlm::ids::compute(&module, true).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let preimage: usize = facts
        .iter()
        .filter(|f| seen.insert(f.digest))
        .map(|f| f.preimage().len())
        .sum();
    eprintln!(
        "{} bytes: decode+validate {:?}, sha256 {:?} (ratio {:.1}); distinct identity preimages {} bytes ({:.1}x the artifact)",
        bytes.len(),
        decode,
        sha,
        decode.as_secs_f64() / sha.as_secs_f64(),
        preimage,
        preimage as f64 / bytes.len() as f64
    );
    eprintln!("{phases:?}");
}
