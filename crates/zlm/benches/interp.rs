//! Interpreter throughput on a loop-heavy module (`examples/zlm/run/loop.zlt`:
//! sum of 0..n, 12 typed operations per iteration, exact profile with
//! overflow checks) against the same loop hand-written in WebAssembly and run
//! by `wasmi` in the same benchmark run. Throughput is reported in ZLM
//! operations (the interpreter's executed-step count), so criterion prints
//! operations per second for both; the ratio of the two times is the figure.
//!
//! `ZLM_INTERP_RUNS=N` skips criterion and runs the interpreter `N` times on
//! the same input, for instruction counts that do not depend on timing:
//! `valgrind --tool=callgrind target/release/deps/interp-* ` with `N` and with
//! zero; the difference divided by `N` is the cost of one run.
//! `ZLM_WASMI_RUNS=N` does the same for the wasmi baseline.

use criterion::{Criterion, Throughput, criterion_group};
use zlm::interp::{Interp, Value};

const N: i64 = 10_000;

/// `(func (export "sum") (param i64) (result i64) (local i64 i64) …)`: the
/// same counting loop, hand-assembled.
const SUM_WASM: &[u8] = &[
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x06, 0x01, 0x60, 0x01, 0x7e, 0x01, 0x7e, // type: (i64) -> i64
    0x03, 0x02, 0x01, 0x00, // function 0 has type 0
    0x07, 0x07, 0x01, 0x03, b's', b'u', b'm', 0x00, 0x00, // export "sum"
    0x0a, 0x25, 0x01, 0x23, // code section, one body of 35 bytes
    0x01, 0x02, 0x7e, // locals: i, acc: i64
    0x02, 0x40, // block
    0x03, 0x40, // loop
    0x20, 0x01, 0x20, 0x00, 0x59, // i >= n (signed)
    0x0d, 0x01, // br_if 1 (exit)
    0x20, 0x02, 0x20, 0x01, 0x7c, 0x21, 0x02, // acc = acc + i
    0x20, 0x01, 0x42, 0x01, 0x7c, 0x21, 0x01, // i = i + 1
    0x0c, 0x00, // br 0 (continue)
    0x0b, 0x0b, // end loop, end block
    0x20, 0x02, // acc
    0x0b, // end
];

fn checked_loop() -> zlm::decode::Checked {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .expect("example");
    let m = zlm::text::parse(&src).expect("parse");
    zlm::decode::from_model(&m, &[]).expect("checked")
}

fn wasmi_sum() -> (wasmi::Store<()>, wasmi::TypedFunc<i64, i64>) {
    let engine = wasmi::Engine::default();
    let module = wasmi::Module::new(&engine, SUM_WASM).expect("wasm");
    let mut store = wasmi::Store::new(&engine, ());
    let linker = wasmi::Linker::<()>::new(&engine);
    let instance = linker
        .instantiate(&mut store, &module)
        .and_then(|pre| pre.start(&mut store))
        .expect("instantiate");
    let sum = instance
        .get_typed_func::<i64, i64>(&store, "sum")
        .expect("export");
    (store, sum)
}

fn bench(c: &mut Criterion) {
    let checked = checked_loop();
    let it = Interp::new(&checked).expect("runnable");
    let probe = it.run("Main.sum", &[Value::Scalar(N as u64)]).expect("run");
    assert_eq!(probe.value, Value::Scalar((N * (N - 1) / 2) as u64));
    let steps = probe.steps;

    let (mut store, sum) = wasmi_sum();
    assert_eq!(sum.call(&mut store, N).expect("call"), N * (N - 1) / 2);

    let mut g = c.benchmark_group("interp_loop_sum");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("wasmi_baseline", |b| {
        b.iter(|| sum.call(&mut store, std::hint::black_box(N)).expect("call"))
    });
    g.bench_function("zlm_interp", |b| {
        b.iter(|| {
            it.run("Main.sum", &[Value::Scalar(std::hint::black_box(N) as u64)])
                .expect("run")
        })
    });
    g.finish();
    // The fixed cost of one run (entry lookup, the sized interpreter thread,
    // contracts), without the loop.
    let mut g = c.benchmark_group("interp_run_fixed");
    g.bench_function("zlm_interp_n0", |b| {
        b.iter(|| {
            it.run("Main.sum", &[Value::Scalar(std::hint::black_box(0))])
                .expect("run")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(n) = std::env::var("ZLM_INTERP_RUNS") {
        let n: u64 = n.parse().expect("ZLM_INTERP_RUNS is a count");
        let checked = checked_loop();
        let it = Interp::new(&checked).expect("runnable");
        let mut steps = 0;
        for _ in 0..n {
            let out = it
                .run("Main.sum", &[Value::Scalar(std::hint::black_box(N) as u64)])
                .expect("run");
            steps += out.steps;
        }
        println!("{n} runs, {steps} steps");
        return;
    }
    if let Ok(n) = std::env::var("ZLM_WASMI_RUNS") {
        let n: u64 = n.parse().expect("ZLM_WASMI_RUNS is a count");
        let (mut store, sum) = wasmi_sum();
        let mut total = 0i64;
        for _ in 0..n {
            total =
                total.wrapping_add(sum.call(&mut store, std::hint::black_box(N)).expect("call"));
        }
        println!("{n} wasmi runs, {total}");
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
