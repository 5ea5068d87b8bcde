//! Decode+validate throughput on a generated module of at least 10 MB,
//! against plain SHA-256 over the same bytes.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use zlm::{decode::decode, hash::sha256, sample, write::write};

fn bench(c: &mut Criterion) {
    let mut width = 20_000;
    let bytes = loop {
        let b = write(&sample::module("bench.big", width)).expect("write");
        if b.len() >= 10_000_000 {
            break b;
        }
        width *= 2;
    };
    let mut g = c.benchmark_group("zlm");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("sha256_baseline", |b| {
        b.iter(|| sha256(std::hint::black_box(&bytes)))
    });
    g.bench_function("decode_validate", |b| {
        b.iter(|| decode(std::hint::black_box(&bytes)).expect("valid"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
