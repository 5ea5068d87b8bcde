//! The C engine lowers a package into one translation unit (every reached
//! function of every module, named from its semantic identity with its
//! module) and observes exactly what the interpreter observes: results,
//! steps, drop logs and faults naming the provider's function.

mod c_engine_common;

use c_engine_common::{Seen, build, c_run, compiler, interp_run};
use zlm::decode::{Checked, from_model};
use zlm::hash::to_hex;
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::{Scope, TargetConfig, emit, emit_package};
use zlm::package::Package;

fn example(name: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

fn sig(c: &Checked, d: &str, f: &str) -> String {
    let di = c
        .module()
        .declarations
        .iter()
        .position(|x| x.name == d)
        .unwrap();
    let fi = c.module().declarations[di]
        .functions
        .iter()
        .position(|x| x.name == f)
        .unwrap();
    to_hex(&c.ids().decls[di].functions[fi].sig)
}

fn package(profile: &str) -> Package {
    let store = example("pkg_store.zlt").replace("profile exact", &format!("profile {profile}"));
    let p = from_model(&zlm::text::parse(&store).unwrap(), &[]).unwrap();
    // The example carries the exact provider's interface digest and
    // signature IDs (signatures do not depend on the profile).
    let exact = zlm::text::parse(&example("pkg_store.zlt")).unwrap();
    let exact = from_model(&exact, &[]).unwrap();
    for f in ["make", "take", "peek"] {
        assert!(example("pkg_main.zlt").contains(&sig(&p, "Cell", f)));
    }
    let root = example("pkg_main.zlt").replace(
        &to_hex(&exact.ids().module_interface),
        &to_hex(&p.ids().module_interface),
    );
    let root = from_model(&zlm::text::parse(&root).unwrap(), &[&p]).unwrap();
    Package::new(root, vec![p]).unwrap()
}

#[test]
fn a_package_runs_on_the_c_engine_as_on_the_interpreter() {
    let cc = compiler("cc");
    let mut compared = 0;
    for profile in ["exact", "modular", "approximate"] {
        let pkg = package(profile);
        let unit = emit_package(&pkg, &TargetConfig::default(), &Scope::Module).unwrap();
        let c = &unit.files[1].1;
        assert!(
            c.contains("zf_run_pkg_store__Cell_take_"),
            "provider functions carry their module"
        );
        assert!(
            c.contains("Provider run.pkg_store"),
            "the header lists the provider"
        );
        let program = build(&unit, &cc);
        for limits in [
            Limits::default(),
            Limits {
                steps: 14,
                ..Limits::default()
            },
            Limits {
                depth: 2,
                ..Limits::default()
            },
            Limits {
                depth: 1,
                ..Limits::default()
            },
        ] {
            let it = Interp::of_package(&pkg).with_limits(limits);
            for x in [0u64, 5, (i32::MAX as u32).into(), (i32::MIN as u32).into()] {
                let want = interp_run(&it, "Main.demo", &[x]).unwrap();
                let got = c_run(&program, "Main.demo", &[x], limits);
                assert_eq!(got, want, "{profile} x={x} {limits:?}");
                compared += 1;
            }
        }
    }
    // The exact provider's overflow is a fault of the provider's function.
    let pkg = package("exact");
    let unit = emit_package(&pkg, &TargetConfig::default(), &Scope::Module).unwrap();
    let program = build(&unit, &cc);
    let Seen::Fault(fault, drops) = c_run(
        &program,
        "Main.demo",
        &[(i32::MAX as u32).into()],
        Limits::default(),
    ) else {
        panic!("expected a fault")
    };
    assert!(
        fault.starts_with("fault in run.pkg_store::Cell.take block 0 op 2"),
        "{fault}"
    );
    assert_eq!(
        drops,
        [
            "run.pkg_store::Cell.take: drop p0 : Cell",
            "Main.demo: drop l0 : Cell"
        ]
    );
    assert_eq!(compared, 48);
}

#[test]
fn package_c_is_deterministic_and_a_lone_root_is_refused() {
    let a = emit_package(&package("exact"), &TargetConfig::default(), &Scope::Module).unwrap();
    let b = emit_package(&package("exact"), &TargetConfig::default(), &Scope::Module).unwrap();
    assert_eq!(a, b);
    let entry = emit_package(
        &package("exact"),
        &TargetConfig::default(),
        &Scope::Entry("Main.demo".into()),
    )
    .unwrap();
    // The entry scope reaches every provider function demo calls (make,
    // peek, take), not the unreached `hidden`.
    assert!(!entry.files[1].1.contains("Cell_hidden"));
    assert!(entry.files[1].1.contains("Cell_peek"));
    let pkg = package("exact");
    let e = emit(pkg.root(), &TargetConfig::default(), &Scope::Module).unwrap_err();
    assert_eq!(e.to_string().split(':').next(), Some("C0-EXEC-002"));
    assert!(e.message.contains("package"), "{e}");
}
