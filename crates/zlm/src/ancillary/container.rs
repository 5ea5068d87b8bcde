//! The ancillary container (C0-ART-004, docs/zlm/ancillary.md): records that
//! travel beside a canonical payload in hash-addressed sections, appended
//! after the payload's last byte. The payload is exactly its header's
//! `module_bytes`, so its semantic identity and artifact address are those
//! of the payload alone, and the decoder ([`split`]) never reads past it.
//!
//! ```text
//! 0   4    magic "ZLMA"
//! 4   2+2  version 1.0 (u16le major, minor)
//! 8   32   the payload's artifact address
//! 40  4    section count n (u32le)
//! 44  4    reserved, zero
//! 48  48n  directory: kind u32le, reserved u32le (zero), body length u64le,
//!          section address (32 bytes)
//! ..       the bodies in directory order, ending exactly at the end
//! ```
//!
//! A section's address is `H(zerglang.zlm1.ancillary-section.v1; u32le(kind),
//! payload address, body)`. A body whose bytes do not hash to its address is
//! rejected on its own (`ZLM-ANCILLARY-HASH`); the payload and the other
//! sections are unaffected.

use super::bytes::{Cursor, len_u32, put_u32};
use crate::error::{Error, Result, code};
use crate::hash::{self, Id};
use crate::layout::{HEADER_BYTES, MAGIC as PAYLOAD_MAGIC, header};

/// The container's magic.
pub const MAGIC: &[u8; 4] = b"ZLMA";
/// The container version this reader implements.
pub const VERSION: (u16, u16) = (1, 0);
/// The hash domain of a section address.
pub const SECTION_DOMAIN: &str = "zerglang.zlm1.ancillary-section.v1";
/// Container header bytes.
const HEADER: usize = 48;
/// Directory entry bytes.
const ENTRY: usize = 48;

/// Section kinds (docs/zlm/ancillary.md).
pub mod kind {
    /// A source map (`super::super::srcmap`): op → file, line, column.
    pub const SOURCE_MAP: u32 = 1;
    /// Producer provenance: tool, version, source digests.
    pub const PROVENANCE: u32 = 2;
    /// A target materialization record (the AOT target record and the
    /// artifact address it was built from).
    pub const TARGET: u32 = 3;
    /// Whether at most one section of `kind` may be present.
    pub fn unique(kind: u32) -> bool {
        kind == SOURCE_MAP || kind == PROVENANCE
    }
}

/// One ancillary section to write: its kind and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Kind ([`kind`]).
    pub kind: u32,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Section {
    /// The section's address beside the payload whose address is `payload`.
    pub fn address(&self, payload: &Id) -> Id {
        address(self.kind, payload, &self.body)
    }
}

fn address(kind: u32, payload: &Id, body: &[u8]) -> Id {
    hash::h_slices(SECTION_DOMAIN, &[&kind.to_le_bytes(), payload, body])
}

/// The artifact address of the payload of artifact file `bytes` (the
/// container after it, if any, excluded): `H(zerglang.zlm1.artifact.v1;
/// payload)`.
pub fn payload_address(bytes: &[u8]) -> Id {
    let (payload, _) = split(bytes);
    hash::h_slices(hash::domain::ARTIFACT, &[payload])
}

/// The payload of an artifact file and the ancillary container after it,
/// if any: the bytes up to the header's `module_bytes` when more bytes
/// follow and they begin with [`MAGIC`]; otherwise the whole input (which
/// the decoder then checks, trailing bytes included).
pub fn split(bytes: &[u8]) -> (&[u8], Option<&[u8]>) {
    if bytes.len() < HEADER_BYTES || &bytes[..4] != PAYLOAD_MAGIC {
        return (bytes, None);
    }
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[header::MODULE_BYTES..header::MODULE_BYTES + 8]);
    let end = u64::from_le_bytes(w);
    match usize::try_from(end) {
        Ok(end) if end >= HEADER_BYTES && end < bytes.len() && bytes[end..].starts_with(MAGIC) => {
            (&bytes[..end], Some(&bytes[end..]))
        }
        _ => (bytes, None),
    }
}

/// `payload` followed by the container of `sections` (in canonical order:
/// by kind, then address). No sections: the payload alone.
pub fn write(payload: &[u8], sections: &[Section]) -> Vec<u8> {
    let mut out = payload.to_vec();
    if sections.is_empty() {
        return out;
    }
    let own = payload_address(payload);
    let mut ordered: Vec<(u32, Id, &[u8])> = sections
        .iter()
        .map(|s| (s.kind, s.address(&own), s.body.as_slice()))
        .collect();
    ordered.sort_by_key(|a| (a.0, a.1));
    ordered.dedup_by(|a, b| a.1 == b.1);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.0.to_le_bytes());
    out.extend_from_slice(&VERSION.1.to_le_bytes());
    out.extend_from_slice(&own);
    put_u32(&mut out, len_u32(ordered.len()));
    put_u32(&mut out, 0);
    for (kind, id, body) in &ordered {
        put_u32(&mut out, *kind);
        put_u32(&mut out, 0);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(id);
    }
    for (_, _, body) in &ordered {
        out.extend_from_slice(body);
    }
    out
}

/// One section as read: its kind, address, the file offset of its body, and
/// the body, or the rejection of a body that does not hash to its address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Kind ([`kind`]; unknown kinds are kept and ignored by the accessors).
    pub kind: u32,
    /// The address the directory gives.
    pub address: Id,
    /// File offset of the body.
    pub offset: u64,
    /// The verified body, or `ZLM-ANCILLARY-HASH`.
    pub body: Result<Vec<u8>>,
}

/// A read container: the payload address it names and its sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The payload's artifact address (equal to the payload it follows).
    pub payload: Id,
    /// Sections in directory order.
    pub entries: Vec<Entry>,
}

impl Container {
    /// The verified body of the one section of `kind`, if present: `Err`
    /// when it was rejected on its hash.
    pub fn unique_body(&self, kind: u32) -> Option<Result<&[u8]>> {
        self.entries
            .iter()
            .find(|e| e.kind == kind)
            .map(|e| e.body.as_deref().map_err(Clone::clone))
    }
    /// Every verified body of `kind` with its file offset (rejected ones
    /// as their errors).
    pub fn bodies(&self, kind: u32) -> impl Iterator<Item = (u64, Result<&[u8]>)> {
        self.entries
            .iter()
            .filter(move |e| e.kind == kind)
            .map(|e| (e.offset, e.body.as_deref().map_err(Clone::clone)))
    }
}

/// Reads the container `bytes` that follows `payload` in a file (offsets in
/// errors count from the start of the file). The container's structure —
/// magic, version, directory, order, lengths, the payload address — rejects
/// it as a whole (`ZLM-ANCILLARY`); a section whose body does not hash to
/// its address is rejected on its own ([`Entry::body`]).
pub fn read(payload: &[u8], bytes: &[u8]) -> Result<Container> {
    let base = payload.len() as u64;
    let mut c = Cursor::new(bytes, base, "ancillary container");
    let structure = |c: &Cursor, msg: String| c.fail(code::ANCILLARY, msg);
    let magic = c.take(4).map_err(relabel)?;
    if magic != MAGIC {
        return Err(Error::at(
            code::ANCILLARY,
            base,
            "ancillary container: magic is not ZLMA",
        ));
    }
    let major = c.take(2).map_err(relabel)?;
    let minor = c.take(2).map_err(relabel)?;
    let version = (
        u16::from_le_bytes([major[0], major[1]]),
        u16::from_le_bytes([minor[0], minor[1]]),
    );
    if version != VERSION {
        return Err(Error::at(
            code::ANCILLARY,
            base + 4,
            format!(
                "ancillary container: version {}.{} is not 1.0",
                version.0, version.1
            ),
        ));
    }
    let named = c.id().map_err(relabel)?;
    let own = payload_address(payload);
    if named != own {
        return Err(Error::at(
            code::ANCILLARY,
            base + 8,
            format!(
                "ancillary container: names payload {} but follows payload {}",
                hash::to_hex(&named),
                hash::to_hex(&own)
            ),
        ));
    }
    let n = c.count(ENTRY, "directory entries").map_err(relabel)?;
    if c.u32().map_err(relabel)? != 0 {
        return Err(structure(&c, "reserved word is not zero".into()));
    }
    debug_assert_eq!(c.offset() - base, HEADER as u64);
    let mut directory = Vec::with_capacity(n);
    let mut body_total: u64 = 0;
    for i in 0..n {
        let kind = c.u32().map_err(relabel)?;
        if kind == 0 {
            return Err(structure(&c, format!("section {i} has kind 0")));
        }
        if c.u32().map_err(relabel)? != 0 {
            return Err(structure(
                &c,
                format!("section {i}: reserved word is not zero"),
            ));
        }
        let len = c.u64().map_err(relabel)?;
        let id = c.id().map_err(relabel)?;
        if let Some(&(prev_kind, prev_id, _)) = directory.last() {
            let prev: (u32, Id) = (prev_kind, prev_id);
            if prev >= (kind, id) {
                return Err(structure(
                    &c,
                    format!(
                        "section {i} is not after section {} (kind, then address)",
                        i - 1
                    ),
                ));
            }
            if prev_kind == kind && kind::unique(kind) {
                return Err(structure(&c, format!("a second section of kind {kind}")));
            }
        }
        body_total = body_total.saturating_add(len);
        directory.push((kind, id, len));
    }
    if body_total != c.remaining() as u64 {
        return Err(structure(
            &c,
            format!(
                "the directory's bodies take {body_total} bytes, {} follow",
                c.remaining()
            ),
        ));
    }
    let mut entries = Vec::with_capacity(n);
    for (i, (kind, id, len)) in directory.into_iter().enumerate() {
        let offset = c.offset();
        // Lengths were checked to sum to the remainder, so each fits.
        let body = c.take(len as usize).map_err(relabel)?;
        let actual = address(kind, &own, body);
        let body = if actual == id {
            Ok(body.to_vec())
        } else {
            Err(Error::at(
                code::ANCILLARY_HASH,
                offset,
                format!(
                    "ancillary section {i} (kind {kind}) hashes to {}, not its address {}",
                    hash::to_hex(&actual),
                    hash::to_hex(&id)
                ),
            ))
        };
        entries.push(Entry {
            kind,
            address: id,
            offset,
            body,
        });
    }
    Ok(Container {
        payload: own,
        entries,
    })
}

/// A cursor error in the container's own structure is `ZLM-ANCILLARY`.
fn relabel(mut e: Error) -> Error {
    e.code = code::ANCILLARY;
    e
}
