//! Decodes the decode benchmark's module (the first `sample::module` width
//! whose artifact is at least 10 MB) `N` times on one thread, for an
//! instruction-count profiler: `decode_loop [N] [map]` (`map`: the artifact
//! with its source map and provenance, the map verified and decoded too).
//! Under `valgrind --tool=callgrind --toggle-collect='zlm::decode::*'` only
//! the decodes are counted, not the module generation.
use zlm::decode::{Threads, decode_with};

#[path = "../benches/common/bench_module.rs"]
mod bench_module;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let with_map = args.next().is_some_and(|s| s == "map");
    let bytes = bench_module::artifact();
    let file = if with_map {
        bench_module::annotated(&bytes)
    } else {
        bytes
    };
    for _ in 0..n {
        let (checked, _) = decode_with(std::hint::black_box(&file), Threads::One).expect("valid");
        if with_map {
            let records = zlm::ancillary::Records::of_file(&file)
                .expect("container")
                .expect("present");
            let map = records.source_map.expect("map").expect("verified");
            std::hint::black_box(map.functions.len());
        }
        std::hint::black_box(checked);
    }
}
