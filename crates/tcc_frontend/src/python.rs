//! Python (`py.subset.v1`) → HIR, with `rustpython-parser`.
//!
//! Scoping follows Python: a name assigned anywhere in a function (or a
//! parameter, `for` target, `except … as` name, nested `def`) is local to it
//! unless declared `nonlocal`; other names resolve in the enclosing
//! functions, then to top-level functions, imported primitives and the few
//! builtins the subset knows (`len`, `range`, exception classes).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use rustpython_parser::ast::{self, Constant as PyConst, Expr as PE, Ranged, Stmt as PS};
use rustpython_parser::text_size::TextRange;
use rustpython_parser::{Mode, parse};
use tcc_ir::Constant;

use crate::error::{Code, FrontendError};
use crate::hir::*;
use crate::lowering::{
    DurableArgs, FnScope, Global, IndexLoop, Lowering, durable_call, increment, string_name,
};
use crate::primitives::{Prim, number_literal};

/// Module names whose imports are the durable primitives.
pub const PRIMITIVE_MODULES: [&str; 3] = ["tcc_engine.primitives", "irkit.tcc", "trigora"];

const EXCEPTIONS: [&str; 8] = [
    "Exception",
    "BaseException",
    "ValueError",
    "RuntimeError",
    "TypeError",
    "KeyError",
    "IndexError",
    "ZeroDivisionError",
];

fn pos(r: TextRange) -> Pos {
    Pos {
        start: u32::from(r.start()),
        end: u32::from(r.end()),
    }
}

fn err(code: Code, message: impl Into<String>, r: TextRange) -> FrontendError {
    FrontendError::new(code, message, pos(r))
}

fn unsupported(what: &str, r: TextRange) -> FrontendError {
    err(
        Code::Unsupported,
        format!("{what} is not supported in the Python subset"),
        r,
    )
}

struct Scope {
    func: FuncIdx,
    names: HashMap<String, usize>,
    nonlocals: HashSet<String>,
    definite: HashSet<usize>,
    nesting: u32,
    excepts: Vec<VarRef>,
}

enum Name {
    Var(VarRef),
    Const(Constant),
    Func(FuncIdx),
    Prim(Prim),
    Builtin(&'static str),
}

struct Lower {
    cx: Lowering<Scope>,
}

impl FnScope for Scope {
    fn func(&self) -> FuncIdx {
        self.func
    }
}

impl AsMut<Lowering<Scope>> for Lower {
    fn as_mut(&mut self) -> &mut Lowering<Scope> {
        &mut self.cx
    }
}

/// Parses only (benchmark baseline).
pub fn parse_only(source: &str) -> Result<(), FrontendError> {
    parse_module(source, "bench.py").map(drop)
}

fn parse_module(source: &str, file: &str) -> Result<ast::Mod, FrontendError> {
    parse(source, Mode::Module, file).map_err(|e| {
        FrontendError::new(
            Code::Syntax,
            format!("syntax error: {}", e.error),
            Pos {
                start: u32::from(e.offset),
                end: u32::from(e.offset),
            },
        )
    })
}

/// Parses and lowers a Python source file.
pub fn lower(source: &str, file: &str) -> Result<Module, FrontendError> {
    let parsed = parse_module(source, file)?;
    let ast::Mod::Module(m) = parsed else {
        return Err(FrontendError::new(
            Code::Syntax,
            "not a module",
            Pos::default(),
        ));
    };
    let mut l = Lower {
        cx: Lowering::new(),
    };
    l.module_body(&m.body, source.len())?;
    Ok(l.cx.module)
}

fn assigned_names(
    stmts: &[PS],
    out: &mut Vec<(String, TextRange)>,
    nonlocal: &mut Vec<(String, TextRange)>,
) {
    fn target(e: &PE, out: &mut Vec<(String, TextRange)>) {
        match e {
            PE::Name(n) => out.push((n.id.to_string(), n.range)),
            PE::Tuple(t) => t.elts.iter().for_each(|x| target(x, out)),
            PE::List(t) => t.elts.iter().for_each(|x| target(x, out)),
            _ => {}
        }
    }
    for s in stmts {
        match s {
            PS::Assign(a) => a.targets.iter().for_each(|t| target(t, out)),
            PS::AugAssign(a) => target(&a.target, out),
            PS::AnnAssign(a) => target(&a.target, out),
            PS::For(f) => {
                target(&f.target, out);
                assigned_names(&f.body, out, nonlocal);
                assigned_names(&f.orelse, out, nonlocal);
            }
            PS::While(w) => {
                assigned_names(&w.body, out, nonlocal);
                assigned_names(&w.orelse, out, nonlocal);
            }
            PS::If(i) => {
                assigned_names(&i.body, out, nonlocal);
                assigned_names(&i.orelse, out, nonlocal);
            }
            PS::Try(t) => {
                assigned_names(&t.body, out, nonlocal);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        out.push((n.to_string(), h.range));
                    }
                    assigned_names(&h.body, out, nonlocal);
                }
                assigned_names(&t.orelse, out, nonlocal);
                assigned_names(&t.finalbody, out, nonlocal);
            }
            PS::FunctionDef(f) => out.push((f.name.to_string(), f.range)),
            PS::Nonlocal(n) => n
                .names
                .iter()
                .for_each(|x| nonlocal.push((x.to_string(), n.range))),
            _ => {}
        }
    }
}

fn constant_value(e: &PE) -> Result<Option<Constant>, FrontendError> {
    match e {
        PE::Constant(c) => match &c.value {
            PyConst::None => Ok(Some(Constant::Null)),
            PyConst::Bool(b) => Ok(Some(Constant::Bool(*b))),
            PyConst::Str(s) => Ok(Some(Constant::String(s.clone()))),
            PyConst::Float(f) => Ok(Some(Constant::Number(*f))),
            PyConst::Int(i) => {
                let text = i.to_string();
                match number_literal(&text) {
                    Some(n) => Ok(Some(Constant::Number(n))),
                    None => Err(err(
                        Code::InexactNumber,
                        format!("integer {text} is not exactly representable as a binary64 number"),
                        c.range,
                    )),
                }
            }
            _ => Err(unsupported(
                "this literal (bytes, complex, ellipsis)",
                c.range,
            )),
        },
        PE::UnaryOp(u) if matches!(u.op, ast::UnaryOp::USub) => match constant_value(&u.operand)? {
            // An int has no negative zero: `-0` is 0, `-0.0` is -0.0.
            Some(Constant::Number(n)) if n == 0.0 && is_int_literal(&u.operand) => {
                Ok(Some(Constant::Number(0.0)))
            }
            Some(Constant::Number(n)) => Ok(Some(Constant::Number(-n))),
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

fn is_int_literal(e: &PE) -> bool {
    matches!(e, PE::Constant(c) if matches!(c.value, PyConst::Int(_)))
}

fn is_collection_literal(e: &PE) -> bool {
    matches!(
        e,
        PE::List(_) | PE::Dict(_) | PE::Tuple(_) | PE::ListComp(_) | PE::DictComp(_) | PE::Set(_)
    )
}

impl Lower {
    /// Whether `f` is decorated with `@program` (the primitive, under any
    /// imported name, or the bare name `program`).
    fn is_program(&self, f: &ast::StmtAsyncFunctionDef) -> bool {
        f.decorator_list.iter().any(|d| {
            matches!(d, PE::Name(n) if n.id.as_str() == "program"
                || self.cx.prims.get(n.id.as_str()) == Some(&Prim::Program))
        })
    }

    /// The entry among the top-level `async def`s: the one decorated with
    /// `@program` (the reference's rule), else the only one. Any other
    /// `async def` is refused, naming it and the entry.
    fn entry_of<'a>(
        &self,
        async_defs: &[&'a ast::StmtAsyncFunctionDef],
    ) -> Result<Option<&'a ast::StmtAsyncFunctionDef>, FrontendError> {
        let marked: Vec<_> = async_defs.iter().filter(|f| self.is_program(f)).collect();
        if let [first, second, ..] = marked.as_slice() {
            return Err(err(
                Code::Entry,
                format!(
                    "a second `@program` entry (`{}`); the program has one entry, `{}`",
                    second.name, first.name
                ),
                second.range,
            ));
        }
        let entry = match marked.first() {
            Some(f) => **f,
            None => match async_defs.first() {
                Some(f) => *f,
                None => return Ok(None),
            },
        };
        if let Some(other) = async_defs.iter().find(|f| !std::ptr::eq(**f, entry)) {
            let why = if marked.is_empty() {
                "the program has one `async def` entry"
            } else {
                "only the `@program` entry is `async`"
            };
            return Err(err(
                Code::Entry,
                format!(
                    "`{}` is an `async def` but the entry is `{}`: {why}; helpers are plain `def` functions",
                    other.name, entry.name
                ),
                other.range,
            ));
        }
        Ok(Some(entry))
    }

    fn module_body(&mut self, body: &[PS], len: usize) -> Result<(), FrontendError> {
        let mut async_defs: Vec<&ast::StmtAsyncFunctionDef> = Vec::new();
        let mut helpers: Vec<&ast::StmtFunctionDef> = Vec::new();
        for (i, s) in body.iter().enumerate() {
            match s {
                PS::ImportFrom(imp) => {
                    let module = imp
                        .module
                        .as_ref()
                        .map(|m| m.to_string())
                        .unwrap_or_default();
                    let level = imp.level.as_ref().map_or(0, |l| l.to_u32());
                    if level != 0 || !PRIMITIVE_MODULES.contains(&module.as_str()) {
                        return Err(err(
                            Code::Import,
                            format!(
                                "only the durable primitives can be imported (from {}); `{module}` is outside the subset",
                                PRIMITIVE_MODULES[0]
                            ),
                            imp.range,
                        ));
                    }
                    for a in &imp.names {
                        let Some(p) = Prim::from_python(a.name.as_str()) else {
                            return Err(err(
                                Code::Import,
                                format!("`{}` is not a durable primitive of {module}", a.name),
                                a.range,
                            ));
                        };
                        let local = a.asname.as_ref().unwrap_or(&a.name).to_string();
                        self.cx.prims.insert(local, p);
                    }
                }
                PS::Import(imp) => {
                    return Err(err(
                        Code::Import,
                        format!(
                            "use `from {} import …`; other imports are outside the subset",
                            PRIMITIVE_MODULES[0]
                        ),
                        imp.range,
                    ));
                }
                PS::AsyncFunctionDef(f) => async_defs.push(f),
                PS::FunctionDef(f) => helpers.push(f),
                PS::ClassDef(c) => {
                    return Err(err(
                        Code::Class,
                        "classes are not supported in the Python subset",
                        c.range,
                    ));
                }
                PS::Expr(e)
                    if i == 0
                        && matches!(&*e.value, PE::Constant(c) if matches!(c.value, PyConst::Str(_))) =>
                    {}
                PS::Pass(_) => {}
                PS::Assign(a) if a.targets.len() == 1 && matches!(&a.targets[0], PE::Name(_)) => {
                    // A module-level constant: inlined where it is read.
                    let (PE::Name(n), Some(c)) = (&a.targets[0], constant_value(&a.value)?) else {
                        return Err(unsupported(
                            "a module-level assignment other than `NAME = literal`",
                            a.range,
                        ));
                    };
                    if self.cx.consts.insert(n.id.to_string(), c).is_some() {
                        return Err(err(
                            Code::Unsupported,
                            format!("module-level `{}` is assigned twice", n.id),
                            a.range,
                        ));
                    }
                }
                other => {
                    return Err(err(
                        Code::Unsupported,
                        "only imports, function definitions and constants (`NAME = literal`) may appear at module level",
                        stmt_range(other),
                    ));
                }
            }
        }
        let entry = self.entry_of(&async_defs)?;
        let Some(entry) = entry else {
            return Err(FrontendError::new(
                Code::Entry,
                "no entry function: the program needs one top-level `async def` (e.g. `async def run():`)",
                Pos {
                    start: len as u32,
                    end: len as u32,
                },
            ));
        };
        let entry_name = entry.name.to_string();
        let mut seen: HashSet<String> = HashSet::default();
        seen.insert(entry_name.clone());
        self.cx.module.funcs.push(Func::default());
        self.cx.top.insert(entry_name, 0);
        for h in &helpers {
            let name = h.name.to_string();
            if !seen.insert(name.clone()) || self.cx.prims.contains_key(&name) {
                return Err(err(
                    Code::Unsupported,
                    format!("`{name}` is defined twice at module level"),
                    h.range,
                ));
            }
            self.cx.top.insert(name, self.cx.module.funcs.len());
            self.cx.module.funcs.push(Func::default());
        }
        self.cx.module.entry = 0;
        if !entry.decorator_list.is_empty()
            && !entry.decorator_list.iter().all(|d| matches!(d, PE::Name(n) if n.id.as_str() == "program" || self.cx.prims.get(n.id.as_str()) == Some(&Prim::Program)))
        {
            return Err(unsupported("a decorator other than `@program`", entry.range));
        }
        self.function(
            0,
            None,
            entry.name.as_str(),
            &entry.args,
            &entry.body,
            entry.range,
        )?;
        for (k, h) in helpers.iter().enumerate() {
            if !h.decorator_list.is_empty() {
                return Err(unsupported("decorators", h.range));
            }
            self.function(k + 1, None, h.name.as_str(), &h.args, &h.body, h.range)?;
        }
        Ok(())
    }

    fn function(
        &mut self,
        idx: FuncIdx,
        parent: Option<FuncIdx>,
        name: &str,
        args: &ast::Arguments,
        body: &[PS],
        range: TextRange,
    ) -> Result<(), FrontendError> {
        if !args.posonlyargs.is_empty()
            || args.vararg.is_some()
            || !args.kwonlyargs.is_empty()
            || args.kwarg.is_some()
        {
            return Err(unsupported(
                "`*args`, `**kwargs`, keyword-only and positional-only parameters",
                range,
            ));
        }
        let mut f = Func {
            name: name.to_string(),
            parent,
            pos: pos(range),
            implicit_return: Constant::Null,
            ..Func::default()
        };
        let mut names = HashMap::default();
        let mut definite = HashSet::default();
        for a in &args.args {
            let n = a.def.arg.to_string();
            if names.contains_key(&n) {
                return Err(err(
                    Code::Unsupported,
                    format!("duplicate parameter `{n}`"),
                    a.def.range,
                ));
            }
            let default = match &a.default {
                None => None,
                Some(d) => match constant_value(d)? {
                    Some(c) => Some(c),
                    None => {
                        return Err(unsupported(
                            "a parameter default that is not a constant",
                            d.range(),
                        ));
                    }
                },
            };
            if default.is_none() && f.param_defaults.iter().any(Option::is_some) {
                return Err(err(
                    Code::Syntax,
                    "parameter without a default follows one with a default",
                    a.def.range,
                ));
            }
            names.insert(n.clone(), f.vars.len());
            definite.insert(f.vars.len());
            f.params.push(f.vars.len());
            f.param_defaults.push(default);
            f.vars.push(Var {
                name: n,
                captured: false,
            });
        }
        let mut assigned = Vec::new();
        let mut nonlocal = Vec::new();
        assigned_names(body, &mut assigned, &mut nonlocal);
        let nonlocals: HashSet<String> = nonlocal.iter().map(|(n, _)| n.clone()).collect();
        for (n, r) in &nonlocal {
            if names.contains_key(n) {
                return Err(err(
                    Code::Syntax,
                    format!("`{n}` is a parameter and nonlocal"),
                    *r,
                ));
            }
            if !self.cx.scopes.iter().any(|s| s.names.contains_key(n)) {
                return Err(err(
                    Code::UnknownName,
                    format!("no binding for nonlocal `{n}` in an enclosing function"),
                    *r,
                ));
            }
        }
        for (n, _) in assigned {
            if !names.contains_key(&n) && !nonlocals.contains(&n) {
                names.insert(n.clone(), f.vars.len());
                f.vars.push(Var {
                    name: n,
                    captured: false,
                });
            }
        }
        let scope = Scope {
            func: idx,
            names,
            nonlocals,
            definite,
            nesting: 0,
            excepts: Vec::new(),
        };
        Lowering::function_in(self, idx, f, scope, |l| l.block(body))
    }

    fn resolve(&mut self, name: &str, r: TextRange) -> Result<Name, FrontendError> {
        let top = self.cx.scopes.len() - 1;
        let cur = &self.cx.scopes[top];
        if !cur.nonlocals.contains(name)
            && let Some(&v) = cur.names.get(name)
        {
            return Ok(Name::Var(VarRef {
                func: cur.func,
                var: v,
            }));
        }
        for s in (0..top).rev() {
            if let Some(&v) = self.cx.scopes[s].names.get(name) {
                return Ok(Name::Var(self.cx.capture(s, v)));
            }
        }
        match self.cx.global(name) {
            Some(Global::Const(c)) => return Ok(Name::Const(c)),
            Some(Global::Func(f)) => return Ok(Name::Func(f)),
            Some(Global::Prim(p)) => return Ok(Name::Prim(p)),
            None => {}
        }
        for b in ["len", "range"].into_iter().chain(EXCEPTIONS) {
            if b == name {
                return Ok(Name::Builtin(b));
            }
        }
        Err(err(Code::UnknownName, format!("unknown name `{name}`"), r))
    }

    fn var_target(&mut self, name: &str, r: TextRange) -> Result<VarRef, FrontendError> {
        match self.resolve(name, r)? {
            Name::Var(v) => Ok(v),
            _ => Err(err(
                Code::BadAssignment,
                format!("cannot assign to `{name}`"),
                r,
            )),
        }
    }

    fn note_assigned(&mut self, v: VarRef) {
        let s = self.cx.cur_mut();
        if v.func == s.func && s.nesting == 0 {
            s.definite.insert(v.var);
        }
    }

    fn block(&mut self, stmts: &[PS]) -> Result<Vec<Stmt>, FrontendError> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            self.cx.enter(pos(stmt_range(s)))?;
            let r = self.stmt(s, &mut out);
            self.cx.leave();
            r?;
        }
        Ok(out)
    }

    fn nested_block(&mut self, stmts: &[PS]) -> Result<Vec<Stmt>, FrontendError> {
        self.cx.cur_mut().nesting += 1;
        let r = self.block(stmts);
        self.cx.cur_mut().nesting -= 1;
        r
    }

    fn condition(&mut self, e: &PE) -> Result<Expr, FrontendError> {
        if is_collection_literal(e) {
            return Err(err(
                Code::CollectionTruthiness,
                "a collection used as a condition (compare its length instead, e.g. `len(xs) > 0`)",
                e.range(),
            ));
        }
        self.expr(e)
    }

    fn stmt(&mut self, s: &PS, out: &mut Vec<Stmt>) -> Result<(), FrontendError> {
        let p = pos(stmt_range(s));
        let st = |kind| Stmt { kind, pos: p };
        match s {
            PS::Expr(e) => {
                if let PE::Call(c) = &*e.value
                    && let PE::Attribute(a) = &*c.func
                    && a.attr.as_str() == "append"
                {
                    if c.args.len() != 1 || !c.keywords.is_empty() {
                        return Err(err(
                            Code::Call,
                            "`append` takes exactly one argument",
                            c.range,
                        ));
                    }
                    let target = self.expr(&a.value)?;
                    let v = self.expr(&c.args[0])?;
                    out.push(st(StmtKind::Push(target, v)));
                    return Ok(());
                }
                if let PE::Constant(c) = &*e.value
                    && matches!(c.value, PyConst::Str(_))
                {
                    return Ok(());
                }
                let v = self.expr(&e.value)?;
                out.push(st(StmtKind::Expr(v)));
            }
            PS::Assign(a) => {
                if a.targets.len() != 1 {
                    return Err(unsupported("chained assignment `a = b = …`", a.range));
                }
                let v = self.expr(&a.value)?;
                self.assign(&a.targets[0], v, p, out)?;
            }
            PS::AnnAssign(a) => {
                let Some(value) = &a.value else {
                    return Err(unsupported("an annotation without a value", a.range));
                };
                let v = self.expr(value)?;
                self.assign(&a.target, v, p, out)?;
            }
            PS::AugAssign(a) => {
                let op = binop(&a.op, a.range)?;
                match &*a.target {
                    PE::Name(n) => {
                        let cur = self.load_name(n.id.as_str(), n.range)?;
                        let v = self.expr(&a.value)?;
                        let var = self.var_target(n.id.as_str(), n.range)?;
                        let e = Expr {
                            kind: ExprKind::Bin(op, Box::new(cur), Box::new(v)),
                            pos: p,
                        };
                        out.push(st(StmtKind::Assign(var, e)));
                    }
                    PE::Subscript(sub) => {
                        let c = self.expr(&sub.value)?;
                        let i = self.index_expr(&sub.slice)?;
                        let tc = self.cx.hidden("collection");
                        let ti = self.cx.hidden("index");
                        out.push(st(StmtKind::Assign(tc, c)));
                        out.push(st(StmtKind::Assign(ti, i)));
                        let var = |v: VarRef| Expr {
                            kind: ExprKind::Var(v),
                            pos: p,
                        };
                        let old = Expr {
                            kind: ExprKind::Index(Box::new(var(tc)), Box::new(var(ti))),
                            pos: p,
                        };
                        let v = self.expr(&a.value)?;
                        let new = Expr {
                            kind: ExprKind::Bin(op, Box::new(old), Box::new(v)),
                            pos: p,
                        };
                        out.push(st(StmtKind::SetIndex(var(tc), var(ti), new)));
                    }
                    other => {
                        return Err(err(
                            Code::BadAssignment,
                            "cannot assign to this target",
                            other.range(),
                        ));
                    }
                }
            }
            PS::If(i) => {
                let c = self.condition(&i.test)?;
                let t = self.nested_block(&i.body)?;
                let e = self.nested_block(&i.orelse)?;
                out.push(st(StmtKind::If(c, t, e)));
            }
            PS::While(w) => {
                if !w.orelse.is_empty() {
                    return Err(unsupported("`while … else`", w.range));
                }
                let c = self.condition(&w.test)?;
                let body = self.nested_block(&w.body)?;
                out.push(st(StmtKind::Loop {
                    cond: Some(c),
                    body,
                    update: Vec::new(),
                }));
            }
            PS::For(f) => self.for_stmt(f, p, out)?,
            PS::Break(_) => out.push(st(StmtKind::Break)),
            PS::Continue(_) => out.push(st(StmtKind::Continue)),
            PS::Pass(_) => {}
            PS::Return(r) => {
                let v = match &r.value {
                    Some(v) => Some(self.expr(v)?),
                    None => None,
                };
                out.push(st(StmtKind::Return(v)));
            }
            PS::Raise(r) => {
                if r.cause.is_some() {
                    return Err(unsupported("`raise … from …`", r.range));
                }
                let value = match &r.exc {
                    None => match self.cx.cur().excepts.last() {
                        Some(&v) => Expr {
                            kind: ExprKind::Var(v),
                            pos: p,
                        },
                        None => {
                            return Err(err(
                                Code::BadControl,
                                "bare `raise` outside an `except` block",
                                r.range,
                            ));
                        }
                    },
                    Some(e) => self.raised(e)?,
                };
                out.push(st(StmtKind::Throw(value)));
            }
            PS::Try(t) => {
                if !t.orelse.is_empty() {
                    return Err(unsupported("`try … else`", t.range));
                }
                if t.handlers.len() > 1 {
                    return Err(unsupported("more than one `except` clause", t.range));
                }
                let body = self.nested_block(&t.body)?;
                let catch = match t.handlers.first() {
                    None => None,
                    Some(ast::ExceptHandler::ExceptHandler(h)) => {
                        if let Some(ty) = &h.type_ {
                            let ok = matches!(&**ty, PE::Name(n) if matches!(n.id.as_str(), "Exception" | "BaseException")
                                && matches!(self.resolve(n.id.as_str(), n.range), Ok(Name::Builtin(_))));
                            if !ok {
                                return Err(err(
                                    Code::Unsupported,
                                    "only `except Exception` (or a bare `except`) is supported: thrown values carry no class",
                                    ty.range(),
                                ));
                            }
                        }
                        let var = match &h.name {
                            Some(n) => self.var_target(n.as_str(), h.range)?,
                            None => self.cx.hidden("exception"),
                        };
                        self.cx.cur_mut().excepts.push(var);
                        let r = self.nested_block(&h.body);
                        self.cx.cur_mut().excepts.pop();
                        Some((Some(var), r?))
                    }
                };
                let finally = if t.finalbody.is_empty() {
                    None
                } else {
                    Some(self.nested_block(&t.finalbody)?)
                };
                out.push(st(StmtKind::Try {
                    body,
                    catch,
                    finally,
                }));
            }
            PS::FunctionDef(f) => {
                if !f.decorator_list.is_empty() {
                    return Err(unsupported("decorators", f.range));
                }
                let var = self.var_target(f.name.as_str(), f.range)?;
                let idx = self.cx.module.funcs.len();
                self.cx.module.funcs.push(Func::default());
                let parent = self.cx.cur().func;
                self.function(
                    idx,
                    Some(parent),
                    f.name.as_str(),
                    &f.args,
                    &f.body,
                    f.range,
                )?;
                self.note_assigned(var);
                out.push(st(StmtKind::Assign(
                    var,
                    Expr {
                        kind: ExprKind::Closure(idx),
                        pos: p,
                    },
                )));
            }
            PS::Nonlocal(_) => {}
            PS::Assert(a) => {
                let c = self.condition(&a.test)?;
                let msg = match &a.msg {
                    Some(m) => self.expr(m)?,
                    None => Expr::constant(Constant::String("AssertionError".into()), p),
                };
                let fail = vec![Stmt {
                    kind: StmtKind::Throw(msg),
                    pos: p,
                }];
                out.push(st(StmtKind::If(
                    Expr {
                        kind: ExprKind::Not(Box::new(c)),
                        pos: p,
                    },
                    fail,
                    Vec::new(),
                )));
            }
            PS::AsyncFunctionDef(f) => return Err(unsupported("a nested `async def`", f.range)),
            PS::ClassDef(c) => {
                return Err(err(
                    Code::Class,
                    "classes are not supported in the Python subset",
                    c.range,
                ));
            }
            PS::Import(i) => {
                return Err(err(
                    Code::Import,
                    "imports are only allowed at module level",
                    i.range,
                ));
            }
            PS::ImportFrom(i) => {
                return Err(err(
                    Code::Import,
                    "imports are only allowed at module level",
                    i.range,
                ));
            }
            PS::Global(g) => return Err(unsupported("`global`", g.range)),
            other => return Err(unsupported(stmt_name(other), stmt_range(other))),
        }
        Ok(())
    }

    fn raised(&mut self, e: &PE) -> Result<Expr, FrontendError> {
        if let PE::Call(c) = e
            && let PE::Name(n) = &*c.func
            && matches!(self.resolve(n.id.as_str(), n.range), Ok(Name::Builtin(b)) if EXCEPTIONS.contains(&b))
        {
            if c.args.len() != 1 || !c.keywords.is_empty() {
                return Err(err(
                    Code::Call,
                    "raise an exception with exactly one argument, its message",
                    c.range,
                ));
            }
            return self.expr(&c.args[0]);
        }
        Err(unsupported(
            "raising something other than `Exception(message)`",
            e.range(),
        ))
    }

    fn assign(
        &mut self,
        target: &PE,
        v: Expr,
        p: Pos,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        let st = |kind| Stmt { kind, pos: p };
        match target {
            PE::Name(n) => {
                let var = self.var_target(n.id.as_str(), n.range)?;
                self.note_assigned(var);
                out.push(st(StmtKind::Assign(var, v)));
            }
            PE::Subscript(s) => {
                let c = self.expr(&s.value)?;
                let i = self.index_expr(&s.slice)?;
                out.push(st(StmtKind::SetIndex(c, i, v)));
            }
            PE::Tuple(ast::ExprTuple { elts, .. }) | PE::List(ast::ExprList { elts, .. }) => {
                let t = self.cx.hidden("unpack");
                out.push(st(StmtKind::Assign(t, v)));
                let var = |v: VarRef| Expr {
                    kind: ExprKind::Var(v),
                    pos: p,
                };
                let n = elts.len() as f64;
                let wrong = Expr {
                    kind: ExprKind::Bin(
                        BinOp::Neq,
                        Box::new(Expr {
                            kind: ExprKind::Length(Box::new(var(t))),
                            pos: p,
                        }),
                        Box::new(Expr::constant(Constant::Number(n), p)),
                    ),
                    pos: p,
                };
                let raise = Stmt {
                    kind: StmtKind::Throw(Expr::constant(
                        Constant::String(format!(
                            "ValueError: expected {} values to unpack",
                            elts.len()
                        )),
                        p,
                    )),
                    pos: p,
                };
                out.push(st(StmtKind::If(wrong, vec![raise], Vec::new())));
                for (k, el) in elts.iter().enumerate() {
                    let item = Expr {
                        kind: ExprKind::Index(
                            Box::new(var(t)),
                            Box::new(Expr::constant(Constant::Number(k as f64), p)),
                        ),
                        pos: p,
                    };
                    match el {
                        PE::Name(_) => self.assign(el, item, p, out)?,
                        other => {
                            return Err(unsupported("nested or starred unpacking", other.range()));
                        }
                    }
                }
            }
            PE::Attribute(a) => {
                return Err(unsupported(
                    "attribute assignment (use `d[\"key\"] = …`)",
                    a.range,
                ));
            }
            other => {
                return Err(err(
                    Code::BadAssignment,
                    "cannot assign to this target",
                    other.range(),
                ));
            }
        }
        Ok(())
    }

    fn for_stmt(
        &mut self,
        f: &ast::StmtFor,
        p: Pos,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        if !f.orelse.is_empty() {
            return Err(unsupported("`for … else`", f.range));
        }
        let PE::Name(tn) = &*f.target else {
            return Err(unsupported(
                "a `for` target other than a single name",
                f.target.range(),
            ));
        };
        let st = |kind| Stmt { kind, pos: p };
        let var = |v: VarRef| Expr {
            kind: ExprKind::Var(v),
            pos: p,
        };
        let target = self.var_target(tn.id.as_str(), tn.range)?;
        if let PE::Call(c) = &*f.iter
            && let PE::Name(n) = &*c.func
            && matches!(
                self.resolve(n.id.as_str(), n.range),
                Ok(Name::Builtin("range"))
            )
        {
            if !c.keywords.is_empty() || c.args.is_empty() || c.args.len() > 3 {
                return Err(err(
                    Code::Call,
                    "`range` takes one to three positional arguments",
                    c.range,
                ));
            }
            let (start, stop) = if c.args.len() == 1 {
                (
                    Expr::constant(Constant::Number(0.0), p),
                    self.expr(&c.args[0])?,
                )
            } else {
                (self.expr(&c.args[0])?, self.expr(&c.args[1])?)
            };
            let step = match c.args.get(2) {
                None => 1.0,
                Some(s) => match constant_value(s)? {
                    Some(Constant::Number(n)) if n != 0.0 && n.fract() == 0.0 => n,
                    _ => {
                        return Err(unsupported(
                            "a `range` step that is not a non-zero integer literal",
                            s.range(),
                        ));
                    }
                },
            };
            let ti = self.cx.hidden("range_i");
            let tstop = self.cx.hidden("range_stop");
            for (t, e) in [(ti, start), (tstop, stop)] {
                let exact =
                    matches!(&e.kind, ExprKind::Const(Constant::Number(n)) if n.fract() == 0.0);
                out.push(st(StmtKind::Assign(t, e)));
                if !exact {
                    out.push(integer_check(t, p));
                }
            }
            let cmp = if step > 0.0 { BinOp::Lt } else { BinOp::Gt };
            let cond = Expr {
                kind: ExprKind::Bin(cmp, Box::new(var(ti)), Box::new(var(tstop))),
                pos: p,
            };
            let mut body = vec![
                st(StmtKind::Assign(target, var(ti))),
                increment(ti, step, p),
            ];
            body.extend(self.nested_block(&f.body)?);
            out.push(st(StmtKind::Loop {
                cond: Some(cond),
                body,
                update: Vec::new(),
            }));
            return Ok(());
        }
        if matches!(&*f.iter, PE::Dict(_)) {
            return Err(unsupported("iterating over a dict", f.iter.range()));
        }
        let seq = self.expr(&f.iter)?;
        let lp = IndexLoop {
            seq: self.cx.hidden("for_seq"),
            index: self.cx.hidden("for_i"),
            pos: p,
        };
        out.extend(lp.init(seq));
        let mut body = lp.step(target);
        body.extend(self.nested_block(&f.body)?);
        out.push(lp.looped(body));
        Ok(())
    }

    fn load_name(&mut self, name: &str, r: TextRange) -> Result<Expr, FrontendError> {
        let p = pos(r);
        match self.resolve(name, r)? {
            Name::Var(v) => {
                let e = Expr {
                    kind: ExprKind::Var(v),
                    pos: p,
                };
                let s = self.cx.cur();
                if v.func == s.func && s.definite.contains(&v.var) {
                    Ok(e)
                } else {
                    Ok(unbound_check(e, name, p))
                }
            }
            Name::Func(f) => Ok(Expr {
                kind: ExprKind::Func(f),
                pos: p,
            }),
            Name::Const(c) => Ok(Expr::constant(c, p)),
            Name::Prim(_) => Err(err(
                Code::Await,
                format!("durable primitive `{name}` must be called and awaited"),
                r,
            )),
            Name::Builtin(b) => Err(unsupported(&format!("using builtin `{b}` as a value"), r)),
        }
    }

    fn index_expr(&mut self, e: &PE) -> Result<Expr, FrontendError> {
        if let PE::Slice(s) = e {
            return Err(unsupported("slices", s.range));
        }
        self.expr(e)
    }

    fn expr(&mut self, e: &PE) -> Result<Expr, FrontendError> {
        self.cx.enter(pos(e.range()))?;
        let r = self.expr_inner(e);
        self.cx.leave();
        r
    }

    fn expr_inner(&mut self, e: &PE) -> Result<Expr, FrontendError> {
        let p = pos(e.range());
        let mk = |kind| Expr { kind, pos: p };
        if let Some(c) = constant_value(e)? {
            return Ok(mk(ExprKind::Const(c)));
        }
        Ok(match e {
            PE::Name(n) => self.load_name(n.id.as_str(), n.range)?,
            PE::List(l) => {
                let items = l
                    .elts
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<_, _>>()?;
                mk(ExprKind::Array(items))
            }
            PE::Dict(d) => {
                let mut items = Vec::with_capacity(d.values.len());
                for (k, v) in d.keys.iter().zip(&d.values) {
                    let key = match k {
                        Some(PE::Constant(c)) => match &c.value {
                            PyConst::Str(s) => s.clone(),
                            _ => {
                                return Err(unsupported(
                                    "a dict key that is not a string literal",
                                    c.range,
                                ));
                            }
                        },
                        Some(other) => {
                            return Err(unsupported(
                                "a dict key that is not a string literal",
                                other.range(),
                            ));
                        }
                        None => return Err(unsupported("`**` in a dict literal", v.range())),
                    };
                    if items.iter().any(|(k2, _): &(String, Expr)| *k2 == key) {
                        return Err(unsupported(
                            "a repeated key in a dict literal",
                            k.as_ref().map_or(d.range, |k| k.range()),
                        ));
                    }
                    items.push((key, self.expr(v)?));
                }
                mk(ExprKind::Object(items))
            }
            PE::BinOp(b) => {
                if matches!(b.op, ast::Operator::Mod)
                    && matches!(&*b.left, PE::Constant(c) if matches!(c.value, PyConst::Str(_)))
                {
                    return Err(unsupported("printf-style `%` formatting", b.range));
                }
                let op = binop(&b.op, b.range)?;
                let l = self.expr(&b.left)?;
                let r = self.expr(&b.right)?;
                mk(ExprKind::Bin(op, Box::new(l), Box::new(r)))
            }
            PE::UnaryOp(u) => match u.op {
                ast::UnaryOp::Not => {
                    let x = self.condition(&u.operand)?;
                    mk(ExprKind::Not(Box::new(x)))
                }
                ast::UnaryOp::USub => {
                    // `0 - x` rather than `Neg`: the engine's Python `Neg`
                    // refuses bools (CPython's `-True` is -1), and CPython's
                    // `-0` of an int is 0. Values are binary64 here, so the
                    // one loss is `-(0.0)`, which gives 0.0 instead of -0.0.
                    let x = self.expr(&u.operand)?;
                    let zero = Expr::constant(Constant::Number(0.0), p);
                    mk(ExprKind::Bin(BinOp::Sub, Box::new(zero), Box::new(x)))
                }
                _ => return Err(unsupported("unary `+` and `~`", u.range)),
            },
            PE::BoolOp(b) => {
                let mut vals = Vec::with_capacity(b.values.len());
                for v in &b.values {
                    vals.push(self.condition(v)?);
                }
                let mut acc = vals
                    .pop()
                    .ok_or_else(|| unsupported("an empty boolean operation", b.range))?;
                while let Some(prev) = vals.pop() {
                    acc = match b.op {
                        ast::BoolOp::And => mk(ExprKind::And(Box::new(prev), Box::new(acc))),
                        ast::BoolOp::Or => mk(ExprKind::Or(Box::new(prev), Box::new(acc))),
                    };
                }
                acc
            }
            PE::Compare(c) => {
                // `a < b < c` is `a < b and b < c` with `b` evaluated once.
                let mut left = self.expr(&c.left)?;
                let mut parts = Vec::with_capacity(c.ops.len());
                for (k, (op, right)) in c.ops.iter().zip(&c.comparators).enumerate() {
                    let mut r = self.expr(right)?;
                    let mut next = None;
                    if k + 1 < c.ops.len() {
                        let t = self.cx.hidden("chain");
                        let rp = r.pos;
                        let var = Expr {
                            kind: ExprKind::Var(t),
                            pos: rp,
                        };
                        r = Expr {
                            kind: ExprKind::Let(t, Box::new(r), Box::new(var.clone())),
                            pos: rp,
                        };
                        next = Some(var);
                    }
                    parts.push(compare(op, left, r, c.range)?);
                    match next {
                        Some(n) => left = n,
                        None => break,
                    }
                }
                let mut acc = parts
                    .pop()
                    .ok_or_else(|| unsupported("an empty comparison", c.range))?;
                while let Some(prev) = parts.pop() {
                    acc = mk(ExprKind::And(Box::new(prev), Box::new(acc)));
                }
                acc
            }
            PE::IfExp(i) => {
                let c = self.condition(&i.test)?;
                let a = self.expr(&i.body)?;
                let b = self.expr(&i.orelse)?;
                mk(ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)))
            }
            PE::Subscript(s) => {
                let c = self.expr(&s.value)?;
                let i = self.index_expr(&s.slice)?;
                mk(ExprKind::Index(Box::new(c), Box::new(i)))
            }
            PE::Call(c) => self.call(c)?,
            PE::Await(a) => self.await_expr(a)?,
            PE::Lambda(l) => {
                let idx = self.cx.module.funcs.len();
                self.cx.module.funcs.push(Func::default());
                let parent = self.cx.cur().func;
                let ret = PS::Return(ast::StmtReturn {
                    range: l.body.range(),
                    value: Some(l.body.clone()),
                });
                self.function(
                    idx,
                    Some(parent),
                    "<lambda>",
                    &l.args,
                    std::slice::from_ref(&ret),
                    l.range,
                )?;
                mk(ExprKind::Closure(idx))
            }
            PE::Attribute(a) => {
                return Err(unsupported(
                    "attribute access (use `d[\"key\"]` for dict entries)",
                    a.range,
                ));
            }
            PE::JoinedStr(j) => self.f_string(j)?,
            PE::Tuple(t) => return Err(unsupported("tuples (use a list)", t.range)),
            PE::Constant(c) => return Err(unsupported("this literal", c.range)),
            other => return Err(unsupported(expr_name(other), other.range())),
        })
    }

    /// An f-string: its parts joined with `+` from the left, starting from
    /// `""`, so each `{value}` must be a string at run time (the engine's
    /// Python `+` joins two strings only; a number is a fatal type error,
    /// never a different text). Conversions other than `!s` and format
    /// specifications are refused.
    fn f_string(&mut self, j: &ast::ExprJoinedStr) -> Result<Expr, FrontendError> {
        let p = pos(j.range);
        let mut acc = Expr::constant(Constant::String(String::new()), p);
        for part in &j.values {
            let piece = match part {
                PE::FormattedValue(f) => {
                    if f.format_spec.is_some() {
                        return Err(unsupported("an f-string format specification", f.range));
                    }
                    if !matches!(
                        f.conversion,
                        ast::ConversionFlag::None | ast::ConversionFlag::Str
                    ) {
                        return Err(unsupported(
                            "an f-string conversion other than `!s`",
                            f.range,
                        ));
                    }
                    self.expr(&f.value)?
                }
                other => self.expr(other)?,
            };
            acc = match (&acc.kind, &piece.kind) {
                (ExprKind::Const(Constant::String(a)), ExprKind::Const(Constant::String(b))) => {
                    Expr::constant(Constant::String(format!("{a}{b}")), p)
                }
                _ => Expr {
                    kind: ExprKind::Bin(BinOp::Add, Box::new(acc), Box::new(piece)),
                    pos: p,
                },
            };
        }
        Ok(acc)
    }

    fn call(&mut self, c: &ast::ExprCall) -> Result<Expr, FrontendError> {
        let p = pos(c.range);
        if !c.keywords.is_empty() {
            return Err(err(
                Code::Call,
                "keyword arguments are not supported",
                c.range,
            ));
        }
        if c.args.iter().any(|a| matches!(a, PE::Starred(_))) {
            return Err(err(Code::Call, "`*` arguments are not supported", c.range));
        }
        if let PE::Name(n) = &*c.func {
            match self.resolve(n.id.as_str(), n.range)? {
                Name::Prim(Prim::Program) => return Err(unsupported("calling `program`", c.range)),
                Name::Prim(_) if self.cx.cur().func != self.cx.module.entry => {
                    return Err(err(
                        Code::DurableOutsideEntry,
                        "durable operations are only allowed in the entry function",
                        c.range,
                    ));
                }
                Name::Prim(_) => {
                    return Err(err(
                        Code::Await,
                        format!("durable operation `{}` must be awaited directly", n.id),
                        c.range,
                    ));
                }
                Name::Builtin("len") => {
                    if c.args.len() != 1 {
                        return Err(err(Code::Call, "`len` takes exactly one argument", c.range));
                    }
                    let x = self.expr(&c.args[0])?;
                    return Ok(Expr {
                        kind: ExprKind::Length(Box::new(x)),
                        pos: p,
                    });
                }
                Name::Builtin(b) => {
                    return Err(unsupported(&format!("calling `{b}` here"), c.range));
                }
                Name::Func(f) => {
                    let func = &self.cx.module.funcs[f];
                    // Arity of a top-level function is checked here when its
                    // parameters are known (it was lowered already or is the
                    // current chain); the engine checks every call anyway.
                    if !func.params.is_empty() || f == 0 {
                        let max = func.params.len();
                        let min = func.param_defaults.iter().filter(|d| d.is_none()).count();
                        if (c.args.len() < min || c.args.len() > max) && !func.name.is_empty() {
                            return Err(err(
                                Code::Call,
                                format!(
                                    "`{}` takes {min}..={max} arguments, {} given",
                                    n.id,
                                    c.args.len()
                                ),
                                c.range,
                            ));
                        }
                    }
                    if f == self.cx.module.entry {
                        return Err(unsupported("calling the entry function", c.range));
                    }
                }
                Name::Var(_) | Name::Const(_) => {}
            }
        }
        if let PE::Attribute(a) = &*c.func {
            if a.attr.as_str() == "append" {
                return Err(unsupported(
                    "`append` inside an expression (use it as a statement)",
                    c.range,
                ));
            }
            return Err(unsupported(&format!("method `.{}()`", a.attr), c.range));
        }
        let f = self.expr(&c.func)?;
        let args = c
            .args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<_, _>>()?;
        Ok(Expr {
            kind: ExprKind::Call(Box::new(f), args),
            pos: p,
        })
    }

    fn prim_call<'a>(
        &mut self,
        e: &'a PE,
    ) -> Result<Option<(Prim, &'a ast::ExprCall)>, FrontendError> {
        if let PE::Call(c) = e
            && let PE::Name(n) = &*c.func
            && let Name::Prim(p) = self.resolve(n.id.as_str(), n.range)?
        {
            return Ok(Some((p, c)));
        }
        Ok(None)
    }

    fn durable(
        &mut self,
        prim: Prim,
        c: &ast::ExprCall,
        in_group: bool,
    ) -> Result<Expr, FrontendError> {
        let p = pos(c.range);
        self.cx.require_entry(p)?;
        let input_keyword = |k: &ast::Keyword| {
            prim == Prim::Effect && k.arg.as_ref().is_some_and(|a| a.as_str() == "input")
        };
        if c.keywords.iter().any(|k| !input_keyword(k))
            || c.keywords.len() > 1
            || c.args.iter().any(|a| matches!(a, PE::Starred(_)))
        {
            return Err(err(
                Code::Call,
                "keyword and `*` arguments are not supported (except `effect(KEY, input=VALUE)`)",
                c.range,
            ));
        }
        if let Some(e) = durable_call(prim, &mut PyArgs { l: self, c }, "wait_for_event", p)? {
            return Ok(e);
        }
        let d = match prim {
            Prim::Gather | Prim::Race => {
                if in_group {
                    return Err(err(
                        Code::Concurrency,
                        "`gather`/`race` cannot be nested",
                        c.range,
                    ));
                }
                if c.args.is_empty() || c.args.len() > 32 {
                    return Err(err(
                        Code::Concurrency,
                        "`gather`/`race` take 1 to 32 branches",
                        c.range,
                    ));
                }
                let mut branches = Vec::with_capacity(c.args.len());
                for a in &c.args {
                    match self.prim_call(a)? {
                        Some((bp, bc))
                            if !matches!(bp, Prim::Gather | Prim::Race | Prim::Program) =>
                        {
                            branches.push(self.durable(bp, bc, true)?)
                        }
                        _ => {
                            return Err(err(
                                Code::Concurrency,
                                "each branch must be a direct (not awaited) call of effect, wait_for_event, sleep or invoke",
                                a.range(),
                            ));
                        }
                    }
                }
                if prim == Prim::Gather {
                    Durable::Gather(branches)
                } else {
                    Durable::Race(branches)
                }
            }
            Prim::Program => return Err(unsupported("calling `program`", c.range)),
            Prim::Effect | Prim::WaitForEvent | Prim::Sleep | Prim::Invoke => {
                return Err(internal_prim(c.range));
            }
        };
        Ok(Expr {
            kind: ExprKind::Durable(d),
            pos: p,
        })
    }

    fn await_expr(&mut self, a: &ast::ExprAwait) -> Result<Expr, FrontendError> {
        match self.prim_call(&a.value)? {
            Some((prim, c)) => {
                let mut e = self.durable(prim, c, false)?;
                e.pos = pos(a.range);
                Ok(e)
            }
            None => Err(err(
                Code::Await,
                "only durable primitives can be awaited",
                a.range,
            )),
        }
    }
}

/// A Python call's arguments for [`durable_call`].
struct PyArgs<'l, 'c> {
    l: &'l mut Lower,
    c: &'c ast::ExprCall,
}

impl DurableArgs for PyArgs<'_, '_> {
    fn len(&self) -> usize {
        self.c.args.len()
    }

    fn name(&mut self, what: &str) -> Result<Expr, FrontendError> {
        match self.c.args.first() {
            Some(a) => string_name(what, self.l.expr(a)?),
            None => Err(err(Code::Call, format!("missing the {what}"), self.c.range)),
        }
    }

    fn effect_input(&mut self) -> Result<Option<Expr>, FrontendError> {
        if self.c.args.len() > 2 {
            return Err(err(
                Code::Call,
                "`effect` takes a key, an optional callback and an optional `input=`",
                self.c.range,
            ));
        }
        if let Some(cb) = self.c.args.get(1)
            && !matches!(cb, PE::Name(_) | PE::Lambda(_))
        {
            return Err(unsupported(
                "an effect callback other than a name or a lambda (pass data with `input=`)",
                cb.range(),
            ));
        }
        match self.c.keywords.first() {
            Some(k) => Ok(Some(self.l.expr(&k.value)?)),
            None => Ok(None),
        }
    }

    fn expr(&mut self, i: usize) -> Result<Expr, FrontendError> {
        match self.c.args.get(i) {
            Some(a) => self.l.expr(a),
            None => Err(internal_prim(self.c.range)),
        }
    }
}

fn internal_prim(r: TextRange) -> FrontendError {
    err(
        Code::Internal,
        "internal frontend error: durable call lowered twice",
        r,
    )
}

fn integer_check(t: VarRef, p: Pos) -> Stmt {
    let var = Expr {
        kind: ExprKind::Var(t),
        pos: p,
    };
    let floored = Expr {
        kind: ExprKind::Bin(
            BinOp::FloorDiv,
            Box::new(var.clone()),
            Box::new(Expr::constant(Constant::Number(1.0), p)),
        ),
        pos: p,
    };
    let bad = Expr {
        kind: ExprKind::Bin(BinOp::Neq, Box::new(floored), Box::new(var)),
        pos: p,
    };
    Stmt {
        kind: StmtKind::If(
            bad,
            vec![Stmt {
                kind: StmtKind::Throw(Expr::constant(
                    Constant::String("TypeError: range() needs integer arguments".into()),
                    p,
                )),
                pos: p,
            }],
            Vec::new(),
        ),
        pos: p,
    }
}

/// Reads of a variable that may be unassigned raise, as CPython does.
fn unbound_check(e: Expr, name: &str, p: Pos) -> Expr {
    let is_undefined = Expr {
        kind: ExprKind::Bin(
            BinOp::Same,
            Box::new(e.clone()),
            Box::new(Expr::constant(Constant::Undefined, p)),
        ),
        pos: p,
    };
    let raise = Expr {
        kind: ExprKind::Raise(Box::new(Expr::constant(
            Constant::String(format!(
                "UnboundLocalError: local variable '{name}' referenced before assignment"
            )),
            p,
        ))),
        pos: p,
    };
    Expr {
        kind: ExprKind::Cond(Box::new(is_undefined), Box::new(raise), Box::new(e)),
        pos: p,
    }
}

/// One comparison `l OP r` (Python rules).
fn compare(op: &ast::CmpOp, l: Expr, r: Expr, range: TextRange) -> Result<Expr, FrontendError> {
    let p = pos(range);
    let mk = |kind| Expr { kind, pos: p };
    let (op, negate) = match op {
        ast::CmpOp::Eq => (BinOp::Eq, false),
        ast::CmpOp::NotEq => (BinOp::Neq, false),
        ast::CmpOp::Lt => (BinOp::Lt, false),
        ast::CmpOp::LtE => (BinOp::Le, false),
        ast::CmpOp::Gt => (BinOp::Gt, false),
        ast::CmpOp::GtE => (BinOp::Ge, false),
        ast::CmpOp::Is => (BinOp::Same, false),
        ast::CmpOp::IsNot => (BinOp::Same, true),
        _ => return Err(unsupported("`in` / `not in`", range)),
    };
    let (l, r) = if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
        for side in [&l, &r] {
            if matches!(side.kind, ExprKind::Const(Constant::String(_))) {
                return Err(unsupported("ordering comparison of strings", range));
            }
        }
        (as_number(l), as_number(r))
    } else {
        (l, r)
    };
    let b = mk(ExprKind::Bin(op, Box::new(l), Box::new(r)));
    Ok(if negate {
        mk(ExprKind::Not(Box::new(b)))
    } else {
        b
    })
}

/// CPython orders bools as 1 and 0; the engine's compares take numbers only,
/// so an operand that may be a bool is multiplied by 1 first (numbers are
/// unchanged, other types stay a run-time type error).
fn as_number(e: Expr) -> Expr {
    let numeric = match &e.kind {
        ExprKind::Const(Constant::Number(_)) | ExprKind::Length(_) => true,
        ExprKind::Bin(op, ..) => matches!(
            op,
            BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Div
                | BinOp::Rem
                | BinOp::Pow
                | BinOp::FloorDiv
        ),
        _ => false,
    };
    if numeric {
        return e;
    }
    let p = e.pos;
    Expr {
        kind: ExprKind::Bin(
            BinOp::Mul,
            Box::new(e),
            Box::new(Expr::constant(Constant::Number(1.0), p)),
        ),
        pos: p,
    }
}

fn binop(op: &ast::Operator, r: TextRange) -> Result<BinOp, FrontendError> {
    Ok(match op {
        ast::Operator::Add => BinOp::Add,
        ast::Operator::Sub => BinOp::Sub,
        ast::Operator::Mult => BinOp::Mul,
        ast::Operator::Div => BinOp::Div,
        ast::Operator::FloorDiv => BinOp::FloorDiv,
        ast::Operator::Mod => BinOp::Rem,
        ast::Operator::Pow => BinOp::Pow,
        _ => return Err(unsupported("bitwise and matrix operators", r)),
    })
}

fn stmt_range(s: &PS) -> TextRange {
    s.range()
}

fn stmt_name(s: &PS) -> &'static str {
    match s {
        PS::With(_) | PS::AsyncWith(_) => "`with`",
        PS::Match(_) => "`match`",
        PS::Assert(_) => "`assert`",
        PS::Delete(_) => "`del`",
        PS::AsyncFor(_) => "`async for`",
        PS::TryStar(_) => "`try … except*`",
        _ => "this statement",
    }
}

fn expr_name(e: &PE) -> &'static str {
    match e {
        PE::ListComp(_) | PE::DictComp(_) | PE::SetComp(_) | PE::GeneratorExp(_) => {
            "comprehensions"
        }
        PE::Set(_) => "sets",
        PE::NamedExpr(_) => "`:=`",
        PE::Yield(_) | PE::YieldFrom(_) => "`yield`",
        PE::Starred(_) => "`*` unpacking",
        PE::Slice(_) => "slices",
        PE::FormattedValue(_) => "f-strings",
        _ => "this expression",
    }
}
