//! Small hand-written artifacts of the issue 42 tests (`hardening.rs`
//! here, `tcc_hardening.rs` of the CLI): Python's deep equality after an
//! effect, a one-effect program, and a program returning its argument
//! and an event's payload.
#![allow(dead_code)]

use serde_json::{Value as J, json};

fn op(o: &str) -> J {
    json!({"op": o})
}
fn num(n: f64) -> J {
    json!({"op": "LoadConst", "value": {"t": "number", "v": n}})
}
fn text(s: &str) -> J {
    json!({"op": "LoadConst", "value": {"t": "string", "v": s}})
}
fn local(o: &str, i: u32) -> J {
    json!({"op": o, "local": i})
}

/// A one-function artifact in `lang`, with `locals` locals.
pub fn artifact(lang: &str, locals: u32, ins: J) -> Vec<u8> {
    artifact_with(lang, 0, locals, ins, &["durable.effect"], &["host.effect"])
}

/// A one-function artifact in `lang` with `params` parameters and
/// `locals` locals (parameters included), requiring `features` and
/// `capabilities` beside the base ones.
pub fn artifact_with(
    lang: &str,
    params: u32,
    locals: u32,
    ins: J,
    features: &[&str],
    capabilities: &[&str],
) -> Vec<u8> {
    let n = ins.as_array().map(Vec::len).unwrap_or(0);
    let mut required = vec!["ts.control_flow", "lang.compute"];
    required.extend_from_slice(features);
    let mut caps = vec!["host.persist_checkpoint"];
    caps.extend_from_slice(capabilities);
    let a = json!({
        "envelope": {
            "artifact_hash": "x", "engine_format_version": 1, "frontend_id": "irkit-tests",
            "frontend_version": "1", "language_semantics_version": lang,
            "required_engine_features": required,
            "required_host_capabilities": caps,
            "runtime_modules": []
        },
        "program": {"entry": 0, "functions": [{"id": 0, "name": "run", "param_count": params,
            "local_count": locals, "instructions": ins, "spans": vec![J::Null; n]}]}
    });
    let mut art = tcc_ir::decode_artifact(a.to_string().as_bytes()).expect("test artifact decodes");
    art.envelope.artifact_hash = tcc_ir::compute_hash(&art);
    tcc_ir::encode_artifact(&art)
}

/// `x = []; y = []; for i in range(n): x = [x]; y = [y]; return x == y`
/// (Python), after an effect `first` (so that a node can be stopped
/// before the comparison).
pub fn nested_equal(n: f64) -> Vec<u8> {
    let ins = json!([
        text("first"), op("Effect"), op("Pop"),
        op("NewArray"), local("StoreLocal", 0), op("NewArray"), local("StoreLocal", 1),
        num(0.0), local("StoreLocal", 2),
        // 9: loop head
        local("LoadLocal", 2), num(n), op("Lt"), {"op": "JumpIfFalse", "target": 26},
        op("NewArray"), local("LoadLocal", 0), op("ArrayPush"), local("StoreLocal", 0),
        op("NewArray"), local("LoadLocal", 1), op("ArrayPush"), local("StoreLocal", 1),
        local("LoadLocal", 2), num(1.0), op("Add"), local("StoreLocal", 2),
        {"op": "Jump", "target": 9},
        // 26
        local("LoadLocal", 0), local("LoadLocal", 1), op("StrictEq"), op("Return")
    ]);
    artifact("py.subset.v1", 3, ins)
}

/// One effect with key `key`, returning its result.
pub fn one_effect(key: &str) -> Vec<u8> {
    artifact(
        "ts.subset.v1",
        0,
        json!([text(key), op("Effect"), op("Return")]),
    )
}

/// `run(a)`: waits for event `name` and returns `[a, payload]`.
pub fn arg_and_event(name: &str) -> Vec<u8> {
    artifact_with(
        "ts.subset.v1",
        1,
        1,
        json!([
            op("NewArray"),
            local("LoadLocal", 0),
            op("ArrayPush"),
            text(name),
            op("WaitForEvent"),
            op("ArrayPush"),
            op("Return")
        ]),
        &["durable.wait_for_event"],
        &["host.event"],
    )
}
