//! `irkit vpl check` reports verifier failures as `semantic` diagnostics
//! located at the offending form (the corpus's `/*^*/` markers).

use std::path::{Path, PathBuf};

fn corpus(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vpl/tests/verify")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "vpl"))
        .collect();
    v.sort();
    v
}

mod common;
use common::irkit;

#[test]
fn invalid_cases_are_semantic_diagnostics_at_the_marker() {
    let files = corpus("invalid");
    assert!(files.len() > 50);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let marker = text.find("/*^*/").expect("marker") + "/*^*/".len();
        let before = &text[..marker];
        let line = before.matches('\n').count() as u64 + 1;
        let column = before.rsplit('\n').next().unwrap().chars().count() as u64 + 1;
        let p = path.to_str().expect("utf-8 path");
        let out = irkit(&["vpl", "check", "--format", "json", p]);
        assert_eq!(out.status.code(), Some(1), "{p}");
        let stdout = String::from_utf8(out.stdout).expect("utf-8");
        let d: serde_json::Value =
            serde_json::from_str(stdout.trim()).expect("one JSON diagnostic");
        assert_eq!(d["kind"], "semantic", "{p}: {d}");
        assert_eq!(d["offset"], marker as u64, "{p}: {d}");
        assert_eq!(
            (d["line"].as_u64(), d["column"].as_u64()),
            (Some(line), Some(column)),
            "{p}: {d}"
        );
        let expected = text
            .lines()
            .find_map(|l| l.strip_prefix("// error: "))
            .expect("error header");
        assert!(
            d["message"].as_str().unwrap().contains(expected),
            "{p}: {d}"
        );
    }
}

#[test]
fn valid_cases_check_cleanly_and_human_output_points_at_the_form() {
    let valid: Vec<String> = corpus("valid")
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["vpl", "check"];
    args.extend(valid.iter().map(String::as_str));
    let out = irkit(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../vpl/tests/verify/invalid/store_uniform_member.vpl");
    let out = irkit(&["vpl", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).expect("utf-8");
    assert!(stderr.contains("error[VPL-V-STORAGE]"), "{stderr}");
    assert!(stderr.contains("(semantic)"), "{stderr}");
    assert!(stderr.contains("uniform storage is read-only"), "{stderr}");
    assert!(stderr.contains(":51:35"), "{stderr}");
}
