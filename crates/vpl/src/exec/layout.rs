//! Word layout of values: every value is a run of 32-bit words (a `bool`
//! is 0 or 1, an `int` its two's-complement bits, a `float` its binary32
//! bits, a sampler the index of its bound texture). Vectors are their
//! components, matrices their columns in order, arrays their elements,
//! records their fields in declaration order.

use super::error::ExecError;
use crate::ir::{Handle, Module, Type, TypeInner};
use crate::verify::ModuleInfo;

/// Word sizes (and record field offsets) of every type of a module.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    words: Vec<u32>,
    fields: Vec<Vec<u32>>,
}

/// The largest value, in words, the executor lays out (256 KiB).
pub const MAX_VALUE_WORDS: u64 = 1 << 16;

impl Layout {
    /// Lays out every type in the verifier's dependency order.
    pub(crate) fn new(module: &Module, info: &ModuleInfo) -> Result<Self, ExecError> {
        let n = module.types.len();
        let mut words = vec![0u32; n];
        let mut fields = vec![Vec::new(); n];
        for &h in info.type_order() {
            let size: u64 = match &module.types[h].inner {
                TypeInner::Void => 0,
                TypeInner::Scalar(_) | TypeInner::Sampler(_) => 1,
                TypeInner::Vector { size, .. } => u64::from(*size),
                TypeInner::Matrix { rows, columns } => u64::from(*rows) * u64::from(*columns),
                TypeInner::Array { element, length } => {
                    u64::from(words[element.index()]).saturating_mul(*length)
                }
                TypeInner::Record(r) => {
                    let mut offset = 0u64;
                    let mut offsets = Vec::with_capacity(r.fields.len());
                    for f in &r.fields {
                        offsets.push(offset as u32);
                        offset = offset.saturating_add(u64::from(words[f.ty.index()]));
                        if offset > MAX_VALUE_WORDS {
                            break;
                        }
                    }
                    fields[h.index()] = offsets;
                    offset
                }
            };
            if size > MAX_VALUE_WORDS {
                return Err(ExecError::Limit(format!(
                    "a value of {size} words exceeds the executor's {MAX_VALUE_WORDS}-word bound"
                )));
            }
            words[h.index()] = size as u32;
        }
        Ok(Layout { words, fields })
    }

    /// The size of a value of type `ty`, in words.
    pub(crate) fn words(&self, ty: Handle<Type>) -> u32 {
        self.words.get(ty.index()).copied().unwrap_or(0)
    }

    /// The word offset of field `index` within record type `ty`.
    pub(crate) fn field_offset(&self, ty: Handle<Type>, index: usize) -> u32 {
        self.fields
            .get(ty.index())
            .and_then(|f| f.get(index))
            .copied()
            .unwrap_or(0)
    }
}
