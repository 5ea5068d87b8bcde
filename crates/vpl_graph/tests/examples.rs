//! The example graphs compile to canonical, verified VPL, deterministically
//! (byte-identical for the same graph, whatever the order of its nodes and
//! edges in the file).

use std::path::{Path, PathBuf};
use vpl_graph::{Options, compile, format::Document};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vpl/graphs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "examples in {}", dir.display());
    files
}

#[test]
fn examples_compile_to_canonical_verified_text() {
    for path in examples() {
        let json = std::fs::read_to_string(&path).unwrap();
        let compiled = compile(&json, "gen", Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Canonical: the writer reproduces the text byte for byte.
        let rewritten = vpl::text::write_verified(&compiled.verified).unwrap();
        assert_eq!(rewritten, compiled.text, "{} is not canonical", path.display());
        // Deterministic.
        let again = compile(&json, "gen", Options::default()).unwrap();
        assert_eq!(again.text, compiled.text);
        // Independent of the order of nodes and edges in the file.
        let mut doc: Document = serde_json::from_str(&json).unwrap();
        doc.nodes.reverse();
        doc.edges.reverse();
        for f in &mut doc.functions {
            f.nodes.reverse();
            f.edges.reverse();
        }
        let shuffled = vpl_graph::compile_document(&doc, "gen", Options::default()).unwrap();
        assert_eq!(shuffled.text, compiled.text, "{}", path.display());
        // The annotated text is the same module.
        let annotated = compile(&json, "gen", Options { annotate: true }).unwrap();
        assert!(annotated.text.contains("// "));
        assert_eq!(vpl::text::write_verified(&annotated.verified).unwrap(), compiled.text);
    }
}

#[test]
fn subgraph_used_twice_is_one_helper_called_twice() {
    let json = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vpl/graphs/subgraph_twice.json"),
    )
    .unwrap();
    let text = compile(&json, "gen", Options::default()).unwrap().text;
    assert_eq!(text.matches("(function f1 \"fade\"").count(), 1, "{text}");
    assert_eq!(text.matches("(call r").count(), 2, "{text}");
    assert!(text.contains("(branch_if "), "select lowers to a branch: {text}");
}

#[test]
fn textured_example_records_its_sampler_state() {
    let json = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vpl/graphs/textured_tint.json"),
    )
    .unwrap();
    let compiled = compile(&json, "gen", Options::default()).unwrap();
    assert_eq!(compiled.samplers.len(), 1);
    let (name, state) = &compiled.samplers[0];
    assert_eq!(name, "albedo");
    assert_eq!(state.wrap, vpl_graph::Wrap::Repeat);
    assert_eq!(state.min_filter, vpl_graph::MinFilter::Nearest);
    assert!(!state.mag_linear);
}
