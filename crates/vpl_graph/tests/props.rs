//! Property tests: random well-typed graphs always give verified,
//! canonical modules; random ill-typed graphs (and arbitrary bytes) give
//! graph diagnostics, never a VPL verifier error or a panic.

mod common;

use proptest::prelude::*;
use serde_json::Value;
use vpl_graph::{CompileError, ErrorKind, Options, compile};

fn outcome(doc: &Value) -> Result<vpl_graph::Compiled, CompileError> {
    compile(&doc.to_string(), "gen", Options::default())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn well_typed_graphs_verify(seed in any::<u64>(), depth in 1u32..6) {
        let doc = common::Gen::document(seed, depth);
        match outcome(&doc) {
            Ok(c) => {
                let canonical = vpl::text::write_verified(&c.verified).unwrap();
                prop_assert_eq!(canonical, c.text);
            }
            Err(e) => panic!("{e}\n{}", serde_json::to_string_pretty(&doc).unwrap()),
        }
    }

    #[test]
    fn removing_a_required_edge_is_a_missing_input(seed in any::<u64>(), depth in 1u32..5, pick in any::<usize>()) {
        let mut doc = common::Gen::document(seed, depth);
        // Combine inputs are optional: pick an edge into another kind.
        let nodes: Vec<Value> = doc["nodes"].as_array().unwrap().clone();
        let edges = doc["edges"].as_array_mut().unwrap();
        let required: Vec<usize> = edges.iter().enumerate().filter(|(_, e)| {
            let to = e["to"].as_str().unwrap();
            let (id, socket) = to.split_once('.').unwrap();
            let kind = nodes.iter().find(|n| n["id"] == id).unwrap()["kind"].as_str().unwrap().to_string();
            !(kind == "combine" || (kind == "material_output" && socket == "opacity"))
        }).map(|(i, _)| i).collect();
        prop_assume!(!required.is_empty());
        edges.remove(required[pick % required.len()]);
        match outcome(&doc) {
            Err(CompileError::Graph(es)) => prop_assert!(es.iter().any(|e| e.kind == ErrorKind::MissingInput), "{es:?}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("compiled without a required edge"),
        }
    }

    #[test]
    fn rewired_graphs_give_graph_diagnostics_or_verify(seed in any::<u64>(), depth in 1u32..5, a in any::<usize>(), b in any::<usize>()) {
        let mut doc = common::Gen::document(seed, depth);
        let edges = doc["edges"].as_array_mut().unwrap();
        let n = edges.len();
        // Move one edge's source to another edge's source: often a type error, sometimes a cycle.
        let from = edges[a % n]["from"].clone();
        edges[b % n]["from"] = from;
        // And sometimes feed a producer from its own consumer.
        if a % 3 == 0 {
            let to = edges[a % n]["to"].as_str().unwrap().split('.').next().unwrap().to_string();
            let from_node = edges[b % n]["from"].as_str().unwrap().split('.').next().unwrap().to_string();
            edges.push(serde_json::json!({"from": format!("{to}"), "to": format!("{from_node}.x")}));
        }
        match outcome(&doc) {
            Ok(c) => prop_assert_eq!(vpl::text::write_verified(&c.verified).unwrap(), c.text),
            Err(CompileError::Graph(es)) => prop_assert!(!es.is_empty()),
            Err(e) => panic!("{e}\n{}", serde_json::to_string_pretty(&doc).unwrap()),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        match compile(&text, "gen", Options::default()) {
            Ok(_) | Err(CompileError::Graph(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
}

/// The generator is not degenerate: over 200 seeds it makes sizeable
/// graphs and uses every kind the property tests rely on.
#[test]
fn generated_graphs_cover_the_node_kinds() {
    let mut kinds = std::collections::BTreeSet::new();
    let mut total = 0;
    for seed in 0..200 {
        let doc = common::Gen::document(seed, 5);
        let nodes = doc["nodes"].as_array().unwrap();
        total += nodes.len();
        kinds.extend(
            nodes
                .iter()
                .map(|n| n["kind"].as_str().unwrap().to_string()),
        );
    }
    for k in [
        "add",
        "subtract",
        "multiply",
        "divide",
        "negate",
        "one_minus",
        "abs",
        "saturate",
        "not",
        "min",
        "max",
        "step",
        "dot",
        "and",
        "or",
        "lerp",
        "clamp",
        "compare",
        "select",
        "swizzle",
        "split",
        "combine",
        "convert",
        "texture_sample",
        "call",
        "constant",
        "uniform",
        "uv",
        "vertex_color",
        "time",
        "material_output",
        "fragment_output",
    ] {
        assert!(
            kinds.contains(k),
            "no {k} in 200 generated graphs: {kinds:?}"
        );
    }
    assert!(total / 200 >= 8, "average {} nodes", total / 200);
    eprintln!("200 graphs, {} nodes on average", total / 200);
}

/// The benchmark's 500-node graph: the module built and verified directly
/// is the module the text spells (the canonical writer prints it as the
/// text), and reading the text gives a module the writer prints the same.
#[test]
fn large_graph_builds_the_module_its_text_spells() {
    let doc = common::sized(0x5eed, 500);
    let c = vpl_graph::compile(&doc.to_string(), "large", vpl_graph::Options::default())
        .expect("the 500-node graph compiles");
    assert_eq!(vpl::text::write_verified(&c.verified).unwrap(), c.text);
    let read = vpl::text::read(c.text.as_bytes(), "large").expect("the text reads back");
    assert_eq!(vpl::text::write(&read).unwrap(), c.text);
    assert!(c.text.len() > 50_000, "{} bytes", c.text.len());
}
