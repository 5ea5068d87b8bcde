//! The scene document the WebGL renderer page draws (`assets/webgl.js`).
//!
//! A [`Scene`] names uniform values by logical VPL path (the same paths
//! as `vpl_gl::Uniforms`: `material.ambient_color`, `lights[1].color`),
//! textures by sampler-uniform name and attributes by location.
//! [`scene_json`] resolves them against a compiled [`crate::WebGlProgram`]
//! into the JSON the page takes: both GLSL ES shaders, every uniform block
//! with its std140 leaves (offset, kind, shape, values), every sampler with
//! its texture unit and texture, the attributes and the framebuffer.

use crate::program::{UniformSlot, WebGlProgram};
use base64::Engine as _;
use serde_json::{Value, json};
use vpl::backends::glsl::reflect::Std140Detail;
use vpl::backends::glsl::{GlslType, Std140Layout, std140_layout};
use vpl::ir::ScalarKind;
use vpl_gl::{AttributeValue, MinFilter, Texture, Wrap};

/// What to draw with a program.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// Framebuffer width.
    pub width: u32,
    /// Framebuffer height.
    pub height: u32,
    /// Clear colour.
    pub clear: [f32; 4],
    /// Uniform values by logical path; unset leaves are zero.
    pub uniforms: Vec<(String, Vec<f64>)>,
    /// Textures by sampler-uniform name; samplers without one get
    /// [`Texture::checkerboard`].
    pub textures: Vec<(String, Texture)>,
    /// Extra attributes by location (locations 0 and 1 otherwise carry the
    /// quad's position and texture coordinates, as in `vpl_gl`).
    pub attributes: Vec<(u32, AttributeValue)>,
    /// Quad corners in clip space (x0, y0, x1, y1).
    pub quad: [f32; 4],
}

impl Scene {
    /// A full-screen draw of `width` × `height`, cleared to transparent
    /// black, with zero uniforms.
    pub fn new(width: u32, height: u32) -> Self {
        Scene {
            width,
            height,
            clear: [0.0; 4],
            uniforms: Vec::new(),
            textures: Vec::new(),
            attributes: Vec::new(),
            quad: [-1.0, -1.0, 1.0, 1.0],
        }
    }
}

/// One scalar, vector or matrix leaf of a uniform at its std140 offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Logical path (`material.intensity`, `ints[3]`).
    pub path: String,
    /// Byte offset in the uniform's std140 image.
    pub offset: u64,
    /// `float` or `int` (Booleans are 32-bit integers in std140).
    pub kind: &'static str,
    /// Components per column.
    pub rows: u8,
    /// Columns (1 for scalars and vectors).
    pub columns: u8,
    /// Bytes between columns.
    pub column_stride: u64,
}

/// The most leaves one uniform may expand to (larger arrays are refused).
pub const MAX_LEAVES: usize = 4096;

/// Every leaf of a uniform of type `ty` named `name`, in declaration order.
pub fn leaves(name: &str, ty: &GlslType) -> Result<Vec<Leaf>, String> {
    let mut out = Vec::new();
    walk(name, ty, &std140_layout(ty), 0, &mut out)?;
    Ok(out)
}

fn walk(
    path: &str,
    ty: &GlslType,
    layout: &Std140Layout,
    offset: u64,
    out: &mut Vec<Leaf>,
) -> Result<(), String> {
    if out.len() >= MAX_LEAVES {
        return Err(format!(
            "uniform {path:?} has more than {MAX_LEAVES} leaves; the WebGL renderer refuses it"
        ));
    }
    let kind = |k: &ScalarKind| match k {
        ScalarKind::Float => "float",
        _ => "int",
    };
    match (ty, &layout.detail) {
        (GlslType::Scalar(k), _) => out.push(Leaf {
            path: path.to_string(),
            offset,
            kind: kind(k),
            rows: 1,
            columns: 1,
            column_stride: 16,
        }),
        (GlslType::Vector { kind: k, size }, _) => out.push(Leaf {
            path: path.to_string(),
            offset,
            kind: kind(k),
            rows: *size,
            columns: 1,
            column_stride: 16,
        }),
        (GlslType::Matrix { rows, columns }, detail) => out.push(Leaf {
            path: path.to_string(),
            offset,
            kind: "float",
            rows: *rows,
            columns: *columns,
            column_stride: match detail {
                Std140Detail::Matrix { matrix_stride } => *matrix_stride,
                _ => 16,
            },
        }),
        (
            GlslType::Array { element, length },
            Std140Detail::Array {
                stride,
                element: el,
            },
        ) => {
            for i in 0..*length {
                walk(
                    &format!("{path}[{i}]"),
                    element,
                    el,
                    offset + i * stride,
                    out,
                )?;
            }
        }
        (GlslType::Record(record), Std140Detail::Record { members }) => {
            for (field, (member_offset, member)) in record.fields.iter().zip(members) {
                walk(
                    &format!("{path}.{}", field.name),
                    &field.ty,
                    member,
                    offset + member_offset,
                    out,
                )?;
            }
        }
        (GlslType::Sampler2D, _) => {}
        _ => return Err(format!("uniform {path:?}: type and layout disagree")),
    }
    Ok(())
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The texture as the page takes it: levels in GL order (rows bottom-up),
/// exactly as `vpl_gl` uploads them.
pub fn texture_json(t: &Texture) -> Value {
    json!({
        "width": t.width,
        "height": t.height,
        "levels": t.levels.iter().map(|l| base64(l)).collect::<Vec<_>>(),
        "wrap": match t.wrap { Wrap::Repeat => "repeat", Wrap::ClampToEdge => "clamp_to_edge" },
        "min_filter": match t.min_filter {
            MinFilter::Nearest => "nearest",
            MinFilter::Linear => "linear",
            MinFilter::NearestMipmapNearest => "nearest_mipmap_nearest",
        },
        "mag_filter": if t.mag_linear { "linear" } else { "nearest" },
    })
}

/// Checks a texture's level sizes (the page would otherwise fail inside
/// WebGL with a less useful message).
fn check_texture(name: &str, t: &Texture) -> Result<(), String> {
    if t.levels.is_empty() {
        return Err(format!("texture for {name:?} has no levels"));
    }
    for (n, level) in t.levels.iter().enumerate() {
        let w = u64::from((t.width >> n).max(1));
        let h = u64::from((t.height >> n).max(1));
        if level.len() as u64 != w * h * 4 {
            return Err(format!(
                "texture for {name:?}: level {n} has {} bytes, {w}x{h} RGBA8 needs {}",
                level.len(),
                w * h * 4
            ));
        }
    }
    Ok(())
}

/// The largest framebuffer side the renderer accepts.
pub const MAX_SIZE: u32 = 4096;

/// The scene document for `program`, or what is wrong with the scene
/// (an unknown uniform path, a value count that does not fit the leaf,
/// a texture for no sampler).
pub fn scene_json(program: &WebGlProgram, scene: &Scene) -> Result<Value, String> {
    let (w, h) = (scene.width, scene.height);
    if w == 0 || h == 0 || w > MAX_SIZE || h > MAX_SIZE {
        return Err(format!("framebuffer size {w}x{h} outside 1..={MAX_SIZE}"));
    }
    // (GL block names, binding, size, leaves) per value uniform.
    let mut blocks: Vec<(&[String], u32, u64, Vec<Leaf>)> = Vec::new();
    let mut sampler_slots: Vec<(&str, &[String], u32)> = Vec::new();
    for slot in program.uniforms() {
        match slot {
            UniformSlot::Block {
                name,
                ty,
                gl_blocks,
                binding,
                size,
            } => blocks.push((gl_blocks, *binding, *size, leaves(name, ty)?)),
            UniformSlot::Sampler {
                name,
                gl_names,
                unit,
            } => sampler_slots.push((name, gl_names, *unit)),
        }
    }
    let mut values: Vec<Vec<Option<&[f64]>>> = blocks
        .iter()
        .map(|(_, _, _, leaves)| vec![None; leaves.len()])
        .collect();
    for (path, v) in &scene.uniforms {
        let found = blocks
            .iter()
            .enumerate()
            .find_map(|(b, (_, _, _, leaves))| {
                leaves
                    .iter()
                    .position(|l| &l.path == path)
                    .map(|i| (b, i, &leaves[i]))
            });
        let Some((b, i, leaf)) = found else {
            return Err(format!("no uniform leaf {path:?} in this program"));
        };
        let count = usize::from(leaf.rows) * usize::from(leaf.columns);
        if v.len() != count {
            return Err(format!(
                "uniform {path:?} takes {count} value(s), {} given",
                v.len()
            ));
        }
        values[b][i] = Some(v);
    }
    let mut blocks_json = Vec::new();
    for ((gl_blocks, binding, size, leaves), values) in blocks.iter().zip(&values) {
        let leaves: Vec<Value> = leaves
            .iter()
            .zip(values)
            .filter_map(|(l, v)| {
                v.map(|v| {
                    json!({
                        "path": l.path, "offset": l.offset, "kind": l.kind,
                        "rows": l.rows, "columns": l.columns,
                        "column_stride": l.column_stride, "values": v,
                    })
                })
            })
            .collect();
        for gl_block in gl_blocks.iter() {
            blocks_json.push(
                json!({"name": gl_block, "binding": binding, "size": size, "leaves": leaves}),
            );
        }
    }
    for (name, texture) in &scene.textures {
        if !sampler_slots.iter().any(|(n, _, _)| n == name) {
            return Err(format!("no sampler uniform named {name:?}"));
        }
        check_texture(name, texture)?;
    }
    let mut samplers = Vec::new();
    for (name, gl_names, unit) in &sampler_slots {
        let texture = scene
            .textures
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| texture_json(t))
            .unwrap_or_else(|| texture_json(&Texture::checkerboard()));
        for gl_name in gl_names.iter() {
            samplers.push(json!({"name": gl_name, "unit": unit, "texture": texture}));
        }
    }
    let [x0, y0, x1, y1] = scene.quad;
    let mut attributes: Vec<(u32, Value)> = Vec::new();
    if program.float_input(0) {
        attributes.push((
            0,
            json!({"location": 0, "per_vertex": [[x0, y0, 0.0, 1.0], [x1, y0, 0.0, 1.0], [x0, y1, 0.0, 1.0], [x1, y1, 0.0, 1.0]]}),
        ));
    }
    if program.float_input(1) {
        attributes.push((
            1,
            json!({"location": 1, "per_vertex": [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 1.0]]}),
        ));
    }
    for (location, value) in &scene.attributes {
        attributes.retain(|(l, _)| l != location);
        let v = match value {
            AttributeValue::Constant(c) => json!({"location": location, "constant": c}),
            AttributeValue::PerVertex(p) => json!({"location": location, "per_vertex": p}),
        };
        attributes.push((*location, v));
    }
    Ok(json!({
        "vertex": program.vertex_code(),
        "fragment": program.fragment_code(),
        "width": w,
        "height": h,
        "clear": scene.clear,
        "output_location": program.output_location(),
        "attributes": attributes.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        "blocks": blocks_json,
        "samplers": samplers,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_leaves_follow_std140() {
        let module = vpl::programs::create(vpl::programs::Program::MeshAmbientColor).unwrap();
        let artifact =
            vpl::backends::glsl::compile(&module, vpl::backends::glsl::VERSION_420).unwrap();
        let u = artifact.uniform("material").unwrap();
        let leaves = leaves("material", &u.binding.ty).unwrap();
        let shape: Vec<_> = leaves
            .iter()
            .map(|l| (l.path.as_str(), l.offset, l.kind, l.rows))
            .collect();
        assert_eq!(
            shape,
            [
                ("material.ambient_color", 0, "float", 4),
                ("material.intensity", 16, "float", 1)
            ]
        );
    }

    #[test]
    fn arrays_expand_per_element_with_the_std140_stride() {
        let ty = GlslType::Array {
            element: Box::new(GlslType::Scalar(ScalarKind::Int)),
            length: 3,
        };
        let l = leaves("ints", &ty).unwrap();
        assert_eq!(
            l.iter()
                .map(|l| (l.path.as_str(), l.offset))
                .collect::<Vec<_>>(),
            [("ints[0]", 0), ("ints[1]", 16), ("ints[2]", 32)]
        );
        let huge = GlslType::Array {
            element: Box::new(GlslType::Scalar(ScalarKind::Float)),
            length: 1 << 30,
        };
        assert!(leaves("huge", &huge).unwrap_err().contains("4096"));
    }
}
