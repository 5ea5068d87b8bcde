//! The shared lowered form (`zlm::materialize::lowered`): every named
//! operation tag lowers through it, the native printers consume only it
//! (they never match a source operation, operand or contract operation
//! themselves), and the generated corpus lowers to every instruction kind,
//! byte intrinsic and contract node kind (so every printer arm runs under
//! the four-engine oracle).

use std::collections::BTreeSet;
use zlm::check::Resolved;
use zlm::materialize::c::plan::{self, FunctionPlan};
use zlm::materialize::c::types::Types;
use zlm::materialize::c::walk;
use zlm::materialize::lowered::{ByteOp, ContractKind, Inst, Kind, LoweredFunction, migrated};
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

/// Where `needle` occurs in `text` not followed by an identifier
/// character.
fn mentions(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        let next = text[at + needle.len()..].chars().next();
        !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[test]
fn every_named_operation_lowers_through_the_shared_form() {
    let unmigrated: Vec<&str> = (0..=52u32)
        .filter_map(|t| tag::name(t).filter(|_| !migrated(t)))
        .collect();
    assert!(
        unmigrated.is_empty(),
        "operations printed outside the lowered form: {unmigrated:?}"
    );
}

#[test]
fn printers_do_not_match_source_operations() {
    let sources = printer_sources();
    assert!(sources.len() >= 2, "printer sources not found");
    let mut found = Vec::new();
    let mut needles: Vec<String> = (0..=52u32)
        .filter_map(tag::name)
        .map(|name| format!("tag::{}", name.to_uppercase()))
        .collect();
    // The source operands, contract operations and auxiliary fields.
    needles.extend(
        [
            "Operand::",
            "ContractOperand::",
            "Aux::",
            "op.tag",
            "op.aux0",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    for needle in &needles {
        for (path, text) in &sources {
            if needle.ends_with("::") || needle.contains('.') {
                if text.contains(needle.as_str()) {
                    found.push(format!("{path}: {needle}"));
                }
            } else if mentions(text, needle) {
                found.push(format!("{path}: {needle}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a printer reads a source operation instead of its lowered form: {found:?}"
    );
}

#[test]
fn the_generated_corpus_lowers_to_every_instruction_kind() {
    let mut seen: BTreeSet<Kind> = BTreeSet::new();
    let mut contract_seen: BTreeSet<ContractKind> = BTreeSet::new();
    let mut byte_ops: BTreeSet<&'static str> = BTreeSet::new();
    let mut functions = 0usize;
    // Generated modules only: catalog pure calls in contracts (a slice's
    // and an array's `length` and `get` through Slice, Ref and Mut
    // parameters, the allocator's `remaining`) come from the generator.
    for text in (0..300u64).map(zlm::testgen::module_text) {
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
                contract_seen.extend(lowered.contract_kinds());
                for i in lowered.insts() {
                    if let Inst::Bytes { op, .. } = i {
                        byte_ops.insert(byte_op_name(op));
                    }
                }
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
    let missing: Vec<ContractKind> = ContractKind::ALL
        .iter()
        .copied()
        .filter(|k| !contract_seen.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "contract node kinds never lowered from the corpus: {missing:?}"
    );
    let missing: Vec<&str> = BYTE_OPS
        .iter()
        .copied()
        .filter(|k| !byte_ops.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "byte intrinsics never lowered from the corpus: {missing:?}"
    );
}

/// Every byte intrinsic of the lowered form.
const BYTE_OPS: [&str; 7] = ["len", "at", "alloc", "push", "poke", "clear", "left"];

fn byte_op_name(op: &ByteOp) -> &'static str {
    match op {
        ByteOp::Len(_) => "len",
        ByteOp::At(_) => "at",
        ByteOp::Alloc { .. } => "alloc",
        ByteOp::Push { .. } => "push",
        ByteOp::Poke => "poke",
        ByteOp::Clear => "clear",
        ByteOp::Left => "left",
    }
}
