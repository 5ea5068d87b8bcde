//! TypeScript `map`, `filter` and `reduce` with callbacks (the reference
//! TypeScript subset's array methods, lowered to loops and closure calls).
//!
//! Each method used in a module becomes one hidden top-level function
//! (`$map`, `$filter`, `$reduce`, `$reduce_from`), built here directly as
//! HIR, and a call `xs.map(f)` becomes `$map(xs, f)`. As in JavaScript the
//! length is read once before the first call, the callback gets the element,
//! its index and the array (`map`/`filter`) or the accumulator, element,
//! index and array (`reduce`), and `reduce` without an initial value starts
//! from element 0 and throws on an empty array. The thrown value is the
//! message string (thrown values carry no class in the subset), and an
//! element removed by the callback reads `undefined` instead of being
//! skipped (`docs/tcc/frontends.md`).

use tcc_ir::Constant;

use crate::hir::{BinOp, Expr, ExprKind, Func, FuncIdx, Module, Pos, Stmt, StmtKind, Var, VarRef};
use crate::lowering::increment;

/// An array method the subset lowers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ArrayMethod {
    /// `xs.map(f)`
    Map,
    /// `xs.filter(f)`
    Filter,
    /// `xs.reduce(f)`
    Reduce,
    /// `xs.reduce(f, initial)`
    ReduceFrom,
}

impl ArrayMethod {
    /// The method called `name` with `argc` arguments, if the subset has it.
    pub fn from_call(name: &str, argc: usize) -> Option<ArrayMethod> {
        match (name, argc) {
            ("map", 1) => Some(ArrayMethod::Map),
            ("filter", 1) => Some(ArrayMethod::Filter),
            ("reduce", 1) => Some(ArrayMethod::Reduce),
            ("reduce", 2) => Some(ArrayMethod::ReduceFrom),
            _ => None,
        }
    }

    /// Whether `name` is one of the methods (for the arity diagnostic).
    pub fn is_method(name: &str) -> bool {
        matches!(name, "map" | "filter" | "reduce")
    }

    fn hidden_name(self) -> &'static str {
        match self {
            ArrayMethod::Map => "$map",
            ArrayMethod::Filter => "$filter",
            ArrayMethod::Reduce => "$reduce",
            ArrayMethod::ReduceFrom => "$reduce_from",
        }
    }
}

/// Builds the body of one helper function while naming its variables.
struct HelperBuilder {
    func: FuncIdx,
    vars: Vec<Var>,
    pos: Pos,
}

impl HelperBuilder {
    fn var(&mut self, name: &str) -> VarRef {
        self.vars.push(Var {
            name: name.to_string(),
            captured: false,
        });
        VarRef {
            func: self.func,
            var: self.vars.len() - 1,
        }
    }

    fn e(&self, kind: ExprKind) -> Expr {
        Expr {
            kind,
            pos: self.pos,
        }
    }

    fn read(&self, v: VarRef) -> Expr {
        self.e(ExprKind::Var(v))
    }

    fn num(&self, n: f64) -> Expr {
        Expr::constant(Constant::Number(n), self.pos)
    }

    fn s(&self, kind: StmtKind) -> Stmt {
        Stmt {
            kind,
            pos: self.pos,
        }
    }

    fn assign(&self, v: VarRef, value: Expr) -> Stmt {
        self.s(StmtKind::Assign(v, value))
    }

    fn element(&self, seq: VarRef, i: VarRef) -> Expr {
        self.e(ExprKind::Index(
            Box::new(self.read(seq)),
            Box::new(self.read(i)),
        ))
    }

    fn call(&self, f: VarRef, args: Vec<Expr>) -> Expr {
        self.e(ExprKind::Call(Box::new(self.read(f)), args))
    }

    /// `while i < n { body; i = i + 1 }`
    fn counted(&self, i: VarRef, n: VarRef, body: Vec<Stmt>) -> Stmt {
        let cond = self.e(ExprKind::Bin(
            BinOp::Lt,
            Box::new(self.read(i)),
            Box::new(self.read(n)),
        ));
        self.s(StmtKind::Loop {
            cond: Some(cond),
            body,
            update: vec![increment(i, 1.0, self.pos)],
        })
    }
}

/// The hidden function for `method`, added to `module` (once per module:
/// the caller keeps the index).
pub(crate) fn add_helper(module: &mut Module, method: ArrayMethod, pos: Pos) -> FuncIdx {
    let func = module.funcs.len();
    let mut b = HelperBuilder {
        func,
        vars: Vec::new(),
        pos,
    };
    let seq = b.var("$seq");
    let f = b.var("$callback");
    let mut params = vec![seq.var, f.var];
    let initial = (method == ArrayMethod::ReduceFrom).then(|| b.var("$initial"));
    if let Some(v) = initial {
        params.push(v.var);
    }
    let i = b.var("$i");
    let n = b.var("$n");
    let length = b.e(ExprKind::Length(Box::new(b.read(seq))));
    let mut body = vec![b.assign(n, length)];
    match method {
        ArrayMethod::Map | ArrayMethod::Filter => {
            let out = b.var("$out");
            let x = b.var("$x");
            body.push(b.assign(out, b.e(ExprKind::Array(Vec::new()))));
            body.push(b.assign(i, b.num(0.0)));
            let result = b.call(f, vec![b.read(x), b.read(i), b.read(seq)]);
            let keep = if method == ArrayMethod::Map {
                b.s(StmtKind::Push(b.read(out), result))
            } else {
                b.s(StmtKind::If(
                    result,
                    vec![b.s(StmtKind::Push(b.read(out), b.read(x)))],
                    Vec::new(),
                ))
            };
            let step = vec![b.assign(x, b.element(seq, i)), keep];
            body.push(b.counted(i, n, step));
            body.push(b.s(StmtKind::Return(Some(b.read(out)))));
        }
        ArrayMethod::Reduce | ArrayMethod::ReduceFrom => {
            let acc = b.var("$acc");
            match initial {
                Some(init) => {
                    body.push(b.assign(acc, b.read(init)));
                    body.push(b.assign(i, b.num(0.0)));
                }
                None => {
                    let empty = b.e(ExprKind::Bin(
                        BinOp::Eq,
                        Box::new(b.read(n)),
                        Box::new(b.num(0.0)),
                    ));
                    let message = Expr::constant(
                        Constant::String(
                            "TypeError: Reduce of empty array with no initial value".into(),
                        ),
                        pos,
                    );
                    body.push(b.s(StmtKind::If(
                        empty,
                        vec![b.s(StmtKind::Throw(message))],
                        Vec::new(),
                    )));
                    let i0 = b.var("$first");
                    body.push(b.assign(i0, b.num(0.0)));
                    body.push(b.assign(acc, b.element(seq, i0)));
                    body.push(b.assign(i, b.num(1.0)));
                }
            }
            let next = b.call(
                f,
                vec![b.read(acc), b.element(seq, i), b.read(i), b.read(seq)],
            );
            body.push(b.counted(i, n, vec![b.assign(acc, next)]));
            body.push(b.s(StmtKind::Return(Some(b.read(acc)))));
        }
    }
    let param_defaults = vec![None; params.len()];
    module.funcs.push(Func {
        name: method.hidden_name().to_string(),
        parent: None,
        params,
        param_defaults,
        vars: b.vars,
        free: Vec::new(),
        body,
        pos,
        implicit_return: Constant::Undefined,
    });
    func
}
