//! Runs the compute-loop example artifact for N iterations (default 1e6)
//! and prints the steps taken: a profiling harness for the stepper
//! (`valgrind --tool=callgrind target/release/examples/compute_loop 1000000`).

use serde_json::json;
use std::sync::Arc;
use tcc_engine::{Execution, Limits, Outcome, Program};
use tcc_ir::FeatureSet;

fn main() {
    let n: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000.0);
    let path = std::env::args().nth(2).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/tcc/run/compute-loop.json"
        )
        .into()
    });
    let bytes = std::fs::read(&path).expect("example artifact");
    let artifact = tcc_ir::decode_artifact(&bytes).expect("decodes");
    let program = Arc::new(
        Program::new(artifact, &FeatureSet::all_host_capabilities()).expect("valid artifact"),
    );
    let mut e = Execution::start(
        program,
        "loop",
        &[json!({"t":"number","v":n})],
        Limits::default(),
    )
    .expect("starts");
    let outcome = e.run_until_host(u64::MAX).expect("runs");
    assert!(matches!(outcome, Outcome::Host(_)));
    println!("steps: {}", e.steps());
}
