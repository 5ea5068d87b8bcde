//! vpl's integration tests in one test binary (one link instead of 14): each file
//! below stays where it was and is a module here, so
//! `cargo test -p vpl --test all -- FILE::` runs one file's tests.

#[path = "corpus.rs"]
mod corpus;
#[path = "glsl.rs"]
mod glsl;
#[path = "module_info.rs"]
mod module_info;
#[path = "naga_targets.rs"]
mod naga_targets;
#[path = "roundtrip.rs"]
mod roundtrip;
#[path = "testgen.rs"]
mod testgen;
#[path = "testgen_spec_coverage.rs"]
mod testgen_spec_coverage;
#[path = "text_rules.rs"]
mod text_rules;
#[path = "verify_builder.rs"]
mod verify_builder;
#[path = "verify_corpus.rs"]
mod verify_corpus;
#[path = "verify_flow_props.rs"]
mod verify_flow_props;
#[path = "verify_output_props.rs"]
mod verify_output_props;
#[path = "verify_props.rs"]
mod verify_props;
#[path = "writer.rs"]
mod writer;

/// Every `tests/*.rs` file runs: it is a module of this binary, or a helper the modules share.
/// (With `autotests = false`, a new file that is neither would silently never run.)
#[test]
fn every_test_file_is_in_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = include_str!("all.rs");
    let helpers: [&str; 1] = ["common.rs"];
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".rs") || name == "all.rs" || helpers.contains(&name.as_str()) {
            continue;
        }
        let in_suite = suite.contains(&format!("#[path = \"{name}\"]"));
        if !in_suite {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{missing:?} not in tests/all.rs: add `#[path = \"FILE\"] mod NAME;`"
    );
}
