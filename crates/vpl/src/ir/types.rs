//! Types (spec section 4) and the module's type table.

use super::arena::{Arena, Handle};
use super::span::Span;
use std::collections::HashMap;

/// The element kind of scalars and vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarKind {
    /// `bool`
    Bool,
    /// Signed 32-bit two's-complement integer, `int`.
    Int,
    /// IEEE binary32, `float`.
    Float,
}

impl ScalarKind {
    /// The text keyword (`bool`, `int`, `float`).
    pub fn keyword(self) -> &'static str {
        match self {
            ScalarKind::Bool => "bool",
            ScalarKind::Int => "int",
            ScalarKind::Float => "float",
        }
    }

    /// Whether the kind is `int` or `float`.
    pub fn is_numeric(self) -> bool {
        matches!(self, ScalarKind::Int | ScalarKind::Float)
    }
}

/// Sampler kinds. Version 1 supports only 2D samplers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SamplerKind {
    /// `sampler2D`
    Sampler2D,
}

/// One record field: a display name and a value type.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name, unique within its record, nonempty, compared exactly.
    pub name: String,
    /// Field value type.
    pub ty: Handle<Type>,
    /// Source position of the `(field ...)` form, when read from text.
    pub span: Option<Span>,
}

/// A record declaration. Each record declaration is its own nominal type:
/// two declarations with equal display names and fields are distinct.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordType {
    /// Display name (nonempty, need not be unique).
    pub name: String,
    /// Ordered fields.
    pub fields: Vec<Field>,
}

impl RecordType {
    /// The position and declaration of the field called `name`.
    pub fn field(&self, name: &str) -> Option<(usize, &Field)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }
}

/// The shape of a type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeInner {
    /// No value; only a function return type.
    Void,
    /// A scalar.
    Scalar(ScalarKind),
    /// A vector of 2, 3 or 4 components.
    Vector {
        /// Element kind.
        kind: ScalarKind,
        /// Component count (valid: 2..=4).
        size: u8,
    },
    /// A floating matrix; dimensions valid in 2..=4.
    Matrix {
        /// Row count.
        rows: u8,
        /// Column count.
        columns: u8,
    },
    /// An opaque sampler.
    Sampler(SamplerKind),
    /// A fixed-size array; `length` is positive.
    Array {
        /// Element type.
        element: Handle<Type>,
        /// Element count (`Size`, see docs/vpl/decisions.md).
        length: u64,
    },
    /// A nominal record type.
    Record(RecordType),
}

/// Structural key of a non-record type, used for interning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StructuralKey {
    Void,
    Scalar(ScalarKind),
    Vector(ScalarKind, u8),
    Matrix(u8, u8),
    Sampler(SamplerKind),
    Array(Handle<Type>, u64),
}

impl TypeInner {
    fn structural_key(&self) -> Option<StructuralKey> {
        Some(match *self {
            TypeInner::Void => StructuralKey::Void,
            TypeInner::Scalar(k) => StructuralKey::Scalar(k),
            TypeInner::Vector { kind, size } => StructuralKey::Vector(kind, size),
            TypeInner::Matrix { rows, columns } => StructuralKey::Matrix(rows, columns),
            TypeInner::Sampler(k) => StructuralKey::Sampler(k),
            TypeInner::Array { element, length } => StructuralKey::Array(element, length),
            TypeInner::Record(_) => return None,
        })
    }

    /// Whether values of this type can be stored (everything but `void`).
    pub fn is_value(&self) -> bool {
        !matches!(self, TypeInner::Void)
    }

    /// The scalar kind of a scalar, or the element kind of a vector.
    pub fn scalar_kind(&self) -> Option<ScalarKind> {
        match *self {
            TypeInner::Scalar(k) | TypeInner::Vector { kind: k, .. } => Some(k),
            TypeInner::Matrix { .. } => Some(ScalarKind::Float),
            _ => None,
        }
    }
}

/// One entry of the type table.
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    /// The type's shape.
    pub inner: TypeInner,
    /// Where the (first) declaration that produced this entry was read.
    pub span: Option<Span>,
}

/// The module's type table.
///
/// Non-record types are interned structurally: [`TypeArena::insert`] returns
/// the existing handle for an equal shape. Records are never interned:
/// [`TypeArena::declare_record`] always creates a new nominal type. As a
/// result **two handles of one module denote the same type exactly when they
/// are equal**, which is the type equality of section 4 (structural for
/// scalars, vectors, matrices, samplers and arrays; nominal for records).
#[derive(Debug, Clone, Default)]
pub struct TypeArena {
    arena: Arena<Type>,
    lookup: HashMap<StructuralKey, Handle<Type>>,
}

impl PartialEq for TypeArena {
    fn eq(&self, other: &Self) -> bool {
        self.arena == other.arena
    }
}

impl TypeArena {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Returns the handle of a non-record type, adding it if absent. A
    /// `TypeInner::Record` always declares a new record (see
    /// [`TypeArena::declare_record`]).
    pub fn insert(&mut self, inner: TypeInner, span: Option<Span>) -> Handle<Type> {
        match inner.structural_key() {
            Some(key) => {
                if let Some(&h) = self.lookup.get(&key) {
                    return h;
                }
                let h = self.arena.append(Type { inner, span });
                self.lookup.insert(key, h);
                h
            }
            None => self.arena.append(Type { inner, span }),
        }
    }

    /// Declares a new nominal record type.
    pub fn declare_record(
        &mut self,
        name: impl Into<String>,
        fields: Vec<Field>,
        span: Option<Span>,
    ) -> Handle<Type> {
        self.arena.append(Type {
            inner: TypeInner::Record(RecordType {
                name: name.into(),
                fields,
            }),
            span,
        })
    }

    /// Mutable access to a record declaration (e.g. to add fields after
    /// forward references were resolved). `None` for non-records.
    pub fn record_mut(&mut self, handle: Handle<Type>) -> Option<&mut RecordType> {
        match self.arena.get_mut(handle).map(|t| &mut t.inner) {
            Some(TypeInner::Record(r)) => Some(r),
            _ => None,
        }
    }

    /// Replaces the span of an entry.
    pub fn set_span(&mut self, handle: Handle<Type>, span: Option<Span>) {
        if let Some(t) = self.arena.get_mut(handle) {
            t.span = span;
        }
    }

    /// Shorthand for a scalar type.
    pub fn scalar(&mut self, kind: ScalarKind) -> Handle<Type> {
        self.insert(TypeInner::Scalar(kind), None)
    }

    /// Shorthand for `void`.
    pub fn void(&mut self) -> Handle<Type> {
        self.insert(TypeInner::Void, None)
    }

    /// Shorthand for a vector type.
    pub fn vector(&mut self, kind: ScalarKind, size: u8) -> Handle<Type> {
        self.insert(TypeInner::Vector { kind, size }, None)
    }

    /// Shorthand for a floating matrix type (`rows` × `columns`).
    pub fn matrix(&mut self, rows: u8, columns: u8) -> Handle<Type> {
        self.insert(TypeInner::Matrix { rows, columns }, None)
    }

    /// Shorthand for an array type.
    pub fn array(&mut self, element: Handle<Type>, length: u64) -> Handle<Type> {
        self.insert(TypeInner::Array { element, length }, None)
    }

    /// Shorthand for the 2D sampler type.
    pub fn sampler2d(&mut self) -> Handle<Type> {
        self.insert(TypeInner::Sampler(SamplerKind::Sampler2D), None)
    }

    /// Looks up a non-record type without adding it.
    pub fn find(&self, inner: &TypeInner) -> Option<Handle<Type>> {
        inner
            .structural_key()
            .and_then(|k| self.lookup.get(&k).copied())
    }

    /// The entry behind `handle`, if in range.
    pub fn get(&self, handle: Handle<Type>) -> Option<&Type> {
        self.arena.get(handle)
    }

    /// The shape behind `handle`, if in range.
    pub fn inner(&self, handle: Handle<Type>) -> Option<&TypeInner> {
        self.arena.get(handle).map(|t| &t.inner)
    }

    /// Whether `handle` is in range.
    pub fn contains(&self, handle: Handle<Type>) -> bool {
        self.arena.contains(handle)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }

    /// Entries in table order.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = (Handle<Type>, &Type)> + DoubleEndedIterator {
        self.arena.iter()
    }
}

impl std::ops::Index<Handle<Type>> for TypeArena {
    type Output = Type;
    fn index(&self, handle: Handle<Type>) -> &Type {
        &self.arena[handle]
    }
}
