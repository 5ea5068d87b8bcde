//! The members of an object cell, kept in key byte order.
//!
//! Listings, checkpoints and equality walk an object's members in key
//! byte order (facts note (e)), which a `BTreeMap` gives at a price: its
//! first leaf node holds room for eleven members, about 450 bytes for an
//! object of one member. Most objects a workflow builds or receives are
//! small records, so [`ObjectMap`] keeps up to [`SMALL_MEMBERS`] members in
//! a sorted vector that grows one power of two at a time (one member costs
//! 40 bytes) and moves to a `BTreeMap` past that size, where inserting in
//! the middle of a vector would cost time in proportion to its length.
//! The order, and so every encoding, is the same in both forms. The map is
//! generic over the member value (the engine uses `ObjectMap<Value>`), so
//! this file and `value.rs` do not import each other.

use std::collections::BTreeMap;
use std::collections::btree_map;

/// The most members kept in the sorted vector before the map moves to a
/// `BTreeMap`.
pub const SMALL_MEMBERS: usize = 16;

/// An object's members in key byte order.
#[derive(Debug, Clone)]
pub enum ObjectMap<V> {
    /// Up to [`SMALL_MEMBERS`] members, sorted by key, keys unique.
    Small(Vec<(String, V)>),
    /// More members than that.
    Large(BTreeMap<String, V>),
}

impl<V> Default for ObjectMap<V> {
    fn default() -> Self {
        ObjectMap::new()
    }
}

impl<V> ObjectMap<V> {
    /// An object with no members (no allocation).
    pub fn new() -> ObjectMap<V> {
        ObjectMap::Small(Vec::new())
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        match self {
            ObjectMap::Small(members) => members.len(),
            ObjectMap::Large(members) => members.len(),
        }
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of member `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        match self {
            ObjectMap::Small(members) => members
                .binary_search_by(|(k, _)| k.as_str().cmp(key))
                .ok()
                .map(|at| &members[at].1),
            ObjectMap::Large(members) => members.get(key),
        }
    }

    /// Whether member `key` exists.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets member `key`, returning its previous value.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self {
            ObjectMap::Small(members) => {
                match members.binary_search_by(|(k, _)| k.as_str().cmp(key.as_str())) {
                    Ok(at) => Some(std::mem::replace(&mut members[at].1, value)),
                    Err(at) if members.len() < SMALL_MEMBERS => {
                        if members.len() == members.capacity() {
                            // Grow 1, 2, 4, …: a record of one member holds
                            // room for one, not the four `Vec` starts with.
                            members.reserve_exact(members.len().max(1));
                        }
                        members.insert(at, (key, value));
                        None
                    }
                    Err(_) => {
                        let mut large: BTreeMap<String, V> =
                            std::mem::take(members).into_iter().collect();
                        large.insert(key, value);
                        *self = ObjectMap::Large(large);
                        None
                    }
                }
            }
            ObjectMap::Large(members) => members.insert(key, value),
        }
    }

    /// Removes member `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        match self {
            ObjectMap::Small(members) => members
                .binary_search_by(|(k, _)| k.as_str().cmp(key))
                .ok()
                .map(|at| members.remove(at).1),
            ObjectMap::Large(members) => members.remove(key),
        }
    }

    /// The members in key byte order.
    pub fn iter(&self) -> Iter<'_, V> {
        match self {
            ObjectMap::Small(members) => Iter::Small(members.iter()),
            ObjectMap::Large(members) => Iter::Large(members.iter()),
        }
    }

    /// The keys in byte order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + ExactSizeIterator + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values in key byte order.
    pub fn values(&self) -> Values<'_, V> {
        Values(self.iter())
    }
}

impl<V> FromIterator<(String, V)> for ObjectMap<V> {
    /// Later members replace earlier ones with the same key.
    fn from_iter<I: IntoIterator<Item = (String, V)>>(members: I) -> ObjectMap<V> {
        let mut map = ObjectMap::new();
        for (key, value) in members {
            map.insert(key, value);
        }
        map
    }
}

impl<'a, V> IntoIterator for &'a ObjectMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = Iter<'a, V>;
    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

/// The members of an [`ObjectMap`] in key byte order.
#[derive(Debug, Clone)]
pub enum Iter<'a, V> {
    /// Over the sorted vector.
    Small(std::slice::Iter<'a, (String, V)>),
    /// Over the `BTreeMap`.
    Large(btree_map::Iter<'a, String, V>),
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a String, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(members) => members.next().map(|(k, v)| (k, v)),
            Iter::Large(members) => members.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Small(members) => members.size_hint(),
            Iter::Large(members) => members.size_hint(),
        }
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Small(members) => members.next_back().map(|(k, v)| (k, v)),
            Iter::Large(members) => members.next_back(),
        }
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

/// The values of an [`ObjectMap`] in key byte order.
#[derive(Debug, Clone)]
pub struct Values<'a, V>(Iter<'a, V>);

impl<'a, V> Iterator for Values<'a, V> {
    type Item = &'a V;
    fn next(&mut self) -> Option<&'a V> {
        self.0.next().map(|(_, v)| v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<'a, V> DoubleEndedIterator for Values<'a, V> {
    fn next_back(&mut self) -> Option<&'a V> {
        self.0.next_back().map(|(_, v)| v)
    }
}

impl<V> ExactSizeIterator for Values<'_, V> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, u8),
        Remove(String),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct keys make repeats and removals of present keys
        // likely; up to 40 of them cross SMALL_MEMBERS.
        let key = "[a-c]{0,2}|k[0-9]{1,2}";
        prop_oneof![
            3 => (key, any::<u8>()).prop_map(|(k, v)| Op::Insert(k, v)),
            1 => key.prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn behaves_as_a_btree_map(ops in proptest::collection::vec(op(), 0..120)) {
            let mut map: ObjectMap<u8> = ObjectMap::new();
            let mut model: BTreeMap<String, u8> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let got = map.insert(k.clone(), v);
                        let want = model.insert(k, v);
                        prop_assert_eq!(got, want);
                    }
                    Op::Remove(k) => {
                        let got = map.remove(&k);
                        let want = model.remove(&k);
                        prop_assert_eq!(got, want);
                    }
                }
                prop_assert_eq!(map.len(), model.len());
                let listed: Vec<(&String, &u8)> = map.iter().collect();
                let modelled: Vec<(&String, &u8)> = model.iter().collect();
                prop_assert_eq!(&listed, &modelled);
                let reversed: Vec<&String> = map.keys().rev().collect();
                let model_reversed: Vec<&String> = model.keys().rev().collect();
                prop_assert_eq!(reversed, model_reversed);
                for k in model.keys() {
                    prop_assert!(map.contains_key(k));
                    prop_assert_eq!(map.get(k), model.get(k));
                }
                prop_assert!(!map.contains_key("absent-key"));
            }
        }
    }

    #[test]
    fn a_record_of_one_member_holds_room_for_one() {
        let mut map = ObjectMap::new();
        map.insert("k".to_string(), ());
        match &map {
            ObjectMap::Small(members) => assert_eq!(members.capacity(), 1),
            ObjectMap::Large(_) => panic!("one member must stay in the vector"),
        }
    }

    #[test]
    fn moves_to_a_btree_map_past_the_small_size_and_keeps_the_order() {
        let mut map = ObjectMap::new();
        for i in (0..=SMALL_MEMBERS).rev() {
            map.insert(format!("k{i:02}"), i);
        }
        assert!(matches!(map, ObjectMap::Large(_)));
        let keys: Vec<&String> = map.keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(map.len(), SMALL_MEMBERS + 1);
    }
}
