//! Lowering of calls, methods, struct literals, closures, `?` and durable operations.

use super::*;

impl BodyLowerer<'_> {
    pub(super) fn call(&mut self, c: &syn::ExprCall, p: Pos) -> Checked<(Expr, RustType)> {
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
        let arity = |n: usize, what: &str| -> Checked<()> {
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
                    && let RustType::Closure(k) = self.it.types.shallow(&b.ty)
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
                            "Some" => RustType::Opt(Box::new(t)),
                            "Ok" => RustType::Res(Box::new(t), Box::new(self.it.types.fresh())),
                            _ => RustType::Res(Box::new(self.it.types.fresh()), Box::new(t)),
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
                    &RustType::StaticStr,
                    &t,
                    pos_of(args[0]),
                    "the argument of `String::from`",
                )?;
                Ok((x, RustType::Str))
            }
            [a, b] if a == "String" && b == "new" => {
                arity(0, "String::new")?;
                Ok((text("", p), RustType::Str))
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
                Ok((
                    ex(ExprKind::Array(Vec::new()), p),
                    RustType::Vec(Box::new(elem)),
                ))
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

    pub(super) fn method(&mut self, mc: &syn::ExprMethodCall, p: Pos) -> Checked<(Expr, RustType)> {
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
                if self.it.types.shallow(&t) != RustType::StaticStr {
                    return Err(self.type_error(
                        format!(
                            "`{name}` is for string literals in the Rust subset, found `{}`",
                            self.show(&t)
                        ),
                        p,
                    ));
                }
                Ok((x, RustType::Str))
            }
            // Strings are immutable values in the engine, so a clone is the same value.
            "clone" if mc.args.is_empty() => {
                let (x, t) = self.expr(&mc.receiver, false)?;
                if !matches!(
                    self.it.types.shallow(&t),
                    RustType::Str | RustType::StaticStr | RustType::F64 | RustType::Bool
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
                if !self.it.types.unify(&RustType::Vec(Box::new(elem)), &t) {
                    return Err(self.type_error(
                        format!(
                            "no method `len` on `{}` in the Rust subset (Vec only)",
                            self.show(&t)
                        ),
                        p,
                    ));
                }
                Ok((ex(ExprKind::Length(Box::new(x)), p), RustType::F64))
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
                if !self
                    .it
                    .types
                    .unify(&RustType::Vec(Box::new(elem.clone())), &rt)
                {
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
                Ok((undef(p), RustType::Unit))
            }
            _ => Err(err(
                Code::Unsupported,
                format!("method `{name}` is outside the Rust subset"),
                p,
            )),
        }
    }

    pub(super) fn struct_lit(&mut self, s: &syn::ExprStruct, p: Pos) -> Checked<(Expr, RustType)> {
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
                    (RustType::Adt(i), self.it.types.adts[i].fields.clone(), None)
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
                .unwrap_or(RustType::Unit);
            self.unify_at(&want, &t, pos_of(*e), &format!("field `{n}`"))?;
            out.push((n.clone(), x));
        }
        Ok((ex(ExprKind::Object(out), p), ty))
    }

    pub(super) fn closure(&mut self, c: &syn::ExprClosure, p: Pos) -> Checked<(Expr, RustType)> {
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
        self.fx.push(FnFrame {
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
        if self.it.types.shallow(&t) != RustType::Never {
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
        self.it.types.closures.push(crate::rust::types::ClosureSig {
            params,
            ret,
            once: inner.once,
        });
        Ok((ex(ExprKind::Closure(func), p), RustType::Closure(k)))
    }

    pub(super) fn question(&mut self, t: &syn::ExprTry, p: Pos) -> Checked<(Expr, RustType)> {
        if let syn::Expr::Await(a) = &*t.expr {
            let ret = self.it.types.shallow(&self.fx().ret);
            let ok = matches!(&ret, RustType::Res(_, e) if self.it.types.unify(e, &RustType::Str));
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
            RustType::Res(a, e) => {
                let fits = matches!(&ret, RustType::Res(_, e2) if self.it.types.unify(e2, &e));
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
            RustType::Opt(a) => {
                if !matches!(ret, RustType::Opt(_)) {
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
            RustType::Var(_) => {
                return Err(err(Code::Question, "type annotations needed before `?`", p));
            }
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
    pub(super) fn durable_result(
        &mut self,
        a: &syn::ExprAwait,
        p: Pos,
    ) -> Checked<(Expr, RustType)> {
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
            RustType::Res(Box::new(t), Box::new(RustType::Str)),
        ))
    }

    pub(super) fn durable_key(e: &syn::Expr) -> Option<String> {
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
    pub(super) fn durable_name(&mut self, e: &syn::Expr, what: &str) -> Checked<Expr> {
        let p = pos_of(e);
        if let Some(k) = Self::durable_key(e) {
            return Ok(ex(ExprKind::Const(Constant::String(k)), p));
        }
        let (x, t) = self.expr(e, true)?;
        match self.it.types.shallow(&t) {
            RustType::Str | RustType::StaticStr => Ok(x),
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
    pub(super) fn durable(&mut self, base: &syn::Expr, p: Pos) -> Checked<(Expr, RustType)> {
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
        let arity = |n: usize| -> Checked<()> {
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
                let RustType::Closure(ci) = ct else {
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
                self.unify_at(
                    &RustType::F64,
                    &t,
                    pos_of(args[0]),
                    "the sleep duration (ms)",
                )?;
                Ok((d(Durable::Sleep(Box::new(x))), RustType::Unit))
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
                    Ok((d(Durable::Gather(branches)), RustType::Vec(Box::new(ty))))
                } else {
                    Ok((d(Durable::Race(branches)), ty))
                }
            }
        }
    }
}
