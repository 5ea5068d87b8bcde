//! `irkit vpl check|fmt` end to end.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn irkit(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("irkit runs");
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file in its own temporary directory; both are removed on drop.
struct TempFile(PathBuf);

impl std::ops::Deref for TempFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn temp(name: &str, contents: &[u8]) -> TempFile {
    let dir = std::env::temp_dir().join(format!("irkit-vpl-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    TempFile(path)
}

const BROKEN: &str = "(module 1\n  (types\n    (type T vector float 9))\n";

#[test]
fn check_accepts_the_examples() {
    let out = irkit(
        &[
            "vpl",
            "check",
            "examples/vpl/minimal.vpl",
            "examples/vpl/loop_call.vpl",
            "examples/vpl/nested_storage.vpl",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The checkers' success shape (docs/cli.md): one `LABEL: ok` line per file.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "examples/vpl/minimal.vpl: ok",
            "examples/vpl/loop_call.vpl: ok",
            "examples/vpl/nested_storage.vpl: ok"
        ],
        "{stdout}"
    );
    let json = irkit(
        &[
            "vpl",
            "check",
            "--format",
            "json",
            "examples/vpl/minimal.vpl",
        ],
        None,
    );
    assert_eq!(json.status.code(), Some(0));
    assert!(json.stdout.is_empty());
}

#[test]
fn check_reports_human_diagnostics_like_rustc() {
    let path = temp("broken.vpl", BROKEN.as_bytes());
    let out = irkit(&["vpl", "check", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "error[VPL-SEMANTIC]: invalid vector size 9 (must be 2, 3 or 4) (semantic)"
        ),
        "{err}"
    );
    assert!(
        err.contains(&format!("--> {}:3:26", path.display())),
        "{err}"
    );
    assert!(err.contains("3 |     (type T vector float 9))"), "{err}");
    assert!(err.contains("  |                          ^"), "{err}");
}

#[test]
fn check_prints_json_lines() {
    let out = irkit(
        &["vpl", "check", "--format", "json", "-"],
        Some(b"(module 1 (types) ;"),
    );
    assert_eq!(out.status.code(), Some(1));
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(line.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["kind"], "lexical");
    assert_eq!(v["label"], "<stdin>");
    assert_eq!(v["offset"], 18);
    assert_eq!(v["line"], 1);
    assert_eq!(v["column"], 19);
    assert!(v["message"].as_str().unwrap().contains("';'"));
}

#[test]
fn check_continues_over_files_and_reports_io_errors() {
    let broken = temp("broken2.vpl", BROKEN.as_bytes());
    let out = irkit(
        &[
            "vpl",
            "check",
            "--format",
            "json",
            broken.to_str().unwrap(),
            "examples/vpl/minimal.vpl",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
    let out = irkit(
        &["vpl", "check", "no/such/file.vpl", broken.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let out = irkit(&["vpl", "check"], None);
    assert_eq!(out.status.code(), Some(2), "missing FILE is a usage error");
}

#[test]
fn canon_prints_canonical_text_and_checks() {
    let out = irkit(&["vpl", "canon", "examples/vpl/minimal.vpl"], None);
    assert_eq!(out.status.code(), Some(0));
    let canonical = out.stdout;
    let golden = std::fs::read(root().join("crates/vpl/tests/golden/minimal.vpl")).unwrap();
    assert_eq!(canonical, golden);
    // --check: the original has comments, the output is canonical.
    let out = irkit(
        &["vpl", "canon", "--check", "examples/vpl/minimal.vpl"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("error[VPL-FORMAT]: not in canonical form"),
        "{err}"
    );
    assert!(err.contains("--> examples/vpl/minimal.vpl:1:1"), "{err}");
    // The first difference of a nearly canonical file is located exactly.
    let nearly = String::from_utf8(canonical.clone()).unwrap().replacen(
        "(types\n    (type t0",
        "(types\n     (type t0",
        1,
    );
    let path = temp("nearly.vpl", nearly.as_bytes());
    let out = irkit(
        &[
            "vpl",
            "canon",
            "--check",
            "--format",
            "json",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(
        (v["kind"].as_str(), v["line"].as_u64(), v["column"].as_u64()),
        (Some("format"), Some(3), Some(5))
    );
    let path = temp("canonical.vpl", &canonical);
    assert_eq!(
        irkit(&["vpl", "canon", "--check", path.to_str().unwrap()], None)
            .status
            .code(),
        Some(0)
    );
    // -o writes a file; stdin works.
    let target = temp("out.vpl", b"");
    let out = irkit(
        &["vpl", "canon", "-", "-o", target.to_str().unwrap()],
        Some(&std::fs::read(root().join("examples/vpl/minimal.vpl")).unwrap()),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(&target).unwrap(), canonical);
}

#[test]
fn canon_rejects_invalid_input() {
    let out = irkit(
        &["vpl", "canon", "--format", "json", "-"],
        Some(b"\xEF\xBB\xBF(module 1)"),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(v["kind"], "lexical");
    assert_eq!(v["offset"], 0);
    assert_eq!(
        irkit(&["vpl", "canon", "missing.vpl"], None).status.code(),
        Some(2)
    );
}

#[test]
fn canon_never_overwrites_its_input_without_in_place() {
    let source = std::fs::read(root().join("examples/vpl/minimal.vpl")).unwrap();
    let path = temp("mine.vpl", &source);
    let p = path.to_str().unwrap();
    let out = irkit(&["vpl", "canon", p, "-o", p], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("refusing to overwrite the input"), "{err}");
    assert!(err.contains("--in-place"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        source,
        "the input is untouched"
    );
    // --in-place does it, and says in its help what it does.
    let out = irkit(&["vpl", "canon", "--in-place", p], None);
    assert_eq!(out.status.code(), Some(0));
    let golden = std::fs::read(root().join("crates/vpl/tests/golden/minimal.vpl")).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), golden);
    let help = String::from_utf8(irkit(&["vpl", "canon", "--help"], None).stdout).unwrap();
    assert!(help.contains("renames every"), "{help}");
    assert!(help.contains("drops every comment"), "{help}");
    // `fmt` is the same verb (the corpus runner's name): it refuses the same
    // overwrite, and prints what `canon` prints.
    std::fs::write(&path, &source).unwrap();
    let out = irkit(&["vpl", "fmt", p, "-o", p], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("refusing to overwrite the input"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), source);
    let by_fmt = irkit(&["vpl", "fmt", p], None);
    let by_canon = irkit(&["vpl", "canon", p], None);
    assert_eq!(by_fmt.status.code(), Some(0), "{by_fmt:?}");
    assert_eq!(by_fmt.stdout, golden);
    assert_eq!(by_fmt.stdout, by_canon.stdout);
}

#[test]
fn every_vpl_verb_takes_builtin_names() {
    for verb in [&["check"][..], &["canon"]] {
        let mut args = vec!["vpl"];
        args.extend_from_slice(verb);
        args.push("builtin:mesh-ambient-color");
        let out = irkit(&args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
    }
    // The built-in files carry comments, so they are not canonical.
    let out = irkit(
        &["vpl", "canon", "--check", "builtin:mesh-ambient-color"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--> mesh-ambient-color.vpl:1:1"), "{err}");
    let out = irkit(&["vpl", "check", "builtin:mesh-ambient-colour"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("did you mean `mesh-ambient-color`?"), "{err}");
}
