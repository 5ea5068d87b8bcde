//! Checked semantics of ZLM1 schema 1.9 (issue 10): types, SSA dominance,
//! effects, ownership dataflow with the custody sequence, cleanup-edge
//! reconstruction, RESULT_TRY binding, loans, variant refinement and
//! contracts. It runs on a logical [`Module`] that already passed the
//! structural validation of [`crate::validate`] and identity recomputation;
//! every rejection carries a stable code, the function, and where it applies
//! the block and operation index. Decisions are in `docs/zlm/semantics.md`.

pub mod cfg;
pub mod contracts;
mod flow;
mod ops;
pub mod sdk;

use crate::hash::Id;
use crate::ids::{FnIndex, Identities};
use crate::model::*;
use std::borrow::Cow;
use std::collections::HashMap;

pub use cfg::Cfg;

/// Stable rejection codes of the checked-semantics layer.
pub mod code {
    /// An operand, result or auxiliary has the wrong type for its tag.
    pub const TYPE: &str = "ZLM-C-TYPE";
    /// A Copy, Ref/Mut/Slice/Allocator placement rule is violated.
    pub const PLACEMENT: &str = "ZLM-C-PLACEMENT";
    /// A callee's effect set is not included in the caller's.
    pub const EFFECT: &str = "ZLM-C-EFFECT";
    /// Block structure: missing terminator, misplaced terminator, bad target,
    /// unreachable block, non-preorder block numbering.
    pub const CFG: &str = "ZLM-C-CFG";
    /// An SSA operand does not dominate its use.
    pub const SSA: &str = "ZLM-C-SSA";
    /// Three-state ownership: use of a dead path, double consumption, leak,
    /// missing or extra owned path.
    pub const OWNERSHIP: &str = "ZLM-C-OWN";
    /// Predecessors of a join or back-edge present different custody.
    pub const CUSTODY: &str = "ZLM-C-CUSTODY";
    /// Cleanup edges differ from their reconstruction (ID, source,
    /// successor, kind, recipe list or order).
    pub const CLEANUP: &str = "ZLM-C-CLEANUP";
    /// RESULT_TRY / RESULT_TRY_RICH carrier or error-edge binding.
    pub const TRY: &str = "ZLM-C-TRY";
    /// Loan records, liveness, conflicts, suspension.
    pub const LOAN: &str = "ZLM-C-LOAN";
    /// Payload access without a proven active variant.
    pub const VARIANT: &str = "ZLM-C-VARIANT";
    /// Contract typing, survival set, pure-call restrictions.
    pub const CONTRACT: &str = "ZLM-C-CONTRACT";
    /// The certified `sdk.bytes` facade: the `Bytes.slice` forwarding body,
    /// BYTE_BUILDER_FINISH placement, the SDK declarations' fixed layout.
    pub const SDK: &str = "ZLM-C-SDK";
    /// A feature this checker does not support (fails closed).
    pub const UNSUPPORTED: &str = "ZLM-UNSUPPORTED";
}

/// A semantic rejection with its location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {function}{}: {message}", location(*.block, *.op))]
pub struct CheckError {
    /// Stable code (see [`code`]).
    pub code: &'static str,
    /// `Declaration.function` name.
    pub function: String,
    /// Dense block ID where known.
    pub block: Option<u32>,
    /// Operation ordinal within the block (or recipe ordinal) where known.
    pub op: Option<u32>,
    /// What is wrong.
    pub message: String,
}

fn location(block: Option<u32>, op: Option<u32>) -> String {
    match (block, op) {
        (Some(b), Some(o)) => format!(" block {b} op {o}"),
        (Some(b), None) => format!(" block {b}"),
        _ => String::new(),
    }
}

impl From<CheckError> for crate::Error {
    fn from(e: CheckError) -> Self {
        crate::Error::new(e.code, e.to_string())
    }
}

/// Result alias of this layer.
pub type CResult<T> = std::result::Result<T, CheckError>;

/// Module-wide resolution tables shared by the checker and the interpreter.
pub struct Resolved<'m> {
    /// The module.
    pub m: &'m Module,
    /// Its identities (borrowed from a [`Checked`] module, or computed here).
    pub ids: Cow<'m, Identities>,
    /// Nominal ID to local declaration index.
    pub decls: HashMap<Id, usize>,
    /// Variant ID to (declaration, variant index).
    pub variants: HashMap<Id, (usize, usize)>,
    /// Declared function-signature ID to (declaration, function index).
    pub funcs: HashMap<Id, (usize, usize)>,
}

impl<'m> Resolved<'m> {
    /// Builds the tables (identities are recomputed).
    pub fn new(m: &'m Module) -> crate::Result<Self> {
        let (ids, _) = crate::ids::compute(m, false)?;
        Ok(Self::with_ids(m, ids))
    }

    /// Builds the tables from identities already computed for `m` (by
    /// [`crate::ids::compute`], e.g. through [`crate::write::write_with_ids`]).
    pub fn with_ids(m: &'m Module, ids: Identities) -> Self {
        Self::from_parts(m, Cow::Owned(ids))
    }

    /// Builds the tables of a decoded and checked module, borrowing the
    /// identities its decoding recomputed.
    pub fn of_checked(checked: &'m Checked) -> Self {
        Self::from_parts(&checked.module, Cow::Borrowed(&checked.ids))
    }

    fn from_parts(m: &'m Module, ids: Cow<'m, Identities>) -> Self {
        let mut decls = HashMap::new();
        let mut variants = HashMap::new();
        let mut funcs = HashMap::new();
        for (di, d) in ids.decls.iter().enumerate() {
            decls.insert(d.nominal, di);
            for (vi, (vid, _)) in d.variants.iter().enumerate() {
                variants.insert(*vid, (di, vi));
            }
            for (fi, f) in d.functions.iter().enumerate() {
                funcs.insert(f.sig, (di, fi));
            }
        }
        Resolved {
            m,
            ids,
            decls,
            variants,
            funcs,
        }
    }
    /// Whether `t` is structurally Copy.
    pub fn is_copy(&self, t: &Type) -> bool {
        self.ids.is_copy(t)
    }
    /// The field with ID `id`: its owning declaration, optional variant and record.
    pub fn field(&self, id: &Id) -> Option<(usize, Option<usize>, &'m Field)> {
        let info = self.ids.fields.get(id)?;
        let d = &self.m.declarations[info.decl];
        let f = match info.variant {
            None => d.fields.get(info.index)?,
            Some(v) => d.variants.get(v)?.fields.get(info.index)?,
        };
        Some((info.decl, info.variant, f))
    }
    /// The declaration's self type.
    pub fn self_type(&self, decl: usize) -> Type {
        Type::Nominal(self.ids.decls[decl].nominal)
    }
    /// Owner declaration of a nominal type, when local.
    pub fn decl_of(&self, t: &Type) -> Option<usize> {
        match t {
            Type::Nominal(id) => self.decls.get(id).copied(),
            _ => None,
        }
    }
    /// Display name `Decl.function`.
    pub fn fn_name(&self, d: usize, f: usize) -> String {
        let decl = &self.m.declarations[d];
        format!("{}.{}", decl.name, decl.functions[f].name)
    }
}

/// A module that passed decoding and every structural and semantic check,
/// with the identities recomputed while decoding it (C0-ART-002: only
/// validated checked Core IR may be interpreted or materialized). Only
/// [`crate::decode`] constructs one, so a consumer that takes `&Checked`
/// needs no check of its own.
#[derive(Debug, Clone)]
pub struct Checked {
    module: Module,
    ids: Identities,
    module_content: Id,
    imports_resolved: bool,
}

impl Checked {
    /// Wraps a module that `decode` has just checked. `imports_resolved`
    /// says whether its imports were resolved against supplied providers.
    pub(crate) fn new(
        module: Module,
        ids: Identities,
        module_content: Id,
        imports_resolved: bool,
    ) -> Self {
        Checked {
            module,
            ids,
            module_content,
            imports_resolved,
        }
    }
    /// The logical module.
    pub fn module(&self) -> &Module {
        &self.module
    }
    /// Every identity of the module (recomputed, equal to the carried ones).
    pub fn ids(&self) -> &Identities {
        &self.ids
    }
    /// The module-content identity.
    pub fn module_content(&self) -> Id {
        self.module_content
    }
    /// Whether every import was resolved against its supplied provider
    /// (always true for a module without imports). A module decoded
    /// without its providers may be printed but not executed.
    pub fn imports_resolved(&self) -> bool {
        self.imports_resolved || self.module.imports.is_empty()
    }
    /// The logical module, giving up the proof.
    pub fn into_module(self) -> Module {
        self.module
    }
}

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
/// for it instead of hashing every preimage again.
pub fn check_with_ids(m: &Module, ids: &Identities) -> CResult<()> {
    check_resolved(&Resolved::from_parts(m, Cow::Borrowed(ids)))
}

/// Checks every semantic rule given resolution tables.
pub fn check_resolved(r: &Resolved<'_>) -> CResult<()> {
    sdk::check_decls(r)?;
    for (di, d) in r.m.declarations.iter().enumerate() {
        for fi in 0..d.functions.len() {
            let fc = FnCheck::new(r, di, fi)?;
            fc.run()?;
        }
    }
    Ok(())
}

/// The checking context of one function.
pub(crate) struct FnCheck<'r, 'm> {
    pub r: &'r Resolved<'m>,
    #[allow(dead_code)]
    pub di: usize,
    pub f: &'m Function,
    pub name: String,
    pub index: FnIndex<'m>,
    pub cfg: Cfg<'m>,
    pub self_ty: Type,
    /// Path index by key.
    pub path_ix: HashMap<&'m PathKey, usize>,
}

impl<'r, 'm> FnCheck<'r, 'm> {
    fn new(r: &'r Resolved<'m>, di: usize, fi: usize) -> CResult<Self> {
        let f = &r.m.declarations[di].functions[fi];
        let name = r.fn_name(di, fi);
        let cfg = Cfg::build(f).map_err(|(b, o, msg)| CheckError {
            code: code::CFG,
            function: name.clone(),
            block: b,
            op: o,
            message: msg,
        })?;
        Ok(FnCheck {
            r,
            di,
            f,
            index: FnIndex::new(f),
            cfg,
            self_ty: r.self_type(di),
            path_ix: f
                .body
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| (&p.key, i))
                .collect(),
            name,
        })
    }

    pub(crate) fn err(
        &self,
        code: &'static str,
        block: Option<u32>,
        op: Option<u32>,
        msg: impl Into<String>,
    ) -> CheckError {
        CheckError {
            code,
            function: self.name.clone(),
            block,
            op,
            message: msg.into(),
        }
    }

    fn run(&self) -> CResult<()> {
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

    /// Whether the function has a runtime receiver slot.
    pub fn has_runtime_receiver(&self) -> bool {
        matches!(
            self.f.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        )
    }

    /// The receiver binding type (`Ref<Self>`, `Mut<Self>`, `Self`).
    pub fn receiver_binding(&self) -> Option<Type> {
        match self.f.receiver {
            ReceiverKind::Shared => Some(Type::Ref(Box::new(self.self_ty.clone()))),
            ReceiverKind::Exclusive => Some(Type::Mut(Box::new(self.self_ty.clone()))),
            ReceiverKind::Owned => Some(self.self_ty.clone()),
            _ => None,
        }
    }

    pub fn param(&self, ordinal: u32) -> Option<&'m Param> {
        self.f.params.iter().find(|p| p.ordinal == ordinal)
    }

    /// Whether root `root` is a nonowning borrow binding (shared/exclusive
    /// receiver or a loan-typed parameter).
    pub fn is_borrow_root(&self, root: &Root) -> bool {
        match root {
            Root::Receiver => matches!(
                self.f.receiver,
                ReceiverKind::Shared | ReceiverKind::Exclusive
            ),
            Root::Param(p) => self.param(*p).is_some_and(|p| p.ty.is_borrow()),
            _ => false,
        }
    }

    /// The type a place operand denotes as a binding: the loan type for a
    /// borrow root, otherwise the path type.
    pub fn binding_type(&self, k: &PathKey) -> Option<Type> {
        let p = self.index.path(k)?;
        if k.fields.is_empty() {
            match &k.root {
                Root::Receiver => return self.receiver_binding(),
                Root::Param(o) => {
                    let prm = self.param(*o)?;
                    if prm.ty.is_borrow() {
                        return Some(prm.ty.clone());
                    }
                }
                _ => {}
            }
        }
        Some(p.ty.clone())
    }

    /// Type of a body operand as seen by its consumer.
    pub fn operand_type(&self, o: &Operand) -> Option<Type> {
        match o {
            Operand::Value(r) => self.index.op(r)?.result.clone(),
            Operand::Place(k) => self.binding_type(k),
            Operand::Const(c) => Some(Type::Scalar(c.kind)),
            Operand::Block(_) => None,
        }
    }

    /// Whether a path has a borrowed (Ref/Mut) ancestry; `Some(true)` when
    /// that ancestry is exclusive.
    pub fn borrowed_ancestry(&self, k: &PathKey) -> Option<bool> {
        match &k.root {
            Root::Receiver => match self.f.receiver {
                ReceiverKind::Shared => Some(false),
                ReceiverKind::Exclusive => Some(true),
                _ => None,
            },
            Root::Param(p) => match self.param(*p).map(|p| &p.ty) {
                Some(Type::Ref(_)) | Some(Type::SliceByte) | Some(Type::AllocatorBytesError) => {
                    Some(false)
                }
                Some(Type::Mut(_)) => Some(true),
                _ => None,
            },
            _ => None,
        }
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

    /// The single STORE_LOCAL that binds a transient `Slice<Byte>` local,
    /// with its location.
    pub fn slice_local_store(&self, k: &PathKey) -> Option<(OpRef, &'m Op)> {
        if !k.fields.is_empty() {
            return None;
        }
        let Root::Local(o) = k.root else { return None };
        let local = self.f.body.locals.iter().find(|l| l.ordinal == o)?;
        if local.ty != Type::SliceByte {
            return None;
        }
        let mut found = None;
        for (bid, b) in self.cfg.blocks.iter().enumerate() {
            let b: &'m Block = b;
            for (i, op) in b.ops.iter().enumerate() {
                if op.tag == tag::STORE_LOCAL
                    && op.operands.first() == Some(&Operand::Place(k.clone()))
                {
                    if found.is_some() {
                        return None;
                    }
                    found = Some((
                        OpRef::Flow {
                            block: bid as u32,
                            ordinal: i as u32,
                        },
                        op,
                    ));
                }
            }
        }
        found
    }

    /// The slice loan a transient `Slice<Byte>` local is bound to: the loan
    /// created by the tag-43 operation whose value its one store binds.
    pub fn slice_local_loan(&self, k: &PathKey) -> Option<&'m Loan> {
        let (_, store) = self.slice_local_store(k)?;
        let Some(Operand::Value(v)) = store.operands.get(1) else {
            return None;
        };
        self.loan_created_by(v)
            .filter(|l| l.kind == LoanKind::ByteSlice)
    }

    /// Every flow operation that uses loan `l`: operations naming its
    /// value, and operations naming the transient Slice local bound to it.
    pub fn loan_uses(&self, l: &Loan) -> Vec<OpRef> {
        let Some(c) = l.creation else {
            return Vec::new();
        };
        let mut uses = self.uses_of(&c);
        for local in &self.f.body.locals {
            let k = PathKey {
                root: Root::Local(local.ordinal),
                fields: vec![],
            };
            if self.slice_local_loan(&k).map(|x| x.id) != Some(l.id) {
                continue;
            }
            let place = Operand::Place(k.clone());
            for (bid, b) in self.cfg.blocks.iter().enumerate() {
                for (i, op) in b.ops.iter().enumerate() {
                    if op.tag != tag::STORE_LOCAL && op.operands.contains(&place) {
                        uses.push(OpRef::Flow {
                            block: bid as u32,
                            ordinal: i as u32,
                        });
                    }
                }
            }
        }
        uses
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

    /// The active entry loan whose binding roots place `k` (borrowed ancestry).
    pub fn loan_of_place(&self, k: &PathKey) -> Option<&'m Loan> {
        if let Some(l) = self.slice_local_loan(k) {
            return Some(l);
        }
        self.borrowed_ancestry(k)?;
        let root = PathKey {
            root: k.root.clone(),
            fields: vec![],
        };
        self.f
            .body
            .loans
            .iter()
            .find(|l| l.creation.is_none() && l.origin == root)
    }

    /// The loan created by the operation producing SSA value `v`.
    pub fn loan_created_by(&self, v: &OpRef) -> Option<&'m Loan> {
        self.f.body.loans.iter().find(|l| l.creation == Some(*v))
    }

    /// Flow operations that name `v` as a value operand.
    pub fn uses_of(&self, v: &OpRef) -> Vec<OpRef> {
        let mut out = Vec::new();
        for (bid, b) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in b.ops.iter().enumerate() {
                if op.operands.iter().any(|o| o == &Operand::Value(*v)) {
                    out.push(OpRef::Flow {
                        block: bid as u32,
                        ordinal: i as u32,
                    });
                }
            }
        }
        out
    }
}
