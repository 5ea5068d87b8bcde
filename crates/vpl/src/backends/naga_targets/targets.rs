//! The naga writers, and one reflection shape for every naga target.

use super::error::{LowerError, LowerErrorKind};
use super::layout::{Detail, Layout};
use super::lower::{Lowered, ResourceKind, lower, lower_stages};
use crate::VerifiedModule;
use crate::ir::{Direction, Handle, Module, StageKind, Type, TypeInner};
use std::collections::HashMap;

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

    /// The profile whose minimum hardware limits the target checks
    /// (section 13): Vulkan 1.0 for SPIR-V, OpenGL ES 3.0 / WebGL 2 for
    /// GLSL ES 3.00; none for the others.
    pub fn profile(self) -> Option<crate::backends::glsl::Profile> {
        use crate::backends::glsl::Profile;
        match self {
            Target::Spirv => Some(Profile::Vulkan10),
            Target::GlslEs300 => Some(Profile::Es30),
            Target::Wgsl | Target::Msl | Target::Hlsl => None,
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
    if let Some(profile) = target.profile() {
        crate::backends::glsl::check_limits(published.module(), published.info(), profile)
            .map_err(|e| LowerError::new(LowerErrorKind::Restriction(e.kind), e.span, e.message))?;
    }
    if target == Target::GlslEs300 {
        // naga's GLSL writer writes every function that uses no global
        // the entry point lacks, so from a module with both stages each
        // shader would carry the other stage's helpers: one module per
        // stage (together they lower and validate each function once).
        let stages = [
            lower_stages(published, Some(StageKind::Vertex))?,
            lower_stages(published, Some(StageKind::Fragment))?,
        ];
        let (files, names) = write_glsl_es([&stages[0], &stages[1]])?;
        return Ok(Output {
            files,
            reflection: reflection(published, &stages[0], target, &names),
        });
    }
    let lowered = lower(published)?;
    let (files, names) = write(&lowered, target)?;
    Ok(Output {
        files,
        reflection: reflection(published, &lowered, target, &names),
    })
}

/// GLSL ES 3.00: one shader per stage, each from the given module of its
/// stage (vertex, fragment).
fn write_glsl_es(stages: [&Lowered; 2]) -> Result<(Files, GlslNames), LowerError> {
    let target = Target::GlslEs300;
    let mut names: GlslNames = Default::default();
    let options = naga::back::glsl::Options {
        version: naga::back::glsl::Version::new_gles(300),
        writer_flags: naga::back::glsl::WriterFlags::empty(),
        ..Default::default()
    };
    let mut files = Vec::new();
    for (index, (stage, ext)) in [
        (naga::ShaderStage::Vertex, "vert"),
        (naga::ShaderStage::Fragment, "frag"),
    ]
    .into_iter()
    .enumerate()
    {
        let l = stages[index];
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
        let info = writer.write().map_err(|e| writer_error(target, e))?;
        for (handle, name) in info.uniforms {
            names[index].insert(handle, name);
        }
        for (name, mapping) in info.texture_mapping {
            names[index].insert(mapping.texture, name.clone());
            if let Some(sampler) = mapping.sampler {
                names[index].insert(sampler, name);
            }
        }
        files.push((format!("es.{ext}"), text.into_bytes()));
    }
    Ok((files, names))
}

/// GLSL names of globals per stage (vertex, fragment): uniform block
/// names and combined `sampler2D` uniform names.
type GlslNames = [HashMap<naga::Handle<naga::GlobalVariable>, String>; 2];

/// The Metal binding slots: buffers, textures and samplers numbered in
/// binding order within their kind, the same for both entry points.
fn msl_slots(l: &Lowered) -> Vec<u8> {
    let (mut buffers, mut textures, mut samplers) = (0u8, 0u8, 0u8);
    l.resources
        .iter()
        .map(|r| {
            let counter = match r.kind {
                ResourceKind::UniformBuffer { .. } => &mut buffers,
                ResourceKind::Texture { .. } => &mut textures,
                ResourceKind::Sampler { .. } => &mut samplers,
            };
            let slot = *counter;
            *counter = counter.saturating_add(1);
            slot
        })
        .collect()
}

/// `(extension, contents)` per written file.
type Files = Vec<(String, Vec<u8>)>;

fn write(l: &Lowered, target: Target) -> Result<(Files, GlslNames), LowerError> {
    let names: GlslNames = Default::default();
    let files = match target {
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
        // Both shaders from the one module (compile lowers per stage).
        Target::GlslEs300 => return write_glsl_es([l, l]),
        Target::Msl => {
            let mut resources = naga::back::msl::BindingMap::default();
            for (r, slot) in l.resources.iter().zip(msl_slots(l)) {
                let mut bind = naga::back::msl::BindTarget::default();
                match r.kind {
                    ResourceKind::UniformBuffer { .. } => bind.buffer = Some(slot),
                    ResourceKind::Texture { .. } => bind.texture = Some(slot),
                    ResourceKind::Sampler { .. } => {
                        bind.sampler = Some(naga::back::msl::BindSamplerTarget::Resource(slot))
                    }
                }
                resources.insert(
                    naga::ResourceBinding {
                        group: r.group,
                        binding: r.binding,
                    },
                    bind,
                );
            }
            let per_entry_point_map = l
                .entry_points
                .iter()
                .map(|name| {
                    (
                        name.clone(),
                        naga::back::msl::EntryPointResources {
                            resources: resources.clone(),
                            ..Default::default()
                        },
                    )
                })
                .collect();
            let options = naga::back::msl::Options {
                lang_version: (2, 0),
                per_entry_point_map,
                fake_missing_bindings: false,
                ..Default::default()
            };
            let (text, _) = naga::back::msl::write_string(
                &l.module,
                &l.info,
                &options,
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
    };
    Ok((files, names))
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

/// `{"target", "entry_points": [{"stage", "name", "inputs", "outputs"}],
/// "resources": [...]}` where every interface variable is `{"name",
/// "type", "semantic", "slot", "location"|null, "locations",
/// "builtin"|null}` and every
/// resource `{"name", "uniform", "kind", "group", "binding", ...}` with
/// the target's own binding spelling and, for uniform buffers, the std140
/// layout; keys in this order, no whitespace.
fn reflection(
    published: &VerifiedModule,
    l: &Lowered,
    target: Target,
    names: &GlslNames,
) -> String {
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
                out.push_str(",\"type\":");
                quote(&mut out, &type_name(module, Some(var.ty)));
                out.push_str(",\"semantic\":");
                quote(&mut out, var.semantic.keyword());
                out.push_str(&format!(",\"slot\":{slot},\"location\":"));
                let location = l.locations[si].get(slot).copied().flatten();
                match location {
                    Some(location) => out.push_str(&location.to_string()),
                    None => out.push_str("null"),
                }
                let count = l.location_counts[si].get(slot).copied().unwrap_or(1);
                out.push_str(&format!(",\"locations\":{count},\"builtin\":"));
                match location {
                    Some(_) => out.push_str("null"),
                    None => quote(&mut out, "position"),
                }
                out.push('}');
            }
            out.push(']');
        }
        out.push('}');
    }
    out.push_str("],\"resources\":[");
    let msl = msl_slots(l);
    for (i, r) in l.resources.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        quote(&mut out, &r.name);
        let kind = match r.kind {
            ResourceKind::UniformBuffer { .. } => "uniform_buffer",
            ResourceKind::Texture { .. } => "texture",
            ResourceKind::Sampler { .. } => "sampler",
        };
        out.push_str(&format!(
            ",\"uniform\":{},\"kind\":\"{kind}\",\"group\":{},\"binding\":{}",
            r.uniform, r.group, r.binding
        ));
        match target {
            Target::Hlsl => match r.kind {
                // naga's HLSL samplers live in a heap (`register(s0,
                // space0)`), selected through the group's index buffer
                // `nagaGroup0SamplerIndexArray` (`register(t0, space255)`)
                // at the sampler's binding.
                ResourceKind::Sampler { .. } => out.push_str(&format!(
                    ",\"register\":\"t0\",\"space\":255,\"sampler_heap\":{{\"register\":\"s0\",\"space\":0}},\"heap_index_slot\":{}",
                    r.binding
                )),
                _ => {
                    let class = match r.kind {
                        ResourceKind::UniformBuffer { .. } => 'b',
                        _ => 't',
                    };
                    out.push_str(&format!(
                        ",\"register\":\"{class}{}\",\"space\":{}",
                        r.binding, r.group
                    ));
                }
            },
            Target::Msl => {
                let slot = msl.get(i).copied().unwrap_or(0);
                out.push_str(&format!(",\"msl_index\":{slot}"));
            }
            Target::GlslEs300 => {
                // GLSL ES 3.00 has no binding layouts: the host binds by
                // these names (uniform block names, combined sampler
                // uniforms), per stage; null where a stage does not use it.
                out.push_str(",\"glsl_names\":{");
                for (si, stage) in ["vertex", "fragment"].into_iter().enumerate() {
                    if si > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!("\"{stage}\":"));
                    match names[si].get(&r.global) {
                        Some(name) => quote(&mut out, name),
                        None => out.push_str("null"),
                    }
                }
                out.push('}');
            }
            Target::Spirv | Target::Wgsl => {}
        }
        match &r.kind {
            ResourceKind::UniformBuffer { layout, size } => {
                out.push_str(&format!(",\"size\":{size},\"layout\":"));
                let ty = module.uniforms.get(r.uniform).map(|u| u.ty);
                layout_json(&mut out, module, ty, layout, 0);
            }
            ResourceKind::Texture { sampler_binding } => {
                out.push_str(&format!(",\"sampler_binding\":{sampler_binding}"));
            }
            ResourceKind::Sampler { texture_binding } => {
                out.push_str(&format!(",\"texture_binding\":{texture_binding}"));
            }
        }
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// `{"type", "offset", "size"}` plus `"stride", "length", "element"` for
/// arrays and `"fields": [{"name", ...}]` for records; offsets from the
/// start of the buffer.
fn layout_json(
    out: &mut String,
    module: &Module,
    ty: Option<Handle<Type>>,
    layout: &Layout,
    offset: u64,
) {
    out.push_str("{\"type\":");
    quote(out, &type_name(module, ty));
    out.push_str(&format!(",\"offset\":{offset},\"size\":{}", layout.size));
    match &layout.detail {
        Detail::Leaf => {}
        Detail::Array {
            stride,
            length,
            element,
        } => {
            let element_ty = ty.and_then(|t| match module.types.inner(t) {
                Some(TypeInner::Array { element, .. }) => Some(*element),
                _ => None,
            });
            out.push_str(&format!(
                ",\"stride\":{stride},\"length\":{length},\"element\":"
            ));
            layout_json(out, module, element_ty, element, offset);
        }
        Detail::Record { fields } => {
            let record = ty.and_then(|t| match module.types.inner(t) {
                Some(TypeInner::Record(r)) => Some(r),
                _ => None,
            });
            out.push_str(",\"fields\":[");
            for (i, (field_offset, field_layout)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let field = record.and_then(|r| r.fields.get(i));
                out.push_str("{\"name\":");
                quote(out, field.map_or("", |f| f.name.as_str()));
                out.push_str(",\"layout\":");
                layout_json(
                    out,
                    module,
                    field.map(|f| f.ty),
                    field_layout,
                    offset + field_offset,
                );
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push('}');
}

/// `float`, `vec3`, `ivec2`, `bvec4`, `mat3x2` (columns x rows),
/// `array`, `record`.
fn type_name(module: &Module, ty: Option<Handle<Type>>) -> String {
    match ty.and_then(|t| module.types.inner(t)) {
        Some(TypeInner::Scalar(k)) => k.keyword().to_string(),
        Some(TypeInner::Vector { kind, size }) => {
            let prefix = match kind {
                crate::ir::ScalarKind::Bool => "b",
                crate::ir::ScalarKind::Int => "i",
                crate::ir::ScalarKind::Float => "",
            };
            format!("{prefix}vec{size}")
        }
        Some(TypeInner::Matrix { rows, columns }) => format!("mat{columns}x{rows}"),
        Some(TypeInner::Array { .. }) => "array".to_string(),
        Some(TypeInner::Record(_)) => "record".to_string(),
        _ => "opaque".to_string(),
    }
}
