//! Canonical semantic reflection of checked modules (C0-REFL-001/002,
//! C0-DET-001/002): modules, public and retained private semantic IDs,
//! types, messages and their domains, effects, contracts, ownership
//! signatures, dispatch contracts, the numeric preset, the verification
//! state and the authority/evidence identities, as one canonical JSON
//! document (keys sorted, no whitespace, integers only). Everything comes
//! from the typed representation and its recomputed identities; no source
//! formatting, table index, offset or host fact enters it, and it never
//! describes a body beyond its digest. Layout: docs/zlm/reflection.md.

use crate::check::contracts::print_expr;
use crate::check::{Checked, Resolved};
use crate::error::{Error, Result};
use crate::hash::{self, Id, to_hex};
use crate::ids::Identities;
use crate::model::*;
use crate::zli::{Names, dependencies, package_order, sorted_by};
use std::collections::BTreeMap;

/// The schema name carried by every reflection document.
pub const SCHEMA: &str = "irkit.zlm.reflection/1";

/// The contract printer whose output the `contract` objects carry.
pub const CONTRACT_PRINTER: &str = "zerglang.zli.contract-printer/1";

/// A JSON value of the reflection document. Objects keep their members in
/// a `BTreeMap`, so they serialize with keys in byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A nonnegative integer.
    Int(u64),
    /// A string.
    Str(String),
    /// An array in the given order.
    Arr(Vec<Json>),
    /// An object.
    Obj(BTreeMap<&'static str, Json>),
}

impl Json {
    /// Canonical serialization: no whitespace, keys in byte order, strings
    /// with the minimal escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
    /// other controls as `\u00xx`).
    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => out.push_str(&n.to_string()),
            Json::Str(s) => string(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    string(out, k);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn obj(members: Vec<(&'static str, Json)>) -> Json {
    Json::Obj(members.into_iter().collect())
}

fn s(text: impl Into<String>) -> Json {
    Json::Str(text.into())
}

fn id(id: &Id) -> Json {
    Json::Str(to_hex(id))
}

/// Type spelling and ID, memoizing type-instance IDs.
struct Types<'a> {
    names: Names<'a>,
    ids: Identities,
    /// Every type named so far, by type-instance ID.
    seen: BTreeMap<Id, Type>,
}

impl Types<'_> {
    /// `{"id": .., "spelling": ..}` of `t`, recording it and its children.
    fn of(&mut self, t: &Type) -> Json {
        let tid = self.record(t);
        obj(vec![("id", id(&tid)), ("spelling", s(self.spell(t)))])
    }
    fn spell(&self, t: &Type) -> String {
        self.names.ty(t, false).unwrap_or_else(|_| t.to_string())
    }
    fn record(&mut self, t: &Type) -> Id {
        for child in t.children() {
            self.record(child);
        }
        let tid = self.ids.type_id(t);
        self.seen.entry(tid).or_insert_with(|| t.clone());
        tid
    }
    /// The `types` table: every recorded type by ascending ID.
    fn table(&mut self) -> Json {
        let seen = std::mem::take(&mut self.seen);
        let mut out = Vec::with_capacity(seen.len());
        for (tid, t) in &seen {
            let children: Vec<Json> = t
                .children()
                .into_iter()
                .map(|c| id(&self.ids.type_id(c)))
                .collect();
            let catalog = match t {
                Type::Scalar(_) | Type::Nominal(_) => Json::Null,
                _ => s(hash::CATALOG_ID),
            };
            out.push(obj(vec![
                ("id", id(tid)),
                ("kind", Json::Int(u64::from(t.kind()))),
                ("spelling", s(self.spell(t))),
                ("copy", Json::Bool(self.ids.is_copy(t))),
                ("catalog", catalog),
                (
                    "scalar",
                    match t {
                        Type::Scalar(k) => s(k.text()),
                        _ => Json::Null,
                    },
                ),
                (
                    "nominal",
                    match t {
                        Type::Nominal(n) => id(n),
                        _ => Json::Null,
                    },
                ),
                ("children", Json::Arr(children)),
            ]));
        }
        self.seen = seen;
        Json::Arr(out)
    }
}

/// The ownership mode of a binding of type `t`: a loan kind, `move` for a
/// non-Copy by-value owner, `copy` otherwise.
fn mode(ids: &Identities, t: &Type) -> &'static str {
    match t {
        Type::Ref(inner) if **inner == Type::AllocatorBytesError => "allocator-loan",
        Type::Ref(_) => "shared-loan",
        Type::Mut(_) => "exclusive-loan",
        Type::SliceByte => "slice-loan",
        t if ids.is_copy(t) => "copy",
        _ => "move",
    }
}

fn field_json(types: &mut Types<'_>, fid: &Id, f: &Field) -> Json {
    obj(vec![
        ("id", id(fid)),
        ("ordinal", Json::Int(u64::from(f.ordinal))),
        ("name", s(&f.name)),
        ("visibility", s(f.visibility.text())),
        ("mutability", s(f.mutability.text())),
        ("type", types.of(&f.ty)),
    ])
}

/// Reflection of one function (never its body beyond the digest).
fn function_json(
    types: &mut Types<'_>,
    r: &Resolved<'_>,
    checked: &Checked,
    decl_index: usize,
    fn_index: usize,
) -> Result<Json> {
    let m = checked.module();
    let d = &m.declarations[decl_index];
    let f = &d.functions[fn_index];
    let fids = &checked.ids().decls[decl_index].functions[fn_index];
    let owner = Type::Nominal(checked.ids().decls[decl_index].nominal);
    let receiver = match f.receiver.binding(&owner) {
        None => Json::Null,
        Some(binding) => {
            let ownership = match f.receiver {
                ReceiverKind::Type => "type",
                _ => mode(&types.ids, &binding),
            };
            obj(vec![
                ("kind", s(f.receiver.text())),
                ("type", types.of(&binding)),
                ("ownership", s(ownership)),
                ("runtime_slot", Json::Bool(f.receiver != ReceiverKind::Type)),
            ])
        }
    };
    let mut params = Vec::new();
    for i in sorted_by(&f.params, |p| p.ordinal) {
        let p = &f.params[i];
        params.push(obj(vec![
            ("id", id(&fids.params[i])),
            ("ordinal", Json::Int(u64::from(p.ordinal))),
            ("name", s(&p.name)),
            ("type", types.of(&p.ty)),
            ("ownership", s(mode(&types.ids, &p.ty))),
            (
                "move",
                Json::Bool(fids.param_flags.get(i).copied() == Some(1)),
            ),
        ]));
    }
    let printed = |list: &[Expr]| -> Result<Json> {
        let mut out = Vec::new();
        for e in list {
            out.push(s(print_expr(r, decl_index, f, e).map_err(|msg| {
                Error::new(
                    crate::zli::CODE,
                    format!(
                        "the contract of {}.{} has no canonical print form: {msg}",
                        d.name, f.name
                    ),
                )
            })?));
        }
        Ok(Json::Arr(out))
    };
    let contract = obj(vec![
        ("digest", id(&fids.contract)),
        ("printer", s(CONTRACT_PRINTER)),
        ("requires", printed(&f.requires)?),
        ("ensures", printed(&f.ensures)?),
        (
            "exported",
            Json::Bool(f.visibility == Visibility::Public && d.visibility == Visibility::Public),
        ),
    ]);
    let effects: Vec<Json> = {
        let mut tags = f.effects.clone();
        tags.sort();
        tags.iter().map(|e| s(e.text())).collect()
    };
    Ok(obj(vec![
        ("signature", id(&fids.sig)),
        ("name", s(&f.name)),
        ("callable", s(f.callable.text())),
        (
            "domain",
            match f.callable {
                CallableKind::Message => s("algorithm"),
                CallableKind::Initializer => Json::Null,
            },
        ),
        ("visibility", s(f.visibility.text())),
        ("receiver", receiver),
        ("params", Json::Arr(params)),
        (
            "result",
            obj(vec![
                ("type", types.of(&f.result)),
                ("ownership", s(mode(&types.ids, &f.result))),
            ]),
        ),
        (
            "effects",
            obj(vec![
                ("digest", id(&fids.effects)),
                ("tags", Json::Arr(effects)),
            ]),
        ),
        ("contract", contract),
        (
            "dispatch",
            obj(vec![
                ("mode", s("static")),
                ("open", Json::Bool(false)),
                ("owner", id(&checked.ids().decls[decl_index].nominal)),
                ("selector", s(&f.name)),
            ]),
        ),
        ("body", id(&fids.body)),
    ]))
}

fn declaration_json(
    types: &mut Types<'_>,
    r: &Resolved<'_>,
    checked: &Checked,
    decl_index: usize,
) -> Result<Json> {
    let d = &checked.module().declarations[decl_index];
    let dids = &checked.ids().decls[decl_index];
    let fields: Vec<Json> = sorted_by(&d.fields, |f| f.ordinal)
        .into_iter()
        .map(|i| field_json(types, &dids.fields[i], &d.fields[i]))
        .collect();
    let mut variants = Vec::new();
    for i in sorted_by(&d.variants, |v| v.tag) {
        let v = &d.variants[i];
        let (vid, pids) = &dids.variants[i];
        // The payload IDs are held in ordinal order.
        let mut by_ordinal: Vec<&Field> = v.fields.iter().collect();
        by_ordinal.sort_by_key(|f| f.ordinal);
        let payload: Vec<Json> = by_ordinal
            .iter()
            .zip(pids)
            .map(|(f, pid)| field_json(types, pid, f))
            .collect();
        variants.push(obj(vec![
            ("id", id(vid)),
            ("tag", Json::Int(u64::from(v.tag))),
            ("name", s(&v.name)),
            ("fields", Json::Arr(payload)),
        ]));
    }
    let mut messages = Vec::new();
    for fn_index in sorted_by(&dids.functions, |f| f.sig) {
        messages.push(function_json(types, r, checked, decl_index, fn_index)?);
    }
    let self_type = Type::Nominal(dids.nominal);
    Ok(obj(vec![
        ("nominal", id(&dids.nominal)),
        ("name", s(&d.name)),
        ("kind", s(d.kind.text())),
        ("visibility", s(d.visibility.text())),
        ("exported", Json::Bool(d.visibility == Visibility::Public)),
        ("copy", Json::Bool(dids.copy)),
        ("open", Json::Bool(false)),
        ("type", types.of(&self_type)),
        ("interface", id(&dids.interface)),
        ("definition", id(&dids.definition)),
        ("fields", Json::Arr(fields)),
        ("variants", Json::Arr(variants)),
        ("messages", Json::Arr(messages)),
    ]))
}

/// Reflection of one checked module as a JSON value.
pub fn module_json(checked: &Checked) -> Result<Json> {
    let m = checked.module();
    let ids = checked.ids();
    let r = Resolved::of_checked(checked);
    let mut types = Types {
        names: Names::new(checked),
        ids: ids.clone(),
        seen: BTreeMap::new(),
    };
    let mut imports: Vec<(Id, Json)> = m
        .imports
        .iter()
        .zip(&ids.imports)
        .map(|(imp, nominal)| {
            (
                *nominal,
                obj(vec![
                    ("nominal", id(nominal)),
                    ("module", s(&imp.module)),
                    ("name", s(&imp.name)),
                    ("kind", s(imp.kind.text())),
                    ("copy", Json::Bool(imp.copy)),
                    ("interface", id(&imp.interface)),
                ]),
            )
        })
        .collect();
    imports.sort_by_key(|a| a.0);
    let deps: Vec<Json> = dependencies(m)
        .into_iter()
        .map(|(module, ns, digest)| {
            obj(vec![
                ("module", s(module)),
                ("namespace", id(&ns)),
                ("interface", id(&digest)),
            ])
        })
        .collect();
    let mut decls = Vec::new();
    for decl_index in sorted_by(&ids.decls, |d| d.nominal) {
        decls.push(declaration_json(&mut types, &r, checked, decl_index)?);
    }
    // Every distinct effect set of the module's functions, by digest.
    let mut effect_sets: BTreeMap<Id, Vec<Effect>> = BTreeMap::new();
    for (d, dids) in m.declarations.iter().zip(&ids.decls) {
        for (f, fids) in d.functions.iter().zip(&dids.functions) {
            let mut tags = f.effects.clone();
            tags.sort();
            effect_sets.insert(fids.effects, tags);
        }
    }
    let effect_sets: Vec<Json> = effect_sets
        .iter()
        .map(|(digest, tags)| {
            obj(vec![
                ("digest", id(digest)),
                (
                    "tags",
                    Json::Arr(tags.iter().map(|e| s(e.text())).collect()),
                ),
            ])
        })
        .collect();
    let contract_bearing = m
        .declarations
        .iter()
        .flat_map(|d| &d.functions)
        .any(|f| !f.requires.is_empty() || !f.ensures.is_empty());
    // The exact artifact content address: the canonical bytes are the
    // writer's encoding of the checked model (decoding accepted only bytes
    // equal to it).
    let bytes = crate::write::write(m)?;
    Ok(obj(vec![
        ("module", s(&m.name)),
        ("package", s(&m.package)),
        ("namespace", id(&ids.namespace)),
        ("numeric_profile", s(m.profile.text())),
        (
            "verification",
            obj(vec![
                ("mode", s(m.mode.text())),
                ("checked", Json::Bool(true)),
                ("imports_resolved", Json::Bool(checked.imports_resolved())),
                ("contract_bearing", Json::Bool(contract_bearing)),
            ]),
        ),
        (
            "identities",
            obj(vec![
                ("module_content", id(&checked.module_content())),
                ("module_interface", id(&ids.module_interface)),
                ("artifact", id(&crate::address(&bytes))),
                ("catalog_content", id(&ids.catalog)),
            ]),
        ),
        ("dependencies", Json::Arr(deps)),
        (
            "imports",
            Json::Arr(imports.into_iter().map(|(_, j)| j).collect()),
        ),
        ("declarations", Json::Arr(decls)),
        ("effect_sets", Json::Arr(effect_sets)),
        ("types", types.table()),
    ]))
}

/// The canonical reflection document of a package (the root module and
/// its providers, in any order): `{"schema", "catalog", "root", "modules"}`
/// with the modules in [`package_order`], serialized canonically and
/// ended by one newline. `root` indexes `modules`.
pub fn package(modules: &[&Checked], root: usize) -> Result<String> {
    let order = package_order(modules)?;
    let mut list = Vec::with_capacity(order.len());
    for &i in &order {
        list.push(module_json(modules[i])?);
    }
    let root_name = modules
        .get(root)
        .map(|c| c.module().name.clone())
        .ok_or_else(|| Error::new(crate::error::code::MODEL, "no root module"))?;
    let doc = obj(vec![
        ("schema", s(SCHEMA)),
        (
            "catalog",
            obj(vec![
                ("id", s(hash::CATALOG_ID)),
                ("content", id(&crate::catalog::content_identity())),
            ]),
        ),
        ("root", s(root_name)),
        ("modules", Json::Arr(list)),
    ]);
    let mut out = String::new();
    doc.write(&mut out);
    out.push('\n');
    Ok(out)
}

/// The reflection document of one module (a package of one).
pub fn reflect(checked: &Checked) -> Result<String> {
    package(&[checked], 0)
}
