//! Function bodies: type checking, the ownership rule, and lowering to HIR
//! in one walk. [`BodyLowerer`]'s methods are filed by phase: `names`
//! (resolution), `inference` (types), `ownership` (moves and borrows) and
//! the lowering of `expressions`, `control` flow and `calls`.
//!
//! Rust is expression-oriented and HIR expressions hold no statements, so an
//! expression that needs statements (a block, `if`/`match` with statements
//! in an arm, `?`, a loop with a value) writes them to the current
//! statement list and yields an expression for its value. Operands lowered
//! before such an expression are spilled to temporaries at the point where
//! the statements start, so source evaluation order is kept.
//!
//! Ownership: a value of a moving type (`String`, `Vec`, structs, enums,
//! `Option`/`Result` of moving types) is moved when it is bound, passed,
//! returned, pushed, iterated, matched with a binding or captured; a moved
//! variable (or field) cannot be read until it is assigned again. A move in
//! a branch that diverges does not count after the branch; a move of an
//! outer variable inside a loop is refused unless it leaves the loop.
//! Closures capture copies of what they use (the value at creation, as a
//! `move` closure does) and may not assign their captures. A non-`move`
//! closure bound with `let` also borrows what it captures without moving
//! out: assigning a borrowed variable and then calling the closure (in
//! textual order, or in a loop around both) is refused, as rustc does.

use std::collections::BTreeSet;

use tcc_ir::Constant;

use super::items::{FnSig, Items, PRELUDE, err, pos_of, ty_of};
use super::types::{RustType, Shape};
use crate::error::{Code, FrontendError};
use crate::hir::{BinOp, Durable, Expr, ExprKind, Func, Module, Pos, Stmt, StmtKind, Var, VarRef};

mod calls;
mod control;
mod expressions;
mod inference;
mod names;
mod ownership;

type Checked<T> = Result<T, FrontendError>;

/// `leaving` for a `return`: every enclosing loop is left.
const LEAVES_ALL: usize = usize::MAX;

/// Whether the statement contains a `continue` (anywhere, conservatively).
fn has_continue(s: &syn::Stmt) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr_continue(&mut self, _: &'a syn::ExprContinue) {
            self.0 = true;
        }
    }
    let mut f = Find(false);
    syn::visit::visit_stmt(&mut f, s);
    f.0
}

/// For each statement of a block: the loop exit (`break` at this depth, or
/// `return`) that certainly follows it in the same block, with no
/// `continue` in between — moves there do not reach another iteration.
fn exits_after(stmts: &[syn::Stmt], depth: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; stmts.len()];
    let mut next: Option<usize> = None;
    for (i, s) in stmts.iter().enumerate().rev() {
        match s {
            syn::Stmt::Expr(syn::Expr::Break(b), _) if b.label.is_none() => next = Some(depth),
            syn::Stmt::Expr(syn::Expr::Return(_), _) => next = Some(LEAVES_ALL),
            other if has_continue(other) => next = None,
            _ => {}
        }
        out[i] = next;
    }
    out
}

/// A lowered branch: its statements, its value, its type, and a tag.
type Arm<T> = (Vec<Stmt>, Expr, RustType, T);

const TAG: &str = "$tag";

#[derive(Debug, Clone)]
struct Bind {
    var: VarRef,
    ty: RustType,
    mutable: bool,
    /// A closure's copy of an outer variable.
    captured: bool,
    loop_depth: usize,
}

struct LoopCx {
    /// `loop` (may break with a value) rather than `while`/`for`.
    is_loop: bool,
    value: Option<VarRef>,
    ty: RustType,
    broke: bool,
    /// Each closure borrow's (calls, conflicts) counts when the loop began.
    borrow_marks: Vec<(usize, usize)>,
}

/// A non-`move` closure bound to a local borrows what it captures by
/// reference for as long as it is called later (rustc's rule, approximated
/// by textual order): an assignment to a borrowed variable followed by a
/// call of the closure is refused.
struct ClosureBorrow {
    closure: VarRef,
    closure_name: String,
    /// The enclosing function's variables captured by reference.
    borrowed: Vec<VarRef>,
    /// Loops around the closure's `let`.
    loop_depth: usize,
    /// Calls of the closure so far.
    calls: usize,
    /// Assignments to a borrowed variable: (its name, where).
    conflicts: Vec<(String, Pos)>,
}

struct FnFrame {
    func: usize,
    scopes: Vec<Vec<(String, Bind)>>,
    ret: RustType,
    entry: bool,
    closure: bool,
    /// Closure only: (outer variable, the parent's copy of it).
    copies: Vec<(VarRef, VarRef, RustType)>,
    loops: Vec<LoopCx>,
    /// Moved variables and fields: (variable, field path or "").
    moved: BTreeSet<(VarRef, String)>,
    /// Closure only: it moves out of a capture.
    once: bool,
    /// Non-`move` closures bound in this function and what they borrow.
    borrows: Vec<ClosureBorrow>,
}

struct BodyLowerer<'a> {
    it: &'a mut Items,
    m: &'a mut Module,
    fx: Vec<FnFrame>,
    out: Vec<Stmt>,
    depth: u32,
    /// A certain exit follows (`break` of the loop at this depth, or
    /// [`LEAVES_ALL`] for `return`): a move here does not reach another iteration.
    leaving: Option<usize>,
    /// Every binding's type, checked for unsolved variables at the end.
    bound: Vec<(String, RustType, Pos)>,
    /// The last closure lowered: the enclosing function's variables it
    /// captures by reference (read, not moved out of).
    last_closure_borrows: Vec<VarRef>,
}

fn ex(kind: ExprKind, pos: Pos) -> Expr {
    Expr { kind, pos }
}

fn undef(pos: Pos) -> Expr {
    Expr::constant(Constant::Undefined, pos)
}

fn st(kind: StmtKind, pos: Pos) -> Stmt {
    Stmt { kind, pos }
}

fn text(s: &str, pos: Pos) -> Expr {
    Expr::constant(Constant::String(s.to_string()), pos)
}

fn get(e: Expr, key: &str, pos: Pos) -> Expr {
    ex(ExprKind::GetProp(Box::new(e), key.to_string()), pos)
}

fn tagged(tag: &str, payload: Vec<Expr>, pos: Pos) -> Expr {
    let mut fields = vec![(TAG.to_string(), text(tag, pos))];
    for (i, p) in payload.into_iter().enumerate() {
        fields.push((format!("${i}"), p));
    }
    ex(ExprKind::Object(fields), pos)
}

fn has_effects(e: &Expr) -> bool {
    !matches!(e.kind, ExprKind::Const(_) | ExprKind::Var(_))
}

/// Checks and lowers the body of function `name`.
pub(super) fn lower_fn(
    items: &mut Items,
    module: &mut Module,
    name: &str,
    block: &syn::Block,
    entry: bool,
) -> Checked<()> {
    let FnSig { func, params, ret } = items.fns[name].clone();
    let scope = params
        .iter()
        .enumerate()
        .map(|(i, (n, t, m))| {
            (
                n.clone(),
                Bind {
                    var: VarRef { func, var: i },
                    ty: t.clone(),
                    mutable: *m,
                    captured: false,
                    loop_depth: 0,
                },
            )
        })
        .collect();
    let mut l = BodyLowerer {
        it: items,
        m: module,
        fx: Vec::new(),
        out: Vec::new(),
        depth: 0,
        leaving: None,
        bound: Vec::new(),
        last_closure_borrows: Vec::new(),
    };
    l.fx.push(FnFrame {
        func,
        scopes: vec![scope],
        ret: ret.clone(),
        entry,
        closure: false,
        copies: Vec::new(),
        loops: Vec::new(),
        moved: BTreeSet::new(),
        once: false,
        borrows: Vec::new(),
    });
    let (value, ty) = l.block(block, true)?;
    let tail_pos = block
        .stmts
        .last()
        .map(pos_of)
        .unwrap_or_else(|| pos_of(block));
    l.unify_at(&ret, &ty, tail_pos, "the function's return type")?;
    if ty != RustType::Never {
        l.out.push(st(StmtKind::Return(Some(value)), tail_pos));
    }
    for (name, t, p) in &l.bound {
        if l.it.types.has_var(t) {
            return Err(err(
                Code::Type,
                format!(
                    "type annotations needed for `{name}` (found `{}`)",
                    l.it.types.show(t)
                ),
                *p,
            ));
        }
    }
    let body = std::mem::take(&mut l.out);
    l.m.funcs[func].body = body;
    Ok(())
}

impl BodyLowerer<'_> {
    fn fx(&self) -> &FnFrame {
        &self.fx[self.fx.len() - 1]
    }

    fn fxm(&mut self) -> &mut FnFrame {
        let n = self.fx.len() - 1;
        &mut self.fx[n]
    }

    fn hidden(&mut self, what: &str) -> VarRef {
        let func = self.fx().func;
        let f = &mut self.m.funcs[func];
        f.vars.push(Var {
            name: format!("${what}"),
            captured: false,
        });
        VarRef {
            func,
            var: f.vars.len() - 1,
        }
    }

    fn push_scope(&mut self) {
        self.fxm().scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.fxm().scopes.pop();
    }

    /// Runs `f` with a fresh statement list; returns the statements and its result.
    fn collect<T>(&mut self, f: impl FnOnce(&mut Self) -> Checked<T>) -> Checked<(Vec<Stmt>, T)> {
        let saved = std::mem::take(&mut self.out);
        let r = f(self);
        let stmts = std::mem::replace(&mut self.out, saved);
        Ok((stmts, r?))
    }

    /// Moves `operands[j]` to a temporary where statements emitted after it begin.
    fn spill(&mut self, marks: &[usize], operands: &mut [Expr]) {
        for j in (0..operands.len()).rev() {
            if self.out.len() > marks[j] && !matches!(operands[j].kind, ExprKind::Const(_)) {
                let t = self.hidden("t");
                let p = operands[j].pos;
                let value = std::mem::replace(&mut operands[j], ex(ExprKind::Var(t), p));
                self.out.insert(marks[j], st(StmtKind::Assign(t, value), p));
            }
        }
    }

    /// Lowers operands left to right, keeping that order when a later one emits statements.
    fn operands(&mut self, list: &[&syn::Expr], consume: bool) -> Checked<Vec<(Expr, RustType)>> {
        let mut xs = Vec::new();
        let mut tys = Vec::new();
        let mut marks = Vec::new();
        for e in list {
            let (x, t) = self.expr(e, consume)?;
            xs.push(x);
            tys.push(t);
            marks.push(self.out.len());
        }
        self.spill(&marks, &mut xs);
        Ok(xs.into_iter().zip(tys).collect())
    }
}
