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
    /// Whether `ty` is structurally Copy in this module.
    #[inline]
    pub fn is_copy(&self, ty: &Type) -> bool {
        // The common answers inline (the semantic check asks per operation).
        match ty {
            Type::Scalar(_) | Type::Unit | Type::Never | Type::Ref(_) => true,
            _ => is_copy(ty, &|id| self.copy.get(id).copied()),
        }
    }
    /// The type-instance ID of `ty` (computing it if new).
    pub fn type_id(&mut self, ty: &Type) -> Id {
        if let Some(id) = self.types.get(ty) {
            return *id;
        }
        let mut hasher = Hasher::new(false);
        hasher.types = std::mem::take(&mut self.types);
        let id = hasher.type_id(ty);
        self.types = hasher.types;
        id
    }
}

/// Computes every identity of `module` in dependency waves; `trace` records
/// each hash for golden vectors.
pub fn compute(module: &Module, trace: bool) -> Result<(Identities, Vec<Fact>)> {
    prepare(module, trace)?.finish(module, None)
}

/// The identities of waves 1-11 (everything a function-body digest depends
/// on) and the hasher state; [`Pending::finish`] adds wave 12 (bodies and
/// declaration definitions) and wave 13 (module content). A validator may
/// hash the bodies on another thread with [`Pending::bodies`] meanwhile.
pub struct Pending {
    /// The hasher (memoized types, constants, effect sets; the trace).
    pub hasher: Hasher,
    namespace: Id,
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
pub fn prepare(module: &Module, trace: bool) -> Result<Pending> {
    let mut hasher = Hasher::new(trace);
    // Wave 1: namespaces.
    let namespace = hasher.namespace(&module.package, &module.name);
    let mut import_ns: BTreeMap<&str, Id> = BTreeMap::new();
    for import in &module.imports {
        if !import_ns.contains_key(import.module.as_str()) {
            let id = hasher.namespace(&module.package, &import.module);
            import_ns.insert(&import.module, id);
        }
    }
    // Wave 2: declaration nominal IDs.
    let mut imports = Vec::new();
    let mut copy: FastMap<Id, bool> = FastMap::default();
    for import in &module.imports {
        let id = hasher.nominal(
            &import_ns[import.module.as_str()],
            import.kind,
            &import.name,
        );
        copy.insert(id, import.copy);
        imports.push(id);
    }
    let nominals: Vec<Id> = module
        .declarations
        .iter()
        .map(|decl| hasher.nominal(&namespace, decl.kind, &decl.name))
        .collect();
    // Derived declaration Copy flags (greatest fixed point).
    for (decl, id) in module.declarations.iter().zip(&nominals) {
        copy.insert(*id, decl.kind != DeclKind::Value);
    }
    loop {
        let mut changed = false;
        for (decl, id) in module.declarations.iter().zip(&nominals) {
            if copy[id] {
                let all = decl
                    .variants
                    .iter()
                    .flat_map(|variant| variant.fields.iter())
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
    for (decl_index, (decl, nominal)) in module.declarations.iter().zip(&nominals).enumerate() {
        let mut vids = Vec::new();
        for variant in &decl.variants {
            let vid = hasher.hash(
                || format!("variant {}.{}", decl.name, variant.name),
                domain::VARIANT,
                vec![
                    nominal.to_vec(),
                    u32p(variant.tag),
                    variant.name.as_bytes().to_vec(),
                ],
            );
            vids.push(vid);
        }
        let mut fids = Vec::new();
        for (field_index, field) in decl.fields.iter().enumerate() {
            let id = field_id(&mut hasher, 0, nominal, field, || {
                format!("field {}.{}", decl.name, field.name)
            });
            if fields_map
                .insert(
                    id,
                    FieldInfo {
                        decl: decl_index,
                        variant: None,
                        index: field_index,
                    },
                )
                .is_some()
            {
                return Err(Error::new(
                    code::DUPLICATE,
                    format!("duplicate field {}.{}", decl.name, field.name),
                ));
            }
            fids.push(id);
        }
        let mut variants = Vec::new();
        for (variant_index, (variant, vid)) in decl.variants.iter().zip(vids).enumerate() {
            let mut pids = Vec::new();
            for (field_index, field) in variant.fields.iter().enumerate() {
                let id = field_id(&mut hasher, 1, &vid, field, || {
                    format!("field {}.{}.{}", decl.name, variant.name, field.name)
                });
                if fields_map
                    .insert(
                        id,
                        FieldInfo {
                            decl: decl_index,
                            variant: Some(variant_index),
                            index: field_index,
                        },
                    )
                    .is_some()
                {
                    return Err(Error::new(
                        code::DUPLICATE,
                        format!(
                            "duplicate field {}.{}.{}",
                            decl.name, variant.name, field.name
                        ),
                    ));
                }
                pids.push(id);
            }
            variants.push((vid, sorted_by_ordinal(&variant.fields, &pids)));
        }
        dense_order(
            decl.variants.iter().map(|variant| variant.tag),
            &decl.name,
            "variant tag",
        )?;
        dense_order(
            decl.fields.iter().map(|f| f.ordinal),
            &decl.name,
            "field ordinal",
        )?;
        for variant in &decl.variants {
            dense_order(
                variant.fields.iter().map(|f| f.ordinal),
                &variant.name,
                "payload field ordinal",
            )?;
        }
        decl_fields.push(fids);
        decl_variants.push(variants);
    }
    // Wave 7-8: function signatures, parameters, locals.
    let mut fn_sigs: Vec<Vec<FnSigIds>> = Vec::new();
    for (decl, nominal) in module.declarations.iter().zip(&nominals) {
        let mut sigs = Vec::new();
        for function in &decl.functions {
            check_effects(&function.effects, &function.name)?;
            let porder = param_order(function)?;
            let flags: Vec<u32> = function
                .params
                .iter()
                .map(|param| u32::from(!param.ty.is_borrow() && !copy_of(&copy, &param.ty)))
                .collect();
            let recv = receiver_type(nominal, function.receiver).map(|t| hasher.type_id(&t));
            let params: Vec<Vec<u8>> = porder
                .iter()
                .map(|&i| {
                    hasher.param_sig(
                        function.params[i].ordinal,
                        &function.params[i].name,
                        &function.params[i].ty,
                        flags[i],
                    )
                })
                .collect();
            let result = hasher.type_id(&function.result);
            let eff = hasher.effects(&function.effects);
            let sig = hasher.hash(
                || format!("function {}.{}", decl.name, function.name),
                domain::FUNCTION,
                vec![
                    nominal.to_vec(),
                    u32p(function.callable.tag()),
                    u32p(function.receiver.tag()),
                    opt(recv.as_ref().map(|r| &r[..])),
                    function.name.as_bytes().to_vec(),
                    seq(params),
                    result.to_vec(),
                    eff.to_vec(),
                ],
            );
            let mut pids = Vec::new();
            for (param, flag) in function.params.iter().zip(&flags) {
                let type_id = hasher.type_id(&param.ty);
                pids.push(hasher.hash(
                    || format!("parameter {}.{}.{}", decl.name, function.name, param.name),
                    domain::PARAMETER,
                    vec![
                        sig.to_vec(),
                        u32p(param.ordinal),
                        param.name.as_bytes().to_vec(),
                        type_id.to_vec(),
                        u32p(*flag),
                    ],
                ));
            }
            local_order(function)?;
            let mut lids = Vec::new();
            for local in &function.body.locals {
                let type_id = hasher.type_id(&local.ty);
                lids.push(hasher.hash(
                    || format!("local {}.{}.{}", decl.name, function.name, local.name),
                    domain::LOCAL,
                    vec![
                        sig.to_vec(),
                        u32p(local.ordinal),
                        local.name.as_bytes().to_vec(),
                        type_id.to_vec(),
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
                    decl.name
                ),
            ));
        }
        fn_sigs.push(sigs);
    }
    // Wave 9: contracts.
    let mut contracts: Vec<Vec<Id>> = Vec::new();
    for ((decl, nominal), sigs) in module.declarations.iter().zip(&nominals).zip(&fn_sigs) {
        let mut contract_ids = Vec::new();
        for (function, (sig, ..)) in decl.functions.iter().zip(sigs) {
            let recv = receiver_type(nominal, function.receiver);
            let exprs = |list: &[Expr], hasher: &mut Hasher| -> Result<Vec<u8>> {
                let mut out = Vec::new();
                for expr in list {
                    out.push(contract_expr(hasher, function, recv.as_ref(), expr)?);
                }
                Ok(seq(out))
            };
            let req = exprs(&function.requires, &mut hasher)?;
            let ens = exprs(&function.ensures, &mut hasher)?;
            contract_ids.push(hasher.hash(
                || format!("contract {}.{}", decl.name, function.name),
                domain::FUNCTION_CONTRACT,
                vec![sig.to_vec(), seq(Vec::<Vec<u8>>::new()), req, ens],
            ));
        }
        contracts.push(contract_ids);
    }
    // Wave 10: declaration interfaces.
    let mut interfaces = Vec::new();
    for (decl_index, (decl, nominal)) in module.declarations.iter().zip(&nominals).enumerate() {
        let flags = u32::from(copy[nominal]);
        let by_ord = sorted_by_ordinal(&decl.fields, &decl_fields[decl_index]);
        let public: Vec<Vec<u8>> = by_ord
            .iter()
            .filter(|id| decl.fields[fields_map[*id].index].visibility == Visibility::Public)
            .map(|id| id.to_vec())
            .collect();
        let variants = variant_schemas(decl, &decl_variants[decl_index]);
        let mut pubfns: Vec<(Id, Vec<u8>)> = decl
            .functions
            .iter()
            .zip(&fn_sigs[decl_index])
            .zip(&contracts[decl_index])
            .filter(|((function, _), _)| function.visibility == Visibility::Public)
            .map(|((function, sig_ids), contract)| {
                (
                    sig_ids.0,
                    seq([
                        sig_ids.0.to_vec(),
                        u32p(function.visibility.tag()),
                        contract.to_vec(),
                    ]),
                )
            })
            .collect();
        pubfns.sort_by_key(|a| a.0);
        interfaces.push(hasher.hash(
            || format!("declaration interface {}", decl.name),
            domain::DECLARATION_INTERFACE,
            vec![
                nominal.to_vec(),
                u32p(decl.visibility.tag()),
                u32p(flags),
                seq(public),
                variants,
                seq(pubfns.into_iter().map(|(_, e)| e)),
            ],
        ));
    }
    // Wave 11: module interface.
    let mut deps: BTreeMap<Id, Id> = BTreeMap::new();
    for import in &module.imports {
        let dns = import_ns[import.module.as_str()];
        if let Some(prev) = deps.insert(dns, import.interface)
            && prev != import.interface
        {
            return Err(Error::new(
                code::IMPORT,
                format!(
                    "imports of module {} carry different interface digests",
                    import.module
                ),
            ));
        }
    }
    let mut exports: Vec<(Id, Id)> = module
        .declarations
        .iter()
        .zip(&nominals)
        .zip(&interfaces)
        .filter(|((decl, _), _)| decl.visibility == Visibility::Public)
        .map(|((_, n), i)| (*n, *i))
        .collect();
    exports.sort();
    let module_interface = hasher.hash(
        || format!("module interface {}", module.name),
        domain::MODULE_INTERFACE,
        vec![
            namespace.to_vec(),
            u32p(module.profile.tag()),
            catalog.to_vec(),
            seq(deps.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
            seq(exports.iter().map(|(a, b)| seq([a.to_vec(), b.to_vec()]))),
        ],
    );
    Ok(Pending {
        hasher,
        namespace,
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
        module: &Module,
        decl_index: usize,
        fn_index: usize,
    ) -> Result<Id> {
        self.body_split(hasher, module, decl_index, fn_index, Split::None)
    }

    fn body_split(
        &self,
        hasher: &mut Hasher,
        module: &Module,
        decl_index: usize,
        fn_index: usize,
        split: Split<'_>,
    ) -> Result<Id> {
        let decl = &module.declarations[decl_index];
        let (sig, _, pids, lids, _) = &self.fn_sigs[decl_index][fn_index];
        body_digest(
            hasher,
            decl,
            &decl.functions[fn_index],
            sig,
            pids,
            lids,
            &self.nominals[decl_index],
            &self.fields_map,
            module,
            split,
        )
    }

    /// The function with the most body operations and that count (the one a
    /// validator shares between two threads).
    pub fn largest_body(module: &Module) -> Option<((usize, usize), usize)> {
        let mut best: Option<((usize, usize), usize)> = None;
        for (decl_index, decl) in module.declarations.iter().enumerate() {
            for (fn_index, function) in decl.functions.iter().enumerate() {
                let op_count = function
                    .body
                    .blocks
                    .iter()
                    .map(|b| b.ops.len())
                    .sum::<usize>()
                    + function
                        .body
                        .edges
                        .iter()
                        .map(|e| e.drops.len())
                        .sum::<usize>();
                if best.is_none_or(|(_, b)| op_count > b) {
                    best = Some(((decl_index, fn_index), op_count));
                }
            }
        }
        best
    }

    /// [`Pending::bodies`], except that the operations of function
    /// `at = (decl_index, fn_index)` from canonical position `first_tail_op` on (canonical order) are not encoded
    /// here: `tail()` returns their encoding, made by another thread with
    /// [`Pending::body_tail`]. The digests and the first error are the same.
    pub fn bodies_sharing(
        &self,
        hasher: &mut Hasher,
        module: &Module,
        at: (usize, usize),
        first_tail_op: usize,
        tail: &mut dyn FnMut() -> Result<Vec<u8>>,
    ) -> Result<Vec<Vec<Id>>> {
        let mut tail = Some(tail);
        let mut out = Vec::with_capacity(module.declarations.len());
        for (decl_index, decl) in module.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(decl.functions.len());
            for fn_index in 0..decl.functions.len() {
                let split = match tail.take_if(|_| (decl_index, fn_index) == at) {
                    Some(tail_encoding) => Split::Head(first_tail_op, tail_encoding),
                    None => Split::None,
                };
                fns.push(self.body_split(hasher, module, decl_index, fn_index, split)?);
            }
            out.push(fns);
        }
        Ok(out)
    }

    /// The encoding of the body operations of function `(decl_index, fn_index)` from the
    /// position `first_tail_op` on, as [`Pending::bodies_sharing`] hashes them.
    pub fn body_tail(
        &self,
        hasher: &mut Hasher,
        module: &Module,
        (decl_index, fn_index): (usize, usize),
        first_tail_op: usize,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.body_split(
            hasher,
            module,
            decl_index,
            fn_index,
            Split::Tail(first_tail_op, &mut out),
        )?;
        Ok(out)
    }

    /// Every function-body digest (per declaration, per function), in the
    /// order [`Pending::finish`] computes them, so the first error is the
    /// same; `hasher` is a hasher taken from this one (see [`Pending::provisional`]).
    pub fn bodies(&self, hasher: &mut Hasher, module: &Module) -> Result<Vec<Vec<Id>>> {
        let mut out = Vec::with_capacity(module.declarations.len());
        for (decl_index, decl) in module.declarations.iter().enumerate() {
            let mut fns = Vec::with_capacity(decl.functions.len());
            for fn_index in 0..decl.functions.len() {
                fns.push(self.body(hasher, module, decl_index, fn_index)?);
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
            namespace: self.namespace,
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
    pub fn finish(
        self,
        module: &Module,
        bodies: Option<&[Vec<Id>]>,
    ) -> Result<(Identities, Vec<Fact>)> {
        let mut pending = self;
        let mut hasher = std::mem::replace(&mut pending.hasher, Hasher::new(false));
        let Pending {
            namespace,
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
        let (namespace, catalog, module_interface) = (*namespace, *catalog, *module_interface);
        // Wave 12: bodies and declaration definitions.
        let mut decls = Vec::new();
        let mut defs = Vec::new();
        let types_snapshot_copy = copy.clone();
        for (decl_index, (decl, nominal)) in module.declarations.iter().zip(nominals).enumerate() {
            let mut fns = Vec::new();
            for (fn_index, ((_, (sig, eff, pids, lids, flags)), contract)) in decl
                .functions
                .iter()
                .zip(&fn_sigs[decl_index])
                .zip(&contracts[decl_index])
                .enumerate()
            {
                let body = match bodies {
                    Some(digests) => *digests
                        .get(decl_index)
                        .and_then(|fs| fs.get(fn_index))
                        .ok_or_else(|| {
                            Error::new(code::MODEL, "internal error: missing body digest")
                        })?,
                    None => pending.body(&mut hasher, module, decl_index, fn_index)?,
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
            let by_ord = sorted_by_ordinal(&decl.fields, &decl_fields[decl_index]);
            let mut defs_list: Vec<(Id, Vec<u8>)> = decl
                .functions
                .iter()
                .zip(&fns)
                .map(|(function, ids)| {
                    (
                        ids.sig,
                        seq([
                            ids.sig.to_vec(),
                            u32p(function.visibility.tag()),
                            ids.contract.to_vec(),
                            ids.body.to_vec(),
                        ]),
                    )
                })
                .collect();
            defs_list.sort_by_key(|a| a.0);
            let definition = hasher.hash(
                || format!("declaration definition {}", decl.name),
                domain::DECLARATION_DEFINITION,
                vec![
                    nominal.to_vec(),
                    interfaces[decl_index].to_vec(),
                    u32p(decl.visibility.tag()),
                    u32p(flags),
                    seq(by_ord.iter().map(|id| id.to_vec())),
                    variant_schemas(decl, &decl_variants[decl_index]),
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
            .zip(&module.imports)
            .map(|(n, i)| (*n, i.interface))
            .collect();
        imp.sort();
        defs.sort();
        let module_content = hasher.hash(
            || format!("module content {}", module.name),
            domain::MODULE_CONTENT,
            vec![
                namespace.to_vec(),
                u32p(module.profile.tag()),
                u32p(module.mode.tag()),
                catalog.to_vec(),
                seq(imp
                    .iter()
                    .map(|(nominal, digest)| seq([nominal.to_vec(), digest.to_vec()]))),
                seq(defs
                    .iter()
                    .map(|(nominal, digest)| seq([nominal.to_vec(), digest.to_vec()]))),
                module_interface.to_vec(),
            ],
        );
        let facts = hasher.trace.take().unwrap_or_default();
        Ok((
            Identities {
                namespace,
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
    let mut pairs: Vec<(u32, Id)> = fields
        .iter()
        .zip(ids)
        .map(|(f, id)| (f.ordinal, *id))
        .collect();
    pairs.sort();
    pairs.into_iter().map(|(_, id)| id).collect()
}

/// Variant-schema list in tag order; `decl` gives each variant's tag.
fn variant_schemas(decl: &Declaration, variants: &[(Id, Vec<Id>)]) -> Vec<u8> {
    let mut order: Vec<usize> = (0..variants.len()).collect();
    order.sort_by_key(|&i| decl.variants[i].tag);
    seq(order.iter().map(|&i| {
        let (vid, field_ids) = &variants[i];
        seq([vid.to_vec(), seq(field_ids.iter().map(|f| f.to_vec()))])
    }))
}

fn field_id(
    hasher: &mut Hasher,
    owner_kind: u32,
    owner: &Id,
    field: &Field,
    what: impl FnOnce() -> String,
) -> Id {
    let type_id = hasher.type_id(&field.ty);
    hasher.hash(
        what,
        domain::FIELD,
        vec![
            u32p(owner_kind),
            owner.to_vec(),
            u32p(field.ordinal),
            field.name.as_bytes().to_vec(),
            u32p(field.visibility.tag()),
            u32p(field.mutability.tag()),
            type_id.to_vec(),
            u32p(0),
        ],
    )
}

fn contract_expr(
    hasher: &mut Hasher,
    function: &Function,
    recv: Option<&Type>,
    expr: &Expr,
) -> Result<Vec<u8>> {
    let mut ops = Vec::new();
    let last = expr.ops.len().saturating_sub(1);
    for (i, op) in expr.ops.iter().enumerate() {
        let mut operands = Vec::new();
        for operand in &op.operands {
            let ty = contract_operand_type(function, recv, expr, operand)?;
            let tid = hasher.type_id(&ty);
            let (kind, reference) = match operand {
                ContractOperand::Const(constant) => (2, hasher.constant(constant)?.to_vec()),
                ContractOperand::Receiver => (4, u32p(0)),
                ContractOperand::Param(param) => (5, u32p(*param)),
                ContractOperand::Result => (6, u32p(0)),
                ContractOperand::Value(value) => (7, u32p(*value)),
            };
            operands.push(seq([u32p(kind), reference, tid.to_vec()]));
        }
        let result_type = hasher.type_id(&op.result);
        ops.push(seq([
            u32p(i as u32),
            u32p(op.tag),
            result_type.to_vec(),
            seq(operands),
            u32p(op.aux0),
            u32p(op.aux1),
            opt(op.reference.as_ref().map(|r| &r[..])),
            u32p(u32::from(i == last)),
        ]));
    }
    Ok(seq(ops))
}
