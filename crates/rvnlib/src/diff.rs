//! API compatibility between two versions of one library.
//!
//! A consumer binds against a library's declaration half (types, methods,
//! fields, properties) and links its IR by key: calls name a function key and
//! are checked against the callee's signature; struct-typed storage names a
//! struct key and addresses fields by index. [`diff`] compares OLD with NEW on
//! exactly those terms and says, per change, whether a consumer built against
//! OLD still links against NEW ([`Change::breaking`]). Bodies are compared by a
//! canonical digest: a changed body links but behaves differently, which is
//! reported without breaking.

use crate::ir::*;
use crate::json;
use crate::library::{CompiledLibrary, LibraryMethod, LibraryType, LibraryTypeReference};
use sha2::{Digest as _, Sha256};
use std::collections::{HashMap, HashSet};

/// What changed (a stable identifier, used as the JSON `change`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChangeKind {
    /// A function key OLD defines is gone: calls to it no longer resolve (RVN3010 at link).
    FunctionRemoved,
    /// A new function key.
    FunctionAdded,
    /// Same key, different return type, parameter types, count or passing mode.
    FunctionSignatureChanged,
    /// Same key and signature, different body (canonical digest).
    FunctionBodyChanged,
    /// Only the function's `Name` (never used for lookup) or parameter names changed.
    FunctionRenamed,
    /// Same key, signature and body, but it calls (directly or through others)
    /// a function of this library that changed or is gone: it behaves differently.
    FunctionCalleeChanged,
    /// A struct key OLD defines is gone: storage naming it is RVN5004 at link.
    StructRemoved,
    /// A new struct key.
    StructAdded,
    /// Fields were removed, added, retyped or reordered: field indices and
    /// constructs compiled against OLD no longer fit.
    StructLayoutChanged,
    /// Only field names (or the struct's `Name`) changed; indices and types are equal.
    StructRenamed,
    /// A declared type (by qualified name) is gone.
    TypeRemoved,
    /// A new declared type.
    TypeAdded,
    /// A method, field or property of a declared type is gone or changed its signature.
    MemberRemoved,
    /// A new method, field or property.
    MemberAdded,
    /// A method or accessor that linked to IR in OLD links to nothing in NEW:
    /// Raven records a null `IrFunction` when export refused the body
    /// (RVN5001 binding, RVN5007 stream, RVN5008 groupshared).
    ExportWithdrawn,
    /// A method or accessor links to a different IR key (a consumer built
    /// against OLD keeps calling the old key, which must still exist).
    ExportRetargeted,
}

impl ChangeKind {
    /// The identifier written in reports.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::FunctionRemoved => "function-removed",
            ChangeKind::FunctionAdded => "function-added",
            ChangeKind::FunctionSignatureChanged => "function-signature-changed",
            ChangeKind::FunctionBodyChanged => "function-body-changed",
            ChangeKind::FunctionRenamed => "function-renamed",
            ChangeKind::FunctionCalleeChanged => "function-callee-changed",
            ChangeKind::StructRemoved => "struct-removed",
            ChangeKind::StructAdded => "struct-added",
            ChangeKind::StructLayoutChanged => "struct-layout-changed",
            ChangeKind::StructRenamed => "struct-renamed",
            ChangeKind::TypeRemoved => "type-removed",
            ChangeKind::TypeAdded => "type-added",
            ChangeKind::MemberRemoved => "member-removed",
            ChangeKind::MemberAdded => "member-added",
            ChangeKind::ExportWithdrawn => "export-withdrawn",
            ChangeKind::ExportRetargeted => "export-retargeted",
        }
    }

    /// Whether a consumer built against OLD fails to bind or link against NEW.
    pub fn breaking(self) -> bool {
        matches!(
            self,
            ChangeKind::FunctionRemoved
                | ChangeKind::FunctionSignatureChanged
                | ChangeKind::StructRemoved
                | ChangeKind::StructLayoutChanged
                | ChangeKind::TypeRemoved
                | ChangeKind::MemberRemoved
                | ChangeKind::ExportWithdrawn
        )
    }
}

/// One difference between OLD and NEW.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed.
    pub kind: ChangeKind,
    /// The function or struct key, or the declared type's qualified name
    /// (`Type.member` for members).
    pub subject: String,
    /// What exactly, in words.
    pub detail: String,
}

impl Change {
    /// Whether this change breaks a consumer built against OLD.
    pub fn breaking(&self) -> bool {
        self.kind.breaking()
    }
}

/// Every change, IR first (structs, functions), then the declaration half,
/// each in OLD's order followed by what NEW adds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The changes.
    pub changes: Vec<Change>,
}

impl Report {
    /// True when no change breaks a consumer built against OLD.
    pub fn compatible(&self) -> bool {
        !self.changes.iter().any(Change::breaking)
    }

    /// The breaking changes.
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.breaking())
    }
}

/// Compares two versions of a library.
pub fn diff(old: &CompiledLibrary, new: &CompiledLibrary) -> Report {
    let (old, new) = (first_occurrences(old), first_occurrences(new));
    let mut changes = Vec::new();
    diff_structs(&old.ir, &new.ir, &mut changes);
    diff_functions(&old.ir, &new.ir, &mut changes);
    diff_types(&old.types, &new.types, &mut changes);
    Report { changes }
}

/// The library as a consumer sees it: of a repeated key (struct, function,
/// type, member) only the first counts, as the linker keeps the first.
fn first_occurrences(library: &CompiledLibrary) -> CompiledLibrary {
    fn keep_first<T: Clone, K: std::hash::Hash + Eq>(items: &[T], key: impl Fn(&T) -> K) -> Vec<T> {
        let mut seen = HashSet::new();
        items
            .iter()
            .filter(|i| seen.insert(key(i)))
            .cloned()
            .collect()
    }
    let mut out = library.clone();
    out.ir.structs = keep_first(&library.ir.structs, |s| s.key.clone());
    out.ir.functions = keep_first(&library.ir.functions, |f| f.key.clone());
    out.types = keep_first(&library.types, LibraryType::qualified_name);
    for ty in &mut out.types {
        ty.methods = keep_first(&ty.methods, |m| format!("{:?}", method_id(m)));
        ty.fields = keep_first(&ty.fields, |f| f.name.clone());
        ty.properties = keep_first(&ty.properties, |p| p.name.clone());
    }
    out
}

fn push(changes: &mut Vec<Change>, kind: ChangeKind, subject: &str, detail: String) {
    changes.push(Change {
        kind,
        subject: subject.to_string(),
        detail,
    });
}

fn diff_structs(old: &LibraryIr, new: &LibraryIr, changes: &mut Vec<Change>) {
    let new_by_key: HashMap<&str, &LibraryIrStruct> =
        new.structs.iter().map(|s| (s.key.as_str(), s)).collect();
    let old_keys: HashSet<&str> = old.structs.iter().map(|s| s.key.as_str()).collect();
    for o in &old.structs {
        let Some(n) = new_by_key.get(o.key.as_str()) else {
            push(changes, ChangeKind::StructRemoved, &o.key, "removed".into());
            continue;
        };
        if o == *n {
            continue;
        }
        if let Some(detail) = layout_change(o, n) {
            push(changes, ChangeKind::StructLayoutChanged, &o.key, detail);
        } else if o != *n {
            let old_names: Vec<&str> = o.fields.iter().map(|f| f.name.as_str()).collect();
            let new_names: Vec<&str> = n.fields.iter().map(|f| f.name.as_str()).collect();
            push(
                changes,
                ChangeKind::StructRenamed,
                &o.key,
                format!(
                    "name `{}` -> `{}`, fields ({}) -> ({})",
                    o.name,
                    n.name,
                    old_names.join(", "),
                    new_names.join(", ")
                ),
            );
        }
    }
    for n in new
        .structs
        .iter()
        .filter(|n| !old_keys.contains(n.key.as_str()))
    {
        push(changes, ChangeKind::StructAdded, &n.key, "added".into());
    }
}

/// Why `new`'s field indices or types no longer fit code compiled against `old`.
fn layout_change(old: &LibraryIrStruct, new: &LibraryIrStruct) -> Option<String> {
    let new_index: HashMap<&str, usize> = new
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut reasons = Vec::new();
    for (i, f) in old.fields.iter().enumerate() {
        match new_index.get(f.name.as_str()) {
            None => reasons.push(format!("field `{}` removed", f.name)),
            Some(&j) => {
                let g = &new.fields[j];
                if !g.ty.same_type(&f.ty) {
                    reasons.push(format!(
                        "field `{}` retyped {} -> {}",
                        f.name,
                        f.ty.display(),
                        g.ty.display()
                    ));
                }
                if j != i {
                    reasons.push(format!("field `{}` moved from index {i} to {j}", f.name));
                }
            }
        }
    }
    let old_names: HashSet<&str> = old.fields.iter().map(|f| f.name.as_str()).collect();
    for f in new
        .fields
        .iter()
        .filter(|f| !old_names.contains(f.name.as_str()))
    {
        reasons.push(format!("field `{}` added", f.name));
    }
    // Renamed fields keep their index and type: not a layout change.
    let same_shape = old.fields.len() == new.fields.len()
        && old
            .fields
            .iter()
            .zip(&new.fields)
            .all(|(a, b)| a.ty.same_type(&b.ty));
    if reasons.is_empty() || same_shape && renamed_only(old, new) {
        None
    } else {
        Some(reasons.join("; "))
    }
}

/// Every difference is a field name at an unchanged index with an unchanged type.
fn renamed_only(old: &LibraryIrStruct, new: &LibraryIrStruct) -> bool {
    let new_names: HashSet<&str> = new.fields.iter().map(|f| f.name.as_str()).collect();
    // A name that moved to another index is a reorder, not a rename.
    old.fields
        .iter()
        .zip(&new.fields)
        .all(|(a, b)| a.name == b.name || !new_names.contains(a.name.as_str()))
}

fn diff_functions(old: &LibraryIr, new: &LibraryIr, changes: &mut Vec<Change>) {
    let new_by_key: HashMap<&str, &LibraryIrFunction> =
        new.functions.iter().map(|f| (f.key.as_str(), f)).collect();
    let old_keys: HashSet<&str> = old.functions.iter().map(|f| f.key.as_str()).collect();
    // Keys whose signature or body differ, or that are gone.
    let changed: HashSet<&str> = old
        .functions
        .iter()
        .filter(|o| {
            new_by_key.get(o.key.as_str()).is_none_or(|n| {
                signature_change(o, n).is_some() || body_digest(o) != body_digest(n)
            })
        })
        .map(|o| o.key.as_str())
        .collect();
    for o in &old.functions {
        let Some(n) = new_by_key.get(o.key.as_str()) else {
            push(
                changes,
                ChangeKind::FunctionRemoved,
                &o.key,
                "removed".into(),
            );
            continue;
        };
        if let Some(detail) = signature_change(o, n) {
            push(
                changes,
                ChangeKind::FunctionSignatureChanged,
                &o.key,
                detail,
            );
            continue;
        }
        let (a, b) = (body_digest(o), body_digest(n));
        if a != b {
            push(
                changes,
                ChangeKind::FunctionBodyChanged,
                &o.key,
                format!("body digest {} -> {}", &a[..16], &b[..16]),
            );
        } else {
            if o != *n {
                push(
                    changes,
                    ChangeKind::FunctionRenamed,
                    &o.key,
                    format!("name `{}` -> `{}` (or parameter names)", o.name, n.name),
                );
            }
            if let Some(chain) = reaches_changed(n, &new_by_key, &changed) {
                push(
                    changes,
                    ChangeKind::FunctionCalleeChanged,
                    &o.key,
                    format!("calls {}, which changed", chain.join(" -> ")),
                );
            }
        }
    }
    for n in new
        .functions
        .iter()
        .filter(|n| !old_keys.contains(n.key.as_str()))
    {
        push(changes, ChangeKind::FunctionAdded, &n.key, "added".into());
    }
}

/// The shortest call chain from `start` (in NEW) to a changed key, if any.
fn reaches_changed<'a>(
    start: &'a LibraryIrFunction,
    functions: &HashMap<&'a str, &'a LibraryIrFunction>,
    changed: &HashSet<&str>,
) -> Option<Vec<String>> {
    let mut parent: HashMap<&str, &str> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start.key.as_str()]);
    let mut seen: HashSet<&str> = HashSet::from([start.key.as_str()]);
    while let Some(key) = queue.pop_front() {
        let Some(f) = functions.get(key) else {
            continue;
        };
        for callee in crate::walk::callees(&f.body) {
            if !seen.insert(callee) {
                continue;
            }
            parent.insert(callee, key);
            if changed.contains(callee) {
                let mut chain = vec![format!("`{callee}`")];
                let mut at = key;
                while at != start.key {
                    chain.push(format!("`{at}`"));
                    at = parent.get(at).copied().unwrap_or(start.key.as_str());
                }
                chain.reverse();
                return Some(chain);
            }
            queue.push_back(callee);
        }
    }
    None
}

fn signature_text(f: &LibraryIrFunction) -> String {
    let parameters: Vec<String> = f
        .parameters
        .iter()
        .map(|p| {
            format!(
                "{}{}",
                if p.by_reference { "inout " } else { "" },
                p.ty.display()
            )
        })
        .collect();
    format!("({}): {}", parameters.join(", "), f.return_type.display())
}

fn signature_change(old: &LibraryIrFunction, new: &LibraryIrFunction) -> Option<String> {
    let same = old.return_type.same_type(&new.return_type)
        && old.parameters.len() == new.parameters.len()
        && old
            .parameters
            .iter()
            .zip(&new.parameters)
            .all(|(a, b)| a.by_reference == b.by_reference && a.ty.same_type(&b.ty));
    if same {
        None
    } else {
        Some(format!(
            "{} -> {}",
            signature_text(old),
            signature_text(new)
        ))
    }
}

/// SHA-256 of the function's canonical compact JSON without its key, name
/// and parameter names: what the body computes, not what it is called.
pub fn body_digest(function: &LibraryIrFunction) -> String {
    let mut f = function.clone();
    f.key = String::new();
    f.name = String::new();
    for p in &mut f.parameters {
        p.name = String::new();
    }
    let mut holder = CompiledLibrary::new("");
    holder.ir.functions.push(f);
    let text = json::to_compact_json(&holder, crate::version::RAVEN_VERSION);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn diff_types(old: &[LibraryType], new: &[LibraryType], changes: &mut Vec<Change>) {
    let new_by_name: HashMap<String, &LibraryType> =
        new.iter().map(|t| (t.qualified_name(), t)).collect();
    let old_names: HashSet<String> = old.iter().map(|t| t.qualified_name()).collect();
    for o in old {
        let name = o.qualified_name();
        match new_by_name.get(&name) {
            None => push(changes, ChangeKind::TypeRemoved, &name, "removed".into()),
            Some(n) if o == *n => {}
            Some(n) => diff_members(&name, o, n, changes),
        }
    }
    for n in new {
        let name = n.qualified_name();
        if !old_names.contains(&name) {
            push(changes, ChangeKind::TypeAdded, &name, "added".into());
        }
    }
}

fn reference_text(ty: &LibraryTypeReference) -> String {
    match (&ty.name, ty.elements.is_empty()) {
        (Some(name), _) => name.clone(),
        (None, false) => format!(
            "({})",
            ty.elements
                .iter()
                .map(reference_text)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, true) => match &ty.element {
            Some(element) => format!("{}[]", reference_text(element)),
            None => ty.special.as_str().to_string(),
        },
    }
}

/// A method's identity for binding: name, parameter types and passing modes.
fn method_signature(m: &LibraryMethod) -> String {
    let parameters: Vec<String> = m
        .parameters
        .iter()
        .map(|p| {
            format!(
                "{}{}",
                if p.ref_kind == crate::library::RefKind::InOut {
                    "inout "
                } else {
                    ""
                },
                reference_text(&p.ty)
            )
        })
        .collect();
    format!(
        "{}({}): {}",
        m.name,
        parameters.join(", "),
        reference_text(&m.return_type)
    )
}

/// What a consumer's binder matched a method by: name, staticness,
/// parameter types with passing modes, return type.
type MethodId<'a> = (
    &'a str,
    bool,
    Vec<(&'a LibraryTypeReference, bool)>,
    &'a LibraryTypeReference,
);

fn method_id(m: &LibraryMethod) -> MethodId<'_> {
    (
        m.name.as_str(),
        m.is_static,
        m.parameters
            .iter()
            .map(|p| (&p.ty, p.ref_kind == crate::library::RefKind::InOut))
            .collect(),
        &m.return_type,
    )
}

fn diff_members(owner: &str, old: &LibraryType, new: &LibraryType, changes: &mut Vec<Change>) {
    // Methods, by binding signature (overloads are distinct members).
    let new_methods: HashMap<MethodId<'_>, &LibraryMethod> =
        new.methods.iter().map(|m| (method_id(m), m)).collect();
    let old_methods: HashSet<MethodId<'_>> = old.methods.iter().map(method_id).collect();
    for m in &old.methods {
        let signature = method_signature(m);
        let subject = format!("{owner}.{signature}");
        match new_methods.get(&method_id(m)) {
            None => push(
                changes,
                ChangeKind::MemberRemoved,
                &subject,
                "method removed or its signature changed".into(),
            ),
            Some(n) => export_change(
                &subject,
                m.ir_function.as_deref(),
                n.ir_function.as_deref(),
                changes,
            ),
        }
    }
    for m in &new.methods {
        let signature = method_signature(m);
        if !old_methods.contains(&method_id(m)) {
            push(
                changes,
                ChangeKind::MemberAdded,
                &format!("{owner}.{signature}"),
                "method added".into(),
            );
        }
    }
    // Fields, by name and type.
    for f in &old.fields {
        let subject = format!("{owner}.{}", f.name);
        match new.fields.iter().find(|g| g.name == f.name) {
            None => push(
                changes,
                ChangeKind::MemberRemoved,
                &subject,
                "field removed".into(),
            ),
            Some(g) if g.ty != f.ty || g.is_static != f.is_static => push(
                changes,
                ChangeKind::MemberRemoved,
                &subject,
                format!(
                    "field retyped {} -> {}",
                    reference_text(&f.ty),
                    reference_text(&g.ty)
                ),
            ),
            Some(_) => {}
        }
    }
    for g in new
        .fields
        .iter()
        .filter(|g| !old.fields.iter().any(|f| f.name == g.name))
    {
        push(
            changes,
            ChangeKind::MemberAdded,
            &format!("{owner}.{}", g.name),
            "field added".into(),
        );
    }
    // Properties, by name; accessors that disappear are removals.
    for p in &old.properties {
        let subject = format!("{owner}.{}", p.name);
        match new.properties.iter().find(|q| q.name == p.name) {
            None => push(
                changes,
                ChangeKind::MemberRemoved,
                &subject,
                "property removed".into(),
            ),
            Some(q) => {
                if q.ty != p.ty || p.has_getter && !q.has_getter || p.has_setter && !q.has_setter {
                    push(
                        changes,
                        ChangeKind::MemberRemoved,
                        &subject,
                        "property retyped or lost an accessor".into(),
                    );
                } else {
                    export_change(
                        &format!("{subject}:get"),
                        p.ir_getter.as_deref(),
                        q.ir_getter.as_deref(),
                        changes,
                    );
                    export_change(
                        &format!("{subject}:set"),
                        p.ir_setter.as_deref(),
                        q.ir_setter.as_deref(),
                        changes,
                    );
                }
            }
        }
    }
    for q in new
        .properties
        .iter()
        .filter(|q| !old.properties.iter().any(|p| p.name == q.name))
    {
        push(
            changes,
            ChangeKind::MemberAdded,
            &format!("{owner}.{}", q.name),
            "property added".into(),
        );
    }
}

fn export_change(subject: &str, old: Option<&str>, new: Option<&str>, changes: &mut Vec<Change>) {
    match (old, new) {
        (Some(key), None) => push(
            changes,
            ChangeKind::ExportWithdrawn,
            subject,
            format!(
                "linked to `{key}`, now to nothing (export refused the body: RVN5001 binding, RVN5007 stream or RVN5008 groupshared)"
            ),
        ),
        (Some(a), Some(b)) if a != b => push(
            changes,
            ChangeKind::ExportRetargeted,
            subject,
            format!("linked to `{a}`, now to `{b}`"),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types::*};
    use crate::library::{EnumName, LibraryProperty, ShaderStage, TypeKind};

    fn function(key: &str, name: &str, parameter: &str) -> LibraryIrFunction {
        let mut f = FunctionBuilder::new(key, name, f32());
        let x = f.param(parameter, f32());
        let v = f.load(f32(), x, vec![]);
        f.ret(Some(v));
        f.finish()
    }

    fn shape(fields: &[(&str, LibraryIrTypeReference)]) -> LibraryIrStruct {
        LibraryIrStruct {
            key: "S".into(),
            name: "S".into(),
            fields: fields
                .iter()
                .map(|(n, t)| LibraryIrField {
                    name: (*n).into(),
                    ty: t.clone(),
                })
                .collect(),
        }
    }

    fn kinds(report: &Report) -> Vec<ChangeKind> {
        report.changes.iter().map(|c| c.kind).collect()
    }

    fn with(structs: Vec<LibraryIrStruct>, functions: Vec<LibraryIrFunction>) -> CompiledLibrary {
        let mut lib = CompiledLibrary::new("L");
        lib.ir.structs = structs;
        lib.ir.functions = functions;
        lib
    }

    #[test]
    fn renames_are_compatible_and_layout_changes_are_not() {
        let old = with(
            vec![shape(&[("x", f32()), ("y", i32())])],
            vec![function("F", "F", "a")],
        );
        // Field renamed at the same index and type; function and parameter renamed.
        let new = with(
            vec![shape(&[("u", f32()), ("y", i32())])],
            vec![function("F", "G", "b")],
        );
        let report = diff(&old, &new);
        assert_eq!(
            kinds(&report),
            [ChangeKind::StructRenamed, ChangeKind::FunctionRenamed]
        );
        assert!(report.compatible());
        // Same names, swapped: a reorder, breaking even though it would link.
        let swapped = with(vec![shape(&[("y", i32()), ("x", f32())])], vec![]);
        let report = diff(&old, &swapped);
        assert_eq!(report.changes[0].kind, ChangeKind::StructLayoutChanged);
        assert!(
            report.changes[0]
                .detail
                .contains("`x` moved from index 0 to 1")
        );
        // Retyped and added fields.
        let retyped = with(
            vec![shape(&[("x", f32()), ("y", f32()), ("z", f32())])],
            vec![],
        );
        let detail = &diff(&old, &retyped).changes[0].detail;
        assert!(detail.contains("field `y` retyped i32 -> f32"), "{detail}");
        assert!(detail.contains("field `z` added"), "{detail}");
        // Gone entirely.
        let empty = with(vec![], vec![]);
        assert_eq!(
            kinds(&diff(&old, &empty)),
            [ChangeKind::StructRemoved, ChangeKind::FunctionRemoved]
        );
    }

    #[test]
    fn signatures_are_compared_by_type_and_passing_mode() {
        let old = with(vec![], vec![function("F", "F", "a")]);
        let mut inout = function("F", "F", "a");
        inout.parameters[0].by_reference = true;
        let report = diff(&old, &with(vec![], vec![inout]));
        assert_eq!(kinds(&report), [ChangeKind::FunctionSignatureChanged]);
        assert_eq!(report.changes[0].detail, "(f32): f32 -> (inout f32): f32");
        assert!(!report.compatible());
    }

    fn caller(key: &str, callee: &str) -> LibraryIrFunction {
        let mut f = FunctionBuilder::new(key, key, void());
        f.call(callee, None, vec![]);
        f.ret(None);
        f.finish()
    }

    #[test]
    fn callers_of_a_changed_function_are_reported_with_the_chain() {
        let leaf = |value: &str| {
            let mut f = FunctionBuilder::new("C", "C", void());
            f.constant(
                f32(),
                Some(crate::ir::LibraryValue::float(value.parse().unwrap())),
            );
            f.ret(None);
            f.finish()
        };
        let old = with(vec![], vec![caller("A", "B"), caller("B", "C"), leaf("1")]);
        let new = with(vec![], vec![caller("A", "B"), caller("B", "C"), leaf("2")]);
        let report = diff(&old, &new);
        let found: Vec<(ChangeKind, &str, &str)> = report
            .changes
            .iter()
            .map(|c| (c.kind, c.subject.as_str(), c.detail.as_str()))
            .collect();
        assert_eq!(
            found[0],
            (
                ChangeKind::FunctionCalleeChanged,
                "A",
                "calls `B` -> `C`, which changed"
            )
        );
        assert_eq!(
            found[1],
            (
                ChangeKind::FunctionCalleeChanged,
                "B",
                "calls `C`, which changed"
            )
        );
        assert_eq!(found[2].0, ChangeKind::FunctionBodyChanged);
        assert!(report.compatible());
    }

    fn declaring(ir_function: Option<&str>, getter: Option<&str>) -> CompiledLibrary {
        let float = LibraryTypeReference::primitive("Float");
        let mut lib = CompiledLibrary::new("L");
        lib.types.push(LibraryType {
            namespace: "N".into(),
            name: "T".into(),
            containing_type: None,
            kind: TypeKind::Struct,
            base_type: None,
            interfaces: vec![],
            type_parameters: vec![],
            fields: vec![],
            methods: vec![LibraryMethod {
                name: "M".into(),
                method_kind: EnumName::new("Ordinary").unwrap(),
                return_type: float.clone(),
                parameters: vec![],
                type_parameters: vec![],
                is_static: true,
                stage: ShaderStage::None,
                semantic_name: None,
                ir_function: ir_function.map(str::to_string),
            }],
            properties: vec![LibraryProperty {
                name: "P".into(),
                ty: float,
                has_getter: true,
                has_setter: false,
                is_static: false,
                ir_getter: getter.map(str::to_string),
                ir_setter: None,
            }],
            ir_struct: None,
        });
        lib
    }

    #[test]
    fn withdrawn_exports_break_and_retargeted_ones_do_not() {
        let old = declaring(Some("N.T.M(): float"), Some("N.T.P:get"));
        let report = diff(&old, &declaring(None, Some("N.T.P:get")));
        assert_eq!(kinds(&report), [ChangeKind::ExportWithdrawn]);
        assert_eq!(report.changes[0].subject, "N.T.M(): Float");
        assert!(report.changes[0].detail.contains("RVN5001"));
        assert!(!report.compatible());
        let report = diff(&old, &declaring(Some("N.T.M(): float"), Some("N.T.P2:get")));
        assert_eq!(kinds(&report), [ChangeKind::ExportRetargeted]);
        assert_eq!(report.changes[0].subject, "N.T.P:get");
        assert!(report.compatible());
        let report = diff(&old, &CompiledLibrary::new("L"));
        assert_eq!(kinds(&report), [ChangeKind::TypeRemoved]);
        let report = diff(&CompiledLibrary::new("L"), &old);
        assert_eq!(kinds(&report), [ChangeKind::TypeAdded]);
    }
}
