//! Contract expression typing per the contract tag table, the ensures
//! survival set and pure-call restrictions. Tree shape (postorder,
//! single use, root bit) is enforced by `validate`.

use super::context::{CResult, FnCheck, code};
use crate::model::*;

/// Checks every requires and ensures expression of the function.
pub(crate) fn check(ctx: &FnCheck<'_, '_>) -> CResult<()> {
    for (which, list) in [(false, &ctx.f.requires), (true, &ctx.f.ensures)] {
        for (edge_index, e) in list.iter().enumerate() {
            expr(ctx, e, which, edge_index)?;
            if exported(ctx) {
                public_only(ctx, e, which, edge_index)?;
            }
        }
    }
    // Every admitted contract has exactly one canonical print form.
    print_clauses(ctx.r, ctx.decl_index, ctx.f)
        .map_err(|m| ctx.err(code::CONTRACT, None, None, m))?;
    Ok(())
}

/// Whether the function's contract is part of the public interface: a
/// public function of a public declaration.
fn exported(ctx: &FnCheck<'_, '_>) -> bool {
    ctx.f.visibility == Visibility::Public
        && ctx.r.m.declarations[ctx.decl_index].visibility == Visibility::Public
}

/// An exported contract references only public members of public
/// declarations (or catalog functions).
fn public_only(ctx: &FnCheck<'_, '_>, e: &Expr, ensures: bool, edge_index: usize) -> CResult<()> {
    let clause = if ensures { "ensures" } else { "requires" };
    for (i, op) in e.ops.iter().enumerate() {
        let Some(id) = op.reference else { continue };
        let public = match op.tag {
            1 => ctx.r.field(&id).is_some_and(|(d, _, f)| {
                f.visibility == Visibility::Public
                    && ctx.r.m.declarations[d].visibility == Visibility::Public
            }),
            3 if op.aux0 == 0 => ctx.r.funcs.get(&id).is_some_and(|&(d, f)| {
                let decl = &ctx.r.m.declarations[d];
                decl.visibility == Visibility::Public
                    && decl.functions[f].visibility == Visibility::Public
            }),
            _ => true,
        };
        if !public {
            return Err(ctx.err(
                code::CONTRACT,
                None,
                None,
                format!(
                    "{clause} {edge_index} op {i}: an exported contract references a non-public member (it must resolve in the public module interface)"
                ),
            ));
        }
    }
    Ok(())
}

/// The canonical contract clauses of function `f` of declaration `decl`
/// under `zerglang.zli.contract-printer/1`: `requires { E0; E1; }` and
/// `ensures { .. }`, empty clauses omitted, joined by one space (empty
/// when the function has no contract).
pub fn print_clauses(
    r: &super::context::Resolved<'_>,
    decl: usize,
    f: &Function,
) -> Result<String, String> {
    let mut parts = Vec::new();
    for (name, list) in [("requires", &f.requires), ("ensures", &f.ensures)] {
        if list.is_empty() {
            continue;
        }
        let mut s = format!("{name} {{");
        for e in list {
            s.push(' ');
            s.push_str(&print_expr(r, decl, f, e)?);
            s.push(';');
        }
        s.push_str(" }");
        parts.push(s);
    }
    Ok(parts.join(" "))
}

/// Prints one typed contract expression tree from its root.
pub fn print_expr(
    r: &super::context::Resolved<'_>,
    decl: usize,
    f: &Function,
    e: &Expr,
) -> Result<String, String> {
    let root = e
        .ops
        .len()
        .checked_sub(1)
        .ok_or("an empty contract expression")?;
    print_op(r, decl, f, e, root, 0)
}

fn print_operand(
    r: &super::context::Resolved<'_>,
    decl: usize,
    f: &Function,
    e: &Expr,
    o: &ContractOperand,
    depth: usize,
) -> Result<String, String> {
    Ok(match o {
        ContractOperand::Receiver => "self".into(),
        ContractOperand::Result => "result".into(),
        ContractOperand::Param(k) => f
            .params
            .iter()
            .find(|p| p.ordinal == *k)
            .map(|p| p.name.clone())
            .ok_or("a contract parameter that does not exist")?,
        ContractOperand::Const(c) => print_literal(c)?,
        ContractOperand::Value(i) => print_op(r, decl, f, e, *i as usize, depth + 1)?,
    })
}

/// A contract literal: `true`/`false`, or the exact base-ten integer with
/// its mandatory width suffix. Byte and Index have no contract literal.
pub fn print_literal(c: &Constant) -> Result<String, String> {
    use ScalarKind::*;
    let suffix = match c.kind {
        Bool => return Ok((if c.bits != 0 { "true" } else { "false" }).into()),
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
    let width = c.kind.constant_width().unwrap_or(8) as u32 * 8;
    let text = if c.kind.is_signed() {
        let shift = 64 - width;
        (((c.bits << shift) as i64) >> shift).to_string()
    } else {
        c.bits.to_string()
    };
    Ok(format!("{text}{suffix}"))
}

fn print_op(
    r: &super::context::Resolved<'_>,
    decl: usize,
    f: &Function,
    e: &Expr,
    i: usize,
    depth: usize,
) -> Result<String, String> {
    if depth > e.ops.len() {
        return Err("a contract expression refers forward or cyclically".into());
    }
    let op = e.ops.get(i).ok_or("a contract value names no operation")?;
    let opd = |k: usize| -> Result<String, String> {
        let o = op.operands.get(k).ok_or("a missing contract operand")?;
        print_operand(r, decl, f, e, o, depth)
    };
    const BIN: [&str; 18] = [
        "+", "-", "*", "/", "%", "<<", ">>", "&", "^", "|", "==", "!=", "<", "<=", ">", ">=", "&&",
        "||",
    ];
    Ok(match op.tag {
        0 => format!("({})", opd(0)?),
        1 => {
            let id = op.reference.ok_or("field-copy references a field")?;
            let (_, _, fld) = r.field(&id).ok_or("field-copy names an unresolved field")?;
            format!("({}.{})", opd(0)?, fld.name)
        }
        3 => {
            let id = op.reference.ok_or("pure-call references a function")?;
            let (owner, receiver, name) = match op.aux0 {
                0 => {
                    let &(d, fn_index) = r
                        .funcs
                        .get(&id)
                        .ok_or("pure-call names an unresolved function")?;
                    let callee = &r.m.declarations[d].functions[fn_index];
                    (
                        r.m.declarations[d].name.clone(),
                        callee.receiver,
                        callee.name.clone(),
                    )
                }
                _ => {
                    let en = crate::catalog::by_signature(&id)
                        .ok_or("pure-call names an unknown catalog function")?;
                    (en.owner.to_string(), en.receiver, en.name.to_string())
                }
            };
            let skip = usize::from(receiver == ReceiverKind::Shared);
            let mut args = Vec::new();
            for k in skip..op.operands.len() {
                args.push(opd(k)?);
            }
            let head = if skip == 1 { opd(0)? } else { owner };
            format!("({head}.{name}({}))", args.join(", "))
        }
        4 => format!("(!{})", opd(0)?),
        5 => {
            if matches!(op.operands.first(), Some(ContractOperand::Const(_))) {
                return Err(
                    "numeric negation of a literal is folded into one signed literal; tag 5 applies only to a nonliteral subtree".into(),
                );
            }
            format!("(-{})", opd(0)?)
        }
        t @ 7..=24 if t != 2 && t != 6 => {
            format!("({} {} {})", opd(0)?, BIN[t as usize - 7], opd(1)?)
        }
        t => return Err(format!("contract tag {t} has no print form")),
    })
}

fn expr(ctx: &FnCheck<'_, '_>, e: &Expr, ensures: bool, edge_index: usize) -> CResult<()> {
    let recv = ctx.receiver_binding();
    let clause = if ensures { "ensures" } else { "requires" };
    for (i, op) in e.ops.iter().enumerate() {
        let err = |m: String| {
            ctx.err(
                code::CONTRACT,
                None,
                None,
                format!("{clause} {edge_index} op {i}: {m}"),
            )
        };
        let mut tys = Vec::new();
        for o in &op.operands {
            if ensures {
                survival(ctx, o).map_err(&err)?;
            }
            let t = crate::ids::contract_operand_type(ctx.f, recv.as_ref(), e, o)
                .map_err(|x| err(x.message))?;
            tys.push(t);
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
                    && matches!(&tys[0], Type::Scalar(k) if k.is_signed())
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
            t => return Err(err(format!("contract tag {t} is reserved"))),
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
fn survival(ctx: &FnCheck<'_, '_>, o: &ContractOperand) -> Result<(), String> {
    match o {
        ContractOperand::Receiver if ctx.f.receiver != ReceiverKind::Shared => Err(
            "ensures may name only a shared receiver (owned, exclusive, type or absent receivers do not survive)".into(),
        ),
        ContractOperand::Param(p) => {
            let prm = ctx.param(*p).ok_or("missing parameter")?;
            let ok = matches!(prm.ty, Type::Ref(_))
                || (!prm.ty.is_borrow() && ctx.r.is_copy(&prm.ty));
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "parameter {} does not survive into ensures (moved owner or exclusive loan)",
                    prm.name
                ))
            }
        }
        ContractOperand::Result => {
            let t = &ctx.f.result;
            if t.is_borrow() || !ctx.r.is_copy(t) || *t == Type::Unit {
                Err("result binding must be Copy, nonborrow and not Unit".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn target(t: &Type) -> &Type {
    match t {
        Type::Ref(x) | Type::Mut(x) => x,
        t => t,
    }
}

fn field_copy(ctx: &FnCheck<'_, '_>, op: &ContractOp, tys: &[Type]) -> Result<bool, String> {
    let fid = op.reference.ok_or("field-copy references a field")?;
    let (d, variant, fld) = ctx.r.field(&fid).ok_or("unknown field")?;
    if tys.len() != 1 || *target(&tys[0]) != ctx.r.self_type(d) {
        return Ok(false);
    }
    if variant.is_some() || fld.mutability != Mutability::Let {
        return Err("field-copy reads an immutable ordinary field".into());
    }
    if !ctx.r.is_copy(&fld.ty) || fld.ty.is_borrow() {
        return Err("field-copy reads a structurally Copy field".into());
    }
    Ok(op.result == fld.ty)
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
            let (d, f) = *ctx
                .r
                .funcs
                .get(&sig)
                .ok_or("pure-call names a function outside this module (unsupported)")?;
            let callee = &ctx.r.m.declarations[d].functions[f];
            let mut ps: Vec<&Param> = callee.params.iter().collect();
            ps.sort_by_key(|p| p.ordinal);
            (
                ctx.r.self_type(d),
                callee.receiver,
                callee.callable,
                ps.iter().map(|p| p.ty.clone()).collect(),
                callee.result.clone(),
                callee.effects.clone(),
            )
        }
        1 => {
            let e = crate::catalog::by_signature(&sig).ok_or("unknown catalog function")?;
            (
                e.owner.clone(),
                e.receiver,
                e.callable,
                e.params.iter().map(|p| p.1.clone()).collect(),
                e.result.clone(),
                e.effects.clone(),
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
