//! No file of `crates/rvnlib/src` imports a file that imports it back
//! (directly or through others). A file depends on another when it names it:
//! `crate::a::b`, `super::x` (a sibling module, or the parent's own items),
//! grouped `use` lists, or `child::` for a child module it declares. Doc
//! comments count too: a link into a module is a dependency on it. Inside an
//! inline `mod tests { … }`, `super::` is the enclosing file itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every module file, by module path (`[]` is `lib.rs`).
fn modules(dir: &Path, prefix: &Module, out: &mut BTreeMap<Module, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut inner = prefix.clone();
            inner.push(name);
            modules(&path, &inner, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut module = prefix.clone();
            if name != "mod" && name != "lib" {
                module.push(name);
            }
            out.insert(module, text);
        }
    }
}

fn identifier_at(text: &str, at: usize) -> Option<String> {
    let word: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The module a path `base::first::second` names: the longest existing prefix.
fn resolve(base: &Module, segments: &[String], all: &BTreeMap<Module, String>) -> Module {
    let mut best = base.clone();
    let mut current = base.clone();
    for segment in segments {
        current.push(segment.clone());
        if all.contains_key(&current) {
            best = current.clone();
        } else {
            break;
        }
    }
    best
}

/// The path segments after `at` (`a::b::{c, d}` gives `[a, b]` and the group).
fn segments(text: &str, mut at: usize) -> Vec<Vec<String>> {
    let mut path = Vec::new();
    loop {
        if text[at..].starts_with('{') {
            let end = text[at..].find('}').map_or(text.len(), |e| at + e);
            return text[at + 1..end]
                .split(',')
                .map(|part| {
                    let mut p = path.clone();
                    p.extend(
                        part.trim()
                            .split("::")
                            .take(2)
                            .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
                            .map(str::to_string),
                    );
                    p
                })
                .collect();
        }
        match identifier_at(text, at) {
            Some(word) => {
                at += word.len();
                path.push(word);
                if text[at..].starts_with("::") {
                    at += 2;
                } else {
                    return vec![path];
                }
            }
            None => return vec![path],
        }
    }
}

fn dependencies(module: &Module, text: &str, all: &BTreeMap<Module, String>) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let parent: Module = module[..module.len().saturating_sub(1)].to_vec();
    // In an inline `mod tests { … }` (always last), `super::` is this file.
    let inline = text.find("mod tests {").unwrap_or(text.len());
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        let mut from = 0;
        while let Some(i) = text[from..].find(prefix) {
            if prefix == "super::" && from + i > inline {
                break;
            }
            let at = from + i + prefix.len();
            from = at;
            for path in segments(text, at) {
                out.insert(resolve(&base, &path, all));
            }
        }
    }
    // Child modules named directly (`reader::read_library`).
    for (other, _) in all.range(module.clone()..) {
        if other.len() == module.len() + 1 && other.starts_with(module) {
            let child = other.last().unwrap();
            let named = text.match_indices(&format!("{child}::")).any(|(i, _)| {
                i == 0 || {
                    let before = text.as_bytes()[i - 1];
                    !(before.is_ascii_alphanumeric() || before == b'_' || before == b':')
                }
            });
            if named {
                out.insert(other.clone());
            }
        }
    }
    out.remove(module);
    out
}

fn cycle(
    graph: &BTreeMap<Module, BTreeSet<Module>>,
    node: &Module,
    stack: &mut Vec<Module>,
    done: &mut BTreeSet<Module>,
) -> Option<Vec<Module>> {
    if let Some(i) = stack.iter().position(|m| m == node) {
        return Some(stack[i..].to_vec());
    }
    if done.contains(node) {
        return None;
    }
    stack.push(node.clone());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(found) = cycle(graph, next, stack, done) {
            return Some(found);
        }
    }
    stack.pop();
    done.insert(node.clone());
    None
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut all = BTreeMap::new();
    modules(&src(), &Vec::new(), &mut all);
    assert!(all.len() > 10, "found {} modules", all.len());
    let graph: BTreeMap<Module, BTreeSet<Module>> = all
        .iter()
        .map(|(m, text)| (m.clone(), dependencies(m, text, &all)))
        .collect();
    // The old circle is gone: the JSON layer does not depend on the container.
    assert!(!graph[&vec!["json".to_string()]].contains(&vec!["container".to_string()]));
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(found) = cycle(&graph, node, &mut Vec::new(), &mut done) {
            let names: Vec<String> = found
                .iter()
                .map(|m| {
                    if m.is_empty() {
                        "lib".into()
                    } else {
                        m.join("/")
                    }
                })
                .collect();
            panic!("import circle: {}", names.join(" -> "));
        }
    }
}

/// The checker itself sees a circle when there is one.
#[test]
fn the_checker_finds_a_planted_circle() {
    let mut all = BTreeMap::new();
    all.insert(vec!["a".to_string()], "use crate::b::thing;".to_string());
    all.insert(
        vec!["b".to_string()],
        "pub fn thing() { crate::a::other() }".to_string(),
    );
    let graph: BTreeMap<Module, BTreeSet<Module>> = all
        .iter()
        .map(|(m, text)| (m.clone(), dependencies(m, text, &all)))
        .collect();
    assert!(
        cycle(
            &graph,
            &vec!["a".to_string()],
            &mut Vec::new(),
            &mut BTreeSet::new()
        )
        .is_some()
    );
}
