//! The uniform-buffer layout of the naga targets: std140 on every target.
//!
//! One layout for all targets keeps a host's uniform data identical
//! whether it feeds SPIR-V, WGSL, GLSL ES, MSL or HLSL, and it is the
//! layout the GLSL 4.20 backend gives record blocks. Every std140 offset
//! is also a valid offset under the WGSL/Vulkan uniform rules once the
//! host types are shaped so that their natural layout equals std140
//! (`super::lower` pads records with explicit `u32` members and widens
//! scalar and two-component array elements and two-row matrix columns to
//! four components); the tests re-read the WGSL output and compare.

use crate::ir::{Handle, Module, Type, TypeInner};

/// The std140 layout of one VPL value type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Base alignment in bytes.
    pub align: u64,
    /// Size in bytes (for arrays and records a multiple of 16).
    pub size: u64,
    /// What the type is made of.
    pub detail: Detail,
}

/// The parts of a [`Layout`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// A scalar, vector or matrix leaf (matrix columns 16 bytes apart).
    Leaf,
    /// An array: element stride (a multiple of 16) and element layout.
    Array {
        /// Bytes between elements.
        stride: u64,
        /// Element count.
        length: u64,
        /// The element layout.
        element: Box<Layout>,
    },
    /// A record: offset and layout of each field, in field order.
    Record {
        /// `(offset, layout)` per field.
        fields: Vec<(u64, Layout)>,
    },
}

fn round_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align).saturating_mul(align)
}

/// The std140 layout of `ty`, or `None` for a type without one (void,
/// samplers, records containing them) or beyond `u32` sizes.
pub fn std140(module: &Module, ty: Handle<Type>) -> Option<Layout> {
    let layout = match module.types.inner(ty)? {
        TypeInner::Scalar(_) => Layout {
            align: 4,
            size: 4,
            detail: Detail::Leaf,
        },
        TypeInner::Vector { size, .. } => {
            let (align, bytes) = match size {
                2 => (8, 8),
                3 => (16, 12),
                _ => (16, 16),
            };
            Layout {
                align,
                size: bytes,
                detail: Detail::Leaf,
            }
        }
        TypeInner::Matrix { columns, .. } => Layout {
            align: 16,
            size: 16 * u64::from(*columns),
            detail: Detail::Leaf,
        },
        TypeInner::Array { element, length } => {
            let element = std140(module, *element)?;
            let stride = round_up(element.size, 16);
            Layout {
                align: 16,
                size: stride.checked_mul(*length)?,
                detail: Detail::Array {
                    stride,
                    length: *length,
                    element: Box::new(element),
                },
            }
        }
        TypeInner::Record(record) => {
            let mut offset = 0u64;
            let mut fields = Vec::with_capacity(record.fields.len());
            for field in &record.fields {
                let layout = std140(module, field.ty)?;
                offset = round_up(offset, layout.align);
                let next = offset.checked_add(layout.size)?;
                fields.push((offset, layout));
                offset = next;
            }
            Layout {
                align: 16,
                size: round_up(offset, 16),
                detail: Detail::Record { fields },
            }
        }
        TypeInner::Sampler(_) | TypeInner::Void => return None,
    };
    (layout.size <= u64::from(u32::MAX)).then_some(layout)
}
