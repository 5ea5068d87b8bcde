//! Lowering of blocks, `let`, literals, places, operators and assignments.

use super::*;

impl BodyLowerer<'_> {
    /// `left + &right` with two `String`s (Rust's `String + &str` through
    /// deref): `left` moves, `right` is only read.
    pub(super) fn concat_borrowed(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        p: Pos,
    ) -> Checked<(Expr, RustType)> {
        let (l, lt) = self.expr(left, true)?;
        let after_left = self.out.len();
        let (r, rt) = self.expr(right, false)?;
        let after_right = self.out.len();
        let mut xs = [l, r];
        self.spill(&[after_left, after_right], &mut xs);
        for (t, at) in [(&lt, left), (&rt, right)] {
            let t = self.it.types.shallow(t);
            if t != RustType::Str {
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
            RustType::Str,
        ))
    }

    pub(super) fn block(&mut self, b: &syn::Block, consume: bool) -> Checked<(Expr, RustType)> {
        self.push_scope();
        let r = self.block_in(b, consume);
        self.pop_scope();
        r
    }

    pub(super) fn block_in(&mut self, b: &syn::Block, consume: bool) -> Checked<(Expr, RustType)> {
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
                    if semi.is_none() && !self.it.types.unify(&RustType::Unit, &t) {
                        return Err(self.type_error(
                            format!("mismatched types: expected `()`, found `{}` (add `;` or use the value)", self.show(&t)),
                            pos_of(e),
                        ));
                    }
                    if self.it.types.shallow(&t) == RustType::Never {
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
            if diverges {
                RustType::Never
            } else {
                RustType::Unit
            },
        ))
    }

    pub(super) fn local(&mut self, local: &syn::Local) -> Checked<()> {
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

    pub(super) fn expr(&mut self, e: &syn::Expr, consume: bool) -> Checked<(Expr, RustType)> {
        self.expr_full(e, consume, true)
    }

    /// `want`: the value is used (otherwise `if`/`match` need no result variable).
    pub(super) fn expr_full(
        &mut self,
        e: &syn::Expr,
        consume: bool,
        want: bool,
    ) -> Checked<(Expr, RustType)> {
        self.depth += 1;
        if self.depth > crate::MAX_DEPTH {
            return Err(err(Code::Limit, "expression nesting too deep", pos_of(e)));
        }
        let r = self.expr_inner(e, consume, want);
        self.depth -= 1;
        r
    }

    pub(super) fn expr_inner(
        &mut self,
        e: &syn::Expr,
        consume: bool,
        want: bool,
    ) -> Checked<(Expr, RustType)> {
        let p = pos_of(e);
        let unsupported = |m: &str| Err(err(Code::Unsupported, m.to_string(), p));
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, p),
            syn::Expr::Paren(x) => self.expr_full(&x.expr, consume, want),
            syn::Expr::Group(x) => self.expr_full(&x.expr, consume, want),
            syn::Expr::Tuple(t) if t.elems.is_empty() => Ok((undef(p), RustType::Unit)),
            syn::Expr::Path(path) => self.path(path, consume, p),
            syn::Expr::Field(_) | syn::Expr::Index(_) => self.place_read(e, consume),
            syn::Expr::Binary(b) => self.binary(b, p),
            syn::Expr::Unary(u) => self.unary(u, p),
            syn::Expr::Assign(a) => self.assign(&a.left, &a.right, None, p),
            syn::Expr::Cast(c) => {
                let target = ty_of(&mut self.it.types, &c.ty, &self.it.imported)?;
                let (x, t) = self.expr(&c.expr, false)?;
                let t = self.it.types.shallow(&t);
                if target == RustType::F64 && matches!(t, RustType::Int | RustType::F64) {
                    Ok((x, RustType::F64))
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
                Ok((undef(p), RustType::Never))
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

    pub(super) fn lit(&mut self, l: &syn::Lit, p: Pos) -> Checked<(Expr, RustType)> {
        match l {
            syn::Lit::Bool(b) => Ok((Expr::constant(Constant::Bool(b.value), p), RustType::Bool)),
            syn::Lit::Str(s) => Ok((text(&s.value(), p), RustType::StaticStr)),
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
                Ok((Expr::constant(Constant::Number(n), p), RustType::F64))
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
                    if suffix == "f64" {
                        RustType::F64
                    } else {
                        RustType::Int
                    },
                ))
            }
            _ => Err(err(
                Code::Unsupported,
                "this literal is outside the Rust subset",
                p,
            )),
        }
    }

    /// Reads a field or an element (moving it out when `consume` and the type moves).
    pub(super) fn place_read(&mut self, e: &syn::Expr, consume: bool) -> Checked<(Expr, RustType)> {
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
                let vt = RustType::Vec(Box::new(elem.clone()));
                if !self.it.types.unify(&vt, &bt) {
                    return Err(self.type_error(
                        format!("cannot index a value of type `{}`", self.show(&bt)),
                        p,
                    ));
                }
                self.unify_at(&RustType::F64, &it_ty, pos_of(&*ix.index), "a Vec index")?;
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

    pub(super) fn binary(&mut self, b: &syn::ExprBinary, p: Pos) -> Checked<(Expr, RustType)> {
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
            self.unify_at(
                &RustType::Bool,
                &lt,
                pos_of(&*b.left),
                "an operand of `&&`/`||`",
            )?;
            // The right operand may not run; its moves still count after it, as in Rust.
            let (stmts, (r, rt)) = self.collect(|s| s.expr(&b.right, false))?;
            self.unify_at(
                &RustType::Bool,
                &rt,
                pos_of(&*b.right),
                "an operand of `&&`/`||`",
            )?;
            let and = matches!(b.op, B::And(_));
            if stmts.is_empty() {
                let k = if and {
                    ExprKind::And(Box::new(l), Box::new(r))
                } else {
                    ExprKind::Or(Box::new(l), Box::new(r))
                };
                return Ok((ex(k, p), RustType::Bool));
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
            return Ok((ex(ExprKind::Var(t), p), RustType::Bool));
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
            if op == BinOp::Add && lt == RustType::Str {
                if rt != RustType::StaticStr {
                    return Err(self.type_error(
                        format!(
                            "`String + {}`: the right side must be a string literal",
                            self.show(&rt)
                        ),
                        p,
                    ));
                }
                return Ok((bin(op, l, r), RustType::Str));
            }
            if lt == RustType::Int && rt == RustType::Int {
                return Err(self.type_error(
                    "integer arithmetic is outside the Rust subset (numbers are `f64`)",
                    p,
                ));
            }
            self.unify_at(
                &RustType::F64,
                &lt,
                pos_of(&*b.left),
                "an arithmetic operand",
            )?;
            self.unify_at(
                &RustType::F64,
                &rt,
                pos_of(&*b.right),
                "an arithmetic operand",
            )?;
            return Ok((bin(op, l, r), RustType::F64));
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
        let stringy = |t: &RustType| matches!(t, RustType::Str | RustType::StaticStr);
        let ok = if matches!(cmp, BinOp::Eq | BinOp::Neq) {
            (stringy(&lt) && stringy(&rt))
                || self.it.types.unify(&lt, &rt)
                    && matches!(
                        self.it.types.shallow(&lt),
                        RustType::F64 | RustType::Bool | RustType::Unit
                    )
        } else {
            self.it.types.unify(&lt, &rt) && self.it.types.shallow(&lt) == RustType::F64
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
        Ok((bin(cmp, l, r), RustType::Bool))
    }

    pub(super) fn unary(&mut self, u: &syn::ExprUnary, p: Pos) -> Checked<(Expr, RustType)> {
        let (x, t) = self.expr(&u.expr, false)?;
        let t = self.it.types.shallow(&t);
        match u.op {
            syn::UnOp::Not(_) => {
                self.unify_at(&RustType::Bool, &t, p, "the operand of `!`")?;
                Ok((ex(ExprKind::Not(Box::new(x)), p), RustType::Bool))
            }
            syn::UnOp::Neg(_) => {
                if t == RustType::Int {
                    return Ok((ex(ExprKind::Neg(Box::new(x)), p), RustType::Int));
                }
                self.unify_at(&RustType::F64, &t, p, "the operand of `-`")?;
                Ok((ex(ExprKind::Neg(Box::new(x)), p), RustType::F64))
            }
            _ => Err(err(
                Code::Unsupported,
                "dereference is outside the Rust subset",
                p,
            )),
        }
    }

    /// `place = value` or `place op= value`.
    pub(super) fn assign(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        op: Option<BinOp>,
        p: Pos,
    ) -> Checked<(Expr, RustType)> {
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
                if !self
                    .it
                    .types
                    .unify(&RustType::Vec(Box::new(elem.clone())), &bt)
                {
                    return Err(self.type_error(
                        format!("cannot index a value of type `{}`", self.show(&bt)),
                        p,
                    ));
                }
                self.unify_at(&RustType::F64, &itt, pos_of(&*ix.index), "a Vec index")?;
                let (t, (mut rhs, rt)) = (self.hidden("t"), self.rhs_after(right)?);
                self.out.push(st(StmtKind::Assign(t, index), p));
                if let Some(op) = op {
                    self.unify_at(&RustType::F64, &elem, p, "a compound assignment")?;
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
                    self.unify_at(&RustType::F64, &ft, p, "a compound assignment")?;
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
                    self.unify_at(&RustType::F64, &b.ty, p, "a compound assignment")?;
                    rhs = ex(
                        ExprKind::Bin(op, Box::new(ex(ExprKind::Var(b.var), p)), Box::new(rhs)),
                        p,
                    );
                }
                self.unify_at(&b.ty, &rt, pos_of(right), &format!("`{name}`"))?;
                if matches!(self.it.types.shallow(&b.ty), RustType::Closure(_)) {
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
        Ok((undef(p), RustType::Unit))
    }

    /// The right side of an assignment, evaluated (Rust order) before the store.
    pub(super) fn rhs_after(&mut self, right: &syn::Expr) -> Checked<(Expr, RustType)> {
        let (x, t) = self.expr(right, true)?;
        let p = x.pos;
        if has_effects(&x) {
            let v = self.hidden("t");
            self.out.push(st(StmtKind::Assign(v, x), p));
            return Ok((ex(ExprKind::Var(v), p), t));
        }
        Ok((x, t))
    }
}
