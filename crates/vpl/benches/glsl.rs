//! GLSL emission throughput on the large generated module (about 12 MB of
//! VPL text), reported in bytes of VPL input per second. Baselines in the
//! same run: a plain copy of the text, and `materialize` (reading and
//! verifying the published snapshot), which `compile` performs first.
//! `compile` = materialize + target checks + location resolution + code
//! emission + reflection; `compile_module` is the same without the
//! materialization (verification, checks, emission: the emission throughput).
//!
//! `cargo bench -p vpl --bench glsl -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use vpl::backends::glsl;

#[path = "generate.rs"]
mod generate;

fn emission(c: &mut Criterion) {
    let source = generate::module_text(12 << 20);
    let module = vpl::text::read(source.as_bytes(), "bench").expect("generated module is valid");
    let published = vpl::VerifiedModule::new(&module).expect("publishes");
    let bytes = published.text().len() as u64;
    let artifact = glsl::compile(&published, glsl::VERSION_420).expect("compiles");
    eprintln!(
        "input {bytes} bytes of VPL; output {} + {} bytes of GLSL",
        artifact.vertex_code().len(),
        artifact.fragment_code().len()
    );

    let mut group = c.benchmark_group("glsl");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("baseline_copy", |b| {
        b.iter(|| black_box(black_box(published.text()).to_string()))
    });
    group.bench_function("baseline_materialize", |b| {
        b.iter(|| black_box(published.materialize().unwrap()))
    });
    group.bench_function("compile_module", |b| {
        b.iter(|| black_box(glsl::compile_module(black_box(&module), glsl::VERSION_420).unwrap()))
    });
    group.bench_function("compile", |b| {
        b.iter(|| black_box(glsl::compile(black_box(&published), glsl::VERSION_420).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, emission);
criterion_main!(benches);
