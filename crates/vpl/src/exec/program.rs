//! The executor's compiled form of a verified module: per function, one
//! flat list of operations on word offsets (blocks laid out in order,
//! terminators as jumps), with every register, parameter and constant at
//! a fixed offset of the function's frame.

/// Where a storage access reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    /// The current frame (registers, parameters, constants).
    Frame,
    /// The draw's uniform words (read-only).
    Uniform,
    /// The invocation's stage interface words.
    Io,
}

/// A dynamic array selection of a storage path: the index is read from
/// the frame when the path is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DynamicIndex {
    /// Frame offset of the `int` index.
    pub index: u32,
    /// Element size in words.
    pub stride: u32,
    /// Element count (an out-of-range index is clamped into it).
    pub count: u32,
}

/// A storage access: a static word offset plus dynamic selections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Access {
    /// Address space.
    pub space: Space,
    /// Static offset (root plus member and constant-index selections).
    pub offset: u32,
    /// Dynamic selections.
    pub dynamic: Box<[DynamicIndex]>,
    /// Words accessed.
    pub len: u32,
}

/// Arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Subtract,
    Multiply,
    Divide,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

/// The element kind an operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Int,
    Float,
}

/// One piece of a construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Copy `len` words.
    Words { src: u32, len: u32 },
    /// Convert one signed integer to float.
    IntToFloat { src: u32 },
    /// One scalar repeated `count` times (converted when `convert`).
    Fill { src: u32, count: u32, convert: bool },
    /// A `rows` × `columns` matrix with the scalar on its diagonal.
    Diagonal {
        src: u32,
        rows: u32,
        columns: u32,
        convert: bool,
    },
}

/// One operation. Offsets without a space are frame offsets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Copy {
        dst: u32,
        src: u32,
        len: u32,
    },
    Load {
        dst: u32,
        from: Access,
    },
    Store {
        to: Access,
        src: u32,
    },
    Arith {
        op: Arith,
        kind: Kind,
        dst: u32,
        a: u32,
        b: u32,
        len: u32,
        a_step: u32,
        b_step: u32,
    },
    Compare {
        op: Compare,
        kind: Kind,
        dst: u32,
        a: u32,
        b: u32,
    },
    /// `dst = a * b` with `a` rows × inner, `b` inner × columns (column-major).
    MatMul {
        dst: u32,
        a: u32,
        b: u32,
        rows: u32,
        inner: u32,
        columns: u32,
    },
    Construct {
        dst: u32,
        len: u32,
        parts: Box<[Part]>,
    },
    Swizzle {
        dst: u32,
        src: u32,
        pattern: [u8; 4],
        len: u32,
    },
    Call {
        function: u32,
        arguments: Box<[(u32, u32, u32)]>,
        result: Option<(u32, u32)>,
    },
    /// `dst` (vec4) = texture(sampler word at `sampler`, vec2 at `coordinate`).
    Texture {
        dst: u32,
        sampler: u32,
        coordinate: u32,
    },
    Jump {
        target: u32,
    },
    JumpIf {
        condition: u32,
        if_true: u32,
        if_false: u32,
    },
    Return {
        value: Option<(u32, u32)>,
    },
    Discard,
}

/// One compiled function.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CompiledFunction {
    /// Operations; execution starts at 0.
    pub ops: Vec<Op>,
    /// Frame size in words.
    pub frame_words: u32,
    /// The constant words, copied to the start of every new frame.
    pub constants: Vec<u32>,
    /// Frame offset of each parameter.
    pub parameters: Vec<u32>,
}

/// One compiled stage.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CompiledStage {
    /// Functions by stage function handle index.
    pub functions: Vec<CompiledFunction>,
    /// The entry function.
    pub entry: u32,
    /// Word offset of each interface slot in the invocation's IO words.
    pub io_offsets: Vec<u32>,
    /// IO words per invocation.
    pub io_words: u32,
    /// Deepest call chain (frames).
    pub max_depth: u32,
}
