//! The Rust subset's types: scalars, `String`, `Vec`, `Option`, `Result`,
//! user structs and enums, closures, and inference variables solved by
//! unification (for `Vec::new()`, `None`, `Ok`/`Err`, unannotated closure
//! parameters and durable results).

use std::collections::HashMap;

/// A type of the subset.
#[derive(Debug, Clone, PartialEq)]
pub enum RustType {
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
    Vec(Box<RustType>),
    /// `Option<T>`
    Opt(Box<RustType>),
    /// `Result<T, E>`
    Res(Box<RustType>, Box<RustType>),
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
    Tuple(Vec<RustType>),
    /// `V { a: T, … }`, stored under the field names.
    Named(Vec<(String, RustType)>),
}

/// A user struct or enum.
#[derive(Debug, Clone)]
pub struct Adt {
    /// Source name.
    pub name: String,
    /// Enum (variants) or struct (fields).
    pub is_enum: bool,
    /// Struct fields in declaration order.
    pub fields: Vec<(String, RustType)>,
    /// Enum variants in declaration order.
    pub variants: Vec<(String, Shape)>,
}

/// A closure's signature.
#[derive(Debug, Clone)]
pub struct ClosureSig {
    /// Parameter types.
    pub params: Vec<RustType>,
    /// Result type.
    pub ret: RustType,
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
    subst: Vec<Option<RustType>>,
}

impl Types {
    /// A fresh inference variable.
    pub fn fresh(&mut self) -> RustType {
        self.subst.push(None);
        RustType::Var(self.subst.len() as u32 - 1)
    }

    /// The type with solved variables at its head replaced.
    pub fn shallow(&self, t: &RustType) -> RustType {
        let mut t = t.clone();
        while let RustType::Var(v) = t {
            match self.subst.get(v as usize).and_then(|x| x.clone()) {
                Some(next) => t = next,
                None => break,
            }
        }
        t
    }

    /// The type with every solved variable replaced.
    pub fn resolve(&self, t: &RustType) -> RustType {
        match self.shallow(t) {
            RustType::Vec(x) => RustType::Vec(Box::new(self.resolve(&x))),
            RustType::Opt(x) => RustType::Opt(Box::new(self.resolve(&x))),
            RustType::Res(a, b) => {
                RustType::Res(Box::new(self.resolve(&a)), Box::new(self.resolve(&b)))
            }
            other => other,
        }
    }

    fn occurs(&self, v: u32, t: &RustType) -> bool {
        match self.shallow(t) {
            RustType::Var(w) => v == w,
            RustType::Vec(x) | RustType::Opt(x) => self.occurs(v, &x),
            RustType::Res(a, b) => self.occurs(v, &a) || self.occurs(v, &b),
            _ => false,
        }
    }

    /// Makes `a` and `b` the same type; `false` when they cannot be.
    /// `!` unifies with everything without fixing anything.
    pub fn unify(&mut self, a: &RustType, b: &RustType) -> bool {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a, b) {
            (RustType::Never, _) | (_, RustType::Never) => true,
            (RustType::Var(x), RustType::Var(y)) if x == y => true,
            (RustType::Var(x), t) | (t, RustType::Var(x)) => {
                if self.occurs(x, &t) {
                    return false;
                }
                self.subst[x as usize] = Some(t);
                true
            }
            (RustType::Vec(x), RustType::Vec(y)) | (RustType::Opt(x), RustType::Opt(y)) => {
                self.unify(&x, &y)
            }
            (RustType::Res(a1, b1), RustType::Res(a2, b2)) => {
                self.unify(&a1, &a2) && self.unify(&b1, &b2)
            }
            (x, y) => x == y,
        }
    }

    /// Whether an unsolved inference variable remains in the type.
    pub fn has_var(&self, t: &RustType) -> bool {
        match self.shallow(t) {
            RustType::Var(_) => true,
            RustType::Vec(x) | RustType::Opt(x) => self.has_var(&x),
            RustType::Res(a, b) => self.has_var(&a) || self.has_var(&b),
            _ => false,
        }
    }

    /// Whether values of the type are copied rather than moved (`f64`,
    /// `bool`, `()`, `&'static str`, and `Option`/`Result` of those).
    /// Unsolved variables count as moving.
    pub fn is_copy(&self, t: &RustType) -> bool {
        match self.shallow(t) {
            RustType::F64
            | RustType::Bool
            | RustType::Unit
            | RustType::Never
            | RustType::Int
            | RustType::StaticStr => true,
            RustType::Opt(x) => self.is_copy(&x),
            RustType::Res(a, b) => self.is_copy(&a) && self.is_copy(&b),
            _ => false,
        }
    }

    /// Rust spelling of a type, for diagnostics.
    pub fn show(&self, t: &RustType) -> String {
        match self.shallow(t) {
            RustType::F64 => "f64".into(),
            RustType::Bool => "bool".into(),
            RustType::Str => "String".into(),
            RustType::StaticStr => "&'static str".into(),
            RustType::Unit => "()".into(),
            RustType::Never => "!".into(),
            RustType::Int => "{integer}".into(),
            RustType::Vec(x) => format!("Vec<{}>", self.show(&x)),
            RustType::Opt(x) => format!("Option<{}>", self.show(&x)),
            RustType::Res(a, b) => format!("Result<{}, {}>", self.show(&a), self.show(&b)),
            RustType::Adt(i) => self
                .adts
                .get(i)
                .map_or_else(|| "?".into(), |a| a.name.clone()),
            RustType::Closure(_) => "closure".into(),
            RustType::Var(_) => "_".into(),
        }
    }

    /// The variants of an enum-like type (user enum, `Option`, `Result`) with their payload types.
    pub fn variants(&self, t: &RustType) -> Option<Vec<(String, Shape)>> {
        match self.shallow(t) {
            RustType::Adt(i) if self.adts.get(i).is_some_and(|a| a.is_enum) => {
                Some(self.adts[i].variants.clone())
            }
            RustType::Opt(x) => Some(vec![
                ("None".into(), Shape::Unit),
                ("Some".into(), Shape::Tuple(vec![*x])),
            ]),
            RustType::Res(a, b) => Some(vec![
                ("Ok".into(), Shape::Tuple(vec![*a])),
                ("Err".into(), Shape::Tuple(vec![*b])),
            ]),
            _ => None,
        }
    }
}
