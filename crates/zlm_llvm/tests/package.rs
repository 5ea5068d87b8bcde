//! The LLVM engines lower a package into one LLVM module (every reached
//! function of every module, each under its own module's profile, named
//! with its module) and observe exactly what the interpreter observes:
//! results, steps, drop logs and faults naming the provider's function.
//! The package oracle runs random packages (`zlm::testgen::package_text`)
//! on the interpreter, the C engine, the JIT and the AOT executable;
//! `ZLM_LLVM_ORACLE_PACKAGES=N` raises the package count for a long run.

mod support;

use support::*;
use zlm::decode::{Checked, from_model};
use zlm::hash::to_hex;
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::engine::{Compiler, Program};
use zlm::materialize::c::{TargetConfig, emit_package};
use zlm::package::Package;
use zlm_llvm::aot::AotProgram;
use zlm_llvm::jit::with_jit;
use zlm_llvm::{Scope, lower, lower_package};

fn example(name: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

/// The example package with its provider under `profile` (the root keeps
/// its own exact profile; the provider's interface digest is rewritten).
fn package(profile: &str) -> Package {
    let store = example("pkg_store.zlt").replace("profile exact", &format!("profile {profile}"));
    let p = from_model(&zlm::text::parse(&store).unwrap(), &[]).unwrap();
    let exact = from_model(&zlm::text::parse(&example("pkg_store.zlt")).unwrap(), &[]).unwrap();
    let root = example("pkg_main.zlt").replace(
        &to_hex(&exact.ids().module_interface),
        &to_hex(&p.ids().module_interface),
    );
    let root = from_model(&zlm::text::parse(&root).unwrap(), &[&p]).unwrap();
    Package::new(root, vec![p]).unwrap()
}

/// Host-callable functions of the package's root.
fn root_entries(pkg: &Package) -> Vec<String> {
    entries(pkg.root())
}

#[test]
fn the_example_package_runs_on_jit_and_aot_as_on_the_interpreter() {
    let record = host_record();
    let mut compared = 0;
    for profile in ["exact", "modular", "approximate"] {
        let pkg = package(profile);
        let unit = lower_package(&pkg, &Scope::Module).unwrap();
        assert!(
            unit.ir.contains("@zf_run_pkg_store__Cell_take_"),
            "provider functions carry their module"
        );
        assert!(
            unit.ir.contains("; Provider run.pkg_store, profile"),
            "the header lists the provider"
        );
        let aot = AotProgram::build(&unit, &record).unwrap_or_else(|e| panic!("{e}"));
        with_jit(&unit, |jit| {
            for entry in root_entries(&pkg) {
                for limits in [
                    Limits::default(),
                    steps(14),
                    Limits {
                        depth: 2,
                        ..Limits::default()
                    },
                    Limits {
                        depth: 1,
                        ..Limits::default()
                    },
                    Limits {
                        bytes: 3,
                        ..Limits::default()
                    },
                ] {
                    let it = Interp::of_package(&pkg).with_limits(limits);
                    let at = it.find(&entry).unwrap();
                    // Canonical edge words: 0, ±1, the extremes.
                    for a in arg_vectors(&it.params(at), 8) {
                        let want = interp_run(&it, &entry, &a);
                        let label = format!("{entry} ({profile}) args {a:x?} limits {limits:?}");
                        assert_eq!(
                            seen(jit.run(&entry, &a, limits), "JIT"),
                            want,
                            "JIT {label}"
                        );
                        assert_eq!(
                            seen(aot.run(&entry, &a, limits), "AOT"),
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
    assert!(compared >= 3 * 5 * 8, "only {compared} comparisons");
    // The exact provider's overflow is a fault of the provider's function,
    // with the owners of both modules dropped on the way out.
    let pkg = package("exact");
    let unit = lower_package(&pkg, &Scope::Entry("Main.demo".into())).unwrap();
    let check = |got: Seen, engine: &str| {
        let Seen::Fault(fault, drops) = got else {
            panic!("{engine}: expected a fault, got {got:?}")
        };
        assert!(
            fault.starts_with("fault in run.pkg_store::Cell.take block 0 op 2"),
            "{engine}: {fault}"
        );
        assert_eq!(
            drops,
            [
                "run.pkg_store::Cell.take: drop p0 : Cell",
                "Main.demo: drop l0 : Cell"
            ],
            "{engine}"
        );
    };
    let x = [i32::MAX as u64];
    with_jit(&unit, |jit| {
        check(
            seen(jit.run("Main.demo", &x, Limits::default()), "JIT"),
            "JIT",
        )
    })
    .unwrap();
    let aot = AotProgram::build(&unit, &record).unwrap();
    check(
        seen(aot.run("Main.demo", &x, Limits::default()), "AOT"),
        "AOT",
    );
}

#[test]
fn package_ir_is_deterministic_scoped_and_a_lone_root_is_refused() {
    let a = lower_package(&package("exact"), &Scope::Module).unwrap();
    let b = lower_package(&package("exact"), &Scope::Module).unwrap();
    assert_eq!(a, b);
    // The provider's functions fault under their own names.
    assert!(
        a.functions.iter().any(|f| f == "run.pkg_store::Cell.take"),
        "{:?}",
        a.functions
    );
    let entry = lower_package(&package("exact"), &Scope::Entry("Main.demo".into())).unwrap();
    // The entry scope reaches every provider function demo calls, not the
    // unreached `hidden`.
    assert!(!entry.ir.contains("Cell_hidden"));
    assert!(entry.ir.contains("Cell_peek"));
    // The same selection and entries as the C engine's package unit.
    let c = emit_package(&package("exact"), &TargetConfig::default(), &Scope::Module).unwrap();
    assert_eq!(a.entries, c.entries);
    // A package of one module lowers exactly as the module does (what
    // `zlm build` and `zlm run --engine jit|aot` now always lower).
    for file in EXAMPLES {
        let checked = from_model(&load(file, "modular"), &[]).unwrap();
        let alone = lower(&checked, &Scope::Module).unwrap();
        let one = Package::new(checked, vec![]).unwrap();
        assert_eq!(
            lower_package(&one, &Scope::Module).unwrap(),
            alone,
            "{file}"
        );
    }
    let pkg = package("exact");
    let e = lower(pkg.root(), &Scope::Module).unwrap_err();
    assert_eq!(e.to_string().split(':').next(), Some("C0-EXEC-002"));
    assert!(e.message.contains("package"), "{e}");
}

fn checked_package(p: &zlm::testgen::PackageText) -> Package {
    let mut providers: Vec<Checked> = Vec::new();
    for text in &p.providers {
        let m = zlm::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let refs: Vec<&Checked> = providers.iter().collect();
        let c = from_model(&m, &refs)
            .unwrap_or_else(|e| panic!("generated provider rejected: {e}\n{text}"));
        providers.push(c);
    }
    let m = zlm::text::parse(&p.root).unwrap_or_else(|e| panic!("{e}\n{}", p.root));
    let refs: Vec<&Checked> = providers.iter().collect();
    let root = from_model(&m, &refs)
        .unwrap_or_else(|e| panic!("generated root rejected: {e}\n{}", p.root));
    Package::new(root, providers).unwrap_or_else(|e| panic!("{e}"))
}

fn listing(p: &zlm::testgen::PackageText) -> String {
    let mut s = String::new();
    for t in &p.providers {
        s.push_str(t);
        s.push_str("\n----\n");
    }
    s.push_str(&p.root);
    s
}

#[test]
fn random_packages_agree_on_all_four_engines() {
    let count: u64 = std::env::var("ZLM_LLVM_ORACLE_PACKAGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let record = host_record();
    let cc = Compiler::strict("cc");
    let (mut runs, mut crossing, mut faulted) = (0, 0, 0);
    for seed in 0..count {
        let p = zlm::testgen::package_text(seed);
        let text = listing(&p);
        crossing += usize::from(p.root.contains("func:#"));
        let pkg = checked_package(&p);
        let unit = lower_package(&pkg, &Scope::Module).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let c_unit = emit_package(&pkg, &TargetConfig::default(), &Scope::Module)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(unit.entries, c_unit.entries);
        let c = Program::build(&c_unit, &cc).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let aot = AotProgram::build(&unit, &record).unwrap_or_else(|e| panic!("{e}\n{text}"));
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
            for limits in limit_set {
                let it = Interp::of_package(&pkg).with_limits(limits);
                for entry in unit.entries.iter().filter(|e| !e.contains("::")) {
                    let at = it.find(entry).unwrap();
                    for args in arg_vectors(&it.params(at), 4) {
                        let want = interp_run(&it, entry, &args);
                        let label = format!(
                            "package seed {seed} {entry} args {args:x?} limits {limits:?}\n{text}"
                        );
                        assert_eq!(seen(c.run(entry, &args, limits), "C"), want, "C {label}");
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
                        runs += 1;
                        faulted += usize::from(matches!(want, Seen::Fault(..)));
                    }
                }
            }
        })
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
    eprintln!(
        "package oracle (LLVM): {count} packages ({crossing} roots calling into providers), \
         {runs} runs ({faulted} faulted), 0 mismatches"
    );
    assert!(runs >= count as usize, "only {runs} runs");
    assert!(
        count < 6 || crossing * 2 >= count as usize,
        "too few calls across modules"
    );
}
