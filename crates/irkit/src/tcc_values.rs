//! Values at the TCC command line (issue 33): what a user writes and reads
//! is plain JSON; the engine's tagged form (`{"t": tag, "v": payload}`) is
//! kept for what plain JSON cannot say (`undefined`, NaN, ±Infinity, -0)
//! behind `--tagged`, and accepted on input wherever it is unambiguous.
//!
//! Reading rule (`docs/tcc/host.md`, "Plain JSON at the command line"):
//! with `--tagged` every value must be tagged; otherwise a value is read as
//! tagged when it is a well-formed tagged value throughout (an object whose
//! only keys are `t` and, for the tags with a payload, `v`, with `t` one of
//! the tags and a payload of the tag's kind, recursively), and as plain
//! JSON otherwise. `[5]`, `{"id": "o-1"}` are plain; `[{"t":"number","v":5}]`
//! is tagged.

use serde_json::{Map, Value as J};

/// The tags of inlined values.
const TAGS: [&str; 7] = [
    "undefined",
    "null",
    "bool",
    "number",
    "string",
    "array",
    "object",
];

/// Deepest value read or written (plain JSON nesting).
const MAX_DEPTH: usize = tcc_host::values::MAX_DEPTH;

/// Whether `j` is a well-formed inlined tagged value.
pub fn is_tagged(j: &J) -> bool {
    tagged_at(j, 0)
}

fn tagged_at(j: &J, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let J::Object(m) = j else {
        return false;
    };
    let Some(t) = m.get("t").and_then(J::as_str) else {
        return false;
    };
    if !TAGS.contains(&t) || m.keys().any(|k| k != "t" && k != "v") {
        return false;
    }
    let v = m.get("v");
    match (t, v) {
        ("undefined" | "null", None) => true,
        ("bool", Some(J::Bool(_))) => true,
        ("number", Some(J::Number(_))) => true,
        ("number", Some(J::String(s))) => matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity"),
        ("string", Some(J::String(_))) => true,
        ("array", Some(J::Array(items))) => items.iter().all(|x| tagged_at(x, depth + 1)),
        ("object", Some(J::Object(fields))) => fields.values().all(|x| tagged_at(x, depth + 1)),
        _ => false,
    }
}

/// One value given on the command line, as the tagged value the engine
/// takes (see the module's reading rule); `what` names it in errors.
pub fn read_value(j: &J, force_tagged: bool, what: &str) -> Result<J, String> {
    if force_tagged {
        if !is_tagged(j) {
            return Err(format!(
                "{what}: with --tagged, values are tagged (`{{\"t\":\"number\",\"v\":1}}`)"
            ));
        }
        return Ok(j.clone());
    }
    if is_tagged(j) {
        return Ok(j.clone());
    }
    tcc_host::values::plain_to_tagged(j).map_err(|e| format!("{what}: {e}"))
}

/// `--args`: a JSON array of arguments, each read with [`read_value`].
pub fn read_args(text: &str, force_tagged: bool) -> Result<Vec<J>, String> {
    let j = tcc_engine::json::parse_strict(text.as_bytes())
        .map_err(|e| format!("--args: {}", tcc_engine::json::strict_error_text(&e)))?;
    let J::Array(items) = j else {
        return Err(
            "--args must be a JSON array of arguments (e.g. `[5, {\"id\": \"o-1\"}]`)".into(),
        );
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| read_value(x, force_tagged, &format!("--args[{i}]")))
        .collect()
}

/// A tagged value as the user reads it: itself with `tagged`, else plain
/// JSON (`undefined` as `null`, non-finite numbers as their strings).
pub fn show(j: &J, tagged: bool) -> J {
    if tagged {
        j.clone()
    } else {
        tcc_host::values::tagged_to_plain(j)
    }
}

/// An execution's status JSON (from the host or the HTTP API) as the user
/// reads it: `result` plain unless `tagged` (then tagged, as the API
/// gives it), without the API's `result_plain` duplicate.
pub fn show_status(status: &J, tagged: bool) -> J {
    let J::Object(m) = status else {
        return status.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "result_plain" => {}
            "result" => {
                out.insert(k.clone(), show(v, tagged));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    J::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_and_tagged_arguments_read_the_same() {
        let plain = read_args(r#"[5, {"id": "o-1"}, [true, null]]"#, false).unwrap();
        let tagged = read_args(
            r#"[{"t":"number","v":5},{"t":"object","v":{"id":{"t":"string","v":"o-1"}}},
               {"t":"array","v":[{"t":"bool","v":true},{"t":"null"}]}]"#,
            false,
        )
        .unwrap();
        assert_eq!(plain, tagged);
        assert_eq!(plain[0], json!({"t": "number", "v": 5}));
    }

    #[test]
    fn only_well_formed_tagged_values_are_read_as_tagged() {
        // Extra keys, unknown tags and wrong payloads are plain objects.
        for plain in [
            json!({"t": "number", "v": 5, "x": 1}),
            json!({"t": "money", "v": 5}),
            json!({"t": "number", "v": "5"}),
            json!({"t": "array", "v": [5]}),
        ] {
            let read = read_value(&plain, false, "x").unwrap();
            assert_eq!(read["t"], "object", "{plain}");
        }
        assert_eq!(
            read_value(&json!({"t": "number", "v": "NaN"}), false, "x").unwrap(),
            json!({"t": "number", "v": "NaN"})
        );
        assert!(read_value(&json!(5), true, "x").is_err());
        assert!(read_args("{}", false).is_err());
    }

    #[test]
    fn statuses_show_plain_results_unless_tagged() {
        let s = json!({"id": "e", "result": {"t": "number", "v": 3}, "result_plain": 3});
        assert_eq!(show_status(&s, false), json!({"id": "e", "result": 3}));
        assert_eq!(
            show_status(&s, true),
            json!({"id": "e", "result": {"t": "number", "v": 3}})
        );
    }
}
