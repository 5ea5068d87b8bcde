//! The preview build (`vpl_graph::compile_preview`): float and int
//! constants become fields of one uniform, so an edit of constant values
//! leaves the module's text unchanged (a renderer keeps its program), and
//! the module computes what the canonical one computes: both are drawn on
//! the CPU executor and compared pixel for pixel.

mod common;

use serde_json::Value;
use std::path::Path;
use vpl::VerifiedModule;
use vpl::exec::{self, DrawRequest, Executable};
use vpl_graph::nodes::Literal;
use vpl_graph::{Options, compile, compile_preview};

/// Every example graph and some generated ones (with sub-graphs, selects,
/// textures, int and bool constants).
fn graphs() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vpl/graphs");
    let mut out: Vec<(String, String)> = ["textured_tint", "checker", "subgraph_twice"]
        .iter()
        .map(|n| {
            let path = dir.join(format!("{n}.json"));
            (n.to_string(), std::fs::read_to_string(path).unwrap())
        })
        .collect();
    for seed in 1..=12u64 {
        let doc = common::Gen::document(seed * 7919, 4);
        out.push((format!("generated {seed}"), doc.to_string()));
    }
    out
}

/// Each constant's value changed (floats by 0.25, nonzero ints by 1 away
/// from zero, Booleans kept: they stay literals).
fn edit_constants(json: &str) -> String {
    let mut doc: Value = serde_json::from_str(json).unwrap();
    let bump = |v: &mut Value, ty: &str| {
        let change = |x: &mut Value| {
            if ty.starts_with("float") {
                *x = Value::from(x.as_f64().unwrap() + 0.25);
            } else if ty.starts_with("int") {
                // Away from zero: a divisor stays nonzero.
                let v = x.as_i64().unwrap();
                *x = Value::from(v + v.signum());
            }
        };
        match v {
            Value::Array(items) => items.iter_mut().for_each(change),
            x => change(x),
        }
    };
    let edit = |nodes: &mut Value| {
        for n in nodes.as_array_mut().into_iter().flatten() {
            if n["kind"] == "constant" {
                let ty = n["type"].as_str().unwrap_or("").to_string();
                bump(&mut n["value"], &ty);
            }
        }
    };
    edit(&mut doc["nodes"]);
    if let Some(fs) = doc.get_mut("functions").and_then(Value::as_array_mut) {
        for f in fs {
            edit(&mut f["nodes"]);
        }
    }
    doc.to_string()
}

fn draw(module: &vpl::verify::Verified, values: &[(String, Vec<f64>)]) -> Vec<u8> {
    let published = VerifiedModule::publish(module).unwrap();
    let executable = Executable::new(&published).unwrap();
    let mut request = DrawRequest::new(&executable, 16, 16);
    for (path, v) in values {
        request.uniforms.set(&executable, path, v).unwrap();
    }
    exec::draw(&executable, &request).unwrap().rgba
}

fn uniform_values(preview: &vpl_graph::Preview) -> Vec<(String, Vec<f64>)> {
    let Some(c) = &preview.constants else {
        return Vec::new();
    };
    c.fields
        .iter()
        .map(|(field, _, literals)| {
            let v = literals
                .iter()
                .map(|l| match l {
                    Literal::Float(f) => f64::from(*f),
                    Literal::Int(i) => f64::from(*i),
                    Literal::Bool(b) => f64::from(u8::from(*b)),
                })
                .collect();
            (format!("{}.{field}", c.uniform), v)
        })
        .collect()
}

#[test]
fn constant_edits_keep_the_preview_text_and_the_pixels_match() {
    let mut with_constants = 0;
    for (name, json) in graphs() {
        let canonical = compile(&json, "gen", Options::default()).unwrap();
        let preview = compile_preview(&json, "gen").unwrap_or_else(|e| panic!("{name}: {e}"));
        // The preview module is verified and its text canonical.
        assert_eq!(
            vpl::text::write_verified(&preview.compiled.verified).unwrap(),
            preview.compiled.text,
            "{name}"
        );
        let edited = edit_constants(&json);
        let preview_edited =
            compile_preview(&edited, "gen").unwrap_or_else(|e| panic!("{name} edited: {e}"));
        assert_eq!(
            preview.compiled.text, preview_edited.compiled.text,
            "{name}: a constant edit changed the preview module"
        );
        if let Some(c) = &preview.constants {
            with_constants += 1;
            assert!(preview.compiled.text.contains(&format!("{:?}", c.uniform)));
            let edited_constants = preview_edited.constants.as_ref().unwrap();
            assert_eq!(c.fields.len(), edited_constants.fields.len());
            assert_ne!(c.fields, edited_constants.fields, "{name}");
            let canonical_edited = compile(&edited, "gen", Options::default()).unwrap();
            assert_ne!(canonical.text, canonical_edited.text, "{name}");
        }
        // The same pixels as the canonical module, before and after the edit.
        for (json, preview) in [(&json, &preview), (&edited, &preview_edited)] {
            let canonical = compile(json, "gen", Options::default()).unwrap();
            assert_eq!(
                draw(&canonical.verified, &[]),
                draw(&preview.compiled.verified, &uniform_values(preview)),
                "{name}: the preview module draws other pixels"
            );
        }
    }
    assert!(
        with_constants >= 8,
        "only {with_constants} graphs had constants"
    );
}

#[test]
fn a_graph_uniform_named_like_the_constants_keeps_its_name() {
    let json = r#"{"version": 1, "nodes": [
        {"id": "u", "kind": "uniform", "name": "graph_constants", "type": "float3"},
        {"id": "c", "kind": "constant", "type": "float3", "value": [0.5, 0.25, 1]},
        {"id": "m", "kind": "multiply"},
        {"id": "out", "kind": "material_output"}],
      "edges": [{"from": "u", "to": "m.a"}, {"from": "c", "to": "m.b"}, {"from": "m", "to": "out.base_color"}]}"#;
    let preview = compile_preview(json, "gen").unwrap();
    let c = preview.constants.as_ref().unwrap();
    assert_eq!(c.uniform, "graph_constants1");
    assert_eq!(c.fields.len(), 1);
    assert_eq!(
        c.fields[0].2,
        vec![
            Literal::Float(0.5),
            Literal::Float(0.25),
            Literal::Float(1.0)
        ]
    );
}
