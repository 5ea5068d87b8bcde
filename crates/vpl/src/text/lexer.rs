//! Lexical translation (spec sections 2 and 10.1).
//!
//! The input is validated as UTF-8 up front (no byte-order mark, no invalid
//! sequences, overlong encodings or encoded surrogates). The lexer then
//! produces parentheses, words and strings, skipping trivia: spaces, tabs,
//! CR/LF/CRLF, non-nesting `/* */` comments, `//` comments and
//! reverse-solidus line continuations. A word is a maximal run of
//! characters up to trivia, a parenthesis or a quote; it must be a whole
//! name or a whole decimal number, anything else is a lexical error.

use super::error::{Error as TextError, ErrorKind};

/// Errors are boxed inside the reader to keep every `Result` small.
pub(crate) type Error = Box<TextError>;
use crate::ir::Span;

/// The lexical category of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordClass {
    /// An ASCII name (`_* [A-Za-z] [A-Za-z0-9_]*`).
    Name,
    /// A decimal number (`[+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)?`).
    Number,
}

/// A token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    /// `(`
    Open,
    /// `)`
    Close,
    /// A name word.
    Name(&'a str),
    /// A number word.
    Number(&'a str),
    /// A quoted string without escapes: the contents between the quotes.
    Str(&'a str),
    /// A quoted string with escapes: the raw contents between the quotes.
    EscapedStr(&'a str),
    /// End of input.
    End,
}

/// A token with its position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub span: Span,
}

/// Decodes the input bytes as UTF-8 without byte-order mark.
pub(crate) fn decode<'a>(bytes: &'a [u8], label: &str) -> Result<&'a str, Error> {
    check_size_and_bom(bytes, label)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let valid = e.valid_up_to();
            // The prefix is valid UTF-8 by construction.
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or("");
            let span = position_of(prefix, valid);
            let what = match bytes[valid] {
                0xC0 | 0xC1 => "overlong encoding",
                0xE0 if bytes.get(valid + 1).is_some_and(|b| *b < 0xA0) => "overlong encoding",
                0xF0 if bytes.get(valid + 1).is_some_and(|b| *b < 0x90) => "overlong encoding",
                0xED if bytes.get(valid + 1).is_some_and(|b| *b >= 0xA0) => "encoded surrogate",
                _ if e.error_len().is_none() => "truncated UTF-8 sequence at end of input",
                _ => "invalid UTF-8 sequence",
            };
            Err(lex_error_at(
                label,
                span,
                format!("{what} (byte 0x{:02X})", bytes[valid]),
            ))
        }
    }
}

/// The decoding checks that remain for text that is already a `str`
/// (UTF-8 by construction): the size limit and the byte-order mark.
pub(crate) fn decode_str<'a>(text: &'a str, label: &str) -> Result<&'a str, Error> {
    check_size_and_bom(text.as_bytes(), label)?;
    Ok(text)
}

fn check_size_and_bom(bytes: &[u8], label: &str) -> Result<(), Error> {
    if u32::try_from(bytes.len()).is_err() {
        return Err(lex_error_at(
            label,
            Span {
                offset: 0,
                line: 1,
                column: 1,
            },
            format!(
                "input of {} bytes exceeds the reader's limit of {} bytes",
                bytes.len(),
                u32::MAX
            ),
        ));
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(lex_error_at(
            label,
            Span {
                offset: 0,
                line: 1,
                column: 1,
            },
            "byte-order mark is not allowed",
        ));
    }
    Ok(())
}

/// The line/column of byte `offset` of `text` (slow; used for errors only).
pub(crate) fn position_of(text: &str, offset: usize) -> Span {
    let bytes = text.as_bytes();
    let mut line = 1u32;
    let mut line_start = 0usize;
    let mut i = 0usize;
    while i < offset.min(bytes.len()) {
        match bytes[i] {
            b'\r' => {
                if bytes.get(i + 1) == Some(&b'\n') && i + 1 < offset {
                    i += 1;
                }
                line += 1;
                line_start = i + 1;
            }
            b'\n' => {
                line += 1;
                line_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let column = count_chars(&bytes[line_start.min(offset)..offset.min(bytes.len())]) + 1;
    Span {
        offset: offset as u32,
        line,
        column,
    }
}

/// The number of LF bytes in `bytes` (counted in chunks whose byte sums
/// fit a `u8`, which the compiler vectorises).
fn count_line_feeds(bytes: &[u8]) -> u32 {
    bytes
        .chunks(255)
        .map(|chunk| {
            let n: u8 = chunk.iter().map(|&b| u8::from(b == b'\n')).sum();
            u32::from(n)
        })
        .sum()
}

fn count_chars(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count() as u32
}

#[cold]
pub(crate) fn lex_error_at(label: &str, span: Span, message: impl Into<String>) -> Error {
    Box::new(TextError {
        kind: ErrorKind::Lexical,
        message: message.into(),
        label: label.to_string(),
        position: span,
        verify: None,
    })
}

/// The lexer over a decoded input.
///
/// Positions are kept in O(1) per token: the line number and the byte
/// offset of the line start are updated at every line ending, and the
/// column is the byte distance from the line start minus the UTF-8
/// continuation bytes skipped on this line. Outside strings and comments a
/// non-ASCII byte is always a lexical error, so only string and comment
/// scanning has to count continuation bytes. Errors in the middle of a
/// token recompute their position exactly with [`position_of`].
pub(crate) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    /// UTF-8 continuation bytes between `line_start` and `pos`.
    continuation: usize,
    label: &'a str,
}

/// The length of the run of spaces and tabs at the start of `bytes`.
/// Spaces are counted eight bytes at a time: the first byte of a chunk that
/// is not a space is found from the chunk's difference from eight spaces
/// (read little-endian, the first byte is in the low bits). Tabs and the
/// last bytes of the input take the byte loop.
#[inline(always)]
fn blank_run(bytes: &[u8]) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let differs = u64::from_le_bytes(word) ^ SPACES;
        if differs != 0 {
            let low = differs.trailing_zeros() & !7;
            // That byte is not a space: only a tab continues the run (its
            // difference from a space is `\t ^ b' '`).
            i += (low / 8) as usize;
            if (differs >> low) as u8 != b'\t' ^ b' ' {
                return i;
            }
            break;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b != b' ' && b != b'\t' {
            break;
        }
        i += 1;
    }
    i
}

/// The end of the run of ASCII digits in `bytes` starting at `from`.
#[inline(always)]
fn digit_run_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

/// Whether a word ends before `next` (a byte that always ends a word, or
/// the end of the input).
#[inline(always)]
fn ends_word(next: Option<&u8>) -> bool {
    match next {
        None => true,
        Some(&c) => CLASS[c as usize] & END != 0,
    }
}

/// The length of the plain decimal number (`[+-]? d+ (. d*)?`) at the start
/// of `rest` when it ends at a byte that always ends a word: the lexer's
/// fast path for numbers. `None` for anything else (exponents, malformed
/// words, names), which is classified in full.
#[inline(always)]
fn plain_number_len(rest: &[u8]) -> Option<usize> {
    let first = *rest.first()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+') {
        return None;
    }
    let sign = usize::from(!first.is_ascii_digit());
    let mut end = digit_run_end(rest, sign);
    if end == sign {
        return None;
    }
    if rest.get(end) == Some(&b'.') {
        end = digit_run_end(rest, end + 1);
    }
    ends_word(rest.get(end)).then_some(end)
}

/// Whether `b` is a UTF-8 continuation byte.
#[inline(always)]
fn is_continuation(b: u8) -> bool {
    (b & 0xC0) == 0x80
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(text: &'a str, label: &'a str) -> Self {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
            continuation: 0,
            label,
        }
    }

    /// A lexer that starts at byte `offset` of `text` (a character
    /// boundary) with the line and column it would have reached there by
    /// lexing from the start.
    pub(crate) fn starting_at(text: &'a str, label: &'a str, offset: usize) -> Self {
        let before = &text.as_bytes()[..offset];
        let line = if before.contains(&b'\r') {
            position_of(text, offset).line
        } else {
            count_line_feeds(before) + 1
        };
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |i| i + 1);
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: offset,
            line,
            line_start,
            continuation: before[line_start..]
                .iter()
                .filter(|&&c| is_continuation(c))
                .count(),
            label,
        }
    }

    /// The byte offset of the next byte to read.
    #[inline(always)]
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// The whole input.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// The span of the current position (between tokens).
    #[inline(always)]
    fn here(&self) -> Span {
        Span {
            offset: self.pos as u32,
            line: self.line,
            column: (self.pos - self.line_start - self.continuation) as u32 + 1,
        }
    }

    /// A lexical error at the current position, which may be inside a
    /// token: its position is recomputed from the start of the input.
    #[cold]
    #[inline(never)]
    fn error(&self, message: impl Into<String>) -> Error {
        lex_error_at(self.label, position_of(self.text, self.pos), message)
    }

    #[inline(always)]
    fn newline(&mut self, after: usize) {
        self.line += 1;
        self.line_start = after;
        self.continuation = 0;
    }

    /// Skips trivia. Errors on unclosed comments.
    #[inline(always)]
    fn skip_trivia(&mut self) -> Result<(), Error> {
        // The commonest separator: one space before a byte that cannot
        // start trivia (the loop below would skip exactly that space).
        if let Some(&[b' ', next]) = self.bytes.get(self.pos..self.pos + 2)
            && CLASS[next as usize] & TRIVIA == 0
        {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Ok(());
            };
            // Most tokens follow another directly or after one run of
            // blanks (a space, or a line ending and the indentation).
            if CLASS[b as usize] & TRIVIA == 0 {
                return Ok(());
            }
            match b {
                b' ' | b'\t' => self.pos += blank_run(&self.bytes[self.pos..]),
                b'\n' => {
                    self.pos += 1;
                    self.newline(self.pos);
                }
                b'\r' => {
                    self.pos += 1;
                    if self.bytes.get(self.pos) == Some(&b'\n') {
                        self.pos += 1;
                    }
                    self.newline(self.pos);
                }
                b'/' => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => self.line_comment(),
                    Some(b'*') => self.block_comment()?,
                    _ => return Ok(()),
                },
                b'\\' => match self.bytes.get(self.pos + 1) {
                    Some(b'\n') => {
                        self.pos += 2;
                        self.newline(self.pos);
                    }
                    Some(b'\r') => {
                        self.pos += 2;
                        if self.bytes.get(self.pos) == Some(&b'\n') {
                            self.pos += 1;
                        }
                        self.newline(self.pos);
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        }
    }

    /// Skips a `//` comment up to (not including) its line ending.
    #[cold]
    fn line_comment(&mut self) {
        self.pos += 2;
        let rest = &self.bytes[self.pos..];
        let len = rest
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')
            .unwrap_or(rest.len());
        self.continuation += rest[..len].iter().filter(|&&c| is_continuation(c)).count();
        self.pos += len;
    }

    /// Skips a `/* */` comment.
    #[cold]
    fn block_comment(&mut self) -> Result<(), Error> {
        let start = self.here();
        self.pos += 2;
        loop {
            match self.bytes.get(self.pos) {
                None => {
                    return Err(lex_error_at(self.label, start, "unclosed `/*` comment"));
                }
                Some(b'*') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                    self.pos += 2;
                    return Ok(());
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.newline(self.pos);
                }
                Some(b'\r') => {
                    self.pos += 1;
                    if self.bytes.get(self.pos) == Some(&b'\n') {
                        self.pos += 1;
                    }
                    self.newline(self.pos);
                }
                Some(&c) => {
                    self.continuation += usize::from(is_continuation(c));
                    self.pos += 1;
                }
            }
        }
    }

    /// Skips trivia, then consumes the punctuation byte `b` (`(` or `)`)
    /// when it comes next and returns its span. Otherwise nothing but the
    /// trivia is consumed, and [`Lexer::next_token`] reads that token (and
    /// reports the same errors) as it would have.
    #[inline(always)]
    pub(crate) fn eat(&mut self, b: u8) -> Result<Option<Span>, Error> {
        self.skip_trivia()?;
        if self.bytes.get(self.pos) == Some(&b) {
            let span = self.here();
            self.pos += 1;
            return Ok(Some(span));
        }
        Ok(None)
    }

    /// Skips trivia, then consumes the name `kw` (ASCII letters) when it
    /// comes next as a whole word, returning its span: exactly the token
    /// `Tok::Name(kw)` that [`Lexer::next_token`] would read there.
    /// Otherwise nothing but the trivia is consumed.
    #[inline(always)]
    pub(crate) fn eat_name(&mut self, kw: &[u8]) -> Result<Option<Span>, Error> {
        self.skip_trivia()?;
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(kw) && ends_word(rest.get(kw.len())) {
            let span = self.here();
            self.pos += kw.len();
            return Ok(Some(span));
        }
        Ok(None)
    }

    /// Skips trivia, then consumes a word made of an ASCII letter followed
    /// by letters, digits and underscores that ends at a byte that always
    /// ends a word: exactly the `Tok::Name` that [`Lexer::next_token`] would
    /// read there (the word fast path's own test). Returns the word and its
    /// span; otherwise nothing but the trivia is consumed.
    #[inline(always)]
    pub(crate) fn eat_plain_name(&mut self) -> Result<Option<(&'a str, Span)>, Error> {
        self.skip_trivia()?;
        let start = self.pos;
        let rest = &self.bytes[start..];
        if !rest.first().is_some_and(u8::is_ascii_alphabetic) {
            return Ok(None);
        }
        let run = rest
            .iter()
            .position(|&c| CLASS[c as usize] & NAME == 0)
            .unwrap_or(rest.len());
        if !ends_word(rest.get(run)) {
            return Ok(None);
        }
        let span = self.here();
        self.pos += run;
        Ok(Some((&self.text[start..self.pos], span)))
    }

    /// Skips trivia, then consumes a register word, `r` and 1 to 19 ASCII
    /// digits (a number that always fits a `u64`) ending at a byte that
    /// always ends a word: the `Tok::Name` that [`Lexer::next_token`] would
    /// read there. Returns the register number and the word's span;
    /// otherwise (any other word, more digits) nothing but the trivia is
    /// consumed and the caller reads the token in full.
    #[inline(always)]
    pub(crate) fn eat_register(&mut self) -> Result<Option<(u64, Span)>, Error> {
        self.skip_trivia()?;
        let rest = &self.bytes[self.pos..];
        if rest.first() != Some(&b'r') {
            return Ok(None);
        }
        let mut value = 0u64;
        let mut len = 1;
        while let Some(&c) = rest.get(len) {
            if !c.is_ascii_digit() {
                break;
            }
            if len > 19 {
                return Ok(None);
            }
            value = value * 10 + u64::from(c - b'0');
            len += 1;
        }
        if len == 1 || !ends_word(rest.get(len)) {
            return Ok(None);
        }
        let span = self.here();
        self.pos += len;
        Ok(Some((value, span)))
    }

    /// Skips trivia, then consumes a plain decimal number
    /// (`[+-]? d+ (. d*)?` ending at a byte that always ends a word): the
    /// `Tok::Number` that [`Lexer::next_token`] would read there, returned
    /// as that token. Otherwise nothing but the trivia is consumed.
    #[inline(always)]
    pub(crate) fn eat_plain_number(&mut self) -> Result<Option<Token<'a>>, Error> {
        self.skip_trivia()?;
        let start = self.pos;
        let Some(len) = plain_number_len(&self.bytes[start..]) else {
            return Ok(None);
        };
        let span = self.here();
        self.pos += len;
        Ok(Some(Token {
            tok: Tok::Number(&self.text[start..self.pos]),
            span,
        }))
    }

    /// Right after the `(` of a constant form (no trivia skipped),
    /// consumes the writer's spelling of a short float constant, `float`,
    /// one space, a plain decimal number of at most 7 digits and the `)`,
    /// and returns its value: the same tokens and value that the names,
    /// number and `)` read one by one give (no error is possible there).
    /// Anything else consumes nothing and is read token by token.
    #[inline(always)]
    pub(crate) fn eat_short_float_form(&mut self) -> Option<f32> {
        let rest = self.bytes.get(self.pos..)?;
        let number = rest.strip_prefix(b"float ")?;
        let len = plain_number_len(number)?;
        if number.get(len) != Some(&b')') {
            return None;
        }
        let value = super::float::parse_short_f32(&number[..len])?;
        // ASCII only and no line ending: the line and column bookkeeping
        // needs nothing but the position.
        self.pos += b"float ".len() + len + 1;
        Some(value)
    }

    /// Skips trivia and tells whether the byte `b` comes next.
    #[inline(always)]
    pub(crate) fn at(&mut self, b: u8) -> Result<bool, Error> {
        self.skip_trivia()?;
        Ok(self.bytes.get(self.pos) == Some(&b))
    }

    /// The next token.
    #[inline(always)]
    pub(crate) fn next_token(&mut self) -> Result<Token<'a>, Error> {
        self.skip_trivia()?;
        let span = self.here();
        let Some(&b) = self.bytes.get(self.pos) else {
            return Ok(Token {
                tok: Tok::End,
                span,
            });
        };
        let tok = match b {
            b'(' => {
                self.pos += 1;
                Tok::Open
            }
            b')' => {
                self.pos += 1;
                Tok::Close
            }
            b'"' | b'\'' => self.string(b, span)?,
            _ => self.word(span)?,
        };
        Ok(Token { tok, span })
    }

    fn string(&mut self, quote: u8, start: Span) -> Result<Tok<'a>, Error> {
        self.pos += 1;
        let content_start = self.pos;
        let mut escapes = false;
        loop {
            let Some(&c) = self.bytes.get(self.pos) else {
                return Err(lex_error_at(self.label, start, "unclosed string"));
            };
            match c {
                _ if c == quote => {
                    let raw = &self.text[content_start..self.pos];
                    if !raw.is_ascii() {
                        self.continuation += raw.bytes().filter(|&c| is_continuation(c)).count();
                    }
                    self.pos += 1;
                    return Ok(if escapes {
                        Tok::EscapedStr(raw)
                    } else {
                        Tok::Str(raw)
                    });
                }
                b'\r' | b'\n' => return Err(self.error("line ending inside a string")),
                0x00..=0x1F => {
                    return Err(self.error(format!(
                        "raw control character U+{c:04X} inside a string (use an escape)"
                    )));
                }
                b'\\' => {
                    escapes = true;
                    match self.bytes.get(self.pos + 1) {
                        Some(b'\\' | b'"' | b'\'' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 2
                        }
                        Some(b'u') => {
                            let hex = self.bytes.get(self.pos + 2..self.pos + 6);
                            let value = hex
                                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u32::from_str_radix(h, 16).ok());
                            match value {
                                None => {
                                    return Err(self.error(
                                        "`\\u` escape requires exactly four hexadecimal digits",
                                    ));
                                }
                                Some(0xD800..=0xDFFF) => {
                                    return Err(self.error("`\\u` escape denotes a surrogate"));
                                }
                                Some(_) => self.pos += 6,
                            }
                        }
                        _ => return Err(self.error("unknown escape sequence")),
                    }
                }
                _ => self.pos += 1,
            }
        }
    }

    #[inline(always)]
    fn word(&mut self, span: Span) -> Result<Tok<'a>, Error> {
        let start = self.pos;
        let rest = &self.bytes[start..];
        if let Some(end) = plain_number_len(rest) {
            self.pos += end;
            return Ok(Tok::Number(&self.text[start..self.pos]));
        }
        // Fast path: a run of letters, digits and underscores that ends at
        // a byte that always ends a word (or at the end of input).
        let run = rest
            .iter()
            .position(|&c| CLASS[c as usize] & NAME == 0)
            .unwrap_or(rest.len());
        let ends = match rest.get(run) {
            None => true,
            Some(&c) => CLASS[c as usize] & END != 0,
        };
        if ends && run > 0 {
            self.pos += run;
            let word = &self.text[start..self.pos];
            if rest[0].is_ascii_alphabetic() {
                return Ok(Tok::Name(word));
            }
            return self.classified(word, span);
        }
        self.word_slow(span)
    }

    #[inline(never)]
    fn word_slow(&mut self, span: Span) -> Result<Tok<'a>, Error> {
        let start = self.pos;
        while let Some(&c) = self.bytes.get(self.pos) {
            let class = CLASS[c as usize];
            if class & SPECIAL != 0 {
                if class & END != 0 {
                    break;
                }
                let next = self.bytes.get(self.pos + 1);
                if c == b'/' && matches!(next, Some(b'/' | b'*')) {
                    break;
                }
                if c == b'\\' && matches!(next, Some(b'\n' | b'\r')) {
                    break;
                }
            }
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        self.classified(word, span)
    }

    #[inline]
    fn classified(&self, word: &'a str, span: Span) -> Result<Tok<'a>, Error> {
        match classify(word) {
            Ok(WordClass::Name) => Ok(Tok::Name(word)),
            Ok(WordClass::Number) => Ok(Tok::Number(word)),
            Err((at, message)) => {
                let span = Span {
                    offset: span.offset + at as u32,
                    line: span.line,
                    column: span.column + count_chars(&word.as_bytes()[..at]),
                };
                Err(lex_error_at(self.label, span, message))
            }
        }
    }
}

/// Byte classes: a byte that may end a word or needs a look at the next byte.
const SPECIAL: u8 = 1;
/// Trivia, parentheses and quotes: always end a word.
const END: u8 = 2;
/// Letters, digits and underscore.
const NAME: u8 = 4;
/// Bytes that may start trivia: blanks, line endings, `/` and `\\`.
const TRIVIA: u8 = 8;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = match c {
            b' ' | b'\t' | b'\r' | b'\n' => SPECIAL | END | TRIVIA,
            b'(' | b')' | b'"' | b'\'' => SPECIAL | END,
            b'/' | b'\\' => SPECIAL | TRIVIA,
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => NAME,
            _ => 0,
        };
        i += 1;
    }
    t
};

/// Classifies a word; on failure, the byte position within the word and a message.
fn classify(word: &str) -> Result<WordClass, (usize, String)> {
    let bytes = word.as_bytes();
    let first = bytes[0];
    if first.is_ascii_alphabetic() || first == b'_' {
        let mut seen_letter = false;
        for (i, &c) in bytes.iter().enumerate() {
            if c.is_ascii_alphabetic() {
                seen_letter = true;
            } else if c.is_ascii_digit() {
                if !seen_letter {
                    return Err((i, "a name must have a letter before its digits".into()));
                }
            } else if c != b'_' {
                return Err((i, unexpected(word, i)));
            }
        }
        if !seen_letter {
            return Err((0, "a name must contain a letter".into()));
        }
        return Ok(WordClass::Name);
    }
    if first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.') {
        return if is_decimal(bytes) {
            Ok(WordClass::Number)
        } else {
            Err((0, format!("malformed number `{}`", truncate(word))))
        };
    }
    Err((0, unexpected(word, 0)))
}

fn unexpected(word: &str, at: usize) -> String {
    let c = word[at..].chars().next().unwrap_or('?');
    format!("unexpected character {c:?} (U+{:04X})", c as u32)
}

fn truncate(word: &str) -> &str {
    match word.char_indices().nth(40) {
        Some((i, _)) => &word[..i],
        None => word,
    }
}

/// `[+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)?`
pub(crate) fn is_decimal(bytes: &[u8]) -> bool {
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let s = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        frac_digits = i - s;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let s = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == s {
            return false;
        }
    }
    i == bytes.len()
}

/// Whether a number word is an integer spelling (`[+-]? d+`).
pub(crate) fn is_integer(word: &str) -> bool {
    let digits = word.strip_prefix(['+', '-']).unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Decodes a string's raw contents (already validated by the lexer).
pub(crate) fn unescape(raw: &str, has_escapes: bool) -> String {
    if !has_escapes {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let c = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                out.push(c);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-place readers (`eat_register`, `eat_name`,
    /// `eat_plain_number`) take exactly the token `next_token` reads, at
    /// the same position, or consume nothing but the trivia.
    #[test]
    fn short_float_forms_agree_with_tokens() {
        let texts = [
            "float 1.125)",
            "float -0.5) x",
            "float +3)",
            "float 7.)\n",
            "float 1234567)",
            "float 12345678)",
            "float 0.0000001)",
            "float 1e3)",
            "float .5)",
            "float 1.5.2)",
            "float 1 )",
            "float  1)",
            "float\t1)",
            "floats 1)",
            "float 1",
            "float 1)(",
            "int 1)",
            "float x)",
        ];
        for text in texts {
            let mut lexer = Lexer::new(text, "t");
            let Some(value) = lexer.eat_short_float_form() else {
                assert_eq!(lexer.offset(), 0, "{text:?}");
                continue;
            };
            let mut full = Lexer::new(text, "t");
            let tokens: Vec<Tok<'_>> = (0..3).map(|_| full.next_token().unwrap().tok).collect();
            let Tok::Number(word) = tokens[1] else {
                panic!("{text:?}: {tokens:?}");
            };
            assert_eq!(tokens[0], Tok::Name("float"), "{text:?}");
            assert_eq!(tokens[2], Tok::Close, "{text:?}");
            assert_eq!(
                Some(value.to_bits()),
                super::super::float::parse_f32(word).map(f32::to_bits),
                "{text:?}"
            );
            assert_eq!(lexer.offset(), full.offset(), "{text:?}");
        }
    }

    #[test]
    fn in_place_readers_agree_with_next_token() {
        let words = [
            "r0",
            "r007",
            "r1234567890123456789",
            "r12345678901234567890",
            "r",
            "rx",
            "r1x",
            "r1_",
            "float",
            "floats",
            "int",
            "in",
            "1.125",
            "-0.5",
            "+3",
            "7.",
            "1e3",
            ".5",
            "1.5.2",
            "1-2",
            "x",
            "\"s\"",
            "(",
            ")",
        ];
        for word in words {
            for (before, after) in [("  ", ")"), ("\n ", ""), ("/* c */ ", " x"), ("", "(")] {
                let text = format!("{before}{word}{after}");
                let mut full = Lexer::new(&text, "t");
                let token = full.next_token().ok();
                let register = Lexer::new(&text, "t").eat_register().ok().flatten();
                match (register, token.map(|t| (t.tok, t.span))) {
                    (Some((value, span)), Some((Tok::Name(w), token_span))) => {
                        assert_eq!(span, token_span, "{text:?}");
                        assert_eq!(Some(value), w[1..].parse::<u64>().ok(), "{text:?}");
                    }
                    (Some(_), other) => panic!("{text:?}: register, token {other:?}"),
                    (None, _) => {}
                }
                for kw in [&b"float"[..], b"int"] {
                    let mut lexer = Lexer::new(&text, "t");
                    let eaten = lexer.eat_name(kw).ok().flatten();
                    match (eaten, token) {
                        (Some(span), Some(t)) => {
                            assert_eq!(t.tok, Tok::Name(std::str::from_utf8(kw).unwrap()));
                            assert_eq!(span, t.span, "{text:?}");
                            assert_eq!(lexer.offset(), full.offset(), "{text:?}");
                        }
                        (Some(_), None) => panic!("{text:?}: name without a token"),
                        (None, Some(t)) => assert_ne!(
                            t.tok,
                            Tok::Name(std::str::from_utf8(kw).unwrap()),
                            "{text:?}"
                        ),
                        (None, None) => {}
                    }
                }
                let mut lexer = Lexer::new(&text, "t");
                if let Some(number) = lexer.eat_plain_number().ok().flatten() {
                    let t = token.expect("a token");
                    assert_eq!((number.tok, number.span), (t.tok, t.span), "{text:?}");
                    assert_eq!(lexer.offset(), full.offset(), "{text:?}");
                }
                // A reader that takes nothing leaves the next token as it was.
                let expected = token.map(|t| (t.tok, t.span));
                let mut lexer = Lexer::new(&text, "t");
                if matches!(lexer.eat_register(), Ok(None)) {
                    let next = lexer.next_token().ok().map(|t| (t.tok, t.span));
                    assert_eq!(next, expected, "{text:?}");
                }
                let mut lexer = Lexer::new(&text, "t");
                if matches!(lexer.eat_name(b"float"), Ok(None)) {
                    let next = lexer.next_token().ok().map(|t| (t.tok, t.span));
                    assert_eq!(next, expected, "{text:?}");
                }
                let mut lexer = Lexer::new(&text, "t");
                if matches!(lexer.eat_plain_number(), Ok(None)) {
                    let next = lexer.next_token().ok().map(|t| (t.tok, t.span));
                    assert_eq!(next, expected, "{text:?}");
                }
            }
        }
    }

    fn tokens(text: &str) -> Result<Vec<Tok<'_>>, Error> {
        let mut lexer = Lexer::new(text, "t");
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token()?;
            if t.tok == Tok::End {
                return Ok(out);
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn decimal_grammar() {
        for ok in [
            "0", "12", "+1", "-1", "1.", ".5", "1.5", "1e5", "1E+5", "1.5e-3", "-.5e0", "007",
        ] {
            assert!(is_decimal(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", "+", "-", ".", "e5", "1e", "1e+", "1..2", "1.2.3", "++1", "1e5.5", "1x", "0x1",
            ".e1",
        ] {
            assert!(!is_decimal(bad.as_bytes()), "{bad}");
        }
        assert!(is_integer("-12") && is_integer("+0") && !is_integer("1.0") && !is_integer("-"));
    }

    #[test]
    fn words_strings_and_parentheses() {
        let t = tokens("id\"display\"Type (a 'b' -1.5)").unwrap();
        assert_eq!(
            t,
            vec![
                Tok::Name("id"),
                Tok::Str("display"),
                Tok::Name("Type"),
                Tok::Open,
                Tok::Name("a"),
                Tok::Str("b"),
                Tok::Number("-1.5"),
                Tok::Close,
            ]
        );
        assert_eq!(tokens("a/*x*/b//c\nd\\\ne").unwrap().len(), 4);
        assert_eq!(tokens(r#""a\nb""#).unwrap(), vec![Tok::EscapedStr(r"a\nb")]);
    }

    #[test]
    fn trailing_reverse_solidus_and_solidus_are_errors() {
        assert!(tokens("a \\").is_err());
        assert!(tokens("a /").is_err());
        assert!(tokens("a/").is_err());
        assert!(tokens("/*").is_err());
        assert!(tokens("a //").is_ok());
    }

    #[test]
    fn positions_track_lines_and_code_points() {
        let mut lexer = Lexer::new("é\r\n  x\ry\n\"ü\" z", "t");
        let spans: Vec<(u32, u32, u32)> = std::iter::from_fn(|| {
            let t = lexer.next_token().ok()?;
            (t.tok != Tok::End).then_some((t.span.offset, t.span.line, t.span.column))
        })
        .collect();
        // `é` is not a valid word, so start after it.
        assert!(spans.is_empty());
        let mut lexer = Lexer::new("a\r\n  x\ry\n\"ü\" z", "t");
        let spans: Vec<(u32, u32, u32)> = std::iter::from_fn(|| {
            let t = lexer.next_token().ok()?;
            (t.tok != Tok::End).then_some((t.span.offset, t.span.line, t.span.column))
        })
        .collect();
        assert_eq!(
            spans,
            vec![(0, 1, 1), (5, 2, 3), (7, 3, 1), (9, 4, 1), (14, 4, 5)]
        );
    }

    /// Every token span agrees with the exact, from-the-start position
    /// computation, whatever mix of line endings, comments, continuations
    /// and non-ASCII strings precedes it; lexical errors are located the
    /// same way.
    #[test]
    fn token_spans_match_position_of() {
        use proptest::prelude::*;
        let pieces = prop::sample::select(PIECES.to_vec());
        let config = ProptestConfig {
            cases: 2000,
            ..ProptestConfig::default()
        };
        proptest!(config, |(parts in prop::collection::vec(pieces, 0..40))| {
            let text: String = parts.concat();
            let mut lexer = Lexer::new(&text, "t");
            loop {
                match lexer.next_token() {
                    Ok(t) => {
                        prop_assert_eq!(t.span, position_of(&text, t.span.offset as usize));
                        if t.tok == Tok::End {
                            break;
                        }
                    }
                    Err(e) => {
                        prop_assert_eq!(
                            e.position,
                            position_of(&text, e.position.offset as usize)
                        );
                        break;
                    }
                }
            }
        });
    }

    /// The tokens and errors (with their positions) of a lexer, to the end.
    fn lex_rest(mut lexer: Lexer<'_>) -> Vec<Result<(Tok<'_>, Span), Error>> {
        let mut out = Vec::new();
        loop {
            match lexer.next_token() {
                Ok(t) => {
                    out.push(Ok((t.tok, t.span)));
                    if t.tok == Tok::End {
                        return out;
                    }
                }
                Err(e) => {
                    out.push(Err(e));
                    return out;
                }
            }
        }
    }

    /// A lexer started at any token start (as the parallel reader's helper
    /// is) continues exactly as the lexer that read from the beginning,
    /// positions included, whatever the line endings before it.
    #[test]
    fn lexers_started_at_a_token_continue_identically() {
        use proptest::prelude::*;
        let pieces = prop::sample::select(PIECES.to_vec());
        let config = ProptestConfig {
            cases: 400,
            ..ProptestConfig::default()
        };
        proptest!(config, |(parts in prop::collection::vec(pieces, 0..40))| {
            let text: String = parts.concat();
            let all = lex_rest(Lexer::new(&text, "t"));
            for (i, t) in all.iter().enumerate() {
                if let Ok((_, span)) = t {
                    let rest = lex_rest(Lexer::starting_at(&text, "t", span.offset as usize));
                    prop_assert_eq!(&rest[..], &all[i..]);
                }
            }
        });
        // Line feeds beyond one counting chunk.
        let text = format!("{}x", "\n".repeat(1000));
        let rest = lex_rest(Lexer::starting_at(&text, "t", 1000));
        assert_eq!(rest[0].as_ref().unwrap().1.line, 1001);
    }

    const PIECES: [&str; 22] = [
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "(",
        ")",
        "ab",
        "r0",
        "-1.5",
        "1e3",
        "\"é\"",
        "'ü€'",
        "\"\\u00e9x\"",
        "/*é\r\n€*/",
        "//ü𝄞\n",
        "\\\n",
        "\\\r\n",
        "𝄞",
        "\"a\nb\"",
        "/",
        "x.y",
    ];

    #[test]
    fn blank_runs_and_digit_runs() {
        for (text, n) in [
            ("", 0),
            ("x", 0),
            ("   x", 3),
            ("        ", 8),
            ("         \tx", 10),
            ("                 (", 17),
            ("        \n ", 8),
            (" \t \t  \t        x", 15),
            ("  \t", 3),
            ("       \t", 8),
            ("        \t\t       x", 17),
            ("   \n    ", 3),
        ] {
            assert_eq!(blank_run(text.as_bytes()), n, "{text:?}");
        }
        assert_eq!(digit_run_end(b"-123.5", 1), 4);
        assert_eq!(digit_run_end(b"12", 0), 2);
        assert_eq!(digit_run_end(b"12", 2), 2);
    }

    #[test]
    fn unescape_decodes_every_escape() {
        assert_eq!(
            unescape(r#"\\\"\'\b\f\n\r\t\u0041\u00e9"#, true),
            "\\\"'\u{8}\u{c}\n\r\tAé"
        );
        assert_eq!(unescape("plain", false), "plain");
    }

    #[test]
    fn position_of_matches_the_lexer() {
        assert_eq!(
            position_of("a\r\nbé\rc", 6),
            Span {
                offset: 6,
                line: 2,
                column: 3
            }
        );
        assert_eq!(
            position_of("a\r\nb", 3),
            Span {
                offset: 3,
                line: 2,
                column: 1
            }
        );
    }
}
