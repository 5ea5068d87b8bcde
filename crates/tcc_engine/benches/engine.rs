//! Engine benchmarks: instructions/s on a `lang.compute` loop (compare with
//! `python3 crates/tcc_engine/benches/compute_loop.py`, the same loop in
//! CPython), and snapshot/delta checkpoint encoding for a 1 MB heap.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::Arc;
use tcc_engine::json::to_canonical;
use tcc_engine::{Execution, Limits, Outcome, Program, compute_delta};
use tcc_ir::FeatureSet;

fn load(path: &str) -> Arc<Program> {
    let bytes = std::fs::read(path).expect("example artifact");
    let a = tcc_ir::decode_artifact(&bytes).expect("decodes");
    Arc::new(Program::new(a, &FeatureSet::all_host_capabilities()).expect("valid"))
}

const N: f64 = 1_000_000.0;

fn compute_loop(c: &mut Criterion) {
    let p = load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tcc/run/compute-loop.json"
    ));
    let mut g = c.benchmark_group("compute_loop");
    g.sample_size(10);
    g.bench_function("tcc_engine 1e6 iterations", |b| {
        b.iter(|| {
            let mut e = Execution::start(
                p.clone(),
                "bench",
                &[json!({"t":"number","v":N})],
                Limits::default(),
            )
            .unwrap();
            let o = e.run_until_host(u64::MAX).unwrap();
            assert!(matches!(o, Outcome::Host(_)));
            e.steps()
        })
    });
    g.finish();
}

fn checkpoint_encode(c: &mut Criterion) {
    // A 1 MB heap: 8000 objects of ~128 bytes each, reachable from local 0.
    let mut e = Execution::start(
        load(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/tcc/run/compute-loop.json"
        )),
        "b",
        &[json!({"t":"number","v":0})],
        Limits::default(),
    )
    .unwrap();
    let mut state = e.state().clone();
    let mut items = Vec::new();
    for i in 0..8000u32 {
        let mut m = tcc_engine::ObjectMap::new();
        m.insert(
            "name".to_string(),
            tcc_engine::Value::string(&format!("item-{i:06}-{}", "x".repeat(60))),
        );
        m.insert(
            "n".to_string(),
            tcc_engine::Value::Number(f64::from(i) * 1.5),
        );
        state.heap.push(tcc_engine::Cell::Object(m));
        items.push(tcc_engine::Value::Ref(i));
    }
    state.heap.push(tcc_engine::Cell::Array(items));
    state.frames[0].locals[1] = tcc_engine::Value::Ref(8000);
    let bytes = state.encode().len();
    eprintln!("snapshot size: {bytes} bytes");
    let mut next = state.clone();
    next.frames[0].locals[2] = tcc_engine::Value::Number(7.0);
    next.frames[0].pc = 5;
    let mut g = c.benchmark_group("checkpoint_1mb_heap");
    g.sample_size(10);
    g.bench_function("snapshot encode", |b| b.iter(|| state.encode().len()));
    g.bench_function("delta encode (heap unchanged)", |b| {
        b.iter(|| to_canonical(&compute_delta(&state, &next).unwrap()).len())
    });
    g.finish();
    let _ = &mut e;
}

criterion_group!(benches, compute_loop, checkpoint_encode);
criterion_main!(benches);
