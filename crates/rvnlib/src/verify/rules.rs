//! Type rules of operators and constructs.

use super::function::FunctionCheck;
use crate::ir::*;

impl<'s, 'a> FunctionCheck<'s, 'a> {
    pub(crate) fn construct_rule(
        &self,
        ty: &LibraryIrTypeReference,
        arguments: &[&LibraryIrTypeReference],
    ) -> Result<(), String> {
        match ty.kind {
            IrTypeKind::Vector => {
                let mut lanes = 0;
                for a in arguments {
                    match a.kind {
                        k if k.is_scalar() && k == ty.component => lanes += 1,
                        IrTypeKind::Vector if a.component == ty.component => lanes += a.size,
                        _ => return Err(format!("component {} does not fit", a.display())),
                    }
                }
                if lanes != ty.size {
                    return Err(format!(
                        "arguments supply {lanes} lane(s), the vector has {}",
                        ty.size
                    ));
                }
                Ok(())
            }
            IrTypeKind::Matrix => {
                // Any mix of scalar and vector lanes filling rows x columns, in
                // column-major order, as Raven's binder accepts.
                let mut lanes = 0;
                for a in arguments {
                    match a.kind {
                        k if k.is_scalar() && k == ty.component => lanes += 1,
                        IrTypeKind::Vector if a.component == ty.component => lanes += a.size,
                        _ => return Err(format!("component {} does not fit", a.display())),
                    }
                }
                if lanes != ty.rows * ty.columns {
                    return Err(format!(
                        "arguments supply {lanes} lane(s), the matrix has {}",
                        ty.rows * ty.columns
                    ));
                }
                Ok(())
            }
            IrTypeKind::Array => {
                let element = ty.element.as_deref().ok_or("array has no element type")?;
                if let Some(length) = ty.length
                    && arguments.len() != length as usize
                {
                    return Err(format!(
                        "{} element(s) for length {length}",
                        arguments.len()
                    ));
                }
                match arguments.iter().find(|a| !a.same_type(element)) {
                    Some(bad) => Err(format!(
                        "element {} is not {}",
                        bad.display(),
                        element.display()
                    )),
                    None => Ok(()),
                }
            }
            IrTypeKind::Struct => {
                let key = ty.struct_key.as_deref().unwrap_or("");
                let Some(s) = self.scope.find_struct(key) else {
                    return Ok(()); // layout deferred to the linker (or reported as RVN5004)
                };
                if s.fields.len() != arguments.len() {
                    return Err(format!(
                        "{} argument(s) for {} field(s)",
                        arguments.len(),
                        s.fields.len()
                    ));
                }
                for (field, argument) in s.fields.iter().zip(arguments) {
                    if !field.ty.same_type(argument) {
                        return Err(format!(
                            "field `{}`: {} does not match {}",
                            field.name,
                            argument.display(),
                            field.ty.display()
                        ));
                    }
                }
                Ok(())
            }
            _ => Err("only vectors, matrices, arrays and structs can be constructed".into()),
        }
    }
}

/// Type rule of a binary operator: arithmetic, bitwise and logical operators
/// take identical operand and result types, as Raven's verifier requires;
/// `MatrixMultiply` follows the product shapes Raven's binder resolves,
/// matrix times scalar included (`docs/rvnlib/decisions.md`).
pub(crate) fn binary_rule(
    op: IrBinaryOp,
    l: &LibraryIrTypeReference,
    r: &LibraryIrTypeReference,
    ty: &LibraryIrTypeReference,
) -> Result<(), String> {
    use IrBinaryOp::*;
    let mismatch = || format!("{} and {} give {}", l.display(), r.display(), ty.display());
    let ls = l.scalar_kind().ok_or_else(mismatch)?;
    let rs = r.scalar_kind().ok_or_else(mismatch)?;
    match op {
        Add | Subtract | Multiply | Divide | Modulo => {
            if ls != rs || !(ls.is_integer() || ls.is_float()) {
                return Err(mismatch());
            }
            // Identical operand and result types: a scalar operand is splatted
            // by an explicit `convert Splat` first.
            if l.same_type(r) && ty.same_type(l) {
                Ok(())
            } else {
                Err(mismatch())
            }
        }
        MatrixMultiply => {
            let ok = ls == rs
                && ls.is_float()
                && match (l.kind, r.kind) {
                    (IrTypeKind::Matrix, IrTypeKind::Matrix) => {
                        l.columns == r.rows
                            && ty.same_type(&LibraryIrTypeReference::matrix(ls, l.rows, r.columns))
                    }
                    (IrTypeKind::Matrix, IrTypeKind::Vector) => {
                        l.columns == r.size
                            && ty.same_type(&LibraryIrTypeReference::vector(ls, l.rows))
                    }
                    (IrTypeKind::Vector, IrTypeKind::Matrix) => {
                        l.size == r.rows
                            && ty.same_type(&LibraryIrTypeReference::vector(ls, r.columns))
                    }
                    // Matrix times scalar, either order, keeps the matrix type.
                    (IrTypeKind::Matrix, k) if k.is_scalar() => ty.same_type(l),
                    (k, IrTypeKind::Matrix) if k.is_scalar() => ty.same_type(r),
                    _ => false,
                };
            if ok { Ok(()) } else { Err(mismatch()) }
        }
        ShiftLeft | ShiftRight | UnsignedShiftRight | BitwiseAnd | BitwiseOr | BitwiseXor => {
            let bitwise_bool = matches!(op, BitwiseAnd | BitwiseOr | BitwiseXor)
                && ls == IrTypeKind::Bool
                && rs == IrTypeKind::Bool;
            if !(ls.is_integer() && rs.is_integer() || bitwise_bool) {
                return Err(mismatch());
            }
            // Bitwise operators take identical operands; a shift keeps the
            // value's type whatever integer shape the amount has.
            let shape_ok = if matches!(op, BitwiseAnd | BitwiseOr | BitwiseXor) {
                l.same_type(r)
            } else {
                l.same_type(r) || r.kind.is_scalar() || r.kind == l.kind && r.size == l.size
            };
            if shape_ok && ty.same_type(l) {
                Ok(())
            } else {
                Err(mismatch())
            }
        }
        LogicalAnd | LogicalOr => {
            if ls == IrTypeKind::Bool && l.same_type(r) && ty.same_type(l) {
                Ok(())
            } else {
                Err(mismatch())
            }
        }
        Equal | NotEqual | LessThan | LessThanOrEqual | GreaterThan | GreaterThanOrEqual => {
            if !l.same_type(r) {
                return Err(mismatch());
            }
            let ok = ty.kind == IrTypeKind::Bool
                || l.kind == IrTypeKind::Vector
                    && ty.same_type(&LibraryIrTypeReference::vector(IrTypeKind::Bool, l.size));
            if ok { Ok(()) } else { Err(mismatch()) }
        }
    }
}
