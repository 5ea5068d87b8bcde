//! Canonical JSON writing and the tagged value codec (facts note (a), (e)).
//!
//! Everything the engine writes (continuations, deltas, host messages) goes
//! through [`write_canonical`]: keys in byte order, no whitespace, numbers
//! and strings spelled as in `tcc_ir`'s canonical artifact encoding, so
//! outputs are byte-identical across runs and machines.

use crate::error::{EngineError, FatalKind};
use crate::limits::Limits;
use crate::object_map::ObjectMap;
use crate::value::{Cell, Heap, Value};
use serde_json::{Map, Number, Value as J};

/// Parses JSON bytes into a tree like `serde_json::from_slice`, but rejects
/// an object that repeats a key (serde_json would keep the last one, so two
/// readers could see different documents). The error names the key and
/// its line and column; serde_json's recursion limit still bounds nesting.
pub fn parse_strict(bytes: &[u8]) -> Result<J, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = serde::de::DeserializeSeed::deserialize(StrictTree, &mut de)?;
    de.end()?;
    Ok(v)
}

/// The message for a [`parse_strict`] error: a duplicate key reads as such,
/// anything else as "not JSON".
pub fn strict_error_text(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Data => e.to_string(),
        _ => format!("not JSON: {e}"),
    }
}

/// Builds a [`J`] tree exactly as serde_json's own visitor does, failing on
/// a duplicate key.
#[derive(Clone, Copy)]
pub(crate) struct StrictTree;

impl<'de> serde::de::DeserializeSeed<'de> for StrictTree {
    type Value = J;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for StrictTree {
    type Value = J;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<J, E> {
        Ok(J::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<J, E> {
        Ok(J::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<J, E> {
        Ok(J::Number(u.into()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<J, E> {
        Ok(Number::from_f64(f).map_or(J::Null, J::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<J, E> {
        Ok(J::String(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<J, E> {
        Ok(J::String(s))
    }

    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_none<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(StrictTree)? {
            items.push(v);
        }
        Ok(J::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            let v = map.next_value_seed(StrictTree)?;
            out.insert(key, v);
        }
        Ok(J::Object(out))
    }
}

/// Deepest nesting of an inlined value crossing the host boundary.
pub const MAX_EXPORT_DEPTH: usize = 100;

/// Most values (scalars and containers, the value itself included) of one
/// inlined value crossing the host boundary. Sharing inside the heap is
/// not preserved by inlining, so without a cap a value of 100 levels that
/// each hold the level below twice would inline to 2^100 nodes.
pub const MAX_EXPORT_NODES: usize = 1 << 20;

/// Deepest nesting of tagged containers that [`absorb`] accepts (inlined
/// values are at most [`MAX_EXPORT_DEPTH`] deep; parsed JSON at most 128).
pub const MAX_ABSORB_DEPTH: usize = 128;

/// Canonical JSON lives in `tcc_ir` beside the artifact encoder; these are
/// its functions, re-exported for the engine's callers.
pub use tcc_ir::canonical::{to_canonical, write_canonical};

/// Builds a JSON object from key/value pairs.
pub fn obj<const N: usize>(pairs: [(&str, J); N]) -> J {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert(k.to_string(), v);
    }
    J::Object(m)
}

/// A JSON number payload for a binary64 (non-finite as strings).
pub fn number_json(n: f64) -> J {
    if n.is_nan() {
        J::String("NaN".into())
    } else if n == f64::INFINITY {
        J::String("Infinity".into())
    } else if n == f64::NEG_INFINITY {
        J::String("-Infinity".into())
    } else if n.fract() == 0.0 && n.abs() < 9.0e15 && !(n == 0.0 && n.is_sign_negative()) {
        J::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n).map_or(J::Null, J::Number)
    }
}

/// A tagged value as stored in a continuation (refs kept as refs).
pub fn value_json(v: &Value) -> J {
    match v {
        Value::Undefined => obj([("t", J::String("undefined".into()))]),
        Value::Null => obj([("t", J::String("null".into()))]),
        Value::Bool(b) => obj([("t", J::String("bool".into())), ("v", J::Bool(*b))]),
        Value::Number(n) => obj([("t", J::String("number".into())), ("v", number_json(*n))]),
        Value::Str(s) => obj([
            ("t", J::String("string".into())),
            ("v", J::String(s.to_string())),
        ]),
        Value::Ref(id) => obj([
            ("t", J::String("ref".into())),
            ("v", J::Number((*id).into())),
        ]),
    }
}

/// A heap cell as stored in a continuation.
pub fn cell_json(c: &Cell) -> J {
    match c {
        Cell::Hole => obj([("t", J::String("hole".into()))]),
        Cell::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k.clone(), value_json(v));
            }
            obj([("t", J::String("object".into())), ("v", J::Object(out))])
        }
        Cell::Array(a) => obj([
            ("t", J::String("array".into())),
            ("v", J::Array(a.iter().map(value_json).collect())),
        ]),
        Cell::Var(v) => obj([("t", J::String("cell".into())), ("v", value_json(v))]),
        Cell::Env(ids) => obj([
            ("t", J::String("env".into())),
            (
                "v",
                J::Array(ids.iter().map(|i| J::Number((*i).into())).collect()),
            ),
        ]),
        Cell::Closure { func, env } => obj([
            ("t", J::String("closure".into())),
            ("func", J::Number((*func).into())),
            ("env", J::Number((*env).into())),
        ]),
    }
}

/// The checks both exports make before a value: it counts against
/// [`MAX_EXPORT_NODES`], and a reference must not close a cycle on `path`
/// or go deeper than [`MAX_EXPORT_DEPTH`]. Returns the cell to enter, or
/// `None` for a value written inline.
fn enter_value(v: &Value, path: &[u32], nodes: &mut usize) -> Result<Option<u32>, EngineError> {
    *nodes += 1;
    if *nodes > MAX_EXPORT_NODES {
        return Err(EngineError::fatal(
            FatalKind::NotExportable,
            format!(
                "a value of more than {MAX_EXPORT_NODES} values cannot cross the host boundary"
            ),
        ));
    }
    let Value::Ref(id) = v else {
        return Ok(None);
    };
    if path.contains(id) {
        return Err(EngineError::fatal(
            FatalKind::NotExportable,
            "a cyclic value cannot cross the host boundary",
        ));
    }
    if path.len() >= MAX_EXPORT_DEPTH {
        return Err(EngineError::fatal(
            FatalKind::NotExportable,
            format!("value nested deeper than {MAX_EXPORT_DEPTH} cannot cross the host boundary"),
        ));
    }
    Ok(Some(*id))
}

/// Inlines a value for the host boundary: objects and arrays are copied
/// (identity does not cross), cycles and closures are fatal.
///
/// Recursion is bounded: at most [`MAX_EXPORT_DEPTH`] levels deep and
/// [`MAX_EXPORT_NODES`] values in all, else a fatal `not_exportable` error.
pub fn export(heap: &Heap, v: &Value) -> Result<J, EngineError> {
    let mut path = Vec::new();
    let mut nodes = 0usize;
    export_inner(heap, v, &mut path, &mut nodes)
}

fn export_inner(
    heap: &Heap,
    v: &Value,
    path: &mut Vec<u32>,
    nodes: &mut usize,
) -> Result<J, EngineError> {
    let Some(id) = enter_value(v, path, nodes)? else {
        return Ok(value_json(v));
    };
    path.push(id);
    let out = match heap.get(id)? {
        Cell::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(k.clone(), export_inner(heap, x, path, nodes)?);
            }
            obj([("t", J::String("object".into())), ("v", J::Object(out))])
        }
        Cell::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for x in a {
                out.push(export_inner(heap, x, path, nodes)?);
            }
            obj([("t", J::String("array".into())), ("v", J::Array(out))])
        }
        other => {
            return Err(EngineError::fatal(
                FatalKind::NotExportable,
                format!("a {} cannot cross the host boundary", other.tag()),
            ));
        }
    };
    path.pop();
    Ok(out)
}

/// Where [`export_text_to`] writes a value's text: a `String`, or a host's
/// writer that takes the text in pieces (the durable host deflates a long
/// result as it is written, so that the text is never held whole).
pub trait TextOut {
    /// Appends `s`.
    fn push_str(&mut self, s: &str);
    /// Appends `c`.
    fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }
    /// Appends the canonical text of a (small) JSON tree.
    fn push_json(&mut self, j: &J) {
        let mut text = String::new();
        write_canonical(j, &mut text);
        self.push_str(&text);
    }
}

impl TextOut for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
    fn push_json(&mut self, j: &J) {
        write_canonical(j, self);
    }
}

/// [`export`] written straight to its canonical JSON text, without a tree
/// (issue 42, F3: a tree costs hundreds of bytes per value, the text
/// tens): byte-identical to `to_canonical(&export(heap, v)?)`, with the
/// same limits and the same errors.
pub fn export_text(heap: &Heap, v: &Value) -> Result<String, EngineError> {
    let mut out = String::new();
    export_text_to(heap, v, &mut out)?;
    Ok(out)
}

/// [`export_text`] appended to `out` in pieces (on an error, `out` holds
/// a part of the text).
pub fn export_text_to<O: TextOut>(heap: &Heap, v: &Value, out: &mut O) -> Result<(), EngineError> {
    let mut path = Vec::new();
    let mut nodes = 0usize;
    export_text_inner(heap, v, &mut path, &mut nodes, out)
}

fn export_text_inner<O: TextOut>(
    heap: &Heap,
    v: &Value,
    path: &mut Vec<u32>,
    nodes: &mut usize,
    out: &mut O,
) -> Result<(), EngineError> {
    let Some(id) = enter_value(v, path, nodes)? else {
        write_value(out, v);
        return Ok(());
    };
    path.push(id);
    match heap.get(id)? {
        Cell::Object(m) => {
            // ObjectMap iterates in byte order: canonical key order.
            out.push_str("{\"t\":\"object\",\"v\":{");
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&tcc_ir::encode::canonical_string(k));
                out.push(':');
                export_text_inner(heap, x, path, nodes, out)?;
            }
            out.push_str("}}");
        }
        Cell::Array(a) => {
            out.push_str("{\"t\":\"array\",\"v\":[");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                export_text_inner(heap, x, path, nodes, out)?;
            }
            out.push_str("]}");
        }
        other => {
            return Err(EngineError::fatal(
                FatalKind::NotExportable,
                format!("a {} cannot cross the host boundary", other.tag()),
            ));
        }
    }
    path.pop();
    Ok(())
}

/// Writes a value's canonical tagged text (refs as refs).
pub(crate) fn write_value<O: TextOut + ?Sized>(out: &mut O, v: &Value) {
    match v {
        Value::Undefined => out.push_str("{\"t\":\"undefined\"}"),
        Value::Null => out.push_str("{\"t\":\"null\"}"),
        Value::Bool(true) => out.push_str("{\"t\":\"bool\",\"v\":true}"),
        Value::Bool(false) => out.push_str("{\"t\":\"bool\",\"v\":false}"),
        Value::Number(n) => {
            out.push_str("{\"t\":\"number\",\"v\":");
            out.push_str(&tcc_ir::encode::canonical_number(*n));
            out.push('}');
        }
        Value::Str(s) => {
            out.push_str("{\"t\":\"string\",\"v\":");
            out.push_str(&tcc_ir::encode::canonical_string(s));
            out.push('}');
        }
        Value::Ref(id) => {
            out.push_str("{\"t\":\"ref\",\"v\":");
            out.push_str(&id.to_string());
            out.push('}');
        }
    }
}

/// Where a tagged value is being decoded: continuations allow `ref`, host
/// messages do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueContext {
    /// A continuation or delta.
    Continuation,
    /// A host message (values are inlined).
    Message,
}

fn err(ctx: ValueContext, path: &str, message: impl Into<String>) -> EngineError {
    match ctx {
        ValueContext::Continuation => EngineError::continuation(path, message),
        ValueContext::Message => EngineError::message(path, message),
    }
}

/// Checks that an object has exactly the allowed keys and returns it.
pub fn expect_object<'a>(
    ctx: ValueContext,
    j: &'a J,
    path: &str,
    allowed: &[&str],
) -> Result<&'a Map<String, J>, EngineError> {
    let J::Object(m) = j else {
        return Err(err(ctx, path, "expected a JSON object"));
    };
    for k in m.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(err(ctx, format!("{path}.{k}").as_str(), "unknown key"));
        }
    }
    Ok(m)
}

/// Decodes a number payload (JSON number or `NaN`/`Infinity`/`-Infinity`).
pub fn number_payload(ctx: ValueContext, j: &J, path: &str) -> Result<f64, EngineError> {
    match j {
        J::Number(n) => n
            .as_f64()
            .ok_or_else(|| err(ctx, path, "number out of range")),
        J::String(s) => match s.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(err(ctx, path, format!("bad number string {s:?}"))),
        },
        _ => Err(err(ctx, path, "expected a number")),
    }
}

/// Decodes a non-negative integer that fits u32.
pub fn u32_field(ctx: ValueContext, j: &J, path: &str) -> Result<u32, EngineError> {
    j.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| err(ctx, path, "expected a non-negative integer that fits u32"))
}

/// Decodes a non-negative integer that fits u64.
pub fn u64_field(ctx: ValueContext, j: &J, path: &str) -> Result<u64, EngineError> {
    j.as_u64()
        .ok_or_else(|| err(ctx, path, "expected a non-negative integer"))
}

/// Decodes a string field.
pub fn str_field<'a>(ctx: ValueContext, j: &'a J, path: &str) -> Result<&'a str, EngineError> {
    j.as_str()
        .ok_or_else(|| err(ctx, path, "expected a string"))
}

/// A required key of an object.
pub fn field<'a>(
    ctx: ValueContext,
    m: &'a Map<String, J>,
    key: &str,
    path: &str,
) -> Result<&'a J, EngineError> {
    m.get(key)
        .ok_or_else(|| err(ctx, format!("{path}.{key}").as_str(), "missing key"))
}

/// Decodes a tagged value, appending inline objects and arrays to `heap`.
///
/// Nesting deeper than [`MAX_ABSORB_DEPTH`] containers is an error (the
/// decoder recurses once per level).
pub fn absorb(
    ctx: ValueContext,
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Value, EngineError> {
    absorb_at(ctx, j, path, heap, limits, 0)
}

fn absorb_at(
    ctx: ValueContext,
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
    depth: usize,
) -> Result<Value, EngineError> {
    let m = expect_object(ctx, j, path, &["t", "v"])?;
    let tag = str_field(ctx, field(ctx, m, "t", path)?, &format!("{path}.t"))?;
    let vpath = format!("{path}.v");
    let no_payload = |m: &Map<String, J>| {
        if m.contains_key("v") {
            Err(err(ctx, &vpath, format!("tag {tag} takes no payload")))
        } else {
            Ok(())
        }
    };
    Ok(match tag {
        "undefined" => {
            no_payload(m)?;
            Value::Undefined
        }
        "null" => {
            no_payload(m)?;
            Value::Null
        }
        "bool" => Value::Bool(
            field(ctx, m, "v", path)?
                .as_bool()
                .ok_or_else(|| err(ctx, &vpath, "expected a boolean"))?,
        ),
        "number" => Value::Number(number_payload(ctx, field(ctx, m, "v", path)?, &vpath)?),
        "string" => {
            let s = str_field(ctx, field(ctx, m, "v", path)?, &vpath)?;
            if s.len() > limits.max_string_bytes {
                return Err(err(ctx, &vpath, "string exceeds the string size limit"));
            }
            Value::string(s)
        }
        "ref" if ctx == ValueContext::Continuation => {
            Value::Ref(u32_field(ctx, field(ctx, m, "v", path)?, &vpath)?)
        }
        "object" | "array" => {
            if depth >= MAX_ABSORB_DEPTH {
                return Err(err(
                    ctx,
                    &vpath,
                    format!("value nested deeper than {MAX_ABSORB_DEPTH}"),
                ));
            }
            let cell = absorb_collection(
                ctx,
                tag,
                field(ctx, m, "v", path)?,
                &vpath,
                heap,
                limits,
                depth + 1,
            )?;
            Value::Ref(heap.alloc(cell, limits)?)
        }
        other => {
            return Err(err(
                ctx,
                &format!("{path}.t"),
                format!("unsupported value tag {other:?}"),
            ));
        }
    })
}

fn absorb_collection(
    ctx: ValueContext,
    tag: &str,
    payload: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
    depth: usize,
) -> Result<Cell, EngineError> {
    if tag == "object" {
        let J::Object(fields) = payload else {
            return Err(err(ctx, path, "object payload must be a JSON object"));
        };
        let mut out = ObjectMap::new();
        for (k, x) in fields {
            out.insert(
                k.clone(),
                absorb_at(ctx, x, &format!("{path}.{k}"), heap, limits, depth)?,
            );
        }
        Ok(Cell::Object(out))
    } else {
        let J::Array(items) = payload else {
            return Err(err(ctx, path, "array payload must be a JSON array"));
        };
        let mut out = Vec::with_capacity(items.len().min(1024));
        for (i, x) in items.iter().enumerate() {
            out.push(absorb_at(
                ctx,
                x,
                &format!("{path}[{i}]"),
                heap,
                limits,
                depth,
            )?);
        }
        Ok(Cell::Array(out))
    }
}

/// Decodes a heap cell of a continuation.
pub fn cell_from_json(
    j: &J,
    path: &str,
    heap: &mut Heap,
    limits: &Limits,
) -> Result<Cell, EngineError> {
    let ctx = ValueContext::Continuation;
    let m = expect_object(ctx, j, path, &["t", "v", "func", "env"])?;
    let tag = str_field(ctx, field(ctx, m, "t", path)?, &format!("{path}.t"))?;
    let vpath = format!("{path}.v");
    let allow = |keys: &[&str]| -> Result<(), EngineError> {
        for k in m.keys() {
            if !keys.contains(&k.as_str()) {
                return Err(err(
                    ctx,
                    &format!("{path}.{k}"),
                    format!("unknown key for {tag} cell"),
                ));
            }
        }
        Ok(())
    };
    Ok(match tag {
        "hole" => {
            allow(&["t"])?;
            Cell::Hole
        }
        "object" | "array" => {
            allow(&["t", "v"])?;
            absorb_collection(ctx, tag, field(ctx, m, "v", path)?, &vpath, heap, limits, 1)?
        }
        "cell" => {
            allow(&["t", "v"])?;
            Cell::Var(absorb(
                ctx,
                field(ctx, m, "v", path)?,
                &vpath,
                heap,
                limits,
            )?)
        }
        "env" => {
            allow(&["t", "v"])?;
            let J::Array(ids) = field(ctx, m, "v", path)? else {
                return Err(err(ctx, &vpath, "env payload must be an array of cell ids"));
            };
            let mut out = Vec::with_capacity(ids.len().min(1024));
            for (i, x) in ids.iter().enumerate() {
                out.push(u32_field(ctx, x, &format!("{vpath}[{i}]"))?);
            }
            Cell::Env(out)
        }
        "closure" => {
            allow(&["t", "func", "env"])?;
            Cell::Closure {
                func: u32_field(ctx, field(ctx, m, "func", path)?, &format!("{path}.func"))?,
                env: u32_field(ctx, field(ctx, m, "env", path)?, &format!("{path}.env"))?,
            }
        }
        other => {
            return Err(err(
                ctx,
                &format!("{path}.t"),
                format!("unsupported cell tag {other:?}"),
            ));
        }
    })
}
