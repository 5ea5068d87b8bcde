//! Packages of modules: cross-module calls, constructions and field symbols
//! resolve against the public members of direct-dependency providers
//! (private, transitive-only, unresolved and stale targets reject with
//! stable codes), are checked across the call as within a module, and run
//! in the interpreter with drop logs, faults, steps and depth limits as
//! within one module.

mod c_engine_common;

use zlm::decode::{Checked, decode, from_model};
use zlm::hash::to_hex;
use zlm::interp::{FaultKind, Interp, Limits, RunError, Value};
use zlm::package::Package;

fn example(name: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

fn check(text: &str, providers: &[&Checked]) -> zlm::Result<Checked> {
    from_model(&zlm::text::parse(text)?, providers)
}

fn store() -> Checked {
    check(&example("pkg_store.zlt"), &[]).unwrap()
}

/// The position of declaration `name` in `c`.
fn decl_index(c: &Checked, name: &str) -> usize {
    c.module()
        .declarations
        .iter()
        .position(|x| x.name == name)
        .unwrap()
}

/// The hex signature ID of `Decl.function` in `c`.
fn sig(c: &Checked, name: &str) -> String {
    let (d, f) = name.split_once('.').unwrap();
    let di = decl_index(c, d);
    let fi = c.module().declarations[di]
        .functions
        .iter()
        .position(|x| x.name == f)
        .unwrap();
    to_hex(&c.ids().decls[di].functions[fi].sig)
}

/// `text` with the provider's interface digest and signature IDs filled in.
fn link(text: &str, p: &Checked) -> String {
    text.replace("IFACE", &to_hex(&p.ids().module_interface))
        .replace("#MAKE", &format!("#{}", sig(p, "Cell.make")))
        .replace("#TAKE", &format!("#{}", sig(p, "Cell.take")))
        .replace("#PEEK", &format!("#{}", sig(p, "Cell.peek")))
        .replace("#HIDDEN", &format!("#{}", sig(p, "Cell.hidden")))
}

/// The example root linked against `p` (the example carries the exact
/// provider's interface digest; a provider under another profile has
/// another one).
fn main_text(p: &Checked) -> String {
    let exact = to_hex(&store().ids().module_interface);
    example("pkg_main.zlt").replace(&exact, &to_hex(&p.ids().module_interface))
}

fn package() -> Package {
    let p = store();
    let root = check(&main_text(&p), &[&p]).unwrap();
    Package::new(root, vec![p]).unwrap()
}

fn drops(d: &[zlm::interp::DropEvent]) -> Vec<String> {
    d.iter().map(|e| e.to_string()).collect()
}

#[test]
fn a_call_into_a_provider_runs_with_its_drop_log() {
    let pkg = package();
    let it = Interp::of_package(&pkg);
    let out = it.run("Main.demo", &[Value::Scalar(5)]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "11");
    assert_eq!(
        drops(&out.drops),
        [
            "run.pkg_store::Cell.take: drop p0 : Cell",
            "Main.demo: drop l0 : Cell",
        ]
    );
    // Steps count the provider's operations as within one module: demo's
    // 10 and its recipe's 1, make's 3 twice, peek's 2, take's 4 and its
    // recipe's 1.
    assert_eq!(out.steps, 10 + 1 + 3 + 3 + 2 + 4 + 1);
}

#[test]
fn a_fault_in_the_provider_names_its_module_and_unwinds_both_frames() {
    let pkg = package();
    let it = Interp::of_package(&pkg);
    let Err(RunError::Fault { fault, drops: d }) =
        it.run("Main.demo", &[Value::Scalar(i32::MAX as u32 as u64)])
    else {
        panic!("expected a fault")
    };
    assert_eq!(fault.function, "run.pkg_store::Cell.take");
    assert_eq!((fault.block, fault.op), (Some(0), Some(2)));
    assert_eq!(fault.kind, FaultKind::Overflow);
    assert_eq!(
        drops(&d),
        [
            "run.pkg_store::Cell.take: drop p0 : Cell",
            "Main.demo: drop l0 : Cell",
        ]
    );
}

#[test]
fn step_and_depth_limits_hold_across_modules() {
    let pkg = package();
    let limited = Interp::of_package(&pkg).with_limits(Limits {
        steps: 14,
        ..Limits::default()
    });
    let Err(RunError::Fault { fault, .. }) = limited.run("Main.demo", &[Value::Scalar(1)]) else {
        panic!("expected the step limit")
    };
    // demo's first 7 operations (3 + 2 + ... inside make and peek) reach 14
    // inside the second make.
    assert_eq!(fault.kind, FaultKind::StepLimit);
    assert_eq!(fault.function, "run.pkg_store::Cell.make");
    let shallow = Interp::of_package(&pkg).with_limits(Limits {
        depth: 1,
        ..Limits::default()
    });
    let Err(RunError::Fault { fault, drops: d }) = shallow.run("Main.demo", &[Value::Scalar(1)])
    else {
        panic!("expected the depth limit")
    };
    assert_eq!(fault.kind, FaultKind::DepthLimit);
    assert_eq!(fault.function, "Main.demo");
    assert_eq!((fault.block, fault.op), (Some(0), Some(1)));
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn the_provider_computes_under_its_own_profile() {
    let p = check(
        &example("pkg_store.zlt").replace("profile exact", "profile modular"),
        &[],
    )
    .unwrap();
    let root = check(&main_text(&p), &[&p]).unwrap();
    let pkg = Package::new(root, vec![p]).unwrap();
    let it = Interp::of_package(&pkg);
    // take wraps in the modular provider; demo's own add (exact) then
    // computes 2147483647 + -2147483648 = -1.
    let out = it
        .run("Main.demo", &[Value::Scalar(i32::MAX as u32 as u64)])
        .unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "-1");
}

#[test]
fn a_module_that_calls_into_others_runs_only_as_a_package() {
    let p = store();
    let root = check(&main_text(&p), &[&p]).unwrap();
    assert!(root.names_other_modules());
    let Err(RunError::Invalid(e)) = Interp::new(&root) else {
        panic!("Interp::new must refuse")
    };
    assert_eq!(e.code, "ZLM-PACKAGE", "{e}");
    // Without providers the module decodes (it can be printed) but is not linked.
    let bytes = zlm::write::write(root.module()).unwrap();
    let alone = decode(&bytes).unwrap();
    assert!(!alone.imports_resolved());
    let e = Package::new(alone, vec![]).unwrap_err();
    assert_eq!(e.code, "ZLM-PACKAGE", "{e}");
    // A package without the provider, or with another version of it.
    let e = Package::new(root.clone(), vec![]).unwrap_err();
    assert_eq!(e.code, "ZLM-PACKAGE", "{e}");
    assert!(e.message.contains("missing"), "{e}");
    let other = check(
        &example("pkg_store.zlt").replace("c:Int32:7", "c:Int32:8"),
        &[],
    )
    .unwrap();
    assert_eq!(other.ids().module_interface, p.ids().module_interface);
    let e = Package::new(root, vec![other]).unwrap_err();
    assert_eq!(e.code, "ZLM-PACKAGE", "{e}");
    assert!(e.message.contains("content identity differs"), "{e}");
}

/// The root with `Main.demo` replaced by `body` (a whole function).
fn root_with(p: &Checked, body: &str) -> String {
    let head = main_text(p);
    let cut = head.find("decl value Main public").unwrap();
    link(
        &format!("{}decl value Main public\n{body}", &head[..cut]),
        p,
    )
}

fn code_of(r: zlm::Result<Checked>) -> (String, String) {
    let e = r.unwrap_err();
    (e.code.to_string(), e.message)
}

#[test]
fn private_transitive_unresolved_and_stale_targets_reject() {
    let p = store();
    let call = |callee: &str| {
        format!(
            "  func message type f public -> Int32 effects []
    block 0
      call Int32 | func:{callee} effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
"
        )
    };
    // A function of module visibility is not in the interface.
    let (c, m) = code_of(check(&root_with(&p, &call("#HIDDEN")), &[&p]));
    assert_eq!(c, "ZLM-LINK", "{m}");
    assert!(m.contains("not a public member"), "{m}");
    // A public function of a supplied module the root does not import from.
    let other = check(
        &example("pkg_store.zlt").replace("module run.pkg_store", "module run.pkg_other"),
        &[],
    )
    .unwrap();
    // The root imports only run.pkg_store; run.pkg_other is supplied too.
    let zero = format!(
        "  func message type f public -> Int32 effects []
    path t%0.1 @run.pkg_store::Cell
    block 0
      const Int32 c:Int32:1 | - -
      call @run.pkg_store::Cell %0.0 | func:#{} effects:[]
      call Int32 %0.1 | func:#TAKE effects:[]
      return - %0.2 | - -
    edge 0 return 0 exit
",
        sig(&other, "Cell.make")
    );
    let (c, m) = code_of(check(&root_with(&p, &zero), &[&p, &other]));
    assert_eq!(c, "ZLM-LINK", "{m}");
    assert!(m.contains("transitive-only"), "{m}");
    // An ID that names nothing.
    let (c, m) = code_of(check(
        &root_with(&p, &call(&format!("#{}", "ab".repeat(32)))),
        &[&p],
    ));
    assert_eq!(c, "ZLM-LINK", "{m}");
    assert!(m.contains("does not resolve"), "{m}");
    // A provider whose interface changed (a new public function): stale.
    let changed = check(
        &example("pkg_store.zlt").replace(
            "func message type hidden module",
            "func message type hidden public",
        ),
        &[],
    )
    .unwrap();
    let (c, m) = code_of(check(&main_text(&p), &[&changed]));
    assert_eq!(c, "ZLM-IMPORT", "{m}");
    assert!(m.contains("stale"), "{m}");
    // With no imports there is no direct dependency to call into.
    let lone = format!(
        "zlm 1.9 package demo module t.lone profile exact mode checked\n\ndecl value Main public\n{}",
        link(&call("#TAKE"), &p)
    );
    let (c, m) = code_of(check(&lone, &[&p]));
    assert_eq!(c, "ZLM-LINK", "{m}");
}

#[test]
fn calls_across_modules_are_typed_effect_checked_and_ownership_checked() {
    let p = store();
    // An argument of the wrong type.
    let wrong = "  func message type f public -> Int32 effects []
    path t%0.1 @run.pkg_store::Cell
    block 0
      const Int64 c:Int64:1 | - -
      call @run.pkg_store::Cell %0.0 | func:#MAKE effects:[]
      call Int32 %0.1 | func:#TAKE effects:[]
      return - %0.2 | - -
    edge 0 return 0 exit
";
    let (c, m) = code_of(check(&root_with(&p, wrong), &[&p]));
    assert_eq!(c, "ZLM-C-TYPE", "{m}");
    // A result type other than the callee's.
    let result = wrong
        .replace("const Int64 c:Int64:1", "const Int32 c:Int32:1")
        .replace("call Int32 %0.1", "call Int64 %0.1");
    let result = result.replace("-> Int32 effects []", "-> Int64 effects []");
    let (c, m) = code_of(check(&root_with(&p, &result), &[&p]));
    assert_eq!(c, "ZLM-C-TYPE", "{m}");
    // An effect auxiliary other than the callee's effect set.
    let effects = wrong
        .replace("const Int64 c:Int64:1", "const Int32 c:Int32:1")
        .replace("func:#TAKE effects:[]", "func:#TAKE effects:[io]");
    let (c, m) = code_of(check(&root_with(&p, &effects), &[&p]));
    assert_eq!(c, "ZLM-C-EFFECT", "{m}");
    // A leaked owner: the provider's Cell is never consumed.
    let leak = "  func message type f public -> Int32 effects []
    path t%0.1 @run.pkg_store::Cell
    block 0
      const Int32 c:Int32:1 | - -
      call @run.pkg_store::Cell %0.0 | func:#MAKE effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
";
    let (c, m) = code_of(check(&root_with(&p, leak), &[&p]));
    assert_eq!(c, "ZLM-C-CLEANUP", "{m}");
    assert!(m.contains("live owners"), "{m}");
    // A moved owner used again: handed to take twice.
    let twice = "  func message type f public -> Int32 effects []
    path t%0.1 @run.pkg_store::Cell
    block 0
      const Int32 c:Int32:1 | - -
      call @run.pkg_store::Cell %0.0 | func:#MAKE effects:[]
      call Int32 %0.1 | func:#TAKE effects:[]
      call Int32 %0.1 | func:#TAKE effects:[]
      return - %0.2 | - -
    edge 0 return 0 exit
";
    let (c, m) = code_of(check(&root_with(&p, twice), &[&p]));
    assert!(c == "ZLM-C-OWN" || c == "ZLM-C-SSA", "{c}: {m}");
    // A loaned owner moved into the provider while the loan passed to it
    // later is still live.
    let loan = "  func message type f public -> Int32 effects []
    local 0 keep @run.pkg_store::Cell
    path l0 @run.pkg_store::Cell
    path t%0.1 @run.pkg_store::Cell
    path t%0.4 @run.pkg_store::Cell
    loan 0 shared l0 - Ref<@run.pkg_store::Cell> %0.3 %0.6
    block 0
      const Int32 c:Int32:1 | - -
      call @run.pkg_store::Cell %0.0 | func:#MAKE effects:[]
      store_local - $l0 %0.1 | path:l0 -
      borrow_shared Ref<@run.pkg_store::Cell> $l0 | loan:0 -
      place_move @run.pkg_store::Cell $l0 | path:l0 -
      call Int32 %0.4 | func:#TAKE effects:[]
      call Int32 %0.3 | func:#PEEK effects:[]
      return - %0.6 | - -
    edge 0 return 0 exit
";
    let (c, m) = code_of(check(&root_with(&p, loan), &[&p]));
    assert_eq!(c, "ZLM-C-LOAN", "{m}");
}

#[test]
fn the_package_holds_only_the_providers_modules_link_against() {
    let p = store();
    let unrelated = check(
        &example("pkg_store.zlt").replace("module run.pkg_store", "module run.pkg_other"),
        &[],
    )
    .unwrap();
    let root = check(&main_text(&p), &[&p, &unrelated]).unwrap();
    assert_eq!(root.links().len(), 1);
    let pkg = Package::new(root, vec![unrelated, p]).unwrap();
    let names: Vec<&str> = pkg
        .modules()
        .iter()
        .map(|m| m.module().name.as_str())
        .collect();
    assert_eq!(names, ["run.pkg_main", "run.pkg_store"]);
}

/// The provider with an enum beside `Cell`, and a private-field value.
fn store_with_enum() -> Checked {
    let text = example("pkg_store.zlt")
        + "
decl enum Mark public
  variant 0 Plain
  variant 1 Scored
    pfield 0 score Int32

decl value Sealed public
  field 0 v private let Int32

decl value Math public
  func message type twice public -> Int32 effects []
    param 0 x Int32
    path p0 Int32
    block 0
      load_local Int32 $p0 | path:p0 -
      add Int32 %0.0 %0.0 | - -
      return - %0.1 | - -
    edge 0 return 0 exit
";
    check(&text, &[]).unwrap()
}

fn field_id(c: &Checked, d: &str, f: &str) -> String {
    let di = decl_index(c, d);
    let fi = c.module().declarations[di]
        .fields
        .iter()
        .position(|x| x.name == f)
        .unwrap();
    to_hex(&c.ids().decls[di].fields[fi])
}

fn variant_id(c: &Checked, d: &str, v: &str) -> String {
    let di = decl_index(c, d);
    let vi = c.module().declarations[di]
        .variants
        .iter()
        .position(|x| x.name == v)
        .unwrap();
    to_hex(&c.ids().decls[di].variants[vi].0)
}

/// A root importing `names` from `p` with one function (an import's Copy
/// flag travels with the type that names it, so only used imports).
fn constructing_root(p: &Checked, names: &[&str], body: &str) -> String {
    let iface = to_hex(&p.ids().module_interface);
    let copy = |name: &str| {
        let di = p
            .module()
            .declarations
            .iter()
            .position(|x| x.name == name)
            .unwrap();
        if p.ids().decls[di].copy {
            "copy"
        } else {
            "move"
        }
    };
    let mut text =
        "zlm 1.9 package demo module run.pkg_main profile exact mode checked\n".to_string();
    for n in names {
        let kind = if *n == "Mark" { "enum" } else { "value" };
        text.push_str(&format!(
            "import run.pkg_store {n} {kind} {} interface {iface}\n",
            copy(n)
        ));
    }
    text.push_str(&format!("\ndecl value Main public\n{body}"));
    link(&text, p)
        .replace("#CELL_V", &format!("#{}", field_id(p, "Cell", "v")))
        .replace("#SCORED", &format!("#{}", variant_id(p, "Mark", "Scored")))
        .replace("#PLAIN", &format!("#{}", variant_id(p, "Mark", "Plain")))
}

#[test]
fn constructions_and_field_symbols_of_provider_declarations_run() {
    let p = store_with_enum();
    // Build a provider Cell here, read its public field, test and build
    // a provider enum variant, and hand the cell to the provider.
    let body = "  func message type build public -> Int32 effects []
    param 0 x Int32
    local 0 keep @run.pkg_store::Cell
    path p0 Int32
    path l0 @run.pkg_store::Cell
    path t%0.1 @run.pkg_store::Cell
    path t%0.5 @run.pkg_store::Cell
    block 0
      load_local Int32 $p0 | path:p0 -
      aggregate_construct @run.pkg_store::Cell %0.0 | decl:@run.pkg_store::Cell lit:1
      store_local - $l0 %0.1 | path:l0 -
      field_copy Int32 $l0 | field:#CELL_V -
      variant_construct @run.pkg_store::Mark %0.3 | variant:#SCORED lit:1
      place_move @run.pkg_store::Cell $l0 | path:l0 -
      call Int32 %0.5 | func:#TAKE effects:[]
      return - %0.6 | - -
    edge 0 return 0 exit
";
    let root = check(&constructing_root(&p, &["Cell", "Mark"], body), &[&p])
        .unwrap_or_else(|e| panic!("{e}"));
    let pkg = Package::new(root, vec![p]).unwrap();
    let it = Interp::of_package(&pkg);
    let out = it.run("Main.build", &[Value::Scalar(41)]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "42");
    assert_eq!(
        drops(&out.drops),
        ["run.pkg_store::Cell.take: drop p0 : Cell"]
    );
    // The C engine lowers the same constructions and field symbols.
    let unit = zlm::materialize::c::emit_package(
        &pkg,
        &zlm::materialize::c::TargetConfig::default(),
        &zlm::materialize::c::Scope::Module,
    )
    .unwrap();
    let program = c_engine_common::build(&unit, &c_engine_common::compiler("cc"));
    for x in [41u64, 0, i32::MAX as u32 as u64] {
        assert_eq!(
            c_engine_common::c_run(&program, "Main.build", &[x], Limits::default()),
            c_engine_common::interp_run(&it, "Main.build", &[x]).unwrap(),
            "x={x}"
        );
    }
}

#[test]
fn a_provider_value_with_a_private_field_cannot_be_built_elsewhere() {
    let p = store_with_enum();
    let body = "  func message type seal public -> Int32 effects []
    path t%0.1 @run.pkg_store::Sealed
    block 0
      const Int32 c:Int32:1 | - -
      aggregate_construct @run.pkg_store::Sealed %0.0 | decl:@run.pkg_store::Sealed lit:1
      const Int32 c:Int32:0 | - -
      return - %0.2 | - -
    edge 0 return 0 exit
      place_drop - $t%0.1 | path:t%0.1 -
";
    let (c, m) = code_of(check(&constructing_root(&p, &["Sealed"], body), &[&p]));
    assert_eq!(c, "ZLM-LINK", "{m}");
    assert!(m.contains("not every field of it is public"), "{m}");
}

#[test]
fn providers_that_import_from_each_other_decode_in_dependency_order() {
    // A generated package whose second provider calls into the first.
    let p = (0..64)
        .map(zlm::testgen::package_text)
        .find(|p| p.providers.len() == 2 && p.providers[1].contains("func:#"))
        .expect("a nested package");
    let bytes: Vec<Vec<u8>> = p
        .providers
        .iter()
        .map(|t| zlm::write::write(&zlm::text::parse(t).unwrap()).unwrap())
        .collect();
    // Given in the wrong order, both end up linked.
    let given = [bytes[1].as_slice(), bytes[0].as_slice()];
    let providers = zlm::package::decode_providers(&given).unwrap();
    assert!(providers.iter().all(|c| c.imports_resolved()));
    assert!(providers[0].names_other_modules());
    let refs: Vec<&Checked> = providers.iter().collect();
    let root = check(&p.root, &refs).unwrap();
    let pkg = Package::new(root, providers.clone()).unwrap();
    assert_eq!(pkg.modules().len(), 3);
    // Without the first provider, the second cannot join a package.
    let alone = zlm::package::decode_providers(&[bytes[1].as_slice()]).unwrap();
    assert!(!alone[0].imports_resolved());
    let e = Package::new(alone[0].clone(), vec![]).unwrap_err();
    assert_eq!(e.code, "ZLM-PACKAGE", "{e}");
}

#[test]
fn a_contract_calls_a_provider_function_on_both_engines() {
    let p = store_with_enum();
    let twice = sig(&p, "Math.twice");
    let body = format!(
        "  func message type guarded public -> Int32 effects []
    param 0 x Int32
    requires
      cop pure_call Int32 p0 | 0 0 func:#{twice}
      cop lt Bool v0 c:Int32:100 | 0 0 -
    path p0 Int32
    block 0
      load_local Int32 $p0 | path:p0 -
      return - %0.0 | - -
    edge 0 return 0 exit
"
    );
    let root =
        check(&constructing_root(&p, &["Cell"], &body), &[&p]).unwrap_or_else(|e| panic!("{e}"));
    let pkg = Package::new(root, vec![p]).unwrap();
    let it = Interp::of_package(&pkg);
    let out = it.run("Main.guarded", &[Value::Scalar(10)]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "10");
    let Err(RunError::Fault { fault, .. }) = it.run("Main.guarded", &[Value::Scalar(60)]) else {
        panic!("expected the requires clause to fail")
    };
    assert_eq!(fault.kind, FaultKind::Contract("requires 0".into()));
    let unit = zlm::materialize::c::emit_package(
        &pkg,
        &zlm::materialize::c::TargetConfig::default(),
        &zlm::materialize::c::Scope::Module,
    )
    .unwrap();
    let program = c_engine_common::build(&unit, &c_engine_common::compiler("cc"));
    for x in [10u64, 49, 50, 60, i32::MAX as u32 as u64] {
        assert_eq!(
            c_engine_common::c_run(&program, "Main.guarded", &[x], Limits::default()),
            c_engine_common::interp_run(&it, "Main.guarded", &[x]).unwrap(),
            "x={x}"
        );
    }
}
