//! `irkit rvn`: diagnostics point at the right input, warnings read as warnings, names may be
//! short or misspelt (with a suggestion), keys can be listed, the inspection JSON packs back into
//! the container, exit statuses tell a verdict from invalid input, and `--format json` and a
//! closed pipe behave. The human output of the mistakes is a golden file
//! (`tests/golden/rvn-diagnostics.txt`, `IRKIT_BLESS=1` rewrites it).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/rvnlib")
}

/// Runs irkit in the examples directory, so labels are the relative paths given.
fn rvn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .arg("rvn")
        .args(args)
        .current_dir(examples())
        .output()
        .expect("irkit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-rvn-diag-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_key_conflict_points_at_the_input_and_writes_nothing() {
    let dir = scratch_dir("conflict");
    let out = dir.join("never.rvnlib");
    let clash = rvn(&[
        "link",
        "collide-x.rvnlib",
        "collide-y.rvnlib",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(clash.status.code(), Some(1));
    let stderr = text(&clash.stderr);
    assert!(stderr.contains("error[RVN-KEY-CONFLICT]"), "{stderr}");
    assert!(stderr.contains("--> collide-y.rvnlib\n"), "{stderr}");
    assert!(!stderr.contains("never.rvnlib"), "{stderr}");
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn entries_take_short_names_and_suggest_on_a_typo() {
    let dir = scratch_dir("entry");
    let out = dir.join("linked.rvnlib");
    let out = out.to_str().unwrap();
    // A short name and a unique key prefix both name `PkgA.Geometry.Of(s: Shape): float`.
    for entry in ["Geometry.Of", "PkgA.Geometry.O"] {
        let linked = rvn(&["link", "pkg-a.rvnlib", "--entry", entry, "-o", out]);
        assert_eq!(linked.status.code(), Some(0), "{}", text(&linked.stderr));
        assert!(text(&linked.stderr).contains("1 struct(s) and 1 function(s)"));
    }
    let typo = rvn(&[
        "link",
        "pkg-a.rvnlib",
        "--entry",
        "Geometry.Fo",
        "-o",
        out,
        "--format",
        "json",
    ]);
    assert_eq!(typo.status.code(), Some(1));
    let lines = json_lines(&typo);
    assert_eq!(lines[0]["code"], "RVN-UNKNOWN-KEY");
    assert_eq!(lines[0]["kind"], "name");
    assert_eq!(lines[0]["label"], "--entry");
    let message = lines[0]["message"].as_str().unwrap();
    assert!(message.contains("did you mean `Geometry.Of`"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_duplicate_library_is_a_warning_and_renames_survive_json() {
    let dir = scratch_dir("warn");
    let out = dir.join("linked.rvnlib");
    let out = out.to_str().unwrap();
    let twice = rvn(&["link", "pkg-a.rvnlib", "pkg-a.rvnlib", "-o", out]);
    assert_eq!(twice.status.code(), Some(0), "{}", text(&twice.stderr));
    let stderr = text(&twice.stderr);
    assert!(stderr.contains("warning[RVN5005]: "), "{stderr}");
    assert!(!stderr.contains("error["), "{stderr}");

    let linked = rvn(&[
        "link",
        "--format",
        "json",
        "--consumer",
        "app.rvnlib",
        "pkg-a.rvnlib",
        "pkg-b.rvnlib",
        "pkg-b.rvnlib",
        "-o",
        out,
    ]);
    assert_eq!(linked.status.code(), Some(0), "{}", text(&linked.stderr));
    let lines = json_lines(&linked);
    assert_eq!(lines[0]["severity"], "warning");
    assert_eq!(lines[0]["code"], "RVN5005");
    let written = lines.last().unwrap();
    assert_eq!(written["kind"], "written");
    let renames = written["renames"].as_array().unwrap();
    assert!(
        renames
            .iter()
            .any(|r| r["to"] == "Of#1" && r["from"] == "Of"),
        "{renames:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calls_takes_a_short_name_and_keys_lists_them() {
    let short = rvn(&["calls", "app.rvnlib", "Shade"]);
    assert_eq!(short.status.code(), Some(0), "{}", text(&short.stderr));
    assert!(text(&short.stdout).starts_with("App.Main.Shade(x: float): float\n"));

    let typo = rvn(&["calls", "app.rvnlib", "Shdae"]);
    assert_eq!(typo.status.code(), Some(1));
    let stderr = text(&typo.stderr);
    assert!(stderr.contains("error[RVN-UNKNOWN-KEY]"), "{stderr}");
    assert!(stderr.contains("did you mean `Shade`?"), "{stderr}");

    let keys = rvn(&["keys", "--format", "json", "app.rvnlib"]);
    assert_eq!(keys.status.code(), Some(0));
    let lines = json_lines(&keys);
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "function" && l["key"] == "App.Main.Shade(x: float): float"),
        "{lines:?}"
    );
    let human = text(&rvn(&["keys", "app.rvnlib"]).stdout);
    assert!(
        human.contains("function App.Main.Shade(x: float): float  (name `Shade`)"),
        "{human}"
    );
}

fn inspect(file: &str) -> String {
    let out = rvn(&["inspect", file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn pack(json: &str, dir: &Path, name: &str) -> (Output, PathBuf) {
    let input = dir.join(format!("{name}.json"));
    std::fs::write(&input, json).unwrap();
    let output = dir.join(format!("{name}.rvnlib"));
    let out = rvn(&[
        "pack",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ]);
    (out, output)
}

#[test]
fn pack_turns_the_inspection_json_back_into_the_same_container() {
    let dir = scratch_dir("pack");
    // Version 3 (`core`, `app`) and version 4 (`pkg-a`: a struct key differs from its name).
    for file in [
        "core.rvnlib",
        "app.rvnlib",
        "pkg-a.rvnlib",
        "legacy-v3.rvnlib",
    ] {
        let (out, packed) = pack(&inspect(file), &dir, file);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        assert_eq!(
            std::fs::read(&packed).unwrap(),
            std::fs::read(examples().join(file)).unwrap(),
            "{file}"
        );
    }
    // A hand edit with a misspelt enum member is refused with a suggestion and its JSON path.
    let edited = inspect("core.rvnlib").replacen("\"Kind\": \"Float\"", "\"Kind\": \"Flaot\"", 1);
    let (out, packed) = pack(&edited, &dir, "edited");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[RVN-JSON-SCHEMA]"), "{stderr}");
    assert!(stderr.contains("did you mean `Float`?"), "{stderr}");
    assert!(!packed.exists());
    // Broken JSON points at its line and column.
    let (out, _) = pack("{\n  \"Name\": ,\n}\n", &dir, "broken");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error[RVN-JSON-SYNTAX]"), "{stderr}");
    assert!(stderr.contains("broken.json:2:11"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn breaking_is_a_verdict_and_invalid_input_is_not() {
    let breaking = rvn(&[
        "diff",
        "packages/skinning-v1.rvnlib",
        "packages/skinning-v2.rvnlib",
    ]);
    assert_eq!(breaking.status.code(), Some(3));
    let invalid = rvn(&[
        "diff",
        "refused/return-mismatch.rvnlib",
        "packages/brdf-v1.rvnlib",
    ]);
    assert_eq!(invalid.status.code(), Some(1));
    let missing = rvn(&["diff", "nope.rvnlib", "packages/brdf-v1.rvnlib"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn json_covers_usage_and_io_errors() {
    let usage = rvn(&[
        "verify",
        "--format",
        "json",
        "--no-such-flag",
        "core.rvnlib",
    ]);
    assert_eq!(usage.status.code(), Some(2));
    let lines = json_lines(&usage);
    assert_eq!(lines.len(), 1, "{}", text(&usage.stdout));
    assert_eq!(lines[0]["kind"], "usage");
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .contains("--no-such-flag")
    );

    let io = rvn(&["verify", "--format", "json", "missing.rvnlib"]);
    assert_eq!(io.status.code(), Some(2));
    let lines = json_lines(&io);
    assert_eq!(lines[0]["kind"], "io");
    assert_eq!(lines[0]["label"], "missing.rvnlib");
    assert!(text(&io.stderr).is_empty(), "{}", text(&io.stderr));
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let bytes = std::fs::read(examples().join("core.rvnlib")).unwrap();
    for verb in ["inspect", "keys"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
            .args(["rvn", verb, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before irkit has its input, so its first write fails.
        drop(child.stdout.take());
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(141), "{verb}");
        assert!(out.stderr.is_empty(), "{verb}: {}", text(&out.stderr));
    }
}

#[test]
fn the_mistakes_read_as_the_golden_file() {
    let dir = scratch_dir("golden");
    let out = dir.join("linked.rvnlib");
    let out = out.to_str().unwrap();
    let runs: &[&[&str]] = &[
        &["link", "collide-x.rvnlib", "collide-y.rvnlib", "-o", out],
        &[
            "link",
            "pkg-a.rvnlib",
            "pkg-a.rvnlib",
            "--entry",
            "Geometry.Fo",
            "-o",
            out,
        ],
        &[
            "link",
            "pkg-a.rvnlib",
            "pkg-b.rvnlib",
            "--entry",
            "Of",
            "-o",
            out,
        ],
        &["calls", "app.rvnlib", "Shdae"],
        &[
            "verify",
            "refused/return-mismatch.rvnlib",
            "refused/effect.rvnfx",
            "refused/version99.rvnlib",
        ],
        &[
            "verify",
            "refused/inspection.json",
            "refused/camel-case.rvnlib",
        ],
    ];
    let mut transcript = String::new();
    for args in runs {
        let run = rvn(args);
        let shown: Vec<&str> = args
            .iter()
            .map(|a| if *a == out { "OUT.rvnlib" } else { a })
            .collect();
        transcript.push_str(&format!(
            "$ irkit rvn {}\n{}exit {}\n\n",
            shown.join(" "),
            text(&run.stderr),
            run.status.code().unwrap_or(-1)
        ));
    }
    for needle in ["{ ", "Some(", "Local("] {
        assert!(!transcript.contains(needle), "{needle}: {transcript}");
    }
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/rvn-diagnostics.txt");
    golden::assert_text(&golden, &transcript, "irkit rvn diagnostics");
    let _ = std::fs::remove_dir_all(&dir);
}
