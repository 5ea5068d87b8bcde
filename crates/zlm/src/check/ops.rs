//! Per-operation rules: the typed-operation table (tags 0–52), SSA
//! dominance, Copy/loan placement, effect-set inclusion and RESULT_TRY
//! carrier shapes.

use super::context::{CResult, FnCheck, code};
use super::sdk;
use crate::model::*;

fn is_int(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(k) if k.is_integer())
}
fn is_signed(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(k) if k.is_signed())
}
fn bool_t() -> Type {
    Type::Scalar(ScalarKind::Bool)
}

/// Whether a carrier payload fits the schema-1.7 one-word shape.
pub fn one_word(ctx: &FnCheck<'_, '_>, ty: &Type) -> bool {
    match ty {
        Type::Scalar(scalar_kind) => !matches!(
            scalar_kind,
            ScalarKind::Int64 | ScalarKind::UInt64 | ScalarKind::Index
        ),
        Type::Nominal(_) => ctx
            .r
            .decl_of(ty)
            .map(|decl_index| {
                let decl = &ctx.r.module.declarations[decl_index];
                decl.kind != DeclKind::Value && decl.variants.iter().all(|v| v.fields.is_empty())
            })
            .unwrap_or(false),
        _ => false,
    }
}

/// Checks one flow operation.
pub fn check_op(ctx: &FnCheck<'_, '_>, block: u32, ordinal: u32, op: &Op) -> CResult<()> {
    let fail = |error_code: &'static str, message: String| {
        ctx.err(error_code, Some(block), Some(ordinal), message)
    };
    let here = OpRef::Flow { block, ordinal };
    // SSA: every value operand is a dominating same-function flow producer.
    for operand in &op.operands {
        if let Operand::Value(op_ref) = operand {
            if !matches!(op_ref, OpRef::Flow { .. }) || ctx.index.op(op_ref).is_none() {
                return Err(fail(
                    code::SSA,
                    "value operand names no flow operation".into(),
                ));
            }
            if !ctx.cfg.dominates_op(*op_ref, here) {
                return Err(fail(
                    code::SSA,
                    format!("value operand {op_ref} does not dominate its use"),
                ));
            }
            // A try's result does not exist on its error path, but the
            // error path leaves the block, so dominance suffices.
        }
    }
    // Operand types are derived where a rule reads them (most rules read
    // one or two), not collected per operation: no allocation per op.
    let operand_ty = |position: usize| {
        op.operands
            .get(position)
            .and_then(|operand| ctx.operand_type(operand))
    };
    let all_operand_tys = || -> Vec<Option<Type>> {
        op.operands
            .iter()
            .map(|operand| ctx.operand_type(operand))
            .collect()
    };
    let res = op.result.clone();
    let ty_err = |message: &str| fail(code::TYPE, format!("tag {}: {message}", op.tag));
    let same_scalar = |pred: &dyn Fn(&Type) -> bool| -> CResult<Type> {
        let (Some(first_ty), Some(second_ty)) = (operand_ty(0), operand_ty(1)) else {
            return Err(ty_err("missing operand type"));
        };
        if first_ty != second_ty || !pred(&first_ty) {
            return Err(ty_err(
                "operands must be one identical admitted scalar type",
            ));
        }
        Ok(first_ty)
    };
    match op.tag {
        tag::CONST => {
            if res != operand_ty(0) {
                return Err(ty_err("result differs from the constant's type"));
            }
        }
        tag::NEG => {
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            if !is_signed(&first_ty) || res != Some(first_ty) {
                return Err(ty_err("NEG takes and yields one signed integer type"));
            }
        }
        tag::ADD
        | tag::SUB
        | tag::MUL
        | tag::DIV
        | tag::REM
        | tag::BIT_AND
        | tag::BIT_OR
        | tag::BIT_XOR => {
            let first_ty = same_scalar(&is_int)?;
            if res != Some(first_ty) {
                return Err(ty_err("result must equal the operand type"));
            }
        }
        tag::EQ | tag::NE => {
            same_scalar(&|operand_ty| matches!(operand_ty, Type::Scalar(_)))?;
            if res != Some(bool_t()) {
                return Err(ty_err("comparison yields Bool"));
            }
        }
        tag::LT | tag::LE | tag::GT | tag::GE => {
            same_scalar(&is_int)?;
            if res != Some(bool_t()) {
                return Err(ty_err("comparison yields Bool"));
            }
        }
        tag::SHIFT_LEFT | tag::SHIFT_RIGHT => {
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            if !is_int(&first_ty)
                || operand_ty(1) != Some(Type::Scalar(ScalarKind::UInt64))
                || res != Some(first_ty)
            {
                return Err(ty_err(
                    "shift takes integer T and a UInt64 count and yields T",
                ));
            }
        }
        tag::NOT_BOOL => {
            if operand_ty(0) != Some(bool_t()) || res != Some(bool_t()) {
                return Err(ty_err("NOT_BOOL takes and yields Bool"));
            }
        }
        tag::ASSERT_TRUE => {
            if operand_ty(0) != Some(bool_t()) {
                return Err(ty_err("ASSERT_TRUE takes Bool"));
            }
        }
        tag::ASSERT_EQ => {
            same_scalar(&|operand_ty| matches!(operand_ty, Type::Scalar(_)))?;
        }
        tag::JUMP_IF_FALSE => {
            if operand_ty(0) != Some(bool_t()) {
                return Err(ty_err("the condition is Bool"));
            }
        }
        tag::JUMP => {}
        tag::RETURN => {
            if operand_ty(0).as_ref() != Some(&ctx.function.result) {
                return Err(ty_err(
                    "the returned value has the function's exact result type",
                ));
            }
        }
        tag::LOAD_LOCAL => {
            let Some(Operand::Place(place)) = op.operands.first() else {
                return Err(ty_err("LOAD_LOCAL takes a place"));
            };
            if !place.fields.is_empty() || matches!(place.root, Root::Temp(_) | Root::Receiver) {
                return Err(fail(
                    code::PLACEMENT,
                    "LOAD_LOCAL reads only an argument or local root".into(),
                ));
            }
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            if first_ty.is_borrow() || !ctx.r.is_copy(&first_ty) {
                return Err(fail(
                    code::PLACEMENT,
                    "LOAD_LOCAL admits only a structurally Copy nonborrow root".into(),
                ));
            }
            if res != Some(first_ty) {
                return Err(ty_err("result differs from the place type"));
            }
        }
        tag::STORE_LOCAL => {
            let Some(Operand::Place(place)) = op.operands.first() else {
                return Err(ty_err("STORE_LOCAL takes a place"));
            };
            if !place.fields.is_empty() || !matches!(place.root, Root::Local(_)) {
                return Err(fail(
                    code::PLACEMENT,
                    "STORE_LOCAL names only a local root".into(),
                ));
            }
            if operand_ty(0) != operand_ty(1) {
                return Err(ty_err("stored value differs from the local's type"));
            }
        }
        tag::CALL => check_call(ctx, block, ordinal, op, &all_operand_tys())?,
        tag::INTRINSIC_CALL => check_intrinsic(ctx, block, ordinal, op, &all_operand_tys())?,
        tag::ENUM_CONST => {
            let Aux::Variant(variant) = &op.aux0 else {
                return Err(ty_err("needs a variant"));
            };
            let (decl_index, variant_index) = ctx
                .r
                .variants
                .get(variant)
                .copied()
                .ok_or_else(|| fail(code::TYPE, "variant does not resolve".into()))?;
            if !ctx.r.module.declarations[decl_index].variants[variant_index]
                .fields
                .is_empty()
            {
                return Err(ty_err("ENUM_CONST names a fieldless variant"));
            }
            if res != Some(ctx.r.self_type(decl_index)) {
                return Err(ty_err("result is the variant's owner type"));
            }
        }
        tag::ENUM_IS_VARIANT => {
            let Aux::Variant(variant) = &op.aux0 else {
                return Err(ty_err("needs a variant"));
            };
            let (decl_index, _) = ctx
                .r
                .variants
                .get(variant)
                .copied()
                .ok_or_else(|| fail(code::TYPE, "variant does not resolve".into()))?;
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            let owner = ctx.r.self_type(decl_index);
            let ok = match (&op.operands[0], &first_ty) {
                (Operand::Place(_), _) if first_ty == owner => true,
                (_, Type::Ref(inner) | Type::Mut(inner)) => **inner == owner,
                _ => false,
            };
            if !ok || res != Some(bool_t()) {
                return Err(ty_err(
                    "ENUM_IS_VARIANT tests an owner place or active loan of the variant's owner and yields Bool",
                ));
            }
        }
        tag::RESULT_TRY | tag::RESULT_TRY_RICH => {
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            let Type::Result(ok, err) = &first_ty else {
                return Err(fail(
                    code::TRY,
                    "the try operand is a Result carrier".into(),
                ));
            };
            let Type::Result(_, outer_err) = &ctx.function.result else {
                return Err(fail(
                    code::TRY,
                    "a try needs an enclosing Result<U, E> function result".into(),
                ));
            };
            if outer_err != err {
                return Err(fail(
                    code::TRY,
                    "the carrier's E differs from the enclosing result's E".into(),
                ));
            }
            if res.as_ref() != Some(&**ok) {
                return Err(fail(code::TRY, "the try result is the carrier's T".into()));
            }
            let word = one_word(ctx, ok) && one_word(ctx, err);
            if op.tag == tag::RESULT_TRY {
                if !word {
                    return Err(fail(
                        code::TRY,
                        "tag 29 admits only the one-word carrier; rich carriers use tag 46".into(),
                    ));
                }
                if op.aux0 != Aux::Type(first_ty.clone()) {
                    return Err(fail(
                        code::TRY,
                        "the carrier auxiliary differs from the operand".into(),
                    ));
                }
            } else {
                if word {
                    return Err(fail(
                        code::TRY,
                        "tag 46 admits only a rich carrier; one-word carriers use tag 29".into(),
                    ));
                }
                if op.aux0 != Aux::Type(ctx.function.result.clone()) {
                    return Err(fail(
                        code::TRY,
                        "tag 46 names the exact outer carrier type".into(),
                    ));
                }
            }
        }
        tag::UNIT_VALUE => {
            if res != Some(Type::Unit) {
                return Err(ty_err("UNIT_VALUE yields Unit"));
            }
        }
        tag::AGGREGATE_CONSTRUCT => {
            let Aux::Decl(id) = &op.aux0 else {
                return Err(ty_err("needs a declaration"));
            };
            let decl_index = *ctx.r.decls.get(id).ok_or_else(|| {
                fail(
                    code::UNSUPPORTED,
                    "construction of a nonlocal declaration".into(),
                )
            })?;
            let decl = &ctx.r.module.declarations[decl_index];
            if decl.kind != DeclKind::Value {
                return Err(ty_err("AGGREGATE_CONSTRUCT builds a value declaration"));
            }
            if sdk::is_bytes(&ctx.r.self_type(decl_index)) {
                return Err(fail(
                    code::SDK,
                    "sdk.bytes.Bytes is produced only by BYTE_BUILDER_FINISH, never by aggregate construction".into(),
                ));
            }
            let mut fields: Vec<&Field> = decl.fields.iter().collect();
            fields.sort_by_key(|f| f.ordinal);
            let tys = all_operand_tys();
            if fields.len() != tys.len()
                || fields
                    .iter()
                    .zip(&tys)
                    .any(|(f, operand_ty)| Some(&f.ty) != operand_ty.as_ref())
                || res != Some(ctx.r.self_type(decl_index))
            {
                return Err(ty_err(
                    "one value of the exact field type per field in declaration order, yielding the nominal type",
                ));
            }
        }
        tag::VARIANT_CONSTRUCT => {
            let Aux::Variant(variant) = &op.aux0 else {
                return Err(ty_err("needs a variant"));
            };
            let (decl_index, variant_index) =
                ctx.r.variants.get(variant).copied().ok_or_else(|| {
                    fail(
                        code::UNSUPPORTED,
                        "construction of a nonlocal variant".into(),
                    )
                })?;
            let mut fields: Vec<&Field> = ctx.r.module.declarations[decl_index].variants
                [variant_index]
                .fields
                .iter()
                .collect();
            fields.sort_by_key(|f| f.ordinal);
            let tys = all_operand_tys();
            if fields.len() != tys.len()
                || fields
                    .iter()
                    .zip(&tys)
                    .any(|(f, operand_ty)| Some(&f.ty) != operand_ty.as_ref())
                || res != Some(ctx.r.self_type(decl_index))
            {
                return Err(ty_err(
                    "one value of the exact payload type per payload field, yielding the owner type",
                ));
            }
        }
        tag::FIELD_COPY | tag::FIELD_MOVE => {
            let Aux::Field(fid) = &op.aux0 else {
                return Err(ty_err("needs a field"));
            };
            let (decl_index, _, field) = ctx
                .r
                .field(fid)
                .ok_or_else(|| fail(code::TYPE, "field does not resolve".into()))?;
            let Some(Operand::Place(place)) = op.operands.first() else {
                return Err(ty_err("takes an owner place"));
            };
            let place_ty = ctx.index.path(place).map(|p| p.ty.clone());
            if place_ty != Some(ctx.r.self_type(decl_index)) {
                return Err(ty_err("the owner place's type does not declare this field"));
            }
            if res.as_ref() != Some(&field.ty) {
                return Err(ty_err("result is the field's exact type"));
            }
            if op.tag == tag::FIELD_COPY && !ctx.r.is_copy(&field.ty) {
                return Err(fail(
                    code::PLACEMENT,
                    "FIELD_COPY reads only a structurally Copy field".into(),
                ));
            }
            if op.tag == tag::FIELD_MOVE {
                if ctx.borrowed_ancestry(place).is_some() {
                    return Err(fail(
                        code::PLACEMENT,
                        "FIELD_MOVE through a borrowed ancestry".into(),
                    ));
                }
                if ctx
                    .r
                    .ids
                    .fields
                    .get(fid)
                    .is_some_and(|info| info.variant.is_none())
                    && field.mutability != Mutability::Var
                {
                    return Err(fail(
                        code::PLACEMENT,
                        "FIELD_MOVE of a let ordinary field".into(),
                    ));
                }
            }
        }
        tag::PLACE_MOVE | tag::PLACE_DROP => {
            let Some(Operand::Place(place)) = op.operands.first() else {
                return Err(ty_err("takes a place"));
            };
            if ctx.borrowed_ancestry(place).is_some() {
                return Err(fail(
                    code::PLACEMENT,
                    "move or drop through a borrowed ancestry".into(),
                ));
            }
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            if ctx.r.is_copy(&first_ty) {
                return Err(fail(
                    code::PLACEMENT,
                    "PLACE_MOVE/PLACE_DROP name a non-Copy owner".into(),
                ));
            }
            if op.tag == tag::PLACE_MOVE && res != Some(first_ty) {
                return Err(ty_err("result is the place type"));
            }
        }
        tag::REPLACE_COMMIT => {
            let Some(Operand::Place(place)) = op.operands.first() else {
                return Err(ty_err("takes a destination place"));
            };
            match ctx.borrowed_ancestry(place) {
                Some(false) => {
                    return Err(fail(
                        code::PLACEMENT,
                        "replacement through a shared ancestry".into(),
                    ));
                }
                Some(true) if place.fields.is_empty() => {
                    return Err(fail(
                        code::PLACEMENT,
                        "replacement of a borrowed root owner".into(),
                    ));
                }
                _ => {}
            }
            if let Some(last) = place.fields.last()
                && ctx.r.field(last).map(|f| f.2.mutability) != Some(Mutability::Var)
            {
                return Err(fail(
                    code::PLACEMENT,
                    "REPLACE_COMMIT of a field binding requires var".into(),
                ));
            }
            let place_ty = ctx.index.path(place).map(|p| p.ty.clone());
            if place_ty != operand_ty(1) {
                return Err(ty_err("the replacement has the destination's type"));
            }
        }
        tag::BORROW_SHARED | tag::BORROW_MUT => {
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            let target = match (&op.operands[0], &first_ty) {
                (Operand::Place(place), _) if ctx.borrowed_ancestry(place).is_none() => {
                    first_ty.clone()
                }
                (Operand::Place(place), _) if !place.fields.is_empty() => ctx
                    .index
                    .path(place)
                    .map(|p| p.ty.clone())
                    .unwrap_or(first_ty.clone()),
                (_, Type::Ref(inner)) => {
                    if op.tag == tag::BORROW_MUT {
                        return Err(fail(
                            code::LOAN,
                            "BORROW_MUT through shared ancestry".into(),
                        ));
                    }
                    (**inner).clone()
                }
                (_, Type::Mut(inner)) => (**inner).clone(),
                (_, Type::SliceByte) if op.tag == tag::BORROW_SHARED => Type::SliceByte,
                _ => return Err(ty_err("borrow of a non-place, non-loan operand")),
            };
            if let Operand::Place(place) = &op.operands[0]
                && op.tag == tag::BORROW_MUT
                && ctx.borrowed_ancestry(place) == Some(false)
            {
                return Err(fail(
                    code::LOAN,
                    "BORROW_MUT through shared ancestry".into(),
                ));
            }
            let want = if op.tag == tag::BORROW_SHARED {
                Type::Ref(Box::new(target))
            } else {
                Type::Mut(Box::new(target))
            };
            if res != Some(want) {
                return Err(ty_err(
                    "borrow result is Ref<T>/Mut<T> of the borrowed target",
                ));
            }
        }
        tag::BORROW_SLICE_BYTE => {
            let first_ty = operand_ty(0).ok_or_else(|| ty_err("missing operand"))?;
            let ok_recv = match &first_ty {
                Type::ArrayByte => true,
                Type::Ref(inner) | Type::Mut(inner) => {
                    **inner == Type::ArrayByte || sdk::is_bytes(inner)
                }
                _ => false,
            };
            if crate::catalog::signature(6).map(Aux::CatalogFunc) != Some(op.aux1.clone()) {
                return Err(ty_err(
                    "BORROW_SLICE_BYTE names the catalog Array<Byte>.slice signature",
                ));
            }
            let u64_ty = Some(Type::Scalar(ScalarKind::UInt64));
            if !ok_recv
                || operand_ty(1) != u64_ty
                || operand_ty(2) != u64_ty
                || res != Some(Type::SliceByte)
            {
                return Err(ty_err(
                    "BORROW_SLICE_BYTE takes an Array<Byte> receiver and UInt64 bounds and yields Slice<Byte>",
                ));
            }
        }
        tag::RESULT_OK_RICH | tag::RESULT_ERR_RICH => {
            let Some(Type::Result(ok, err)) = &res else {
                return Err(ty_err("yields a Result carrier"));
            };
            let want = if op.tag == tag::RESULT_OK_RICH {
                ok
            } else {
                err
            };
            if operand_ty(0).as_ref() != Some(&**want) {
                return Err(ty_err("the payload has the carrier's exact T or E"));
            }
            if one_word(ctx, ok) && one_word(ctx, err) {
                // The one-word carrier is built by the same tags in this
                // model; its shape is recorded by the try that reads it.
            }
        }
        tag::BYTE_BUILDER_FINISH => {
            if !sdk::is_finish(ctx) {
                return Err(fail(
                    code::SDK,
                    "BYTE_BUILDER_FINISH is admitted only in the exact sdk.bytes.BytesBuilder.finish definition".into(),
                ));
            }
            let recv = Operand::Place(PathKey {
                root: Root::Receiver,
                fields: vec![],
            });
            if op.operands != [recv] || op.aux0 != Aux::None || op.aux1 != Aux::None {
                return Err(ty_err(
                    "BYTE_BUILDER_FINISH takes exactly the owned-self Builder place and zero auxiliaries",
                ));
            }
            if !res.as_ref().is_some_and(sdk::is_bytes) {
                return Err(ty_err("BYTE_BUILDER_FINISH yields exactly sdk.bytes.Bytes"));
            }
        }
        other => {
            return Err(fail(
                code::TYPE,
                format!("tag {other} is not a canonical schema-1.9 operation"),
            ));
        }
    }
    // Placement: no operation result other than borrows carries a loan type.
    if let Some(result_ty) = &res
        && result_ty.is_borrow()
        && !matches!(
            op.tag,
            tag::BORROW_SHARED | tag::BORROW_MUT | tag::BORROW_SLICE_BYTE
        )
    {
        return Err(fail(
            code::PLACEMENT,
            "only borrow operations produce Ref, Mut or Slice values".into(),
        ));
    }
    Ok(())
}

fn check_args(
    ctx: &FnCheck<'_, '_>,
    block: u32,
    ordinal: u32,
    op: &Op,
    tys: &[Option<Type>],
    recv: Option<Type>,
    params: &[Type],
) -> CResult<()> {
    let fail = |message: String| ctx.err(code::TYPE, Some(block), Some(ordinal), message);
    let mut want: Vec<Type> = Vec::new();
    if let Some(recv_ty) = recv {
        want.push(recv_ty);
    }
    want.extend(params.iter().cloned());
    if want.len() != tys.len() {
        return Err(fail(format!(
            "call needs {} operands (receiver then arguments), found {}",
            want.len(),
            tys.len()
        )));
    }
    for (position, (wanted, (actual, operand))) in
        want.iter().zip(tys.iter().zip(&op.operands)).enumerate()
    {
        if Some(wanted) != actual.as_ref() {
            return Err(fail(format!("call operand {position} has the wrong type")));
        }
        // Owned non-Copy arguments are moved values; loans are active
        // bindings (P) or reborrow results (V).
        if !wanted.is_borrow() && matches!(operand, Operand::Place(_)) {
            return Err(fail(format!(
                "call operand {position}: a by-value argument is an SSA value (LOAD_LOCAL or PLACE_MOVE)"
            )));
        }
    }
    loan_matrix(ctx, block, ordinal, op, &want)
}

fn overlaps(left: &PathKey, right: &PathKey) -> bool {
    left.root == right.root && {
        let shared = left.fields.len().min(right.fields.len());
        left.fields[..shared] == right.fields[..shared]
    }
}

/// The receiver/argument loan matrix of one call: every loan operand
/// resolves to one exact current-frame loan (an entry-loan binding, the
/// transient Slice local's loan, or a body reborrow value), and no two
/// operands alias one owner when either of them is exclusive.
fn loan_matrix(
    ctx: &FnCheck<'_, '_>,
    block: u32,
    ordinal: u32,
    op: &Op,
    want: &[Type],
) -> CResult<()> {
    let fail = |message: String| ctx.err(code::LOAN, Some(block), Some(ordinal), message);
    let mut views: Vec<(usize, PathKey, bool)> = Vec::new();
    for (position, (wanted, operand)) in want.iter().zip(&op.operands).enumerate() {
        if !wanted.is_borrow() {
            continue;
        }
        let exclusive = matches!(wanted, Type::Mut(_));
        let origin = match operand {
            Operand::Place(place) => {
                if let Some(slice_loan) = ctx.slice_local_loan(place) {
                    Some(slice_loan.origin.clone())
                } else if place.fields.is_empty() && ctx.is_borrow_root(&place.root) {
                    ctx.loan_of_place(place).map(|l| l.origin.clone())
                } else {
                    None
                }
            }
            Operand::Value(op_ref) => ctx.loan_created_by(op_ref).map(|l| l.origin.clone()),
            _ => None,
        };
        let Some(origin) = origin else {
            return Err(fail(format!(
                "call operand {position}: a loan argument must resolve to one active current-frame loan (an entry-loan binding, a transient Slice local, or a reborrow value)"
            )));
        };
        views.push((position, origin, exclusive));
    }
    for (index, (first_position, first_origin, first_exclusive)) in views.iter().enumerate() {
        for (second_position, second_origin, second_exclusive) in &views[index + 1..] {
            if (*first_exclusive || *second_exclusive) && overlaps(first_origin, second_origin) {
                return Err(fail(format!(
                    "call operands {first_position} and {second_position} alias one owner while one of them is exclusive"
                )));
            }
        }
    }
    Ok(())
}

fn check_call(
    ctx: &FnCheck<'_, '_>,
    block: u32,
    ordinal: u32,
    op: &Op,
    tys: &[Option<Type>],
) -> CResult<()> {
    let Aux::Func(sig) = &op.aux0 else {
        return Err(ctx.err(
            code::TYPE,
            Some(block),
            Some(ordinal),
            "CALL names a declared function",
        ));
    };
    let Some(&(callee_decl, callee_fn)) = ctx.r.funcs.get(sig) else {
        return Err(ctx.err(
            code::UNSUPPORTED,
            Some(block),
            Some(ordinal),
            "calls to functions of other modules are not supported by this checker",
        ));
    };
    let callee = &ctx.r.module.declarations[callee_decl].functions[callee_fn];
    if sdk::is_facade_callee(ctx.r, callee_decl, callee) {
        return Err(ctx.err(
            code::SDK,
            Some(block),
            Some(ordinal),
            "a call to the certified Bytes.slice facade is lowered to BORROW_SLICE_BYTE, never CALL",
        ));
    }
    if op.aux1 != Aux::Effects(callee.effects.clone()) {
        return Err(ctx.err(
            code::EFFECT,
            Some(block),
            Some(ordinal),
            "the effect-set auxiliary differs from the callee's",
        ));
    }
    if !effects_within(&callee.effects, &ctx.function.effects) {
        return Err(ctx.err(
            code::EFFECT,
            Some(block),
            Some(ordinal),
            "the callee's effect set is not a subset of the caller's",
        ));
    }
    let owner = ctx.r.self_type(callee_decl);
    let recv = crate::catalog::receiver_type(&owner, callee.receiver).filter(|_| {
        matches!(
            callee.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        )
    });
    let mut params: Vec<&Param> = callee.params.iter().collect();
    params.sort_by_key(|p| p.ordinal);
    let param_types: Vec<Type> = params.iter().map(|p| p.ty.clone()).collect();
    check_args(ctx, block, ordinal, op, tys, recv, &param_types)?;
    if op.result.as_ref() != Some(&callee.result) {
        return Err(ctx.err(
            code::TYPE,
            Some(block),
            Some(ordinal),
            "CALL result differs from the callee's",
        ));
    }
    Ok(())
}

fn check_intrinsic(
    ctx: &FnCheck<'_, '_>,
    block: u32,
    ordinal: u32,
    op: &Op,
    tys: &[Option<Type>],
) -> CResult<()> {
    let Aux::CatalogFunc(sig) = &op.aux0 else {
        return Err(ctx.err(
            code::TYPE,
            Some(block),
            Some(ordinal),
            "INTRINSIC_CALL names a catalog function",
        ));
    };
    let entry = crate::catalog::by_signature(sig).ok_or_else(|| {
        ctx.err(
            code::TYPE,
            Some(block),
            Some(ordinal),
            "unknown catalog function",
        )
    })?;
    if !effects_within(&entry.effects, &ctx.function.effects) {
        return Err(ctx.err(
            code::EFFECT,
            Some(block),
            Some(ordinal),
            "the catalog function's effect set is not a subset of the caller's",
        ));
    }
    let recv = crate::catalog::receiver_type(&entry.owner, entry.receiver).filter(|_| {
        matches!(
            entry.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        )
    });
    let param_types: Vec<Type> = entry.params.iter().map(|p| p.1.clone()).collect();
    check_args(ctx, block, ordinal, op, tys, recv, &param_types)
}
