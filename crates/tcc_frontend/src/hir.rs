//! The language-neutral program both frontends lower to, and codegen reads.
//!
//! Names are resolved, language rules are chosen (Python `==` is structural
//! because the artifact says `py.subset.v1`; a Python condition that is not
//! statically a scalar carries `py_truth`), and every node keeps the byte
//! range of the source it came from, so each instruction gets a span.

use tcc_ir::Constant;

/// A byte range `start..end` of the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

/// Index of a function in [`Module::funcs`].
pub type FuncIdx = usize;

/// A variable: the function that owns it and its index in that function's
/// [`Func::vars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarRef {
    /// Owning function.
    pub func: FuncIdx,
    /// Index into the owner's `vars`.
    pub var: usize,
}

/// A lowered compilation unit.
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// Functions; ids in the artifact are these positions.
    pub funcs: Vec<Func>,
    /// The entry function.
    pub entry: FuncIdx,
}

/// One function.
#[derive(Debug, Clone)]
pub struct Func {
    /// Source name.
    pub name: String,
    /// Lexically enclosing function, `None` for top-level functions.
    pub parent: Option<FuncIdx>,
    /// Parameters (indexes into `vars`), in source order.
    pub params: Vec<usize>,
    /// Constant defaults per parameter (Python).
    pub param_defaults: Vec<Option<Constant>>,
    /// Variables owned by this function (parameters first).
    pub vars: Vec<Var>,
    /// Variables of enclosing functions this function reads or writes,
    /// directly or for a nested function: the layout of its closure
    /// environment.
    pub free: Vec<VarRef>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Source range of the whole definition.
    pub pos: Pos,
    /// Value returned when the body falls off its end.
    pub implicit_return: Constant,
}

impl Default for Func {
    fn default() -> Self {
        Func {
            name: String::new(),
            parent: None,
            params: Vec::new(),
            param_defaults: Vec::new(),
            vars: Vec::new(),
            free: Vec::new(),
            body: Vec::new(),
            pos: Pos::default(),
            implicit_return: Constant::Undefined,
        }
    }
}

/// A variable.
#[derive(Debug, Clone, Default)]
pub struct Var {
    /// Source name (hidden variables start with `$`).
    pub name: String,
    /// Captured by a nested function: lives in a cell of the owner's environment.
    pub captured: bool,
}

/// A statement with its source range.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it is.
    pub pos: Pos,
}

/// Statement kinds.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// Evaluate and discard.
    Expr(Expr),
    /// `var = value`.
    Assign(VarRef, Expr),
    /// `object.key = value` (TypeScript property write).
    SetProp(Expr, String, Expr),
    /// `collection[index] = value`.
    SetIndex(Expr, Expr, Expr),
    /// `array.push(value)` / `list.append(value)` as a statement.
    Push(Expr, Expr),
    /// `if cond { then } else { other }`.
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// A loop: `init; while cond { body; update }`; `continue` runs `update`.
    Loop {
        /// Condition, checked before every iteration (`None`: forever).
        cond: Option<Expr>,
        /// Body.
        body: Vec<Stmt>,
        /// Statements run after the body and on `continue`.
        update: Vec<Stmt>,
    },
    /// Leave the innermost loop.
    Break,
    /// Next iteration of the innermost loop.
    Continue,
    /// Return from the function.
    Return(Option<Expr>),
    /// Throw a value.
    Throw(Expr),
    /// `try` with an optional catch (binding the thrown value) and finally.
    Try {
        /// Protected body.
        body: Vec<Stmt>,
        /// Catch clause: the variable that receives the thrown value, and the body.
        catch: Option<(Option<VarRef>, Vec<Stmt>)>,
        /// Finally body, inlined on every path out.
        finally: Option<Vec<Stmt>>,
    },
    /// Several statements in a row (desugarings).
    Block(Vec<Stmt>),
    /// A block that `break` leaves (a lowered `switch`); `continue` passes through.
    Switch(Vec<Stmt>),
}

/// An expression with its source range.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Where it is.
    pub pos: Pos,
}

/// Binary operators that map to one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `**`
    Pow,
    /// `//`
    FloorDiv,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `===` / `==` (meaning fixed by the semantics version)
    Eq,
    /// `!==` / `!=`
    Neq,
    /// Reference identity (Python `is`)
    Same,
}

/// Expression kinds.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// A constant.
    Const(Constant),
    /// Read a variable.
    Var(VarRef),
    /// The one function object of a top-level function.
    Func(FuncIdx),
    /// A new closure of a nested function over the current variables.
    Closure(FuncIdx),
    /// A new array of the elements.
    Array(Vec<Expr>),
    /// A new object with these keys, in source order.
    Object(Vec<(String, Expr)>),
    /// `object.key`.
    GetProp(Box<Expr>, String),
    /// `collection[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// Length of a string or collection.
    Length(Box<Expr>),
    /// Binary operator.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// Logical not.
    Not(Box<Expr>),
    /// `a && b` / `a and b`, returning an operand.
    And(Box<Expr>, Box<Expr>),
    /// `a || b` / `a or b`, returning an operand.
    Or(Box<Expr>, Box<Expr>),
    /// `cond ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Call a function value with arguments.
    Call(Box<Expr>, Vec<Expr>),
    /// A durable operation (entry function only).
    Durable(Durable),
    /// Throw the value (produces no value).
    Raise(Box<Expr>),
    /// Store the first expression in the variable, then evaluate the second.
    Let(VarRef, Box<Expr>, Box<Expr>),
}

/// Durable operations.
#[derive(Debug, Clone)]
pub enum Durable {
    /// `effect(KEY, …)`: the key expression (a string at run time).
    Effect(Box<Expr>),
    /// `wait_for_event(NAME)`: the event name expression.
    Wait(Box<Expr>),
    /// `sleep(ms)`.
    Sleep(Box<Expr>),
    /// `invoke(NAME, args…)`: the program name expression and the arguments.
    Invoke(Box<Expr>, Vec<Expr>),
    /// All branches; the value is the array of results in order.
    Gather(Vec<Expr>),
    /// The first branch to settle.
    Race(Vec<Expr>),
    /// `effect(KEY, input)` with an input value (`has_input: true`): the key
    /// expression, then the input.
    EffectInput(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// A constant expression.
    pub fn constant(value: Constant, pos: Pos) -> Self {
        Expr {
            kind: ExprKind::Const(value),
            pos,
        }
    }

    /// Whether evaluating the expression has no effect and reads nothing
    /// that a later evaluation could change (a constant), so it may be
    /// evaluated after the expressions that follow it in source.
    pub fn is_simple(&self) -> bool {
        matches!(self.kind, ExprKind::Const(_))
    }

    /// Whether the value is statically a scalar (never an array or object),
    /// so Python truthiness equals the engine's truthiness.
    pub fn is_scalar(&self) -> bool {
        match &self.kind {
            ExprKind::Const(_)
            | ExprKind::Length(_)
            | ExprKind::Not(_)
            | ExprKind::Neg(_)
            | ExprKind::Raise(_) => true,
            ExprKind::Bin(..) => true,
            ExprKind::And(a, b) | ExprKind::Or(a, b) => a.is_scalar() && b.is_scalar(),
            ExprKind::Cond(_, a, b) => a.is_scalar() && b.is_scalar(),
            ExprKind::Let(_, _, body) => body.is_scalar(),
            _ => false,
        }
    }
}
