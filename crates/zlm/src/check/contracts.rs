//! Contract expression typing per the contract tag table, the ensures
//! survival set and pure-call restrictions. Tree shape (postorder,
//! single use, root bit) is enforced by `validate`.

use super::context::{CResult, FnCheck, code};
use crate::model::*;

/// Checks every requires and ensures expression of the function.
pub(crate) fn check(ctx: &FnCheck<'_, '_>) -> CResult<()> {
    for (which, list) in [
        (false, &ctx.function.requires),
        (true, &ctx.function.ensures),
    ] {
        for (clause_index, clause) in list.iter().enumerate() {
            expr(ctx, clause, which, clause_index)?;
            if exported(ctx) {
                public_only(ctx, clause, which, clause_index)?;
            }
        }
    }
    // Every admitted contract has exactly one canonical print form.
    print_clauses(ctx.r, ctx.decl_index, ctx.function)
        .map_err(|m| ctx.err(code::CONTRACT, None, None, m))?;
    Ok(())
}

/// Whether the function's contract is part of the public interface: a
/// public function of a public declaration.
fn exported(ctx: &FnCheck<'_, '_>) -> bool {
    ctx.function.visibility == Visibility::Public
        && ctx.r.module.declarations[ctx.decl_index].visibility == Visibility::Public
}

/// An exported contract references only public members of public
/// declarations (or catalog functions).
fn public_only(
    ctx: &FnCheck<'_, '_>,
    expression: &Expr,
    ensures: bool,
    clause_index: usize,
) -> CResult<()> {
    let clause = if ensures { "ensures" } else { "requires" };
    for (i, op) in expression.ops.iter().enumerate() {
        let Some(id) = op.reference else { continue };
        let public = match op.tag {
            1 => ctx.r.field(&id).is_some_and(|(decl_index, _, field)| {
                field.visibility == Visibility::Public
                    && ctx.r.module.declarations[decl_index].visibility == Visibility::Public
            }),
            3 if op.aux0 == 0 => ctx.r.funcs.get(&id).is_some_and(|&(decl_index, fn_index)| {
                let decl = &ctx.r.module.declarations[decl_index];
                decl.visibility == Visibility::Public
                    && decl.functions[fn_index].visibility == Visibility::Public
            }),
            _ => true,
        };
        if !public {
            return Err(ctx.err(
                code::CONTRACT,
                None,
                None,
                format!(
                    "{clause} {clause_index} op {i}: an exported contract references a non-public member (it must resolve in the public module interface)"
                ),
            ));
        }
    }
    Ok(())
}

/// The canonical contract clauses of function `function` of declaration `decl`
/// under `zerglang.zli.contract-printer/1`: `requires { E0; E1; }` and
/// `ensures { .. }`, empty clauses omitted, joined by one space (empty
/// when the function has no contract).
pub fn print_clauses(
    resolved: &super::context::Resolved<'_>,
    decl: usize,
    function: &Function,
) -> Result<String, String> {
    let mut parts = Vec::new();
    for (name, list) in [
        ("requires", &function.requires),
        ("ensures", &function.ensures),
    ] {
        if list.is_empty() {
            continue;
        }
        let mut clause_text = format!("{name} {{");
        for expression in list {
            clause_text.push(' ');
            clause_text.push_str(&print_expr(resolved, decl, function, expression)?);
            clause_text.push(';');
        }
        clause_text.push_str(" }");
        parts.push(clause_text);
    }
    Ok(parts.join(" "))
}

/// Prints one typed contract expression tree from its root.
pub fn print_expr(
    resolved: &super::context::Resolved<'_>,
    decl: usize,
    function: &Function,
    expression: &Expr,
) -> Result<String, String> {
    let root = expression
        .ops
        .len()
        .checked_sub(1)
        .ok_or("an empty contract expression")?;
    print_op(resolved, decl, function, expression, root, 0)
}

fn print_operand(
    resolved: &super::context::Resolved<'_>,
    decl: usize,
    function: &Function,
    expression: &Expr,
    operand: &ContractOperand,
    depth: usize,
) -> Result<String, String> {
    Ok(match operand {
        ContractOperand::Receiver => "self".into(),
        ContractOperand::Result => "result".into(),
        ContractOperand::Param(ordinal) => function
            .params
            .iter()
            .find(|p| p.ordinal == *ordinal)
            .map(|p| p.name.clone())
            .ok_or("a contract parameter that does not exist")?,
        ContractOperand::Const(constant) => print_literal(constant)?,
        ContractOperand::Value(value_index) => print_op(
            resolved,
            decl,
            function,
            expression,
            *value_index as usize,
            depth + 1,
        )?,
    })
}

/// A contract literal: `true`/`false`, or the exact base-ten integer with
/// its mandatory width suffix. Byte and Index have no contract literal.
pub fn print_literal(constant: &Constant) -> Result<String, String> {
    use ScalarKind::*;
    let suffix = match constant.kind {
        Bool => return Ok((if constant.bits != 0 { "true" } else { "false" }).into()),
        Byte | Index => {
            return Err("contract integer literals exclude Byte and Index".into());
        }
        Int8 => "i8",
        Int16 => "i16",
        Int32 => "i32",
        Int64 => "i64",
        UInt8 => "u8",
        UInt16 => "u16",
        UInt32 => "u32",
        UInt64 => "u64",
    };
    let width = constant.kind.constant_width().unwrap_or(8) as u32 * 8;
    let text = if constant.kind.is_signed() {
        let shift = 64 - width;
        (((constant.bits << shift) as i64) >> shift).to_string()
    } else {
        constant.bits.to_string()
    };
    Ok(format!("{text}{suffix}"))
}

fn print_op(
    resolved: &super::context::Resolved<'_>,
    decl: usize,
    function: &Function,
    expression: &Expr,
    op_index: usize,
    depth: usize,
) -> Result<String, String> {
    if depth > expression.ops.len() {
        return Err("a contract expression refers forward or cyclically".into());
    }
    let op = expression
        .ops
        .get(op_index)
        .ok_or("a contract value names no operation")?;
    let operand_text = |position: usize| -> Result<String, String> {
        let operand = op
            .operands
            .get(position)
            .ok_or("a missing contract operand")?;
        print_operand(resolved, decl, function, expression, operand, depth)
    };
    const BIN: [&str; 18] = [
        "+", "-", "*", "/", "%", "<<", ">>", "&", "^", "|", "==", "!=", "<", "<=", ">", ">=", "&&",
        "||",
    ];
    Ok(match op.tag {
        0 => format!("({})", operand_text(0)?),
        1 => {
            let id = op.reference.ok_or("field-copy references a field")?;
            let (_, _, field) = resolved
                .field(&id)
                .ok_or("field-copy names an unresolved field")?;
            format!("({}.{})", operand_text(0)?, field.name)
        }
        3 => {
            let id = op.reference.ok_or("pure-call references a function")?;
            let (owner, receiver, name) = match op.aux0 {
                0 => {
                    let &(decl_index, fn_index) = resolved
                        .funcs
                        .get(&id)
                        .ok_or("pure-call names an unresolved function")?;
                    let callee = &resolved.module.declarations[decl_index].functions[fn_index];
                    (
                        resolved.module.declarations[decl_index].name.clone(),
                        callee.receiver,
                        callee.name.clone(),
                    )
                }
                _ => {
                    let entry = crate::catalog::by_signature(&id)
                        .ok_or("pure-call names an unknown catalog function")?;
                    (
                        entry.owner.to_string(),
                        entry.receiver,
                        entry.name.to_string(),
                    )
                }
            };
            let skip = usize::from(receiver == ReceiverKind::Shared);
            let mut args = Vec::new();
            for position in skip..op.operands.len() {
                args.push(operand_text(position)?);
            }
            let head = if skip == 1 { operand_text(0)? } else { owner };
            format!("({head}.{name}({}))", args.join(", "))
        }
        4 => format!("(!{})", operand_text(0)?),
        5 => {
            if matches!(op.operands.first(), Some(ContractOperand::Const(_))) {
                return Err(
                    "numeric negation of a literal is folded into one signed literal; tag 5 applies only to a nonliteral subtree".into(),
                );
            }
            format!("(-{})", operand_text(0)?)
        }
        tag @ 7..=24 if tag != 2 && tag != 6 => {
            format!(
                "({} {} {})",
                operand_text(0)?,
                BIN[tag as usize - 7],
                operand_text(1)?
            )
        }
        tag => return Err(format!("contract tag {tag} has no print form")),
    })
}

fn expr(
    ctx: &FnCheck<'_, '_>,
    expression: &Expr,
    ensures: bool,
    clause_index: usize,
) -> CResult<()> {
    let recv = ctx.receiver_binding();
    let clause = if ensures { "ensures" } else { "requires" };
    for (i, op) in expression.ops.iter().enumerate() {
        let err = |message: String| {
            ctx.err(
                code::CONTRACT,
                None,
                None,
                format!("{clause} {clause_index} op {i}: {message}"),
            )
        };
        let mut tys = Vec::new();
        for operand in &op.operands {
            if ensures {
                survival(ctx, operand).map_err(&err)?;
            }
            let ty =
                crate::ids::contract_operand_type(ctx.function, recv.as_ref(), expression, operand)
                    .map_err(|error| err(error.message))?;
            tys.push(ty);
        }
        let scalar = |t: &Type| matches!(t, Type::Scalar(_));
        let int = |t: &Type| matches!(t, Type::Scalar(k) if k.is_integer());
        let bool_t = Type::Scalar(ScalarKind::Bool);
        let same = |p: &dyn Fn(&Type) -> bool| tys.len() == 2 && tys[0] == tys[1] && p(&tys[0]);
        let ok = match op.tag {
            0 => tys.len() == 1 && scalar(&tys[0]) && op.result == tys[0],
            1 => field_copy(ctx, op, &tys).map_err(&err)?,
            3 => pure_call(ctx, op, &tys).map_err(&err)?,
            4 => tys == [bool_t.clone()] && op.result == bool_t,
            5 => {
                tys.len() == 1
                    && matches!(&tys[0], Type::Scalar(kind) if kind.is_signed())
                    && op.result == tys[0]
            }
            7..=11 | 14..=16 => same(&int) && op.result == tys[0],
            12 | 13 => {
                tys.len() == 2
                    && int(&tys[0])
                    && tys[1] == Type::Scalar(ScalarKind::UInt64)
                    && op.result == tys[0]
            }
            17..=22 => same(&scalar) && op.result == bool_t,
            23 | 24 => tys == [bool_t.clone(), bool_t.clone()] && op.result == bool_t,
            tag => return Err(err(format!("contract tag {tag} is reserved"))),
        };
        if !ok {
            return Err(err(format!(
                "contract tag {} operand or result types do not match its table row",
                op.tag
            )));
        }
    }
    Ok(())
}

/// The ensures survival set: a live shared receiver, a shared-loan
/// parameter, a Copy nonborrow parameter, or a Copy nonborrow non-Unit result.
fn survival(ctx: &FnCheck<'_, '_>, operand: &ContractOperand) -> Result<(), String> {
    match operand {
        ContractOperand::Receiver if ctx.function.receiver != ReceiverKind::Shared => Err(
            "ensures may name only a shared receiver (owned, exclusive, type or absent receivers do not survive)".into(),
        ),
        ContractOperand::Param(ordinal) => {
            let param = ctx.param(*ordinal).ok_or("missing parameter")?;
            let ok = matches!(param.ty, Type::Ref(_))
                || (!param.ty.is_borrow() && ctx.r.is_copy(&param.ty));
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "parameter {} does not survive into ensures (moved owner or exclusive loan)",
                    param.name
                ))
            }
        }
        ContractOperand::Result => {
            let result_ty = &ctx.function.result;
            if result_ty.is_borrow() || !ctx.r.is_copy(result_ty) || *result_ty == Type::Unit {
                Err("result binding must be Copy, nonborrow and not Unit".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn target(ty: &Type) -> &Type {
    match ty {
        Type::Ref(inner) | Type::Mut(inner) => inner,
        ty => ty,
    }
}

fn field_copy(ctx: &FnCheck<'_, '_>, op: &ContractOp, tys: &[Type]) -> Result<bool, String> {
    let fid = op.reference.ok_or("field-copy references a field")?;
    let (decl_index, variant, field) = ctx.r.field(&fid).ok_or("unknown field")?;
    if tys.len() != 1 || *target(&tys[0]) != ctx.r.self_type(decl_index) {
        return Ok(false);
    }
    if variant.is_some() || field.mutability != Mutability::Let {
        return Err("field-copy reads an immutable ordinary field".into());
    }
    if !ctx.r.is_copy(&field.ty) || field.ty.is_borrow() {
        return Err("field-copy reads a structurally Copy field".into());
    }
    Ok(op.result == field.ty)
}

fn pure_call(ctx: &FnCheck<'_, '_>, op: &ContractOp, tys: &[Type]) -> Result<bool, String> {
    let sig = op.reference.ok_or("pure-call references a function")?;
    let (owner, receiver, callable, params, result, effects): (
        Type,
        ReceiverKind,
        CallableKind,
        Vec<Type>,
        Type,
        Vec<Effect>,
    ) = match op.aux0 {
        0 => {
            let (decl_index, fn_index) = *ctx
                .r
                .funcs
                .get(&sig)
                .ok_or("pure-call names a function outside this module (unsupported)")?;
            let callee = &ctx.r.module.declarations[decl_index].functions[fn_index];
            let mut callee_params: Vec<&Param> = callee.params.iter().collect();
            callee_params.sort_by_key(|p| p.ordinal);
            (
                ctx.r.self_type(decl_index),
                callee.receiver,
                callee.callable,
                callee_params.iter().map(|p| p.ty.clone()).collect(),
                callee.result.clone(),
                callee.effects.clone(),
            )
        }
        1 => {
            let entry = crate::catalog::by_signature(&sig).ok_or("unknown catalog function")?;
            (
                entry.owner.clone(),
                entry.receiver,
                entry.callable,
                entry.params.iter().map(|p| p.1.clone()).collect(),
                entry.result.clone(),
                entry.effects.clone(),
            )
        }
        _ => return Err("pure-call auxiliary zero is 0 or 1".into()),
    };
    if !effects.is_empty() {
        return Err("a pure callee has an empty effect set".into());
    }
    if callable != CallableKind::Message {
        return Err("a pure callee is an ordinary message".into());
    }
    if !matches!(receiver, ReceiverKind::Type | ReceiverKind::Shared) {
        return Err("a pure callee has a type or shared receiver".into());
    }
    if params
        .iter()
        .chain(std::iter::once(&result))
        .any(|t| t.is_borrow() || !ctx.r.is_copy(t))
    {
        return Err("a pure callee has only Copy nonborrow parameters and result".into());
    }
    let mut rest = tys;
    if receiver == ReceiverKind::Shared {
        let Some((first, tail)) = tys.split_first() else {
            return Ok(false);
        };
        if *target(first) != owner {
            return Ok(false);
        }
        rest = tail;
    }
    Ok(rest == params.as_slice() && op.result == result)
}
