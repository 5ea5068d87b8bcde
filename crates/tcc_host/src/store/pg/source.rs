//! The source rows of the PostgreSQL backend (`crate::source`):
//! `artifact_sources`.

use super::PgStore;
use crate::source::rows::{ArtifactSource, SourceStore};
use crate::store::StoreError;

impl SourceStore for PgStore {
    fn put_source(&self, hash: &str, source: &ArtifactSource, now: i64) -> Result<(), StoreError> {
        let (hash, source) = (hash.to_string(), source.clone());
        self.write(move |c| {
            if c.query_opt("SELECT 1 FROM artifacts WHERE hash = $1", &[&hash])?
                .is_none()
            {
                return Err(StoreError::NotFound(format!("artifact {hash:?}")).into());
            }
            c.execute(
                "INSERT INTO artifact_sources (hash, file, text, updated_ms) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (hash) DO UPDATE SET file = EXCLUDED.file, text = EXCLUDED.text,
                   updated_ms = EXCLUDED.updated_ms",
                &[&hash, &source.file, &source.text, &now],
            )?;
            Ok(())
        })
    }

    fn get_source(&self, hash: &str) -> Result<Option<ArtifactSource>, StoreError> {
        self.read(|c| {
            let row = c.query_opt(
                "SELECT file, text FROM artifact_sources WHERE hash = $1",
                &[&hash],
            )?;
            match row {
                None => Ok(None),
                Some(r) => Ok(Some(ArtifactSource {
                    file: r.try_get(0)?,
                    text: r.try_get(1)?,
                })),
            }
        })
    }
}
