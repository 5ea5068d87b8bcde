//! Cross-module symbols (spec: "an exact public member in a
//! direct-dependency interface"). [`gate`] resolves every declared-function,
//! field, variant and declaration symbol of a module that is not one of its
//! own against the public members of its direct-dependency providers and
//! rejects private, transitive-only and unresolved targets (`ZLM-LINK`);
//! [`LinkedView`] then puts the providers' declarations beside the
//! module's own, so the checker types calls, effects, ownership and loans
//! across modules with the same rules as within one, and the interpreter
//! and the C engine run a package through the same tables.

use super::context::{CResult, CheckError, Resolved, code};
use crate::hash::{Id, to_hex};
use crate::ids::Identities;
use crate::model::*;
use std::collections::{BTreeSet, HashMap};

/// The kind a symbol is used as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Function,
    Field,
    Variant,
    /// A declaration constructed by AGGREGATE_CONSTRUCT.
    Construct,
}

impl Kind {
    fn text(self) -> &'static str {
        match self {
            Kind::Function => "declared function",
            Kind::Field => "field",
            Kind::Variant => "variant",
            Kind::Construct => "value declaration",
        }
    }
}

/// One symbol occurrence: where and what.
struct Use {
    decl: usize,
    func: usize,
    block: Option<u32>,
    op: Option<u32>,
    kind: Kind,
    id: Id,
}

/// A member of a provider: its module, display name and whether it is
/// part of the provider's public interface.
struct Member {
    module: usize,
    name: String,
    public: Result<(), &'static str>,
}

/// The module's own members by kind.
struct Own<'a> {
    ids: &'a Identities,
    functions: std::collections::HashSet<Id>,
    variants: std::collections::HashSet<Id>,
    decls: std::collections::HashSet<Id>,
}

impl<'a> Own<'a> {
    fn new(ids: &'a Identities) -> Self {
        let mut own = Own {
            ids,
            functions: Default::default(),
            variants: Default::default(),
            decls: Default::default(),
        };
        for d in &ids.decls {
            own.decls.insert(d.nominal);
            own.functions.extend(d.functions.iter().map(|f| f.sig));
            own.variants.extend(d.variants.iter().map(|(v, _)| *v));
        }
        own
    }
    fn has(&self, kind: Kind, id: &Id) -> bool {
        match kind {
            Kind::Function => self.functions.contains(id),
            Kind::Field => self.ids.fields.contains_key(id),
            Kind::Variant => self.variants.contains(id),
            Kind::Construct => self.decls.contains(id),
        }
    }
}

/// Every symbol of `m`'s functions that is not one of its own members.
fn foreign_uses(m: &Module, ids: &Identities) -> Vec<Use> {
    let own = Own::new(ids);
    let mut out = Vec::new();
    for (di, d) in m.declarations.iter().enumerate() {
        for (fi, f) in d.functions.iter().enumerate() {
            let mut add = |block: Option<u32>, op: Option<u32>, kind: Kind, id: Id| {
                if !own.has(kind, &id) {
                    out.push(Use {
                        decl: di,
                        func: fi,
                        block,
                        op,
                        kind,
                        id,
                    });
                }
            };
            for p in &f.body.paths {
                for fid in &p.key.fields {
                    add(None, None, Kind::Field, *fid);
                }
            }
            let flow = f.body.blocks.iter().flat_map(|b| {
                b.ops
                    .iter()
                    .enumerate()
                    .map(move |(i, op)| (Some(b.id), i as u32, op))
            });
            let recipes = f.body.edges.iter().flat_map(|e| {
                e.drops
                    .iter()
                    .enumerate()
                    .map(|(i, op)| (None, i as u32, op))
            });
            for (b, i, op) in flow.chain(recipes) {
                let kind = match (op.tag, &op.aux0) {
                    (tag::CALL, Aux::Func(id)) => Some((Kind::Function, *id)),
                    (_, Aux::Field(id)) => Some((Kind::Field, *id)),
                    (_, Aux::Variant(id)) => Some((Kind::Variant, *id)),
                    (tag::AGGREGATE_CONSTRUCT, Aux::Decl(id)) => Some((Kind::Construct, *id)),
                    _ => None,
                };
                if let Some((k, id)) = kind {
                    add(b, Some(i), k, id);
                }
                for o in &op.operands {
                    if let Operand::Place(k) = o {
                        for fid in &k.fields {
                            add(b, Some(i), Kind::Field, *fid);
                        }
                    }
                }
            }
            for e in f.requires.iter().chain(&f.ensures) {
                for op in &e.ops {
                    let Some(id) = op.reference else { continue };
                    match op.tag {
                        1 => add(None, None, Kind::Field, id),
                        3 if op.aux0 == 0 => add(None, None, Kind::Function, id),
                        _ => {}
                    }
                }
            }
        }
    }
    out
}

/// The members of each provider by (kind, ID).
fn members(providers: &[(&Module, &Identities)]) -> HashMap<(Kind, Id), Member> {
    let mut out = HashMap::new();
    for (k, (pm, pids)) in providers.iter().enumerate() {
        for (d, di) in pm.declarations.iter().zip(&pids.decls) {
            let decl_public = if d.visibility == Visibility::Public {
                Ok(())
            } else {
                Err("its declaration is not public")
            };
            for (f, fi) in d.functions.iter().zip(&di.functions) {
                let public = decl_public.and(if f.visibility == Visibility::Public {
                    Ok(())
                } else {
                    Err("the function is not public")
                });
                out.insert(
                    (Kind::Function, fi.sig),
                    Member {
                        module: k,
                        name: format!("{}.{}", d.name, f.name),
                        public,
                    },
                );
            }
            for (f, id) in d.fields.iter().zip(&di.fields) {
                let public = decl_public.and(if f.visibility == Visibility::Public {
                    Ok(())
                } else {
                    Err("the field is not public")
                });
                out.insert(
                    (Kind::Field, *id),
                    Member {
                        module: k,
                        name: format!("{}.{}", d.name, f.name),
                        public,
                    },
                );
            }
            for (v, (vid, payload)) in d.variants.iter().zip(&di.variants) {
                out.insert(
                    (Kind::Variant, *vid),
                    Member {
                        module: k,
                        name: format!("{}.{}", d.name, v.name),
                        public: decl_public,
                    },
                );
                // Payload fields are public members of the complete variant schema.
                let mut fs: Vec<&Field> = v.fields.iter().collect();
                fs.sort_by_key(|f| f.ordinal);
                for (f, id) in fs.iter().zip(payload) {
                    out.insert(
                        (Kind::Field, *id),
                        Member {
                            module: k,
                            name: format!("{}.{}.{}", d.name, v.name, f.name),
                            public: decl_public,
                        },
                    );
                }
            }
            // Constructing another module's value needs every field in its
            // public interface (a private field is the provider's secret).
            let construct = decl_public.and(
                if d.kind == DeclKind::Value
                    && d.fields.iter().all(|f| f.visibility == Visibility::Public)
                {
                    Ok(())
                } else {
                    Err("not every field of it is public")
                },
            );
            out.insert(
                (Kind::Construct, di.nominal),
                Member {
                    module: k,
                    name: d.name.clone(),
                    public: construct,
                },
            );
        }
    }
    out
}

/// Provider modules with their identities.
pub(crate) type Providers<'a> = [(&'a Module, &'a Identities)];

/// What [`gate`] found.
pub(crate) struct Gate {
    /// Functions (declaration, function index) that name a symbol of
    /// another module.
    pub foreign: BTreeSet<(usize, usize)>,
}

/// Resolves the symbols of `m` that are not its own. With `providers`
/// (`direct`: the providers of the modules `m` imports from; `others`:
/// further supplied modules), each must be a public member of a direct
/// provider. Without providers the symbols stay unresolved (the module can
/// be printed but not run), except that a module importing nothing has no
/// direct dependency to name.
pub(crate) fn gate(
    m: &Module,
    ids: &Identities,
    providers: Option<(&Providers<'_>, &Providers<'_>)>,
) -> CResult<Gate> {
    let uses = foreign_uses(m, ids);
    let foreign = uses.iter().map(|u| (u.decl, u.func)).collect();
    let fail = |u: &Use, message: String| CheckError {
        code: code::LINK,
        function: format!(
            "{}.{}",
            m.declarations[u.decl].name, m.declarations[u.decl].functions[u.func].name
        ),
        block: u.block,
        op: u.op,
        message,
    };
    let Some((direct, others)) = providers else {
        if let Some(u) = uses.first()
            && m.imports.is_empty()
        {
            return Err(fail(
                u,
                format!(
                    "{} #{} is not a member of this module, and the module imports from no other module",
                    u.kind.text(),
                    to_hex(&u.id)
                ),
            ));
        }
        return Ok(Gate { foreign });
    };
    if uses.is_empty() {
        return Ok(Gate { foreign });
    }
    let direct_members = members(direct);
    let other_members = members(others);
    for u in &uses {
        match direct_members.get(&(u.kind, u.id)) {
            Some(member) => {
                if let Err(why) = member.public {
                    return Err(fail(
                        u,
                        format!(
                            "{} {}::{} is not a public member of its module's interface ({why})",
                            u.kind.text(),
                            direct[member.module].0.name,
                            member.name
                        ),
                    ));
                }
            }
            None => {
                let message = match other_members.get(&(u.kind, u.id)) {
                    Some(member) => format!(
                        "{} {}::{} belongs to a module this module does not import from (transitive-only)",
                        u.kind.text(),
                        others[member.module].0.name,
                        member.name
                    ),
                    None => format!(
                        "{} #{} does not resolve to a member of this module or of a direct-dependency provider",
                        u.kind.text(),
                        to_hex(&u.id)
                    ),
                };
                return Err(fail(u, message));
            }
        }
    }
    Ok(Gate { foreign })
}

/// A module with the declarations of the providers it links against, as
/// one set of resolution tables: the module's own declarations first, then
/// each provider's, with identities merged (IDs are global, so every
/// symbol resolves to the one declaration that has it).
#[derive(Debug, Clone)]
pub struct LinkedView {
    module: Module,
    ids: Identities,
    local: usize,
    origin: Vec<usize>,
    modules: Vec<(String, NumericProfile)>,
}

impl LinkedView {
    /// Builds the view of `root` and `providers` (in the given order).
    pub(crate) fn new(
        root: (&Module, &Identities),
        providers: &[(&Module, &Identities)],
    ) -> LinkedView {
        let (rm, rids) = root;
        let mut module = rm.clone();
        let mut ids = rids.clone();
        let local = rm.declarations.len();
        let mut origin = Vec::new();
        let mut modules = vec![(rm.name.clone(), rm.profile)];
        for (k, (pm, pids)) in providers.iter().enumerate() {
            let base = module.declarations.len();
            module.declarations.extend(pm.declarations.iter().cloned());
            ids.decls.extend(pids.decls.iter().cloned());
            for (id, info) in &pids.fields {
                let mut info = info.clone();
                info.decl += base;
                ids.fields.entry(*id).or_insert(info);
            }
            for (id, c) in &pids.copy {
                ids.copy.entry(*id).or_insert(*c);
            }
            for (t, id) in &pids.types {
                ids.types.entry(t.clone()).or_insert(*id);
            }
            origin.extend(std::iter::repeat_n(k + 1, pm.declarations.len()));
            modules.push((pm.name.clone(), pm.profile));
        }
        LinkedView {
            module,
            ids,
            local,
            origin,
            modules,
        }
    }

    /// The resolution tables of the view.
    pub fn resolved(&self) -> Resolved<'_> {
        Resolved::of_view(
            &self.module,
            &self.ids,
            self.local,
            self.origin.clone(),
            self.modules.clone(),
        )
    }
}
