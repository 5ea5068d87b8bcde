//! The identity waves in dependency order: namespaces; declaration nominal
//! IDs; type instances and effect sets; constants; variants; fields;
//! function signatures; parameters and locals; contracts; declaration
//! interfaces; module interface; bodies (see [`super::body`]) and
//! declaration definitions; module content last.

use super::body::{Split, body_digest};
use super::hasher::{Fact, Hasher};
use super::order::*;
use crate::catalog;
use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, domain, opt, seq, u32p};
use crate::model::*;
use std::collections::BTreeMap;

/// One function's computed identities: signature, effect set, parameter
/// IDs, local IDs and the parameter flags.
type FnSigIds = (Id, Id, Vec<Id>, Vec<Id>, Vec<u32>);

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
        let mut hasher = Hasher::new(false);
        hasher.types = std::mem::take(&mut self.types);
        let id = hasher.type_id(t);
        self.types = hasher.types;
        id
    }
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
    pub hasher: Hasher,
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
    let mut hasher = Hasher::new(trace);
    // Wave 1: namespaces.
    let ns = hasher.namespace(&m.package, &m.name);
    let mut import_ns: BTreeMap<&str, Id> = BTreeMap::new();
    for i in &m.imports {
        if !import_ns.contains_key(i.module.as_str()) {
            let id = hasher.namespace(&m.package, &i.module);
            import_ns.insert(&i.module, id);
        }
    }
    // Wave 2: declaration nominal IDs.
    let mut imports = Vec::new();
    let mut copy: FastMap<Id, bool> = FastMap::default();
    for i in &m.imports {
        let id = hasher.nominal(&import_ns[i.module.as_str()], i.kind, &i.name);
        copy.insert(id, i.copy);
        imports.push(id);
    }
    let nominals: Vec<Id> = m
        .declarations
        .iter()
        .map(|d| hasher.nominal(&ns, d.kind, &d.name))
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
    for (decl_index, (d, nominal)) in m.declarations.iter().zip(&nominals).enumerate() {
        let mut vids = Vec::new();
        for v in &d.variants {
            let vid = hasher.hash(
                || format!("variant {}.{}", d.name, v.name),
                domain::VARIANT,
                vec![nominal.to_vec(), u32p(v.tag), v.name.as_bytes().to_vec()],
            );
            vids.push(vid);
        }
        let mut fids = Vec::new();
        for (fn_index, f) in d.fields.iter().enumerate() {
            let id = field_id(&mut hasher, 0, nominal, f, || {
                format!("field {}.{}", d.name, f.name)
            });
            if fields_map
                .insert(
                    id,
                    FieldInfo {
                        decl: decl_index,
                        variant: None,
                        index: fn_index,
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
        for (variant_index, (v, vid)) in d.variants.iter().zip(vids).enumerate() {
            let mut pids = Vec::new();
            for (fn_index, f) in v.fields.iter().enumerate() {
                let id = field_id(&mut hasher, 1, &vid, f, || {
                    format!("field {}.{}.{}", d.name, v.name, f.name)
                });
                if fields_map
                    .insert(
                        id,
                        FieldInfo {
                            decl: decl_index,
                            variant: Some(variant_index),
                            index: fn_index,
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
            let recv = receiver_type(nominal, f.receiver).map(|t| hasher.type_id(&t));
            let params: Vec<Vec<u8>> = porder
                .iter()
                .map(|&i| {
                    hasher.param_sig(
                        f.params[i].ordinal,
                        &f.params[i].name,
                        &f.params[i].ty,
                        flags[i],
                    )
                })
                .collect();
            let result = hasher.type_id(&f.result);
            let eff = hasher.effects(&f.effects);
            let sig = hasher.hash(
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
                let t = hasher.type_id(&p.ty);
                pids.push(hasher.hash(
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
                let t = hasher.type_id(&l.ty);
                lids.push(hasher.hash(
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
            let exprs = |list: &[Expr], hasher: &mut Hasher| -> Result<Vec<u8>> {
                let mut out = Vec::new();
                for e in list {
                    out.push(contract_expr(hasher, f, recv.as_ref(), e)?);
                }
                Ok(seq(out))
            };
            let req = exprs(&f.requires, &mut hasher)?;
            let ens = exprs(&f.ensures, &mut hasher)?;
            cs.push(hasher.hash(
                || format!("contract {}.{}", d.name, f.name),
                domain::FUNCTION_CONTRACT,
                vec![sig.to_vec(), seq(Vec::<Vec<u8>>::new()), req, ens],
            ));
        }
        contracts.push(cs);
    }
    // Wave 10: declaration interfaces.
    let mut interfaces = Vec::new();
    for (decl_index, (d, nominal)) in m.declarations.iter().zip(&nominals).enumerate() {
        let flags = u32::from(copy[nominal]);
        let by_ord = sorted_by_ordinal(&d.fields, &decl_fields[decl_index]);
        let public: Vec<Vec<u8>> = by_ord
            .iter()
            .filter(|id| d.fields[fields_map[*id].index].visibility == Visibility::Public)
            .map(|id| id.to_vec())
            .collect();
        let variants = variant_schemas(d, &decl_variants[decl_index]);
        let mut pubfns: Vec<(Id, Vec<u8>)> = d
            .functions
            .iter()
            .zip(&fn_sigs[decl_index])
            .zip(&contracts[decl_index])
            .filter(|((f, _), _)| f.visibility == Visibility::Public)
            .map(|((f, s), c)| {
                (
                    s.0,
                    seq([s.0.to_vec(), u32p(f.visibility.tag()), c.to_vec()]),
                )
            })
            .collect();
        pubfns.sort_by_key(|a| a.0);
        interfaces.push(hasher.hash(
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
    let module_interface = hasher.hash(
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
        hasher,
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
    /// The body digest of function `fn_index` of declaration `decl_index`.
    fn body(
        &self,
        hasher: &mut Hasher,
        m: &Module,
        decl_index: usize,
        fn_index: usize,
    ) -> Result<Id> {
        self.body_split(hasher, m, decl_index, fn_index, Split::None)
    }

    fn body_split(
        &self,
        hasher: &mut Hasher,
        m: &Module,
        decl_index: usize,
        fn_index: usize,
        split: Split<'_>,
    ) -> Result<Id> {
        let d = &m.declarations[decl_index];
        let (sig, _, pids, lids, _) = &self.fn_sigs[decl_index][fn_index];
        body_digest(
            hasher,
            d,
            &d.functions[fn_index],
            sig,
            pids,
            lids,
            &self.nominals[decl_index],
            &self.fields_map,
            m,
            split,
        )
    }

    /// The function with the most body operations and that count (the one a
    /// validator shares between two threads).
    pub fn largest_body(m: &Module) -> Option<((usize, usize), usize)> {
        let mut best: Option<((usize, usize), usize)> = None;
        for (decl_index, d) in m.declarations.iter().enumerate() {
            for (fn_index, f) in d.functions.iter().enumerate() {
                let n = f.body.blocks.iter().map(|b| b.ops.len()).sum::<usize>()
                    + f.body.edges.iter().map(|e| e.drops.len()).sum::<usize>();
                if best.is_none_or(|(_, b)| n > b) {
                    best = Some(((decl_index, fn_index), n));
                }
            }
        }
        best
    }

    /// [`Pending::bodies`], except that the operations of function
    /// `at = (decl_index, fn_index)` from the `k`th on (canonical order) are not encoded
    /// here: `tail()` returns their encoding, made by another thread with
    /// [`Pending::body_tail`]. The digests and the first error are the same.
    pub fn bodies_sharing(
        &self,
        hasher: &mut Hasher,
        m: &Module,
        at: (usize, usize),
        k: usize,
        tail: &mut dyn FnMut() -> Result<Vec<u8>>,
    ) -> Result<Vec<Vec<Id>>> {
        let mut tail = Some(tail);
        let mut out = Vec::with_capacity(m.declarations.len());
        for (decl_index, d) in m.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(d.functions.len());
            for fn_index in 0..d.functions.len() {
                let split = match tail.take_if(|_| (decl_index, fn_index) == at) {
                    Some(t) => Split::Head(k, t),
                    None => Split::None,
                };
                fns.push(self.body_split(hasher, m, decl_index, fn_index, split)?);
            }
            out.push(fns);
        }
        Ok(out)
    }

    /// The encoding of the body operations of function `(decl_index, fn_index)` from the
    /// `k`th on, as [`Pending::bodies_sharing`] hashes them.
    pub fn body_tail(
        &self,
        hasher: &mut Hasher,
        m: &Module,
        (decl_index, fn_index): (usize, usize),
        k: usize,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.body_split(hasher, m, decl_index, fn_index, Split::Tail(k, &mut out))?;
        Ok(out)
    }

    /// Every function-body digest (per declaration, per function), in the
    /// order [`Pending::finish`] computes them, so the first error is the
    /// same; `hasher` is a hasher taken from this one (see [`Pending::provisional`]).
    pub fn bodies(&self, hasher: &mut Hasher, m: &Module) -> Result<Vec<Vec<Id>>> {
        let mut out = Vec::with_capacity(m.declarations.len());
        for (decl_index, d) in m.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(d.functions.len());
            for fn_index in 0..d.functions.len() {
                fns.push(self.body(hasher, m, decl_index, fn_index)?);
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
            .map(|decl_index| DeclIds {
                nominal: self.nominals[decl_index],
                copy: self.copy[&self.nominals[decl_index]],
                interface: self.interfaces[decl_index],
                definition: [0; 32],
                fields: self.decl_fields[decl_index].clone(),
                variants: self.decl_variants[decl_index].clone(),
                functions: self.fn_sigs[decl_index]
                    .iter()
                    .zip(&self.contracts[decl_index])
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
            types: self.hasher.types.clone(),
            constants: self.hasher.constants.clone(),
            body_constants: false,
        }
    }

    /// Waves 12 and 13. `bodies` are the digests from [`Pending::bodies`];
    /// without them each body is hashed here, interleaved with the
    /// definitions (the traced order of the golden vectors).
    pub fn finish(self, m: &Module, bodies: Option<&[Vec<Id>]>) -> Result<(Identities, Vec<Fact>)> {
        let mut pending = self;
        let mut hasher = std::mem::replace(&mut pending.hasher, Hasher::new(false));
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
        for (decl_index, (d, nominal)) in m.declarations.iter().zip(nominals).enumerate() {
            let mut fns = Vec::new();
            for (fn_index, ((_, (sig, eff, pids, lids, flags)), contract)) in d
                .functions
                .iter()
                .zip(&fn_sigs[decl_index])
                .zip(&contracts[decl_index])
                .enumerate()
            {
                let body = match bodies {
                    Some(b) => *b
                        .get(decl_index)
                        .and_then(|fs| fs.get(fn_index))
                        .ok_or_else(|| {
                            Error::new(code::MODEL, "internal error: missing body digest")
                        })?,
                    None => pending.body(&mut hasher, m, decl_index, fn_index)?,
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
            let by_ord = sorted_by_ordinal(&d.fields, &decl_fields[decl_index]);
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
            let definition = hasher.hash(
                || format!("declaration definition {}", d.name),
                domain::DECLARATION_DEFINITION,
                vec![
                    nominal.to_vec(),
                    interfaces[decl_index].to_vec(),
                    u32p(d.visibility.tag()),
                    u32p(flags),
                    seq(by_ord.iter().map(|id| id.to_vec())),
                    variant_schemas(d, &decl_variants[decl_index]),
                    seq(defs_list.into_iter().map(|(_, e)| e)),
                ],
            );
            defs.push((*nominal, definition));
            decls.push(DeclIds {
                nominal: *nominal,
                copy: types_snapshot_copy[nominal],
                interface: interfaces[decl_index],
                definition,
                fields: decl_fields[decl_index].clone(),
                variants: decl_variants[decl_index].clone(),
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
        let module_content = hasher.hash(
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
        let facts = hasher.trace.take().unwrap_or_default();
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
                types: hasher.types,
                constants: hasher.constants,
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
    hasher: &mut Hasher,
    owner_kind: u32,
    owner: &Id,
    f: &Field,
    what: impl FnOnce() -> String,
) -> Id {
    let t = hasher.type_id(&f.ty);
    hasher.hash(
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

fn contract_expr(
    hasher: &mut Hasher,
    f: &Function,
    recv: Option<&Type>,
    e: &Expr,
) -> Result<Vec<u8>> {
    let mut ops = Vec::new();
    let last = e.ops.len().saturating_sub(1);
    for (i, op) in e.ops.iter().enumerate() {
        let mut operands = Vec::new();
        for o in &op.operands {
            let t = contract_operand_type(f, recv, e, o)?;
            let tid = hasher.type_id(&t);
            let (kind, reference) = match o {
                ContractOperand::Const(c) => (2, hasher.constant(c)?.to_vec()),
                ContractOperand::Receiver => (4, u32p(0)),
                ContractOperand::Param(p) => (5, u32p(*p)),
                ContractOperand::Result => (6, u32p(0)),
                ContractOperand::Value(v) => (7, u32p(*v)),
            };
            operands.push(seq([u32p(kind), reference, tid.to_vec()]));
        }
        let rt = hasher.type_id(&op.result);
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
