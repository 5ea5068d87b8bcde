//! Name resolution: bindings, scopes, captures of the enclosing function, paths.

use super::*;

impl BodyLowerer<'_> {
    pub(super) fn bind(&mut self, name: &str, ty: RustType, mutable: bool) -> VarRef {
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

    pub(super) fn lookup(&self, name: &str) -> Option<Bind> {
        self.fx().scopes.iter().rev().find_map(|s| {
            s.iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, b)| b.clone())
        })
    }

    /// A name: a local, or (in a closure) a copy of the enclosing function's local.
    pub(super) fn resolve(&mut self, name: &str, pos: Pos) -> Checked<Option<Bind>> {
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

    pub(super) fn path(
        &mut self,
        path: &syn::ExprPath,
        consume: bool,
        p: Pos,
    ) -> Checked<(Expr, RustType)> {
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
                Ok((tagged("None", Vec::new(), p), RustType::Opt(Box::new(t))))
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
                if matches!(self.it.types.shallow(&b.ty), RustType::Closure(_)) {
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

    pub(super) fn variant_of(&self, en: &str, vn: &str, p: Pos) -> Checked<(RustType, Shape)> {
        let Some(&i) = self.it.types.by_name.get(en) else {
            return Err(err(Code::UnknownName, format!("unknown enum `{en}`"), p));
        };
        let adt = &self.it.types.adts[i];
        if !adt.is_enum {
            return Err(self.type_error(format!("`{en}` is a struct, not an enum"), p));
        }
        match adt.variants.iter().find(|(n, _)| n == vn) {
            Some((_, s)) => Ok((RustType::Adt(i), s.clone())),
            None => Err(self.type_error(format!("no variant `{vn}` in enum `{en}`"), p)),
        }
    }

    /// A place: `x`, `x.f.g`, `x[i]`: (root variable name, field path).
    pub(super) fn place_root(e: &syn::Expr) -> Option<(&syn::Ident, Vec<String>)> {
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

    pub(super) fn is_durable_name(&self, name: &str) -> bool {
        matches!(
            name,
            "effect" | "effect_with" | "wait_for_event" | "sleep" | "invoke" | "join" | "race"
        ) && self.it.imported.contains(name)
            && self.lookup(name).is_none()
    }
}
