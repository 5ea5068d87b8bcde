//! The `LibraryIr` half of a `.rvnlib`: structs and functions, and nothing else.
//!
//! Every cross-reference is a key or an index: a call names its callee by
//! [`LibraryIrFunction::key`], a struct-typed reference names the struct by
//! [`LibraryIrStruct::key`], a place names its root by position in
//! parameters-then-locals.

/// Declares a closed enum serialised by its member name (System.Text.Json's
/// string-enum convention without a naming policy).
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),*
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// Every member name as written in JSON, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($variant)),*];

            /// The member name as written in JSON.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),*
                }
            }

            /// Parses a member name; `None` for anything else.
            pub fn from_name(text: &str) -> Option<Self> {
                match text {
                    $(stringify!($variant) => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use wire_enum;

wire_enum! {
    /// The compiler's IR type kinds, shared by every type reference.
    IrTypeKind {
        Void, Bool, Int, UInt, Float, Double, Int64, UInt64, Vector, Matrix, Array, Struct,
        Texture, Sampler, StorageImage, AccelerationStructure,
    }
}

impl IrTypeKind {
    /// True for the seven scalar kinds.
    pub fn is_scalar(self) -> bool {
        matches!(
            self,
            IrTypeKind::Bool
                | IrTypeKind::Int
                | IrTypeKind::UInt
                | IrTypeKind::Float
                | IrTypeKind::Double
                | IrTypeKind::Int64
                | IrTypeKind::UInt64
        )
    }

    /// True for the integer scalar kinds.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            IrTypeKind::Int | IrTypeKind::UInt | IrTypeKind::Int64 | IrTypeKind::UInt64
        )
    }

    /// True for the floating-point scalar kinds.
    pub fn is_float(self) -> bool {
        matches!(self, IrTypeKind::Float | IrTypeKind::Double)
    }

    /// The IR's own spelling of a scalar (`f32`, `i32`, …), used in messages.
    pub fn ir_spelling(self) -> &'static str {
        match self {
            IrTypeKind::Bool => "bool",
            IrTypeKind::Int => "i32",
            IrTypeKind::UInt => "u32",
            IrTypeKind::Float => "f32",
            IrTypeKind::Double => "f64",
            IrTypeKind::Int64 => "i64",
            IrTypeKind::UInt64 => "u64",
            IrTypeKind::Void => "void",
            IrTypeKind::Vector => "vec",
            IrTypeKind::Matrix => "mat",
            IrTypeKind::Array => "array",
            IrTypeKind::Struct => "struct",
            IrTypeKind::Texture => "texture",
            IrTypeKind::Sampler => "sampler",
            IrTypeKind::StorageImage => "image",
            IrTypeKind::AccelerationStructure => "accel",
        }
    }
}

wire_enum! {
    /// Dimensionality of a texture or storage image.
    IrTextureDimension { Texture2D, Texture3D, Cube }
}

wire_enum! {
    /// Unary operators.
    IrUnaryOp { Negate, Not, BitwiseNot }
}

wire_enum! {
    /// Binary operators.
    IrBinaryOp {
        Add, Subtract, Multiply, Divide, Modulo, MatrixMultiply, ShiftLeft, ShiftRight,
        UnsignedShiftRight, BitwiseAnd, BitwiseOr, BitwiseXor, LogicalAnd, LogicalOr, Equal,
        NotEqual, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual,
    }
}

wire_enum! {
    /// How a `convert` changes its operand.
    IrConversionKind { Numeric, Splat }
}

wire_enum! {
    /// Built-in operations.
    IrIntrinsic {
        Abs, Sign, Floor, Ceil, Round, Truncate, Fract, Saturate, Sqrt, InverseSqrt, Exp, Exp2,
        Log, Log2, Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Radians, Degrees, DdX, DdY, Min, Max,
        Pow, Mod, Step, Clamp, Lerp, SmoothStep, Length, Distance, Dot, Cross, Normalize, Reflect,
        Refract, Transpose, All, Any, SampleTexture, SampleTextureLevel, SampleTextureGrad,
        LoadTexture, TextureSize, LoadImage, StoreImage, ImageSize, BitCast, ArrayLength,
        ControlBarrier, MemoryBarrierShared, TraceRayQuery,
    }
}

impl IrIntrinsic {
    /// True for intrinsics that produce no value (their `Result` is absent).
    pub fn is_void(self) -> bool {
        matches!(
            self,
            IrIntrinsic::StoreImage
                | IrIntrinsic::ControlBarrier
                | IrIntrinsic::MemoryBarrierShared
                | IrIntrinsic::TraceRayQuery
        )
    }

    /// Accepted argument counts, inclusive. Documented in `docs/rvnlib/decisions.md`.
    pub fn arity(self) -> (usize, usize) {
        use IrIntrinsic::*;
        match self {
            Abs | Sign | Floor | Ceil | Round | Truncate | Fract | Saturate | Sqrt
            | InverseSqrt | Exp | Exp2 | Log | Log2 | Sin | Cos | Tan | Asin | Acos | Atan
            | Radians | Degrees | DdX | DdY | Length | Normalize | Transpose | All | Any
            | BitCast => (1, 1),
            Atan2 | Min | Max | Pow | Mod | Step | Distance | Dot | Cross | Reflect => (2, 2),
            Clamp | Lerp | SmoothStep | Refract => (3, 3),
            SampleTexture => (3, 4),
            SampleTextureLevel => (4, 4),
            SampleTextureGrad => (5, 5),
            LoadTexture => (2, 3),
            TextureSize => (1, 2),
            LoadImage => (2, 2),
            StoreImage => (3, 3),
            ImageSize => (1, 1),
            ArrayLength => (1, 1),
            ControlBarrier | MemoryBarrierShared => (0, 0),
            TraceRayQuery => (0, usize::MAX),
        }
    }
}

/// A type in the lowered IR, mirroring the wire record field for field.
///
/// Only the fields meaningful for [`kind`](Self::kind) take part in
/// [`same_type`](Self::same_type); the rest are carried so that a file re-writes
/// byte-identically.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrTypeReference {
    /// The type's kind.
    pub kind: IrTypeKind,
    /// The scalar each lane holds, for a vector or a matrix.
    pub component: IrTypeKind,
    /// Lane count of a vector.
    pub size: i32,
    /// Rows of a matrix.
    pub rows: i32,
    /// Columns of a matrix.
    pub columns: i32,
    /// Array length; `None` for an unsized array.
    pub length: Option<i32>,
    /// Element type of an array.
    pub element: Option<Box<LibraryIrTypeReference>>,
    /// Key of the struct, for [`IrTypeKind::Struct`].
    pub struct_key: Option<String>,
    /// Texture or image dimensionality.
    pub dimension: IrTextureDimension,
    /// What a sample of a texture, or a load of a storage image, returns.
    pub sampled: Option<Box<LibraryIrTypeReference>>,
    /// Texel format of a storage image.
    pub format: Option<String>,
}

impl LibraryIrTypeReference {
    fn bare(kind: IrTypeKind) -> Self {
        LibraryIrTypeReference {
            kind,
            component: IrTypeKind::Void,
            size: 0,
            rows: 0,
            columns: 0,
            length: None,
            element: None,
            struct_key: None,
            dimension: IrTextureDimension::Texture2D,
            sampled: None,
            format: None,
        }
    }

    /// `void`.
    pub fn void() -> Self {
        Self::bare(IrTypeKind::Void)
    }

    /// A scalar of `kind`.
    pub fn scalar(kind: IrTypeKind) -> Self {
        Self::bare(kind)
    }

    /// `vec<component, size>`.
    pub fn vector(component: IrTypeKind, size: i32) -> Self {
        LibraryIrTypeReference {
            component,
            size,
            ..Self::bare(IrTypeKind::Vector)
        }
    }

    /// `mat<component, rows, columns>`.
    pub fn matrix(component: IrTypeKind, rows: i32, columns: i32) -> Self {
        LibraryIrTypeReference {
            component,
            rows,
            columns,
            ..Self::bare(IrTypeKind::Matrix)
        }
    }

    /// An array of `element`; `length` `None` is unsized.
    pub fn array(element: LibraryIrTypeReference, length: Option<i32>) -> Self {
        LibraryIrTypeReference {
            length,
            element: Some(Box::new(element)),
            ..Self::bare(IrTypeKind::Array)
        }
    }

    /// A struct, by key.
    pub fn structure(key: impl Into<String>) -> Self {
        LibraryIrTypeReference {
            struct_key: Some(key.into()),
            ..Self::bare(IrTypeKind::Struct)
        }
    }

    /// A texture of `dimension` whose samples are `sampled`.
    pub fn texture(dimension: IrTextureDimension, sampled: LibraryIrTypeReference) -> Self {
        LibraryIrTypeReference {
            dimension,
            sampled: Some(Box::new(sampled)),
            ..Self::bare(IrTypeKind::Texture)
        }
    }

    /// A sampler.
    pub fn sampler() -> Self {
        Self::bare(IrTypeKind::Sampler)
    }

    /// True for `void`.
    pub fn is_void(&self) -> bool {
        self.kind == IrTypeKind::Void
    }

    /// Structural type identity: compares only the fields meaningful for the kind.
    /// Structs compare by key (tuples and monomorphised generics therefore by
    /// their bare key, i.e. by name).
    pub fn same_type(&self, other: &LibraryIrTypeReference) -> bool {
        if self.kind != other.kind {
            return false;
        }
        match self.kind {
            IrTypeKind::Vector => self.component == other.component && self.size == other.size,
            IrTypeKind::Matrix => {
                self.component == other.component
                    && self.rows == other.rows
                    && self.columns == other.columns
            }
            IrTypeKind::Array => {
                self.length == other.length
                    && match (&self.element, &other.element) {
                        (Some(a), Some(b)) => a.same_type(b),
                        (None, None) => true,
                        _ => false,
                    }
            }
            IrTypeKind::Struct => self.struct_key == other.struct_key,
            IrTypeKind::Texture => {
                self.dimension == other.dimension
                    && match (&self.sampled, &other.sampled) {
                        (Some(a), Some(b)) => a.same_type(b),
                        (None, None) => true,
                        _ => false,
                    }
            }
            IrTypeKind::StorageImage => {
                self.dimension == other.dimension && self.format == other.format
            }
            _ => true,
        }
    }

    /// The scalar kind of a scalar, or the lane kind of a vector or matrix.
    pub fn scalar_kind(&self) -> Option<IrTypeKind> {
        if self.kind.is_scalar() {
            Some(self.kind)
        } else if matches!(self.kind, IrTypeKind::Vector | IrTypeKind::Matrix) {
            Some(self.component)
        } else {
            None
        }
    }

    /// Renders the type in the IR's spelling (`vec<f32,3>`, `mat<f32,4,4>`, a struct key, …).
    pub fn display(&self) -> String {
        match self.kind {
            IrTypeKind::Vector => format!("vec<{},{}>", self.component.ir_spelling(), self.size),
            IrTypeKind::Matrix => format!(
                "mat<{},{},{}>",
                self.component.ir_spelling(),
                self.rows,
                self.columns
            ),
            IrTypeKind::Array => {
                let element = self
                    .element
                    .as_ref()
                    .map_or_else(|| "?".to_string(), |e| e.display());
                match self.length {
                    Some(n) => format!("{element}[{n}]"),
                    None => format!("{element}[]"),
                }
            }
            IrTypeKind::Struct => self.struct_key.clone().unwrap_or_else(|| "?".into()),
            IrTypeKind::Texture => format!("{}", self.dimension),
            IrTypeKind::StorageImage => format!(
                "image{}<{}>",
                self.dimension,
                self.format.as_deref().unwrap_or("?")
            ),
            kind => kind.ir_spelling().to_string(),
        }
    }
}

/// One field of a lowered aggregate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrField {
    /// Field name.
    pub name: String,
    /// Field type.
    pub ty: LibraryIrTypeReference,
}

/// A lowered aggregate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrStruct {
    /// Identity: `<library>::<struct>`, or the bare name for tuples and
    /// monomorphised generics (and for every struct of a version-3 file).
    pub key: String,
    /// The struct's name, unique only inside the library that coined it.
    pub name: String,
    /// Its fields, in order.
    pub fields: Vec<LibraryIrField>,
}

/// A named storage slot: a parameter or a local.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrVariable {
    /// Variable name.
    pub name: String,
    /// Variable type.
    pub ty: LibraryIrTypeReference,
    /// True for a parameter the caller passes by reference (`inout`).
    pub by_reference: bool,
}

/// One entry of a function's value table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrValue {
    /// Value id.
    pub id: i32,
    /// The value's type.
    pub ty: LibraryIrTypeReference,
}

/// A compile-time value, as text with the kind that says how to read it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryValue {
    /// `bool`, `int`, `uint`, `float` or `double`.
    pub kind: String,
    /// Invariant-culture, round-trippable text.
    pub text: String,
}

impl LibraryValue {
    /// A `bool` constant.
    pub fn bool(value: bool) -> Self {
        LibraryValue {
            kind: "bool".into(),
            text: if value { "true" } else { "false" }.into(),
        }
    }
    /// An `int` constant.
    pub fn int(value: i32) -> Self {
        LibraryValue {
            kind: "int".into(),
            text: value.to_string(),
        }
    }
    /// A `uint` constant.
    pub fn uint(value: u32) -> Self {
        LibraryValue {
            kind: "uint".into(),
            text: value.to_string(),
        }
    }
    /// A `float` constant, as .NET's `float.ToString("R", InvariantCulture)`.
    pub fn float(value: f32) -> Self {
        LibraryValue {
            kind: "float".into(),
            text: format_dotnet_float(format!("{value:e}"), value.to_string(), 9),
        }
    }
    /// A `double` constant, as .NET's `double.ToString("R", InvariantCulture)`.
    pub fn double(value: f64) -> Self {
        LibraryValue {
            kind: "double".into(),
            text: format_dotnet_float(format!("{value:e}"), value.to_string(), 17),
        }
    }

    /// The IR scalar kind this constant's `Kind` names, if it is one of the five.
    pub fn scalar_kind(&self) -> Option<IrTypeKind> {
        match self.kind.as_str() {
            "bool" => Some(IrTypeKind::Bool),
            "int" => Some(IrTypeKind::Int),
            "uint" => Some(IrTypeKind::UInt),
            "float" => Some(IrTypeKind::Float),
            "double" => Some(IrTypeKind::Double),
            _ => None,
        }
    }

    /// True when `text` parses as a value of `kind` the way the reference reads it back.
    pub fn text_parses(&self) -> bool {
        let t = self.text.as_str();
        match self.kind.as_str() {
            "bool" => t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false"),
            "int" => t.parse::<i32>().is_ok(),
            "uint" => t.parse::<u32>().is_ok(),
            "float" | "double" => parse_dotnet_float(t).is_some(),
            _ => false,
        }
    }
}

/// .NET's round-trip ("R") text under the invariant culture, from Rust's
/// shortest round-trip digits (`scientific` is `{:e}`, `positional` is
/// `Display`). .NET formats "R" as general format with precision
/// `max(digit count, round_trip_digits)` (9 for `float`, 17 for `double`): the
/// exponent form `d.dddE+XX` (at least two exponent digits) when the decimal
/// exponent is at least that precision or at most −5, positional otherwise;
/// non-finite values are the invariant culture's `Infinity`, `-Infinity`, `NaN`.
fn format_dotnet_float(scientific: String, positional: String, round_trip_digits: usize) -> String {
    match positional.as_str() {
        "inf" => return "Infinity".into(),
        "-inf" => return "-Infinity".into(),
        "NaN" => return "NaN".into(),
        _ => {}
    }
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return positional;
    };
    let Ok(exponent) = exponent.parse::<i64>() else {
        return positional;
    };
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
    if mantissa.trim_start_matches('-') == "0" {
        return positional; // "0" and "-0"
    }
    let precision = digits.max(round_trip_digits) as i64;
    if exponent >= precision || exponent <= -5 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}E{sign}{:02}", exponent.abs())
    } else {
        positional
    }
}

/// Parses invariant-culture float text, including `E+XX` exponents and .NET's
/// non-finite spellings.
fn parse_dotnet_float(text: &str) -> Option<f64> {
    match text {
        "\u{221E}" | "Infinity" => Some(f64::INFINITY),
        "-\u{221E}" | "-Infinity" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => {
            let ok = !text.is_empty()
                && text
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
            if ok { text.parse::<f64>().ok() } else { None }
        }
    }
}

/// One step of an access chain (JSON discriminator `at`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LibraryIrAccess {
    /// `field`: selects a struct field by index.
    Field {
        /// Field index.
        index: i32,
    },
    /// `index`: indexes an array, vector or matrix with the value whose id this is.
    Index {
        /// Value id of the runtime index.
        index: i32,
    },
    /// `swizzle`: selects lanes of a vector.
    Swizzle {
        /// Lane indices.
        components: Vec<i32>,
    },
}

/// A storage location: a root variable plus a chain of accesses into it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrPlace {
    /// Index into the function's parameters followed by its locals.
    pub root: i32,
    /// Access steps, outermost first.
    pub chain: Vec<LibraryIrAccess>,
}

/// One argument of a call: a value id (by value) or a root index (by reference).
/// The wire form carries two nullable fields; a well-formed argument sets exactly one,
/// which the verifier checks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrArgument {
    /// The value's id, when passed by value.
    pub value: Option<i32>,
    /// The root's index in parameters-then-locals, when passed by reference.
    pub reference: Option<i32>,
}

impl LibraryIrArgument {
    /// A by-value argument.
    pub fn by_value(id: i32) -> Self {
        LibraryIrArgument {
            value: Some(id),
            reference: None,
        }
    }
    /// A by-reference argument naming a root.
    pub fn by_reference(root: i32) -> Self {
        LibraryIrArgument {
            value: None,
            reference: Some(root),
        }
    }
}

/// A sequence of statements.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LibraryIrBlock {
    /// The statements, in order.
    pub statements: Vec<LibraryIrStatement>,
}

wire_enum! {
    /// The closed list of statement shapes (the reference's `JsonDerivedType` list), in
    /// declaration order. [`op`](Self::op) is the JSON discriminator.
    StatementKind {
        Block, Constant, Load, Store, Unary, Binary, Convert, Intrinsic, Call, Construct,
        Extract, Select, If, Loop, Return, Break, Continue, Discard,
    }
}

impl StatementKind {
    /// The `op` discriminator value.
    pub fn op(self) -> &'static str {
        match self {
            StatementKind::Block => "block",
            StatementKind::Constant => "const",
            StatementKind::Load => "load",
            StatementKind::Store => "store",
            StatementKind::Unary => "unary",
            StatementKind::Binary => "binary",
            StatementKind::Convert => "convert",
            StatementKind::Intrinsic => "intrinsic",
            StatementKind::Call => "call",
            StatementKind::Construct => "construct",
            StatementKind::Extract => "extract",
            StatementKind::Select => "select",
            StatementKind::If => "if",
            StatementKind::Loop => "loop",
            StatementKind::Return => "return",
            StatementKind::Break => "break",
            StatementKind::Continue => "continue",
            StatementKind::Discard => "discard",
        }
    }

    /// Parses an `op` value.
    pub fn from_op(op: &str) -> Option<Self> {
        StatementKind::ALL.iter().copied().find(|k| k.op() == op)
    }
}

/// A step inside a lowered body (JSON discriminator `op`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LibraryIrStatement {
    /// `block`: a nested sequence.
    Block(LibraryIrBlock),
    /// `const`: a constant; `value` `None` is the result type's zero.
    Constant {
        /// Defined value.
        result: i32,
        /// The constant.
        value: Option<LibraryValue>,
    },
    /// `load`: reads a place.
    Load {
        /// Defined value.
        result: i32,
        /// Where from.
        place: LibraryIrPlace,
    },
    /// `store`: writes a value to a place.
    Store {
        /// Where to.
        place: LibraryIrPlace,
        /// What.
        value: i32,
    },
    /// `unary`.
    Unary {
        /// Defined value.
        result: i32,
        /// Operator.
        op: IrUnaryOp,
        /// Operand value.
        operand: i32,
    },
    /// `binary`.
    Binary {
        /// Defined value.
        result: i32,
        /// Operator.
        op: IrBinaryOp,
        /// Left operand.
        left: i32,
        /// Right operand.
        right: i32,
    },
    /// `convert`.
    Convert {
        /// Defined value.
        result: i32,
        /// Conversion.
        conversion_kind: IrConversionKind,
        /// Operand value.
        operand: i32,
    },
    /// `intrinsic`: a built-in; `result` is absent for a void one.
    Intrinsic {
        /// Defined value, if any.
        result: Option<i32>,
        /// Which built-in.
        intrinsic: IrIntrinsic,
        /// Argument value ids.
        arguments: Vec<i32>,
    },
    /// `call`: names its callee by key.
    Call {
        /// Defined value, if the callee returns one.
        result: Option<i32>,
        /// Callee key.
        function: String,
        /// Arguments.
        arguments: Vec<LibraryIrArgument>,
    },
    /// `construct`: builds a vector, matrix, array or struct.
    Construct {
        /// Defined value.
        result: i32,
        /// Component value ids.
        arguments: Vec<i32>,
    },
    /// `extract`: reads a component of a value.
    Extract {
        /// Defined value.
        result: i32,
        /// Source value.
        source: i32,
        /// Access chain into the source.
        chain: Vec<LibraryIrAccess>,
    },
    /// `select`: a conditional value.
    Select {
        /// Defined value.
        result: i32,
        /// Condition.
        condition: i32,
        /// Value when true.
        when_true: i32,
        /// Value when false.
        when_false: i32,
    },
    /// `if`.
    If {
        /// Condition value.
        condition: i32,
        /// Then branch.
        then: LibraryIrBlock,
        /// Else branch.
        otherwise: Option<LibraryIrBlock>,
    },
    /// `loop`: a structured loop.
    Loop {
        /// Block recomputing the test each iteration.
        condition: LibraryIrBlock,
        /// The value the test produced.
        condition_value: i32,
        /// Loop body.
        body: LibraryIrBlock,
        /// Continue block, run after each iteration.
        continuing: Option<LibraryIrBlock>,
        /// False for `repeat … while`.
        test_before_body: bool,
    },
    /// `return`.
    Return {
        /// Returned value, absent for void.
        value: Option<i32>,
    },
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `discard`.
    Discard,
}

impl LibraryIrStatement {
    /// This statement's shape.
    pub fn kind(&self) -> StatementKind {
        match self {
            LibraryIrStatement::Block(_) => StatementKind::Block,
            LibraryIrStatement::Constant { .. } => StatementKind::Constant,
            LibraryIrStatement::Load { .. } => StatementKind::Load,
            LibraryIrStatement::Store { .. } => StatementKind::Store,
            LibraryIrStatement::Unary { .. } => StatementKind::Unary,
            LibraryIrStatement::Binary { .. } => StatementKind::Binary,
            LibraryIrStatement::Convert { .. } => StatementKind::Convert,
            LibraryIrStatement::Intrinsic { .. } => StatementKind::Intrinsic,
            LibraryIrStatement::Call { .. } => StatementKind::Call,
            LibraryIrStatement::Construct { .. } => StatementKind::Construct,
            LibraryIrStatement::Extract { .. } => StatementKind::Extract,
            LibraryIrStatement::Select { .. } => StatementKind::Select,
            LibraryIrStatement::If { .. } => StatementKind::If,
            LibraryIrStatement::Loop { .. } => StatementKind::Loop,
            LibraryIrStatement::Return { .. } => StatementKind::Return,
            LibraryIrStatement::Break => StatementKind::Break,
            LibraryIrStatement::Continue => StatementKind::Continue,
            LibraryIrStatement::Discard => StatementKind::Discard,
        }
    }
}

/// A lowered function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryIrFunction {
    /// Identity: the qualified signature. Compared, never parsed.
    pub key: String,
    /// Plain identifier.
    pub name: String,
    /// Return type.
    pub return_type: LibraryIrTypeReference,
    /// Parameters (roots `0..parameters.len()`).
    pub parameters: Vec<LibraryIrVariable>,
    /// Locals (roots after the parameters).
    pub locals: Vec<LibraryIrVariable>,
    /// The value table, sorted by id; may have gaps.
    pub values: Vec<LibraryIrValue>,
    /// How many values were numbered, gaps included.
    pub value_count: i32,
    /// The body.
    pub body: LibraryIrBlock,
}

impl LibraryIrFunction {
    /// The variable a place root names, if it is in range.
    pub fn root(&self, index: i32) -> Option<&LibraryIrVariable> {
        let index = usize::try_from(index).ok()?;
        if index < self.parameters.len() {
            self.parameters.get(index)
        } else {
            self.locals.get(index - self.parameters.len())
        }
    }

    /// Number of roots (parameters plus locals).
    pub fn root_count(&self) -> usize {
        self.parameters.len() + self.locals.len()
    }
}

/// The lowered half: structs and functions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LibraryIr {
    /// Structs.
    pub structs: Vec<LibraryIrStruct>,
    /// Functions.
    pub functions: Vec<LibraryIrFunction>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// .NET "R" under the invariant culture (general format, precision
    /// `max(digits, 9)` for float and `max(digits, 17)` for double; exponent form
    /// when the exponent reaches the precision or is at most −5). Changed by
    /// issue 19: `12345678f` is `12345678` (was `1.2345678E+07`), infinity is
    /// `Infinity` (was `∞`), and 1E-05 is the first exponent-form small value.
    #[test]
    fn constants_format_like_dotnet_invariant_round_trip() {
        let floats: &[(f32, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (0.1, "0.1"),
            (-60.0, "-60"),
            (1234567.0, "1234567"),
            (12345678.0, "12345678"),
            (1.0e8, "100000000"),       // exponent 8 < 9: positional
            (123456789.0, "123456790"), // 9 digits, exponent 8
            (1.0e9, "1E+09"),           // exponent 9 = precision
            (1.2345678e9, "1.2345678E+09"),
            (1.0e20, "1E+20"),
            (f32::MAX, "3.4028235E+38"),
            (0.0001, "0.0001"), // exponent -4: positional
            (0.00012345, "0.00012345"),
            (0.00001, "1E-05"), // exponent -5: exponent form
            (-1.5e-5, "-1.5E-05"),
            (f32::MIN_POSITIVE, "1.1754944E-38"),
            (1.0e-45, "1E-45"),
            (f32::INFINITY, "Infinity"),
            (f32::NEG_INFINITY, "-Infinity"),
            (f32::NAN, "NaN"),
        ];
        for &(value, text) in floats {
            assert_eq!(LibraryValue::float(value).text, text, "float {value:e}");
        }
        let doubles: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (0.1, "0.1"),
            (1.0e15, "1000000000000000"),
            (1.0e16, "10000000000000000"), // exponent 16 < 17: positional
            (12345678901234567.0, "12345678901234568"), // 17 digits, exponent 16
            (1.0e17, "1E+17"),             // exponent 17 = precision
            (1.2345678901234566e17, "1.2345678901234566E+17"),
            (1.0e100, "1E+100"), // three exponent digits
            (f64::MAX, "1.7976931348623157E+308"),
            (0.0001, "0.0001"),
            (0.00001, "1E-05"),
            (-2.5e-7, "-2.5E-07"),
            (5.0e-324, "5E-324"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for &(value, text) in doubles {
            assert_eq!(LibraryValue::double(value).text, text, "double {value:e}");
        }
        assert_eq!(LibraryValue::int(-3).text, "-3");
        assert_eq!(LibraryValue::bool(false).text, "false");
        for &(value, _) in floats {
            let v = LibraryValue::float(value);
            assert!(v.text_parses(), "{v:?}");
            // Round trip: the text reads back to the same bits (NaN aside).
            if !value.is_nan() {
                let back: f32 = match v.text.as_str() {
                    "Infinity" => f32::INFINITY,
                    "-Infinity" => f32::NEG_INFINITY,
                    t => t.parse().unwrap(),
                };
                assert_eq!(back.to_bits(), value.to_bits(), "{}", v.text);
            }
        }
        for &(value, _) in doubles {
            assert!(LibraryValue::double(value).text_parses());
        }
        // Text read from a file keeps the older spellings readable.
        for text in ["\u{221E}", "-\u{221E}", "1.2345678E+07"] {
            let v = LibraryValue {
                kind: "float".into(),
                text: text.into(),
            };
            assert!(v.text_parses(), "{text}");
        }
        assert!(
            !LibraryValue {
                kind: "int".into(),
                text: "1.0".into()
            }
            .text_parses()
        );
    }

    #[test]
    fn struct_types_compare_by_key_and_unused_fields_are_ignored() {
        let a = LibraryIrTypeReference::structure("Tuple_f32_f32");
        let b = LibraryIrTypeReference::structure("Tuple_f32_f32#1");
        assert!(!a.same_type(&b));
        let mut scalar = LibraryIrTypeReference::scalar(IrTypeKind::Float);
        scalar.size = 3;
        assert!(scalar.same_type(&LibraryIrTypeReference::scalar(IrTypeKind::Float)));
        assert_eq!(
            LibraryIrTypeReference::matrix(IrTypeKind::Float, 4, 3).display(),
            "mat<f32,4,3>"
        );
    }
}
