//! Logical semantic identities, computed in the specified dependency waves:
//! namespaces; declaration nominal IDs; type instances and effect sets;
//! constants; variants; fields; function signatures; parameters and locals;
//! contracts; declaration interfaces; module interface; bodies and
//! declaration definitions; module content last.

use crate::catalog::{self, CATALOG_ID};
use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, domain, h, opt, preimage, seq, seq_of, to_hex, u32p};
use crate::model::*;
use std::collections::BTreeMap;

/// One function's computed identities: signature, effect set, parameter
/// IDs, local IDs and the parameter flags.
type FnSigIds = (Id, Id, Vec<Id>, Vec<Id>, Vec<u32>);

/// One recorded identity: the golden-vector view of a hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// Which fact, e.g. `field Point.x`.
    pub fact: String,
    /// ASCII hash domain.
    pub domain: &'static str,
    /// Top-level parts before F-framing.
    pub parts: Vec<Vec<u8>>,
    /// Digest.
    pub digest: Id,
}

impl Fact {
    /// The exact hashed preimage (domain, nul, framed parts).
    pub fn preimage(&self) -> Vec<u8> {
        preimage(self.domain, &self.parts)
    }
    /// One JSON object (no trailing newline): fact, domain, parts (hex),
    /// optionally the framed preimage, and digest.
    pub fn to_json(&self, with_preimage: bool) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| format!("\"{}\"", to_hex(p)))
            .collect();
        let pre = if with_preimage {
            format!(", \"preimage\": \"{}\"", to_hex(&self.preimage()))
        } else {
            String::new()
        };
        format!(
            "{{\"fact\": {}, \"domain\": \"{}\", \"parts\": [{}]{}, \"digest\": \"{}\"}}",
            json_string(&self.fact),
            self.domain,
            parts.join(", "),
            pre,
            to_hex(&self.digest)
        )
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Hashes identities, memoizing type-instance IDs and optionally recording
/// every hash as a [`Fact`].
pub struct Hasher {
    types: FastMap<Type, Id>,
    constants: FastMap<Constant, Id>,
    effect_sets: FastMap<Vec<Effect>, Id>,
    /// SHA-256 state after `domain || 0 || F(type-instance ID)` of a constant,
    /// per scalar tag: every constant of one type shares that 66-byte prefix,
    /// so continuing a copy of the state is exactly the same hash and skips
    /// the first compression.
    constant_prefix: Vec<Option<sha2::Sha256>>,
    /// Scalar type-instance IDs by scalar tag (the common case, no map lookup).
    scalar_ids: Vec<Option<Id>>,
    /// Recorded facts, when tracing.
    pub trace: Option<Vec<Fact>>,
    /// Constant IDs another thread may hand over (see [`Hasher::receive_constants`]).
    /// (In a mutex only so that a hasher stays `Sync`; one thread uses it.)
    incoming: Option<std::sync::Mutex<std::sync::mpsc::Receiver<FastMap<Constant, Id>>>>,
}

impl Hasher {
    /// A hasher; `trace` records every computed identity.
    pub fn new(trace: bool) -> Self {
        Hasher {
            types: FastMap::default(),
            constants: FastMap::default(),
            effect_sets: FastMap::default(),
            constant_prefix: Vec::new(),
            scalar_ids: Vec::new(),
            trace: trace.then(Vec::new),
            incoming: None,
        }
    }

    /// Accepts memoized constant IDs computed by another thread: on a memo
    /// miss, a map already sent is merged before hashing the constant
    /// (never waiting for one). The IDs are the same either way.
    pub fn receive_constants(&mut self, rx: std::sync::mpsc::Receiver<FastMap<Constant, Id>>) {
        self.incoming = Some(std::sync::Mutex::new(rx));
    }

    /// Hashes every constant operand of every body of `m` into the memo,
    /// skipping any without a canonical payload (the ordered body pass meets
    /// that error at its place).
    pub fn hash_body_constants(&mut self, m: &Module) {
        for f in m.declarations.iter().flat_map(|d| &d.functions) {
            let ops = f.body.blocks.iter().flat_map(|b| &b.ops);
            for op in ops.chain(f.body.edges.iter().flat_map(|e| &e.drops)) {
                for o in &op.operands {
                    if let Operand::Const(c) = o {
                        let _ = self.constant(c);
                    }
                }
            }
        }
    }

    /// The memoized constant IDs.
    pub fn constant_ids(&self) -> &FastMap<Constant, Id> {
        &self.constants
    }

    /// Takes the memoized constant IDs.
    pub fn take_constant_ids(&mut self) -> FastMap<Constant, Id> {
        std::mem::take(&mut self.constants)
    }

    fn hash(
        &mut self,
        what: impl FnOnce() -> String,
        dom: &'static str,
        parts: Vec<Vec<u8>>,
    ) -> Id {
        let digest = h(dom, &parts);
        if let Some(trace) = &mut self.trace {
            trace.push(Fact {
                fact: what(),
                domain: dom,
                parts,
                digest,
            });
        }
        digest
    }

    /// Reserves room for `n` more memoized constants (a decoder knows the
    /// constant-table size, bounded by its input; growing the map step by
    /// step rehashes and touches fresh pages several times).
    pub fn reserve_constants(&mut self, n: usize) {
        self.constants.reserve(n);
    }

    /// Module-namespace ID.
    pub fn namespace(&mut self, package: &str, module: &str) -> Id {
        self.hash(
            || format!("module namespace {package}/{module}"),
            domain::MODULE_NAMESPACE,
            vec![package.as_bytes().to_vec(), module.as_bytes().to_vec()],
        )
    }

    /// Declaration-nominal ID.
    pub fn nominal(&mut self, namespace: &Id, kind: DeclKind, name: &str) -> Id {
        self.hash(
            || format!("declaration {name}"),
            domain::DECLARATION_NOMINAL,
            vec![
                namespace.to_vec(),
                u32p(kind.tag()),
                name.as_bytes().to_vec(),
            ],
        )
    }

    /// Type-instance ID (memoized; a known scalar without a call).
    #[inline]
    pub fn type_id(&mut self, t: &Type) -> Id {
        if let Type::Scalar(k) = t
            && let Some(Some(id)) = self.scalar_ids.get(k.tag() as usize)
        {
            return *id;
        }
        self.type_id_slow(t)
    }

    fn type_id_slow(&mut self, t: &Type) -> Id {
        if let Some(id) = self.types.get(t) {
            return *id;
        }
        let children: Vec<Vec<u8>> = t
            .children()
            .into_iter()
            .map(|c| self.type_id(c).to_vec())
            .collect();
        let catalog = match t {
            Type::Scalar(_) | Type::Nominal(_) => None,
            _ => Some(CATALOG_ID.as_bytes()),
        };
        let scalar = match t {
            Type::Scalar(k) => Some(k.tag().to_le_bytes()),
            _ => None,
        };
        let nominal = match t {
            Type::Nominal(id) => Some(*id),
            _ => None,
        };
        let parts = vec![
            opt(catalog),
            u32p(t.kind()),
            opt(scalar.as_ref().map(|s| &s[..])),
            opt(nominal.as_ref().map(|n| &n[..])),
            seq(children),
        ];
        let id = self.hash(
            || format!("type {}", crate::text::type_text_raw(t)),
            domain::TYPE_INSTANCE,
            parts,
        );
        if let Type::Scalar(k) = t {
            let slot = k.tag() as usize;
            if self.scalar_ids.len() <= slot {
                self.scalar_ids.resize(slot + 1, None);
            }
            self.scalar_ids[slot] = Some(id);
        }
        self.types.insert(t.clone(), id);
        id
    }

    /// Effect-set digest (tags must already be unique and ascending).
    pub fn effects(&mut self, effects: &[Effect]) -> Id {
        if let Some(id) = self.effect_sets.get(effects) {
            return *id;
        }
        let id = self.effects_uncached(effects);
        self.effect_sets.insert(effects.to_vec(), id);
        id
    }

    fn effects_uncached(&mut self, effects: &[Effect]) -> Id {
        let tags: Vec<Vec<u8>> = effects.iter().map(|e| u32p(e.tag())).collect();
        self.hash(
            || {
                format!(
                    "effect set [{}]",
                    effects
                        .iter()
                        .map(|e| e.text())
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            },
            domain::EFFECT_SET,
            vec![seq(tags)],
        )
    }

    /// Constant ID.
    #[inline]
    pub fn constant(&mut self, c: &Constant) -> Result<Id> {
        // Tracing records every use (the golden `ids` listing); otherwise memoized.
        if self.trace.is_none()
            && let Some(id) = self.constants.get(c)
        {
            return Ok(*id);
        }
        self.constant_new(c)
    }

    fn constant_new(&mut self, c: &Constant) -> Result<Id> {
        let received = self
            .incoming
            .as_ref()
            .and_then(|rx| rx.lock().ok()?.try_recv().ok());
        if let Some(mut map) = received {
            self.incoming = None;
            for (k, v) in self.constants.drain() {
                map.entry(k).or_insert(v);
            }
            self.constants = map;
            if let Some(id) = self.constants.get(c) {
                return Ok(*id);
            }
        }
        let payload = c.payload().ok_or_else(|| {
            Error::new(
                code::MODEL,
                format!("constant {:?} has no canonical payload", c),
            )
        })?;
        let ty = self.type_id(&Type::Scalar(c.kind));
        let id = if self.trace.is_some() {
            self.hash(
                || format!("constant {}:{}", c.bits, c.kind.text()),
                domain::CONSTANT,
                vec![ty.to_vec(), payload],
            )
        } else {
            use sha2::Digest as _;
            let slot = c.kind.tag() as usize;
            if self.constant_prefix.len() <= slot {
                self.constant_prefix.resize(slot + 1, None);
            }
            let prefix = self.constant_prefix[slot].get_or_insert_with(|| {
                let mut sha = sha2::Sha256::new();
                sha.update(domain::CONSTANT.as_bytes());
                sha.update([0u8]);
                sha.update(32u64.to_le_bytes());
                sha.update(ty);
                sha
            });
            let mut sha = prefix.clone();
            sha.update((payload.len() as u64).to_le_bytes());
            sha.update(&payload);
            sha.finalize().into()
        };
        self.constants.insert(c.clone(), id);
        Ok(id)
    }

    fn param_sig(&mut self, ordinal: u32, name: &str, ty: &Type, flags: u32) -> Vec<u8> {
        let t = self.type_id(ty);
        seq([
            u32p(ordinal),
            name.as_bytes().to_vec(),
            t.to_vec(),
            u32p(flags),
        ])
    }

    /// Catalog function-signature ID.
    pub fn catalog_function(&mut self, e: &catalog::Entry) -> Id {
        let owner = self.type_id(&e.owner);
        let recv = catalog::receiver_type(&e.owner, e.receiver).map(|t| self.type_id(&t));
        let params: Vec<Vec<u8>> = e
            .params
            .iter()
            .enumerate()
            .map(|(i, (n, t))| {
                let flags = move_flag(t, &|_| None);
                self.param_sig(i as u32, n, t, flags)
            })
            .collect();
        let result = self.type_id(&e.result);
        let eff = self.effects(&e.effects);
        self.hash(
            || format!("catalog function {}#{} {}", CATALOG_ID, e.selector, e.name),
            domain::CATALOG_FUNCTION,
            vec![
                CATALOG_ID.as_bytes().to_vec(),
                u32p(e.selector),
                owner.to_vec(),
                u32p(e.callable.tag()),
                u32p(e.receiver.tag()),
                opt(recv.as_ref().map(|r| &r[..])),
                e.name.as_bytes().to_vec(),
                seq(params),
                result.to_vec(),
                eff.to_vec(),
            ],
        )
    }
}

/// Structural Copy of a type; `nominal` answers a declaration's Copy flag.
pub fn is_copy(t: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> bool {
    match t {
        Type::Scalar(_) | Type::Unit | Type::Never | Type::Ref(_) => true,
        Type::Nominal(id) => nominal(id).unwrap_or(false),
        Type::Result(a, b) => is_copy(a, nominal) && is_copy(b, nominal),
        Type::ArrayByte | Type::SliceByte | Type::Mut(_) | Type::AllocatorBytesError => false,
    }
}

/// The derived parameter move flag: one exactly for a non-Copy nonborrow
/// by-value owner.
pub fn move_flag(t: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> u32 {
    u32::from(!t.is_borrow() && !is_copy(t, nominal))
}

/// Everything the writer needs about one field.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    /// Owning declaration index in the model.
    pub decl: usize,
    /// Owning variant index in the declaration, for payload fields.
    pub variant: Option<usize>,
    /// Field index within its owner's list in the model.
    pub index: usize,
}

/// Identities of one function.
#[derive(Debug, Clone)]
pub struct FnIds {
    /// Function-signature ID.
    pub sig: Id,
    /// Function-contract digest.
    pub contract: Id,
    /// Function-body digest.
    pub body: Id,
    /// Effect-set digest.
    pub effects: Id,
    /// Parameter IDs, parallel to `Function::params`.
    pub params: Vec<Id>,
    /// Local IDs, parallel to `Body::locals`.
    pub locals: Vec<Id>,
    /// Parameter move flags, parallel to `Function::params`.
    pub param_flags: Vec<u32>,
}

/// Identities of one declaration.
#[derive(Debug, Clone)]
pub struct DeclIds {
    /// Nominal ID.
    pub nominal: Id,
    /// Derived Copy flag.
    pub copy: bool,
    /// Public-interface digest.
    pub interface: Id,
    /// Definition digest.
    pub definition: Id,
    /// Ordinary field IDs, parallel to `Declaration::fields`.
    pub fields: Vec<Id>,
    /// Variant IDs and payload field IDs (in ordinal order), parallel to `Declaration::variants`.
    pub variants: Vec<(Id, Vec<Id>)>,
    /// Function identities, parallel to `Declaration::functions`.
    pub functions: Vec<FnIds>,
}

/// Every identity of a module.
#[derive(Debug, Clone)]
pub struct Identities {
    /// Module namespace.
    pub namespace: Id,
    /// Selected catalog content identity.
    pub catalog: Id,
    /// Import nominal IDs, parallel to `Module::imports`.
    pub imports: Vec<Id>,
    /// Declarations, parallel to `Module::declarations`.
    pub decls: Vec<DeclIds>,
    /// Module-interface digest.
    pub module_interface: Id,
    /// Module-content identity.
    pub module_content: Id,
    /// Field ID to its location.
    pub fields: FastMap<Id, FieldInfo>,
    /// Nominal ID to Copy flag (imports and locals).
    pub copy: FastMap<Id, bool>,
    /// Type-instance IDs computed so far.
    pub types: FastMap<Type, Id>,
    /// Constant IDs computed so far.
    pub constants: FastMap<Constant, Id>,
    /// Whether `constants` holds every body constant (false for
    /// [`Pending::provisional`], whose bodies are hashed elsewhere).
    pub body_constants: bool,
}

impl Identities {
    /// Whether `t` is structurally Copy in this module.
    pub fn is_copy(&self, t: &Type) -> bool {
        is_copy(t, &|id| self.copy.get(id).copied())
    }
    /// The type-instance ID of `t` (computing it if new).
    pub fn type_id(&mut self, t: &Type) -> Id {
        if let Some(id) = self.types.get(t) {
            return *id;
        }
        let mut hs = Hasher::new(false);
        hs.types = std::mem::take(&mut self.types);
        let id = hs.type_id(t);
        self.types = hs.types;
        id
    }
}

/// Per-function context used while hashing a body.
struct FnCtx<'a> {
    sig: Id,
    f: &'a Function,
    params: &'a [Id],
    locals: &'a [Id],
    receiver_type: Option<Type>,
    /// Flow op index in canonical order, per (block, ordinal).
    flow_index: BTreeMap<(u32, u32), u32>,
}

impl FnCtx<'_> {
    fn op_key(&self, r: &OpRef) -> Vec<u8> {
        let (kind, owner, ordinal) = match r {
            OpRef::Flow { block, ordinal } => (0u32, *block, *ordinal),
            OpRef::Recipe { edge, ordinal } => (1u32, *edge, *ordinal),
        };
        let owner_key = seq_of(&[&self.sig, &owner.to_le_bytes()]);
        seq_of(&[
            &self.sig,
            &kind.to_le_bytes(),
            &owner_key,
            &ordinal.to_le_bytes(),
        ])
    }
    fn root_identity(&self, root: &Root) -> Result<(u32, Vec<u8>)> {
        Ok(match root {
            Root::Receiver => (0, u32p(0)),
            Root::Param(p) => (1, self.param_id(*p)?.to_vec()),
            Root::Local(l) => (2, self.local_id(*l)?.to_vec()),
            Root::Temp(op) => (3, self.op_key(op)),
        })
    }
    fn param_id(&self, ordinal: u32) -> Result<Id> {
        self.f
            .params
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.params[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no parameter {ordinal}", self.f.name),
                )
            })
    }
    fn local_id(&self, ordinal: u32) -> Result<Id> {
        self.f
            .body
            .locals
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.locals[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no local {ordinal}", self.f.name),
                )
            })
    }
    /// Canonical owned-path sort key: root kind, root identity bytes, field IDs.
    fn path_sort_key(&self, k: &PathKey) -> Result<(u32, Vec<u8>, Vec<Id>)> {
        let (kind, ident) = self.root_identity(&k.root)?;
        Ok((kind, ident, k.fields.clone()))
    }
}

/// The canonical order of a function's owned paths, as indices into
/// `Body::paths`.
pub fn path_order(sig: &Id, f: &Function, params: &[Id], locals: &[Id]) -> Result<Vec<usize>> {
    let ctx = FnCtx {
        sig: *sig,
        f,
        params,
        locals,
        receiver_type: None,
        flow_index: BTreeMap::new(),
    };
    let mut keyed = Vec::with_capacity(f.body.paths.len());
    for (i, p) in f.body.paths.iter().enumerate() {
        keyed.push((ctx.path_sort_key(&p.key)?, i));
    }
    keyed.sort();
    for w in keyed.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(Error::new(
                code::DUPLICATE,
                format!("function {}: duplicate owned path", f.name),
            ));
        }
    }
    Ok(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Blocks sorted by dense ID (indices into `Body::blocks`), rejecting gaps and duplicates.
pub fn block_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.blocks.iter().map(|b| b.id), &f.name, "block")
}
/// Edges sorted by dense ID.
pub fn edge_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.edges.iter().map(|b| b.id), &f.name, "cleanup edge")
}
/// Loans sorted by dense ID.
pub fn loan_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.loans.iter().map(|b| b.id), &f.name, "loan")
}
/// Locals sorted by ordinal.
pub fn local_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.locals.iter().map(|b| b.ordinal), &f.name, "local")
}
/// Parameters sorted by ordinal.
pub fn param_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.params.iter().map(|b| b.ordinal), &f.name, "parameter")
}

/// Sorts by a dense key that must be exactly 0..n.
pub fn dense_order(keys: impl Iterator<Item = u32>, owner: &str, what: &str) -> Result<Vec<usize>> {
    let keys: Vec<u32> = keys.collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    for (pos, &i) in order.iter().enumerate() {
        if keys[i] as usize != pos {
            return Err(Error::new(
                code::MODEL,
                format!(
                    "{owner}: {what} keys must be dense from zero without duplicates (found {})",
                    keys[i]
                ),
            ));
        }
    }
    Ok(order)
}

fn check_effects(effects: &[Effect], owner: &str) -> Result<()> {
    if effects.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::new(
            code::MODEL,
            format!("{owner}: effect tags must be unique and ascending"),
        ));
    }
    Ok(())
}

/// The receiver type of a function owned by declaration `owner`.
pub fn receiver_type(owner: &Id, receiver: ReceiverKind) -> Option<Type> {
    catalog::receiver_type(&Type::Nominal(*owner), receiver)
}

/// Computes every identity of `m` in dependency waves; `trace` records
/// each hash for golden vectors.
pub fn compute(m: &Module, trace: bool) -> Result<(Identities, Vec<Fact>)> {
    prepare(m, trace)?.finish(m, None)
}

/// The identities of waves 1-11 (everything a function-body digest depends
/// on) and the hasher state; [`Pending::finish`] adds wave 12 (bodies and
/// declaration definitions) and wave 13 (module content). A validator may
/// hash the bodies on another thread with [`Pending::bodies`] meanwhile.
pub struct Pending {
    /// The hasher (memoized types, constants, effect sets; the trace).
    pub hs: Hasher,
    ns: Id,
    catalog: Id,
    imports: Vec<Id>,
    nominals: Vec<Id>,
    copy: FastMap<Id, bool>,
    fields_map: FastMap<Id, FieldInfo>,
    decl_fields: Vec<Vec<Id>>,
    decl_variants: Vec<Vec<(Id, Vec<Id>)>>,
    fn_sigs: Vec<Vec<FnSigIds>>,
    contracts: Vec<Vec<Id>>,
    interfaces: Vec<Id>,
    module_interface: Id,
}

/// Waves 1-11 of [`compute`].
pub fn prepare(m: &Module, trace: bool) -> Result<Pending> {
    let mut hs = Hasher::new(trace);
    // Wave 1: namespaces.
    let ns = hs.namespace(&m.package, &m.name);
    let mut import_ns: BTreeMap<&str, Id> = BTreeMap::new();
    for i in &m.imports {
        if !import_ns.contains_key(i.module.as_str()) {
            let id = hs.namespace(&m.package, &i.module);
            import_ns.insert(&i.module, id);
        }
    }
    // Wave 2: declaration nominal IDs.
    let mut imports = Vec::new();
    let mut copy: FastMap<Id, bool> = FastMap::default();
    for i in &m.imports {
        let id = hs.nominal(&import_ns[i.module.as_str()], i.kind, &i.name);
        copy.insert(id, i.copy);
        imports.push(id);
    }
    let nominals: Vec<Id> = m
        .declarations
        .iter()
        .map(|d| hs.nominal(&ns, d.kind, &d.name))
        .collect();
    // Derived declaration Copy flags (greatest fixed point).
    for (d, id) in m.declarations.iter().zip(&nominals) {
        copy.insert(*id, d.kind != DeclKind::Value);
    }
    loop {
        let mut changed = false;
        for (d, id) in m.declarations.iter().zip(&nominals) {
            if copy[id] {
                let all = d
                    .variants
                    .iter()
                    .flat_map(|v| v.fields.iter())
                    .all(|f| is_copy(&f.ty, &|n| copy.get(n).copied()));
                if !all {
                    copy.insert(*id, false);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let copy_of = |c: &FastMap<Id, bool>, t: &Type| is_copy(t, &|n| c.get(n).copied());
    // Wave 3: catalog content (its types and effect sets are independent of the module).
    let catalog = catalog::content_identity();
    // Waves 4-6: variants and fields.
    let mut fields_map = FastMap::default();
    let mut decl_fields = Vec::new();
    let mut decl_variants = Vec::new();
    for (di, (d, nominal)) in m.declarations.iter().zip(&nominals).enumerate() {
        let mut vids = Vec::new();
        for v in &d.variants {
            let vid = hs.hash(
                || format!("variant {}.{}", d.name, v.name),
                domain::VARIANT,
                vec![nominal.to_vec(), u32p(v.tag), v.name.as_bytes().to_vec()],
            );
            vids.push(vid);
        }
        let mut fids = Vec::new();
        for (fi, f) in d.fields.iter().enumerate() {
            let id = field_id(&mut hs, 0, nominal, f, || {
                format!("field {}.{}", d.name, f.name)
            });
            if fields_map
                .insert(
                    id,
                    FieldInfo {
                        decl: di,
                        variant: None,
                        index: fi,
                    },
                )
                .is_some()
            {
                return Err(Error::new(
                    code::DUPLICATE,
                    format!("duplicate field {}.{}", d.name, f.name),
                ));
            }
            fids.push(id);
        }
        let mut variants = Vec::new();
        for (vi, (v, vid)) in d.variants.iter().zip(vids).enumerate() {
            let mut pids = Vec::new();
            for (fi, f) in v.fields.iter().enumerate() {
                let id = field_id(&mut hs, 1, &vid, f, || {
                    format!("field {}.{}.{}", d.name, v.name, f.name)
                });
                if fields_map
                    .insert(
                        id,
                        FieldInfo {
                            decl: di,
                            variant: Some(vi),
                            index: fi,
                        },
                    )
                    .is_some()
                {
                    return Err(Error::new(
                        code::DUPLICATE,
                        format!("duplicate field {}.{}.{}", d.name, v.name, f.name),
                    ));
                }
                pids.push(id);
            }
            variants.push((vid, sorted_by_ordinal(&v.fields, &pids)));
        }
        dense_order(d.variants.iter().map(|v| v.tag), &d.name, "variant tag")?;
        dense_order(d.fields.iter().map(|f| f.ordinal), &d.name, "field ordinal")?;
        for v in &d.variants {
            dense_order(
                v.fields.iter().map(|f| f.ordinal),
                &v.name,
                "payload field ordinal",
            )?;
        }
        decl_fields.push(fids);
        decl_variants.push(variants);
    }
    // Wave 7-8: function signatures, parameters, locals.
    let mut fn_sigs: Vec<Vec<FnSigIds>> = Vec::new();
    for (d, nominal) in m.declarations.iter().zip(&nominals) {
        let mut sigs = Vec::new();
        for f in &d.functions {
            check_effects(&f.effects, &f.name)?;
            let porder = param_order(f)?;
            let flags: Vec<u32> = f
                .params
                .iter()
                .map(|p| u32::from(!p.ty.is_borrow() && !copy_of(&copy, &p.ty)))
                .collect();
            let recv = receiver_type(nominal, f.receiver).map(|t| hs.type_id(&t));
            let params: Vec<Vec<u8>> = porder
                .iter()
                .map(|&i| {
                    hs.param_sig(
                        f.params[i].ordinal,
                        &f.params[i].name,
                        &f.params[i].ty,
                        flags[i],
                    )
                })
                .collect();
            let result = hs.type_id(&f.result);
            let eff = hs.effects(&f.effects);
            let sig = hs.hash(
                || format!("function {}.{}", d.name, f.name),
                domain::FUNCTION,
                vec![
                    nominal.to_vec(),
                    u32p(f.callable.tag()),
                    u32p(f.receiver.tag()),
                    opt(recv.as_ref().map(|r| &r[..])),
                    f.name.as_bytes().to_vec(),
                    seq(params),
                    result.to_vec(),
                    eff.to_vec(),
                ],
            );
            let mut pids = Vec::new();
            for (p, fl) in f.params.iter().zip(&flags) {
                let t = hs.type_id(&p.ty);
                pids.push(hs.hash(
                    || format!("parameter {}.{}.{}", d.name, f.name, p.name),
                    domain::PARAMETER,
                    vec![
                        sig.to_vec(),
                        u32p(p.ordinal),
                        p.name.as_bytes().to_vec(),
                        t.to_vec(),
                        u32p(*fl),
                    ],
                ));
            }
            local_order(f)?;
            let mut lids = Vec::new();
            for l in &f.body.locals {
                let t = hs.type_id(&l.ty);
                lids.push(hs.hash(
                    || format!("local {}.{}.{}", d.name, f.name, l.name),
                    domain::LOCAL,
                    vec![
                        sig.to_vec(),
                        u32p(l.ordinal),
                        l.name.as_bytes().to_vec(),
                        t.to_vec(),
                        u32p(0),
                    ],
                ));
            }
            sigs.push((sig, eff, pids, lids, flags));
        }
        let mut seen: Vec<&Id> = sigs.iter().map(|s| &s.0).collect();
        seen.sort();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::new(
                code::DUPLICATE,
                format!(
                    "declaration {}: two functions with identical signatures",
                    d.name
                ),
            ));
        }
        fn_sigs.push(sigs);
    }
    // Wave 9: contracts.
    let mut contracts: Vec<Vec<Id>> = Vec::new();
    for ((d, nominal), sigs) in m.declarations.iter().zip(&nominals).zip(&fn_sigs) {
        let mut cs = Vec::new();
        for (f, (sig, ..)) in d.functions.iter().zip(sigs) {
            let recv = receiver_type(nominal, f.receiver);
            let exprs = |list: &[Expr], hs: &mut Hasher| -> Result<Vec<u8>> {
                let mut out = Vec::new();
                for e in list {
                    out.push(contract_expr(hs, f, recv.as_ref(), e)?);
                }
                Ok(seq(out))
            };
            let req = exprs(&f.requires, &mut hs)?;
            let ens = exprs(&f.ensures, &mut hs)?;
            cs.push(hs.hash(
                || format!("contract {}.{}", d.name, f.name),
                domain::FUNCTION_CONTRACT,
                vec![sig.to_vec(), seq(Vec::<Vec<u8>>::new()), req, ens],
            ));
        }
        contracts.push(cs);
    }
    // Wave 10: declaration interfaces.
    let mut interfaces = Vec::new();
    for (di, (d, nominal)) in m.declarations.iter().zip(&nominals).enumerate() {
        let flags = u32::from(copy[nominal]);
        let by_ord = sorted_by_ordinal(&d.fields, &decl_fields[di]);
        let public: Vec<Vec<u8>> = by_ord
            .iter()
            .filter(|id| d.fields[fields_map[*id].index].visibility == Visibility::Public)
            .map(|id| id.to_vec())
            .collect();
        let variants = variant_schemas(d, &decl_variants[di]);
        let mut pubfns: Vec<(Id, Vec<u8>)> = d
            .functions
            .iter()
            .zip(&fn_sigs[di])
            .zip(&contracts[di])
            .filter(|((f, _), _)| f.visibility == Visibility::Public)
            .map(|((f, s), c)| {
                (
                    s.0,
                    seq([s.0.to_vec(), u32p(f.visibility.tag()), c.to_vec()]),
                )
            })
            .collect();
        pubfns.sort_by_key(|a| a.0);
        interfaces.push(hs.hash(
            || format!("declaration interface {}", d.name),
            domain::DECLARATION_INTERFACE,
            vec![
                nominal.to_vec(),
                u32p(d.visibility.tag()),
                u32p(flags),
                seq(public),
                variants,
                seq(pubfns.into_iter().map(|(_, e)| e)),
            ],
        ));
    }
    // Wave 11: module interface.
    let mut deps: BTreeMap<Id, Id> = BTreeMap::new();
    for i in &m.imports {
        let dns = import_ns[i.module.as_str()];
        if let Some(prev) = deps.insert(dns, i.interface)
            && prev != i.interface
        {
            return Err(Error::new(
                code::IMPORT,
                format!(
                    "imports of module {} carry different interface digests",
                    i.module
                ),
            ));
        }
    }
    let mut exports: Vec<(Id, Id)> = m
        .declarations
        .iter()
        .zip(&nominals)
        .zip(&interfaces)
        .filter(|((d, _), _)| d.visibility == Visibility::Public)
        .map(|((_, n), i)| (*n, *i))
        .collect();
    exports.sort();
    let module_interface = hs.hash(
        || format!("module interface {}", m.name),
        domain::MODULE_INTERFACE,
        vec![
            ns.to_vec(),
            u32p(m.profile.tag()),
            catalog.to_vec(),
            seq(deps.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
            seq(exports.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
        ],
    );
    Ok(Pending {
        hs,
        ns,
        catalog,
        imports,
        nominals,
        copy,
        fields_map,
        decl_fields,
        decl_variants,
        fn_sigs,
        contracts,
        interfaces,
        module_interface,
    })
}

impl Pending {
    /// The body digest of function `fi` of declaration `di`.
    fn body(&self, hs: &mut Hasher, m: &Module, di: usize, fi: usize) -> Result<Id> {
        self.body_split(hs, m, di, fi, Split::None)
    }

    fn body_split(
        &self,
        hs: &mut Hasher,
        m: &Module,
        di: usize,
        fi: usize,
        split: Split<'_>,
    ) -> Result<Id> {
        let d = &m.declarations[di];
        let (sig, _, pids, lids, _) = &self.fn_sigs[di][fi];
        body_digest(
            hs,
            d,
            &d.functions[fi],
            sig,
            pids,
            lids,
            &self.nominals[di],
            &self.fields_map,
            m,
            split,
        )
    }

    /// The function with the most body operations and that count (the one a
    /// validator shares between two threads).
    pub fn largest_body(m: &Module) -> Option<((usize, usize), usize)> {
        let mut best: Option<((usize, usize), usize)> = None;
        for (di, d) in m.declarations.iter().enumerate() {
            for (fi, f) in d.functions.iter().enumerate() {
                let n = f.body.blocks.iter().map(|b| b.ops.len()).sum::<usize>()
                    + f.body.edges.iter().map(|e| e.drops.len()).sum::<usize>();
                if best.is_none_or(|(_, b)| n > b) {
                    best = Some(((di, fi), n));
                }
            }
        }
        best
    }

    /// [`Pending::bodies`], except that the operations of function
    /// `at = (di, fi)` from the `k`th on (canonical order) are not encoded
    /// here: `tail()` returns their encoding, made by another thread with
    /// [`Pending::body_tail`]. The digests and the first error are the same.
    pub fn bodies_sharing(
        &self,
        hs: &mut Hasher,
        m: &Module,
        at: (usize, usize),
        k: usize,
        tail: &mut dyn FnMut() -> Result<Vec<u8>>,
    ) -> Result<Vec<Vec<Id>>> {
        let mut tail = Some(tail);
        let mut out = Vec::with_capacity(m.declarations.len());
        for (di, d) in m.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(d.functions.len());
            for fi in 0..d.functions.len() {
                let split = match tail.take_if(|_| (di, fi) == at) {
                    Some(t) => Split::Head(k, t),
                    None => Split::None,
                };
                fns.push(self.body_split(hs, m, di, fi, split)?);
            }
            out.push(fns);
        }
        Ok(out)
    }

    /// The encoding of the body operations of function `(di, fi)` from the
    /// `k`th on, as [`Pending::bodies_sharing`] hashes them.
    pub fn body_tail(
        &self,
        hs: &mut Hasher,
        m: &Module,
        (di, fi): (usize, usize),
        k: usize,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.body_split(hs, m, di, fi, Split::Tail(k, &mut out))?;
        Ok(out)
    }

    /// Every function-body digest (per declaration, per function), in the
    /// order [`Pending::finish`] computes them, so the first error is the
    /// same; `hs` is a hasher taken from this one (see [`Pending::provisional`]).
    pub fn bodies(&self, hs: &mut Hasher, m: &Module) -> Result<Vec<Vec<Id>>> {
        let mut out = Vec::with_capacity(m.declarations.len());
        for (di, d) in m.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(d.functions.len());
            for fi in 0..d.functions.len() {
                fns.push(self.body(hs, m, di, fi)?);
            }
            out.push(fns);
        }
        Ok(out)
    }

    /// Identities without wave 12 and 13: body and definition digests are
    /// zero and the module content is `content` (the carried one, compared
    /// by the caller once the bodies are known). Everything a validator
    /// needs before the bodies (types, fields, Copy flags, signatures) is
    /// exact; the constants are those hashed so far.
    pub fn provisional(&self, content: Id) -> Identities {
        let decls = (0..self.nominals.len())
            .map(|di| DeclIds {
                nominal: self.nominals[di],
                copy: self.copy[&self.nominals[di]],
                interface: self.interfaces[di],
                definition: [0; 32],
                fields: self.decl_fields[di].clone(),
                variants: self.decl_variants[di].clone(),
                functions: self.fn_sigs[di]
                    .iter()
                    .zip(&self.contracts[di])
                    .map(|((sig, eff, pids, lids, flags), contract)| FnIds {
                        sig: *sig,
                        contract: *contract,
                        body: [0; 32],
                        effects: *eff,
                        params: pids.clone(),
                        locals: lids.clone(),
                        param_flags: flags.clone(),
                    })
                    .collect(),
            })
            .collect();
        Identities {
            namespace: self.ns,
            catalog: self.catalog,
            imports: self.imports.clone(),
            decls,
            module_interface: self.module_interface,
            module_content: content,
            fields: self.fields_map.clone(),
            copy: self.copy.clone(),
            types: self.hs.types.clone(),
            constants: self.hs.constants.clone(),
            body_constants: false,
        }
    }

    /// Waves 12 and 13. `bodies` are the digests from [`Pending::bodies`];
    /// without them each body is hashed here, interleaved with the
    /// definitions (the traced order of the golden vectors).
    pub fn finish(self, m: &Module, bodies: Option<&[Vec<Id>]>) -> Result<(Identities, Vec<Fact>)> {
        let mut pending = self;
        let mut hs = std::mem::replace(&mut pending.hs, Hasher::new(false));
        let Pending {
            ns,
            catalog,
            imports,
            nominals,
            copy,
            fields_map,
            decl_fields,
            decl_variants,
            fn_sigs,
            contracts,
            interfaces,
            module_interface,
            ..
        } = &pending;
        let (ns, catalog, module_interface) = (*ns, *catalog, *module_interface);
        // Wave 12: bodies and declaration definitions.
        let mut decls = Vec::new();
        let mut defs = Vec::new();
        let types_snapshot_copy = copy.clone();
        for (di, (d, nominal)) in m.declarations.iter().zip(nominals).enumerate() {
            let mut fns = Vec::new();
            for (fi, ((_, (sig, eff, pids, lids, flags)), contract)) in d
                .functions
                .iter()
                .zip(&fn_sigs[di])
                .zip(&contracts[di])
                .enumerate()
            {
                let body = match bodies {
                    Some(b) => *b.get(di).and_then(|fs| fs.get(fi)).ok_or_else(|| {
                        Error::new(code::MODEL, "internal error: missing body digest")
                    })?,
                    None => pending.body(&mut hs, m, di, fi)?,
                };
                fns.push(FnIds {
                    sig: *sig,
                    contract: *contract,
                    body,
                    effects: *eff,
                    params: pids.clone(),
                    locals: lids.clone(),
                    param_flags: flags.clone(),
                });
            }
            let flags = u32::from(copy[nominal]);
            let by_ord = sorted_by_ordinal(&d.fields, &decl_fields[di]);
            let mut defs_list: Vec<(Id, Vec<u8>)> = d
                .functions
                .iter()
                .zip(&fns)
                .map(|(f, ids)| {
                    (
                        ids.sig,
                        seq([
                            ids.sig.to_vec(),
                            u32p(f.visibility.tag()),
                            ids.contract.to_vec(),
                            ids.body.to_vec(),
                        ]),
                    )
                })
                .collect();
            defs_list.sort_by_key(|a| a.0);
            let definition = hs.hash(
                || format!("declaration definition {}", d.name),
                domain::DECLARATION_DEFINITION,
                vec![
                    nominal.to_vec(),
                    interfaces[di].to_vec(),
                    u32p(d.visibility.tag()),
                    u32p(flags),
                    seq(by_ord.iter().map(|id| id.to_vec())),
                    variant_schemas(d, &decl_variants[di]),
                    seq(defs_list.into_iter().map(|(_, e)| e)),
                ],
            );
            defs.push((*nominal, definition));
            decls.push(DeclIds {
                nominal: *nominal,
                copy: types_snapshot_copy[nominal],
                interface: interfaces[di],
                definition,
                fields: decl_fields[di].clone(),
                variants: decl_variants[di].clone(),
                functions: fns,
            });
        }
        // Wave 13: module content.
        let mut imp: Vec<(Id, Id)> = imports
            .iter()
            .zip(&m.imports)
            .map(|(n, i)| (*n, i.interface))
            .collect();
        imp.sort();
        defs.sort();
        let module_content = hs.hash(
            || format!("module content {}", m.name),
            domain::MODULE_CONTENT,
            vec![
                ns.to_vec(),
                u32p(m.profile.tag()),
                u32p(m.mode.tag()),
                catalog.to_vec(),
                seq(imp.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
                seq(defs.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
                module_interface.to_vec(),
            ],
        );
        let facts = hs.trace.take().unwrap_or_default();
        Ok((
            Identities {
                namespace: ns,
                catalog,
                imports: imports.clone(),
                decls,
                module_interface,
                module_content,
                fields: fields_map.clone(),
                copy: copy.clone(),
                types: hs.types,
                constants: hs.constants,
                body_constants: bodies.is_none(),
            },
            facts,
        ))
    }
}

fn sorted_by_ordinal(fields: &[Field], ids: &[Id]) -> Vec<Id> {
    let mut v: Vec<(u32, Id)> = fields
        .iter()
        .zip(ids)
        .map(|(f, id)| (f.ordinal, *id))
        .collect();
    v.sort();
    v.into_iter().map(|(_, id)| id).collect()
}

/// Variant-schema list in tag order; `d` gives each variant's tag.
fn variant_schemas(d: &Declaration, variants: &[(Id, Vec<Id>)]) -> Vec<u8> {
    let mut order: Vec<usize> = (0..variants.len()).collect();
    order.sort_by_key(|&i| d.variants[i].tag);
    seq(order.iter().map(|&i| {
        let (vid, fs) = &variants[i];
        seq([vid.to_vec(), seq(fs.iter().map(|f| f.to_vec()))])
    }))
}

fn field_id(
    hs: &mut Hasher,
    owner_kind: u32,
    owner: &Id,
    f: &Field,
    what: impl FnOnce() -> String,
) -> Id {
    let t = hs.type_id(&f.ty);
    hs.hash(
        what,
        domain::FIELD,
        vec![
            u32p(owner_kind),
            owner.to_vec(),
            u32p(f.ordinal),
            f.name.as_bytes().to_vec(),
            u32p(f.visibility.tag()),
            u32p(f.mutability.tag()),
            t.to_vec(),
            u32p(0),
        ],
    )
}

/// The exact type of a contract operand.
pub fn contract_operand_type(
    f: &Function,
    recv: Option<&Type>,
    e: &Expr,
    op: &ContractOperand,
) -> Result<Type> {
    Ok(match op {
        ContractOperand::Const(c) => Type::Scalar(c.kind),
        ContractOperand::Receiver => recv.cloned().ok_or_else(|| {
            Error::new(
                code::SHAPE,
                format!(
                    "{}: contract receiver operand without a runtime receiver",
                    f.name
                ),
            )
        })?,
        ContractOperand::Param(p) => f
            .params
            .iter()
            .find(|x| x.ordinal == *p)
            .map(|x| x.ty.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: contract names missing parameter {p}", f.name),
                )
            })?,
        ContractOperand::Result => f.result.clone(),
        ContractOperand::Value(i) => e
            .ops
            .get(*i as usize)
            .map(|o| o.result.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: contract value {i} out of range", f.name),
                )
            })?,
    })
}

fn contract_expr(hs: &mut Hasher, f: &Function, recv: Option<&Type>, e: &Expr) -> Result<Vec<u8>> {
    let mut ops = Vec::new();
    let last = e.ops.len().saturating_sub(1);
    for (i, op) in e.ops.iter().enumerate() {
        let mut operands = Vec::new();
        for o in &op.operands {
            let t = contract_operand_type(f, recv, e, o)?;
            let tid = hs.type_id(&t);
            let (kind, reference) = match o {
                ContractOperand::Const(c) => (2, hs.constant(c)?.to_vec()),
                ContractOperand::Receiver => (4, u32p(0)),
                ContractOperand::Param(p) => (5, u32p(*p)),
                ContractOperand::Result => (6, u32p(0)),
                ContractOperand::Value(v) => (7, u32p(*v)),
            };
            operands.push(seq([u32p(kind), reference, tid.to_vec()]));
        }
        let rt = hs.type_id(&op.result);
        ops.push(seq([
            u32p(i as u32),
            u32p(op.tag),
            rt.to_vec(),
            seq(operands),
            u32p(op.aux0),
            u32p(op.aux1),
            opt(op.reference.as_ref().map(|r| &r[..])),
            u32p(u32::from(i == last)),
        ]));
    }
    Ok(seq(ops))
}

/// Lookup tables over one function's semantic keys (avoids quadratic scans).
pub struct FnIndex<'a> {
    /// The function.
    pub f: &'a Function,
    /// Block ID to index in `Body::blocks`.
    pub blocks: FastMap<u32, usize>,
    /// Edge ID to index in `Body::edges`.
    pub edges: FastMap<u32, usize>,
    /// Path key to index in `Body::paths`.
    pub paths: FastMap<&'a PathKey, usize>,
}

impl<'a> FnIndex<'a> {
    /// Builds the index (duplicate keys are rejected elsewhere).
    pub fn new(f: &'a Function) -> Self {
        FnIndex {
            f,
            blocks: f
                .body
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            edges: f
                .body
                .edges
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            paths: f
                .body
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| (&p.key, i))
                .collect(),
        }
    }
    /// Looks up a flow or recipe operation.
    pub fn op(&self, r: &OpRef) -> Option<&'a Op> {
        match r {
            OpRef::Flow { block, ordinal } => self.f.body.blocks[*self.blocks.get(block)?]
                .ops
                .get(*ordinal as usize),
            OpRef::Recipe { edge, ordinal } => self.f.body.edges[*self.edges.get(edge)?]
                .drops
                .get(*ordinal as usize),
        }
    }
    /// Looks up an owned path.
    pub fn path(&self, k: &PathKey) -> Option<&'a OwnedPath> {
        self.paths.get(k).map(|&i| &self.f.body.paths[i])
    }
    /// The exact type of a body operand (`None` for a block operand).
    pub fn operand_type(&self, o: &Operand) -> Result<Option<Type>> {
        Ok(self.operand_type_ref(o)?.cloned())
    }
    /// [`FnIndex::operand_type`], borrowed.
    pub fn operand_type_ref(&self, o: &Operand) -> Result<Option<&'a Type>> {
        let f = self.f;
        Ok(match o {
            Operand::Value(r) => {
                let op = self.op(r).ok_or_else(|| {
                    Error::new(
                        code::REF,
                        format!("{}: operand names a missing operation {r:?}", f.name),
                    )
                })?;
                Some(op.result.as_ref().ok_or_else(|| {
                    Error::new(
                        code::SHAPE,
                        format!(
                            "{}: operand names operation {r:?} that has no result",
                            f.name
                        ),
                    )
                })?)
            }
            Operand::Place(k) => Some(self.path(k).map(|p| &p.ty).ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: operand names a missing owned path", f.name),
                )
            })?),
            Operand::Const(c) => Some(c.kind.static_type()),
            Operand::Block(_) => None,
        })
    }
}

/// Derived initialization ordinal and entry state of an owned path.
pub fn path_facts(
    f: &Function,
    k: &PathKey,
    fields: &FastMap<Id, FieldInfo>,
    m: &Module,
) -> Result<(u32, EntryState)> {
    let state = match k.root {
        Root::Receiver | Root::Param(_) => EntryState::Initialized,
        Root::Local(_) | Root::Temp(_) => EntryState::Uninitialized,
    };
    let ordinal = if let Some(last) = k.fields.last() {
        let info = fields.get(last).ok_or_else(|| {
            Error::new(
                code::REF,
                format!(
                    "{}: owned path names a field that is not a local declaration field",
                    f.name
                ),
            )
        })?;
        let d = &m.declarations[info.decl];
        match info.variant {
            None => d.fields[info.index].ordinal,
            Some(v) => d.variants[v].fields[info.index].ordinal,
        }
    } else {
        match &k.root {
            Root::Receiver => 0,
            Root::Param(p) => match f.receiver {
                ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned => p + 1,
                _ => *p,
            },
            Root::Local(l) => *l,
            Root::Temp(OpRef::Flow { block, ordinal }) => {
                let mut n = 0u32;
                for bi in block_order(f)? {
                    let b = &f.body.blocks[bi];
                    if b.id == *block {
                        n += *ordinal;
                        break;
                    }
                    n += b.ops.len() as u32;
                }
                n
            }
            Root::Temp(OpRef::Recipe { .. }) => {
                return Err(Error::new(
                    code::SHAPE,
                    format!("{}: a cleanup recipe cannot produce a temporary", f.name),
                ));
            }
        }
    };
    Ok((ordinal, state))
}

/// Appends `F(P)` / `S` framing straight into one reusable buffer, patching
/// lengths and counts after the content, so hashing a body allocates nothing
/// per part.
mod enc {
    /// Starts `F(...)`: an 8-byte length placeholder; returns its position.
    #[inline]
    pub fn begin(buf: &mut Vec<u8>) -> usize {
        let at = buf.len();
        buf.extend_from_slice(&[0u8; 8]);
        at
    }
    /// Ends the `F(...)` begun at `at`.
    #[inline]
    pub fn end(buf: &mut [u8], at: usize) {
        let n = (buf.len() - at - 8) as u64;
        buf[at..at + 8].copy_from_slice(&n.to_le_bytes());
    }
    /// Starts the count of an `S` list; returns its position.
    #[inline]
    pub fn count(buf: &mut Vec<u8>) -> usize {
        let at = buf.len();
        buf.extend_from_slice(&[0u8; 4]);
        at
    }
    /// Writes the element count `n` at `at`.
    #[inline]
    pub fn set_count(buf: &mut [u8], at: usize, n: usize) {
        buf[at..at + 4].copy_from_slice(&(n as u32).to_le_bytes());
    }
    /// `F(bytes)`.
    #[inline]
    pub fn el(buf: &mut Vec<u8>, bytes: &[u8]) {
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    }
    /// `F(u32le(v))`.
    #[inline]
    pub fn el_u32(buf: &mut Vec<u8>, v: u32) {
        buf.extend_from_slice(&4u64.to_le_bytes());
        buf.extend_from_slice(&v.to_le_bytes());
    }
    /// `F(optional)` of raw bytes.
    #[inline]
    pub fn el_opt(buf: &mut Vec<u8>, v: Option<&[u8]>) {
        match v {
            None => buf.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0]),
            Some(p) => {
                buf.extend_from_slice(&(p.len() as u64 + 1).to_le_bytes());
                buf.push(1);
                buf.extend_from_slice(p);
            }
        }
    }
}

/// The framed encodings of a function body's keys and elements.
struct BodyEnc<'c, 'a> {
    ctx: &'c FnCtx<'a>,
    /// `F(S(sig, id))` without the trailing 4-byte id: block, edge and loan keys.
    key: [u8; 60],
    /// `F(op key)` up to the ordinal, with zero kind and owner (patched per key).
    op: [u8; 136],
}

impl<'c, 'a> BodyEnc<'c, 'a> {
    fn new(ctx: &'c FnCtx<'a>) -> Self {
        let mut key = [0u8; 60];
        key[0..8].copy_from_slice(&56u64.to_le_bytes());
        key[8..12].copy_from_slice(&2u32.to_le_bytes());
        key[12..20].copy_from_slice(&32u64.to_le_bytes());
        key[20..52].copy_from_slice(&ctx.sig);
        key[52..60].copy_from_slice(&4u64.to_le_bytes());
        let mut op = [0u8; 136];
        op[0..8].copy_from_slice(&132u64.to_le_bytes());
        op[8..12].copy_from_slice(&4u32.to_le_bytes());
        op[12..20].copy_from_slice(&32u64.to_le_bytes());
        op[20..52].copy_from_slice(&ctx.sig);
        op[52..60].copy_from_slice(&4u64.to_le_bytes());
        // 60..64 kind
        op[64..72].copy_from_slice(&56u64.to_le_bytes());
        op[72..124].copy_from_slice(&key[8..60]);
        // 124..128 owner (inside the owner key), then the ordinal's frame;
        // the ordinal itself is appended.
        op[128..136].copy_from_slice(&4u64.to_le_bytes());
        BodyEnc { ctx, key, op }
    }
    /// `F(block/edge/loan key)`.
    #[inline]
    fn key_el(&self, buf: &mut Vec<u8>, id: u32) {
        buf.extend_from_slice(&self.key);
        buf.extend_from_slice(&id.to_le_bytes());
    }
    /// The key's content (inside an optional).
    #[inline]
    fn key_content(&self, buf: &mut Vec<u8>, id: u32) {
        buf.extend_from_slice(&self.key[8..]);
        buf.extend_from_slice(&id.to_le_bytes());
    }
    /// `F(op key)`.
    #[inline]
    fn op_el(&self, buf: &mut Vec<u8>, r: &OpRef) {
        self.op_at(buf, r, 0);
    }
    #[inline]
    fn op_content(&self, buf: &mut Vec<u8>, r: &OpRef) {
        self.op_at(buf, r, 8);
    }
    #[inline]
    fn op_at(&self, buf: &mut Vec<u8>, r: &OpRef, from: usize) {
        let (kind, owner, ordinal) = match r {
            OpRef::Flow { block, ordinal } => (0u32, *block, *ordinal),
            OpRef::Recipe { edge, ordinal } => (1u32, *edge, *ordinal),
        };
        let base = buf.len();
        buf.extend_from_slice(&self.op[from..]);
        buf[base + 60 - from..base + 64 - from].copy_from_slice(&kind.to_le_bytes());
        buf[base + 124 - from..base + 128 - from].copy_from_slice(&owner.to_le_bytes());
        buf.extend_from_slice(&ordinal.to_le_bytes());
    }
    /// `F(owned-path key)`.
    fn path_el(&self, buf: &mut Vec<u8>, k: &PathKey) -> Result<()> {
        let at = enc::begin(buf);
        self.path_content(buf, k)?;
        enc::end(buf, at);
        Ok(())
    }
    /// Owned-path key content `S(sig, root kind, root identity, S(field IDs))`.
    fn path_content(&self, buf: &mut Vec<u8>, k: &PathKey) -> Result<()> {
        buf.extend_from_slice(&4u32.to_le_bytes());
        enc::el(buf, &self.ctx.sig);
        match &k.root {
            Root::Receiver => {
                enc::el_u32(buf, 0);
                enc::el_u32(buf, 0);
            }
            Root::Param(p) => {
                enc::el_u32(buf, 1);
                enc::el(buf, &self.ctx.param_id(*p)?);
            }
            Root::Local(l) => {
                enc::el_u32(buf, 2);
                enc::el(buf, &self.ctx.local_id(*l)?);
            }
            Root::Temp(r) => {
                enc::el_u32(buf, 3);
                self.op_el(buf, r);
            }
        }
        buf.extend_from_slice(&(4 + 40 * k.fields.len() as u64).to_le_bytes());
        buf.extend_from_slice(&(k.fields.len() as u32).to_le_bytes());
        for f in &k.fields {
            enc::el(buf, f);
        }
        Ok(())
    }
    /// `F(logical auxiliary)`.
    fn aux_el(&self, hs: &mut Hasher, buf: &mut Vec<u8>, a: &Aux) -> Result<()> {
        if let Aux::None = a {
            // F(S(u32le(0), empty)): the most common auxiliary, as one copy.
            const NONE_EL: [u8; 32] = [
                24, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0, 0, 0, 0,
            ];
            buf.extend_from_slice(&NONE_EL);
            return Ok(());
        }
        let at = enc::begin(buf);
        buf.extend_from_slice(&2u32.to_le_bytes());
        enc::el_u32(buf, a.kind());
        match a {
            Aux::None => enc::el(buf, &[]),
            Aux::Lit(v) => enc::el_u32(buf, *v),
            Aux::Type(t) => enc::el(buf, &hs.type_id(t)),
            Aux::Decl(id)
            | Aux::Field(id)
            | Aux::Func(id)
            | Aux::CatalogFunc(id)
            | Aux::Variant(id) => enc::el(buf, id),
            Aux::Effects(e) => {
                check_effects(e, &self.ctx.f.name)?;
                enc::el(buf, &hs.effects(e));
            }
            Aux::Loan(l) | Aux::Edge(l) | Aux::Block(l) => self.key_el(buf, *l),
            Aux::Path(k) => self.path_el(buf, k)?,
            Aux::Op(r) => self.op_el(buf, r),
        }
        enc::end(buf, at);
        Ok(())
    }
}

/// Hashes (or, when tracing, materialises) one `S` list part of `n` elements,
/// each appended framed by `el`. Streaming makes two passes: the first only
/// measures the part length that precedes the elements.
fn list_part<E>(
    sha: Option<&mut sha2::Sha256>,
    buf: &mut Vec<u8>,
    n: usize,
    len_of: Option<&dyn Fn(usize) -> u64>,
    mut el: E,
) -> Result<Option<Vec<u8>>>
where
    E: FnMut(&mut Vec<u8>, usize) -> Result<()>,
{
    use sha2::Digest as _;
    const FLUSH: usize = 1 << 15;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        for i in 0..n {
            el(&mut part, i)?;
        }
        enc::set_count(&mut part, at, n);
        return Ok(Some(part));
    };
    let mut len: u64 = 4;
    for i in 0..n {
        match len_of {
            Some(f) => len += f(i),
            None => {
                buf.clear();
                el(buf, i)?;
                len += buf.len() as u64;
            }
        }
    }
    let n32 = u32::try_from(n).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut written: u64 = 4;
    for i in 0..n {
        el(buf, i)?;
        if buf.len() >= FLUSH {
            written += buf.len() as u64;
            sha.update(&buf[..]);
            buf.clear();
        }
    }
    written += buf.len() as u64;
    sha.update(&buf[..]);
    buf.clear();
    if written != len {
        // The arithmetic length disagrees with the encoding: never return a digest.
        return Err(Error::new(
            code::MODEL,
            "internal error: identity list length mismatch",
        ));
    }
    Ok(None)
}

/// [`list_part`] over the items of an iterator that `items` makes afresh
/// for each pass; `len_of` gives each element's framed length.
///
/// With `tail = (k, bytes)`, only the first `k` elements are encoded here;
/// `bytes()` returns the encoding of the rest (made by another thread),
/// hashed in their place.
fn list_part_iter<T, I, E>(
    sha: Option<&mut sha2::Sha256>,
    buf: &mut Vec<u8>,
    items: impl Fn() -> I,
    len_of: impl Fn(&T) -> u64,
    mut el: E,
    tail: Option<(usize, &mut TailBytes<'_>)>,
) -> Result<Option<Vec<u8>>>
where
    I: Iterator<Item = T>,
    E: FnMut(&mut Vec<u8>, T) -> Result<()>,
{
    use sha2::Digest as _;
    const FLUSH: usize = 1 << 15;
    let Some(sha) = sha else {
        let mut part = Vec::new();
        let at = enc::count(&mut part);
        let mut n = 0usize;
        for item in items() {
            el(&mut part, item)?;
            n += 1;
        }
        enc::set_count(&mut part, at, n);
        return Ok(Some(part));
    };
    let (mut len, mut n) = (4u64, 0usize);
    for item in items() {
        len += len_of(&item);
        n += 1;
    }
    let n32 = u32::try_from(n).map_err(|_| Error::new(code::LIMIT, "list too long"))?;
    sha.update(len.to_le_bytes());
    sha.update(n32.to_le_bytes());
    buf.clear();
    let mut written: u64 = 4;
    let here = tail.as_ref().map_or(n, |t| t.0);
    for item in items().take(here) {
        el(buf, item)?;
        if buf.len() >= FLUSH {
            written += buf.len() as u64;
            sha.update(&buf[..]);
            buf.clear();
        }
    }
    written += buf.len() as u64;
    sha.update(&buf[..]);
    buf.clear();
    if let Some((_, bytes)) = tail {
        let rest = bytes()?;
        written += rest.len() as u64;
        sha.update(&rest);
    }
    if written != len {
        // The arithmetic length disagrees with the encoding: never return a digest.
        return Err(Error::new(
            code::MODEL,
            "internal error: identity list length mismatch",
        ));
    }
    Ok(None)
}

/// Returns the encoding of a body's shared operations (made elsewhere).
type TailBytes<'t> = dyn FnMut() -> Result<Vec<u8>> + 't;

/// How [`body_digest`] shares a body's operation list with another thread.
enum Split<'t> {
    /// Everything here.
    None,
    /// Encode and hash the first `k` operations here; the closure returns
    /// the encoding of the rest, made elsewhere with [`Split::Tail`].
    Head(usize, &'t mut dyn FnMut() -> Result<Vec<u8>>),
    /// Only encode operations `k..` into the buffer (no digest).
    Tail(usize, &'t mut Vec<u8>),
}

#[allow(clippy::too_many_arguments)]
fn body_digest(
    hs: &mut Hasher,
    d: &Declaration,
    f: &Function,
    sig: &Id,
    params: &[Id],
    locals: &[Id],
    owner: &Id,
    fields: &FastMap<Id, FieldInfo>,
    m: &Module,
    split: Split<'_>,
) -> Result<Id> {
    use sha2::Digest as _;
    let ctx = FnCtx {
        sig: *sig,
        f,
        params,
        locals,
        receiver_type: receiver_type(owner, f.receiver),
        flow_index: BTreeMap::new(),
    };
    let _ = (&ctx.receiver_type, &ctx.flow_index);
    let be = BodyEnc::new(&ctx);
    let border = block_order(f)?;
    let eorder = edge_order(f)?;
    let index = FnIndex::new(f);
    let lorder = loan_order(f)?;
    let porder = path_order(sig, f, params, locals)?;
    let lorder_locals = local_order(f)?;
    // Path facts need the flow-op base of each block (temporary ordinals).
    let mut path_facts_v = Vec::with_capacity(porder.len());
    for &pi in &porder {
        path_facts_v.push(path_facts(f, &f.body.paths[pi].key, fields, m)?);
    }
    // The body operations in canonical order (flow, then recipes), as an
    // iterator made twice (length pass, then encoding) instead of a
    // collected list: that list was megabytes of fresh pages per decode.
    let ops = || {
        border
            .iter()
            .flat_map(|&bi| {
                let b = &f.body.blocks[bi];
                b.ops.iter().enumerate().map(move |(o, op)| {
                    (
                        OpRef::Flow {
                            block: b.id,
                            ordinal: o as u32,
                        },
                        op,
                    )
                })
            })
            .chain(eorder.iter().flat_map(|&ei| {
                let e = &f.body.edges[ei];
                e.drops.iter().enumerate().map(move |(o, op)| {
                    (
                        OpRef::Recipe {
                            edge: e.id,
                            ordinal: o as u32,
                        },
                        op,
                    )
                })
            }))
    };
    // The type-instance ID of a body operand, without cloning its type; an
    // unresolved operand gets `FnIndex::operand_type`'s error.
    // Block and edge IDs are dense (checked by `block_order`, `edge_order`),
    // so the canonical order is also the index by ID.
    let (block_at, edge_at) = (&border, &eorder);
    let op_at = |r: &OpRef| -> Option<&Op> {
        match *r {
            OpRef::Flow { block, ordinal } => f
                .body
                .blocks
                .get(*block_at.get(block as usize)?)?
                .ops
                .get(ordinal as usize),
            OpRef::Recipe { edge, ordinal } => f
                .body
                .edges
                .get(*edge_at.get(edge as usize)?)?
                .drops
                .get(ordinal as usize),
        }
    };
    let operand_type_id = |hs: &mut Hasher, o: &Operand| -> Result<Option<Id>> {
        let t: Option<&Type> = match o {
            Operand::Value(r) => op_at(r).and_then(|op| op.result.as_ref()),
            Operand::Place(k) => index.path(k).map(|p| &p.ty),
            Operand::Const(c) => return Ok(Some(hs.type_id(&Type::Scalar(c.kind)))),
            Operand::Block(_) => return Ok(None),
        };
        match t {
            Some(t) => Ok(Some(hs.type_id(t))),
            None => Err(index
                .operand_type(o)
                .err()
                .unwrap_or_else(|| Error::new(code::REF, "unresolved body operand"))),
        }
    };
    let tracing = hs.trace.is_some();
    // One framed body-operation element.
    let op_enc = |hs: &mut Hasher, b: &mut Vec<u8>, (r, op): (OpRef, &Op)| -> Result<()> {
        let r = &r;
        if tracing {
            // Record the operands' identities before the result's, in use order.
            for o in &op.operands {
                operand_type_id(hs, o)?;
                if let Operand::Const(c) = o {
                    hs.constant(c)?;
                }
            }
        }
        let at = enc::begin(b);
        b.extend_from_slice(&7u32.to_le_bytes());
        be.op_el(b, r);
        enc::el_u32(b, op.tag);
        match &op.result {
            Some(t) => enc::el_opt(b, Some(&hs.type_id(t))),
            None => enc::el_opt(b, None),
        }
        let k = enc::begin(b);
        let c = enc::count(b);
        for o in &op.operands {
            let t = operand_type_id(hs, o)?;
            let oe = enc::begin(b);
            b.extend_from_slice(&3u32.to_le_bytes());
            match o {
                Operand::Value(r) => {
                    enc::el_u32(b, 0);
                    be.op_el(b, r);
                }
                Operand::Place(k) => {
                    enc::el_u32(b, 1);
                    be.path_el(b, k)?;
                }
                Operand::Const(c) => {
                    enc::el_u32(b, 2);
                    let id = match hs.constants.get(c).copied() {
                        Some(id) if tracing => id,
                        _ => hs.constant(c)?,
                    };
                    enc::el(b, &id);
                }
                Operand::Block(blk) => {
                    enc::el_u32(b, 3);
                    be.key_el(b, *blk);
                }
            }
            enc::el_opt(b, t.as_ref().map(|t| &t[..]));
            enc::end(b, oe);
        }
        enc::set_count(b, c, op.operands.len());
        enc::end(b, k);
        be.aux_el(hs, b, &op.aux0)?;
        be.aux_el(hs, b, &op.aux1)?;
        enc::el_u32(b, 0);
        enc::end(b, at);
        Ok(())
    };
    let (head, tail_out) = match split {
        Split::None => (None, None),
        Split::Head(k, bytes) => (Some((k, bytes)), None),
        Split::Tail(k, out) => (None, Some((k, out))),
    };
    if let Some((k, out)) = tail_out {
        // Another thread hashes this body: encode its operations from `k` on
        // (into a buffer of the exact size: growing it copied megabytes).
        let len: u64 = ops().skip(k).map(|(_, op)| op_el_len(op)).sum();
        out.reserve(usize::try_from(len).unwrap_or(0));
        for item in ops().skip(k) {
            op_enc(hs, out, item)?;
        }
        return Ok([0; 32]);
    }
    let mut sha = sha2::Sha256::new();
    if !tracing {
        sha.update(domain::FUNCTION_BODY.as_bytes());
        sha.update([0u8]);
        sha.update(32u64.to_le_bytes());
        sha.update(sig);
    }
    let mut buf = Vec::with_capacity(1 << 16);
    let mut parts: Vec<Vec<u8>> = vec![sig.to_vec()];
    macro_rules! part {
        ($n:expr, len $len:expr, $el:expr) => {{
            let p = list_part(
                (!tracing).then_some(&mut sha),
                &mut buf,
                $n,
                Some($len),
                $el,
            )?;
            if let Some(p) = p {
                parts.push(p);
            }
        }};
        ($n:expr, $el:expr) => {{
            let p = list_part((!tracing).then_some(&mut sha), &mut buf, $n, None, $el)?;
            if let Some(p) = p {
                parts.push(p);
            }
        }};
    }
    // Local IDs.
    part!(lorder_locals.len(), |b: &mut Vec<u8>, i: usize| {
        enc::el(b, &locals[lorder_locals[i]]);
        Ok(())
    });
    // Blocks: (block key, entry flag, flow op keys).
    let block_len = |i: usize| 100 + 140 * f.body.blocks[border[i]].ops.len() as u64;
    part!(
        border.len(),
        len & block_len,
        |b: &mut Vec<u8>, i: usize| {
            let blk = &f.body.blocks[border[i]];
            let at = enc::begin(b);
            b.extend_from_slice(&3u32.to_le_bytes());
            be.key_el(b, blk.id);
            enc::el_u32(b, u32::from(blk.id == 0));
            let k = enc::begin(b);
            let c = enc::count(b);
            for o in 0..blk.ops.len() as u32 {
                be.op_el(
                    b,
                    &OpRef::Flow {
                        block: blk.id,
                        ordinal: o,
                    },
                );
            }
            enc::set_count(b, c, blk.ops.len());
            enc::end(b, k);
            enc::end(b, at);
            Ok(())
        }
    );
    // Owned paths.
    part!(porder.len(), |b: &mut Vec<u8>, i: usize| {
        let p = &f.body.paths[porder[i]];
        let (ordinal, state) = path_facts_v[i];
        let at = enc::begin(b);
        b.extend_from_slice(&5u32.to_le_bytes());
        be.path_el(b, &p.key)?;
        if p.key.fields.is_empty() {
            enc::el_opt(b, None);
        } else {
            let mut pk = p.key.clone();
            pk.fields.pop();
            let o = enc::begin(b);
            b.push(1);
            be.path_content(b, &pk)?;
            enc::end(b, o);
        }
        enc::el(b, &hs.type_id(&p.ty));
        enc::el_u32(b, ordinal);
        enc::el_u32(b, state.tag());
        enc::end(b, at);
        Ok(())
    });
    // Loans.
    part!(lorder.len(), |b: &mut Vec<u8>, i: usize| {
        let l = &f.body.loans[lorder[i]];
        let at = enc::begin(b);
        b.extend_from_slice(&7u32.to_le_bytes());
        be.key_el(b, l.id);
        enc::el_u32(b, l.kind.tag());
        be.path_el(b, &l.origin)?;
        opt_with(b, l.parent, |b, p| be.key_content(b, p));
        enc::el(b, &hs.type_id(&l.borrowed));
        opt_with(b, l.creation.as_ref(), |b, r| be.op_content(b, r));
        opt_with(b, l.last_use.as_ref(), |b, r| be.op_content(b, r));
        enc::end(b, at);
        Ok(())
    });
    // Cleanup edges.
    part!(eorder.len(), |b: &mut Vec<u8>, i: usize| {
        let e = &f.body.edges[eorder[i]];
        let at = enc::begin(b);
        b.extend_from_slice(&5u32.to_le_bytes());
        be.key_el(b, e.id);
        be.key_el(b, e.source);
        opt_with(b, e.successor, |b, s| be.key_content(b, s));
        enc::el_u32(b, e.kind.tag());
        let k = enc::begin(b);
        let c = enc::count(b);
        for o in 0..e.drops.len() as u32 {
            be.op_el(
                b,
                &OpRef::Recipe {
                    edge: e.id,
                    ordinal: o,
                },
            );
        }
        enc::set_count(b, c, e.drops.len());
        enc::end(b, k);
        enc::end(b, at);
        Ok(())
    });
    // Body operations.
    let tail_fn = head.filter(|_| !tracing);
    let p = list_part_iter(
        (!tracing).then_some(&mut sha),
        &mut buf,
        ops,
        |(_, op): &(OpRef, &Op)| op_el_len(op),
        |b: &mut Vec<u8>, item: (OpRef, &Op)| op_enc(hs, b, item),
        tail_fn,
    )?;
    if let Some(p) = p {
        parts.push(p);
    }
    if tracing {
        return Ok(hs.hash(
            || format!("body {}.{}", d.name, f.name),
            domain::FUNCTION_BODY,
            parts,
        ));
    }
    Ok(sha.finalize().into())
}

/// Length of an owned-path key's content (see `BodyEnc::path_content`).
fn path_content_len(k: &PathKey) -> u64 {
    let ident = match k.root {
        Root::Receiver => 12,
        Root::Param(_) | Root::Local(_) => 40,
        Root::Temp(_) => 140,
    };
    4 + 40 + 12 + ident + 12 + 40 * k.fields.len() as u64
}

/// Length of `F(logical auxiliary)` (see `BodyEnc::aux_el`).
fn aux_el_len(a: &Aux) -> u64 {
    24 + match a {
        Aux::None => 8,
        Aux::Lit(_) => 12,
        Aux::Type(_)
        | Aux::Decl(_)
        | Aux::Field(_)
        | Aux::Func(_)
        | Aux::CatalogFunc(_)
        | Aux::Variant(_)
        | Aux::Effects(_) => 40,
        Aux::Loan(_) | Aux::Edge(_) | Aux::Block(_) => 64,
        Aux::Path(k) => 8 + path_content_len(k),
        Aux::Op(_) => 140,
    }
}

/// Length of one framed body-operation element, computed without encoding
/// it (checked against the encoding by `list_part`).
fn op_el_len(op: &Op) -> u64 {
    let operands: u64 = op
        .operands
        .iter()
        .map(|o| {
            24 + match o {
                Operand::Value(_) => 140 + 41,
                Operand::Place(k) => 8 + path_content_len(k) + 41,
                Operand::Const(_) => 40 + 41,
                Operand::Block(_) => 64 + 9,
            }
        })
        .sum();
    8 + 4
        + 140
        + 12
        + if op.result.is_some() { 41 } else { 9 }
        + 12
        + operands
        + aux_el_len(&op.aux0)
        + aux_el_len(&op.aux1)
        + 12
}

/// `F(optional)` whose present value's content is appended by `content`.
fn opt_with<T>(b: &mut Vec<u8>, v: Option<T>, content: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        None => enc::el_opt(b, None),
        Some(x) => {
            let o = enc::begin(b);
            b.push(1);
            content(b, x);
            enc::end(b, o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sharing a body's operations between two hashers gives the same
    /// digests for every split point, and the same first error wherever the
    /// failing operation lies (before or after the split).
    #[test]
    fn shared_body_operations_give_the_same_digests_and_errors() {
        let m = crate::sample::module("t.share", 300);
        let p = prepare(&m, false).unwrap();
        let (at, n) = Pending::largest_body(&m).unwrap();
        let run = |m: &Module, k: usize| {
            let p = prepare(m, false).unwrap();
            let mut tail_hs = Hasher::new(false);
            let tail = p.body_tail(&mut tail_hs, m, at, k);
            let mut tail = Some(tail);
            let mut get = || tail.take().unwrap_or_else(|| Ok(Vec::new()));
            p.bodies_sharing(&mut Hasher::new(false), m, at, k, &mut get)
        };
        let want = p.bodies(&mut Hasher::new(false), &m).unwrap();
        for k in [0, 1, n / 3, n / 2, n - 1, n, n + 5] {
            assert_eq!(run(&m, k).unwrap(), want, "split at {k}");
        }
        // An operand naming a missing operation, early and late in the body.
        for bad in [5, n - 3] {
            let mut b = m.clone();
            let f = &mut b.declarations[at.0].functions[at.1];
            let mut left = bad;
            'find: for blk in &mut f.body.blocks {
                for op in &mut blk.ops {
                    if left == 0 {
                        op.operands = vec![Operand::Value(OpRef::Flow {
                            block: 0,
                            ordinal: 999_999,
                        })];
                        break 'find;
                    }
                    left -= 1;
                }
            }
            let p = prepare(&b, false).unwrap();
            let want = p.bodies(&mut Hasher::new(false), &b).unwrap_err();
            assert_eq!(want.code, code::REF, "{want}");
            for k in [0, n / 2, n] {
                assert_eq!(run(&b, k).unwrap_err(), want, "bad op {bad}, split at {k}");
            }
        }
    }

    /// The streaming body hash (no tracing) and the materialised parts
    /// (tracing, the golden-vector path) give the same digests, and every
    /// traced fact hashes to its digest.
    #[test]
    fn streaming_and_traced_identities_agree() {
        let m = crate::sample::module("t.stream", 40);
        let (fast, none) = compute(&m, false).unwrap();
        let (traced, facts) = compute(&m, true).unwrap();
        assert!(none.is_empty());
        assert!(facts.iter().any(|f| f.domain == domain::FUNCTION_BODY));
        for f in &facts {
            assert_eq!(crate::hash::sha256(&f.preimage()), f.digest, "{}", f.fact);
        }
        assert_eq!(fast.module_content, traced.module_content);
        for (a, b) in fast.decls.iter().zip(&traced.decls) {
            for (x, y) in a.functions.iter().zip(&b.functions) {
                assert_eq!(x.body, y.body);
            }
        }
        for src in [
            include_str!("../../../examples/zlm/shapes.zlt"),
            include_str!("../../../examples/zlm/canvas.zlt"),
            include_str!("../../../examples/zlm/run/own.zlt"),
            include_str!("../../../examples/zlm/run/faults.zlt"),
            include_str!("../../../examples/zlm/run/loop.zlt"),
            include_str!("../../../examples/zlm/run/ops.zlt"),
        ] {
            // Loans with creation/last use, field paths, temporaries, recipes.
            let m = crate::text::parse(src).unwrap();
            let (a, _) = compute(&m, false).unwrap();
            let (b, _) = compute(&m, true).unwrap();
            assert_eq!(a.module_content, b.module_content);
            for (x, y) in a.decls.iter().zip(&b.decls) {
                for (p, q) in x.functions.iter().zip(&y.functions) {
                    assert_eq!(p.body, q.body);
                }
            }
        }
        // Memoized constants equal their traced hashes.
        for f in facts.iter().filter(|f| f.domain == domain::CONSTANT) {
            assert!(fast.constants.values().any(|id| *id == f.digest));
        }
    }
}
