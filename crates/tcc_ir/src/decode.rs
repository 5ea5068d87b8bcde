//! Strict decoder of the artifact JSON.
//!
//! A hand-written pull reader decodes the bytes straight into the artifact
//! types: no intermediate JSON tree, byte offsets for every error, and the
//! JSON path of the offending item. The reader accepts exactly RFC 8259 JSON
//! in UTF-8 (any whitespace, any key order); it rejects duplicate keys, keys
//! the format does not define, wrong JSON types, numbers that are not valid
//! for their field, and lone UTF-16 surrogates in `\u` escapes. Recursion
//! follows the artifact's fixed schema only, so nesting depth is bounded by
//! construction; input size is capped at [`MAX_INPUT_BYTES`].

use crate::artifact::{Artifact, Envelope, Function, Program, RuntimeModule, Span};
use crate::constant::Constant;
use crate::error::{EncodingErrorKind as K, IrError};
use crate::instruction::Instruction;
use std::borrow::Cow;
use std::sync::Arc;

/// Largest input the decoder accepts (512 MiB).
pub const MAX_INPUT_BYTES: usize = 512 * 1024 * 1024;

/// Decodes an artifact from JSON bytes.
pub fn decode_artifact(bytes: &[u8]) -> Result<Artifact, IrError> {
    Reader::new(bytes, false)?.document().map(|(a, _)| a)
}

/// Decodes an artifact and records where its parts start in the input, for
/// diagnostics that point at an instruction or envelope field.
pub fn decode_artifact_with_map(bytes: &[u8]) -> Result<(Artifact, SourceMap), IrError> {
    Reader::new(bytes, true)?
        .document()
        .map(|(a, m)| (a, m.unwrap_or_default()))
}

/// Byte offsets of the parts of a decoded artifact.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// Offset of each envelope key's value, by key name.
    pub envelope: Vec<(&'static str, usize)>,
    /// Offset of each `required_engine_features` entry.
    pub engine_features: Vec<usize>,
    /// Offset of each `required_host_capabilities` entry.
    pub host_capabilities: Vec<usize>,
    /// Offset of the `program.entry` value.
    pub entry: usize,
    /// Offset of the `functions` array.
    pub functions_array: usize,
    /// Per function, in order.
    pub functions: Vec<FunctionMap>,
}

/// Byte offsets inside one function object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionMap {
    /// Start of the function object.
    pub start: usize,
    /// Start of the `spans` array value.
    pub spans: usize,
    /// Start of each instruction object.
    pub instructions: Vec<usize>,
}

impl SourceMap {
    /// Offset of an envelope field's value.
    pub fn envelope_field(&self, key: &str) -> Option<usize> {
        self.envelope
            .iter()
            .find(|(k, _)| *k == key)
            .map(|&(_, o)| o)
    }

    /// Offset of the instruction at `pc` of the function at `function_index`,
    /// or of the function itself when `pc` is `None` or out of range.
    pub fn instruction(&self, function_index: usize, pc: Option<u32>) -> Option<usize> {
        let f = self.functions.get(function_index)?;
        pc.and_then(|pc| f.instructions.get(pc as usize).copied())
            .or(Some(f.start))
    }
}

/// Which envelope string list is being read (for the source map).
#[derive(Debug, Clone, Copy)]
enum StringList {
    Features,
    Capabilities,
}

#[derive(Debug, Clone)]
enum Seg {
    Key(&'static str),
    Index(usize),
}

/// What a JSON value starting with this byte is, for messages.
fn describe(b: Option<u8>) -> &'static str {
    match b {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        Some(b'-' | b'0'..=b'9') => "a number",
        None => "end of input",
        Some(_) => "an invalid token",
    }
}

struct Reader<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    path: Vec<Seg>,
    map: Option<SourceMap>,
    /// The file of the last span read: spans naming the same file share it.
    last_file: Option<Arc<str>>,
}

/// A scalar `v` payload seen before its `t`.
enum Payload<'a> {
    Number(&'a str, usize),
    String(Cow<'a, str>),
    Bool(bool),
    Null,
}

type R<T> = Result<T, IrError>;

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], record: bool) -> R<Self> {
        let fail = |offset: usize, kind, message: String| IrError::InvalidEncoding {
            kind,
            path: "$".into(),
            offset,
            message,
        };
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(fail(
                MAX_INPUT_BYTES,
                K::LimitExceeded,
                format!(
                    "input is {} bytes; the decoder accepts at most {MAX_INPUT_BYTES}",
                    bytes.len()
                ),
            ));
        }
        let src = std::str::from_utf8(bytes).map_err(|e| {
            fail(
                e.valid_up_to(),
                K::Syntax,
                "input is not valid UTF-8".into(),
            )
        })?;
        Ok(Reader {
            src,
            bytes,
            pos: 0,
            path: Vec::with_capacity(8),
            map: record.then(SourceMap::default),
            last_file: None,
        })
    }

    // ---------------------------------------------------------------- errors

    fn path_string(&self) -> String {
        let mut s = String::from("$");
        for seg in &self.path {
            match seg {
                Seg::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Seg::Index(i) => {
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }

    fn err(&self, kind: K, offset: usize, message: impl Into<String>) -> IrError {
        IrError::InvalidEncoding {
            kind,
            path: self.path_string(),
            offset,
            message: message.into(),
        }
    }

    fn wrong_type(&self, expected: &str) -> IrError {
        let found = describe(self.bytes.get(self.pos).copied());
        let kind = if matches!(found, "an invalid token" | "end of input") {
            K::Syntax
        } else {
            K::WrongType
        };
        self.err(
            kind,
            self.pos,
            format!("expected {expected}, found {found}"),
        )
    }

    // ----------------------------------------------------------- JSON tokens

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8, what: &str) -> R<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            let found = describe(self.bytes.get(self.pos).copied());
            let found = if found == "an invalid token" {
                "an unexpected character"
            } else {
                found
            };
            Err(self.err(
                K::Syntax,
                self.pos,
                format!("expected {what}, found {found}"),
            ))
        }
    }

    /// Consumes `{`; returns the object's start offset.
    fn begin_object(&mut self, what: &str) -> R<usize> {
        if self.peek() == Some(b'{') {
            let start = self.pos;
            self.pos += 1;
            Ok(start)
        } else {
            Err(self.wrong_type(what))
        }
    }

    /// Next key of an object, or `None` after its `}`.
    fn next_key(&mut self, first: &mut bool) -> R<Option<(Cow<'a, str>, usize)>> {
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(None);
        }
        if !*first {
            self.expect(b',', "`,` or `}`")?;
        }
        *first = false;
        if self.peek() != Some(b'"') {
            return Err(self.err(K::Syntax, self.pos, "expected an object key string"));
        }
        let at = self.pos;
        let key = self.string_token()?;
        self.expect(b':', "`:`")?;
        self.ws();
        Ok(Some((key, at)))
    }

    fn begin_array(&mut self, what: &str) -> R<()> {
        if self.peek() == Some(b'[') {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.wrong_type(what))
        }
    }

    /// Whether another array element follows (consumes `]` when not).
    fn next_element(&mut self, first: &mut bool) -> R<bool> {
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(false);
        }
        if !*first {
            self.expect(b',', "`,` or `]`")?;
            self.ws();
        }
        *first = false;
        Ok(true)
    }

    fn literal(&mut self, word: &'static [u8]) -> R<()> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.err(K::Syntax, self.pos, "invalid literal"))
        }
    }

    fn bool(&mut self, what: &str) -> R<bool> {
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|()| true),
            Some(b'f') => self.literal(b"false").map(|()| false),
            _ => Err(self.wrong_type(what)),
        }
    }

    /// Whether the next value is `null` (consumed if so).
    fn null(&mut self) -> R<bool> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn string(&mut self, what: &str) -> R<Cow<'a, str>> {
        if self.peek() == Some(b'"') {
            self.string_token()
        } else {
            Err(self.wrong_type(what))
        }
    }

    fn owned_string(&mut self, what: &str) -> R<String> {
        self.string(what).map(Cow::into_owned)
    }

    /// Reads a string token at `pos` (which holds `"`).
    fn string_token(&mut self) -> R<Cow<'a, str>> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        // Fast scan for the common escape-free case.
        loop {
            match self.bytes.get(self.pos) {
                None => return Err(self.err(K::Syntax, open, "unterminated string")),
                Some(b'"') => {
                    let s = self.src.get(start..self.pos).unwrap_or_default();
                    self.pos += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(&b) if b < 0x20 => {
                    return Err(self.err(
                        K::Syntax,
                        self.pos,
                        "unescaped control character in string",
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
        let mut out = String::with_capacity(self.pos - start + 16);
        out.push_str(self.src.get(start..self.pos).unwrap_or_default());
        let mut run = self.pos;
        loop {
            match self.bytes.get(self.pos) {
                None => return Err(self.err(K::Syntax, open, "unterminated string")),
                Some(b'"') => {
                    out.push_str(self.src.get(run..self.pos).unwrap_or_default());
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    out.push_str(self.src.get(run..self.pos).unwrap_or_default());
                    let at = self.pos;
                    let esc = self.bytes.get(self.pos + 1).copied();
                    self.pos += 2;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let c = self.unicode_escape(at)?;
                            out.push(c);
                        }
                        _ => return Err(self.err(K::Syntax, at, "invalid escape in string")),
                    }
                    run = self.pos;
                }
                Some(&b) if b < 0x20 => {
                    return Err(self.err(
                        K::Syntax,
                        self.pos,
                        "unescaped control character in string",
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn hex4(&mut self, at: usize) -> R<u32> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.err(K::Syntax, at, "truncated \\u escape"))?;
        let mut v = 0u32;
        for &d in digits {
            let n = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.err(K::Syntax, at, "invalid \\u escape"))?;
            v = v * 16 + n;
        }
        self.pos += 4;
        Ok(v)
    }

    /// Decodes `\uXXXX` (after the `u`), joining surrogate pairs.
    fn unicode_escape(&mut self, at: usize) -> R<char> {
        let first = self.hex4(at)?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                    return Err(self.err(K::Syntax, at, "lone high surrogate in \\u escape"));
                }
                self.pos += 2;
                let second = self.hex4(at)?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.err(K::Syntax, at, "lone high surrogate in \\u escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => {
                return Err(self.err(K::Syntax, at, "lone low surrogate in \\u escape"));
            }
            c => c,
        };
        char::from_u32(code).ok_or_else(|| self.err(K::Syntax, at, "invalid \\u escape"))
    }

    /// Scans a JSON number token; returns its text and whether it is a plain
    /// non-negative integer (no sign, fraction or exponent).
    fn number_token(&mut self) -> R<(&'a str, bool)> {
        let start = self.pos;
        let b = &self.bytes;
        let mut p = self.pos;
        let mut plain = true;
        if b.get(p) == Some(&b'-') {
            p += 1;
            plain = false;
        }
        match b.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = b.get(p) {
                    p += 1;
                }
            }
            _ => return Err(self.err(K::Syntax, start, "invalid number")),
        }
        if b.get(p) == Some(&b'.') {
            plain = false;
            p += 1;
            if !matches!(b.get(p), Some(b'0'..=b'9')) {
                return Err(self.err(K::Syntax, start, "invalid number"));
            }
            while let Some(b'0'..=b'9') = b.get(p) {
                p += 1;
            }
        }
        if let Some(b'e' | b'E') = b.get(p) {
            plain = false;
            p += 1;
            if let Some(b'+' | b'-') = b.get(p) {
                p += 1;
            }
            if !matches!(b.get(p), Some(b'0'..=b'9')) {
                return Err(self.err(K::Syntax, start, "invalid number"));
            }
            while let Some(b'0'..=b'9') = b.get(p) {
                p += 1;
            }
        }
        self.pos = p;
        Ok((self.src.get(start..p).unwrap_or_default(), plain))
    }

    /// A non-negative whole number that fits u32. Like the reference
    /// engine, any JSON spelling of such a number is accepted (`7`, `7.0`,
    /// `7e0`, `-0`); fractions, negatives and overflow are out of range.
    fn u32(&mut self, what: &str) -> R<u32> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => {}
            _ => return Err(self.wrong_type(what)),
        }
        let start = self.pos;
        let (text, plain) = self.number_token()?;
        let out_of_range = |this: &Self| {
            this.err(
                K::OutOfRange,
                start,
                format!("expected {what}, found {text} (not a whole number in 0..=4294967295)"),
            )
        };
        if plain {
            return text.parse::<u32>().map_err(|_| out_of_range(self));
        }
        match text.parse::<f64>() {
            Ok(n) if n == n.trunc() && (0.0..=f64::from(u32::MAX)).contains(&n) => Ok(n as u32),
            _ => Err(out_of_range(self)),
        }
    }

    fn finite_f64(&self, text: &str, at: usize) -> R<f64> {
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(n),
            _ => Err(self.err(
                K::OutOfRange,
                at,
                format!(
                    "number {text} overflows binary64 (write \"Infinity\" or \"-Infinity\" on the number tag)"
                ),
            )),
        }
    }

    // ------------------------------------------------------------ the schema

    fn document(mut self) -> R<(Artifact, Option<SourceMap>)> {
        let start = self.begin_object("the artifact object")?;
        let mut envelope = None;
        let mut program = None;
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            match &*key {
                "envelope" => {
                    self.once(envelope.is_some(), "envelope", at)?;
                    self.path.push(Seg::Key("envelope"));
                    envelope = Some(self.envelope()?);
                    self.path.pop();
                }
                "program" => {
                    self.once(program.is_some(), "program", at)?;
                    self.path.push(Seg::Key("program"));
                    program = Some(self.program()?);
                    self.path.pop();
                }
                other => return Err(self.unknown_key(other, at, "the artifact")),
            }
        }
        self.ws();
        if self.pos != self.bytes.len() {
            return Err(self.err(K::Syntax, self.pos, "trailing data after the artifact"));
        }
        let envelope = envelope.ok_or_else(|| self.missing("envelope", start))?;
        let program = program.ok_or_else(|| self.missing("program", start))?;
        Ok((Artifact { envelope, program }, self.map))
    }

    fn once(&self, seen: bool, key: &str, at: usize) -> R<()> {
        if seen {
            Err(self.err(K::DuplicateKey, at, format!("duplicate key {key:?}")))
        } else {
            Ok(())
        }
    }

    fn unknown_key(&self, key: &str, at: usize, object: &str) -> IrError {
        self.err(
            K::UnknownKey,
            at,
            format!("unknown key {key:?} in {object}"),
        )
    }

    fn missing(&self, key: &str, object_start: usize) -> IrError {
        self.err(
            K::MissingKey,
            object_start,
            format!("missing required key {key:?}"),
        )
    }

    fn envelope(&mut self) -> R<Envelope> {
        const KEYS: [&str; 8] = [
            "artifact_hash",
            "engine_format_version",
            "frontend_id",
            "frontend_version",
            "language_semantics_version",
            "required_engine_features",
            "required_host_capabilities",
            "runtime_modules",
        ];
        let start = self.begin_object("the envelope object")?;
        let mut e = Envelope::default();
        let mut seen = [false; 8];
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            let Some(i) = KEYS.iter().position(|k| *k == key) else {
                return Err(self.unknown_key(&key, at, "the envelope"));
            };
            self.once(seen[i], KEYS[i], at)?;
            seen[i] = true;
            let value_at = self.pos;
            if let Some(map) = &mut self.map {
                map.envelope.push((KEYS[i], value_at));
            }
            self.path.push(Seg::Key(KEYS[i]));
            match i {
                0 => e.artifact_hash = self.owned_string("a string")?,
                1 => e.engine_format_version = self.u32("an unsigned integer")?,
                2 => e.frontend_id = self.owned_string("a string")?,
                3 => e.frontend_version = self.owned_string("a string")?,
                4 => e.language_semantics_version = self.owned_string("a string")?,
                5 => e.required_engine_features = self.string_array(StringList::Features)?,
                6 => e.required_host_capabilities = self.string_array(StringList::Capabilities)?,
                _ => e.runtime_modules = self.runtime_modules()?,
            }
            self.path.pop();
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(self.missing(KEYS[i], start));
        }
        Ok(e)
    }

    fn string_array(&mut self, list: StringList) -> R<Vec<String>> {
        self.begin_array("an array of strings")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            let at = self.pos;
            if let Some(map) = &mut self.map {
                match list {
                    StringList::Features => map.engine_features.push(at),
                    StringList::Capabilities => map.host_capabilities.push(at),
                }
            }
            out.push(self.owned_string("a string")?);
            self.path.pop();
        }
        Ok(out)
    }

    fn runtime_modules(&mut self) -> R<Vec<RuntimeModule>> {
        self.begin_array("an array of runtime modules")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            let start = self.begin_object("a runtime module object")?;
            let (mut id, mut kind) = (None, None);
            let mut f = true;
            while let Some((key, at)) = self.next_key(&mut f)? {
                match &*key {
                    "id" => {
                        self.once(id.is_some(), "id", at)?;
                        self.path.push(Seg::Key("id"));
                        id = Some(self.owned_string("a string")?);
                        self.path.pop();
                    }
                    "kind" => {
                        self.once(kind.is_some(), "kind", at)?;
                        self.path.push(Seg::Key("kind"));
                        kind = Some(self.owned_string("a string")?);
                        self.path.pop();
                    }
                    other => return Err(self.unknown_key(other, at, "a runtime module")),
                }
            }
            let id = id.ok_or_else(|| self.missing("id", start))?;
            let kind = kind.ok_or_else(|| self.missing("kind", start))?;
            out.push(RuntimeModule { id, kind });
            self.path.pop();
        }
        Ok(out)
    }

    fn program(&mut self) -> R<Program> {
        let start = self.begin_object("the program object")?;
        let (mut entry, mut functions) = (None, None);
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            match &*key {
                "entry" => {
                    self.once(entry.is_some(), "entry", at)?;
                    if let Some(map) = &mut self.map {
                        map.entry = self.pos;
                    }
                    self.path.push(Seg::Key("entry"));
                    entry = Some(self.u32("a function id")?);
                    self.path.pop();
                }
                "functions" => {
                    self.once(functions.is_some(), "functions", at)?;
                    if let Some(map) = &mut self.map {
                        map.functions_array = self.pos;
                    }
                    self.path.push(Seg::Key("functions"));
                    functions = Some(self.functions()?);
                    self.path.pop();
                }
                other => return Err(self.unknown_key(other, at, "the program")),
            }
        }
        let entry = entry.ok_or_else(|| self.missing("entry", start))?;
        let functions = functions.ok_or_else(|| self.missing("functions", start))?;
        Ok(Program { entry, functions })
    }

    fn functions(&mut self) -> R<Vec<Function>> {
        self.begin_array("an array of functions")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            out.push(self.function()?);
            self.path.pop();
        }
        Ok(out)
    }

    fn function(&mut self) -> R<Function> {
        const KEYS: [&str; 7] = [
            "id",
            "name",
            "param_count",
            "local_count",
            "instructions",
            "spans",
            "param_defaults",
        ];
        let start = self.begin_object("a function object")?;
        if let Some(map) = &mut self.map {
            map.functions.push(FunctionMap {
                start,
                ..FunctionMap::default()
            });
        }
        let mut f = Function::default();
        let mut seen = [false; 7];
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            let Some(i) = KEYS.iter().position(|k| *k == key) else {
                return Err(self.unknown_key(&key, at, "a function"));
            };
            self.once(seen[i], KEYS[i], at)?;
            seen[i] = true;
            self.path.push(Seg::Key(KEYS[i]));
            match i {
                0 => f.id = self.u32("a function id")?,
                1 => f.name = self.owned_string("a string")?,
                2 => f.param_count = self.u32("an unsigned integer")?,
                3 => f.local_count = self.u32("an unsigned integer")?,
                4 => f.instructions = self.instructions()?,
                5 => {
                    if let Some(fm) = self.map.as_mut().and_then(|m| m.functions.last_mut()) {
                        fm.spans = self.pos;
                    }
                    f.spans = self.spans()?;
                }
                _ => f.param_defaults = self.param_defaults()?,
            }
            self.path.pop();
        }
        if let Some(i) = seen[..6].iter().position(|s| !s) {
            return Err(self.missing(KEYS[i], start));
        }
        Ok(f)
    }

    fn instructions(&mut self) -> R<Vec<Instruction>> {
        self.begin_array("an array of instructions")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            if let Some(fm) = self.map.as_mut().and_then(|m| m.functions.last_mut()) {
                fm.instructions.push(self.pos);
            }
            out.push(self.instruction()?);
            self.path.pop();
        }
        // Keeps decoded memory within a fixed multiple of the input size.
        out.shrink_to_fit();
        Ok(out)
    }

    fn spans(&mut self) -> R<Vec<Option<Span>>> {
        self.begin_array("an array of spans")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            let span = if self.null()? {
                None
            } else {
                Some(self.span()?)
            };
            out.push(span);
            self.path.pop();
        }
        out.shrink_to_fit();
        Ok(out)
    }

    fn span(&mut self) -> R<Span> {
        const KEYS: [&str; 5] = [
            "file",
            "start_line",
            "start_column",
            "end_line",
            "end_column",
        ];
        let start = self.begin_object("a span object or null")?;
        let mut s = Span::default();
        let mut seen = [false; 5];
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            let Some(i) = KEYS.iter().position(|k| *k == key) else {
                return Err(self.unknown_key(&key, at, "a span"));
            };
            self.once(seen[i], KEYS[i], at)?;
            seen[i] = true;
            self.path.push(Seg::Key(KEYS[i]));
            match i {
                0 => s.file = self.span_file()?,
                1 => s.start_line = self.u32("an unsigned integer")?,
                2 => s.start_column = self.u32("an unsigned integer")?,
                3 => s.end_line = self.u32("an unsigned integer")?,
                _ => s.end_column = self.u32("an unsigned integer")?,
            }
            self.path.pop();
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(self.missing(KEYS[i], start));
        }
        Ok(s)
    }

    /// A span's `file`, shared with the previous span's when equal.
    fn span_file(&mut self) -> R<Arc<str>> {
        let name = self.string("a string")?;
        if let Some(last) = &self.last_file
            && **last == *name
        {
            return Ok(Arc::clone(last));
        }
        let file: Arc<str> = Arc::from(name.as_ref());
        self.last_file = Some(Arc::clone(&file));
        Ok(file)
    }

    /// `param_defaults`: an array of constants or nulls. An all-null array
    /// decodes as absent, which is how the encoder writes it.
    fn param_defaults(&mut self) -> R<Option<Vec<Option<Constant>>>> {
        self.begin_array("an array of constants or nulls")?;
        let mut out = Vec::new();
        let mut first = true;
        while self.next_element(&mut first)? {
            self.path.push(Seg::Index(out.len()));
            let c = if self.null()? {
                None
            } else {
                Some(self.constant()?)
            };
            out.push(c);
            self.path.pop();
        }
        Ok(out.iter().any(Option::is_some).then_some(out))
    }

    fn constant(&mut self) -> R<Constant> {
        let start = self.begin_object("a tagged constant object")?;
        let mut tag: Option<(Cow<'a, str>, usize)> = None;
        let mut payload: Option<(Payload<'a>, usize)> = None;
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            match &*key {
                "t" => {
                    self.once(tag.is_some(), "t", at)?;
                    self.path.push(Seg::Key("t"));
                    let value_at = self.pos;
                    tag = Some((self.string("a constant tag string")?, value_at));
                    self.path.pop();
                }
                "v" => {
                    self.once(payload.is_some(), "v", at)?;
                    self.path.push(Seg::Key("v"));
                    let value_at = self.pos;
                    let p = match self.bytes.get(self.pos) {
                        Some(b'"') => Payload::String(self.string_token()?),
                        Some(b't' | b'f') => Payload::Bool(self.bool("a boolean")?),
                        Some(b'n') => {
                            self.literal(b"null")?;
                            Payload::Null
                        }
                        Some(b'-' | b'0'..=b'9') => {
                            Payload::Number(self.number_token()?.0, value_at)
                        }
                        _ => {
                            return Err(
                                self.wrong_type("a constant payload (number, string or boolean)")
                            );
                        }
                    };
                    payload = Some((p, value_at));
                    self.path.pop();
                }
                other => return Err(self.unknown_key(other, at, "a constant")),
            }
        }
        let (tag, tag_at) = tag.ok_or_else(|| self.missing("t", start))?;
        let need = |this: &Self| this.missing("v", start);
        let wrong = |this: &Self, at: usize, expected: &str| {
            let mut e = this.err(
                K::WrongType,
                at,
                format!("the {tag} constant's \"v\" must be {expected}"),
            );
            if let IrError::InvalidEncoding { path, .. } = &mut e {
                path.push_str(".v");
            }
            e
        };
        match &*tag {
            "undefined" | "null" => {
                if let Some((_, at)) = payload {
                    return Err(self.err(
                        K::UnknownKey,
                        at,
                        format!("the {tag} constant takes no \"v\""),
                    ));
                }
                Ok(if &*tag == "null" {
                    Constant::Null
                } else {
                    Constant::Undefined
                })
            }
            "bool" => match payload {
                Some((Payload::Bool(b), _)) => Ok(Constant::Bool(b)),
                Some((_, at)) => Err(wrong(self, at, "a boolean")),
                None => Err(need(self)),
            },
            "number" => match payload {
                Some((Payload::Number(text, at), _)) => {
                    Ok(Constant::Number(self.finite_f64(text, at)?))
                }
                Some((Payload::String(s), at)) => match &*s {
                    "NaN" => Ok(Constant::Number(f64::NAN)),
                    "Infinity" => Ok(Constant::Number(f64::INFINITY)),
                    "-Infinity" => Ok(Constant::Number(f64::NEG_INFINITY)),
                    other => {
                        let mut e = self.err(
                            K::BadNumberString,
                            at,
                            format!(
                                "number payload string {other:?} is not \"NaN\", \"Infinity\" or \"-Infinity\""
                            ),
                        );
                        if let IrError::InvalidEncoding { path, .. } = &mut e {
                            path.push_str(".v");
                        }
                        Err(e)
                    }
                },
                Some((_, at)) => Err(wrong(self, at, "a number or a non-finite number string")),
                None => Err(need(self)),
            },
            "string" => match payload {
                Some((Payload::String(s), _)) => Ok(Constant::String(s.into_owned())),
                Some((_, at)) => Err(wrong(self, at, "a string")),
                None => Err(need(self)),
            },
            other => {
                let mut e = self.err(
                    K::UnknownTag,
                    tag_at,
                    format!(
                        "unknown constant tag {other:?} (constants are undefined, null, bool, number, string)"
                    ),
                );
                if let IrError::InvalidEncoding { path, .. } = &mut e {
                    path.push_str(".t");
                }
                Err(e)
            }
        }
    }

    fn instruction(&mut self) -> R<Instruction> {
        let start = self.begin_object("an instruction object")?;
        let mut fields = Fields::default();
        let mut first = true;
        while let Some((key, at)) = self.next_key(&mut first)? {
            let Some(field) = Field::from_key(&key) else {
                return Err(self.unknown_key(&key, at, "an instruction"));
            };
            let bit = 1u16 << (field as u16);
            if fields.present & bit != 0 {
                return Err(self.err(K::DuplicateKey, at, format!("duplicate key {key:?}")));
            }
            fields.present |= bit;
            fields.key_at[field as usize] = at;
            let name = field.name();
            self.path.push(Seg::Key(name));
            match field {
                Field::Op => {
                    let value_at = self.pos;
                    fields.op = Some((self.string("an op name string")?, value_at));
                }
                Field::Value => fields.value = Some(self.constant()?),
                Field::Key => fields.key = Some(self.owned_string("a string")?),
                Field::HasInput => fields.has_input = self.bool("a boolean")?,
                Field::Finally => {
                    fields.finally = if self.null()? {
                        None
                    } else {
                        Some(self.u32("an instruction index or null")?)
                    }
                }
                _ => fields.ints[field as usize] = self.u32("an unsigned integer")?,
            }
            self.path.pop();
        }
        let Some((op, op_at)) = fields.op.take() else {
            return Err(self.missing("op", start));
        };
        fields.build(self, &op, op_at, start)
    }
}

/// Keys an instruction object may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Op = 0,
    Target,
    Local,
    Value,
    Key,
    Index,
    Func,
    Argc,
    Count,
    JoinPc,
    Catch,
    Finally,
    ArgCount,
    HasInput,
}

const FIELD_COUNT: usize = 14;

impl Field {
    fn from_key(key: &str) -> Option<Field> {
        Some(match key {
            "op" => Field::Op,
            "target" => Field::Target,
            "local" => Field::Local,
            "value" => Field::Value,
            "key" => Field::Key,
            "index" => Field::Index,
            "func" => Field::Func,
            "argc" => Field::Argc,
            "count" => Field::Count,
            "join_pc" => Field::JoinPc,
            "catch" => Field::Catch,
            "finally" => Field::Finally,
            "arg_count" => Field::ArgCount,
            "has_input" => Field::HasInput,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        [
            "op",
            "target",
            "local",
            "value",
            "key",
            "index",
            "func",
            "argc",
            "count",
            "join_pc",
            "catch",
            "finally",
            "arg_count",
            "has_input",
        ][self as usize]
    }

    const ALL: [Field; FIELD_COUNT] = [
        Field::Op,
        Field::Target,
        Field::Local,
        Field::Value,
        Field::Key,
        Field::Index,
        Field::Func,
        Field::Argc,
        Field::Count,
        Field::JoinPc,
        Field::Catch,
        Field::Finally,
        Field::ArgCount,
        Field::HasInput,
    ];
}

#[derive(Default)]
struct Fields<'a> {
    present: u16,
    key_at: [usize; FIELD_COUNT],
    op: Option<(Cow<'a, str>, usize)>,
    ints: [u32; FIELD_COUNT],
    value: Option<Constant>,
    key: Option<String>,
    finally: Option<u32>,
    has_input: bool,
}

const fn bits(fields: &[Field]) -> u16 {
    let mut m = 0u16;
    let mut i = 0;
    while i < fields.len() {
        m |= 1 << (fields[i] as u16);
        i += 1;
    }
    m
}

impl Fields<'_> {
    fn int(&self, f: Field) -> u32 {
        self.ints[f as usize]
    }

    /// Builds the instruction for `op`, checking that exactly its required
    /// keys (plus its optional ones) are present.
    fn build(mut self, r: &Reader<'_>, op: &str, op_at: usize, start: usize) -> R<Instruction> {
        use Field as F;
        use Instruction as I;
        const NONE: u16 = 0;
        let (ins, required, optional) = match op {
            "Nop" => (I::Nop, NONE, NONE),
            "Jump" => (
                I::Jump {
                    target: self.int(F::Target),
                },
                bits(&[F::Target]),
                NONE,
            ),
            "JumpIfTrue" => (
                I::JumpIfTrue {
                    target: self.int(F::Target),
                },
                bits(&[F::Target]),
                NONE,
            ),
            "JumpIfFalse" => (
                I::JumpIfFalse {
                    target: self.int(F::Target),
                },
                bits(&[F::Target]),
                NONE,
            ),
            "Call" => (
                I::Call {
                    func: self.int(F::Func),
                    argc: self.int(F::Argc),
                },
                bits(&[F::Func, F::Argc]),
                NONE,
            ),
            "Return" => (I::Return, NONE, NONE),
            "LoadLocal" => (
                I::LoadLocal {
                    local: self.int(F::Local),
                },
                bits(&[F::Local]),
                NONE,
            ),
            "StoreLocal" => (
                I::StoreLocal {
                    local: self.int(F::Local),
                },
                bits(&[F::Local]),
                NONE,
            ),
            "LoadConst" => {
                let value = self.value.take().unwrap_or(Constant::Undefined);
                (I::LoadConst { value }, bits(&[F::Value]), NONE)
            }
            "Pop" => (I::Pop, NONE, NONE),
            "NewObject" => (I::NewObject, NONE, NONE),
            "SetProp" => (
                I::SetProp {
                    key: self.key.take().unwrap_or_default(),
                },
                bits(&[F::Key]),
                NONE,
            ),
            "GetProp" => (
                I::GetProp {
                    key: self.key.take().unwrap_or_default(),
                },
                bits(&[F::Key]),
                NONE,
            ),
            "NewArray" => (I::NewArray, NONE, NONE),
            "ArrayPush" => (I::ArrayPush, NONE, NONE),
            "ArrayIndex" => (
                I::ArrayIndex {
                    index: self.int(F::Index),
                },
                bits(&[F::Index]),
                NONE,
            ),
            "StrictEq" => (I::StrictEq, NONE, NONE),
            "StrictNeq" => (I::StrictNeq, NONE, NONE),
            "Lt" => (I::Lt, NONE, NONE),
            "Le" => (I::Le, NONE, NONE),
            "Gt" => (I::Gt, NONE, NONE),
            "Ge" => (I::Ge, NONE, NONE),
            "Not" => (I::Not, NONE, NONE),
            "Effect" => (
                I::Effect {
                    has_input: self.has_input,
                },
                NONE,
                bits(&[F::HasInput]),
            ),
            "Sleep" => (I::Sleep, NONE, NONE),
            "WaitForEvent" => (I::WaitForEvent, NONE, NONE),
            "Invoke" => (
                I::Invoke {
                    arg_count: self.int(F::ArgCount),
                },
                NONE,
                bits(&[F::ArgCount]),
            ),
            "Fork" => (
                I::Fork {
                    count: self.int(F::Count),
                    join_pc: self.int(F::JoinPc),
                },
                bits(&[F::Count, F::JoinPc]),
                NONE,
            ),
            "JoinAll" => (I::JoinAll, NONE, NONE),
            "JoinAny" => (I::JoinAny, NONE, NONE),
            "Throw" => (I::Throw, NONE, NONE),
            "PushTry" => (
                I::PushTry {
                    catch: self.int(F::Catch),
                    finally: self.finally,
                },
                bits(&[F::Catch, F::Finally]),
                NONE,
            ),
            "PopTry" => (I::PopTry, NONE, NONE),
            "Add" => (I::Add, NONE, NONE),
            "Sub" => (I::Sub, NONE, NONE),
            "Mul" => (I::Mul, NONE, NONE),
            "Div" => (I::Div, NONE, NONE),
            "Rem" => (I::Rem, NONE, NONE),
            "Neg" => (I::Neg, NONE, NONE),
            "Pow" => (I::Pow, NONE, NONE),
            "FloorDiv" => (I::FloorDiv, NONE, NONE),
            "GetIndex" => (I::GetIndex, NONE, NONE),
            "SetIndex" => (I::SetIndex, NONE, NONE),
            "Length" => (I::Length, NONE, NONE),
            "WatchIter" => (I::WatchIter, NONE, NONE),
            "UnwatchIter" => (I::UnwatchIter, NONE, NONE),
            "Same" => (I::Same, NONE, NONE),
            "NewCell" => (I::NewCell, NONE, NONE),
            "NewEnv" => (
                I::NewEnv {
                    count: self.int(F::Count),
                },
                bits(&[F::Count]),
                NONE,
            ),
            "NewClosure" => (
                I::NewClosure {
                    func: self.int(F::Func),
                },
                bits(&[F::Func]),
                NONE,
            ),
            "EnvGet" => (
                I::EnvGet {
                    index: self.int(F::Index),
                },
                bits(&[F::Index]),
                NONE,
            ),
            "EnvSet" => (
                I::EnvSet {
                    index: self.int(F::Index),
                },
                bits(&[F::Index]),
                NONE,
            ),
            "EnvSlot" => (
                I::EnvSlot {
                    index: self.int(F::Index),
                },
                bits(&[F::Index]),
                NONE,
            ),
            "CallClosure" => (
                I::CallClosure {
                    argc: self.int(F::Argc),
                },
                bits(&[F::Argc]),
                NONE,
            ),
            "LoadFunc" => (
                I::LoadFunc {
                    func: self.int(F::Func),
                },
                bits(&[F::Func]),
                NONE,
            ),
            other => {
                let mut e = r.err(K::UnknownOp, op_at, format!("unknown op {other:?}"));
                if let IrError::InvalidEncoding { path, .. } = &mut e {
                    path.push_str(".op");
                }
                return Err(e);
            }
        };
        let allowed = required | optional | bits(&[F::Op]);
        if let Some(extra) = Field::ALL
            .iter()
            .find(|f| self.present & !allowed & (1 << (**f as u16)) != 0)
        {
            return Err(r.err(
                K::UnknownKey,
                self.key_at[*extra as usize],
                format!("{op} has no field {:?}", extra.name()),
            ));
        }
        if let Some(missing) = Field::ALL
            .iter()
            .find(|f| required & !self.present & (1 << (**f as u16)) != 0)
        {
            return Err(r.err(
                K::MissingKey,
                start,
                format!("{op} requires field {:?}", missing.name()),
            ));
        }
        Ok(ins)
    }
}
