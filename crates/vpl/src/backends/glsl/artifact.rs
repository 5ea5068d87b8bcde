//! The program artifact and its bindings (spec section 12.1).

use crate::ir::{Direction, ScalarKind, Semantic, UniformKind};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// A self-contained description of a value type as the GLSL code spells it.
/// The artifact owns it, so consumers need no module to interpret bindings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlslType {
    /// `bool`, `int` or `float`.
    Scalar(ScalarKind),
    /// `bvecN`, `ivecN` or `vecN`.
    Vector {
        /// Element kind.
        kind: ScalarKind,
        /// 2, 3 or 4.
        size: u8,
    },
    /// A floating matrix (`matC` / `matCxR`).
    Matrix {
        /// Rows.
        rows: u8,
        /// Columns.
        columns: u8,
    },
    /// `sampler2D`.
    Sampler2D,
    /// A one-dimensional array.
    Array {
        /// Element type (never an array: arrays of arrays are rejected).
        element: Box<GlslType>,
        /// Element count, at most `i32::MAX`.
        length: u64,
    },
    /// A generated `struct vpl_R<k>`.
    Record(Arc<GlslRecord>),
}

/// A record declaration as emitted (`struct vpl_R<k>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlslRecord {
    /// The record's display name in the VPL module.
    pub name: String,
    /// The generated struct name, `vpl_R<k>`.
    pub gl_name: String,
    /// Fields in declaration order.
    pub fields: Vec<GlslField>,
}

/// One field of a [`GlslRecord`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlslField {
    /// The VPL field name.
    pub name: String,
    /// The generated member name, `vpl_m<i>`.
    pub gl_name: String,
    /// Field type.
    pub ty: GlslType,
}

impl GlslType {
    /// The GLSL type spelling (`vec4`, `mat3x2`, `vpl_R0[4]`, ...).
    pub fn spelling(&self) -> String {
        let mut out = String::new();
        self.write_spelling(&mut out);
        out
    }

    pub(super) fn write_spelling(&self, out: &mut String) {
        use std::fmt::Write as _;
        match self {
            GlslType::Scalar(kind) => out.push_str(kind.keyword()),
            GlslType::Vector { kind, size } => {
                out.push_str(match kind {
                    ScalarKind::Bool => "bvec",
                    ScalarKind::Int => "ivec",
                    ScalarKind::Float => "vec",
                });
                let _ = write!(out, "{size}");
            }
            GlslType::Matrix { rows, columns } if rows == columns => {
                let _ = write!(out, "mat{columns}");
            }
            GlslType::Matrix { rows, columns } => {
                let _ = write!(out, "mat{columns}x{rows}");
            }
            GlslType::Sampler2D => out.push_str("sampler2D"),
            GlslType::Array { element, length } => {
                element.write_spelling(out);
                let _ = write!(out, "[{length}]");
            }
            GlslType::Record(record) => out.push_str(&record.gl_name),
        }
    }

    /// Whether an integer scalar occurs anywhere in the type (such varyings
    /// are `flat`).
    pub fn contains_integer(&self) -> bool {
        match self {
            GlslType::Scalar(k) | GlslType::Vector { kind: k, .. } => *k == ScalarKind::Int,
            GlslType::Matrix { .. } | GlslType::Sampler2D => false,
            GlslType::Array { element, .. } => element.contains_integer(),
            GlslType::Record(r) => r.fields.iter().any(|f| f.ty.contains_integer()),
        }
    }

    /// Interface locations the type consumes (section 12.2): one per
    /// scalar/vector, one per matrix column, recursive spans for arrays and
    /// records. Saturates instead of overflowing.
    pub fn location_span(&self) -> u64 {
        match self {
            GlslType::Scalar(_) | GlslType::Vector { .. } | GlslType::Sampler2D => 1,
            GlslType::Matrix { columns, .. } => u64::from(*columns),
            GlslType::Array { element, length } => element.location_span().saturating_mul(*length),
            GlslType::Record(r) => r
                .fields
                .iter()
                .fold(0u64, |sum, f| sum.saturating_add(f.ty.location_span())),
        }
    }
}

/// What every binding records (section 12.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The logical (VPL) name.
    pub name: String,
    gl_name: CString,
    /// The value type.
    pub ty: GlslType,
    /// Position in the source list (uniform list or stage interface list).
    pub slot: usize,
    /// Resolved location; -1 where GLSL has none (uniforms, built-ins).
    pub location: i32,
}

impl Binding {
    pub(super) fn new(
        name: &str,
        gl_name: String,
        ty: GlslType,
        slot: usize,
        location: i32,
    ) -> Self {
        Binding {
            name: name.to_string(),
            // Generated names are ASCII identifiers without NUL bytes.
            gl_name: CString::new(gl_name).unwrap_or_default(),
            ty,
            slot,
            location,
        }
    }

    /// The exact GLSL name (`vpl_u0`, `vpl_attribute0`, `gl_Position`, ...).
    pub fn gl_name(&self) -> &str {
        self.gl_name.to_str().unwrap_or_default()
    }

    /// The GLSL name with its one trailing zero byte, for native GL queries.
    pub fn gl_name_with_nul(&self) -> &CStr {
        &self.gl_name
    }
}

/// A uniform binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniformBinding {
    /// Name, GLSL name, type, slot; `location` is -1 (GLSL 4.20 has no
    /// explicit uniform locations; query the driver with the GLSL name).
    pub binding: Binding,
    /// The canonical uniform kind.
    pub kind: UniformKind,
    /// For record uniforms, the interface block name `vpl_Block<slot>`.
    pub block_name: Option<String>,
    /// The block binding point, in record-uniform order; -1 for non-blocks.
    pub block_binding: i32,
    /// The texture unit of a sampler uniform (`layout(binding = N)`), in
    /// sampler-uniform order; -1 for other uniforms.
    pub texture_unit: i32,
}

/// A stage interface binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceBinding {
    /// Name, GLSL name, type, interface slot and resolved location (-1 for
    /// `Position`, which maps to `gl_Position` / `gl_FragCoord`).
    pub binding: Binding,
    /// Input or output.
    pub direction: Direction,
    /// Semantic tag.
    pub semantic: Semantic,
    /// Whether the declaration is `flat` (integer-containing varyings).
    pub flat: bool,
}

/// The result of compiling a published module: immutable code strings and
/// reflection (section 12.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramArtifact {
    pub(super) version: u32,
    pub(super) vertex_code: String,
    pub(super) fragment_code: String,
    pub(super) uniforms: Vec<UniformBinding>,
    pub(super) vertex_interface: Vec<InterfaceBinding>,
    pub(super) fragment_interface: Vec<InterfaceBinding>,
    pub(super) fragment_color_output: String,
    pub(super) fragment_color_location: i32,
}

impl ProgramArtifact {
    /// The GLSL version (420).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The vertex shader source; no terminator (pass its byte length).
    pub fn vertex_code(&self) -> &str {
        &self.vertex_code
    }

    /// The fragment shader source; no terminator (pass its byte length).
    pub fn fragment_code(&self) -> &str {
        &self.fragment_code
    }

    /// Uniform bindings in uniform-list order.
    pub fn uniforms(&self) -> &[UniformBinding] {
        &self.uniforms
    }

    /// Vertex interface bindings in interface-list order.
    pub fn vertex_interface(&self) -> &[InterfaceBinding] {
        &self.vertex_interface
    }

    /// Fragment interface bindings in interface-list order.
    pub fn fragment_interface(&self) -> &[InterfaceBinding] {
        &self.fragment_interface
    }

    /// The GLSL name of the primary (`fragment_color`) output.
    pub fn fragment_color_output(&self) -> &str {
        &self.fragment_color_output
    }

    /// The resolved location of the primary fragment output.
    pub fn fragment_color_location(&self) -> i32 {
        self.fragment_color_location
    }

    /// The uniform binding called `name` (logical name), if any.
    pub fn uniform(&self, name: &str) -> Option<&UniformBinding> {
        self.uniforms.iter().find(|u| u.binding.name == name)
    }
}
