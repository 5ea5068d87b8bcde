//! The workspace's file-level import graph has no circles (ARCHITECTURE.md: "no file imports
//! another that imports it back").
//!
//! Every library and binary source file under `crates/*/src` is parsed with `syn`. A file
//! *imports* another when one of its `use` declarations (re-exports included), or any path in its
//! code, starts with `crate::`, `super::`, `self::` or the name of a child module it declares, and
//! names an item of the other file's module (the deepest module on the path that has a file of
//! its own). So a `mod.rs` that calls into a child which uses the parent's items is a circle too.
//! Inline `#[cfg(test)]` modules are skipped, since they belong to their file. The test fails
//! with every strongly connected group of files it finds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module path inside one crate: `[]` is the crate root, `["text", "reader"]` is `text/reader`.
type ModPath = Vec<String>;

/// The workspace checked: this one, or another checkout named by `USE_GRAPH_ROOT`.
fn workspace_root() -> PathBuf {
    match std::env::var_os("USE_GRAPH_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    }
}

/// Maps each module path of a crate's `src` to the file that holds it.
fn module_files(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut files = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("below src");
            let mut module: ModPath = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            if module.len() == 1 && (module[0] == "lib" || module[0] == "main") {
                module.clear();
            }
            // `src/bin/*.rs` are separate crate roots; the workspace has none today.
            if module.first().is_some_and(|first| first == "bin") {
                continue;
            }
            files.insert(module, path);
        }
    }
    files
}

/// Collects the module paths a file refers to through `crate::`, `super::` and `self::`.
struct PathCollector<'a> {
    /// The module whose scope the visitor is in (the file's module plus inline modules).
    scope: ModPath,
    files: &'a BTreeMap<ModPath, PathBuf>,
    uses: &'a Uses,
    targets: BTreeSet<ModPath>,
}

/// What each file module's top level declares and imports.
#[derive(Default)]
struct Scope {
    /// Names of items the file defines itself.
    defines: BTreeSet<String>,
    /// Names its `use` declarations bring in, with the path written.
    imports: BTreeMap<String, Vec<String>>,
    /// The paths of its glob imports (`use ir::*;`).
    globs: Vec<Vec<String>>,
}

type Uses = BTreeMap<ModPath, Scope>;

/// The file that really holds `name` as seen from file `holder`: the holder itself when it
/// defines the name, else the target of the import or glob import that brings it in.
fn item_file(
    files: &BTreeMap<ModPath, PathBuf>,
    uses: &Uses,
    holder: &ModPath,
    name: &str,
    depth: usize,
) -> Option<ModPath> {
    let scope = uses.get(holder)?;
    if scope.defines.contains(name) || depth >= 8 {
        return None;
    }
    if let Some(path) = scope.imports.get(name) {
        return resolve(files, uses, holder, path, depth + 1);
    }
    scope.globs.iter().find_map(|glob| {
        let module = resolve(files, uses, holder, glob, depth + 1)?;
        let defined = uses.get(&module).is_some_and(|s| s.defines.contains(name));
        if defined {
            Some(module)
        } else {
            item_file(files, uses, &module, name, depth + 1)
        }
    })
}

/// The file whose item a path names: the deepest module on the path that has a file, following
/// `use` declarations (re-exports such as `pub use reader::read;` and plain imports alike) when
/// the path goes on into an item that a file only imports, so `crate::read` names the reader.
fn resolve(
    files: &BTreeMap<ModPath, PathBuf>,
    uses: &Uses,
    scope: &ModPath,
    segments: &[String],
    depth: usize,
) -> Option<ModPath> {
    let first = segments.first()?;
    let mut module: ModPath = match first.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => scope.clone(),
        _ => {
            // A bare path that starts with a child module this scope declares.
            let mut child = scope.clone();
            child.push(first.clone());
            if !files.contains_key(&child) {
                return None;
            }
            scope.clone()
        }
    };
    let mut rest = segments;
    if first == "crate" || first == "self" {
        rest = &rest[1..];
    }
    while rest.first().is_some_and(|head| head == "super") {
        module.pop();
        rest = &rest[1..];
    }
    let file = |module: &ModPath| {
        let mut module = module.clone();
        loop {
            if files.contains_key(&module) {
                return Some(module);
            }
            module.pop()?;
        }
    };
    for segment in rest {
        module.push(segment.clone());
        if files.contains_key(&module) {
            continue;
        }
        module.pop();
        let holder = file(&module)?;
        return item_file(files, uses, &holder, segment, depth).or(Some(holder));
    }
    file(&module)
}

/// Flattens a `use` tree into (name brought in, path written) pairs and glob paths.
fn use_names(
    prefix: &mut Vec<String>,
    tree: &syn::UseTree,
    out: &mut BTreeMap<String, Vec<String>>,
    globs: &mut Vec<Vec<String>>,
) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_names(prefix, &path.tree, out, globs);
            prefix.pop();
        }
        syn::UseTree::Name(name) if name.ident == "self" => {
            if let Some(last) = prefix.last() {
                out.insert(last.clone(), prefix.clone());
            }
        }
        syn::UseTree::Name(name) => {
            let mut path = prefix.clone();
            path.push(name.ident.to_string());
            out.insert(name.ident.to_string(), path);
        }
        syn::UseTree::Rename(rename) => {
            let mut path = prefix.clone();
            path.push(rename.ident.to_string());
            out.insert(rename.rename.to_string(), path);
        }
        syn::UseTree::Glob(_) => globs.push(prefix.clone()),
        syn::UseTree::Group(group) => {
            for item in &group.items {
                use_names(prefix, item, out, globs);
            }
        }
    }
}

impl PathCollector<'_> {
    /// Records the file a path names (see [`resolve`]).
    fn resolve(&mut self, segments: &[String]) {
        if let Some(target) = resolve(self.files, self.uses, &self.scope, segments, 0) {
            self.targets.insert(target);
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.use_tree(prefix, &path.tree);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                prefix.push(name.ident.to_string());
                self.resolve(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(rename) => {
                prefix.push(rename.ident.to_string());
                self.resolve(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.resolve(&prefix.clone()),
            syn::UseTree::Group(group) => {
                for item in &group.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if is_cfg_test(&item.attrs) {
            return;
        }
        if item.content.is_some() {
            self.scope.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.scope.pop();
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        // A lone `crate`/`self`/`super` is a visibility (`pub(crate)`) or the receiver value.
        if segments.len() > 1 {
            self.resolve(&segments);
        }
        syn::visit::visit_path(self, path);
    }
}

/// Strongly connected groups of more than one file (Tarjan's algorithm, iteration order fixed).
fn circles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn connect<'a>(state: &mut State<'a>, node: &'a ModPath) {
        let next = state.index.len();
        state.index.insert(node, next);
        state.low.insert(node, next);
        state.stack.push(node);
        state.on_stack.insert(node);
        let edges = state.edges;
        for target in edges.get(node).into_iter().flatten() {
            let Some((target, _)) = edges.get_key_value(target) else {
                continue;
            };
            if !state.index.contains_key(target) {
                connect(state, target);
                let low = state.low[target].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(target) {
                let low = state.index[target].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut group = Vec::new();
            while let Some(member) = state.stack.pop() {
                state.on_stack.remove(member);
                group.push(member.clone());
                if member == node {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                state.found.push(group);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node) {
            connect(&mut state, node);
        }
    }
    state.found
}

/// The import edges of one crate, file module → imported file modules.
fn crate_edges(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let files = module_files(src);
    let mut parsed = BTreeMap::new();
    let mut uses = Uses::new();
    for (module, path) in &files {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let scope = uses.entry(module.clone()).or_default();
        for item in &file.items {
            let defined = match item {
                syn::Item::Use(item) => {
                    use_names(
                        &mut Vec::new(),
                        &item.tree,
                        &mut scope.imports,
                        &mut scope.globs,
                    );
                    None
                }
                syn::Item::Const(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Fn(i) => Some(&i.sig.ident),
                syn::Item::Static(i) => Some(&i.ident),
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                syn::Item::Macro(i) => i.ident.as_ref(),
                syn::Item::Mod(i) if i.content.is_some() => Some(&i.ident),
                _ => None,
            };
            if let Some(ident) = defined {
                scope.defines.insert(ident.to_string());
            }
        }
        parsed.insert(module.clone(), file);
    }
    let mut edges = BTreeMap::new();
    for (module, file) in &parsed {
        let mut collector = PathCollector {
            scope: module.clone(),
            files: &files,
            uses: &uses,
            targets: BTreeSet::new(),
        };
        collector.visit_file(file);
        collector.targets.remove(module);
        edges.insert(module.clone(), collector.targets);
    }
    edges
}

fn show(module: &ModPath) -> String {
    if module.is_empty() {
        "(root)".to_string()
    } else {
        module.join("/")
    }
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let crates = workspace_root().join("crates");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("crates/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    names.sort();
    assert!(
        names.len() >= 8,
        "expected the workspace's crates under {}",
        crates.display()
    );
    let mut report = Vec::new();
    // USE_GRAPH_DEBUG=CRATE prints that crate's edges, to see why files form a circle.
    let debug = std::env::var("USE_GRAPH_DEBUG").ok();
    for krate in &names {
        let edges = crate_edges(&krate.join("src"));
        if debug.as_deref() == krate.file_name().and_then(|n| n.to_str()) {
            for (from, to) in &edges {
                let to: Vec<String> = to.iter().map(show).collect();
                eprintln!("{} -> {}", show(from), to.join(", "));
            }
        }
        for group in circles(&edges) {
            let members: Vec<String> = group.iter().map(show).collect();
            report.push(format!(
                "{}: {}",
                krate.file_name().unwrap_or_default().to_string_lossy(),
                members.join(" ↔ ")
            ));
        }
    }
    let known: Vec<String> = REMAINING_CIRCLES.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        report, known,
        "files that import each other (left) against the list of circles still to break (right): \
         a new circle is a defect; a circle broken must leave REMAINING_CIRCLES"
    );
}

/// The circles not yet broken: none since issue 17. The test fails when one appears that is not
/// listed, and when a listed one is gone, so this list only shrinks (it is empty now).
const REMAINING_CIRCLES: &[&str] = &[];

/// The detector itself: a planted circle is found, a one-way chain is not.
#[test]
fn the_detector_finds_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("irkit-use-graph-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("json")).expect("temp dir");
    std::fs::write(src.join("lib.rs"), "mod container; mod json; mod leaf;").expect("write");
    std::fs::write(
        src.join("container.rs"),
        "use crate::json::Reader; fn f() { crate::g(); }",
    )
    .expect("write");
    std::fs::write(
        src.join("json/mod.rs"),
        "pub struct Reader; const V: u8 = crate::container::VERSION;",
    )
    .expect("write");
    std::fs::write(
        src.join("leaf.rs"),
        "pub fn g() {} #[cfg(test)] mod tests { use super::super::container; }",
    )
    .expect("write");
    let found = circles(&crate_edges(&src));
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        found,
        vec![vec![
            vec!["container".to_string()],
            vec!["json".to_string()]
        ]]
    );
}
