//! The Rust subset's types: scalars, `String`, `Vec`, `Option`, `Result`,
//! user structs and enums, closures, and inference variables solved by
//! unification (for `Vec::new()`, `None`, `Ok`/`Err`, unannotated closure
//! parameters and durable results).

use std::collections::HashMap;

/// A type of the subset.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// `f64`
    F64,
    /// `bool`
    Bool,
    /// `String`
    Str,
    /// `&'static str` (string literals)
    StaticStr,
    /// `()`
    Unit,
    /// `!` (return, break, continue)
    Never,
    /// An integer literal or range binding: usable only as a range bound or with `as f64`.
    Int,
    /// `Vec<T>` (the prelude's: `len` and indexes are `f64`)
    Vec(Box<Ty>),
    /// `Option<T>`
    Opt(Box<Ty>),
    /// `Result<T, E>`
    Res(Box<Ty>, Box<Ty>),
    /// A user struct or enum (index into [`Types::adts`]).
    Adt(usize),
    /// A closure (index into [`Types::closures`]).
    Closure(usize),
    /// An inference variable.
    Var(u32),
}

/// A variant's payload.
#[derive(Debug, Clone)]
pub enum Shape {
    /// `V`
    Unit,
    /// `V(T0, T1, …)`, stored as `$0`, `$1`, …
    Tuple(Vec<Ty>),
    /// `V { a: T, … }`, stored under the field names.
    Named(Vec<(String, Ty)>),
}

/// A user struct or enum.
#[derive(Debug, Clone)]
pub struct Adt {
    /// Source name.
    pub name: String,
    /// Enum (variants) or struct (fields).
    pub is_enum: bool,
    /// Struct fields in declaration order.
    pub fields: Vec<(String, Ty)>,
    /// Enum variants in declaration order.
    pub variants: Vec<(String, Shape)>,
}

/// A closure's signature.
#[derive(Debug, Clone)]
pub struct ClosureSig {
    /// Parameter types.
    pub params: Vec<Ty>,
    /// Result type.
    pub ret: Ty,
    /// Moves out of a capture (`FnOnce`): calling it moves the closure.
    pub once: bool,
}

/// Every type of one compilation unit, and the inference state.
#[derive(Debug, Default)]
pub struct Types {
    /// User structs and enums.
    pub adts: Vec<Adt>,
    /// Name → ADT index.
    pub by_name: HashMap<String, usize>,
    /// Closure signatures.
    pub closures: Vec<ClosureSig>,
    subst: Vec<Option<Ty>>,
}

impl Types {
    /// A fresh inference variable.
    pub fn fresh(&mut self) -> Ty {
        self.subst.push(None);
        Ty::Var(self.subst.len() as u32 - 1)
    }

    /// The type with solved variables at its head replaced.
    pub fn shallow(&self, t: &Ty) -> Ty {
        let mut t = t.clone();
        while let Ty::Var(v) = t {
            match self.subst.get(v as usize).and_then(|x| x.clone()) {
                Some(next) => t = next,
                None => break,
            }
        }
        t
    }

    /// The type with every solved variable replaced.
    pub fn resolve(&self, t: &Ty) -> Ty {
        match self.shallow(t) {
            Ty::Vec(x) => Ty::Vec(Box::new(self.resolve(&x))),
            Ty::Opt(x) => Ty::Opt(Box::new(self.resolve(&x))),
            Ty::Res(a, b) => Ty::Res(Box::new(self.resolve(&a)), Box::new(self.resolve(&b))),
            other => other,
        }
    }

    fn occurs(&self, v: u32, t: &Ty) -> bool {
        match self.shallow(t) {
            Ty::Var(w) => v == w,
            Ty::Vec(x) | Ty::Opt(x) => self.occurs(v, &x),
            Ty::Res(a, b) => self.occurs(v, &a) || self.occurs(v, &b),
            _ => false,
        }
    }

    /// Makes `a` and `b` the same type; `false` when they cannot be.
    /// `!` unifies with everything without fixing anything.
    pub fn unify(&mut self, a: &Ty, b: &Ty) -> bool {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a, b) {
            (Ty::Never, _) | (_, Ty::Never) => true,
            (Ty::Var(x), Ty::Var(y)) if x == y => true,
            (Ty::Var(x), t) | (t, Ty::Var(x)) => {
                if self.occurs(x, &t) {
                    return false;
                }
                self.subst[x as usize] = Some(t);
                true
            }
            (Ty::Vec(x), Ty::Vec(y)) | (Ty::Opt(x), Ty::Opt(y)) => self.unify(&x, &y),
            (Ty::Res(a1, b1), Ty::Res(a2, b2)) => self.unify(&a1, &a2) && self.unify(&b1, &b2),
            (x, y) => x == y,
        }
    }

    /// Whether an unsolved inference variable remains in the type.
    pub fn has_var(&self, t: &Ty) -> bool {
        match self.shallow(t) {
            Ty::Var(_) => true,
            Ty::Vec(x) | Ty::Opt(x) => self.has_var(&x),
            Ty::Res(a, b) => self.has_var(&a) || self.has_var(&b),
            _ => false,
        }
    }

    /// Whether values of the type are copied rather than moved (`f64`,
    /// `bool`, `()`, `&'static str`, and `Option`/`Result` of those).
    /// Unsolved variables count as moving.
    pub fn is_copy(&self, t: &Ty) -> bool {
        match self.shallow(t) {
            Ty::F64 | Ty::Bool | Ty::Unit | Ty::Never | Ty::Int | Ty::StaticStr => true,
            Ty::Opt(x) => self.is_copy(&x),
            Ty::Res(a, b) => self.is_copy(&a) && self.is_copy(&b),
            _ => false,
        }
    }

    /// Rust spelling of a type, for diagnostics.
    pub fn show(&self, t: &Ty) -> String {
        match self.shallow(t) {
            Ty::F64 => "f64".into(),
            Ty::Bool => "bool".into(),
            Ty::Str => "String".into(),
            Ty::StaticStr => "&'static str".into(),
            Ty::Unit => "()".into(),
            Ty::Never => "!".into(),
            Ty::Int => "{integer}".into(),
            Ty::Vec(x) => format!("Vec<{}>", self.show(&x)),
            Ty::Opt(x) => format!("Option<{}>", self.show(&x)),
            Ty::Res(a, b) => format!("Result<{}, {}>", self.show(&a), self.show(&b)),
            Ty::Adt(i) => self
                .adts
                .get(i)
                .map_or_else(|| "?".into(), |a| a.name.clone()),
            Ty::Closure(_) => "closure".into(),
            Ty::Var(_) => "_".into(),
        }
    }

    /// The variants of an enum-like type (user enum, `Option`, `Result`) with their payload types.
    pub fn variants(&self, t: &Ty) -> Option<Vec<(String, Shape)>> {
        match self.shallow(t) {
            Ty::Adt(i) if self.adts.get(i).is_some_and(|a| a.is_enum) => {
                Some(self.adts[i].variants.clone())
            }
            Ty::Opt(x) => Some(vec![
                ("None".into(), Shape::Unit),
                ("Some".into(), Shape::Tuple(vec![*x])),
            ]),
            Ty::Res(a, b) => Some(vec![
                ("Ok".into(), Shape::Tuple(vec![*a])),
                ("Err".into(), Shape::Tuple(vec![*b])),
            ]),
            _ => None,
        }
    }
}
