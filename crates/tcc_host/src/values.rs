//! Plain JSON ↔ TCC tagged values (`--args`, `--payload`, webhook bodies).

use crate::packed::Stored;
use serde_json::{Map, Value as J};

/// Deepest plain JSON nesting converted.
pub const MAX_DEPTH: usize = 100;

/// Most JSON values (scalars and containers) in one request body or
/// webhook response (issue 42, F3). Converting a value to its tagged form
/// costs a few hundred bytes per scalar, so this bounds what one request
/// can make the host allocate; the count is taken before any tree is
/// built ([`count_values`]).
pub const MAX_VALUES: usize = 100_000;

/// Counts the JSON values of `bytes` without building them, stopping with
/// an error past `limit` (or at a syntax error); serde_json's nesting
/// limit bounds the recursion.
pub fn count_values(bytes: &[u8], limit: usize) -> Result<usize, CountError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut count = 0usize;
    let counted = serde::de::DeserializeSeed::deserialize(
        Counter {
            count: &mut count,
            limit,
        },
        &mut de,
    )
    .and_then(|()| de.end());
    match counted {
        Ok(()) => Ok(count),
        Err(_) if count > limit => Err(CountError::TooMany { limit }),
        Err(e) => Err(CountError::NotJson(e.to_string())),
    }
}

/// Why [`count_values`] stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CountError {
    /// More values than the limit.
    #[error("more than {limit} JSON values")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// Not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
}

/// The counting visitor of [`count_values`].
struct Counter<'a> {
    count: &'a mut usize,
    limit: usize,
}

impl Counter<'_> {
    fn one<E: serde::de::Error>(&mut self) -> Result<(), E> {
        *self.count += 1;
        if *self.count > self.limit {
            Err(E::custom(format!("more than {} JSON values", self.limit)))
        } else {
            Ok(())
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Counter<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Counter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.one()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.one()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.one()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.one()
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> Result<(), E> {
        self.one()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.one()
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.one()?;
        while seq
            .next_element_seed(Counter {
                count: &mut *self.count,
                limit: self.limit,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.one()?;
        while map.next_key::<serde::de::IgnoredAny>()?.is_some() {
            map.next_value_seed(Counter {
                count: &mut *self.count,
                limit: self.limit,
            })?;
        }
        Ok(())
    }
}

/// An execution's entry arguments as they are stored: the canonical JSON
/// text of an array of tagged values. Rows carry the text, and only the
/// driver starting the execution (or a view showing them) parses it, so
/// reading an execution costs its bytes, not a tree per value (issue 42).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedList(Stored);

impl Default for TaggedList {
    fn default() -> TaggedList {
        TaggedList::from_stored("[]".into())
    }
}

impl TaggedList {
    /// The list of these tagged values.
    pub fn from_values(values: &[J]) -> TaggedList {
        let mut text = String::from("[");
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            tcc_ir::write_canonical(v, &mut text);
        }
        text.push(']');
        TaggedList::from_stored(text)
    }

    /// A list as the store holds it (written by this type).
    pub fn from_stored(text: String) -> TaggedList {
        TaggedList(Stored::Text(text))
    }

    /// The stored form (a text, or its deflated bytes: a long list read
    /// from SQLite stays deflated until it is used).
    pub fn stored(&self) -> &Stored {
        &self.0
    }

    /// The text (inflated when stored deflated), or why a deflated one
    /// does not inflate.
    pub fn text(&self) -> Result<std::borrow::Cow<'_, str>, String> {
        self.0.text()
    }

    /// The tagged values.
    pub fn parse(&self) -> Result<Vec<J>, String> {
        match serde_json::from_str(&self.text()?) {
            Ok(J::Array(a)) => Ok(a),
            Ok(_) => Err("stored args are not an array".into()),
            Err(e) => Err(format!("stored args are not JSON: {e}")),
        }
    }
}

impl From<Stored> for TaggedList {
    /// A stored list as read.
    fn from(stored: Stored) -> TaggedList {
        TaggedList(stored)
    }
}

impl From<Vec<J>> for TaggedList {
    fn from(values: Vec<J>) -> TaggedList {
        TaggedList::from_values(&values)
    }
}

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
    fn values_are_counted_without_building_them() {
        assert_eq!(
            count_values(br#"{"a": [1, "x", null, {"b": true}]}"#, 100),
            Ok(7)
        );
        let many = format!("[{}0]", "0,".repeat(200));
        assert_eq!(
            count_values(many.as_bytes(), 100),
            Err(CountError::TooMany { limit: 100 })
        );
        assert!(matches!(
            count_values(b"[1,", 100),
            Err(CountError::NotJson(_))
        ));
        assert!(matches!(
            count_values(b"[1] x", 100),
            Err(CountError::NotJson(_))
        ));
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
