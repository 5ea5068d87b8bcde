//! Little-endian reading and writing for the ancillary records: a bounds-
//! checked cursor whose every read fails with a located `ZLM-ANCILLARY-RECORD`
//! error instead of panicking, and the matching writer helpers. A leaf the
//! container and the record kinds share.

use crate::error::{Error, Result, code};
use crate::hash::Id;

/// A cursor over untrusted bytes that start at absolute offset `base`.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    base: u64,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor over `bytes` (at file offset `base`) reading a `what`.
    pub(crate) fn new(bytes: &'a [u8], base: u64, what: &'static str) -> Self {
        Cursor {
            bytes,
            at: 0,
            base,
            what,
        }
    }
    /// The absolute offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.at as u64
    }
    /// A `code` error at the next byte.
    pub(crate) fn fail(&self, code: &'static str, msg: impl std::fmt::Display) -> Error {
        Error::at(code, self.offset(), format!("{}: {msg}", self.what))
    }
    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }
    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.fail(
                code::ANCILLARY_RECORD,
                format!("needs {n} bytes, {} remain", self.remaining()),
            ));
        }
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }
    /// A `u32le`.
    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A `u64le`.
    pub(crate) fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }
    /// A raw 32-byte ID.
    pub(crate) fn id(&mut self) -> Result<Id> {
        let mut id = [0u8; 32];
        id.copy_from_slice(self.take(32)?);
        Ok(id)
    }
    /// A count of items each at least `min_bytes` long: rejected before
    /// anything is allocated when the remaining bytes cannot hold them.
    pub(crate) fn count(&mut self, min_bytes: usize, what: &str) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.remaining() {
            return Err(self.fail(
                code::ANCILLARY_RECORD,
                format!(
                    "{n} {what} cannot fit in the {} remaining bytes",
                    self.remaining()
                ),
            ));
        }
        Ok(n)
    }
    /// A `u32le`-length-prefixed nonempty UTF-8 string.
    pub(crate) fn string(&mut self, what: &str) -> Result<String> {
        let at = self.offset();
        let len = self.u32()? as usize;
        let b = self.take(len)?;
        if b.is_empty() {
            return Err(Error::at(
                code::ANCILLARY_RECORD,
                at,
                format!("{}: empty {what}", self.what),
            ));
        }
        String::from_utf8(b.to_vec()).map_err(|_| {
            Error::at(
                code::ANCILLARY_RECORD,
                at,
                format!("{}: {what} is not UTF-8", self.what),
            )
        })
    }
    /// `Ok` when every byte was read.
    pub(crate) fn end(&self) -> Result<()> {
        if self.remaining() != 0 {
            return Err(self.fail(
                code::ANCILLARY_RECORD,
                format!("{} trailing bytes", self.remaining()),
            ));
        }
        Ok(())
    }
}

/// Appends `u32le(v)`.
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a `u32le` length (saturating at `u32::MAX`, which no reader
/// accepts as a count of a shorter remainder) and the string's bytes.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, u32::try_from(s.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(s.as_bytes());
}

/// `u32` of a collection length (saturating).
pub(crate) fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
