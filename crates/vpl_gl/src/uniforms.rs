//! Uniform values addressed by logical VPL paths.
//!
//! A path is a uniform's logical name followed by `.field` and `[index]`
//! selectors down to a scalar, vector or matrix leaf, e.g.
//! `material.ambient_color` or `lights[1].color`. Record uniforms are
//! std140 blocks: their values are written into a byte buffer at the
//! offsets of the backend's std140 layout. Other uniforms are set through
//! `glUniform*` on the GLSL expression the path maps to (`vpl_u3[1].vpl_m0`).

use vpl::backends::glsl::reflect::Std140Detail;
use vpl::backends::glsl::{GlslType, ProgramArtifact, std140_layout};
use vpl::ir::ScalarKind;

/// One value for a default-block (non-block) uniform leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafValue {
    /// The GLSL expression to query the location of (`vpl_u0`, `vpl_u2[1].vpl_m0`).
    pub gl_expression: String,
    /// The leaf type (scalar, vector or matrix).
    pub ty: GlslType,
    /// Components; matrices column-major.
    pub values: Vec<f64>,
}

/// Uniform values for one draw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Uniforms {
    /// std140 byte images of record uniforms, by uniform slot (zero-filled
    /// until assigned).
    pub blocks: Vec<(usize, Vec<u8>)>,
    /// Default-block leaf values, applied in order.
    pub leaves: Vec<LeafValue>,
}

fn components(ty: &GlslType) -> Option<(ScalarKind, usize, usize)> {
    match ty {
        GlslType::Scalar(k) => Some((*k, 1, 1)),
        GlslType::Vector { kind, size } => Some((*kind, 1, usize::from(*size))),
        GlslType::Matrix { rows, columns } => {
            Some((ScalarKind::Float, usize::from(*columns), usize::from(*rows)))
        }
        _ => None,
    }
}

/// The largest std140 block image the harness allocates (far above any
/// driver's `GL_MAX_UNIFORM_BLOCK_SIZE`; larger blocks fail to link anyway).
pub const MAX_BLOCK_BYTES: u64 = 16 << 20;

impl Uniforms {
    /// Zero-filled blocks for every record uniform of `artifact` (empty
    /// for blocks over [`MAX_BLOCK_BYTES`]).
    pub fn new(artifact: &ProgramArtifact) -> Self {
        let blocks = artifact
            .uniforms()
            .iter()
            .filter(|u| u.block_name.is_some())
            .map(|u| {
                let size = std140_layout(&u.binding.ty).size;
                (
                    u.binding.slot,
                    vec![0u8; usize::try_from(size).unwrap_or(0)],
                )
            })
            .collect();
        Uniforms {
            blocks,
            leaves: Vec::new(),
        }
    }

    /// Assigns `values` to the leaf at `path`.
    pub fn set(
        &mut self,
        artifact: &ProgramArtifact,
        path: &str,
        values: &[f64],
    ) -> Result<(), String> {
        // The uniform whose name is the longest prefix followed by a selector.
        let uniform = artifact
            .uniforms()
            .iter()
            .filter(|u| {
                let name = &u.binding.name;
                path.starts_with(name.as_str())
                    && matches!(path.as_bytes().get(name.len()), None | Some(b'.' | b'['))
            })
            .max_by_key(|u| u.binding.name.len())
            .ok_or_else(|| format!("no uniform matches {path:?}"))?;
        let mut rest = &path[uniform.binding.name.len()..];
        let mut ty = uniform.binding.ty.clone();
        let mut layout = std140_layout(&ty);
        let mut offset = 0u64;
        let mut expression = uniform.binding.gl_name().to_string();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let field_name = &after[..end];
                let GlslType::Record(record) = &ty else {
                    return Err(format!("{path:?}: .{field_name} selects from a non-record"));
                };
                let (index, field) = record
                    .fields
                    .iter()
                    .enumerate()
                    .find(|(_, f)| f.name == field_name)
                    .ok_or_else(|| format!("{path:?}: no field {field_name:?}"))?;
                let Std140Detail::Record { members } = &layout.detail else {
                    return Err(format!("{path:?}: layout mismatch"));
                };
                let (member_offset, member_layout) = members[index].clone();
                offset += member_offset;
                expression.push('.');
                expression.push_str(&field.gl_name);
                let next = field.ty.clone();
                ty = next;
                layout = member_layout;
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after
                    .find(']')
                    .ok_or_else(|| format!("{path:?}: unclosed ["))?;
                let index: u64 = after[..end]
                    .parse()
                    .map_err(|_| format!("{path:?}: bad index {:?}", &after[..end]))?;
                let GlslType::Array { element, length } = &ty else {
                    return Err(format!("{path:?}: [{index}] selects from a non-array"));
                };
                if index >= *length {
                    return Err(format!("{path:?}: index {index} out of range 0..{length}"));
                }
                let Std140Detail::Array {
                    stride,
                    element: element_layout,
                } = &layout.detail
                else {
                    return Err(format!("{path:?}: layout mismatch"));
                };
                offset += stride * index;
                expression.push_str(&format!("[{index}]"));
                let (next_ty, next_layout) = ((**element).clone(), (**element_layout).clone());
                ty = next_ty;
                layout = next_layout;
                rest = &after[end + 1..];
            } else {
                return Err(format!("{path:?}: expected . or [ at {rest:?}"));
            }
        }
        let (kind, columns, rows) = components(&ty).ok_or_else(|| {
            format!(
                "{path:?} is a {}; assign its scalar, vector or matrix members one by one",
                ty.spelling()
            )
        })?;
        if values.len() != columns * rows {
            return Err(format!(
                "{path:?} has type {} and needs {} values, got {}",
                ty.spelling(),
                columns * rows,
                values.len()
            ));
        }
        match self
            .blocks
            .iter_mut()
            .find(|(s, _)| *s == uniform.binding.slot)
        {
            Some((_, bytes)) => {
                for column in 0..columns {
                    for row in 0..rows {
                        let v = values[column * rows + row];
                        let word = match kind {
                            ScalarKind::Float => (v as f32).to_bits(),
                            ScalarKind::Int => (v as i32) as u32,
                            ScalarKind::Bool => u32::from(v != 0.0),
                        };
                        let at = (offset + column as u64 * 16 + row as u64 * 4) as usize;
                        bytes
                            .get_mut(at..at + 4)
                            .ok_or_else(|| format!("{path:?}: offset beyond the block"))?
                            .copy_from_slice(&word.to_le_bytes());
                    }
                }
            }
            None => self.leaves.push(LeafValue {
                gl_expression: expression,
                ty,
                values: values.to_vec(),
            }),
        }
        Ok(())
    }
}
