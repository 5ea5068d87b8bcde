//! The naga writers, and one reflection shape for every naga target.

use super::lower::{Lowered, lower};
use super::{LowerError, LowerErrorKind};
use crate::VerifiedModule;
use crate::ir::{Direction, StageKind};

/// A target naga writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// SPIR-V 1.0 for Vulkan (one module with both entry points).
    Spirv,
    /// WGSL (one module with both entry points).
    Wgsl,
    /// GLSL ES 3.00 (one shader per stage).
    GlslEs300,
    /// Metal Shading Language (one source with both entry points).
    Msl,
    /// HLSL shader model 5.0 (one source with both entry points).
    Hlsl,
}

impl Target {
    /// Every naga target.
    pub const ALL: [Target; 5] = [
        Target::Spirv,
        Target::Wgsl,
        Target::GlslEs300,
        Target::Msl,
        Target::Hlsl,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Target::Spirv => "spirv",
            Target::Wgsl => "wgsl",
            Target::GlslEs300 => "glsl-es-300",
            Target::Msl => "msl",
            Target::Hlsl => "hlsl",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// What a naga target produced: files (extension, bytes) and the
/// reflection document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// `(extension, contents)` in a fixed order.
    pub files: Vec<(String, Vec<u8>)>,
    /// The reflection JSON (one shape for every naga target).
    pub reflection: String,
}

fn writer_error(target: Target, e: impl std::fmt::Display) -> LowerError {
    LowerError::new(
        LowerErrorKind::Writer,
        None,
        format!("the naga {} writer failed: {e}", target.name()),
    )
}

/// Lowers the snapshot of `published` to naga IR, validates it and writes
/// it for `target`.
pub fn compile(published: &VerifiedModule, target: Target) -> Result<Output, LowerError> {
    let lowered = lower(published)?;
    let files = write(&lowered, target)?;
    Ok(Output {
        files,
        reflection: reflection(published, &lowered, target),
    })
}

fn write(l: &Lowered, target: Target) -> Result<Vec<(String, Vec<u8>)>, LowerError> {
    Ok(match target {
        Target::Spirv => {
            // naga's default adds debug information in debug builds; the
            // output must not depend on how irkit was built. Positions are
            // flipped to Vulkan's downward y (VPL's clip space is GL's).
            let options = naga::back::spv::Options {
                flags: naga::back::spv::WriterFlags::ADJUST_COORDINATE_SPACE
                    | naga::back::spv::WriterFlags::LABEL_VARYINGS
                    | naga::back::spv::WriterFlags::CLAMP_FRAG_DEPTH,
                ..Default::default()
            };
            let words = naga::back::spv::write_vec(&l.module, &l.info, &options, None)
                .map_err(|e| writer_error(target, e))?;
            let bytes = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            vec![("spv".to_string(), bytes)]
        }
        Target::Wgsl => {
            let text = naga::back::wgsl::write_string(
                &l.module,
                &l.info,
                naga::back::wgsl::WriterFlags::empty(),
            )
            .map_err(|e| writer_error(target, e))?;
            vec![("wgsl".to_string(), text.into_bytes())]
        }
        Target::GlslEs300 => {
            let options = naga::back::glsl::Options {
                version: naga::back::glsl::Version::new_gles(300),
                writer_flags: naga::back::glsl::WriterFlags::empty(),
                ..Default::default()
            };
            let mut files = Vec::new();
            for (stage, ext) in [
                (naga::ShaderStage::Vertex, "vert"),
                (naga::ShaderStage::Fragment, "frag"),
            ] {
                let index = usize::from(stage == naga::ShaderStage::Fragment);
                let pipeline = naga::back::glsl::PipelineOptions {
                    shader_stage: stage,
                    entry_point: l.entry_points[index].clone(),
                    multiview: None,
                };
                let mut text = String::new();
                let mut writer = naga::back::glsl::Writer::new(
                    &mut text,
                    &l.module,
                    &l.info,
                    &options,
                    &pipeline,
                    naga::proc::BoundsCheckPolicies::default(),
                )
                .map_err(|e| writer_error(target, e))?;
                writer.write().map_err(|e| writer_error(target, e))?;
                files.push((format!("es.{ext}"), text.into_bytes()));
            }
            files
        }
        Target::Msl => {
            let (text, _) = naga::back::msl::write_string(
                &l.module,
                &l.info,
                &naga::back::msl::Options::default(),
                &naga::back::msl::PipelineOptions::default(),
            )
            .map_err(|e| writer_error(target, e))?;
            vec![("metal".to_string(), text.into_bytes())]
        }
        Target::Hlsl => {
            let options = naga::back::hlsl::Options::default();
            let pipeline = naga::back::hlsl::PipelineOptions::default();
            let mut text = String::new();
            let mut writer = naga::back::hlsl::Writer::new(&mut text, &options, &pipeline);
            writer
                .write(&l.module, &l.info, None)
                .map_err(|e| writer_error(target, e))?;
            vec![("hlsl".to_string(), text.into_bytes())]
        }
    })
}

fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `{"target", "entry_points": [{"stage", "name", "inputs", "outputs"}]}`
/// where every interface variable is `{"name", "slot", "location"|null,
/// "builtin"|null}`; keys in this order, no whitespace.
fn reflection(published: &VerifiedModule, l: &Lowered, target: Target) -> String {
    let module = published.module();
    let mut out = String::from("{\"target\":");
    quote(&mut out, target.name());
    out.push_str(",\"entry_points\":[");
    for (si, stage) in module.stages().into_iter().enumerate() {
        if si > 0 {
            out.push(',');
        }
        out.push_str("{\"stage\":");
        quote(
            &mut out,
            match stage.kind {
                StageKind::Vertex => "vertex",
                StageKind::Fragment => "fragment",
            },
        );
        out.push_str(",\"name\":");
        quote(&mut out, &l.entry_points[si]);
        for (key, direction) in [("inputs", Direction::In), ("outputs", Direction::Out)] {
            out.push_str(",\"");
            out.push_str(key);
            out.push_str("\":[");
            let mut first = true;
            for (slot, var) in stage.interface.iter().enumerate() {
                if var.direction != direction {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str("{\"name\":");
                quote(&mut out, &var.name);
                out.push_str(&format!(",\"slot\":{slot},\"location\":"));
                match l.locations[si].get(slot).copied().flatten() {
                    Some(location) => out.push_str(&location.to_string()),
                    None => out.push_str("null"),
                }
                out.push_str(",\"builtin\":");
                match l.locations[si].get(slot).copied().flatten() {
                    Some(_) => out.push_str("null"),
                    None => quote(&mut out, "position"),
                }
                out.push('}');
            }
            out.push(']');
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}
