//! Structural typing of the logical model, run by the canonical writer and
//! by every decode before the canonical comparison (`ZLM-SHAPE`): each
//! operation's operand, result and auxiliary types against the tag table,
//! owned-path types, and the owned-path and entry-loan records every owner
//! and borrowed binding needs. The semantic pass ([`super::check`]) then
//! applies the full typing, placement and ownership rules (`ZLM-C-*`).

use crate::error::{Error, Result, in_function as err};
use crate::ids::{FnIndex, Identities};
use crate::model::*;

/// Module-wide lookup tables for typing checks.
pub(crate) struct Global<'a> {
    m: &'a Module,
    ids: &'a Identities,
    sigs: std::collections::HashMap<crate::hash::Id, (usize, usize)>,
    variants: std::collections::HashMap<crate::hash::Id, (usize, usize)>,
    decls: std::collections::HashMap<crate::hash::Id, usize>,
}

impl<'a> Global<'a> {
    pub(crate) fn new(module: &'a Module, ids: &'a Identities) -> Self {
        let mut sigs = std::collections::HashMap::new();
        let mut variants = std::collections::HashMap::new();
        let mut decls = std::collections::HashMap::new();
        for (decl_index, decl_ids) in ids.decls.iter().enumerate() {
            decls.insert(decl_ids.nominal, decl_index);
            for (fn_index, fn_ids) in decl_ids.functions.iter().enumerate() {
                sigs.insert(fn_ids.sig, (decl_index, fn_index));
            }
            for (variant_index, (vid, _)) in decl_ids.variants.iter().enumerate() {
                variants.insert(*vid, (decl_index, variant_index));
            }
        }
        Global {
            m: module,
            ids,
            sigs,
            variants,
            decls,
        }
    }
    fn field(&self, id: &crate::hash::Id) -> Option<(&'a Field, usize)> {
        let info = self.ids.fields.get(id)?;
        let decl = &self.m.declarations[info.decl];
        Some(match info.variant {
            None => (&decl.fields[info.index], info.decl),
            Some(variant_index) => (&decl.variants[variant_index].fields[info.index], info.decl),
        })
    }
    /// Whether the module imports from other modules, so that a symbol
    /// that is not its own may name a provider's member (resolved by the
    /// linked semantic check, `check::link`).
    fn links(&self) -> bool {
        !self.m.imports.is_empty()
    }
    fn nominal(&self, decl_index: usize) -> Type {
        Type::Nominal(self.ids.decls[decl_index].nominal)
    }
}

/// `ty`, or the target of a `Ref`/`Mut` view of it.
fn target(ty: &Type) -> &Type {
    match ty {
        Type::Ref(inner) | Type::Mut(inner) => inner,
        other => other,
    }
}

pub(crate) fn check_typing(tables: &Global, decl_index: usize, function: &Function) -> Result<()> {
    let index = FnIndex::new(function);
    let self_ty = tables.nominal(decl_index);
    let recv = crate::ids::receiver_type(&tables.ids.decls[decl_index].nominal, function.receiver);
    // Owned paths: temporaries have their producer's type; field paths follow the field.
    for path in &function.body.paths {
        let at = "owned path";
        if let Some(last) = path.key.fields.last() {
            if tables.field(last).is_none() && tables.links() {
                // Another module's field: typed by the linked semantic check.
                continue;
            }
            let (field, owner) = tables.field(last).ok_or_else(|| {
                err(
                    function,
                    at,
                    "field component does not resolve to a local field",
                )
            })?;
            let mut parent = path.key.clone();
            parent.fields.pop();
            let place_ty = index
                .path(&parent)
                .map(|x| x.ty.clone())
                .ok_or_else(|| err(function, at, "missing parent"))?;
            let info = &tables.ids.fields[last];
            let owner_ok = match info.variant {
                None => *target(&place_ty) == tables.nominal(owner),
                Some(_) => *target(&place_ty) == tables.nominal(owner),
            };
            if !owner_ok || path.ty != field.ty {
                return Err(err(
                    function,
                    at,
                    "field path does not match its parent's type or the field's type",
                ));
            }
        } else {
            let want = match &path.key.root {
                Root::Receiver => recv.clone().map(|t| target(&t).clone()),
                Root::Param(ordinal) => function
                    .params
                    .iter()
                    .find(|q| q.ordinal == *ordinal)
                    .map(|q| target(&q.ty).clone()),
                Root::Local(ordinal) => function
                    .body
                    .locals
                    .iter()
                    .find(|q| q.ordinal == *ordinal)
                    .map(|q| q.ty.clone()),
                Root::Temp(op_ref) => index.op(op_ref).and_then(|o| o.result.clone()),
            };
            let ok = match &path.key.root {
                // A borrowed argument root names the loan target; an owned one the value itself.
                Root::Receiver | Root::Param(_) => {
                    want.as_ref() == Some(&path.ty)
                        || match &path.key.root {
                            Root::Param(ordinal) => function
                                .params
                                .iter()
                                .find(|q| q.ordinal == *ordinal)
                                .is_some_and(|q| q.ty == path.ty),
                            _ => false,
                        }
                }
                _ => want.as_ref() == Some(&path.ty),
            };
            if !ok {
                return Err(err(
                    function,
                    at,
                    "root path type differs from its binding's type",
                ));
            }
        }
    }
    for loan in &function.body.loans {
        let at = format!("loan {}", loan.id);
        let ok = match loan.kind {
            LoanKind::Shared => matches!(loan.borrowed, Type::Ref(_)),
            LoanKind::Exclusive => matches!(loan.borrowed, Type::Mut(_)),
            LoanKind::ByteSlice => loan.borrowed == Type::SliceByte,
        };
        if !ok {
            return Err(err(function, &at, "loan kind and borrowed type disagree"));
        }
        if loan.creation.is_none() && !matches!(loan.origin.root, Root::Receiver | Root::Param(_)) {
            return Err(err(
                function,
                &at,
                "an entry loan originates at a receiver or parameter root",
            ));
        }
    }
    let ty_of = |o: &Operand| index.operand_type_ref(o).ok().flatten();
    let blocks = function.body.blocks.iter().flat_map(|b| {
        b.ops.iter().enumerate().map(move |(i, op)| {
            (
                OpRef::Flow {
                    block: b.id,
                    ordinal: i as u32,
                },
                op,
            )
        })
    });
    let mut operand_buf: Vec<Option<&Type>> = Vec::new();
    for (here, op) in blocks {
        // Formatted only on error: this loop runs once per operation.
        let fail = |msg: &str| crate::error::at_op(function, here, msg);
        operand_buf.clear();
        operand_buf.extend(op.operands.iter().map(ty_of));
        let operand_tys: &[Option<&Type>] = &operand_buf;
        let res = op.result.as_ref();
        let scalar = |x: Option<&Type>| match x {
            Some(Type::Scalar(kind)) => Some(*kind),
            _ => None,
        };
        use crate::model::tag::*;
        match op.tag {
            CONST if operand_tys[0] != res => {
                return Err(fail("constant type differs from the result"));
            }
            NEG | NOT_BOOL => {
                let kind = scalar(res).ok_or_else(|| fail("unary operation on a non-scalar"))?;
                let ok = if op.tag == NOT_BOOL {
                    kind == ScalarKind::Bool
                } else {
                    kind.is_signed()
                };
                if !ok || operand_tys[0] != res {
                    return Err(fail("unary operand/result types are not admitted"));
                }
            }
            ADD | SUB | MUL | DIV | REM | BIT_AND | BIT_OR | BIT_XOR => {
                let kind = scalar(res).ok_or_else(|| fail("arithmetic on a non-scalar"))?;
                if kind == ScalarKind::Bool || operand_tys[0] != res || operand_tys[1] != res {
                    return Err(fail(
                        "binary operands must have the exact integer result type",
                    ));
                }
            }
            SHIFT_LEFT | SHIFT_RIGHT => {
                let kind = scalar(res).ok_or_else(|| fail("shift of a non-scalar"))?;
                if kind == ScalarKind::Bool
                    || operand_tys[0] != res
                    || operand_tys[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                {
                    return Err(fail("shift takes an integer T and a UInt64 count"));
                }
            }
            EQ | LT | NE | LE | GT | GE
                if (res != Some(&Type::Scalar(ScalarKind::Bool))
                    || scalar(operand_tys[0]).is_none()
                    || operand_tys[0] != operand_tys[1]) =>
            {
                return Err(fail(
                    "comparison takes two identical scalars and yields Bool",
                ));
            }
            JUMP_IF_FALSE | ASSERT_TRUE
                if operand_tys[0] != Some(&Type::Scalar(ScalarKind::Bool)) =>
            {
                return Err(fail("condition must be Bool"));
            }
            ASSERT_EQ if operand_tys[0] != operand_tys[1] => {
                return Err(fail("ASSERT_EQ operands differ in type"));
            }
            RETURN if operand_tys[0] != Some(&function.result) => {
                return Err(fail(
                    "returned value differs from the function's result type",
                ));
            }
            LOAD_LOCAL | STORE_LOCAL => {
                let Some(Operand::Place(place)) = op.operands.first() else {
                    return Err(fail("place operand expected"));
                };
                let rooted = place.fields.is_empty()
                    && match place.root {
                        Root::Local(_) => true,
                        Root::Param(_) | Root::Receiver => op.tag == LOAD_LOCAL,
                        Root::Temp(_) => false,
                    };
                if !rooted {
                    return Err(fail(
                        "LOAD_LOCAL names an argument or local root; STORE_LOCAL a local root",
                    ));
                }
                if op.tag == LOAD_LOCAL {
                    let place_ty = operand_tys[0].cloned().unwrap_or(Type::Never);
                    if res != Some(&place_ty)
                        || !tables.ids.is_copy(&place_ty)
                        || place_ty.is_borrow()
                    {
                        return Err(fail(
                            "LOAD_LOCAL reads only a structurally Copy nonborrow root of its exact type",
                        ));
                    }
                } else if operand_tys[0] != operand_tys[1] {
                    return Err(fail("stored value differs from the local's type"));
                }
            }
            ENUM_CONST | ENUM_IS_VARIANT | VARIANT_CONSTRUCT => {
                let Aux::Variant(vid) = &op.aux0 else {
                    return Err(fail("variant auxiliary expected"));
                };
                if !tables.variants.contains_key(vid) && tables.links() {
                    continue;
                }
                let &(variant_decl, variant_index) = tables
                    .variants
                    .get(vid)
                    .ok_or_else(|| fail("variant does not resolve to a local declaration"))?;
                let variant = &tables.m.declarations[variant_decl].variants[variant_index];
                let owner = tables.nominal(variant_decl);
                match op.tag {
                    ENUM_CONST => {
                        if !variant.fields.is_empty() || res != Some(&owner) {
                            return Err(fail(
                                "ENUM_CONST builds a fieldless variant of its exact owner",
                            ));
                        }
                    }
                    ENUM_IS_VARIANT => {
                        if res != Some(&Type::Scalar(ScalarKind::Bool))
                            || operand_tys[0].map(target) != Some(&owner)
                        {
                            return Err(fail(
                                "ENUM_IS_VARIANT tests an owner place or loan and yields Bool",
                            ));
                        }
                    }
                    _ => {
                        let mut fields: Vec<&Field> = variant.fields.iter().collect();
                        fields.sort_by_key(|x| x.ordinal);
                        if res != Some(&owner)
                            || fields.len() != operand_tys.len()
                            || fields
                                .iter()
                                .zip(operand_tys)
                                .any(|(fl, actual)| *actual != Some(&fl.ty))
                        {
                            return Err(fail(
                                "VARIANT_CONSTRUCT operands must match the payload fields in ordinal order",
                            ));
                        }
                    }
                }
            }
            AGGREGATE_CONSTRUCT => {
                let Aux::Decl(decl_id) = &op.aux0 else {
                    return Err(fail("declaration auxiliary expected"));
                };
                if !tables.decls.contains_key(decl_id) && tables.links() {
                    continue;
                }
                let &aggregate_decl = tables
                    .decls
                    .get(decl_id)
                    .ok_or_else(|| fail("declaration does not resolve locally"))?;
                let decl = &tables.m.declarations[aggregate_decl];
                let mut fields: Vec<&Field> = decl.fields.iter().collect();
                fields.sort_by_key(|x| x.ordinal);
                if decl.kind != DeclKind::Value
                    || res != Some(&tables.nominal(aggregate_decl))
                    || fields.len() != operand_tys.len()
                    || fields
                        .iter()
                        .zip(operand_tys)
                        .any(|(fl, actual)| *actual != Some(&fl.ty))
                {
                    return Err(fail(
                        "AGGREGATE_CONSTRUCT operands must match the value declaration's fields in order",
                    ));
                }
            }
            FIELD_COPY | FIELD_MOVE => {
                let Aux::Field(fid) = &op.aux0 else {
                    return Err(fail("field auxiliary expected"));
                };
                if tables.field(fid).is_none() && tables.links() {
                    continue;
                }
                let (field, owner) = tables
                    .field(fid)
                    .ok_or_else(|| fail("field does not resolve locally"))?;
                if res != Some(&field.ty)
                    || operand_tys[0].map(target) != Some(&tables.nominal(owner))
                {
                    return Err(fail("field access result/owner types are wrong"));
                }
                if op.tag == FIELD_COPY && !tables.ids.is_copy(&field.ty) {
                    return Err(fail("FIELD_COPY needs a structurally Copy field"));
                }
                if op.tag == FIELD_MOVE
                    && (field.mutability != Mutability::Var
                        && tables.ids.fields[fid].variant.is_none()
                        || matches!(operand_tys[0], Some(Type::Ref(_) | Type::Mut(_))))
                {
                    return Err(fail("FIELD_MOVE needs a var field of an owned place"));
                }
            }
            PLACE_MOVE | BYTE_BUILDER_FINISH => {
                if op.tag == PLACE_MOVE && res != operand_tys[0] {
                    return Err(fail("PLACE_MOVE yields the place's exact type"));
                }
                if op.tag == BYTE_BUILDER_FINISH
                    && !(tables.m.name == "sdk.bytes"
                        && function.name == "finish"
                        && tables.m.declarations[decl_index].name == "BytesBuilder")
                {
                    return Err(fail(
                        "BYTE_BUILDER_FINISH is admitted only in sdk.bytes.BytesBuilder.finish",
                    ));
                }
            }
            REPLACE_COMMIT if operand_tys[0] != operand_tys[1] => {
                return Err(fail("replacement differs from the destination type"));
            }
            UNIT_VALUE if res != Some(&Type::Unit) => {
                return Err(fail("UNIT_VALUE yields Unit"));
            }
            RESULT_OK_RICH | RESULT_ERR_RICH => {
                let Some(Type::Result(ok, err_ty)) = res else {
                    return Err(fail("rich construction yields a Result"));
                };
                let want = if op.tag == RESULT_OK_RICH { ok } else { err_ty };
                if operand_tys[0] != Some(&**want) {
                    return Err(fail("payload differs from the carrier's T or E"));
                }
            }
            RESULT_TRY | RESULT_TRY_RICH => {
                let Some(Type::Result(ok, err_ty)) = operand_tys[0] else {
                    return Err(fail("try takes a Result carrier"));
                };
                let Type::Result(_, outer_err) = &function.result else {
                    return Err(fail("try needs a function returning Result<U, E>"));
                };
                if res != Some(&**ok) || outer_err != err_ty {
                    return Err(fail(
                        "try yields T and needs the same E in the function result",
                    ));
                }
                if op.tag == RESULT_TRY_RICH && op.aux0 != Aux::Type(function.result.clone()) {
                    return Err(fail("RESULT_TRY_RICH names the exact outer carrier"));
                }
                let Aux::Edge(eid) = op.aux1 else {
                    return Err(fail("error cleanup edge expected"));
                };
                let edge = index
                    .edges
                    .get(&eid)
                    .map(|&i| &function.body.edges[i])
                    .ok_or_else(|| fail("missing cleanup edge"))?;
                let OpRef::Flow { block, .. } = here else {
                    return Err(fail("try is a flow operation"));
                };
                if edge.kind != EdgeKind::TryError
                    || edge.source != block
                    || edge.successor.is_some()
                {
                    return Err(fail(
                        "try names a try-error edge from its own block to exit",
                    ));
                }
            }
            CALL | INTRINSIC_CALL => {
                let (recv_kind, owner, params, result, effects): (
                    ReceiverKind,
                    Type,
                    Vec<Type>,
                    Type,
                    Vec<Effect>,
                ) = match &op.aux0 {
                    Aux::Func(sig) if !tables.sigs.contains_key(sig) => {
                        if tables.links() {
                            // Another module's function: the linked semantic
                            // check types the call against its signature.
                            continue;
                        }
                        return Err(Error::new(
                            crate::check::code::LINK,
                            format!(
                                "function {} {here}: calls a function of another module, but the module imports from no other module",
                                function.name
                            ),
                        ));
                    }
                    Aux::Func(sig) => {
                        let &(callee_decl, callee_fn) = tables
                            .sigs
                            .get(sig)
                            .ok_or_else(|| fail("callee does not resolve"))?;
                        let callee = &tables.m.declarations[callee_decl].functions[callee_fn];
                        let mut callee_params: Vec<&Param> = callee.params.iter().collect();
                        callee_params.sort_by_key(|p| p.ordinal);
                        (
                            callee.receiver,
                            tables.nominal(callee_decl),
                            callee_params.iter().map(|p| p.ty.clone()).collect(),
                            callee.result.clone(),
                            callee.effects.clone(),
                        )
                    }
                    Aux::CatalogFunc(id) => {
                        let entry = crate::catalog::by_signature(id)
                            .ok_or_else(|| fail("unknown catalog function"))?;
                        (
                            entry.receiver,
                            entry.owner.clone(),
                            entry.params.iter().map(|p| p.1.clone()).collect(),
                            entry.result.clone(),
                            entry.effects.clone(),
                        )
                    }
                    _ => return Err(fail("callee auxiliary expected")),
                };
                let mut want: Vec<Type> = Vec::new();
                if let Some(recv_ty) =
                    crate::catalog::receiver_type(&owner, recv_kind).filter(|_| {
                        matches!(
                            recv_kind,
                            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                        )
                    })
                {
                    want.push(recv_ty);
                }
                want.extend(params);
                let args_ok = want.len() == operand_tys.len()
                    && want.iter().zip(operand_tys).zip(&op.operands).all(
                        |((wanted, actual), operand)| match operand {
                            // A loan argument may be passed as the place of its target (entry-loan binding).
                            Operand::Place(_) if wanted.is_borrow() => {
                                *actual == Some(target(wanted)) || *actual == Some(wanted)
                            }
                            _ => *actual == Some(wanted),
                        },
                    );
                if !args_ok || res != Some(&result) || op.aux1 != Aux::Effects(effects.clone()) {
                    return Err(fail(
                        "call operands, result or effect auxiliary differ from the callee signature",
                    ));
                }
                if !effects_within(&effects, &function.effects) {
                    return Err(fail(
                        "a callee's effect set must be a subset of the caller's",
                    ));
                }
            }
            BORROW_SHARED | BORROW_MUT | BORROW_SLICE_BYTE => {
                let Aux::Loan(lid) = op.aux0 else {
                    return Err(fail("loan auxiliary expected"));
                };
                let loan = function
                    .body
                    .loans
                    .iter()
                    .find(|l| l.id == lid)
                    .ok_or_else(|| fail("missing loan"))?;
                let want_res = match op.tag {
                    BORROW_SHARED => Type::Ref(Box::new(
                        target(operand_tys[0].unwrap_or(&Type::Never)).clone(),
                    )),
                    BORROW_MUT => Type::Mut(Box::new(
                        target(operand_tys[0].unwrap_or(&Type::Never)).clone(),
                    )),
                    _ => Type::SliceByte,
                };
                if res != Some(&want_res)
                    || loan.borrowed != want_res
                    || loan.creation != Some(here)
                {
                    return Err(fail(
                        "borrow result, loan type and loan creation must agree",
                    ));
                }
                if op.tag == BORROW_SLICE_BYTE
                    && (operand_tys[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || operand_tys[2] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || !matches!(
                            operand_tys[0].map(target),
                            Some(Type::ArrayByte | Type::Nominal(_))
                        ))
                {
                    return Err(fail(
                        "BORROW_SLICE_BYTE takes a byte-array receiver and UInt64 bounds",
                    ));
                }
            }
            _ => {}
        }
    }
    let _ = self_ty;
    Ok(())
}

/// Every non-Copy owned receiver, parameter, local and owner-producing flow
/// result has exactly one root owned path; every shared/exclusive receiver
/// and Ref/Mut/Slice parameter has exactly one entry loan at its root.
pub(crate) fn check_owners(tables: &Global, decl_index: usize, function: &Function) -> Result<()> {
    let owner = |t: &Type| !t.is_borrow() && !tables.ids.is_copy(t);
    let has_root = |root: Root| {
        function
            .body
            .paths
            .iter()
            .any(|p| p.key.fields.is_empty() && p.key.root == root)
    };
    let self_ty = tables.nominal(decl_index);
    if function.receiver == ReceiverKind::Owned && owner(&self_ty) && !has_root(Root::Receiver) {
        return Err(err(
            function,
            "owned paths",
            "the owned receiver has no root owned path",
        ));
    }
    for param in &function.params {
        if owner(&param.ty) && !has_root(Root::Param(param.ordinal)) {
            return Err(err(
                function,
                "owned paths",
                format!("owner parameter {} has no root owned path", param.name),
            ));
        }
    }
    for local in &function.body.locals {
        if owner(&local.ty) && !has_root(Root::Local(local.ordinal)) {
            return Err(err(
                function,
                "owned paths",
                format!("owner local {} has no root owned path", local.name),
            ));
        }
    }
    for block in &function.body.blocks {
        for (i, op) in block.ops.iter().enumerate() {
            if op.result.as_ref().is_some_and(owner)
                && !has_root(Root::Temp(OpRef::Flow {
                    block: block.id,
                    ordinal: i as u32,
                }))
            {
                return Err(err(
                    function,
                    &format!("block {} op {i}", block.id),
                    "an owner-producing result has no temporary owned path",
                ));
            }
        }
    }
    let entry_loans = |root: &Root| {
        function
            .body
            .loans
            .iter()
            .filter(|l| {
                l.creation.is_none() && l.origin.fields.is_empty() && l.origin.root == *root
            })
            .count()
    };
    if matches!(
        function.receiver,
        ReceiverKind::Shared | ReceiverKind::Exclusive
    ) && entry_loans(&Root::Receiver) != 1
    {
        return Err(err(
            function,
            "loans",
            "a shared/exclusive receiver has exactly one entry loan",
        ));
    }
    for param in &function.params {
        let borrowed = matches!(param.ty, Type::Ref(_) | Type::Mut(_) | Type::SliceByte);
        let loan_count = entry_loans(&Root::Param(param.ordinal));
        if (borrowed && loan_count != 1) || (!borrowed && loan_count != 0) {
            return Err(err(
                function,
                "loans",
                format!(
                    "parameter {} needs exactly {} entry loan(s)",
                    param.name,
                    u8::from(borrowed)
                ),
            ));
        }
    }
    if !matches!(
        function.receiver,
        ReceiverKind::Shared | ReceiverKind::Exclusive
    ) && entry_loans(&Root::Receiver) != 0
    {
        return Err(err(
            function,
            "loans",
            "only a shared/exclusive receiver has an entry loan",
        ));
    }
    Ok(())
}
