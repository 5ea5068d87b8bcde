//! Checked semantics of ZLM1 schema 1.9 (issue 10): types, SSA dominance,
//! effects, ownership dataflow with the custody sequence, cleanup-edge
//! reconstruction, RESULT_TRY binding, loans, variant refinement and
//! contracts. It runs on a logical [`Module`] that already passed the
//! structural validation of [`crate::validate`] and identity recomputation;
//! every rejection carries a stable code, the function, and where it applies
//! the block and operation index. Decisions are in `docs/zlm/semantics.md`.

pub mod cfg;
mod context;
pub mod contracts;
mod flow;
mod link;
mod ops;
pub mod sdk;
pub(crate) mod typing;

use crate::ids::Identities;
use crate::model::*;
use std::borrow::Cow;

pub use cfg::Cfg;
pub(crate) use context::FnCheck;
pub use context::{CResult, CheckError, Checked, Resolved, code};
pub use link::LinkedView;

/// Checks every semantic rule of the module.
pub fn check(module: &Module) -> CResult<()> {
    let resolved = Resolved::new(module).map_err(|e| CheckError {
        code: e.code,
        function: String::new(),
        block: None,
        op: None,
        edge: None,
        message: e.message,
    })?;
    check_resolved(&resolved)
}

/// Checks every semantic rule of `module`, reusing identities already computed
/// for it instead of hashing every preimage again. Without providers, a
/// function that names a symbol of another module is left to the linked
/// check ([`check_linked`]): the module can be printed, not run.
pub fn check_with_ids(module: &Module, ids: &Identities) -> CResult<()> {
    check_with_ids_foreign(module, ids).map(|_| ())
}

/// [`check_with_ids`], also answering whether some function names a symbol
/// of another module (the decoder's `foreign` flag, from the one symbol
/// walk the check makes anyway).
pub(crate) fn check_with_ids_foreign(module: &Module, ids: &Identities) -> CResult<bool> {
    let gate = link::gate(module, ids, None)?;
    check_functions(
        &Resolved::from_parts(module, Cow::Borrowed(ids)),
        &gate.foreign,
    )?;
    Ok(!gate.foreign.is_empty())
}

/// [`check_with_ids`] with providers: every symbol of another module must
/// be a public member of a `direct` provider (the modules `module` imports
/// from; `others` are further supplied modules, named only to reject
/// transitive-only targets), and every function, including those calling
/// into providers, is then checked with the providers' declarations in
/// view, by the same rules as within one module.
pub fn check_linked(
    module: &Module,
    ids: &Identities,
    direct: &[(&Module, &Identities)],
    others: &[(&Module, &Identities)],
) -> CResult<()> {
    check_linked_foreign(module, ids, direct, others).map(|_| ())
}

/// [`check_linked`], also answering whether some function names a symbol
/// of another module (see [`check_with_ids_foreign`]).
pub(crate) fn check_linked_foreign(
    module: &Module,
    ids: &Identities,
    direct: &[(&Module, &Identities)],
    others: &[(&Module, &Identities)],
) -> CResult<bool> {
    let gate = link::gate(module, ids, Some((direct, others)))?;
    if gate.foreign.is_empty() {
        check_functions(
            &Resolved::from_parts(module, Cow::Borrowed(ids)),
            &gate.foreign,
        )?;
        return Ok(false);
    }
    let view = LinkedView::new((module, ids), direct);
    check_functions(&view.resolved(), &Default::default())?;
    Ok(true)
}

/// Checks every semantic rule given resolution tables.
pub fn check_resolved(resolved: &Resolved<'_>) -> CResult<()> {
    check_functions(resolved, &Default::default())
}

/// Checks the module's own declarations and every function of them but
/// those in `skip`.
fn check_functions(
    resolved: &Resolved<'_>,
    skip: &std::collections::BTreeSet<(usize, usize)>,
) -> CResult<()> {
    sdk::check_decls(resolved)?;
    for (decl_index, decl) in resolved
        .module
        .declarations
        .iter()
        .enumerate()
        .take(resolved.local)
    {
        for fn_index in 0..decl.functions.len() {
            if skip.contains(&(decl_index, fn_index)) {
                continue;
            }
            let ctx = FnCheck::new(resolved, decl_index, fn_index)?;
            ctx.run()?;
        }
    }
    Ok(())
}

impl FnCheck<'_, '_> {
    pub(crate) fn run(&self) -> CResult<()> {
        self.check_signature()?;
        sdk::check_function(self)?;
        self.check_paths()?;
        self.check_ops()?;
        self.check_prescribed_paths()?;
        self.check_edges_shape()?;
        self.check_slice_locals()?;
        self.check_loans_static()?;
        flow::run(self)?;
        contracts::check(self)?;
        Ok(())
    }

    fn check_signature(&self) -> CResult<()> {
        let function = self.function;
        let sig = |message: &str| self.err(code::PLACEMENT, None, None, message.to_string());
        // Results: no loan results except the catalog slice facade (not a
        // declarable body here).
        if function.result.is_borrow() && !sdk::is_facade_signature(self) {
            return Err(sig(
                "a function result cannot be Ref, Mut, Slice<Byte> or an allocator",
            ));
        }
        for param in &function.params {
            if let Type::Mut(inner) = &param.ty
                && **inner == Type::AllocatorBytesError
            {
                return Err(sig("Mut<Allocator<BytesError>> parameter"));
            }
            if param.ty == Type::AllocatorBytesError {
                return Err(sig(
                    "an Allocator<BytesError> is admitted only as Ref<Allocator<BytesError>>",
                ));
            }
        }
        for local in &function.body.locals {
            if matches!(
                local.ty,
                Type::Ref(_) | Type::Mut(_) | Type::AllocatorBytesError
            ) {
                return Err(sig("Ref, Mut and allocator locals are not admitted"));
            }
        }
        if function.receiver == ReceiverKind::Owned && self.r.is_copy(&self.self_ty) {
            // An owned receiver of a Copy type is a plain copy; admitted.
        }
        Ok(())
    }

    /// Path types, field chains and the owned-path presence rule.
    fn check_paths(&self) -> CResult<()> {
        let fail = |message: String| self.err(code::OWNERSHIP, None, None, message);
        for path in &self.function.body.paths {
            let root_ty: Type = match &path.key.root {
                Root::Receiver => {
                    if !self.has_runtime_receiver() {
                        return Err(fail("a receiver path without a runtime receiver".into()));
                    }
                    self.self_ty.clone()
                }
                Root::Param(ordinal) => {
                    let param = self
                        .param(*ordinal)
                        .ok_or_else(|| fail(format!("path names missing parameter {ordinal}")))?;
                    match &param.ty {
                        Type::Ref(inner) | Type::Mut(inner) => (**inner).clone(),
                        inner => inner.clone(),
                    }
                }
                Root::Local(ordinal) => self
                    .function
                    .body
                    .locals
                    .iter()
                    .find(|local| local.ordinal == *ordinal)
                    .map(|local| local.ty.clone())
                    .ok_or_else(|| fail(format!("path names missing local {ordinal}")))?,
                Root::Temp(op_ref) => self
                    .index
                    .op(op_ref)
                    .and_then(|o| o.result.clone())
                    .ok_or_else(|| {
                        fail("temporary path names an operation without a result".into())
                    })?,
            };
            let mut ty = root_ty;
            for fid in &path.key.fields {
                let (field_decl, _, field) = self
                    .r
                    .field(fid)
                    .ok_or_else(|| fail("field path names an unknown field".into()))?;
                if self.r.decl_of(&ty) != Some(field_decl) {
                    return Err(fail(format!(
                        "field {} does not belong to the path's owner type",
                        field.name
                    )));
                }
                ty = field.ty.clone();
            }
            if ty != path.ty {
                return Err(fail(format!(
                    "owned path type differs from its resolved type ({} vs {})",
                    path.ty, ty
                )));
            }
        }
        // Every owner-producing operation result has exactly one temporary path.
        for (bid, block) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in block.ops.iter().enumerate() {
                let Some(result_ty) = &op.result else {
                    continue;
                };
                let owner = !self.r.is_copy(result_ty) && !result_ty.is_borrow();
                let key = PathKey {
                    root: Root::Temp(OpRef::Flow {
                        block: bid as u32,
                        ordinal: i as u32,
                    }),
                    fields: vec![],
                };
                let has = self.index.path(&key).is_some();
                if owner != has {
                    return Err(self.err(
                        code::OWNERSHIP,
                        Some(bid as u32),
                        Some(i as u32),
                        if owner {
                            "an owner-producing result has no temporary owned path"
                        } else {
                            "a temporary owned path names a Copy or loan result"
                        },
                    ));
                }
            }
        }
        // Every non-Copy owned parameter/receiver/local has a root path.
        let need = |root: Root, ty: &Type| -> CResult<()> {
            if !ty.is_borrow() && !self.r.is_copy(ty) {
                let key = PathKey {
                    root,
                    fields: vec![],
                };
                if self.index.path(&key).is_none() {
                    return Err(fail(format!(
                        "non-Copy owner {} has no owned path",
                        self.place(&key)
                    )));
                }
            }
            Ok(())
        };
        if self.function.receiver == ReceiverKind::Owned {
            need(Root::Receiver, &self.self_ty)?;
        }
        for param in &self.function.params {
            need(Root::Param(param.ordinal), &param.ty)?;
        }
        for local in &self.function.body.locals {
            need(Root::Local(local.ordinal), &local.ty)?;
        }
        Ok(())
    }

    /// Every owned path is prescribed: a runtime argument root, a non-Copy
    /// owner root (local, temporary), a place some operation or loan names,
    /// the field a FIELD_MOVE detaches (partially moved), or a parent
    /// prefix of one of those. A Copy or borrow-only value has no other
    /// path, and no unreferenced path is canonical.
    fn check_prescribed_paths(&self) -> CResult<()> {
        use std::collections::HashSet;
        let mut named: HashSet<PathKey> = HashSet::new();
        let note = |key: &PathKey, named: &mut HashSet<PathKey>| {
            let mut key = key.clone();
            loop {
                named.insert(key.clone());
                if key.fields.pop().is_none() {
                    break;
                }
            }
        };
        let recipes = self.function.body.edges.iter().flat_map(|e| e.drops.iter());
        let flow = self.cfg.blocks.iter().flat_map(|b| b.ops.iter());
        for op in flow.chain(recipes) {
            for operand in &op.operands {
                if let Operand::Place(key) = operand {
                    note(key, &mut named);
                    if op.tag == tag::FIELD_MOVE
                        && let Aux::Field(fid) = &op.aux0
                    {
                        let mut field_key = key.clone();
                        field_key.fields.push(*fid);
                        note(&field_key, &mut named);
                    }
                }
            }
            if let Aux::Path(key) = &op.aux0 {
                note(key, &mut named);
            }
        }
        for loan in &self.function.body.loans {
            note(&loan.origin, &mut named);
        }
        for path in &self.function.body.paths {
            let owner_root = path.key.fields.is_empty()
                && !path.ty.is_borrow()
                && !self.r.is_copy(&path.ty)
                && !self.is_borrow_root(&path.key.root);
            // A runtime argument slot is bound at entry whether or not the
            // body reads it (contracts read it by ordinal).
            let argument_root = path.key.fields.is_empty()
                && matches!(path.key.root, Root::Receiver | Root::Param(_));
            if !owner_root && !argument_root && !named.contains(&path.key) {
                return Err(self.err(
                    code::OWNERSHIP,
                    None,
                    None,
                    format!(
                        "owned path {} is not prescribed: no operation, loan or partial move names it and it is not a non-Copy owner root",
                        self.place(&path.key)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn check_ops(&self) -> CResult<()> {
        for (bid, block) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in block.ops.iter().enumerate() {
                ops::check_op(self, bid as u32, i as u32, op)?;
            }
        }
        Ok(())
    }

    /// Cleanup edges versus their reconstruction from the CFG.
    fn check_edges_shape(&self) -> CResult<()> {
        let want = self.cfg.expected_edges();
        let mut have: Vec<&CleanupEdge> = self.function.body.edges.iter().collect();
        have.sort_by_key(|e| e.id);
        if have.len() != want.len() {
            return Err(self.err(
                code::CLEANUP,
                None,
                None,
                format!(
                    "the CFG needs {} cleanup edges, the body records {}",
                    want.len(),
                    have.len()
                ),
            ));
        }
        for (wanted, present) in want.iter().zip(&have) {
            let kinds = self.cfg.admitted_kinds(wanted, !present.drops.is_empty());
            if present.source != wanted.source
                || present.successor != wanted.successor
                || !kinds.contains(&present.kind)
            {
                let kinds: Vec<&str> = kinds.iter().map(|kind| kind.text()).collect();
                return Err(self.err(
                    code::CLEANUP,
                    Some(present.source),
                    None,
                    format!(
                        "cleanup edge {} is ({} -> {}, {}) but the CFG reconstructs ({} -> {}, {})",
                        present.id,
                        present.source,
                        present
                            .successor
                            .map_or("exit".to_string(), |s| s.to_string()),
                        present.kind.text(),
                        wanted.source,
                        wanted
                            .successor
                            .map_or("exit".to_string(), |s| s.to_string()),
                        kinds.join(" or ")
                    ),
                ));
            }
            for (recipe_index, drop) in present.drops.iter().enumerate() {
                let recipe = |message: String| {
                    self.err_recipe(
                        code::CLEANUP,
                        present.source,
                        present.id,
                        recipe_index as u32,
                        message,
                    )
                };
                let Some(Operand::Place(key)) = drop.operands.first() else {
                    return Err(recipe("a recipe drops one place".into()));
                };
                if key.fields.is_empty() && self.is_borrow_root(&key.root) {
                    return Err(recipe(format!(
                        "a recipe cannot drop the borrow binding {}",
                        self.place(key)
                    )));
                }
            }
        }
        // RESULT_TRY binding: each try's auxiliary names its own edge.
        for (edge_id, wanted) in want.iter().enumerate() {
            let edge_id = edge_id as u32;
            if let Some(at) = wanted.try_op {
                let op = &self.cfg.blocks[wanted.source as usize].ops[at as usize];
                if op.aux1 != Aux::Edge(edge_id) {
                    return Err(self.err(
                        code::TRY,
                        Some(wanted.source),
                        Some(at),
                        format!(
                            "the error cleanup auxiliary must name try-error edge {edge_id} reverse-bound to this operation"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Static loan-record rules: entry loans, creation binding, types, last use.
    fn check_loans_static(&self) -> CResult<()> {
        let function = self.function;
        let mut loans: Vec<&Loan> = function.body.loans.iter().collect();
        loans.sort_by_key(|loan| loan.id);
        let loan_error = |loan: &Loan, message: String| {
            self.err(
                code::LOAN,
                None,
                None,
                format!("loan {}: {message}", loan.id),
            )
        };
        // Expected entry loans in runtime argument order.
        let mut entries: Vec<(PathKey, Type, LoanKind)> = Vec::new();
        match function.receiver {
            ReceiverKind::Shared => entries.push((
                PathKey {
                    root: Root::Receiver,
                    fields: vec![],
                },
                Type::Ref(Box::new(self.self_ty.clone())),
                LoanKind::Shared,
            )),
            ReceiverKind::Exclusive => entries.push((
                PathKey {
                    root: Root::Receiver,
                    fields: vec![],
                },
                Type::Mut(Box::new(self.self_ty.clone())),
                LoanKind::Exclusive,
            )),
            _ => {}
        }
        let mut params: Vec<&Param> = function.params.iter().collect();
        params.sort_by_key(|param| param.ordinal);
        for param in params {
            let kind = match &param.ty {
                Type::Ref(_) => LoanKind::Shared,
                Type::Mut(_) => LoanKind::Exclusive,
                Type::SliceByte => LoanKind::ByteSlice,
                _ => continue,
            };
            entries.push((
                PathKey {
                    root: Root::Param(param.ordinal),
                    fields: vec![],
                },
                param.ty.clone(),
                kind,
            ));
        }
        for (i, (origin, ty, kind)) in entries.iter().enumerate() {
            let Some(loan) = loans.get(i) else {
                return Err(self.err(
                    code::LOAN,
                    None,
                    None,
                    format!("missing entry loan {i} for {}", self.place(origin)),
                ));
            };
            if loan.creation.is_some()
                || loan.last_use.is_some()
                || loan.parent.is_some()
                || &loan.origin != origin
                || &loan.borrowed != ty
                || loan.kind != *kind
            {
                return Err(loan_error(
                    loan,
                    "entry loans come first in runtime argument order with the exact origin, kind, borrowed type, and no parent, creation or last use".into(),
                ));
            }
        }
        for loan in loans.iter().skip(entries.len()) {
            let (Some(creation), Some(last_use)) = (loan.creation, loan.last_use) else {
                return Err(loan_error(
                    loan,
                    "a body loan has a creation and a last use".into(),
                ));
            };
            let creation_op = self
                .index
                .op(&creation)
                .ok_or_else(|| loan_error(loan, "creation does not exist".into()))?;
            let want_tag = match loan.kind {
                LoanKind::Shared => tag::BORROW_SHARED,
                LoanKind::Exclusive => tag::BORROW_MUT,
                LoanKind::ByteSlice => tag::BORROW_SLICE_BYTE,
            };
            if creation_op.tag != want_tag || creation_op.aux0 != Aux::Loan(loan.id) {
                return Err(loan_error(
                    loan,
                    "creation must be the borrow operation of this kind naming this loan".into(),
                ));
            }
            if creation_op.result.as_ref() != Some(&loan.borrowed) {
                return Err(loan_error(
                    loan,
                    "borrowed type differs from the borrow's result".into(),
                ));
            }
            // Origin and parent agree with the borrowed operand.
            match creation_op.operands.first() {
                Some(Operand::Place(place)) => {
                    if let Some(slice_loan) = self.slice_local_loan(place) {
                        if loan.parent != Some(slice_loan.id) || loan.origin != slice_loan.origin {
                            return Err(loan_error(
                                loan,
                                "a reborrow of a transient Slice<Byte> local names its bound slice loan as parent and reuses that loan's origin".into(),
                            ));
                        }
                    } else if let Some(parent_loan) = self.loan_of_place(place) {
                        if loan.parent != Some(parent_loan.id) || loan.origin != *place {
                            return Err(loan_error(loan, "a loan-derived place names its active ancestor loan as parent and that exact place as origin".into()));
                        }
                    } else if loan.parent.is_some() || &loan.origin != place {
                        return Err(loan_error(
                            loan,
                            "an owned origin loan names its place as origin and has no parent"
                                .into(),
                        ));
                    }
                }
                Some(Operand::Value(value)) => {
                    let parent = self.loan_created_by(value);
                    match parent {
                        Some(parent_loan)
                            if loan.parent == Some(parent_loan.id)
                                && loan.origin == parent_loan.origin => {}
                        _ => {
                            return Err(loan_error(
                                loan,
                                "a reborrow of a loan value names that loan as parent and reuses its origin".into(),
                            ));
                        }
                    }
                }
                _ => return Err(loan_error(loan, "borrow without a borrowed operand".into())),
            }
            if let Some(parent_id) = loan.parent
                && parent_id >= loan.id
            {
                return Err(loan_error(loan, "a parent loan precedes its child".into()));
            }
            // Last use: a use of the loan value, reachable after creation,
            // postdominating every use.
            let uses = self.loan_uses(loan);
            if !uses.contains(&last_use) {
                return Err(loan_error(
                    loan,
                    "the last-use operation does not use the loan".into(),
                ));
            }
            for use_op in &uses {
                if !self.cfg.postdominates(last_use, *use_op) {
                    return Err(loan_error(
                        loan,
                        "the last use does not postdominate every use of the loan".into(),
                    ));
                }
            }
            if !self.cfg.dominates_op(creation, last_use) {
                return Err(loan_error(
                    loan,
                    "the last use is not reached after creation".into(),
                ));
            }
        }
        Ok(())
    }

    /// The transient `Slice<Byte>` local form: one STORE_LOCAL binds the
    /// value of one tag-43 operation, that value has no other use, and the
    /// local is read only as a loan (a shared reborrow or a call argument).
    fn check_slice_locals(&self) -> CResult<()> {
        for local in &self.function.body.locals {
            if local.ty != Type::SliceByte {
                continue;
            }
            let key = PathKey {
                root: Root::Local(local.ordinal),
                fields: vec![],
            };
            let place = Operand::Place(key.clone());
            let mut stores = Vec::new();
            for (bid, block) in self.cfg.blocks.iter().enumerate() {
                for (i, op) in block.ops.iter().enumerate() {
                    let Some(at) = op.operands.iter().position(|o| o == &place) else {
                        continue;
                    };
                    let (block_id, op_index) = (bid as u32, i as u32);
                    let ok = match op.tag {
                        tag::STORE_LOCAL => {
                            stores.push((block_id, op_index, op));
                            at == 0
                        }
                        tag::BORROW_SHARED => at == 0,
                        tag::CALL | tag::INTRINSIC_CALL => true,
                        _ => false,
                    };
                    if !ok {
                        return Err(self.err(
                            code::PLACEMENT,
                            Some(block_id),
                            Some(op_index),
                            "a transient Slice<Byte> local is used only as a loan: a shared reborrow or a call argument",
                        ));
                    }
                }
            }
            if stores.len() != 1 {
                return Err(self.err(
                    code::PLACEMENT,
                    stores.get(1).map(|s| s.0),
                    stores.get(1).map(|s| s.1),
                    format!(
                        "a transient Slice<Byte> local has exactly one initialization ({} found)",
                        stores.len()
                    ),
                ));
            }
            let (store_block, store_op, store) = stores[0];
            let bound = match store.operands.get(1) {
                Some(Operand::Value(value)) => self
                    .index
                    .op(value)
                    .filter(|o| o.tag == tag::BORROW_SLICE_BYTE)
                    .map(|_| *value),
                _ => None,
            };
            let Some(value) = bound else {
                return Err(self.err(
                    code::PLACEMENT,
                    Some(store_block),
                    Some(store_op),
                    "a transient Slice<Byte> local binds directly the value of one BORROW_SLICE_BYTE",
                ));
            };
            if self.uses_of(&value).len() != 1 {
                return Err(self.err(
                    code::PLACEMENT,
                    Some(store_block),
                    Some(store_op),
                    "a slice value bound to a local has no second binding or other use",
                ));
            }
        }
        Ok(())
    }
}
