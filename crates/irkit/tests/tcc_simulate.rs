//! `irkit tcc simulate`: the order saga against scripted answers (sequences
//! per key, failures, an event that never arrives, timers skipped), and
//! arbitrary scripts: every one runs or is refused with exit 2, never a
//! crash.

use proptest::prelude::*;
use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const IRKIT: &str = env!("CARGO_BIN_EXE_irkit");

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/tcc/src")
        .join(name)
}

/// Runs `simulate` on `workflow` with `script`; (exit code, report or stderr).
fn simulate(workflow: &Path, args: &str, script: &J) -> (i32, String) {
    let path = std::env::temp_dir().join(tcc_host::random_id("script-"));
    std::fs::write(&path, script.to_string()).unwrap();
    let out = Command::new(IRKIT)
        .args(["tcc", "simulate"])
        .arg(workflow)
        .args(["--args", args, "--script"])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let text = if out.status.success() {
        out.stdout
    } else {
        out.stderr
    };
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&text).into_owned(),
    )
}

fn report(workflow: &Path, args: &str, script: &J) -> J {
    let (code, text) = simulate(workflow, args, script);
    assert_eq!(code, 0, "{text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_saga_runs_against_scripted_answers() {
    let saga = example("order_saga.py");
    let r = report(
        &saga,
        r#"[{"id": "o-1"}]"#,
        &json!({"effects": {"*": {"result": true}}}),
    );
    assert_eq!(r["status"], "completed");
    assert_eq!(r["result"]["status"], "shipped");
    let keys: Vec<&str> = r["effects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["inventory.reserve", "payment.charge", "shipping.ship"]
    );
    assert_eq!(
        r["effects"][1]["idempotency_key"],
        "simulated:payment.charge"
    );

    // A sequence: the first call of shipping.ship fails; compensation runs.
    let r = report(
        &saga,
        r#"[{"id": "o-2"}]"#,
        &json!({"effects": {"shipping.ship": [{"error": "no courier"}], "*": {"result": null}}}),
    );
    assert_eq!(r["result"]["undone"], json!(["refund", "release"]));
    assert_eq!(r["effects"][2]["error"], "no courier");
    // A sequence that runs out is an error (exit 2) naming the key.
    let (code, text) = simulate(
        &saga,
        r#"[{"id": "o-3"}]"#,
        &json!({"effects": {"payment.charge": [], "*": {"result": 1}}}),
    );
    assert_eq!(code, 2);
    assert!(text.contains("payment.charge"), "{text}");
    // No answer at all for a key.
    let (code, text) = simulate(&saga, r#"[{"id": "o-4"}]"#, &json!({"effects": {}}));
    assert_eq!(code, 2);
    assert!(
        text.contains("no answer for effect \"inventory.reserve\""),
        "{text}"
    );
}

#[test]
fn events_never_arrive_and_timers_are_skipped() {
    let approval = example("approval.py");
    let r = report(
        &approval,
        r#"["r-1"]"#,
        &json!({"effects": {"*": {"result": null}}, "events": {"approval.decision": "approve"}}),
    );
    assert_eq!(r["result"]["outcome"], "granted");
    assert_eq!(r["timers_skipped"], 0);
    let r = report(
        &approval,
        r#"["r-2"]"#,
        &json!({"effects": {"*": {"result": null}}}),
    );
    assert_eq!(r["result"]["outcome"], "escalated");
    assert_eq!(r["timers_skipped"], 1);
    let dir = std::env::temp_dir().join(tcc_host::random_id("sim-"));
    std::fs::create_dir_all(&dir).unwrap();
    let wf = dir.join("twice.py");
    std::fs::write(
        &wf,
        "from tcc_engine.primitives import wait_for_event, program\n\n@program\nasync def run():\n    a = await wait_for_event('go')\n    b = await wait_for_event('go')\n    return [a, b]\n",
    )
    .unwrap();
    let r = report(&wf, "[]", &json!({"events": {"go": [1]}}));
    assert_eq!(
        (r["status"].as_str(), &r["waiting_for"]),
        (Some("suspended"), &json!(["go"]))
    );
    let r = report(&wf, "[]", &json!({"events": {"go": [1, 2]}}));
    assert_eq!(r["result"], json!([1, 2]));
    let _ = std::fs::remove_dir_all(&dir);
}

fn arbitrary_json() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::from),
        (-5i64..5).prop_map(J::from),
        "[a-z.*]{0,4}".prop_map(J::from),
        Just(json!({"result": 1})),
        Just(json!({"error": "x"})),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("effects".to_string()),
                    Just("events".to_string()),
                    "[a-z.*]{0,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn arbitrary_scripts_run_or_are_refused(script in arbitrary_json()) {
        let (code, text) = simulate(&example("approval.py"), r#"["r"]"#, &script);
        prop_assert!(code == 0 || code == 2, "exit {code}: {text}");
        if code == 0 {
            let r: J = serde_json::from_str(&text).unwrap();
            prop_assert!(r["status"].is_string());
        }
    }
}
