//! The linker: many libraries (and optionally a consumer's own functions and
//! structs) into one module, by key.
//!
//! * Identity is the key. Two packages that each declare `static func Of` or
//!   `struct Shape` have different keys and stay two entities; tuples and
//!   monomorphised generics carry bare keys and so unify by name.
//! * A key defined twice with different contents is an error naming both
//!   origins (the reference silently keeps the first); identical
//!   redefinitions are accepted.
//! * The same library (by `Name`) supplied twice is a warning (RVN5005); the
//!   first is used.
//! * When there are roots (the consumer's items and `entries`), functions and
//!   structs not reachable from them are pruned.
//! * Names must be unique in the module, structs and functions sharing one
//!   set: the consumer's names are reserved first, then every library's
//!   structs and then every library's functions are named (before pruning),
//!   and an entity whose name is taken becomes `name#1`, `name#2`, …
//!   Lookup never uses names.
//! * Two copies of a tuple struct (`Tuple_…`, bare key) with the same element
//!   types are one type whatever their element names; the first is kept.
//! * The result is verified with every reference resolvable.

use crate::ir::*;
use crate::library::{CompiledLibrary, LibraryType};
use crate::verify::{self, Resolution, Scope, VerifyError};
use crate::walk;
use std::collections::{HashMap, HashSet};

/// One library supplied to the linker, with a label naming where it came from.
#[derive(Debug, Clone, Copy)]
pub struct LinkInput<'a> {
    /// Where it came from (a path, or a description), used in messages.
    pub origin: &'a str,
    /// The library.
    pub library: &'a CompiledLibrary,
}

/// What to link.
#[derive(Debug, Clone, Default)]
pub struct LinkOptions<'a> {
    /// Name of the linked artefact.
    pub name: String,
    /// The consumer's own module, if any: its names are reserved first and its
    /// items are roots.
    pub consumer: Option<LinkInput<'a>>,
    /// Further root function keys (`--entry`).
    pub entries: Vec<String>,
}

/// A linker failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// One function key, two different definitions.
    #[error("function key `{key}` is defined differently by {first} and {second}")]
    ConflictingFunction {
        /// The key.
        key: String,
        /// The first origin.
        first: String,
        /// The second origin.
        second: String,
        /// The origin label of the input holding the second definition (where
        /// the conflict is found, and where a diagnostic points).
        origin: String,
    },
    /// One struct key, two different definitions.
    #[error("struct key `{key}` is defined differently by {first} and {second}")]
    ConflictingStruct {
        /// The key.
        key: String,
        /// The first origin.
        first: String,
        /// The second origin.
        second: String,
        /// The origin label of the input holding the second definition (where
        /// the conflict is found, and where a diagnostic points).
        origin: String,
    },
    /// An `--entry` key that no supplied library defines.
    #[error("entry `{key}` is not a function of any supplied library{}", crate::suggest::hint_of(.suggestion.as_deref()))]
    UnknownEntry {
        /// The key.
        key: String,
        /// The closest function key of the supplied libraries, if one is close.
        suggestion: Option<String>,
    },
    /// The linked module fails verification (unresolved callee, unknown struct, mismatched call).
    #[error("`{library}` ({origin}): {error}")]
    Verify {
        /// Name of the library holding the item at fault.
        library: String,
        /// Origin label of that library.
        origin: String,
        /// The finding.
        error: VerifyError,
    },
}

impl LinkError {
    /// The stable code (`docs/diagnostics.md`).
    pub fn code(&self) -> &'static str {
        match self {
            LinkError::ConflictingFunction { .. } | LinkError::ConflictingStruct { .. } => {
                "RVN-KEY-CONFLICT"
            }
            LinkError::UnknownEntry { .. } => "RVN-UNKNOWN-ENTRY",
            LinkError::Verify { error, .. } => error.code,
        }
    }

    /// The diagnostic kind, from the closed set of `docs/diagnostics.md`:
    /// `link` for conflicts and unknown entries, `semantic` for the verifier.
    pub fn kind(&self) -> &'static str {
        match self {
            LinkError::Verify { .. } => "semantic",
            _ => "link",
        }
    }

    /// The origin label of the input the error is about; `None` for an
    /// unknown entry (a command-line argument, not an input).
    pub fn origin(&self) -> Option<&str> {
        match self {
            LinkError::ConflictingFunction { origin, .. }
            | LinkError::ConflictingStruct { origin, .. }
            | LinkError::Verify { origin, .. } => Some(origin),
            LinkError::UnknownEntry { .. } => None,
        }
    }
}

/// A linker warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWarning {
    /// `RVN5005`.
    pub code: &'static str,
    /// The origin label of the input the warning is about (the ignored copy).
    pub origin: String,
    /// What happened.
    pub message: String,
}

/// A renaming the linker applied to keep names unique.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// `struct` or `function`.
    pub what: &'static str,
    /// The entity's key.
    pub key: String,
    /// Its original name.
    pub from: String,
    /// Its name in the module.
    pub to: String,
}

/// A successful link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Linked {
    /// The linked module as a library.
    pub library: CompiledLibrary,
    /// Warnings.
    pub warnings: Vec<LinkWarning>,
    /// Renamings, in the order applied.
    pub renames: Vec<Rename>,
    /// Per kept struct: the origin it came from.
    pub struct_origins: Vec<String>,
    /// Per kept function: the origin it came from.
    pub function_origins: Vec<String>,
}

struct Entry<'a, T> {
    item: &'a T,
    origin: usize,
}

/// A struct or function of a library, as the linker names it.
trait LinkedEntity: Clone {
    /// `struct` or `function`, for [`Rename::what`].
    const WHAT: &'static str;
    /// The entity's key and its name.
    fn key_and_name(&mut self) -> (&str, &mut String);
}

impl LinkedEntity for LibraryIrStruct {
    const WHAT: &'static str = "struct";
    fn key_and_name(&mut self) -> (&str, &mut String) {
        (&self.key, &mut self.name)
    }
}

impl LinkedEntity for LibraryIrFunction {
    const WHAT: &'static str = "function";
    fn key_and_name(&mut self) -> (&str, &mut String) {
        (&self.key, &mut self.name)
    }
}

/// The kept entries, each under its name in the module (a change of name
/// recorded in `renames`), and the origin of each.
fn keep_renamed<T: LinkedEntity>(
    entries: &[Entry<'_, T>],
    keep: &[bool],
    names: &[String],
    inputs: &[LinkInput<'_>],
    renames: &mut Vec<Rename>,
) -> (Vec<T>, Vec<String>) {
    let mut kept = Vec::new();
    let mut origins = Vec::new();
    for ((e, name), _) in entries.iter().zip(names).zip(keep).filter(|(_, k)| **k) {
        let mut item = e.item.clone();
        let (key, current) = item.key_and_name();
        if *current != *name {
            renames.push(Rename {
                what: T::WHAT,
                key: key.to_string(),
                from: current.clone(),
                to: name.clone(),
            });
            *current = name.clone();
        }
        kept.push(item);
        origins.push(inputs[e.origin].origin.to_string());
    }
    (kept, origins)
}

/// Links `libraries` (in order) with the options' consumer.
pub fn link(
    libraries: &[LinkInput<'_>],
    options: &LinkOptions<'_>,
) -> Result<Linked, Vec<LinkError>> {
    let mut inputs: Vec<LinkInput<'_>> = Vec::with_capacity(libraries.len() + 1);
    let has_consumer = options.consumer.is_some();
    inputs.extend(options.consumer);
    let mut warnings = Vec::new();
    let mut seen_names: HashMap<&str, usize> = HashMap::new();
    for input in libraries {
        let index = inputs.len();
        if let Some(&first) = seen_names.get(input.library.name.as_str()) {
            warnings.push(LinkWarning {
                code: "RVN5005",
                origin: input.origin.to_string(),
                message: format!(
                    "library `{}` is supplied twice ({} and {}); the first is used",
                    input.library.name, inputs[first].origin, input.origin
                ),
            });
            continue;
        }
        seen_names.insert(&input.library.name, index);
        inputs.push(*input);
    }
    let describe = |i: usize| format!("`{}` ({})", inputs[i].library.name, inputs[i].origin);

    let mut errors = Vec::new();
    let mut structs: Vec<Entry<'_, LibraryIrStruct>> = Vec::new();
    let mut struct_index: HashMap<&str, usize> = HashMap::new();
    let mut functions: Vec<Entry<'_, LibraryIrFunction>> = Vec::new();
    let mut function_index: HashMap<&str, usize> = HashMap::new();
    for (origin, input) in inputs.iter().enumerate() {
        for s in &input.library.ir.structs {
            match struct_index.get(s.key.as_str()) {
                Some(&i) => {
                    if structs[i].item != s && !same_tuple(structs[i].item, s) {
                        errors.push(LinkError::ConflictingStruct {
                            key: s.key.clone(),
                            first: describe(structs[i].origin),
                            second: describe(origin),
                            origin: input.origin.to_string(),
                        });
                    }
                }
                None => {
                    struct_index.insert(&s.key, structs.len());
                    structs.push(Entry { item: s, origin });
                }
            }
        }
        for f in &input.library.ir.functions {
            match function_index.get(f.key.as_str()) {
                Some(&i) => {
                    if functions[i].item != f {
                        errors.push(LinkError::ConflictingFunction {
                            key: f.key.clone(),
                            first: describe(functions[i].origin),
                            second: describe(origin),
                            origin: input.origin.to_string(),
                        });
                    }
                }
                None => {
                    function_index.insert(&f.key, functions.len());
                    functions.push(Entry { item: f, origin });
                }
            }
        }
    }
    for entry in &options.entries {
        if !function_index.contains_key(entry.as_str()) {
            errors.push(LinkError::UnknownEntry {
                key: entry.clone(),
                suggestion: crate::suggest::closest(entry, function_index.keys().copied())
                    .map(str::to_string),
            });
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Reachability from the roots; without roots everything is kept.
    let prune = has_consumer || !options.entries.is_empty();
    let (keep_struct, keep_function) = if prune {
        reachable(
            &structs,
            &struct_index,
            &functions,
            &function_index,
            has_consumer,
            &options.entries,
        )
    } else {
        (vec![true; structs.len()], vec![true; functions.len()])
    };

    // Verify the kept module with every reference resolvable.
    let scope = Scope::new(
        structs.iter().map(|e| e.item),
        functions.iter().map(|e| e.item),
        Resolution::Complete,
    );
    for (i, e) in structs.iter().enumerate() {
        if keep_struct[i] {
            let mut found = Vec::new();
            verify::verify_struct(&scope, e.item, &mut found);
            errors.extend(found.into_iter().map(|error| LinkError::Verify {
                library: inputs[e.origin].library.name.clone(),
                origin: inputs[e.origin].origin.to_string(),
                error,
            }));
        }
    }
    let own_keys: Vec<OwnKeys<'_>> = inputs.iter().map(|i| OwnKeys::new(&i.library.ir)).collect();
    for (i, e) in functions.iter().enumerate() {
        if keep_function[i] && own_keys[e.origin].reaches_outside(e.item) {
            let mut found = Vec::new();
            verify::verify_function(&scope, e.item, &mut found);
            errors.extend(found.into_iter().map(|error| LinkError::Verify {
                library: inputs[e.origin].library.name.clone(),
                origin: inputs[e.origin].origin.to_string(),
                error,
            }));
        }
        if errors.len() >= verify::MAX_ERRORS {
            break;
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Names, before pruning and in one set for structs and functions together
    // (Raven's `Lowerer.Linking.cs` `Unique` over one `taken` set): the
    // consumer's names are reserved, then every library's structs are named,
    // then every library's functions, each in input and artefact order.
    let mut names = NameTable::default();
    if has_consumer {
        for e in structs.iter().filter(|e| e.origin == 0) {
            names.reserve(&e.item.name);
        }
        for e in functions.iter().filter(|e| e.origin == 0) {
            names.reserve(&e.item.name);
        }
    }
    let from_library = |origin: usize| !(has_consumer && origin == 0);
    let struct_names: Vec<String> = structs
        .iter()
        .map(|e| {
            if from_library(e.origin) {
                names.claim(&e.item.name)
            } else {
                e.item.name.clone()
            }
        })
        .collect();
    let function_names: Vec<String> = functions
        .iter()
        .map(|e| {
            if from_library(e.origin) {
                names.claim(&e.item.name)
            } else {
                e.item.name.clone()
            }
        })
        .collect();
    let mut renames = Vec::new();
    let (out_structs, struct_origins) =
        keep_renamed(&structs, &keep_struct, &struct_names, &inputs, &mut renames);
    let (out_functions, function_origins) = keep_renamed(
        &functions,
        &keep_function,
        &function_names,
        &inputs,
        &mut renames,
    );

    let kept_structs: HashSet<&str> = out_structs.iter().map(|s| s.key.as_str()).collect();
    let kept_functions: HashSet<&str> = out_functions.iter().map(|f| f.key.as_str()).collect();
    let types = merge_declarations(&inputs, &kept_structs, &kept_functions);
    let library = CompiledLibrary {
        name: options.name.clone(),
        types,
        ir: LibraryIr {
            structs: out_structs,
            functions: out_functions,
        },
        source_hash: String::new(),
    };
    Ok(Linked {
        library,
        warnings,
        renames,
        struct_origins,
        function_origins,
    })
}

/// Two copies of one tuple struct: Raven names a tuple `Tuple_<element types>`
/// with a bare key, so the key is its structural identity, and it keeps the
/// first copy whatever the element names (`Lowerer.Types.cs` `LowerTuple`,
/// `LibraryIrCodec.cs`: first declaration of a name wins). The element types
/// must still agree; different ones are a real conflict.
fn same_tuple(first: &LibraryIrStruct, second: &LibraryIrStruct) -> bool {
    let tuple = |s: &LibraryIrStruct| s.key == s.name && s.key.starts_with("Tuple_");
    tuple(first)
        && tuple(second)
        && first.key == second.key
        && first.fields.len() == second.fields.len()
        && first
            .fields
            .iter()
            .zip(&second.fields)
            .all(|(a, b)| a.ty.same_type(&b.ty))
}

/// The keys one library defines.
struct OwnKeys<'a> {
    structs: HashSet<&'a str>,
    functions: HashSet<&'a str>,
}

impl<'a> OwnKeys<'a> {
    fn new(ir: &'a LibraryIr) -> Self {
        OwnKeys {
            structs: ir.structs.iter().map(|s| s.key.as_str()).collect(),
            functions: ir.functions.iter().map(|f| f.key.as_str()).collect(),
        }
    }

    /// A function needs re-verification at link time only if it reaches
    /// outside its own library (a callee or a struct the library does not
    /// define); the reader already verified everything else against its own
    /// library, and identical redefinitions are identical.
    fn reaches_outside(&self, function: &LibraryIrFunction) -> bool {
        walk::function_struct_keys(function)
            .into_iter()
            .any(|k| !self.structs.contains(k))
            || walk::callees(&function.body)
                .into_iter()
                .any(|k| !self.functions.contains(k))
    }
}

fn reachable(
    structs: &[Entry<'_, LibraryIrStruct>],
    struct_index: &HashMap<&str, usize>,
    functions: &[Entry<'_, LibraryIrFunction>],
    function_index: &HashMap<&str, usize>,
    consumer_roots: bool,
    entries: &[String],
) -> (Vec<bool>, Vec<bool>) {
    let mut keep_struct = vec![false; structs.len()];
    let mut keep_function = vec![false; functions.len()];
    let mut function_stack = Vec::new();
    let mut struct_stack = Vec::new();
    if consumer_roots {
        for (i, e) in functions.iter().enumerate() {
            if e.origin == 0 {
                function_stack.push(i);
            }
        }
        for (i, e) in structs.iter().enumerate() {
            if e.origin == 0 {
                struct_stack.push(i);
            }
        }
    }
    for entry in entries {
        if let Some(&i) = function_index.get(entry.as_str()) {
            function_stack.push(i);
        }
    }
    loop {
        if let Some(i) = function_stack.pop() {
            if keep_function[i] {
                continue;
            }
            keep_function[i] = true;
            let f = functions[i].item;
            for callee in walk::callees(&f.body) {
                if let Some(&j) = function_index.get(callee) {
                    function_stack.push(j);
                }
            }
            for key in walk::function_struct_keys(f) {
                if let Some(&j) = struct_index.get(key) {
                    struct_stack.push(j);
                }
            }
        } else if let Some(i) = struct_stack.pop() {
            if keep_struct[i] {
                continue;
            }
            keep_struct[i] = true;
            for field in &structs[i].item.fields {
                walk::type_struct_keys(&field.ty, &mut |key| {
                    if let Some(&j) = struct_index.get(key) {
                        struct_stack.push(j);
                    }
                });
            }
        } else {
            break;
        }
    }
    (keep_struct, keep_function)
}

/// Deterministic `name`, `name#1`, `name#2`, … allocation: each name gets the
/// first free suffix. A taken name never becomes free, so the search for a
/// base name resumes where it last stopped (linear, not quadratic, in the
/// number of same-named entities).
#[derive(Default)]
struct NameTable {
    taken: HashSet<String>,
    next_suffix: HashMap<String, u64>,
}

impl NameTable {
    fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    fn claim(&mut self, name: &str) -> String {
        if self.taken.insert(name.to_string()) {
            return name.to_string();
        }
        let mut n = self.next_suffix.get(name).copied().unwrap_or(1);
        loop {
            let candidate = format!("{name}#{n}");
            n += 1;
            if !self.taken.contains(&candidate) {
                self.taken.insert(candidate.clone());
                self.next_suffix.insert(name.to_string(), n);
                return candidate;
            }
        }
    }
}

/// The linked artefact's declaration half: every input's types in order, exact
/// duplicates dropped, with links to pruned IR cleared (`null` = nothing to link).
fn merge_declarations(
    inputs: &[LinkInput<'_>],
    kept_structs: &HashSet<&str>,
    kept_functions: &HashSet<&str>,
) -> Vec<LibraryType> {
    let mut out: Vec<LibraryType> = Vec::new();
    let mut seen: HashSet<LibraryType> = HashSet::new();
    for input in inputs {
        for ty in &input.library.types {
            let mut ty = ty.clone();
            if ty
                .ir_struct
                .as_deref()
                .is_some_and(|k| !kept_structs.contains(k))
            {
                ty.ir_struct = None;
            }
            for m in &mut ty.methods {
                if m.ir_function
                    .as_deref()
                    .is_some_and(|k| !kept_functions.contains(k))
                {
                    m.ir_function = None;
                }
            }
            for p in &mut ty.properties {
                if p.ir_getter
                    .as_deref()
                    .is_some_and(|k| !kept_functions.contains(k))
                {
                    p.ir_getter = None;
                }
                if p.ir_setter
                    .as_deref()
                    .is_some_and(|k| !kept_functions.contains(k))
                {
                    p.ir_setter = None;
                }
            }
            if seen.insert(ty.clone()) {
                out.push(ty);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types::*};

    fn lib(name: &str, functions: &[(&str, &str, &[&str])]) -> CompiledLibrary {
        let mut lib = CompiledLibrary::new(name);
        for (key, fname, calls) in functions {
            let mut f = FunctionBuilder::new(*key, *fname, void());
            for callee in *calls {
                f.call(callee, None, vec![]);
            }
            f.ret(None);
            lib.ir.functions.push(f.finish());
        }
        lib
    }

    fn names(linked: &Linked) -> Vec<(String, String)> {
        linked
            .library
            .ir
            .functions
            .iter()
            .map(|f| (f.key.clone(), f.name.clone()))
            .collect()
    }

    #[test]
    fn renames_skip_names_already_taken() {
        let consumer = lib(
            "C",
            &[
                ("c.main", "main", &["a.f", "b.f", "d.f"]),
                ("c.f1", "f#1", &[]),
            ],
        );
        let a = lib("A", &[("a.f", "f", &[])]);
        let b = lib("B", &[("b.f", "f", &[])]);
        let d = lib("D", &[("d.f", "f", &[])]);
        let inputs = [
            LinkInput {
                origin: "a",
                library: &a,
            },
            LinkInput {
                origin: "b",
                library: &b,
            },
            LinkInput {
                origin: "d",
                library: &d,
            },
        ];
        let options = LinkOptions {
            name: "out".into(),
            consumer: Some(LinkInput {
                origin: "c",
                library: &consumer,
            }),
            entries: vec![],
        };
        let linked = link(&inputs, &options).unwrap();
        let expected: Vec<(String, String)> = [
            ("c.main", "main"),
            ("c.f1", "f#1"),
            ("a.f", "f"),
            ("b.f", "f#2"),
            ("d.f", "f#3"),
        ]
        .iter()
        .map(|(k, n)| (k.to_string(), n.to_string()))
        .collect();
        assert_eq!(names(&linked), expected);
        // Deterministic: the same inputs give the same bytes.
        let again = link(&inputs, &options).unwrap();
        assert_eq!(
            crate::container::write(&again.library).unwrap(),
            crate::container::write(&linked.library).unwrap()
        );
    }

    #[test]
    fn entries_prune_and_unknown_entries_fail() {
        let a = lib(
            "A",
            &[
                ("a.root", "root", &["a.leaf"]),
                ("a.leaf", "leaf", &[]),
                ("a.dead", "dead", &["a.leaf"]),
            ],
        );
        let inputs = [LinkInput {
            origin: "a",
            library: &a,
        }];
        let options = LinkOptions {
            name: "out".into(),
            consumer: None,
            entries: vec!["a.root".into()],
        };
        let linked = link(&inputs, &options).unwrap();
        let keys: Vec<&str> = linked
            .library
            .ir
            .functions
            .iter()
            .map(|f| f.key.as_str())
            .collect();
        assert_eq!(keys, ["a.root", "a.leaf"]);
        // Without roots nothing is pruned.
        assert_eq!(
            link(&inputs, &LinkOptions::default())
                .unwrap()
                .library
                .ir
                .functions
                .len(),
            3
        );
        let options = LinkOptions {
            entries: vec!["missing".into()],
            ..Default::default()
        };
        assert_eq!(
            link(&inputs, &options).unwrap_err(),
            vec![LinkError::UnknownEntry {
                key: "missing".into(),
                suggestion: None,
            }]
        );
    }

    #[test]
    fn unresolved_callees_and_struct_conflicts_are_errors() {
        let a = lib("A", &[("a.f", "f", &["nowhere"])]);
        let errors = link(
            &[LinkInput {
                origin: "a.rvnlib",
                library: &a,
            }],
            &LinkOptions::default(),
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].code(), "RVN3010");
        assert!(
            errors[0].to_string().contains("`A` (a.rvnlib)"),
            "{}",
            errors[0]
        );
        let mut x = CompiledLibrary::new("X");
        let mut y = CompiledLibrary::new("Y");
        let shape = |n: usize| LibraryIrStruct {
            key: "Tuple_f32_f32".into(),
            name: "Tuple_f32_f32".into(),
            fields: (0..n)
                .map(|i| LibraryIrField {
                    name: format!("Item{i}"),
                    ty: f32(),
                })
                .collect(),
        };
        x.ir.structs.push(shape(2));
        y.ir.structs.push(shape(3));
        let errors = link(
            &[
                LinkInput {
                    origin: "x",
                    library: &x,
                },
                LinkInput {
                    origin: "y",
                    library: &y,
                },
            ],
            &LinkOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&errors[0], LinkError::ConflictingStruct { key, .. } if key == "Tuple_f32_f32")
        );
    }

    #[test]
    fn a_struct_no_library_declares_is_rvn5004() {
        let mut f = FunctionBuilder::new("app.main", "main", void());
        f.local("s", LibraryIrTypeReference::structure("Missing::S"));
        f.ret(None);
        let mut app = CompiledLibrary::new("App");
        app.ir.functions.push(f.finish());
        assert!(crate::verify::verify_library(&app).is_empty());
        let errors = link(
            &[LinkInput {
                origin: "app",
                library: &app,
            }],
            &LinkOptions::default(),
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].code(), "RVN5004");
        assert!(
            errors[0]
                .to_string()
                .contains("names struct `Missing::S`, which no supplied library declares")
        );
    }

    #[test]
    fn cross_library_calls_are_checked_against_the_callee() {
        let mut callee = FunctionBuilder::new("lib.f", "f", f32());
        callee.param("x", f32());
        let z = callee.constant(f32(), None);
        callee.ret(Some(z));
        let mut l = CompiledLibrary::new("L");
        l.ir.functions.push(callee.finish());
        let mut caller = FunctionBuilder::new("app.main", "main", void());
        let v = caller.constant(i32(), None);
        caller.call(
            "lib.f",
            Some(f32()),
            vec![crate::ir::LibraryIrArgument::by_value(v)],
        );
        caller.ret(None);
        let mut app = CompiledLibrary::new("App");
        app.ir.functions.push(caller.finish());
        // The app alone verifies (the callee is deferred) …
        assert!(crate::verify::verify_library(&app).is_empty());
        // … but the link finds the mismatch.
        let options = LinkOptions {
            name: "o".into(),
            consumer: Some(LinkInput {
                origin: "app",
                library: &app,
            }),
            entries: vec![],
        };
        let errors = link(
            &[LinkInput {
                origin: "l",
                library: &l,
            }],
            &options,
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .to_string()
                .contains("call `lib.f` argument 0: i32 does not match f32"),
            "{}",
            errors[0]
        );
    }
}
