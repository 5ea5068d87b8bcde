//! Binding tables keyed by ID words, with a dense fast path for the
//! writer's spelling of IDs.
//!
//! The canonical writer numbers types, functions, parameters and blocks in
//! list order (`t0`, `t1`, ..., section 11), so a table that binds those
//! spellings in that order needs no hashing: an ID that is the table's
//! prefix letter and the decimal spelling of the next free number (no
//! leading zero) goes to a vector, every other ID to the keyed map. A
//! lookup answers exactly as one map of every binding would.

use std::collections::HashMap;

/// The number `n` when `id` is `PREFIX` followed by the decimal spelling of
/// `n` without leading zeros (at most 9 digits); `None` for anything else.
#[inline(always)]
fn numbered<const PREFIX: u8>(id: &str) -> Option<usize> {
    let (&first, digits) = id.as_bytes().split_first()?;
    if first != PREFIX || digits.is_empty() || digits.len() > 9 {
        return None;
    }
    if digits[0] == b'0' && digits.len() > 1 {
        return None;
    }
    let mut n = 0usize;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + usize::from(d - b'0');
    }
    Some(n)
}

/// ID word → value. `PREFIX` is the letter of the writer's spelling.
#[derive(Debug, Clone)]
pub(super) struct IdMap<'a, V, const PREFIX: u8> {
    /// `dense[n]` is bound to the ID `PREFIX n`; only the next number is
    /// ever appended, so every number below the length is bound.
    dense: Vec<V>,
    /// Every other binding (keyed SipHash: the IDs are input-derived).
    keyed: HashMap<&'a str, V>,
}

impl<V, const PREFIX: u8> Default for IdMap<'_, V, PREFIX> {
    fn default() -> Self {
        IdMap {
            dense: Vec::new(),
            keyed: HashMap::default(),
        }
    }
}

impl<'a, V: Copy, const PREFIX: u8> IdMap<'a, V, PREFIX> {
    /// The value bound to `id`.
    #[inline]
    pub(super) fn get(&self, id: &str) -> Option<V> {
        if let Some(n) = numbered::<PREFIX>(id)
            && let Some(v) = self.dense.get(n)
        {
            return Some(*v);
        }
        if self.keyed.is_empty() {
            return None;
        }
        self.keyed.get(id).copied()
    }

    /// Binds `id` to `value`; false, changing nothing, when `id` is
    /// already bound.
    #[inline]
    pub(super) fn insert(&mut self, id: &'a str, value: V) -> bool {
        match numbered::<PREFIX>(id) {
            Some(n) if n < self.dense.len() => false,
            Some(n) if n == self.dense.len() && !self.keyed.contains_key(id) => {
                self.dense.push(value);
                true
            }
            _ => match self.keyed.entry(id) {
                std::collections::hash_map::Entry::Occupied(_) => false,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(value);
                    true
                }
            },
        }
    }

    /// Every bound ID (for "did you mean" hints; no particular order).
    pub(super) fn ids(&self) -> Vec<String> {
        let prefix = char::from(PREFIX);
        (0..self.dense.len())
            .map(|n| format!("{prefix}{n}"))
            .chain(self.keyed.keys().map(|k| k.to_string()))
            .collect()
    }

    /// Empties the table, keeping allocations of at most `reuse` entries.
    pub(super) fn reset(&mut self, reuse: usize) {
        if self.dense.capacity() > reuse {
            self.dense = Vec::new();
        } else {
            self.dense.clear();
        }
        if self.keyed.capacity() > reuse {
            self.keyed = HashMap::default();
        } else {
            self.keyed.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdMap;
    use std::collections::HashMap;

    #[test]
    fn numbered_spellings_only() {
        let n = super::numbered::<b'b'>;
        assert_eq!(n("b0"), Some(0));
        assert_eq!(n("b17"), Some(17));
        assert_eq!(n("b999999999"), Some(999_999_999));
        for id in [
            "b",
            "b01",
            "b00",
            "t1",
            "b1x",
            "bb1",
            "B1",
            "b1234567890",
            "b-1",
        ] {
            assert_eq!(n(id), None, "{id}");
        }
    }

    /// Any sequence of bindings and lookups answers as one map would.
    #[test]
    fn agrees_with_one_map() {
        let ids = [
            "b0", "b1", "b3", "b2", "b3", "b01", "b1", "x", "b4", "b5", "x", "b10", "b6", "b7",
            "b8", "b9", "b10", "b11", "b0",
        ];
        let mut ours: IdMap<'_, usize, b'b'> = IdMap::default();
        let mut map: HashMap<&str, usize> = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            let fresh = !map.contains_key(id);
            if fresh {
                map.insert(id, i);
            }
            assert_eq!(ours.insert(id, i), fresh, "{id}");
            for probe in ids.iter().chain(&["b12", "b", "y"]) {
                assert_eq!(ours.get(probe), map.get(probe).copied(), "{probe}");
            }
        }
        let mut listed = ours.ids();
        listed.sort();
        let mut keys: Vec<String> = map.keys().map(|k| k.to_string()).collect();
        keys.sort();
        assert_eq!(listed, keys);
        ours.reset(256);
        assert_eq!(ours.get("b0"), None);
        assert!(ours.ids().is_empty());
    }
}
