//! `irkit tcc run` and `irkit tcc step` end to end.

use std::path::PathBuf;

mod common;
use common::irkit;

fn example(name: &str) -> String {
    common::repo_file(&format!("examples/tcc/run/{name}"))
}

fn scratch(name: &str, contents: &str) -> PathBuf {
    common::scratch("tcc-run", name, contents)
}

#[test]
fn run_prints_requests_and_the_result() {
    let out = irkit(&[
        "tcc",
        "run",
        &example("approval.json"),
        "--effects",
        &example("approval.effects.json"),
        "--events",
        &example("approval.events.json"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("-> run_effect \"charge\""), "{text}");
    assert!(
        text.contains("-> register_wait \"approved\" wait_id \"run:approved::7\""),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with(r#"completed: {"approval":"ok","result":42}"#),
        "{text}"
    );
}

#[test]
fn run_json_prints_one_protocol_message_per_line_outcome_last() {
    let out = irkit(&[
        "tcc",
        "run",
        &example("fail-fast.json"),
        "--effects",
        &example("fail-fast.effects.json"),
        "--restore",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.iter().all(|m| m["host_protocol_version"] == 1));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "completed");
    assert_eq!(last["result"]["v"], "service unavailable");
}

#[test]
fn run_with_args_and_engine_errors() {
    let out = irkit(&[
        "tcc",
        "run",
        &example("compute-loop.json"),
        "--args",
        r#"[{"t":"number","v":100}]"#,
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("completed: 197"));
    // A string argument makes `Lt` fail: a fatal engine error, exit 1 with a code.
    let out = irkit(&[
        "tcc",
        "run",
        &example("compute-loop.json"),
        "--args",
        r#"[{"t":"string","v":"x"}]"#,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["code"], "TCC-R001");
    assert_eq!(d["kind"], "fatal");
    // Missing effect configuration is a host error, not a crash.
    let out = irkit(&["tcc", "run", &example("approval.json")]);
    assert_eq!(out.status.code(), Some(1));
    // Bad --args is a usage error.
    assert_eq!(
        irkit(&["tcc", "run", &example("compute-loop.json"), "--args", "{"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn step_drives_an_execution_by_hand() {
    let dir = std::env::temp_dir().join(format!("irkit-tcc-step-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c0 = dir.join("c0.json");
    let out = irkit(&[
        "tcc",
        "step",
        &example("approval.json"),
        "-o",
        c0.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("run_effect"));
    let responses = scratch(
        "r1.json",
        r#"[{"host_protocol_version":1,"type":"effect_result","value":{"t":"number","v":7}},
            {"host_protocol_version":1,"type":"event_payload","value":{"t":"string","v":"yes"}},
            {"host_protocol_version":1,"type":"timer_fired"}]"#,
    );
    let c1 = dir.join("c1.json");
    let out = irkit(&[
        "tcc",
        "step",
        &example("approval.json"),
        c0.to_str().unwrap(),
        "--responses",
        responses.to_str().unwrap(),
        "-o",
        c1.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&std::fs::read(&c1).unwrap()).unwrap();
    assert_eq!(c["status"], "completed");
    assert_eq!(
        c["result"]["t"], "ref",
        "collections stay heap refs in a continuation"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(r#"completed: {"t":"object","v":{"approval":{"t":"string","v":"yes"},"result":{"t":"number","v":7}}}"#));
    // A continuation of another artifact is refused (pinning).
    let out = irkit(&[
        "tcc",
        "step",
        &example("compute-loop.json"),
        c1.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TCC-R021"));
}

#[test]
fn duplicate_json_keys_are_refused() {
    // In --args (usage error) and in a continuation handed to `step`
    // (invalid input, TCC-R020).
    let out = irkit(&[
        "tcc",
        "run",
        &example("compute-loop.json"),
        "--args",
        r#"[{"t":"number","v":3,"t":"number"}]"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("duplicate key \"t\""), "{err}");

    let base_path = scratch("dup-base.json", "");
    let first = irkit(&[
        "tcc",
        "step",
        &example("approval.json"),
        "-o",
        base_path.to_str().unwrap(),
    ]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let base = std::fs::read_to_string(&base_path).unwrap();
    let doubled = base.replacen("{\"artifact_hash\"", "{\"revision\":0,\"artifact_hash\"", 1);
    assert_ne!(doubled, base);
    let cont = scratch("dup-cont.json", &doubled);
    let out = irkit(&[
        "tcc",
        "step",
        &example("approval.json"),
        cont.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("TCC-R020") && text.contains("duplicate key"),
        "{text}"
    );
}
