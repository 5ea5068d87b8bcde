//! Conversion of the module's type table into [`GlslType`]s.

use super::artifact::{GlslField, GlslRecord, GlslType};
use super::error::{TargetError, TargetErrorKind};
use super::naming;
use crate::ir::{Handle, Module, Type, TypeInner};
use crate::verify::ModuleInfo;
use std::collections::HashMap;
use std::sync::Arc;

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
    /// Converts every value type of the table, in the dependency order
    /// verification established (elements and fields first).
    pub fn build(module: &Module, info: &ModuleInfo) -> Result<Self, TargetError> {
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
        for &handle in info.type_order() {
            let Some(ty) = module.types.get(handle) else {
                return Err(invalid("type handle out of range"));
            };
            let converted = match &ty.inner {
                TypeInner::Void => continue,
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
                    element: Box::new(map.get(*element)?.clone()),
                    length: *length,
                },
                TypeInner::Record(record) => {
                    let mut fields = Vec::with_capacity(record.fields.len());
                    for (i, field) in record.fields.iter().enumerate() {
                        fields.push(GlslField {
                            name: field.name.clone(),
                            gl_name: naming::field(i),
                            ty: map.get(field.ty)?.clone(),
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
            if let Some(slot) = map.converted.get_mut(handle.index()) {
                *slot = Some(converted);
            }
        }
        Ok(map)
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

fn invalid(message: &str) -> TargetError {
    TargetError::new(TargetErrorKind::InvalidModule, None, message.to_string())
}
