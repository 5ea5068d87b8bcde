//! The VPL corpus's own runner (`../shared/corpus/vpl-arcadia/run.sh`) against this
//! build: it checks every case with `vpl check --format json`, prints each valid one
//! with `vpl fmt` twice (idempotent, and valid again), compiles it with `vpl glsl`
//! and has `glslangValidator` accept the stages. Every case must pass.
//!
//! Without the corpus (no `../shared` beside the checkout) or without
//! `glslangValidator` the test prints why and passes, unless `VPL_REQUIRE_GL=1` or
//! `IRKIT_REQUIRE_REFERENCE=1` (CI sets both) makes that a failure.

use std::path::PathBuf;
use std::process::Command;

fn required() -> bool {
    ["VPL_REQUIRE_GL", "IRKIT_REQUIRE_REFERENCE"]
        .iter()
        .any(|name| std::env::var(name).is_ok_and(|v| v == "1"))
}

fn unavailable(why: &str) {
    assert!(!required(), "{why}");
    eprintln!("skipped: {why}");
}

#[test]
fn every_case_of_the_arcadia_corpus_passes_its_runner() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let runner = workspace.join("../shared/corpus/vpl-arcadia/run.sh");
    if !runner.is_file() {
        return unavailable(&format!("the corpus runner is not at {}", runner.display()));
    }
    let glslang = Command::new("glslangValidator").arg("--version").output();
    if !glslang.is_ok_and(|o| o.status.success()) {
        return unavailable("glslangValidator is not installed (package glslang-tools)");
    }
    let out = Command::new("bash")
        .arg(&runner)
        .arg(env!("CARGO_BIN_EXE_irkit"))
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "runner failed:\n{stdout}\n{stderr}"
    );
    // The summary line: "N passed, 0 failed", with every case of the manifest run.
    let cases = std::fs::read_to_string(runner.with_file_name("cases.tsv")).expect("manifest");
    let rows = cases
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.contains(" passed, "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    let passed: usize = summary
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("summary {summary:?}"));
    assert!(summary.ends_with(" 0 failed"), "{summary}");
    assert!(
        passed >= 8 && passed + 1 >= rows,
        "{passed} passed of {rows} manifest rows: {summary}"
    );
}
