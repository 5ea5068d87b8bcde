//! The shared lowered form (`zlm::materialize::lowered`): the native
//! printers consume it for every migrated operation family and never
//! match the source operation of such a family themselves, and the
//! generated corpus lowers to every instruction kind (so every printer
//! arm runs under the four-engine oracle).

use std::collections::BTreeSet;
use zlm::check::Resolved;
use zlm::materialize::c::plan::{self, FunctionPlan};
use zlm::materialize::c::types::Types;
use zlm::materialize::c::walk;
use zlm::materialize::lowered::{Kind, LoweredFunction, migrated};
use zlm::model::{ReceiverKind, tag};

/// The printers' per-operation files: the C printer and the LLVM
/// function printer with its neighbours.
fn printer_sources() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("src/materialize/c/lower.rs")];
    let llvm = root.join("../zlm_llvm/src/func");
    let mut entries: Vec<_> = std::fs::read_dir(&llvm)
        .unwrap_or_else(|e| panic!("{}: {e}", llvm.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    entries.sort();
    files.extend(entries);
    files
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), text)
        })
        .collect()
}

#[test]
fn printers_do_not_match_migrated_source_operations() {
    let sources = printer_sources();
    assert!(sources.len() >= 2, "printer sources not found");
    let mut found = Vec::new();
    let mut migrated_count = 0;
    for t in 0..=52u32 {
        let Some(name) = tag::name(t) else { continue };
        if !migrated(t) {
            continue;
        }
        migrated_count += 1;
        let constant = format!("tag::{}", name.to_uppercase());
        for (path, text) in &sources {
            // `tag::NAME` followed by a non-identifier character.
            for (at, _) in text.match_indices(&constant) {
                let next = text[at + constant.len()..].chars().next();
                if !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    found.push(format!("{path}: {constant}"));
                }
            }
        }
    }
    assert!(migrated_count > 0, "no migrated family");
    assert!(
        found.is_empty(),
        "a printer matches a migrated operation instead of its lowered instruction: {found:?}"
    );
}

#[test]
fn the_generated_corpus_lowers_to_every_instruction_kind() {
    let mut seen: BTreeSet<Kind> = BTreeSet::new();
    let mut functions = 0usize;
    for seed in 0..120u64 {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let checked = zlm::decode::from_model(&m, &[])
            .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"));
        let r = Resolved::of_checked(&checked);
        // The unit's type table, as the C printer fills it.
        let mut types = Types::default();
        for d in r.module.declarations.iter().take(r.local) {
            for f in &d.functions {
                for t in plan::held_types(f, None) {
                    let _ = types.add(&r, t);
                }
            }
        }
        for (di, d) in r.module.declarations.iter().enumerate().take(r.local) {
            for (fi, f) in d.functions.iter().enumerate() {
                let bound = !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None);
                let Ok(frame) = walk::frame(&r, (di, fi), bound) else {
                    continue;
                };
                let plan = FunctionPlan::new(&r, (di, fi), frame);
                let lowered = LoweredFunction::of(&plan, &types, |_| true);
                functions += 1;
                seen.extend(lowered.insts().map(|i| i.kind()));
            }
        }
    }
    assert!(functions > 0);
    let missing: Vec<Kind> = Kind::ALL
        .iter()
        .copied()
        .filter(|k| !seen.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "instruction kinds never lowered from the corpus: {missing:?}"
    );
}
