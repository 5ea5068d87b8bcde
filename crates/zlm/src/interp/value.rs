//! Runtime values of the reference interpreter.

use crate::check::Resolved;
use crate::model::*;

/// A location inside some frame: an owned-path root slot and field ordinals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    /// Frame depth (0 is the entry frame).
    pub frame: usize,
    /// Root path index in that frame.
    pub slot: usize,
    /// Field ordinals below the root.
    pub fields: Vec<usize>,
}

/// A runtime value. Scalars hold their canonical 64-bit word: signed kinds
/// sign-extended, unsigned kinds and Bool zero-extended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar word.
    Scalar(u64),
    /// Unit.
    Unit,
    /// A value-declaration record, fields by ordinal (`None`: moved out).
    Record(Vec<Option<Value>>),
    /// An enum/error value: tag and payload fields by ordinal.
    Variant(u32, Vec<Option<Value>>),
    /// A rich Result carrier: tag zero Ok, one Err.
    Result(u32, Box<Value>),
    /// An `Array<Byte>` owner.
    Bytes(Vec<u8>),
    /// A Ref/Mut loan of a location.
    Loan(Loc),
    /// A byte-slice loan: location of the array and half-open bounds.
    Slice(Loc, u64, u64),
    /// The host allocator capability (`Ref<Allocator<BytesError>>`).
    Allocator,
}

impl Value {
    /// The scalar word (zero for non-scalars).
    pub fn bits(&self) -> u64 {
        match self {
            Value::Scalar(b) => *b,
            _ => 0,
        }
    }
    /// A Bool scalar's truth.
    pub fn as_bool(&self) -> bool {
        self.bits() != 0
    }
    /// Field slots of a record or variant.
    pub fn fields(&self) -> Option<&Vec<Option<Value>>> {
        match self {
            Value::Record(f) | Value::Variant(_, f) => Some(f),
            _ => None,
        }
    }
    /// Mutable field slots of a record or variant.
    pub fn fields_mut(&mut self) -> Option<&mut Vec<Option<Value>>> {
        match self {
            Value::Record(f) | Value::Variant(_, f) => Some(f),
            _ => None,
        }
    }
}

/// The type's spelling with local nominal names.
pub fn type_name(r: &Resolved<'_>, t: &Type) -> String {
    match t {
        Type::Nominal(_) => match r.decl_of(t) {
            Some(d) => r.module.declarations[d].name.clone(),
            None => t.to_string(),
        },
        Type::Result(a, b) => format!("Result<{}, {}>", type_name(r, a), type_name(r, b)),
        Type::Ref(a) => format!("Ref<{}>", type_name(r, a)),
        Type::Mut(a) => format!("Mut<{}>", type_name(r, a)),
        t => t.to_string(),
    }
}

/// Renders a value of type `t` for people (and tests), in the notation of
/// docs/zlm/text.md ("Values"): a record or variant as the declaration or
/// variant that constructs it with its fields by name in parentheses
/// (`Box(v: 5)`, `Oops.Odd`, `Shape.Circle(radius: 3)`), a Result carrier
/// as `Ok(..)`/`Err(..)`, scalars in decimal, `true`/`false`, `()`, and
/// `Array<Byte>` as `bytes[1, 2]`. The C and LLVM engines print the same.
pub fn render(r: &Resolved<'_>, v: &Value, t: &Type) -> String {
    match (v, t) {
        (Value::Scalar(b), Type::Scalar(k)) => match k {
            ScalarKind::Bool => (if *b != 0 { "true" } else { "false" }).into(),
            k if k.is_signed() => format!("{}", *b as i64),
            _ => format!("{b}"),
        },
        (Value::Unit, _) => "()".into(),
        (Value::Record(fs), Type::Nominal(_)) => {
            let Some(d) = r.decl_of(t) else {
                return "<record>".into();
            };
            let decl = &r.module.declarations[d];
            let mut fields: Vec<&Field> = decl.fields.iter().collect();
            fields.sort_by_key(|f| f.ordinal);
            let parts: Vec<String> = fields
                .iter()
                .map(|f| match fs.get(f.ordinal as usize).cloned().flatten() {
                    Some(v) => format!("{}: {}", f.name, render(r, &v, &f.ty)),
                    None => format!("{}: <moved>", f.name),
                })
                .collect();
            format!("{}({})", decl.name, parts.join(", "))
        }
        (Value::Variant(tag, fs), Type::Nominal(_)) => {
            let Some(d) = r.decl_of(t) else {
                return format!("<variant {tag}>");
            };
            let decl = &r.module.declarations[d];
            let Some(var) = decl.variants.iter().find(|v| v.tag == *tag) else {
                return format!("<variant {tag}>");
            };
            if var.fields.is_empty() {
                return format!("{}.{}", decl.name, var.name);
            }
            let mut fields: Vec<&Field> = var.fields.iter().collect();
            fields.sort_by_key(|f| f.ordinal);
            let parts: Vec<String> = fields
                .iter()
                .map(|f| match fs.get(f.ordinal as usize).cloned().flatten() {
                    Some(v) => format!("{}: {}", f.name, render(r, &v, &f.ty)),
                    None => format!("{}: <moved>", f.name),
                })
                .collect();
            format!("{}.{}({})", decl.name, var.name, parts.join(", "))
        }
        (Value::Result(tag, p), Type::Result(ok, err)) => {
            if *tag == 0 {
                format!("Ok({})", render(r, p, ok))
            } else {
                format!("Err({})", render(r, p, err))
            }
        }
        (Value::Bytes(b), _) => {
            let items: Vec<String> = b.iter().map(u8::to_string).collect();
            format!("bytes[{}]", items.join(", "))
        }
        (Value::Loan(_) | Value::Slice(..), _) => "<loan>".into(),
        (Value::Allocator, _) => "<allocator>".into(),
        (Value::Scalar(b), _) => format!("{b}"),
        (Value::Record(_) | Value::Variant(..) | Value::Result(..), _) => "<value>".into(),
    }
}
