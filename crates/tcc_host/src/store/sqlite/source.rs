//! The source rows of the SQLite backend (`crate::source`):
//! `artifact_sources`.

use super::SqliteStore;
use super::cached::Cached;
use crate::source::rows::{ArtifactSource, SourceStore};
use crate::store::StoreError;
use rusqlite::{OptionalExtension, params};

impl SourceStore for SqliteStore {
    fn put_source(&self, hash: &str, source: &ArtifactSource, now: i64) -> Result<(), StoreError> {
        let (hash, source) = (hash.to_string(), source.clone());
        self.write(move |c| {
            let stored: Option<i64> = c
                .query_row_cached(
                    "SELECT 1 FROM artifacts WHERE hash = ?1",
                    params![hash],
                    |r| r.get(0),
                )
                .optional()?;
            if stored.is_none() {
                return Err(StoreError::NotFound(format!("artifact {hash:?}")));
            }
            c.exec_cached(
                "INSERT INTO artifact_sources (hash, file, text, updated_ms) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (hash) DO UPDATE SET file = excluded.file, text = excluded.text,
                   updated_ms = excluded.updated_ms",
                params![hash, source.file, source.text, now],
            )?;
            Ok(())
        })
    }

    fn get_source(&self, hash: &str) -> Result<Option<ArtifactSource>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT file, text FROM artifact_sources WHERE hash = ?1",
                params![hash],
                |r| {
                    Ok(ArtifactSource {
                        file: r.get(0)?,
                        text: r.get(1)?,
                    })
                },
            )
            .optional()?)
        })
    }
}
