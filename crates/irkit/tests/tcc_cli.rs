//! `irkit tcc …` end to end: exit codes, output and diagnostics.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::irkit;

fn example(name: &str) -> String {
    common::repo_file(&format!("examples/tcc/{name}"))
}

/// A scratch file unique to this test process and name.
fn scratch(name: &str, contents: &str) -> PathBuf {
    common::scratch("tcc-cli", name, contents)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn validate_accepts_every_example() {
    for name in [
        "first-example.json",
        "control.json",
        "locals.json",
        "durable.json",
        "concurrency.json",
        "exceptions.json",
        "compute.json",
    ] {
        let out = irkit(&["tcc", "validate", &example(name)]);
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(": ok ("));
    }
}

#[test]
fn validate_reports_encoding_errors_with_position() {
    let text = std::fs::read_to_string(example("first-example.json"))
        .unwrap()
        .replace("\"op\":\"Return\"", "\"op\":\"Retrun\"");
    let path = scratch("bad-op.json", &text);
    let line = text.lines().position(|l| l.contains("Retrun")).unwrap() + 1;
    let column = text
        .lines()
        .nth(line - 1)
        .unwrap()
        .find("\"Retrun\"")
        .unwrap()
        + 1;
    let out = irkit(&["tcc", "validate", s(&path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let d = &json_lines(&out)[0];
    assert_eq!(d["code"], "TCC-E001");
    assert_eq!(d["kind"], "encoding");
    assert!(d["message"].as_str().unwrap().contains("Retrun"));
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("instructions[5].op")
    );
    assert_eq!(d["line"], line as u64);
    assert_eq!(d["column"], column as u64);

    let human = irkit(&["tcc", "validate", s(&path)]);
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(
        stderr.starts_with("error[TCC-E001]: unknown op \"Retrun\""),
        "{stderr}"
    );
    assert!(stderr.contains(&format!(":{line}:{column}")), "{stderr}");
}

#[test]
fn validate_reports_every_rule_violation_at_its_instruction() {
    let text = std::fs::read_to_string(example("control.json"))
        .unwrap()
        .replace(
            "{\"op\": \"Jump\", \"target\": 7}",
            "{\"op\": \"Jump\", \"target\": 70}",
        )
        .replace(
            "{\"local\": 1, \"op\": \"StoreLocal\"}",
            "{\"local\": 9, \"op\": \"StoreLocal\"}",
        )
        .replace("\"frontend_id\": \"typescript\"", "\"frontend_id\": \"\"");
    let path = scratch("bad-rules.json", &text);
    let out = irkit(&["tcc", "validate", s(&path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let diags = json_lines(&out);
    let codes: Vec<&str> = diags.iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["TCC-V003", "TCC-V013", "TCC-V012", "TCC-V013"]);
    // The jump diagnostic points at the Jump instruction's line.
    let jump_line = text
        .lines()
        .position(|l| l.contains("\"target\": 70"))
        .unwrap()
        + 1;
    assert_eq!(diags[2]["line"], jump_line as u64);
    assert!(
        diags[2]["message"]
            .as_str()
            .unwrap()
            .contains("function 0 pc 4")
    );
}

#[test]
fn validate_checks_features_against_the_given_engine_and_host() {
    let durable = example("durable.json");
    let out = irkit(&[
        "tcc",
        "validate",
        &durable,
        "--features",
        "ts.control_flow,durable.effect",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let codes: Vec<String> = json_lines(&out)
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(codes, ["TCC-V006", "TCC-V006", "TCC-V006"]);
    let out = irkit(&[
        "tcc",
        "validate",
        &durable,
        "--capabilities",
        "",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(json_lines(&out).iter().all(|d| d["code"] == "TCC-V008"));
}

#[test]
fn hash_prints_and_checks() {
    let out = irkit(&["tcc", "hash", &example("first-example.json")]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "31b4bbdf7abb7bf3c6e6c0cae4f97370e400ad2db44f7163a19745110b2b02d7\n"
    );
    let out = irkit(&["tcc", "hash", "--check", &example("first-example.json")]);
    assert_eq!(out.status.code(), Some(0));

    let tampered = scratch(
        "tampered.json",
        &std::fs::read_to_string(example("first-example.json"))
            .unwrap()
            .replace("\"greet\"", "\"greet!\""),
    );
    let out = irkit(&["tcc", "hash", s(&tampered)]);
    assert_eq!(out.status.code(), Some(0));
    let out = irkit(&["tcc", "hash", "--check", s(&tampered), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let d = &json_lines(&out)[0];
    assert_eq!(d["code"], "TCC-H001");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(31))
    );
}

#[test]
fn canon_rehash_produces_a_checked_canonical_file() {
    let out_path = std::env::temp_dir()
        .join(format!("irkit-tcc-cli-{}", std::process::id()))
        .join("canon.json");
    std::fs::create_dir_all(out_path.parent().unwrap()).unwrap();
    let tampered = scratch(
        "to-canon.json",
        &std::fs::read_to_string(example("locals.json"))
            .unwrap()
            .replace("\"main\"", "\"main2\""),
    );
    let out = irkit(&["tcc", "canon", "--rehash", s(&tampered), "-o", s(&out_path)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let written = std::fs::read_to_string(&out_path).unwrap();
    assert!(written.ends_with("}}\n") && !written.contains(": "));
    let out = irkit(&["tcc", "hash", "--check", s(&out_path)]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn print_lists_functions_pcs_operands_and_spans() {
    let out = irkit(&["tcc", "print", &example("control.json")]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fn 0 run (params 1, locals 2, 14 instructions) [entry]"),
        "{text}"
    );
    assert!(
        text.contains("fn 7 label (params 1, locals 1, 2 instructions)"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("1  JumpIfFalse   -> 5")
                && l.ends_with("control.ts:3:3-3:14")),
        "{text}"
    );
    assert!(text.contains("Call          fn 7 (label) argc 1"), "{text}");
}

#[test]
fn standard_input_is_read_with_dash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "hash", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(example("first-example.json")).unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("31b4bbdf"));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = irkit(&["tcc", "validate", "/nonexistent/artifact.json"]);
    assert_eq!(out.status.code(), Some(2));
    let out = irkit(&["tcc", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    let out = irkit(&["tcc", "validate"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `irkit tcc print` output is compared with reviewed golden listings.
#[test]
fn print_matches_golden_listings() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for (artifact, listing) in [
        ("first-example.json", "tcc-first-example.print.txt"),
        ("compute.json", "tcc-compute.print.txt"),
    ] {
        let out = irkit(&["tcc", "print", &example(artifact)]);
        assert_eq!(out.status.code(), Some(0));
        let expected = std::fs::read_to_string(golden.join(listing)).unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{listing}");
    }
}

#[test]
fn options_may_precede_the_file() {
    let out = irkit(&[
        "tcc",
        "validate",
        "--features",
        "ts.control_flow",
        "--format",
        "json",
        &example("control.json"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn print_reports_decode_errors_like_validate() {
    let path = scratch("print-bad.json", "{\"envelope\": 1}");
    let out = irkit(&["tcc", "print", s(&path), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let d = &json_lines(&out)[0];
    assert_eq!(d["code"], "TCC-E001");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(1), Some(14))
    );
}
