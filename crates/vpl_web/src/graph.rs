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
    let compiled = match vpl_graph::compile(json, "graph.vpl", vpl_graph::Options::default()) {
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
    let published = match VerifiedModule::publish(&compiled.verified) {
        Ok(p) => p,
        Err(e) => {
            return json!({"ok": false, "vpl": compiled.text, "graph_diagnostics": [],
                          "diagnostics": [{"code": e.code(), "message": e.message}], "preview": Value::Null});
        }
    };
    let mut textures = Vec::new();
    apply_samplers(&compiled.samplers, &mut textures);
    let (preview, preview_error) = match crate::api::preview(&published, textures) {
        Ok(p) => (p, Value::Null),
        Err(e) => (Value::Null, Value::String(e)),
    };
    json!({"ok": true, "vpl": compiled.text, "graph_diagnostics": [], "diagnostics": [],
           "preview": preview, "preview_error": preview_error})
}

/// The example graphs (`examples/vpl/graphs/`): `[{name, graph}]`.
pub fn examples() -> Value {
    json!([
        {"name": "textured_tint", "graph": include_str!("../../../examples/vpl/graphs/textured_tint.json")},
        {"name": "checker", "graph": include_str!("../../../examples/vpl/graphs/checker.json")},
        {"name": "subgraph_twice", "graph": include_str!("../../../examples/vpl/graphs/subgraph_twice.json")},
    ])
}

/// `POST /api/graph`: the body is the graph document.
pub(crate) async fn handler(body: axum::body::Bytes) -> Response {
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        let error = json!({"error": {"code": "bad-request", "message": "the graph is not UTF-8"}});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    };
    match tokio::task::spawn_blocking(move || compile(&text)).await {
        Ok(v) => axum::Json(v).into_response(),
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
