//! The logical ZLM1 schema-1.9 module: every semantic fact, no table index,
//! offset, range or physical order.
//!
//! Collections whose members carry their own semantic key (imports,
//! declarations, fields, variants, functions, parameters, locals, blocks,
//! owned paths, loans, cleanup edges) may be held in any order: the writer
//! sorts them canonically. Ordered semantic sequences (operations inside a
//! block or cleanup recipe, operands, contract expressions) keep their order.
//! Tables that the byte layout derives (type instances, effect sets,
//! constants, semantic-symbol references, strings) are not stored here.

use crate::hash::Id;

macro_rules! closed_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $value:expr => $text:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name { $($(#[$vm])* $variant),* }
        impl $name {
            /// Every member in tag order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
            /// The closed tag.
            pub fn tag(self) -> u32 { match self { $($name::$variant => $value),* } }
            /// The member with closed tag `tag`.
            pub fn from_tag(tag: u32) -> Option<Self> { match tag { $($value => Some($name::$variant),)* _ => None } }
            /// The text-form spelling.
            pub fn text(self) -> &'static str { match self { $($name::$variant => $text),* } }
            /// The member spelled `text` in the text form.
            pub fn from_text(text: &str) -> Option<Self> { match text { $($text => Some($name::$variant),)* _ => None } }
        }
    };
}

closed_enum!(
    /// Header numeric semantic profile.
    NumericProfile { Exact = 0 => "exact", Modular = 1 => "modular", Approximate = 2 => "approximate" });
closed_enum!(
    /// Header verification mode.
    VerificationMode { Checked = 0 => "checked", Verified = 1 => "verified", Trusted = 2 => "trusted" });
closed_enum!(
    /// Declaration kinds admitted as local rows in schema 1.9 (class one and
    /// intrinsic four reject).
    DeclKind { Value = 0 => "value", Enum = 2 => "enum", Error = 3 => "error" });
closed_enum!(
    /// Declaration, field and function visibility.
    Visibility { Public = 0 => "public", Module = 1 => "module", Private = 2 => "private" });
closed_enum!(
    /// Field mutability.
    Mutability { Let = 0 => "let", Var = 1 => "var" });
closed_enum!(
    /// Callable kinds.
    CallableKind { Message = 0 => "message", Initializer = 1 => "init" });
closed_enum!(
    /// Receiver kinds.
    ReceiverKind { None = 0 => "none", Shared = 1 => "shared", Exclusive = 2 => "exclusive", Owned = 3 => "owned", Type = 4 => "type" });
closed_enum!(
/// Closed scalar kinds (legacy zero rejects in 1.9).
ScalarKind {
    Bool = 1 => "Bool", Byte = 2 => "Byte", Int8 = 3 => "Int8", Int16 = 4 => "Int16",
    Int32 = 5 => "Int32", Int64 = 6 => "Int64", UInt8 = 7 => "UInt8", UInt16 = 8 => "UInt16",
    UInt32 = 9 => "UInt32", UInt64 = 10 => "UInt64", Index = 11 => "Index",
});
closed_enum!(
    /// Effect tags.
    Effect { Io = 0 => "io", Alloc = 1 => "alloc", Time = 2 => "time", Random = 3 => "random", Reflect = 4 => "reflect", Unsafe = 5 => "unsafe", Abort = 6 => "abort" });

impl ReceiverKind {
    /// The receiver binding's type for a function whose owner type is
    /// `owner`: shared `Ref<Self>`, exclusive `Mut<Self>`, owned and type
    /// `Self`, none absent.
    pub fn binding(self, owner: &Type) -> Option<Type> {
        match self {
            ReceiverKind::None => None,
            ReceiverKind::Shared => Some(Type::Ref(Box::new(owner.clone()))),
            ReceiverKind::Exclusive => Some(Type::Mut(Box::new(owner.clone()))),
            ReceiverKind::Owned | ReceiverKind::Type => Some(owner.clone()),
        }
    }
}

/// Effect inclusion (C0-EFFECT): whether every effect of `inner` (a callee's
/// set) is in `outer` (the caller's). The one subset rule the structural
/// and the semantic checks share.
pub fn effects_within(inner: &[Effect], outer: &[Effect]) -> bool {
    inner.iter().all(|effect| outer.contains(effect))
}

closed_enum!(
    /// Lexical loan kinds.
    LoanKind { Shared = 0 => "shared", Exclusive = 1 => "exclusive", ByteSlice = 2 => "slice" });
closed_enum!(
    /// Cleanup-edge kinds.
    EdgeKind { Fallthrough = 0 => "fallthrough", Branch = 1 => "branch", Join = 2 => "join", Return = 3 => "return", TryError = 4 => "try-error", Break = 5 => "break", Continue = 6 => "continue", Backedge = 7 => "backedge" });
closed_enum!(
    /// Owned-path entry states.
    EntryState { Uninitialized = 0 => "uninit", Initialized = 1 => "init", Moved = 2 => "moved" });

impl ScalarKind {
    /// Payload width in bytes of a constant of this kind (`None` for Index,
    /// which admits no constant).
    pub fn constant_width(self) -> Option<usize> {
        use ScalarKind::*;
        match self {
            Bool | Byte | Int8 | UInt8 => Some(1),
            Int16 | UInt16 => Some(2),
            Int32 | UInt32 => Some(4),
            Int64 | UInt64 => Some(8),
            Index => None,
        }
    }
    /// Whether the kind is a signed integer.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ScalarKind::Int8 | ScalarKind::Int16 | ScalarKind::Int32 | ScalarKind::Int64
        )
    }
    /// Whether the kind is an integer (every kind except Bool).
    pub fn is_integer(self) -> bool {
        self != ScalarKind::Bool
    }
    /// The scalar type of this kind, borrowed for the whole program (lets
    /// a typing pass borrow every operand's type, constants included).
    pub fn static_type(self) -> &'static Type {
        use ScalarKind::*;
        match self {
            Bool => &Type::Scalar(Bool),
            Byte => &Type::Scalar(Byte),
            Int8 => &Type::Scalar(Int8),
            Int16 => &Type::Scalar(Int16),
            Int32 => &Type::Scalar(Int32),
            Int64 => &Type::Scalar(Int64),
            UInt8 => &Type::Scalar(UInt8),
            UInt16 => &Type::Scalar(UInt16),
            UInt32 => &Type::Scalar(UInt32),
            UInt64 => &Type::Scalar(UInt64),
            Index => &Type::Scalar(Index),
        }
    }
}

/// A type instance (kind tags zero through nine).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Type {
    /// Kind 0.
    Scalar(ScalarKind),
    /// Kind 1, catalog.
    Unit,
    /// Kind 2, catalog.
    Never,
    /// Kind 3: a nominal declaration, by declaration-nominal ID.
    Nominal(Id),
    /// Kind 4, catalog: `Result<T, E>`.
    Result(Box<Type>, Box<Type>),
    /// Kind 5, catalog.
    ArrayByte,
    /// Kind 6, catalog.
    SliceByte,
    /// Kind 7, catalog: `Ref<T>`.
    Ref(Box<Type>),
    /// Kind 8, catalog: `Mut<T>`.
    Mut(Box<Type>),
    /// Kind 9, catalog.
    AllocatorBytesError,
}

/// The type's spelling without name resolution: nominals print as `#` and
/// their declaration-nominal ID in hex (the text form's fallback spelling).
impl std::fmt::Display for Type {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::Scalar(kind) => out.write_str(kind.text()),
            Type::Unit => out.write_str("Unit"),
            Type::Never => out.write_str("Never"),
            Type::Nominal(id) => write!(out, "#{}", crate::hash::to_hex(id)),
            Type::Result(ok, err) => write!(out, "Result<{ok},{err}>"),
            Type::ArrayByte => out.write_str("Array<Byte>"),
            Type::SliceByte => out.write_str("Slice<Byte>"),
            Type::Ref(inner) => write!(out, "Ref<{inner}>"),
            Type::Mut(inner) => write!(out, "Mut<{inner}>"),
            Type::AllocatorBytesError => out.write_str("Allocator<BytesError>"),
        }
    }
}

impl Type {
    /// The closed kind tag.
    pub fn kind(&self) -> u32 {
        match self {
            Type::Scalar(_) => 0,
            Type::Unit => 1,
            Type::Never => 2,
            Type::Nominal(_) => 3,
            Type::Result(..) => 4,
            Type::ArrayByte => 5,
            Type::SliceByte => 6,
            Type::Ref(_) => 7,
            Type::Mut(_) => 8,
            Type::AllocatorBytesError => 9,
        }
    }
    /// Ordered children.
    pub fn children(&self) -> Vec<&Type> {
        match self {
            Type::Result(t, e) => vec![t, e],
            Type::Ref(t) | Type::Mut(t) => vec![t],
            _ => Vec::new(),
        }
    }
    /// Leaf depth zero; otherwise one plus the maximum child depth.
    pub fn depth(&self) -> u32 {
        self.children()
            .iter()
            .map(|c| c.depth() + 1)
            .max()
            .unwrap_or(0)
    }
    /// Whether the type is a loan (`Ref`, `Mut`, `Slice<Byte>`, allocator).
    pub fn is_borrow(&self) -> bool {
        matches!(
            self,
            Type::Ref(_) | Type::Mut(_) | Type::SliceByte | Type::AllocatorBytesError
        )
    }
    /// Shorthand for a scalar.
    pub fn scalar(k: ScalarKind) -> Type {
        Type::Scalar(k)
    }
}

/// A scalar constant (every closed scalar except Index).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Constant {
    /// Exact scalar type.
    pub kind: ScalarKind,
    /// The value's bits at its width, zero-extended into 64 bits.
    pub bits: u64,
}

impl Constant {
    /// Canonical little-endian payload bytes, or `None` when the kind admits
    /// no constant or `bits` do not fit the width.
    pub fn payload(&self) -> Option<Vec<u8>> {
        self.payload_bytes()
            .map(|(bytes, width)| bytes[..width].to_vec())
    }

    /// Whether the constant has a canonical payload (see [`Constant::payload`]),
    /// without making it.
    pub fn is_canonical(&self) -> bool {
        self.payload_bytes().is_some()
    }

    /// The little-endian bits and the payload width (the payload is the
    /// first `width` bytes), or `None` as for [`Constant::payload`].
    pub fn payload_bytes(&self) -> Option<([u8; 8], usize)> {
        let width = self.kind.constant_width()?;
        if width < 8 && self.bits >> (width * 8) != 0 {
            return None;
        }
        if self.kind == ScalarKind::Bool && self.bits > 1 {
            return None;
        }
        Some((self.bits.to_le_bytes(), width))
    }
}

/// A whole logical module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Package manifest name.
    pub package: String,
    /// Dotted module identity.
    pub name: String,
    /// Numeric semantic profile.
    pub profile: NumericProfile,
    /// Verification mode.
    pub mode: VerificationMode,
    /// Imported declarations (any order).
    pub imports: Vec<Import>,
    /// Local declarations (any order).
    pub declarations: Vec<Declaration>,
}

/// One imported declaration. Imports name declarations of modules in the
/// same package (docs/zlm/format.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// Provider module's dotted identity.
    pub module: String,
    /// Declaration name.
    pub name: String,
    /// Declaration kind (committed by the nominal ID).
    pub kind: DeclKind,
    /// The provider's module-interface digest.
    pub interface: Id,
    /// Provider declaration's Copy flag (derived; checked against the provider).
    pub copy: bool,
}

/// A local declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// Kind.
    pub kind: DeclKind,
    /// Name.
    pub name: String,
    /// Visibility.
    pub visibility: Visibility,
    /// Ordinary fields (value declarations only).
    pub fields: Vec<Field>,
    /// Variants (enum and error declarations only).
    pub variants: Vec<Variant>,
    /// Functions (messages and initializers).
    pub functions: Vec<Function>,
}

/// A field: an ordinary declaration field or a variant payload field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Semantic source ordinal within its owner.
    pub ordinal: u32,
    /// Name.
    pub name: String,
    /// Visibility (payload fields: public).
    pub visibility: Visibility,
    /// Mutability (payload fields: let).
    pub mutability: Mutability,
    /// Exact type.
    pub ty: Type,
}

/// An enum or error variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// Dense tag (semantic source ordinal).
    pub tag: u32,
    /// Name.
    pub name: String,
    /// Payload fields.
    pub fields: Vec<Field>,
}

/// A function (message or initializer) of a declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Callable kind.
    pub callable: CallableKind,
    /// Receiver kind (the receiver type is derived from it and the owner).
    pub receiver: ReceiverKind,
    /// Name (`init` for initializers).
    pub name: String,
    /// Visibility.
    pub visibility: Visibility,
    /// Parameters (any order; keyed by ordinal).
    pub params: Vec<Param>,
    /// Result type.
    pub result: Type,
    /// Effect set.
    pub effects: Vec<Effect>,
    /// Requires expressions in source order.
    pub requires: Vec<Expr>,
    /// Ensures expressions in source order.
    pub ensures: Vec<Expr>,
    /// Checked body.
    pub body: Body,
}

/// A parameter (the move flag is derived from its type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Semantic ordinal.
    pub ordinal: u32,
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Type,
}

/// A local (flags are always zero).
pub type Local = Param;

/// A function body: locals, CFG blocks, ownership facts and cleanup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Body {
    /// Locals (any order; keyed by ordinal).
    pub locals: Vec<Local>,
    /// Blocks (any order; keyed by dense ID; block zero is the entry).
    pub blocks: Vec<Block>,
    /// Owned paths (any order; keyed by path key).
    pub paths: Vec<OwnedPath>,
    /// Lexical loans (any order; keyed by dense ID).
    pub loans: Vec<Loan>,
    /// Cleanup edges (any order; keyed by dense ID).
    pub edges: Vec<CleanupEdge>,
}

/// A CFG block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Dense function-local block ID.
    pub id: u32,
    /// Flow operations in order.
    pub ops: Vec<Op>,
}

/// A cleanup edge and its ordered `PLACE_DROP` recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanupEdge {
    /// Dense function-local edge ID.
    pub id: u32,
    /// Edge kind.
    pub kind: EdgeKind,
    /// Source block ID.
    pub source: u32,
    /// Successor block ID, or `None` for function exit.
    pub successor: Option<u32>,
    /// Ordered cleanup-recipe operations.
    pub drops: Vec<Op>,
}

/// Where a body operation lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpRef {
    /// Flow operation `ordinal` of block `block`.
    Flow { block: u32, ordinal: u32 },
    /// Recipe operation `ordinal` of cleanup edge `edge`.
    Recipe { edge: u32, ordinal: u32 },
}

/// Root of an owned path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Root {
    /// The runtime receiver (root kind zero).
    Receiver,
    /// Parameter by semantic ordinal (root kind one).
    Param(u32),
    /// Local by semantic ordinal (root kind two).
    Local(u32),
    /// Temporary produced by an operation (root kind three).
    Temp(OpRef),
}

/// A logical owned-path key (function implied).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathKey {
    /// Root.
    pub root: Root,
    /// Field-ID path below the root.
    pub fields: Vec<Id>,
}

/// An owned path record. Parent, initialization ordinal and entry state are
/// derived facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedPath {
    /// Key.
    pub key: PathKey,
    /// Exact type at this path.
    pub ty: Type,
}

/// A lexical loan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loan {
    /// Dense function-local loan ID.
    pub id: u32,
    /// Kind.
    pub kind: LoanKind,
    /// Origin owned path.
    pub origin: PathKey,
    /// Parent loan ID.
    pub parent: Option<u32>,
    /// Borrowed type.
    pub borrowed: Type,
    /// Creating operation (`None` for an entry loan).
    pub creation: Option<OpRef>,
    /// Last-use operation (`None` for an entry loan).
    pub last_use: Option<OpRef>,
}

/// A typed body operation (flags are always zero in 1.9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Closed tag 0..=52.
    pub tag: u32,
    /// Result type, or `None`.
    pub result: Option<Type>,
    /// Ordered operands.
    pub operands: Vec<Operand>,
    /// Logical auxiliary zero.
    pub aux0: Aux,
    /// Logical auxiliary one.
    pub aux1: Aux,
}

/// A body operand; its exact type is derived from what it references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// SSA value produced by a flow operation.
    Value(OpRef),
    /// Owned path.
    Place(PathKey),
    /// Constant.
    Const(Constant),
    /// Block by dense ID.
    Block(u32),
}

/// A logical auxiliary (kind, payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aux {
    /// Kind 0.
    None,
    /// Kind 1.
    Lit(u32),
    /// Kind 2.
    Type(Type),
    /// Kind 3.
    Decl(Id),
    /// Kind 4.
    Field(Id),
    /// Kind 5.
    Func(Id),
    /// Kind 6.
    CatalogFunc(Id),
    /// Kind 7: effect set.
    Effects(Vec<Effect>),
    /// Kind 8: loan by dense ID.
    Loan(u32),
    /// Kind 9.
    Path(PathKey),
    /// Kind 10: cleanup edge by dense ID.
    Edge(u32),
    /// Kind 11.
    Op(OpRef),
    /// Kind 12.
    Block(u32),
    /// Kind 13.
    Variant(Id),
}

impl Aux {
    /// The logical auxiliary kind.
    pub fn kind(&self) -> u32 {
        match self {
            Aux::None => 0,
            Aux::Lit(_) => 1,
            Aux::Type(_) => 2,
            Aux::Decl(_) => 3,
            Aux::Field(_) => 4,
            Aux::Func(_) => 5,
            Aux::CatalogFunc(_) => 6,
            Aux::Effects(_) => 7,
            Aux::Loan(_) => 8,
            Aux::Path(_) => 9,
            Aux::Edge(_) => 10,
            Aux::Op(_) => 11,
            Aux::Block(_) => 12,
            Aux::Variant(_) => 13,
        }
    }
}

/// One typed requires/ensures expression: dense postorder operations; the
/// last one is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expr {
    /// Operations in dense order.
    pub ops: Vec<ContractOp>,
}

/// A contract operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractOp {
    /// Closed tag 0..=24.
    pub tag: u32,
    /// Exact result type.
    pub result: Type,
    /// Operands.
    pub operands: Vec<ContractOperand>,
    /// Auxiliary zero (pure-call callee kind).
    pub aux0: u32,
    /// Auxiliary one.
    pub aux1: u32,
    /// Referenced field / declared-function / catalog-function ID.
    pub reference: Option<Id>,
}

/// A contract operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractOperand {
    /// Kind 2.
    Const(Constant),
    /// Kind 4.
    Receiver,
    /// Kind 5, by semantic ordinal.
    Param(u32),
    /// Kind 6.
    Result,
    /// Kind 7, dense earlier operation ordinal.
    Value(u32),
}

/// Typed-operation tags of schema 1.9.
pub mod tag {
    pub const CONST: u32 = 0;
    pub const NEG: u32 = 1;
    pub const ADD: u32 = 2;
    pub const SUB: u32 = 3;
    pub const MUL: u32 = 4;
    pub const DIV: u32 = 5;
    pub const EQ: u32 = 6;
    pub const LT: u32 = 7;
    pub const LOAD_LOCAL: u32 = 8;
    pub const STORE_LOCAL: u32 = 9;
    pub const CALL: u32 = 10;
    pub const JUMP: u32 = 11;
    pub const JUMP_IF_FALSE: u32 = 12;
    pub const ASSERT_TRUE: u32 = 13;
    pub const ASSERT_EQ: u32 = 14;
    pub const RETURN: u32 = 15;
    pub const REM: u32 = 16;
    pub const NE: u32 = 17;
    pub const LE: u32 = 18;
    pub const GT: u32 = 19;
    pub const GE: u32 = 20;
    pub const BIT_AND: u32 = 21;
    pub const BIT_OR: u32 = 22;
    pub const BIT_XOR: u32 = 23;
    pub const NOT_BOOL: u32 = 24;
    pub const ENUM_CONST: u32 = 25;
    pub const ENUM_IS_VARIANT: u32 = 26;
    pub const RESULT_TRY: u32 = 29;
    pub const UNIT_VALUE: u32 = 35;
    pub const AGGREGATE_CONSTRUCT: u32 = 36;
    pub const FIELD_COPY: u32 = 37;
    pub const FIELD_MOVE: u32 = 38;
    pub const PLACE_MOVE: u32 = 39;
    pub const PLACE_DROP: u32 = 40;
    pub const BORROW_SHARED: u32 = 41;
    pub const BORROW_MUT: u32 = 42;
    pub const BORROW_SLICE_BYTE: u32 = 43;
    pub const RESULT_OK_RICH: u32 = 44;
    pub const RESULT_ERR_RICH: u32 = 45;
    pub const RESULT_TRY_RICH: u32 = 46;
    pub const INTRINSIC_CALL: u32 = 47;
    pub const REPLACE_COMMIT: u32 = 48;
    pub const SHIFT_LEFT: u32 = 49;
    pub const SHIFT_RIGHT: u32 = 50;
    pub const VARIANT_CONSTRUCT: u32 = 51;
    pub const BYTE_BUILDER_FINISH: u32 = 52;

    /// Text-form names of tags 0..=52 (`None` for the tags that are
    /// noncanonical in 1.9: 27, 28, 30–34).
    pub const NAMES: [Option<&str>; 53] = [
        Some("const"),
        Some("neg"),
        Some("add"),
        Some("sub"),
        Some("mul"),
        Some("div"),
        Some("eq"),
        Some("lt"),
        Some("load_local"),
        Some("store_local"),
        Some("call"),
        Some("jump"),
        Some("jump_if_false"),
        Some("assert_true"),
        Some("assert_eq"),
        Some("return"),
        Some("rem"),
        Some("ne"),
        Some("le"),
        Some("gt"),
        Some("ge"),
        Some("bit_and"),
        Some("bit_or"),
        Some("bit_xor"),
        Some("not_bool"),
        Some("enum_const"),
        Some("enum_is_variant"),
        None,
        None,
        Some("result_try"),
        None,
        None,
        None,
        None,
        None,
        Some("unit_value"),
        Some("aggregate_construct"),
        Some("field_copy"),
        Some("field_move"),
        Some("place_move"),
        Some("place_drop"),
        Some("borrow_shared"),
        Some("borrow_mut"),
        Some("borrow_slice_byte"),
        Some("result_ok_rich"),
        Some("result_err_rich"),
        Some("result_try_rich"),
        Some("intrinsic_call"),
        Some("replace_commit"),
        Some("shift_left"),
        Some("shift_right"),
        Some("variant_construct"),
        Some("byte_builder_finish"),
    ];

    /// The text name of `tag`.
    pub fn name(tag: u32) -> Option<&'static str> {
        NAMES.get(tag as usize).copied().flatten()
    }
    /// The tag named `name`.
    pub fn from_name(name: &str) -> Option<u32> {
        NAMES
            .iter()
            .position(|n| *n == Some(name))
            .map(|i| i as u32)
    }
}

/// Contract-operation tags.
pub mod ctag {
    /// Text names of tags 0..=24 (2 and 6 are reserved and reject).
    pub const NAMES: [&str; 25] = [
        "identity",
        "field_copy",
        "variant_is",
        "pure_call",
        "not",
        "neg",
        "bit_not",
        "add",
        "sub",
        "mul",
        "div",
        "rem",
        "shl",
        "shr",
        "bit_and",
        "bit_xor",
        "bit_or",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "and",
        "or",
    ];
    /// The text name of `tag`.
    pub fn name(tag: u32) -> Option<&'static str> {
        NAMES.get(tag as usize).copied()
    }
    /// The tag named `name`.
    pub fn from_name(name: &str) -> Option<u32> {
        NAMES.iter().position(|n| *n == name).map(|i| i as u32)
    }
}
