//! Plain JSON ↔ TCC tagged values (`--args`, `--payload`, webhook bodies).

use serde_json::{Map, Value as J};

/// Deepest plain JSON nesting converted.
pub const MAX_DEPTH: usize = 100;

/// Converts plain JSON to a tagged value (`null`, `bool`, `number`,
/// `string`, `array`, `object`).
pub fn plain_to_tagged(j: &J) -> Result<J, String> {
    to_tagged(j, 0)
}

fn tag(t: &str, v: Option<J>) -> J {
    let mut m = Map::new();
    m.insert("t".into(), t.into());
    if let Some(v) = v {
        m.insert("v".into(), v);
    }
    J::Object(m)
}

fn to_tagged(j: &J, depth: usize) -> Result<J, String> {
    if depth > MAX_DEPTH {
        return Err(format!("JSON nested deeper than {MAX_DEPTH}"));
    }
    Ok(match j {
        J::Null => tag("null", None),
        J::Bool(b) => tag("bool", Some((*b).into())),
        J::Number(n) => {
            let f = n.as_f64().ok_or("number out of range")?;
            tag("number", Some(tcc_engine::json::number_json(f)))
        }
        J::String(s) => tag("string", Some(s.as_str().into())),
        J::Array(a) => tag(
            "array",
            Some(J::Array(
                a.iter()
                    .map(|x| to_tagged(x, depth + 1))
                    .collect::<Result<_, _>>()?,
            )),
        ),
        J::Object(o) => {
            let mut m = Map::new();
            for (k, v) in o {
                m.insert(k.clone(), to_tagged(v, depth + 1)?);
            }
            tag("object", Some(J::Object(m)))
        }
    })
}

/// Converts an inlined tagged value to plain JSON (`undefined` → `null`,
/// non-finite numbers → their string spelling).
pub fn tagged_to_plain(j: &J) -> J {
    let t = j.get("t").and_then(J::as_str).unwrap_or("");
    let v = j.get("v");
    match (t, v) {
        ("bool", Some(b)) => b.clone(),
        ("number", Some(n)) => n.clone(),
        ("string", Some(s)) => s.clone(),
        ("array", Some(J::Array(a))) => J::Array(a.iter().map(tagged_to_plain).collect()),
        ("object", Some(J::Object(o))) => J::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), tagged_to_plain(v)))
                .collect(),
        ),
        _ => J::Null,
    }
}

/// Parses `--args` text: a plain JSON array (each element converted), or a
/// single plain value (one argument).
pub fn parse_args(text: &str) -> Result<Vec<J>, String> {
    let j: J = serde_json::from_str(text).map_err(|e| format!("--args is not JSON: {e}"))?;
    match &j {
        J::Array(a) => a.iter().map(plain_to_tagged).collect(),
        other => Ok(vec![plain_to_tagged(other)?]),
    }
}

/// Checks that `j` is a well-formed inlined tagged value (as the engine
/// will absorb it), so a bad value is refused at the API instead of
/// failing the execution later.
pub fn check_tagged(j: &J) -> Result<(), String> {
    let mut heap = tcc_engine::Heap::default();
    tcc_engine::json::absorb(
        tcc_engine::json::ValueContext::Message,
        j,
        "$",
        &mut heap,
        &tcc_engine::Limits::default(),
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_plain() {
        let p = json!({"a": [1, -0.5, "x", null, true], "b": {}});
        let t = plain_to_tagged(&p).unwrap();
        assert_eq!(t["t"], "object");
        assert_eq!(t["v"]["a"]["v"][0], json!({"t": "number", "v": 1}));
        assert_eq!(tagged_to_plain(&t), p);
    }

    #[test]
    fn depth_is_bounded() {
        let mut j = json!(1);
        for _ in 0..200 {
            j = json!([j]);
        }
        assert!(plain_to_tagged(&j).is_err());
    }
}
