//! Ancillary data (C0-ART-004, docs/zlm/ancillary.md): source maps, producer
//! provenance and target materialization records in hash-addressed sections
//! of a container appended after the canonical payload. Their bytes never
//! reach the payload's semantic identity or artifact address; the decoder
//! reads the payload alone.
//!
//! `bytes` (a checked little-endian cursor) is the leaf the others share;
//! `container` frames and verifies the sections; `srcmap` and `records` are
//! the record kinds.

mod bytes;
pub mod container;
pub mod records;
pub mod srcmap;

pub use container::{Container, Entry, Section, kind, read, split, write};
pub use records::{Provenance, TargetMaterialization};
pub use srcmap::{Located, SourceMap};

use crate::error::Result;

/// The records of a read container, each decoded on its own: a section
/// rejected on its hash or malformed is that record's error, never the
/// others' or the payload's.
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// The source map, if a section holds one.
    pub source_map: Option<Result<SourceMap>>,
    /// The producer provenance, if present.
    pub provenance: Option<Result<Provenance>>,
    /// The target materialization records.
    pub targets: Vec<Result<TargetMaterialization>>,
}

impl Records {
    /// Decodes the known sections of `c`.
    pub fn of(c: &Container) -> Records {
        let mut r = Records::default();
        for e in &c.entries {
            let body = e.body.as_deref().map_err(Clone::clone);
            match e.kind {
                kind::SOURCE_MAP => {
                    r.source_map = Some(body.and_then(|b| SourceMap::decode(b, e.offset)))
                }
                kind::PROVENANCE => {
                    r.provenance = Some(body.and_then(|b| Provenance::decode(b, e.offset)))
                }
                kind::TARGET => r
                    .targets
                    .push(body.and_then(|b| TargetMaterialization::decode(b, e.offset))),
                _ => {}
            }
        }
        r
    }

    /// The records of artifact file `bytes`: `Ok(None)` without a container,
    /// `Err` when the container's structure rejects as a whole.
    pub fn of_file(bytes: &[u8]) -> Result<Option<Records>> {
        match split(bytes) {
            (payload, Some(anc)) => read(payload, anc).map(|c| Some(Records::of(&c))),
            _ => Ok(None),
        }
    }
}

/// The artifact file of a module assembled from text: `payload` (its
/// canonical bytes) followed by a container holding the source map of
/// `text` (file `file`, parsed into `module` with `positions` by
/// [`crate::text::parse_with_positions`]) and the provenance of `tool`
/// `version` with the text's digest.
pub fn annotate(
    payload: &[u8],
    file: &str,
    text: &str,
    module: &crate::model::Module,
    positions: &[crate::text::FnPositions],
    tool: &str,
    version: &str,
) -> Result<Vec<u8>> {
    let map = SourceMap::from_text(file, module, positions)?;
    let provenance = Provenance::new(tool, version, &[(file, text.as_bytes())]);
    Ok(write(
        payload,
        &[
            Section {
                kind: kind::SOURCE_MAP,
                body: map.encode(),
            },
            Section {
                kind: kind::PROVENANCE,
                body: provenance.encode(),
            },
        ],
    ))
}
