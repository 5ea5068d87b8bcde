//! Canonical interface text (`.zli`) of a checked module, regenerated from
//! its typed representation (zlm1-core0-artifacts.md: "canonical .zli is
//! regenerated from this typed representation rather than trusted source
//! text"; C0-DET-002). The text carries exactly the facts the module-interface
//! digest commits: the module namespace, numeric profile, selected catalog,
//! direct dependency interfaces and, per exported declaration, its
//! visibility, Copy flag, public ordinary fields, complete variant schema and
//! public functions with their ownership signatures, effects and contracts
//! (printed by `zerglang.zli.contract-printer/1`,
//! [`crate::check::contracts::print_clauses`]). Bodies and private members
//! never appear. Layout and decisions: docs/zlm/interface.md.
//!
//! Also the two things the interface and reflection outputs share: type
//! spellings ([`Names`]) and the canonical module order of a package
//! ([`package_order`]).

use crate::check::contracts::print_clauses;
use crate::check::{Checked, Resolved};
use crate::error::{Error, Result};
use crate::hash::{self, Id, domain, to_hex};
use crate::ids::{DeclIds, FnIds};
use crate::model::*;
use std::collections::HashMap;

/// The stable code of an interface that cannot be printed canonically
/// (a name that is not uniquely source-resolvable, or a contract with no
/// print form).
pub const CODE: &str = "ZLM-INTERFACE";

/// The version line that starts every interface text.
pub const VERSION_LINE: &str = "zli 1";

/// Source spellings of the types of one checked module: scalars and
/// catalog types by their catalog spelling, a local nominal by its
/// declaration name, an imported nominal as `module::Name`.
pub struct Names<'a> {
    m: &'a Module,
    /// Local nominal ID to declaration index.
    local: HashMap<Id, usize>,
    /// Imported nominal ID to import index.
    imported: HashMap<Id, usize>,
    /// How many local declarations carry each name.
    name_count: HashMap<&'a str, usize>,
}

impl<'a> Names<'a> {
    /// The spellings of `checked`'s types.
    pub fn new(checked: &'a Checked) -> Self {
        let m = checked.module();
        let ids = checked.ids();
        let mut name_count: HashMap<&str, usize> = HashMap::new();
        for d in &m.declarations {
            *name_count.entry(d.name.as_str()).or_default() += 1;
        }
        Names {
            m,
            local: ids
                .decls
                .iter()
                .enumerate()
                .map(|(i, d)| (d.nominal, i))
                .collect(),
            imported: ids
                .imports
                .iter()
                .enumerate()
                .map(|(i, id)| (*id, i))
                .collect(),
            name_count,
        }
    }

    /// The spelling of nominal `id`. With `strict`, a local name that two
    /// local declarations share is an error (it would not resolve uniquely
    /// in source); otherwise the name is returned as is (reflection
    /// identifies every type by its ID beside the spelling).
    pub fn nominal(&self, id: &Id, strict: bool) -> Result<String> {
        if let Some(&i) = self.local.get(id) {
            let name = &self.m.declarations[i].name;
            if strict {
                spellable(name, false, "declaration")?;
            }
            if strict && self.name_count.get(name.as_str()).copied().unwrap_or(0) > 1 {
                return Err(Error::new(
                    CODE,
                    format!(
                        "declaration name {name} is shared by two local declarations, so the interface cannot spell it uniquely"
                    ),
                ));
            }
            return Ok(name.clone());
        }
        if let Some(&i) = self.imported.get(id) {
            let imp = &self.m.imports[i];
            if strict {
                spellable(&imp.module, true, "imported module")?;
                spellable(&imp.name, false, "imported declaration")?;
            }
            return Ok(format!("{}::{}", imp.module, imp.name));
        }
        Err(Error::new(
            CODE,
            format!(
                "nominal type {} is neither a local nor an imported declaration",
                to_hex(id)
            ),
        ))
    }

    /// The spelling of `t` (`Result<T, E>`, `Ref<T>`, `Array<Byte>`, ...).
    pub fn ty(&self, t: &Type, strict: bool) -> Result<String> {
        Ok(match t {
            Type::Nominal(id) => self.nominal(id, strict)?,
            Type::Result(ok, err) => format!(
                "Result<{}, {}>",
                self.ty(ok, strict)?,
                self.ty(err, strict)?
            ),
            Type::Ref(inner) => format!("Ref<{}>", self.ty(inner, strict)?),
            Type::Mut(inner) => format!("Mut<{}>", self.ty(inner, strict)?),
            // Leaves spell as the model prints them.
            other => other.to_string(),
        })
    }
}

pub use crate::names::{is_dotted, is_identifier};

/// An error unless `name` spells as `what` in source: an identifier, or a
/// dotted identifier when `dotted`.
fn spellable(name: &str, dotted: bool, what: &str) -> Result<()> {
    let ok = if dotted {
        is_dotted(name)
    } else {
        is_identifier(name)
    };
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            CODE,
            format!("{what} {name:?} is not an identifier, so the interface cannot spell it"),
        ))
    }
}

/// The module-namespace ID of dotted module `module` in package `package`.
pub fn namespace(package: &str, module: &str) -> Id {
    hash::h(
        domain::MODULE_NAMESPACE,
        &[package.as_bytes().to_vec(), module.as_bytes().to_vec()],
    )
}

/// The direct dependency interfaces of `m`: (module name, namespace ID,
/// interface digest), one per imported module, sorted by namespace ID (the
/// order of the module-interface digest's dependency list).
pub fn dependencies(m: &Module) -> Vec<(String, Id, Id)> {
    let mut deps: Vec<(String, Id, Id)> = Vec::new();
    for imp in &m.imports {
        if deps.iter().all(|(name, ..)| *name != imp.module) {
            deps.push((
                imp.module.clone(),
                namespace(&m.package, &imp.module),
                imp.interface,
            ));
        }
    }
    deps.sort_by_key(|a| a.1);
    deps
}

/// The canonical order of a package's modules: every provider before the
/// modules that import it, and among the modules that are ready at once,
/// ascending module-namespace ID. Imports of modules outside `modules` do
/// not constrain the order. Two modules with the same namespace reject
/// (`ZLM-DUPLICATE`).
pub fn package_order(modules: &[&Checked]) -> Result<Vec<usize>> {
    let spaces: Vec<Id> = modules
        .iter()
        .map(|c| c.ids().namespace)
        .collect::<Vec<_>>();
    for (i, a) in spaces.iter().enumerate() {
        if spaces[..i].contains(a) {
            let m = modules[i].module();
            return Err(Error::new(
                crate::error::code::DUPLICATE,
                format!("module {} of package {} is given twice", m.name, m.package),
            ));
        }
    }
    // Providers of each module inside the package.
    let providers: Vec<Vec<usize>> = modules
        .iter()
        .map(|c| {
            let m = c.module();
            let mut out: Vec<usize> = dependencies(m)
                .iter()
                .filter_map(|(_, ns, _)| spaces.iter().position(|s| s == ns))
                .collect();
            out.dedup();
            out
        })
        .collect();
    let mut placed = vec![false; modules.len()];
    let mut order = Vec::with_capacity(modules.len());
    while order.len() < modules.len() {
        let next = (0..modules.len())
            .filter(|&i| !placed[i] && providers[i].iter().all(|&p| placed[p]))
            .min_by(|&a, &b| spaces[a].cmp(&spaces[b]));
        let Some(next) = next else {
            return Err(Error::new(
                crate::error::code::IMPORT,
                "the package's modules import each other in a cycle",
            ));
        };
        placed[next] = true;
        order.push(next);
    }
    Ok(order)
}

/// The local declarations that the module exports (visibility public), as
/// (declaration index, identities), sorted by nominal ID.
pub fn exported(checked: &Checked) -> Vec<(usize, &DeclIds)> {
    let m = checked.module();
    let mut out: Vec<(usize, &DeclIds)> = checked
        .ids()
        .decls
        .iter()
        .enumerate()
        .filter(|(i, _)| m.declarations[*i].visibility == Visibility::Public)
        .collect();
    out.sort_by_key(|a| a.1.nominal);
    out
}

/// The indices of `items` sorted by `key`.
pub fn sorted_by<T, K: Ord>(items: &[T], key: impl Fn(&T) -> K) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| key(&items[i]));
    order
}

/// The parameter list of a signature: the receiver first (`self: Ref<T>`,
/// `self: Mut<T>`, `self: T` or `move self: T`, `self: Class<T>`; none for an
/// initializer), then every parameter in ordinal order, `move` before a
/// parameter whose move flag is set.
fn parameters(
    names: &Names<'_>,
    checked: &Checked,
    owner: &Type,
    f: &Function,
    fids: &FnIds,
) -> Result<String> {
    let mut parts = Vec::new();
    let own = names.ty(owner, true)?;
    match f.receiver {
        ReceiverKind::None => {}
        ReceiverKind::Shared => parts.push(format!("self: Ref<{own}>")),
        ReceiverKind::Exclusive => parts.push(format!("self: Mut<{own}>")),
        ReceiverKind::Owned => {
            let mv = if checked.ids().is_copy(owner) {
                ""
            } else {
                "move "
            };
            parts.push(format!("{mv}self: {own}"));
        }
        ReceiverKind::Type => parts.push(format!("self: Class<{own}>")),
    }
    for i in sorted_by(&f.params, |p| p.ordinal) {
        let p = &f.params[i];
        let mv = if fids.param_flags.get(i).copied() == Some(1) {
            "move "
        } else {
            ""
        };
        spellable(&p.name, false, "parameter")?;
        parts.push(format!("{mv}{}: {}", p.name, names.ty(&p.ty, true)?));
    }
    Ok(parts.join(", "))
}

/// The effect list `[io, alloc]` in ascending tag order.
pub fn effect_list(effects: &[Effect]) -> String {
    let mut tags: Vec<Effect> = effects.to_vec();
    tags.sort();
    let names: Vec<&str> = tags.iter().map(|e| e.text()).collect();
    format!("[{}]", names.join(", "))
}

/// An exported contract's declared pure calls and field copies must name a
/// member whose name is unique in its declaration, so that the printed
/// `.name` resolves to exactly one member.
fn unique_contract_names(r: &Resolved<'_>, f: &Function) -> Result<()> {
    for e in f.requires.iter().chain(&f.ensures) {
        for op in &e.ops {
            let Some(id) = op.reference else { continue };
            let clash = match op.tag {
                1 => r.field(&id).and_then(|(d, variant, fld)| {
                    let decl = &r.module.declarations[d];
                    let same = match variant {
                        None => decl.fields.iter().filter(|x| x.name == fld.name).count(),
                        Some(v) => decl.variants[v]
                            .fields
                            .iter()
                            .filter(|x| x.name == fld.name)
                            .count(),
                    };
                    (same > 1).then(|| format!("field {}.{}", decl.name, fld.name))
                }),
                3 if op.aux0 == 0 => r.funcs.get(&id).and_then(|&(d, fi)| {
                    let decl = &r.module.declarations[d];
                    let name = &decl.functions[fi].name;
                    let same = decl.functions.iter().filter(|x| x.name == *name).count();
                    // A type pure-call also spells its owner declaration.
                    let owners = r
                        .module
                        .declarations
                        .iter()
                        .filter(|x| x.name == decl.name)
                        .count();
                    let spelled_owner = decl.functions[fi].receiver == ReceiverKind::Type;
                    (same > 1 || (spelled_owner && owners > 1))
                        .then(|| format!("message {}.{name}", decl.name))
                }),
                _ => None,
            };
            if let Some(what) = clash {
                return Err(Error::new(
                    CODE,
                    format!(
                        "an exported contract of {} names {what}, whose name is not unique, so its printed form does not resolve to one member",
                        f.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// One exported function's line (without indentation or newline):
/// `public algorithm message NAME(PARAMS) -> T effects [..] CLAUSES;` or
/// `public init(PARAMS) -> T effects [..] CLAUSES;`.
fn function_line(
    names: &Names<'_>,
    r: &Resolved<'_>,
    checked: &Checked,
    decl_index: usize,
    fn_index: usize,
) -> Result<String> {
    let m = checked.module();
    let owner = Type::Nominal(checked.ids().decls[decl_index].nominal);
    let f = &m.declarations[decl_index].functions[fn_index];
    let fids = &checked.ids().decls[decl_index].functions[fn_index];
    spellable(&f.name, false, "message")?;
    let head = match f.callable {
        CallableKind::Message => format!("algorithm message {}", f.name),
        CallableKind::Initializer => "init".to_string(),
    };
    let mut line = format!(
        "{} {head}({}) -> {} effects {}",
        f.visibility.text(),
        parameters(names, checked, &owner, f, fids)?,
        names.ty(&f.result, true)?,
        effect_list(&f.effects)
    );
    unique_contract_names(r, f)?;
    let clauses = print_clauses(r, decl_index, f).map_err(|e| {
        Error::new(
            CODE,
            format!(
                "the contract of {}.{} has no canonical print form: {e}",
                m.declarations[decl_index].name, f.name
            ),
        )
    })?;
    if !clauses.is_empty() {
        line.push(' ');
        line.push_str(&clauses);
    }
    line.push(';');
    Ok(line)
}

/// A field list `(a: T, b: U)` of variant payload fields in ordinal order.
fn payload(names: &Names<'_>, fields: &[Field]) -> Result<String> {
    let mut parts = Vec::new();
    for i in sorted_by(fields, |f| f.ordinal) {
        let f = &fields[i];
        spellable(&f.name, false, "payload field")?;
        parts.push(format!("{}: {}", f.name, names.ty(&f.ty, true)?));
    }
    Ok(parts.join(", "))
}

/// The canonical interface text of one checked module (docs/zlm/interface.md).
/// Deterministic: it depends only on the module's logical facts, never on
/// the order of its in-memory collections.
pub fn interface(checked: &Checked) -> Result<String> {
    let m = checked.module();
    let ids = checked.ids();
    let names = Names::new(checked);
    let r = Resolved::of_checked(checked);
    spellable(&m.name, true, "module")?;
    spellable(&m.package, true, "package")?;
    let mut out = String::new();
    out.push_str(VERSION_LINE);
    out.push('\n');
    out.push_str(&format!(
        "module {} package {} profile {}\n",
        m.name,
        m.package,
        m.profile.text()
    ));
    out.push_str(&format!(
        "catalog {} {}\n",
        hash::CATALOG_ID,
        to_hex(&ids.catalog)
    ));
    out.push_str(&format!("interface {}\n", to_hex(&ids.module_interface)));
    for (module, _, digest) in dependencies(m) {
        out.push_str(&format!("dependency {module} {}\n", to_hex(&digest)));
    }
    let exports = exported(checked);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for &(decl_index, _) in &exports {
        *seen
            .entry(m.declarations[decl_index].name.as_str())
            .or_default() += 1;
    }
    for (decl_index, dids) in exports {
        let d = &m.declarations[decl_index];
        if seen.get(d.name.as_str()).copied().unwrap_or(0) > 1 {
            return Err(Error::new(
                CODE,
                format!(
                    "two exported declarations are named {}, so the interface cannot name them uniquely",
                    d.name
                ),
            ));
        }
        out.push('\n');
        let own = names.nominal(&dids.nominal, true)?;
        out.push_str(&format!(
            "{} {} {own} {} {{\n",
            d.visibility.text(),
            d.kind.text(),
            if dids.copy { "copy" } else { "move" }
        ));
        for i in sorted_by(&d.fields, |f| f.ordinal) {
            let f = &d.fields[i];
            if f.visibility != Visibility::Public {
                continue;
            }
            spellable(&f.name, false, "field")?;
            out.push_str(&format!(
                "    {} {} {}: {};\n",
                f.visibility.text(),
                f.mutability.text(),
                f.name,
                names.ty(&f.ty, true)?
            ));
        }
        for i in sorted_by(&d.variants, |v| v.tag) {
            let v = &d.variants[i];
            spellable(&v.name, false, "variant")?;
            if v.fields.is_empty() {
                out.push_str(&format!("    variant {};\n", v.name));
            } else {
                out.push_str(&format!(
                    "    variant {}({});\n",
                    v.name,
                    payload(&names, &v.fields)?
                ));
            }
        }
        for fn_index in sorted_by(&dids.functions, |f| f.sig) {
            if d.functions[fn_index].visibility != Visibility::Public {
                continue;
            }
            out.push_str("    ");
            out.push_str(&function_line(&names, &r, checked, decl_index, fn_index)?);
            out.push('\n');
        }
        out.push_str("}\n");
    }
    Ok(out)
}

/// The interface texts of a package's modules in [`package_order`], each
/// with its module's dotted name.
pub fn package(modules: &[&Checked]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(modules.len());
    for i in package_order(modules)? {
        out.push((modules[i].module().name.clone(), interface(modules[i])?));
    }
    Ok(out)
}
