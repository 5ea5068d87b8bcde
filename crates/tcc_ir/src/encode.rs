//! Canonical JSON encoding and the artifact hash.
//!
//! The encoder writes the canonical form directly: object keys in byte
//! order, no whitespace, integers in decimal, binary64 numbers in Rust's
//! `Display` spelling (no exponent, `-0` kept), strings raw UTF-8 except
//! `"` `\` `\n` `\r` `\t` (backslash escapes) and the other Unicode
//! control characters, U+0000–U+001F and U+007F–U+009F (`\u00xx`, lowercase
//! hex), as the reference engine writes them. `docs/tcc/format.md` describes
//! the form in full.

use crate::artifact::{Artifact, Envelope, Function, Program, RuntimeModule, Span};
use crate::constant::Constant;
use crate::instruction::Instruction;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::sync::Arc;

/// Byte sink the encoder writes into.
trait Sink {
    fn put(&mut self, bytes: &[u8]);

    /// Called after each instruction, span and function: a sink that
    /// streams passes on what it holds here, not on every `put`.
    #[inline]
    fn settle(&mut self) {}
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Feeds SHA-256 in blocks, so hashing never holds the whole encoding.
struct HashSink {
    hasher: Sha256,
    buf: Vec<u8>,
}

const HASH_BUFFER: usize = 64 * 1024;

impl Sink for HashSink {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    #[inline]
    fn settle(&mut self) {
        if self.buf.len() >= HASH_BUFFER {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }
}

/// The bytes of a span object between its `end_line` and `start_column`
/// values, `,"file":"…","start_column":`, for the file of the last span
/// written: the spans of a function almost always share one file.
#[derive(Default)]
struct SpanFile {
    file: Option<Arc<str>>,
    middle: Vec<u8>,
}

impl SpanFile {
    #[inline]
    fn middle(&mut self, file: &Arc<str>) -> &[u8] {
        let same = self
            .file
            .as_ref()
            .is_some_and(|f| Arc::ptr_eq(f, file) || **f == **file);
        if !same {
            self.middle.clear();
            self.middle.extend_from_slice(b",\"file\":");
            write_str(&mut self.middle, file);
            self.middle.extend_from_slice(b",\"start_column\":");
            self.file = Some(Arc::clone(file));
        }
        &self.middle
    }
}

/// Encodes an artifact as canonical JSON (the form the hash is taken over,
/// with the envelope's `artifact_hash` as it is).
pub fn encode_artifact(artifact: &Artifact) -> Vec<u8> {
    let mut out = Vec::with_capacity(estimate_size(artifact));
    write_artifact(&mut out, artifact, None);
    out
}

/// [`encode_artifact`] as a `String` (canonical JSON is always UTF-8).
pub fn encode_artifact_string(artifact: &Artifact) -> String {
    String::from_utf8(encode_artifact(artifact)).unwrap_or_default()
}

/// The canonical encoding with `artifact_hash` replaced by `""`: the
/// exact bytes that [`compute_hash`] digests.
pub fn hash_input(artifact: &Artifact) -> Vec<u8> {
    let mut out = Vec::with_capacity(estimate_size(artifact));
    write_artifact(&mut out, artifact, Some(""));
    out
}

/// The artifact hash: lowercase hex SHA-256 of the canonical JSON of the
/// artifact with `artifact_hash` set to the empty string.
pub fn compute_hash(artifact: &Artifact) -> String {
    let mut sink = HashSink {
        hasher: Sha256::new(),
        // Room for the instruction or span that crosses the threshold.
        buf: Vec::with_capacity(HASH_BUFFER + 4096),
    };
    write_artifact(&mut sink, artifact, Some(""));
    let HashSink { mut hasher, buf } = sink;
    hasher.update(&buf);
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Returns a copy of `artifact` whose `artifact_hash` is the computed hash.
pub fn with_computed_hash(artifact: &Artifact) -> Artifact {
    let mut out = artifact.clone();
    out.envelope.artifact_hash = compute_hash(artifact);
    out
}

/// Rough output size, to size the buffer once.
fn estimate_size(artifact: &Artifact) -> usize {
    512 + artifact
        .program
        .functions
        .iter()
        .map(|f| {
            // A span object is about 70 bytes besides its file name.
            let spans: usize = f.spans.iter().flatten().map(|s| 72 + s.file.len()).sum();
            128 + f.instructions.len() * 40 + spans
        })
        .sum::<usize>()
}

fn write_artifact<S: Sink>(out: &mut S, artifact: &Artifact, hash_override: Option<&str>) {
    out.put(b"{\"envelope\":");
    write_envelope(out, &artifact.envelope, hash_override);
    out.put(b",\"program\":");
    write_program(out, &artifact.program);
    out.put(b"}");
}

fn write_envelope<S: Sink>(out: &mut S, e: &Envelope, hash_override: Option<&str>) {
    out.put(b"{\"artifact_hash\":");
    write_str(out, hash_override.unwrap_or(&e.artifact_hash));
    out.put(b",\"engine_format_version\":");
    write_u32(out, e.engine_format_version);
    out.put(b",\"frontend_id\":");
    write_str(out, &e.frontend_id);
    out.put(b",\"frontend_version\":");
    write_str(out, &e.frontend_version);
    out.put(b",\"language_semantics_version\":");
    write_str(out, &e.language_semantics_version);
    out.put(b",\"required_engine_features\":");
    write_str_array(out, &e.required_engine_features);
    out.put(b",\"required_host_capabilities\":");
    write_str_array(out, &e.required_host_capabilities);
    out.put(b",\"runtime_modules\":[");
    for (i, RuntimeModule { id, kind }) in e.runtime_modules.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        out.put(b"{\"id\":");
        write_str(out, id);
        out.put(b",\"kind\":");
        write_str(out, kind);
        out.put(b"}");
    }
    out.put(b"]}");
}

fn write_program<S: Sink>(out: &mut S, p: &Program) {
    out.put(b"{\"entry\":");
    write_u32(out, p.entry);
    out.put(b",\"functions\":[");
    let mut span_file = SpanFile::default();
    for (i, f) in p.functions.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        write_function(out, f, &mut span_file);
        out.settle();
    }
    out.put(b"]}");
}

fn write_function<S: Sink>(out: &mut S, f: &Function, span_file: &mut SpanFile) {
    out.put(b"{\"id\":");
    write_u32(out, f.id);
    out.put(b",\"instructions\":[");
    for (i, ins) in f.instructions.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        write_instruction(out, ins);
        out.settle();
    }
    out.put(b"],\"local_count\":");
    write_u32(out, f.local_count);
    out.put(b",\"name\":");
    write_str(out, &f.name);
    out.put(b",\"param_count\":");
    write_u32(out, f.param_count);
    if let Some(defaults) = &f.param_defaults
        && defaults.iter().any(Option::is_some)
    {
        out.put(b",\"param_defaults\":[");
        for (i, d) in defaults.iter().enumerate() {
            if i > 0 {
                out.put(b",");
            }
            match d {
                Some(c) => write_constant(out, c),
                None => out.put(b"null"),
            }
            out.settle();
        }
        out.put(b"]");
    }
    out.put(b",\"spans\":[");
    for (i, s) in f.spans.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        match s {
            Some(span) => write_span(out, span, span_file),
            None => out.put(b"null"),
        }
        out.settle();
    }
    out.put(b"]}");
}

fn write_span<S: Sink>(out: &mut S, s: &Span, span_file: &mut SpanFile) {
    out.put(b"{\"end_column\":");
    write_u32(out, s.end_column);
    out.put(b",\"end_line\":");
    write_u32(out, s.end_line);
    out.put(span_file.middle(&s.file));
    write_u32(out, s.start_column);
    out.put(b",\"start_line\":");
    write_u32(out, s.start_line);
    out.put(b"}");
}

/// Writes `{"<field>":n,"op":"Name"}` for an op with one integer field
/// sorting before `op`.
fn field_then_op<S: Sink>(out: &mut S, field: &[u8], n: u32, name: &str) {
    out.put(b"{\"");
    out.put(field);
    out.put(b"\":");
    write_u32(out, n);
    out.put(b",\"op\":\"");
    out.put(name.as_bytes());
    out.put(b"\"}");
}

fn write_instruction<S: Sink>(out: &mut S, ins: &Instruction) {
    use Instruction::*;
    let name = ins.name();
    match ins {
        Jump { target } | JumpIfTrue { target } | JumpIfFalse { target } => {
            out.put(b"{\"op\":\"");
            out.put(name.as_bytes());
            out.put(b"\",\"target\":");
            write_u32(out, *target);
            out.put(b"}");
        }
        Call { func, argc } => {
            out.put(b"{\"argc\":");
            write_u32(out, *argc);
            out.put(b",\"func\":");
            write_u32(out, *func);
            out.put(b",\"op\":\"Call\"}");
        }
        LoadLocal { local } | StoreLocal { local } => field_then_op(out, b"local", *local, name),
        LoadConst { value } => {
            out.put(b"{\"op\":\"LoadConst\",\"value\":");
            write_constant(out, value);
            out.put(b"}");
        }
        SetProp { key } | GetProp { key } => {
            out.put(b"{\"key\":");
            write_str(out, key);
            out.put(b",\"op\":\"");
            out.put(name.as_bytes());
            out.put(b"\"}");
        }
        ArrayIndex { index } | EnvGet { index } | EnvSet { index } | EnvSlot { index } => {
            field_then_op(out, b"index", *index, name)
        }
        Effect { has_input } => {
            if *has_input {
                out.put(b"{\"has_input\":true,\"op\":\"Effect\"}");
            } else {
                out.put(b"{\"op\":\"Effect\"}");
            }
        }
        Invoke { arg_count } => {
            if *arg_count == 0 {
                out.put(b"{\"op\":\"Invoke\"}");
            } else {
                field_then_op(out, b"arg_count", *arg_count, name);
            }
        }
        Fork { count, join_pc } => {
            out.put(b"{\"count\":");
            write_u32(out, *count);
            out.put(b",\"join_pc\":");
            write_u32(out, *join_pc);
            out.put(b",\"op\":\"Fork\"}");
        }
        PushTry { catch, finally } => {
            out.put(b"{\"catch\":");
            write_u32(out, *catch);
            out.put(b",\"finally\":");
            match finally {
                Some(f) => write_u32(out, *f),
                None => out.put(b"null"),
            }
            out.put(b",\"op\":\"PushTry\"}");
        }
        NewEnv { count } => field_then_op(out, b"count", *count, name),
        NewClosure { func } | LoadFunc { func } => field_then_op(out, b"func", *func, name),
        CallClosure { argc } => field_then_op(out, b"argc", *argc, name),
        Nop | Return | Pop | NewObject | NewArray | ArrayPush | StrictEq | StrictNeq | Lt | Le
        | Gt | Ge | Not | Sleep | WaitForEvent | JoinAll | JoinAny | Throw | PopTry | Add | Sub
        | Mul | Div | Rem | Neg | Pow | FloorDiv | GetIndex | SetIndex | Length | WatchIter
        | UnwatchIter | Same | NewCell => {
            out.put(b"{\"op\":\"");
            out.put(name.as_bytes());
            out.put(b"\"}");
        }
    }
}

fn write_constant<S: Sink>(out: &mut S, c: &Constant) {
    match c {
        Constant::Undefined => out.put(b"{\"t\":\"undefined\"}"),
        Constant::Null => out.put(b"{\"t\":\"null\"}"),
        Constant::Bool(true) => out.put(b"{\"t\":\"bool\",\"v\":true}"),
        Constant::Bool(false) => out.put(b"{\"t\":\"bool\",\"v\":false}"),
        Constant::Number(n) => {
            out.put(b"{\"t\":\"number\",\"v\":");
            write_number(out, *n);
            out.put(b"}");
        }
        Constant::String(s) => {
            out.put(b"{\"t\":\"string\",\"v\":");
            write_str(out, s);
            out.put(b"}");
        }
    }
}

/// Finite numbers as JSON numbers in `Display` spelling; non-finite as strings.
fn write_number<S: Sink>(out: &mut S, n: f64) {
    if n.is_nan() {
        out.put(b"\"NaN\"");
    } else if n == f64::INFINITY {
        out.put(b"\"Infinity\"");
    } else if n == f64::NEG_INFINITY {
        out.put(b"\"-Infinity\"");
    } else if n.fract() == 0.0 && n.abs() < 1e15 && !(n == 0.0 && n.is_sign_negative()) {
        // Fast path; identical to `Display` for integral values in i64 range.
        let mut buf = [0u8; 20];
        let start = format_u64(&mut buf, n.abs() as u64);
        if n < 0.0 {
            out.put(b"-");
        }
        out.put(&buf[start..]);
    } else {
        let mut s = String::new();
        let _ = write!(s, "{n}");
        out.put(s.as_bytes());
    }
}

#[inline]
fn format_u64(buf: &mut [u8; 20], mut n: u64) -> usize {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return i;
        }
    }
}

#[inline]
fn write_u32<S: Sink>(out: &mut S, n: u32) {
    // Fixed-size arrays for the common lengths: each copy has a constant
    // size, so it compiles to stores rather than a `memcpy` call (spans hold
    // four numbers, mostly short).
    let d = |k: u32| b'0' + (k % 10) as u8;
    if n < 10 {
        out.put(&[d(n)]);
    } else if n < 100 {
        out.put(&[d(n / 10), d(n)]);
    } else if n < 1000 {
        out.put(&[d(n / 100), d(n / 10), d(n)]);
    } else if n < 10_000 {
        out.put(&[d(n / 1000), d(n / 100), d(n / 10), d(n)]);
    } else if n < 100_000 {
        out.put(&[d(n / 10_000), d(n / 1000), d(n / 100), d(n / 10), d(n)]);
    } else {
        let mut buf = [0u8; 20];
        let start = format_u64(&mut buf, u64::from(n));
        out.put(&buf[start..]);
    }
}

fn write_str_array<S: Sink>(out: &mut S, items: &[String]) {
    out.put(b"[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        write_str(out, s);
    }
    out.put(b"]");
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes a JSON string with the canonical escapes: `"` `\\` `\n` `\r` `\t`
/// as backslash escapes, every other control character (Unicode `Cc`:
/// U+0000–U+001F, U+007F–U+009F, i.e. Rust's `char::is_control`) as
/// `\u00xx` in lowercase hex, everything else raw.
fn write_str<S: Sink>(out: &mut S, s: &str) {
    out.put(b"\"");
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // U+0080..U+009F are the two-byte sequences C2 80..C2 9F.
        let (code, width) = match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x00..=0x1f | 0x7f => (b, 1),
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => (bytes[i + 1], 2),
            _ => {
                i += 1;
                continue;
            }
        };
        out.put(&bytes[start..i]);
        match code {
            b'"' => out.put(b"\\\""),
            b'\\' => out.put(b"\\\\"),
            b'\n' => out.put(b"\\n"),
            b'\r' => out.put(b"\\r"),
            b'\t' => out.put(b"\\t"),
            _ => out.put(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(code >> 4)],
                HEX[usize::from(code & 0xf)],
            ]),
        }
        i += width;
        start = i;
    }
    out.put(&bytes[start..]);
    out.put(b"\"");
}

/// Writes `s` as a canonical JSON string literal (quotes included).
pub fn canonical_string(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Canonical spelling of a number payload as it appears after `"v":`.
pub fn canonical_number(n: f64) -> String {
    let mut out = Vec::new();
    write_number(&mut out, n);
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_use_display_spelling() {
        for (n, text) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (42.0, "42"),
            (-7.0, "-7"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e21, "1000000000000000000000"),
            (1e-7, "0.0000001"),
            (123456789012345680.0, "123456789012345680"),
            (f64::NAN, "\"NaN\""),
            (f64::INFINITY, "\"Infinity\""),
            (f64::NEG_INFINITY, "\"-Infinity\""),
        ] {
            assert_eq!(canonical_number(n), text, "{n:?}");
        }
    }

    #[test]
    fn escapes_exactly_the_unicode_control_characters() {
        for c in (0u32..0x800).filter_map(char::from_u32) {
            let text = canonical_string(&c.to_string());
            let inner = &text[1..text.len() - 1];
            let expected = match c {
                '"' => "\\\"".to_string(),
                '\\' => "\\\\".to_string(),
                '\n' => "\\n".to_string(),
                '\r' => "\\r".to_string(),
                '\t' => "\\t".to_string(),
                c if c.is_control() => format!("\\u{:04x}", u32::from(c)),
                c => c.to_string(),
            };
            assert_eq!(inner, expected, "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn fast_integer_path_agrees_with_display() {
        for n in [
            1.0,
            999_999_999_999_999.0,
            -123_456.0,
            9.0e14,
            1e15,
            -1e15,
            2f64.powi(53),
        ] {
            assert_eq!(canonical_number(n), format!("{n}"));
        }
    }

    #[test]
    fn strings_escape_only_the_canonical_set() {
        assert_eq!(
            canonical_string(
                "a\"b\\c\nd\re\tf\u{1}\u{1f}\u{7f}é😀/\u{8}\u{c}\u{80}\u{9f}\u{a0}\u{2028}"
            ),
            "\"a\\\"b\\\\c\\nd\\re\\tf\\u0001\\u001f\\u007fé😀/\\u0008\\u000c\\u0080\\u009f\u{a0}\u{2028}\""
        );
    }
}
