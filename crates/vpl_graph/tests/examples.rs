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
        assert_eq!(
            rewritten,
            compiled.text,
            "{} is not canonical",
            path.display()
        );
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
        assert_eq!(
            vpl::text::write_verified(&annotated.verified).unwrap(),
            compiled.text
        );
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
    assert!(
        text.contains("(branch_if "),
        "select lowers to a branch: {text}"
    );
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

/// Records, arrays, matrices, integer and boolean uniforms, conversions,
/// a second output and a helper with a texture: canonical and verified.
#[test]
fn aggregate_uniforms_and_every_input_verify() {
    let json = r#"{
      "version": 1,
      "records": [{"name": "Light", "fields": [{"name": "color", "type": "float3"}, {"name": "gains", "type": "float[2]"}]}],
      "functions": [{"name": "sample_twice", "inputs": [{"name": "at", "type": "float2"}], "output": "float4",
        "nodes": [{"id": "at", "kind": "parameter", "name": "at"},
                  {"id": "t", "kind": "texture_sample", "name": "tex", "wrap": "clamp_to_edge"},
                  {"id": "r", "kind": "return"}],
        "edges": [{"from": "at", "to": "t.uv"}, {"from": "t.rgba", "to": "r.value"}]}],
      "nodes": [
        {"id": "light", "kind": "uniform", "name": "light", "type": "Light"},
        {"id": "lights", "kind": "uniform", "name": "lights", "type": "Light[3]"},
        {"id": "second", "kind": "index", "index": 1},
        {"id": "color", "kind": "member", "field": "color"},
        {"id": "gains", "kind": "member", "field": "gains"},
        {"id": "gain", "kind": "index"},
        {"id": "which", "kind": "uniform", "name": "which", "type": "int"},
        {"id": "m", "kind": "uniform", "name": "m", "type": "float3x3"},
        {"id": "n", "kind": "normal"},
        {"id": "p", "kind": "position"},
        {"id": "vc", "kind": "vertex_color"},
        {"id": "uv", "kind": "uv"},
        {"id": "time", "kind": "time"},
        {"id": "flag", "kind": "uniform", "name": "flag", "type": "bool"},
        {"id": "flagf", "kind": "convert", "type": "float3"},
        {"id": "mn", "kind": "multiply"},
        {"id": "sum", "kind": "add"},
        {"id": "sum2", "kind": "add"},
        {"id": "scaled", "kind": "multiply"},
        {"id": "tinted", "kind": "multiply"},
        {"id": "call", "kind": "call", "function": "sample_twice"},
        {"id": "rgb", "kind": "swizzle", "pattern": "rgb"},
        {"id": "final", "kind": "multiply"},
        {"id": "vrgb", "kind": "swizzle", "pattern": "xyz"},
        {"id": "lit", "kind": "lerp"},
        {"id": "d", "kind": "dot"},
        {"id": "clamped", "kind": "clamp"},
        {"id": "zero", "kind": "constant", "type": "float", "value": 0},
        {"id": "one", "kind": "constant", "type": "float", "value": 1},
        {"id": "ivec", "kind": "constant", "type": "int2", "value": [3, -4]},
        {"id": "fvec", "kind": "convert", "type": "float2"},
        {"id": "out", "kind": "material_output"},
        {"id": "extra", "kind": "fragment_output", "name": "extra", "location": 1}
      ],
      "edges": [
        {"from": "lights", "to": "second.x"}, {"from": "second", "to": "color.x"},
        {"from": "light", "to": "gains.x"}, {"from": "gains", "to": "gain.x"}, {"from": "which", "to": "gain.index"},
        {"from": "m", "to": "mn.a"}, {"from": "n", "to": "mn.b"},
        {"from": "mn", "to": "sum.a"}, {"from": "p", "to": "sum.b"},
        {"from": "flag", "to": "flagf.x"}, {"from": "sum", "to": "sum2.a"}, {"from": "flagf", "to": "sum2.b"},
        {"from": "sum2", "to": "scaled.a"}, {"from": "gain", "to": "scaled.b"},
        {"from": "scaled", "to": "tinted.a"}, {"from": "color", "to": "tinted.b"},
        {"from": "uv", "to": "call.at"}, {"from": "call", "to": "rgb.x"},
        {"from": "rgb", "to": "final.a"}, {"from": "tinted", "to": "final.b"},
        {"from": "vc", "to": "vrgb.x"}, {"from": "final", "to": "lit.a"}, {"from": "vrgb", "to": "lit.b"},
        {"from": "time", "to": "clamped.x"}, {"from": "zero", "to": "clamped.min"}, {"from": "one", "to": "clamped.max"},
        {"from": "clamped", "to": "lit.t"},
        {"from": "lit", "to": "out.base_color"},
        {"from": "ivec", "to": "fvec.x"}, {"from": "uv", "to": "d.a"}, {"from": "fvec", "to": "d.b"},
        {"from": "fvec", "to": "extra.value"}
      ]
    }"#;
    let c = compile(json, "gen", Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(vpl::text::write_verified(&c.verified).unwrap(), c.text);
    for needle in [
        "(record u",
        "(array u",
        "\"time\"",
        "\"extra\"",
        "(call r",
        "(index r",
        "(member r",
    ] {
        assert!(c.text.contains(needle), "{needle} missing:\n{}", c.text);
    }
    assert_eq!(c.samplers.len(), 1);
    // The generated module also compiles for GLSL 4.20 (a target check, not only the verifier).
    let published = vpl::VerifiedModule::publish(&c.verified).unwrap();
    vpl::backends::glsl::compile(&published, vpl::backends::glsl::VERSION_420).unwrap();
}
