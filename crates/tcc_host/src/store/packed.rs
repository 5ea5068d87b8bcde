//! Long texts stored deflated (issue 42, F3: a request's peak memory
//! against its body).
//!
//! A stored value's tagged text is about ten times its plain JSON for tiny
//! values (`{"t":"number","v":0}` for a `0`), and SQLite copies every text
//! it stores or reads several times over: the bound parameter, the record
//! it assembles, its overflow pages in each connection's page cache (up to
//! 2 MB a connection, kept). The SQLite store ([`Store::packs_texts`])
//! therefore writes texts of [`PACK_FROM`] bytes or more as a BLOB holding
//! their deflated bytes, which is what PostgreSQL's TOAST does on its side
//! for any value over 2 kB (the PostgreSQL store keeps text). Smaller
//! texts, the common case, are stored as they were, as TEXT.
//!
//! A [`Packed`] text is made by whoever holds the text, before the write
//! job (the driver packs a checkpoint's body before it writes the result's
//! text, so the two are not held at once), and bound as it is.
//!
//! The column's type tells the two forms apart: a TEXT value is the text
//! itself (every row written before this form, and every short one); a
//! BLOB is [`MAGIC`], the text's length in bytes (u64, little endian), then
//! a raw deflate stream. Reading a BLOB that is not this form, or that does
//! not inflate to exactly that many bytes of UTF-8, is a store error, never
//! a guess; the length read is bounded by what its compressed bytes can
//! inflate to, so a damaged header cannot make the reader allocate more.
//!
//! SQLite columns in this form: `executions.args` and `executions.result`,
//! `checkpoints.body`, `events.payload`, `effects.input` and
//! `effects.result`.
//!
//! [`Store::packs_texts`]: crate::store::Store::packs_texts

use flate2::Compression;
use rusqlite::ToSql;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, ValueRef};
use std::borrow::Cow;
use std::io::{Read, Write};

/// Texts this long or longer are stored deflated.
pub const PACK_FROM: usize = 64 * 1024;

/// The first bytes of a deflated text's BLOB.
pub const MAGIC: &[u8; 4] = b"TCZ\x01";

/// Header bytes: [`MAGIC`] and the text's length.
const HEADER: usize = MAGIC.len() + 8;

/// Most bytes deflate can make from one input byte (a stored length past
/// this ratio is damaged).
const MAX_INFLATE_RATIO: u64 = 1032;

/// A text as it is bound: itself, or its deflated form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packed<'a> {
    /// Shorter than [`PACK_FROM`] (or not made shorter by deflating).
    Text(Cow<'a, str>),
    /// The BLOB described in the module's documentation.
    Deflated(Vec<u8>),
}

impl<'a> Packed<'a> {
    /// `text` bound as it is stored, borrowing it when it stays text.
    pub fn borrowed(text: &'a str) -> Packed<'a> {
        match deflate(text) {
            Some(blob) => Packed::Deflated(blob),
            None => Packed::Text(Cow::Borrowed(text)),
        }
    }
}

impl Packed<'static> {
    /// `text` bound as it is stored; a deflated text is dropped here, so
    /// that only its compressed bytes are held while the statement runs.
    pub fn owned(text: String) -> Packed<'static> {
        match deflate(&text) {
            Some(blob) => Packed::Deflated(blob),
            None => Packed::Text(Cow::Owned(text)),
        }
    }

    /// A copy of `text` as it is stored (the deflated bytes, not the text,
    /// for a long one).
    pub fn copied(text: &str) -> Packed<'static> {
        match deflate(text) {
            Some(blob) => Packed::Deflated(blob),
            None => Packed::Text(Cow::Owned(text.to_string())),
        }
    }
}

impl Packed<'_> {
    /// The text (inflated when deflated), or why a deflated one is not
    /// one.
    pub fn into_text(self) -> Result<String, String> {
        match self {
            Packed::Text(text) => Ok(text.into_owned()),
            Packed::Deflated(blob) => inflate(&blob),
        }
    }
}

impl From<String> for Packed<'static> {
    /// The text kept as text (what a store that does not pack binds).
    fn from(text: String) -> Packed<'static> {
        Packed::Text(Cow::Owned(text))
    }
}

impl From<&str> for Packed<'static> {
    /// A copy of the text kept as text.
    fn from(text: &str) -> Packed<'static> {
        Packed::Text(Cow::Owned(text.to_string()))
    }
}

impl ToSql for Packed<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Packed::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Packed::Deflated(blob) => ToSqlOutput::Borrowed(ValueRef::Blob(blob)),
        })
    }
}

/// The deflated BLOB of a long text, or `None` when it stays text (short,
/// or not made shorter by a quarter).
fn deflate(text: &str) -> Option<Vec<u8>> {
    if text.len() < PACK_FROM {
        return None;
    }
    let mut blob = Vec::with_capacity(HEADER + text.len() / 16);
    blob.extend_from_slice(MAGIC);
    blob.extend_from_slice(&(text.len() as u64).to_le_bytes());
    let mut encoder = flate2::write::DeflateEncoder::new(blob, Compression::fast());
    // Writing to a vector fails only when memory does.
    encoder.write_all(text.as_bytes()).ok()?;
    let blob = encoder.finish().ok()?;
    (blob.len() < text.len() - text.len() / 4).then_some(blob)
}

/// A text read from a column in this form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked(pub String);

impl FromSql for Unpacked {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Unpacked> {
        match value {
            ValueRef::Text(bytes) => std::str::from_utf8(bytes)
                .map(|s| Unpacked(s.to_string()))
                .map_err(|e| FromSqlError::Other(Box::new(e))),
            ValueRef::Blob(blob) => inflate(blob)
                .map(Unpacked)
                .map_err(|message| FromSqlError::Other(message.into())),
            _ => Err(FromSqlError::InvalidType),
        }
    }
}

/// The text of a deflated BLOB, or why it is not one.
pub fn inflate(blob: &[u8]) -> Result<String, String> {
    let (Some(magic), Some(len)) = (blob.get(..MAGIC.len()), blob.get(MAGIC.len()..HEADER)) else {
        return Err("a stored BLOB too short for a deflated text".into());
    };
    if magic != MAGIC {
        return Err("a stored BLOB that is not a deflated text".into());
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(len);
    let len = u64::from_le_bytes(len_bytes);
    let body = &blob[HEADER..];
    if len > (body.len() as u64).saturating_mul(MAX_INFLATE_RATIO) {
        return Err(format!(
            "a deflated text claims {len} bytes from {} compressed bytes",
            body.len()
        ));
    }
    let len = usize::try_from(len).map_err(|_| format!("a deflated text of {len} bytes"))?;
    let mut text = Vec::with_capacity(len);
    flate2::read::DeflateDecoder::new(body)
        .take(len as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("a deflated text does not inflate: {e}"))?;
    if text.len() != len {
        return Err(format!(
            "a deflated text of {} bytes where its header says {len}",
            text.len()
        ));
    }
    String::from_utf8(text).map_err(|e| format!("a deflated text is not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stored(p: &Packed<'_>) -> Vec<u8> {
        match p {
            Packed::Text(t) => t.as_bytes().to_vec(),
            Packed::Deflated(b) => b.clone(),
        }
    }

    #[test]
    fn short_texts_stay_text_and_long_ones_deflate() {
        assert!(matches!(
            Packed::borrowed("[1,2]"),
            Packed::Text(Cow::Borrowed(_))
        ));
        let long = r#"{"t":"number","v":0},"#.repeat(PACK_FROM / 10);
        let Packed::Deflated(blob) = Packed::borrowed(&long) else {
            panic!("a long repetitive text stays text");
        };
        assert!(blob.len() * 50 < long.len(), "{} bytes", blob.len());
        assert_eq!(inflate(&blob).unwrap(), long);
        // One byte under the threshold stays text.
        let under = "x".repeat(PACK_FROM - 1);
        assert!(matches!(Packed::owned(under), Packed::Text(_)));
    }

    #[test]
    fn incompressible_texts_stay_text() {
        // A pseudo-random text deflates by less than a quarter.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let text: String = (0..PACK_FROM * 2)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'!' + (state % 94) as u8)
            })
            .collect();
        assert!(matches!(Packed::copied(&text), Packed::Text(_)));
    }

    #[test]
    fn damaged_blobs_are_errors() {
        let long = "ab".repeat(PACK_FROM);
        let Packed::Deflated(blob) = Packed::borrowed(&long) else {
            panic!("not deflated");
        };
        // Too short, another magic, a length the body cannot make, a
        // length off by one, a truncated stream, a non-UTF-8 text.
        assert!(inflate(&blob[..5]).is_err());
        let mut other = blob.clone();
        other[0] = b'X';
        assert!(inflate(&other).unwrap_err().contains("not a deflated text"));
        let mut huge = blob.clone();
        huge[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(inflate(&huge).unwrap_err().contains("claims"));
        for delta in [-1i64, 1] {
            let mut off = blob.clone();
            off[4..12].copy_from_slice(&((long.len() as i64 + delta) as u64).to_le_bytes());
            assert!(inflate(&off).is_err(), "length off by {delta} accepted");
        }
        assert!(inflate(&blob[..blob.len() - 4]).is_err());
        let mut latin = MAGIC.to_vec();
        latin.extend_from_slice(&2u64.to_le_bytes());
        let mut enc = flate2::write::DeflateEncoder::new(latin, Compression::fast());
        enc.write_all(&[0xff, 0xfe]).unwrap();
        assert!(
            inflate(&enc.finish().unwrap())
                .unwrap_err()
                .contains("UTF-8")
        );
    }

    #[test]
    fn sqlite_gives_back_what_it_was_given_in_either_form() {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (v TEXT)").unwrap();
        let long = r#"{"t":"string","v":"é"}"#.repeat(PACK_FROM / 8);
        for text in ["", "short", long.as_str()] {
            c.execute("DELETE FROM t", []).unwrap();
            c.execute("INSERT INTO t VALUES (?1)", [Packed::borrowed(text)])
                .unwrap();
            let back: Unpacked = c.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
            assert_eq!(back.0, text);
            let kind: String = c
                .query_row("SELECT typeof(v) FROM t", [], |r| r.get(0))
                .unwrap();
            assert_eq!(
                kind,
                if text.len() >= PACK_FROM {
                    "blob"
                } else {
                    "text"
                }
            );
        }
        // A NULL is no text; an integer neither.
        c.execute("DELETE FROM t", []).unwrap();
        c.execute("INSERT INTO t VALUES (NULL)", []).unwrap();
        let none: Option<Unpacked> = c.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(none, None);
        assert!(
            c.query_row("SELECT 7", [], |r| r.get::<_, Unpacked>(0))
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn any_text_round_trips(
            piece in "[a-z{}\":,0-9é]{1,40}",
            repeat in 1usize..6000,
            tail in ".{0,20}",
        ) {
            let text = format!("{}{tail}", piece.repeat(repeat));
            let packed = Packed::borrowed(&text);
            let back = match &packed {
                Packed::Text(t) => t.to_string(),
                Packed::Deflated(b) => inflate(b).unwrap(),
            };
            prop_assert_eq!(&back, &text);
            prop_assert_eq!(matches!(packed, Packed::Deflated(_)), text.len() >= PACK_FROM
                && stored(&packed).len() < text.len());
        }

        #[test]
        fn arbitrary_blobs_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
            len in 0u64..4096,
            flip in any::<(usize, u8)>(),
        ) {
            let mut blob = MAGIC.to_vec();
            blob.extend_from_slice(&bytes);
            let _ = inflate(&blob);
            let _ = inflate(&bytes);
            // A plausible header over arbitrary bytes: an error or a text of
            // exactly the stated length.
            let mut framed = MAGIC.to_vec();
            framed.extend_from_slice(&len.to_le_bytes());
            framed.extend_from_slice(&bytes);
            if let Ok(text) = inflate(&framed) {
                prop_assert_eq!(text.len() as u64, len);
            }
            // A real deflated text with one byte changed: the same.
            let long = "0123456789abcdef".repeat(PACK_FROM / 8);
            let Packed::Deflated(mut good) = Packed::borrowed(&long) else {
                panic!("not deflated");
            };
            let at = flip.0 % good.len();
            good[at] ^= flip.1.max(1);
            if let Ok(text) = inflate(&good) {
                prop_assert!(at < HEADER || text.len() == long.len());
            }
        }
    }
}
