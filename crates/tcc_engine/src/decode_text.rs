//! A stored continuation or delta read with its heap decoded straight from
//! the text (issue 42, F3): the heap is where a continuation's values live,
//! and a tree of it costs hundreds of bytes per value where the heap costs
//! 16. The other members (frames, stack, pending, join…: a few values
//! each) are parsed into a tree as before.
//!
//! The cells made are exactly those the tree path's `decode_heap` makes.
//! Text this fast path does not take (a syntax error, a repeated key, a
//! tag or key it does not know, an inline collection inside a cell, a
//! limit) is left to the tree path, which gives the diagnostic.

use crate::absorb_text::{Collection, Tagged, refuse};
use crate::json::{StrictTree, cell_from_json};
use crate::limits::Limits;
use crate::value::{Cell, Heap};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as J};
use std::fmt;

/// A document's members but `heap`, and its heap when it has one.
pub(crate) type Split = (Map<String, J>, Option<Heap>);

/// Splits the JSON text of a continuation or delta into its members but
/// `heap` (as trees) and its decoded heap; `None` leaves the text to the
/// tree path.
pub(crate) fn split_heap(bytes: &[u8], limits: &Limits) -> Option<Split> {
    split_heap_from(serde_json::Deserializer::from_slice(bytes), limits)
}

/// [`split_heap`] of a text read in pieces.
pub(crate) fn split_heap_reader(reader: impl std::io::Read, limits: &Limits) -> Option<Split> {
    split_heap_from(serde_json::Deserializer::from_reader(reader), limits)
}

/// [`split_heap`] of the text `de` reads.
fn split_heap_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    limits: &Limits,
) -> Option<Split> {
    let split = Document { limits }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(split)
}

/// The top-level object.
struct Document<'l> {
    limits: &'l Limits,
}

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = Split;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Split, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = Split;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a continuation object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Split, A::Error> {
        let mut members = Map::new();
        let mut heap = None;
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) || (key == "heap" && heap.is_some()) {
                return Err(refuse());
            }
            if key == "heap" {
                heap = Some(map.next_value_seed(HeapSeed {
                    limits: self.limits,
                })?);
            } else {
                let value = map.next_value_seed(StrictTree)?;
                members.insert(key, value);
            }
        }
        Ok((members, heap))
    }
}

/// The `heap` member: an array of cells.
struct HeapSeed<'l> {
    limits: &'l Limits,
}

impl<'de> DeserializeSeed<'de> for HeapSeed<'_> {
    type Value = Heap;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Heap, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for HeapSeed<'_> {
    type Value = Heap;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of heap cells")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Heap, A::Error> {
        let mut heap = Heap::default();
        while let Some(cell) = seq.next_element_seed(CellSeed {
            limits: self.limits,
        })? {
            if heap.cells().len() >= self.limits.max_heap_cells {
                return Err(refuse());
            }
            heap.push(cell);
        }
        heap.cells_mut().shrink_to_fit();
        Ok(heap)
    }
}

/// One heap cell.
struct CellSeed<'l> {
    limits: &'l Limits,
}

impl<'de> DeserializeSeed<'de> for CellSeed<'_> {
    type Value = Cell;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cell, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for CellSeed<'_> {
    type Value = Cell;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a heap cell")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        // Holes, objects, arrays and variable cells are written `t` first;
        // a closure (`env`, `func`, `t`) or anything else is read as a
        // small tree and decoded by the tree path's cell decoder.
        let Some(first) = map.next_key::<String>()? else {
            return Err(refuse());
        };
        if first != "t" {
            let mut m = Map::new();
            m.insert(first, map.next_value_seed(StrictTree)?);
            while let Some(k) = map.next_key::<String>()? {
                if m.contains_key(&k) {
                    return Err(refuse());
                }
                m.insert(k, map.next_value_seed(StrictTree)?);
            }
            return small_cell(J::Object(m), self.limits);
        }
        let tag: String = map.next_value()?;
        let mut scratch = Heap::default();
        let cell = match tag.as_str() {
            "hole" => {
                return map
                    .next_key::<de::IgnoredAny>()?
                    .map_or(Ok(Cell::Hole), |_| Err(refuse()));
            }
            "object" | "array" | "cell" => {
                if map.next_key::<String>()?.as_deref() != Some("v") {
                    return Err(refuse());
                }
                if tag == "cell" {
                    Cell::Var(map.next_value_seed(Tagged {
                        heap: &mut scratch,
                        limits: self.limits,
                        depth: 0,
                        refs: true,
                        sizes: None,
                    })?)
                } else {
                    map.next_value_seed(Collection {
                        heap: &mut scratch,
                        limits: self.limits,
                        depth: 1,
                        object: tag == "object",
                        refs: true,
                        sizes: None,
                    })?
                }
            }
            _ => {
                let mut m = Map::new();
                m.insert("t".into(), J::String(tag));
                while let Some(k) = map.next_key::<String>()? {
                    if m.contains_key(&k) {
                        return Err(refuse());
                    }
                    m.insert(k, map.next_value_seed(StrictTree)?);
                }
                return small_cell(J::Object(m), self.limits);
            }
        };
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(refuse());
        }
        Ok(cell)
    }
}

/// A cell read as a tree (closures, environments): decoded by the tree
/// path's decoder, refused if it would absorb an inline collection.
fn small_cell<E: de::Error>(j: J, limits: &Limits) -> Result<Cell, E> {
    let mut scratch = Heap::default();
    let cell = cell_from_json(&j, "$.heap", &mut scratch, limits).map_err(|_| refuse::<E>())?;
    if scratch.cells().is_empty() {
        Ok(cell)
    } else {
        Err(refuse())
    }
}
