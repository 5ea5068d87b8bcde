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
//! * Names must be unique in the module: the consumer's names are reserved
//!   first, then each library entity whose name is taken becomes `name#1`,
//!   `name#2`, … in artefact order. Lookup never uses names.
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
    },
    /// An `--entry` key that no supplied library defines.
    #[error("entry `{key}` is not a function of any supplied library")]
    UnknownEntry {
        /// The key.
        key: String,
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
    /// The RVN code, where one applies.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            LinkError::Verify { error, .. } => Some(error.code),
            _ => None,
        }
    }

    /// A stable kind for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            LinkError::ConflictingFunction { .. } | LinkError::ConflictingStruct { .. } => {
                "key-conflict"
            }
            LinkError::UnknownEntry { .. } => "unknown-entry",
            LinkError::Verify { .. } => "verify",
        }
    }
}

/// A linker warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWarning {
    /// `RVN5005`.
    pub code: &'static str,
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
                    if structs[i].item != s {
                        errors.push(LinkError::ConflictingStruct {
                            key: s.key.clone(),
                            first: describe(structs[i].origin),
                            second: describe(origin),
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
            errors.push(LinkError::UnknownEntry { key: entry.clone() });
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
    for (i, e) in functions.iter().enumerate() {
        if keep_function[i] && needs_link_check(e.item, &inputs[e.origin].library.ir) {
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

    // Names: the consumer's first, then library entities in artefact order.
    let mut renames = Vec::new();
    let mut struct_names = NameTable::default();
    let mut function_names = NameTable::default();
    if has_consumer {
        for (i, e) in structs.iter().enumerate() {
            if keep_struct[i] && e.origin == 0 {
                struct_names.reserve(&e.item.name);
            }
        }
        for (i, e) in functions.iter().enumerate() {
            if keep_function[i] && e.origin == 0 {
                function_names.reserve(&e.item.name);
            }
        }
    }
    let mut out_structs = Vec::new();
    let mut struct_origins = Vec::new();
    for (i, e) in structs.iter().enumerate() {
        if !keep_struct[i] {
            continue;
        }
        let mut s = e.item.clone();
        if !(has_consumer && e.origin == 0) {
            let name = struct_names.claim(&s.name);
            if name != s.name {
                renames.push(Rename {
                    what: "struct",
                    key: s.key.clone(),
                    from: s.name.clone(),
                    to: name.clone(),
                });
                s.name = name;
            }
        }
        out_structs.push(s);
        struct_origins.push(inputs[e.origin].origin.to_string());
    }
    let mut out_functions = Vec::new();
    let mut function_origins = Vec::new();
    for (i, e) in functions.iter().enumerate() {
        if !keep_function[i] {
            continue;
        }
        let mut f = e.item.clone();
        if !(has_consumer && e.origin == 0) {
            let name = function_names.claim(&f.name);
            if name != f.name {
                renames.push(Rename {
                    what: "function",
                    key: f.key.clone(),
                    from: f.name.clone(),
                    to: name.clone(),
                });
                f.name = name;
            }
        }
        out_functions.push(f);
        function_origins.push(inputs[e.origin].origin.to_string());
    }

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

/// A function needs re-verification at link time only if it reaches outside
/// its own library (a callee or a struct the library does not define); the
/// reader already verified everything else.
fn needs_link_check(function: &LibraryIrFunction, own: &LibraryIr) -> bool {
    let has_struct = |key: &str| own.structs.iter().any(|s| s.key == key);
    let has_function = |key: &str| own.functions.iter().any(|f| f.key == key);
    walk::function_struct_keys(function)
        .into_iter()
        .any(|k| !has_struct(k))
        || walk::callees(&function.body)
            .into_iter()
            .any(|k| !has_function(k))
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

/// Deterministic `name`, `name#1`, `name#2`, … allocation.
#[derive(Default)]
struct NameTable {
    taken: HashSet<String>,
}

impl NameTable {
    fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }

    fn claim(&mut self, name: &str) -> String {
        if self.taken.insert(name.to_string()) {
            return name.to_string();
        }
        let mut n = 1u64;
        loop {
            let candidate = format!("{name}#{n}");
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
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
