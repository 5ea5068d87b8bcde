//! The interpreter's loop benchmark (`examples/zlm/run/loop.zlt`,
//! `Main.sum(10000)`) under the C engine, excluding the C compile, against
//! the same computation written by hand in C with the same checks
//! (`benches/c_loop_hand.c`: requires/ensures and checked 64-bit adds),
//! both compiled `cc -O2`, and against the reference interpreter, in one
//! run. Both executables time `ZLM_REPEAT`/`reps` runs internally, so
//! process start-up is excluded too.

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use zlm::interp::{Interp, Value};
use zlm::materialize::c::engine::{Compiler, write_files};
use zlm::materialize::c::{Scope, TargetConfig, emit};

fn reported(out: &[u8]) -> Duration {
    let text = String::from_utf8_lossy(out);
    let ns: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("TIME\t"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no TIME line in {text}"));
    Duration::from_nanos(ns as u64)
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("../../examples/zlm/run/loop.zlt")).unwrap();
    let m = zlm::text::parse(&text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let unit = emit(
        &checked,
        &TargetConfig::default(),
        &Scope::Entry("Main.sum".into()),
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("zlm-c-bench-{}", std::process::id()));
    write_files(&unit, &dir).unwrap();
    let cc = Compiler::strict("cc");
    let zexe = dir.join("zlm-loop");
    let hexe = dir.join("hand-loop");
    assert!(
        Command::new(&cc.program)
            .args(&cc.flags)
            .arg("-o")
            .arg(&zexe)
            .arg(dir.join("module.c"))
            .status()
            .unwrap()
            .success()
    );
    assert!(
        Command::new("cc")
            .args(["-std=c11", "-O2", "-o"])
            .arg(&hexe)
            .arg(root.join("benches/c_loop_hand.c"))
            .status()
            .unwrap()
            .success()
    );
    let entry = unit.entries.iter().position(|e| e == "Main.sum").unwrap();
    let mut g = c.benchmark_group("loop_sum_10000");
    g.bench_function("c_engine", |b| {
        b.iter_custom(|iters| {
            let out = Command::new(&zexe)
                .env("ZLM_REPEAT", format!("{iters:x}"))
                .args([
                    format!("{entry:x}"),
                    format!("{:x}", 100_000_000u64),
                    "100".into(),
                    "100".into(),
                    format!("{:x}", 10_000u64),
                ])
                .output()
                .unwrap();
            assert!(String::from_utf8_lossy(&out.stdout).contains("OK\t120012\t49995000"));
            reported(&out.stdout)
        })
    });
    g.bench_function("hand_written_c", |b| {
        b.iter_custom(|iters| {
            let out = Command::new(&hexe)
                .args(["10000".to_string(), iters.to_string()])
                .output()
                .unwrap();
            assert!(String::from_utf8_lossy(&out.stdout).contains("49995000"));
            reported(&out.stdout)
        })
    });
    let it = Interp::new(&checked).unwrap();
    g.bench_function("interpreter", |b| {
        b.iter(|| it.run("Main.sum", &[Value::Scalar(10_000)]).unwrap())
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
