//! Differential oracle: seeded random valid modules (the checker must accept
//! each one) run on the reference interpreter and on the C engine; results,
//! step counts, faults and drop logs must be identical. A mismatch prints
//! the module in text form.
//!
//! The generator is `zlm::testgen` (shared with other engines' oracles);
//! its modules cover scalars under every profile and width, loops,
//! diamonds, calls, contracts, and owned records, variants, Result
//! carriers with try, replacements, field moves, cleanup recipes, loans
//! and byte arrays. Each module runs under the default limits, a step
//! limit inside the body with a small byte budget, and a depth limit of
//! two. `ZLM_C_ORACLE_COUNT` raises the module count for
//! a long run (`--nocapture` prints the tally).

mod c_engine_common;

use c_engine_common::{Seen, arg_vectors, build, c_run, compiler, interp_run};
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::{Scope, TargetConfig, emit};
use zlm::model::{ScalarKind, Type};

#[test]
fn random_modules_agree_on_the_interpreter_and_the_c_engine() {
    let count: u64 = std::env::var("ZLM_C_ORACLE_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    let cc = compiler("cc");
    let mut runs = 0;
    let mut owned = 0;
    let mut with_bytes = 0;
    let (mut dropped, mut faulted, mut unwound) = (0, 0, 0);
    for seed in 0..count {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let checked = zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
        owned += usize::from(text.contains("decl value Box"));
        with_bytes += usize::from(text.contains("Array<Byte>"));
        let unit = emit(&checked, &TargetConfig::default(), &Scope::Module)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let program = build(&unit, &cc);
        // The default run, a step limit that falls inside the body (faults
        // with owners live), and a depth limit that stops nested calls.
        let limits = [
            Limits {
                steps: 20_000,
                ..Limits::default()
            },
            Limits {
                steps: 4 + seed % 37,
                bytes: seed % 20,
                ..Limits::default()
            },
            Limits {
                steps: 20_000,
                depth: 2,
                ..Limits::default()
            },
        ];
        for limits in limits {
            let it = Interp::new(&checked).unwrap().with_limits(limits);
            for entry in unit.entries.clone() {
                let at = it.find(&entry).unwrap();
                let tys: Vec<Type> = it.params(at);
                assert!(tys.iter().all(|t| match t {
                    Type::Scalar(k) => *k != ScalarKind::Bool,
                    Type::Ref(a) => **a == Type::AllocatorBytesError,
                    _ => false,
                }));
                for args in arg_vectors(&tys, 6) {
                    let want = interp_run(&it, &entry, &args);
                    let got = c_run(&program, &entry, &args, limits);
                    assert_eq!(
                        Some(&got),
                        want.as_ref(),
                        "seed {seed} {entry} args {args:x?} limits {limits:?}\n{text}"
                    );
                    runs += 1;
                    match &got {
                        Seen::Done(_, _, d) => dropped += usize::from(!d.is_empty()),
                        Seen::Fault(_, d) => {
                            faulted += 1;
                            unwound += usize::from(!d.is_empty());
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "oracle: {count} modules ({owned} with owned values, {with_bytes} with byte arrays), {runs} runs \
         ({dropped} completed with drops, {faulted} faulted, {unwound} of them unwinding owners), 0 mismatches"
    );
    assert!(runs >= count as usize, "only {runs} runs");
    assert!(
        count < 24 || (owned > 0 && with_bytes > 0 && dropped > 0 && unwound > 0),
        "owned values not exercised"
    );
}

#[test]
fn generated_modules_are_deterministic_and_checked() {
    for seed in 0..64 {
        let text = zlm::testgen::module_text(seed);
        assert_eq!(text, zlm::testgen::module_text(seed));
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
    }
}

/// The checked package of generated `p`, or the first rejection with the
/// module text.
fn checked_package(p: &zlm::testgen::PackageText) -> zlm::package::Package {
    let mut providers: Vec<zlm::decode::Checked> = Vec::new();
    for text in &p.providers {
        let m = zlm::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let refs: Vec<&zlm::decode::Checked> = providers.iter().collect();
        let c = zlm::decode::from_model(&m, &refs)
            .unwrap_or_else(|e| panic!("generated provider rejected: {e}\n{text}"));
        providers.push(c);
    }
    let m = zlm::text::parse(&p.root).unwrap_or_else(|e| panic!("{e}\n{}", p.root));
    let refs: Vec<&zlm::decode::Checked> = providers.iter().collect();
    let root = zlm::decode::from_model(&m, &refs)
        .unwrap_or_else(|e| panic!("generated root rejected: {e}\n{}", p.root));
    zlm::package::Package::new(root, providers).unwrap_or_else(|e| panic!("{e}"))
}

fn package_listing(p: &zlm::testgen::PackageText) -> String {
    let mut s = String::new();
    for t in &p.providers {
        s.push_str(t);
        s.push_str("\n----\n");
    }
    s.push_str(&p.root);
    s
}

/// Packages of several modules with calls across them (the root into every
/// provider, a provider into the one before it): interpreter and C engine
/// agree on every root entry. `ZLM_C_ORACLE_PACKAGES` raises the count for
/// a long run (`--nocapture` prints the tally).
#[test]
fn random_packages_agree_on_the_interpreter_and_the_c_engine() {
    let count: u64 = std::env::var("ZLM_C_ORACLE_PACKAGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let cc = compiler("cc");
    let (mut runs, mut modules, mut crossing, mut nested) = (0, 0, 0, 0);
    let (mut dropped, mut faulted) = (0, 0);
    for seed in 0..count {
        let p = zlm::testgen::package_text(seed);
        let listing = package_listing(&p);
        let pkg = checked_package(&p);
        modules += pkg.modules().len();
        crossing += usize::from(p.root.contains("func:#"));
        nested += usize::from(p.providers.iter().any(|t| t.contains("func:#")));
        let unit =
            zlm::materialize::c::emit_package(&pkg, &TargetConfig::default(), &Scope::Module)
                .unwrap_or_else(|e| panic!("{e}\n{listing}"));
        let program = build(&unit, &cc);
        for limits in [
            Limits {
                steps: 20_000,
                ..Limits::default()
            },
            Limits {
                steps: 4 + seed % 37,
                bytes: seed % 20,
                ..Limits::default()
            },
            Limits {
                steps: 20_000,
                depth: 2,
                ..Limits::default()
            },
        ] {
            let it = Interp::of_package(&pkg).with_limits(limits);
            for entry in unit.entries.iter().filter(|e| !e.contains("::")) {
                let at = it.find(entry).unwrap();
                for args in arg_vectors(&it.params(at), 4) {
                    let want = interp_run(&it, entry, &args);
                    let got = c_run(&program, entry, &args, limits);
                    assert_eq!(
                        Some(&got),
                        want.as_ref(),
                        "package seed {seed} {entry} args {args:x?} limits {limits:?}\n{listing}"
                    );
                    runs += 1;
                    match &got {
                        Seen::Done(_, _, d) => dropped += usize::from(!d.is_empty()),
                        Seen::Fault(..) => faulted += 1,
                    }
                }
            }
        }
    }
    eprintln!(
        "package oracle: {count} packages ({modules} modules, {crossing} roots calling into providers, \
         {nested} with a provider calling into another), {runs} runs ({dropped} with drops, {faulted} faulted), 0 mismatches"
    );
    assert!(runs >= count as usize, "only {runs} runs");
    assert!(
        count < 12 || crossing * 2 >= count as usize,
        "too few calls across modules"
    );
}

#[test]
fn generated_packages_are_deterministic_and_checked() {
    for seed in 0..48 {
        let p = zlm::testgen::package_text(seed);
        assert_eq!(
            package_listing(&p),
            package_listing(&zlm::testgen::package_text(seed))
        );
        checked_package(&p);
    }
}
