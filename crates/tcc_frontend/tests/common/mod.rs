//! Shared helpers: compile, run on the local host, compare results.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value as J, json};
use tcc_engine::local_host::EffectAnswer;
use tcc_engine::{LocalHost, Program};
use tcc_frontend::{Language, compile};
use tcc_ir::FeatureSet;

/// A run's observable outcome: terminal outcome (type + result/message) and effect log.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub outcome: J,
    pub effects: Vec<J>,
}

pub fn program(src: &str, file: &str, lang: Language) -> Arc<Program> {
    let artifact = compile(src, file, lang).unwrap_or_else(|e| panic!("{file}: {e}"));
    Arc::new(Program::new(artifact, &FeatureSet::all_host_capabilities()).expect("engine accepts"))
}

pub fn host(effects: &[(&str, J)], events: &[(&str, J)]) -> LocalHost {
    let mut h = LocalHost::new();
    for (k, v) in effects {
        let answer = match v.get("error").and_then(J::as_str) {
            Some(m) => EffectAnswer::Fail(m.to_string()),
            None => EffectAnswer::Result(tag(v)),
        };
        h.effects.insert(k.to_string(), answer);
    }
    for (k, v) in events {
        h.events.insert(k.to_string(), tag(v));
    }
    h
}

pub fn run(p: Arc<Program>, h: &LocalHost, args: &[J]) -> Observed {
    let tagged: Vec<J> = args.iter().map(tag).collect();
    match h.run(p, "exec", &tagged) {
        Ok(r) => {
            let mut o = r.outcome.clone();
            if let Some(obj) = o.as_object_mut() {
                obj.remove("host_protocol_version");
                if let Some(v) = obj.remove("result") {
                    obj.insert("result".into(), untag(&v));
                }
            }
            Observed {
                outcome: o,
                effects: r.effect_log.iter().map(|e| e["key"].clone()).collect(),
            }
        }
        Err(e) => Observed {
            outcome: json!({"type": "error", "message": e.to_string()}),
            effects: Vec::new(),
        },
    }
}

pub fn run_src(src: &str, file: &str, lang: Language, args: &[J]) -> Observed {
    run(program(src, file, lang), &host(&[], &[]), args)
}

/// Plain JSON → tagged value.
pub fn tag(v: &J) -> J {
    match v {
        J::Null => json!({"t": "null"}),
        J::Bool(b) => json!({"t": "bool", "v": b}),
        J::Number(n) => json!({"t": "number", "v": n}),
        J::String(s) => json!({"t": "string", "v": s}),
        J::Array(a) => json!({"t": "array", "v": a.iter().map(tag).collect::<Vec<_>>()}),
        J::Object(o) => {
            let m: BTreeMap<String, J> = o.iter().map(|(k, v)| (k.clone(), tag(v))).collect();
            json!({"t": "object", "v": m})
        }
    }
}

/// Tagged value → plain JSON (`undefined` becomes the string "<undefined>").
pub fn untag(v: &J) -> J {
    match v["t"].as_str() {
        Some("undefined") => json!("<undefined>"),
        Some("null") => J::Null,
        Some("bool") | Some("string") => v["v"].clone(),
        Some("number") => match &v["v"] {
            J::String(s) => json!(format!("<{s}>")),
            n => n.as_f64().map(|f| json!(f)).unwrap_or(J::Null),
        },
        Some("array") => J::Array(
            v["v"]
                .as_array()
                .map(|a| a.iter().map(untag).collect())
                .unwrap_or_default(),
        ),
        Some("object") => J::Object(
            v["v"]
                .as_object()
                .map(|o| o.iter().map(|(k, x)| (k.clone(), untag(x))).collect())
                .unwrap_or_default(),
        ),
        _ => v.clone(),
    }
}

pub fn completed(v: J) -> J {
    json!({"type": "completed", "result": normalize(&v)})
}

/// Numbers compared as f64 (CPython's ints and floats are one number type here).
pub fn normalize(v: &J) -> J {
    match v {
        J::Number(n) => json!(n.as_f64()),
        J::Array(a) => J::Array(a.iter().map(normalize).collect()),
        J::Object(o) => J::Object(o.iter().map(|(k, x)| (k.clone(), normalize(x))).collect()),
        other => other.clone(),
    }
}
