//! Inlined tagged values absorbed straight from their JSON text, without a
//! `serde_json::Value` tree (issue 42, F3: a tree costs hundreds of bytes
//! per tagged scalar; the heap costs 16).
//!
//! The cells and values made are exactly those [`crate::json::absorb`]
//! makes from the parsed text (children before their container, object
//! members in the text's order). Text this fast path does not take — a
//! syntax error, a `v` before its `t`, an unknown tag or key, a limit —
//! is handed to the tree path, which gives the diagnostic; the heap is
//! first put back as it was.

use crate::error::EngineError;
use crate::json::{MAX_ABSORB_DEPTH, ValueContext, absorb};
use crate::limits::Limits;
use crate::object_map::ObjectMap;
use crate::value::{Cell, Heap, Value};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as J;
use std::fmt;

/// Absorbs the JSON text of an array of inlined tagged values (a host
/// message: no `ref`), appending their objects and arrays to `heap`.
/// Element `i` is reported at `{path}[i]`.
pub fn absorb_list_text(
    text: &str,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Vec<Value>, EngineError> {
    absorb_from(
        serde_json::Deserializer::from_str(text),
        || serde_json::from_str(text),
        &AbsorbList { path, limits },
        heap,
    )
}

/// [`absorb_list_text`] of a text read from `source`.
pub fn absorb_list_source(
    source: &dyn TextSource,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Vec<Value>, EngineError> {
    absorb_from(
        serde_json::Deserializer::from_reader(source.open()),
        || serde_json::from_reader(source.open()),
        &AbsorbList { path, limits },
        heap,
    )
}

/// Absorbs the JSON text of one inlined tagged value (a host message: an
/// event payload or a child's result), appending its objects and arrays
/// to `heap`: the value [`crate::json::absorb`] makes from the parsed
/// text, or its diagnostic, reported at `path`.
pub fn absorb_value_text(
    text: &str,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Value, EngineError> {
    absorb_from(
        serde_json::Deserializer::from_str(text),
        || serde_json::from_str(text),
        &AbsorbValue { path, limits },
        heap,
    )
}

/// A JSON text read in pieces (a host's long stored text, inflated as it
/// is read), so that it is never held whole beside the heap it is absorbed
/// into (issue 42, F3).
pub trait TextSource {
    /// A reader of the whole text from its start (called again when the
    /// text is read a second time: for the tree path's diagnostic).
    fn open(&self) -> Box<dyn std::io::Read + '_>;
}

/// [`absorb_value_text`] of a text read from `source`.
pub fn absorb_value_source(
    source: &dyn TextSource,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Value, EngineError> {
    absorb_from(
        serde_json::Deserializer::from_reader(source.open()),
        || serde_json::from_reader(source.open()),
        &AbsorbValue { path, limits },
        heap,
    )
}

/// What a host message's text is absorbed as: the fast path over the
/// deserializer, and the tree path over the parsed text.
trait Absorbed {
    /// What the text makes.
    type Output;

    /// The fast path: reads the text with `de`, appending to `heap`.
    fn fast<'de, R: serde_json::de::Read<'de>>(
        &self,
        de: &mut serde_json::Deserializer<R>,
        heap: &mut Heap,
    ) -> serde_json::Result<Self::Output>;

    /// The tree path: the value or the diagnostic the parsed text makes.
    fn absorb_tree(&self, parsed: &J, heap: &mut Heap) -> Result<Self::Output, EngineError>;

    /// Where a text that is not JSON is reported.
    fn path(&self) -> &str;
}

/// An array of inlined tagged values (a start's arguments).
struct AbsorbList<'a> {
    path: &'a str,
    limits: &'a Limits,
}

impl Absorbed for AbsorbList<'_> {
    type Output = Vec<Value>;

    fn fast<'de, R: serde_json::de::Read<'de>>(
        &self,
        de: &mut serde_json::Deserializer<R>,
        heap: &mut Heap,
    ) -> serde_json::Result<Vec<Value>> {
        ListSeed {
            heap,
            limits: self.limits,
        }
        .deserialize(de)
    }

    fn absorb_tree(&self, parsed: &J, heap: &mut Heap) -> Result<Vec<Value>, EngineError> {
        let J::Array(items) = parsed else {
            return Err(EngineError::message(self.path, "expected a JSON array"));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                absorb(
                    ValueContext::Message,
                    x,
                    &format!("{}[{i}]", self.path),
                    heap,
                    self.limits,
                )
            })
            .collect()
    }

    fn path(&self) -> &str {
        self.path
    }
}

/// One inlined tagged value (an event payload, a child's result).
struct AbsorbValue<'a> {
    path: &'a str,
    limits: &'a Limits,
}

impl Absorbed for AbsorbValue<'_> {
    type Output = Value;

    fn fast<'de, R: serde_json::de::Read<'de>>(
        &self,
        de: &mut serde_json::Deserializer<R>,
        heap: &mut Heap,
    ) -> serde_json::Result<Value> {
        Tagged {
            heap,
            limits: self.limits,
            depth: 0,
            refs: false,
        }
        .deserialize(de)
    }

    fn absorb_tree(&self, parsed: &J, heap: &mut Heap) -> Result<Value, EngineError> {
        absorb(ValueContext::Message, parsed, self.path, heap, self.limits)
    }

    fn path(&self) -> &str {
        self.path
    }
}

/// Absorbs the text `de` reads as `what`; `tree` parses it again, for the
/// tree path, after the heap is put back as it was.
fn absorb_from<'de, R: serde_json::de::Read<'de>, A: Absorbed>(
    mut de: serde_json::Deserializer<R>,
    tree: impl FnOnce() -> serde_json::Result<J>,
    what: &A,
    heap: &mut Heap,
) -> Result<A::Output, EngineError> {
    let mark = heap.cells.len();
    // Nesting is bounded by `MAX_ABSORB_DEPTH` here, not by serde_json's
    // 128 JSON levels (64 tagged containers).
    de.disable_recursion_limit();
    let fast = what
        .fast(&mut de, heap)
        .and_then(|made| de.end().map(|()| made));
    match fast {
        Ok(made) => Ok(made),
        Err(_) => {
            heap.cells.truncate(mark);
            let parsed: J =
                tree().map_err(|e| EngineError::message(what.path(), format!("not JSON: {e}")))?;
            what.absorb_tree(&parsed, heap)
        }
    }
}

/// An array of tagged values.
struct ListSeed<'h> {
    heap: &'h mut Heap,
    limits: &'h Limits,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = Vec<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = Vec<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of tagged values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Tagged {
            heap: &mut *self.heap,
            limits: self.limits,
            depth: 0,
            refs: false,
        })? {
            out.push(v);
        }
        Ok(out)
    }
}

/// One tagged value.
pub(crate) struct Tagged<'h> {
    pub(crate) heap: &'h mut Heap,
    pub(crate) limits: &'h Limits,
    pub(crate) depth: usize,
    /// A continuation's value: `ref` taken, inline collections left to
    /// the tree path (a canonical continuation holds none).
    pub(crate) refs: bool,
}

impl<'de> DeserializeSeed<'de> for Tagged<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

/// The error that hands the text to the tree path.
pub(crate) fn refuse<E: de::Error>() -> E {
    E::custom("left to the tree path")
}

impl<'de> Visitor<'de> for Tagged<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tagged value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if map.next_key::<std::borrow::Cow<'de, str>>()?.as_deref() != Some("t") {
            return Err(refuse());
        }
        let tag: std::borrow::Cow<'de, str> = map.next_value()?;
        let value = match tag.as_ref() {
            "undefined" | "null" => {
                if map.next_key::<de::IgnoredAny>()?.is_some() {
                    return Err(refuse());
                }
                return Ok(if tag == "null" {
                    Value::Null
                } else {
                    Value::Undefined
                });
            }
            _ => {
                if map.next_key::<std::borrow::Cow<'de, str>>()?.as_deref() != Some("v") {
                    return Err(refuse());
                }
                match tag.as_ref() {
                    "bool" => Value::Bool(map.next_value()?),
                    "number" => Value::Number(map.next_value_seed(NumberPayload)?),
                    "string" => {
                        let s: std::borrow::Cow<'de, str> = map.next_value()?;
                        if s.len() > self.limits.max_string_bytes {
                            return Err(refuse());
                        }
                        Value::string(&s)
                    }
                    "ref" if self.refs => Value::Ref(map.next_value()?),
                    "array" | "object" => {
                        if self.refs || self.depth >= MAX_ABSORB_DEPTH {
                            return Err(refuse());
                        }
                        let cell = map.next_value_seed(Collection {
                            heap: &mut *self.heap,
                            limits: self.limits,
                            depth: self.depth + 1,
                            object: tag == "object",
                            refs: false,
                        })?;
                        Value::Ref(self.heap.alloc(cell, self.limits).map_err(|_| refuse())?)
                    }
                    _ => return Err(refuse()),
                }
            }
        };
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(refuse());
        }
        Ok(value)
    }
}

/// A `number` payload: a JSON number, or `NaN` / `Infinity` /
/// `-Infinity` as a string (anything else, a container included, is
/// refused without being read).
struct NumberPayload;

impl<'de> DeserializeSeed<'de> for NumberPayload {
    type Value = f64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NumberPayload {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number payload")
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<f64, E> {
        Ok(n as f64)
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<f64, E> {
        Ok(n as f64)
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<f64, E> {
        Ok(n)
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<f64, E> {
        match s {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(refuse()),
        }
    }
}

/// The payload of an `array` or `object` tagged value (or heap cell).
pub(crate) struct Collection<'h> {
    pub(crate) heap: &'h mut Heap,
    pub(crate) limits: &'h Limits,
    pub(crate) depth: usize,
    pub(crate) object: bool,
    /// Elements are a continuation's values (see [`Tagged::refs`]).
    pub(crate) refs: bool,
}

impl<'de> DeserializeSeed<'de> for Collection<'_> {
    type Value = Cell;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cell, D::Error> {
        if self.object {
            d.deserialize_map(self)
        } else {
            d.deserialize_seq(self)
        }
    }
}

impl<'de> Visitor<'de> for Collection<'_> {
    type Value = Cell;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a collection payload")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cell, A::Error> {
        if self.object {
            return Err(refuse());
        }
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(Tagged {
            heap: &mut *self.heap,
            limits: self.limits,
            depth: self.depth,
            refs: self.refs,
        })? {
            out.push(v);
        }
        out.shrink_to_fit();
        Ok(Cell::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        if !self.object {
            return Err(refuse());
        }
        let mut out = ObjectMap::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(Tagged {
                heap: &mut *self.heap,
                limits: self.limits,
                depth: self.depth,
                refs: self.refs,
            })?;
            // A repeated key keeps its last value, as the parsed tree does
            // (the tree keeps the first one's place: the cells differ
            // only in order, so such text is left to the tree path).
            if out.insert(k, v).is_some() {
                return Err(refuse());
            }
        }
        Ok(Cell::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The text path's values and heap, then the tree path's.
    type BothPaths = (
        Result<Vec<Value>, EngineError>,
        Heap,
        Result<Vec<J>, String>,
        Heap,
    );

    fn both(text: &str) -> BothPaths {
        let limits = Limits::default();
        let mut fast_heap = Heap::default();
        let fast = absorb_list_text(text, "$.args", &mut fast_heap, &limits);
        let mut tree_heap = Heap::default();
        let tree = serde_json::from_str::<J>(text)
            .map_err(|e| e.to_string())
            .and_then(|j| match j {
                J::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        absorb(
                            ValueContext::Message,
                            x,
                            &format!("$.args[{i}]"),
                            &mut tree_heap,
                            &limits,
                        )
                        .map(|v| crate::json::value_json(&v))
                        .map_err(|e| e.to_string())
                    })
                    .collect(),
                _ => Err("not an array".into()),
            });
        (fast, fast_heap, tree, tree_heap)
    }

    fn assert_same(text: &str) {
        let (fast, fast_heap, tree, tree_heap) = both(text);
        match (fast, tree) {
            (Ok(f), Ok(t)) => {
                let f: Vec<J> = f.iter().map(crate::json::value_json).collect();
                assert_eq!(f, t, "{text}");
                assert_eq!(fast_heap.cells.len(), tree_heap.cells.len(), "{text}");
                for (a, b) in fast_heap.cells.iter().zip(&tree_heap.cells) {
                    assert!(a.same_encoding(b), "{text}: {a:?} vs {b:?}");
                }
            }
            (Err(_), Err(_)) => {}
            (f, t) => panic!("{text}: fast {f:?}, tree {t:?}"),
        }
    }

    #[test]
    fn values_and_cells_are_those_of_the_tree_path() {
        assert_same(
            r#"[{"t":"array","v":[{"t":"number","v":1},{"t":"string","v":"x"},{"t":"null"},{"t":"undefined"},{"t":"bool","v":true},{"t":"number","v":"NaN"}]},{"t":"object","v":{"a":{"t":"object","v":{}},"b":{"t":"array","v":[]}}}]"#,
        );
        assert_same(r#"[{"v":1,"t":"number"}]"#);
        assert_same(r#"[{"t":"object","v":{"k":{"t":"number","v":1},"k":{"t":"number","v":2}}}]"#);
    }

    #[test]
    fn bad_text_gets_the_tree_paths_diagnostic() {
        for text in [
            r#"[{"t":"array","v":[{"t":"number","v":1}]},{"t":"ref","v":0}]"#,
            r#"[{"t":"number"}]"#,
            r#"[{"t":"null","v":1}]"#,
            r#"[{"t":"bool","v":true,"x":1}]"#,
            r#"[1"#,
            r#"{}"#,
        ] {
            let mut heap = Heap::default();
            let e = absorb_list_text(text, "$.args", &mut heap, &Limits::default());
            assert!(e.is_err(), "{text}");
            assert_same(text);
        }
    }

    #[test]
    fn values_past_serde_jsons_nesting_limit_are_absorbed_up_to_the_cap() {
        // A tagged container is two JSON levels: 100 of them are 201,
        // past serde_json's own limit of 128.
        let nested = |n: usize| {
            format!(
                "{}{{\"t\":\"null\"}}{}",
                r#"{"t":"array","v":["#.repeat(n),
                "]}".repeat(n)
            )
        };
        let limits = Limits::default();
        let mut heap = Heap::default();
        let v = absorb_value_text(&nested(100), "$.value", &mut heap, &limits).unwrap();
        assert!(matches!(v, Value::Ref(_)));
        assert_eq!(heap.cells.len(), 100);
        let mut heap = Heap::default();
        let list = format!("[{}]", nested(100));
        assert_eq!(
            absorb_list_text(&list, "$.args", &mut heap, &limits)
                .unwrap()
                .len(),
            1
        );
        // Past MAX_ABSORB_DEPTH: an error, the heap as it was.
        let mut heap = Heap::default();
        let deep = nested(MAX_ABSORB_DEPTH + 1);
        assert!(absorb_value_text(&deep, "$.value", &mut heap, &limits).is_err());
        assert!(heap.cells.is_empty());
    }

    fn tagged() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just(r#"{"t":"null"}"#.to_string()),
            Just(r#"{"t":"undefined"}"#.to_string()),
            any::<bool>().prop_map(|b| format!(r#"{{"t":"bool","v":{b}}}"#)),
            any::<i32>().prop_map(|n| format!(r#"{{"t":"number","v":{n}}}"#)),
            "[a-z\"\\\\]{0,4}".prop_map(|s| format!(
                r#"{{"t":"string","v":{}}}"#,
                serde_json::to_string(&s).unwrap()
            )),
            Just(r#"{"t":"ref","v":0}"#.to_string()),
            Just(r#"{"t":"number","v":"x"}"#.to_string()),
        ];
        leaf.prop_recursive(5, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|xs| format!(r#"{{"t":"array","v":[{}]}}"#, xs.join(","))),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5).prop_map(|kv| {
                    let members: Vec<String> = kv
                        .into_iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!(r#"{{"t":"object","v":{{{}}}}}"#, members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_tagged_list_absorbs_as_the_tree_path_does(xs in prop::collection::vec(tagged(), 0..4)) {
            assert_same(&format!("[{}]", xs.join(",")));
        }

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,48}") {
            let mut heap = Heap::default();
            let _ = absorb_list_text(&text, "$.args", &mut heap, &Limits::default());
        }
    }
}
