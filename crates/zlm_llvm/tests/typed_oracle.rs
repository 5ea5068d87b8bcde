//! The four-engine differential oracle of the typed call boundary
//! (docs/zlm/boundary.md): seeded random valid modules (`zlm::testgen`)
//! whose typed-callable functions are called with seeded random typed
//! arguments (`zlm::testgen::arguments`: records, variants with payloads,
//! `Result`s, byte arrays and slices, lent receivers) on the reference
//! interpreter (`Interp::call_host`), the C engine, the LLVM JIT and the
//! LLVM AOT executable. The result, every lent value handed back, the step
//! count, the fault and the drop log must be identical.
//! `ZLM_LLVM_TYPED_ORACLE_COUNT=N` raises the module count for a long run
//! (`ZLM_LLVM_TYPED_ORACLE_FROM=S` starts it at seed `S`; `--nocapture`
//! prints the tally).

mod support;

use support::host_record;
use zlm::boundary::{self, Passing};
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::engine::{CRun, Compiler, Program};
use zlm::materialize::c::{Scope, TargetConfig, emit};
use zlm::testgen::{TypedAnswer, expected_typed_answer, typed_answer_of_run};
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_modules_agree_across_the_typed_boundary_on_all_four_engines() {
    let count = env("ZLM_LLVM_TYPED_ORACLE_COUNT", 6);
    let from = env("ZLM_LLVM_TYPED_ORACLE_FROM", 0);
    let record = host_record();
    let cc = Compiler::strict("cc");
    let (mut modules, mut runs, mut faults, mut lent, mut nonscalar) = (0, 0, 0, 0, 0);
    for seed in from..from + count {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let checked = zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
        let c_unit = emit(&checked, &TargetConfig::default(), &Scope::Module)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let unit = zlm_llvm::lower(&checked, &Scope::Module)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        zlm_llvm::backend::verify(&unit.ir).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        // The LLVM engines call exactly what the C engine calls typed.
        assert_eq!(unit.typed, c_unit.typed_entries, "seed {seed}\n{text}");
        let c = Program::build(&c_unit, &cc).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let aot = AotProgram::build(&unit, &record).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        modules += 1;
        let limit_set = [
            Limits {
                steps: 20_000,
                ..Limits::default()
            },
            Limits {
                steps: 4 + seed % 37,
                bytes: 8 + seed % 20,
                ..Limits::default()
            },
        ];
        with_jit(&unit, |jit| {
            for limits in limit_set {
                let it = Interp::new(&checked).unwrap().with_limits(limits);
                let r = it.resolved();
                for entry in &unit.typed {
                    let at = it.find(entry).unwrap();
                    let slots = boundary::slots(r, at);
                    for k in 0..3u64 {
                        let doc = zlm::testgen::arguments(r, &slots, seed * 1000 + k);
                        let values = boundary::args_of_json(r, &slots, &doc)
                            .unwrap_or_else(|e| panic!("generated arguments rejected: {e}\n{doc}"));
                        if boundary::host_bytes(&values) > limits.bytes {
                            continue;
                        }
                        let words = boundary::slot_words(r, &slots, &values);
                        let want = expected_typed_answer(&it, at, &slots, values)
                            .unwrap_or_else(|e| panic!("interpreter: {e}"));
                        let label =
                            format!("seed {seed} {entry} args {doc} limits {limits:?}\n{text}");
                        let observe = |engine: &str, ran: Result<CRun, String>| match ran {
                            Ok(ran) => typed_answer_of_run(r, at, &slots, ran)
                                .unwrap_or_else(|| panic!("{engine}: undecodable report\n{label}")),
                            Err(e) => panic!("{engine}: {e}\n{label}"),
                        };
                        let got_c = observe(
                            "C",
                            c.run_typed(entry, &words, limits)
                                .map_err(|e| e.to_string()),
                        );
                        assert_eq!(got_c, want, "C {label}");
                        let got_jit = observe(
                            "JIT",
                            jit.run_typed(entry, &words, limits)
                                .map_err(|e| e.to_string()),
                        );
                        assert_eq!(got_jit, want, "JIT {label}");
                        let got_aot = observe(
                            "AOT",
                            aot.run_typed(entry, &words, limits)
                                .map_err(|e| e.to_string()),
                        );
                        assert_eq!(got_aot, want, "AOT {label}");
                        runs += 1;
                        faults += usize::from(matches!(want, TypedAnswer::Fault(..)));
                        lent +=
                            usize::from(slots.iter().any(|s| {
                                matches!(s.passing, Passing::Shared | Passing::Exclusive)
                            }));
                        nonscalar += usize::from(slots.iter().any(|s| {
                            !matches!(s.host, zlm::model::Type::Scalar(_) | zlm::model::Type::Unit)
                        }));
                    }
                }
            }
        })
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
    println!(
        "typed four-engine oracle: {modules} modules, {runs} runs ({faults} faults, {lent} with lent slots, {nonscalar} with non-scalar slots), 0 mismatches"
    );
    assert!(runs > 0);
    assert!(
        nonscalar > 0,
        "no run crossed the boundary with a non-scalar value"
    );
}
