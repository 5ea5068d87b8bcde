//! The typed call boundary (docs/zlm/boundary.md): how a host names the
//! values an entry function receives and reads back what it returns, in
//! one JSON form derived from the checked signature.
//!
//! A host supplies one value per runtime slot (the receiver first, then
//! the parameters in ordinal order; a `Ref<Allocator<BytesError>>`
//! parameter is the host allocator and takes none). For a borrowed slot
//! (`Ref<T>`, `Mut<T>`, `Slice<Byte>`, a shared or exclusive receiver) the
//! host gives the value it lends, keeps it, and gets it back after the
//! call; a moved slot (an owned non-Copy value) is consumed by the callee.
//! The values this module produces are loan-free: lending them is the
//! engine's business ([`crate::interp::Interp::call_host`]).

use crate::check::Resolved;
use crate::interp::Value;
use crate::model::{Field, Function, ReceiverKind, ScalarKind, Type};
use serde_json::Value as Json;

/// The code of a rejected JSON document (syntax), located at its line and column.
pub const ARG_SYNTAX: &str = "ZLM-ARG-SYNTAX";
/// The code of a value whose shape does not match its type, located at its JSON path.
pub const ARG_SHAPE: &str = "ZLM-ARG-SHAPE";
/// The code of an integer outside its scalar kind's range, located at its JSON path.
pub const ARG_RANGE: &str = "ZLM-ARG-RANGE";
/// The code of an argument list of the wrong length.
pub const ARG_COUNT: &str = "ZLM-ARG-COUNT";
/// The code of a slot whose type cannot cross the boundary.
pub const ARG_TYPE: &str = "ZLM-ARG-TYPE";

/// A rejected argument document: a stable code, where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {location}: {message}")]
pub struct ArgError {
    /// One of the `ARG_*` codes of this module.
    pub code: &'static str,
    /// `line:column` of a syntax error, else the JSON path of the value
    /// concerned (`$[1].name`, `$` for the whole document).
    pub location: String,
    /// The 1-based line and column of a syntax error.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

fn shape(path: &str, message: impl Into<String>) -> ArgError {
    ArgError {
        code: ARG_SHAPE,
        location: path.to_string(),
        position: None,
        message: message.into(),
    }
}

/// How a slot's value crosses the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passing {
    /// A Copy value, copied in.
    Copied,
    /// An owned value, consumed by the callee.
    Moved,
    /// Lent shared (`Ref<T>`, `Slice<Byte>`, a shared receiver): returned unchanged.
    Shared,
    /// Lent exclusively (`Mut<T>`, an exclusive receiver): returned, possibly changed.
    Exclusive,
    /// The host allocator (`Ref<Allocator<BytesError>>`): no argument.
    Allocator,
}

/// One runtime slot of an entry: its name, declared type, how it crosses,
/// and the type of the value the host writes for it (the referent of a
/// borrow; `Array<Byte>` for a `Slice<Byte>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// `self` for the receiver, else the parameter's name.
    pub name: String,
    /// The slot's declared type (a receiver's binding type).
    pub ty: Type,
    /// How it crosses.
    pub passing: Passing,
    /// The type of the value the host supplies and gets back.
    pub host: Type,
}

/// The runtime slots of function `at` of `r`: the receiver (shared,
/// exclusive or owned) first, then the parameters by ordinal.
pub fn slots(r: &Resolved<'_>, at: (usize, usize)) -> Vec<Slot> {
    let f: &Function = &r.module.declarations[at.0].functions[at.1];
    let mut out = Vec::new();
    if matches!(
        f.receiver,
        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
    ) && let Some(ty) = f.receiver.binding(&r.self_type(at.0))
    {
        out.push(slot(r, "self".into(), ty));
    }
    let mut params: Vec<_> = f.params.iter().collect();
    params.sort_by_key(|p| p.ordinal);
    for p in params {
        out.push(slot(r, p.name.clone(), p.ty.clone()));
    }
    out
}

fn slot(r: &Resolved<'_>, name: String, ty: Type) -> Slot {
    let (passing, host) = match &ty {
        Type::Ref(inner) if **inner == Type::AllocatorBytesError => {
            (Passing::Allocator, Type::AllocatorBytesError)
        }
        Type::Ref(inner) => (Passing::Shared, (**inner).clone()),
        Type::Mut(inner) => (Passing::Exclusive, (**inner).clone()),
        Type::SliceByte => (Passing::Shared, Type::ArrayByte),
        t if r.is_copy(t) => (Passing::Copied, t.clone()),
        t => (Passing::Moved, t.clone()),
    };
    Slot {
        name,
        ty,
        passing,
        host,
    }
}

/// Parses a JSON argument document: an array with one value per slot of
/// `slots` that takes one (every slot but the allocator), in slot order.
/// The result has one loan-free value per slot ([`Value::Allocator`] for
/// the allocator), in the host form of [`Slot::host`].
pub fn parse_args(r: &Resolved<'_>, slots: &[Slot], text: &str) -> Result<Vec<Value>, ArgError> {
    let doc: Json = serde_json::from_str(text).map_err(|e| ArgError {
        code: ARG_SYNTAX,
        location: format!("{}:{}", e.line(), e.column()),
        position: Some((e.line(), e.column())),
        message: e.to_string(),
    })?;
    args_of_json(r, slots, &doc)
}

/// [`parse_args`] of an already parsed document.
pub fn args_of_json(r: &Resolved<'_>, slots: &[Slot], doc: &Json) -> Result<Vec<Value>, ArgError> {
    let Json::Array(items) = doc else {
        return Err(shape(
            "$",
            format!(
                "the arguments are a JSON array (one value per slot), not {}",
                kind(doc)
            ),
        ));
    };
    let wanted = slots
        .iter()
        .filter(|s| s.passing != Passing::Allocator)
        .count();
    if items.len() != wanted {
        let names: Vec<&str> = slots
            .iter()
            .filter(|s| s.passing != Passing::Allocator)
            .map(|s| s.name.as_str())
            .collect();
        return Err(ArgError {
            code: ARG_COUNT,
            location: "$".into(),
            position: None,
            message: format!(
                "{wanted} argument(s) expected ({}), {} given",
                names.join(", "),
                items.len()
            ),
        });
    }
    let mut given = items.iter().enumerate();
    let mut out = Vec::with_capacity(slots.len());
    for s in slots {
        if s.passing == Passing::Allocator {
            out.push(Value::Allocator);
            continue;
        }
        let Some((i, item)) = given.next() else {
            return Err(shape("$", "too few arguments"));
        };
        out.push(value_of_json(r, &s.host, item, &format!("$[{i}]"))?);
    }
    Ok(out)
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// The inclusive range of a scalar kind's values.
fn range(k: ScalarKind) -> (i128, i128) {
    let (bits, signed) = match k {
        ScalarKind::Bool => (1, false),
        ScalarKind::Byte | ScalarKind::UInt8 => (8, false),
        ScalarKind::Int8 => (8, true),
        ScalarKind::Int16 => (16, true),
        ScalarKind::UInt16 => (16, false),
        ScalarKind::Int32 => (32, true),
        ScalarKind::UInt32 => (32, false),
        ScalarKind::Int64 => (64, true),
        ScalarKind::UInt64 | ScalarKind::Index => (64, false),
    };
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// The value of type `t` that JSON `j` (at `path`) denotes.
pub fn value_of_json(r: &Resolved<'_>, t: &Type, j: &Json, path: &str) -> Result<Value, ArgError> {
    match t {
        Type::Unit => match j {
            Json::Null => Ok(Value::Unit),
            _ => Err(shape(path, format!("Unit is null, not {}", kind(j)))),
        },
        Type::Scalar(ScalarKind::Bool) => match j {
            Json::Bool(b) => Ok(Value::Scalar(u64::from(*b))),
            _ => Err(shape(
                path,
                format!("Bool is true or false, not {}", kind(j)),
            )),
        },
        Type::Scalar(k) => {
            let n: i128 = match j {
                Json::Number(n) => match (n.as_i64(), n.as_u64()) {
                    (Some(v), _) => i128::from(v),
                    (None, Some(v)) => i128::from(v),
                    _ => {
                        return Err(shape(path, format!("{} is an integer, not {n}", k.text())));
                    }
                },
                _ => {
                    return Err(shape(
                        path,
                        format!("{} is an integer, not {}", k.text(), kind(j)),
                    ));
                }
            };
            let (lo, hi) = range(*k);
            if n < lo || n > hi {
                return Err(ArgError {
                    code: ARG_RANGE,
                    location: path.to_string(),
                    position: None,
                    message: format!("{n} is out of range for {} ({lo}..={hi})", k.text()),
                });
            }
            // The canonical word: signed kinds sign-extended.
            Ok(Value::Scalar(n as i64 as u64))
        }
        Type::ArrayByte | Type::SliceByte => {
            let Json::Array(items) = j else {
                return Err(shape(
                    path,
                    format!("bytes are an array of integers 0..=255, not {}", kind(j)),
                ));
            };
            let mut bytes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item.as_u64() {
                    Some(b) if b <= 255 => bytes.push(b as u8),
                    _ => {
                        return Err(ArgError {
                            code: if item.is_number() {
                                ARG_RANGE
                            } else {
                                ARG_SHAPE
                            },
                            location: format!("{path}[{i}]"),
                            position: None,
                            message: format!("a byte is an integer 0..=255, not {item}"),
                        });
                    }
                }
            }
            Ok(Value::Bytes(bytes))
        }
        Type::Result(ok, err) => {
            let (tag, inner, payload) =
                single_key(j, path, "a Result is {\"Ok\": v} or {\"Err\": e}")?;
            match tag {
                "Ok" => Ok(Value::Result(
                    0,
                    Box::new(value_of_json(r, ok, payload, &inner)?),
                )),
                "Err" => Ok(Value::Result(
                    1,
                    Box::new(value_of_json(r, err, payload, &inner)?),
                )),
                other => Err(shape(
                    path,
                    format!("a Result is {{\"Ok\": v}} or {{\"Err\": e}}, not {{{other:?}: ..}}"),
                )),
            }
        }
        Type::Nominal(_) => {
            let Some(d) = r.decl_of(t) else {
                return Err(ArgError {
                    code: ARG_TYPE,
                    location: path.to_string(),
                    position: None,
                    message: format!("type {t} is not declared in the package"),
                });
            };
            let decl = &r.module.declarations[d];
            if decl.variants.is_empty() {
                let Json::Object(_) = j else {
                    return Err(shape(
                        path,
                        format!(
                            "a {} is an object of its fields, not {}",
                            decl.name,
                            kind(j)
                        ),
                    ));
                };
                let fields = fields_of_json(r, &decl.fields, j, path, &decl.name)?;
                return Ok(Value::Record(fields));
            }
            let names: Vec<&str> = decl.variants.iter().map(|v| v.name.as_str()).collect();
            let (name, payload, inner) = match j {
                Json::String(s) => (s.as_str(), None, String::new()),
                Json::Object(_) => {
                    let (name, inner, payload) = single_key(
                        j,
                        path,
                        &format!(
                            "a {} is \"Variant\" or {{\"Variant\": {{fields}}}}",
                            decl.name
                        ),
                    )?;
                    (name, Some(payload), inner)
                }
                _ => {
                    return Err(shape(
                        path,
                        format!(
                            "a {} is \"Variant\" or {{\"Variant\": {{fields}}}}, not {}",
                            decl.name,
                            kind(j)
                        ),
                    ));
                }
            };
            let Some(var) = decl.variants.iter().find(|v| v.name == name) else {
                return Err(shape(
                    path,
                    format!(
                        "{} has no variant {name:?} (variants: {})",
                        decl.name,
                        names.join(", ")
                    ),
                ));
            };
            let fields = match payload {
                None if var.fields.is_empty() => Vec::new(),
                None => {
                    return Err(shape(
                        path,
                        format!(
                            "{}.{} has fields: write {{\"{}\": {{fields}}}}",
                            decl.name, var.name, var.name
                        ),
                    ));
                }
                Some(p) => fields_of_json(
                    r,
                    &var.fields,
                    p,
                    &inner,
                    &format!("{}.{}", decl.name, var.name),
                )?,
            };
            Ok(Value::Variant(var.tag, fields))
        }
        Type::Never | Type::Ref(_) | Type::Mut(_) | Type::AllocatorBytesError => Err(ArgError {
            code: ARG_TYPE,
            location: path.to_string(),
            position: None,
            message: format!(
                "a value of type {} cannot be written at the boundary",
                crate::interp::type_name(r, t)
            ),
        }),
    }
}

/// The one key of a one-key object, the path below it, and its value.
fn single_key<'j>(
    j: &'j Json,
    path: &str,
    expected: &str,
) -> Result<(&'j str, String, &'j Json), ArgError> {
    match j {
        Json::Object(map) if map.len() == 1 => {
            let Some((k, v)) = map.iter().next() else {
                return Err(shape(path, expected));
            };
            Ok((k.as_str(), format!("{path}.{k}"), v))
        }
        _ => Err(shape(path, format!("{expected}, not {}", kind(j)))),
    }
}

/// The field slots (by ordinal) of `fields` from JSON object `j`: every
/// field exactly once, no other key.
fn fields_of_json(
    r: &Resolved<'_>,
    fields: &[Field],
    j: &Json,
    path: &str,
    owner: &str,
) -> Result<Vec<Option<Value>>, ArgError> {
    let Json::Object(map) = j else {
        return Err(shape(
            path,
            format!("the fields of {owner} are an object, not {}", kind(j)),
        ));
    };
    if let Some(k) = map.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        return Err(shape(
            &format!("{path}.{k}"),
            format!("{owner} has no field {k:?} (fields: {})", names.join(", ")),
        ));
    }
    let count = fields
        .iter()
        .map(|f| f.ordinal as usize + 1)
        .max()
        .unwrap_or(0);
    let mut out: Vec<Option<Value>> = vec![None; count];
    for f in fields {
        let Some(v) = map.get(&f.name) else {
            return Err(shape(path, format!("{owner} needs field {:?}", f.name)));
        };
        let value = value_of_json(r, &f.ty, v, &format!("{path}.{}", f.name))?;
        if let Some(place) = out.get_mut(f.ordinal as usize) {
            *place = Some(value);
        }
    }
    Ok(out)
}

/// The JSON form of value `v` of type `t`: the form [`value_of_json`]
/// reads, so a returned value can be passed back in. A borrow is written
/// as the value it observes; a moved-out field as null.
pub fn json_of_value(r: &Resolved<'_>, v: &Value, t: &Type) -> Json {
    let t = match t {
        Type::Ref(inner) | Type::Mut(inner) => inner,
        t => t,
    };
    match (v, t) {
        (Value::Scalar(b), Type::Scalar(k)) => match k {
            ScalarKind::Bool => Json::Bool(*b != 0),
            k if k.is_signed() => Json::from(*b as i64),
            _ => Json::from(*b),
        },
        (Value::Unit, _) => Json::Null,
        (Value::Bytes(bytes), _) => Json::Array(bytes.iter().map(|b| Json::from(*b)).collect()),
        (Value::Result(tag, payload), Type::Result(ok, err)) => {
            let (key, pt) = if *tag == 0 { ("Ok", ok) } else { ("Err", err) };
            let mut map = serde_json::Map::new();
            map.insert(key.into(), json_of_value(r, payload, pt));
            Json::Object(map)
        }
        (Value::Record(fs), Type::Nominal(_)) => match r.decl_of(t) {
            Some(d) => fields_json(r, &r.module.declarations[d].fields, fs),
            None => Json::Null,
        },
        (Value::Variant(tag, fs), Type::Nominal(_)) => {
            let Some(var) = r.decl_of(t).and_then(|d| {
                r.module.declarations[d]
                    .variants
                    .iter()
                    .find(|v| v.tag == *tag)
            }) else {
                return Json::Null;
            };
            if var.fields.is_empty() {
                return Json::String(var.name.clone());
            }
            let mut map = serde_json::Map::new();
            map.insert(var.name.clone(), fields_json(r, &var.fields, fs));
            Json::Object(map)
        }
        (Value::Scalar(b), _) => Json::from(*b),
        _ => Json::Null,
    }
}

fn fields_json(r: &Resolved<'_>, fields: &[Field], values: &[Option<Value>]) -> Json {
    let mut ordered: Vec<&Field> = fields.iter().collect();
    ordered.sort_by_key(|f| f.ordinal);
    let mut map = serde_json::Map::new();
    for f in ordered {
        let v = match values.get(f.ordinal as usize).and_then(Option::as_ref) {
            Some(v) => json_of_value(r, v, &f.ty),
            None => Json::Null,
        };
        map.insert(f.name.clone(), v);
    }
    Json::Object(map)
}

/// The word stream of a loan-free host value of type `t`, the form native
/// engines read arguments in and write results back in
/// (docs/zlm/boundary.md, "Words"): a scalar or `Unit` one word; bytes
/// their length, then one word per byte; a record its fields by ordinal; a
/// variant its tag, then its payload fields by ordinal; a `Result` its tag
/// (0 Ok, 1 Err), then the payload. Each field is a presence word (1, or
/// 0 for a moved-out field), then, when present, its value. The host
/// allocator writes nothing.
pub fn words_of_value(r: &Resolved<'_>, v: &Value, t: &Type, out: &mut Vec<u64>) {
    let t = match t {
        Type::Ref(inner) | Type::Mut(inner) => inner,
        t => t,
    };
    match (v, t) {
        (Value::Scalar(w), _) => out.push(*w),
        (Value::Bytes(b), _) => {
            out.push(b.len() as u64);
            out.extend(b.iter().map(|x| u64::from(*x)));
        }
        (Value::Result(tag, p), Type::Result(ok, err)) => {
            out.push(u64::from(*tag));
            words_of_value(r, p, if *tag == 0 { ok } else { err }, out);
        }
        (Value::Record(fs), Type::Nominal(_)) => {
            if let Some(d) = r.decl_of(t) {
                field_words(r, &r.module.declarations[d].fields, fs, out);
            }
        }
        (Value::Variant(tag, fs), Type::Nominal(_)) => {
            out.push(u64::from(*tag));
            if let Some(var) = r.decl_of(t).and_then(|d| {
                r.module.declarations[d]
                    .variants
                    .iter()
                    .find(|v| v.tag == *tag)
            }) {
                field_words(r, &var.fields, fs, out);
            }
        }
        (Value::Allocator, _) => {}
        _ => out.push(0),
    }
}

fn field_words(r: &Resolved<'_>, fields: &[Field], values: &[Option<Value>], out: &mut Vec<u64>) {
    let mut ordered: Vec<&Field> = fields.iter().collect();
    ordered.sort_by_key(|f| f.ordinal);
    for f in ordered {
        match values.get(f.ordinal as usize).and_then(Option::as_ref) {
            Some(v) => {
                out.push(1);
                words_of_value(r, v, &f.ty, out);
            }
            None => out.push(0),
        }
    }
}

/// Reads a value of type `t` from the front of `words` (advancing it), as
/// [`words_of_value`] writes it; `None` when the words end early or hold
/// a tag, byte or scalar its type does not have.
pub fn value_of_words(r: &Resolved<'_>, t: &Type, words: &mut &[u64]) -> Option<Value> {
    fn next(words: &mut &[u64]) -> Option<u64> {
        let (first, rest) = words.split_first()?;
        *words = rest;
        Some(*first)
    }
    let t = match t {
        Type::Ref(inner) | Type::Mut(inner) => inner,
        t => t,
    };
    match t {
        Type::Unit => {
            next(words)?;
            Some(Value::Unit)
        }
        Type::Scalar(k) => {
            let w = next(words)?;
            (crate::interp::canon(*k, w) == w).then_some(Value::Scalar(w))
        }
        Type::ArrayByte | Type::SliceByte => {
            let n = usize::try_from(next(words)?).ok()?;
            if n > words.len() {
                return None;
            }
            let (bytes, rest) = words.split_at(n);
            *words = rest;
            let bytes: Option<Vec<u8>> = bytes.iter().map(|b| u8::try_from(*b).ok()).collect();
            Some(Value::Bytes(bytes?))
        }
        Type::Result(ok, err) => match next(words)? {
            0 => Some(Value::Result(0, Box::new(value_of_words(r, ok, words)?))),
            1 => Some(Value::Result(1, Box::new(value_of_words(r, err, words)?))),
            _ => None,
        },
        Type::Nominal(_) => {
            let decl = &r.module.declarations[r.decl_of(t)?];
            if decl.variants.is_empty() {
                return Some(Value::Record(fields_of_words(r, &decl.fields, words)?));
            }
            let tag = u32::try_from(next(words)?).ok()?;
            let var = decl.variants.iter().find(|v| v.tag == tag)?;
            Some(Value::Variant(tag, fields_of_words(r, &var.fields, words)?))
        }
        _ => None,
    }
}

fn fields_of_words(
    r: &Resolved<'_>,
    fields: &[Field],
    words: &mut &[u64],
) -> Option<Vec<Option<Value>>> {
    let mut ordered: Vec<&Field> = fields.iter().collect();
    ordered.sort_by_key(|f| f.ordinal);
    let count = ordered.last().map_or(0, |f| f.ordinal as usize + 1);
    let mut out = vec![None; count];
    for f in ordered {
        let (present, rest) = words.split_first()?;
        *words = rest;
        let v = match present {
            0 => None,
            1 => Some(value_of_words(r, &f.ty, words)?),
            _ => return None,
        };
        if let Some(place) = out.get_mut(f.ordinal as usize) {
            *place = v;
        }
    }
    Some(out)
}

/// The word stream of an entry's slot values (as [`parse_args`] returns
/// them): each slot's value by [`words_of_value`] of its host type, in
/// slot order (the allocator writes nothing).
pub fn slot_words(r: &Resolved<'_>, slots: &[Slot], values: &[Value]) -> Vec<u64> {
    let mut out = Vec::new();
    for (s, v) in slots.iter().zip(values) {
        words_of_value(r, v, &s.host, &mut out);
    }
    out
}

/// The byte-array bytes a host supplies in `values` (their capacity, as
/// the interpreter counts them towards the byte limit).
pub fn host_bytes(values: &[Value]) -> u64 {
    fn of(v: &Value) -> u64 {
        match v {
            Value::Bytes(b) => b.capacity() as u64,
            Value::Record(fs) | Value::Variant(_, fs) => {
                fs.iter().flatten().map(of).fold(0, u64::saturating_add)
            }
            Value::Result(_, p) => of(p),
            _ => 0,
        }
    }
    values.iter().map(of).fold(0, u64::saturating_add)
}

/// What a native engine hands back from a typed call, decoded: the result
/// and, per slot, the lent value as the call left it (`None` for a slot
/// that is not lent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedWords {
    /// The result (a returned borrow: the value it observes).
    pub value: Value,
    /// Per slot: the lent value handed back.
    pub returned: Vec<Option<Value>>,
}

/// Decodes a native engine's typed report: hex words separated by
/// spaces, the result's first, then for each lent slot (shared or
/// exclusive) `;` and its words. `None` when the text does not hold
/// exactly those values.
pub fn typed_of_report(
    r: &Resolved<'_>,
    result: &Type,
    slots: &[Slot],
    text: &str,
) -> Option<TypedWords> {
    let mut parts = text.split(';');
    let decode = |part: &str, t: &Type| -> Option<Value> {
        let words: Vec<u64> = part
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16).ok())
            .collect::<Option<_>>()?;
        let mut rest: &[u64] = &words;
        let v = value_of_words(r, t, &mut rest)?;
        rest.is_empty().then_some(v)
    };
    let value = decode(parts.next()?, result)?;
    let mut returned = Vec::with_capacity(slots.len());
    for s in slots {
        if matches!(s.passing, Passing::Shared | Passing::Exclusive) {
            returned.push(Some(decode(parts.next()?, &s.host)?));
        } else {
            returned.push(None);
        }
    }
    parts
        .next()
        .is_none()
        .then_some(TypedWords { value, returned })
}
