//! A heap's digest: what an execution keeps of its delta base's heap
//! (issue 42, F3).
//!
//! A delta checkpoint writes a changed heap whole (`continuation.rs`,
//! `write_delta`), so the base of the next delta needs its heap only to
//! tell whether the heap changed. Keeping the confirmed heap's cells for
//! that held a second copy of every heap value for the life of each
//! execution (16 bytes a value and more: a start with 99 990 zeros peaked
//! at the heap twice). The base keeps this digest instead: SHA-256 over an
//! unambiguous encoding of exactly what [`Cell::same_encoding`] compares
//! (every cell in id order, holes included; numbers by their bits, every
//! NaN one NaN), so that two heaps with the same checkpoint text have the
//! same digest, and two that differ have different digests unless SHA-256
//! collides.

use crate::value::{Cell, Heap, Value};
use sha2::{Digest, Sha256};

/// The SHA-256 digest of a heap's checkpoint content ([`Heap::digest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapDigest([u8; 32]);

impl Heap {
    /// This heap's digest: equal for heaps that are
    /// [`Heap::same_encoding`], different otherwise.
    pub fn digest(&self) -> HeapDigest {
        let mut feed = Feed::default();
        feed.len(self.cells().len());
        for cell in self.cells() {
            feed.cell(cell);
        }
        HeapDigest(feed.finish())
    }
}

/// Bytes fed to SHA-256 through a buffer (one `update` per few
/// kilobytes, not per value).
struct Feed {
    hasher: Sha256,
    buf: Vec<u8>,
}

impl Default for Feed {
    fn default() -> Feed {
        Feed {
            hasher: Sha256::new(),
            buf: Vec::with_capacity(FEED_PIECE + 64),
        }
    }
}

/// Bytes buffered before they are hashed.
const FEED_PIECE: usize = 4096;

impl Feed {
    fn bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= FEED_PIECE {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }

    fn byte(&mut self, byte: u8) {
        self.bytes(&[byte]);
    }

    /// A count or length (so that what follows has one reading).
    fn len(&mut self, len: usize) {
        self.bytes(&(len as u64).to_le_bytes());
    }

    fn id(&mut self, id: u32) {
        self.bytes(&id.to_le_bytes());
    }

    fn text(&mut self, text: &str) {
        self.len(text.len());
        self.bytes(text.as_bytes());
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Undefined => self.byte(0),
            Value::Null => self.byte(1),
            Value::Bool(b) => self.bytes(&[2, u8::from(*b)]),
            Value::Number(n) => {
                // `same_encoding`: bitwise, every NaN equal.
                let bits = if n.is_nan() { f64::NAN } else { *n }.to_bits();
                self.byte(3);
                self.bytes(&bits.to_le_bytes());
            }
            Value::Str(s) => {
                self.byte(4);
                self.text(s);
            }
            Value::Ref(id) => {
                self.byte(5);
                self.id(*id);
            }
        }
    }

    fn cell(&mut self, cell: &Cell) {
        match cell {
            Cell::Hole => self.byte(0),
            Cell::Object(members) => {
                self.byte(1);
                self.len(members.len());
                for (key, value) in members {
                    self.text(key);
                    self.value(value);
                }
            }
            Cell::Array(items) => {
                self.byte(2);
                self.len(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Cell::Var(value) => {
                self.byte(3);
                self.value(value);
            }
            Cell::Env(ids) => {
                self.byte(4);
                self.len(ids.len());
                for id in ids {
                    self.id(*id);
                }
            }
            Cell::Closure { func, env } => {
                self.byte(5);
                self.id(*func);
                self.id(*env);
            }
        }
    }

    fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.buf);
        self.hasher.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object_map::ObjectMap;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Undefined),
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(f64::NAN),
                Just(-f64::NAN),
                Just(f64::INFINITY),
                (-3i32..3).prop_map(f64::from),
                any::<f64>(),
            ]
            .prop_map(Value::Number),
            "[a-b\"\\\\é]{0,3}".prop_map(|s| Value::string(&s)),
            (0u32..3).prop_map(Value::Ref),
        ]
    }

    fn cell() -> impl Strategy<Value = Cell> {
        prop_oneof![
            Just(Cell::Hole),
            prop::collection::vec(("[a-c]{0,2}", value()), 0..3).prop_map(|members| {
                let mut map = ObjectMap::new();
                for (k, v) in members {
                    map.insert(k, v);
                }
                Cell::Object(map)
            }),
            prop::collection::vec(value(), 0..4).prop_map(Cell::Array),
            value().prop_map(Cell::Var),
            prop::collection::vec(0u32..3, 0..3).prop_map(Cell::Env),
            (0u32..3, 0u32..3).prop_map(|(func, env)| Cell::Closure { func, env }),
        ]
    }

    fn heap() -> impl Strategy<Value = Heap> {
        prop::collection::vec(cell(), 0..4).prop_map(Heap::from_cells)
    }

    #[test]
    fn the_empty_heap_and_a_hole_differ_and_digests_are_stable() {
        let empty = Heap::default();
        let hole = Heap::from_cells(vec![Cell::Hole]);
        assert_ne!(empty.digest(), hole.digest());
        assert_eq!(hole.digest(), hole.clone().digest());
        // An array of one string and two of its halves: lengths keep them
        // apart.
        let one = Heap::from_cells(vec![Cell::Array(vec![Value::string("ab")])]);
        let two = Heap::from_cells(vec![Cell::Array(vec![
            Value::string("a"),
            Value::string("b"),
        ])]);
        assert_ne!(one.digest(), two.digest());
    }

    proptest! {
        /// Digests are equal exactly when the heaps are the same to a
        /// checkpoint (small heaps from a few values, so that equal and
        /// unequal pairs both come up often).
        #[test]
        fn digests_are_equal_exactly_when_heaps_encode_the_same(a in heap(), b in heap()) {
            prop_assert_eq!(a.digest() == b.digest(), a.same_encoding(&b));
            prop_assert_eq!(a.digest(), a.clone().digest());
        }

        /// Changing any one value of a heap changes its digest unless the
        /// value encodes the same.
        #[test]
        fn one_changed_value_changes_the_digest(a in heap(), v in value(), at in any::<prop::sample::Index>()) {
            let mut b = a.clone();
            let slots: Vec<(usize, usize)> = b.cells().iter().enumerate().flat_map(|(i, c)| {
                let n = match c { Cell::Array(items) => items.len(), Cell::Var(_) => 1, _ => 0 };
                (0..n).map(move |j| (i, j))
            }).collect();
            prop_assume!(!slots.is_empty());
            let (i, j) = slots[at.index(slots.len())];
            match b.get_mut(i as u32).unwrap() {
                Cell::Array(items) => items[j] = v,
                Cell::Var(x) => *x = v,
                _ => unreachable!(),
            }
            prop_assert_eq!(a.digest() == b.digest(), a.same_encoding(&b));
        }
    }
}
