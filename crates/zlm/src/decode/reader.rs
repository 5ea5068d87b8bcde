//! Reading untrusted bytes: the header, the section starts derived with
//! checked arithmetic, and bounds-checked access to records, ranges and
//! pool strings.

use crate::error::{Error, Result, code};
use crate::hash::Id;
use crate::layout::{HEADER_BYTES, MAGIC, MAJOR, MINOR, NONE, Section, header};

/// The input with its header checked and every section located.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    /// Every section's (section, start, byte length), in order.
    pub(crate) starts: Vec<(Section, u64, u64)>,
    /// Section start offsets, indexed by `Section as usize`.
    start_of: [u64; 23],
    /// Record counts (byte lengths for the pools), indexed by `Section as usize`.
    counts: [u64; 23],
}

/// The little-endian u32 at `at` (inside bounds the caller has checked).
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The little-endian u64 at `at` (inside bounds the caller has checked).
pub(crate) fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// One fixed-size record; fields are addressed by the byte offsets of
/// [`crate::layout::field`].
pub(crate) struct Rec<'a> {
    /// The record's bytes.
    pub(crate) bytes: &'a [u8],
    /// Its offset in the input.
    pub(crate) offset: u64,
}

impl Rec<'_> {
    /// The 32-byte identity at `field`.
    pub(crate) fn id(&self, field: usize) -> Id {
        let mut id = [0u8; 32];
        id.copy_from_slice(&self.bytes[field..field + 32]);
        id
    }
    /// The u32 word at `field`.
    pub(crate) fn word(&self, field: usize) -> u32 {
        read_u32(self.bytes, field)
    }
    /// The u32 word after the one at `field` (a slice length, a range count).
    pub(crate) fn next_word(&self, field: usize) -> u32 {
        read_u32(self.bytes, field + 4)
    }
    /// The input offset of `field`.
    pub(crate) fn at(&self, field: usize) -> u64 {
        self.offset + field as u64
    }
}

impl<'a> Reader<'a> {
    /// Start offset of section `section`.
    #[inline]
    pub(crate) fn start(&self, section: Section) -> u64 {
        self.start_of[section as usize]
    }
    /// Record count of section `section` (byte length for the pools).
    #[inline]
    pub(crate) fn count(&self, section: Section) -> u64 {
        self.counts[section as usize]
    }
    /// Record `index` of section `section` (`index` below its count).
    pub(crate) fn rec(&self, section: Section, index: u64) -> Rec<'a> {
        let size = section.record_size();
        let off = self.start(section) + index * size;
        Rec {
            bytes: &self.bytes[off as usize..(off + size) as usize],
            offset: off,
        }
    }
    /// Checks `index < count(section)`.
    pub(crate) fn index(&self, section: Section, index: u32, at: u64, what: &str) -> Result<u64> {
        if u64::from(index) < self.count(section) {
            Ok(u64::from(index))
        } else {
            Err(Error::at(
                code::REF,
                at,
                format!(
                    "{what} {index} is outside the {} table ({} entries)",
                    section.name(),
                    self.count(section)
                ),
            ))
        }
    }
    /// Checks a range `start, count` against table `section`.
    pub(crate) fn range(
        &self,
        section: Section,
        start: u32,
        count: u32,
        at: u64,
        what: &str,
    ) -> Result<std::ops::Range<u64>> {
        let end = u64::from(start) + u64::from(count);
        if end > self.count(section) {
            return Err(Error::at(
                code::REF,
                at,
                format!(
                    "{what} range {start}+{count} exceeds the {} table ({} entries)",
                    section.name(),
                    self.count(section)
                ),
            ));
        }
        Ok(u64::from(start)..end)
    }
    /// The UTF-8 string-pool slice `off`+`len` (nonempty).
    pub(crate) fn string(&self, off: u32, len: u32, at: u64, what: &str) -> Result<String> {
        let pool = self.count(Section::Strings);
        let end = u64::from(off) + u64::from(len);
        if end > pool || len == 0 {
            return Err(Error::at(
                code::STRING,
                at,
                format!(
                    "{what} string slice {off}+{len} is not a nonempty slice of the {pool}-byte pool"
                ),
            ));
        }
        let start = self.start(Section::Strings);
        let slice = &self.bytes[(start + u64::from(off)) as usize..(start + end) as usize];
        String::from_utf8(slice.to_vec())
            .map_err(|_| Error::at(code::STRING, at, format!("{what} is not valid UTF-8")))
    }
}

impl<'a> Reader<'a> {
    /// The range whose start and count words begin at `field` of `rec`,
    /// checked against table `section`.
    pub(crate) fn range_at(
        &self,
        rec: &Rec,
        field: usize,
        section: Section,
        what: &str,
    ) -> Result<std::ops::Range<u64>> {
        self.range(
            section,
            rec.word(field),
            rec.next_word(field),
            rec.at(field),
            what,
        )
    }
    /// The string whose pool offset and length words begin at `field` of `rec`.
    pub(crate) fn string_at(&self, rec: &Rec, field: usize, what: &str) -> Result<String> {
        self.string(rec.word(field), rec.next_word(field), rec.at(field), what)
    }
}

/// Reads and checks the header and derives every section start.
pub(crate) fn sections(bytes: &[u8]) -> Result<Reader<'_>> {
    if bytes.len() < HEADER_BYTES {
        return Err(Error::at(
            code::LENGTH,
            bytes.len() as u64,
            format!("{} bytes is shorter than the 256-byte header", bytes.len()),
        ));
    }
    if &bytes[0..4] != MAGIC {
        return Err(Error::at(code::HEADER, 0, "magic is not ZLM1"));
    }
    let major = u16::from_le_bytes([bytes[4], bytes[5]]);
    let minor = u16::from_le_bytes([bytes[6], bytes[7]]);
    if major != MAJOR || minor != MINOR {
        return Err(Error::at(
            code::SCHEMA,
            4,
            format!(
                "unsupported schema {major}.{minor}: this reader implements only schema 1.9 (docs/zlm/format.md)"
            ),
        ));
    }
    if read_u32(bytes, header::HEADER_BYTES) != 256 {
        return Err(Error::at(
            code::HEADER,
            header::HEADER_BYTES as u64,
            "header size field is not 256",
        ));
    }
    if read_u32(bytes, header::FLAGS) != 0 {
        return Err(Error::at(
            code::HEADER,
            header::FLAGS as u64,
            "header flags are not zero",
        ));
    }
    if let Some(index) = bytes[header::RESERVED..256].iter().position(|&b| b != 0) {
        return Err(Error::at(
            code::HEADER,
            (header::RESERVED + index) as u64,
            "reserved header bytes are not zero",
        ));
    }
    let mut starts = Vec::new();
    let mut counts = [0u64; 23];
    let mut start_of = [0u64; 23];
    let mut off: u64 = HEADER_BYTES as u64;
    for section in Section::ALL {
        let count_at = section.count_offset();
        let count = match section {
            Section::Strings | Section::ConstantBytes => {
                let count = read_u64(bytes, count_at);
                if count > u64::from(u32::MAX) {
                    return Err(Error::at(
                        code::LENGTH,
                        count_at as u64,
                        format!("{} byte length {count} exceeds 0xffffffff", section.name()),
                    ));
                }
                count
            }
            _ => {
                let count = read_u32(bytes, count_at);
                if count == NONE {
                    return Err(Error::at(
                        code::LENGTH,
                        count_at as u64,
                        format!("{} count is NONE", section.name()),
                    ));
                }
                u64::from(count)
            }
        };
        let len = count
            .checked_mul(section.record_size())
            .ok_or_else(|| Error::at(code::LENGTH, count_at as u64, "section size overflows"))?;
        starts.push((section, off, len));
        counts[section as usize] = count;
        start_of[section as usize] = off;
        off = off
            .checked_add(len)
            .ok_or_else(|| Error::at(code::LENGTH, count_at as u64, "section offsets overflow"))?;
    }
    let declared = read_u64(bytes, header::MODULE_BYTES);
    if declared != off {
        return Err(Error::at(
            code::LENGTH,
            header::MODULE_BYTES as u64,
            format!("module_bytes {declared} differs from the derived end {off}"),
        ));
    }
    if off != bytes.len() as u64 {
        let at = off.min(bytes.len() as u64);
        return Err(Error::at(
            code::LENGTH,
            at,
            if off < bytes.len() as u64 {
                format!(
                    "{} trailing bytes after the derived end {off}",
                    bytes.len() as u64 - off
                )
            } else {
                format!(
                    "input is {} bytes but the header derives {off}",
                    bytes.len()
                )
            },
        ));
    }
    Ok(Reader {
        bytes,
        starts,
        start_of,
        counts,
    })
}
