//! The loop benchmark (`examples/zlm/run/loop.zlt`, `Main.sum(10000)`)
//! under the LLVM JIT and the LLVM AOT executable against the same
//! computation written by hand in C with the same checks
//! (`crates/zlm/benches/c_loop_hand.c`, `cc -O2`), all in one run: each
//! program times its own repetitions (thread or process start excluded).
//! After the criterion groups, an alternated measurement (hand, JIT, AOT,
//! hand, …) prints the median ratios. `jit_compile_1000_ops` is lowering
//! plus JIT compilation of a function of 1 000 operations.

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use zlm::interp::Limits;
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::{JitProgram, with_jit};
use zlm_llvm::{Scope, TargetRecord, lower};

const N: u64 = 10_000;

fn reported(out: &[u8]) -> Duration {
    let text = String::from_utf8_lossy(out);
    let ns: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("TIME\t"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no TIME line in {text}"));
    Duration::from_nanos(ns as u64)
}

fn limits() -> Limits {
    Limits {
        steps: 100_000_000,
        depth: 100,
        bytes: 100,
    }
}

fn hand(exe: &PathBuf, iters: u64) -> Duration {
    let out = Command::new(exe)
        .args([N.to_string(), iters.to_string()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("49995000"));
    reported(&out.stdout)
}

fn aot(p: &AotProgram, iters: u64) -> Duration {
    let out = Command::new(p.path())
        .env("ZLM_REPEAT", format!("{iters:x}"))
        .args([
            format!("{:x}", p.index("Main.sum").unwrap()),
            format!("{:x}", limits().steps),
            "64".into(),
            "64".into(),
            format!("{N:x}"),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("OK\t120012\t49995000"));
    reported(&out.stdout)
}

fn jit(p: &JitProgram<'_>, iters: u64) -> Duration {
    let (r, t) = p.time("Main.sum", &[N], limits(), iters).unwrap();
    assert!(format!("{r:?}").contains("49995000"));
    t
}

/// A function of about 1 000 operations: a chain of mixed arithmetic.
fn thousand_ops() -> String {
    let mut s = String::from(
        "zlm 1.9 package bench module bench.ops profile modular mode checked\n\ndecl value Main public\n  func message type f public -> Int64 effects []\n    param 0 a Int64\n    param 1 b Int64\n    path p0 Int64\n    path p1 Int64\n    block 0\n      load_local Int64 $p0 | path:p0 -\n      load_local Int64 $p1 | path:p1 -\n",
    );
    let ops = ["add", "mul", "sub", "bit_xor", "add", "bit_and"];
    for j in 2..999 {
        let op = ops[j % ops.len()];
        s.push_str(&format!(
            "      {op} Int64 %0.{} %0.{} | - -\n",
            j - 1,
            j - 2
        ));
    }
    s.push_str("      return - %0.998 | - -\n    edge 0 return 0 exit\n");
    s
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("../../examples/zlm/run/loop.zlt")).unwrap();
    let m = zlm::text::parse(&text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let unit = lower(&checked, &Scope::Entry("Main.sum".into())).unwrap();
    let record = TargetRecord::convenience("cc").unwrap();
    let program = AotProgram::build(&unit, &record).unwrap();
    let dir = std::env::temp_dir().join(format!("zlm-llvm-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hexe = dir.join("hand-loop");
    assert!(
        Command::new("cc")
            .args(["-std=c11", "-O2", "-o"])
            .arg(&hexe)
            .arg(root.join("../zlm/benches/c_loop_hand.c"))
            .status()
            .unwrap()
            .success()
    );
    with_jit(&unit, |p| {
        let mut g = c.benchmark_group("loop_sum_10000");
        g.bench_function("llvm_jit", |b| b.iter_custom(|iters| jit(p, iters)));
        g.bench_function("llvm_aot", |b| b.iter_custom(|iters| aot(&program, iters)));
        g.bench_function("hand_written_c", |b| b.iter_custom(|iters| hand(&hexe, iters)));
        g.finish();
        // Alternated rounds: the three in turn, medians and ratios.
        let reps = 2_000;
        let (mut h, mut j, mut a) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..15 {
            h.push(hand(&hexe, reps).as_secs_f64());
            j.push(jit(p, reps).as_secs_f64());
            a.push(aot(&program, reps).as_secs_f64());
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2] / reps as f64 * 1e6
        };
        let (h, j, a) = (med(&mut h), med(&mut j), med(&mut a));
        println!(
            "alternated medians (µs per Main.sum(10000)): hand-written C {h:.2}, JIT {j:.2} ({:.2}× hand), AOT {a:.2} ({:.2}× hand)",
            j / h,
            a / h
        );
    })
    .unwrap();
    let ops = thousand_ops();
    let m = zlm::text::parse(&ops).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let mut g = c.benchmark_group("jit");
    g.sample_size(10);
    g.bench_function("jit_compile_1000_ops", |b| {
        b.iter(|| {
            let unit = lower(&checked, &Scope::Module).unwrap();
            with_jit(&unit, |p| p.run("Main.f", &[3, 5], limits()).is_ok()).unwrap()
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
