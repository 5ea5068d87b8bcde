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
    /// The cleanup edge whose recipe `op` is, for a use in a recipe.
    edge: Option<u32>,
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
        for decl_ids in &ids.decls {
            own.decls.insert(decl_ids.nominal);
            own.functions
                .extend(decl_ids.functions.iter().map(|f| f.sig));
            own.variants
                .extend(decl_ids.variants.iter().map(|(v, _)| *v));
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

/// Every symbol of `module`'s functions that is not one of its own members.
fn foreign_uses(module: &Module, ids: &Identities) -> Vec<Use> {
    let own = Own::new(ids);
    let mut out = Vec::new();
    for (decl_index, decl) in module.declarations.iter().enumerate() {
        for (fn_index, function) in decl.functions.iter().enumerate() {
            let mut add =
                |(block, edge): (Option<u32>, Option<u32>), op: Option<u32>, kind: Kind, id: Id| {
                    if !own.has(kind, &id) {
                        out.push(Use {
                            decl: decl_index,
                            func: fn_index,
                            block,
                            op,
                            edge,
                            kind,
                            id,
                        });
                    }
                };
            for path in &function.body.paths {
                for fid in &path.key.fields {
                    add((None, None), None, Kind::Field, *fid);
                }
            }
            let flow = function.body.blocks.iter().flat_map(|b| {
                b.ops
                    .iter()
                    .enumerate()
                    .map(move |(i, op)| ((Some(b.id), None), i as u32, op))
            });
            let recipes = function.body.edges.iter().flat_map(|e| {
                e.drops
                    .iter()
                    .enumerate()
                    .map(move |(i, op)| ((None, Some(e.id)), i as u32, op))
            });
            for (site, ordinal, op) in flow.chain(recipes) {
                let kind = match (op.tag, &op.aux0) {
                    (tag::CALL, Aux::Func(id)) => Some((Kind::Function, *id)),
                    (_, Aux::Field(id)) => Some((Kind::Field, *id)),
                    (_, Aux::Variant(id)) => Some((Kind::Variant, *id)),
                    (tag::AGGREGATE_CONSTRUCT, Aux::Decl(id)) => Some((Kind::Construct, *id)),
                    _ => None,
                };
                if let Some((use_kind, id)) = kind {
                    add(site, Some(ordinal), use_kind, id);
                }
                for operand in &op.operands {
                    if let Operand::Place(place) = operand {
                        for fid in &place.fields {
                            add(site, Some(ordinal), Kind::Field, *fid);
                        }
                    }
                }
            }
            for clause in function.requires.iter().chain(&function.ensures) {
                for op in &clause.ops {
                    let Some(id) = op.reference else { continue };
                    match op.tag {
                        1 => add((None, None), None, Kind::Field, id),
                        3 if op.aux0 == 0 => add((None, None), None, Kind::Function, id),
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
    for (provider_index, (provider_module, pids)) in providers.iter().enumerate() {
        for (decl, decl_ids) in provider_module.declarations.iter().zip(&pids.decls) {
            let decl_public = if decl.visibility == Visibility::Public {
                Ok(())
            } else {
                Err("its declaration is not public")
            };
            for (function, fn_ids) in decl.functions.iter().zip(&decl_ids.functions) {
                let public = decl_public.and(if function.visibility == Visibility::Public {
                    Ok(())
                } else {
                    Err("the function is not public")
                });
                out.insert(
                    (Kind::Function, fn_ids.sig),
                    Member {
                        module: provider_index,
                        name: format!("{}.{}", decl.name, function.name),
                        public,
                    },
                );
            }
            for (field, id) in decl.fields.iter().zip(&decl_ids.fields) {
                let public = decl_public.and(if field.visibility == Visibility::Public {
                    Ok(())
                } else {
                    Err("the field is not public")
                });
                out.insert(
                    (Kind::Field, *id),
                    Member {
                        module: provider_index,
                        name: format!("{}.{}", decl.name, field.name),
                        public,
                    },
                );
            }
            for (variant, (vid, payload)) in decl.variants.iter().zip(&decl_ids.variants) {
                out.insert(
                    (Kind::Variant, *vid),
                    Member {
                        module: provider_index,
                        name: format!("{}.{}", decl.name, variant.name),
                        public: decl_public,
                    },
                );
                // Payload fields are public members of the complete variant schema.
                let mut payload_fields: Vec<&Field> = variant.fields.iter().collect();
                payload_fields.sort_by_key(|f| f.ordinal);
                for (field, id) in payload_fields.iter().zip(payload) {
                    out.insert(
                        (Kind::Field, *id),
                        Member {
                            module: provider_index,
                            name: format!("{}.{}.{}", decl.name, variant.name, field.name),
                            public: decl_public,
                        },
                    );
                }
            }
            // Constructing another module's value needs every field in its
            // public interface (a private field is the provider's secret).
            let construct = decl_public.and(
                if decl.kind == DeclKind::Value
                    && decl
                        .fields
                        .iter()
                        .all(|f| f.visibility == Visibility::Public)
                {
                    Ok(())
                } else {
                    Err("not every field of it is public")
                },
            );
            out.insert(
                (Kind::Construct, decl_ids.nominal),
                Member {
                    module: provider_index,
                    name: decl.name.clone(),
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

/// Resolves the symbols of `module` that are not its own. With `providers`
/// (`direct`: the providers of the modules `module` imports from; `others`:
/// further supplied modules), each must be a public member of a direct
/// provider. Without providers the symbols stay unresolved (the module can
/// be printed but not run), except that a module importing nothing has no
/// direct dependency to name.
pub(crate) fn gate(
    module: &Module,
    ids: &Identities,
    providers: Option<(&Providers<'_>, &Providers<'_>)>,
) -> CResult<Gate> {
    let uses = foreign_uses(module, ids);
    let foreign = uses
        .iter()
        .map(|foreign_use| (foreign_use.decl, foreign_use.func))
        .collect();
    let fail = |foreign_use: &Use, message: String| CheckError {
        code: code::LINK,
        function: format!(
            "{}.{}",
            module.declarations[foreign_use.decl].name,
            module.declarations[foreign_use.decl].functions[foreign_use.func].name
        ),
        block: foreign_use.block,
        op: foreign_use.op,
        edge: foreign_use.edge,
        message,
    };
    let Some((direct, others)) = providers else {
        if let Some(foreign_use) = uses.first()
            && module.imports.is_empty()
        {
            return Err(fail(
                foreign_use,
                format!(
                    "{} #{} is not a member of this module, and the module imports from no other module",
                    foreign_use.kind.text(),
                    to_hex(&foreign_use.id)
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
    for foreign_use in &uses {
        match direct_members.get(&(foreign_use.kind, foreign_use.id)) {
            Some(member) => {
                if let Err(why) = member.public {
                    return Err(fail(
                        foreign_use,
                        format!(
                            "{} {}::{} is not a public member of its module's interface ({why})",
                            foreign_use.kind.text(),
                            direct[member.module].0.name,
                            member.name
                        ),
                    ));
                }
            }
            None => {
                let message = match other_members.get(&(foreign_use.kind, foreign_use.id)) {
                    Some(member) => format!(
                        "{} {}::{} belongs to a module this module does not import from (transitive-only)",
                        foreign_use.kind.text(),
                        others[member.module].0.name,
                        member.name
                    ),
                    None => format!(
                        "{} #{} does not resolve to a member of this module or of a direct-dependency provider",
                        foreign_use.kind.text(),
                        to_hex(&foreign_use.id)
                    ),
                };
                return Err(fail(foreign_use, message));
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
        let (root_module, root_ids) = root;
        let mut module = root_module.clone();
        let mut ids = root_ids.clone();
        let local = root_module.declarations.len();
        let mut origin = Vec::new();
        let mut modules = vec![(root_module.name.clone(), root_module.profile)];
        for (provider_index, (provider_module, pids)) in providers.iter().enumerate() {
            let base = module.declarations.len();
            module
                .declarations
                .extend(provider_module.declarations.iter().cloned());
            ids.decls.extend(pids.decls.iter().cloned());
            for (id, info) in &pids.fields {
                let mut info = info.clone();
                info.decl += base;
                ids.fields.entry(*id).or_insert(info);
            }
            for (id, copy) in &pids.copy {
                ids.copy.entry(*id).or_insert(*copy);
            }
            for (ty, id) in &pids.types {
                ids.types.entry(ty.clone()).or_insert(*id);
            }
            origin.extend(std::iter::repeat_n(
                provider_index + 1,
                provider_module.declarations.len(),
            ));
            modules.push((provider_module.name.clone(), provider_module.profile));
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
