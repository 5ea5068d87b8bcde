//! The generated module before printing: canonical VPL's containers with
//! instructions already spelt (they name registers, slots and blocks, never
//! type IDs, which the printer assigns in the canonical discovery order).

use crate::types::Ty;
use std::fmt::Write as _;

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
    pub fn push(self, out: &mut String) {
        let _ = match self {
            Operand::Reg(r) => write!(out, "r{r}"),
            Operand::Bool(b) => write!(out, "(bool {b})"),
            Operand::Int(i) => write!(out, "(int {i})"),
            // `{:?}` is the shortest decimal that reads back to the same
            // bits, as the canonical writer prints it.
            Operand::Float(f) => write!(out, "(float {f:?})"),
        };
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
    /// Semantic keyword (`none`, `position`, ...).
    pub semantic: &'static str,
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

/// A block: instruction lines and its terminator.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// Spelt instructions (or `//` comments).
    pub lines: Vec<String>,
    /// The spelt terminator.
    pub terminator: String,
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
    pub keyword: &'static str,
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
