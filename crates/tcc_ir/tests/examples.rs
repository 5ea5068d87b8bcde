//! The hand-written artifacts under `examples/tcc/`: each decodes, validates,
//! carries the hash it should, and re-encodes canonically.

use std::path::PathBuf;
use tcc_ir::{
    FeatureSet, InstructionGroup, compute_hash, decode_artifact, encode_artifact, validate,
};

/// Golden hashes, reviewed when an example changes.
const GOLDEN: [(&str, &str); 7] = [
    (
        "compute.json",
        "e94d6c661fb37ccf7bd3c4c184041b1312493999ebed4857fb22fe2f01703902",
    ),
    (
        "concurrency.json",
        "c2c5117e6b9246e0c39f864579ac448010a0f9924dddcd479abd0ae8b9edfbd6",
    ),
    (
        "control.json",
        "8e1551b5e063b529d1ef0e3ee17d7c29954934520a39d3954defd4dcd8315a84",
    ),
    (
        "durable.json",
        "dec95b47582e1e1b9928d4c0dacc15fddc3f2585223b66a78af3699ee00a5084",
    ),
    (
        "exceptions.json",
        "dbcb48c19741b085f2d7ff4fbf38a611e4071303f948bd2a6231c652ccf2dd51",
    ),
    (
        "first-example.json",
        "31b4bbdf7abb7bf3c6e6c0cae4f97370e400ad2db44f7163a19745110b2b02d7",
    ),
    (
        "locals.json",
        "99848253e3392a4bd9c604bbcf75081e9a872e4c4df9c6262adf52fe39e27943",
    ),
];

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/tcc")
}

#[test]
fn every_example_decodes_validates_and_has_its_golden_hash() {
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    let golden: Vec<&str> = GOLDEN.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, golden, "examples/tcc and GOLDEN disagree");
    let engine = FeatureSet::all_engine_features();
    let host = FeatureSet::all_host_capabilities();
    for (name, hash) in GOLDEN {
        let bytes = std::fs::read(examples_dir().join(name)).unwrap();
        let a = decode_artifact(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(validate(&a, &engine, &host), Ok(()), "{name}");
        assert_eq!(compute_hash(&a), hash, "{name}: computed hash");
        assert_eq!(a.envelope.artifact_hash, hash, "{name}: embedded hash");
        let canonical = encode_artifact(&a);
        assert_eq!(decode_artifact(&canonical).unwrap(), a, "{name}");
        assert_eq!(
            encode_artifact(&decode_artifact(&canonical).unwrap()),
            canonical
        );
    }
}

#[test]
fn examples_cover_every_instruction_and_group() {
    let mut seen = std::collections::BTreeSet::new();
    let mut groups = std::collections::BTreeSet::new();
    for (name, _) in GOLDEN {
        let bytes = std::fs::read(examples_dir().join(name)).unwrap();
        let a = decode_artifact(&bytes).unwrap();
        for f in &a.program.functions {
            for i in &f.instructions {
                seen.insert(i.name());
                groups.insert(i.group());
            }
        }
    }
    let missing: Vec<&str> = tcc_ir::instruction::OP_NAMES
        .iter()
        .copied()
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(missing.is_empty(), "ops without an example: {missing:?}");
    assert_eq!(groups.len(), 6);
    assert!(groups.contains(&InstructionGroup::Compute));
}

/// The facts note's tiny example (its layout joined into one line), with the
/// hash filled in: it decodes and re-encodes byte for byte.
#[test]
fn facts_note_example_re_encodes_byte_identically() {
    let text = concat!(
        r#"{"envelope":{"artifact_hash":"31b4bbdf7abb7bf3c6e6c0cae4f97370e400ad2db44f7163a19745110b2b02d7","engine_format_version":1,"frontend_id":"typescript","#,
        r#""frontend_version":"26.10.0","language_semantics_version":"ts.subset.v1","#,
        r#""required_engine_features":["ts.control_flow","durable.effect"],"#,
        r#""required_host_capabilities":["host.persist_checkpoint","host.effect"],"runtime_modules":[]},"#,
        r#""program":{"entry":0,"functions":[{"id":0,"instructions":[{"op":"NewObject"},"#,
        r#"{"op":"LoadConst","value":{"t":"number","v":-0}},{"key":"x","op":"SetProp"},"#,
        r#"{"op":"LoadConst","value":{"t":"string","v":"greet"}},"#,
        r#"{"has_input":true,"op":"Effect"},{"op":"Return"}],"#,
        r#""local_count":0,"name":"run","param_count":0,"spans":[null,null,null,null,null,null]}]}}"#
    );
    let a = decode_artifact(text.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(encode_artifact(&a)).unwrap(), text);
    assert_eq!(compute_hash(&a), a.envelope.artifact_hash);
    // The hash input is the same bytes with an empty artifact_hash.
    let input = text.replace(
        "31b4bbdf7abb7bf3c6e6c0cae4f97370e400ad2db44f7163a19745110b2b02d7",
        "",
    );
    assert_eq!(tcc_ir::hash_input(&a), input.as_bytes());
}
