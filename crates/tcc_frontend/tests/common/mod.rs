//! Shared helpers: compile, run on the local host, compare results.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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

/// The programs with extension `ext` of `tests/corpus/{lang}/{kind}`, sorted.
pub fn corpus(lang: &str, kind: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(lang)
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// The text of a corpus program's header line `{comment} {key}: …`.
pub fn header_text<'s>(src: &'s str, comment: &str, key: &str) -> Option<&'s str> {
    let prefix = format!("{comment} {key}: ");
    src.lines().find_map(|l| l.strip_prefix(&prefix))
}

/// A corpus program's JSON header `{comment} {key}: VALUE`.
pub fn header(src: &str, comment: &str, key: &str) -> Option<J> {
    header_text(src, comment, key)
        .map(|t| serde_json::from_str(t).unwrap_or_else(|e| panic!("bad {key} header: {e}")))
}

/// A JSON object header as (name, value) pairs (empty when absent).
pub fn pairs(v: Option<J>) -> Vec<(String, J)> {
    v.and_then(|j| j.as_object().cloned())
        .map(|o| o.into_iter().collect())
        .unwrap_or_default()
}

/// Compiles and runs `src` with these effect answers and event payloads
/// (plain JSON; `{"error": m}` fails the effect).
pub fn observe(
    src: &str,
    name: &str,
    lang: Language,
    args: &J,
    effects: &[(String, J)],
    events: &[(String, J)],
) -> Observed {
    let e: Vec<(&str, J)> = effects
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let ev: Vec<(&str, J)> = events
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    run(
        program(src, name, lang),
        &host(&e, &ev),
        args.as_array().expect("args is an array"),
    )
}

/// Runs a corpus program with its `args`, `effects` and `events` headers.
pub fn observe_corpus(src: &str, name: &str, lang: Language, comment: &str) -> Observed {
    observe(
        src,
        name,
        lang,
        &header(src, comment, "args").unwrap_or(json!([])),
        &pairs(header(src, comment, "effects")),
        &pairs(header(src, comment, "events")),
    )
}

/// Every program of the invalid corpus `tests/corpus/{lang}/invalid` (at
/// least `min`) is refused with the code and `line:col` of its `.expect`
/// file; each one's name and source are passed to `also`.
pub fn check_invalid_corpus(
    lang: &str,
    ext: &str,
    language: Language,
    min: usize,
    mut also: impl FnMut(&str, &str),
) {
    let files = corpus(lang, "invalid", ext);
    assert!(files.len() >= min, "{}", files.len());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let expect = std::fs::read_to_string(path.with_extension("expect")).unwrap();
        let (code, at) = expect.trim().split_once(' ').unwrap();
        let err = compile(&src, &name, language).expect_err(&name);
        assert_eq!(err.code.as_str(), code, "{name}: {err}");
        assert_eq!(format!("{}:{}", err.line, err.column), at, "{name}: {err}");
        also(&name, &src);
    }
}

/// `base` with `junk` inserted at byte `at` (clamped, moved back to a
/// character boundary).
pub fn mutate(base: &str, at: usize, junk: &str) -> String {
    let mut at = at.min(base.len());
    while !base.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}{}{}", &base[..at], junk, &base[at..])
}

/// The text of a valid corpus program (for mutation tests).
pub fn corpus_file(lang: &str, name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus")
            .join(lang)
            .join("valid")
            .join(name),
    )
    .expect("corpus file")
}

/// `Err` when compiling `src` reports a frontend defect (`TCC-F099`)
/// rather than compiling or refusing it with a code.
pub fn no_defect(src: &str, file: &str, lang: Language) -> Result<(), String> {
    match compile(src, file, lang) {
        Err(e) if e.code.as_str() == "TCC-F099" => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// Whether a run agrees with a reference interpreter (CPython, Node.js):
/// the same result, or both fail.
pub fn agrees(reference: &Result<J, String>, o: &Observed) -> Result<(), String> {
    match reference {
        Ok(v) if normalize(&o.outcome["result"]) == normalize(v) => Ok(()),
        Err(_) if o.outcome["type"] == "failed" => Ok(()),
        _ => Err(format!("reference {reference:?}, irkit {:?}", o.outcome)),
    }
}
