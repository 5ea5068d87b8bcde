//! Lowering of `if`, `match` (with exhaustiveness), loops, `break` and `return`.

use super::*;

impl BodyLowerer<'_> {
    pub(super) fn if_expr(
        &mut self,
        i: &syn::ExprIf,
        consume: bool,
        want: bool,
    ) -> Checked<(Expr, RustType)> {
        let p = pos_of(i);
        let (c, ct) = self.expr(&i.cond, false)?;
        self.unify_at(&RustType::Bool, &ct, pos_of(&*i.cond), "an `if` condition")?;
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
                    None => Ok((Vec::new(), undef(p), RustType::Unit, ())),
                }
            }
        })?;
        if i.else_branch.is_none() {
            let t = &arms[0].2;
            if !self.it.types.unify(&RustType::Unit, t) {
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
    pub(super) fn join_arms(
        &mut self,
        c: Expr,
        arms: Vec<(Vec<Stmt>, Expr, RustType, Pos)>,
        want: bool,
        p: Pos,
        msg: &str,
    ) -> Checked<(Expr, RustType)> {
        let mut ty = RustType::Never;
        for (_, _, t, ap) in &arms {
            if !self.it.types.unify(&ty, t) {
                return Err(self.type_error(
                    format!("{msg}: `{}` and `{}`", self.show(&ty), self.show(t)),
                    *ap,
                ));
            }
            if self.it.types.shallow(&ty) == RustType::Never {
                ty = t.clone();
            }
        }
        let mut arms = arms.into_iter();
        let (Some((s1, x1, t1, _)), Some((s2, x2, t2, _))) = (arms.next(), arms.next()) else {
            return Err(err(Code::Internal, "internal: two arms", p));
        };
        let live = |t: &RustType, s: &Self| s.it.types.shallow(t) != RustType::Never;
        if want && s1.is_empty() && s2.is_empty() && live(&t1, self) && live(&t2, self) {
            return Ok((
                ex(ExprKind::Cond(Box::new(c), Box::new(x1), Box::new(x2)), p),
                ty,
            ));
        }
        let result = (want && live(&ty, self)).then(|| self.hidden("v"));
        let finish = |mut s: Vec<Stmt>, x: Expr, t: &RustType, this: &Self| {
            if this.it.types.shallow(t) != RustType::Never {
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

    pub(super) fn match_expr(
        &mut self,
        m: &syn::ExprMatch,
        consume: bool,
        want: bool,
    ) -> Checked<(Expr, RustType)> {
        let p = pos_of(m);
        let (sx, sty) = self.expr(&m.expr, false)?;
        let sty = self.it.types.shallow(&sty);
        let Some(variants) = self.it.types.variants(&sty) else {
            let what = if matches!(sty, RustType::Var(_)) {
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
            RustType::Adt(i) => Some(self.it.types.adts[i].name.clone()),
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
                .any(|(_, _, t): &(String, Option<String>, RustType)| !self.it.types.is_copy(t))
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
        let mut ty = RustType::Never;
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
            if self.it.types.shallow(&ty) == RustType::Never {
                ty = t.clone();
            }
        }
        let result =
            (want && self.it.types.shallow(&ty) != RustType::Never).then(|| self.hidden("v"));
        let mut chain: Vec<Stmt> = Vec::new();
        for (k, (mut stmts, x, t, _)) in lowered.into_iter().enumerate().rev() {
            if self.it.types.shallow(&t) != RustType::Never {
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
    pub(super) fn arm_pattern(
        &self,
        pat: &syn::Pat,
        variants: &[(String, Shape)],
        enum_name: Option<&str>,
        sty: &RustType,
    ) -> Checked<(Option<usize>, Vec<(String, Option<String>, RustType)>)> {
        let p = pos_of(pat);
        let find = |path: &syn::Path| -> Checked<(usize, Shape)> {
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
        let leaf = |q: &syn::Pat| -> Checked<Option<String>> {
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

    pub(super) fn loop_body(&mut self, body: &syn::Block) -> Checked<Vec<Stmt>> {
        // A loop repeats: an exit that follows outside it does not cover moves inside it.
        let saved = self.leaving.take();
        let r = self.collect(|s| s.block(body, false));
        self.leaving = saved;
        let (mut stmts, (x, t)) = r?;
        if !self.it.types.unify(&RustType::Unit, &t) {
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

    /// Pushes the frame of a loop being checked: `is_loop` for `loop`,
    /// whose `break` may carry a value of type `ty`; `while` and `for`
    /// have type `()`. Closure borrows are marked where it begins.
    fn enter_loop(&mut self, is_loop: bool, ty: RustType) {
        let borrow_marks = self.borrow_marks();
        self.fxm().loops.push(LoopCx {
            is_loop,
            value: None,
            ty,
            broke: false,
            borrow_marks,
        });
    }

    pub(super) fn while_loop(&mut self, w: &syn::ExprWhile) -> Checked<(Expr, RustType)> {
        let p = pos_of(w);
        no_label(&w.label, p)?;
        // The condition runs on every iteration: it is inside the loop.
        self.enter_loop(false, RustType::Unit);
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
        self.unify_at(
            &RustType::Bool,
            &ct,
            pos_of(&*w.cond),
            "a `while` condition",
        )?;
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
        Ok((undef(p), RustType::Unit))
    }

    pub(super) fn loop_expr(&mut self, l: &syn::ExprLoop) -> Checked<(Expr, RustType)> {
        let p = pos_of(l);
        no_label(&l.label, p)?;
        let ty = self.it.types.fresh();
        self.enter_loop(true, ty.clone());
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
            _ => Ok((undef(p), RustType::Never)),
        }
    }

    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop) -> Checked<(Expr, RustType)> {
        let p = pos_of(f);
        no_label(&f.label, p)?;
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
                self.unify_at(&RustType::Int, t, pos_of(&**e), "a range bound")?;
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
                RustType::Int,
                var(counter),
            )
        } else {
            let (v, vt) = self.expr(&f.expr, true)?;
            let elem = self.it.types.fresh();
            if !self
                .it
                .types
                .unify(&RustType::Vec(Box::new(elem.clone())), &vt)
            {
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
        self.enter_loop(false, RustType::Unit);
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
        Ok((undef(p), RustType::Unit))
    }

    pub(super) fn break_expr(&mut self, b: &syn::ExprBreak, p: Pos) -> Checked<(Expr, RustType)> {
        no_label(&b.label, p)?;
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
                    self.unify_at(&ty, &RustType::Unit, p, "the loop's value")?;
                }
            }
        }
        if let Some(c) = self.fxm().loops.last_mut() {
            c.broke = true;
        }
        self.out.push(st(StmtKind::Break, p));
        Ok((undef(p), RustType::Never))
    }

    pub(super) fn return_expr(&mut self, r: &syn::ExprReturn, p: Pos) -> Checked<(Expr, RustType)> {
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
                self.unify_at(&ret, &RustType::Unit, p, "the function's return type")?;
                undef(p)
            }
        };
        self.out.push(st(StmtKind::Return(Some(x)), p));
        Ok((undef(p), RustType::Never))
    }
}

/// Refuses a label on a loop or a `break`: labels are outside the subset.
fn no_label(label: &Option<impl Sized>, p: Pos) -> Checked<()> {
    match label {
        Some(_) => Err(err(
            Code::Unsupported,
            "labels are outside the Rust subset",
            p,
        )),
        None => Ok(()),
    }
}
