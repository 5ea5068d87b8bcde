//! The example package shared by the `.zli` and reflection tests: every
//! module under `examples/zlm` (and `examples/zlm/run`), decoded with its
//! imports resolved against the others, and the golden-file comparison.
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use zlm::decode::Checked;
use zlm::model::Module;

/// Every example text file, sorted by path.
pub fn example_paths() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/zlm");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("run")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "zlt") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every example's logical model, in [`example_paths`] order.
pub fn example_models() -> Vec<Module> {
    example_paths()
        .iter()
        .map(|p| zlm::text::parse(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// Every example decoded with its imports resolved against the other
/// examples, in [`example_paths`] order.
pub fn example_package() -> Vec<Checked> {
    link(&example_models())
}

/// Writes and decodes each model, resolving its imports against the others.
pub fn link(models: &[Module]) -> Vec<Checked> {
    let bytes: Vec<Vec<u8>> = models
        .iter()
        .map(|m| zlm::write::write(m).unwrap())
        .collect();
    let alone: Vec<Checked> = bytes
        .iter()
        .map(|b| zlm::decode::decode(b).unwrap())
        .collect();
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let providers: Vec<&Checked> = alone
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, c)| c)
                .collect();
            zlm::decode::decode_linked(b, &providers).unwrap()
        })
        .collect()
}

/// The package of module `i`: itself first, then the modules it imports
/// (directly, among `all`).
pub fn package_of(all: &[Checked], i: usize) -> Vec<&Checked> {
    let mut out = vec![&all[i]];
    let m = all[i].module();
    for (j, c) in all.iter().enumerate() {
        if j != i
            && c.module().package == m.package
            && m.imports.iter().any(|imp| imp.module == c.module().name)
        {
            out.push(c);
        }
    }
    out
}

/// Compares `now` with golden file `rel` under `tests/golden` (written
/// instead with `IRKIT_BLESS=1`).
pub fn golden(rel: &str, now: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(rel);
    golden::assert_text(&path, now, &format!("{rel} changed"));
}

/// The golden files present in `tests/golden/DIR`, sorted.
pub fn golden_files(dir: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(dir);
    let mut out: Vec<String> = std::fs::read_dir(path)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A copy of `m` with every keyed logical collection reversed and rotated
/// (declarations, fields, variants, payload fields, functions, parameters,
/// locals, blocks, owned paths, loans, cleanup edges, imports). The
/// writer sorts them canonically, so this changes no logical fact.
pub fn permuted(m: &Module) -> Module {
    fn shuffle<T>(v: &mut [T]) {
        v.reverse();
        if v.len() > 2 {
            v.rotate_left(1);
        }
    }
    let mut m = m.clone();
    shuffle(&mut m.imports);
    shuffle(&mut m.declarations);
    for d in &mut m.declarations {
        shuffle(&mut d.fields);
        shuffle(&mut d.variants);
        for v in &mut d.variants {
            shuffle(&mut v.fields);
        }
        shuffle(&mut d.functions);
        for f in &mut d.functions {
            shuffle(&mut f.params);
            shuffle(&mut f.body.locals);
            shuffle(&mut f.body.blocks);
            shuffle(&mut f.body.paths);
            shuffle(&mut f.body.loans);
            shuffle(&mut f.body.edges);
        }
    }
    m
}
