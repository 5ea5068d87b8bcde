//! Function bodies: functions and their parameters and blocks (section 3),
//! instructions (section 7) and terminators (section 8). They refer to each
//! other (blocks hold instructions, which name blocks and functions), so they
//! share one file.

use super::arena::{Arena, Handle};
use super::span::Span;
use super::types::Type;
use super::values::{Operand, Reference, Register};

/// Arithmetic and comparison operators (section 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `add`
    Add,
    /// `subtract`
    Subtract,
    /// `multiply`
    Multiply,
    /// `divide`
    Divide,
    /// `equal`
    Equal,
    /// `not_equal`
    NotEqual,
    /// `less`
    Less,
    /// `less_equal`
    LessEqual,
    /// `greater`
    Greater,
    /// `greater_equal`
    GreaterEqual,
}

impl BinaryOp {
    /// Every operator, in text-keyword order.
    pub const ALL: [BinaryOp; 10] = [
        BinaryOp::Add,
        BinaryOp::Subtract,
        BinaryOp::Multiply,
        BinaryOp::Divide,
        BinaryOp::Equal,
        BinaryOp::NotEqual,
        BinaryOp::Less,
        BinaryOp::LessEqual,
        BinaryOp::Greater,
        BinaryOp::GreaterEqual,
    ];

    /// The text keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Subtract => "subtract",
            BinaryOp::Multiply => "multiply",
            BinaryOp::Divide => "divide",
            BinaryOp::Equal => "equal",
            BinaryOp::NotEqual => "not_equal",
            BinaryOp::Less => "less",
            BinaryOp::LessEqual => "less_equal",
            BinaryOp::Greater => "greater",
            BinaryOp::GreaterEqual => "greater_equal",
        }
    }

    /// The operator spelled `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        // One match rather than a search of `ALL` (the reader asks once per
        // instruction); `binary_keywords_round_trip` checks it against `keyword`.
        Some(match keyword {
            "add" => BinaryOp::Add,
            "subtract" => BinaryOp::Subtract,
            "multiply" => BinaryOp::Multiply,
            "divide" => BinaryOp::Divide,
            "equal" => BinaryOp::Equal,
            "not_equal" => BinaryOp::NotEqual,
            "less" => BinaryOp::Less,
            "less_equal" => BinaryOp::LessEqual,
            "greater" => BinaryOp::Greater,
            "greater_equal" => BinaryOp::GreaterEqual,
            _ => return None,
        })
    }

    /// Whether the operator is a comparison producing `bool`.
    pub fn is_comparison(self) -> bool {
        !matches!(
            self,
            BinaryOp::Add | BinaryOp::Subtract | BinaryOp::Multiply | BinaryOp::Divide
        )
    }
}

/// Built-in functions. Version 1 has only texture sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `texture(sampler2D, vec2) -> vec4` (section 7.3.1); text form `texture`.
    Texture,
}

/// What a call invokes: a same-stage function or a built-in (never both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callee {
    /// A function of the calling stage (`BuiltinFunction_None`).
    Function(Handle<Function>),
    /// A built-in (NULL callee function).
    Builtin(Builtin),
}

/// One `xyzw` swizzle selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SwizzleComponent {
    /// Component 0.
    X,
    /// Component 1.
    Y,
    /// Component 2.
    Z,
    /// Component 3.
    W,
}

impl SwizzleComponent {
    /// Component position 0..=3.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The selector letter.
    pub fn letter(self) -> char {
        ['x', 'y', 'z', 'w'][self.index()]
    }

    /// The selector spelled by `c`.
    pub fn from_letter(c: char) -> Option<Self> {
        match c {
            'x' => Some(SwizzleComponent::X),
            'y' => Some(SwizzleComponent::Y),
            'z' => Some(SwizzleComponent::Z),
            'w' => Some(SwizzleComponent::W),
            _ => None,
        }
    }
}

/// The operation of an instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum InstructionKind {
    /// Declare a register (entry-block prefix only); no runtime effect.
    DeclareLocal {
        /// The declared register and its type.
        register: Register,
    },
    /// `result = source` of exactly the result's type.
    Copy {
        /// Destination.
        result: Register,
        /// Source value.
        source: Operand,
    },
    /// Read root or derived storage.
    Load {
        /// Destination.
        result: Register,
        /// Storage read.
        source: Reference,
    },
    /// Write an exactly matching value to writable storage.
    Store {
        /// Storage written.
        target: Reference,
        /// Value written.
        value: Operand,
    },
    /// Arithmetic or comparison.
    Binary {
        /// Destination.
        result: Register,
        /// Operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Operand,
        /// Right operand.
        rhs: Operand,
    },
    /// Function or built-in call. `result` is `None` for void callees.
    Call {
        /// Destination, absent for void calls (`void` in text).
        result: Option<Register>,
        /// Invoked function.
        callee: Callee,
        /// Arguments in parameter order.
        arguments: Vec<Operand>,
    },
    /// Explicit construction or scalar conversion.
    Construct {
        /// Destination.
        result: Register,
        /// Constructed type; text takes it from the destination register.
        ty: Handle<Type>,
        /// Components in order.
        arguments: Vec<Operand>,
    },
    /// Vector component extraction.
    Swizzle {
        /// Destination.
        result: Register,
        /// Source vector.
        source: Operand,
        /// 1 to 4 selectors.
        pattern: Vec<SwizzleComponent>,
    },
    /// Record field extraction from a value.
    Member {
        /// Destination.
        result: Register,
        /// Source record value.
        source: Operand,
        /// Field name.
        field: String,
    },
    /// Array element extraction from a value.
    Index {
        /// Destination.
        result: Register,
        /// Source array value.
        source: Operand,
        /// Integer index.
        index: Operand,
    },
}

impl InstructionKind {
    /// The register this instruction assigns, if any (a whole-local store
    /// assigns its register too, but through a reference; see
    /// [`Reference`]). `DeclareLocal` assigns nothing.
    pub fn result(&self) -> Option<Register> {
        match self {
            InstructionKind::DeclareLocal { .. } | InstructionKind::Store { .. } => None,
            InstructionKind::Copy { result, .. }
            | InstructionKind::Load { result, .. }
            | InstructionKind::Binary { result, .. }
            | InstructionKind::Construct { result, .. }
            | InstructionKind::Swizzle { result, .. }
            | InstructionKind::Member { result, .. }
            | InstructionKind::Index { result, .. } => Some(*result),
            InstructionKind::Call { result, .. } => *result,
        }
    }

    /// The computation operands read by this instruction, in text order
    /// (index operands inside references are not included; see
    /// [`InstructionKind::references`]).
    pub fn operands(&self) -> Vec<&Operand> {
        self.operands_iter().collect()
    }

    /// [`InstructionKind::operands`] without allocating.
    pub fn operands_iter(&self) -> impl Iterator<Item = &Operand> + '_ {
        let (fixed, list): ([Option<&Operand>; 2], &[Operand]) = match self {
            InstructionKind::DeclareLocal { .. } | InstructionKind::Load { .. } => {
                ([None, None], &[])
            }
            InstructionKind::Copy { source, .. }
            | InstructionKind::Swizzle { source, .. }
            | InstructionKind::Member { source, .. } => ([Some(source), None], &[]),
            InstructionKind::Store { value, .. } => ([Some(value), None], &[]),
            InstructionKind::Binary { lhs, rhs, .. } => ([Some(lhs), Some(rhs)], &[]),
            InstructionKind::Call { arguments, .. }
            | InstructionKind::Construct { arguments, .. } => ([None, None], arguments),
            InstructionKind::Index { source, index, .. } => ([Some(source), Some(index)], &[]),
        };
        fixed.into_iter().flatten().chain(list.iter())
    }

    /// The storage references used by this instruction.
    pub fn references(&self) -> Option<&Reference> {
        match self {
            InstructionKind::Load { source, .. } => Some(source),
            InstructionKind::Store { target, .. } => Some(target),
            _ => None,
        }
    }
}

/// An instruction with its source position.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// The operation.
    pub kind: InstructionKind,
    /// Where the instruction form (or, for `DeclareLocal`, the `register`
    /// form) was read.
    pub span: Option<Span>,
}

impl From<InstructionKind> for Instruction {
    fn from(kind: InstructionKind) -> Self {
        Instruction { kind, span: None }
    }
}

/// How a block ends (section 8).
#[derive(Debug, Clone, PartialEq)]
pub enum TerminatorKind {
    /// Jump to a same-function block.
    Branch {
        /// Successor.
        target: Handle<Block>,
    },
    /// Test a `bool` value.
    BranchIf {
        /// Condition.
        condition: Operand,
        /// Successor when true.
        if_true: Handle<Block>,
        /// Successor when false.
        if_false: Handle<Block>,
    },
    /// Finish the function; `value` is `None` exactly for void functions.
    Return {
        /// Returned value.
        value: Option<Operand>,
    },
    /// Abandon the fragment invocation (fragment stage only).
    Discard,
}

impl TerminatorKind {
    /// Successor blocks in text order (both for a conditional branch, even
    /// when equal).
    pub fn successors(&self) -> Vec<Handle<Block>> {
        match *self {
            TerminatorKind::Branch { target } => vec![target],
            TerminatorKind::BranchIf {
                if_true, if_false, ..
            } => vec![if_true, if_false],
            TerminatorKind::Return { .. } | TerminatorKind::Discard => Vec::new(),
        }
    }
}

/// A terminator with its source position.
#[derive(Debug, Clone, PartialEq)]
pub struct Terminator {
    /// The control transfer.
    pub kind: TerminatorKind,
    /// Where the terminator form was read.
    pub span: Option<Span>,
}

impl From<TerminatorKind> for Terminator {
    fn from(kind: TerminatorKind) -> Self {
        Terminator { kind, span: None }
    }
}

/// A function parameter slot: a by-value, invocation-local storage slot.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Stored value type.
    pub ty: Handle<Type>,
    /// Where the declaration was read.
    pub span: Option<Span>,
}

/// A basic block: instructions in order, then one terminator.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    /// Instructions in execution order.
    pub instructions: Vec<Instruction>,
    /// The terminator; `None` is allowed while building, never when verified.
    pub terminator: Option<Terminator>,
    /// Where the block form was read.
    pub span: Option<Span>,
}

impl Block {
    /// Appends an instruction.
    pub fn push(&mut self, kind: InstructionKind) -> &mut Self {
        self.instructions.push(kind.into());
        self
    }

    /// Sets the terminator.
    pub fn terminate(&mut self, kind: TerminatorKind) {
        self.terminator = Some(kind.into());
    }
}

/// A function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// Nonempty name, unique within the stage.
    pub name: String,
    /// Return type (may be void).
    pub return_type: Handle<Type>,
    /// Ordered parameter slots.
    pub parameters: Vec<Parameter>,
    /// Ordered blocks; the first is the entry block.
    pub blocks: Arena<Block>,
    /// Where the function form was read.
    pub span: Option<Span>,
}

impl Function {
    /// A function without parameters or blocks.
    pub fn new(name: impl Into<String>, return_type: Handle<Type>) -> Self {
        Function {
            name: name.into(),
            return_type,
            parameters: Vec::new(),
            blocks: Arena::new(),
            span: None,
        }
    }

    /// Appends a parameter and returns its slot.
    pub fn add_parameter(&mut self, ty: Handle<Type>) -> u64 {
        self.parameters.push(Parameter { ty, span: None });
        (self.parameters.len() - 1) as u64
    }

    /// Appends an empty block.
    pub fn add_block(&mut self) -> Handle<Block> {
        self.blocks.append(Block::default())
    }

    /// The entry block, if the function has blocks.
    pub fn entry_block(&self) -> Option<Handle<Block>> {
        self.blocks.handles().next()
    }

    /// Declares register `index` of type `ty`: inserts a `DeclareLocal` at
    /// the end of the entry block's declaration prefix (creating the entry
    /// block if needed) and returns the descriptor to use for it.
    pub fn declare_register(&mut self, index: u64, ty: Handle<Type>) -> Register {
        let entry = match self.entry_block() {
            Some(b) => b,
            None => self.add_block(),
        };
        let block = &mut self.blocks[entry];
        let at = block
            .instructions
            .iter()
            .take_while(|i| matches!(i.kind, InstructionKind::DeclareLocal { .. }))
            .count();
        let register = Register::new(index, ty);
        block
            .instructions
            .insert(at, InstructionKind::DeclareLocal { register }.into());
        register
    }

    /// The declared registers: the `DeclareLocal` prefix of the entry block.
    pub fn declared_registers(&self) -> impl Iterator<Item = &Instruction> {
        self.blocks
            .as_slice()
            .first()
            .into_iter()
            .flat_map(|b| b.instructions.iter())
            .take_while(|i| matches!(i.kind, InstructionKind::DeclareLocal { .. }))
    }
}
