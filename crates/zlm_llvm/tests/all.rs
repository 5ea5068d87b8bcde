//! zlm_llvm's integration tests in one test binary (one link instead of 8): each file
//! below stays where it was and is a module here, so
//! `cargo test -p zlm_llvm --test all -- FILE::` runs one file's tests.

#[path = "engines.rs"]
mod engines;
#[path = "fault_positions.rs"]
mod fault_positions;
#[path = "oracle.rs"]
mod oracle;
#[path = "package.rs"]
mod package;
#[path = "shared_library.rs"]
mod shared_library;
#[path = "spec_programs.rs"]
mod spec_programs;
#[path = "target_record.rs"]
mod target_record;
#[path = "typed_oracle.rs"]
mod typed_oracle;

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
