//! The parsed artifacts of the execution page (issue 35, review): the page
//! polls every 500 ms, and each answer needs the artifact's JSON tree (its
//! spans and instructions, [`super::view`]). An artifact never changes
//! under its hash (content-addressed, checked at registration), so its
//! tree is parsed once per hash and kept, bounded by the number of
//! artifacts and by the bytes of their texts; the least recently used goes
//! first. A missing artifact is not kept (it may be registered later).

use crate::store::StoreError;
use serde_json::Value as J;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most artifacts a host keeps parsed.
pub const MAX_ENTRIES: usize = 64;
/// Most bytes of artifact text a host keeps parsed (an artifact larger
/// than this is parsed for each answer, never kept).
pub const MAX_BYTES: usize = 64 << 20;

/// Parsed artifacts by hash, bounded (see the module documentation).
pub struct ArtifactCache {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    by_hash: HashMap<String, Entry>,
    bytes: usize,
    clock: u64,
}

struct Entry {
    tree: Arc<J>,
    bytes: usize,
    used: u64,
}

impl Default for ArtifactCache {
    fn default() -> ArtifactCache {
        ArtifactCache::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl ArtifactCache {
    /// A cache of at most `max_entries` artifacts and `max_bytes` bytes of
    /// their texts.
    pub fn new(max_entries: usize, max_bytes: usize) -> ArtifactCache {
        ArtifactCache {
            max_entries,
            max_bytes,
            inner: Mutex::new(Kept::default()),
        }
    }

    /// The tree of artifact `hash`: kept, or read by `read` (its stored
    /// bytes; `None`: no such artifact), parsed and kept. Text that is not
    /// JSON is [`StoreError::Corrupt`].
    pub fn get_or_parse(
        &self,
        hash: &str,
        read: impl FnOnce() -> Result<Option<Vec<u8>>, StoreError>,
    ) -> Result<Option<Arc<J>>, StoreError> {
        if let Ok(mut kept) = self.inner.lock() {
            kept.clock += 1;
            let now = kept.clock;
            if let Some(e) = kept.by_hash.get_mut(hash) {
                e.used = now;
                return Ok(Some(e.tree.clone()));
            }
        }
        let Some(bytes) = read()? else {
            return Ok(None);
        };
        let tree: Arc<J> = Arc::new(
            serde_json::from_slice(&bytes)
                .map_err(|e| StoreError::Corrupt(format!("artifact {hash}: {e}")))?,
        );
        self.keep(hash, tree.clone(), bytes.len());
        Ok(Some(tree))
    }

    fn keep(&self, hash: &str, tree: Arc<J>, bytes: usize) {
        if bytes > self.max_bytes || self.max_entries == 0 {
            return;
        }
        let Ok(mut kept) = self.inner.lock() else {
            return;
        };
        if kept.by_hash.contains_key(hash) {
            return;
        }
        while !kept.by_hash.is_empty()
            && (kept.by_hash.len() >= self.max_entries || kept.bytes + bytes > self.max_bytes)
        {
            let Some(oldest) = kept
                .by_hash
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(h, _)| h.clone())
            else {
                break;
            };
            if let Some(e) = kept.by_hash.remove(&oldest) {
                kept.bytes -= e.bytes;
            }
        }
        kept.clock += 1;
        let used = kept.clock;
        kept.bytes += bytes;
        kept.by_hash
            .insert(hash.to_string(), Entry { tree, bytes, used });
    }

    /// How many artifacts are kept.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |k| k.by_hash.len())
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of the texts of the artifacts kept.
    pub fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |k| k.bytes)
    }
}
