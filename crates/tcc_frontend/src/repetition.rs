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
//! - an effect whose key is the same on every run (built from constants
//!   only, [`Expr::is_invariant`]) inside a loop is refused (`TCC-F024`,
//!   with a hint to compute the key from the loop's data);
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

use crate::error::{Code, FrontendError};
use crate::hir::{Durable, Expr, ExprKind, Module, Stmt, StmtKind};

/// Checks and rewrites the durable calls of the entry function of `module`
/// (durable calls are refused in every other function).
pub fn make_repetition_safe(module: &mut Module) -> Result<(), FrontendError> {
    let entry = module.entry;
    match module.funcs.get_mut(entry) {
        Some(f) => stmts(&mut f.body, 0),
        None => Ok(()),
    }
}

fn stmts(body: &mut [Stmt], loops: u32) -> Result<(), FrontendError> {
    body.iter_mut().try_for_each(|s| stmt(s, loops))
}

fn stmt(s: &mut Stmt, loops: u32) -> Result<(), FrontendError> {
    match &mut s.kind {
        StmtKind::Expr(e) | StmtKind::Assign(_, e) | StmtKind::Throw(e) => expr(e, loops),
        StmtKind::SetProp(o, _, v) | StmtKind::Push(o, v) => {
            expr(o, loops)?;
            expr(v, loops)
        }
        StmtKind::SetIndex(o, i, v) => {
            expr(o, loops)?;
            expr(i, loops)?;
            expr(v, loops)
        }
        StmtKind::If(c, then, other) => {
            expr(c, loops)?;
            stmts(then, loops)?;
            stmts(other, loops)
        }
        StmtKind::Loop { cond, body, update } => {
            if let Some(c) = cond {
                expr(c, loops + 1)?;
            }
            stmts(body, loops + 1)?;
            stmts(update, loops + 1)
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => Ok(()),
        StmtKind::Return(Some(e)) => expr(e, loops),
        StmtKind::Try {
            body,
            catch,
            finally,
        } => {
            stmts(body, loops)?;
            if let Some((_, c)) = catch {
                stmts(c, loops)?;
            }
            if let Some(f) = finally {
                stmts(f, loops)?;
            }
            Ok(())
        }
        StmtKind::Block(b) | StmtKind::Switch(b) => stmts(b, loops),
    }
}

fn expr(e: &mut Expr, loops: u32) -> Result<(), FrontendError> {
    match &mut e.kind {
        ExprKind::Const(_)
        | ExprKind::Var(_)
        | ExprKind::Func(_)
        | ExprKind::Closure(_) => Ok(()),
        ExprKind::Array(items) => items.iter_mut().try_for_each(|x| expr(x, loops)),
        ExprKind::Call(f, args) => {
            expr(f, loops)?;
            args.iter_mut().try_for_each(|x| expr(x, loops))
        }
        ExprKind::Object(fields) => fields.iter_mut().try_for_each(|(_, x)| expr(x, loops)),
        ExprKind::GetProp(x, _)
        | ExprKind::Length(x)
        | ExprKind::Neg(x)
        | ExprKind::Not(x)
        | ExprKind::Raise(x) => expr(x, loops),
        ExprKind::Index(a, b)
        | ExprKind::Bin(_, a, b)
        | ExprKind::And(a, b)
        | ExprKind::Or(a, b)
        | ExprKind::Let(_, a, b) => {
            expr(a, loops)?;
            expr(b, loops)
        }
        ExprKind::Cond(c, a, b) => {
            expr(c, loops)?;
            expr(a, loops)?;
            expr(b, loops)
        }
        ExprKind::Durable(d) => {
            durable(d, loops)?;
            if loops > 0 && matches!(d, Durable::Wait(_) | Durable::Invoke(..)) {
                let single = Expr {
                    kind: std::mem::replace(&mut e.kind, ExprKind::Array(Vec::new())),
                    pos: e.pos,
                };
                e.kind = ExprKind::Durable(Durable::Race(vec![single]));
            }
            Ok(())
        }
    }
}

/// Checks one durable call (`loops`: how many loops it is inside) and the
/// expressions it evaluates.
fn durable(d: &mut Durable, loops: u32) -> Result<(), FrontendError> {
    match d {
        Durable::Effect(key) => {
            expr(key, loops)?;
            repeated_key(key, loops)
        }
        Durable::EffectInput(key, input) => {
            expr(key, loops)?;
            expr(input, loops)?;
            repeated_key(key, loops)
        }
        Durable::Wait(name) | Durable::Sleep(name) => expr(name, loops),
        Durable::Invoke(name, args) => {
            expr(name, loops)?;
            args.iter_mut().try_for_each(|x| expr(x, loops))
        }
        // Branches are already named per run of the group.
        Durable::Gather(branches) | Durable::Race(branches) => {
            for b in branches.iter_mut() {
                match &mut b.kind {
                    ExprKind::Durable(inner) => durable(inner, loops)?,
                    _ => expr(b, loops)?,
                }
            }
            Ok(())
        }
    }
}

fn repeated_key(key: &Expr, loops: u32) -> Result<(), FrontendError> {
    if loops == 0 || !key.is_invariant() {
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
             iteration after the first would get the first one's journalled result; compute the \
             key from the loop's data (Python `f\"charge.{{item}}\"`, TypeScript \
             `` `charge.${{item}}` ``, Rust `String::from(\"charge.\") + &item`)"
        ),
        key.pos,
    ))
}
