//! Programs written from the spec alone (`tests/spec/*.zlt`, issue 36),
//! not from what the engines lower: slices and byte windows, Slice<Byte>
//! parameters, contracts with pure calls and field copies, loans stored in
//! records, replacements and moves through an exclusive loan, BORROW_MUT
//! with the catalog's `set`. Every host-callable function of every program
//! runs on all four engines (interpreter, C, JIT, AOT) under all three
//! numeric profiles, edge-value arguments and the example limit sets; the
//! C, JIT and AOT observations (result, steps, fault, drop log) must equal
//! the interpreter's. What an engine does not run yet is listed in
//! `KNOWN` exactly (engine, `file:Decl.function`, reason), so a fix shows
//! as a list that must shrink.

mod support;

use support::*;
use zlm::interp::Interp;
use zlm::materialize::c::engine::{Compiler, Program};
use zlm::materialize::c::{TargetConfig, emit};
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;
use zlm_llvm::{Scope, lower};

const PROGRAMS: [&str; 3] = ["clamp.zlt", "ledger.zlt", "window.zlt"];

/// `(engine, file:Decl.function, what happens)` for every entry an engine
/// does not run as the interpreter does (exact profile; each program's
/// refusals do not depend on the profile).
const KNOWN: &[(&str, &str, &str)] = &[];

fn source(file: &str, profile: &str) -> zlm::Module {
    let p = format!("{}/tests/spec/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(p).unwrap();
    zlm::text::parse(&text.replace("profile exact", &format!("profile {profile}")))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn spec_programs_agree_on_all_four_engines() {
    let record = host_record();
    let cc = Compiler::strict("cc");
    let mut known: Vec<(String, String, String)> = Vec::new();
    let mut compared = 0usize;
    for file in PROGRAMS {
        for profile in ["exact", "modular", "approximate"] {
            let m = source(file, profile);
            let checked = zlm::decode::from_model(&m, &[])
                .unwrap_or_else(|e| panic!("{file} ({profile}) is not checked: {e}"));
            let mut note = |engine: &str, entry: &str, what: String| {
                if profile == "exact" {
                    known.push((engine.into(), format!("{file}:{entry}"), what));
                }
            };
            let all = entries(&checked);
            let (mut on_c, mut on_llvm) = (Vec::new(), Vec::new());
            for entry in &all {
                let scope = Scope::Entry(entry.clone());
                match emit(&checked, &TargetConfig::default(), &scope) {
                    Ok(_) => on_c.push(entry.clone()),
                    Err(r) => note("c", entry, r.to_string()),
                }
                // Every lowered module must pass LLVM's module verifier.
                match lower(&checked, &scope) {
                    Ok(unit) => match zlm_llvm::backend::verify(&unit.ir) {
                        Ok(()) => on_llvm.push(entry.clone()),
                        Err(e) => note("llvm", entry, format!("{}: {e}", e.code())),
                    },
                    Err(r) => note("llvm", entry, r.to_string()),
                }
            }
            let c_program = (!on_c.is_empty()).then(|| {
                let unit = emit(
                    &checked,
                    &TargetConfig::default(),
                    &Scope::Entries(on_c.clone()),
                )
                .unwrap();
                Program::build(&unit, &cc).unwrap_or_else(|e| panic!("{file}: {e}"))
            });
            let llvm_unit = (!on_llvm.is_empty())
                .then(|| lower(&checked, &Scope::Entries(on_llvm.clone())).unwrap());
            let aot = llvm_unit
                .as_ref()
                .map(|u| AotProgram::build(u, &record).unwrap_or_else(|e| panic!("{e}")));
            let mut run_all = |jit: Option<&zlm_llvm::jit::JitProgram<'_>>| {
                for entry in &all {
                    let it = Interp::new(&checked).unwrap();
                    let at = it.find(entry).unwrap();
                    let tys = it.params(at);
                    for args in arg_vectors(&tys, 6) {
                        for limits in example_limits() {
                            let it = Interp::new(&checked).unwrap().with_limits(limits);
                            let want = interp_run(&it, entry, &args);
                            let label =
                                format!("{file}:{entry} ({profile}) args {args:x?} {limits:?}");
                            if let Some(p) = c_program.as_ref().filter(|_| on_c.contains(entry)) {
                                assert_eq!(
                                    seen(p.run(entry, &args, limits), "C"),
                                    want,
                                    "C {label}"
                                );
                            }
                            if on_llvm.contains(entry) {
                                if let Some(jit) = jit {
                                    let got = seen(jit.run(entry, &args, limits), "JIT");
                                    assert_eq!(got, want, "JIT {label}");
                                }
                                if let Some(aot) = &aot {
                                    let got = seen(aot.run(entry, &args, limits), "AOT");
                                    assert_eq!(got, want, "AOT {label}");
                                }
                            }
                            compared += 1;
                        }
                    }
                }
            };
            match &llvm_unit {
                Some(u) => with_jit(u, |jit| run_all(Some(jit))).unwrap_or_else(|e| panic!("{e}")),
                None => run_all(None),
            }
        }
    }
    known.sort();
    let mut want: Vec<(String, String, String)> = KNOWN
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    want.sort();
    assert_eq!(
        known, want,
        "the list of what an engine does not run changed"
    );
    eprintln!("spec programs: {compared} runs, each compared on C, JIT and AOT");
    assert!(compared > 100, "only {compared} runs compared");
}

/// A catalog `get` past the end inside a requires is a bounds fault at the
/// contract operation, with no block, on every engine: `Main.demo` with an
/// empty window reaches `Main.count_above`'s `get` of a slice (selector
/// 10), `Main.patch` past its one byte `Main.peek_checked`'s `get` of a
/// loaned array (selector 2).
#[test]
fn a_contract_get_past_the_end_is_a_bounds_fault_on_every_engine() {
    let checked = zlm::decode::from_model(&source("window.zlt", "exact"), &[]).unwrap();
    let cases: [(&str, Vec<u64>, &str); 4] = [
        (
            "Main.demo",
            vec![0, 0, 0, 1],
            "fault in Main.count_above: index or slice out of bounds",
        ),
        (
            "Main.patch",
            vec![0, 1],
            "fault in Main.peek_checked: index or slice out of bounds",
        ),
        // In bounds: byte 10 is not above the floor 20, byte 0 equals
        // itself.
        (
            "Main.demo",
            vec![0, 0, 2, 1],
            "fault in Main.count_above: contract failed: requires 1",
        ),
        ("Main.patch", vec![0, 0], ""),
    ];
    let entries = vec!["Main.demo".to_string(), "Main.patch".to_string()];
    let scope = Scope::Entries(entries);
    let c_unit = emit(&checked, &TargetConfig::default(), &scope).unwrap();
    let c = Program::build(&c_unit, &Compiler::strict("cc")).unwrap();
    let unit = lower(&checked, &scope).unwrap();
    zlm_llvm::backend::verify(&unit.ir).unwrap();
    let aot = AotProgram::build(&unit, &host_record()).unwrap();
    let limits = steps(10_000);
    with_jit(&unit, |jit| {
        for (entry, args, fault) in &cases {
            let it = Interp::new(&checked).unwrap().with_limits(limits);
            let want = interp_run(&it, entry, args);
            match &want {
                Seen::Fault(f, _) => assert_eq!(f, fault, "{entry} {args:?}"),
                Seen::Done(..) => assert!(fault.is_empty(), "{entry} {args:?} did not fault"),
            }
            assert_eq!(seen(c.run(entry, args, limits), "C"), want, "C {entry}");
            assert_eq!(
                seen(jit.run(entry, args, limits), "JIT"),
                want,
                "JIT {entry}"
            );
            assert_eq!(
                seen(aot.run(entry, args, limits), "AOT"),
                want,
                "AOT {entry}"
            );
        }
    })
    .unwrap();
}

/// Moves and drops through a loan are not lowering gaps: the checker
/// rejects a PLACE_MOVE or PLACE_DROP below a borrow binding (here the
/// exclusive receiver of `Pair.renew`) with ZLM-C-PLACEMENT, so no checked
/// module reaches the printers' guards for them.
#[test]
fn moves_and_drops_through_a_loan_are_rejected_by_the_checker() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/spec/ledger.zlt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let commit = "      replace_commit - $recv/Pair.left %0.1 | path:recv/Pair.left -\n";
    assert!(text.contains(commit));
    // A move's result has its temporary owned path.
    let temp = "    path t%0.1 @Box\n    loan 0 exclusive recv";
    assert!(text.contains(temp));
    let moved = "    path t%0.1 @Box\n    path t%0.2 @Box\n    loan 0 exclusive recv";
    for (op, paths) in [
        (
            "      place_drop - $recv/Pair.left | path:recv/Pair.left -\n",
            temp,
        ),
        (
            "      place_move @Box $recv/Pair.left | path:recv/Pair.left -\n",
            moved,
        ),
    ] {
        let mutant = text.replacen(commit, op, 1).replacen(temp, paths, 1);
        let m = zlm::text::parse(&mutant).unwrap();
        let e = zlm::decode::from_model(&m, &[]).expect_err(op);
        assert_eq!(e.code, "ZLM-C-PLACEMENT", "{op}: {e}");
        assert!(
            e.to_string().contains("through a borrowed ancestry"),
            "{op}: {e}"
        );
    }
}

/// A contract pure call on a computed receiver is not a lowering gap
/// either: a pure call's shared receiver is a declaration's (or the
/// catalog's) type, and every value a contract operation produces is a
/// Copy nonborrow scalar, so the checker rejects the only way to compute
/// one (here a field copy of a Copy enum field, fed to the enum's pure
/// `big`) with ZLM-SHAPE.
#[test]
fn a_contract_call_on_a_computed_receiver_is_rejected_by_the_checker() {
    let text = "zlm 1.9 package spec module spec.recv profile exact mode checked

decl enum Size public
  variant 0 Small
  variant 1 Large

  func message shared big public -> Bool effects []
    path recv @Size
    loan 0 shared recv - Ref<@Size> - -
    block 0
      enum_is_variant Bool $recv | variant:Size.Large -
      return - %0.0 | - -
    edge 0 return 0 exit

decl value Item public
  field 0 size public let @Size

  func message shared check public -> UInt64 effects []
    param 0 x UInt64
    requires
      cop field_copy @Size recv | 0 0 field:Item.size
      cop pure_call Bool v0 | 0 0 func:Size.big
    path recv @Item
    path p0 UInt64
    loan 0 shared recv - Ref<@Item> - -
    block 0
      load_local UInt64 $p0 | path:p0 -
      return - %0.0 | - -
    edge 0 return 0 exit
";
    let m = zlm::text::parse(text).unwrap();
    let e = zlm::decode::from_model(&m, &[]).expect_err("a computed receiver");
    assert_eq!(e.code, "ZLM-SHAPE", "{e}");
    assert!(e.to_string().contains("Copy nonborrow scalar"), "{e}");
}
