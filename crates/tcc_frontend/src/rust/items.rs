//! What the item collector (`rust/mod.rs`) hands the body checker
//! (`rust/body.rs`): the prelude's names, the collected signatures and
//! types, source type resolution and the error helpers. A leaf of the two,
//! so neither imports the other back.

use std::collections::{HashMap, HashSet};

use syn::spanned::Spanned;

use super::types::{RustType, Types};
use crate::error::{Code, FrontendError};
use crate::hir::Pos;

/// The crate name the reference's prelude is published under; its items are
/// the only ones a program may `use`.
pub const PRELUDE: &str = "tcc_rust_prelude";

/// Items the prelude provides.
/// (`effect_with`, an effect with input data, is irkit's: issue 33.)
pub const PRELUDE_ITEMS: [&str; 8] = [
    "effect",
    "effect_with",
    "wait_for_event",
    "sleep",
    "invoke",
    "join",
    "race",
    "Vec",
];

pub(crate) fn err(code: Code, message: impl Into<String>, pos: Pos) -> FrontendError {
    FrontendError::new(code, message, pos)
}

/// The byte range of a syntax node.
pub(crate) fn pos_of<T: Spanned + ?Sized>(node: &T) -> Pos {
    let r = node.span().byte_range();
    Pos {
        start: r.start as u32,
        end: r.end as u32,
    }
}

/// A helper (or the entry) function's signature.
#[derive(Debug, Clone)]
pub(crate) struct FnSig {
    pub func: usize,
    pub params: Vec<(String, RustType, bool)>,
    pub ret: RustType,
}

/// Collected items: what the bodies are checked against.
pub(crate) struct Items {
    pub types: Types,
    pub fns: HashMap<String, FnSig>,
    pub imported: HashSet<String>,
}

/// A source type → [`RustType`].
pub(crate) fn ty_of(
    types: &mut Types,
    t: &syn::Type,
    imported: &HashSet<String>,
) -> Result<RustType, FrontendError> {
    let unsupported = |m: &str| err(Code::Unsupported, m.to_string(), pos_of(t));
    match t {
        syn::Type::Paren(p) => ty_of(types, &p.elem, imported),
        syn::Type::Tuple(tt) if tt.elems.is_empty() => Ok(RustType::Unit),
        syn::Type::Tuple(_) => Err(unsupported("tuples are outside the Rust subset")),
        syn::Type::Never(_) => Ok(RustType::Never),
        syn::Type::Reference(r) => {
            let is_static = r.lifetime.as_ref().is_some_and(|l| l.ident == "static");
            let is_str = matches!(&*r.elem, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("str"));
            if is_static && is_str && r.mutability.is_none() {
                Ok(RustType::StaticStr)
            } else {
                Err(unsupported(
                    "references are outside the Rust subset (only `&'static str`)",
                ))
            }
        }
        syn::Type::Path(p)
            if p.qself.is_none()
                && p.path.segments.len() == 1
                && p.path.leading_colon.is_none() =>
        {
            let seg = &p.path.segments[0];
            let name = seg.ident.to_string();
            let args: Vec<&syn::Type> = match &seg.arguments {
                syn::PathArguments::None => Vec::new(),
                syn::PathArguments::AngleBracketed(a) => a
                    .args
                    .iter()
                    .map(|g| match g {
                        syn::GenericArgument::Type(t) => Ok(t),
                        other => Err(err(
                            Code::Unsupported,
                            "only type arguments are in the Rust subset",
                            pos_of(other),
                        )),
                    })
                    .collect::<Result<_, _>>()?,
                syn::PathArguments::Parenthesized(_) => {
                    return Err(unsupported("function types are outside the Rust subset"));
                }
            };
            let arity = |n: usize| -> Result<(), FrontendError> {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(err(
                        Code::Type,
                        format!("`{name}` takes {n} type argument(s)"),
                        pos_of(t),
                    ))
                }
            };
            match name.as_str() {
                "f64" => arity(0).map(|_| RustType::F64),
                "bool" => arity(0).map(|_| RustType::Bool),
                "String" => arity(0).map(|_| RustType::Str),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize" => Err(unsupported(
                    "integer types are outside the Rust subset (numbers are `f64`)",
                )),
                "f32" | "char" | "str" => Err(unsupported("this type is outside the Rust subset")),
                "Vec" => {
                    arity(1)?;
                    if !imported.contains("Vec") {
                        return Err(err(
                            Code::Import,
                            format!("`Vec` is the prelude's: add `use {PRELUDE}::Vec;`"),
                            pos_of(t),
                        ));
                    }
                    Ok(RustType::Vec(Box::new(ty_of(types, args[0], imported)?)))
                }
                "Option" => {
                    arity(1)?;
                    Ok(RustType::Opt(Box::new(ty_of(types, args[0], imported)?)))
                }
                "Result" => {
                    arity(2)?;
                    let a = ty_of(types, args[0], imported)?;
                    Ok(RustType::Res(
                        Box::new(a),
                        Box::new(ty_of(types, args[1], imported)?),
                    ))
                }
                other => match types.by_name.get(other) {
                    Some(&i) => arity(0).map(|_| RustType::Adt(i)),
                    None => Err(err(
                        Code::UnknownName,
                        format!("unknown type `{other}`"),
                        pos_of(t),
                    )),
                },
            }
        }
        syn::Type::ImplTrait(_) | syn::Type::TraitObject(_) => {
            Err(unsupported("traits are outside the Rust subset"))
        }
        _ => Err(unsupported("this type is outside the Rust subset")),
    }
}
