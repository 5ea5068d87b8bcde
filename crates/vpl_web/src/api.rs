//! The playground's JSON answers: the real reader and verifier's
//! diagnostics, every target's generated code, and the WebGL preview.

use crate::program::{ProgramError, UniformSlot, WebGlProgram};
use crate::scene::{Scene, leaves, scene_json};
use serde_json::{Value, json};
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, VERSION_420};
use vpl::backends::naga_targets::{self, Target};

/// The playground's own example, beside the four built-ins.
const GRADIENT: &str = include_str!("../assets/examples/gradient.vpl");

/// The programs the playground offers: `[{name, source}]`, the built-ins
/// first (spec section 12.5), then the playground examples.
pub fn programs() -> Value {
    let mut list: Vec<Value> = vpl::programs::Program::ALL
        .iter()
        .map(|p| json!({"name": p.name(), "source": String::from_utf8_lossy(p.source())}))
        .collect();
    list.push(json!({"name": "gradient", "source": GRADIENT}));
    Value::Array(list)
}

/// The target names in the order the playground shows them.
pub const TARGETS: [&str; 6] = ["glsl-420", "glsl-es-300", "spirv", "wgsl", "msl", "hlsl"];

/// The preview framebuffer side.
pub const PREVIEW_SIZE: u32 = 256;

fn text_diagnostic(e: &vpl::text::Error) -> Value {
    json!({
        "kind": e.kind.name(),
        "code": Value::Null,
        "message": e.message,
        "label": e.label,
        "offset": e.position.offset,
        "line": e.position.line,
        "column": e.position.column,
    })
}

fn target_diagnostic(
    verified: &vpl::verify::Verified,
    published: &VerifiedModule,
    label: &str,
    code: &str,
    message: &str,
    span: Option<vpl::ir::Span>,
) -> Value {
    let span = span.and_then(|s| published.source_span(verified.module(), s));
    json!({
        "kind": "target",
        "code": code,
        "message": message,
        "label": label,
        "offset": span.map(|s| s.offset),
        "line": span.map(|s| s.line),
        "column": span.map(|s| s.column),
    })
}

/// SPIR-V words as a hex listing (the playground shows text).
fn spirv_listing(bytes: &[u8]) -> String {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out = format!("; SPIR-V binary, {} words\n", words.len());
    for (i, row) in words.chunks(8).enumerate() {
        out.push_str(&format!("{:06x}:", i * 8));
        for w in row {
            out.push_str(&format!(" {w:08x}"));
        }
        out.push('\n');
    }
    out
}

/// Compiles `source` for every target and builds the preview.
///
/// `{ok, diagnostics: [..], targets: [{name, ok, files: [{name, text}],
/// reflection, diagnostic}], preview: {scene, controls} | null,
/// preview_error}`; every diagnostic has the shape of `irkit … --format
/// json` (`kind`, `code`, `message`, `label`, `offset`, `line`, `column`).
pub fn compile(source: &str, label: &str) -> Value {
    let verified = match vpl::text::read_verified(source.as_bytes(), label) {
        Ok(v) => v,
        Err(e) => {
            return json!({"ok": false, "diagnostics": [text_diagnostic(&e)], "targets": [], "preview": Value::Null});
        }
    };
    let published = match VerifiedModule::publish(&verified) {
        Ok(p) => p,
        Err(e) => {
            return json!({"ok": false, "diagnostics": [text_diagnostic(&e)], "targets": [], "preview": Value::Null});
        }
    };
    let mut diagnostics = Vec::new();
    let mut targets = Vec::new();
    for name in TARGETS {
        let entry = if name == "glsl-420" {
            match glsl::compile(&published, VERSION_420) {
                Ok(a) => json!({"name": name, "ok": true, "files": [
                    {"name": "vert", "text": a.vertex_code()},
                    {"name": "frag", "text": a.fragment_code()}],
                    "reflection": a.reflection_json()}),
                Err(glsl::CompileError::Target(e)) => {
                    let d = target_diagnostic(
                        &verified,
                        &published,
                        label,
                        e.kind.code(),
                        &e.message,
                        e.span,
                    );
                    json!({"name": name, "ok": false, "diagnostic": d})
                }
                Err(e) => json!({"name": name, "ok": false, "diagnostic": {
                    "kind": "target", "code": Value::Null, "message": e.to_string(), "label": label,
                    "offset": Value::Null, "line": Value::Null, "column": Value::Null}}),
            }
        } else {
            let Some(target) = Target::from_name(name) else {
                continue;
            };
            match naga_targets::compile(&published, target) {
                Ok(out) => {
                    let files: Vec<Value> = out
                        .files
                        .iter()
                        .map(|(ext, bytes)| {
                            let text = if target == Target::Spirv {
                                spirv_listing(bytes)
                            } else {
                                String::from_utf8_lossy(bytes).into_owned()
                            };
                            json!({"name": ext, "text": text})
                        })
                        .collect();
                    json!({"name": name, "ok": true, "files": files, "reflection": out.reflection})
                }
                Err(e) => {
                    let d = target_diagnostic(
                        &verified,
                        &published,
                        label,
                        e.kind.code(),
                        &e.message,
                        e.span,
                    );
                    json!({"name": name, "ok": false, "diagnostic": d})
                }
            }
        };
        if entry["ok"] == false {
            diagnostics.push(entry["diagnostic"].clone());
        }
        targets.push(entry);
    }
    let (preview, preview_error) = match preview(&published, Vec::new()) {
        Ok(p) => (p, Value::Null),
        Err(e) => (Value::Null, Value::String(e)),
    };
    json!({
        "ok": true,
        "diagnostics": diagnostics,
        "targets": targets,
        "preview": preview,
        "preview_error": preview_error,
    })
}

/// Default slider values: the one rule of `vpl::uniform_values` (floats 1,
/// integers and Booleans 0, matrices the identity), as `irkit vpl render`.
fn default_values(rows: u8, columns: u8, kind: &str) -> Vec<f64> {
    vpl::uniform_values::Leaf {
        path: String::new(),
        kind: if kind == "float" {
            vpl::ir::ScalarKind::Float
        } else {
            vpl::ir::ScalarKind::Int
        },
        rows,
        columns,
    }
    .default_values()
}

/// The scene with every leaf at its default, the given textures (others
/// get the checkerboard) and the slider controls.
pub(crate) fn preview(
    published: &VerifiedModule,
    textures: Vec<(String, vpl_gl::Texture)>,
) -> Result<Value, String> {
    preview_with(published, textures, &[])
}

/// [`preview`] with the leaves of `values` (path, values) set instead of
/// their defaults.
pub(crate) fn preview_with(
    published: &VerifiedModule,
    textures: Vec<(String, vpl_gl::Texture)>,
    values: &[(String, Vec<f64>)],
) -> Result<Value, String> {
    let program = WebGlProgram::compile(published).map_err(|e| match e {
        ProgramError::Target(t) => format!("{} ({})", t.message, t.kind.code()),
        other => other.to_string(),
    })?;
    let mut scene = Scene::new(PREVIEW_SIZE, PREVIEW_SIZE);
    scene.textures = textures;
    let mut controls = Vec::new();
    for slot in program.uniforms() {
        if let UniformSlot::Block { name, ty, .. } = slot {
            for leaf in leaves(name, ty)? {
                let values = match values.iter().find(|(path, _)| *path == leaf.path) {
                    Some((_, v)) => v.clone(),
                    None => default_values(leaf.rows, leaf.columns, leaf.kind),
                };
                if leaf.columns == 1 {
                    let (min, max, step) = if leaf.kind == "float" {
                        (0.0, 1.0, 0.01)
                    } else {
                        (-16.0, 16.0, 1.0)
                    };
                    controls.push(json!({"path": leaf.path, "kind": leaf.kind,
                        "values": values, "min": min, "max": max, "step": step}));
                }
                scene.uniforms.push((leaf.path, values));
            }
        }
    }
    Ok(json!({"scene": scene_json(&program, &scene)?, "controls": controls}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_is_reported_at_its_line() {
        let v = compile("(module 1\n  (types\n  oops", "t.vpl");
        assert_eq!(v["ok"], false);
        let d = &v["diagnostics"][0];
        assert_eq!(d["label"], "t.vpl");
        assert_eq!(d["line"], 3, "{d}");
    }

    #[test]
    fn every_builtin_compiles_for_the_glsl_420_target() {
        for p in programs().as_array().unwrap() {
            let v = compile(p["source"].as_str().unwrap(), "p.vpl");
            assert_eq!(v["ok"], true, "{}", p["name"]);
            assert_eq!(v["targets"][0]["name"], "glsl-420");
            assert_eq!(
                v["targets"][0]["ok"], true,
                "{}: {}",
                p["name"], v["targets"][0]
            );
            assert_eq!(v["targets"].as_array().unwrap().len(), TARGETS.len());
        }
    }

    #[test]
    fn the_gradient_example_has_a_preview_with_controls() {
        let v = compile(GRADIENT, "gradient.vpl");
        assert!(v["preview"].is_object(), "{}", v["preview_error"]);
        let scene = &v["preview"]["scene"];
        assert!(
            scene["fragment"]
                .as_str()
                .unwrap()
                .starts_with("#version 300 es")
        );
    }

    #[test]
    fn arbitrary_text_never_panics() {
        for s in [
            "",
            "(",
            ")",
            "(module",
            "(module 1 (types) (uniforms))",
            "\u{0}\u{ffff}",
        ] {
            let v = compile(s, "x.vpl");
            assert!(v["ok"].is_boolean());
        }
    }
}
