//! The bytes facade and replacement in the lowered form: slice windows
//! (BORROW_SLICE_BYTE), the catalog's byte intrinsics (INTRINSIC_CALL),
//! the builder relabel (BYTE_BUILDER_FINISH) and REPLACE_COMMIT, each
//! decided once with its checks, fault sites and custody changes.

use super::inst::{
    ByteArg, ByteArray, ByteOp, ByteSource, ByteView, Dest, Inst, ReplaceInst, Site, SliceInst,
    take,
};
use crate::materialize::c::Refusal;
use crate::materialize::c::plan::{FunctionPlan, SliceSource};
use crate::materialize::c::types::{Shape, Types, is_word};
use crate::model::*;

/// BORROW_SLICE_BYTE: a tag fault at `site` unless a place source is
/// present, a bounds fault unless `start <= end <= length`, then `dst` is
/// the window.
pub(super) fn slice(
    plan: &FunctionPlan<'_, '_>,
    types: &Types,
    op: &Op,
    dst: Dest,
    site: Site,
) -> Result<Inst, Refusal> {
    let (b, j) = (site.block, site.op);
    let view = plan.slice_view(types, op, b, j)?;
    let source = match view.source {
        SliceSource::Place(pi) => ByteSource::Place(pi),
        SliceSource::Loan => ByteSource::Loan(plan.operand_value(op, 0, b, j)?),
    };
    let holder = (!view.direct()).then(|| view.holder.clone());
    Ok(Inst::Slice(SliceInst {
        dst,
        array: ByteArray { source, holder },
        start: plan.operand_value(op, 1, b, j)?,
        end: plan.operand_value(op, 2, b, j)?,
        site,
    }))
}

/// INTRINSIC_CALL of the catalog's bytes facade.
pub(super) fn intrinsic(
    plan: &FunctionPlan<'_, '_>,
    types: &Types,
    op: &Op,
    dst: Dest,
    site: Site,
) -> Result<Inst, Refusal> {
    let (b, j) = (site.block, site.op);
    let no = |msg: String| plan.refuse(Some(b), Some(j), msg);
    let Aux::CatalogFunc(sig) = &op.aux0 else {
        return Err(no("intrinsic without its catalog function".into()));
    };
    let Some(e) = crate::catalog::by_signature(sig) else {
        return Err(no("intrinsic outside the catalog".into()));
    };
    let mut args = Vec::new();
    let mut tys = Vec::new();
    for (o, (t, array_place)) in op.operands.iter().zip(plan.intrinsic_operands(op)) {
        args.push(match array_place {
            Some(pi) => ByteArg::Array(pi),
            None => ByteArg::Value(take(plan, o, b, j)?),
        });
        tys.push(t);
    }
    let is_slice = |k: usize| {
        matches!(tys.get(k), Some(Some(Type::Ref(t))) if **t == Type::SliceByte)
            || matches!(tys.get(k), Some(Some(Type::SliceByte)))
    };
    let is_array = |k: usize| matches!(tys.get(k), Some(Some(Type::Ref(t) | Type::Mut(t))) if **t == Type::ArrayByte);
    let view = |k: usize| {
        if is_slice(k) {
            Ok(ByteView::Slice)
        } else if is_array(k) {
            Ok(ByteView::Array)
        } else if args.len() <= k {
            Err(no("intrinsic arity".into()))
        } else {
            Err(no("byte read of a non-byte value".into()))
        }
    };
    let carrier = match op.result.as_ref().and_then(|t| types.shape(t)) {
        Some(Shape::Result(ok, _)) => Some((op.result.clone().unwrap_or(Type::Unit), ok.clone())),
        _ => None,
    };
    let unlowered = |sel: u32| no(format!("intrinsic selector {sel} is not lowered yet"));
    let bop = match (e.selector, carrier) {
        (1 | 9, _) => ByteOp::Len(view(0)?),
        (2 | 10, _) => ByteOp::At(view(0)?),
        (3, Some((ty, ok))) => ByteOp::Alloc { ty, ok },
        (4, Some((ty, ok))) if is_array(0) => ByteOp::Push { ty, ok },
        (5, _) if is_array(0) => ByteOp::Poke,
        (7, _) if is_array(0) => ByteOp::Clear,
        (8, _) => ByteOp::Left,
        (sel, _) => return Err(unlowered(sel)),
    };
    if args.len() < bop.arity() {
        return Err(no("intrinsic arity".into()));
    }
    Ok(Inst::Bytes {
        dst,
        op: bop,
        args,
        site,
    })
}

/// BYTE_BUILDER_FINISH: one relabel. The builder's custody position now
/// holds the result temporary (an internal fault at `site` when the
/// builder is absent), its storage moves without a copy of the bytes.
pub(super) fn finish(
    plan: &FunctionPlan<'_, '_>,
    types: &Types,
    op: &Op,
    site: Site,
) -> Result<Inst, Refusal> {
    let (builder, result, fields) = plan.builder_finish(types, op, site.block, site.op)?;
    Ok(Inst::Finish {
        builder,
        result,
        ty: plan.f.body.paths[builder].ty.clone(),
        fields: fields.iter().map(|f| f.ordinal).collect(),
        site,
    })
}

/// REPLACE_COMMIT: the new value goes in, the old one is dropped under
/// `path (replaced)`.
pub(super) fn replace(plan: &FunctionPlan<'_, '_>, op: &Op, site: Site) -> Result<Inst, Refusal> {
    let (b, j) = (site.block, site.op);
    let path = plan.place_at(op, 0, b, j)?;
    let o = plan.operand_at(op, 1, b, j)?;
    let ty = plan.f.body.paths[path].ty.clone();
    if is_word(&ty) {
        return Err(plan.refuse(Some(b), Some(j), "replacement of a word"));
    }
    let role = &plan.frame.paths[path];
    Ok(Inst::Replace(ReplaceInst {
        path,
        candidate: plan.temp_of(o),
        value: take(plan, o, b, j)?,
        root: plan.f.body.paths[path].key.fields.is_empty() && !role.borrowed,
        dropped_as: format!("{} (replaced)", role.name),
        ty,
        site,
    }))
}
