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
        TextSizes::of_text(text),
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
        TextSizes::count(serde_json::Deserializer::from_reader(source.open())),
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
        TextSizes::of_text(text),
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
        TextSizes::count(serde_json::Deserializer::from_reader(source.open())),
        &AbsorbValue { path, limits },
        heap,
    )
}

/// What a host message's text is absorbed as: the fast path over the
/// deserializer, and the tree path over the parsed text.
trait Absorbed {
    /// What the text makes.
    type Output;

    /// The fast path: reads the text with `de`, appending to `heap`
    /// (arrays and the heap sized by `sizes` when given).
    fn fast<'de, R: serde_json::de::Read<'de>>(
        &self,
        de: &mut serde_json::Deserializer<R>,
        heap: &mut Heap,
        sizes: Option<&TextSizes>,
    ) -> serde_json::Result<Self::Output>;

    /// The tree path: the value or the diagnostic the parsed text makes.
    fn absorb_tree(&self, parsed: &J, heap: &mut Heap) -> Result<Self::Output, EngineError>;

    /// Where a text that is not JSON is reported.
    fn path(&self) -> &str;

    /// The limits absorbed values are held to.
    fn limits(&self) -> &Limits;
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
        sizes: Option<&TextSizes>,
    ) -> serde_json::Result<Vec<Value>> {
        ListSeed {
            heap,
            limits: self.limits,
            sizes,
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

    fn limits(&self) -> &Limits {
        self.limits
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
        sizes: Option<&TextSizes>,
    ) -> serde_json::Result<Value> {
        Tagged {
            heap,
            limits: self.limits,
            depth: 0,
            refs: false,
            sizes,
        }
        .deserialize(de)
    }

    fn absorb_tree(&self, parsed: &J, heap: &mut Heap) -> Result<Value, EngineError> {
        absorb(ValueContext::Message, parsed, self.path, heap, self.limits)
    }

    fn path(&self) -> &str {
        self.path
    }

    fn limits(&self) -> &Limits {
        self.limits
    }
}

/// Absorbs the text `de` reads as `what`, its long arrays allocated at the
/// `sizes` a first pass counted (when it did); `tree` parses it again,
/// for the tree path, after the heap is put back as it was.
fn absorb_from<'de, R: serde_json::de::Read<'de>, A: Absorbed>(
    mut de: serde_json::Deserializer<R>,
    tree: impl FnOnce() -> serde_json::Result<J>,
    sizes: Option<TextSizes>,
    what: &A,
    heap: &mut Heap,
) -> Result<A::Output, EngineError> {
    let mark = heap.cells().len();
    if let Some(sizes) = &sizes {
        sizes.reserve(heap, what.limits());
    }
    // Nesting is bounded by `MAX_ABSORB_DEPTH` here, not by serde_json's
    // 128 JSON levels (64 tagged containers).
    de.disable_recursion_limit();
    let fast = what
        .fast(&mut de, heap, sizes.as_ref())
        .and_then(|made| de.end().map(|()| made));
    match fast {
        Ok(made) => Ok(made),
        Err(_) => {
            heap.truncate(mark);
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
    sizes: Option<&'h TextSizes>,
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
        let mut out = TextSizes::vector(self.sizes, self.limits);
        while let Some(v) = seq.next_element_seed(Tagged {
            heap: &mut *self.heap,
            limits: self.limits,
            depth: 0,
            refs: false,
            sizes: self.sizes,
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
    /// What a first pass counted in the text, when it did.
    pub(crate) sizes: Option<&'h TextSizes>,
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
                            sizes: self.sizes,
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
    /// What a first pass counted in the text, when it did.
    pub(crate) sizes: Option<&'h TextSizes>,
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
        let mut out = TextSizes::vector(self.sizes, self.limits);
        while let Some(v) = seq.next_element_seed(Tagged {
            heap: &mut *self.heap,
            limits: self.limits,
            depth: self.depth,
            refs: self.refs,
            sizes: self.sizes,
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
                sizes: self.sizes,
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

/// What a first pass over a long text counts (issue 42, F3: vectors grown
/// by doubling while a body of tiny values was absorbed held up to twice
/// what they hold, and the old buffer beside the new one while they
/// moved): the lengths of its long arrays (of [`LONG_ARRAY`] elements or
/// more), each then allocated at its length, and its collections (the
/// heap cells it makes), for which the heap makes room at once. Arrays are
/// numbered in the order their `[` appears, which is the order the
/// absorbing pass enters them.
#[derive(Debug, Default)]
pub(crate) struct TextSizes {
    /// (ordinal, length) of each long array, by ordinal.
    long: Vec<(u64, usize)>,
    /// The tagged collections: arrays and objects that are a `v` member.
    collections: usize,
    /// Arrays the absorbing pass has entered.
    entered: std::cell::Cell<u64>,
    /// The first entry of `long` not yet reached.
    next: std::cell::Cell<usize>,
}

/// Arrays shorter than this grow as vectors do.
pub(crate) const LONG_ARRAY: usize = 256;

/// Texts read from memory are counted first from this length (a text read
/// in pieces is always: it is long, or it would not be read so).
pub(crate) const COUNT_ARRAYS_FROM: usize = 64 * 1024;

impl TextSizes {
    /// What a first pass counts in `text`, for a long text.
    fn of_text(text: &str) -> Option<TextSizes> {
        (text.len() >= COUNT_ARRAYS_FROM)
            .then(|| TextSizes::count(serde_json::Deserializer::from_str(text)))
            .flatten()
    }

    /// What a first pass counts in the text `de` reads; `None` when
    /// it is not JSON, or nests past serde_json's recursion limit (which
    /// this pass keeps: the absorbing pass bounds depth itself, and sizes
    /// are only a hint).
    fn count<'de, R: serde_json::de::Read<'de>>(
        mut de: serde_json::Deserializer<R>,
    ) -> Option<TextSizes> {
        let mut sizes = TextSizes::default();
        let mut arrays = 0u64;
        SizeCounter {
            long: &mut sizes.long,
            arrays: &mut arrays,
            collections: &mut sizes.collections,
            payload: false,
        }
        .deserialize(&mut de)
        .ok()?;
        de.end().ok()?;
        // An array's length is known after its elements' arrays.
        sizes.long.sort_unstable_by_key(|&(ordinal, _)| ordinal);
        Some(sizes)
    }

    /// A vector for the next array entered: at its counted length when it
    /// is long and within the collection limit, else empty.
    fn vector(sizes: Option<&TextSizes>, limits: &Limits) -> Vec<Value> {
        let Some(sizes) = sizes else {
            return Vec::new();
        };
        let ordinal = sizes.entered.get();
        sizes.entered.set(ordinal + 1);
        let next = sizes.next.get();
        match sizes.long.get(next) {
            Some(&(at, length)) if at == ordinal => {
                sizes.next.set(next + 1);
                if length <= limits.max_collection_len {
                    Vec::with_capacity(length)
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }

    /// Makes room in `heap` for the cells the text holds (within the
    /// heap-cell limit; the count is an upper bound: a tagged value that
    /// is an object's member named `v` counts as one).
    fn reserve(&self, heap: &mut Heap, limits: &Limits) {
        let room = limits.max_heap_cells.saturating_sub(heap.cells().len());
        heap.reserve_exact(self.collections.min(room));
    }
}

/// Counts the elements of every array in a JSON value, and its tagged
/// collections.
struct SizeCounter<'a> {
    long: &'a mut Vec<(u64, usize)>,
    arrays: &'a mut u64,
    collections: &'a mut usize,
    /// The value is a `v` member (a collection there is a tagged one's).
    payload: bool,
}

/// Reads an object's key: whether it is `v` (nothing allocated).
struct IsPayloadKey;

impl<'de> DeserializeSeed<'de> for IsPayloadKey {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for IsPayloadKey {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == "v")
    }
}

impl<'de> DeserializeSeed<'de> for SizeCounter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SizeCounter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let ordinal = *self.arrays;
        *self.arrays += 1;
        *self.collections += usize::from(self.payload);
        let mut length = 0usize;
        while seq
            .next_element_seed(SizeCounter {
                long: &mut *self.long,
                arrays: &mut *self.arrays,
                collections: &mut *self.collections,
                payload: false,
            })?
            .is_some()
        {
            length += 1;
        }
        if length >= LONG_ARRAY {
            self.long.push((ordinal, length));
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        *self.collections += usize::from(self.payload);
        while let Some(payload) = map.next_key_seed(IsPayloadKey)? {
            map.next_value_seed(SizeCounter {
                long: &mut *self.long,
                arrays: &mut *self.arrays,
                collections: &mut *self.collections,
                payload,
            })?;
        }
        Ok(())
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
                assert_eq!(fast_heap.cells().len(), tree_heap.cells().len(), "{text}");
                for (a, b) in fast_heap.cells().iter().zip(tree_heap.cells()) {
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

    /// A long text's long arrays are allocated at their lengths (counted
    /// first), read from memory or in pieces, and make what the tree path
    /// makes.
    #[test]
    fn long_arrays_are_allocated_at_their_length() {
        let zero = r#"{"t":"number","v":0}"#;
        let array =
            |n: usize, item: &str| format!(r#"{{"t":"array","v":[{}]}}"#, vec![item; n].join(","));
        let inner = array(LONG_ARRAY, zero);
        let text = format!(
            "[{},{},{},{}]",
            array(5000, zero),
            array(3, &array(2, zero)),
            array(300, &inner),
            array(LONG_ARRAY - 1, zero)
        );
        assert!(text.len() >= COUNT_ARRAYS_FROM);
        assert_same(&text);
        struct Pieces<'a>(&'a str);
        impl TextSource for Pieces<'_> {
            fn open(&self) -> Box<dyn std::io::Read + '_> {
                Box::new(std::io::BufReader::with_capacity(5, self.0.as_bytes()))
            }
        }
        let limits = Limits::default();
        for from_pieces in [false, true] {
            let mut heap = Heap::default();
            let values = if from_pieces {
                absorb_list_source(&Pieces(&text), "$.args", &mut heap, &limits)
            } else {
                absorb_list_text(&text, "$.args", &mut heap, &limits)
            }
            .unwrap();
            assert_eq!(values.len(), 4);
            let mut lengths = Vec::new();
            for cell in heap.cells() {
                if let Cell::Array(items) = cell {
                    assert_eq!(items.capacity(), items.len(), "from pieces: {from_pieces}");
                    lengths.push(items.len());
                }
            }
            lengths.sort_unstable();
            lengths.dedup();
            assert_eq!(lengths, [2, 3, LONG_ARRAY - 1, LONG_ARRAY, 300, 5000]);
            // Room for the 307 cells made at once.
            assert_eq!(heap.cells().len(), 1 + 4 + 301 + 1);
            assert_eq!(heap.capacity(), heap.cells().len());
        }
        // Counted: the top list is short, the long arrays by the order of
        // their `[` (the 300 before the arrays it holds).
        let counted = TextSizes::of_text(&text).unwrap();
        assert_eq!(counted.long[0], (1, 5000));
        assert_eq!(counted.long[1], (6, 300));
        assert_eq!(counted.long.len(), 2 + 300);
        assert_eq!(counted.collections, 307);
        // Objects count too; a member named `v` is counted as if it were a
        // payload (an upper bound: room, not values).
        let objects = r#"[{"t":"object","v":{"k":{"t":"array","v":[]},"v":{"t":"null"}}}]"#;
        let sizes = TextSizes::count(serde_json::Deserializer::from_str(objects)).unwrap();
        assert_eq!(sizes.collections, 3);
        // The absorbing pass's vectors, array by array: the long ones at
        // their length (within the collection limit), the others empty.
        let capacities: Vec<usize> = (0..8)
            .map(|_| TextSizes::vector(Some(&counted), &limits).capacity())
            .collect();
        assert_eq!(capacities, [0, 5000, 0, 0, 0, 0, 300, LONG_ARRAY]);
        let counted = TextSizes::of_text(&text).unwrap();
        let small = Limits {
            max_collection_len: 4999,
            ..Limits::default()
        };
        let capacities: Vec<usize> = (0..2)
            .map(|_| TextSizes::vector(Some(&counted), &small).capacity())
            .collect();
        assert_eq!(capacities, [0, 0]);
        // Too deep for the counting pass, or not JSON: no lengths (the
        // absorbing pass decides).
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(TextSizes::count(serde_json::Deserializer::from_str(&deep)).is_none());
        assert!(TextSizes::count(serde_json::Deserializer::from_str("[1,")).is_none());
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
        assert_eq!(heap.cells().len(), 100);
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
        assert!(heap.cells().is_empty());
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
