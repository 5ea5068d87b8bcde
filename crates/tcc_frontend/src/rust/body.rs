//! Function bodies: type checking, the ownership rule, and lowering to HIR
//! in one walk.
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
use super::types::{Shape, Ty};
use crate::error::{Code, FrontendError};
use crate::hir::{BinOp, Durable, Expr, ExprKind, Func, Module, Pos, Stmt, StmtKind, Var, VarRef};

type R<T> = Result<T, FrontendError>;

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
type Arm<T> = (Vec<Stmt>, Expr, Ty, T);

const TAG: &str = "$tag";

#[derive(Debug, Clone)]
struct Bind {
    var: VarRef,
    ty: Ty,
    mutable: bool,
    /// A closure's copy of an outer variable.
    captured: bool,
    loop_depth: usize,
}

struct LoopCx {
    /// `loop` (may break with a value) rather than `while`/`for`.
    is_loop: bool,
    value: Option<VarRef>,
    ty: Ty,
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

struct Fx {
    func: usize,
    scopes: Vec<Vec<(String, Bind)>>,
    ret: Ty,
    entry: bool,
    closure: bool,
    /// Closure only: (outer variable, the parent's copy of it).
    copies: Vec<(VarRef, VarRef, Ty)>,
    loops: Vec<LoopCx>,
    /// Moved variables and fields: (variable, field path or "").
    moved: BTreeSet<(VarRef, String)>,
    /// Closure only: it moves out of a capture.
    once: bool,
    /// Non-`move` closures bound in this function and what they borrow.
    borrows: Vec<ClosureBorrow>,
}

struct L<'a> {
    it: &'a mut Items,
    m: &'a mut Module,
    fx: Vec<Fx>,
    out: Vec<Stmt>,
    depth: u32,
    /// A certain exit follows (`break` of the loop at this depth, or
    /// [`LEAVES_ALL`] for `return`): a move here does not reach another iteration.
    leaving: Option<usize>,
    /// Every binding's type, checked for unsolved variables at the end.
    bound: Vec<(String, Ty, Pos)>,
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
) -> R<()> {
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
    let mut l = L {
        it: items,
        m: module,
        fx: Vec::new(),
        out: Vec::new(),
        depth: 0,
        leaving: None,
        bound: Vec::new(),
        last_closure_borrows: Vec::new(),
    };
    l.fx.push(Fx {
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
    if ty != Ty::Never {
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

impl L<'_> {
    fn fx(&self) -> &Fx {
        &self.fx[self.fx.len() - 1]
    }

    fn fxm(&mut self) -> &mut Fx {
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

    fn bind(&mut self, name: &str, ty: Ty, mutable: bool) -> VarRef {
        let func = self.fx().func;
        let f = &mut self.m.funcs[func];
        f.vars.push(Var {
            name: name.to_string(),
            captured: false,
        });
        let var = VarRef {
            func,
            var: f.vars.len() - 1,
        };
        let loop_depth = self.fx().loops.len();
        let fx = self.fxm();
        if let Some(s) = fx.scopes.last_mut() {
            s.push((
                name.to_string(),
                Bind {
                    var,
                    ty,
                    mutable,
                    captured: false,
                    loop_depth,
                },
            ));
        }
        var
    }

    fn show(&self, t: &Ty) -> String {
        self.it.types.show(t)
    }

    fn unify_at(&mut self, want: &Ty, got: &Ty, pos: Pos, what: &str) -> R<()> {
        if self.it.types.unify(want, got) {
            return Ok(());
        }
        let hint =
            if self.it.types.shallow(got) == Ty::Int && self.it.types.shallow(want) == Ty::F64 {
                " (numbers are f64: write the literal with a decimal point)"
            } else {
                ""
            };
        Err(err(
            Code::Type,
            format!(
                "mismatched types: {what} is `{}`, found `{}`{hint}",
                self.show(want),
                self.show(got)
            ),
            pos,
        ))
    }

    fn type_error(&self, message: impl Into<String>, pos: Pos) -> FrontendError {
        err(Code::Type, message, pos)
    }

    fn lookup(&self, name: &str) -> Option<Bind> {
        self.fx().scopes.iter().rev().find_map(|s| {
            s.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
        })
    }

    /// A name: a local, or (in a closure) a copy of the enclosing function's local.
    fn resolve(&mut self, name: &str, pos: Pos) -> R<Option<Bind>> {
        if let Some(b) = self.lookup(name) {
            return Ok(Some(b));
        }
        if !self.fx().closure || self.fx.len() < 2 {
            return Ok(None);
        }
        let parent = self.fx.len() - 2;
        let found = self.fx[parent].scopes.iter().rev().find_map(|s| {
            s.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
        });
        let Some(outer) = found else { return Ok(None) };
        self.check_not_moved(&self.fx[parent], outer.var, None, name, pos)?;
        self.note_called(parent, outer.var)?;
        let pfunc = self.fx[parent].func;
        let f = &mut self.m.funcs[pfunc];
        f.vars.push(Var {
            name: format!("$cap_{name}"),
            captured: true,
        });
        let copy = VarRef {
            func: pfunc,
            var: f.vars.len() - 1,
        };
        let cfunc = self.fx().func;
        self.m.funcs[cfunc].free.push(copy);
        let b = Bind {
            var: copy,
            ty: outer.ty.clone(),
            mutable: false,
            captured: true,
            loop_depth: 0,
        };
        let fx = self.fxm();
        fx.copies.push((outer.var, copy, outer.ty.clone()));
        fx.scopes[0].push((name.to_string(), b.clone()));
        Ok(Some(b))
    }

    fn check_not_moved(
        &self,
        fx: &Fx,
        var: VarRef,
        field: Option<&str>,
        name: &str,
        pos: Pos,
    ) -> R<()> {
        if fx.moved.contains(&(var, String::new())) {
            return Err(err(
                Code::Moved,
                format!("use of moved value `{name}`"),
                pos,
            ));
        }
        if let Some(f) = field {
            let prefix = format!("{f}.");
            if fx.moved.iter().any(|(v, k)| {
                *v == var && (k == f || k.starts_with(&prefix) || f.starts_with(&format!("{k}.")))
            }) {
                return Err(err(
                    Code::Moved,
                    format!("use of moved value `{name}.{f}`"),
                    pos,
                ));
            }
        }
        Ok(())
    }

    /// Records a move of `var` (or of one of its fields).
    fn mark_moved(&mut self, b: &Bind, field: Option<&str>, name: &str, pos: Pos) -> R<()> {
        if b.captured {
            // Moving out of a capture makes the closure `FnOnce`.
            self.fxm().once = true;
        }
        let depth = self.fx().loops.len();
        let leaves = match self.leaving {
            Some(LEAVES_ALL) => true,
            Some(l) => l == depth && b.loop_depth + 1 == depth,
            None => false,
        };
        if depth > b.loop_depth && !leaves {
            return Err(err(
                Code::Moved,
                format!(
                    "`{name}` is moved inside a loop: it would be used again in the next iteration"
                ),
                pos,
            ));
        }
        if field.is_none()
            && self
                .fxm()
                .moved
                .iter()
                .any(|(v, k)| *v == b.var && !k.is_empty())
        {
            return Err(err(
                Code::Moved,
                format!("use of partially moved value `{name}`"),
                pos,
            ));
        }
        let key = field.unwrap_or("").to_string();
        self.fxm().moved.insert((b.var, key));
        Ok(())
    }

    fn push_scope(&mut self) {
        self.fxm().scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.fxm().scopes.pop();
    }

    fn borrow_marks(&self) -> Vec<(usize, usize)> {
        self.fx()
            .borrows
            .iter()
            .map(|b| (b.calls, b.conflicts.len()))
            .collect()
    }

    fn borrow_error(var: &str, closure: &str, pos: Pos) -> FrontendError {
        err(
            Code::Moved,
            format!(
                "cannot assign to `{var}` because it is borrowed by closure `{closure}`, which is called later (make it a `move` closure to capture a copy)"
            ),
            pos,
        )
    }

    /// An assignment to `var`: a conflict for every closure borrowing it.
    fn note_assigned(&mut self, var: VarRef, name: &str, pos: Pos) {
        for b in &mut self.fxm().borrows {
            if b.borrowed.contains(&var) {
                b.conflicts.push((name.to_string(), pos));
            }
        }
    }

    /// A call of closure `var`: refused after an assignment to what it borrows.
    fn note_called(&mut self, frame: usize, var: VarRef) -> R<()> {
        let Some(b) = self.fx[frame].borrows.iter_mut().find(|b| b.closure == var) else {
            return Ok(());
        };
        b.calls += 1;
        match b.conflicts.first() {
            Some((name, pos)) => Err(Self::borrow_error(name, &b.closure_name, *pos)),
            None => Ok(()),
        }
    }

    /// At the end of the innermost loop: a closure bound outside it, called in
    /// it, is called again after an assignment in it (the next iteration).
    fn check_loop_borrows(&self) -> R<()> {
        let depth = self.fx().loops.len();
        let Some(cx) = self.fx().loops.last() else {
            return Ok(());
        };
        for (b, &(calls, conflicts)) in self.fx().borrows.iter().zip(&cx.borrow_marks) {
            if b.loop_depth < depth
                && b.calls > calls
                && let Some((name, pos)) = b.conflicts.get(conflicts)
            {
                return Err(Self::borrow_error(name, &b.closure_name, *pos));
            }
        }
        Ok(())
    }

    /// Runs `f` with a fresh statement list; returns the statements and its result.
    fn collect<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(Vec<Stmt>, T)> {
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

    /// `left + &right` with two `String`s (Rust's `String + &str` through
    /// deref): `left` moves, `right` is only read.
    fn concat_borrowed(&mut self, left: &syn::Expr, right: &syn::Expr, p: Pos) -> R<(Expr, Ty)> {
        let (l, lt) = self.expr(left, true)?;
        let after_left = self.out.len();
        let (r, rt) = self.expr(right, false)?;
        let after_right = self.out.len();
        let mut xs = [l, r];
        self.spill(&[after_left, after_right], &mut xs);
        for (t, at) in [(&lt, left), (&rt, right)] {
            let t = self.it.types.shallow(t);
            if t != Ty::Str {
                return Err(self.type_error(
                    format!(
                        "`String + &String` needs two `String`s, found `{}`",
                        self.show(&t)
                    ),
                    pos_of(at),
                ));
            }
        }
        let [l, r] = xs;
        Ok((
            ex(ExprKind::Bin(BinOp::Add, Box::new(l), Box::new(r)), p),
            Ty::Str,
        ))
    }

    /// Lowers operands left to right, keeping that order when a later one emits statements.
    fn operands(&mut self, list: &[&syn::Expr], consume: bool) -> R<Vec<(Expr, Ty)>> {
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

    fn block(&mut self, b: &syn::Block, consume: bool) -> R<(Expr, Ty)> {
        self.push_scope();
        let r = self.block_in(b, consume);
        self.pop_scope();
        r
    }

    fn block_in(&mut self, b: &syn::Block, consume: bool) -> R<(Expr, Ty)> {
        let mut diverges = false;
        let n = b.stmts.len();
        let exits = exits_after(&b.stmts, self.fx().loops.len());
        let outer_leaving = self.leaving;
        for (i, s) in b.stmts.iter().enumerate() {
            self.leaving = exits[i].or(outer_leaving);
            match s {
                syn::Stmt::Local(local) => self.local(local)?,
                syn::Stmt::Item(item) => {
                    return Err(err(
                        Code::Unsupported,
                        "items inside functions are outside the Rust subset",
                        pos_of(item),
                    ));
                }
                syn::Stmt::Macro(m) => {
                    return Err(err(
                        Code::Unsupported,
                        "macros are outside the Rust subset",
                        pos_of(m),
                    ));
                }
                syn::Stmt::Expr(e, semi) => {
                    if semi.is_none() && i + 1 == n {
                        let r = self.expr(e, consume);
                        self.leaving = outer_leaving;
                        return r;
                    }
                    let (x, t) = self.expr_full(e, false, false)?;
                    if semi.is_none() && !self.it.types.unify(&Ty::Unit, &t) {
                        return Err(self.type_error(
                            format!("mismatched types: expected `()`, found `{}` (add `;` or use the value)", self.show(&t)),
                            pos_of(e),
                        ));
                    }
                    if self.it.types.shallow(&t) == Ty::Never {
                        diverges = true;
                    }
                    if has_effects(&x) {
                        let p = x.pos;
                        self.out.push(st(StmtKind::Expr(x), p));
                    }
                }
            }
        }
        self.leaving = outer_leaving;
        Ok((
            undef(pos_of(b)),
            if diverges { Ty::Never } else { Ty::Unit },
        ))
    }

    fn local(&mut self, local: &syn::Local) -> R<()> {
        if let Some(a) = local.attrs.first() {
            return Err(err(
                Code::Unsupported,
                "attributes are outside the Rust subset",
                pos_of(a),
            ));
        }
        let p = pos_of(local);
        let Some(init) = &local.init else {
            return Err(err(
                Code::Unsupported,
                "declare a variable with its value (`let x = …;`)",
                p,
            ));
        };
        if let Some((_, d)) = &init.diverge {
            return Err(err(
                Code::Unsupported,
                "let-else is outside the Rust subset",
                pos_of(&**d),
            ));
        }
        let (pat, ascribed) = match &local.pat {
            syn::Pat::Type(pt) => (
                &*pt.pat,
                Some(ty_of(&mut self.it.types, &pt.ty, &self.it.imported)?),
            ),
            other => (other, None),
        };
        let (x, t) = self.expr(&init.expr, true)?;
        if let Some(a) = &ascribed {
            self.unify_at(a, &t, pos_of(&*init.expr), "the declared type")?;
        }
        match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let name = pi.ident.to_string();
                let ty = ascribed.unwrap_or(t);
                self.bound
                    .push((name.clone(), ty.clone(), pos_of(&pi.ident)));
                let v = self.bind(&name, ty, pi.mutability.is_some());
                if let syn::Expr::Closure(c) = &*init.expr
                    && c.capture.is_none()
                {
                    let borrowed = std::mem::take(&mut self.last_closure_borrows);
                    let loop_depth = self.fx().loops.len();
                    self.fxm().borrows.push(ClosureBorrow {
                        closure: v,
                        closure_name: name.clone(),
                        borrowed,
                        loop_depth,
                        calls: 0,
                        conflicts: Vec::new(),
                    });
                }
                self.out.push(st(StmtKind::Assign(v, x), p));
            }
            syn::Pat::Wild(_) => {
                if has_effects(&x) {
                    self.out.push(st(StmtKind::Expr(x), p));
                }
            }
            other => {
                return Err(err(
                    Code::Unsupported,
                    "let binds one name in the Rust subset",
                    pos_of(other),
                ));
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &syn::Expr, consume: bool) -> R<(Expr, Ty)> {
        self.expr_full(e, consume, true)
    }

    /// `want`: the value is used (otherwise `if`/`match` need no result variable).
    fn expr_full(&mut self, e: &syn::Expr, consume: bool, want: bool) -> R<(Expr, Ty)> {
        self.depth += 1;
        if self.depth > crate::MAX_DEPTH {
            return Err(err(Code::Limit, "expression nesting too deep", pos_of(e)));
        }
        let r = self.expr_inner(e, consume, want);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &syn::Expr, consume: bool, want: bool) -> R<(Expr, Ty)> {
        let p = pos_of(e);
        let unsupported = |m: &str| Err(err(Code::Unsupported, m.to_string(), p));
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, p),
            syn::Expr::Paren(x) => self.expr_full(&x.expr, consume, want),
            syn::Expr::Group(x) => self.expr_full(&x.expr, consume, want),
            syn::Expr::Tuple(t) if t.elems.is_empty() => Ok((undef(p), Ty::Unit)),
            syn::Expr::Path(path) => self.path(path, consume, p),
            syn::Expr::Field(_) | syn::Expr::Index(_) => self.place_read(e, consume),
            syn::Expr::Binary(b) => self.binary(b, p),
            syn::Expr::Unary(u) => self.unary(u, p),
            syn::Expr::Assign(a) => self.assign(&a.left, &a.right, None, p),
            syn::Expr::Cast(c) => {
                let target = ty_of(&mut self.it.types, &c.ty, &self.it.imported)?;
                let (x, t) = self.expr(&c.expr, false)?;
                let t = self.it.types.shallow(&t);
                if target == Ty::F64 && matches!(t, Ty::Int | Ty::F64) {
                    Ok((x, Ty::F64))
                } else {
                    Err(self.type_error(
                        format!(
                            "cast from `{}` to `{}` is outside the Rust subset",
                            self.show(&t),
                            self.show(&target)
                        ),
                        p,
                    ))
                }
            }
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return unsupported("labels are outside the Rust subset");
                }
                self.block(&b.block, consume)
            }
            syn::Expr::If(i) => self.if_expr(i, consume, want),
            syn::Expr::Match(m) => self.match_expr(m, consume, want),
            syn::Expr::While(w) => self.while_loop(w),
            syn::Expr::Loop(l) => self.loop_expr(l),
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => self.break_expr(b, p),
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return unsupported("labels are outside the Rust subset");
                }
                if self.fx().loops.is_empty() {
                    return Err(err(Code::BadControl, "`continue` outside of a loop", p));
                }
                self.out.push(st(StmtKind::Continue, p));
                Ok((undef(p), Ty::Never))
            }
            syn::Expr::Return(r) => self.return_expr(r, p),
            syn::Expr::Call(c) => self.call(c, p),
            syn::Expr::MethodCall(mc) => self.method(mc, p),
            syn::Expr::Struct(s) => self.struct_lit(s, p),
            syn::Expr::Closure(c) => self.closure(c, p),
            syn::Expr::Try(t) => self.question(t, p),
            syn::Expr::Await(a) => self.durable_result(a, p),
            syn::Expr::Reference(_) => {
                unsupported("references (`&`, `&mut`) are outside the Rust subset")
            }
            syn::Expr::Macro(_) => unsupported("macros are outside the Rust subset"),
            syn::Expr::Unsafe(_) => unsupported("unsafe is outside the Rust subset"),
            syn::Expr::Async(_) => unsupported("async blocks are outside the Rust subset"),
            syn::Expr::Let(_) => {
                unsupported("`if let`/`while let` are outside the Rust subset; use `match`")
            }
            syn::Expr::Range(_) => {
                unsupported("ranges are only for `for` loops in the Rust subset")
            }
            syn::Expr::Tuple(_) => unsupported("tuples are outside the Rust subset"),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
                unsupported("arrays are outside the Rust subset; use Vec")
            }
            _ => unsupported("this expression is outside the Rust subset"),
        }
    }

    fn lit(&mut self, l: &syn::Lit, p: Pos) -> R<(Expr, Ty)> {
        match l {
            syn::Lit::Bool(b) => Ok((Expr::constant(Constant::Bool(b.value), p), Ty::Bool)),
            syn::Lit::Str(s) => Ok((text(&s.value(), p), Ty::StaticStr)),
            syn::Lit::Float(f) => {
                if !matches!(f.suffix(), "" | "f64") {
                    return Err(err(
                        Code::Unsupported,
                        "only f64 numbers are in the Rust subset",
                        p,
                    ));
                }
                let n: f64 = f
                    .base10_parse()
                    .map_err(|_| err(Code::Syntax, "bad number literal", p))?;
                if !n.is_finite() {
                    return Err(err(
                        Code::InexactNumber,
                        "number literal out of the f64 range",
                        p,
                    ));
                }
                Ok((Expr::constant(Constant::Number(n), p), Ty::F64))
            }
            syn::Lit::Int(i) => {
                let suffix = i.suffix();
                if !matches!(suffix, "" | "f64") {
                    return Err(err(
                        Code::Unsupported,
                        "integer types are outside the Rust subset (numbers are `f64`)",
                        p,
                    ));
                }
                let n: u64 = i
                    .base10_parse()
                    .map_err(|_| err(Code::InexactNumber, "integer literal out of range", p))?;
                if n > (1u64 << 53) {
                    return Err(err(
                        Code::InexactNumber,
                        "integer literal is not exactly an f64",
                        p,
                    ));
                }
                Ok((
                    Expr::constant(Constant::Number(n as f64), p),
                    if suffix == "f64" { Ty::F64 } else { Ty::Int },
                ))
            }
            _ => Err(err(
                Code::Unsupported,
                "this literal is outside the Rust subset",
                p,
            )),
        }
    }

    fn path(&mut self, path: &syn::ExprPath, consume: bool, p: Pos) -> R<(Expr, Ty)> {
        if path.qself.is_some() {
            return Err(err(
                Code::Unsupported,
                "qualified paths are outside the Rust subset",
                p,
            ));
        }
        let segs: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if path.path.segments.iter().any(|s| !s.arguments.is_empty()) {
            return Err(err(
                Code::Unsupported,
                "generic arguments are outside the Rust subset here",
                p,
            ));
        }
        match segs.as_slice() {
            [name] if name == "None" && self.lookup(name).is_none() => {
                let t = self.it.types.fresh();
                Ok((tagged("None", Vec::new(), p), Ty::Opt(Box::new(t))))
            }
            [name] => {
                let Some(b) = self.resolve(name, p)? else {
                    if self.it.fns.contains_key(name) {
                        return Err(err(
                            Code::Unsupported,
                            format!("function `{name}` can only be called"),
                            p,
                        ));
                    }
                    return Err(err(
                        Code::UnknownName,
                        format!("cannot find value `{name}` in this scope"),
                        p,
                    ));
                };
                self.check_not_moved(self.fx(), b.var, None, name, p)?;
                if matches!(self.it.types.shallow(&b.ty), Ty::Closure(_)) {
                    return Err(err(
                        Code::Unsupported,
                        format!("closure `{name}` can only be called"),
                        p,
                    ));
                }
                if consume && !self.it.types.is_copy(&b.ty) {
                    self.mark_moved(&b, None, name, p)?;
                }
                Ok((ex(ExprKind::Var(b.var), p), b.ty))
            }
            [en, vn] => {
                let (ty, shape) = self.variant_of(en, vn, p)?;
                if !matches!(shape, Shape::Unit) {
                    return Err(self.type_error(
                        format!(
                            "variant `{en}::{vn}` carries a payload: construct it with its fields"
                        ),
                        p,
                    ));
                }
                Ok((tagged(vn, Vec::new(), p), ty))
            }
            _ => Err(err(
                Code::Unsupported,
                "paths longer than `Enum::Variant` are outside the Rust subset",
                p,
            )),
        }
    }

    fn variant_of(&self, en: &str, vn: &str, p: Pos) -> R<(Ty, Shape)> {
        let Some(&i) = self.it.types.by_name.get(en) else {
            return Err(err(Code::UnknownName, format!("unknown enum `{en}`"), p));
        };
        let adt = &self.it.types.adts[i];
        if !adt.is_enum {
            return Err(self.type_error(format!("`{en}` is a struct, not an enum"), p));
        }
        match adt.variants.iter().find(|(n, _)| n == vn) {
            Some((_, s)) => Ok((Ty::Adt(i), s.clone())),
            None => Err(self.type_error(format!("no variant `{vn}` in enum `{en}`"), p)),
        }
    }

    /// A place: `x`, `x.f.g`, `x[i]`: (root variable name, field path).
    fn place_root(e: &syn::Expr) -> Option<(&syn::Ident, Vec<String>)> {
        match e {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| (i, Vec::new())),
            syn::Expr::Paren(x) => Self::place_root(&x.expr),
            syn::Expr::Field(f) => {
                let (root, mut path) = Self::place_root(&f.base)?;
                if let syn::Member::Named(n) = &f.member {
                    path.push(n.to_string());
                    Some((root, path))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn field_type(&self, base: &Ty, name: &str, p: Pos) -> R<Ty> {
        match self.it.types.shallow(base) {
            Ty::Adt(i) if !self.it.types.adts[i].is_enum => {
                match self.it.types.adts[i].fields.iter().find(|(n, _)| n == name) {
                    Some((_, t)) => Ok(t.clone()),
                    None => Err(self.type_error(
                        format!("no field `{name}` on type `{}`", self.it.types.adts[i].name),
                        p,
                    )),
                }
            }
            Ty::Var(_) => {
                Err(self.type_error("type annotations needed before this field access", p))
            }
            other => Err(self.type_error(
                format!("no field `{name}` on type `{}`", self.show(&other)),
                p,
            )),
        }
    }

    /// Reads a field or an element (moving it out when `consume` and the type moves).
    fn place_read(&mut self, e: &syn::Expr, consume: bool) -> R<(Expr, Ty)> {
        let p = pos_of(e);
        match e {
            syn::Expr::Field(f) => {
                let syn::Member::Named(name) = &f.member else {
                    return Err(err(
                        Code::Unsupported,
                        "tuple fields are outside the Rust subset",
                        p,
                    ));
                };
                let name = name.to_string();
                if let Some((root, path)) = Self::place_root(e)
                    && let Some(b) = self.resolve(&root.to_string(), pos_of(root))?
                {
                    let (base, bt) = self.expr(&f.base, false)?;
                    let t = self.field_type(&bt, &name, p)?;
                    let key = path.join(".");
                    self.check_not_moved(self.fx(), b.var, Some(&key), &root.to_string(), p)?;
                    if consume && !self.it.types.is_copy(&t) {
                        self.mark_moved(&b, Some(&key), &format!("{root}.{key}"), p)?;
                    }
                    return Ok((get(base, &name, p), t));
                }
                let (base, bt) = self.expr(&f.base, consume)?;
                let t = self.field_type(&bt, &name, p)?;
                Ok((get(base, &name, p), t))
            }
            syn::Expr::Index(ix) => {
                let xs = self.operands(&[&ix.expr, &ix.index], false)?;
                let mut it = xs.into_iter();
                let (Some((base, bt)), Some((index, it_ty))) = (it.next(), it.next()) else {
                    return Err(err(Code::Internal, "internal: index operands", p));
                };
                let elem = self.it.types.fresh();
                let vt = Ty::Vec(Box::new(elem.clone()));
                if !self.it.types.unify(&vt, &bt) {
                    return Err(self.type_error(
                        format!("cannot index a value of type `{}`", self.show(&bt)),
                        p,
                    ));
                }
                self.unify_at(&Ty::F64, &it_ty, pos_of(&*ix.index), "a Vec index")?;
                if consume && !self.it.types.is_copy(&elem) {
                    return Err(err(
                        Code::Moved,
                        "cannot move out of an index of a Vec (iterate with `for` instead)",
                        p,
                    ));
                }
                Ok((
                    ex(ExprKind::Index(Box::new(base), Box::new(index)), p),
                    elem,
                ))
            }
            _ => Err(err(Code::Internal, "internal: not a place", p)),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary, p: Pos) -> R<(Expr, Ty)> {
        use syn::BinOp as B;
        let compound = match b.op {
            B::AddAssign(_) => Some(BinOp::Add),
            B::SubAssign(_) => Some(BinOp::Sub),
            B::MulAssign(_) => Some(BinOp::Mul),
            B::DivAssign(_) => Some(BinOp::Div),
            B::RemAssign(_) => Some(BinOp::Rem),
            _ => None,
        };
        if let Some(op) = compound {
            return self.assign(&b.left, &b.right, Some(op), p);
        }
        if matches!(b.op, B::And(_) | B::Or(_)) {
            let (l, lt) = self.expr(&b.left, false)?;
            self.unify_at(&Ty::Bool, &lt, pos_of(&*b.left), "an operand of `&&`/`||`")?;
            // The right operand may not run; its moves still count after it, as in Rust.
            let (stmts, (r, rt)) = self.collect(|s| s.expr(&b.right, false))?;
            self.unify_at(&Ty::Bool, &rt, pos_of(&*b.right), "an operand of `&&`/`||`")?;
            let and = matches!(b.op, B::And(_));
            if stmts.is_empty() {
                let k = if and {
                    ExprKind::And(Box::new(l), Box::new(r))
                } else {
                    ExprKind::Or(Box::new(l), Box::new(r))
                };
                return Ok((ex(k, p), Ty::Bool));
            }
            let t = self.hidden("t");
            self.out.push(st(StmtKind::Assign(t, l), p));
            let mut then = stmts;
            then.push(st(StmtKind::Assign(t, r), p));
            let cond = ex(ExprKind::Var(t), p);
            let cond = if and {
                cond
            } else {
                ex(ExprKind::Not(Box::new(cond)), p)
            };
            self.out.push(st(StmtKind::If(cond, then, Vec::new()), p));
            return Ok((ex(ExprKind::Var(t), p), Ty::Bool));
        }
        if let (B::Add(_), syn::Expr::Reference(borrowed)) = (&b.op, &*b.right)
            && borrowed.mutability.is_none()
        {
            return self.concat_borrowed(&b.left, &borrowed.expr, p);
        }
        let xs = self.operands(&[&b.left, &b.right], matches!(b.op, B::Add(_)))?;
        let mut it = xs.into_iter();
        let (Some((l, lt)), Some((r, rt))) = (it.next(), it.next()) else {
            return Err(err(Code::Internal, "internal: binary operands", p));
        };
        let (lt, rt) = (self.it.types.shallow(&lt), self.it.types.shallow(&rt));
        let arith = match b.op {
            B::Add(_) => Some(BinOp::Add),
            B::Sub(_) => Some(BinOp::Sub),
            B::Mul(_) => Some(BinOp::Mul),
            B::Div(_) => Some(BinOp::Div),
            B::Rem(_) => Some(BinOp::Rem),
            _ => None,
        };
        let bin = |op, l, r| ex(ExprKind::Bin(op, Box::new(l), Box::new(r)), p);
        if let Some(op) = arith {
            if op == BinOp::Add && lt == Ty::Str {
                if rt != Ty::StaticStr {
                    return Err(self.type_error(
                        format!(
                            "`String + {}`: the right side must be a string literal",
                            self.show(&rt)
                        ),
                        p,
                    ));
                }
                return Ok((bin(op, l, r), Ty::Str));
            }
            if lt == Ty::Int && rt == Ty::Int {
                return Err(self.type_error(
                    "integer arithmetic is outside the Rust subset (numbers are `f64`)",
                    p,
                ));
            }
            self.unify_at(&Ty::F64, &lt, pos_of(&*b.left), "an arithmetic operand")?;
            self.unify_at(&Ty::F64, &rt, pos_of(&*b.right), "an arithmetic operand")?;
            return Ok((bin(op, l, r), Ty::F64));
        }
        let cmp = match b.op {
            B::Eq(_) => BinOp::Eq,
            B::Ne(_) => BinOp::Neq,
            B::Lt(_) => BinOp::Lt,
            B::Le(_) => BinOp::Le,
            B::Gt(_) => BinOp::Gt,
            B::Ge(_) => BinOp::Ge,
            _ => {
                return Err(err(
                    Code::Unsupported,
                    "this operator is outside the Rust subset",
                    p,
                ));
            }
        };
        let stringy = |t: &Ty| matches!(t, Ty::Str | Ty::StaticStr);
        let ok = if matches!(cmp, BinOp::Eq | BinOp::Neq) {
            (stringy(&lt) && stringy(&rt))
                || self.it.types.unify(&lt, &rt)
                    && matches!(self.it.types.shallow(&lt), Ty::F64 | Ty::Bool | Ty::Unit)
        } else {
            self.it.types.unify(&lt, &rt) && self.it.types.shallow(&lt) == Ty::F64
        };
        if !ok {
            return Err(self.type_error(
                format!(
                    "cannot compare `{}` with `{}` (the subset compares f64, bool and strings; match enums instead)",
                    self.show(&lt),
                    self.show(&rt)
                ),
                p,
            ));
        }
        Ok((bin(cmp, l, r), Ty::Bool))
    }

    fn unary(&mut self, u: &syn::ExprUnary, p: Pos) -> R<(Expr, Ty)> {
        let (x, t) = self.expr(&u.expr, false)?;
        let t = self.it.types.shallow(&t);
        match u.op {
            syn::UnOp::Not(_) => {
                self.unify_at(&Ty::Bool, &t, p, "the operand of `!`")?;
                Ok((ex(ExprKind::Not(Box::new(x)), p), Ty::Bool))
            }
            syn::UnOp::Neg(_) => {
                if t == Ty::Int {
                    return Ok((ex(ExprKind::Neg(Box::new(x)), p), Ty::Int));
                }
                self.unify_at(&Ty::F64, &t, p, "the operand of `-`")?;
                Ok((ex(ExprKind::Neg(Box::new(x)), p), Ty::F64))
            }
            _ => Err(err(
                Code::Unsupported,
                "dereference is outside the Rust subset",
                p,
            )),
        }
    }

    /// `place = value` or `place op= value`.
    fn assign(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        op: Option<BinOp>,
        p: Pos,
    ) -> R<(Expr, Ty)> {
        let root = match left {
            syn::Expr::Index(ix) => Self::place_root(&ix.expr),
            other => Self::place_root(other),
        };
        let Some((root, path)) = root else {
            return Err(err(
                Code::BadAssignment,
                "the left side of an assignment must be a variable, field or element",
                pos_of(left),
            ));
        };
        let name = root.to_string();
        let Some(b) = self.resolve(&name, pos_of(root))? else {
            return Err(err(
                Code::UnknownName,
                format!("cannot find value `{name}` in this scope"),
                pos_of(root),
            ));
        };
        if b.captured {
            return Err(err(
                Code::BadAssignment,
                format!("a closure cannot assign its captured `{name}`"),
                pos_of(left),
            ));
        }
        if !b.mutable {
            return Err(err(
                Code::BadAssignment,
                format!(
                    "cannot assign twice to immutable variable `{name}` (declare it `let mut`)"
                ),
                pos_of(left),
            ));
        }
        match left {
            syn::Expr::Index(ix) => {
                let xs = self.operands(&[&ix.expr, &ix.index], false)?;
                let mut it = xs.into_iter();
                let (Some((base, bt)), Some((index, itt))) = (it.next(), it.next()) else {
                    return Err(err(Code::Internal, "internal: index operands", p));
                };
                let elem = self.it.types.fresh();
                if !self.it.types.unify(&Ty::Vec(Box::new(elem.clone())), &bt) {
                    return Err(self.type_error(
                        format!("cannot index a value of type `{}`", self.show(&bt)),
                        p,
                    ));
                }
                self.unify_at(&Ty::F64, &itt, pos_of(&*ix.index), "a Vec index")?;
                let (t, (mut rhs, rt)) = (self.hidden("t"), self.rhs_after(right)?);
                self.out.push(st(StmtKind::Assign(t, index), p));
                if let Some(op) = op {
                    self.unify_at(&Ty::F64, &elem, p, "a compound assignment")?;
                    let cur = ex(
                        ExprKind::Index(Box::new(base.clone()), Box::new(ex(ExprKind::Var(t), p))),
                        p,
                    );
                    rhs = ex(ExprKind::Bin(op, Box::new(cur), Box::new(rhs)), p);
                }
                self.unify_at(&elem, &rt, pos_of(right), "the element type")?;
                self.out.push(st(
                    StmtKind::SetIndex(base, ex(ExprKind::Var(t), p), rhs),
                    p,
                ));
            }
            syn::Expr::Field(f) => {
                let syn::Member::Named(fname) = &f.member else {
                    return Err(err(
                        Code::Unsupported,
                        "tuple fields are outside the Rust subset",
                        p,
                    ));
                };
                if path.len() > 1 {
                    self.check_not_moved(
                        self.fx(),
                        b.var,
                        Some(&path[..path.len() - 1].join(".")),
                        &name,
                        p,
                    )?;
                } else {
                    self.check_not_moved(self.fx(), b.var, None, &name, p)?;
                }
                let (base, bt) = self.expr(&f.base, false)?;
                let ft = self.field_type(&bt, &fname.to_string(), p)?;
                let (mut rhs, rt) = self.rhs_after(right)?;
                if let Some(op) = op {
                    self.unify_at(&Ty::F64, &ft, p, "a compound assignment")?;
                    rhs = ex(
                        ExprKind::Bin(
                            op,
                            Box::new(get(base.clone(), &fname.to_string(), p)),
                            Box::new(rhs),
                        ),
                        p,
                    );
                }
                self.unify_at(&ft, &rt, pos_of(right), "the field's type")?;
                let key = path.join(".");
                let prefix = format!("{key}.");
                self.fxm()
                    .moved
                    .retain(|(v, k)| !(*v == b.var && (*k == key || k.starts_with(&prefix))));
                self.out
                    .push(st(StmtKind::SetProp(base, fname.to_string(), rhs), p));
            }
            _ => {
                let (mut rhs, rt) = self.rhs_after(right)?;
                if let Some(op) = op {
                    self.check_not_moved(self.fx(), b.var, None, &name, p)?;
                    self.unify_at(&Ty::F64, &b.ty, p, "a compound assignment")?;
                    rhs = ex(
                        ExprKind::Bin(op, Box::new(ex(ExprKind::Var(b.var), p)), Box::new(rhs)),
                        p,
                    );
                }
                self.unify_at(&b.ty, &rt, pos_of(right), &format!("`{name}`"))?;
                if matches!(self.it.types.shallow(&b.ty), Ty::Closure(_)) {
                    return Err(err(
                        Code::Unsupported,
                        "closures are bound once with `let`",
                        p,
                    ));
                }
                self.fxm().moved.retain(|(v, _)| *v != b.var);
                self.out.push(st(StmtKind::Assign(b.var, rhs), p));
            }
        }
        // The store follows the right side: a call of a borrowing closure
        // there is before the assignment.
        self.note_assigned(b.var, &name, pos_of(left));
        Ok((undef(p), Ty::Unit))
    }

    /// The right side of an assignment, evaluated (Rust order) before the store.
    fn rhs_after(&mut self, right: &syn::Expr) -> R<(Expr, Ty)> {
        let (x, t) = self.expr(right, true)?;
        let p = x.pos;
        if has_effects(&x) {
            let v = self.hidden("t");
            self.out.push(st(StmtKind::Assign(v, x), p));
            return Ok((ex(ExprKind::Var(v), p), t));
        }
        Ok((x, t))
    }

    /// Lowers both arms of a branch, keeping moves of the arms that do not diverge.
    fn branches<T>(
        &mut self,
        arms: usize,
        mut f: impl FnMut(&mut Self, usize) -> R<Arm<T>>,
    ) -> R<Vec<Arm<T>>> {
        let before = self.fx().moved.clone();
        let mut after = before.clone();
        let mut any_live = false;
        let mut out = Vec::new();
        for i in 0..arms {
            self.fxm().moved = before.clone();
            let r = f(self, i)?;
            if self.it.types.shallow(&r.2) != Ty::Never {
                after.extend(self.fx().moved.iter().cloned());
                any_live = true;
            }
            out.push(r);
        }
        self.fxm().moved = if any_live { after } else { before };
        Ok(out)
    }

    fn if_expr(&mut self, i: &syn::ExprIf, consume: bool, want: bool) -> R<(Expr, Ty)> {
        let p = pos_of(i);
        let (c, ct) = self.expr(&i.cond, false)?;
        self.unify_at(&Ty::Bool, &ct, pos_of(&*i.cond), "an `if` condition")?;
        let arms = self.branches(2, |s, k| {
            if k == 0 {
                let (stmts, (x, t)) = s.collect(|s| s.block(&i.then_branch, consume))?;
                Ok((stmts, x, t, ()))
            } else {
                match &i.else_branch {
                    Some((_, e)) => {
                        let (stmts, (x, t)) = s.collect(|s| s.expr_full(e, consume, want))?;
                        Ok((stmts, x, t, ()))
                    }
                    None => Ok((Vec::new(), undef(p), Ty::Unit, ())),
                }
            }
        })?;
        if i.else_branch.is_none() {
            let t = &arms[0].2;
            if !self.it.types.unify(&Ty::Unit, t) {
                return Err(self.type_error(
                    format!(
                        "`if` without `else` has type `()`, but its block is `{}`",
                        self.show(t)
                    ),
                    p,
                ));
            }
        }
        self.join_arms(
            c,
            arms.into_iter().map(|(s, x, t, _)| (s, x, t, p)).collect(),
            want,
            p,
            "`if` and `else` have incompatible types",
        )
    }

    /// `if c {a} else {b}` from lowered arms: a conditional expression when
    /// both are plain, else an `if` statement storing into a result variable.
    fn join_arms(
        &mut self,
        c: Expr,
        arms: Vec<(Vec<Stmt>, Expr, Ty, Pos)>,
        want: bool,
        p: Pos,
        msg: &str,
    ) -> R<(Expr, Ty)> {
        let mut ty = Ty::Never;
        for (_, _, t, ap) in &arms {
            if !self.it.types.unify(&ty, t) {
                return Err(self.type_error(
                    format!("{msg}: `{}` and `{}`", self.show(&ty), self.show(t)),
                    *ap,
                ));
            }
            if self.it.types.shallow(&ty) == Ty::Never {
                ty = t.clone();
            }
        }
        let mut arms = arms.into_iter();
        let (Some((s1, x1, t1, _)), Some((s2, x2, t2, _))) = (arms.next(), arms.next()) else {
            return Err(err(Code::Internal, "internal: two arms", p));
        };
        let live = |t: &Ty, s: &Self| s.it.types.shallow(t) != Ty::Never;
        if want && s1.is_empty() && s2.is_empty() && live(&t1, self) && live(&t2, self) {
            return Ok((
                ex(ExprKind::Cond(Box::new(c), Box::new(x1), Box::new(x2)), p),
                ty,
            ));
        }
        let result = (want && live(&ty, self)).then(|| self.hidden("v"));
        let finish = |mut s: Vec<Stmt>, x: Expr, t: &Ty, this: &Self| {
            if this.it.types.shallow(t) != Ty::Never {
                match result {
                    Some(v) => s.push(st(StmtKind::Assign(v, x), p)),
                    None if has_effects(&x) => s.push(st(StmtKind::Expr(x), p)),
                    None => {}
                }
            }
            s
        };
        let a = finish(s1, x1, &t1, self);
        let b = finish(s2, x2, &t2, self);
        self.out.push(st(StmtKind::If(c, a, b), p));
        Ok((
            result.map_or_else(|| undef(p), |v| ex(ExprKind::Var(v), p)),
            ty,
        ))
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, consume: bool, want: bool) -> R<(Expr, Ty)> {
        let p = pos_of(m);
        let (sx, sty) = self.expr(&m.expr, false)?;
        let sty = self.it.types.shallow(&sty);
        let Some(variants) = self.it.types.variants(&sty) else {
            let what = if matches!(sty, Ty::Var(_)) {
                "type annotations needed".to_string()
            } else {
                format!("found `{}`", self.show(&sty))
            };
            return Err(self.type_error(
                format!("`match` works on enums, Option and Result in the Rust subset ({what})"),
                pos_of(&*m.expr),
            ));
        };
        let enum_name = match sty {
            Ty::Adt(i) => Some(self.it.types.adts[i].name.clone()),
            _ => None,
        };
        // Each arm: (variant index or catch-all, bindings (name, key or whole value, type)).
        let mut arms = Vec::new();
        let mut covered = vec![false; variants.len()];
        let mut catch_all = false;
        for arm in &m.arms {
            if let Some((_, g)) = &arm.guard {
                return Err(err(
                    Code::Unsupported,
                    "match guards are outside the Rust subset",
                    pos_of(&**g),
                ));
            }
            let (vi, binds) = self.arm_pattern(&arm.pat, &variants, enum_name.as_deref(), &sty)?;
            match vi {
                Some(i) => covered[i] = true,
                None => catch_all = true,
            }
            arms.push((arm, vi, binds));
            if catch_all {
                break;
            }
        }
        if !catch_all && covered.iter().any(|c| !c) {
            let missing: Vec<String> = variants
                .iter()
                .zip(&covered)
                .filter(|(_, c)| !**c)
                .map(|((n, _), _)| match &enum_name {
                    Some(e) => format!("`{e}::{n}`"),
                    None => format!("`{n}`"),
                })
                .collect();
            return Err(err(
                Code::NonExhaustive,
                format!(
                    "non-exhaustive patterns: {} not covered",
                    missing.join(", ")
                ),
                p,
            ));
        }
        // Binding a moving payload moves the matched place.
        let moves = arms.iter().any(|(_, _, b)| {
            b.iter()
                .any(|(_, _, t): &(String, Option<String>, Ty)| !self.it.types.is_copy(t))
        });
        if moves && let Some((root, path)) = Self::place_root(&m.expr) {
            let name = root.to_string();
            if let Some(b) = self.resolve(&name, pos_of(root))? {
                let key = path.join(".");
                self.mark_moved(
                    &b,
                    (!key.is_empty()).then_some(key.as_str()),
                    &name,
                    pos_of(&*m.expr),
                )?;
            }
        }
        let subject = self.hidden("m");
        self.out.push(st(StmtKind::Assign(subject, sx), p));
        let n = arms.len();
        let lowered = self.branches(n, |s, k| {
            let (arm, _, binds) = &arms[k];
            s.push_scope();
            let r = s.collect(|s| {
                for (name, key, t) in binds {
                    let whole = ex(ExprKind::Var(subject), p);
                    let value = match key {
                        Some(k) => get(whole, k, p),
                        None => whole,
                    };
                    let v = s.bind(name, t.clone(), false);
                    s.out.push(st(StmtKind::Assign(v, value), p));
                }
                s.expr_full(&arm.body, consume, want)
            });
            s.pop_scope();
            let (stmts, (x, t)) = r?;
            Ok((stmts, x, t, pos_of(&*arm.body)))
        })?;
        let mut ty = Ty::Never;
        for (_, _, t, ap) in &lowered {
            if !self.it.types.unify(&ty, t) {
                return Err(self.type_error(
                    format!(
                        "`match` arms have incompatible types: `{}` and `{}`",
                        self.show(&ty),
                        self.show(t)
                    ),
                    *ap,
                ));
            }
            if self.it.types.shallow(&ty) == Ty::Never {
                ty = t.clone();
            }
        }
        let result = (want && self.it.types.shallow(&ty) != Ty::Never).then(|| self.hidden("v"));
        let mut chain: Vec<Stmt> = Vec::new();
        for (k, (mut stmts, x, t, _)) in lowered.into_iter().enumerate().rev() {
            if self.it.types.shallow(&t) != Ty::Never {
                match result {
                    Some(v) => stmts.push(st(StmtKind::Assign(v, x), p)),
                    None if has_effects(&x) => stmts.push(st(StmtKind::Expr(x), p)),
                    None => {}
                }
            }
            if k + 1 == n {
                chain = stmts;
                continue;
            }
            let Some(vi) = arms[k].1 else {
                return Err(err(
                    Code::Internal,
                    "internal: catch-all arm before the last",
                    p,
                ));
            };
            let test = ex(
                ExprKind::Bin(
                    BinOp::Eq,
                    Box::new(get(ex(ExprKind::Var(subject), p), TAG, p)),
                    Box::new(text(&variants[vi].0, p)),
                ),
                p,
            );
            chain = vec![st(StmtKind::If(test, stmts, chain), p)];
        }
        self.out.push(st(StmtKind::Block(chain), p));
        Ok((
            result.map_or_else(|| undef(p), |v| ex(ExprKind::Var(v), p)),
            ty,
        ))
    }

    #[allow(clippy::type_complexity)]
    fn arm_pattern(
        &self,
        pat: &syn::Pat,
        variants: &[(String, Shape)],
        enum_name: Option<&str>,
        sty: &Ty,
    ) -> R<(Option<usize>, Vec<(String, Option<String>, Ty)>)> {
        let p = pos_of(pat);
        let find = |path: &syn::Path| -> R<(usize, Shape)> {
            let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let vn = match (segs.as_slice(), enum_name) {
                ([e, v], Some(en)) if e == en => v.clone(),
                ([v], None) => v.clone(),
                _ => {
                    return Err(self.type_error(
                        format!("this pattern does not match type `{}`", self.show(sty)),
                        p,
                    ));
                }
            };
            match variants.iter().position(|(n, _)| *n == vn) {
                Some(i) => Ok((i, variants[i].1.clone())),
                None => {
                    Err(self.type_error(format!("no variant `{vn}` in `{}`", self.show(sty)), p))
                }
            }
        };
        let leaf = |q: &syn::Pat| -> R<Option<String>> {
            match q {
                syn::Pat::Wild(_) => Ok(None),
                syn::Pat::Ident(pi)
                    if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() =>
                {
                    Ok(Some(pi.ident.to_string()))
                }
                other => Err(err(
                    Code::Unsupported,
                    "nested patterns are outside the Rust subset (one-level match)",
                    pos_of(other),
                )),
            }
        };
        match pat {
            syn::Pat::Wild(_) => Ok((None, Vec::new())),
            syn::Pat::Ident(pi)
                if enum_name.is_none() && pi.ident == "None" && pi.subpat.is_none() =>
            {
                Ok((variants.iter().position(|(n, _)| n == "None"), Vec::new()))
            }
            syn::Pat::Ident(_) => {
                let name = leaf(pat)?.unwrap_or_default();
                Ok((None, vec![(name, None, sty.clone())]))
            }
            syn::Pat::Path(pp) => {
                let (i, shape) = find(&pp.path)?;
                if !matches!(shape, Shape::Unit) {
                    return Err(self.type_error(
                        "this variant carries a payload: match it with its fields",
                        p,
                    ));
                }
                Ok((Some(i), Vec::new()))
            }
            syn::Pat::TupleStruct(ts) => {
                let (i, shape) = find(&ts.path)?;
                let Shape::Tuple(tys) = shape else {
                    return Err(self.type_error("this variant has no tuple payload", p));
                };
                if ts.elems.len() != tys.len() {
                    return Err(self.type_error(
                        format!(
                            "this pattern has {} fields, the variant has {}",
                            ts.elems.len(),
                            tys.len()
                        ),
                        p,
                    ));
                }
                let mut binds = Vec::new();
                for (k, (q, t)) in ts.elems.iter().zip(tys).enumerate() {
                    if let Some(n) = leaf(q)? {
                        binds.push((n, Some(format!("${k}")), t));
                    }
                }
                Ok((Some(i), binds))
            }
            syn::Pat::Struct(ps) => {
                let (i, shape) = find(&ps.path)?;
                let Shape::Named(fields) = shape else {
                    return Err(self.type_error("this variant has no named fields", p));
                };
                let mut binds = Vec::new();
                for fp in &ps.fields {
                    let syn::Member::Named(fname) = &fp.member else {
                        return Err(err(
                            Code::Unsupported,
                            "tuple fields are outside the Rust subset",
                            pos_of(fp),
                        ));
                    };
                    let Some((_, t)) = fields.iter().find(|(n, _)| fname == n) else {
                        return Err(
                            self.type_error(format!("variant has no field `{fname}`"), pos_of(fp))
                        );
                    };
                    if let Some(n) = leaf(&fp.pat)? {
                        binds.push((n, Some(fname.to_string()), t.clone()));
                    }
                }
                if ps.rest.is_none() && ps.fields.len() != fields.len() {
                    return Err(
                        self.type_error("pattern does not mention every field (add `..`)", p)
                    );
                }
                Ok((Some(i), binds))
            }
            _ => Err(err(
                Code::Unsupported,
                "this pattern is outside the Rust subset",
                p,
            )),
        }
    }

    fn loop_body(&mut self, body: &syn::Block) -> R<Vec<Stmt>> {
        // A loop repeats: an exit that follows outside it does not cover moves inside it.
        let saved = self.leaving.take();
        let r = self.collect(|s| s.block(body, false));
        self.leaving = saved;
        let (mut stmts, (x, t)) = r?;
        if !self.it.types.unify(&Ty::Unit, &t) {
            return Err(self.type_error(
                format!("a loop body has type `()`, found `{}`", self.show(&t)),
                pos_of(body),
            ));
        }
        if has_effects(&x) {
            stmts.push(st(StmtKind::Expr(x), pos_of(body)));
        }
        Ok(stmts)
    }

    fn while_loop(&mut self, w: &syn::ExprWhile) -> R<(Expr, Ty)> {
        let p = pos_of(w);
        if w.label.is_some() {
            return Err(err(
                Code::Unsupported,
                "labels are outside the Rust subset",
                p,
            ));
        }
        // The condition runs on every iteration: it is inside the loop.
        let borrow_marks = self.borrow_marks();
        self.fxm().loops.push(LoopCx {
            is_loop: false,
            value: None,
            ty: Ty::Unit,
            broke: false,
            borrow_marks,
        });
        let saved = self.leaving.take();
        let cond = self.collect(|s| s.expr(&w.cond, false));
        self.leaving = saved;
        let body = match cond {
            Ok(c) => self.loop_body(&w.body).map(|b| (c, b)),
            Err(e) => Err(e),
        };
        let body = body.and_then(|b| self.check_loop_borrows().map(|()| b));
        self.fxm().loops.pop();
        let ((cstmts, (c, ct)), body) = body?;
        self.unify_at(&Ty::Bool, &ct, pos_of(&*w.cond), "a `while` condition")?;
        if cstmts.is_empty() {
            self.out.push(st(
                StmtKind::Loop {
                    cond: Some(c),
                    body,
                    update: Vec::new(),
                },
                p,
            ));
        } else {
            let mut all = cstmts;
            all.push(st(
                StmtKind::If(
                    ex(ExprKind::Not(Box::new(c)), p),
                    vec![st(StmtKind::Break, p)],
                    Vec::new(),
                ),
                p,
            ));
            all.extend(body);
            self.out.push(st(
                StmtKind::Loop {
                    cond: None,
                    body: all,
                    update: Vec::new(),
                },
                p,
            ));
        }
        Ok((undef(p), Ty::Unit))
    }

    fn loop_expr(&mut self, l: &syn::ExprLoop) -> R<(Expr, Ty)> {
        let p = pos_of(l);
        if l.label.is_some() {
            return Err(err(
                Code::Unsupported,
                "labels are outside the Rust subset",
                p,
            ));
        }
        let ty = self.it.types.fresh();
        let borrow_marks = self.borrow_marks();
        self.fxm().loops.push(LoopCx {
            is_loop: true,
            value: None,
            ty: ty.clone(),
            broke: false,
            borrow_marks,
        });
        let body = self
            .loop_body(&l.body)
            .and_then(|b| self.check_loop_borrows().map(|()| b));
        let cx = self.fxm().loops.pop();
        let body = body?;
        self.out.push(st(
            StmtKind::Loop {
                cond: None,
                body,
                update: Vec::new(),
            },
            p,
        ));
        match cx {
            Some(LoopCx {
                broke: true,
                value,
                ty,
                ..
            }) => Ok((
                value.map_or_else(|| undef(p), |v| ex(ExprKind::Var(v), p)),
                ty,
            )),
            _ => Ok((undef(p), Ty::Never)),
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> R<(Expr, Ty)> {
        let p = pos_of(f);
        if f.label.is_some() {
            return Err(err(
                Code::Unsupported,
                "labels are outside the Rust subset",
                p,
            ));
        }
        let (name, mutable) = match &*f.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (pi.ident.to_string(), pi.mutability.is_some())
            }
            syn::Pat::Wild(_) => ("_".to_string(), false),
            other => {
                return Err(err(
                    Code::Unsupported,
                    "`for` binds one name in the Rust subset",
                    pos_of(other),
                ));
            }
        };
        let counter = self.hidden("i");
        let num = |n: f64| Expr::constant(Constant::Number(n), p);
        let var = |v: VarRef| ex(ExprKind::Var(v), p);
        let (cond, elem_ty, elem) = if let syn::Expr::Range(r) = &*f.expr {
            let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
                return Err(err(
                    Code::Unsupported,
                    "`for` ranges have both bounds in the Rust subset",
                    pos_of(r),
                ));
            };
            let xs = self.operands(&[lo, hi], false)?;
            for ((_, t), e) in xs.iter().zip([lo, hi]) {
                self.unify_at(&Ty::Int, t, pos_of(&**e), "a range bound")?;
            }
            let mut it = xs.into_iter();
            let (Some((lo, _)), Some((hi, _))) = (it.next(), it.next()) else {
                return Err(err(Code::Internal, "internal: range bounds", p));
            };
            let end = self.hidden("end");
            self.out.push(st(StmtKind::Assign(counter, lo), p));
            self.out.push(st(StmtKind::Assign(end, hi), p));
            let op = if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                BinOp::Le
            } else {
                BinOp::Lt
            };
            (
                ex(
                    ExprKind::Bin(op, Box::new(var(counter)), Box::new(var(end))),
                    p,
                ),
                Ty::Int,
                var(counter),
            )
        } else {
            let (v, vt) = self.expr(&f.expr, true)?;
            let elem = self.it.types.fresh();
            if !self.it.types.unify(&Ty::Vec(Box::new(elem.clone())), &vt) {
                return Err(self.type_error(
                    format!(
                        "`for` iterates a Vec or an integer range, found `{}`",
                        self.show(&vt)
                    ),
                    pos_of(&*f.expr),
                ));
            }
            let items = self.hidden("it");
            self.out.push(st(StmtKind::Assign(items, v), p));
            self.out.push(st(StmtKind::Assign(counter, num(0.0)), p));
            let len = ex(ExprKind::Length(Box::new(var(items))), p);
            (
                ex(
                    ExprKind::Bin(BinOp::Lt, Box::new(var(counter)), Box::new(len)),
                    p,
                ),
                elem,
                ex(
                    ExprKind::Index(Box::new(var(items)), Box::new(var(counter))),
                    p,
                ),
            )
        };
        let borrow_marks = self.borrow_marks();
        self.fxm().loops.push(LoopCx {
            is_loop: false,
            value: None,
            ty: Ty::Unit,
            broke: false,
            borrow_marks,
        });
        self.push_scope();
        let r = (|| {
            let mut body = Vec::new();
            if name != "_" {
                let b = self.bind(&name, elem_ty, mutable);
                body.push(st(StmtKind::Assign(b, elem), p));
            }
            body.extend(self.loop_body(&f.body)?);
            self.check_loop_borrows()?;
            Ok::<_, FrontendError>(body)
        })();
        self.pop_scope();
        self.fxm().loops.pop();
        let body = r?;
        let update = vec![st(
            StmtKind::Assign(
                counter,
                ex(
                    ExprKind::Bin(BinOp::Add, Box::new(var(counter)), Box::new(num(1.0))),
                    p,
                ),
            ),
            p,
        )];
        self.out.push(st(
            StmtKind::Loop {
                cond: Some(cond),
                body,
                update,
            },
            p,
        ));
        Ok((undef(p), Ty::Unit))
    }

    fn break_expr(&mut self, b: &syn::ExprBreak, p: Pos) -> R<(Expr, Ty)> {
        if b.label.is_some() {
            return Err(err(
                Code::Unsupported,
                "labels are outside the Rust subset",
                p,
            ));
        }
        let Some(cx) = self.fx().loops.last() else {
            return Err(err(Code::BadControl, "`break` outside of a loop", p));
        };
        let (is_loop, ty) = (cx.is_loop, cx.ty.clone());
        match &b.expr {
            Some(e) => {
                if !is_loop {
                    return Err(err(
                        Code::BadControl,
                        "`break` with a value is only for `loop`",
                        p,
                    ));
                }
                let here = Some(self.fx().loops.len());
                let saved = std::mem::replace(&mut self.leaving, here);
                let r = self.expr(e, true);
                self.leaving = saved;
                let (x, t) = r?;
                self.unify_at(&ty, &t, pos_of(&**e), "the loop's value")?;
                let v = match self.fx().loops.last().and_then(|c| c.value) {
                    Some(v) => v,
                    None => {
                        let v = self.hidden("loop");
                        if let Some(c) = self.fxm().loops.last_mut() {
                            c.value = Some(v);
                        }
                        v
                    }
                };
                self.out.push(st(StmtKind::Assign(v, x), p));
            }
            None => {
                if is_loop {
                    self.unify_at(&ty, &Ty::Unit, p, "the loop's value")?;
                }
            }
        }
        if let Some(c) = self.fxm().loops.last_mut() {
            c.broke = true;
        }
        self.out.push(st(StmtKind::Break, p));
        Ok((undef(p), Ty::Never))
    }

    fn return_expr(&mut self, r: &syn::ExprReturn, p: Pos) -> R<(Expr, Ty)> {
        let ret = self.fx().ret.clone();
        let x = match &r.expr {
            Some(e) => {
                let saved = self.leaving.replace(LEAVES_ALL);
                let res = self.expr(e, true);
                self.leaving = saved;
                let (x, t) = res?;
                self.unify_at(&ret, &t, pos_of(&**e), "the function's return type")?;
                x
            }
            None => {
                self.unify_at(&ret, &Ty::Unit, p, "the function's return type")?;
                undef(p)
            }
        };
        self.out.push(st(StmtKind::Return(Some(x)), p));
        Ok((undef(p), Ty::Never))
    }

    fn is_durable_name(&self, name: &str) -> bool {
        matches!(
            name,
            "effect" | "effect_with" | "wait_for_event" | "sleep" | "invoke" | "join" | "race"
        ) && self.it.imported.contains(name)
            && self.lookup(name).is_none()
    }

    fn call(&mut self, c: &syn::ExprCall, p: Pos) -> R<(Expr, Ty)> {
        let syn::Expr::Path(fp) = &*c.func else {
            return Err(err(
                Code::Call,
                "only named functions, closures and constructors are called in the Rust subset",
                p,
            ));
        };
        if fp.qself.is_some() {
            return Err(err(
                Code::Unsupported,
                "qualified paths are outside the Rust subset",
                p,
            ));
        }
        let segs: Vec<String> = fp
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let generic_ok = segs.len() == 2 && segs[0] == "Vec";
        for (k, s) in fp.path.segments.iter().enumerate() {
            if !(s.arguments.is_empty() || generic_ok && k == 0) {
                return Err(err(
                    Code::Unsupported,
                    "generic arguments are outside the Rust subset here",
                    pos_of(s),
                ));
            }
        }
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let arity = |n: usize, what: &str| -> R<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(
                    Code::Call,
                    format!("{what} takes {n} argument(s), {} given", args.len()),
                    p,
                ))
            }
        };
        match segs.as_slice() {
            [name] => {
                if let Some(b) = self
                    .lookup(name)
                    .map(Some)
                    .map_or_else(|| self.resolve(name, p), Ok)?
                    && let Ty::Closure(k) = self.it.types.shallow(&b.ty)
                {
                    let sig = self.it.types.closures[k].clone();
                    arity(sig.params.len(), &format!("closure `{name}`"))?;
                    self.check_not_moved(self.fx(), b.var, None, name, p)?;
                    self.note_called(self.fx.len() - 1, b.var)?;
                    if sig.once {
                        self.mark_moved(&b, None, name, p)?;
                    }
                    let xs = self.operands(&args, true)?;
                    let mut out = Vec::new();
                    for ((x, t), (want, a)) in xs.into_iter().zip(sig.params.iter().zip(&args)) {
                        self.unify_at(want, &t, pos_of(*a), "the closure's parameter")?;
                        out.push(x);
                    }
                    let callee = ex(ExprKind::Var(b.var), p);
                    return Ok((ex(ExprKind::Call(Box::new(callee), out), p), sig.ret));
                }
                match name.as_str() {
                    "Some" | "Ok" | "Err" => {
                        arity(1, name)?;
                        let mut xs = self.operands(&args, true)?;
                        let Some((x, t)) = xs.pop() else {
                            return Err(err(Code::Internal, "internal: args", p));
                        };
                        let ty = match name.as_str() {
                            "Some" => Ty::Opt(Box::new(t)),
                            "Ok" => Ty::Res(Box::new(t), Box::new(self.it.types.fresh())),
                            _ => Ty::Res(Box::new(self.it.types.fresh()), Box::new(t)),
                        };
                        return Ok((tagged(name, vec![x], p), ty));
                    }
                    _ => {}
                }
                if let Some(sig) = self.it.fns.get(name).cloned() {
                    if self.m.entry == sig.func {
                        return Err(err(Code::Entry, "the entry function cannot be called", p));
                    }
                    arity(sig.params.len(), &format!("function `{name}`"))?;
                    let xs = self.operands(&args, true)?;
                    let mut out = Vec::new();
                    for ((x, t), ((_, want, _), a)) in
                        xs.into_iter().zip(sig.params.iter().zip(&args))
                    {
                        self.unify_at(want, &t, pos_of(*a), &format!("a parameter of `{name}`"))?;
                        out.push(x);
                    }
                    let callee = ex(ExprKind::Func(sig.func), p);
                    return Ok((ex(ExprKind::Call(Box::new(callee), out), p), sig.ret));
                }
                if self.is_durable_name(name) {
                    return Err(err(
                        Code::Await,
                        format!("durable operations are awaited: `{name}(…).await?`"),
                        p,
                    ));
                }
                Err(err(
                    Code::UnknownName,
                    format!("cannot find function `{name}` in this scope"),
                    p,
                ))
            }
            [a, b] if a == "String" && b == "from" => {
                arity(1, "String::from")?;
                let (x, t) = self.expr(args[0], true)?;
                self.unify_at(
                    &Ty::StaticStr,
                    &t,
                    pos_of(args[0]),
                    "the argument of `String::from`",
                )?;
                Ok((x, Ty::Str))
            }
            [a, b] if a == "String" && b == "new" => {
                arity(0, "String::new")?;
                Ok((text("", p), Ty::Str))
            }
            [a, b] if a == "Vec" && b == "new" => {
                arity(0, "Vec::new")?;
                if !self.it.imported.contains("Vec") {
                    return Err(err(
                        Code::Import,
                        format!("`Vec` is the prelude's: add `use {}::Vec;`", PRELUDE),
                        p,
                    ));
                }
                let elem = match &fp.path.segments[0].arguments {
                    syn::PathArguments::AngleBracketed(ab) if ab.args.len() == 1 => {
                        match &ab.args[0] {
                            syn::GenericArgument::Type(t) => {
                                ty_of(&mut self.it.types, t, &self.it.imported)?
                            }
                            other => {
                                return Err(err(
                                    Code::Unsupported,
                                    "only type arguments are in the Rust subset",
                                    pos_of(other),
                                ));
                            }
                        }
                    }
                    syn::PathArguments::None => self.it.types.fresh(),
                    other => {
                        return Err(err(
                            Code::Type,
                            "`Vec` takes one type argument",
                            pos_of(other),
                        ));
                    }
                };
                Ok((ex(ExprKind::Array(Vec::new()), p), Ty::Vec(Box::new(elem))))
            }
            [en, vn] => {
                let (ty, shape) = self.variant_of(en, vn, p)?;
                let Shape::Tuple(tys) = shape else {
                    return Err(self.type_error(format!("`{en}::{vn}` is not a tuple variant"), p));
                };
                arity(tys.len(), &format!("`{en}::{vn}`"))?;
                let xs = self.operands(&args, true)?;
                let mut out = Vec::new();
                for ((x, t), (want, a)) in xs.into_iter().zip(tys.iter().zip(&args)) {
                    self.unify_at(want, &t, pos_of(*a), "the variant's payload")?;
                    out.push(x);
                }
                Ok((tagged(vn, out, p), ty))
            }
            _ => Err(err(
                Code::UnknownName,
                format!("cannot find function `{}`", segs.join("::")),
                p,
            )),
        }
    }

    fn method(&mut self, mc: &syn::ExprMethodCall, p: Pos) -> R<(Expr, Ty)> {
        let name = mc.method.to_string();
        if mc.turbofish.is_some() {
            return Err(err(
                Code::Unsupported,
                "generic arguments are outside the Rust subset",
                p,
            ));
        }
        match name.as_str() {
            "to_string" | "to_owned" | "into" if mc.args.is_empty() => {
                let (x, t) = self.expr(&mc.receiver, false)?;
                if self.it.types.shallow(&t) != Ty::StaticStr {
                    return Err(self.type_error(
                        format!(
                            "`{name}` is for string literals in the Rust subset, found `{}`",
                            self.show(&t)
                        ),
                        p,
                    ));
                }
                Ok((x, Ty::Str))
            }
            // Strings are immutable values in the engine, so a clone is the same value.
            "clone" if mc.args.is_empty() => {
                let (x, t) = self.expr(&mc.receiver, false)?;
                if !matches!(
                    self.it.types.shallow(&t),
                    Ty::Str | Ty::StaticStr | Ty::F64 | Ty::Bool
                ) {
                    return Err(err(
                        Code::Unsupported,
                        format!(
                            "`clone` of `{}` is outside the Rust subset (String only)",
                            self.show(&t)
                        ),
                        p,
                    ));
                }
                Ok((x, t))
            }
            "len" if mc.args.is_empty() => {
                let (x, t) = self.expr(&mc.receiver, false)?;
                let elem = self.it.types.fresh();
                if !self.it.types.unify(&Ty::Vec(Box::new(elem)), &t) {
                    return Err(self.type_error(
                        format!(
                            "no method `len` on `{}` in the Rust subset (Vec only)",
                            self.show(&t)
                        ),
                        p,
                    ));
                }
                Ok((ex(ExprKind::Length(Box::new(x)), p), Ty::F64))
            }
            "push" if mc.args.len() == 1 => {
                let Some((root, _)) = Self::place_root(&mc.receiver) else {
                    return Err(err(
                        Code::BadAssignment,
                        "`push` needs a mutable variable",
                        pos_of(&*mc.receiver),
                    ));
                };
                let rname = root.to_string();
                let Some(b) = self.resolve(&rname, pos_of(root))? else {
                    return Err(err(
                        Code::UnknownName,
                        format!("cannot find value `{rname}` in this scope"),
                        pos_of(root),
                    ));
                };
                if !b.mutable || b.captured {
                    return Err(err(
                        Code::BadAssignment,
                        format!("cannot borrow `{rname}` as mutable (declare it `let mut`)"),
                        pos_of(&*mc.receiver),
                    ));
                }
                let (r, rt) = self.expr(&mc.receiver, false)?;
                let mark = self.out.len();
                let (mut x, xt) = self.expr(&mc.args[0], true)?;
                let mut ops = [r];
                self.spill(&[mark], &mut ops);
                let [r] = ops;
                let _ = &mut x;
                let elem = self.it.types.fresh();
                if !self.it.types.unify(&Ty::Vec(Box::new(elem.clone())), &rt) {
                    return Err(self.type_error(
                        format!(
                            "no method `push` on `{}` in the Rust subset (Vec only)",
                            self.show(&rt)
                        ),
                        p,
                    ));
                }
                self.unify_at(&elem, &xt, pos_of(&mc.args[0]), "the Vec's element type")?;
                self.out.push(st(StmtKind::Push(r, x), p));
                Ok((undef(p), Ty::Unit))
            }
            _ => Err(err(
                Code::Unsupported,
                format!("method `{name}` is outside the Rust subset"),
                p,
            )),
        }
    }

    fn struct_lit(&mut self, s: &syn::ExprStruct, p: Pos) -> R<(Expr, Ty)> {
        if s.qself.is_some() {
            return Err(err(
                Code::Unsupported,
                "qualified paths are outside the Rust subset",
                p,
            ));
        }
        if let Some(r) = &s.rest {
            return Err(err(
                Code::Unsupported,
                "struct update syntax is outside the Rust subset",
                pos_of(&**r),
            ));
        }
        let segs: Vec<String> = s
            .path
            .segments
            .iter()
            .map(|x| x.ident.to_string())
            .collect();
        let (ty, fields, tag) = match segs.as_slice() {
            [name] => match self.it.types.by_name.get(name) {
                Some(&i) if !self.it.types.adts[i].is_enum => {
                    (Ty::Adt(i), self.it.types.adts[i].fields.clone(), None)
                }
                Some(_) => {
                    return Err(self.type_error(format!("`{name}` is an enum: name a variant"), p));
                }
                None => {
                    return Err(err(
                        Code::UnknownName,
                        format!("unknown struct `{name}`"),
                        p,
                    ));
                }
            },
            [en, vn] => {
                let (ty, shape) = self.variant_of(en, vn, p)?;
                let Shape::Named(fields) = shape else {
                    return Err(self.type_error(format!("`{en}::{vn}` has no named fields"), p));
                };
                (ty, fields, Some(vn.clone()))
            }
            _ => {
                return Err(err(
                    Code::Unsupported,
                    "this path is outside the Rust subset",
                    p,
                ));
            }
        };
        let mut names = Vec::new();
        for fv in &s.fields {
            let syn::Member::Named(n) = &fv.member else {
                return Err(err(
                    Code::Unsupported,
                    "tuple fields are outside the Rust subset",
                    pos_of(fv),
                ));
            };
            let n = n.to_string();
            if names.contains(&n) {
                return Err(
                    self.type_error(format!("field `{n}` specified more than once"), pos_of(fv))
                );
            }
            if !fields.iter().any(|(f, _)| *f == n) {
                return Err(self.type_error(
                    format!("no field `{n}` in `{}`", segs.join("::")),
                    pos_of(fv),
                ));
            }
            names.push(n);
        }
        if let Some((missing, _)) = fields.iter().find(|(f, _)| !names.contains(f)) {
            return Err(self.type_error(
                format!("missing field `{missing}` in `{}`", segs.join("::")),
                p,
            ));
        }
        let exprs: Vec<&syn::Expr> = s.fields.iter().map(|f| &f.expr).collect();
        let xs = self.operands(&exprs, true)?;
        let mut out = Vec::new();
        if let Some(t) = tag {
            out.push((TAG.to_string(), text(&t, p)));
        }
        for ((x, t), (n, e)) in xs.into_iter().zip(names.iter().zip(&exprs)) {
            let want = fields
                .iter()
                .find(|(f, _)| f == n)
                .map(|(_, t)| t.clone())
                .unwrap_or(Ty::Unit);
            self.unify_at(&want, &t, pos_of(*e), &format!("field `{n}`"))?;
            out.push((n.clone(), x));
        }
        Ok((ex(ExprKind::Object(out), p), ty))
    }

    fn closure(&mut self, c: &syn::ExprClosure, p: Pos) -> R<(Expr, Ty)> {
        if self.fx().closure {
            return Err(err(
                Code::Unsupported,
                "closures inside closures are outside the Rust subset",
                p,
            ));
        }
        if c.asyncness.is_some()
            || c.constness.is_some()
            || c.lifetimes.is_some()
            || c.movability.is_some()
        {
            return Err(err(
                Code::Unsupported,
                "async, const and static closures are outside the Rust subset",
                p,
            ));
        }
        let parent = self.fx().func;
        let func = self.m.funcs.len();
        let mut scope = Vec::new();
        let mut params = Vec::new();
        let mut vars = Vec::new();
        for (i, input) in c.inputs.iter().enumerate() {
            let (pat, t) = match input {
                syn::Pat::Type(pt) => (
                    &*pt.pat,
                    ty_of(&mut self.it.types, &pt.ty, &self.it.imported)?,
                ),
                other => (other, self.it.types.fresh()),
            };
            let syn::Pat::Ident(pi) = pat else {
                return Err(err(
                    Code::Unsupported,
                    "closure parameters are plain names in the Rust subset",
                    pos_of(pat),
                ));
            };
            if pi.by_ref.is_some() || pi.subpat.is_some() {
                return Err(err(
                    Code::Unsupported,
                    "references are outside the Rust subset",
                    pos_of(pat),
                ));
            }
            let name = pi.ident.to_string();
            self.bound
                .push((name.clone(), t.clone(), pos_of(&pi.ident)));
            vars.push(Var {
                name: name.clone(),
                captured: false,
            });
            params.push(t.clone());
            scope.push((
                name,
                Bind {
                    var: VarRef { func, var: i },
                    ty: t,
                    mutable: pi.mutability.is_some(),
                    captured: false,
                    loop_depth: 0,
                },
            ));
        }
        let ret = match &c.output {
            syn::ReturnType::Default => self.it.types.fresh(),
            syn::ReturnType::Type(_, t) => ty_of(&mut self.it.types, t, &self.it.imported)?,
        };
        self.m.funcs.push(Func {
            name: "<closure>".into(),
            parent: Some(parent),
            params: (0..params.len()).collect(),
            param_defaults: vec![None; params.len()],
            vars,
            pos: p,
            implicit_return: Constant::Undefined,
            ..Func::default()
        });
        self.fx.push(Fx {
            func,
            scopes: vec![scope],
            ret: ret.clone(),
            entry: false,
            closure: true,
            copies: Vec::new(),
            loops: Vec::new(),
            moved: BTreeSet::new(),
            once: false,
            borrows: Vec::new(),
        });
        let saved_out = std::mem::take(&mut self.out);
        let saved_leaving = self.leaving.take();
        let r = self.expr(&c.body, true);
        self.leaving = saved_leaving;
        let inner = self.fx.pop();
        let mut body = std::mem::replace(&mut self.out, saved_out);
        let (x, t) = r?;
        let Some(inner) = inner else {
            return Err(err(Code::Internal, "internal: closure frame", p));
        };
        self.unify_at(&ret, &t, pos_of(&*c.body), "the closure's return type")?;
        if self.it.types.shallow(&t) != Ty::Never {
            body.push(st(StmtKind::Return(Some(x)), p));
        }
        self.m.funcs[func].body = body;
        self.last_closure_borrows = inner
            .copies
            .iter()
            .filter(|(_, copy, _)| !inner.moved.contains(&(*copy, String::new())))
            .map(|(orig, _, _)| *orig)
            .collect();
        for (orig, copy, ty) in inner.copies {
            self.out
                .push(st(StmtKind::Assign(copy, ex(ExprKind::Var(orig), p)), p));
            if !self.it.types.is_copy(&ty) {
                let found = self
                    .fx()
                    .scopes
                    .iter()
                    .flatten()
                    .find(|(_, b)| b.var == orig)
                    .cloned();
                if let Some((name, b)) = found {
                    self.mark_moved(&b, None, &name, p)?;
                }
            }
        }
        let k = self.it.types.closures.len();
        self.it.types.closures.push(super::types::ClosureSig {
            params,
            ret,
            once: inner.once,
        });
        Ok((ex(ExprKind::Closure(func), p), Ty::Closure(k)))
    }

    fn question(&mut self, t: &syn::ExprTry, p: Pos) -> R<(Expr, Ty)> {
        if let syn::Expr::Await(a) = &*t.expr {
            let ret = self.it.types.shallow(&self.fx().ret);
            let ok = matches!(&ret, Ty::Res(_, e) if self.it.types.unify(e, &Ty::Str));
            if !ok && self.fx().entry && !self.fx().closure {
                return Err(err(
                    Code::Question,
                    format!(
                        "`?` on a durable operation needs the entry to return `Result<_, String>`, not `{}`",
                        self.show(&ret)
                    ),
                    p,
                ));
            }
            return self.durable(&a.base, pos_of(&*a.base));
        }
        if self.fx().closure {
            return Err(err(
                Code::Question,
                "`?` inside closures is outside the Rust subset",
                p,
            ));
        }
        let (x, xt) = self.expr(&t.expr, true)?;
        let ret = self.it.types.shallow(&self.fx().ret);
        let (ok_tag, payload, bail) = match self.it.types.shallow(&xt) {
            Ty::Res(a, e) => {
                let fits = matches!(&ret, Ty::Res(_, e2) if self.it.types.unify(e2, &e));
                if !fits {
                    return Err(err(
                        Code::Question,
                        format!(
                            "`?` on `{}` needs the function to return `Result<_, {}>`, not `{}`",
                            self.show(&xt),
                            self.show(&e),
                            self.show(&ret)
                        ),
                        p,
                    ));
                }
                ("Ok", *a, "Err")
            }
            Ty::Opt(a) => {
                if !matches!(ret, Ty::Opt(_)) {
                    return Err(err(
                        Code::Question,
                        format!(
                            "`?` on an Option needs the function to return an Option, not `{}`",
                            self.show(&ret)
                        ),
                        p,
                    ));
                }
                ("Some", *a, "None")
            }
            Ty::Var(_) => return Err(err(Code::Question, "type annotations needed before `?`", p)),
            other => {
                return Err(err(
                    Code::Question,
                    format!(
                        "`?` needs a Result or an Option, found `{}`",
                        self.show(&other)
                    ),
                    p,
                ));
            }
        };
        let r = self.hidden("q");
        self.out.push(st(StmtKind::Assign(r, x), p));
        let var = || ex(ExprKind::Var(r), p);
        let test = ex(
            ExprKind::Bin(
                BinOp::Neq,
                Box::new(get(var(), TAG, p)),
                Box::new(text(ok_tag, p)),
            ),
            p,
        );
        let early = if bail == "Err" {
            tagged("Err", vec![get(var(), "$0", p)], p)
        } else {
            tagged("None", Vec::new(), p)
        };
        self.out.push(st(
            StmtKind::If(test, vec![st(StmtKind::Return(Some(early)), p)], Vec::new()),
            p,
        ));
        Ok((get(var(), "$0", p), payload))
    }

    /// `op(…).await` without `?`: `Ok(value)`, or `Err(message)` when the operation fails.
    fn durable_result(&mut self, a: &syn::ExprAwait, p: Pos) -> R<(Expr, Ty)> {
        let (stmts, (x, t)) = self.collect(|s| s.durable(&a.base, pos_of(&*a.base)))?;
        self.out.extend(stmts);
        let r = self.hidden("r");
        let e = self.hidden("e");
        let body = vec![st(StmtKind::Assign(r, tagged("Ok", vec![x], p)), p)];
        let handler = vec![st(
            StmtKind::Assign(r, tagged("Err", vec![ex(ExprKind::Var(e), p)], p)),
            p,
        )];
        self.out.push(st(
            StmtKind::Try {
                body,
                catch: Some((Some(e), handler)),
                finally: None,
            },
            p,
        ));
        Ok((
            ex(ExprKind::Var(r), p),
            Ty::Res(Box::new(t), Box::new(Ty::Str)),
        ))
    }

    fn durable_key(e: &syn::Expr) -> Option<String> {
        match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            syn::Expr::Call(c) if c.args.len() == 1 => match (&*c.func, &c.args[0]) {
                (
                    syn::Expr::Path(fp),
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }),
                ) if fp.path.segments.len() == 2
                    && fp.path.segments[0].ident == "String"
                    && fp.path.segments[1].ident == "from" =>
                {
                    Some(s.value())
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The effect key, event name or program name of a durable call: a
    /// string literal (or `String::from` of one), or any `String` or
    /// `&'static str` expression, which moves into the call as it does
    /// into the prelude's `impl Into<String>` parameter.
    fn durable_name(&mut self, e: &syn::Expr, what: &str) -> R<Expr> {
        let p = pos_of(e);
        if let Some(k) = Self::durable_key(e) {
            return Ok(ex(ExprKind::Const(Constant::String(k)), p));
        }
        let (x, t) = self.expr(e, true)?;
        match self.it.types.shallow(&t) {
            Ty::Str | Ty::StaticStr => Ok(x),
            other => Err(err(
                Code::ComputedKey,
                format!(
                    "{what} is a `String` or a string literal, found `{}`",
                    self.show(&other)
                ),
                p,
            )),
        }
    }

    /// A durable call (the operand of `.await`).
    fn durable(&mut self, base: &syn::Expr, p: Pos) -> R<(Expr, Ty)> {
        let name = match base {
            syn::Expr::Call(c) => match &*c.func {
                syn::Expr::Path(fp) => fp.path.get_ident().map(|i| i.to_string()),
                _ => None,
            },
            _ => None,
        };
        let (Some(name), syn::Expr::Call(c)) = (name, base) else {
            return Err(err(
                Code::Await,
                "only durable operations of the prelude are awaited",
                p,
            ));
        };
        if !self.is_durable_name(&name) {
            return Err(err(
                Code::Await,
                format!("`{name}` is not a durable operation of the prelude"),
                p,
            ));
        }
        if !self.fx().entry || self.fx().closure {
            return Err(err(
                Code::DurableOutsideEntry,
                format!("durable operation `{name}` outside the entry function"),
                p,
            ));
        }
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let arity = |n: usize| -> R<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(
                    Code::Call,
                    format!("`{name}` takes {n} argument(s), {} given", args.len()),
                    p,
                ))
            }
        };
        let d = |d: Durable| ex(ExprKind::Durable(d), p);
        match name.as_str() {
            "effect" | "effect_with" => {
                // `effect(KEY, || value)`, `effect_with(KEY, INPUT, || value)`:
                // INPUT (evaluated after KEY) is what the provider receives.
                let with_input = name == "effect_with";
                arity(if with_input { 3 } else { 2 })?;
                let k = self.durable_name(args[0], "the effect key")?;
                let (k, input) = if with_input {
                    // Moved into the call, as rustc has it; the key is kept in a
                    // temporary when the input's evaluation runs statements.
                    let after_key = self.out.len();
                    let (x, _) = self.expr(args[1], true)?;
                    let after_input = self.out.len();
                    let mut xs = [k, x];
                    self.spill(&[after_key, after_input], &mut xs);
                    let [k, x] = xs;
                    (k, x)
                } else {
                    (k, ex(ExprKind::Object(Vec::new()), p))
                };
                let body = args[args.len() - 1];
                let syn::Expr::Closure(cl) = body else {
                    return Err(err(
                        Code::Call,
                        "the effect's last argument is a closure (`|| value`)",
                        pos_of(body),
                    ));
                };
                if !cl.inputs.is_empty() {
                    return Err(err(
                        Code::Call,
                        "the effect closure takes no parameters",
                        pos_of(body),
                    ));
                }
                // Type-checked for its result type (and moves) only: the host runs the effect.
                let (funcs, outs) = (self.m.funcs.len(), self.out.len());
                let (_, ct) = self.closure(cl, pos_of(body))?;
                self.m.funcs.truncate(funcs);
                self.out.truncate(outs);
                let Ty::Closure(ci) = ct else {
                    return Err(err(Code::Internal, "internal: effect closure", p));
                };
                let t = self.it.types.closures[ci].ret.clone();
                Ok((d(Durable::EffectInput(Box::new(k), Box::new(input))), t))
            }
            "wait_for_event" => {
                arity(1)?;
                let k = self.durable_name(args[0], "the event name")?;
                Ok((d(Durable::Wait(Box::new(k))), self.it.types.fresh()))
            }
            "sleep" => {
                arity(1)?;
                let (x, t) = self.expr(args[0], false)?;
                self.unify_at(&Ty::F64, &t, pos_of(args[0]), "the sleep duration (ms)")?;
                Ok((d(Durable::Sleep(Box::new(x))), Ty::Unit))
            }
            "invoke" => {
                arity(2)?;
                let k = Box::new(self.durable_name(args[0], "the program name")?);
                let list: Vec<&syn::Expr> = match args[1] {
                    syn::Expr::Tuple(t) => t.elems.iter().collect(),
                    other => vec![other],
                };
                let xs = self.operands(&list, true)?;
                Ok((
                    d(Durable::Invoke(k, xs.into_iter().map(|(x, _)| x).collect())),
                    self.it.types.fresh(),
                ))
            }
            _ => {
                arity(2)?;
                let mut branches = Vec::new();
                let ty = self.it.types.fresh();
                for a in &args {
                    let inner = match a {
                        syn::Expr::Await(aw) => &*aw.base,
                        other => other,
                    };
                    let is_op = matches!(inner, syn::Expr::Call(ic) if matches!(&*ic.func, syn::Expr::Path(fp)
                        if fp.path.get_ident().is_some_and(|i| self.is_durable_name(&i.to_string()) && i != "join" && i != "race")));
                    if !is_op {
                        return Err(err(
                            Code::Concurrency,
                            format!(
                                "the branches of `{name}` are durable operations (not nested `join`/`race`)"
                            ),
                            pos_of(*a),
                        ));
                    }
                    let (x, t) = self.durable(inner, pos_of(inner))?;
                    self.unify_at(&ty, &t, pos_of(*a), &format!("a branch of `{name}`"))?;
                    branches.push(x);
                }
                if name == "join" {
                    Ok((d(Durable::Gather(branches)), Ty::Vec(Box::new(ty))))
                } else {
                    Ok((d(Durable::Race(branches)), ty))
                }
            }
        }
    }
}
