//! Conversion of the module's type table into [`GlslType`]s.

use super::artifact::{GlslField, GlslRecord, GlslType};
use super::{TargetError, TargetErrorKind, naming};
use crate::ir::{Handle, Module, Type, TypeInner};
use std::collections::HashMap;
use std::sync::Arc;

/// Nesting bound of type conversion (the reader's named-type depth limit).
const MAX_DEPTH: u32 = crate::text::MAX_TYPE_DEPTH + 1;

/// Every value type of the module as GLSL sees it. Records are numbered
/// `vpl_R<k>` by their position among the record declarations of the type
/// table; conversion itself applies no target restriction.
pub struct TypeMap {
    /// Indexed by type handle; `None` for `void`.
    converted: Vec<Option<GlslType>>,
    /// Record handles in type-table order (emission order is dependency
    /// order, computed by the emitter).
    pub records: Vec<Handle<Type>>,
}

impl TypeMap {
    /// Converts every value type of the table.
    pub fn build(module: &Module) -> Result<Self, TargetError> {
        let mut map = TypeMap {
            converted: vec![None; module.types.len()],
            records: Vec::new(),
        };
        let mut ordinals = HashMap::new();
        for (handle, ty) in module.types.iter() {
            if matches!(ty.inner, TypeInner::Record(_)) {
                ordinals.insert(handle, map.records.len());
                map.records.push(handle);
            }
        }
        for (handle, ty) in module.types.iter() {
            if ty.inner.is_value() {
                map.convert(module, &ordinals, handle, 0)?;
            }
        }
        Ok(map)
    }

    fn convert(
        &mut self,
        module: &Module,
        ordinals: &HashMap<Handle<Type>, usize>,
        handle: Handle<Type>,
        depth: u32,
    ) -> Result<GlslType, TargetError> {
        if let Some(Some(t)) = self.converted.get(handle.index()) {
            return Ok(t.clone());
        }
        let invalid = |message: &str| {
            TargetError::new(TargetErrorKind::InvalidModule, None, message.to_string())
        };
        if depth > MAX_DEPTH {
            return Err(invalid("type nesting exceeds the named-type depth limit"));
        }
        let ty = module
            .types
            .get(handle)
            .ok_or_else(|| invalid("type handle out of range"))?;
        let converted = match &ty.inner {
            TypeInner::Void => return Err(invalid("void used as a value type")),
            TypeInner::Scalar(k) => GlslType::Scalar(*k),
            TypeInner::Vector { kind, size } => GlslType::Vector {
                kind: *kind,
                size: *size,
            },
            TypeInner::Matrix { rows, columns } => GlslType::Matrix {
                rows: *rows,
                columns: *columns,
            },
            TypeInner::Sampler(_) => GlslType::Sampler2D,
            TypeInner::Array { element, length } => GlslType::Array {
                element: Box::new(self.convert(module, ordinals, *element, depth + 1)?),
                length: *length,
            },
            TypeInner::Record(record) => {
                let mut fields = Vec::with_capacity(record.fields.len());
                for (i, field) in record.fields.iter().enumerate() {
                    fields.push(GlslField {
                        name: field.name.clone(),
                        gl_name: naming::field(i),
                        ty: self.convert(module, ordinals, field.ty, depth + 1)?,
                    });
                }
                let ordinal = ordinals.get(&handle).copied().unwrap_or_default();
                GlslType::Record(Arc::new(GlslRecord {
                    name: record.name.clone(),
                    gl_name: naming::record(ordinal),
                    fields,
                }))
            }
        };
        if let Some(slot) = self.converted.get_mut(handle.index()) {
            *slot = Some(converted.clone());
        }
        Ok(converted)
    }

    /// The converted type behind `handle`.
    pub fn get(&self, handle: Handle<Type>) -> Result<&GlslType, TargetError> {
        self.converted
            .get(handle.index())
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                TargetError::new(
                    TargetErrorKind::InvalidModule,
                    None,
                    "a value operand has a void or unknown type",
                )
            })
    }
}
