//! Differential test against the reference Python frontend (PyPI
//! `tcc-engine` 26.10.4, installed by scripts/install-tcc-reference.sh):
//! every Python test program is compiled by both frontends, both artifacts
//! run on irkit's engine with the same inputs, and the outcomes (result or
//! failure) and effect logs must agree, except for the cases listed in
//! `KNOWN` with the reason the reference is wrong.
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

fn header(src: &str, key: &str) -> Option<J> {
    let prefix = format!("# {key}: ");
    src.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|t| serde_json::from_str(t).ok())
}

fn pairs(v: Option<J>) -> Vec<(String, J)> {
    v.and_then(|j| j.as_object().cloned())
        .map(|o| o.into_iter().collect())
        .unwrap_or_default()
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
    for c in cases() {
        let ours = compile(&c.src, &c.name, Language::Python)
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let ours = run_artifact(&tcc_ir::encode_artifact(&ours), &c);
        let reference = match reference_compile(&py, &c.src, &c.name) {
            Ok(bytes) => bytes,
            Err(why) => {
                report.push(format!("{}: reference refuses ({why})", c.name));
                continue;
            }
        };
        let theirs = run_artifact(&reference, &c);
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
    eprintln!("{compared} programs agree\n{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared >= 8, "too few programs compared: {report:?}");
}
