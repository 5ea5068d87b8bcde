//! `irkit zlm`: `asm` checks like `validate` (exit 1, nothing written; `--no-check` skips it),
//! every verb takes `.zlt` as well as `.zlm`, messages spell operands as the text form and carry
//! their code once, an unknown entry gets a suggestion, and a fault is exit 3.

mod common;
use common::{irkit, repo_file, scratch, text};

/// `drops.zlt` without its first drop: `l0` leaks at function exit.
fn leaking() -> std::path::PathBuf {
    let source = std::fs::read_to_string(repo_file("examples/zlm/run/drops.zlt")).unwrap();
    let leaked = source.replacen("      place_drop - $l0 | path:l0 -\n", "", 1);
    assert_ne!(leaked, source);
    scratch("zlm-diag", "leak.zlt", &leaked)
}

#[test]
fn asm_checks_by_default_and_no_check_skips_it() {
    let leak = leaking();
    let out = leak.with_extension("zlm");
    // The scratch folder is named by the process id: a run that reused an
    // earlier run's id finds its `leak.zlm` there (seen in CI).
    let _ = std::fs::remove_file(&out);
    let (leak_s, out_s) = (leak.to_str().unwrap(), out.to_str().unwrap());
    let checked = irkit(&["zlm", "asm", leak_s, "-o", out_s]);
    assert_eq!(checked.status.code(), Some(1));
    assert!(!out.exists());
    let stderr = text(&checked.stderr);
    assert!(
        stderr.starts_with("error[ZLM-C-CLEANUP]: Main.field_replace"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("ZLM-C-CLEANUP").count(), 1, "{stderr}");
    assert!(stderr.contains("live owners [$l0]"), "{stderr}");
    assert!(stderr.contains("(semantic)"), "{stderr}");
    for leak in ["{ ", "Some(", "Local(", "Flow"] {
        assert!(!stderr.contains(leak), "{leak}: {stderr}");
    }

    let unchecked = irkit(&["zlm", "asm", "--no-check", leak_s, "-o", out_s]);
    assert_eq!(
        unchecked.status.code(),
        Some(0),
        "{}",
        text(&unchecked.stderr)
    );
    let validate = irkit(&["zlm", "validate", out_s]);
    assert_eq!(validate.status.code(), Some(1));
    // The same message at the same line: the text's at the `return` leaving the owner
    // alive, the artifact's through its embedded source map.
    let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
    assert_eq!(first(&text(&validate.stderr)), first(&stderr));
    assert!(stderr.contains("leak.zlt:42:7"), "{stderr}");
    assert!(
        text(&validate.stderr).contains("leak.zlt:42:7"),
        "{}",
        text(&validate.stderr)
    );
}

#[test]
fn every_verb_takes_text_or_bytes() {
    let zlt = repo_file("examples/zlm/run/loop.zlt");
    for verb in ["validate", "dis", "address", "ids"] {
        let out = irkit(&["zlm", verb, &zlt]);
        assert_eq!(out.status.code(), Some(0), "{verb}: {}", text(&out.stderr));
    }
    let dir = std::env::temp_dir().join(format!("irkit-zlm-diag-c-{}", std::process::id()));
    let out = irkit(&["zlm", "emit-c", &zlt, "-o", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_entry_gets_a_suggestion_and_a_fault_is_a_verdict() {
    let zlt = repo_file("examples/zlm/run/loop.zlt");
    let typo = irkit(&["zlm", "run", &zlt, "--entry", "Main.smu", "--args", "3"]);
    // An unknown name given as an argument is invalid input (docs/diagnostics.md).
    assert_eq!(typo.status.code(), Some(1));
    assert!(
        text(&typo.stderr).starts_with("error[ZLM-ENTRY]: "),
        "{}",
        text(&typo.stderr)
    );
    assert!(
        text(&typo.stderr).contains("did you mean `Main.sum`?"),
        "{}",
        text(&typo.stderr)
    );
    let faults = repo_file("examples/zlm/run/faults.zlt");
    let div = irkit(&[
        "zlm", "run", &faults, "--entry", "Main.div", "--args", "1", "0",
    ]);
    assert_eq!(div.status.code(), Some(3), "{}", text(&div.stderr));
    assert!(text(&div.stderr).contains("error[ZLM-FAULT-DIV-ZERO]"));
}
