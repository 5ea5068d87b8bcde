//! Earlier hardware-limit validation (spec section 13): a module is
//! checked against the minimum limits every implementation of a target
//! profile guarantees — OpenGL 4.2 core for the GLSL 4.20 target, OpenGL
//! ES 3.0 (WebGL 2) for GLSL ES 3.00, Vulkan 1.0 for SPIR-V — before a
//! driver sees it, so a module that passes compiles and links on every
//! conforming driver of the profile as far as these resources go.
//!
//! Checked per profile: vertex attribute locations, varying locations,
//! fragment output locations (draw buffers), sampler uniforms (texture
//! units) per stage, and uniform storage per stage (default-block
//! components, uniform blocks and block size). The counting rules and
//! the figures are in `docs/vpl/targets.md`; a violation is a
//! [`TargetError`] of one of the `limit-*` kinds at the interface variable
//! or uniform that crosses the limit.

use super::artifact::GlslType;
use super::error::{TargetError, TargetErrorKind};
use super::locations::Locations;
use super::reflect::std140_layout;
use super::types::TypeMap;
use crate::ir::{
    Callee, Direction, Function, Handle, InstructionKind, Module, Semantic, Stage, StageKind,
    StorageKind, UniformKind,
};
use std::collections::BTreeSet;

/// A target profile whose minimum limits a module is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// OpenGL 4.2 core (the GLSL 4.20 target).
    Gl42,
    /// OpenGL ES 3.0 and WebGL 2 (the GLSL ES 3.00 target).
    Es30,
    /// Vulkan 1.0 (the SPIR-V target).
    Vulkan10,
}

/// How a profile's targets hold value (non-sampler) uniforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniformModel {
    /// Record uniforms are std140 blocks; other uniforms live in the
    /// default block and count components (the GLSL 4.20 backend).
    RecordBlocks,
    /// Every value uniform is its own std140 block, padded to 16 bytes
    /// (the naga targets).
    OneBlockEach,
}

/// Whether a stage counts the uniforms it uses or every declared one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// A stage holds the uniforms its entry reaches (GL programs count
    /// active uniforms per stage).
    Used,
    /// Every uniform is visible to every stage (the SPIR-V target binds
    /// each one in set 0 for all graphics stages).
    All,
}

/// The minimum limits of a profile, in the units the checks count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Vertex input locations (`MAX_VERTEX_ATTRIBS`, `maxVertexInputAttributes`).
    pub vertex_attributes: u64,
    /// Vertex output / fragment input locations (`MAX_VARYING_VECTORS`,
    /// `maxVertexOutputComponents / 4`).
    pub varying_locations: u64,
    /// Fragment output locations (`MAX_DRAW_BUFFERS`, `maxFragmentOutputAttachments`).
    pub draw_buffers: u64,
    /// Sampler uniforms per stage (`MAX_TEXTURE_IMAGE_UNITS`,
    /// `MAX_VERTEX_TEXTURE_IMAGE_UNITS`, `maxPerStageDescriptorSamplers`
    /// and `…SampledImages`).
    pub texture_units: u64,
    /// Default-block uniform components per stage
    /// (`MAX_VERTEX_UNIFORM_COMPONENTS`, `MAX_FRAGMENT_UNIFORM_COMPONENTS`);
    /// used with [`UniformModel::RecordBlocks`] only (0 where every value
    /// uniform is a block).
    pub uniform_components: u64,
    /// Uniform blocks per stage (`MAX_*_UNIFORM_BLOCKS`,
    /// `maxPerStageDescriptorUniformBuffers`).
    pub uniform_blocks: u64,
    /// Bytes of one uniform block (`MAX_UNIFORM_BLOCK_SIZE`, `maxUniformBufferRange`).
    pub uniform_block_bytes: u64,
    /// How value uniforms are held.
    pub model: UniformModel,
    /// Which uniforms a stage counts.
    pub visibility: Visibility,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 3] = [Profile::Gl42, Profile::Es30, Profile::Vulkan10];

    /// The profile's name in diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Gl42 => "OpenGL 4.2",
            Profile::Es30 => "OpenGL ES 3.0 / WebGL 2",
            Profile::Vulkan10 => "Vulkan 1.0",
        }
    }

    /// The profile's minimum limits (the specifications' tables of
    /// implementation-dependent values; `docs/vpl/targets.md`).
    pub fn limits(self) -> Limits {
        match self {
            Profile::Gl42 => Limits {
                vertex_attributes: 16,
                varying_locations: 15,
                draw_buffers: 8,
                texture_units: 16,
                uniform_components: 1024,
                uniform_blocks: 12,
                uniform_block_bytes: 16384,
                model: UniformModel::RecordBlocks,
                visibility: Visibility::Used,
            },
            Profile::Es30 => Limits {
                vertex_attributes: 16,
                varying_locations: 15,
                draw_buffers: 4,
                texture_units: 16,
                uniform_components: 0,
                uniform_blocks: 12,
                uniform_block_bytes: 16384,
                model: UniformModel::OneBlockEach,
                visibility: Visibility::Used,
            },
            Profile::Vulkan10 => Limits {
                vertex_attributes: 16,
                varying_locations: 16,
                draw_buffers: 4,
                texture_units: 16,
                uniform_components: 0,
                uniform_blocks: 12,
                uniform_block_bytes: 16384,
                model: UniformModel::OneBlockEach,
                visibility: Visibility::All,
            },
        }
    }
}

/// Checks `module` (its target restrictions already checked, its
/// interface `locations` resolved) against `profile`'s minimum limits.
pub(crate) fn check(
    module: &Module,
    types: &TypeMap,
    locations: &Locations,
    profile: Profile,
) -> Result<(), TargetError> {
    let limits = profile.limits();
    check_locations(
        &module.vertex,
        &locations.vertex,
        types,
        Direction::In,
        limits.vertex_attributes,
        TargetErrorKind::VertexAttributeLimit,
        profile,
    )?;
    check_locations(
        &module.vertex,
        &locations.vertex,
        types,
        Direction::Out,
        limits.varying_locations,
        TargetErrorKind::VaryingLimit,
        profile,
    )?;
    check_locations(
        &module.fragment,
        &locations.fragment,
        types,
        Direction::In,
        limits.varying_locations,
        TargetErrorKind::VaryingLimit,
        profile,
    )?;
    check_locations(
        &module.fragment,
        &locations.fragment,
        types,
        Direction::Out,
        limits.draw_buffers,
        TargetErrorKind::DrawBufferLimit,
        profile,
    )?;
    for stage in [&module.vertex, &module.fragment] {
        let used = match limits.visibility {
            Visibility::All => (0..module.uniforms.len() as u64).collect(),
            Visibility::Used => used_uniforms(stage),
        };
        check_uniforms(module, types, stage.kind, &used, limits, profile)?;
    }
    Ok(())
}

fn stage_name(kind: StageKind) -> &'static str {
    match kind {
        StageKind::Vertex => "vertex",
        StageKind::Fragment => "fragment",
    }
}

/// Every located variable of one direction must end at or below `limit`.
fn check_locations(
    stage: &Stage,
    resolved: &[i32],
    types: &TypeMap,
    direction: Direction,
    limit: u64,
    kind: TargetErrorKind,
    profile: Profile,
) -> Result<(), TargetError> {
    let what = match (stage.kind, direction) {
        (StageKind::Vertex, Direction::In) => "vertex attribute locations",
        (StageKind::Fragment, Direction::Out) => "draw buffers",
        _ => "varying locations",
    };
    for (slot, var) in stage.interface.iter().enumerate() {
        if var.direction != direction || var.semantic == Semantic::Position {
            continue;
        }
        let Some(&start) = resolved.get(slot) else {
            continue;
        };
        let Ok(start) = u64::try_from(start) else {
            continue;
        };
        let end = start.saturating_add(types.get(var.ty)?.location_span());
        if end > limit {
            return Err(TargetError::new(
                kind,
                var.span,
                format!(
                    "{} {} {:?} occupies locations {start}..{end}; {} guarantees {limit} {what}",
                    stage_name(stage.kind),
                    match direction {
                        Direction::In => "input",
                        Direction::Out => "output",
                    },
                    var.name,
                    profile.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The uniform slots the functions reachable from `stage`'s entry load
/// from (through any storage path), in slot order.
fn used_uniforms(stage: &Stage) -> BTreeSet<u64> {
    let mut used = BTreeSet::new();
    let mut seen: BTreeSet<usize> = BTreeSet::new();
    let mut pending: Vec<Handle<Function>> = stage.entry.into_iter().collect();
    while let Some(handle) = pending.pop() {
        if !seen.insert(handle.index()) {
            continue;
        }
        let Some(function) = stage.functions.get(handle) else {
            continue;
        };
        for (_, block) in function.blocks.iter() {
            for instruction in &block.instructions {
                match &instruction.kind {
                    InstructionKind::Load { source, .. }
                        if source.storage == StorageKind::Uniform =>
                    {
                        used.insert(source.slot);
                    }
                    InstructionKind::Call {
                        callee: Callee::Function(callee),
                        ..
                    } => pending.push(*callee),
                    _ => {}
                }
            }
        }
    }
    used
}

/// Default-block components of a value (GL 4.2 section 2.11.7: a scalar
/// takes at most 1, a vector its size, a matrix 4 × min(rows, columns);
/// arrays and structures the sum of their members).
fn components(ty: &GlslType) -> u64 {
    match ty {
        GlslType::Scalar(_) => 1,
        GlslType::Vector { size, .. } => u64::from(*size),
        GlslType::Matrix { rows, columns } => 4 * u64::from((*rows).min(*columns)),
        GlslType::Sampler2D => 0,
        GlslType::Array { element, length } => components(element).saturating_mul(*length),
        GlslType::Record(record) => record.fields.iter().map(|f| components(&f.ty)).sum(),
    }
}

/// The uniform storage and texture units of one stage.
fn check_uniforms(
    module: &Module,
    types: &TypeMap,
    stage: StageKind,
    used: &BTreeSet<u64>,
    limits: Limits,
    profile: Profile,
) -> Result<(), TargetError> {
    let (mut samplers, mut blocks, mut default_components) = (0u64, 0u64, 0u64);
    let name = stage_name(stage);
    for &slot in used {
        let Some(uniform) = usize::try_from(slot)
            .ok()
            .and_then(|s| module.uniforms.get(s))
        else {
            continue;
        };
        let ty = types.get(uniform.ty)?;
        let error = |kind, message: String| Err(TargetError::new(kind, uniform.span, message));
        if matches!(ty, GlslType::Sampler2D) {
            samplers += 1;
            if samplers > limits.texture_units {
                return error(
                    TargetErrorKind::TextureUnitLimit,
                    format!(
                        "sampler uniform {:?} is the {name} stage's sampler number {samplers}; {} \
                         guarantees {} texture units per stage",
                        uniform.name,
                        profile.name(),
                        limits.texture_units
                    ),
                );
            }
            continue;
        }
        let block = match limits.model {
            UniformModel::RecordBlocks => uniform.kind == UniformKind::Record,
            UniformModel::OneBlockEach => true,
        };
        if block {
            blocks += 1;
            let bytes = std140_layout(ty).size.div_ceil(16).saturating_mul(16);
            if bytes > limits.uniform_block_bytes {
                return error(
                    TargetErrorKind::UniformLimit,
                    format!(
                        "uniform {:?} needs a {bytes}-byte std140 block; {} guarantees {} bytes \
                         per uniform block",
                        uniform.name,
                        profile.name(),
                        limits.uniform_block_bytes
                    ),
                );
            }
            if blocks > limits.uniform_blocks {
                return error(
                    TargetErrorKind::UniformLimit,
                    format!(
                        "uniform {:?} is the {name} stage's uniform block number {blocks}; {} \
                         guarantees {} uniform blocks per stage",
                        uniform.name,
                        profile.name(),
                        limits.uniform_blocks
                    ),
                );
            }
        } else {
            default_components = default_components.saturating_add(components(ty));
            if default_components > limits.uniform_components {
                return error(
                    TargetErrorKind::UniformLimit,
                    format!(
                        "uniform {:?} brings the {name} stage's default-block uniforms to \
                         {default_components} components; {} guarantees {}",
                        uniform.name,
                        profile.name(),
                        limits.uniform_components
                    ),
                );
            }
        }
    }
    Ok(())
}
