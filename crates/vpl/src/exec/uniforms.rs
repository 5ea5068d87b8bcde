//! Uniform values addressed by logical VPL paths (the paths of the GL,
//! Vulkan and WebGL harnesses): a uniform's name, then `.field` and
//! `[index]` selectors down to a scalar, vector or matrix leaf, e.g.
//! `material.ambient_color` or `lights[1].weights[2]`.

use super::error::ExecError;
use super::executable::Executable;
use crate::ir::{ScalarKind, TypeInner};

/// The uniform words of one draw: zero until assigned; sampler uniforms
/// hold their own slot, which selects the texture bound to them.
#[derive(Debug, Clone, PartialEq)]
pub struct UniformValues {
    pub(crate) words: Vec<u32>,
}

impl UniformValues {
    /// Zeroed values for `executable`'s uniforms.
    pub fn new(executable: &Executable) -> Self {
        let mut words = vec![0u32; executable.uniform_words as usize];
        for (slot, _) in &executable.samplers {
            words[executable.uniform_offsets[*slot] as usize] = *slot as u32;
        }
        UniformValues { words }
    }

    /// Assigns `values` (matrices column-major; `int` leaves take the
    /// value converted toward zero and saturated, `bool` leaves nonzero)
    /// to the leaf at `path`.
    pub fn set(
        &mut self,
        executable: &Executable,
        path: &str,
        values: &[f64],
    ) -> Result<(), ExecError> {
        let module = executable.module.module();
        let request = |m: String| ExecError::Request(format!("{path:?}: {m}"));
        let (slot, uniform) = module
            .uniforms
            .iter()
            .enumerate()
            .filter(|(_, u)| {
                path.starts_with(u.name.as_str())
                    && matches!(path.as_bytes().get(u.name.len()), None | Some(b'.' | b'['))
            })
            .max_by_key(|(_, u)| u.name.len())
            .ok_or_else(|| ExecError::Request(format!("no uniform matches {path:?}")))?;
        let mut rest = &path[uniform.name.len()..];
        let mut ty = uniform.ty;
        let mut offset = u64::from(executable.uniform_offsets[slot]);
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let name = &after[..end];
                let TypeInner::Record(r) = &module.types[ty].inner else {
                    return Err(request(format!(".{name} selects from a non-record")));
                };
                let (index, field) = r
                    .field(name)
                    .ok_or_else(|| request(format!("no field {name:?}")))?;
                offset += u64::from(executable.layout.field_offset(ty, index));
                ty = field.ty;
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after
                    .find(']')
                    .ok_or_else(|| request("unclosed [".into()))?;
                let index: u64 = after[..end]
                    .parse()
                    .map_err(|_| request(format!("bad index {:?}", &after[..end])))?;
                let TypeInner::Array { element, length } = &module.types[ty].inner else {
                    return Err(request(format!("[{index}] selects from a non-array")));
                };
                if index >= *length {
                    return Err(request(format!("index {index} out of range 0..{length}")));
                }
                offset += index * u64::from(executable.layout.words(*element));
                ty = *element;
                rest = &after[end + 1..];
            } else {
                return Err(request(format!("expected . or [ at {rest:?}")));
            }
        }
        let (kind, count) = match &module.types[ty].inner {
            TypeInner::Scalar(k) => (*k, 1),
            TypeInner::Vector { kind, size } => (*kind, usize::from(*size)),
            TypeInner::Matrix { rows, columns } => (
                ScalarKind::Float,
                usize::from(*rows) * usize::from(*columns),
            ),
            _ => {
                return Err(request(
                    "not a scalar, vector or matrix; assign its members one by one".into(),
                ));
            }
        };
        if values.len() != count {
            return Err(request(format!(
                "needs {count} values, got {}",
                values.len()
            )));
        }
        for (i, v) in values.iter().enumerate() {
            self.words[offset as usize + i] = match kind {
                ScalarKind::Float => (*v as f32).to_bits(),
                ScalarKind::Int => (*v as i32) as u32,
                ScalarKind::Bool => u32::from(*v != 0.0),
            };
        }
        Ok(())
    }
}
