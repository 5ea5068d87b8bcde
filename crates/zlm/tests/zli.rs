//! Canonical `.zli` interface text (docs/zlm/interface.md): goldens of every
//! example module, independence from in-memory collection order, what the
//! interface does and does not depend on, rejections, and a property test
//! over generated modules.

mod zli_common;

use proptest::prelude::*;
use zli_common::*;
use zlm::model::*;

/// The golden file name of a module's interface.
fn zli_name(m: &Module) -> String {
    format!("zli/{}.zli", m.name)
}

#[test]
fn example_interfaces_match_their_goldens() {
    let all = example_package();
    let mut names = Vec::new();
    for c in &all {
        let text = zlm::zli::interface(c).unwrap();
        golden(&zli_name(c.module()), &text);
        names.push(format!("{}.zli", c.module().name));
    }
    names.sort();
    assert_eq!(
        golden_files("zli"),
        names,
        "one golden per example module, none stale"
    );
}

#[test]
fn shapes_interface_text() {
    // The exact bytes for one module, so a reader sees the layout here.
    let all = example_package();
    let shapes = all
        .iter()
        .find(|c| c.module().name == "geo.shapes")
        .unwrap();
    let text = zlm::zli::interface(shapes).unwrap();
    let ids = shapes.ids();
    let want = format!(
        "zli 1\n\
         module geo.shapes package demo profile exact\n\
         catalog zerglang.selfhost-intrinsics/1 {}\n\
         interface {}\n",
        zlm::hash::to_hex(&ids.catalog),
        zlm::hash::to_hex(&ids.module_interface)
    );
    assert!(text.starts_with(&want), "{text}");
    // The module-visibility message `unit` and the private field `y` are not
    // part of the interface; the public field, both variants and the public
    // message with its contract are.
    assert!(!text.contains("unit"), "{text}");
    assert!(!text.contains(" y:"), "{text}");
    assert!(
        text.contains(
            "public enum Shape copy {\n    variant Empty;\n    variant Circle(radius: Int64);\n}\n"
        ),
        "{text}"
    );
    assert!(text.contains(
        "public value Point move {\n    public let x: Int32;\n    public algorithm message sum(self: Ref<Point>, bias: Int64) -> Int32 effects [] requires { (bias < 100i64); } ensures { (result != -2147483648i32); };\n}\n"
    ), "{text}");
}

#[test]
fn canvas_names_its_dependency_and_imported_types() {
    let all = example_package();
    let shapes = all
        .iter()
        .find(|c| c.module().name == "geo.shapes")
        .unwrap();
    let canvas = all
        .iter()
        .find(|c| c.module().name == "geo.canvas")
        .unwrap();
    let text = zlm::zli::interface(canvas).unwrap();
    assert!(
        text.contains(&format!(
            "\ndependency geo.shapes {}\n",
            zlm::hash::to_hex(&shapes.ids().module_interface)
        )),
        "{text}"
    );
    assert!(
        text.contains("public let first: geo.shapes::Shape;"),
        "{text}"
    );
    assert!(
        text.contains("variant Full(capacity: UInt64, requested: UInt64);"),
        "{text}"
    );
    // A package prints providers first.
    let pkg = zlm::zli::package(&[canvas, shapes]).unwrap();
    let order: Vec<&str> = pkg.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order, ["geo.shapes", "geo.canvas"]);
    let again = zlm::zli::package(&[shapes, canvas]).unwrap();
    assert_eq!(pkg, again);
}

#[test]
fn permuting_logical_collections_leaves_the_interface_identical() {
    let models = example_models();
    let permuted_models: Vec<Module> = models.iter().map(permuted).collect();
    for (a, b) in models.iter().zip(&permuted_models) {
        assert_ne!(a, b, "{}: the permutation must change the model", a.name);
        assert_eq!(
            zlm::write::write(a).unwrap(),
            zlm::write::write(b).unwrap(),
            "{}",
            a.name
        );
    }
    let plain = link(&models);
    let shuffled = link(&permuted_models);
    for (a, b) in plain.iter().zip(&shuffled) {
        assert_eq!(
            zlm::zli::interface(a).unwrap(),
            zlm::zli::interface(b).unwrap()
        );
    }
    // The package order does not depend on the order modules are given in.
    let fwd: Vec<&zlm::decode::Checked> = plain.iter().collect();
    let rev: Vec<&zlm::decode::Checked> = plain.iter().rev().collect();
    assert_eq!(
        zlm::zli::package(&fwd).unwrap(),
        zlm::zli::package(&rev).unwrap()
    );
}

fn checked(m: &Module) -> zlm::decode::Checked {
    zlm::decode::from_model(m, &[]).unwrap()
}

fn shapes_text() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/shapes.zlt"
    ))
    .unwrap()
}

/// `text` with `from` replaced by `to` (exactly once), parsed. Mutating the
/// text keeps every ID-valued reference consistent (the text names fields
/// and declarations, the model holds their IDs).
fn mutated(text: &str, from: &str, to: &str) -> Module {
    assert_eq!(text.matches(from).count(), 1, "{from}");
    zlm::text::parse(&text.replace(from, to)).unwrap()
}

#[test]
fn private_facts_do_not_reach_the_interface() {
    let base = shapes_text();
    let text = zlm::zli::interface(&checked(&zlm::text::parse(&base).unwrap())).unwrap();
    // Another body of the module-visibility message `unit`, and a private
    // field renamed: same interface digest, same text.
    let body = mutated(&base, "c:Int64:18446744073709551615", "c:Int64:7");
    assert_eq!(zlm::zli::interface(&checked(&body)).unwrap(), text);
    let renamed = mutated(&base, "field 1 y private", "field 1 why private");
    assert_eq!(zlm::zli::interface(&checked(&renamed)).unwrap(), text);
    // A public field made private leaves the interface (the exported
    // contract of `sum` reads no field, so the module stays valid).
    let hidden = mutated(&base, "field 0 x public", "field 0 x private");
    let hidden_text = zlm::zli::interface(&checked(&hidden)).unwrap();
    assert!(!hidden_text.contains("x: Int32"), "{hidden_text}");
    assert_ne!(hidden_text, text);
}

#[test]
fn ownership_signatures_spell_receivers_owners_and_loans() {
    let all = example_package();
    let by_name =
        |n: &str| zlm::zli::interface(all.iter().find(|c| c.module().name == n).unwrap()).unwrap();
    let own = by_name("run.own");
    // A type receiver, an owned result, a shared receiver with a contract
    // that calls a pure message.
    assert!(
        own.contains(
            "    public algorithm message make(self: Class<Box>, x: Int32) -> Box effects [];\n"
        ),
        "{own}"
    );
    assert!(
        own.contains("public algorithm message at_least(self: Ref<Box>, limit: Int32) -> Bool effects [] requires { ((self.v) >= limit); } ensures { (result == ((self.get()) >= limit)); };"),
        "{own}"
    );
    let bytes = by_name("sdk.bytes");
    // The allocator loan parameter and an owned (moved) receiver.
    assert!(bytes.contains("move self: BytesBuilder"), "{bytes}");
    assert!(bytes.contains("effects [alloc]"), "{bytes}");
}

#[test]
fn names_that_do_not_resolve_uniquely_reject() {
    let base = example_models()
        .into_iter()
        .find(|m| m.name == "run.own")
        .unwrap();
    // A second declaration named Box (another kind): `Box` in the exported
    // signatures no longer names one declaration.
    let mut twin = base.clone();
    twin.declarations.push(Declaration {
        kind: DeclKind::Enum,
        name: "Box".into(),
        visibility: Visibility::Private,
        fields: vec![],
        variants: vec![Variant {
            tag: 0,
            name: "Only".into(),
            fields: vec![],
        }],
        functions: vec![],
    });
    let c = checked(&twin);
    let e = zlm::zli::interface(&c).unwrap_err();
    assert_eq!(e.code, zlm::zli::CODE, "{e}");
    assert!(e.message.contains("Box"), "{e}");
    // Reflection identifies by ID and still describes the module.
    zlm::reflect::reflect(&c).unwrap();

    // A second message `get` (another effect set, so another signature): the
    // exported contract of `at_least` spells `(self.get())`, which no longer
    // resolves to one message.
    let mut overload = base.clone();
    let bx = overload
        .declarations
        .iter_mut()
        .find(|d| d.name == "Box")
        .unwrap();
    let mut get = bx
        .functions
        .iter()
        .find(|f| f.name == "get")
        .unwrap()
        .clone();
    get.effects = vec![Effect::Io];
    bx.functions.push(get);
    let e = zlm::zli::interface(&checked(&overload)).unwrap_err();
    assert_eq!(e.code, zlm::zli::CODE, "{e}");
    assert!(e.message.contains("Box.get"), "{e}");
}

#[test]
fn a_name_that_is_not_an_identifier_rejects() {
    // Names are the decoder's and the writer's rule now (`ZLM-NAME`,
    // docs/zlm/format.md "Names"): such a module is never checked, so it
    // never reaches the interface printer.
    let m = zlm::text::parse(&shapes_text().replace("Point", "Po-int")).unwrap();
    let e = zlm::decode::from_model(&m, &[]).unwrap_err();
    assert_eq!(e.code, "ZLM-NAME", "{e}");
    assert!(zlm::zli::is_identifier("Point_2"));
    assert!(!zlm::zli::is_identifier("2Point"));
    assert!(zlm::zli::is_dotted("geo.shapes"));
    assert!(!zlm::zli::is_dotted("geo..shapes"));
}

#[test]
fn two_modules_with_one_namespace_reject() {
    let all = example_package();
    let e = zlm::zli::package(&[&all[0], &all[0]]).unwrap_err();
    assert_eq!(e.code, "ZLM-DUPLICATE", "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Interfaces of generated modules: printed without panicking, the same
    /// bytes on every run and under permutation, and every line ends with LF.
    #[test]
    fn generated_modules_print_deterministically(seed in any::<u64>()) {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap();
        let a = zlm::zli::interface(&checked(&m)).unwrap();
        let b = zlm::zli::interface(&checked(&permuted(&m))).unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert!(a.starts_with("zli 1\n") && a.ends_with('\n'));
        prop_assert!(!a.contains('\r') && !a.lines().any(|l| l.ends_with(' ')));
    }
}

/// A module with an initializer (callable kind one, receiver none) and a
/// message taking an owner by move.
const INIT_MODULE: &str = "zlm 1.9 package demo module t.init profile exact mode checked
decl error Bad public
  variant 0 Negative
decl value Meters public
  field 0 v public let Int32
  func init none init public -> Result<@Meters,@Bad> effects []
    param 0 x Int32
    requires
      cop ge Bool p0 c:Int32:0 | 0 0 -
    path p0 Int32
    path t%0.1 @Meters
    path t%0.2 Result<@Meters,@Bad>
    block 0
      load_local Int32 $p0 | path:p0 -
      aggregate_construct @Meters %0.0 | decl:@Meters lit:1
      result_ok_rich Result<@Meters,@Bad> %0.1 | type:Result<@Meters,@Bad> lit:0
      return - %0.2 | - -
    edge 0 return 0 exit
  func message type wrap public -> @Meters effects []
    param 0 m @Meters
    path p0 @Meters
    path t%0.0 @Meters
    block 0
      place_move @Meters $p0 | path:p0 -
      return - %0.0 | - -
    edge 0 return 0 exit
";

#[test]
fn initializers_and_move_parameters() {
    let c = checked(&zlm::text::parse(INIT_MODULE).unwrap());
    let text = zlm::zli::interface(&c).unwrap();
    assert!(
        text.contains("    public init(x: Int32) -> Result<Meters, Bad> effects [] requires { (x >= 0i32); };\n"),
        "{text}"
    );
    assert!(
        text.contains("    public algorithm message wrap(self: Class<Meters>, move m: Meters) -> Meters effects [];\n"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&zlm::reflect::reflect(&c).unwrap()).unwrap();
    let decls = v["modules"][0]["declarations"].as_array().unwrap();
    let meters = decls.iter().find(|d| d["name"] == "Meters").unwrap();
    let msgs = meters["messages"].as_array().unwrap();
    let init = msgs.iter().find(|f| f["name"] == "init").unwrap();
    assert_eq!(init["callable"], "init");
    assert_eq!(init["domain"], serde_json::Value::Null);
    assert_eq!(init["receiver"], serde_json::Value::Null);
    assert_eq!(init["result"]["ownership"], "move");
    let wrap = msgs.iter().find(|f| f["name"] == "wrap").unwrap();
    assert_eq!(wrap["params"][0]["move"], true);
    assert_eq!(wrap["params"][0]["ownership"], "move");
}
