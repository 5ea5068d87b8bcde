//! What the Python and TypeScript lowerings share: the module being
//! built, the module-level names (primitives, top-level functions,
//! constants), the stack of function scopes with variable creation and
//! closure capture, the nesting limit, and the lowering of the durable
//! calls whose rules do not depend on the language (`effect`,
//! `wait_for_event`/`waitForEvent`, `sleep`, `invoke`). Each language keeps
//! its own scope contents (Python's function-wide names, TypeScript's
//! blocks) behind [`FnScope`].

use rustc_hash::FxHashMap as HashMap;
use tcc_ir::Constant;

use crate::error::{Code, FrontendError};
use crate::hir::{
    BinOp, Durable, Expr, ExprKind, Func, FuncIdx, Module, Pos, Stmt, StmtKind, Var, VarRef,
};
use crate::primitives::{MAX_DEPTH, Prim};

/// A function scope of one language's lowering.
pub(crate) trait FnScope {
    /// The function this scope belongs to.
    fn func(&self) -> FuncIdx;
}

/// A module-level name.
pub(crate) enum Global {
    /// A constant, inlined where it is read.
    Const(Constant),
    /// A top-level function.
    Func(FuncIdx),
    /// An imported durable primitive.
    Prim(Prim),
}

/// The lowering state both frontends share.
pub(crate) struct Lowering<S> {
    /// The module being built.
    pub module: Module,
    /// Imported primitives by local name.
    pub prims: HashMap<String, Prim>,
    /// Top-level functions by name.
    pub top: HashMap<String, FuncIdx>,
    /// Module-level constants by name.
    pub consts: HashMap<String, Constant>,
    /// Function scopes, innermost last.
    pub scopes: Vec<S>,
    /// Current syntax nesting depth ([`Lowering::enter`]).
    pub depth: u32,
}

impl<S: FnScope> Lowering<S> {
    /// An empty module.
    pub fn new() -> Self {
        Lowering {
            module: Module::default(),
            prims: HashMap::default(),
            top: HashMap::default(),
            consts: HashMap::default(),
            scopes: Vec::new(),
            depth: 0,
        }
    }

    /// The innermost function scope (one exists while a body is lowered).
    pub fn cur(&self) -> &S {
        &self.scopes[self.scopes.len() - 1]
    }

    /// The innermost function scope, mutably.
    pub fn cur_mut(&mut self) -> &mut S {
        let n = self.scopes.len() - 1;
        &mut self.scopes[n]
    }

    /// Whether the innermost function is the entry.
    pub fn in_entry(&self) -> bool {
        self.cur().func() == self.module.entry
    }

    /// A new variable of the innermost function; its index.
    pub fn new_var(&mut self, name: String) -> usize {
        let func = self.cur().func();
        let f = &mut self.module.funcs[func];
        f.vars.push(Var {
            name,
            captured: false,
        });
        f.vars.len() - 1
    }

    /// A compiler temporary of the innermost function (`$what`).
    pub fn hidden(&mut self, what: &str) -> VarRef {
        let func = self.cur().func();
        let var = self.new_var(format!("${what}"));
        VarRef { func, var }
    }

    /// Variable `var` of the function of scope `owner_scope`, used from the
    /// innermost scope: marks it captured and adds it to the environment of
    /// every function in between.
    pub fn capture(&mut self, owner_scope: usize, var: usize) -> VarRef {
        let owner = self.scopes[owner_scope].func();
        let r = VarRef { func: owner, var };
        self.module.funcs[owner].vars[var].captured = true;
        for s in owner_scope + 1..self.scopes.len() {
            let f = self.scopes[s].func();
            if !self.module.funcs[f].free.contains(&r) {
                self.module.funcs[f].free.push(r);
            }
        }
        r
    }

    /// The module-level meaning of `name`: constants, then top-level
    /// functions, then primitives.
    pub fn global(&self, name: &str) -> Option<Global> {
        if let Some(c) = self.consts.get(name) {
            return Some(Global::Const(c.clone()));
        }
        if let Some(&f) = self.top.get(name) {
            return Some(Global::Func(f));
        }
        self.prims.get(name).map(|&p| Global::Prim(p))
    }

    /// One level deeper into the syntax tree at `pos` (refused past
    /// [`MAX_DEPTH`]); [`Lowering::leave`] undoes it.
    pub fn enter(&mut self, pos: Pos) -> Result<(), FrontendError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(FrontendError::new(
                Code::Limit,
                format!("nesting deeper than {MAX_DEPTH} levels"),
                pos,
            ));
        }
        Ok(())
    }

    /// Back up one level.
    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Lowers the body of function `idx` (already described by `f`) inside
    /// `scope`, and stores it.
    pub fn function_in<T>(
        this: &mut T,
        idx: FuncIdx,
        f: Func,
        scope: S,
        body: impl FnOnce(&mut T) -> Result<Vec<crate::hir::Stmt>, FrontendError>,
    ) -> Result<(), FrontendError>
    where
        T: AsMut<Lowering<S>>,
    {
        let cx = this.as_mut();
        cx.module.funcs[idx] = f;
        cx.scopes.push(scope);
        let r = body(this);
        let cx = this.as_mut();
        cx.scopes.pop();
        cx.module.funcs[idx].body = r?;
        Ok(())
    }

    /// Refuses a durable operation outside the entry function.
    pub fn require_entry(&self, pos: Pos) -> Result<(), FrontendError> {
        if self.in_entry() {
            Ok(())
        } else {
            Err(FrontendError::new(
                Code::DurableOutsideEntry,
                "durable operations are only allowed in the entry function",
                pos,
            ))
        }
    }
}

/// The arguments of a durable call, as each language's lowering reads them.
pub(crate) trait DurableArgs {
    /// How many positional arguments there are.
    fn len(&self) -> usize;
    /// Lowers argument 0, the effect key, event name or program name (the
    /// `what`): any expression; one that is statically not a string is
    /// refused (`TCC-F007`).
    fn name(&mut self, what: &str) -> Result<Expr, FrontendError>;
    /// Checks the arguments of `effect` after the key (an optional callback
    /// the subset accepts and the language's way of passing an input) and
    /// lowers the input, if any.
    fn effect_input(&mut self) -> Result<Option<Expr>, FrontendError>;
    /// Lowers argument `i`.
    fn expr(&mut self, i: usize) -> Result<Expr, FrontendError>;
}

/// Refuses a durable call's name (`what`) that is statically not a string
/// (a number, boolean, `None`/`null` or collection literal).
pub(crate) fn string_name(what: &str, e: Expr) -> Result<Expr, FrontendError> {
    let refused = match &e.kind {
        ExprKind::Const(c) => !matches!(c, Constant::String(_)),
        ExprKind::Array(_) | ExprKind::Object(_) | ExprKind::Closure(_) | ExprKind::Func(_) => true,
        _ => false,
    };
    if refused {
        return Err(FrontendError::new(
            Code::ComputedKey,
            format!("the {what} must be a string"),
            e.pos,
        ));
    }
    Ok(e)
}

/// Lowers a call of `effect`, the event wait (spelled `wait_name` in this
/// language), `sleep` or `invoke` at `pos`; `None` for the other
/// primitives, which each language lowers itself.
pub(crate) fn durable_call(
    prim: Prim,
    args: &mut impl DurableArgs,
    wait_name: &str,
    pos: Pos,
) -> Result<Option<Expr>, FrontendError> {
    let arity = |message: String| Err(FrontendError::new(Code::Call, message, pos));
    let d = match prim {
        Prim::Effect => {
            if args.len() == 0 {
                return arity("missing the effect key".into());
            }
            let key = Box::new(args.name("effect key")?);
            match args.effect_input()? {
                Some(input) => Durable::EffectInput(key, Box::new(input)),
                None => Durable::Effect(key),
            }
        }
        Prim::WaitForEvent => {
            if args.len() != 1 {
                return arity(format!("`{wait_name}` takes one event name"));
            }
            Durable::Wait(Box::new(args.name("event name")?))
        }
        Prim::Sleep => {
            if args.len() != 1 {
                return arity("`sleep` takes one duration in milliseconds".into());
            }
            Durable::Sleep(Box::new(args.expr(0)?))
        }
        Prim::Invoke => {
            if args.len() == 0 {
                return arity("missing the program name".into());
            }
            let name = Box::new(args.name("program name")?);
            let mut rest = Vec::with_capacity(args.len().saturating_sub(1));
            for i in 1..args.len() {
                rest.push(args.expr(i)?);
            }
            Durable::Invoke(name, rest)
        }
        _ => return Ok(None),
    };
    Ok(Some(Expr {
        kind: ExprKind::Durable(d),
        pos,
    }))
}

/// `v = v + by` at `pos`.
pub(crate) fn increment(v: VarRef, by: f64, pos: Pos) -> Stmt {
    let var = Expr {
        kind: ExprKind::Var(v),
        pos,
    };
    let sum = Expr {
        kind: ExprKind::Bin(
            BinOp::Add,
            Box::new(var),
            Box::new(Expr::constant(Constant::Number(by), pos)),
        ),
        pos,
    };
    Stmt {
        kind: StmtKind::Assign(v, sum),
        pos,
    }
}

/// An index-based loop over a list, array or string (Python's `for x in
/// xs`, TypeScript's `for (const x of xs)`): the sequence is held in `seq`,
/// the index in `index`, and the length is re-read at every step, as both
/// languages' list iterators do.
pub(crate) struct IndexLoop {
    /// Temporary holding the sequence.
    pub seq: VarRef,
    /// Temporary holding the index.
    pub index: VarRef,
    /// Source range of the loop.
    pub pos: Pos,
}

impl IndexLoop {
    fn var(&self, v: VarRef) -> Expr {
        Expr {
            kind: ExprKind::Var(v),
            pos: self.pos,
        }
    }

    fn stmt(&self, kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            pos: self.pos,
        }
    }

    /// `seq = value; index = 0`.
    pub fn init(&self, value: Expr) -> [Stmt; 2] {
        [
            self.stmt(StmtKind::Assign(self.seq, value)),
            self.stmt(StmtKind::Assign(
                self.index,
                Expr::constant(Constant::Number(0.0), self.pos),
            )),
        ]
    }

    /// `index < len(seq)`.
    pub fn cond(&self) -> Expr {
        let len = Expr {
            kind: ExprKind::Length(Box::new(self.var(self.seq))),
            pos: self.pos,
        };
        Expr {
            kind: ExprKind::Bin(BinOp::Lt, Box::new(self.var(self.index)), Box::new(len)),
            pos: self.pos,
        }
    }

    /// The start of each step: `target = seq[index]; index = index + 1`.
    pub fn step(&self, target: VarRef) -> Vec<Stmt> {
        let item = Expr {
            kind: ExprKind::Index(Box::new(self.var(self.seq)), Box::new(self.var(self.index))),
            pos: self.pos,
        };
        vec![
            self.stmt(StmtKind::Assign(target, item)),
            increment(self.index, 1.0, self.pos),
        ]
    }

    /// The loop statement around `body` (which starts with [`IndexLoop::step`]).
    pub fn looped(&self, body: Vec<Stmt>) -> Stmt {
        self.stmt(StmtKind::Loop {
            cond: Some(self.cond()),
            body,
            update: Vec::new(),
        })
    }
}
