//! The generated module: canonical VPL's containers with instructions that
//! name registers, slots, blocks and functions by number (never type IDs,
//! which the printer assigns in the canonical discovery order). It is
//! printed as canonical text ([`crate::emit`]) and built as the VPL object
//! model ([`crate::build`]) that the verifier checks, so the text is never
//! parsed back.

use crate::types::Ty;
use std::borrow::Cow;
use std::io::Write as _;
use vpl::ir::{BinaryOp, Semantic};

/// An instruction operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// A register.
    Reg(u32),
    /// A `bool` constant.
    Bool(bool),
    /// An `int` constant.
    Int(i32),
    /// A finite `float` constant.
    Float(f32),
}

impl Operand {
    /// Appends the canonical spelling (`r3`, `(float 0.5)`, `(int -2)`).
    pub fn push(self, out: &mut Vec<u8>) {
        match self {
            Operand::Reg(r) => push_id(out, b"r", r as usize),
            Operand::Bool(true) => out.extend_from_slice(b"(bool true)"),
            Operand::Bool(false) => out.extend_from_slice(b"(bool false)"),
            Operand::Int(i) => {
                out.extend_from_slice(b"(int ");
                if i < 0 {
                    out.push(b'-');
                }
                push_decimal(out, i.unsigned_abs() as usize);
                out.push(b')');
            }
            // `{:?}` is the shortest decimal that reads back to the same
            // bits, as the canonical writer prints it.
            Operand::Float(f) => {
                let _ = write!(out, "(float {f:?})");
            }
        }
    }
}

/// Two-digit decimal pairs `00` to `99`.
const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `prefix` and the decimal digits of `n` (`r12`, `b3`): the
/// printer's most frequent output, without `fmt`'s machinery.
pub fn push_id(out: &mut Vec<u8>, prefix: &[u8], n: usize) {
    out.extend_from_slice(prefix);
    push_decimal(out, n);
}

/// Appends the decimal digits of `n`.
pub fn push_decimal(out: &mut Vec<u8>, n: usize) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else if n < 100 {
        out.extend_from_slice(&PAIRS[2 * n..2 * n + 2]);
    } else if n < 1000 {
        out.push(b'0' + (n / 100) as u8);
        let low = n % 100;
        out.extend_from_slice(&PAIRS[2 * low..2 * low + 2]);
    } else {
        push_decimal(out, n / 100);
        let low = n % 100;
        out.extend_from_slice(&PAIRS[2 * low..2 * low + 2]);
    }
}

/// An instruction's operands: up to four inline (every operation the
/// lowering makes, so no allocation per instruction), more on the heap.
#[derive(Debug, Clone)]
pub enum Operands {
    /// At most four operands, the first `len` of `items`.
    Inline {
        /// How many of `items` are operands.
        len: u8,
        /// The operands, then padding.
        items: [Operand; 4],
    },
    /// More than four operands.
    Heap(Vec<Operand>),
}

impl Operands {
    /// The operands of `list`.
    pub fn new(list: &[Operand]) -> Self {
        if list.len() <= 4 {
            let mut items = [Operand::Int(0); 4];
            items[..list.len()].copy_from_slice(list);
            Operands::Inline {
                len: list.len() as u8,
                items,
            }
        } else {
            Operands::Heap(list.to_vec())
        }
    }

    /// The operands, in order.
    pub fn as_slice(&self) -> &[Operand] {
        match self {
            Operands::Inline { len, items } => &items[..usize::from(*len)],
            Operands::Heap(list) => list,
        }
    }
}

/// One interface slot.
#[derive(Debug, Clone)]
pub struct Io {
    /// `in` (true) or `out`.
    pub input: bool,
    /// Display name.
    pub name: String,
    /// Value type.
    pub ty: Ty,
    /// Location, -1 for unspecified.
    pub location: i32,
    /// Semantic tag.
    pub semantic: Semantic,
}

/// A uniform.
#[derive(Debug, Clone)]
pub struct Uniform {
    /// Display name.
    pub name: String,
    /// Value type (an array type makes an array uniform, a record type a
    /// record uniform).
    pub ty: Ty,
}

/// The operation of an [`Inst::Op`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// `construct` (of the result register's type).
    Construct,
    /// A binary operation or comparison.
    Binary(BinaryOp),
    /// The built-in `texture` (sampler, coordinates).
    Texture,
    /// `index` (aggregate, index).
    Index,
}

impl Op {
    /// The instruction word.
    pub fn keyword(self) -> &'static str {
        match self {
            Op::Construct => "construct",
            Op::Binary(b) => b.keyword(),
            Op::Texture => "texture",
            Op::Index => "index",
        }
    }
}

/// A storage root an instruction loads from or stores to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Place {
    /// Stage interface slot `sN`.
    Stage(usize),
    /// Uniform slot `uN`.
    Uniform(usize),
    /// Parameter slot `pN`.
    Parameter(usize),
}

/// An instruction.
#[derive(Debug, Clone)]
pub enum Inst {
    /// A `//` comment line (annotated output only; not in the module).
    Comment(String),
    /// `(WORD rN OPERANDS...)`.
    Op {
        /// The operation.
        op: Op,
        /// The result register.
        result: u32,
        /// Its operands.
        operands: Operands,
    },
    /// `(swizzle rN SOURCE "PATTERN")`.
    Swizzle {
        /// The result register.
        result: u32,
        /// The vector.
        source: Operand,
        /// One to four of `xyzw` (the lowering's own patterns are static).
        pattern: Cow<'static, str>,
    },
    /// `(member rN SOURCE "FIELD")`.
    Member {
        /// The result register.
        result: u32,
        /// The record.
        source: Operand,
        /// The field name.
        field: String,
    },
    /// `(copy rN SOURCE)`.
    Copy {
        /// The result register.
        result: u32,
        /// The value.
        source: Operand,
    },
    /// `(call rN fK ARGUMENTS...)`.
    Call {
        /// The result register.
        result: u32,
        /// The callee's index in the stage's function list.
        function: usize,
        /// The arguments.
        arguments: Vec<Operand>,
    },
    /// `(load rN PLACE)`.
    Load {
        /// The result register.
        result: u32,
        /// Where from.
        place: Place,
    },
    /// `(store PLACE VALUE)`.
    Store {
        /// Where to.
        place: Place,
        /// The value.
        value: Operand,
    },
}

/// A block terminator.
#[derive(Debug, Clone, Default)]
pub enum Terminator {
    /// `(branch bN)`.
    Branch(usize),
    /// `(branch_if CONDITION bT bF)`.
    BranchIf(Operand, usize, usize),
    /// `(return)`, or `(return VALUE)`.
    #[default]
    Return,
    /// `(return VALUE)`.
    ReturnValue(Operand),
}

/// A block: instructions and its terminator.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Instructions (and, annotated, comments).
    pub instructions: Vec<Inst>,
    /// The terminator.
    pub terminator: Terminator,
}

/// A function.
#[derive(Debug, Clone)]
pub struct Function {
    /// Display name.
    pub name: String,
    /// Return type.
    pub ret: Ty,
    /// Parameter types.
    pub params: Vec<Ty>,
    /// Register types; register `n` is `registers[n]`.
    pub registers: Vec<Ty>,
    /// Blocks in order (the first is the entry).
    pub blocks: Vec<Block>,
}

/// A stage.
#[derive(Debug, Clone)]
pub struct Stage {
    /// `vertex` or `fragment`.
    pub kind: vpl::ir::StageKind,
    /// Interface slots.
    pub interface: Vec<Io>,
    /// Functions; the first is the entry.
    pub functions: Vec<Function>,
}

/// A whole module.
#[derive(Debug, Clone)]
pub struct Program {
    /// Uniforms in slot order.
    pub uniforms: Vec<Uniform>,
    /// The vertex stage.
    pub vertex: Stage,
    /// The fragment stage.
    pub fragment: Stage,
}

impl Program {
    /// The number of instructions in every function of both stages.
    pub fn instruction_count(&self) -> usize {
        [&self.vertex, &self.fragment]
            .iter()
            .flat_map(|s| &s.functions)
            .flat_map(|f| &f.blocks)
            .map(|b| b.instructions.len() + 1)
            .sum()
    }
}
