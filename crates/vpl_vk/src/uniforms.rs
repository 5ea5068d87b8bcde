//! Uniform buffer contents addressed by logical VPL paths.
//!
//! A path is a uniform's name followed by `.field` and `[index]`
//! selectors down to a scalar, vector or matrix leaf (`material.color`,
//! `ints[3]`), as for the GL harness. The bytes are placed at the
//! offsets of the reflection's std140 layout; matrices are column-major
//! with columns 16 bytes apart, Booleans are 32-bit 0/1.

use crate::program::{Resource, VkProgram};
use serde_json::Value;

/// The bytes of every uniform buffer of a program, by binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniformData {
    /// `(binding, bytes)` per uniform buffer, zero-filled until set.
    pub buffers: Vec<(u32, Vec<u8>)>,
    names: Vec<String>,
    layouts: Vec<Value>,
}

/// The largest uniform buffer the harness allocates.
pub const MAX_BUFFER_BYTES: u64 = 16 << 20;

impl UniformData {
    /// Zero-filled buffers for `program`.
    pub fn new(program: &VkProgram) -> Self {
        let mut data = UniformData {
            buffers: Vec::new(),
            names: Vec::new(),
            layouts: Vec::new(),
        };
        for r in &program.resources {
            if let Resource::UniformBuffer {
                name,
                binding,
                size,
                layout,
            } = r
            {
                let size = (*size).min(MAX_BUFFER_BYTES) as usize;
                data.buffers.push((*binding, vec![0u8; size]));
                data.names.push(name.clone());
                data.layouts.push(layout.clone());
            }
        }
        data
    }

    /// Assigns `values` to the leaf at `path`.
    pub fn set(&mut self, path: &str, values: &[f64]) -> Result<(), String> {
        let (index, name) = self
            .names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                path.starts_with(n.as_str())
                    && matches!(path.as_bytes().get(n.len()), None | Some(b'.' | b'['))
            })
            .max_by_key(|(_, n)| n.len())
            .ok_or_else(|| format!("no uniform buffer matches {path:?}"))?;
        let mut rest = &path[name.len()..];
        let mut layout = self.layouts[index].clone();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let field = &after[..end];
                layout = layout["fields"]
                    .as_array()
                    .and_then(|f| f.iter().find(|f| f["name"] == field))
                    .map(|f| f["layout"].clone())
                    .ok_or_else(|| format!("{path:?}: no field {field:?}"))?;
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after
                    .find(']')
                    .ok_or_else(|| format!("{path:?}: unclosed ["))?;
                let i: u64 = after[..end]
                    .parse()
                    .map_err(|_| format!("{path:?}: bad index {:?}", &after[..end]))?;
                let length = layout["length"]
                    .as_u64()
                    .ok_or_else(|| format!("{path:?}: [{i}] selects from a non-array"))?;
                if i >= length {
                    return Err(format!("{path:?}: index {i} out of range 0..{length}"));
                }
                let stride = layout["stride"].as_u64().unwrap_or(0);
                let element = &layout["element"];
                // The element layout carries element 0's offsets.
                let base = element["offset"].as_u64().unwrap_or(0);
                layout = shift(element, base + i * stride);
                rest = &after[end + 1..];
            } else {
                return Err(format!("{path:?}: expected . or [ at {rest:?}"));
            }
        }
        self.write(index, path, &layout, values)
    }

    fn write(
        &mut self,
        index: usize,
        path: &str,
        layout: &Value,
        values: &[f64],
    ) -> Result<(), String> {
        let ty = layout["type"].as_str().unwrap_or("");
        let offset = layout["offset"].as_u64().unwrap_or(0);
        let (kind, columns, rows) = leaf_shape(ty)
            .ok_or_else(|| format!("{path:?} is a {ty}; assign its members one by one"))?;
        if values.len() != columns * rows {
            return Err(format!(
                "{path:?} has type {ty} and needs {} values, got {}",
                columns * rows,
                values.len()
            ));
        }
        let bytes = &mut self.buffers[index].1;
        for c in 0..columns {
            for r in 0..rows {
                let v = values[c * rows + r];
                let word = match kind {
                    'f' => (v as f32).to_bits(),
                    'i' => (v as i32) as u32,
                    _ => u32::from(v != 0.0),
                };
                let at = (offset + c as u64 * 16 + r as u64 * 4) as usize;
                bytes
                    .get_mut(at..at + 4)
                    .ok_or_else(|| format!("{path:?}: offset beyond the buffer"))?
                    .copy_from_slice(&word.to_le_bytes());
            }
        }
        Ok(())
    }
}

/// A copy of `layout` with every offset moved so that it starts at `to`.
fn shift(layout: &Value, to: u64) -> Value {
    let from = layout["offset"].as_u64().unwrap_or(0);
    let mut out = layout.clone();
    fn walk(v: &mut Value, from: u64, to: u64) {
        if let Some(o) = v.get("offset").and_then(Value::as_u64) {
            v["offset"] = Value::from(o - from + to);
        }
        if let Some(e) = v.get_mut("element") {
            walk(e, from, to);
        }
        if let Some(fields) = v.get_mut("fields").and_then(Value::as_array_mut) {
            for f in fields {
                walk(&mut f["layout"], from, to);
            }
        }
    }
    walk(&mut out, from, to);
    out
}

/// (kind: 'f' float, 'i' int, 'b' bool; columns; rows) of a leaf type.
fn leaf_shape(ty: &str) -> Option<(char, usize, usize)> {
    match ty {
        "float" => Some(('f', 1, 1)),
        "int" => Some(('i', 1, 1)),
        "bool" => Some(('b', 1, 1)),
        _ => {
            if let Some(m) = ty.strip_prefix("mat") {
                let (c, r) = m.split_once('x')?;
                return Some(('f', c.parse().ok()?, r.parse().ok()?));
            }
            let (kind, n) = if let Some(n) = ty.strip_prefix("ivec") {
                ('i', n)
            } else if let Some(n) = ty.strip_prefix("bvec") {
                ('b', n)
            } else {
                ('f', ty.strip_prefix("vec")?)
            };
            Some((kind, 1, n.parse().ok()?))
        }
    }
}
