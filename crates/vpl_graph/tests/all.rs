//! vpl_graph's integration tests in one test binary (one link instead of 4): each file
//! below stays where it was and is a module here, so
//! `cargo test -p vpl_graph --test all -- FILE::` runs one file's tests.

#[path = "diagnostics.rs"]
mod diagnostics;
#[path = "examples.rs"]
mod examples;
#[path = "preview.rs"]
mod preview;
#[path = "props.rs"]
mod props;

/// Every `tests/*.rs` file runs: it is a module of this binary.
/// (With `autotests = false`, a new file that is neither would silently never run.)
#[test]
fn every_test_file_is_in_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = include_str!("all.rs");
    let helpers: [&str; 0] = [];
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
