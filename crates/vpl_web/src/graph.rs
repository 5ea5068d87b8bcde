//! The playground's Graph tab: `POST /api/graph` compiles a material graph
//! (`vpl_graph`, docs/vpl/graph.md) to VPL and answers with the generated
//! text, the graph diagnostics (each naming its node and socket, for the
//! editor to mark) and the WebGL preview scene, with the graph's sampler
//! state on each texture.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use vpl::VerifiedModule;
use vpl_gl::{MinFilter, Texture, Wrap};
use vpl_graph::{CompileError, SamplerState};

/// Gives `texture` a graph's sampler state (spec 7.3.1: host-supplied).
pub fn apply_sampler(texture: &mut Texture, state: &SamplerState) {
    texture.wrap = match state.wrap {
        vpl_graph::Wrap::Repeat => Wrap::Repeat,
        vpl_graph::Wrap::ClampToEdge => Wrap::ClampToEdge,
    };
    texture.min_filter = match state.min_filter {
        vpl_graph::MinFilter::Nearest => MinFilter::Nearest,
        vpl_graph::MinFilter::Linear => MinFilter::Linear,
        vpl_graph::MinFilter::NearestMipmapNearest => MinFilter::NearestMipmapNearest,
    };
    texture.mag_linear = state.mag_linear;
}

/// Gives every texture of a graph its sampler state; a sampler without a
/// texture in `textures` gets the checkerboard with that state.
pub fn apply_samplers(samplers: &[(String, SamplerState)], textures: &mut Vec<(String, Texture)>) {
    for (name, state) in samplers {
        match textures.iter_mut().find(|(n, _)| n == name) {
            Some((_, t)) => apply_sampler(t, state),
            None => {
                let mut t = Texture::checkerboard();
                apply_sampler(&mut t, state);
                textures.push((name.clone(), t));
            }
        }
    }
}

/// Compiles a graph document: `{ok, vpl, graph_diagnostics: [{code,
/// message, function, node, socket, line, column}], diagnostics, preview,
/// preview_error}`.
pub fn compile(json: &str) -> Value {
    compile_timed(json, &mut Phases::default())
}

/// Milliseconds spent in each phase of one [`compile`] (the `Server-Timing`
/// header of `POST /api/graph`, which the page records beside its own
/// phases).
#[derive(Debug, Default, Clone, Copy)]
pub struct Phases {
    /// Graph compiler: JSON to verified module and text.
    pub graph: f64,
    /// Publication of the verified module.
    pub publish: f64,
    /// The GLSL ES 3.00 target and the preview scene.
    pub preview: f64,
}

fn since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// [`compile`], recording its phases' times in `phases`.
pub fn compile_timed(json: &str, phases: &mut Phases) -> Value {
    let started = std::time::Instant::now();
    let compiled = vpl_graph::compile(json, "graph.vpl", vpl_graph::Options::default());
    phases.graph = since(started);
    let compiled = match compiled {
        Ok(c) => c,
        Err(CompileError::Graph(errors)) => {
            let list: Vec<Value> = errors
                .iter()
                .map(|e| {
                    json!({"code": e.kind.code(), "message": e.message, "function": e.function,
                           "node": e.node, "socket": e.socket, "line": e.line, "column": e.column})
                })
                .collect();
            return json!({"ok": false, "vpl": Value::Null, "graph_diagnostics": list,
                          "diagnostics": [], "preview": Value::Null});
        }
        Err(CompileError::Vpl(e)) => {
            return json!({"ok": false, "vpl": Value::Null, "graph_diagnostics": [],
                          "diagnostics": [{"code": e.code(), "message": e.message}], "preview": Value::Null});
        }
    };
    let started = std::time::Instant::now();
    let published = VerifiedModule::publish(&compiled.verified);
    phases.publish = since(started);
    if let Err(e) = published {
        return json!({"ok": false, "vpl": compiled.text, "graph_diagnostics": [],
                      "diagnostics": [{"code": e.code(), "message": e.message}], "preview": Value::Null});
    }
    let started = std::time::Instant::now();
    let (preview, preview_error) = match preview(json, &compiled) {
        Ok(p) => (p, Value::Null),
        Err(e) => (Value::Null, Value::String(e)),
    };
    phases.preview = since(started);
    json!({"ok": true, "vpl": compiled.text, "graph_diagnostics": [], "diagnostics": [],
           "preview": preview, "preview_error": preview_error})
}

/// The preview scene of a graph that compiled: from its preview build
/// (`vpl_graph::compile_preview`: float and int constants as the fields of
/// one uniform, set to the constants' values), so that an edit of constant
/// values changes only uniform values and the page keeps its linked
/// WebGL program. The preview build publishes the same module as the
/// canonical one but for that uniform. The answer's `constants` lists the
/// material graph's constant nodes with their type and leaf path
/// (`[{node, type, path}]`), for the page to set a slider's value at once.
fn preview(json: &str, compiled: &vpl_graph::Compiled) -> Result<Value, String> {
    let built = vpl_graph::compile_preview(json, "graph.vpl")
        .map_err(|e| format!("the preview build of the graph failed: {e}"))?;
    let published = VerifiedModule::publish(&built.compiled.verified).map_err(|e| e.message)?;
    let mut textures = Vec::new();
    apply_samplers(&compiled.samplers, &mut textures);
    let values: Vec<(String, Vec<f64>)> = built
        .constants
        .iter()
        .flat_map(|c| {
            c.fields.iter().map(|(field, _, literals)| {
                let values = literals
                    .iter()
                    .map(|l| match l {
                        vpl_graph::nodes::Literal::Float(f) => f64::from(*f),
                        vpl_graph::nodes::Literal::Int(i) => f64::from(*i),
                        vpl_graph::nodes::Literal::Bool(b) => f64::from(u8::from(*b)),
                    })
                    .collect();
                (format!("{}.{field}", c.uniform), values)
            })
        })
        .collect();
    let mut answer = crate::api::preview_with(&published, textures, &values)?;
    // The material graph's constant nodes and the leaves that hold them, so
    // that the page can apply an edit of their values at once (the
    // program and every other leaf stay as they are).
    let scalar_types = vpl_graph::types::Records::default();
    let constants: Vec<Value> = built
        .constants
        .iter()
        .flat_map(|c| {
            c.fields
                .iter()
                .zip(&c.nodes)
                .filter(|(_, (function, _))| function.is_none())
                .map(|((field, ty, _), (_, node))| {
                    json!({"node": node, "type": ty.display(&scalar_types).to_string(), "path": format!("{}.{field}", c.uniform)})
                })
        })
        .collect();
    if let Some(object) = answer.as_object_mut() {
        object.insert("constants".to_string(), Value::Array(constants));
    }
    Ok(answer)
}

/// The example graphs (`examples/vpl/graphs/`): `[{name, graph}]`.
pub fn examples() -> Value {
    json!([
        {"name": "textured_tint", "graph": include_str!("../../../examples/vpl/graphs/textured_tint.json")},
        {"name": "checker", "graph": include_str!("../../../examples/vpl/graphs/checker.json")},
        {"name": "subgraph_twice", "graph": include_str!("../../../examples/vpl/graphs/subgraph_twice.json")},
    ])
}

/// `POST /api/graph`: the body is the graph document. The answer's
/// `Server-Timing` header gives the phases (`graph`, `publish`, `preview`,
/// `json`: serializing the answer) in milliseconds.
pub(crate) async fn handler(body: axum::body::Bytes) -> Response {
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        let error = json!({"error": {"code": "bad-request", "message": "the graph is not UTF-8"}});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    };
    let answer = tokio::task::spawn_blocking(move || {
        let mut phases = Phases::default();
        let value = compile_timed(&text, &mut phases);
        let started = std::time::Instant::now();
        let body = serde_json::to_vec(&value);
        (body, phases, since(started))
    });
    match answer.await {
        Ok((Ok(body), p, json_ms)) => {
            let timing = format!(
                "graph;dur={:.3}, publish;dur={:.3}, preview;dur={:.3}, json;dur={json_ms:.3}",
                p.graph, p.publish, p.preview
            );
            (
                [
                    (
                        axum::http::header::CONTENT_TYPE,
                        "application/json".to_string(),
                    ),
                    (
                        axum::http::header::HeaderName::from_static("server-timing"),
                        timing,
                    ),
                ],
                body,
            )
                .into_response()
        }
        Ok((Err(e), _, _)) => {
            let error = json!({"error": {"code": "internal", "message": e.to_string()}});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(error)).into_response()
        }
        Err(e) => {
            let error = json!({"error": {"code": "internal", "message": e.to_string()}});
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(error)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKER: &str = include_str!("../../../examples/vpl/graphs/checker.json");

    #[test]
    fn an_example_graph_has_vpl_and_a_preview() {
        let v = compile(CHECKER);
        assert_eq!(v["ok"], true, "{v}");
        assert!(v["vpl"].as_str().unwrap().starts_with("(module 1"));
        assert!(v["preview"]["scene"].is_object(), "{}", v["preview_error"]);
    }

    #[test]
    fn the_answer_maps_each_constant_to_its_leaf() {
        let v = compile(CHECKER);
        let constants = v["preview"]["constants"].as_array().unwrap();
        let nodes: Vec<&str> = constants
            .iter()
            .map(|c| c["node"].as_str().unwrap())
            .collect();
        for id in ["half", "ink", "paper"] {
            assert!(nodes.contains(&id), "{id} in {nodes:?}");
        }
        let leaves: Vec<&Value> = v["preview"]["scene"]["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| b["leaves"].as_array().unwrap())
            .collect();
        for c in constants {
            let leaf = leaves
                .iter()
                .find(|l| l["path"] == c["path"])
                .unwrap_or_else(|| panic!("no leaf {}", c["path"]));
            if c["node"] == "ink" {
                assert_eq!(c["type"], "float3");
                let values: Vec<f64> = leaf["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                assert_eq!(values, [0.1f32, 0.2, 0.9].map(f64::from));
            }
        }
    }

    #[test]
    fn a_type_error_names_its_node() {
        let broken = CHECKER.replace(
            r#""from": "ink.out", "to": "pick.true""#,
            r#""from": "half.out", "to": "pick.true""#,
        );
        let v = compile(&broken);
        assert_eq!(v["ok"], false);
        let d = &v["graph_diagnostics"][0];
        assert_eq!(d["code"], "VPL-G-TYPE");
        assert_eq!(d["node"], "pick");
        assert_eq!(d["socket"], "false");
    }

    #[test]
    fn arbitrary_text_never_panics() {
        for s in [
            "",
            "{",
            "[]",
            "{\"version\":1}",
            "{\"version\":1,\"nodes\":[{\"id\":\"x\",\"kind\":\"uv\"}]}",
        ] {
            assert_eq!(compile(s)["ok"], false);
        }
    }
}
