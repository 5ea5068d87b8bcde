//! Differential oracle of the typed call boundary (docs/zlm/boundary.md):
//! seeded random valid modules (`zlm::testgen`) whose functions are called
//! with seeded random typed arguments (`zlm::testgen::arguments`: records,
//! variants with payloads, `Result`s, byte arrays and slices, lent
//! receivers) on the reference interpreter and on the C engine. The
//! result, every lent value handed back, the step count, the fault and the
//! drop log must be identical. The four-engine version (with the JIT and
//! AOT engines) is `crates/zlm_llvm/tests/typed_oracle.rs`.
//! `ZLM_TYPED_ORACLE_COUNT` raises the module count for a long run
//! (`--nocapture` prints the tally).

mod c_engine_common;

use c_engine_common::{build, compiler};
use zlm::boundary::{self, Passing};
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::{Scope, TargetConfig, emit};
use zlm::testgen::{TypedAnswer, expected_typed_answer, typed_answer_of_run};

#[test]
fn random_modules_agree_across_the_typed_boundary() {
    let count: u64 = std::env::var("ZLM_TYPED_ORACLE_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let cc = compiler("cc");
    let (mut modules, mut runs, mut faults, mut lent, mut nonscalar) = (0, 0, 0, 0, 0);
    for seed in 0..count {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let checked = zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
        let unit = emit(&checked, &TargetConfig::default(), &Scope::Module)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let program = build(&unit, &cc);
        modules += 1;
        let limits = [
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
        for limits in limits {
            let it = Interp::new(&checked).unwrap().with_limits(limits);
            let r = it.resolved();
            for entry in unit.typed_entries.clone() {
                let at = it.find(&entry).unwrap();
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
                    let got = match program.run_typed(&entry, &words, limits) {
                        Ok(ran) => typed_answer_of_run(r, at, &slots, ran).unwrap_or_else(|| {
                            panic!("undecodable report\nseed {seed} {entry} {doc}")
                        }),
                        Err(e) => panic!("C engine: {e}\nseed {seed} {entry} {doc}\n{text}"),
                    };
                    assert_eq!(
                        got, want,
                        "seed {seed} {entry} args {doc} limits {limits:?}\n{text}"
                    );
                    runs += 1;
                    faults += usize::from(matches!(got, TypedAnswer::Fault(..)));
                    lent += usize::from(
                        slots
                            .iter()
                            .any(|s| matches!(s.passing, Passing::Shared | Passing::Exclusive)),
                    );
                    nonscalar += usize::from(slots.iter().any(|s| {
                        !matches!(s.host, zlm::model::Type::Scalar(_) | zlm::model::Type::Unit)
                    }));
                }
            }
        }
    }
    println!(
        "typed oracle: {modules} modules, {runs} runs ({faults} faults, {lent} with lent slots, {nonscalar} with non-scalar slots), 0 mismatches"
    );
    assert!(runs > 0);
    assert!(
        nonscalar > 0,
        "no run crossed the boundary with a non-scalar value"
    );
}
