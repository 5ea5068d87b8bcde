//! Linking 200 libraries of 100 functions each, against only reading the same
//! files. Every function calls into its own library and into the previous
//! library (the worst case: every function is re-verified at link time).
//!
//! `cargo bench -p rvnlib --bench link -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use rvnlib::builder::{FunctionBuilder, types::*};
use rvnlib::link::{LinkInput, LinkOptions};
use rvnlib::*;
use std::hint::black_box;

const LIBRARIES: usize = 200;
const FUNCTIONS: usize = 100;

fn key(library: usize, function: usize) -> String {
    format!("Pkg{library}.Math.F{function}(x: float, v: float3): float")
}

fn library(index: usize) -> CompiledLibrary {
    let mut lib = CompiledLibrary::new(format!("Pkg{index}"));
    let shape = format!("Pkg{index}::Shape");
    lib.ir.structs.push(LibraryIrStruct {
        key: shape.clone(),
        name: "Shape".into(),
        fields: vec![
            LibraryIrField {
                name: "Center".into(),
                ty: vec(3),
            },
            LibraryIrField {
                name: "Radius".into(),
                ty: f32(),
            },
        ],
    });
    for i in 0..FUNCTIONS {
        let mut f = FunctionBuilder::new(key(index, i), format!("F{i}"), f32());
        let x = f.param("x", f32());
        let v = f.param("v", vec(3));
        let s = f.local("s", LibraryIrTypeReference::structure(&shape));
        let acc = f.local("acc", f32());
        let xv = f.load(f32(), x, vec![]);
        let vv = f.load(vec(3), v, vec![]);
        f.store(s, vec![LibraryIrAccess::Field { index: 0 }], vv);
        f.store(s, vec![LibraryIrAccess::Field { index: 1 }], xv);
        f.store(acc, vec![], xv);
        let zero = f.constant(f32(), Some(LibraryValue::float(0.0)));
        let cond = f.binary(IrBinaryOp::GreaterThan, bool(), xv, zero);
        f.if_else(
            cond,
            |b| {
                if i > 0 {
                    let r = b.call(
                        &key(index, i - 1),
                        Some(f32()),
                        vec![
                            LibraryIrArgument::by_value(xv),
                            LibraryIrArgument::by_value(vv),
                        ],
                    );
                    b.store(acc, vec![], r.unwrap_or(0));
                }
            },
            |b| {
                if index > 0 {
                    let r = b.call(
                        &key(index - 1, i),
                        Some(f32()),
                        vec![
                            LibraryIrArgument::by_value(xv),
                            LibraryIrArgument::by_value(vv),
                        ],
                    );
                    b.store(acc, vec![], r.unwrap_or(0));
                }
            },
        );
        let y = f.load(
            f32(),
            s,
            vec![
                LibraryIrAccess::Field { index: 0 },
                LibraryIrAccess::Swizzle {
                    components: vec![1],
                },
            ],
        );
        let len = f
            .intrinsic(IrIntrinsic::Length, Some(f32()), vec![vv])
            .unwrap_or(0);
        let a = f.load(f32(), acc, vec![]);
        let sum = f.binary(IrBinaryOp::Add, f32(), a, y);
        let out = f.binary(IrBinaryOp::Multiply, f32(), sum, len);
        f.ret(Some(out));
        lib.ir.functions.push(f.finish());
    }
    lib
}

fn files() -> Vec<Vec<u8>> {
    (0..LIBRARIES)
        .map(|i| rvnlib::write(&library(i)).expect("writes"))
        .collect()
}

fn read_all(files: &[Vec<u8>]) -> Vec<CompiledLibrary> {
    files
        .iter()
        .map(|bytes| rvnlib::read(bytes).expect("reads"))
        .collect()
}

fn bench(c: &mut Criterion) {
    let files = files();
    let total: usize = files.iter().map(Vec::len).sum();
    eprintln!("{LIBRARIES} libraries x {FUNCTIONS} functions, {total} bytes");
    interleaved_ratio(&files);
    let mut group = c.benchmark_group("link_200x100");
    group.sample_size(10);
    group.bench_function("read_only", |b| {
        b.iter(|| black_box(read_all(black_box(&files))))
    });
    let libraries = read_all(&files);
    group.bench_function("link_only", |b| {
        b.iter(|| black_box(link_all(black_box(&libraries))))
    });
    group.bench_function("read_and_link", |b| {
        b.iter(|| {
            let libraries = read_all(black_box(&files));
            black_box(link_all(&libraries))
        })
    });
    group.finish();
}

/// The shared machines are noisy over minutes, so besides criterion's groups
/// (measured one after the other) this times reading and linking back to back
/// in alternating rounds and reports the ratio of the sums.
fn interleaved_ratio(files: &[Vec<u8>]) {
    use std::time::{Duration, Instant};
    let rounds = 5;
    let (mut read, mut link) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        let start = Instant::now();
        let libraries = black_box(read_all(files));
        let middle = Instant::now();
        black_box(link_all(&libraries));
        let end = Instant::now();
        read += middle - start;
        link += end - middle;
    }
    eprintln!(
        "interleaved over {rounds} rounds: read {:.3} s, link {:.3} s per round; (read + link) / read = {:.3}",
        read.as_secs_f64() / rounds as f64,
        link.as_secs_f64() / rounds as f64,
        (read + link).as_secs_f64() / read.as_secs_f64()
    );
}

fn link_all(libraries: &[CompiledLibrary]) -> rvnlib::link::Linked {
    let origins: Vec<String> = (0..LIBRARIES).map(|i| format!("pkg{i}.rvnlib")).collect();
    let inputs: Vec<LinkInput<'_>> = libraries
        .iter()
        .zip(&origins)
        .map(|(library, origin)| LinkInput { origin, library })
        .collect();
    let options = LinkOptions {
        name: "linked".into(),
        consumer: None,
        entries: vec![key(LIBRARIES - 1, FUNCTIONS - 1)],
    };
    rvnlib::link::link(&inputs, &options).expect("links")
}

criterion_group!(benches, bench);
criterion_main!(benches);
