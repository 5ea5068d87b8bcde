//! std140 layout and the JSON reflection document (spec section 12.1).
//!
//! The layout follows the OpenGL 4.2 core std140 rules (section 7.6.2.2):
//! scalars take 4 bytes, two-component vectors 8, three- and four-component
//! vectors align to 16; arrays and matrix columns round their element
//! alignment and stride up to 16; structs align to the rounded-up largest
//! member alignment and pad their size to it.

use super::artifact::{GlslType, InterfaceBinding, ProgramArtifact, UniformBinding};
use crate::ir::{Direction, ScalarKind, Semantic, UniformKind};
use std::fmt::Write as _;

/// The std140 layout of a type placed at some offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Std140Layout {
    /// Base alignment in bytes.
    pub align: u64,
    /// Size in bytes (for structs, padded to the alignment).
    pub size: u64,
    /// Shape-specific detail.
    pub detail: Std140Detail,
}

/// Shape-specific layout facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Std140Detail {
    /// Scalar or vector.
    Plain,
    /// Column-major matrix: columns `matrix_stride` bytes apart.
    Matrix {
        /// Bytes between columns (16).
        matrix_stride: u64,
    },
    /// Array: elements `stride` bytes apart.
    Array {
        /// Bytes between elements.
        stride: u64,
        /// The element layout.
        element: Box<Std140Layout>,
    },
    /// Record: members at `offsets`.
    Record {
        /// (member offset, member layout) in field order.
        members: Vec<(u64, Std140Layout)>,
    },
}

fn round_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align).saturating_mul(align)
}

/// The std140 layout of `ty`. Samplers (never block members) get size 0.
pub fn std140_layout(ty: &GlslType) -> Std140Layout {
    let plain = |align, size| Std140Layout {
        align,
        size,
        detail: Std140Detail::Plain,
    };
    match ty {
        GlslType::Scalar(_) => plain(4, 4),
        GlslType::Vector { size: 2, .. } => plain(8, 8),
        GlslType::Vector { size: 3, .. } => plain(16, 12),
        GlslType::Vector { .. } => plain(16, 16),
        GlslType::Matrix { columns, .. } => Std140Layout {
            align: 16,
            size: 16 * u64::from(*columns),
            detail: Std140Detail::Matrix { matrix_stride: 16 },
        },
        GlslType::Sampler2D => plain(1, 0),
        GlslType::Array { element, length } => {
            let element = std140_layout(element);
            let align = round_up(element.align, 16);
            let stride = round_up(element.size, align);
            Std140Layout {
                align,
                size: stride.saturating_mul(*length),
                detail: Std140Detail::Array {
                    stride,
                    element: Box::new(element),
                },
            }
        }
        GlslType::Record(record) => {
            let mut offset = 0u64;
            let mut align = 16u64;
            let mut members = Vec::with_capacity(record.fields.len());
            for field in &record.fields {
                let layout = std140_layout(&field.ty);
                align = align.max(round_up(layout.align, 16));
                offset = round_up(offset, layout.align);
                let size = layout.size;
                members.push((offset, layout));
                offset = offset.saturating_add(size);
            }
            Std140Layout {
                align,
                size: round_up(offset, align),
                detail: Std140Detail::Record { members },
            }
        }
    }
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn scalar_name(kind: ScalarKind) -> &'static str {
    kind.keyword()
}

fn type_json(out: &mut String, ty: &GlslType) {
    out.push_str("{\"glsl\": ");
    json_string(out, &ty.spelling());
    match ty {
        GlslType::Scalar(k) => {
            let _ = write!(
                out,
                ", \"kind\": \"scalar\", \"element\": \"{}\"",
                scalar_name(*k)
            );
        }
        GlslType::Vector { kind, size } => {
            let _ = write!(
                out,
                ", \"kind\": \"vector\", \"element\": \"{}\", \"size\": {size}",
                scalar_name(*kind)
            );
        }
        GlslType::Matrix { rows, columns } => {
            let _ = write!(
                out,
                ", \"kind\": \"matrix\", \"rows\": {rows}, \"columns\": {columns}"
            );
        }
        GlslType::Sampler2D => out.push_str(", \"kind\": \"sampler2D\""),
        GlslType::Array { element, length } => {
            let _ = write!(
                out,
                ", \"kind\": \"array\", \"length\": {length}, \"element\": "
            );
            type_json(out, element);
        }
        GlslType::Record(record) => {
            out.push_str(", \"kind\": \"record\", \"name\": ");
            json_string(out, &record.name);
            out.push_str(", \"fields\": [");
            for (i, f) in record.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str("{\"name\": ");
                json_string(out, &f.name);
                let _ = write!(out, ", \"gl_name\": \"{}\", \"type\": ", f.gl_name);
                type_json(out, &f.ty);
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push('}');
}

fn layout_json(out: &mut String, layout: &Std140Layout, offset: u64) {
    let _ = write!(
        out,
        "{{\"offset\": {offset}, \"size\": {}, \"align\": {}",
        layout.size, layout.align
    );
    match &layout.detail {
        Std140Detail::Plain => {}
        Std140Detail::Matrix { matrix_stride } => {
            let _ = write!(out, ", \"matrix_stride\": {matrix_stride}");
        }
        Std140Detail::Array { stride, element } => {
            let _ = write!(out, ", \"array_stride\": {stride}, \"element\": ");
            layout_json(out, element, 0);
        }
        Std140Detail::Record { members } => {
            out.push_str(", \"members\": [");
            for (i, (member_offset, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                layout_json(out, member, offset + member_offset);
            }
            out.push(']');
        }
    }
    out.push('}');
}

fn uniform_json(out: &mut String, u: &UniformBinding) {
    let b = &u.binding;
    out.push_str("    {\"slot\": ");
    let _ = write!(out, "{}, \"name\": ", b.slot);
    json_string(out, &b.name);
    let _ = write!(
        out,
        ", \"gl_name\": \"{}\", \"kind\": \"{}\", \"location\": {}, \"block\": ",
        b.gl_name(),
        match u.kind {
            UniformKind::Scalar => "scalar",
            UniformKind::Record => "record",
            UniformKind::Array => "array",
        },
        b.location
    );
    match &u.block_name {
        Some(name) => json_string(out, name),
        None => out.push_str("null"),
    }
    let _ = write!(
        out,
        ", \"block_binding\": {}, \"texture_unit\": {},\n      \"type\": ",
        u.block_binding, u.texture_unit
    );
    type_json(out, &b.ty);
    if u.block_name.is_some() {
        out.push_str(",\n      \"std140\": ");
        layout_json(out, &std140_layout(&b.ty), 0);
    }
    out.push('}');
}

fn interface_json(out: &mut String, i: &InterfaceBinding) {
    let b = &i.binding;
    let _ = write!(out, "    {{\"slot\": {}, \"name\": ", b.slot);
    json_string(out, &b.name);
    let _ = write!(
        out,
        ", \"gl_name\": \"{}\", \"direction\": \"{}\", \"semantic\": \"{}\", \"location\": {}, \"locations\": {}, \"flat\": {},\n      \"type\": ",
        b.gl_name(),
        match i.direction {
            Direction::In => "in",
            Direction::Out => "out",
        },
        Semantic::keyword(i.semantic),
        b.location,
        if b.location < 0 {
            0
        } else {
            b.ty.location_span()
        },
        i.flat
    );
    type_json(out, &b.ty);
    out.push('}');
}

fn list<T>(out: &mut String, key: &str, items: &[T], item: fn(&mut String, &T)) {
    let _ = write!(out, "  \"{key}\": [");
    for (n, x) in items.iter().enumerate() {
        out.push_str(if n == 0 { "\n" } else { ",\n" });
        item(out, x);
    }
    out.push_str(if items.is_empty() { "]" } else { "\n  ]" });
}

impl ProgramArtifact {
    /// The reflection document: version, primary fragment output, and every
    /// uniform and interface binding with its GLSL name, type, location,
    /// block binding point, texture unit and (for blocks) std140 layout.
    /// Deterministic: the same artifact always gives the same bytes.
    pub fn reflection_json(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\n  \"version\": {},\n  \"profile\": \"core\",\n  \"fragment_color_output\": \"{}\",\n  \"fragment_color_location\": {},\n",
            self.version, self.fragment_color_output, self.fragment_color_location
        );
        list(&mut out, "uniforms", &self.uniforms, uniform_json);
        out.push_str(",\n");
        list(
            &mut out,
            "vertex_interface",
            &self.vertex_interface,
            interface_json,
        );
        out.push_str(",\n");
        list(
            &mut out,
            "fragment_interface",
            &self.fragment_interface,
            interface_json,
        );
        out.push_str("\n}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::glsl::artifact::{GlslField, GlslRecord};
    use std::sync::Arc;

    fn vec(n: u8) -> GlslType {
        GlslType::Vector {
            kind: ScalarKind::Float,
            size: n,
        }
    }

    #[test]
    fn std140_rules() {
        let record = GlslType::Record(Arc::new(GlslRecord {
            name: "R".into(),
            gl_name: "vpl_R0".into(),
            fields: vec![
                GlslField {
                    name: "a".into(),
                    gl_name: "vpl_m0".into(),
                    ty: GlslType::Scalar(ScalarKind::Float),
                },
                GlslField {
                    name: "b".into(),
                    gl_name: "vpl_m1".into(),
                    ty: vec(3),
                },
                GlslField {
                    name: "c".into(),
                    gl_name: "vpl_m2".into(),
                    ty: vec(2),
                },
                GlslField {
                    name: "d".into(),
                    gl_name: "vpl_m3".into(),
                    ty: GlslType::Array {
                        element: Box::new(GlslType::Scalar(ScalarKind::Int)),
                        length: 3,
                    },
                },
                GlslField {
                    name: "e".into(),
                    gl_name: "vpl_m4".into(),
                    ty: GlslType::Matrix {
                        rows: 2,
                        columns: 3,
                    },
                },
            ],
        }));
        let layout = std140_layout(&record);
        let Std140Detail::Record { members } = &layout.detail else {
            panic!()
        };
        let offsets: Vec<u64> = members.iter().map(|m| m.0).collect();
        // float@0, vec3@16 (align 16), vec2@32 (after 28, align 8), int[3]@48 (stride 16), mat3x2@96
        assert_eq!(offsets, [0, 16, 32, 48, 96]);
        assert_eq!(layout.size, 144);
        assert_eq!(std140_layout(&vec(3)).size, 12);
    }
}
