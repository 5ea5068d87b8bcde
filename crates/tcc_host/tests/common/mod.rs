//! Test programs for the host: small hand-written artifacts covering every
//! durable operation and both join kinds (hashes computed here).
#![allow(dead_code)]

use serde_json::{Value as J, json};

/// Builds an artifact from function bodies `(name, param_count, local_count, instructions)`.
pub fn artifact(funcs: &[(&str, u32, u32, J)]) -> Vec<u8> {
    let functions: Vec<J> = funcs
        .iter()
        .enumerate()
        .map(|(i, (name, params, locals, ins))| {
            let n = ins.as_array().map(Vec::len).unwrap_or(0);
            json!({"id": i, "name": name, "param_count": params, "local_count": locals,
                   "instructions": ins, "spans": vec![J::Null; n]})
        })
        .collect();
    let a = json!({
        "envelope": {
            "artifact_hash": "x", "engine_format_version": 1, "frontend_id": "irkit-tests",
            "frontend_version": "1", "language_semantics_version": "ts.subset.v1",
            "required_engine_features": ["ts.control_flow", "durable.effect", "durable.sleep",
                "durable.wait_for_event", "durable.invoke", "durable.concurrent_group", "ts.exceptions"],
            "required_host_capabilities": ["host.persist_checkpoint", "host.effect", "host.timer",
                "host.event", "host.child"],
            "runtime_modules": []
        },
        "program": {"entry": 0, "functions": functions}
    });
    let mut art = tcc_ir::decode_artifact(a.to_string().as_bytes()).expect("test artifact decodes");
    art.envelope.artifact_hash = tcc_ir::compute_hash(&art);
    tcc_ir::encode_artifact(&art)
}

fn s(v: &str) -> J {
    json!({"op": "LoadConst", "value": {"t": "string", "v": v}})
}
fn n(v: f64) -> J {
    json!({"op": "LoadConst", "value": {"t": "number", "v": v}})
}
fn op(o: &str) -> J {
    json!({"op": o})
}

/// Two effects, one with input: returns `[charge result, ship result]`.
pub fn effects() -> Vec<u8> {
    let ins = json!([
        op("NewObject"), n(42.0), {"op": "SetProp", "key": "amount"}, s("charge"),
        {"op": "Effect", "has_input": true}, {"op": "StoreLocal", "local": 0},
        s("ship"), op("Effect"), {"op": "StoreLocal", "local": 1},
        op("NewArray"), {"op": "LoadLocal", "local": 0}, op("ArrayPush"),
        {"op": "LoadLocal", "local": 1}, op("ArrayPush"), op("Return")
    ]);
    artifact(&[("run", 0, 2, ins)])
}

/// Effect, event `approved`, 30 ms sleep, Invoke `worker` with the payload.
pub fn flow() -> Vec<u8> {
    let ins = json!([
        op("NewObject"), n(7.0), {"op": "SetProp", "key": "n"}, s("prepare"),
        {"op": "Effect", "has_input": true}, {"op": "StoreLocal", "local": 0},
        s("approved"), op("WaitForEvent"), {"op": "StoreLocal", "local": 1},
        n(30.0), op("Sleep"), op("Pop"),
        {"op": "LoadLocal", "local": 1}, s("worker"), {"op": "Invoke", "arg_count": 1},
        {"op": "StoreLocal", "local": 2},
        op("NewArray"), {"op": "LoadLocal", "local": 0}, op("ArrayPush"),
        {"op": "LoadLocal", "local": 1}, op("ArrayPush"),
        {"op": "LoadLocal", "local": 2}, op("ArrayPush"), op("Return")
    ]);
    artifact(&[("run", 0, 3, ins)])
}

/// The child of [`flow`]: one effect on its argument.
pub fn worker() -> Vec<u8> {
    let ins = json!([
        {"op": "LoadLocal", "local": 0}, s("work"), {"op": "Effect", "has_input": true}, op("Return")
    ]);
    artifact(&[("work", 1, 1, ins)])
}

/// JoinAll over an effect, a 20 ms timer and event `go`.
pub fn join_all() -> Vec<u8> {
    let ins = json!([
        {"op": "Fork", "count": 3, "join_pc": 7},
        s("a"), op("Effect"), n(20.0), op("Sleep"), s("go"), op("WaitForEvent"),
        op("JoinAll"), op("Return")
    ]);
    artifact(&[("run", 0, 0, ins)])
}

/// JoinAny over a 60 s timer and a 20 ms timer (the short one wins).
pub fn join_any() -> Vec<u8> {
    let ins = json!([
        {"op": "Fork", "count": 2, "join_pc": 5},
        n(60000.0), op("Sleep"), n(20.0), op("Sleep"), op("JoinAny"), op("Return")
    ]);
    artifact(&[("run", 0, 0, ins)])
}

/// A failing effect caught by try/catch: returns the failure message.
pub fn caught() -> Vec<u8> {
    let ins = json!([
        {"op": "PushTry", "catch": 5, "finally": null},
        s("fail.x"), op("Effect"), op("PopTry"), op("Return"), op("Return")
    ]);
    artifact(&[("run", 0, 0, ins)])
}

/// Waits for event `never` (for cancellation).
pub fn waiter() -> Vec<u8> {
    let ins = json!([s("never"), op("WaitForEvent"), op("Return")]);
    artifact(&[("run", 0, 0, ins)])
}

/// A loop of `n` effects with distinct keys is not expressible without
/// `lang.compute`; this is a chain of `k` effects (keys `s0..`), for benchmarks.
pub fn chain(k: usize) -> Vec<u8> {
    let mut ins = Vec::new();
    for i in 0..k {
        ins.push(s(&format!("s{i}")));
        ins.push(op("Effect"));
        ins.push(op("Pop"));
    }
    ins.push(n(1.0));
    ins.push(op("Return"));
    artifact(&[("run", 0, 0, J::Array(ins))])
}
