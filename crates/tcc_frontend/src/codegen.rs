//! HIR → TCC instructions, one function at a time, and the envelope.
//!
//! Layout of a function's locals: for a nested or helper function, slot 0 is
//! its closure environment (the reference convention: `param_count` counts
//! the user parameters only); then the parameters; then, when a nested
//! function captures any of its variables, the function's own environment
//! (one cell per captured variable, created in the prologue); then the other
//! variables; then temporaries.
//!
//! `finally` code is inlined on every path out of a `try`: the normal path,
//! the catch path, `break`/`continue`/`return` (after `PopTry`), and a
//! rethrowing handler. The engine never jumps to a finally target, so every
//! `PushTry` has `finally: null`.

use std::sync::Arc;

use tcc_ir::{Constant, Function, Instruction, LanguageSemantics, Span};

use crate::error::{Code, FrontendError, LineIndex};
use crate::hir::{BinOp, Durable, Expr, ExprKind, FuncIdx, Module, Pos, Stmt, StmtKind, VarRef};

/// Where a variable lives inside one function's frame.
#[derive(Debug, Clone, Copy)]
enum Loc {
    Local(u32),
    OwnCell(u32),
    FreeCell(u32),
}

enum Ctx<'m> {
    Loop {
        breaks: Vec<usize>,
        continues: Vec<usize>,
    },
    Switch {
        breaks: Vec<usize>,
    },
    Try {
        finally: Option<&'m [Stmt]>,
        handler: bool,
    },
}

/// Generates every function of `module`.
pub fn generate(
    module: &Module,
    semantics: LanguageSemantics,
    file: &str,
    lines: &LineIndex,
) -> Result<Vec<Function>, FrontendError> {
    let mut out = Vec::with_capacity(module.funcs.len());
    let file: Arc<str> = Arc::from(file);
    for fi in 0..module.funcs.len() {
        let mut g = FnGen::new(module, fi, semantics);
        g.function()?;
        out.push(g.finish(&file, lines)?);
    }
    Ok(out)
}

struct FnGen<'m> {
    m: &'m Module,
    fi: FuncIdx,
    py: bool,
    code: Vec<Instruction>,
    spans: Vec<Pos>,
    locs: Vec<Loc>,
    own_env: Option<u32>,
    next_local: u32,
    free_temps: Vec<u32>,
    ctx: Vec<Ctx<'m>>,
    pos: Pos,
}

fn internal(message: &str, pos: Pos) -> FrontendError {
    FrontendError::new(
        Code::Internal,
        format!("internal frontend error: {message}"),
        pos,
    )
}

impl<'m> FnGen<'m> {
    fn new(m: &'m Module, fi: FuncIdx, semantics: LanguageSemantics) -> Self {
        let f = &m.funcs[fi];
        let base: u32 = if fi == m.entry { 0 } else { 1 };
        let mut locs = vec![Loc::Local(0); f.vars.len()];
        let mut next = base;
        for &p in &f.params {
            locs[p] = Loc::Local(next);
            next += 1;
        }
        let mut cells = 0u32;
        for (i, v) in f.vars.iter().enumerate() {
            if v.captured {
                locs[i] = Loc::OwnCell(cells);
                cells += 1;
            }
        }
        let own_env = if cells > 0 {
            next += 1;
            Some(next - 1)
        } else {
            None
        };
        for (i, v) in f.vars.iter().enumerate() {
            if !v.captured && !f.params.contains(&i) {
                locs[i] = Loc::Local(next);
                next += 1;
            }
        }
        FnGen {
            m,
            fi,
            py: semantics == LanguageSemantics::PySubsetV1,
            code: Vec::new(),
            spans: Vec::new(),
            locs,
            own_env,
            next_local: next,
            free_temps: Vec::new(),
            ctx: Vec::new(),
            pos: f.pos,
        }
    }

    fn emit(&mut self, ins: Instruction) -> usize {
        self.code.push(ins);
        self.spans.push(self.pos);
        self.code.len() - 1
    }

    fn pc(&self) -> u32 {
        self.code.len() as u32
    }

    fn patch(&mut self, at: usize, target: u32) {
        match &mut self.code[at] {
            Instruction::Jump { target: t }
            | Instruction::JumpIfTrue { target: t }
            | Instruction::JumpIfFalse { target: t }
            | Instruction::PushTry { catch: t, .. }
            | Instruction::Fork { join_pc: t, .. } => *t = target,
            _ => {}
        }
    }

    fn temp(&mut self) -> u32 {
        if let Some(t) = self.free_temps.pop() {
            return t;
        }
        self.next_local += 1;
        self.next_local - 1
    }

    fn release(&mut self, t: u32) {
        self.free_temps.push(t);
    }

    fn loc(&self, v: VarRef) -> Result<Loc, FrontendError> {
        if v.func == self.fi {
            return Ok(self.locs[v.var]);
        }
        let free = &self.m.funcs[self.fi].free;
        match free.iter().position(|&r| r == v) {
            Some(i) => Ok(Loc::FreeCell(i as u32)),
            None => Err(internal(
                "variable of another function is not in the environment",
                self.pos,
            )),
        }
    }

    fn env_local(&self, loc: Loc) -> Result<(u32, u32), FrontendError> {
        match loc {
            Loc::OwnCell(i) => match self.own_env {
                Some(e) => Ok((e, i)),
                None => Err(internal("cell without an environment", self.pos)),
            },
            Loc::FreeCell(i) => Ok((0, i)),
            Loc::Local(_) => Err(internal("captured variable in a plain slot", self.pos)),
        }
    }

    fn function(&mut self) -> Result<(), FrontendError> {
        let f = &self.m.funcs[self.fi];
        if self.own_env.is_some() {
            let init = Constant::Undefined;
            let mut count = 0u32;
            for v in &f.vars {
                if v.captured {
                    self.emit(Instruction::LoadConst {
                        value: init.clone(),
                    });
                    self.emit(Instruction::NewCell);
                    count += 1;
                }
            }
            self.emit(Instruction::NewEnv { count });
            let env = self.own_env.unwrap_or(0);
            self.emit(Instruction::StoreLocal { local: env });
            let base: u32 = if self.fi == self.m.entry { 0 } else { 1 };
            for (k, &p) in f.params.iter().enumerate() {
                if let Loc::OwnCell(i) = self.locs[p] {
                    self.emit(Instruction::LoadLocal { local: env });
                    self.emit(Instruction::LoadLocal {
                        local: base + k as u32,
                    });
                    self.emit(Instruction::EnvSet { index: i });
                }
            }
        }
        self.block(&f.body)?;
        self.pos = Pos {
            start: f.pos.end,
            end: f.pos.end,
        };
        self.emit(Instruction::LoadConst {
            value: f.implicit_return.clone(),
        });
        self.emit(Instruction::Return);
        Ok(())
    }

    fn finish(self, file: &Arc<str>, lines: &LineIndex) -> Result<Function, FrontendError> {
        let f = &self.m.funcs[self.fi];
        // Consecutive instructions mostly share a source range: resolve
        // each distinct range to line and column once, near the previous.
        let mut spans: Vec<Option<Span>> = Vec::with_capacity(self.spans.len());
        let mut last: Option<Pos> = None;
        let mut hint = 0;
        for p in &self.spans {
            let span = match spans.last() {
                Some(Some(prev)) if last == Some(*p) => prev.clone(),
                _ => {
                    let (start_line, start_column) =
                        lines.line_col_near(p.start as usize, &mut hint);
                    let (end_line, end_column) = lines.line_col_near(p.end as usize, &mut hint);
                    last = Some(*p);
                    Span {
                        file: Arc::clone(file),
                        start_line,
                        start_column,
                        end_line,
                        end_column,
                    }
                }
            };
            spans.push(Some(span));
        }
        let param_defaults = if f.param_defaults.iter().any(Option::is_some) {
            Some(f.param_defaults.clone())
        } else {
            None
        };
        Ok(Function {
            id: self.fi as u32,
            name: f.name.clone(),
            param_count: f.params.len() as u32,
            local_count: self.next_local,
            instructions: self.code,
            spans,
            param_defaults,
        })
    }

    fn block(&mut self, stmts: &'m [Stmt]) -> Result<(), FrontendError> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn store_top(&mut self, loc: Loc) -> Result<(), FrontendError> {
        match loc {
            Loc::Local(s) => {
                self.emit(Instruction::StoreLocal { local: s });
            }
            _ => {
                let (env, i) = self.env_local(loc)?;
                let t = self.temp();
                self.emit(Instruction::StoreLocal { local: t });
                self.emit(Instruction::LoadLocal { local: env });
                self.emit(Instruction::LoadLocal { local: t });
                self.emit(Instruction::EnvSet { index: i });
                self.release(t);
            }
        }
        Ok(())
    }

    fn stmt(&mut self, s: &'m Stmt) -> Result<(), FrontendError> {
        let saved = self.pos;
        self.pos = s.pos;
        match &s.kind {
            StmtKind::Expr(e) => {
                self.expr(e)?;
                self.pos = s.pos;
                self.emit(Instruction::Pop);
            }
            StmtKind::Assign(v, e) => {
                let loc = self.loc(*v)?;
                match loc {
                    Loc::Local(slot) => {
                        self.expr(e)?;
                        self.pos = s.pos;
                        self.emit(Instruction::StoreLocal { local: slot });
                    }
                    _ => {
                        let (env, i) = self.env_local(loc)?;
                        self.emit(Instruction::LoadLocal { local: env });
                        self.expr(e)?;
                        self.pos = s.pos;
                        self.emit(Instruction::EnvSet { index: i });
                    }
                }
            }
            StmtKind::SetProp(o, k, v) => {
                self.expr(o)?;
                self.expr(v)?;
                self.pos = s.pos;
                self.emit(Instruction::SetProp { key: k.clone() });
                self.emit(Instruction::Pop);
            }
            StmtKind::SetIndex(c, i, v) => {
                self.expr(c)?;
                self.expr(i)?;
                self.expr(v)?;
                self.pos = s.pos;
                self.emit(Instruction::SetIndex);
                self.emit(Instruction::Pop);
            }
            StmtKind::Push(a, v) => {
                self.expr(a)?;
                self.expr(v)?;
                self.pos = s.pos;
                self.emit(Instruction::ArrayPush);
                self.emit(Instruction::Pop);
            }
            StmtKind::If(c, t, e) => {
                self.truthy(c)?;
                self.pos = s.pos;
                let jf = self.emit(Instruction::JumpIfFalse { target: 0 });
                self.block(t)?;
                if e.is_empty() {
                    let end = self.pc();
                    self.patch(jf, end);
                } else {
                    self.pos = s.pos;
                    let j = self.emit(Instruction::Jump { target: 0 });
                    let other = self.pc();
                    self.patch(jf, other);
                    self.block(e)?;
                    let end = self.pc();
                    self.patch(j, end);
                }
            }
            StmtKind::Loop { cond, body, update } => {
                let top = self.pc();
                let mut jf = None;
                if let Some(c) = cond {
                    self.truthy(c)?;
                    self.pos = s.pos;
                    jf = Some(self.emit(Instruction::JumpIfFalse { target: 0 }));
                }
                self.ctx.push(Ctx::Loop {
                    breaks: Vec::new(),
                    continues: Vec::new(),
                });
                self.block(body)?;
                let cont = self.pc();
                // `update` runs inside the loop: a do-while's exit test is a
                // `break` there.
                self.block(update)?;
                let Some(Ctx::Loop { breaks, continues }) = self.ctx.pop() else {
                    return Err(internal("loop context lost", s.pos));
                };
                self.pos = s.pos;
                self.emit(Instruction::Jump { target: top });
                let end = self.pc();
                if let Some(j) = jf {
                    self.patch(j, end);
                }
                for b in breaks {
                    self.patch(b, end);
                }
                for c in continues {
                    self.patch(c, cont);
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                let is_break = matches!(s.kind, StmtKind::Break);
                let target = self.ctx.iter().rposition(|c| {
                    matches!(c, Ctx::Loop { .. }) || (is_break && matches!(c, Ctx::Switch { .. }))
                });
                let Some(at) = target else {
                    return Err(FrontendError::new(
                        Code::BadControl,
                        "`break`/`continue` outside a loop",
                        s.pos,
                    ));
                };
                self.unwind_to(at + 1)?;
                self.pos = s.pos;
                let j = self.emit(Instruction::Jump { target: 0 });
                match self.ctx.get_mut(at) {
                    Some(Ctx::Loop { breaks, .. }) | Some(Ctx::Switch { breaks }) if is_break => {
                        breaks.push(j)
                    }
                    Some(Ctx::Loop { continues, .. }) => continues.push(j),
                    _ => return Err(internal("jump context lost", s.pos)),
                }
            }
            StmtKind::Return(e) => {
                let has_try = self.ctx.iter().any(|c| matches!(c, Ctx::Try { .. }));
                if has_try {
                    let t = self.temp();
                    match e {
                        Some(e) => self.expr(e)?,
                        None => self.load_implicit(),
                    }
                    self.pos = s.pos;
                    self.emit(Instruction::StoreLocal { local: t });
                    self.unwind_to(0)?;
                    self.pos = s.pos;
                    self.emit(Instruction::LoadLocal { local: t });
                    self.release(t);
                } else {
                    match e {
                        Some(e) => self.expr(e)?,
                        None => self.load_implicit(),
                    }
                }
                self.pos = s.pos;
                self.emit(Instruction::Return);
            }
            StmtKind::Throw(e) => {
                self.expr(e)?;
                self.pos = s.pos;
                self.emit(Instruction::Throw);
            }
            StmtKind::Try {
                body,
                catch,
                finally,
            } => self.try_stmt(s.pos, body, catch, finally)?,
            StmtKind::Block(b) => self.block(b)?,
            StmtKind::Switch(b) => {
                self.ctx.push(Ctx::Switch { breaks: Vec::new() });
                self.block(b)?;
                let Some(Ctx::Switch { breaks }) = self.ctx.pop() else {
                    return Err(internal("switch context lost", s.pos));
                };
                let end = self.pc();
                for j in breaks {
                    self.patch(j, end);
                }
            }
        }
        self.pos = saved;
        Ok(())
    }

    fn load_implicit(&mut self) {
        let value = self.m.funcs[self.fi].implicit_return.clone();
        self.emit(Instruction::LoadConst { value });
    }

    /// Leaves every `try` above context depth `depth`: pops its handler and
    /// runs its finally code (compiled with only the outer contexts active).
    fn unwind_to(&mut self, depth: usize) -> Result<(), FrontendError> {
        let mut i = self.ctx.len();
        while i > depth {
            i -= 1;
            let (finally, handler) = match &self.ctx[i] {
                Ctx::Try { finally, handler } => (*finally, *handler),
                Ctx::Loop { .. } | Ctx::Switch { .. } => continue,
            };
            if handler {
                self.emit(Instruction::PopTry);
            }
            if let Some(body) = finally {
                let above = self.ctx.split_off(i);
                let r = self.block(body);
                self.ctx.extend(above);
                r?;
            }
        }
        Ok(())
    }

    fn try_stmt(
        &mut self,
        pos: Pos,
        body: &'m [Stmt],
        catch: &'m Option<(Option<VarRef>, Vec<Stmt>)>,
        finally: &'m Option<Vec<Stmt>>,
    ) -> Result<(), FrontendError> {
        let fin = finally.as_deref();
        if catch.is_none() && fin.is_none() {
            return self.block(body);
        }
        let push = self.emit(Instruction::PushTry {
            catch: 0,
            finally: None,
        });
        self.ctx.push(Ctx::Try {
            finally: fin,
            handler: true,
        });
        self.block(body)?;
        self.ctx.pop();
        self.pos = pos;
        self.emit(Instruction::PopTry);
        if let Some(f) = fin {
            self.block(f)?;
            self.pos = pos;
        }
        let mut ends = vec![self.emit(Instruction::Jump { target: 0 })];
        let handler = self.pc();
        self.patch(push, handler);
        match catch {
            Some((var, cbody)) => {
                match var {
                    Some(v) => {
                        let loc = self.loc(*v)?;
                        self.store_top(loc)?;
                    }
                    None => {
                        self.emit(Instruction::Pop);
                    }
                }
                let inner = if fin.is_some() {
                    let p = self.emit(Instruction::PushTry {
                        catch: 0,
                        finally: None,
                    });
                    self.ctx.push(Ctx::Try {
                        finally: fin,
                        handler: true,
                    });
                    Some(p)
                } else {
                    None
                };
                self.block(cbody)?;
                self.pos = pos;
                if let (Some(p), Some(f)) = (inner, fin) {
                    self.ctx.pop();
                    self.emit(Instruction::PopTry);
                    self.block(f)?;
                    self.pos = pos;
                    ends.push(self.emit(Instruction::Jump { target: 0 }));
                    let h = self.pc();
                    self.patch(p, h);
                    self.rethrow_after(f, pos)?;
                }
            }
            None => {
                if let Some(f) = fin {
                    self.rethrow_after(f, pos)?;
                }
            }
        }
        let end = self.pc();
        for j in ends {
            self.patch(j, end);
        }
        Ok(())
    }

    /// At a handler with the thrown value on the stack: run `f`, rethrow.
    fn rethrow_after(&mut self, f: &'m [Stmt], pos: Pos) -> Result<(), FrontendError> {
        let t = self.temp();
        self.emit(Instruction::StoreLocal { local: t });
        self.block(f)?;
        self.pos = pos;
        self.emit(Instruction::LoadLocal { local: t });
        self.emit(Instruction::Throw);
        self.release(t);
        Ok(())
    }

    /// Pushes a value whose engine truthiness is the source language's.
    fn truthy(&mut self, e: &'m Expr) -> Result<(), FrontendError> {
        self.expr(e)?;
        if self.py && !e.is_scalar() {
            self.pos = e.pos;
            let t = self.temp();
            self.emit(Instruction::StoreLocal { local: t });
            self.py_truth_of(t);
            self.release(t);
        }
        Ok(())
    }

    /// Python truthiness of local `t`: an empty list or dict is false.
    fn py_truth_of(&mut self, t: u32) {
        self.emit(Instruction::LoadLocal { local: t });
        self.emit(Instruction::NewArray);
        self.emit(Instruction::StrictEq);
        let a = self.emit(Instruction::JumpIfTrue { target: 0 });
        self.emit(Instruction::LoadLocal { local: t });
        self.emit(Instruction::NewObject);
        self.emit(Instruction::StrictEq);
        let b = self.emit(Instruction::JumpIfTrue { target: 0 });
        self.emit(Instruction::LoadLocal { local: t });
        let j = self.emit(Instruction::Jump { target: 0 });
        let f = self.pc();
        self.patch(a, f);
        self.patch(b, f);
        self.emit(Instruction::LoadConst {
            value: Constant::Bool(false),
        });
        let end = self.pc();
        self.patch(j, end);
    }

    fn expr(&mut self, e: &'m Expr) -> Result<(), FrontendError> {
        let saved = self.pos;
        self.pos = e.pos;
        match &e.kind {
            ExprKind::Const(c) => {
                self.emit(Instruction::LoadConst { value: c.clone() });
            }
            ExprKind::Var(v) => match self.loc(*v)? {
                Loc::Local(s) => {
                    self.emit(Instruction::LoadLocal { local: s });
                }
                loc => {
                    let (env, i) = self.env_local(loc)?;
                    self.emit(Instruction::LoadLocal { local: env });
                    self.emit(Instruction::EnvGet { index: i });
                }
            },
            ExprKind::Func(f) => {
                self.emit(Instruction::LoadFunc { func: *f as u32 });
            }
            ExprKind::Closure(c) => {
                let free = &self.m.funcs[*c].free;
                for &v in free {
                    let (env, i) = self.env_local(self.loc(v)?)?;
                    self.emit(Instruction::LoadLocal { local: env });
                    self.emit(Instruction::EnvSlot { index: i });
                }
                self.emit(Instruction::NewEnv {
                    count: free.len() as u32,
                });
                self.emit(Instruction::NewClosure { func: *c as u32 });
            }
            ExprKind::Array(items) => {
                self.emit(Instruction::NewArray);
                for it in items {
                    self.expr(it)?;
                    self.pos = e.pos;
                    self.emit(Instruction::ArrayPush);
                }
            }
            ExprKind::Object(items) => {
                self.emit(Instruction::NewObject);
                for (k, v) in items {
                    self.expr(v)?;
                    self.pos = e.pos;
                    self.emit(Instruction::SetProp { key: k.clone() });
                }
            }
            ExprKind::GetProp(o, k) => {
                self.expr(o)?;
                self.pos = e.pos;
                self.emit(Instruction::GetProp { key: k.clone() });
            }
            ExprKind::Index(c, i) => {
                self.expr(c)?;
                self.expr(i)?;
                self.pos = e.pos;
                self.emit(Instruction::GetIndex);
            }
            ExprKind::Length(x) => {
                self.expr(x)?;
                self.pos = e.pos;
                self.emit(Instruction::Length);
            }
            ExprKind::Bin(op, a, b) => {
                self.expr(a)?;
                self.expr(b)?;
                self.pos = e.pos;
                self.emit(match op {
                    BinOp::Add => Instruction::Add,
                    BinOp::Sub => Instruction::Sub,
                    BinOp::Mul => Instruction::Mul,
                    BinOp::Div => Instruction::Div,
                    BinOp::Rem => Instruction::Rem,
                    BinOp::Pow => Instruction::Pow,
                    BinOp::FloorDiv => Instruction::FloorDiv,
                    BinOp::Lt => Instruction::Lt,
                    BinOp::Le => Instruction::Le,
                    BinOp::Gt => Instruction::Gt,
                    BinOp::Ge => Instruction::Ge,
                    BinOp::Eq => Instruction::StrictEq,
                    BinOp::Neq => Instruction::StrictNeq,
                    BinOp::Same => Instruction::Same,
                });
            }
            ExprKind::Neg(x) => {
                self.expr(x)?;
                self.pos = e.pos;
                self.emit(Instruction::Neg);
            }
            ExprKind::Not(x) => {
                self.truthy(x)?;
                self.pos = e.pos;
                self.emit(Instruction::Not);
            }
            ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                let t = self.temp();
                self.expr(a)?;
                self.pos = e.pos;
                self.emit(Instruction::StoreLocal { local: t });
                if self.py && !a.is_scalar() {
                    self.py_truth_of(t);
                } else {
                    self.emit(Instruction::LoadLocal { local: t });
                }
                let j = if matches!(e.kind, ExprKind::And(..)) {
                    self.emit(Instruction::JumpIfFalse { target: 0 })
                } else {
                    self.emit(Instruction::JumpIfTrue { target: 0 })
                };
                self.expr(b)?;
                self.pos = e.pos;
                self.emit(Instruction::StoreLocal { local: t });
                let end = self.pc();
                self.patch(j, end);
                self.emit(Instruction::LoadLocal { local: t });
                self.release(t);
            }
            ExprKind::Cond(c, a, b) => {
                self.truthy(c)?;
                self.pos = e.pos;
                let jf = self.emit(Instruction::JumpIfFalse { target: 0 });
                self.expr(a)?;
                self.pos = e.pos;
                let j = self.emit(Instruction::Jump { target: 0 });
                let other = self.pc();
                self.patch(jf, other);
                self.expr(b)?;
                let end = self.pc();
                self.patch(j, end);
            }
            ExprKind::Call(f, args) => {
                self.expr(f)?;
                for a in args {
                    self.expr(a)?;
                }
                self.pos = e.pos;
                self.emit(Instruction::CallClosure {
                    argc: args.len() as u32,
                });
            }
            ExprKind::Durable(d) => self.durable(d, e.pos)?,
            ExprKind::Let(var, value, body) => {
                let loc = self.loc(*var)?;
                self.expr(value)?;
                self.pos = e.pos;
                self.store_top(loc)?;
                self.expr(body)?;
            }
            ExprKind::Raise(v) => {
                self.expr(v)?;
                self.pos = e.pos;
                self.emit(Instruction::Throw);
            }
        }
        self.pos = saved;
        Ok(())
    }

    /// Pushes a durable call's name (effect key, event name, program name):
    /// a string constant is loaded at the call's position `pos` (the code of
    /// a literal name is what it always was), any other expression is
    /// evaluated.
    fn durable_name(&mut self, name: &'m Expr, pos: Pos) -> Result<(), FrontendError> {
        if let ExprKind::Const(c) = &name.kind {
            self.pos = pos;
            self.emit(Instruction::LoadConst { value: c.clone() });
        } else {
            self.expr(name)?;
            self.pos = pos;
        }
        Ok(())
    }

    /// Pushes `operands` and then `name` (the order the durable instruction
    /// pops them in), evaluating them in source order: a name that is not
    /// [`Expr::is_simple`] is evaluated first into a temporary.
    fn name_over(
        &mut self,
        name: &'m Expr,
        operands: &'m [Expr],
        pos: Pos,
    ) -> Result<(), FrontendError> {
        if name.is_simple() || operands.is_empty() {
            for a in operands {
                self.expr(a)?;
            }
            self.pos = pos;
            return self.durable_name(name, pos);
        }
        self.durable_name(name, pos)?;
        let t = self.temp();
        self.emit(Instruction::StoreLocal { local: t });
        for a in operands {
            self.expr(a)?;
        }
        self.pos = pos;
        self.emit(Instruction::LoadLocal { local: t });
        self.release(t);
        Ok(())
    }

    fn durable(&mut self, d: &'m Durable, pos: Pos) -> Result<(), FrontendError> {
        match d {
            Durable::Effect(key) => {
                self.durable_name(key, pos)?;
                self.emit(Instruction::Effect { has_input: false });
            }
            Durable::Wait(name) => {
                self.durable_name(name, pos)?;
                self.emit(Instruction::WaitForEvent);
            }
            Durable::Sleep(ms) => {
                self.expr(ms)?;
                self.pos = pos;
                self.emit(Instruction::Sleep);
            }
            Durable::Invoke(name, args) => {
                self.name_over(name, args, pos)?;
                self.emit(Instruction::Invoke {
                    arg_count: args.len() as u32,
                });
            }
            Durable::EffectInput(key, input) => {
                self.name_over(key, std::slice::from_ref(input), pos)?;
                self.emit(Instruction::Effect { has_input: true });
            }
            Durable::Gather(branches) | Durable::Race(branches) => {
                let fork = self.emit(Instruction::Fork {
                    count: branches.len() as u32,
                    join_pc: 0,
                });
                for b in branches {
                    self.expr(b)?;
                }
                self.pos = pos;
                let join = if matches!(d, Durable::Gather(_)) {
                    self.emit(Instruction::JoinAll)
                } else {
                    self.emit(Instruction::JoinAny)
                };
                self.patch(fork, join as u32);
            }
        }
        Ok(())
    }
}
