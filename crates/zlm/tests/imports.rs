//! The `use` graph of the crate's source files is acyclic (issue 17): no
//! file imports another that imports it back, directly or through others.
//! Every `crate::…` and `super::…` path outside comments is resolved to the
//! file that defines its longest existing module prefix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file (`check/mod.rs` → `check`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The file defining the longest existing prefix of `path`.
fn resolve(files: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).cloned())
}

/// Paths `crate::a::b`, `super::a`, `self::a` and `child::a` (for each
/// child module this file declares) in a line, braces expanded one level.
fn paths(line: &str, module: &[String], children: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut parent = module.to_vec();
    parent.pop();
    let mut prefixes = vec![
        ("crate::".to_string(), Vec::new()),
        ("super::".to_string(), parent),
        ("self::".to_string(), module.to_vec()),
    ];
    for child in children {
        prefixes.push((format!("{child}::"), {
            let mut m = module.to_vec();
            m.push(child.clone());
            m
        }));
    }
    for (prefix, base) in prefixes {
        let prefix = prefix.as_str();
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            let tail = &rest[at + prefix.len()..];
            rest = tail;
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let head: String = tail
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segments: Vec<String> = base.clone();
            segments.extend(
                head.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            let after = &tail[head.len()..];
            if head.ends_with("::") && after.starts_with('{') {
                let inner: String = after[1..].chars().take_while(|c| *c != '}').collect();
                for item in inner.split(',') {
                    let item = item.trim().split("::").next().unwrap_or("").trim();
                    if !item.is_empty() && item != "self" {
                        let mut s = segments.clone();
                        s.push(item.to_string());
                        found.push(s);
                    }
                }
            }
            found.push(segments);
        }
    }
    found
}

#[test]
fn no_source_file_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut list = Vec::new();
    sources(&src, &mut list);
    let files: BTreeMap<Vec<String>, PathBuf> = list
        .iter()
        .map(|f| (module_of(&src, f), f.clone()))
        .collect();
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (module, file) in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let mut in_test_module = false;
        let children: Vec<String> = text
            .lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let l = l
                    .strip_prefix("pub(crate) ")
                    .or_else(|| l.strip_prefix("pub "))
                    .unwrap_or(l);
                l.strip_prefix("mod ")?
                    .strip_suffix(';')
                    .map(str::to_string)
            })
            .collect();
        let edges = graph.entry(file.clone()).or_default();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // `super` inside an inline `mod tests` names this very file.
            if code.starts_with("mod tests") {
                in_test_module = true;
            }
            let module = if in_test_module {
                let mut m = module.clone();
                m.push("tests".into());
                m
            } else {
                module.clone()
            };
            for path in paths(code, &module, &children) {
                if let Some(target) = resolve(&files, &path)
                    && target != *file
                {
                    edges.insert(target);
                }
            }
        }
    }
    // Depth-first search for a cycle, reporting its files.
    fn visit(
        node: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        match state.get(node) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|n| n == node).unwrap();
                let mut cycle = stack[at..].to_vec();
                cycle.push(node.clone());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(node, &graph, &mut state, &mut stack) {
            let names: Vec<String> = cycle
                .iter()
                .map(|p| p.strip_prefix(&src).unwrap().display().to_string())
                .collect();
            panic!("import cycle: {}", names.join(" -> "));
        }
    }
}
