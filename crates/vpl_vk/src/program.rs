//! A program for the Vulkan harness: the SPIR-V target's words and what
//! its reflection says to bind (read from the reflection JSON only, as a
//! host would).

use crate::error::VkError;
use serde_json::Value;
use vpl::VerifiedModule;
use vpl::backends::naga_targets::{self, Target};

/// A vertex input the harness feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VertexInput {
    /// First location.
    pub location: u32,
    /// Locations taken (matrix columns).
    pub locations: u32,
    /// Integer components (fed as signed 32-bit integers) or floating.
    pub integer: bool,
}

/// A descriptor of the program's single set.
#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    /// A uniform buffer of `size` bytes with its std140 layout document.
    UniformBuffer {
        /// The VPL uniform's name.
        name: String,
        /// Binding number.
        binding: u32,
        /// Buffer size.
        size: u64,
        /// The reflection's `layout` object.
        layout: Value,
    },
    /// The texture of a sampler uniform.
    Texture {
        /// The VPL uniform's name.
        name: String,
        /// Binding number.
        binding: u32,
    },
    /// The sampler of a sampler uniform.
    Sampler {
        /// The VPL uniform's name.
        name: String,
        /// Binding number.
        binding: u32,
    },
}

/// The SPIR-V of a published module and its binding plan.
#[derive(Debug, Clone)]
pub struct VkProgram {
    /// SPIR-V words (both entry points).
    pub words: Vec<u32>,
    /// Vertex entry point name.
    pub vertex_entry: String,
    /// Fragment entry point name.
    pub fragment_entry: String,
    /// Vertex inputs.
    pub inputs: Vec<VertexInput>,
    /// Location of the `fragment_color` output.
    pub color_location: u32,
    /// Descriptors, in binding order.
    pub resources: Vec<Resource>,
}

fn bad(what: &str) -> VkError {
    VkError::Reflection(what.to_string())
}

impl VkProgram {
    /// Compiles `published` for the SPIR-V target and reads its
    /// reflection.
    pub fn new(published: &VerifiedModule) -> Result<Self, VkError> {
        let output = naga_targets::compile(published, Target::Spirv).map_err(VkError::Target)?;
        let bytes = &output.files.first().ok_or_else(|| bad("no SPIR-V file"))?.1;
        let words = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let reflection: Value =
            serde_json::from_str(&output.reflection).map_err(|e| bad(&e.to_string()))?;
        Self::from_reflection(words, &reflection)
    }

    fn from_reflection(words: Vec<u32>, r: &Value) -> Result<Self, VkError> {
        let entries = r["entry_points"]
            .as_array()
            .ok_or_else(|| bad("no entry points"))?;
        let stage = |name: &str| {
            entries
                .iter()
                .find(|e| e["stage"] == name)
                .ok_or_else(|| bad("a missing stage"))
        };
        let vertex = stage("vertex")?;
        let fragment = stage("fragment")?;
        let mut inputs = Vec::new();
        for v in vertex["inputs"].as_array().into_iter().flatten() {
            let Some(location) = v["location"].as_u64() else {
                continue;
            };
            let ty = v["type"].as_str().unwrap_or("");
            inputs.push(VertexInput {
                location: location as u32,
                locations: v["locations"].as_u64().unwrap_or(1) as u32,
                integer: ty == "int" || ty.starts_with("ivec"),
            });
        }
        let color_location = fragment["outputs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["semantic"] == "fragment_color")
            .and_then(|v| v["location"].as_u64())
            .ok_or_else(|| bad("no fragment_color output"))? as u32;
        let mut resources = Vec::new();
        for res in r["resources"].as_array().into_iter().flatten() {
            let name = res["name"].as_str().unwrap_or("").to_string();
            let binding = res["binding"].as_u64().ok_or_else(|| bad("a binding"))? as u32;
            resources.push(match res["kind"].as_str() {
                Some("uniform_buffer") => Resource::UniformBuffer {
                    name,
                    binding,
                    size: res["size"].as_u64().ok_or_else(|| bad("a buffer size"))?,
                    layout: res["layout"].clone(),
                },
                Some("texture") => Resource::Texture { name, binding },
                Some("sampler") => Resource::Sampler { name, binding },
                _ => return Err(bad("an unknown resource kind")),
            });
        }
        Ok(VkProgram {
            words,
            vertex_entry: vertex["name"].as_str().unwrap_or("").to_string(),
            fragment_entry: fragment["name"].as_str().unwrap_or("").to_string(),
            inputs,
            color_location,
            resources,
        })
    }
}
