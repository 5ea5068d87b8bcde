//! The CLI's one error path (`CliError`, rendered once by `main`): exit
//! statuses, the order of several inputs' errors, and that a library error
//! reads the same in every verb that meets it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .output()
        .expect("irkit runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary directory, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let path =
            std::env::temp_dir().join(format!("irkit-cli-errors-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Dir(path)
    }

    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }

    fn missing(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn several_inputs_report_every_error_in_order_and_exit_with_the_highest_status() {
    let d = Dir::new("several");
    let bad = d.file("bad.vpl", b"(module\n  (bad");
    let missing = d.missing("missing.vpl");
    let o = irkit(&["vpl", "check", &bad, &missing, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // `--format json` covers the I/O error too: one object per error, in order.
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), 2, "{}", stdout(&o));
    assert_eq!(lines[0]["code"], "VPL-SYNTACTIC");
    assert_eq!(lines[0]["label"], bad.as_str());
    assert_eq!(lines[1]["kind"], "io");
    assert_eq!(lines[1]["label"], missing.as_str());
    assert_eq!(
        lines[1]["message"],
        format!("cannot read {missing}: No such file or directory (os error 2)")
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // Invalid input alone is exit 1, in the human form on stderr.
    let o = irkit(&["vpl", "check", &bad]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.starts_with("error[VPL-SYNTACTIC]: "), "{err}");
    assert!(err.contains(&format!("--> {bad}:2:")), "{err}");
    // Both libraries of a diff unreadable: both reported, in argument order.
    let (old, new) = (d.missing("old.rvnlib"), d.missing("new.rvnlib"));
    let o = irkit(&["rvn", "diff", &old, &new]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].contains(&old) && lines[1].contains(&new), "{err}");
}

/// One truncated ZLM1 artifact: every verb that decodes it reports the same
/// diagnostic, because `zlm::Error` converts to diagnostics in one place.
#[test]
fn a_zlm_error_reads_the_same_in_every_verb() {
    let d = Dir::new("zlm");
    let mut bytes = b"ZLM1".to_vec();
    bytes.extend([0u8; 20]);
    let file = d.file("short.zlm", &bytes);
    let out = d.missing("c");
    let verbs: [Vec<&str>; 5] = [
        vec!["zlm", "validate", &file],
        vec!["zlm", "dis", &file],
        vec!["zlm", "run", &file, "--entry", "M.f"],
        vec!["zlm", "emit-c", &file, "-o", &out],
        vec!["zlm", "zli", &file],
    ];
    let mut seen = Vec::new();
    for args in &verbs {
        let mut args = args.clone();
        args.extend(["--format", "json"]);
        let o = irkit(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let lines = json_lines(&stdout(&o));
        assert_eq!(lines.len(), 1, "{args:?}: {}", stdout(&o));
        assert_eq!(lines[0]["kind"], "encoding", "{args:?}");
        assert_eq!(lines[0]["label"], file.as_str(), "{args:?}");
        seen.push(lines[0].clone());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
    assert!(
        !Path::new(&out).exists(),
        "emit-c wrote output for an invalid module"
    );
}

/// A source that does not compile, given where an artifact may be: the
/// frontend's diagnostic in the verb's `--format`, the same as `tcc compile`'s.
#[test]
fn a_frontend_error_follows_the_verbs_format() {
    let d = Dir::new("tcc");
    let source = d.file("broken.py", b"def main(:\n    return 1\n");
    let compile = irkit(&["tcc", "compile", &source, "--format", "json"]);
    assert_eq!(compile.status.code(), Some(1), "{}", stderr(&compile));
    let expected = json_lines(&stdout(&compile));
    assert_eq!(expected.len(), 1, "{}", stdout(&compile));
    assert!(
        expected[0]["code"]
            .as_str()
            .is_some_and(|c| c.starts_with("TCC-F")),
        "{}",
        expected[0]
    );
    for verb in ["run", "step"] {
        let o = irkit(&["tcc", verb, &source, "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{verb}: {}", stderr(&o));
        assert_eq!(json_lines(&stdout(&o)), expected, "{verb}");
        assert!(stderr(&o).is_empty(), "{verb}: {}", stderr(&o));
    }
}

/// `tcc start --local` refusing its program answers like every other verb: a
/// coded diagnostic (`error[TCC-E001]` for bytes that are not an artifact, in
/// JSON with its code), exit 1 (invalid input); an unknown program name is
/// `TCC-H203`, kind `name`.
#[test]
fn tcc_start_local_refusals_are_coded_diagnostics() {
    let d = Dir::new("start-local");
    let bad = d.file("bad.tcc", b"not an artifact");
    let db = d.missing("store.db");
    let database = db;
    let human = irkit(&["tcc", "start", "--local", &bad, "--database", &database]);
    assert_eq!(human.status.code(), Some(1), "{}", stderr(&human));
    let text = stderr(&human);
    assert!(text.starts_with("error[TCC-E001]: "), "{text}");
    assert!(!text.contains("TCC-E001: TCC-E001"), "{text}");
    let json = irkit(&[
        "tcc",
        "start",
        "--local",
        &bad,
        "--database",
        &database,
        "--format",
        "json",
    ]);
    assert_eq!(json.status.code(), Some(1), "{}", stderr(&json));
    let lines = json_lines(&stdout(&json));
    assert_eq!(lines.len(), 1, "{}", stdout(&json));
    assert_eq!(lines[0]["code"], "TCC-E001", "{}", lines[0]);
    assert_eq!(lines[0]["kind"], "encoding", "{}", lines[0]);
    assert_eq!(lines[0]["label"], bad.as_str(), "{}", lines[0]);

    let unknown = irkit(&[
        "tcc",
        "start",
        "--local",
        "no_such_program",
        "--database",
        &database,
        "--format",
        "json",
    ]);
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
    let lines = json_lines(&stdout(&unknown));
    assert_eq!(lines[0]["code"], "TCC-H203", "{}", lines[0]);
    assert_eq!(lines[0]["kind"], "name", "{}", lines[0]);
}

/// A file of the repository, by its path from the root.
fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// The success shapes of docs/cli.md, one verb per family and system:
/// checkers print `LABEL: ok…` (human) and nothing in JSON; listings print
/// one JSON object per line; runners and host verbs print one object.
#[test]
fn success_output_has_the_documented_shape_per_family() {
    // Checkers.
    let tcc = repo("examples/tcc/run/compute-loop.json");
    let zlt = repo("examples/zlm/run/loop.zlt");
    let rvn = repo("examples/rvnlib/app.rvnlib");
    for (system, verb, file) in [
        ("tcc", "validate", &tcc),
        ("zlm", "validate", &zlt),
        ("rvn", "verify", &rvn),
    ] {
        let human = irkit(&[system, verb, file]);
        assert_eq!(human.status.code(), Some(0), "{system}: {}", stderr(&human));
        let out = stdout(&human);
        assert_eq!(out.lines().count(), 1, "{system}: {out}");
        assert!(out.starts_with(&format!("{file}: ok")), "{system}: {out}");
        let json = irkit(&[system, verb, file, "--format", "json"]);
        assert_eq!(json.status.code(), Some(0), "{system}: {}", stderr(&json));
        assert!(json.stdout.is_empty(), "{system}: {}", stdout(&json));
    }
    // A listing: one object per line.
    let keys = irkit(&["rvn", "keys", &rvn, "--format", "json"]);
    assert_eq!(keys.status.code(), Some(0), "{}", stderr(&keys));
    let lines = json_lines(&stdout(&keys));
    assert!(!lines.is_empty());
    for line in &lines {
        assert!(
            line["kind"] == "struct" || line["kind"] == "function",
            "{line}"
        );
        assert!(
            line["key"].is_string() && line["name"].is_string(),
            "{line}"
        );
    }
    // A runner: one object with the result.
    let run = irkit(&[
        "zlm", "run", &zlt, "--entry", "Main.sum", "--args", "3", "--format", "json",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let lines = json_lines(&stdout(&run));
    assert_eq!(lines.len(), 1, "{}", stdout(&run));
    for key in ["result", "type", "steps", "drops"] {
        assert!(lines[0].get(key).is_some(), "{key}: {}", lines[0]);
    }
    // A host verb: the execution's status object.
    let d = Dir::new("success-shapes");
    let db = d.missing("store.db");
    let start = irkit(&[
        "tcc",
        "start",
        "--local",
        &tcc,
        "--args",
        "[3]",
        "--database",
        &db,
        "--format",
        "json",
    ]);
    assert_eq!(start.status.code(), Some(0), "{}", stderr(&start));
    let lines = json_lines(&stdout(&start));
    assert_eq!(lines.len(), 1, "{}", stdout(&start));
    assert_eq!(lines[0]["status"], "completed", "{}", lines[0]);
    assert!(lines[0]["id"].is_string(), "{}", lines[0]);
}
