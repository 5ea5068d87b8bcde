//! Compile time per target, as ratios measured in the same run.
//!
//! * `targets_corpus`: every module of the example, built-in and GLSL
//!   fixture corpora compiled for each target; the baseline is the GLSL
//!   4.20 backend (`glsl-420`).
//! * `targets_large`: the generated module (12 MB of VPL text by default;
//!   `VPL_TARGETS_BENCH_BYTES` sets another size) lowered and emitted for
//!   each target; the baseline is `vpl check` of the same text (read +
//!   verify). The goal is at most 3× the baseline per target.
//!
//! `cargo bench -p vpl --bench targets -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};
use vpl::VerifiedModule;
use vpl::backends::glsl;
use vpl::backends::naga_targets::{self, Target};

#[path = "generate.rs"]
mod generate;

fn corpus() -> Vec<VerifiedModule> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("../../examples/vpl"),
        root.join("programs"),
        root.join("tests/glsl"),
        root.join("../vpl_gl/tests/fixtures"),
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "vpl") {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
        .iter()
        .filter_map(|p| {
            let bytes = std::fs::read(p).ok()?;
            let read = vpl::text::read_verified(&bytes, "bench").ok()?;
            let published = VerifiedModule::publish(&read).ok()?;
            // Only what every target accepts, so the sets are equal.
            glsl::compile(&published, glsl::VERSION_420).ok()?;
            Some(published)
        })
        .collect()
}

fn per_target(c: &mut Criterion) {
    let modules = corpus();
    eprintln!("corpus: {} modules", modules.len());
    let mut group = c.benchmark_group("targets_corpus");
    group.bench_function("glsl-420", |b| {
        b.iter(|| {
            for m in &modules {
                black_box(glsl::compile(black_box(m), glsl::VERSION_420).unwrap());
            }
        })
    });
    for target in Target::ALL {
        group.bench_function(target.name(), |b| {
            b.iter(|| {
                for m in &modules {
                    black_box(naga_targets::compile(black_box(m), target).unwrap());
                }
            })
        });
    }
    group.finish();

    let bytes = std::env::var("VPL_TARGETS_BENCH_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12usize << 20);
    let source = generate::module_text(bytes);
    let read =
        vpl::text::read_verified(source.as_bytes(), "bench").expect("generated module is valid");
    let published = VerifiedModule::publish(&read).expect("publishes");
    eprintln!("large: {} bytes of VPL", source.len());
    alternating(&source, &published);
    let mut group = c.benchmark_group("targets_large");
    group.sample_size(10);
    group.bench_function("baseline_check", |b| {
        b.iter(|| black_box(vpl::text::read(black_box(source.as_bytes()), "bench").unwrap()))
    });
    group.bench_function("glsl-420", |b| {
        b.iter(|| black_box(glsl::compile(black_box(&published), glsl::VERSION_420).unwrap()))
    });
    // The shared part of every naga target: lowering + naga's validator.
    group.bench_function("naga_lower_and_validate", |b| {
        b.iter(|| black_box(naga_targets::lower(black_box(&published)).unwrap()))
    });
    // naga's validator alone, on the lowered module.
    let lowered = naga_targets::lower(&published).unwrap();
    group.bench_function("naga_validate_only", |b| {
        b.iter(|| {
            black_box(
                naga::valid::Validator::new(
                    naga::valid::ValidationFlags::all(),
                    naga::valid::Capabilities::empty(),
                )
                .validate(black_box(&lowered.module))
                .unwrap(),
            )
        })
    });
    for target in Target::ALL {
        group.bench_function(target.name(), |b| {
            b.iter(|| black_box(naga_targets::compile(black_box(&published), target).unwrap()))
        });
    }
    group.finish();
}

/// Rounds of the alternating measurement.
const ROUNDS: usize = 5;

/// Each round runs `vpl check` and every target once, in turn, so that
/// load from other processes falls on all of them alike; prints the
/// medians and their ratios to `check`.
fn alternating(source: &str, published: &VerifiedModule) {
    let mut names = vec!["check", "glsl-420", "naga_lower_and_validate"];
    names.extend(Target::ALL.iter().map(|t| t.name()));
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for _ in 0..ROUNDS {
        let t = Instant::now();
        black_box(vpl::text::read(source.as_bytes(), "bench").unwrap());
        times[0].push(t.elapsed());
        let t = Instant::now();
        black_box(glsl::compile(published, glsl::VERSION_420).unwrap());
        times[1].push(t.elapsed());
        let t = Instant::now();
        black_box(naga_targets::lower(published).unwrap());
        times[2].push(t.elapsed());
        for (i, target) in Target::ALL.into_iter().enumerate() {
            let t = Instant::now();
            black_box(naga_targets::compile(published, target).unwrap());
            times[3 + i].push(t.elapsed());
        }
    }
    let medians: Vec<f64> = times
        .into_iter()
        .map(|mut v| {
            v.sort();
            v[v.len() / 2].as_secs_f64()
        })
        .collect();
    eprintln!("medians of {ROUNDS} alternating rounds (ratio to check):");
    for (name, m) in names.iter().zip(&medians) {
        eprintln!("  {name:<24} {m:8.3} s  {:6.2}x", m / medians[0]);
    }
}

criterion_group!(benches, per_target);
criterion_main!(benches);
