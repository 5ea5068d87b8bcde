//! Read/write throughput of the canonical text on a generated module of
//! about 12 MB, with two baselines measured in the same run: UTF-8
//! validation plus a byte scan, and a plain copy of the text.
//!
//! `write` is the whole of `vpl::text::write`: verification of the module
//! (on a second thread for a module this large), printing, and the full
//! read back (lex, parse, bind, verify) of the printed text. On a machine
//! with two cores, `read`, `verify` and `write` all use two threads for a
//! module this large, so their wall times depend on a second core being
//! free; `text_cpu rounds` also reports them, and `perf stat -e task-clock`
//! their CPU time over both threads.
//!
//! `cargo bench -p vpl --bench text -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

#[path = "generate.rs"]
mod generate;

fn text(c: &mut Criterion) {
    let source = generate::module_text(12 << 20);
    let module = vpl::text::read(source.as_bytes(), "bench").expect("generated module is valid");
    let canonical = vpl::text::write(&module).expect("writes");
    let bytes = canonical.as_bytes();

    let mut group = c.benchmark_group("text");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("baseline_utf8_scan", |b| {
        b.iter(|| {
            let s = std::str::from_utf8(black_box(bytes)).unwrap();
            black_box(s.bytes().filter(|&c| c == b'(').count())
        })
    });
    group.bench_function("baseline_copy", |b| {
        b.iter(|| black_box(black_box(&canonical).clone()))
    });
    group.bench_function("read", |b| {
        b.iter(|| black_box(vpl::text::read(black_box(bytes), "bench").unwrap()))
    });
    group.bench_function("write", |b| {
        b.iter(|| black_box(vpl::text::write(black_box(&module)).unwrap()))
    });
    group.bench_function("verify", |b| {
        b.iter(|| vpl::verify::verify(black_box(&module)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, text);
criterion_main!(benches);
