//! Canonical JSON for any JSON tree (messages, continuations, journal
//! inputs): the same rules as the artifact encoding in [`crate::encode`] —
//! object keys sorted by code unit, no whitespace, strings and numbers
//! spelled as the artifact encoder spells them. The engine and the host
//! write every JSON text they persist or hash through here.

use crate::encode::{canonical_number, canonical_string};
use serde_json::Value as J;

/// Appends `v` as canonical JSON to `out`.
pub fn write_canonical(v: &J, out: &mut String) {
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else {
                out.push_str(&canonical_number(n.as_f64().unwrap_or(0.0)));
            }
        }
        J::String(s) => out.push_str(&canonical_string(s)),
        J::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        J::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&canonical_string(k));
                out.push(':');
                write_canonical(&m[k], out);
            }
            out.push('}');
        }
    }
}

/// `v` as a canonical JSON string.
pub fn to_canonical(v: &J) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sort_and_numbers_use_the_artifact_spelling() {
        let v = json!({"b": [1, -2, 0.5, 1e21], "a": {"z": null, "é": "x\n"}, "c": true});
        assert_eq!(
            to_canonical(&v),
            r#"{"a":{"z":null,"é":"x\n"},"b":[1,-2,0.5,1000000000000000000000],"c":true}"#
        );
    }
}
