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
pub(crate) use link::gate;

/// Checks every semantic rule of the module.
pub fn check(m: &Module) -> CResult<()> {
    let r = Resolved::new(m).map_err(|e| CheckError {
        code: e.code,
        function: String::new(),
        block: None,
        op: None,
        message: e.message,
    })?;
    check_resolved(&r)
}

/// Checks every semantic rule of `m`, reusing identities already computed
/// for it instead of hashing every preimage again. Without providers, a
/// function that names a symbol of another module is left to the linked
/// check ([`check_linked`]): the module can be printed, not run.
pub fn check_with_ids(m: &Module, ids: &Identities) -> CResult<()> {
    let gate = link::gate(m, ids, None)?;
    check_functions(&Resolved::from_parts(m, Cow::Borrowed(ids)), &gate.foreign)
}

/// [`check_with_ids`] with providers: every symbol of another module must
/// be a public member of a `direct` provider (the modules `m` imports
/// from; `others` are further supplied modules, named only to reject
/// transitive-only targets), and every function, including those calling
/// into providers, is then checked with the providers' declarations in
/// view, by the same rules as within one module.
pub fn check_linked(
    m: &Module,
    ids: &Identities,
    direct: &[(&Module, &Identities)],
    others: &[(&Module, &Identities)],
) -> CResult<()> {
    let gate = link::gate(m, ids, Some((direct, others)))?;
    if gate.foreign.is_empty() {
        return check_functions(&Resolved::from_parts(m, Cow::Borrowed(ids)), &gate.foreign);
    }
    let view = LinkedView::new((m, ids), direct);
    check_functions(&view.resolved(), &Default::default())
}

/// Checks every semantic rule given resolution tables.
pub fn check_resolved(r: &Resolved<'_>) -> CResult<()> {
    check_functions(r, &Default::default())
}

/// Checks the module's own declarations and every function of them but
/// those in `skip`.
fn check_functions(
    r: &Resolved<'_>,
    skip: &std::collections::BTreeSet<(usize, usize)>,
) -> CResult<()> {
    sdk::check_decls(r)?;
    for (decl_index, d) in r.m.declarations.iter().enumerate().take(r.local) {
        for fn_index in 0..d.functions.len() {
            if skip.contains(&(decl_index, fn_index)) {
                continue;
            }
            let ctx = FnCheck::new(r, decl_index, fn_index)?;
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
        let f = self.f;
        let sig = |m: &str| self.err(code::PLACEMENT, None, None, m.to_string());
        // Results: no loan results except the catalog slice facade (not a
        // declarable body here).
        if f.result.is_borrow() && !sdk::is_facade_signature(self) {
            return Err(sig(
                "a function result cannot be Ref, Mut, Slice<Byte> or an allocator",
            ));
        }
        for p in &f.params {
            if let Type::Mut(inner) = &p.ty
                && **inner == Type::AllocatorBytesError
            {
                return Err(sig("Mut<Allocator<BytesError>> parameter"));
            }
            if p.ty == Type::AllocatorBytesError {
                return Err(sig(
                    "an Allocator<BytesError> is admitted only as Ref<Allocator<BytesError>>",
                ));
            }
        }
        for l in &f.body.locals {
            if matches!(
                l.ty,
                Type::Ref(_) | Type::Mut(_) | Type::AllocatorBytesError
            ) {
                return Err(sig("Ref, Mut and allocator locals are not admitted"));
            }
        }
        if f.receiver == ReceiverKind::Owned && self.r.is_copy(&self.self_ty) {
            // An owned receiver of a Copy type is a plain copy; admitted.
        }
        Ok(())
    }

    /// Path types, field chains and the owned-path presence rule.
    fn check_paths(&self) -> CResult<()> {
        let e = |m: String| self.err(code::OWNERSHIP, None, None, m);
        for p in &self.f.body.paths {
            let root_ty: Type = match &p.key.root {
                Root::Receiver => {
                    if !self.has_runtime_receiver() {
                        return Err(e("a receiver path without a runtime receiver".into()));
                    }
                    self.self_ty.clone()
                }
                Root::Param(o) => {
                    let prm = self
                        .param(*o)
                        .ok_or_else(|| e(format!("path names missing parameter {o}")))?;
                    match &prm.ty {
                        Type::Ref(t) | Type::Mut(t) => (**t).clone(),
                        t => t.clone(),
                    }
                }
                Root::Local(o) => self
                    .f
                    .body
                    .locals
                    .iter()
                    .find(|l| l.ordinal == *o)
                    .map(|l| l.ty.clone())
                    .ok_or_else(|| e(format!("path names missing local {o}")))?,
                Root::Temp(r) => {
                    self.index
                        .op(r)
                        .and_then(|o| o.result.clone())
                        .ok_or_else(|| {
                            e("temporary path names an operation without a result".into())
                        })?
                }
            };
            let mut t = root_ty;
            for fid in &p.key.fields {
                let (fd, _, fld) = self
                    .r
                    .field(fid)
                    .ok_or_else(|| e("field path names an unknown field".into()))?;
                if self.r.decl_of(&t) != Some(fd) {
                    return Err(e(format!(
                        "field {} does not belong to the path's owner type",
                        fld.name
                    )));
                }
                t = fld.ty.clone();
            }
            if t != p.ty {
                return Err(e(format!(
                    "owned path type differs from its resolved type ({:?} vs {:?})",
                    p.ty, t
                )));
            }
        }
        // Every owner-producing operation result has exactly one temporary path.
        for (bid, b) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in b.ops.iter().enumerate() {
                let Some(rt) = &op.result else { continue };
                let owner = !self.r.is_copy(rt) && !rt.is_borrow();
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
        let need = |root: Root, t: &Type| -> CResult<()> {
            if !t.is_borrow() && !self.r.is_copy(t) {
                let k = PathKey {
                    root,
                    fields: vec![],
                };
                if self.index.path(&k).is_none() {
                    return Err(e(format!("non-Copy owner {k:?} has no owned path")));
                }
            }
            Ok(())
        };
        if self.f.receiver == ReceiverKind::Owned {
            need(Root::Receiver, &self.self_ty)?;
        }
        for p in &self.f.params {
            need(Root::Param(p.ordinal), &p.ty)?;
        }
        for l in &self.f.body.locals {
            need(Root::Local(l.ordinal), &l.ty)?;
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
        let note = |k: &PathKey, named: &mut HashSet<PathKey>| {
            let mut k = k.clone();
            loop {
                named.insert(k.clone());
                if k.fields.pop().is_none() {
                    break;
                }
            }
        };
        let recipes = self.f.body.edges.iter().flat_map(|e| e.drops.iter());
        let flow = self.cfg.blocks.iter().flat_map(|b| b.ops.iter());
        for op in flow.chain(recipes) {
            for o in &op.operands {
                if let Operand::Place(k) = o {
                    note(k, &mut named);
                    if op.tag == tag::FIELD_MOVE
                        && let Aux::Field(fid) = &op.aux0
                    {
                        let mut fk = k.clone();
                        fk.fields.push(*fid);
                        note(&fk, &mut named);
                    }
                }
            }
            if let Aux::Path(k) = &op.aux0 {
                note(k, &mut named);
            }
        }
        for l in &self.f.body.loans {
            note(&l.origin, &mut named);
        }
        for p in &self.f.body.paths {
            let owner_root = p.key.fields.is_empty()
                && !p.ty.is_borrow()
                && !self.r.is_copy(&p.ty)
                && !self.is_borrow_root(&p.key.root);
            // A runtime argument slot is bound at entry whether or not the
            // body reads it (contracts read it by ordinal).
            let argument_root =
                p.key.fields.is_empty() && matches!(p.key.root, Root::Receiver | Root::Param(_));
            if !owner_root && !argument_root && !named.contains(&p.key) {
                return Err(self.err(
                    code::OWNERSHIP,
                    None,
                    None,
                    format!(
                        "owned path {:?} is not prescribed: no operation, loan or partial move names it and it is not a non-Copy owner root",
                        p.key
                    ),
                ));
            }
        }
        Ok(())
    }

    fn check_ops(&self) -> CResult<()> {
        for (bid, b) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in b.ops.iter().enumerate() {
                ops::check_op(self, bid as u32, i as u32, op)?;
            }
        }
        Ok(())
    }

    /// Cleanup edges versus their reconstruction from the CFG.
    fn check_edges_shape(&self) -> CResult<()> {
        let want = self.cfg.expected_edges();
        let mut have: Vec<&CleanupEdge> = self.f.body.edges.iter().collect();
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
        for (w, h) in want.iter().zip(&have) {
            let kinds = self.cfg.admitted_kinds(w, !h.drops.is_empty());
            if h.source != w.source || h.successor != w.successor || !kinds.contains(&h.kind) {
                let kinds: Vec<&str> = kinds.iter().map(|k| k.text()).collect();
                return Err(self.err(
                    code::CLEANUP,
                    Some(h.source),
                    None,
                    format!(
                        "cleanup edge {} is ({} -> {:?}, {}) but the CFG reconstructs ({} -> {:?}, {})",
                        h.id,
                        h.source,
                        h.successor,
                        h.kind.text(),
                        w.source,
                        w.successor,
                        kinds.join(" or ")
                    ),
                ));
            }
            for (ri, d) in h.drops.iter().enumerate() {
                let Some(Operand::Place(k)) = d.operands.first() else {
                    return Err(self.err(
                        code::CLEANUP,
                        Some(h.source),
                        Some(ri as u32),
                        "a recipe drops one place",
                    ));
                };
                if k.fields.is_empty() && self.is_borrow_root(&k.root) {
                    return Err(self.err(
                        code::CLEANUP,
                        Some(h.source),
                        Some(ri as u32),
                        "a recipe cannot drop a borrow binding",
                    ));
                }
            }
        }
        // RESULT_TRY binding: each try's auxiliary names its own edge.
        for (edge_id, w) in want.iter().enumerate() {
            let edge_id = edge_id as u32;
            if let Some(at) = w.try_op {
                let op = &self.cfg.blocks[w.source as usize].ops[at as usize];
                if op.aux1 != Aux::Edge(edge_id) {
                    return Err(self.err(
                        code::TRY,
                        Some(w.source),
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
        let f = self.f;
        let mut loans: Vec<&Loan> = f.body.loans.iter().collect();
        loans.sort_by_key(|l| l.id);
        let le =
            |l: &Loan, m: String| self.err(code::LOAN, None, None, format!("loan {}: {m}", l.id));
        // Expected entry loans in runtime argument order.
        let mut entries: Vec<(PathKey, Type, LoanKind)> = Vec::new();
        match f.receiver {
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
        let mut params: Vec<&Param> = f.params.iter().collect();
        params.sort_by_key(|p| p.ordinal);
        for p in params {
            let kind = match &p.ty {
                Type::Ref(_) => LoanKind::Shared,
                Type::Mut(_) => LoanKind::Exclusive,
                Type::SliceByte => LoanKind::ByteSlice,
                _ => continue,
            };
            entries.push((
                PathKey {
                    root: Root::Param(p.ordinal),
                    fields: vec![],
                },
                p.ty.clone(),
                kind,
            ));
        }
        for (i, (origin, ty, kind)) in entries.iter().enumerate() {
            let Some(l) = loans.get(i) else {
                return Err(self.err(
                    code::LOAN,
                    None,
                    None,
                    format!("missing entry loan {i} for {origin:?}"),
                ));
            };
            if l.creation.is_some()
                || l.last_use.is_some()
                || l.parent.is_some()
                || &l.origin != origin
                || &l.borrowed != ty
                || l.kind != *kind
            {
                return Err(le(
                    l,
                    "entry loans come first in runtime argument order with the exact origin, kind, borrowed type, and no parent, creation or last use".into(),
                ));
            }
        }
        for l in loans.iter().skip(entries.len()) {
            let (Some(c), Some(u)) = (l.creation, l.last_use) else {
                return Err(le(l, "a body loan has a creation and a last use".into()));
            };
            let cop = self
                .index
                .op(&c)
                .ok_or_else(|| le(l, "creation does not exist".into()))?;
            let want_tag = match l.kind {
                LoanKind::Shared => tag::BORROW_SHARED,
                LoanKind::Exclusive => tag::BORROW_MUT,
                LoanKind::ByteSlice => tag::BORROW_SLICE_BYTE,
            };
            if cop.tag != want_tag || cop.aux0 != Aux::Loan(l.id) {
                return Err(le(
                    l,
                    "creation must be the borrow operation of this kind naming this loan".into(),
                ));
            }
            if cop.result.as_ref() != Some(&l.borrowed) {
                return Err(le(
                    l,
                    "borrowed type differs from the borrow's result".into(),
                ));
            }
            // Origin and parent agree with the borrowed operand.
            match cop.operands.first() {
                Some(Operand::Place(k)) => {
                    if let Some(sl) = self.slice_local_loan(k) {
                        if l.parent != Some(sl.id) || l.origin != sl.origin {
                            return Err(le(
                                l,
                                "a reborrow of a transient Slice<Byte> local names its bound slice loan as parent and reuses that loan's origin".into(),
                            ));
                        }
                    } else if let Some(pl) = self.loan_of_place(k) {
                        if l.parent != Some(pl.id) || l.origin != *k {
                            return Err(le(l, "a loan-derived place names its active ancestor loan as parent and that exact place as origin".into()));
                        }
                    } else if l.parent.is_some() || &l.origin != k {
                        return Err(le(
                            l,
                            "an owned origin loan names its place as origin and has no parent"
                                .into(),
                        ));
                    }
                }
                Some(Operand::Value(v)) => {
                    let parent = self.loan_created_by(v);
                    match parent {
                        Some(pl) if l.parent == Some(pl.id) && l.origin == pl.origin => {}
                        _ => {
                            return Err(le(
                                l,
                                "a reborrow of a loan value names that loan as parent and reuses its origin".into(),
                            ));
                        }
                    }
                }
                _ => return Err(le(l, "borrow without a borrowed operand".into())),
            }
            if let Some(p) = l.parent
                && p >= l.id
            {
                return Err(le(l, "a parent loan precedes its child".into()));
            }
            // Last use: a use of the loan value, reachable after creation,
            // postdominating every use.
            let uses = self.loan_uses(l);
            if !uses.contains(&u) {
                return Err(le(l, "the last-use operation does not use the loan".into()));
            }
            for x in &uses {
                if !self.cfg.postdominates(u, *x) {
                    return Err(le(
                        l,
                        "the last use does not postdominate every use of the loan".into(),
                    ));
                }
            }
            if !self.cfg.dominates_op(c, u) {
                return Err(le(l, "the last use is not reached after creation".into()));
            }
        }
        Ok(())
    }

    /// The transient `Slice<Byte>` local form: one STORE_LOCAL binds the
    /// value of one tag-43 operation, that value has no other use, and the
    /// local is read only as a loan (a shared reborrow or a call argument).
    fn check_slice_locals(&self) -> CResult<()> {
        for local in &self.f.body.locals {
            if local.ty != Type::SliceByte {
                continue;
            }
            let k = PathKey {
                root: Root::Local(local.ordinal),
                fields: vec![],
            };
            let place = Operand::Place(k.clone());
            let mut stores = Vec::new();
            for (bid, b) in self.cfg.blocks.iter().enumerate() {
                for (i, op) in b.ops.iter().enumerate() {
                    let Some(at) = op.operands.iter().position(|o| o == &place) else {
                        continue;
                    };
                    let (b32, i32_) = (bid as u32, i as u32);
                    let ok = match op.tag {
                        tag::STORE_LOCAL => {
                            stores.push((b32, i32_, op));
                            at == 0
                        }
                        tag::BORROW_SHARED => at == 0,
                        tag::CALL | tag::INTRINSIC_CALL => true,
                        _ => false,
                    };
                    if !ok {
                        return Err(self.err(
                            code::PLACEMENT,
                            Some(b32),
                            Some(i32_),
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
            let (sb, si, store) = stores[0];
            let bound = match store.operands.get(1) {
                Some(Operand::Value(v)) => self
                    .index
                    .op(v)
                    .filter(|o| o.tag == tag::BORROW_SLICE_BYTE)
                    .map(|_| *v),
                _ => None,
            };
            let Some(v) = bound else {
                return Err(self.err(
                    code::PLACEMENT,
                    Some(sb),
                    Some(si),
                    "a transient Slice<Byte> local binds directly the value of one BORROW_SLICE_BYTE",
                ));
            };
            if self.uses_of(&v).len() != 1 {
                return Err(self.err(
                    code::PLACEMENT,
                    Some(sb),
                    Some(si),
                    "a slice value bound to a local has no second binding or other use",
                ));
            }
        }
        Ok(())
    }
}
