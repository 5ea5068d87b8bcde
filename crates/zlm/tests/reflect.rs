//! Canonical semantic reflection (C0-REFL-001/002, docs/zlm/reflection.md):
//! goldens of every example package, canonical JSON, independence from
//! in-memory order, what it reports, and a property test over generated
//! modules.

mod zli_common;

use proptest::prelude::*;
use serde_json::Value;
use zli_common::*;
use zlm::model::*;

fn doc(c: &zlm::decode::Checked) -> String {
    zlm::reflect::reflect(c).unwrap()
}

/// Every object's keys are in byte order and the text is the compact
/// serialization of its own parse (no whitespace, minimal escapes).
fn assert_canonical(text: &str) -> Value {
    assert!(text.ends_with('\n') && !text[..text.len() - 1].contains('\n'));
    let v: Value = serde_json::from_str(text).unwrap();
    fn keys_sorted(v: &Value) {
        match v {
            Value::Object(map) => {
                let keys: Vec<&String> = map.keys().collect();
                let mut sorted = keys.clone();
                sorted.sort();
                assert_eq!(keys, sorted);
                map.values().for_each(keys_sorted);
            }
            Value::Array(items) => items.iter().for_each(keys_sorted),
            Value::Number(n) => assert!(n.is_u64(), "integers only: {n}"),
            _ => {}
        }
    }
    keys_sorted(&v);
    assert_eq!(serde_json::to_string(&v).unwrap(), text.trim_end());
    v
}

#[test]
fn example_reflections_match_their_goldens() {
    let all = example_package();
    let mut names = Vec::new();
    for (i, c) in all.iter().enumerate() {
        let text = zlm::reflect::package(&package_of(&all, i), 0).unwrap();
        assert_canonical(&text);
        golden(&format!("reflect/{}.json", c.module().name), &text);
        names.push(format!("{}.json", c.module().name));
    }
    names.sort();
    assert_eq!(
        golden_files("reflect"),
        names,
        "one golden per example, none stale"
    );
}

fn find<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x[key] == name)
        .unwrap_or_else(|| panic!("no {key} {name} in {list}"))
}

#[test]
fn shapes_reflection_reports_every_required_fact() {
    let all = example_package();
    let shapes = all
        .iter()
        .find(|c| c.module().name == "geo.shapes")
        .unwrap();
    let v = assert_canonical(&doc(shapes));
    assert_eq!(v["schema"], "irkit.zlm.reflection/1");
    assert_eq!(v["root"], "geo.shapes");
    assert_eq!(v["catalog"]["id"], "zerglang.selfhost-intrinsics/1");
    let m = &v["modules"][0];
    let hex = zlm::hash::to_hex;
    assert_eq!(m["numeric_profile"], "exact");
    assert_eq!(m["verification"]["mode"], "checked");
    assert_eq!(m["verification"]["checked"], true);
    assert_eq!(m["verification"]["contract_bearing"], true);
    let ids = shapes.ids();
    assert_eq!(m["namespace"], hex(&ids.namespace));
    assert_eq!(
        m["identities"]["module_interface"],
        hex(&ids.module_interface)
    );
    assert_eq!(
        m["identities"]["module_content"],
        hex(&shapes.module_content())
    );
    let bytes = zlm::write::write(shapes.module()).unwrap();
    assert_eq!(m["identities"]["artifact"], hex(&zlm::address(&bytes)));
    // Public and retained private members, with their semantic IDs.
    let decls = &m["declarations"];
    let shape = find(decls, "name", "Shape");
    assert_eq!(shape["copy"], true);
    assert_eq!(shape["exported"], true);
    let unit = find(&shape["messages"], "name", "unit");
    assert_eq!(unit["visibility"], "module");
    assert_eq!(unit["domain"], "algorithm");
    assert_eq!(unit["receiver"]["ownership"], "type");
    assert_eq!(unit["receiver"]["runtime_slot"], false);
    assert_eq!(unit["effects"]["tags"], serde_json::json!(["io", "abort"]));
    assert_eq!(unit["dispatch"]["mode"], "static");
    assert_eq!(unit["contract"]["exported"], false);
    let point = find(decls, "name", "Point");
    assert_eq!(point["copy"], false);
    let y = find(&point["fields"], "name", "y");
    assert_eq!(y["visibility"], "private");
    assert_eq!(y["mutability"], "var");
    let sum = find(&point["messages"], "name", "sum");
    assert_eq!(sum["receiver"]["ownership"], "shared-loan");
    assert_eq!(sum["receiver"]["type"]["spelling"], "Ref<Point>");
    assert_eq!(sum["params"][0]["ownership"], "copy");
    assert_eq!(
        sum["contract"]["requires"],
        serde_json::json!(["(bias < 100i64)"])
    );
    assert_eq!(
        sum["contract"]["printer"],
        "zerglang.zli.contract-printer/1"
    );
    // The IDs are the recomputed identities.
    let d = shapes
        .module()
        .declarations
        .iter()
        .position(|d| d.name == "Point")
        .unwrap();
    let f = shapes.module().declarations[d]
        .functions
        .iter()
        .position(|f| f.name == "sum")
        .unwrap();
    let fids = &ids.decls[d].functions[f];
    assert_eq!(sum["signature"], hex(&fids.sig));
    assert_eq!(sum["contract"]["digest"], hex(&fids.contract));
    assert_eq!(sum["body"], hex(&fids.body));
    assert_eq!(point["definition"], hex(&ids.decls[d].definition));
    // Every type named is in the table, with its ID.
    let types = m["types"].as_array().unwrap();
    for t in [&sum["receiver"]["type"], &sum["result"]["type"], &y["type"]] {
        assert!(types.iter().any(|x| x["id"] == t["id"]), "{t}");
    }
    let ids_in_order: Vec<&str> = types.iter().map(|t| t["id"].as_str().unwrap()).collect();
    let mut sorted = ids_in_order.clone();
    sorted.sort();
    assert_eq!(ids_in_order, sorted);
    // No body is described beyond its digest.
    assert!(!doc(shapes).contains("\"ops\""));
}

#[test]
fn owned_and_loan_parameters_report_their_modes() {
    let all = example_package();
    let bytes = all.iter().find(|c| c.module().name == "sdk.bytes").unwrap();
    let v = assert_canonical(&doc(bytes));
    let decls = &v["modules"][0]["declarations"];
    let builder = find(decls, "name", "BytesBuilder");
    let finish = find(&builder["messages"], "name", "finish");
    assert_eq!(finish["receiver"]["ownership"], "move");
    assert_eq!(finish["result"]["ownership"], "move");
    let main = find(decls, "name", "Main");
    let demo = find(&main["messages"], "name", "demo");
    let alloc = demo["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["ownership"] == "allocator-loan");
    assert!(alloc.is_some(), "{demo}");
    assert_eq!(demo["effects"]["tags"], serde_json::json!(["alloc"]));
}

#[test]
fn permuting_logical_collections_leaves_reflection_identical() {
    let models = example_models();
    let plain = link(&models);
    let shuffled = link(&models.iter().map(permuted).collect::<Vec<_>>());
    for (i, (a, b)) in plain.iter().zip(&shuffled).enumerate() {
        assert_eq!(
            zlm::reflect::package(&package_of(&plain, i), 0).unwrap(),
            zlm::reflect::package(&package_of(&shuffled, i), 0).unwrap(),
            "{}",
            a.module().name
        );
        assert_eq!(doc(a), doc(b));
    }
    // Providers listed in either order give one document.
    let canvas = plain
        .iter()
        .position(|c| c.module().name == "geo.canvas")
        .unwrap();
    let pkg = package_of(&plain, canvas);
    let mut rev = pkg.clone();
    rev.reverse();
    assert_eq!(
        zlm::reflect::package(&pkg, 0).unwrap(),
        zlm::reflect::package(&rev, rev.len() - 1).unwrap()
    );
    let v: Value = serde_json::from_str(&zlm::reflect::package(&pkg, 0).unwrap()).unwrap();
    assert_eq!(v["root"], "geo.canvas");
    assert_eq!(v["modules"][0]["module"], "geo.shapes");
    assert_eq!(v["modules"][1]["module"], "geo.canvas");
    assert_eq!(v["modules"][1]["verification"]["imports_resolved"], true);
}

#[test]
fn a_private_change_changes_reflection_but_not_the_interface() {
    let mut m = example_models()
        .into_iter()
        .find(|m| m.name == "geo.shapes")
        .unwrap();
    let before = zlm::decode::from_model(&m, &[]).unwrap();
    let shape = m
        .declarations
        .iter_mut()
        .find(|d| d.name == "Shape")
        .unwrap();
    let unit = shape
        .functions
        .iter_mut()
        .find(|f| f.name == "unit")
        .unwrap();
    let Operand::Const(c) = &mut unit.body.blocks[0].ops[0].operands[0] else {
        panic!("unit starts with a constant");
    };
    c.bits = 5;
    let after = zlm::decode::from_model(&m, &[]).unwrap();
    assert_eq!(
        zlm::zli::interface(&before).unwrap(),
        zlm::zli::interface(&after).unwrap()
    );
    let (a, b) = (doc(&before), doc(&after));
    assert_ne!(a, b);
    let (va, vb): (Value, Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
    );
    let ma = &va["modules"][0];
    let mb = &vb["modules"][0];
    assert_eq!(
        ma["identities"]["module_interface"],
        mb["identities"]["module_interface"]
    );
    assert_ne!(
        ma["identities"]["module_content"],
        mb["identities"]["module_content"]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    /// Reflection of generated modules: no panic, canonical JSON, the same
    /// bytes on every run and under permutation.
    #[test]
    fn generated_modules_reflect_deterministically(seed in any::<u64>()) {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap();
        let a = doc(&zlm::decode::from_model(&m, &[]).unwrap());
        let b = doc(&zlm::decode::from_model(&permuted(&m), &[]).unwrap());
        prop_assert_eq!(&a, &b);
        assert_canonical(&a);
    }
}
