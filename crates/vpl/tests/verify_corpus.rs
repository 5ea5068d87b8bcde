//! The verifier conformance corpus: `tests/verify/{valid,invalid}/*.vpl`.
//!
//! Every file is a complete module read through `vpl::text::read` (which
//! runs the verifier). Header comments say what is expected:
//!
//! * `// expect: ok` — the module verifies, and its canonical text (which
//!   the writer reads back through the verifier) verifies too;
//! * `// rule: NAME` and `// error: TEXT` — reading fails with a semantic
//!   error whose message contains TEXT, whose verifier rule family is NAME
//!   (`binding` for errors the reader reports before verification), and
//!   whose position is the first form or token after the `/*^*/` marker.
//!
//! The files are valid inputs for `irkit vpl check`, so each case can be
//! inspected on the command line.

use std::path::{Path, PathBuf};
use vpl::text::ErrorKind;

const MARK: &str = "/*^*/";

fn files(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/verify")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "vpl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    files
}

fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix(&format!("// {key}: ")))
}

/// Byte offset → (offset, line, column in code points).
fn position(text: &str, offset: usize) -> (u32, u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
    (offset as u32, line, column)
}

#[test]
fn valid_cases_verify_and_round_trip() {
    for path in files("valid") {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case");
        assert_eq!(header(&text, "expect"), Some("ok"), "{name}: header");
        let module = vpl::text::read(text.as_bytes(), &name)
            .unwrap_or_else(|e| panic!("{name}: expected success, got {e}"));
        let canonical =
            vpl::text::write(&module).unwrap_or_else(|e| panic!("{name}: writing failed: {e}"));
        vpl::text::read(canonical.as_bytes(), "canonical")
            .unwrap_or_else(|e| panic!("{name}: canonical text rejected: {e}"));
    }
}

#[test]
fn invalid_cases_fail_at_the_marked_form() {
    let failures: Vec<String> = files("invalid")
        .into_iter()
        .filter_map(|path| {
            std::panic::catch_unwind(|| check_invalid(&path))
                .err()
                .map(|e| {
                    e.downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| path.display().to_string())
                })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn check_invalid(path: &Path) {
    {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).expect("readable case");
        let rule = header(&text, "rule").unwrap_or_else(|| panic!("{name}: no rule header"));
        let message = header(&text, "error").unwrap_or_else(|| panic!("{name}: no error header"));
        let marker = text
            .find(MARK)
            .unwrap_or_else(|| panic!("{name}: no {MARK} marker"));
        let expected = position(&text, marker + MARK.len());
        let err = match vpl::text::read(text.as_bytes(), &name) {
            Ok(_) => panic!("{name}: expected an error containing {message:?}, but it verified"),
            Err(e) => e,
        };
        assert_eq!(err.kind, ErrorKind::Semantic, "{name}: {err}");
        assert!(
            err.message.contains(message),
            "{name}: message {:?} lacks {message:?}",
            err.message
        );
        let found = match &err.verify {
            Some(v) => v.rule.name(),
            None => "binding",
        };
        assert_eq!(found, rule, "{name}: rule family of {err}");
        let code = match rule {
            "binding" => "VPL-SEMANTIC".to_string(),
            family => format!("VPL-V-{}", family.to_uppercase()),
        };
        assert_eq!(err.code(), code, "{name}: code of {err}");
        assert_eq!(
            (err.position.offset, err.position.line, err.position.column),
            expected,
            "{name}: position of {err}"
        );
    }
}

#[test]
fn every_rule_family_has_invalid_cases() {
    let mut seen = std::collections::BTreeSet::new();
    for path in files("invalid") {
        let text = std::fs::read_to_string(&path).expect("readable case");
        if let Some(rule) = header(&text, "rule") {
            seen.insert(rule.to_string());
        }
    }
    for rule in [
        "container",
        "interface",
        "type",
        "register",
        "definite-assignment",
        "storage",
        "output",
        "instruction",
        "control-flow",
    ] {
        assert!(
            seen.contains(rule),
            "no invalid case for rule family {rule}"
        );
    }
}
