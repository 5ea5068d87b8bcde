//! The stored source text (`crate::source`) and its storage trait, which
//! both store backends implement (`store::sqlite::source`,
//! `store::pg::source`).

use crate::store::{Store, StoreError};

/// The source text an artifact was compiled from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSource {
    /// The file name, as the frontend wrote it into the artifact's spans.
    pub file: String,
    /// The whole text.
    pub text: String,
}

/// The `artifact_sources` rows.
pub trait SourceStore: Send + Sync {
    /// Keeps `source` beside artifact `hash` (replacing an earlier one).
    /// `NotFound` when no such artifact is stored.
    fn put_source(&self, hash: &str, source: &ArtifactSource, now: i64) -> Result<(), StoreError>;
    /// The source kept beside artifact `hash`, if any.
    fn get_source(&self, hash: &str) -> Result<Option<ArtifactSource>, StoreError>;
}

/// The source rows of `store`, when its backend keeps them (both of this
/// crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn SourceStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

/// The source of artifact `hash`: `None` when none was kept, or the store
/// keeps none.
pub fn get(store: &dyn Store, hash: &str) -> Result<Option<ArtifactSource>, StoreError> {
    match store_of(store) {
        Some(s) => s.get_source(hash),
        None => Ok(None),
    }
}

/// Keeps `source` beside artifact `hash`; `Unsupported` for a store that
/// keeps no sources.
pub fn put(store: &dyn Store, hash: &str, source: &ArtifactSource) -> Result<(), StoreError> {
    match store_of(store) {
        Some(s) => s.put_source(hash, source, crate::ids::now_ms()),
        None => Err(StoreError::Unsupported("artifact sources".into())),
    }
}
