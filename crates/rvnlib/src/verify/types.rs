//! Well-formed type references.

use super::report::{RVN3010, RVN5004};
use super::scope::{Resolution, Scope};
use crate::ir::*;

/// Checks that a type reference is well formed; `void_ok` for return types.
pub(crate) fn check_type(
    scope: &Scope<'_>,
    ty: &LibraryIrTypeReference,
    void_ok: bool,
    sink: &mut impl FnMut(&'static str, String),
) {
    match ty.kind {
        IrTypeKind::Void if !void_ok => {
            sink(RVN3010, "`void` is not a storage or value type".into())
        }
        IrTypeKind::Vector if (!ty.component.is_scalar() || !(2..=4).contains(&ty.size)) => {
            sink(
                RVN3010,
                format!(
                    "vector needs a scalar component and 2 to 4 lanes, found {} x {}",
                    ty.component, ty.size
                ),
            );
        }
        IrTypeKind::Matrix
            if (!ty.component.is_float()
                || !(2..=4).contains(&ty.rows)
                || !(2..=4).contains(&ty.columns)) =>
        {
            sink(
                RVN3010,
                format!(
                    "matrix needs a float component and 2 to 4 rows and columns, found {} {}x{}",
                    ty.component, ty.rows, ty.columns
                ),
            );
        }
        IrTypeKind::Array => {
            match &ty.element {
                Some(element) => check_type(scope, element, false, sink),
                None => sink(RVN3010, "array type has no element type".into()),
            }
            if ty.length.is_some_and(|n| n <= 0) {
                sink(
                    RVN3010,
                    format!(
                        "array length must be positive, found {}",
                        ty.length.unwrap_or(0)
                    ),
                );
            }
        }
        IrTypeKind::Struct => match ty.struct_key.as_deref() {
            None | Some("") => sink(RVN3010, "struct type names no struct key".into()),
            Some(key) => {
                if scope.find_struct(key).is_none() && scope.resolution == Resolution::Complete {
                    sink(
                        RVN5004,
                        format!("names struct `{key}`, which no supplied library declares"),
                    );
                }
            }
        },
        IrTypeKind::Texture => {
            if let Some(sampled) = &ty.sampled {
                check_type(scope, sampled, false, sink);
            }
        }
        _ => {}
    }
}
