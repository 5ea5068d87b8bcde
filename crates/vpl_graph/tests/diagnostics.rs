//! Graph-level diagnostics: codes, node and socket, before any VPL exists.

use vpl_graph::{CompileError, ErrorKind, GraphError, Options, compile};

fn errors(json: &str) -> Vec<GraphError> {
    match compile(json, "gen", Options::default()) {
        Err(CompileError::Graph(e)) => e,
        Err(e) => panic!("not a graph diagnostic: {e}"),
        Ok(c) => panic!("compiled:\n{}", c.text),
    }
}

fn graph(nodes: &str, edges: &str) -> String {
    format!(r#"{{"version": 1, "nodes": [{nodes}], "edges": [{edges}]}}"#)
}

const OUT: &str = r#"{"id": "out", "kind": "material_output"}"#;

#[test]
fn float3_into_float2_socket_names_node_and_socket() {
    let json = graph(
        &format!(
            r#"{{"id": "c", "kind": "constant", "type": "float3", "value": 1}},
                   {{"id": "tex", "kind": "texture_sample", "name": "t"}}, {OUT}"#
        ),
        r#"{"from": "c.out", "to": "tex.uv"}, {"from": "tex.rgb", "to": "out.base_color"}"#,
    );
    let e = errors(&json);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].kind, ErrorKind::Type);
    assert_eq!(e[0].kind.code(), "VPL-G-TYPE");
    assert_eq!(e[0].node.as_deref(), Some("tex"));
    assert_eq!(e[0].socket.as_deref(), Some("uv"));
    assert!(
        e[0].message.contains("expected float2, found float3"),
        "{}",
        e[0]
    );
}

#[test]
fn cycle_is_reported_with_its_nodes() {
    let json = graph(
        &format!(
            r#"{{"id": "a", "kind": "add"}}, {{"id": "b", "kind": "add"}},
                   {{"id": "k", "kind": "constant", "type": "float3", "value": 1}}, {OUT}"#
        ),
        r#"{"from": "a.out", "to": "b.a"}, {"from": "b.out", "to": "a.a"},
           {"from": "k.out", "to": "a.b"}, {"from": "k.out", "to": "b.b"},
           {"from": "b.out", "to": "out.base_color"}"#,
    );
    let e = errors(&json);
    assert_eq!(e[0].kind, ErrorKind::Cycle);
    assert!(
        e[0].message.contains("a -> b -> a") || e[0].message.contains("b -> a -> b"),
        "{}",
        e[0]
    );
}

#[test]
fn missing_input_names_the_socket() {
    let json = graph(
        &format!(
            r#"{{"id": "m", "kind": "multiply"}}, {{"id": "k", "kind": "constant", "type": "float3", "value": 1}}, {OUT}"#
        ),
        r#"{"from": "k.out", "to": "m.a"}, {"from": "m.out", "to": "out.base_color"}"#,
    );
    let e = errors(&json);
    assert_eq!(e[0].kind, ErrorKind::MissingInput);
    assert_eq!(e[0].kind.code(), "VPL-G-MISSING-INPUT");
    assert_eq!(
        (e[0].node.as_deref(), e[0].socket.as_deref()),
        (Some("m"), Some("b"))
    );
}

#[test]
fn structural_errors_have_their_codes() {
    let cases: Vec<(String, ErrorKind)> = vec![
        ("{".to_string(), ErrorKind::Json),
        (
            r#"{"version": 1, "nodes": [], "bogus": 1}"#.to_string(),
            ErrorKind::Json,
        ),
        (
            r#"{"version": 2, "nodes": []}"#.to_string(),
            ErrorKind::Json,
        ),
        (graph(r#"{"id": "x", "kind": "sine"}"#, ""), ErrorKind::Node),
        (
            graph(
                &format!(r#"{{"id": "x", "kind": "uv"}}, {{"id": "x", "kind": "uv"}}, {OUT}"#),
                "",
            ),
            ErrorKind::Node,
        ),
        (
            graph(
                &format!(r#"{{"id": "x", "kind": "uv"}}, {OUT}"#),
                r#"{"from": "x.nope", "to": "out.base_color"}"#,
            ),
            ErrorKind::Edge,
        ),
        (graph(r#"{"id": "x", "kind": "uv"}"#, ""), ErrorKind::Output),
        (
            graph(
                &format!(
                    r#"{{"id": "x", "kind": "uniform", "name": "time", "type": "int"}}, {{"id": "t", "kind": "time"}}, {OUT}"#
                ),
                "",
            ),
            ErrorKind::Name,
        ),
        (
            graph(
                &format!(
                    r#"{{"id": "c", "kind": "constant", "type": "float", "value": 1}}, {{"id": "x", "kind": "convert", "type": "int"}}, {OUT}"#
                ),
                r#"{"from": "c.out", "to": "x.x"}"#,
            ),
            ErrorKind::Type,
        ),
        (
            graph(
                &format!(
                    r#"{{"id": "a", "kind": "constant", "type": "int", "value": 1}}, {{"id": "z", "kind": "constant", "type": "int", "value": 0}}, {{"id": "d", "kind": "divide"}}, {OUT}"#
                ),
                r#"{"from": "a.out", "to": "d.a"}, {"from": "z.out", "to": "d.b"}"#,
            ),
            ErrorKind::Type,
        ),
    ];
    for (json, kind) in cases {
        let e = errors(&json);
        assert!(e.iter().any(|e| e.kind == kind), "{json}: {e:?}");
    }
}

#[test]
fn recursive_subgraphs_are_a_cycle() {
    let json = r#"{"version": 1,
      "functions": [{"name": "f", "inputs": [], "output": "float3",
         "nodes": [{"id": "c", "kind": "call", "function": "f"}, {"id": "r", "kind": "return"}],
         "edges": [{"from": "c.out", "to": "r.value"}]}],
      "nodes": [{"id": "c", "kind": "call", "function": "f"}, {"id": "out", "kind": "material_output"}],
      "edges": [{"from": "c.out", "to": "out.base_color"}]}"#;
    let e = errors(json);
    assert_eq!(e[0].kind, ErrorKind::Cycle);
    assert_eq!(e[0].function.as_deref(), Some("f"));
}

#[test]
fn every_code_is_documented() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/diagnostics.md"
    ))
    .unwrap();
    for k in ErrorKind::ALL {
        assert!(
            doc.contains(&format!("`{}`", k.code())),
            "{} missing from docs/diagnostics.md",
            k.code()
        );
    }
}

#[test]
fn every_kind_has_valid_editor_defaults() {
    let list = vpl_graph::nodes::catalogue();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), vpl_graph::nodes::KIND_NAMES.len());
    for k in list {
        let kind = k["kind"].as_str().unwrap();
        if !matches!(
            kind,
            "call" | "material_output" | "fragment_output" | "return"
        ) {
            assert!(!k["outputs"].as_array().unwrap().is_empty(), "{kind}");
        }
    }
}
