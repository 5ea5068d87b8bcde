//! Instructions (spec section "Instructions").
//!
//! Every instruction encodes as a JSON object whose `op` is the PascalCase
//! variant name and whose other keys are the snake_case field names below.
//! Besides the format-1 set, the reference engine's later `lang.compute`
//! group is represented so that its artifacts decode; validation requires the
//! `lang.compute` feature for those.

use crate::constant::Constant;
use crate::id::FunctionId;

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Instruction {
    // ---- Control ----
    /// Does nothing.
    Nop,
    /// `pc = target`.
    Jump {
        /// Destination pc.
        target: u32,
    },
    /// Pop; branch when truthy.
    JumpIfTrue {
        /// Destination pc.
        target: u32,
    },
    /// Pop; branch when falsy.
    JumpIfFalse {
        /// Destination pc.
        target: u32,
    },
    /// Call function `func` with `argc` arguments (encoded, not executed in format 1).
    Call {
        /// Callee function id.
        func: FunctionId,
        /// Argument count.
        argc: u32,
    },
    /// Return from the current frame.
    Return,

    // ---- Locals and constants ----
    /// Push a copy of local slot `local`.
    LoadLocal {
        /// Slot index, `< local_count`.
        local: u32,
    },
    /// Pop into local slot `local`.
    StoreLocal {
        /// Slot index, `< local_count`.
        local: u32,
    },
    /// Push a constant.
    LoadConst {
        /// The constant.
        value: Constant,
    },
    /// Pop and discard.
    Pop,
    /// Push a new empty object.
    NewObject,
    /// Pop value and object; set `key`; push the object back.
    SetProp {
        /// Property key.
        key: String,
    },
    /// Pop object; push its `key` (or undefined).
    GetProp {
        /// Property key.
        key: String,
    },
    /// Push a new empty array.
    NewArray,
    /// Pop value and array; append; push the array back.
    ArrayPush,
    /// Copy element `index` of the array on top of the stack (array stays).
    ArrayIndex {
        /// Element index.
        index: u32,
    },
    /// Pop two; push `left === right`.
    StrictEq,
    /// Pop two; push `left !== right`.
    StrictNeq,
    /// Pop two numbers; push `left < right`.
    Lt,
    /// Pop two numbers; push `left <= right`.
    Le,
    /// Pop two numbers; push `left > right`.
    Gt,
    /// Pop two numbers; push `left >= right`.
    Ge,
    /// Pop; push `!truthy`.
    Not,

    // ---- Durable operations ----
    /// Pop the effect key (and the input under it when `has_input`).
    Effect {
        /// Whether an input value sits under the key. `false` is encoded by
        /// omitting the field.
        has_input: bool,
    },
    /// Pop a duration; wait for a timer.
    Sleep,
    /// Pop an event name; wait for the event.
    WaitForEvent,
    /// Pop the program name and `arg_count` arguments; start a child.
    Invoke {
        /// Number of arguments under the name; `0` is encoded by omission.
        arg_count: u32,
    },
    /// Open a concurrent group of `count` branches joined at `join_pc`.
    Fork {
        /// Branch count, 1 through 32.
        count: u32,
        /// pc of the `JoinAll`/`JoinAny` closing the group.
        join_pc: u32,
    },
    /// Wait for every branch (Promise.all).
    JoinAll,
    /// Wait for the first settled branch (Promise.race).
    JoinAny,

    // ---- Exceptions ----
    /// Pop a value and throw it.
    Throw,
    /// Push an exception handler.
    PushTry {
        /// Handler pc.
        catch: u32,
        /// Finally pc (`null` on the wire when absent; never jumped to by the engine).
        finally: Option<u32>,
    },
    /// Pop the innermost exception handler.
    PopTry,

    // ---- lang.compute (reference engine, later than format 1) ----
    /// Arithmetic `+` (language-specific rules).
    Add,
    /// Arithmetic `-`.
    Sub,
    /// Arithmetic `*`.
    Mul,
    /// Arithmetic `/`.
    Div,
    /// Remainder / modulo.
    Rem,
    /// Unary minus.
    Neg,
    /// Exponentiation.
    Pow,
    /// Python floor division.
    FloorDiv,
    /// Pop index and collection; push the element.
    GetIndex,
    /// Pop value, index and collection; write; push the collection.
    SetIndex,
    /// Pop a collection or string; push its length.
    Length,
    /// Mark the array on top as being iterated.
    WatchIter,
    /// Unmark the iterated array.
    UnwatchIter,
    /// Reference equality (Python `is`).
    Same,
    /// Push a new closure cell.
    NewCell,
    /// Push a new environment of `count` cells.
    NewEnv {
        /// Number of cells.
        count: u32,
    },
    /// Push a closure of function `func` over the environment on top.
    NewClosure {
        /// Function id.
        func: FunctionId,
    },
    /// Read environment cell `index`.
    EnvGet {
        /// Cell index.
        index: u32,
    },
    /// Write environment cell `index`.
    EnvSet {
        /// Cell index.
        index: u32,
    },
    /// Push the cell ref at environment slot `index`.
    EnvSlot {
        /// Cell index.
        index: u32,
    },
    /// Call the closure under `argc` arguments.
    CallClosure {
        /// Argument count.
        argc: u32,
    },
    /// Push the cached empty-environment closure of function `func`.
    LoadFunc {
        /// Function id.
        func: FunctionId,
    },
}

/// The instruction groups of the spec (plus the later compute group).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstructionGroup {
    /// Nop, jumps, Call, Return.
    Control,
    /// Locals, constants, objects, arrays, comparisons.
    LocalsAndConstants,
    /// Effect, Sleep, WaitForEvent, Invoke.
    Durable,
    /// Fork, JoinAll, JoinAny.
    Concurrency,
    /// Throw, PushTry, PopTry.
    Exceptions,
    /// The reference engine's later `lang.compute` instructions.
    Compute,
}

/// Every op name, in declaration order.
pub const OP_NAMES: [&str; 55] = [
    "Nop",
    "Jump",
    "JumpIfTrue",
    "JumpIfFalse",
    "Call",
    "Return",
    "LoadLocal",
    "StoreLocal",
    "LoadConst",
    "Pop",
    "NewObject",
    "SetProp",
    "GetProp",
    "NewArray",
    "ArrayPush",
    "ArrayIndex",
    "StrictEq",
    "StrictNeq",
    "Lt",
    "Le",
    "Gt",
    "Ge",
    "Not",
    "Effect",
    "Sleep",
    "WaitForEvent",
    "Invoke",
    "Fork",
    "JoinAll",
    "JoinAny",
    "Throw",
    "PushTry",
    "PopTry",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Rem",
    "Neg",
    "Pow",
    "FloorDiv",
    "GetIndex",
    "SetIndex",
    "Length",
    "WatchIter",
    "UnwatchIter",
    "Same",
    "NewCell",
    "NewEnv",
    "NewClosure",
    "EnvGet",
    "EnvSet",
    "EnvSlot",
    "CallClosure",
    "LoadFunc",
];

impl Instruction {
    /// The `op` tag: the PascalCase instruction name.
    pub fn name(&self) -> &'static str {
        use Instruction::*;
        match self {
            Nop => "Nop",
            Jump { .. } => "Jump",
            JumpIfTrue { .. } => "JumpIfTrue",
            JumpIfFalse { .. } => "JumpIfFalse",
            Call { .. } => "Call",
            Return => "Return",
            LoadLocal { .. } => "LoadLocal",
            StoreLocal { .. } => "StoreLocal",
            LoadConst { .. } => "LoadConst",
            Pop => "Pop",
            NewObject => "NewObject",
            SetProp { .. } => "SetProp",
            GetProp { .. } => "GetProp",
            NewArray => "NewArray",
            ArrayPush => "ArrayPush",
            ArrayIndex { .. } => "ArrayIndex",
            StrictEq => "StrictEq",
            StrictNeq => "StrictNeq",
            Lt => "Lt",
            Le => "Le",
            Gt => "Gt",
            Ge => "Ge",
            Not => "Not",
            Effect { .. } => "Effect",
            Sleep => "Sleep",
            WaitForEvent => "WaitForEvent",
            Invoke { .. } => "Invoke",
            Fork { .. } => "Fork",
            JoinAll => "JoinAll",
            JoinAny => "JoinAny",
            Throw => "Throw",
            PushTry { .. } => "PushTry",
            PopTry => "PopTry",
            Add => "Add",
            Sub => "Sub",
            Mul => "Mul",
            Div => "Div",
            Rem => "Rem",
            Neg => "Neg",
            Pow => "Pow",
            FloorDiv => "FloorDiv",
            GetIndex => "GetIndex",
            SetIndex => "SetIndex",
            Length => "Length",
            WatchIter => "WatchIter",
            UnwatchIter => "UnwatchIter",
            Same => "Same",
            NewCell => "NewCell",
            NewEnv { .. } => "NewEnv",
            NewClosure { .. } => "NewClosure",
            EnvGet { .. } => "EnvGet",
            EnvSet { .. } => "EnvSet",
            EnvSlot { .. } => "EnvSlot",
            CallClosure { .. } => "CallClosure",
            LoadFunc { .. } => "LoadFunc",
        }
    }

    /// The instruction's group.
    pub fn group(&self) -> InstructionGroup {
        use Instruction::*;
        use InstructionGroup as G;
        match self {
            Nop | Jump { .. } | JumpIfTrue { .. } | JumpIfFalse { .. } | Call { .. } | Return => {
                G::Control
            }
            LoadLocal { .. }
            | StoreLocal { .. }
            | LoadConst { .. }
            | Pop
            | NewObject
            | SetProp { .. }
            | GetProp { .. }
            | NewArray
            | ArrayPush
            | ArrayIndex { .. }
            | StrictEq
            | StrictNeq
            | Lt
            | Le
            | Gt
            | Ge
            | Not => G::LocalsAndConstants,
            Effect { .. } | Sleep | WaitForEvent | Invoke { .. } => G::Durable,
            Fork { .. } | JoinAll | JoinAny => G::Concurrency,
            Throw | PushTry { .. } | PopTry => G::Exceptions,
            Add
            | Sub
            | Mul
            | Div
            | Rem
            | Neg
            | Pow
            | FloorDiv
            | GetIndex
            | SetIndex
            | Length
            | WatchIter
            | UnwatchIter
            | Same
            | NewCell
            | NewEnv { .. }
            | NewClosure { .. }
            | EnvGet { .. }
            | EnvSet { .. }
            | EnvSlot { .. }
            | CallClosure { .. }
            | LoadFunc { .. } => G::Compute,
        }
    }

    /// Whether format version 1 defines this instruction (false for the
    /// later `lang.compute` group).
    pub fn is_format1(&self) -> bool {
        self.group() != InstructionGroup::Compute
    }

    /// The engine feature that validation requires the envelope to declare
    /// for this instruction, if any: `durable.concurrent_group` for
    /// Fork/JoinAll/JoinAny and `lang.compute` for the compute group.
    pub fn required_feature(&self) -> Option<&'static str> {
        match self.group() {
            InstructionGroup::Concurrency => Some(crate::features::CONCURRENT_GROUP),
            InstructionGroup::Compute => Some(crate::features::LANG_COMPUTE),
            _ => None,
        }
    }

    /// The pc operands of this instruction with their field names: jump
    /// targets, `PushTry` catch/finally and `Fork` join_pc.
    pub fn pc_operands(&self) -> Vec<(&'static str, u32)> {
        match *self {
            Instruction::Jump { target }
            | Instruction::JumpIfTrue { target }
            | Instruction::JumpIfFalse { target } => vec![("target", target)],
            Instruction::PushTry { catch, finally } => {
                let mut v = vec![("catch", catch)];
                if let Some(f) = finally {
                    v.push(("finally", f));
                }
                v
            }
            Instruction::Fork { join_pc, .. } => vec![("join_pc", join_pc)],
            _ => Vec::new(),
        }
    }

    /// The function id this instruction names (`Call`, `NewClosure`, `LoadFunc`).
    pub fn function_operand(&self) -> Option<FunctionId> {
        match *self {
            Instruction::Call { func, .. }
            | Instruction::NewClosure { func }
            | Instruction::LoadFunc { func } => Some(func),
            _ => None,
        }
    }

    /// The local slot this instruction names (`LoadLocal`, `StoreLocal`).
    pub fn local_operand(&self) -> Option<u32> {
        match *self {
            Instruction::LoadLocal { local } | Instruction::StoreLocal { local } => Some(local),
            _ => None,
        }
    }
}
