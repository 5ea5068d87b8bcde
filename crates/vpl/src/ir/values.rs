//! Values, operands and storage references (spec sections 5 and 6).

use super::arena::Handle;
use super::span::Span;
use super::types::{ScalarKind, Type};

/// A register descriptor (`RegisterValue`): a function-local, statically
/// typed, mutable virtual register. Every descriptor with the same index in
/// a function must carry the declared type.
///
/// Laid out in 12 bytes with 4-byte alignment (`packed(4)`: no padding
/// after the type handle), so that an [`Operand`] takes 32 bytes and an
/// [`Instruction`](super::Instruction) 104 rather than 120: a large
/// module's memory is mostly its instructions. The fields are read and
/// written as usual; only a reference to `index` cannot be taken (copy it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, packed(4))]
pub struct Register {
    /// Function-local register number (`r` + digits in text).
    pub index: u64,
    /// Declared type.
    pub ty: Handle<Type>,
}

impl Register {
    /// A register descriptor.
    pub fn new(index: u64, ty: Handle<Type>) -> Self {
        Register { index, ty }
    }
}

/// A scalar literal. Equality compares float **bits**, so `-0.0 != 0.0`
/// and NaN payloads are distinguished (NaN/infinity are invalid literals).
#[derive(Debug, Clone, Copy)]
pub enum Literal {
    /// Boolean.
    Bool(bool),
    /// Signed 32-bit integer.
    Int(i32),
    /// IEEE binary32; must be finite.
    Float(f32),
}

impl PartialEq for Literal {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Literal::Bool(a), Literal::Bool(b)) => a == b,
            (Literal::Int(a), Literal::Int(b)) => a == b,
            (Literal::Float(a), Literal::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}
impl Eq for Literal {}

impl Literal {
    /// The scalar kind of the literal.
    pub fn kind(self) -> ScalarKind {
        match self {
            Literal::Bool(_) => ScalarKind::Bool,
            Literal::Int(_) => ScalarKind::Int,
            Literal::Float(_) => ScalarKind::Float,
        }
    }
}

/// A constant descriptor (`ConstantValue`): an explicit scalar type and a
/// literal of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constant {
    /// Explicit type; must be the scalar type of the literal's kind.
    pub ty: Handle<Type>,
    /// The literal.
    pub value: Literal,
}

/// A computation operand: a register or a scalar constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Read a register.
    Register(Register),
    /// A literal.
    Constant(Constant),
}

impl Value {
    /// The operand's static type.
    pub fn ty(&self) -> Handle<Type> {
        match self {
            Value::Register(r) => r.ty,
            Value::Constant(c) => c.ty,
        }
    }
}

/// An operand occurrence with its source position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operand {
    /// The value.
    pub value: Value,
    /// Where the operand was read, if from text.
    pub span: Option<Span>,
}

impl Operand {
    /// A register operand without a span.
    pub fn register(register: Register) -> Self {
        Operand {
            value: Value::Register(register),
            span: None,
        }
    }

    /// A constant operand without a span.
    pub fn constant(ty: Handle<Type>, value: Literal) -> Self {
        Operand {
            value: Value::Constant(Constant { ty, value }),
            span: None,
        }
    }

    /// The operand's static type.
    pub fn ty(&self) -> Handle<Type> {
        self.value.ty()
    }

    /// The register, if the operand reads one.
    pub fn as_register(&self) -> Option<Register> {
        match self.value {
            Value::Register(r) => Some(r),
            Value::Constant(_) => None,
        }
    }
}

impl From<Register> for Operand {
    fn from(register: Register) -> Self {
        Operand::register(register)
    }
}

/// The storage namespace of a root reference (section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageKind {
    /// A declared register; slot = register index. Read/write.
    Local,
    /// Current function's parameter list; slot = position. Read/write.
    Parameter,
    /// The module's uniform list; slot = position. Read-only.
    Uniform,
    /// The current stage's interface list; slot = position. Inputs read-only.
    StageIo,
}

/// One step of a derived reference path (section 6.1).
#[derive(Debug, Clone, PartialEq)]
pub enum SelectorKind {
    /// `MemberReferenceValue`: select the named field of record storage.
    Member(String),
    /// `IndexReferenceValue`: select an element of array storage with an
    /// integer register or constant, read when the path is used.
    Index(Operand),
}

/// A derived-reference step with the type it selects.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// Field or element selection.
    pub kind: SelectorKind,
    /// Inherited type: the selected field's or element's stored type.
    pub ty: Handle<Type>,
    /// Where the `member_ref`/`index_ref` form was read.
    pub span: Option<Span>,
}

/// A storage reference (`ReferenceValue` and its derived forms).
///
/// A root descriptor (namespace, slot, stored type) followed by a path of
/// member/index selectors, innermost first: `(member_ref (index_ref (local
/// r2) r3) "color")` is root `Local r2` with path `[Index r3, Member
/// "color"]`. A flat path makes cyclic references unrepresentable and keeps
/// every traversal iterative.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Root namespace.
    pub storage: StorageKind,
    /// Root slot: register index, parameter/uniform/interface position.
    pub slot: u64,
    /// The root slot's stored value type.
    pub root_ty: Handle<Type>,
    /// Derived selectors, applied in order.
    pub path: Vec<Selector>,
    /// Where the root form was read.
    pub span: Option<Span>,
}

impl Reference {
    /// A root reference.
    pub fn root(storage: StorageKind, slot: u64, ty: Handle<Type>) -> Self {
        Reference {
            storage,
            slot,
            root_ty: ty,
            path: Vec::new(),
            span: None,
        }
    }

    /// A root reference to a whole local register.
    pub fn local(register: Register) -> Self {
        Reference::root(StorageKind::Local, register.index, register.ty)
    }

    /// Appends a member selector of type `ty`.
    pub fn member(mut self, field: impl Into<String>, ty: Handle<Type>) -> Self {
        self.path.push(Selector {
            kind: SelectorKind::Member(field.into()),
            ty,
            span: None,
        });
        self
    }

    /// Appends an index selector of type `ty`.
    pub fn index(mut self, index: impl Into<Operand>, ty: Handle<Type>) -> Self {
        self.path.push(Selector {
            kind: SelectorKind::Index(index.into()),
            ty,
            span: None,
        });
        self
    }

    /// The type of the referenced storage (the last selector's, or the root's).
    pub fn ty(&self) -> Handle<Type> {
        self.path.last().map_or(self.root_ty, |s| s.ty)
    }

    /// Whether this is a derived reference.
    pub fn is_derived(&self) -> bool {
        !self.path.is_empty()
    }
}
