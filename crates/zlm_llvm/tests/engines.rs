//! The JIT and AOT engines against the reference interpreter on every run
//! example under all three profiles: every host-callable function,
//! edge-value arguments, 200 000-step, 7-step, depth-3 and 3-byte limits; identical
//! results, step counts, faults and drop logs. Functions the lowering does
//! not cover must be refused with C0-EXEC-002 and are listed in `REFUSED`
//! (exactly); the lowered IR is deterministic and free of wrap flags.

mod support;

use support::*;
use zlm::interp::{Interp, Limits};
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;
use zlm_llvm::{Scope, lower};

/// `file:Decl.function` cases the LLVM engines refuse today (none: they
/// follow the C engine's coverage, whose list is empty too).
const REFUSED: &[&str] = &[];

#[test]
fn every_example_function_matches_the_interpreter_or_is_listed_refused() {
    let record = host_record();
    let mut refused = Vec::new();
    let mut compared = 0;
    let limit_set = example_limits();
    for file in EXAMPLES {
        for profile in ["exact", "modular", "approximate"] {
            let m = load(file, profile);
            let checked = zlm::decode::from_model(&m, &[]).unwrap();
            let mut lowered = Vec::new();
            for entry in entries(&checked) {
                match lower(&checked, &Scope::Entry(entry.clone())) {
                    Err(r) => {
                        assert_eq!(r.to_string().split(':').next(), Some("C0-EXEC-002"));
                        if profile == "exact" {
                            refused.push(format!("{file}:{entry}"));
                        }
                    }
                    Ok(_) => lowered.push(entry),
                }
            }
            if lowered.is_empty() {
                continue;
            }
            let unit = lower(&checked, &Scope::Entries(lowered.clone())).unwrap();
            let aot = AotProgram::build(&unit, &record).unwrap_or_else(|e| panic!("{e}"));
            with_jit(&unit, |jit| {
                for entry in &lowered {
                    let it = Interp::new(&checked).unwrap();
                    let at = it.find(entry).unwrap();
                    let tys = it.params(at);
                    for args in arg_vectors(&tys, 8) {
                        for &limits in &limit_set {
                            let it = Interp::new(&checked).unwrap().with_limits(limits);
                            let want = interp_run(&it, entry, &args);
                            let label = format!(
                                "{file}:{entry} ({profile}) args {args:x?} limits {limits:?}"
                            );
                            assert_eq!(
                                seen(jit.run(entry, &args, limits), "JIT"),
                                want,
                                "JIT {label}"
                            );
                            assert_eq!(
                                seen(aot.run(entry, &args, limits), "AOT"),
                                want,
                                "AOT {label}"
                            );
                            compared += 1;
                        }
                    }
                }
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let mut want: Vec<String> = REFUSED.iter().map(|s| s.to_string()).collect();
    want.sort();
    refused.sort();
    assert_eq!(refused, want, "the refused list changed");
    assert!(compared > 120, "only {compared} runs compared");
}

#[test]
fn lowered_ir_is_byte_identical_across_decodes_verifies_and_carries_no_wrap_flags() {
    for file in EXAMPLES {
        let m = load(file, "exact");
        let bytes = zlm::write::write(&m).unwrap();
        let a = zlm::decode::decode(&bytes).unwrap();
        let b = zlm::decode::decode(&bytes).unwrap();
        let c = zlm::decode::from_model(&m, &[]).unwrap();
        for entry in entries(&a) {
            let scope = Scope::Entry(entry);
            let x = lower(&a, &scope);
            assert_eq!(x, lower(&b, &scope));
            assert_eq!(x, lower(&c, &scope));
            if let Ok(u) = x {
                zlm_llvm::backend::verify(&u.ir).unwrap_or_else(|e| panic!("{file}: {e}"));
                for line in u.ir.lines().filter(|l| !l.starts_with(';')) {
                    for word in [" nsw", " nuw", " exact", "undef", "poison", "freeze"] {
                        assert!(!line.contains(word), "{file}: {word} in {line}");
                    }
                }
            }
        }
    }
}

/// A contract calling the catalog's `get`, and the body's `length` of the
/// loaned array: both lowered by the C engine and the LLVM engines.
const CATALOG_CONTRACT: &str = "zlm 1.9 package demo module run.cpure profile exact mode checked

decl value Main public
  func message type len public -> UInt64 effects []
    param 0 bytes Ref<Array<Byte>>
    param 1 floor Byte
    requires
      cop pure_call Byte p0 c:UInt64:0 | 1 0 cfunc:2
      cop ge Bool v0 p1 | 0 0 -
    path p0 Array<Byte>
    path p1 Byte
    loan 0 shared p0 - Ref<Array<Byte>> - -
    block 0
      intrinsic_call UInt64 $p0 | cfunc:1 effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
";

#[test]
fn a_contract_get_lowers_and_an_unknown_entry_is_refused() {
    // The contract's catalog `get` lowers (issue 36): past the end it is a
    // bounds fault (kind 6) at contract operation 0 with no block (-1).
    let m = zlm::text::parse(CATALOG_CONTRACT).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let unit = lower(&checked, &Scope::Module).unwrap();
    zlm_llvm::backend::verify(&unit.ir).unwrap();
    assert!(
        unit.ir.contains("i32 6, i64 0, i64 -1, i64 0, i64 -1)"),
        "{}",
        unit.ir
    );
    zlm::materialize::c::emit(
        &checked,
        &zlm::materialize::c::TargetConfig::default(),
        &Scope::Module,
    )
    .unwrap();
    let m = load("own.zlt", "exact");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let e = lower(&checked, &Scope::Entry("Main.nothing".into())).unwrap_err();
    assert!(e.to_string().contains("no unique function"), "{e}");
}

#[test]
fn host_stack_exhaustion_is_the_depth_fault_never_a_crash() {
    // With a depth limit far above what the guarded host stack holds, a
    // deep recursion ends in DepthLimit (the known divergence from the
    // interpreter, docs/zlm/llvm-engines.md), on both engines.
    let m = load("deep.zlt", "exact");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let unit = lower(&checked, &Scope::Entry("Main.down".into())).unwrap();
    let limits = Limits {
        steps: 1 << 40,
        depth: 1 << 30,
        bytes: 0,
    };
    let depth_fault = |s: Seen| match s {
        Seen::Fault(f, drops) => {
            assert!(
                f.starts_with("fault in Main.down") && f.ends_with("call-depth limit reached"),
                "{f}"
            );
            assert!(drops.is_empty());
        }
        other => panic!("{other:?}"),
    };
    with_jit(&unit, |jit| {
        depth_fault(seen(jit.run("Main.down", &[100_000_000], limits), "JIT"));
        // A recursion that fits still returns what the interpreter returns.
        let it = Interp::new(&checked).unwrap().with_limits(Limits {
            depth: 4096,
            ..limits
        });
        let want = interp_run(&it, "Main.down", &[1000]);
        assert!(
            matches!(&want, Seen::Done(r, _, _) if r == "1000"),
            "{want:?}"
        );
        assert_eq!(seen(jit.run("Main.down", &[1000], limits), "JIT"), want);
    })
    .unwrap();
    let aot = AotProgram::build(&unit, &host_record()).unwrap();
    depth_fault(seen(aot.run("Main.down", &[100_000_000], limits), "AOT"));
}

/// The loop fixtures of the interpreter's tier tests (`crates/zlm/tests/loops`).
const DO_WHILE: &str = include_str!("../../zlm/tests/loops/do_while.zlt");
const FLAG: &str = include_str!("../../zlm/tests/loops/flag.zlt");
const NESTED: &str = include_str!("../../zlm/tests/loops/nested.zlt");
/// A `while` loop whose accumulator starts at a parameter, so that a
/// start near the top of `Int64` overflows inside the loop.
const SUM_FROM: &str = include_str!("../../zlm/tests/loops/sum_from.zlt");

#[test]
fn loops_run_out_of_steps_and_overflow_exactly_as_the_interpreter() {
    // The header of a two-block loop checks the budget of several
    // iterations at once and runs an unrolled copy; with any less budget
    // the ordinary path runs. Every budget from 0 to past the run's own
    // step count must end where the interpreter ends: the same step-limit
    // fault site, the same overflow fault, the same result and steps. The
    // other loop shapes (one block, three blocks, nested) are not unrolled
    // and must agree as well.
    let record = host_record();
    let near_max = (i64::MAX - 7) as u64;
    let big_step = |s: &str| s.replace("c:Int64:1 |", "c:Int64:4611686018427387904 |");
    let loop_zlt = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .unwrap();
    let ns: Vec<Vec<u64>> = [0u64, 1, 2, 3, 5, 9].iter().map(|&n| vec![n]).collect();
    let sum_from_args: Vec<Vec<u64>> = vec![
        vec![0, 0],
        vec![1, 5],
        vec![2, 0],
        vec![3, (-3i64) as u64],
        vec![4, 0],
        vec![9, 1],
        vec![13, 2],
        vec![9, near_max],
    ];
    // With an increment of 2^62 the counter overflows on a large bound
    // (exact profile only: under modular it would wrap and loop on).
    let huge: Vec<Vec<u64>> = vec![vec![3], vec![i64::MAX as u64]];
    let both = &["exact", "modular"][..];
    let exact = &["exact"][..];
    // (name, source, entry, argument sets, profiles)
    type Program<'a> = (&'a str, String, &'a str, Vec<Vec<u64>>, &'a [&'a str]);
    let programs: Vec<Program> = vec![
        (
            "sum_from",
            SUM_FROM.into(),
            "Main.sum_from",
            sum_from_args,
            both,
        ),
        ("loop", loop_zlt.clone(), "Main.sum", ns.clone(), both),
        (
            "loop overflow",
            big_step(&loop_zlt),
            "Main.sum",
            huge.clone(),
            exact,
        ),
        ("do-while", DO_WHILE.into(), "Main.sum", ns.clone(), both),
        ("flag", FLAG.into(), "Main.sum", ns.clone(), both),
        (
            "flag overflow",
            big_step(FLAG),
            "Main.sum",
            huge.clone(),
            exact,
        ),
        ("nested", NESTED.into(), "Main.sum", ns, both),
        ("nested overflow", big_step(NESTED), "Main.sum", huge, exact),
    ];
    let (mut compared, mut limited, mut overflowed, mut on_aot) = (0, 0, 0, 0);
    for (name, src, entry, arg_sets, profiles) in &programs {
        for &profile in *profiles {
            let text = src.replace("profile exact", &format!("profile {profile}"));
            let m = zlm::text::parse(&text).unwrap();
            let checked = zlm::decode::from_model(&m, &[]).unwrap();
            let unit = lower(&checked, &Scope::Module).unwrap();
            let aot = AotProgram::build(&unit, &record).unwrap_or_else(|e| panic!("{e}"));
            with_jit(&unit, |jit| {
                for (k, args) in arg_sets.iter().enumerate() {
                    let it = Interp::new(&checked).unwrap().with_limits(steps(100_000));
                    let full = interp_run(&it, entry, args);
                    let total = match &full {
                        Seen::Done(_, s, _) => *s,
                        Seen::Fault(f, _) => {
                            assert!(
                                profile == "exact" && f.contains("arithmetic overflow"),
                                "{name}: {f}"
                            );
                            overflowed += 1;
                            300
                        }
                    };
                    // The AOT executable (a process per run) on the last argument set.
                    let with_aot = k + 1 == arg_sets.len();
                    for budget in 0..=total + 1 {
                        let it = Interp::new(&checked).unwrap().with_limits(steps(budget));
                        let want = interp_run(&it, entry, args);
                        limited += usize::from(
                            matches!(&want, Seen::Fault(f, _) if f.contains("step limit reached")),
                        );
                        let label = format!("{name} ({profile}) args {args:x?} budget {budget}");
                        assert_eq!(
                            seen(jit.run(entry, args, steps(budget)), "JIT"),
                            want,
                            "JIT {label}"
                        );
                        if with_aot {
                            assert_eq!(
                                seen(aot.run(entry, args, steps(budget)), "AOT"),
                                want,
                                "AOT {label}"
                            );
                            on_aot += 1;
                        }
                        compared += 1;
                    }
                }
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    eprintln!(
        "loops: {compared} budgets compared on the JIT ({on_aot} also on AOT), {limited} step-limit faults, {overflowed} overflowing runs"
    );
    assert!(overflowed >= 4, "only {overflowed} runs overflowed");
    assert!(
        limited > 1000 && compared > limited,
        "{limited} of {compared}"
    );
}
