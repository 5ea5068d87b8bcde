//! TypeScript (`ts.subset.v1`) → HIR, with `oxc_parser`.
//!
//! `let`/`const` are block scoped: each declaration is its own variable, a
//! name used before its declaration is refused (the temporal dead zone
//! would throw), and function declarations are hoisted to their block.
//! Closures capture variables through cells; a closure capturing a binding
//! declared inside a loop (which JavaScript gives a fresh copy per
//! iteration) is refused. Type annotations and type-only declarations are
//! ignored; they have no run-time meaning.

use rustc_hash::FxHashMap as HashMap;

use oxc_allocator::Allocator;
use oxc_ast::ast::{self as t, Expression as TE, Statement as TS};
use oxc_parser::Parser;
use oxc_span::{SourceType, Span};
use tcc_ir::Constant;

use crate::array_methods::{self, ArrayMethod};
use crate::error::{Code, FrontendError};
use crate::hir::*;
use crate::lowering::{self, DurableArgs, Global, IndexLoop, Lowering, durable_call, string_name};
use crate::primitives::Prim;

/// Module specifiers whose imports are the durable primitives.
pub const PRIMITIVE_MODULES: [&str; 2] = ["@tcc-engine/primitives", "@trigora/sdk"];

fn pos(s: Span) -> Pos {
    Pos {
        start: s.start,
        end: s.end,
    }
}

fn err(code: Code, message: impl Into<String>, s: Span) -> FrontendError {
    FrontendError::new(code, message, pos(s))
}

fn unsupported(what: &str, s: Span) -> FrontendError {
    err(
        Code::Unsupported,
        format!("{what} is not supported in the TypeScript subset"),
        s,
    )
}

#[derive(Clone, Copy)]
struct Binding {
    var: usize,
    declared: bool,
    constant: bool,
    in_loop: bool,
}

struct FnScope {
    func: FuncIdx,
    blocks: Vec<HashMap<String, Binding>>,
    loops: u32,
}

enum Name {
    Var(VarRef, bool),
    Func(FuncIdx),
    Prim(Prim),
    Const(Constant),
    Promise,
}

struct Lower {
    cx: Lowering<FnScope>,
    hoisted: HashMap<u32, FuncIdx>,
    /// The hidden function of each array method used (`array_methods`).
    array_helpers: HashMap<ArrayMethod, FuncIdx>,
}

impl lowering::FnScope for FnScope {
    fn func(&self) -> FuncIdx {
        self.func
    }
}

impl AsMut<Lowering<FnScope>> for Lower {
    fn as_mut(&mut self) -> &mut Lowering<FnScope> {
        &mut self.cx
    }
}

/// Parses only (benchmark baseline).
pub fn parse_only(source: &str) -> Result<(), FrontendError> {
    let alloc = Allocator::default();
    let ret = Parser::new(&alloc, source, SourceType::ts()).parse();
    match ret.diagnostics.errors().next() {
        Some(d) => Err(FrontendError::new(
            Code::Syntax,
            format!("syntax error: {}", d.message),
            Pos::default(),
        )),
        None => Ok(()),
    }
}

/// Parses and lowers a TypeScript source file.
pub fn lower(source: &str, _file: &str) -> Result<Module, FrontendError> {
    let alloc = Allocator::default();
    let ret = Parser::new(&alloc, source, SourceType::ts()).parse();
    if let Some(d) = ret.diagnostics.errors().next() {
        let at = d.labels.first().map_or(0, |l| l.offset());
        return Err(FrontendError::new(
            Code::Syntax,
            format!("syntax error: {}", d.message),
            Pos { start: at, end: at },
        ));
    }
    let mut l = Lower {
        cx: Lowering::new(),
        hoisted: HashMap::default(),
        array_helpers: HashMap::default(),
    };
    l.program(&ret.program, source.len())?;
    Ok(l.cx.module)
}

fn binding_name<'a>(p: &'a t::BindingPattern<'a>) -> Option<&'a t::BindingIdentifier<'a>> {
    match p {
        t::BindingPattern::BindingIdentifier(b) => Some(b),
        _ => None,
    }
}

fn is_type_only(s: &TS) -> bool {
    matches!(
        s,
        TS::TSTypeAliasDeclaration(_) | TS::TSInterfaceDeclaration(_)
    )
}

impl Lower {
    fn program(&mut self, p: &t::Program, len: usize) -> Result<(), FrontendError> {
        let mut entry: Option<&t::Function> = None;
        let mut helpers: Vec<&t::Function> = Vec::new();
        for s in &p.body {
            match s {
                TS::ImportDeclaration(imp) => {
                    let from = imp.source.value.as_str();
                    if !PRIMITIVE_MODULES.contains(&from) {
                        return Err(err(
                            Code::Import,
                            format!(
                                "only the durable primitives can be imported (from \"{}\"); \"{from}\" is outside the subset",
                                PRIMITIVE_MODULES[0]
                            ),
                            imp.span,
                        ));
                    }
                    for sp in imp.specifiers.iter().flatten() {
                        let t::ImportDeclarationSpecifier::ImportSpecifier(sp) = sp else {
                            return Err(err(
                                Code::Import,
                                "import the primitives by name: `import { effect } from …`",
                                imp.span,
                            ));
                        };
                        let imported = match &sp.imported {
                            t::ModuleExportName::IdentifierName(n) => n.name.as_str(),
                            t::ModuleExportName::IdentifierReference(n) => n.name.as_str(),
                            t::ModuleExportName::StringLiteral(s) => s.value.as_str(),
                        };
                        let Some(prim) = Prim::from_typescript(imported) else {
                            return Err(err(
                                Code::Import,
                                format!("`{imported}` is not a durable primitive of {from}"),
                                sp.span,
                            ));
                        };
                        self.cx
                            .prims
                            .insert(sp.local.name.as_str().to_owned(), prim);
                    }
                }
                TS::ExportDefaultDeclaration(d) => match &d.declaration {
                    t::ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                        if !f.r#async || f.generator {
                            return Err(err(
                                Code::Entry,
                                "the default export must be an `async function`",
                                f.span,
                            ));
                        }
                        if entry.is_some() {
                            return Err(err(Code::Entry, "a second default export", d.span));
                        }
                        entry = Some(f);
                    }
                    _ => {
                        return Err(err(
                            Code::Entry,
                            "the default export must be `async function run(…) { … }`",
                            d.span,
                        ));
                    }
                },
                TS::FunctionDeclaration(f) => {
                    if f.r#async || f.generator {
                        return Err(unsupported("async or generator helper functions", f.span));
                    }
                    helpers.push(f);
                }
                TS::ClassDeclaration(c) => {
                    return Err(err(
                        Code::Class,
                        "classes are not supported in the TypeScript subset",
                        c.span,
                    ));
                }
                s if is_type_only(s) => {}
                TS::EmptyStatement(_) => {}
                TS::VariableDeclaration(d) if d.kind == t::VariableDeclarationKind::Const => {
                    // Module-level `const NAME = literal`: inlined where it is read.
                    for decl in &d.declarations {
                        let (Some(id), Some(c)) = (
                            binding_name(&decl.id),
                            decl.init.as_ref().and_then(literal_value),
                        ) else {
                            return Err(unsupported(
                                "a module-level `const` other than `const NAME = literal`",
                                decl.span,
                            ));
                        };
                        let name = id.name.as_str().to_owned();
                        if self.cx.consts.insert(name.clone(), c).is_some() {
                            return Err(err(
                                Code::Syntax,
                                format!("`{name}` is declared twice"),
                                decl.span,
                            ));
                        }
                    }
                }
                other => {
                    return Err(err(
                        Code::Unsupported,
                        "only imports, function declarations, `const NAME = literal` and the default export may appear at module level",
                        stmt_span(other),
                    ));
                }
            }
        }
        let Some(entry) = entry else {
            return Err(FrontendError::new(
                Code::Entry,
                "no entry function: the program needs `export default async function run(…) { … }`",
                Pos {
                    start: len as u32,
                    end: len as u32,
                },
            ));
        };
        self.cx.module.funcs.push(Func::default());
        for h in &helpers {
            let Some(id) = &h.id else {
                return Err(unsupported("an anonymous function declaration", h.span));
            };
            let name = id.name.as_str().to_owned();
            if self.cx.top.contains_key(&name) || self.cx.prims.contains_key(&name) {
                return Err(err(
                    Code::Unsupported,
                    format!("`{name}` is declared twice at module level"),
                    h.span,
                ));
            }
            self.cx.top.insert(name, self.cx.module.funcs.len());
            self.cx.module.funcs.push(Func::default());
        }
        let name = entry
            .id
            .as_ref()
            .map_or("run".to_string(), |i| i.name.as_str().to_owned());
        self.function(
            0,
            None,
            &name,
            &entry.params,
            FnBody::Block(entry.body.as_deref()),
            entry.span,
            true,
        )?;
        for (k, h) in helpers.iter().enumerate() {
            let name =
                h.id.as_ref()
                    .map_or(String::new(), |i| i.name.as_str().to_owned());
            self.function(
                k + 1,
                None,
                &name,
                &h.params,
                FnBody::Block(h.body.as_deref()),
                h.span,
                false,
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn function(
        &mut self,
        idx: FuncIdx,
        parent: Option<FuncIdx>,
        name: &str,
        params: &t::FormalParameters,
        body: FnBody,
        span: Span,
        is_entry: bool,
    ) -> Result<(), FrontendError> {
        if params.rest.is_some() {
            return Err(unsupported("rest parameters", params.span));
        }
        let mut f = Func {
            name: name.to_string(),
            parent,
            pos: pos(span),
            implicit_return: Constant::Undefined,
            ..Func::default()
        };
        let mut block = HashMap::default();
        for p in &params.items {
            let Some(id) = binding_name(&p.pattern) else {
                return Err(unsupported("destructuring parameters", p.span));
            };
            let n = id.name.as_str().to_owned();
            if block.contains_key(&n) {
                return Err(err(
                    Code::Syntax,
                    format!("duplicate parameter `{n}`"),
                    p.span,
                ));
            }
            if is_entry && p.initializer.is_some() {
                return Err(unsupported(
                    "default values on the entry function's parameters",
                    p.span,
                ));
            }
            block.insert(
                n.clone(),
                Binding {
                    var: f.vars.len(),
                    declared: true,
                    constant: false,
                    in_loop: false,
                },
            );
            f.params.push(f.vars.len());
            f.param_defaults.push(None);
            f.vars.push(Var {
                name: n,
                captured: false,
            });
        }
        let scope = FnScope {
            func: idx,
            blocks: vec![block],
            loops: 0,
        };
        Lowering::function_in(self, idx, f, scope, |l| l.function_body(params, body))
    }

    fn function_body(
        &mut self,
        params: &t::FormalParameters,
        body: FnBody,
    ) -> Result<Vec<Stmt>, FrontendError> {
        let mut out = Vec::new();
        for p in &params.items {
            if let (Some(init), Some(id)) = (&p.initializer, binding_name(&p.pattern)) {
                let v = self.var_for_write(id.name.as_str(), id.span, true)?;
                let ps = pos(p.span);
                let cur = Expr {
                    kind: ExprKind::Var(v),
                    pos: ps,
                };
                let missing = Expr {
                    kind: ExprKind::Bin(
                        BinOp::Eq,
                        Box::new(cur),
                        Box::new(Expr::constant(Constant::Undefined, ps)),
                    ),
                    pos: ps,
                };
                let value = self.expr(init)?;
                out.push(Stmt {
                    kind: StmtKind::If(
                        missing,
                        vec![Stmt {
                            kind: StmtKind::Assign(v, value),
                            pos: ps,
                        }],
                        Vec::new(),
                    ),
                    pos: ps,
                });
            }
        }
        match body {
            FnBody::Block(Some(b)) => out.extend(self.statements(&b.statements)?),
            FnBody::Block(None) => {}
            FnBody::Expr(e) => {
                let v = self.expr(e)?;
                let p = v.pos;
                out.push(Stmt {
                    kind: StmtKind::Return(Some(v)),
                    pos: p,
                });
            }
        }
        Ok(out)
    }

    /// Opens a block: its `let`/`const` names (not yet declared) and its
    /// function declarations (hoisted).
    fn open_block(&mut self, stmts: &[TS], out: &mut Vec<Stmt>) -> Result<(), FrontendError> {
        let in_loop = self.cx.cur().loops > 0;
        let mut block = HashMap::default();
        let mut funcs = Vec::new();
        for s in stmts {
            match s {
                TS::VariableDeclaration(d) => {
                    for decl in &d.declarations {
                        let mut names = Vec::new();
                        match &decl.id {
                            t::BindingPattern::BindingIdentifier(b) => {
                                names.push((b.name.as_str().to_owned(), b.span))
                            }
                            t::BindingPattern::ArrayPattern(a) => {
                                for el in a.elements.iter().flatten() {
                                    if let Some(b) = binding_name(el) {
                                        names.push((b.name.as_str().to_owned(), b.span));
                                    }
                                }
                            }
                            _ => {}
                        }
                        for (n, sp) in names {
                            if block.contains_key(&n) {
                                return Err(err(
                                    Code::Syntax,
                                    format!("`{n}` is declared twice in this block"),
                                    sp,
                                ));
                            }
                            let var = self.cx.new_var(n.clone());
                            block.insert(
                                n,
                                Binding {
                                    var,
                                    declared: false,
                                    constant: d.kind == t::VariableDeclarationKind::Const,
                                    in_loop,
                                },
                            );
                        }
                    }
                }
                TS::FunctionDeclaration(f) => {
                    let Some(id) = &f.id else { continue };
                    let n = id.name.as_str().to_owned();
                    if block.contains_key(&n) {
                        return Err(err(
                            Code::Syntax,
                            format!("`{n}` is declared twice in this block"),
                            f.span,
                        ));
                    }
                    let var = self.cx.new_var(n.clone());
                    block.insert(
                        n,
                        Binding {
                            var,
                            declared: true,
                            constant: false,
                            in_loop,
                        },
                    );
                    funcs.push((var, &**f));
                }
                _ => {}
            }
        }
        self.cx.cur_mut().blocks.push(block);
        // The closure is created at the top of the block (hoisting); the
        // body is lowered where the declaration stands, so it sees the
        // bindings declared before it.
        for (var, f) in funcs {
            if f.r#async || f.generator {
                return Err(unsupported("nested async or generator functions", f.span));
            }
            let idx = self.cx.module.funcs.len();
            self.cx.module.funcs.push(Func::default());
            self.hoisted.insert(f.span.start, idx);
            let p = pos(f.span);
            let func = self.cx.cur().func;
            out.push(Stmt {
                kind: StmtKind::Assign(
                    VarRef { func, var },
                    Expr {
                        kind: ExprKind::Closure(idx),
                        pos: p,
                    },
                ),
                pos: p,
            });
        }
        Ok(())
    }

    fn statements(&mut self, stmts: &[TS]) -> Result<Vec<Stmt>, FrontendError> {
        let mut out = Vec::new();
        // A function body gets its own map above the parameters' (in
        // JavaScript they share a level; redeclaring a parameter with `let`
        // is a syntax error there anyway).
        self.open_block(stmts, &mut out)?;
        let r = (|| {
            for s in stmts {
                self.cx.enter(pos(stmt_span(s)))?;
                let r = self.stmt(s, &mut out);
                self.cx.leave();
                r?;
            }
            Ok(())
        })();
        self.cx.cur_mut().blocks.pop();
        r.map(|()| out)
    }

    fn resolve(&mut self, name: &str, s: Span) -> Result<Name, FrontendError> {
        let top = self.cx.scopes.len() - 1;
        for si in (0..=top).rev() {
            let found = self.cx.scopes[si]
                .blocks
                .iter()
                .rev()
                .find_map(|b| b.get(name).copied());
            if let Some(b) = found {
                if !b.declared {
                    return Err(err(
                        Code::BeforeDeclaration,
                        format!("`{name}` is used before its declaration"),
                        s,
                    ));
                }
                if si == top {
                    return Ok(Name::Var(
                        VarRef {
                            func: self.cx.scopes[si].func,
                            var: b.var,
                        },
                        b.constant,
                    ));
                }
                if b.in_loop {
                    return Err(err(
                        Code::LoopCapture,
                        format!(
                            "a closure captures `{name}`, declared inside a loop (a fresh binding per iteration is not supported)"
                        ),
                        s,
                    ));
                }
                return Ok(Name::Var(self.cx.capture(si, b.var), b.constant));
            }
        }
        match self.cx.global(name) {
            Some(Global::Const(c)) => return Ok(Name::Const(c)),
            Some(Global::Func(f)) => return Ok(Name::Func(f)),
            Some(Global::Prim(p)) => return Ok(Name::Prim(p)),
            None => {}
        }
        Ok(match name {
            "undefined" => Name::Const(Constant::Undefined),
            "NaN" => Name::Const(Constant::Number(f64::NAN)),
            "Infinity" => Name::Const(Constant::Number(f64::INFINITY)),
            "Promise" => Name::Promise,
            _ => return Err(err(Code::UnknownName, format!("unknown name `{name}`"), s)),
        })
    }

    fn var_for_write(&mut self, name: &str, s: Span, init: bool) -> Result<VarRef, FrontendError> {
        match self.resolve(name, s)? {
            Name::Var(v, constant) if !constant || init => Ok(v),
            Name::Var(..) => Err(err(
                Code::BadAssignment,
                format!("`{name}` is a `const`"),
                s,
            )),
            _ => Err(err(
                Code::BadAssignment,
                format!("cannot assign to `{name}`"),
                s,
            )),
        }
    }

    fn declare(&mut self, name: &str) {
        let s = self.cx.cur_mut();
        if let Some(b) = s.blocks.last_mut().and_then(|b| b.get_mut(name)) {
            b.declared = true;
        }
    }

    fn body_stmt(&mut self, s: &TS) -> Result<Vec<Stmt>, FrontendError> {
        match s {
            TS::BlockStatement(b) => self.statements(&b.body),
            other => self.statements(std::slice::from_ref(other)),
        }
    }

    fn loop_body(&mut self, s: &TS) -> Result<Vec<Stmt>, FrontendError> {
        self.cx.cur_mut().loops += 1;
        let r = self.body_stmt(s);
        self.cx.cur_mut().loops -= 1;
        r
    }

    fn var_decl(
        &mut self,
        d: &t::VariableDeclaration,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        if !matches!(
            d.kind,
            t::VariableDeclarationKind::Let | t::VariableDeclarationKind::Const
        ) {
            return Err(unsupported("`var` (use `let` or `const`)", d.span));
        }
        for decl in &d.declarations {
            let p = pos(decl.span);
            let value = match &decl.init {
                Some(e) => self.expr(e)?,
                None => Expr::constant(Constant::Undefined, p),
            };
            match &decl.id {
                t::BindingPattern::BindingIdentifier(b) => {
                    self.declare(b.name.as_str());
                    let v = self.var_for_write(b.name.as_str(), b.span, true)?;
                    out.push(Stmt {
                        kind: StmtKind::Assign(v, value),
                        pos: p,
                    });
                }
                t::BindingPattern::ArrayPattern(a) => {
                    if a.rest.is_some() {
                        return Err(unsupported("rest elements in destructuring", a.span));
                    }
                    let tmp = self.cx.hidden("destructure");
                    out.push(Stmt {
                        kind: StmtKind::Assign(tmp, value),
                        pos: p,
                    });
                    for (k, el) in a.elements.iter().enumerate() {
                        let Some(el) = el else { continue };
                        let Some(b) = binding_name(el) else {
                            return Err(unsupported("nested destructuring or defaults", a.span));
                        };
                        self.declare(b.name.as_str());
                        let v = self.var_for_write(b.name.as_str(), b.span, true)?;
                        let item = Expr {
                            kind: ExprKind::Index(
                                Box::new(Expr {
                                    kind: ExprKind::Var(tmp),
                                    pos: p,
                                }),
                                Box::new(Expr::constant(Constant::Number(k as f64), p)),
                            ),
                            pos: p,
                        };
                        out.push(Stmt {
                            kind: StmtKind::Assign(v, item),
                            pos: p,
                        });
                    }
                }
                _ => return Err(unsupported("object destructuring", decl.span)),
            }
        }
        Ok(())
    }

    fn stmt(&mut self, s: &TS, out: &mut Vec<Stmt>) -> Result<(), FrontendError> {
        let p = pos(stmt_span(s));
        let st = |kind| Stmt { kind, pos: p };
        match s {
            TS::VariableDeclaration(d) => self.var_decl(d, out)?,
            TS::FunctionDeclaration(f) => {
                let Some(idx) = self.hoisted.remove(&f.span.start) else {
                    return Err(unsupported("this function declaration", f.span));
                };
                let parent = self.cx.cur().func;
                let name =
                    f.id.as_ref()
                        .map_or(String::new(), |i| i.name.as_str().to_owned());
                self.function(
                    idx,
                    Some(parent),
                    &name,
                    &f.params,
                    FnBody::Block(f.body.as_deref()),
                    f.span,
                    false,
                )?;
            }
            TS::ExpressionStatement(e) => self.expr_stmt(&e.expression, p, out)?,
            TS::IfStatement(i) => {
                let c = self.expr(&i.test)?;
                let a = self.body_stmt(&i.consequent)?;
                let b = match &i.alternate {
                    Some(x) => self.body_stmt(x)?,
                    None => Vec::new(),
                };
                out.push(st(StmtKind::If(c, a, b)));
            }
            TS::WhileStatement(w) => {
                let c = self.expr(&w.test)?;
                let body = self.loop_body(&w.body)?;
                out.push(st(StmtKind::Loop {
                    cond: Some(c),
                    body,
                    update: Vec::new(),
                }));
            }
            TS::DoWhileStatement(w) => {
                let body = self.loop_body(&w.body)?;
                let c = self.expr(&w.test)?;
                let cp = c.pos;
                let stop = Stmt {
                    kind: StmtKind::If(
                        Expr {
                            kind: ExprKind::Not(Box::new(c)),
                            pos: cp,
                        },
                        vec![Stmt {
                            kind: StmtKind::Break,
                            pos: cp,
                        }],
                        Vec::new(),
                    ),
                    pos: cp,
                };
                out.push(st(StmtKind::Loop {
                    cond: None,
                    body,
                    update: vec![stop],
                }));
            }
            TS::ForStatement(f) => {
                let mut header = Vec::new();
                self.cx.cur_mut().loops += 1;
                let mut inner = Vec::new();
                let r = (|| {
                    match &f.init {
                        Some(t::ForStatementInit::VariableDeclaration(d)) => {
                            self.open_decl_block(d)?;
                            self.var_decl(d, &mut header)?;
                        }
                        Some(init) => {
                            self.cx.cur_mut().blocks.push(HashMap::default());
                            if let Some(e) = init.as_expression() {
                                self.expr_stmt(e, p, &mut header)?;
                            }
                        }
                        None => self.cx.cur_mut().blocks.push(HashMap::default()),
                    }
                    let cond = match &f.test {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    };
                    let body = self.body_stmt(&f.body)?;
                    let mut update = Vec::new();
                    if let Some(u) = &f.update {
                        self.expr_stmt(u, p, &mut update)?;
                    }
                    inner.push(st(StmtKind::Loop { cond, body, update }));
                    Ok(())
                })();
                self.cx.cur_mut().blocks.pop();
                self.cx.cur_mut().loops -= 1;
                r?;
                header.extend(inner);
                out.push(st(StmtKind::Block(header)));
            }
            TS::ForOfStatement(f) => {
                if f.r#await {
                    return Err(unsupported("`for await`", f.span));
                }
                let t::ForStatementLeft::VariableDeclaration(d) = &f.left else {
                    return Err(unsupported(
                        "a `for … of` target other than `const x` / `let x`",
                        f.span,
                    ));
                };
                if d.declarations.len() != 1
                    || binding_name(&d.declarations[0].id).is_none()
                    || d.kind == t::VariableDeclarationKind::Var
                {
                    return Err(unsupported(
                        "a `for … of` target other than `const x` / `let x`",
                        d.span,
                    ));
                }
                let seq = self.expr(&f.right)?;
                let lp = IndexLoop {
                    seq: self.cx.hidden("for_seq"),
                    index: self.cx.hidden("for_i"),
                    pos: p,
                };
                let mut stmts = Vec::from(lp.init(seq));
                self.cx.cur_mut().loops += 1;
                let r = (|| {
                    self.open_decl_block(d)?;
                    let Some(b) = binding_name(&d.declarations[0].id) else {
                        return Err(unsupported("this target", d.span));
                    };
                    self.declare(b.name.as_str());
                    let x = self.var_for_write(b.name.as_str(), b.span, true)?;
                    let mut body = lp.step(x);
                    body.extend(self.body_stmt(&f.body)?);
                    Ok(body)
                })();
                self.cx.cur_mut().blocks.pop();
                self.cx.cur_mut().loops -= 1;
                stmts.push(lp.looped(r?));
                out.push(st(StmtKind::Block(stmts)));
            }
            TS::BreakStatement(b) => {
                if b.label.is_some() {
                    return Err(unsupported("labeled `break`", b.span));
                }
                out.push(st(StmtKind::Break));
            }
            TS::ContinueStatement(c) => {
                if c.label.is_some() {
                    return Err(unsupported("labeled `continue`", c.span));
                }
                out.push(st(StmtKind::Continue));
            }
            TS::ReturnStatement(r) => {
                let v = match &r.argument {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                out.push(st(StmtKind::Return(v)));
            }
            TS::ThrowStatement(th) => {
                let v = self.expr(&th.argument)?;
                out.push(st(StmtKind::Throw(v)));
            }
            TS::TryStatement(tr) => {
                let body = self.statements(&tr.block.body)?;
                let catch = match &tr.handler {
                    None => None,
                    Some(h) => {
                        let mut block = HashMap::default();
                        let mut var = None;
                        if let Some(param) = &h.param {
                            let Some(b) = binding_name(&param.pattern) else {
                                return Err(unsupported("destructuring in `catch`", param.span));
                            };
                            let in_loop = self.cx.cur().loops > 0;
                            let v = self.cx.new_var(b.name.as_str().to_owned());
                            block.insert(
                                b.name.as_str().to_owned(),
                                Binding {
                                    var: v,
                                    declared: true,
                                    constant: false,
                                    in_loop,
                                },
                            );
                            var = Some(VarRef {
                                func: self.cx.cur().func,
                                var: v,
                            });
                        }
                        self.cx.cur_mut().blocks.push(block);
                        let r = self.statements(&h.body.body);
                        self.cx.cur_mut().blocks.pop();
                        Some((var, r?))
                    }
                };
                let finally = match &tr.finalizer {
                    Some(f) => Some(self.statements(&f.body)?),
                    None => None,
                };
                out.push(st(StmtKind::Try {
                    body,
                    catch,
                    finally,
                }));
            }
            TS::BlockStatement(b) => {
                let inner = self.statements(&b.body)?;
                out.push(st(StmtKind::Block(inner)));
            }
            TS::EmptyStatement(_) => {}
            TS::ClassDeclaration(c) => {
                return Err(err(
                    Code::Class,
                    "classes are not supported in the TypeScript subset",
                    c.span,
                ));
            }
            TS::ImportDeclaration(i) => {
                return Err(err(
                    Code::Import,
                    "imports are only allowed at module level",
                    i.span,
                ));
            }
            s if is_type_only(s) => {}
            TS::SwitchStatement(sw) => {
                // `t = disc; m = false; if (m || t === A) { m = true; … } …;
                // default…` inside a block `break` leaves: case tests are
                // evaluated in order until one matches, then bodies fall through.
                let disc = self.expr(&sw.discriminant)?;
                let t = self.cx.hidden("switch");
                let m = self.cx.hidden("matched");
                let var = |v: VarRef| Expr {
                    kind: ExprKind::Var(v),
                    pos: p,
                };
                let mut body = vec![
                    st(StmtKind::Assign(t, disc)),
                    st(StmtKind::Assign(
                        m,
                        Expr::constant(Constant::Bool(false), p),
                    )),
                ];
                for (k, case) in sw.cases.iter().enumerate() {
                    if case.consequent.iter().any(|s| {
                        matches!(
                            s,
                            TS::VariableDeclaration(_)
                                | TS::FunctionDeclaration(_)
                                | TS::ClassDeclaration(_)
                        )
                    }) {
                        return Err(unsupported(
                            "declarations directly in a `case` (wrap the case body in braces)",
                            case.span,
                        ));
                    }
                    let stmts = self.statements(&case.consequent)?;
                    match &case.test {
                        Some(test) => {
                            let v = self.expr(test)?;
                            let cp = pos(case.span);
                            let hit = Expr {
                                kind: ExprKind::Bin(BinOp::Eq, Box::new(var(t)), Box::new(v)),
                                pos: cp,
                            };
                            let cond = Expr {
                                kind: ExprKind::Or(Box::new(var(m)), Box::new(hit)),
                                pos: cp,
                            };
                            let mut then = vec![Stmt {
                                kind: StmtKind::Assign(m, Expr::constant(Constant::Bool(true), cp)),
                                pos: cp,
                            }];
                            then.extend(stmts);
                            body.push(Stmt {
                                kind: StmtKind::If(cond, then, Vec::new()),
                                pos: cp,
                            });
                        }
                        None if k + 1 == sw.cases.len() => body.push(Stmt {
                            kind: StmtKind::Block(stmts),
                            pos: pos(case.span),
                        }),
                        None => {
                            return Err(unsupported(
                                "a `default` that is not the last clause",
                                case.span,
                            ));
                        }
                    }
                }
                out.push(st(StmtKind::Switch(body)));
            }
            TS::LabeledStatement(x) => return Err(unsupported("labels", x.span)),
            TS::ForInStatement(x) => return Err(unsupported("`for … in`", x.span)),
            other => return Err(unsupported("this statement", stmt_span(other))),
        }
        Ok(())
    }

    fn open_decl_block(&mut self, d: &t::VariableDeclaration) -> Result<(), FrontendError> {
        let in_loop = self.cx.cur().loops > 0;
        let mut block = HashMap::default();
        for decl in &d.declarations {
            if let Some(b) = binding_name(&decl.id) {
                let var = self.cx.new_var(b.name.as_str().to_owned());
                block.insert(
                    b.name.as_str().to_owned(),
                    Binding {
                        var,
                        declared: false,
                        constant: d.kind == t::VariableDeclarationKind::Const,
                        in_loop,
                    },
                );
            }
        }
        self.cx.cur_mut().blocks.push(block);
        Ok(())
    }

    fn expr_stmt(&mut self, e: &TE, p: Pos, out: &mut Vec<Stmt>) -> Result<(), FrontendError> {
        let st = |kind| Stmt { kind, pos: p };
        match e {
            TE::AssignmentExpression(a) => {
                let op = match a.operator {
                    t::AssignmentOperator::Assign => None,
                    t::AssignmentOperator::Addition => Some(BinOp::Add),
                    t::AssignmentOperator::Subtraction => Some(BinOp::Sub),
                    t::AssignmentOperator::Multiplication => Some(BinOp::Mul),
                    t::AssignmentOperator::Division => Some(BinOp::Div),
                    t::AssignmentOperator::Remainder => Some(BinOp::Rem),
                    t::AssignmentOperator::Exponential => Some(BinOp::Pow),
                    _ => return Err(unsupported("this compound assignment", a.span)),
                };
                let rhs = self.expr(&a.right)?;
                self.assign(&a.left, op, rhs, p, out)?;
            }
            TE::UpdateExpression(u) => {
                // `x++` is `x = x - (-1)`: `-` converts like ToNumeric does
                // for numbers and refuses the rest, where `+` would concatenate.
                let delta = if u.operator == t::UpdateOperator::Increment {
                    -1.0
                } else {
                    1.0
                };
                let target = &u.argument;
                let one = Expr::constant(Constant::Number(delta), p);
                self.assign_simple(target, Some(BinOp::Sub), one, p, out)?;
            }
            TE::CallExpression(c) if is_push(c) => {
                let TE::StaticMemberExpression(m) = &c.callee else {
                    return Err(unsupported("this call", c.span));
                };
                if c.arguments.len() != 1 {
                    return Err(err(
                        Code::Call,
                        "`push` takes exactly one argument here",
                        c.span,
                    ));
                }
                let arr = self.expr(&m.object)?;
                let v = self.arg(&c.arguments[0])?;
                out.push(st(StmtKind::Push(arr, v)));
            }
            TE::ParenthesizedExpression(x) => self.expr_stmt(&x.expression, p, out)?,
            other => {
                let v = self.expr(other)?;
                out.push(st(StmtKind::Expr(v)));
            }
        }
        Ok(())
    }

    fn assign(
        &mut self,
        target: &t::AssignmentTarget,
        op: Option<BinOp>,
        rhs: Expr,
        p: Pos,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        match target.as_simple_assignment_target() {
            Some(s) => self.assign_simple(s, op, rhs, p, out),
            None => Err(unsupported("destructuring assignment", p_span(p))),
        }
    }

    fn assign_simple(
        &mut self,
        target: &t::SimpleAssignmentTarget,
        op: Option<BinOp>,
        rhs: Expr,
        p: Pos,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        let st = |kind| Stmt { kind, pos: p };
        match target {
            t::SimpleAssignmentTarget::AssignmentTargetIdentifier(id) => {
                let v = self.var_for_write(id.name.as_str(), id.span, false)?;
                let value = match op {
                    None => rhs,
                    Some(op) => Expr {
                        kind: ExprKind::Bin(
                            op,
                            Box::new(Expr {
                                kind: ExprKind::Var(v),
                                pos: p,
                            }),
                            Box::new(rhs),
                        ),
                        pos: p,
                    },
                };
                out.push(st(StmtKind::Assign(v, value)));
            }
            t::SimpleAssignmentTarget::StaticMemberExpression(m) => {
                let obj = self.expr(&m.object)?;
                let key = m.property.name.as_str().to_owned();
                match op {
                    None => out.push(st(StmtKind::SetProp(obj, key, rhs))),
                    Some(op) => {
                        let to = self.cx.hidden("object");
                        out.push(st(StmtKind::Assign(to, obj)));
                        let var = Expr {
                            kind: ExprKind::Var(to),
                            pos: p,
                        };
                        let old = Expr {
                            kind: ExprKind::GetProp(Box::new(var.clone()), key.clone()),
                            pos: p,
                        };
                        let new = Expr {
                            kind: ExprKind::Bin(op, Box::new(old), Box::new(rhs)),
                            pos: p,
                        };
                        out.push(st(StmtKind::SetProp(var, key, new)));
                    }
                }
            }
            t::SimpleAssignmentTarget::ComputedMemberExpression(m) => {
                let obj = self.expr(&m.object)?;
                let idx = self.expr(&m.expression)?;
                match op {
                    None => out.push(st(StmtKind::SetIndex(obj, idx, rhs))),
                    Some(op) => {
                        let to = self.cx.hidden("object");
                        let ti = self.cx.hidden("index");
                        out.push(st(StmtKind::Assign(to, obj)));
                        out.push(st(StmtKind::Assign(ti, idx)));
                        let vo = Expr {
                            kind: ExprKind::Var(to),
                            pos: p,
                        };
                        let vi = Expr {
                            kind: ExprKind::Var(ti),
                            pos: p,
                        };
                        let old = Expr {
                            kind: ExprKind::Index(Box::new(vo.clone()), Box::new(vi.clone())),
                            pos: p,
                        };
                        let new = Expr {
                            kind: ExprKind::Bin(op, Box::new(old), Box::new(rhs)),
                            pos: p,
                        };
                        out.push(st(StmtKind::SetIndex(vo, vi, new)));
                    }
                }
            }
            t::SimpleAssignmentTarget::TSNonNullExpression(x) => {
                return self.assign_expr_target(&x.expression, op, rhs, p, out);
            }
            t::SimpleAssignmentTarget::TSAsExpression(x) => {
                return self.assign_expr_target(&x.expression, op, rhs, p, out);
            }
            _ => return Err(unsupported("this assignment target", p_span(p))),
        }
        Ok(())
    }

    fn assign_expr_target(
        &mut self,
        e: &TE,
        op: Option<BinOp>,
        rhs: Expr,
        p: Pos,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        match e {
            TE::Identifier(id) => {
                let v = self.var_for_write(id.name.as_str(), id.span, false)?;
                let value = match op {
                    None => rhs,
                    Some(op) => Expr {
                        kind: ExprKind::Bin(
                            op,
                            Box::new(Expr {
                                kind: ExprKind::Var(v),
                                pos: p,
                            }),
                            Box::new(rhs),
                        ),
                        pos: p,
                    },
                };
                out.push(Stmt {
                    kind: StmtKind::Assign(v, value),
                    pos: p,
                });
                Ok(())
            }
            _ => Err(unsupported("this assignment target", p_span(p))),
        }
    }

    fn arg(&mut self, a: &t::Argument) -> Result<Expr, FrontendError> {
        match a.as_expression() {
            Some(e) => self.expr(e),
            None => Err(err(
                Code::Call,
                "spread arguments are not supported",
                a_span(a),
            )),
        }
    }

    fn expr(&mut self, e: &TE) -> Result<Expr, FrontendError> {
        self.cx.enter(pos(expr_span(e)))?;
        let r = self.expr_inner(e);
        self.cx.leave();
        r
    }

    fn expr_inner(&mut self, e: &TE) -> Result<Expr, FrontendError> {
        let span = expr_span(e);
        let p = pos(span);
        let mk = |kind| Expr { kind, pos: p };
        Ok(match e {
            TE::BooleanLiteral(b) => mk(ExprKind::Const(Constant::Bool(b.value))),
            TE::NullLiteral(_) => mk(ExprKind::Const(Constant::Null)),
            TE::NumericLiteral(n) => mk(ExprKind::Const(Constant::Number(n.value))),
            TE::StringLiteral(s) => mk(ExprKind::Const(Constant::String(
                s.value.as_str().to_owned(),
            ))),
            TE::TemplateLiteral(tl) => {
                let mut acc: Option<Expr> = None;
                for (k, q) in tl.quasis.iter().enumerate() {
                    let Some(cooked) = &q.value.cooked else {
                        return Err(err(
                            Code::Syntax,
                            "invalid escape in a template literal",
                            q.span,
                        ));
                    };
                    let part = Expr::constant(Constant::String(cooked.to_string()), pos(q.span));
                    acc = Some(match acc {
                        None => part,
                        Some(a) => mk(ExprKind::Bin(BinOp::Add, Box::new(a), Box::new(part))),
                    });
                    if let Some(x) = tl.expressions.get(k) {
                        let v = self.expr(x)?;
                        let a = acc
                            .take()
                            .unwrap_or_else(|| Expr::constant(Constant::String(String::new()), p));
                        acc = Some(mk(ExprKind::Bin(BinOp::Add, Box::new(a), Box::new(v))));
                    }
                }
                acc.unwrap_or_else(|| mk(ExprKind::Const(Constant::String(String::new()))))
            }
            TE::Identifier(id) => match self.resolve(id.name.as_str(), id.span)? {
                Name::Var(v, _) => mk(ExprKind::Var(v)),
                Name::Func(f) => mk(ExprKind::Func(f)),
                Name::Const(c) => mk(ExprKind::Const(c)),
                Name::Prim(_) => {
                    return Err(err(
                        Code::Await,
                        format!("durable primitive `{}` must be called and awaited", id.name),
                        id.span,
                    ));
                }
                Name::Promise => {
                    return Err(unsupported(
                        "`Promise` other than `await Promise.all([...])` / `Promise.race([...])`",
                        id.span,
                    ));
                }
            },
            TE::ArrayExpression(a) => {
                let mut items = Vec::with_capacity(a.elements.len());
                for el in &a.elements {
                    match el.as_expression() {
                        Some(x) => items.push(self.expr(x)?),
                        None => {
                            return Err(unsupported("spread elements and holes in arrays", a.span));
                        }
                    }
                }
                mk(ExprKind::Array(items))
            }
            TE::ObjectExpression(o) => {
                let mut items = Vec::with_capacity(o.properties.len());
                for prop in &o.properties {
                    let t::ObjectPropertyKind::ObjectProperty(prop) = prop else {
                        return Err(unsupported("object spread", o.span));
                    };
                    if prop.computed || prop.method || prop.kind != t::PropertyKind::Init {
                        return Err(unsupported(
                            "computed keys, methods and accessors in objects",
                            prop.span,
                        ));
                    }
                    let key = match &prop.key {
                        t::PropertyKey::StaticIdentifier(n) => n.name.as_str().to_owned(),
                        t::PropertyKey::StringLiteral(s) => s.value.as_str().to_owned(),
                        _ => return Err(unsupported("this object key", prop.span)),
                    };
                    items.push((key, self.expr(&prop.value)?));
                }
                mk(ExprKind::Object(items))
            }
            TE::StaticMemberExpression(m) => {
                if m.optional {
                    return Err(unsupported("optional chaining", m.span));
                }
                let o = self.expr(&m.object)?;
                if m.property.name.as_str() == "length" {
                    mk(ExprKind::Length(Box::new(o)))
                } else {
                    mk(ExprKind::GetProp(
                        Box::new(o),
                        m.property.name.as_str().to_owned(),
                    ))
                }
            }
            TE::ComputedMemberExpression(m) => {
                if m.optional {
                    return Err(unsupported("optional chaining", m.span));
                }
                let o = self.expr(&m.object)?;
                match &m.expression {
                    TE::StringLiteral(s) if s.value.as_str() != "length" => {
                        mk(ExprKind::GetProp(Box::new(o), s.value.as_str().to_owned()))
                    }
                    TE::StringLiteral(_) => mk(ExprKind::Length(Box::new(o))),
                    other => {
                        let i = self.expr(other)?;
                        mk(ExprKind::Index(Box::new(o), Box::new(i)))
                    }
                }
            }
            TE::CallExpression(c) => self.call(c)?,
            TE::AwaitExpression(a) => self.await_expr(a)?,
            TE::BinaryExpression(b) => {
                let op = match b.operator {
                    t::BinaryOperator::StrictEquality => BinOp::Eq,
                    t::BinaryOperator::StrictInequality => BinOp::Neq,
                    t::BinaryOperator::LessThan => BinOp::Lt,
                    t::BinaryOperator::LessEqualThan => BinOp::Le,
                    t::BinaryOperator::GreaterThan => BinOp::Gt,
                    t::BinaryOperator::GreaterEqualThan => BinOp::Ge,
                    t::BinaryOperator::Addition => BinOp::Add,
                    t::BinaryOperator::Subtraction => BinOp::Sub,
                    t::BinaryOperator::Multiplication => BinOp::Mul,
                    t::BinaryOperator::Division => BinOp::Div,
                    t::BinaryOperator::Remainder => BinOp::Rem,
                    t::BinaryOperator::Exponential => BinOp::Pow,
                    t::BinaryOperator::Equality | t::BinaryOperator::Inequality => {
                        return Err(unsupported(
                            "loose equality `==` / `!=` (use `===` / `!==`)",
                            b.span,
                        ));
                    }
                    _ => {
                        return Err(unsupported(
                            "bitwise, `in` and `instanceof` operators",
                            b.span,
                        ));
                    }
                };
                let l = self.expr(&b.left)?;
                let r = self.expr(&b.right)?;
                mk(ExprKind::Bin(op, Box::new(l), Box::new(r)))
            }
            TE::LogicalExpression(l) => {
                let a = self.expr(&l.left)?;
                let b = self.expr(&l.right)?;
                match l.operator {
                    t::LogicalOperator::And => mk(ExprKind::And(Box::new(a), Box::new(b))),
                    t::LogicalOperator::Or => mk(ExprKind::Or(Box::new(a), Box::new(b))),
                    t::LogicalOperator::Coalesce => {
                        let t = self.cx.hidden("coalesce");
                        let var = mk(ExprKind::Var(t));
                        let is = |c: Constant| {
                            mk(ExprKind::Bin(
                                BinOp::Eq,
                                Box::new(var.clone()),
                                Box::new(Expr::constant(c, p)),
                            ))
                        };
                        let nullish = mk(ExprKind::Or(
                            Box::new(is(Constant::Null)),
                            Box::new(is(Constant::Undefined)),
                        ));
                        let pick = mk(ExprKind::Cond(
                            Box::new(nullish),
                            Box::new(b),
                            Box::new(var.clone()),
                        ));
                        mk(ExprKind::Let(t, Box::new(a), Box::new(pick)))
                    }
                }
            }
            TE::UnaryExpression(u) => match u.operator {
                t::UnaryOperator::LogicalNot => {
                    let x = self.expr(&u.argument)?;
                    mk(ExprKind::Not(Box::new(x)))
                }
                t::UnaryOperator::UnaryNegation => {
                    if let TE::NumericLiteral(n) = &u.argument {
                        mk(ExprKind::Const(Constant::Number(-n.value)))
                    } else {
                        let x = self.expr(&u.argument)?;
                        mk(ExprKind::Neg(Box::new(x)))
                    }
                }
                _ => {
                    return Err(unsupported(
                        "unary `+`, `~`, `typeof`, `void` and `delete`",
                        u.span,
                    ));
                }
            },
            TE::ConditionalExpression(c) => {
                let t0 = self.expr(&c.test)?;
                let a = self.expr(&c.consequent)?;
                let b = self.expr(&c.alternate)?;
                mk(ExprKind::Cond(Box::new(t0), Box::new(a), Box::new(b)))
            }
            TE::ArrowFunctionExpression(a) => {
                if a.r#async {
                    return Err(unsupported("async arrow functions", a.span));
                }
                let idx = self.cx.module.funcs.len();
                self.cx.module.funcs.push(Func::default());
                let parent = self.cx.cur().func;
                let body = match &a.body {
                    t::ArrowFunctionBody::FunctionBody(b) => FnBody::Block(Some(b)),
                    other => match other.as_expression() {
                        Some(x) => FnBody::Expr(x),
                        None => return Err(unsupported("this arrow body", a.span)),
                    },
                };
                self.function(idx, Some(parent), "<arrow>", &a.params, body, a.span, false)?;
                mk(ExprKind::Closure(idx))
            }
            TE::FunctionExpression(f) => {
                if f.r#async || f.generator {
                    return Err(unsupported(
                        "async or generator function expressions",
                        f.span,
                    ));
                }
                let idx = self.cx.module.funcs.len();
                self.cx.module.funcs.push(Func::default());
                let parent = self.cx.cur().func;
                let name =
                    f.id.as_ref()
                        .map_or("<function>".to_string(), |i| i.name.as_str().to_owned());
                self.function(
                    idx,
                    Some(parent),
                    &name,
                    &f.params,
                    FnBody::Block(f.body.as_deref()),
                    f.span,
                    false,
                )?;
                mk(ExprKind::Closure(idx))
            }
            TE::ParenthesizedExpression(x) => {
                let mut v = self.expr(&x.expression)?;
                v.pos = p;
                v
            }
            TE::TSAsExpression(x) => self.expr(&x.expression)?,
            TE::TSSatisfiesExpression(x) => self.expr(&x.expression)?,
            TE::TSNonNullExpression(x) => self.expr(&x.expression)?,
            TE::TSTypeAssertion(x) => self.expr(&x.expression)?,
            TE::ClassExpression(c) => {
                return Err(err(
                    Code::Class,
                    "classes are not supported in the TypeScript subset",
                    c.span,
                ));
            }
            TE::AssignmentExpression(a) => {
                return Err(unsupported("assignment inside an expression", a.span));
            }
            TE::UpdateExpression(u) => {
                return Err(unsupported(
                    "`++`/`--` inside an expression (use them as statements)",
                    u.span,
                ));
            }
            TE::ThisExpression(x) => return Err(unsupported("`this`", x.span)),
            TE::NewExpression(x) => return Err(unsupported("`new`", x.span)),
            _ => return Err(unsupported("this expression", span)),
        })
    }

    fn call(&mut self, c: &t::CallExpression) -> Result<Expr, FrontendError> {
        let p = pos(c.span);
        if c.optional {
            return Err(unsupported("optional calls", c.span));
        }
        if is_push(c) {
            return Err(unsupported(
                "`push` inside an expression (use it as a statement)",
                c.span,
            ));
        }
        if let TE::Identifier(id) = &c.callee {
            match self.resolve(id.name.as_str(), id.span)? {
                Name::Prim(_) if self.cx.cur().func != self.cx.module.entry => {
                    return Err(err(
                        Code::DurableOutsideEntry,
                        "durable operations are only allowed in the entry function",
                        c.span,
                    ));
                }
                Name::Prim(_) => {
                    return Err(err(
                        Code::Await,
                        format!("durable operation `{}` must be awaited directly", id.name),
                        c.span,
                    ));
                }
                Name::Func(0) => return Err(unsupported("calling the entry function", c.span)),
                _ => {}
            }
        }
        if let TE::StaticMemberExpression(m) = &c.callee {
            let name = m.property.name.as_str();
            if !ArrayMethod::is_method(name) || m.optional {
                return Err(unsupported(&format!("method `.{name}()`"), c.span));
            }
            let Some(method) = ArrayMethod::from_call(name, c.arguments.len()) else {
                return Err(err(
                    Code::Call,
                    "`map` and `filter` take one callback; `reduce` a callback and an optional initial value",
                    c.span,
                ));
            };
            let mut args = Vec::with_capacity(c.arguments.len() + 1);
            args.push(self.expr(&m.object)?);
            for a in &c.arguments {
                args.push(self.arg(a)?);
            }
            let helper = match self.array_helpers.get(&method) {
                Some(&f) => f,
                None => {
                    let f = array_methods::add_helper(&mut self.cx.module, method, p);
                    self.array_helpers.insert(method, f);
                    f
                }
            };
            return Ok(Expr {
                kind: ExprKind::Call(
                    Box::new(Expr {
                        kind: ExprKind::Func(helper),
                        pos: p,
                    }),
                    args,
                ),
                pos: p,
            });
        }
        let f = self.expr(&c.callee)?;
        let mut args = Vec::with_capacity(c.arguments.len());
        for a in &c.arguments {
            args.push(self.arg(a)?);
        }
        Ok(Expr {
            kind: ExprKind::Call(Box::new(f), args),
            pos: p,
        })
    }

    fn prim_of(&mut self, e: &TE) -> Result<Option<Prim>, FrontendError> {
        if let TE::Identifier(id) = e
            && let Name::Prim(p) = self.resolve(id.name.as_str(), id.span)?
        {
            return Ok(Some(p));
        }
        Ok(None)
    }

    fn durable(&mut self, prim: Prim, c: &t::CallExpression) -> Result<Expr, FrontendError> {
        let p = pos(c.span);
        self.cx.require_entry(p)?;
        match durable_call(prim, &mut TsArgs { l: self, c }, "waitForEvent", p)? {
            Some(e) => Ok(e),
            None => Err(unsupported("this primitive", c.span)),
        }
    }

    fn await_expr(&mut self, a: &t::AwaitExpression) -> Result<Expr, FrontendError> {
        let TE::CallExpression(c) = strip(&a.argument) else {
            return Err(err(
                Code::Await,
                "only durable primitives and `Promise.all`/`Promise.race` can be awaited",
                a.span,
            ));
        };
        if let Some(prim) = self.prim_of(&c.callee)? {
            let mut e = self.durable(prim, c)?;
            e.pos = pos(a.span);
            return Ok(e);
        }
        if let TE::StaticMemberExpression(m) = &c.callee
            && let TE::Identifier(id) = &m.object
            && matches!(self.resolve(id.name.as_str(), id.span)?, Name::Promise)
        {
            let all = match m.property.name.as_str() {
                "all" => true,
                "race" => false,
                _ => {
                    return Err(err(
                        Code::Concurrency,
                        "only `Promise.all` and `Promise.race` are supported",
                        c.span,
                    ));
                }
            };
            self.cx.require_entry(pos(c.span))?;
            let Some(TE::ArrayExpression(arr)) = c
                .arguments
                .first()
                .and_then(|x| x.as_expression())
                .filter(|_| c.arguments.len() == 1)
            else {
                return Err(err(
                    Code::Concurrency,
                    "`Promise.all`/`Promise.race` take one array literal of durable calls",
                    c.span,
                ));
            };
            if arr.elements.is_empty() || arr.elements.len() > 32 {
                return Err(err(
                    Code::Concurrency,
                    "`Promise.all`/`Promise.race` take 1 to 32 branches",
                    arr.span,
                ));
            }
            let mut branches = Vec::new();
            for el in &arr.elements {
                let Some(TE::CallExpression(bc)) = el.as_expression().map(strip) else {
                    let at = el.as_expression().map_or(arr.span, expr_span);
                    return Err(err(
                        Code::Concurrency,
                        "each branch must be a direct (not awaited) call of effect, waitForEvent, sleep or invoke",
                        at,
                    ));
                };
                match self.prim_of(&bc.callee)? {
                    Some(bp) => branches.push(self.durable(bp, bc)?),
                    None => {
                        return Err(err(
                            Code::Concurrency,
                            "each branch must be a direct (not awaited) call of effect, waitForEvent, sleep or invoke",
                            bc.span,
                        ));
                    }
                }
            }
            let d = if all {
                Durable::Gather(branches)
            } else {
                Durable::Race(branches)
            };
            return Ok(Expr {
                kind: ExprKind::Durable(d),
                pos: pos(a.span),
            });
        }
        Err(err(
            Code::Await,
            "only durable primitives and `Promise.all`/`Promise.race` can be awaited",
            a.span,
        ))
    }
}

/// A TypeScript call's arguments for [`durable_call`].
struct TsArgs<'l, 'b, 'a> {
    l: &'l mut Lower,
    c: &'b t::CallExpression<'a>,
}

impl DurableArgs for TsArgs<'_, '_, '_> {
    fn len(&self) -> usize {
        self.c.arguments.len()
    }

    fn name(&mut self, what: &str) -> Result<Expr, FrontendError> {
        match self.c.arguments.first() {
            Some(a) => string_name(what, self.l.arg(a)?),
            None => Err(err(Code::Call, format!("missing the {what}"), self.c.span)),
        }
    }

    fn effect_input(&mut self) -> Result<Option<Expr>, FrontendError> {
        let rest = &self.c.arguments[1.min(self.c.arguments.len())..];
        // The options object, `{ input: EXPR }`, is the last argument.
        let (options, callback) = match rest.last().and_then(|a| a.as_expression()).map(strip) {
            Some(TE::ObjectExpression(o)) => (Some(o), &rest[..rest.len() - 1]),
            _ => (None, rest),
        };
        if callback.len() > 1 {
            return Err(err(
                Code::Call,
                "`effect` takes a key, an optional callback and an optional `{ input: VALUE }`",
                self.c.span,
            ));
        }
        if let Some(cb) = callback.first()
            && !matches!(
                cb.as_expression(),
                Some(
                    TE::Identifier(_) | TE::ArrowFunctionExpression(_) | TE::FunctionExpression(_)
                )
            )
        {
            return Err(unsupported(
                "an effect callback other than a name or a function (pass data with `{ input: VALUE }`)",
                a_span(cb),
            ));
        }
        let Some(o) = options else {
            return Ok(None);
        };
        let mut input = None;
        for prop in &o.properties {
            let t::ObjectPropertyKind::ObjectProperty(p) = prop else {
                return Err(unsupported("spread in the effect options", o.span));
            };
            let named_input = match &p.key {
                t::PropertyKey::StaticIdentifier(k) => k.name.as_str() == "input",
                t::PropertyKey::StringLiteral(k) => k.value.as_str() == "input",
                _ => false,
            };
            if !named_input
                || p.computed
                || p.method
                || p.kind != t::PropertyKind::Init
                || input.is_some()
            {
                return Err(err(
                    Code::Call,
                    "the effect options object takes one property, `input`",
                    p.span,
                ));
            }
            input = Some(self.l.expr(&p.value)?);
        }
        match input {
            Some(i) => Ok(Some(i)),
            None => Err(err(
                Code::Call,
                "the effect options object takes one property, `input`",
                o.span,
            )),
        }
    }

    fn expr(&mut self, i: usize) -> Result<Expr, FrontendError> {
        match self.c.arguments.get(i) {
            Some(a) => self.l.arg(a),
            None => Err(err(
                Code::Internal,
                "internal frontend error: argument out of range",
                self.c.span,
            )),
        }
    }
}

enum FnBody<'b, 'a> {
    Block(Option<&'b t::FunctionBody<'a>>),
    Expr(&'b TE<'a>),
}

fn strip<'b, 'a>(e: &'b TE<'a>) -> &'b TE<'a> {
    match e {
        TE::ParenthesizedExpression(p) => strip(&p.expression),
        TE::TSAsExpression(x) => strip(&x.expression),
        TE::TSNonNullExpression(x) => strip(&x.expression),
        other => other,
    }
}

/// The value of a literal (`1`, `-1`, `"s"`, `true`, `null`).
fn literal_value(e: &TE) -> Option<Constant> {
    match strip(e) {
        TE::NumericLiteral(n) => Some(Constant::Number(n.value)),
        TE::StringLiteral(s) => Some(Constant::String(s.value.as_str().to_owned())),
        TE::BooleanLiteral(b) => Some(Constant::Bool(b.value)),
        TE::NullLiteral(_) => Some(Constant::Null),
        TE::UnaryExpression(u) if u.operator == t::UnaryOperator::UnaryNegation => {
            match &u.argument {
                TE::NumericLiteral(n) => Some(Constant::Number(-n.value)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_push(c: &t::CallExpression) -> bool {
    matches!(&c.callee, TE::StaticMemberExpression(m) if m.property.name.as_str() == "push")
}

fn p_span(p: Pos) -> Span {
    Span::new(p.start, p.end)
}

fn stmt_span(s: &TS) -> Span {
    use oxc_span::GetSpan;
    s.span()
}

fn expr_span(e: &TE) -> Span {
    use oxc_span::GetSpan;
    e.span()
}

fn a_span(a: &t::Argument) -> Span {
    use oxc_span::GetSpan;
    a.span()
}
