//! One inlined tagged value kept as its canonical JSON text: an execution's
//! result, an event payload, a child's result as the store holds them
//! (issue 42, F3). The engine absorbs the text
//! (`tcc_engine::absorb_text`), the service answers it as it is, and its
//! plain form is written from it by a streaming pass, so no path from the
//! store to the engine or to a response builds a tree per value.

use crate::packed::Stored;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as J;
use std::fmt;

/// The canonical JSON text of one inlined tagged value, as the store
/// holds it: a long one read from SQLite stays deflated until it is used
/// (`crate::packed::Stored`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedText(Stored);

impl TaggedText {
    /// The canonical text of a tagged value.
    pub fn from_value(value: &J) -> TaggedText {
        TaggedText(Stored::Text(tcc_ir::to_canonical(value)))
    }

    /// Text as the store holds it (written by this type, or by the
    /// engine's `export_text`, which writes the same canonical text).
    pub fn from_stored(text: String) -> TaggedText {
        TaggedText(Stored::Text(text))
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the text is empty (never, for a value).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text (inflated when stored deflated), or why a deflated one
    /// does not inflate.
    pub fn text(&self) -> Result<std::borrow::Cow<'_, str>, String> {
        self.0.text()
    }

    /// The text, owned.
    pub fn into_string(self) -> Result<String, String> {
        self.0.into_text()
    }

    /// The stored form (a text, or its deflated bytes).
    pub fn stored(&self) -> &Stored {
        &self.0
    }

    /// Appends the text to `out` (a deflated one inflated there).
    pub fn write_to(&self, out: &mut String) -> Result<(), String> {
        self.0.write_to(out)
    }

    /// The value as a tree (for the CLI and tests: costs a tree per value).
    pub fn to_json(&self) -> Result<J, String> {
        serde_json::from_str(&self.text()?).map_err(|e| format!("stored value is not JSON: {e}"))
    }

    /// The value's plain JSON as canonical text: what
    /// `to_canonical(&tagged_to_plain(&self.to_json()?))` writes
    /// ([`plain_text`]).
    pub fn to_plain_text(&self) -> Result<String, String> {
        plain_text(&self.text()?)
    }
}

impl From<Stored> for TaggedText {
    /// A stored text as read.
    fn from(stored: Stored) -> TaggedText {
        TaggedText(stored)
    }
}

/// The plain JSON, as canonical text, of the canonical text of a tagged
/// value ([`write_plain`]).
pub fn plain_text(tagged: &str) -> Result<String, String> {
    let mut out = String::with_capacity(tagged.len() / 4);
    write_plain(tagged, &mut out)?;
    Ok(out)
}

/// Appends to `out` the plain JSON, as canonical text, of the canonical
/// text of a tagged value: made without a tree when the text is canonical
/// (as stored text is), else through the tree; `out` is left as it was on
/// an error.
pub fn write_plain(tagged: &str, out: &mut String) -> Result<(), String> {
    let mark = out.len();
    let mut de = serde_json::Deserializer::from_str(tagged);
    // A tagged container is two JSON levels: the depth is bounded here
    // (`MAX_PLAIN_DEPTH`), not by serde_json's 128 levels.
    de.disable_recursion_limit();
    let fast = Plain {
        out: &mut *out,
        depth: 0,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    if fast.is_err() {
        out.truncate(mark);
        let tree: J =
            serde_json::from_str(tagged).map_err(|e| format!("stored value is not JSON: {e}"))?;
        tcc_ir::canonical::write_canonical(&crate::values::tagged_to_plain(&tree), out);
    }
    Ok(())
}

/// The error that leaves the text to the tree path.
fn refuse<E: de::Error>() -> E {
    E::custom("left to the tree path")
}

/// Deepest nesting of tagged containers [`TaggedText::to_plain_text`]
/// writes without a tree (stored values are at most 100 or so deep).
pub const MAX_PLAIN_DEPTH: usize = 256;

/// Writes a tagged value's plain form.
struct Plain<'o> {
    out: &'o mut String,
    /// Containers above this value.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Plain<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Plain<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tagged value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if map.next_key::<std::borrow::Cow<'de, str>>()?.as_deref() != Some("t") {
            return Err(refuse());
        }
        let tag: std::borrow::Cow<'de, str> = map.next_value()?;
        match map.next_key::<std::borrow::Cow<'de, str>>()?.as_deref() {
            None => {
                self.out.push_str("null");
                return Ok(());
            }
            Some("v") => {}
            Some(_) => return Err(refuse()),
        }
        match tag.as_ref() {
            "bool" | "number" | "string" => map.next_value_seed(Scalar { out: self.out })?,
            "array" | "object" if self.depth >= MAX_PLAIN_DEPTH => return Err(refuse()),
            "array" => map.next_value_seed(PlainItems {
                out: self.out,
                object: false,
                depth: self.depth + 1,
            })?,
            "object" => map.next_value_seed(PlainItems {
                out: self.out,
                object: true,
                depth: self.depth + 1,
            })?,
            // Another tag's payload (`ref` and the like) reads as null; a
            // container there is left to the tree path, not skipped
            // (skipping would recurse without a bound).
            _ => {
                map.next_value_seed(Scalar {
                    out: &mut String::new(),
                })?;
                self.out.push_str("null");
            }
        }
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(refuse());
        }
        Ok(())
    }
}

/// A scalar payload, copied in its canonical spelling.
struct Scalar<'o> {
    out: &'o mut String,
}

impl<'de> DeserializeSeed<'de> for Scalar<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scalar<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scalar")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.out.push_str(if b { "true" } else { "false" });
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<(), E> {
        self.out.push_str(&i.to_string());
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<(), E> {
        self.out.push_str(&u.to_string());
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<(), E> {
        // As the tree path (a number serde_json cannot hold reads as null).
        tcc_ir::canonical::write_canonical(&J::from(f), self.out);
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.out.push_str(&tcc_ir::encode::canonical_string(s));
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.out.push_str("null");
        Ok(())
    }
}

/// An array's elements or an object's members, each a tagged value.
struct PlainItems<'o> {
    out: &'o mut String,
    object: bool,
    /// Containers above the elements.
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for PlainItems<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.object {
            d.deserialize_map(self)
        } else {
            d.deserialize_seq(self)
        }
    }
}

impl<'de> Visitor<'de> for PlainItems<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a collection payload")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.object {
            return Err(refuse());
        }
        self.out.push('[');
        let mut first = true;
        loop {
            let mark = self.out.len();
            if !first {
                self.out.push(',');
            }
            if seq
                .next_element_seed(Plain {
                    out: &mut *self.out,
                    depth: self.depth,
                })?
                .is_none()
            {
                self.out.truncate(mark);
                break;
            }
            first = false;
        }
        self.out.push(']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if !self.object {
            return Err(refuse());
        }
        self.out.push('{');
        // Canonical text has its keys in byte order; anything else is left
        // to the tree path, which sorts them.
        let mut last: Option<String> = None;
        while let Some(k) = map.next_key::<String>()? {
            if last.as_ref().is_some_and(|l| *l >= k) {
                return Err(refuse());
            }
            if last.is_some() {
                self.out.push(',');
            }
            self.out.push_str(&tcc_ir::encode::canonical_string(&k));
            self.out.push(':');
            map.next_value_seed(Plain {
                out: &mut *self.out,
                depth: self.depth,
            })?;
            last = Some(k);
        }
        self.out.push('}');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tree_path(text: &str) -> Option<String> {
        let j: J = serde_json::from_str(text).ok()?;
        Some(tcc_ir::to_canonical(&crate::values::tagged_to_plain(&j)))
    }

    #[test]
    fn plain_text_is_the_tree_paths() {
        for text in [
            r#"{"t":"array","v":[{"t":"number","v":1},{"t":"number","v":-0.5},{"t":"number","v":"NaN"},{"t":"string","v":"x\"y"},{"t":"null"},{"t":"undefined"},{"t":"bool","v":true}]}"#,
            r#"{"t":"object","v":{"a":{"t":"object","v":{}},"b":{"t":"array","v":[]}}}"#,
            r#"{"t":"object","v":{"b":{"t":"null"},"a":{"t":"bool","v":false}}}"#,
            r#"{"v":1,"t":"number"}"#,
            r#"{"t":"ref","v":3}"#,
            r#"{"t":"number","v":1e300}"#,
            r#"{"t":"number","v":[1,{"b":1,"a":2}]}"#,
        ] {
            let t = TaggedText::from_stored(text.into());
            assert_eq!(t.to_plain_text().ok(), tree_path(text), "{text}");
        }
    }

    #[test]
    fn values_deeper_than_serde_jsons_limit_read_plain() {
        // 100 plain levels: 201 JSON levels tagged, past serde_json's 128.
        let mut plain = J::from(1);
        for _ in 0..100 {
            plain = J::Array(vec![plain]);
        }
        let tagged = crate::values::plain_to_tagged(&plain).unwrap();
        let text = TaggedText::from_value(&tagged);
        assert_eq!(text.to_plain_text().unwrap(), tcc_ir::to_canonical(&plain));
        // Past the cap: left to the tree path, which refuses it.
        let deep = format!(
            "{}{{\"t\":\"null\"}}{}",
            r#"{"t":"array","v":["#.repeat(300),
            "]}".repeat(300)
        );
        assert!(TaggedText::from_stored(deep).to_plain_text().is_err());
    }

    fn plain() -> impl Strategy<Value = J> {
        let leaf = prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::Bool),
            any::<i64>().prop_map(J::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(J::from),
            "[a-z\"\\\\é]{0,4}".prop_map(J::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
                prop::collection::btree_map("[a-c]{0,2}", inner, 0..4)
                    .prop_map(|m| J::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_stored_value_reads_plain_as_the_tree_path_does(p in plain()) {
            let Ok(tagged) = crate::values::plain_to_tagged(&p) else { return Ok(()) };
            let text = TaggedText::from_value(&tagged);
            prop_assert_eq!(text.to_plain_text().ok(), tree_path(&text.text().unwrap()));
        }

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,48}") {
            let _ = TaggedText::from_stored(text).to_plain_text();
        }
    }
}
