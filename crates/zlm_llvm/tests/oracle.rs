//! The four-engine differential oracle: seeded random valid modules
//! (`zlm::testgen`, the C oracle's generator; the checker must accept each
//! one) run on the
//! reference interpreter, the portable C engine, the LLVM JIT and the LLVM
//! AOT executable; results, step counts, faults and drop logs must be
//! identical. A mismatch prints the module in text form.
//! `ZLM_LLVM_ORACLE_COUNT=N` raises the module count for a long run
//! (`ZLM_LLVM_ORACLE_FROM=S` starts it at seed `S`).

mod support;

use support::*;
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::engine::{Compiler, Program};
use zlm::materialize::c::{TargetConfig, emit};
use zlm::testgen::module_text;
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;
use zlm_llvm::{Scope, lower};

use std::time::{Duration, Instant};

/// Time spent per phase of the oracle, over all modules.
#[derive(Default)]
struct Phases {
    /// Generating, parsing and checking.
    check: Duration,
    /// LLVM lowering, the module verifier and C emission.
    lower: Duration,
    /// Starting the C engine's compile, and waiting for it once the AOT
    /// executable and the JIT are built.
    c_build: Duration,
    /// Object code and the AOT executable's link.
    aot_build: Duration,
    /// Creating the JIT.
    jit_build: Duration,
    interp_runs: Duration,
    c_runs: Duration,
    jit_runs: Duration,
    aot_runs: Duration,
}

impl std::fmt::Display for Phases {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |d: Duration| d.as_secs_f64();
        write!(
            out,
            "check {:.2}s, lower+verify+emit {:.2}s, C build {:.2}s, AOT build {:.2}s, \
             JIT build {:.2}s, runs: interp {:.2}s, C {:.2}s, JIT {:.2}s, AOT {:.2}s",
            s(self.check),
            s(self.lower),
            s(self.c_build),
            s(self.aot_build),
            s(self.jit_build),
            s(self.interp_runs),
            s(self.c_runs),
            s(self.jit_runs),
            s(self.aot_runs)
        )
    }
}

#[test]
fn random_modules_agree_on_all_four_engines() {
    let count: u64 = std::env::var("ZLM_LLVM_ORACLE_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    // `ZLM_LLVM_ORACLE_FROM=S` starts a long run at seed S (to resume one).
    let from: u64 = std::env::var("ZLM_LLVM_ORACLE_FROM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let record = host_record();
    let cc = Compiler::strict("cc");
    let mut runs = 0;
    let (mut dropped, mut faulted, mut unwound) = (0, 0, 0);
    // Where a module's time goes (printed with the tally).
    let mut phases = Phases::default();
    for seed in from..from + count {
        let t = Instant::now();
        let text = module_text(seed);
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        let checked = zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
        phases.check += t.elapsed();
        let t = Instant::now();
        let unit =
            lower(&checked, &Scope::Module).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        zlm_llvm::backend::verify(&unit.ir).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        let c_unit = emit(&checked, &TargetConfig::default(), &Scope::Module)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        assert_eq!(unit.entries, c_unit.entries);
        phases.lower += t.elapsed();
        let t = Instant::now();
        // The C compile runs as its own process while the AOT executable
        // and the JIT are built here.
        let pending =
            Program::spawn(&c_unit, &cc).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        phases.c_build += t.elapsed();
        let t = Instant::now();
        let aot = AotProgram::build(&unit, &record)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        phases.aot_build += t.elapsed();
        let t = Instant::now();
        // The C oracle's limits: the default run, a step limit inside the
        // body with a small byte budget (faults with owners live), and a
        // depth limit that stops nested calls.
        let limit_set = [
            steps(20_000),
            Limits {
                steps: 4 + seed % 37,
                bytes: seed % 20,
                ..Limits::default()
            },
            Limits {
                depth: 2,
                ..steps(20_000)
            },
        ];
        with_jit(&unit, |jit| {
            phases.jit_build += t.elapsed();
            let t = Instant::now();
            let c = pending
                .wait()
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            phases.c_build += t.elapsed();
            for limits in limit_set {
                let it = Interp::new(&checked).unwrap().with_limits(limits);
                for entry in &unit.entries {
                    let at = it.find(entry).unwrap();
                    for args in arg_vectors(&it.params(at), 6) {
                        let t = Instant::now();
                        let want = interp_run(&it, entry, &args);
                        phases.interp_runs += t.elapsed();
                        let label =
                            format!("seed {seed} {entry} args {args:x?} limits {limits:?}\n{text}");
                        let t = Instant::now();
                        assert_eq!(seen(c.run(entry, &args, limits), "C"), want, "C {label}");
                        phases.c_runs += t.elapsed();
                        let t = Instant::now();
                        assert_eq!(
                            seen(jit.run(entry, &args, limits), "JIT"),
                            want,
                            "JIT {label}"
                        );
                        phases.jit_runs += t.elapsed();
                        let t = Instant::now();
                        assert_eq!(
                            seen(aot.run(entry, &args, limits), "AOT"),
                            want,
                            "AOT {label}"
                        );
                        phases.aot_runs += t.elapsed();
                        runs += 1;
                        match &want {
                            Seen::Done(_, _, d) => dropped += usize::from(!d.is_empty()),
                            Seen::Fault(_, d) => {
                                faulted += 1;
                                unwound += usize::from(!d.is_empty());
                            }
                        }
                    }
                }
            }
        })
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
    }
    eprintln!(
        "four-engine oracle: {count} modules, {runs} runs ({dropped} completed with drops, \
         {faulted} faulted, {unwound} of them unwinding owners), 0 mismatches"
    );
    eprintln!("four-engine oracle time: {phases}");
    assert!(runs >= count as usize, "only {runs} runs");
    assert!(
        count < 10 || (dropped > 0 && unwound > 0),
        "owned values not exercised"
    );
}
