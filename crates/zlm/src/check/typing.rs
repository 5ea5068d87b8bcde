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
    pub(crate) fn new(m: &'a Module, ids: &'a Identities) -> Self {
        let mut sigs = std::collections::HashMap::new();
        let mut variants = std::collections::HashMap::new();
        let mut decls = std::collections::HashMap::new();
        for (decl_index, d) in ids.decls.iter().enumerate() {
            decls.insert(d.nominal, decl_index);
            for (fn_index, f) in d.functions.iter().enumerate() {
                sigs.insert(f.sig, (decl_index, fn_index));
            }
            for (variant_index, (vid, _)) in d.variants.iter().enumerate() {
                variants.insert(*vid, (decl_index, variant_index));
            }
        }
        Global {
            m,
            ids,
            sigs,
            variants,
            decls,
        }
    }
    fn field(&self, id: &crate::hash::Id) -> Option<(&'a Field, usize)> {
        let info = self.ids.fields.get(id)?;
        let d = &self.m.declarations[info.decl];
        Some(match info.variant {
            None => (&d.fields[info.index], info.decl),
            Some(v) => (&d.variants[v].fields[info.index], info.decl),
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

/// `t`, or the target of a `Ref`/`Mut` view of it.
fn target(t: &Type) -> &Type {
    match t {
        Type::Ref(x) | Type::Mut(x) => x,
        other => other,
    }
}

pub(crate) fn check_typing(tables: &Global, decl_index: usize, f: &Function) -> Result<()> {
    let index = FnIndex::new(f);
    let self_ty = tables.nominal(decl_index);
    let recv = crate::ids::receiver_type(&tables.ids.decls[decl_index].nominal, f.receiver);
    // Owned paths: temporaries have their producer's type; field paths follow the field.
    for p in &f.body.paths {
        let at = "owned path";
        if let Some(last) = p.key.fields.last() {
            if tables.field(last).is_none() && tables.links() {
                // Another module's field: typed by the linked semantic check.
                continue;
            }
            let (field, owner) = tables
                .field(last)
                .ok_or_else(|| err(f, at, "field component does not resolve to a local field"))?;
            let mut parent = p.key.clone();
            parent.fields.pop();
            let pt = index
                .path(&parent)
                .map(|x| x.ty.clone())
                .ok_or_else(|| err(f, at, "missing parent"))?;
            let info = &tables.ids.fields[last];
            let owner_ok = match info.variant {
                None => *target(&pt) == tables.nominal(owner),
                Some(_) => *target(&pt) == tables.nominal(owner),
            };
            if !owner_ok || p.ty != field.ty {
                return Err(err(
                    f,
                    at,
                    "field path does not match its parent's type or the field's type",
                ));
            }
        } else {
            let want = match &p.key.root {
                Root::Receiver => recv.clone().map(|t| target(&t).clone()),
                Root::Param(x) => f
                    .params
                    .iter()
                    .find(|q| q.ordinal == *x)
                    .map(|q| target(&q.ty).clone()),
                Root::Local(x) => f
                    .body
                    .locals
                    .iter()
                    .find(|q| q.ordinal == *x)
                    .map(|q| q.ty.clone()),
                Root::Temp(r) => index.op(r).and_then(|o| o.result.clone()),
            };
            let ok = match &p.key.root {
                // A borrowed argument root names the loan target; an owned one the value itself.
                Root::Receiver | Root::Param(_) => {
                    want.as_ref() == Some(&p.ty)
                        || match &p.key.root {
                            Root::Param(x) => f
                                .params
                                .iter()
                                .find(|q| q.ordinal == *x)
                                .is_some_and(|q| q.ty == p.ty),
                            _ => false,
                        }
                }
                _ => want.as_ref() == Some(&p.ty),
            };
            if !ok {
                return Err(err(f, at, "root path type differs from its binding's type"));
            }
        }
    }
    for l in &f.body.loans {
        let at = format!("loan {}", l.id);
        let ok = match l.kind {
            LoanKind::Shared => matches!(l.borrowed, Type::Ref(_)),
            LoanKind::Exclusive => matches!(l.borrowed, Type::Mut(_)),
            LoanKind::ByteSlice => l.borrowed == Type::SliceByte,
        };
        if !ok {
            return Err(err(f, &at, "loan kind and borrowed type disagree"));
        }
        if l.creation.is_none() && !matches!(l.origin.root, Root::Receiver | Root::Param(_)) {
            return Err(err(
                f,
                &at,
                "an entry loan originates at a receiver or parameter root",
            ));
        }
    }
    let ty_of = |o: &Operand| index.operand_type_ref(o).ok().flatten();
    let blocks = f.body.blocks.iter().flat_map(|b| {
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
    let mut tbuf: Vec<Option<&Type>> = Vec::new();
    for (here, op) in blocks {
        // Formatted only on error: this loop runs once per operation.
        let e = |msg: &str| err(f, &format!("{here:?}"), msg);
        tbuf.clear();
        tbuf.extend(op.operands.iter().map(ty_of));
        let t: &[Option<&Type>] = &tbuf;
        let res = op.result.as_ref();
        let scalar = |x: Option<&Type>| match x {
            Some(Type::Scalar(k)) => Some(*k),
            _ => None,
        };
        use crate::model::tag::*;
        match op.tag {
            CONST if t[0] != res => {
                return Err(e("constant type differs from the result"));
            }
            NEG | NOT_BOOL => {
                let k = scalar(res).ok_or_else(|| e("unary operation on a non-scalar"))?;
                let ok = if op.tag == NOT_BOOL {
                    k == ScalarKind::Bool
                } else {
                    k.is_signed()
                };
                if !ok || t[0] != res {
                    return Err(e("unary operand/result types are not admitted"));
                }
            }
            ADD | SUB | MUL | DIV | REM | BIT_AND | BIT_OR | BIT_XOR => {
                let k = scalar(res).ok_or_else(|| e("arithmetic on a non-scalar"))?;
                if k == ScalarKind::Bool || t[0] != res || t[1] != res {
                    return Err(e("binary operands must have the exact integer result type"));
                }
            }
            SHIFT_LEFT | SHIFT_RIGHT => {
                let k = scalar(res).ok_or_else(|| e("shift of a non-scalar"))?;
                if k == ScalarKind::Bool
                    || t[0] != res
                    || t[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                {
                    return Err(e("shift takes an integer T and a UInt64 count"));
                }
            }
            EQ | LT | NE | LE | GT | GE
                if (res != Some(&Type::Scalar(ScalarKind::Bool))
                    || scalar(t[0]).is_none()
                    || t[0] != t[1]) =>
            {
                return Err(e("comparison takes two identical scalars and yields Bool"));
            }
            JUMP_IF_FALSE | ASSERT_TRUE if t[0] != Some(&Type::Scalar(ScalarKind::Bool)) => {
                return Err(e("condition must be Bool"));
            }
            ASSERT_EQ if t[0] != t[1] => {
                return Err(e("ASSERT_EQ operands differ in type"));
            }
            RETURN if t[0] != Some(&f.result) => {
                return Err(e("returned value differs from the function's result type"));
            }
            LOAD_LOCAL | STORE_LOCAL => {
                let Some(Operand::Place(k)) = op.operands.first() else {
                    return Err(e("place operand expected"));
                };
                let rooted = k.fields.is_empty()
                    && match k.root {
                        Root::Local(_) => true,
                        Root::Param(_) | Root::Receiver => op.tag == LOAD_LOCAL,
                        Root::Temp(_) => false,
                    };
                if !rooted {
                    return Err(e(
                        "LOAD_LOCAL names an argument or local root; STORE_LOCAL a local root",
                    ));
                }
                if op.tag == LOAD_LOCAL {
                    let pt = t[0].cloned().unwrap_or(Type::Never);
                    if res != Some(&pt) || !tables.ids.is_copy(&pt) || pt.is_borrow() {
                        return Err(e(
                            "LOAD_LOCAL reads only a structurally Copy nonborrow root of its exact type",
                        ));
                    }
                } else if t[0] != t[1] {
                    return Err(e("stored value differs from the local's type"));
                }
            }
            ENUM_CONST | ENUM_IS_VARIANT | VARIANT_CONSTRUCT => {
                let Aux::Variant(vid) = &op.aux0 else {
                    return Err(e("variant auxiliary expected"));
                };
                if !tables.variants.contains_key(vid) && tables.links() {
                    continue;
                }
                let &(vd, variant_index) = tables
                    .variants
                    .get(vid)
                    .ok_or_else(|| e("variant does not resolve to a local declaration"))?;
                let v = &tables.m.declarations[vd].variants[variant_index];
                let owner = tables.nominal(vd);
                match op.tag {
                    ENUM_CONST => {
                        if !v.fields.is_empty() || res != Some(&owner) {
                            return Err(e(
                                "ENUM_CONST builds a fieldless variant of its exact owner",
                            ));
                        }
                    }
                    ENUM_IS_VARIANT => {
                        if res != Some(&Type::Scalar(ScalarKind::Bool))
                            || t[0].map(target) != Some(&owner)
                        {
                            return Err(e(
                                "ENUM_IS_VARIANT tests an owner place or loan and yields Bool",
                            ));
                        }
                    }
                    _ => {
                        let mut fields: Vec<&Field> = v.fields.iter().collect();
                        fields.sort_by_key(|x| x.ordinal);
                        if res != Some(&owner)
                            || fields.len() != t.len()
                            || fields.iter().zip(t).any(|(fl, ot)| *ot != Some(&fl.ty))
                        {
                            return Err(e(
                                "VARIANT_CONSTRUCT operands must match the payload fields in ordinal order",
                            ));
                        }
                    }
                }
            }
            AGGREGATE_CONSTRUCT => {
                let Aux::Decl(n) = &op.aux0 else {
                    return Err(e("declaration auxiliary expected"));
                };
                if !tables.decls.contains_key(n) && tables.links() {
                    continue;
                }
                let &dd = tables
                    .decls
                    .get(n)
                    .ok_or_else(|| e("declaration does not resolve locally"))?;
                let d = &tables.m.declarations[dd];
                let mut fields: Vec<&Field> = d.fields.iter().collect();
                fields.sort_by_key(|x| x.ordinal);
                if d.kind != DeclKind::Value
                    || res != Some(&tables.nominal(dd))
                    || fields.len() != t.len()
                    || fields.iter().zip(t).any(|(fl, ot)| *ot != Some(&fl.ty))
                {
                    return Err(e(
                        "AGGREGATE_CONSTRUCT operands must match the value declaration's fields in order",
                    ));
                }
            }
            FIELD_COPY | FIELD_MOVE => {
                let Aux::Field(fid) = &op.aux0 else {
                    return Err(e("field auxiliary expected"));
                };
                if tables.field(fid).is_none() && tables.links() {
                    continue;
                }
                let (field, owner) = tables
                    .field(fid)
                    .ok_or_else(|| e("field does not resolve locally"))?;
                if res != Some(&field.ty) || t[0].map(target) != Some(&tables.nominal(owner)) {
                    return Err(e("field access result/owner types are wrong"));
                }
                if op.tag == FIELD_COPY && !tables.ids.is_copy(&field.ty) {
                    return Err(e("FIELD_COPY needs a structurally Copy field"));
                }
                if op.tag == FIELD_MOVE
                    && (field.mutability != Mutability::Var
                        && tables.ids.fields[fid].variant.is_none()
                        || matches!(t[0], Some(Type::Ref(_) | Type::Mut(_))))
                {
                    return Err(e("FIELD_MOVE needs a var field of an owned place"));
                }
            }
            PLACE_MOVE | BYTE_BUILDER_FINISH => {
                if op.tag == PLACE_MOVE && res != t[0] {
                    return Err(e("PLACE_MOVE yields the place's exact type"));
                }
                if op.tag == BYTE_BUILDER_FINISH
                    && !(tables.m.name == "sdk.bytes"
                        && f.name == "finish"
                        && tables.m.declarations[decl_index].name == "BytesBuilder")
                {
                    return Err(e(
                        "BYTE_BUILDER_FINISH is admitted only in sdk.bytes.BytesBuilder.finish",
                    ));
                }
            }
            REPLACE_COMMIT if t[0] != t[1] => {
                return Err(e("replacement differs from the destination type"));
            }
            UNIT_VALUE if res != Some(&Type::Unit) => {
                return Err(e("UNIT_VALUE yields Unit"));
            }
            RESULT_OK_RICH | RESULT_ERR_RICH => {
                let Some(Type::Result(ok, er)) = res else {
                    return Err(e("rich construction yields a Result"));
                };
                let want = if op.tag == RESULT_OK_RICH { ok } else { er };
                if t[0] != Some(&**want) {
                    return Err(e("payload differs from the carrier's T or E"));
                }
            }
            RESULT_TRY | RESULT_TRY_RICH => {
                let Some(Type::Result(ok, er)) = t[0] else {
                    return Err(e("try takes a Result carrier"));
                };
                let Type::Result(_, fer) = &f.result else {
                    return Err(e("try needs a function returning Result<U, E>"));
                };
                if res != Some(&**ok) || fer != er {
                    return Err(e(
                        "try yields T and needs the same E in the function result",
                    ));
                }
                if op.tag == RESULT_TRY_RICH && op.aux0 != Aux::Type(f.result.clone()) {
                    return Err(e("RESULT_TRY_RICH names the exact outer carrier"));
                }
                let Aux::Edge(eid) = op.aux1 else {
                    return Err(e("error cleanup edge expected"));
                };
                let edge = index
                    .edges
                    .get(&eid)
                    .map(|&i| &f.body.edges[i])
                    .ok_or_else(|| e("missing cleanup edge"))?;
                let OpRef::Flow { block, .. } = here else {
                    return Err(e("try is a flow operation"));
                };
                if edge.kind != EdgeKind::TryError
                    || edge.source != block
                    || edge.successor.is_some()
                {
                    return Err(e("try names a try-error edge from its own block to exit"));
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
                                "function {} {here:?}: calls a function of another module, but the module imports from no other module",
                                f.name
                            ),
                        ));
                    }
                    Aux::Func(sig) => {
                        let &(cd, cf) = tables
                            .sigs
                            .get(sig)
                            .ok_or_else(|| e("callee does not resolve"))?;
                        let c = &tables.m.declarations[cd].functions[cf];
                        let mut ps: Vec<&Param> = c.params.iter().collect();
                        ps.sort_by_key(|p| p.ordinal);
                        (
                            c.receiver,
                            tables.nominal(cd),
                            ps.iter().map(|p| p.ty.clone()).collect(),
                            c.result.clone(),
                            c.effects.clone(),
                        )
                    }
                    Aux::CatalogFunc(id) => {
                        let c = crate::catalog::by_signature(id)
                            .ok_or_else(|| e("unknown catalog function"))?;
                        (
                            c.receiver,
                            c.owner.clone(),
                            c.params.iter().map(|p| p.1.clone()).collect(),
                            c.result.clone(),
                            c.effects.clone(),
                        )
                    }
                    _ => return Err(e("callee auxiliary expected")),
                };
                let mut want: Vec<Type> = Vec::new();
                if let Some(rt) = crate::catalog::receiver_type(&owner, recv_kind).filter(|_| {
                    matches!(
                        recv_kind,
                        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                    )
                }) {
                    want.push(rt);
                }
                want.extend(params);
                let args_ok = want.len() == t.len()
                    && want
                        .iter()
                        .zip(t)
                        .zip(&op.operands)
                        .all(|((w, ot), o)| match o {
                            // A loan argument may be passed as the place of its target (entry-loan binding).
                            Operand::Place(_) if w.is_borrow() => {
                                *ot == Some(target(w)) || *ot == Some(w)
                            }
                            _ => *ot == Some(w),
                        });
                if !args_ok || res != Some(&result) || op.aux1 != Aux::Effects(effects.clone()) {
                    return Err(e(
                        "call operands, result or effect auxiliary differ from the callee signature",
                    ));
                }
                if !effects_within(&effects, &f.effects) {
                    return Err(e("a callee's effect set must be a subset of the caller's"));
                }
            }
            BORROW_SHARED | BORROW_MUT | BORROW_SLICE_BYTE => {
                let Aux::Loan(lid) = op.aux0 else {
                    return Err(e("loan auxiliary expected"));
                };
                let loan = f
                    .body
                    .loans
                    .iter()
                    .find(|l| l.id == lid)
                    .ok_or_else(|| e("missing loan"))?;
                let want_res = match op.tag {
                    BORROW_SHARED => {
                        Type::Ref(Box::new(target(t[0].unwrap_or(&Type::Never)).clone()))
                    }
                    BORROW_MUT => Type::Mut(Box::new(target(t[0].unwrap_or(&Type::Never)).clone())),
                    _ => Type::SliceByte,
                };
                if res != Some(&want_res)
                    || loan.borrowed != want_res
                    || loan.creation != Some(here)
                {
                    return Err(e("borrow result, loan type and loan creation must agree"));
                }
                if op.tag == BORROW_SLICE_BYTE
                    && (t[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || t[2] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || !matches!(t[0].map(target), Some(Type::ArrayByte | Type::Nominal(_))))
                {
                    return Err(e(
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
pub(crate) fn check_owners(tables: &Global, decl_index: usize, f: &Function) -> Result<()> {
    let owner = |t: &Type| !t.is_borrow() && !tables.ids.is_copy(t);
    let has_root = |root: Root| {
        f.body
            .paths
            .iter()
            .any(|p| p.key.fields.is_empty() && p.key.root == root)
    };
    let self_ty = tables.nominal(decl_index);
    if f.receiver == ReceiverKind::Owned && owner(&self_ty) && !has_root(Root::Receiver) {
        return Err(err(
            f,
            "owned paths",
            "the owned receiver has no root owned path",
        ));
    }
    for p in &f.params {
        if owner(&p.ty) && !has_root(Root::Param(p.ordinal)) {
            return Err(err(
                f,
                "owned paths",
                format!("owner parameter {} has no root owned path", p.name),
            ));
        }
    }
    for l in &f.body.locals {
        if owner(&l.ty) && !has_root(Root::Local(l.ordinal)) {
            return Err(err(
                f,
                "owned paths",
                format!("owner local {} has no root owned path", l.name),
            ));
        }
    }
    for b in &f.body.blocks {
        for (i, op) in b.ops.iter().enumerate() {
            if op.result.as_ref().is_some_and(owner)
                && !has_root(Root::Temp(OpRef::Flow {
                    block: b.id,
                    ordinal: i as u32,
                }))
            {
                return Err(err(
                    f,
                    &format!("block {} op {i}", b.id),
                    "an owner-producing result has no temporary owned path",
                ));
            }
        }
    }
    let entry_loans = |root: &Root| {
        f.body
            .loans
            .iter()
            .filter(|l| {
                l.creation.is_none() && l.origin.fields.is_empty() && l.origin.root == *root
            })
            .count()
    };
    if matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive)
        && entry_loans(&Root::Receiver) != 1
    {
        return Err(err(
            f,
            "loans",
            "a shared/exclusive receiver has exactly one entry loan",
        ));
    }
    for p in &f.params {
        let borrowed = matches!(p.ty, Type::Ref(_) | Type::Mut(_) | Type::SliceByte);
        let n = entry_loans(&Root::Param(p.ordinal));
        if (borrowed && n != 1) || (!borrowed && n != 0) {
            return Err(err(
                f,
                "loans",
                format!(
                    "parameter {} needs exactly {} entry loan(s)",
                    p.name,
                    u8::from(borrowed)
                ),
            ));
        }
    }
    if !matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive)
        && entry_loans(&Root::Receiver) != 0
    {
        return Err(err(
            f,
            "loans",
            "only a shared/exclusive receiver has an entry loan",
        ));
    }
    Ok(())
}
