//! Producer provenance (ancillary kind 2) and target materialization
//! records (kind 3), docs/zlm/ancillary.md.
//!
//! ```text
//! provenance: u32 length + UTF-8 tool, u32 length + UTF-8 version,
//!             u32 source count; per source: u32 length + UTF-8 path,
//!             SHA-256 of the source's bytes (32), ascending by path
//! target:     the artifact address the materialization was built from (32),
//!             u32 length + UTF-8 target record (JSON)
//! ```

use super::bytes::{Cursor, len_u32, put_str, put_u32};
use crate::error::{Error, Result, code};
use crate::hash::Id;
use sha2::{Digest, Sha256};

/// Who produced an artifact, from what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The producing tool (`irkit`).
    pub tool: String,
    /// Its version.
    pub version: String,
    /// Each source as (path, SHA-256 of its bytes), ascending by path.
    pub sources: Vec<(String, Id)>,
}

impl Provenance {
    /// A record for `tool` `version` made from `sources` (path, bytes).
    pub fn new(tool: &str, version: &str, sources: &[(&str, &[u8])]) -> Provenance {
        let mut sources: Vec<(String, Id)> = sources
            .iter()
            .map(|(path, bytes)| ((*path).to_string(), Sha256::digest(bytes).into()))
            .collect();
        sources.sort();
        sources.dedup_by(|a, b| a.0 == b.0);
        Provenance {
            tool: tool.into(),
            version: version.into(),
            sources,
        }
    }

    /// The canonical body bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_str(&mut out, &self.tool);
        put_str(&mut out, &self.version);
        put_u32(&mut out, len_u32(self.sources.len()));
        for (path, digest) in &self.sources {
            put_str(&mut out, path);
            out.extend_from_slice(digest);
        }
        out
    }

    /// Reads a body at file offset `base`.
    pub fn decode(body: &[u8], base: u64) -> Result<Provenance> {
        let mut c = Cursor::new(body, base, "provenance");
        let tool = c.string("tool")?;
        let version = c.string("version")?;
        let n = c.count(4 + 1 + 32, "sources")?;
        let mut sources: Vec<(String, Id)> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = c.offset();
            let path = c.string("source path")?;
            let digest = c.id()?;
            if sources.last().is_some_and(|(prev, _)| *prev >= path) {
                return Err(Error::at(
                    code::ANCILLARY_RECORD,
                    at,
                    "provenance: sources are not strictly ascending by path",
                ));
            }
            sources.push((path, digest));
        }
        c.end()?;
        Ok(Provenance {
            tool,
            version,
            sources,
        })
    }
}

/// A target materialization record: a native build's target record and the
/// artifact address it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetMaterialization {
    /// The artifact address of the payload that was built.
    pub artifact: Id,
    /// The target record (JSON text, every C0-EXEC-003 field).
    pub record: String,
}

impl TargetMaterialization {
    /// The canonical body bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.artifact.to_vec();
        put_str(&mut out, &self.record);
        out
    }

    /// Reads a body at file offset `base`.
    pub fn decode(body: &[u8], base: u64) -> Result<TargetMaterialization> {
        let mut c = Cursor::new(body, base, "target materialization record");
        let artifact = c.id()?;
        let record = c.string("target record")?;
        c.end()?;
        Ok(TargetMaterialization { artifact, record })
    }
}
