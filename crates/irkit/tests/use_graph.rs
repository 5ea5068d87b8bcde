//! The workspace's file-level import graph has no circles (ARCHITECTURE.md: "no file imports
//! another that imports it back").
//!
//! Every library and binary source file under `crates/*/src` is parsed with `syn`. A file
//! *imports* another when one of its `use` declarations, or any path in its code, starts with
//! `crate::`, `super::` or `self::` and names an item of the other file's module (the deepest
//! module on the path that has a file of its own). A module reaching its own child by the child's
//! bare name (`child::f()` after `mod child;`) is ownership, not an import, and is not an edge;
//! inline `#[cfg(test)]` modules are skipped, since they belong to their file. The test fails with
//! every strongly connected group of files it finds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module path inside one crate: `[]` is the crate root, `["text", "reader"]` is `text/reader`.
type ModPath = Vec<String>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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
    targets: BTreeSet<ModPath>,
}

impl PathCollector<'_> {
    /// Resolves a path given as segment names; returns the deepest module with a file.
    fn resolve(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let mut module: ModPath = match first.as_str() {
            "crate" => Vec::new(),
            "self" | "super" => self.scope.clone(),
            _ => return,
        };
        let mut rest = &segments[..];
        if first == "crate" || first == "self" {
            rest = &rest[1..];
        }
        while let Some(head) = rest.first() {
            if head != "super" {
                break;
            }
            module.pop();
            rest = &rest[1..];
        }
        let mut best = self.file_module(&module);
        for segment in rest {
            module.push(segment.clone());
            if self.files.contains_key(&module) {
                best = Some(module.clone());
            } else {
                break;
            }
        }
        if let Some(target) = best {
            self.targets.insert(target);
        }
    }

    /// The innermost module at or above `module` that has a file.
    fn file_module(&self, module: &ModPath) -> Option<ModPath> {
        let mut module = module.clone();
        loop {
            if self.files.contains_key(&module) {
                return Some(module);
            }
            module.pop()?;
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
        self.resolve(&segments);
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
    let mut edges = BTreeMap::new();
    for (module, path) in &files {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut collector = PathCollector {
            scope: module.clone(),
            files: &files,
            targets: BTreeSet::new(),
        };
        collector.visit_file(&file);
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
    for krate in &names {
        for group in circles(&crate_edges(&krate.join("src"))) {
            let members: Vec<String> = group.iter().map(show).collect();
            report.push(format!(
                "{}: {}",
                krate.file_name().unwrap_or_default().to_string_lossy(),
                members.join(" ↔ ")
            ));
        }
    }
    assert!(
        report.is_empty(),
        "files that import each other:\n{}",
        report.join("\n")
    );
}

/// The detector itself: a planted circle is found, a one-way chain is not.
#[test]
fn the_detector_finds_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("irkit-use-graph-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("json")).expect("temp dir");
    std::fs::write(src.join("lib.rs"), "mod container; mod json; mod leaf;").expect("write");
    std::fs::write(
        src.join("container.rs"),
        "use crate::json::Reader; fn f() { crate::leaf::g(); }",
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
