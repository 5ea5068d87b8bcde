//! Request bodies read without building trees (issue 42, F3: bounded
//! memory per request): a body's small members ([`body_head`]) and its
//! plain values converted to canonical tagged JSON text ([`body_member`]).
//!
//! A `serde_json::Value` costs tens of bytes per scalar and its tagged
//! form (`{"t": …, "v": …}`, a map per scalar) hundreds; a request body
//! of small values grew a thousandfold on its way to the store. Here the
//! body's bytes are read once and the tagged text is written as they are
//! read: what a conversion holds is its output plus, per open object, the
//! converted members waiting to be sorted. The text is the one
//! [`tcc_ir::to_canonical`] writes for
//! [`crate::values::plain_to_tagged`]'s tree (keys sorted, a repeated key's
//! last value kept, nesting beyond [`crate::values::MAX_DEPTH`] refused).

use crate::packed::Stored;
use crate::values::MAX_DEPTH;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Converts the plain JSON text `bytes` (one value) to canonical tagged
/// JSON text.
pub fn plain_text_to_tagged(bytes: &[u8]) -> Result<String, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let mut out = String::new();
    Tagging {
        out: &mut out,
        depth: 0,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end())
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The member `field` of the JSON object `body`, converted: `Ok(None)`
/// when the body has no such member. With `list`, the member must be an
/// array, converted to the canonical text of the array of its elements'
/// tagged values (`--args`-style lists); otherwise the member is one
/// value. Other members are skipped without being built.
///
/// A body of [`MEASURED_FROM`] bytes or more is read twice: once to count
/// the converted text's length, then to write it into a buffer of that
/// length (issue 42, F3: a text grown by doubling held up to twice its
/// length, and its old and new buffers at once while it moved); with
/// `deflate` (a store that keeps long texts deflated,
/// `crate::store::Store::packs_texts`), a text of [`PACK_FROM`] bytes or
/// more is deflated as it is written instead, and never held whole.
///
/// [`PACK_FROM`]: crate::packed::PACK_FROM
pub fn body_member(
    body: &[u8],
    field: &str,
    list: bool,
    deflate: bool,
) -> Result<Option<Member>, String> {
    let length = match body.len() >= MEASURED_FROM {
        true => {
            let mut length = Length::default();
            match member_text_into(body, field, list, &mut length)? {
                Some(Found::Text(())) => Some(length.0),
                Some(Found::NotList) => return Ok(Some(Member::NotList)),
                None => return Ok(None),
            }
        }
        false => None,
    };
    let (found, text) = match length {
        Some(length) if deflate && length >= crate::packed::PACK_FROM => {
            let mut writer = crate::packed::PackWriter::new(true);
            let found = member_text_into(body, field, list, &mut writer)?;
            (found, writer.finish_stored()?)
        }
        _ => {
            let mut text = String::with_capacity(length.unwrap_or(0));
            let found = member_text_into(body, field, list, &mut text)?;
            (found, Stored::Text(text))
        }
    };
    Ok(found.map(|found| match (found, list) {
        (Found::NotList, _) => Member::NotList,
        (Found::Text(()), true) => Member::List(text),
        (Found::Text(()), false) => Member::One(text),
    }))
}

/// Bodies this long or longer are converted in two passes ([`body_member`]).
pub const MEASURED_FROM: usize = 16 * 1024;

/// What one pass of [`body_member`] found.
enum Found<T> {
    /// The member, written (or counted).
    Text(T),
    /// The member was not an array (with `list`).
    NotList,
}

/// One pass of [`body_member`] into `out`.
fn member_text_into<O: TagOut>(
    body: &[u8],
    field: &str,
    list: bool,
    out: &mut O,
) -> Result<Option<Found<()>>, String> {
    let mut de = serde_json::Deserializer::from_slice(body);
    BodyMember { field, list, out }
        .deserialize(&mut de)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| e.to_string())
}

/// A converted body member ([`body_member`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Member {
    /// One tagged value's canonical text.
    One(Stored),
    /// The canonical text of the array of the elements' tagged values.
    List(Stored),
    /// The member was not an array (with `list`).
    NotList,
}

/// A body member's value as [`body_head`] keeps it: strings only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A string.
    Str(String),
    /// `null`.
    Null,
    /// Any other value (not kept).
    Other,
}

/// The members of a body object that [`body_head`] was asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head(Vec<(String, Scalar)>);

impl Head {
    /// The member `key`, if the body has it (the last one if repeated).
    pub fn get(&self, key: &str) -> Option<&Scalar> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The member `key` when it is a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Scalar::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Whether the body has the member `key`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

/// Reads the members named in `wanted` of the JSON object `body`, keeping
/// string values only; every other value is skipped without being built.
/// A body that is not an object has no members.
pub fn body_head(body: &[u8], wanted: &[&str]) -> Result<Head, String> {
    let mut de = serde_json::Deserializer::from_slice(body);
    HeadSeed(wanted)
        .deserialize(&mut de)
        .and_then(|h| de.end().map(|()| h))
        .map_err(|e| e.to_string())
}

/// Visits a body for [`body_head`].
struct HeadSeed<'w>(&'w [&'w str]);

impl<'de> DeserializeSeed<'de> for HeadSeed<'_> {
    type Value = Head;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Head, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'_> {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Head, E> {
        Ok(Head::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Head::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head::default();
        while let Some(key) = map.next_key::<String>()? {
            if self.0.contains(&key.as_str()) {
                let value = map.next_value::<ScalarValue>()?;
                head.0.push((key, value.0));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(head)
    }
}

/// A [`Scalar`] read from any JSON value.
struct ScalarValue(Scalar);

impl<'de> serde::Deserialize<'de> for ScalarValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ScalarValue, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = ScalarValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Null))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Other))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Other))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Other))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Other))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<ScalarValue, E> {
        Ok(ScalarValue(Scalar::Str(s.to_string())))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ScalarValue, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ScalarValue(Scalar::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScalarValue, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ScalarValue(Scalar::Other))
    }
}

/// Where [`Tagging`] writes a tagged text: the text itself, only its
/// length ([`Length`]: the first of the two passes that write a long body
/// member into a buffer of its length), or a writer that deflates it as
/// it comes ([`crate::packed::PackWriter`]). Written front to back only.
trait TagOut {
    /// Where an object's member is written before the members are put in
    /// canonical order.
    type Part: TagOut + Default;
    /// Appends `s`.
    fn push_str(&mut self, s: &str);
    /// Appends `c`.
    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }
    /// Starts again from nothing (a repeated body member: the last counts).
    fn restart(&mut self);
    /// Appends a member written apart.
    fn append(&mut self, part: &Self::Part);
    /// Appends a number's canonical JSON.
    fn number(&mut self, n: &serde_json::Value) {
        let mut text = String::new();
        tcc_ir::write_canonical(n, &mut text);
        self.push_str(&text);
    }
}

impl TagOut for String {
    type Part = String;
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
    fn restart(&mut self) {
        self.clear();
    }
    fn append(&mut self, part: &String) {
        String::push_str(self, part);
    }
    fn number(&mut self, n: &serde_json::Value) {
        tcc_ir::write_canonical(n, self);
    }
}

/// A text's length, counted without writing it.
#[derive(Debug, Default)]
struct Length(usize);

impl TagOut for Length {
    type Part = Length;
    fn push_str(&mut self, s: &str) {
        self.0 += s.len();
    }
    fn restart(&mut self) {
        self.0 = 0;
    }
    fn append(&mut self, part: &Length) {
        self.0 += part.0;
    }
}

impl TagOut for crate::packed::PackWriter {
    /// An object's members are held as text until they are put in order.
    type Part = String;
    fn push_str(&mut self, s: &str) {
        tcc_engine::json::TextOut::push_str(self, s);
    }
    fn restart(&mut self) {
        crate::packed::PackWriter::restart(self);
    }
    fn append(&mut self, part: &String) {
        tcc_engine::json::TextOut::push_str(self, part);
    }
}

/// Writes one value's tagged text to `out`.
struct Tagging<'a, O> {
    out: &'a mut O,
    depth: usize,
}

impl<'de, O: TagOut> DeserializeSeed<'de> for Tagging<'_, O> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(de::Error::custom(format!(
                "JSON nested deeper than {MAX_DEPTH}"
            )));
        }
        d.deserialize_any(self)
    }
}

impl<O: TagOut> Tagging<'_, O> {
    fn number(self, n: f64) {
        self.out.push_str(r#"{"t":"number","v":"#);
        self.out.number(&tcc_engine::json::number_json(n));
        self.out.push('}');
    }
}

impl<'de, O: TagOut> Visitor<'de> for Tagging<'_, O> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.out.push_str(r#"{"t":"null"}"#);
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        self.out.push_str(if b {
            r#"{"t":"bool","v":true}"#
        } else {
            r#"{"t":"bool","v":false}"#
        });
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        self.number(n as f64);
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        self.number(n as f64);
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        self.number(n);
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.out.push_str(r#"{"t":"string","v":"#);
        self.out.push_str(&tcc_ir::encode::canonical_string(s));
        self.out.push('}');
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.out.push_str(r#"{"t":"array","v":["#);
        let mut first = true;
        while seq
            .next_element_seed(Element {
                out: &mut *self.out,
                first,
                depth: self.depth + 1,
            })?
            .is_some()
        {
            first = false;
        }
        self.out.push_str("]}");
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Keys sorted as the canonical writer sorts them; a repeated key
        // keeps its last value, as a parsed tree would.
        let mut members: Vec<(String, O::Part)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let mut text = O::Part::default();
            map.next_value_seed(Tagging {
                out: &mut text,
                depth: self.depth + 1,
            })?;
            members.push((key, text));
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        self.out.push_str(r#"{"t":"object","v":{"#);
        let mut first = true;
        for (i, (key, text)) in members.iter().enumerate() {
            if members.get(i + 1).is_some_and(|next| next.0 == *key) {
                continue;
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            self.out.push_str(&tcc_ir::encode::canonical_string(key));
            self.out.push(':');
            self.out.append(text);
        }
        self.out.push_str("}}");
        Ok(())
    }
}

/// An array's element: its tagged value after a comma unless it is the
/// first (written only once the array is known to have one).
struct Element<'a, O> {
    out: &'a mut O,
    first: bool,
    depth: usize,
}

impl<'de, O: TagOut> DeserializeSeed<'de> for Element<'_, O> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if !self.first {
            self.out.push(',');
        }
        Tagging {
            out: self.out,
            depth: self.depth,
        }
        .deserialize(d)
    }
}

/// Finds and converts one member of a body object ([`body_member`]).
struct BodyMember<'f, 'o, O> {
    field: &'f str,
    list: bool,
    out: &'o mut O,
}

impl<'de, O: TagOut> DeserializeSeed<'de> for BodyMember<'_, '_, O> {
    type Value = Option<Found<()>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, O: TagOut> Visitor<'de> for BodyMember<'_, '_, O> {
    type Value = Option<Found<()>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key != self.field {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            // A repeated member: the last one counts.
            self.out.restart();
            found = Some(if self.list {
                map.next_value_seed(ListSeed {
                    out: &mut *self.out,
                })?
            } else {
                map.next_value_seed(Tagging {
                    out: &mut *self.out,
                    depth: 0,
                })?;
                Found::Text(())
            });
        }
        Ok(found)
    }
}

/// A list member: the array of its elements' tagged values.
struct ListSeed<'o, O> {
    out: &'o mut O,
}

impl<'de, O: TagOut> DeserializeSeed<'de> for ListSeed<'_, O> {
    type Value = Found<()>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Found<()>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, O: TagOut> Visitor<'de> for ListSeed<'_, O> {
    type Value = Found<()>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Found<()>, A::Error> {
        self.out.push('[');
        let mut first = true;
        while seq
            .next_element_seed(Element {
                out: &mut *self.out,
                first,
                depth: 0,
            })?
            .is_some()
        {
            first = false;
        }
        self.out.push(']');
        Ok(Found::Text(()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Found<()>, E> {
        Ok(Found::NotList)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found<()>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Found::NotList)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::plain_to_tagged;
    use proptest::prelude::*;
    use serde_json::{Value as J, json};

    fn tree_text(j: &J) -> String {
        tcc_ir::to_canonical(&plain_to_tagged(j).unwrap())
    }

    #[test]
    fn text_matches_the_tree_conversion() {
        let j = json!({"b": [1, -0.5, 1e300, "x\u{1}é", null, true, {}], "a": {"z": [], "é": false}, "": 0});
        let text = serde_json::to_vec(&j).unwrap();
        assert_eq!(plain_text_to_tagged(&text).unwrap(), tree_text(&j));
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let text = plain_text_to_tagged(br#"{"k": 1, "a": 2, "k": 3}"#).unwrap();
        assert_eq!(text, tree_text(&json!({"a": 2, "k": 3})));
    }

    #[test]
    fn depth_is_bounded_as_in_the_tree_conversion() {
        let deep = |n: usize| format!("{}0{}", "[".repeat(n), "]".repeat(n));
        assert!(plain_text_to_tagged(deep(MAX_DEPTH).as_bytes()).is_ok());
        let e = plain_text_to_tagged(deep(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(e.contains("nested deeper"), "{e}");
    }

    #[test]
    fn members_are_found_and_others_skipped() {
        let body = br#"{"junk": [[1, {"x": 2}]], "args": [1, "x"], "program": "p"}"#;
        assert_eq!(
            body_member(body, "args", true, false).unwrap(),
            Some(Member::List(Stored::Text(format!(
                "[{},{}]",
                tree_text(&json!(1)),
                tree_text(&json!("x"))
            ))))
        );
        assert_eq!(
            body_member(body, "junk", false, false).unwrap(),
            Some(Member::One(Stored::Text(tree_text(
                &json!([[1, {"x": 2}]])
            ))))
        );
        assert_eq!(body_member(body, "missing", true, false).unwrap(), None);
        assert_eq!(
            body_member(body, "program", true, false).unwrap(),
            Some(Member::NotList)
        );
        assert!(body_member(b"[1] x", "args", true, false).is_err());
    }

    #[test]
    fn a_repeated_member_counts_last_in_every_form() {
        // A long first `args`, a long last one, in a body long enough to be
        // read twice, deflated or not: the last one counts.
        let first: Vec<J> = (0..9000).map(|i| json!({"first": i})).collect();
        let last: Vec<J> = (0..9000).map(|i| json!([i, "last"])).collect();
        let body = serde_json::to_vec(&json!({"args": first})).unwrap();
        let mut body = body[..body.len() - 1].to_vec();
        body.extend_from_slice(b",\"args\":");
        body.extend_from_slice(&serde_json::to_vec(&last).unwrap());
        body.push(b'}');
        let want = format!(
            "[{}]",
            last.iter().map(tree_text).collect::<Vec<_>>().join(",")
        );
        assert!(want.len() >= crate::packed::PACK_FROM);
        for deflate in [false, true] {
            let Some(Member::List(stored)) = body_member(&body, "args", true, deflate).unwrap()
            else {
                panic!("no list");
            };
            assert_eq!(matches!(stored, Stored::Deflated { .. }), deflate);
            assert_eq!(stored.text().unwrap(), want);
        }
    }

    #[test]
    fn the_head_keeps_wanted_strings_only() {
        let body = br#"{"program": "p", "id": null, "args": [[0, 1]], "junk": {"a": 1}, "n": 5}"#;
        let head = body_head(body, &["program", "id", "args", "n", "missing"]).unwrap();
        assert_eq!(head.str("program"), Some("p"));
        assert_eq!(head.get("id"), Some(&Scalar::Null));
        assert_eq!(head.get("args"), Some(&Scalar::Other));
        assert_eq!(head.get("n"), Some(&Scalar::Other));
        assert!(!head.has("junk") && !head.has("missing"));
        assert_eq!(body_head(b"[1, 2]", &["program"]).unwrap(), Head::default());
        assert!(body_head(b"{\"program\": ", &["program"]).is_err());
    }

    fn plain() -> impl Strategy<Value = J> {
        let leaf = prop_oneof![
            Just(J::Null),
            any::<bool>().prop_map(J::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            "[a-zé\\x00-\\x1f\"\\\\]{0,6}".prop_map(J::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
                prop::collection::vec(("[a-c]{0,2}", inner), 0..6)
                    .prop_map(|m| J::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_plain_value_converts_as_the_tree_does(j in plain()) {
            let text = serde_json::to_vec(&j).unwrap();
            prop_assert_eq!(plain_text_to_tagged(&text).unwrap(), tree_text(&j));
        }

        /// A long body is converted in two passes: the same text, written
        /// into a buffer of its length, or deflated as it is written when
        /// it is long and the store keeps such texts deflated.
        #[test]
        fn long_bodies_convert_as_short_ones_into_a_buffer_of_their_length(
            items in prop::collection::vec(plain(), 0..4),
            pad in 0usize..2,
            big in any::<bool>(),
            deflate in any::<bool>(),
        ) {
            // Big: the items repeated to a text just past `PACK_FROM`.
            let once: usize = items.iter().map(|j| tree_text(j).len() + 1).sum();
            let repeat = if big { crate::packed::PACK_FROM / once.max(1) + 1 } else { 1 };
            let items: Vec<J> = items.iter().cycle().take(items.len() * repeat).cloned().collect();
            let args = J::Array(items.clone());
            let list = format!(
                "[{}]",
                items.iter().map(tree_text).collect::<Vec<_>>().join(",")
            );
            let junk = "x".repeat(pad * MEASURED_FROM);
            let body = serde_json::to_vec(&json!({"junk": junk, "args": args, "payload": args})).unwrap();
            let long = body.len() >= MEASURED_FROM;
            prop_assert!(long || pad == 0);
            let converted = |field: &str, list: bool| -> Result<Stored, TestCaseError> {
                match body_member(&body, field, list, deflate).unwrap() {
                    Some(Member::List(stored)) if list => Ok(stored),
                    Some(Member::One(stored)) if !list => Ok(stored),
                    other => Err(TestCaseError::fail(format!("{other:?}"))),
                }
            };
            for (stored, want) in [(converted("args", true)?, &list), (converted("payload", false)?, &tree_text(&args))] {
                prop_assert_eq!(&stored.text().unwrap(), want);
                match &stored {
                    Stored::Deflated { len, .. } => {
                        prop_assert!(deflate && long && want.len() >= crate::packed::PACK_FROM);
                        prop_assert_eq!(*len, want.len());
                        prop_assert!(stored.check().is_ok());
                    }
                    Stored::Text(text) => {
                        prop_assert!(!(deflate && long && want.len() >= crate::packed::PACK_FROM));
                        if long {
                            prop_assert_eq!(text.capacity(), text.len());
                        }
                    }
                }
            }
            prop_assert_eq!(body_member(&body, "junk", true, deflate).unwrap(), Some(Member::NotList));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = plain_text_to_tagged(&bytes);
            let _ = body_member(&bytes, "args", true, false);
            let _ = body_member(&bytes, "args", true, true);
            let _ = body_head(&bytes, &["program"]);
        }
    }
}
