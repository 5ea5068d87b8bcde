//! Safe repetition of durable calls (`docs/tcc/frontends.md`, "Durable calls
//! in loops").
//!
//! The engine names a durable call's result by the call, not by the moment
//! it runs: an effect's journal identity is `{execution}:{key}`, an event
//! wait's id `{execution}:{name}::{pc}` and a child's `{execution}:invoke:{pc}`.
//! Run in a loop, the second iteration would be answered with the first
//! one's result. This pass, run on the entry function between the lowering
//! and codegen of all three languages, makes that impossible:
//!
//! - an effect whose key is the same on every iteration of the loop it is
//!   in (built from constants, pure operators and variables the loop never
//!   assigns, `Walker::loop_invariant`) is refused (`TCC-F024`, with a hint
//!   to compute the key from the loop's data);
//! - an event wait or an `invoke` inside a loop, and not already a branch of
//!   a `gather`/`race`, becomes a one-branch race. Inside a concurrent group
//!   both engines name the wait or child by the group's branch id,
//!   `{execution}:{site}:{reentry}:{index}`, whose `reentry` counts the
//!   group's runs, so every iteration gets its own identity. The artifact
//!   then requires `durable.concurrent_group`, which both engines implement,
//!   and means the same on both.
//!
//! Durable calls outside loops are left exactly as they were, so the
//! artifacts of programs without durable calls in loops do not change.

use rustc_hash::FxHashSet as HashSet;

use crate::error::{Code, FrontendError};
use crate::hir::{Durable, Expr, ExprKind, FuncIdx, Module, Stmt, StmtKind, Var, VarRef};

/// Checks and rewrites the durable calls of the entry function of `module`
/// (durable calls are refused in every other function).
pub fn make_repetition_safe(module: &mut Module) -> Result<(), FrontendError> {
    let entry = module.entry;
    let Some(f) = module.funcs.get_mut(entry) else {
        return Ok(());
    };
    let mut body = std::mem::take(&mut f.body);
    let mut walker = Walker {
        func: entry,
        vars: &mut f.vars,
        loop_assigned: Vec::new(),
    };
    let r = walker.stmts(&mut body, 0);
    f.body = body;
    r
}

/// The walk over the entry function; `vars` are its variables, which get
/// the temporaries of hoisted operands.
struct Walker<'v> {
    func: FuncIdx,
    vars: &'v mut Vec<Var>,
    /// For each enclosing loop, innermost last: the variables it assigns.
    loop_assigned: Vec<HashSet<VarRef>>,
}

impl Walker<'_> {
    fn stmts(&mut self, body: &mut [Stmt], loops: u32) -> Result<(), FrontendError> {
        body.iter_mut().try_for_each(|s| self.stmt(s, loops))
    }

    fn stmt(&mut self, s: &mut Stmt, loops: u32) -> Result<(), FrontendError> {
        match &mut s.kind {
            StmtKind::Expr(e) | StmtKind::Assign(_, e) | StmtKind::Throw(e) => self.expr(e, loops),
            StmtKind::SetProp(o, _, v) | StmtKind::Push(o, v) => {
                self.expr(o, loops)?;
                self.expr(v, loops)
            }
            StmtKind::SetIndex(o, i, v) => {
                self.expr(o, loops)?;
                self.expr(i, loops)?;
                self.expr(v, loops)
            }
            StmtKind::If(c, then, other) => {
                self.expr(c, loops)?;
                self.stmts(then, loops)?;
                self.stmts(other, loops)
            }
            StmtKind::Loop { cond, body, update } => {
                let mut assigned = HashSet::default();
                if let Some(c) = cond {
                    assigned_in_expr(c, &mut assigned);
                }
                assigned_in(body, &mut assigned);
                assigned_in(update, &mut assigned);
                self.loop_assigned.push(assigned);
                let r = (|| {
                    if let Some(c) = cond {
                        self.expr(c, loops + 1)?;
                    }
                    self.stmts(body, loops + 1)?;
                    self.stmts(update, loops + 1)
                })();
                self.loop_assigned.pop();
                r
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => Ok(()),
            StmtKind::Return(Some(e)) => self.expr(e, loops),
            StmtKind::Try {
                body,
                catch,
                finally,
            } => {
                self.stmts(body, loops)?;
                if let Some((_, c)) = catch {
                    self.stmts(c, loops)?;
                }
                if let Some(f) = finally {
                    self.stmts(f, loops)?;
                }
                Ok(())
            }
            StmtKind::Block(b) | StmtKind::Switch(b) => self.stmts(b, loops),
        }
    }

    fn expr(&mut self, e: &mut Expr, loops: u32) -> Result<(), FrontendError> {
        match &mut e.kind {
            ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Func(_) | ExprKind::Closure(_) => {
                Ok(())
            }
            ExprKind::Array(items) => items.iter_mut().try_for_each(|x| self.expr(x, loops)),
            ExprKind::Call(f, args) => {
                self.expr(f, loops)?;
                args.iter_mut().try_for_each(|x| self.expr(x, loops))
            }
            ExprKind::Object(fields) => {
                fields.iter_mut().try_for_each(|(_, x)| self.expr(x, loops))
            }
            ExprKind::GetProp(x, _)
            | ExprKind::Length(x)
            | ExprKind::Neg(x)
            | ExprKind::Not(x)
            | ExprKind::Raise(x) => self.expr(x, loops),
            ExprKind::Index(a, b)
            | ExprKind::Bin(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::Let(_, a, b) => {
                self.expr(a, loops)?;
                self.expr(b, loops)
            }
            ExprKind::Cond(c, a, b) => {
                self.expr(c, loops)?;
                self.expr(a, loops)?;
                self.expr(b, loops)
            }
            ExprKind::Durable(d) => {
                self.durable(d, loops)?;
                if loops > 0 && matches!(d, Durable::Wait(_) | Durable::Invoke(..)) {
                    self.own_group(e);
                }
                Ok(())
            }
        }
    }

    /// Rewrites the wait or invoke `e` into a one-branch race. Its operands
    /// that are not constants are evaluated first, in source order, into
    /// temporaries (`Let`), so nothing runs between the `Fork` and the call:
    /// a durable call among them binds to no branch.
    fn own_group(&mut self, e: &mut Expr) {
        let pos = e.pos;
        let mut call = std::mem::replace(&mut e.kind, ExprKind::Array(Vec::new()));
        let mut hoisted = Vec::new();
        if let ExprKind::Durable(Durable::Wait(name)) = &mut call {
            self.hoist(name, &mut hoisted);
        }
        if let ExprKind::Durable(Durable::Invoke(name, args)) = &mut call {
            self.hoist(name, &mut hoisted);
            for a in args.iter_mut() {
                self.hoist(a, &mut hoisted);
            }
        }
        let mut out = Expr {
            kind: ExprKind::Durable(Durable::Race(vec![Expr { kind: call, pos }])),
            pos,
        };
        for (var, value) in hoisted.into_iter().rev() {
            out = Expr {
                kind: ExprKind::Let(var, Box::new(value), Box::new(out)),
                pos,
            };
        }
        *e = out;
    }

    /// Moves `operand` (unless it is a constant) into a new temporary of the
    /// entry function, leaving a read of it.
    fn hoist(&mut self, operand: &mut Expr, hoisted: &mut Vec<(VarRef, Expr)>) {
        if matches!(operand.kind, ExprKind::Const(_)) {
            return;
        }
        self.vars.push(Var {
            name: "$operand".into(),
            captured: false,
        });
        let var = VarRef {
            func: self.func,
            var: self.vars.len() - 1,
        };
        let read = Expr {
            kind: ExprKind::Var(var),
            pos: operand.pos,
        };
        hoisted.push((var, std::mem::replace(operand, read)));
    }

    /// Checks one durable call (`loops`: how many loops it is inside) and the
    /// expressions it evaluates.
    fn durable(&mut self, d: &mut Durable, loops: u32) -> Result<(), FrontendError> {
        match d {
            Durable::Effect(key) => {
                self.expr(key, loops)?;
                self.repeated_key(key)
            }
            Durable::EffectInput(key, input) => {
                self.expr(key, loops)?;
                self.expr(input, loops)?;
                self.repeated_key(key)
            }
            Durable::Wait(name) | Durable::Sleep(name) => self.expr(name, loops),
            Durable::Invoke(name, args) => {
                self.expr(name, loops)?;
                args.iter_mut().try_for_each(|x| self.expr(x, loops))
            }
            // Branches are already named per run of the group.
            Durable::Gather(branches) | Durable::Race(branches) => {
                for b in branches.iter_mut() {
                    match &mut b.kind {
                        ExprKind::Durable(inner) => self.durable(inner, loops)?,
                        _ => self.expr(b, loops)?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Adds the variables `body` assigns (statements and `Let`s, at any depth)
/// to `out`.
fn assigned_in(body: &[Stmt], out: &mut HashSet<VarRef>) {
    for s in body {
        match &s.kind {
            StmtKind::Assign(v, e) => {
                out.insert(*v);
                assigned_in_expr(e, out);
            }
            StmtKind::Expr(e) | StmtKind::Throw(e) | StmtKind::Return(Some(e)) => {
                assigned_in_expr(e, out)
            }
            StmtKind::SetProp(a, _, b) | StmtKind::Push(a, b) => {
                assigned_in_expr(a, out);
                assigned_in_expr(b, out);
            }
            StmtKind::SetIndex(a, b, c) => {
                assigned_in_expr(a, out);
                assigned_in_expr(b, out);
                assigned_in_expr(c, out);
            }
            StmtKind::If(c, a, b) => {
                assigned_in_expr(c, out);
                assigned_in(a, out);
                assigned_in(b, out);
            }
            StmtKind::Loop { cond, body, update } => {
                if let Some(c) = cond {
                    assigned_in_expr(c, out);
                }
                assigned_in(body, out);
                assigned_in(update, out);
            }
            StmtKind::Try {
                body,
                catch,
                finally,
            } => {
                assigned_in(body, out);
                if let Some((v, c)) = catch {
                    if let Some(v) = v {
                        out.insert(*v);
                    }
                    assigned_in(c, out);
                }
                if let Some(f) = finally {
                    assigned_in(f, out);
                }
            }
            StmtKind::Block(b) | StmtKind::Switch(b) => assigned_in(b, out),
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => {}
        }
    }
}

fn assigned_in_expr(e: &Expr, out: &mut HashSet<VarRef>) {
    match &e.kind {
        ExprKind::Let(v, a, b) => {
            out.insert(*v);
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
        }
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Func(_) | ExprKind::Closure(_) => {}
        ExprKind::Array(xs) => xs.iter().for_each(|x| assigned_in_expr(x, out)),
        ExprKind::Call(f, xs) => {
            assigned_in_expr(f, out);
            xs.iter().for_each(|x| assigned_in_expr(x, out));
        }
        ExprKind::Object(fields) => fields.iter().for_each(|(_, x)| assigned_in_expr(x, out)),
        ExprKind::GetProp(x, _)
        | ExprKind::Length(x)
        | ExprKind::Neg(x)
        | ExprKind::Not(x)
        | ExprKind::Raise(x) => assigned_in_expr(x, out),
        ExprKind::Index(a, b)
        | ExprKind::Bin(_, a, b)
        | ExprKind::And(a, b)
        | ExprKind::Or(a, b) => {
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
        }
        ExprKind::Cond(c, a, b) => {
            assigned_in_expr(c, out);
            assigned_in_expr(a, out);
            assigned_in_expr(b, out);
        }
        ExprKind::Durable(d) => match d {
            Durable::Effect(k) | Durable::Wait(k) | Durable::Sleep(k) => assigned_in_expr(k, out),
            Durable::EffectInput(k, i) => {
                assigned_in_expr(k, out);
                assigned_in_expr(i, out);
            }
            Durable::Invoke(n, xs) => {
                assigned_in_expr(n, out);
                xs.iter().for_each(|x| assigned_in_expr(x, out));
            }
            Durable::Gather(xs) | Durable::Race(xs) => {
                xs.iter().for_each(|x| assigned_in_expr(x, out))
            }
        },
    }
}

impl Walker<'_> {
    /// Whether `e` has the same value on every iteration of the innermost
    /// enclosing loop: built from constants, pure operators and variables
    /// that loop never assigns and no closure can change (not captured).
    /// Reads through collections (`xs[i]`, `o.k`, lengths) and calls count
    /// as varying, so this only ever proves a repetition.
    fn loop_invariant(&self, e: &Expr) -> bool {
        let Some(assigned) = self.loop_assigned.last() else {
            return false;
        };
        self.invariant_under(e, assigned)
    }

    fn invariant_under(&self, e: &Expr, assigned: &HashSet<VarRef>) -> bool {
        match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Var(v) => {
                v.func == self.func
                    && !assigned.contains(v)
                    && self.vars.get(v.var).is_some_and(|x| !x.captured)
            }
            ExprKind::Bin(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.invariant_under(a, assigned) && self.invariant_under(b, assigned)
            }
            ExprKind::Neg(a) | ExprKind::Not(a) => self.invariant_under(a, assigned),
            ExprKind::Cond(c, a, b) => {
                self.invariant_under(c, assigned)
                    && self.invariant_under(a, assigned)
                    && self.invariant_under(b, assigned)
            }
            _ => false,
        }
    }

    /// Refuses an effect in a loop whose key is the same on every iteration.
    fn repeated_key(&self, key: &Expr) -> Result<(), FrontendError> {
        if !self.loop_invariant(key) {
            return Ok(());
        }
        let shown = match &key.kind {
            ExprKind::Const(tcc_ir::Constant::String(k)) => format!(" {k:?}"),
            _ => String::new(),
        };
        Err(FrontendError::new(
            Code::RepeatedKey,
            format!(
                "the effect key{shown} is the same on every iteration of the loop, so every \
                 iteration after the first would get the first one's journalled result; compute \
                 the key from the loop's data (Python `f\"charge.{{item}}\"`, TypeScript \
                 `` `charge.${{item}}` ``, Rust `String::from(\"charge.\") + &item`)"
            ),
            key.pos,
        ))
    }
}
