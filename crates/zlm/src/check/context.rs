//! What every part of the checker shares: the stable rejection codes and
//! error type, the module-wide resolution tables, the [`Checked`] proof and
//! the per-function checking context with its queries. The passes
//! (`cfg`, `typing`, `ops`, `flow`, `contracts`, `sdk`) import it; it
//! imports none of them but the CFG builder.

use super::cfg::Cfg;
use crate::hash::Id;
use crate::ids::{FnIndex, Identities};
use crate::model::*;
use std::borrow::Cow;
use std::collections::HashMap;

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
    /// A symbol of another module that is not a public member of a
    /// direct-dependency provider's interface: unresolved, private or
    /// transitive-only.
    pub const LINK: &str = "ZLM-LINK";
}

/// A semantic rejection with its location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {function}{}: {message}", location(*.block, *.op, *.edge))]
pub struct CheckError {
    /// Stable code (see [`code`]).
    pub code: &'static str,
    /// `Declaration.function` name.
    pub function: String,
    /// Dense block ID where known (for a recipe, its edge's source block).
    pub block: Option<u32>,
    /// Operation ordinal where known: within the block, or within the
    /// recipe list of `edge` when that is set.
    pub op: Option<u32>,
    /// The cleanup edge whose recipe operation `op` is, when the rejection
    /// concerns a recipe operation (`%rE.O`).
    pub edge: Option<u32>,
    /// What is wrong.
    pub message: String,
}

/// The location part of a message, as the text form writes it: ` %B.O` for
/// a flow operation, ` recipe %rE.O` for a recipe operation, ` block B` for
/// a block.
fn location(block: Option<u32>, op: Option<u32>, edge: Option<u32>) -> String {
    match (block, op, edge) {
        (_, Some(op_ordinal), Some(edge_id)) => format!(" recipe %r{edge_id}.{op_ordinal}"),
        (_, None, Some(edge_id)) => format!(" cleanup edge {edge_id}"),
        (Some(block_id), Some(op_ordinal), None) => format!(" %{block_id}.{op_ordinal}"),
        (Some(block_id), None, None) => format!(" block {block_id}"),
        _ => String::new(),
    }
}

impl From<CheckError> for crate::Error {
    /// The message without the code, which `crate::Error` carries (and its
    /// `Display` prints) once.
    fn from(error: CheckError) -> Self {
        let message = format!(
            "{}{}: {}",
            error.function,
            location(error.block, error.op, error.edge),
            error.message
        );
        let mut converted = crate::Error::new(error.code, message);
        converted.site = Some(crate::error::Site {
            function: error.function,
            block: error.block,
            op: error.op,
            edge: error.edge,
        });
        converted
    }
}

/// Result alias of this layer.
pub type CResult<T> = std::result::Result<T, CheckError>;

/// Module-wide resolution tables shared by the checker and the interpreter.
pub struct Resolved<'m> {
    /// The module.
    pub module: &'m Module,
    /// Its identities (borrowed from a [`Checked`] module, or computed here).
    pub ids: Cow<'m, Identities>,
    /// Nominal ID to local declaration index.
    pub decls: HashMap<Id, usize>,
    /// Variant ID to (declaration, variant index).
    pub variants: HashMap<Id, (usize, usize)>,
    /// Declared function-signature ID to (declaration, function index).
    pub funcs: HashMap<Id, (usize, usize)>,
    /// Declarations `0..local` are the module's own; the rest (in a view
    /// built by [`super::link::LinkedView`]) belong to the providers it
    /// links against.
    pub local: usize,
    /// Per declaration beyond `local`: the index of its module in `modules`.
    origin: Vec<usize>,
    /// The modules of the view (name, numeric profile); 0 is the module itself.
    modules: Vec<(String, NumericProfile)>,
}

impl<'m> Resolved<'m> {
    /// Builds the tables (identities are recomputed).
    pub fn new(module: &'m Module) -> crate::Result<Self> {
        let (ids, _) = crate::ids::compute(module, false)?;
        Ok(Self::with_ids(module, ids))
    }

    /// Builds the tables from identities already computed for `module` (by
    /// [`crate::ids::compute`], e.g. through [`crate::write::write_with_ids`]).
    pub fn with_ids(module: &'m Module, ids: Identities) -> Self {
        Self::from_parts(module, Cow::Owned(ids))
    }

    /// Builds the tables of a decoded and checked module, borrowing the
    /// identities its decoding recomputed.
    pub fn of_checked(checked: &'m Checked) -> Self {
        Self::from_parts(&checked.module, Cow::Borrowed(&checked.ids))
    }

    pub(crate) fn from_parts(module: &'m Module, ids: Cow<'m, Identities>) -> Self {
        let mut decls = HashMap::new();
        let mut variants = HashMap::new();
        let mut funcs = HashMap::new();
        for (decl_index, decl_ids) in ids.decls.iter().enumerate() {
            decls.insert(decl_ids.nominal, decl_index);
            for (variant_index, (vid, _)) in decl_ids.variants.iter().enumerate() {
                variants.insert(*vid, (decl_index, variant_index));
            }
            for (fn_index, fn_ids) in decl_ids.functions.iter().enumerate() {
                funcs.insert(fn_ids.sig, (decl_index, fn_index));
            }
        }
        Resolved {
            local: module.declarations.len(),
            origin: Vec::new(),
            modules: vec![(module.name.clone(), module.profile)],
            module,
            ids,
            decls,
            variants,
            funcs,
        }
    }

    /// The tables of a linked view: `module` holds the module's own declarations
    /// first (`local` of them), then each provider's; `origin[i]` is the
    /// module (index into `modules`) of declaration `local + i`.
    pub(crate) fn of_view(
        module: &'m Module,
        ids: &'m Identities,
        local: usize,
        origin: Vec<usize>,
        modules: Vec<(String, NumericProfile)>,
    ) -> Self {
        let mut resolved = Self::from_parts(module, Cow::Borrowed(ids));
        resolved.local = local;
        resolved.origin = origin;
        resolved.modules = modules;
        resolved
    }

    /// The index (into the view's modules, 0 = the module itself) of the
    /// module declaring `decl`.
    pub fn module_index(&self, decl: usize) -> usize {
        if decl < self.local {
            0
        } else {
            self.origin.get(decl - self.local).copied().unwrap_or(0)
        }
    }
    /// The dotted name of the module declaring `decl`.
    pub fn module_of(&self, decl: usize) -> &str {
        &self.modules[self.module_index(decl)].0
    }
    /// The numeric profile of the module declaring `decl` (a provider's
    /// functions compute under their own module's profile).
    pub fn profile_of(&self, decl: usize) -> NumericProfile {
        self.modules[self.module_index(decl)].1
    }
    /// Whether `decl` is one of the module's own declarations.
    pub fn is_local(&self, decl: usize) -> bool {
        decl < self.local
    }
    /// Whether `ty` is structurally Copy.
    pub fn is_copy(&self, ty: &Type) -> bool {
        self.ids.is_copy(ty)
    }
    /// The field with ID `id`: its owning declaration, optional variant and record.
    pub fn field(&self, id: &Id) -> Option<(usize, Option<usize>, &'m Field)> {
        let info = self.ids.fields.get(id)?;
        let decl = &self.module.declarations[info.decl];
        let field = match info.variant {
            None => decl.fields.get(info.index)?,
            Some(variant_index) => decl.variants.get(variant_index)?.fields.get(info.index)?,
        };
        Some((info.decl, info.variant, field))
    }
    /// The declaration's self type.
    pub fn self_type(&self, decl: usize) -> Type {
        Type::Nominal(self.ids.decls[decl].nominal)
    }
    /// Owner declaration of a nominal type, when local.
    pub fn decl_of(&self, ty: &Type) -> Option<usize> {
        match ty {
            Type::Nominal(id) => self.decls.get(id).copied(),
            _ => None,
        }
    }
    /// Display name `Decl.function`; a provider's function in a linked
    /// view is qualified with its module, `module::Decl.function`.
    pub fn fn_name(&self, decl_index: usize, fn_index: usize) -> String {
        let decl = &self.module.declarations[decl_index];
        if self.is_local(decl_index) {
            format!("{}.{}", decl.name, decl.functions[fn_index].name)
        } else {
            format!(
                "{}::{}.{}",
                self.module_of(decl_index),
                decl.name,
                decl.functions[fn_index].name
            )
        }
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
    links: Vec<(String, Id)>,
    foreign: bool,
}

impl Checked {
    /// Wraps a module that `decode` has just checked. `imports_resolved`
    /// says whether its imports were resolved against supplied providers;
    /// `links` names the direct-dependency providers its cross-module
    /// symbols were checked against (module name, module-content identity,
    /// sorted by name); `foreign` says whether any function names a symbol
    /// of another module.
    pub(crate) fn new(
        module: Module,
        ids: Identities,
        module_content: Id,
        imports_resolved: bool,
        links: Vec<(String, Id)>,
        foreign: bool,
    ) -> Self {
        Checked {
            module,
            ids,
            module_content,
            imports_resolved,
            links,
            foreign,
        }
    }
    /// The direct-dependency providers this module was checked against:
    /// (module name, module-content identity), sorted by name; empty when
    /// it was decoded without providers.
    pub fn links(&self) -> &[(String, Id)] {
        &self.links
    }
    /// Whether a function of the module names a declared function, field,
    /// variant or declaration of another module (it runs only as part of
    /// a [`crate::decode::Package`]).
    pub fn names_other_modules(&self) -> bool {
        self.foreign
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

/// The checking context of one function.
pub(crate) struct FnCheck<'r, 'm> {
    pub r: &'r Resolved<'m>,
    #[allow(dead_code)]
    pub decl_index: usize,
    pub function: &'m Function,
    pub name: String,
    pub index: FnIndex<'m>,
    pub cfg: Cfg<'m>,
    pub self_ty: Type,
    /// Path index by key.
    pub path_ix: HashMap<&'m PathKey, usize>,
}

impl<'r, 'm> FnCheck<'r, 'm> {
    pub(crate) fn new(
        resolved: &'r Resolved<'m>,
        decl_index: usize,
        fn_index: usize,
    ) -> CResult<Self> {
        let function = &resolved.module.declarations[decl_index].functions[fn_index];
        let name = resolved.fn_name(decl_index, fn_index);
        let cfg = Cfg::build(function).map_err(|(block, op, msg)| CheckError {
            code: code::CFG,
            function: name.clone(),
            block,
            op,
            edge: None,
            message: msg,
        })?;
        Ok(FnCheck {
            r: resolved,
            decl_index,
            function,
            index: FnIndex::new(function),
            cfg,
            self_ty: resolved.self_type(decl_index),
            path_ix: function
                .body
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| (&p.key, i))
                .collect(),
            name,
        })
    }

    /// `key` as a diagnostic names it: the text form's place, with field
    /// names ([`crate::spell::NamedPlace`]).
    pub(crate) fn place(&self, key: &PathKey) -> String {
        crate::spell::NamedPlace {
            key,
            module: self.r.module,
            ids: &self.r.ids,
        }
        .to_string()
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
            edge: None,
            message: msg.into(),
        }
    }

    /// A rejection of recipe operation `ordinal` of cleanup edge `edge`
    /// (`%rE.O`), whose edge leaves block `source`.
    pub(crate) fn err_recipe(
        &self,
        code: &'static str,
        source: u32,
        edge: u32,
        ordinal: u32,
        msg: impl Into<String>,
    ) -> CheckError {
        CheckError {
            edge: Some(edge),
            ..self.err(code, Some(source), Some(ordinal), msg)
        }
    }

    /// Whether the function has a runtime receiver slot.
    pub fn has_runtime_receiver(&self) -> bool {
        matches!(
            self.function.receiver,
            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
        )
    }

    /// The receiver binding type (`Ref<Self>`, `Mut<Self>`, `Self`).
    pub fn receiver_binding(&self) -> Option<Type> {
        match self.function.receiver {
            ReceiverKind::Shared => Some(Type::Ref(Box::new(self.self_ty.clone()))),
            ReceiverKind::Exclusive => Some(Type::Mut(Box::new(self.self_ty.clone()))),
            ReceiverKind::Owned => Some(self.self_ty.clone()),
            _ => None,
        }
    }

    pub fn param(&self, ordinal: u32) -> Option<&'m Param> {
        self.function.params.iter().find(|p| p.ordinal == ordinal)
    }

    /// Whether root `root` is a nonowning borrow binding (shared/exclusive
    /// receiver or a loan-typed parameter).
    pub fn is_borrow_root(&self, root: &Root) -> bool {
        match root {
            Root::Receiver => matches!(
                self.function.receiver,
                ReceiverKind::Shared | ReceiverKind::Exclusive
            ),
            Root::Param(param_ordinal) => self
                .param(*param_ordinal)
                .is_some_and(|param| param.ty.is_borrow()),
            _ => false,
        }
    }

    /// The type a place operand denotes as a binding: the loan type for a
    /// borrow root, otherwise the path type.
    pub fn binding_type(&self, key: &PathKey) -> Option<Type> {
        let path = self.index.path(key)?;
        if key.fields.is_empty() {
            match &key.root {
                Root::Receiver => return self.receiver_binding(),
                Root::Param(ordinal) => {
                    let param = self.param(*ordinal)?;
                    if param.ty.is_borrow() {
                        return Some(param.ty.clone());
                    }
                }
                _ => {}
            }
        }
        Some(path.ty.clone())
    }

    /// Type of a body operand as seen by its consumer.
    pub fn operand_type(&self, operand: &Operand) -> Option<Type> {
        match operand {
            Operand::Value(op_ref) => self.index.op(op_ref)?.result.clone(),
            Operand::Place(key) => self.binding_type(key),
            Operand::Const(constant) => Some(Type::Scalar(constant.kind)),
            Operand::Block(_) => None,
        }
    }

    /// Whether a path has a borrowed (Ref/Mut) ancestry; `Some(true)` when
    /// that ancestry is exclusive.
    pub fn borrowed_ancestry(&self, key: &PathKey) -> Option<bool> {
        match &key.root {
            Root::Receiver => match self.function.receiver {
                ReceiverKind::Shared => Some(false),
                ReceiverKind::Exclusive => Some(true),
                _ => None,
            },
            Root::Param(ordinal) => match self.param(*ordinal).map(|param| &param.ty) {
                Some(Type::Ref(_)) | Some(Type::SliceByte) | Some(Type::AllocatorBytesError) => {
                    Some(false)
                }
                Some(Type::Mut(_)) => Some(true),
                _ => None,
            },
            _ => None,
        }
    }

    /// The single STORE_LOCAL that binds a transient `Slice<Byte>` local,
    /// with its location.
    pub fn slice_local_store(&self, key: &PathKey) -> Option<(OpRef, &'m Op)> {
        if !key.fields.is_empty() {
            return None;
        }
        let Root::Local(ordinal) = key.root else {
            return None;
        };
        let local = self
            .function
            .body
            .locals
            .iter()
            .find(|l| l.ordinal == ordinal)?;
        if local.ty != Type::SliceByte {
            return None;
        }
        let mut found = None;
        for (bid, block) in self.cfg.blocks.iter().enumerate() {
            let block: &'m Block = block;
            for (i, op) in block.ops.iter().enumerate() {
                if op.tag == tag::STORE_LOCAL
                    && op.operands.first() == Some(&Operand::Place(key.clone()))
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
    pub fn slice_local_loan(&self, key: &PathKey) -> Option<&'m Loan> {
        let (_, store) = self.slice_local_store(key)?;
        let Some(Operand::Value(op_ref)) = store.operands.get(1) else {
            return None;
        };
        self.loan_created_by(op_ref)
            .filter(|l| l.kind == LoanKind::ByteSlice)
    }

    /// Every flow operation that uses loan `loan`: operations naming its
    /// value, and operations naming the transient Slice local bound to it.
    pub fn loan_uses(&self, loan: &Loan) -> Vec<OpRef> {
        let Some(creation) = loan.creation else {
            return Vec::new();
        };
        let mut uses = self.uses_of(&creation);
        for local in &self.function.body.locals {
            let key = PathKey {
                root: Root::Local(local.ordinal),
                fields: vec![],
            };
            if self.slice_local_loan(&key).map(|x| x.id) != Some(loan.id) {
                continue;
            }
            let place = Operand::Place(key.clone());
            for (bid, block) in self.cfg.blocks.iter().enumerate() {
                for (i, op) in block.ops.iter().enumerate() {
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

    /// The active entry loan whose binding roots place `key` (borrowed ancestry).
    pub fn loan_of_place(&self, key: &PathKey) -> Option<&'m Loan> {
        if let Some(loan) = self.slice_local_loan(key) {
            return Some(loan);
        }
        self.borrowed_ancestry(key)?;
        let root = PathKey {
            root: key.root.clone(),
            fields: vec![],
        };
        self.function
            .body
            .loans
            .iter()
            .find(|loan| loan.creation.is_none() && loan.origin == root)
    }

    /// The loan created by the operation producing SSA value `op_ref`.
    pub fn loan_created_by(&self, op_ref: &OpRef) -> Option<&'m Loan> {
        self.function
            .body
            .loans
            .iter()
            .find(|l| l.creation == Some(*op_ref))
    }

    /// Flow operations that name `op_ref` as a value operand.
    pub fn uses_of(&self, op_ref: &OpRef) -> Vec<OpRef> {
        let mut out = Vec::new();
        for (bid, block) in self.cfg.blocks.iter().enumerate() {
            for (i, op) in block.ops.iter().enumerate() {
                if op.operands.iter().any(|o| o == &Operand::Value(*op_ref)) {
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
