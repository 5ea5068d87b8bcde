//! A 500-node material graph compiled to verified VPL, against `vpl check`
//! (read + verify) of the generated text, in the same run: the issue's
//! bound is graph compile < 2x check. Besides criterion's two groups (one
//! after the other), an alternated run times one compile, then one check,
//! `ROUNDS` times, and prints both medians and their ratio, so that a
//! change in the machine's load hits both alike.
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
    alternated(&json, &text);
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

const ROUNDS: usize = 400;

fn alternated(json: &str, text: &str) {
    use std::time::Instant;
    let (mut compile, mut check, mut reread) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        // The pipeline before the module was built directly: print the
        // text, then read and verify it (kept as the "before" figure).
        let t = Instant::now();
        let old = vpl_graph::parse(black_box(json)).ok().and_then(|doc| {
            let (text, _) = vpl_graph::generate(&doc, vpl_graph::Options::default()).ok()?;
            vpl::text::read_verified(text.as_bytes(), "bench").ok()
        });
        drop(black_box(old));
        reread.push(t.elapsed().as_secs_f64() * 1e3);
        let t0 = Instant::now();
        let compiled = vpl_graph::compile(black_box(json), "bench", vpl_graph::Options::default());
        drop(black_box(compiled));
        let t1 = Instant::now();
        let checked = vpl::text::read(black_box(text.as_bytes()), "bench");
        drop(black_box(checked));
        let t2 = Instant::now();
        compile.push((t1 - t0).as_secs_f64() * 1e3);
        check.push((t2 - t1).as_secs_f64() * 1e3);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b, r) = (
        median(&mut compile),
        median(&mut check),
        median(&mut reread),
    );
    eprintln!(
        "alternated, {ROUNDS} rounds: graph compile median {a:.3} ms, vpl check median {b:.3} ms: {:.2}x \
         (printing and re-reading the text instead: {r:.3} ms, {:.2}x)",
        a / b,
        r / b
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
