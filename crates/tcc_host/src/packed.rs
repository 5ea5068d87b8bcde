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

/// A text written in pieces and packed as it is written: kept as text
/// while it is shorter than [`PACK_FROM`], then deflated piece by piece
/// (with `deflate`; a store that keeps text gets it whole), so that a long
/// text is never held whole (issue 42, F3: an execution's result, exported
/// from the heap straight into this). A text deflated this way is kept
/// deflated even where deflating did not make it a quarter shorter
/// ([`Packed::owned`] would have kept such a text as text): both forms read
/// back the same.
pub struct PackWriter {
    /// The text so far while short; then the pieces not yet deflated.
    text: String,
    /// The deflate stream once the text reached [`PACK_FROM`].
    encoder: Option<flate2::write::DeflateEncoder<Vec<u8>>>,
    /// Whether a long text is deflated.
    deflate: bool,
    /// The text's length in bytes.
    len: usize,
    /// A write to the stream failed (memory only: it writes to a vector).
    failed: bool,
}

/// Pieces deflated at once, once deflating.
const PACK_PIECE: usize = 32 * 1024;

impl PackWriter {
    /// An empty text; a long one deflated when `deflate`.
    pub fn new(deflate: bool) -> PackWriter {
        PackWriter {
            // Most texts (checkpoint bodies, results) are short: one
            // allocation for them, not a buffer grown from nothing.
            text: String::with_capacity(1024),
            encoder: None,
            deflate,
            len: 0,
            failed: false,
        }
    }

    /// Feeds the pending pieces to the stream.
    fn feed(&mut self) {
        if let Some(encoder) = &mut self.encoder {
            self.failed |= encoder.write_all(self.text.as_bytes()).is_err();
            self.text.clear();
        }
    }

    /// Starts again from an empty text.
    pub fn restart(&mut self) {
        *self = PackWriter::new(self.deflate);
    }

    /// The text as a row read back would hold it: [`Stored::Text`] while
    /// short, else [`Stored::Deflated`] (a request's long value, converted
    /// straight into its stored form; issue 42, F3).
    pub fn finish_stored(self) -> Result<Stored, String> {
        let len = self.len;
        Ok(match self.finish()? {
            Packed::Text(text) => Stored::Text(text.into_owned()),
            Packed::Deflated(blob) => Stored::Deflated { blob, len },
        })
    }

    /// The text as it is bound, or why the stream failed.
    pub fn finish(mut self) -> Result<Packed<'static>, String> {
        self.feed();
        let Some(encoder) = self.encoder else {
            return Ok(Packed::Text(Cow::Owned(self.text)));
        };
        let mut blob = encoder
            .finish()
            .map_err(|e| format!("deflating a text: {e}"))?;
        if self.failed {
            return Err("deflating a text failed".into());
        }
        blob[MAGIC.len()..HEADER].copy_from_slice(&(self.len as u64).to_le_bytes());
        Ok(Packed::Deflated(blob))
    }
}

impl tcc_engine::json::TextOut for PackWriter {
    fn push_str(&mut self, s: &str) {
        self.len += s.len();
        self.text.push_str(s);
        if self.encoder.is_none() && self.deflate && self.text.len() >= PACK_FROM {
            // The length is written into the header at the end.
            self.encoder = Some(flate2::write::DeflateEncoder::new(
                blob_with_header(0, PACK_FROM),
                Compression::fast(),
            ));
            self.feed();
            // The short text's buffer goes; pieces are staged in a small one.
            self.text = String::with_capacity(PACK_PIECE + 64);
        } else if self.encoder.is_some() && self.text.len() >= PACK_PIECE {
            self.feed();
        }
    }
}

/// The deflated BLOB of a long text, or `None` when it stays text (short,
/// or not made shorter by a quarter).
fn deflate(text: &str) -> Option<Vec<u8>> {
    if text.len() < PACK_FROM {
        return None;
    }
    let blob = blob_with_header(text.len() as u64, text.len() / 16);
    let mut encoder = flate2::write::DeflateEncoder::new(blob, Compression::fast());
    // Writing to a vector fails only when memory does.
    encoder.write_all(text.as_bytes()).ok()?;
    let blob = encoder.finish().ok()?;
    (blob.len() < text.len() - text.len() / 4).then_some(blob)
}

/// A deflated BLOB's start: its header, stating a text of `len` bytes,
/// with room for `body` bytes of deflate stream after it.
fn blob_with_header(len: u64, body: usize) -> Vec<u8> {
    let mut blob = Vec::with_capacity(HEADER + body);
    blob.extend_from_slice(MAGIC);
    blob.extend_from_slice(&len.to_le_bytes());
    blob
}

/// The inflated bytes of a deflated BLOB's stream, at most `most` of them.
fn body_reader(blob: &[u8], most: u64) -> std::io::Take<flate2::read::DeflateDecoder<&[u8]>> {
    flate2::read::DeflateDecoder::new(&blob[HEADER.min(blob.len())..]).take(most)
}

/// A TEXT column's value.
fn column_text(bytes: &[u8]) -> FromSqlResult<String> {
    std::str::from_utf8(bytes)
        .map(str::to_string)
        .map_err(|e| FromSqlError::Other(Box::new(e)))
}

/// A text read from a column in this form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked(pub String);

impl FromSql for Unpacked {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Unpacked> {
        match value {
            ValueRef::Text(bytes) => column_text(bytes).map(Unpacked),
            ValueRef::Blob(blob) => inflate(blob)
                .map(Unpacked)
                .map_err(|message| FromSqlError::Other(message.into())),
            _ => Err(FromSqlError::InvalidType),
        }
    }
}

/// A text read from a column in this form and left as it is stored: a
/// deflated one is inflated only where it is used, and then straight into
/// the buffer that needs it ([`Stored::write_to`]: the status answer), so
/// that a row read holds a long value's compressed bytes, not its text.
#[derive(Debug, Clone)]
pub enum Stored {
    /// A TEXT value.
    Text(String),
    /// A BLOB in the deflated form, its header checked when read: its text
    /// is `len` bytes.
    Deflated {
        /// The BLOB as stored.
        blob: Vec<u8>,
        /// Its text's length in bytes (from the header).
        len: usize,
    },
}

impl Stored {
    /// The text as it is bound: a deflated one as it is (its compressed
    /// bytes copied, not inflated), a text deflated when long
    /// ([`Packed::copied`]).
    pub fn to_packed(&self) -> Packed<'static> {
        match self {
            Stored::Text(text) => Packed::copied(text),
            Stored::Deflated { blob, .. } => Packed::Deflated(blob.clone()),
        }
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Stored::Text(text) => text.len(),
            Stored::Deflated { len, .. } => *len,
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text, inflated when deflated.
    pub fn text(&self) -> Result<Cow<'_, str>, String> {
        match self {
            Stored::Text(text) => Ok(Cow::Borrowed(text)),
            Stored::Deflated { blob, .. } => inflate(blob).map(Cow::Owned),
        }
    }

    /// The text, owned.
    pub fn into_text(self) -> Result<String, String> {
        match self {
            Stored::Text(text) => Ok(text),
            Stored::Deflated { blob, .. } => inflate(&blob),
        }
    }

    /// Appends the text to `out` (inflating it there, not into a buffer of
    /// its own); `out` is left as it was on an error.
    pub fn write_to(&self, out: &mut String) -> Result<(), String> {
        match self {
            Stored::Text(text) => {
                out.push_str(text);
                Ok(())
            }
            Stored::Deflated { blob, len } => {
                let mut bytes = std::mem::take(out).into_bytes();
                let start = bytes.len();
                bytes.reserve_exact(*len);
                let inflated = inflate_onto(blob, *len, &mut bytes);
                if inflated.is_err() {
                    bytes.truncate(start);
                }
                // One check of the whole: what precedes `start` was a
                // `String`, so the answer is UTF-8 exactly when the text is.
                match String::from_utf8(bytes) {
                    Ok(text) => {
                        *out = text;
                        inflated
                    }
                    Err(e) => {
                        let mut bytes = e.into_bytes();
                        bytes.truncate(start);
                        *out = String::from_utf8(bytes).unwrap_or_default();
                        Err("a deflated text is not UTF-8".into())
                    }
                }
            }
        }
    }
}

impl Stored {
    /// Checks that a deflated text inflates to exactly its stated length
    /// (reading it through, holding none of it): a text read in pieces
    /// ([`tcc_engine::absorb_text::TextSource`]) is checked so first, so
    /// that a damaged one is a store error, as [`inflate`] makes it.
    pub fn check(&self) -> Result<(), String> {
        let Stored::Deflated { blob, len } = self else {
            return Ok(());
        };
        let made = std::io::copy(
            &mut body_reader(blob, *len as u64 + 1),
            &mut std::io::sink(),
        )
        .map_err(|e| format!("a deflated text does not inflate: {e}"))?;
        made_as_stated(made, *len)
    }

    /// `read` over the text read in pieces and checked as it is read, in
    /// one pass: `Err` with why when the text is damaged (a stream that
    /// does not inflate to exactly its stated length), whatever `read`
    /// made of it, so that a damaged text is a store error and never the
    /// reader's. A reader that fails or stops before the end has the text
    /// checked through after it ([`Stored::check`]), to tell the two apart.
    pub fn read_checked<T, E>(
        &self,
        read: impl FnOnce(&dyn tcc_engine::absorb_text::TextSource) -> Result<T, E>,
    ) -> Result<Result<T, E>, String> {
        let Stored::Deflated { blob, len } = self else {
            return Ok(read(self));
        };
        let source = CheckedSource {
            blob,
            len: *len,
            fault: std::cell::RefCell::new(None),
            ended: std::cell::Cell::new(false),
        };
        let made = read(&source);
        if let Some(fault) = source.fault.into_inner() {
            return Err(fault);
        }
        if made.is_err() || !source.ended.get() {
            self.check()?;
        }
        Ok(made)
    }
}

/// `Ok` when a deflated text made the `len` bytes its header states.
fn made_as_stated(made: u64, len: usize) -> Result<(), String> {
    if made != len as u64 {
        return Err(format!(
            "a deflated text of {made} bytes where its header says {len}"
        ));
    }
    Ok(())
}

/// A deflated text read in pieces and checked as it is read
/// ([`Stored::read_checked`]).
struct CheckedSource<'a> {
    /// The BLOB as stored.
    blob: &'a [u8],
    /// Its text's length in bytes.
    len: usize,
    /// Why a reader found the text damaged.
    fault: std::cell::RefCell<Option<String>>,
    /// Whether a reader reached the text's end and found it whole.
    ended: std::cell::Cell<bool>,
}

impl tcc_engine::absorb_text::TextSource for CheckedSource<'_> {
    fn open(&self) -> Box<dyn Read + '_> {
        Box::new(std::io::BufReader::with_capacity(
            PACK_PIECE,
            CountedReader {
                inner: body_reader(self.blob, self.len as u64 + 1),
                made: 0,
                source: self,
            },
        ))
    }
}

/// The inflated text of a [`CheckedSource`], counted as it is read.
struct CountedReader<'a, R> {
    inner: R,
    /// Bytes read so far.
    made: u64,
    source: &'a CheckedSource<'a>,
}

impl<R: Read> Read for CountedReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let fault = match self.inner.read(buf) {
            Ok(n) => {
                self.made += n as u64;
                if n > 0 && self.made <= self.source.len as u64 {
                    return Ok(n);
                }
                // The end, or a byte past the stated length.
                match made_as_stated(self.made, self.source.len) {
                    Ok(()) => {
                        self.source.ended.set(true);
                        return Ok(0);
                    }
                    Err(fault) => fault,
                }
            }
            Err(e) => format!("a deflated text does not inflate: {e}"),
        };
        let error = std::io::Error::new(std::io::ErrorKind::InvalidData, fault.clone());
        *self.source.fault.borrow_mut() = Some(fault);
        Err(error)
    }
}

impl tcc_engine::absorb_text::TextSource for Stored {
    fn open(&self) -> Box<dyn Read + '_> {
        match self {
            Stored::Text(text) => Box::new(text.as_bytes()),
            Stored::Deflated { blob, len } => Box::new(std::io::BufReader::with_capacity(
                PACK_PIECE,
                body_reader(blob, *len as u64),
            )),
        }
    }
}

impl PartialEq for Stored {
    /// Equal texts, whichever form each is in (an undecodable BLOB equals
    /// nothing).
    fn eq(&self, other: &Stored) -> bool {
        match (self.text(), other.text()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Stored {}

impl FromSql for Stored {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Stored> {
        match value {
            ValueRef::Text(bytes) => column_text(bytes).map(Stored::Text),
            ValueRef::Blob(blob) => match header(blob) {
                Ok(len) => Ok(Stored::Deflated {
                    blob: blob.to_vec(),
                    len,
                }),
                Err(message) => Err(FromSqlError::Other(message.into())),
            },
            _ => Err(FromSqlError::InvalidType),
        }
    }
}

/// The text length a deflated BLOB's header states, or why it is not one
/// (another form, or a length its compressed bytes cannot make).
fn header(blob: &[u8]) -> Result<usize, String> {
    let (Some(magic), Some(len)) = (blob.get(..MAGIC.len()), blob.get(MAGIC.len()..HEADER)) else {
        return Err("a stored BLOB too short for a deflated text".into());
    };
    if magic != MAGIC {
        return Err("a stored BLOB that is not a deflated text".into());
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(len);
    let len = u64::from_le_bytes(len_bytes);
    let body = blob.len() - HEADER;
    if len > (body as u64).saturating_mul(MAX_INFLATE_RATIO) {
        return Err(format!(
            "a deflated text claims {len} bytes from {body} compressed bytes"
        ));
    }
    usize::try_from(len).map_err(|_| format!("a deflated text of {len} bytes"))
}

/// Inflates a deflated BLOB whose header states `len` onto the end of
/// `out`, or says why it does not make exactly `len` bytes.
fn inflate_onto(blob: &[u8], len: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let start = out.len();
    body_reader(blob, len as u64 + 1)
        .read_to_end(out)
        .map_err(|e| format!("a deflated text does not inflate: {e}"))?;
    made_as_stated((out.len() - start) as u64, len)
}

/// The text of a deflated BLOB, or why it is not one.
pub fn inflate(blob: &[u8]) -> Result<String, String> {
    let len = header(blob)?;
    let mut text = Vec::with_capacity(len);
    inflate_onto(blob, len, &mut text)?;
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

    #[test]
    fn a_stored_text_is_read_in_pieces_and_checked() {
        use tcc_engine::absorb_text::TextSource;
        let long = r#"{"t":"number","v":0},"#.repeat(PACK_FROM / 10);
        let Packed::Deflated(blob) = Packed::copied(&long) else {
            panic!("not deflated");
        };
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let read =
            |blob: &Vec<u8>| -> Stored { c.query_row("SELECT ?1", [blob], |r| r.get(0)).unwrap() };
        let stored = read(&blob);
        assert_eq!(stored.len(), long.len());
        assert!(stored.check().is_ok());
        let mut text = String::new();
        stored.open().read_to_string(&mut text).unwrap();
        assert_eq!(text, long);
        let mut out = String::from("[");
        stored.write_to(&mut out).unwrap();
        assert_eq!(&out[1..], long);
        // Read through once, checked as it is read; a reader that stops
        // early or fails has it checked through after.
        let read_all = |source: &dyn TextSource| {
            let mut text = String::new();
            source.open().read_to_string(&mut text).map(|_| text)
        };
        let read_some = |source: &dyn TextSource| source.open().read_exact(&mut [0u8; 3]);
        assert_eq!(stored.read_checked(read_all).unwrap().unwrap(), long);
        assert!(stored.read_checked(read_some).unwrap().is_ok());
        assert_eq!(stored.read_checked(|_| Err::<(), _>(7)), Ok(Err(7)));
        // A stream cut short, or one that makes more than its header says:
        // `check` and the readers that inflate say so; `write_to` leaves
        // its buffer as it was.
        let mut short = blob.clone();
        short.truncate(blob.len() - 5);
        let mut longer = blob.clone();
        longer[4..12].copy_from_slice(&(long.len() as u64 - 1).to_le_bytes());
        for damaged in [read(&short), read(&longer)] {
            assert!(damaged.check().is_err());
            assert!(damaged.read_checked(read_all).is_err());
            assert!(damaged.read_checked(read_some).is_err());
            assert!(damaged.read_checked(|_| Err::<(), _>(7)).is_err());
            assert!(damaged.text().is_err());
            let mut out = String::from("[");
            assert!(damaged.write_to(&mut out).is_err());
            assert_eq!(out, "[");
        }
        // Text reads as itself.
        let short = Stored::Text("[1]".into());
        assert!(short.check().is_ok());
        let mut text = String::new();
        short.open().read_to_string(&mut text).unwrap();
        assert_eq!(text, "[1]");
        assert_eq!(short, Stored::Text("[1]".into()));
        assert_eq!(stored, Stored::Text(long));
    }

    /// The text a packed text reads back as.
    fn read_back(p: Packed<'_>) -> String {
        p.into_text().unwrap()
    }

    proptest! {
        /// A text written in pieces reads back as their concatenation:
        /// deflated once it reaches `PACK_FROM` (when deflating), else as
        /// text.
        #[test]
        fn a_text_written_in_pieces_reads_back_whole(
            pieces in prop::collection::vec(("[a-z{}\":,é]{0,40}", 0usize..4), 0..60),
            deflate in any::<bool>(),
        ) {
            use tcc_engine::json::TextOut;
            let mut writer = PackWriter::new(deflate);
            let mut whole = String::new();
            for (piece, times) in &pieces {
                // Long runs of one piece, so that texts cross `PACK_FROM`.
                for _ in 0..times * times * 300 {
                    writer.push_str(piece);
                    whole.push_str(piece);
                }
                writer.push('\u{e9}');
                whole.push('\u{e9}');
            }
            let packed = writer.finish().unwrap();
            prop_assert_eq!(
                matches!(packed, Packed::Deflated(_)),
                deflate && whole.len() >= PACK_FROM
            );
            prop_assert_eq!(read_back(packed), whole);
        }
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
            // Read in pieces and checked as read: what inflating it whole
            // makes, or an error exactly when that is one.
            let whole = header(&framed).and_then(|len| {
                let mut bytes = Vec::new();
                inflate_onto(&framed, len, &mut bytes).map(|()| bytes)
            });
            if let Ok(len) = header(&framed) {
                let stored = Stored::Deflated { blob: framed.clone(), len };
                let pieces = stored.read_checked(|source| {
                    let mut bytes = Vec::new();
                    source.open().read_to_end(&mut bytes).map(|_| bytes)
                });
                match (whole, pieces) {
                    (Ok(whole), Ok(Ok(pieces))) => prop_assert_eq!(whole, pieces),
                    (Err(_), Err(_)) => {}
                    (whole, pieces) => prop_assert!(false, "{:?} against {:?}", whole, pieces),
                }
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
