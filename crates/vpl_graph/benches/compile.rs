//! A 500-node material graph compiled to verified VPL, against `vpl check`
//! (read + verify) of the generated text, in the same run: the issue's
//! bound is graph compile < 2x check.
//!
//! `cargo bench -p vpl_graph --bench compile -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "../tests/common/mod.rs"]
mod common;

fn bench(c: &mut Criterion) {
    let doc = common::sized(0x5eed, 500);
    let json = doc.to_string();
    let nodes = doc["nodes"].as_array().map(Vec::len).unwrap_or(0);
    let text = vpl_graph::compile(&json, "bench", vpl_graph::Options::default())
        .expect("the benchmark graph compiles")
        .text;
    eprintln!(
        "graph: {nodes} nodes, {} bytes of JSON; VPL: {} bytes",
        json.len(),
        text.len()
    );
    let mut group = c.benchmark_group("graph500");
    group.bench_function("graph_compile_to_verified_vpl", |b| {
        b.iter(|| {
            vpl_graph::compile(black_box(&json), "bench", vpl_graph::Options::default())
                .map(|c| c.text.len())
        })
    });
    group.bench_function("vpl_check_generated_text", |b| {
        b.iter(|| vpl::text::read(black_box(text.as_bytes()), "bench").is_ok())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
