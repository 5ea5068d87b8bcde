//! Differential test against the reference Python frontend (PyPI
//! `tcc-engine` 26.10.4, installed by scripts/install-tcc-reference.sh):
//! every Python test program is compiled by both frontends, both artifacts
//! run on irkit's engine and on the reference engine with the same inputs,
//! and the outcomes (result or failure) and effect logs must agree, except
//! for the frontend cases listed in `KNOWN` with the reason the reference
//! is wrong.
//!
//! The interpreter comes from IRKIT_TCC_REFERENCE_PYTHON or
//! target/tcc-ref-venv/bin/python; without it the test is skipped with a
//! message, unless IRKIT_REQUIRE_REFERENCE is set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use common::*;
use serde_json::{Value as J, json};
use tcc_engine::Program;
use tcc_frontend::{Language, compile};
use tcc_ir::FeatureSet;

/// Programs where the reference frontend's artifact means something other
/// than the source (irkit is right), with the reason.
const KNOWN: &[(&str, &str)] = &[
    (
        "break_finally.py",
        "the reference neither pops the handler nor runs `finally` on `break` inside `try`",
    ),
    (
        "float17.py",
        "the reference writes number constants with 15 significant digits (0.30000000000000004 becomes 0.3)",
    ),
    (
        "finally_only.py",
        "the reference drops a catch-less `finally` on the normal path",
    ),
    (
        "logic.py",
        "the reference tests a collection held in a variable with the engine's truthiness (an empty list is true); CPython (checked in tests/python.rs) and irkit treat it as false",
    ),
    (
        "finally_return.py",
        "the reference does not run `finally` on `return` inside `try`",
    ),
];

/// Programs the reference engine (26.10.4) cannot run, whoever compiled them.
const KNOWN_ENGINE: &[(&str, &str)] = &[
    (
        "strings.py",
        "the reference engine's `Length` refuses strings (\"length requires a collection\")",
    ),
    (
        "collections.py",
        "the reference engine's `Length` refuses dicts and its `GetIndex` does not read dict keys",
    ),
    (
        "order_saga.py",
        "the reference engine's `GetIndex` does not read dict keys (`order[\"id\"]`)",
    ),
    (
        "dict_update.py",
        "the reference engine's `GetIndex` does not read dict keys (`d[\"k\"] + 1` fails with \"arithmetic requires numbers\")",
    ),
];

fn reference_python() -> Option<PathBuf> {
    let p = std::env::var_os("IRKIT_TCC_REFERENCE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tcc-ref-venv/bin/python")
        });
    p.exists().then_some(p)
}

/// The reference frontend's artifact, or its refusal message.
fn reference_compile(py: &Path, src: &str, file: &str) -> Result<Vec<u8>, String> {
    let driver = "import sys, tcc_engine\nsrc = sys.stdin.read()\ntry:\n    a = tcc_engine.compile(src, sys.argv[1])\nexcept Exception as e:\n    print('REFUSED', type(e).__name__, e)\n    sys.exit(3)\nsys.stdout.write(tcc_engine.artifact_json(a))\n";
    let mut child = Command::new(py)
        .arg("-c")
        .arg(driver)
        .arg(file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("reference python runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(src.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.code() == Some(3) {
        return Err(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    assert!(
        out.status.success(),
        "reference driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

/// Runs an artifact on the reference engine (its SQLite-backed host driver,
/// timers and waits delivered at once, one payload for every event):
/// (status, plain result, effect keys in order).
fn reference_run(py: &Path, artifact: &[u8], c: &Case) -> (String, J, Vec<String>) {
    let driver = r#"
import json, os, sys, tempfile
import tcc_engine.host as h
spec = json.loads(sys.stdin.read())
effects = spec["effects"]
log = []
def run_effect(key, _input):
    log.append(key)
    v = effects.get(key)
    if isinstance(v, dict) and "error" in v:
        return "__fail__"
    return v
def plain(v):
    t = v.get("t")
    if t in ("null", "undefined"): return None if t == "null" else "<undefined>"
    if t == "array": return [plain(x) for x in v["v"]]
    if t == "object": return {k: plain(x) for k, x in v["v"].items()}
    return v.get("v")
d = tempfile.mkdtemp()
r = h.start_execution(db_path=os.path.join(d, "ref.db"), artifact_json=spec["artifact"], program_args=spec["args"],
                      run_effect=run_effect, event_payload=spec["event"])
res = r.get("result")
print(json.dumps({"status": r["status"], "result": plain(res) if isinstance(res, dict) else res, "log": log}))
"#;
    let event = c.events.first().map(|(_, v)| v.clone()).unwrap_or(J::Null);
    let effects: serde_json::Map<String, J> = c.effects.iter().cloned().collect();
    let spec = json!({"artifact": String::from_utf8_lossy(artifact), "args": c.args, "effects": effects, "event": event});
    let mut child = Command::new(py)
        .arg("-c")
        .arg(driver)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("reference python runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let j: J = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| json!({"status": "error", "result": String::from_utf8_lossy(&out.stderr).to_string(), "log": []}));
    let log = j["log"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    (
        j["status"].as_str().unwrap_or("").to_string(),
        normalize(&j["result"]),
        log,
    )
}

fn header(src: &str, key: &str) -> Option<J> {
    common::header(src, "#", key)
}

struct Case {
    name: String,
    src: String,
    args: J,
    effects: Vec<(String, J)>,
    events: Vec<(String, J)>,
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let dir = root.join("tests/corpus/py/valid");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        out.push(Case {
            name: f.file_name().unwrap().to_string_lossy().into(),
            args: header(&src, "args").unwrap_or(json!([])),
            effects: pairs(header(&src, "effects")),
            events: pairs(header(&src, "events")),
            src,
        });
    }
    let ex = |name: &str, args: J, effects: J, events: J| {
        let src = std::fs::read_to_string(root.join("../../examples/tcc/src").join(name)).unwrap();
        Case {
            name: name.into(),
            src,
            args,
            effects: pairs(Some(effects)),
            events: pairs(Some(events)),
        }
    };
    out.push(ex("order_saga.py", json!([{"id": "o"}]), json!({"inventory.reserve": {}, "payment.charge": {"error": "declined"}, "inventory.release": {}}), json!({})));
    out.push(ex(
        "order_saga.py",
        json!([{"id": "o"}]),
        json!({"inventory.reserve": {}, "payment.charge": {}, "shipping.ship": {}}),
        json!({}),
    ));
    out.push(ex(
        "approval.py",
        json!(["r", 10]),
        json!({"approval.notify": {}, "request.grant": {}}),
        json!({"approval.decision": "approve"}),
    ));
    out.push(ex(
        "fanout.py",
        json!([]),
        json!({"quote.ups": 3, "quote.dhl": 2, "quote.fedex": null}),
        json!({}),
    ));
    out.push(ex(
        "label.py",
        json!(["x", 20]),
        json!({"label.print": {}}),
        json!({}),
    ));
    out
}

/// The artifact without `irkit.catchable_cancel` and
/// `irkit.catchable_child_failure` (re-hashed), if it requires them.
fn without_catchable_cancel(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut a = tcc_ir::decode_artifact(bytes).expect("artifact decodes");
    let features = &mut a.envelope.required_engine_features;
    let before = features.len();
    features.retain(|f| {
        f != tcc_ir::features::CATCHABLE_CANCEL && f != tcc_ir::features::CATCHABLE_CHILD_FAILURE
    });
    if features.len() == before {
        return None;
    }
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    Some(tcc_ir::encode_artifact(&a))
}

fn run_artifact(bytes: &[u8], c: &Case) -> Observed {
    let artifact = tcc_ir::decode_artifact(bytes).expect("artifact decodes");
    let p = Arc::new(
        Program::new(artifact, &FeatureSet::all_host_capabilities()).expect("engine accepts"),
    );
    let e: Vec<(&str, J)> = c
        .effects
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let ev: Vec<(&str, J)> = c
        .events
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    run(p, &host(&e, &ev), c.args.as_array().unwrap())
}

#[test]
fn python_frontends_agree_on_irkits_engine() {
    let Some(py) = reference_python() else {
        assert!(
            std::env::var_os("IRKIT_REQUIRE_REFERENCE").is_none(),
            "IRKIT_REQUIRE_REFERENCE is set but the reference interpreter is missing (run scripts/install-tcc-reference.sh)"
        );
        eprintln!(
            "skipped: reference Python frontend not installed (bash scripts/install-tcc-reference.sh)"
        );
        return;
    };
    let mut compared = 0;
    let mut report = Vec::new();
    let mut failures = Vec::new();
    let mut engines_agree = 0;
    for c in cases() {
        let ours = compile(&c.src, &c.name, Language::Python)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let ours_bytes = tcc_ir::encode_artifact(&ours);
        let ours = run_artifact(&ours_bytes, &c);
        let reference = match reference_compile(&py, &c.src, &c.name) {
            Ok(bytes) => bytes,
            Err(why) => {
                report.push(format!("{}: reference refuses ({why})", c.name));
                continue;
            }
        };
        let theirs = run_artifact(&reference, &c);
        // Both artifacts also run on the reference engine and give what they
        // give on irkit's engine.
        // The reference host's effect failures all carry the message "failed".
        let mut c_failed = Case {
            name: c.name.clone(),
            src: String::new(),
            args: c.args.clone(),
            effects: c.effects.clone(),
            events: c.events.clone(),
        };
        for (_, v) in c_failed.effects.iter_mut() {
            if v.get("error").is_some() {
                *v = json!({"error": "failed"});
            }
        }
        // irkit's artifact of a program that awaits inside a `try` requires
        // `irkit.catchable_cancel`: the reference engine must refuse it
        // (never cancel it without its handlers); without the feature (no
        // cancellation is sent here) it must run as on irkit's engine.
        let ours_bytes = match without_catchable_cancel(&ours_bytes) {
            Some(stripped) => {
                let (status, why, _) = reference_run(&py, &ours_bytes, &c);
                assert!(
                    status == "error" && why.to_string().contains("irkit.catchable_cancel"),
                    "{}: the reference engine ran an artifact requiring irkit.catchable_cancel: {status} {why}",
                    c.name
                );
                report.push(format!(
                    "{}: requires irkit.catchable_cancel, refused by the reference engine; compared without it",
                    c.name
                ));
                stripped
            }
            None => ours_bytes,
        };
        for (who, bytes) in [("irkit", &ours_bytes), ("reference", &reference)] {
            let on_irkit = &run_artifact(bytes, &c_failed);
            if let Some((_, why)) = KNOWN_ENGINE.iter().find(|(n, _)| *n == c.name) {
                report.push(format!(
                    "{}: not run on the reference engine ({why})",
                    c.name
                ));
                break;
            }
            let (status, result, log) = reference_run(&py, bytes, &c);
            let irkit_status = on_irkit.outcome["type"].as_str().unwrap_or("");
            let same = status == irkit_status
                && (status != "completed" || result == normalize(&on_irkit.outcome["result"]))
                && log.iter().map(|k| json!(k)).collect::<Vec<_>>() == on_irkit.effects;
            if same {
                engines_agree += 1;
            } else {
                failures.push(format!(
                    "{}: the {who} artifact gives different outcomes on the two engines\n  irkit engine:     {on_irkit:?}\n  reference engine: {status} {result} {log:?}",
                    c.name
                ));
            }
        }
        let known = KNOWN.iter().find(|(n, _)| *n == c.name);
        match known {
            Some((_, why)) => {
                assert_ne!(
                    ours, theirs,
                    "{}: listed as a reference defect but both agree",
                    c.name
                );
                report.push(format!("{}: differs as listed ({why})", c.name));
            }
            None if ours == theirs => compared += 1,
            None => failures.push(format!(
                "{}: frontends disagree\n  irkit:     {ours:?}\n  reference: {theirs:?}",
                c.name
            )),
        }
    }
    eprintln!(
        "{compared} programs agree; {engines_agree} artifact runs agree across the two engines\n{}",
        report.join("\n")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 8, "too few programs compared: {report:?}");
}
