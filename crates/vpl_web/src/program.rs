//! A program compiled for the WebGL 2 renderer: the GLSL ES 3.00 target's
//! two shaders and what its reflection says about binding them.

use serde_json::Value;
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, GlslType, VERSION_420, std140_layout};
use vpl::backends::naga_targets::{self, LowerError, Target};
use vpl::ir::{Direction, ScalarKind};

/// How one VPL uniform is bound in the GLSL ES program.
#[derive(Debug, Clone, PartialEq)]
pub enum UniformSlot {
    /// A value uniform: a std140 uniform block holding the value at
    /// offset 0, under one GL block name per stage that uses it.
    Block {
        /// The logical uniform name.
        name: String,
        /// Its type (for the std140 leaves).
        ty: GlslType,
        /// GL uniform-block names (one per stage that declares it).
        gl_blocks: Vec<String>,
        /// The block binding point.
        binding: u32,
        /// The buffer size in bytes (the std140 size rounded up to 16).
        size: u64,
    },
    /// A sampler uniform: a `sampler2D` per stage that uses it, on one
    /// texture unit.
    Sampler {
        /// The logical uniform name.
        name: String,
        /// GL uniform names (one per stage that declares it).
        gl_names: Vec<String>,
        /// The texture unit.
        unit: u32,
    },
}

/// Why a module cannot be drawn by the WebGL renderer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProgramError {
    /// The GLSL ES 3.00 target refused the module (a target diagnostic).
    #[error(transparent)]
    Target(#[from] LowerError),
    /// The GLSL 4.20 backend (which supplies the uniform types) refused it.
    #[error("{0}")]
    Glsl(String),
    /// The target's output or reflection lacks something the renderer
    /// needs (an irkit defect).
    #[error("[webgl-reflection] {0}")]
    Reflection(String),
}

/// The GLSL ES 3.00 program and its bindings.
#[derive(Debug, Clone)]
pub struct WebGlProgram {
    vertex: String,
    fragment: String,
    reflection: String,
    uniforms: Vec<UniformSlot>,
    float_inputs: Vec<u32>,
    output_location: u32,
}

fn text(files: &[(String, Vec<u8>)], ext: &str) -> Result<String, ProgramError> {
    let (_, bytes) = files
        .iter()
        .find(|(e, _)| e == ext)
        .ok_or_else(|| ProgramError::Reflection(format!("no {ext} file in the output")))?;
    String::from_utf8(bytes.clone())
        .map_err(|_| ProgramError::Reflection(format!("{ext} is not UTF-8")))
}

impl WebGlProgram {
    /// Compiles the snapshot of `published` for GLSL ES 3.00.
    pub fn compile(published: &VerifiedModule) -> Result<Self, ProgramError> {
        let output = naga_targets::compile(published, Target::GlslEs300)?;
        let vertex = text(&output.files, "es.vert")?;
        let fragment = text(&output.files, "es.frag")?;
        let artifact =
            glsl::compile(published, VERSION_420).map_err(|e| ProgramError::Glsl(e.to_string()))?;
        let reflection: Value = serde_json::from_str(&output.reflection)
            .map_err(|e| ProgramError::Reflection(format!("reflection is not JSON: {e}")))?;
        let uniforms = uniform_slots(&artifact, &reflection)?;
        let float_inputs = artifact
            .vertex_interface()
            .iter()
            .filter(|b| {
                b.direction == Direction::In
                    && matches!(
                        b.binding.ty,
                        GlslType::Scalar(ScalarKind::Float)
                            | GlslType::Vector {
                                kind: ScalarKind::Float,
                                ..
                            }
                    )
            })
            .filter_map(|b| u32::try_from(b.binding.location).ok())
            .collect();
        let output_location = fragment_output_location(&reflection, &artifact)?;
        Ok(WebGlProgram {
            vertex,
            fragment,
            reflection: output.reflection,
            uniforms,
            float_inputs,
            output_location,
        })
    }

    /// The vertex shader.
    pub fn vertex_code(&self) -> &str {
        &self.vertex
    }

    /// The fragment shader.
    pub fn fragment_code(&self) -> &str {
        &self.fragment
    }

    /// The target's reflection JSON.
    pub fn reflection(&self) -> &str {
        &self.reflection
    }

    /// The uniforms in slot order.
    pub fn uniforms(&self) -> &[UniformSlot] {
        &self.uniforms
    }

    /// Whether vertex input `location` is a floating scalar or vector.
    pub fn float_input(&self, location: u32) -> bool {
        self.float_inputs.contains(&location)
    }

    /// The location of the primary fragment output.
    pub fn output_location(&self) -> u32 {
        self.output_location
    }
}

/// The primary output's location: the GLSL backend resolves it (section
/// 12.2) and the ES reflection must list an output there.
fn fragment_output_location(
    reflection: &Value,
    artifact: &glsl::ProgramArtifact,
) -> Result<u32, ProgramError> {
    let location = u32::try_from(artifact.fragment_color_location())
        .map_err(|_| ProgramError::Reflection("negative primary output location".into()))?;
    let listed = reflection
        .get("entry_points")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| e.get("stage").and_then(Value::as_str) == Some("fragment"))
        .flat_map(|e| {
            e.get("outputs")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .any(|o| o.get("location").and_then(Value::as_u64) == Some(u64::from(location)));
    if !listed {
        return Err(ProgramError::Reflection(format!(
            "the GLSL ES reflection lists no fragment output at location {location}"
        )));
    }
    Ok(location)
}

/// The GLSL names the reflection gives `resource` in each stage.
fn glsl_names(resource: &Value) -> Vec<String> {
    ["vertex", "fragment"]
        .iter()
        .filter_map(|stage| {
            resource
                .get("glsl_names")
                .and_then(|n| n.get(stage))
                .and_then(Value::as_str)
        })
        .map(String::from)
        .collect()
}

/// Pairs each uniform of the GLSL artifact (its logical type) with the
/// GLSL ES reflection's resource for it: a `uniform_buffer` (binding,
/// size, per-stage block names) or a `texture` (per-stage combined
/// `sampler2D` names). The buffer size must be the std140 size the
/// leaves are computed from.
fn uniform_slots(
    artifact: &glsl::ProgramArtifact,
    reflection: &Value,
) -> Result<Vec<UniformSlot>, ProgramError> {
    let resources: &[Value] = reflection
        .get("resources")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let find = |slot: usize, kind: &str| {
        resources.iter().find(|r| {
            r.get("uniform").and_then(Value::as_u64) == Some(slot as u64)
                && r.get("kind").and_then(Value::as_str) == Some(kind)
        })
    };
    let missing = |what: &str, name: &str| {
        ProgramError::Reflection(format!(
            "the GLSL ES reflection has no {what} for uniform {name:?}"
        ))
    };
    let mut slots = Vec::new();
    let mut unit = 0u32;
    for u in artifact.uniforms() {
        let name = &u.binding.name;
        if u.binding.ty == GlslType::Sampler2D {
            let texture =
                find(u.binding.slot, "texture").ok_or_else(|| missing("texture", name))?;
            slots.push(UniformSlot::Sampler {
                name: name.clone(),
                gl_names: glsl_names(texture),
                unit,
            });
            unit += 1;
            continue;
        }
        let buffer = find(u.binding.slot, "uniform_buffer")
            .ok_or_else(|| missing("uniform buffer", name))?;
        let binding = buffer
            .get("binding")
            .and_then(Value::as_u64)
            .and_then(|b| u32::try_from(b).ok())
            .ok_or_else(|| missing("binding", name))?;
        let size = buffer
            .get("size")
            .and_then(Value::as_u64)
            .ok_or_else(|| missing("buffer size", name))?;
        let std140 = std140_layout(&u.binding.ty).size;
        if std140.div_ceil(16).max(1) * 16 != size {
            return Err(ProgramError::Reflection(format!(
                "uniform {name:?}: the GLSL ES buffer is {size} bytes, its std140 layout {std140}"
            )));
        }
        slots.push(UniformSlot::Block {
            name: name.clone(),
            ty: u.binding.ty.clone(),
            gl_blocks: glsl_names(buffer),
            binding,
            size,
        });
    }
    Ok(slots)
}
