//! Rust subset (`rust.subset.v1`) → [`hir::Module`], type-checked here.
//!
//! The text is parsed with `syn` (full syntax). Items are collected first
//! (the prelude `use`, structs, enums, function signatures), then every
//! function body is checked and lowered in one walk ([`body`]): each
//! expression gets a type (inference variables are solved by unification),
//! fields and variants must exist, `match` must be exhaustive, `?` must
//! fit the function's result, moved values must not be used again, and
//! durable operations may appear only in the entry function. Nothing is
//! emitted unless the whole unit checks.
//!
//! Value encoding (the reference frontend's): structs are objects keyed by
//! field; enum values are objects with the variant name under `$tag` and
//! tuple payloads under `$0`, `$1`, …, named payloads under their names;
//! `Option`/`Result` are the enums `None`/`Some`, `Ok`/`Err`; `()` is
//! `undefined`; a `Vec` is an array whose length and indexes are `f64`.

mod body;
mod items;
mod types;

use std::collections::{HashMap, HashSet};

use tcc_ir::Constant;

use crate::error::{Code, FrontendError};
use crate::hir::{Func, Module, Pos, Var};
use items::{FnSig, Items, err, pos_of, ty_of};
pub use items::{PRELUDE, PRELUDE_ITEMS};
pub use types::{Adt, RustType, Shape, Types};

fn parse(source: &str) -> Result<syn::File, FrontendError> {
    syn::parse_file(source).map_err(|e| {
        let r = e.span().byte_range();
        let at = if r.start == 0 && r.end == 0 && !source.is_empty() {
            source.len().saturating_sub(1)
        } else {
            r.start
        };
        err(
            Code::Syntax,
            format!("syntax error: {e}"),
            Pos {
                start: at as u32,
                end: r.end.max(at) as u32,
            },
        )
    })
}

/// Runs only the parser (`syn`), the baseline of the compile benchmark.
pub fn parse_only(source: &str) -> Result<(), FrontendError> {
    parse(source).map(|_| ())
}

/// Lowers a Rust-subset source file.
pub fn lower(source: &str, _file: &str) -> Result<Module, FrontendError> {
    let file = parse(source)?;
    if let Some(a) = file.attrs.first() {
        return Err(err(
            Code::Unsupported,
            "attributes are outside the Rust subset",
            pos_of(a),
        ));
    }
    let mut items = Items {
        types: Types::default(),
        fns: HashMap::new(),
        imported: HashSet::new(),
    };
    let mut module = Module::default();
    let mut fn_items: Vec<&syn::ItemFn> = Vec::new();
    // Declare type names first so fields may name later types.
    for item in &file.items {
        match item {
            syn::Item::Use(u) => use_item(u, &mut items.imported)?,
            syn::Item::Struct(s) => {
                no_attrs(&s.attrs)?;
                no_generics(&s.generics)?;
                declare(&mut items.types, &s.ident, false)?;
            }
            syn::Item::Enum(e) => {
                no_attrs(&e.attrs)?;
                no_generics(&e.generics)?;
                declare(&mut items.types, &e.ident, true)?;
            }
            syn::Item::Fn(f) => fn_items.push(f),
            syn::Item::Impl(_) | syn::Item::Trait(_) | syn::Item::TraitAlias(_) => {
                return Err(err(
                    Code::Unsupported,
                    "traits and impls are outside the Rust subset",
                    pos_of(item),
                ));
            }
            syn::Item::Mod(_) | syn::Item::ExternCrate(_) | syn::Item::ForeignMod(_) => {
                return Err(err(
                    Code::Unsupported,
                    "modules and extern items are outside the Rust subset",
                    pos_of(item),
                ));
            }
            syn::Item::Macro(_) => {
                return Err(err(
                    Code::Unsupported,
                    "macros are outside the Rust subset",
                    pos_of(item),
                ));
            }
            _ => {
                return Err(err(
                    Code::Unsupported,
                    "this item is outside the Rust subset",
                    pos_of(item),
                ));
            }
        }
    }
    for item in &file.items {
        match item {
            syn::Item::Struct(s) => {
                let syn::Fields::Named(named) = &s.fields else {
                    return Err(err(
                        Code::Unsupported,
                        "structs have named fields in the Rust subset",
                        pos_of(s),
                    ));
                };
                let mut fields = Vec::new();
                for f in &named.named {
                    no_attrs(&f.attrs)?;
                    let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                    if fields.iter().any(|(n, _)| *n == name) {
                        return Err(err(
                            Code::Type,
                            format!("field `{name}` is declared twice"),
                            pos_of(f),
                        ));
                    }
                    fields.push((name, ty_of(&mut items.types, &f.ty, &items.imported)?));
                }
                let i = items.types.by_name[&s.ident.to_string()];
                items.types.adts[i].fields = fields;
            }
            syn::Item::Enum(e) => {
                let mut variants: Vec<(String, Shape)> = Vec::new();
                for v in &e.variants {
                    no_attrs(&v.attrs)?;
                    if let Some((_, d)) = &v.discriminant {
                        return Err(err(
                            Code::Unsupported,
                            "enum discriminants are outside the Rust subset",
                            pos_of(d),
                        ));
                    }
                    let name = v.ident.to_string();
                    if variants.iter().any(|(n, _)| *n == name) {
                        return Err(err(
                            Code::Type,
                            format!("variant `{name}` is declared twice"),
                            pos_of(v),
                        ));
                    }
                    let shape = match &v.fields {
                        syn::Fields::Unit => Shape::Unit,
                        syn::Fields::Unnamed(u) => Shape::Tuple(
                            u.unnamed
                                .iter()
                                .map(|f| ty_of(&mut items.types, &f.ty, &items.imported))
                                .collect::<Result<_, _>>()?,
                        ),
                        syn::Fields::Named(n) => Shape::Named(
                            n.named
                                .iter()
                                .map(|f| {
                                    let name =
                                        f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
                                    Ok((name, ty_of(&mut items.types, &f.ty, &items.imported)?))
                                })
                                .collect::<Result<_, FrontendError>>()?,
                        ),
                    };
                    variants.push((name, shape));
                }
                let i = items.types.by_name[&e.ident.to_string()];
                items.types.adts[i].variants = variants;
            }
            _ => {}
        }
    }
    check_recursion(&items.types, &file)?;
    // Entry: `async fn run`, else the older `pub async fn main`.
    let entry_name = if fn_items.iter().any(|f| f.sig.ident == "run") {
        "run"
    } else if fn_items.iter().any(|f| f.sig.ident == "main") {
        "main"
    } else {
        return Err(err(
            Code::Entry,
            "no entry function: define `async fn run(…)`",
            Pos::default(),
        ));
    };
    for f in &fn_items {
        let name = f.sig.ident.to_string();
        let is_entry = name == entry_name;
        signature_shape(f, is_entry)?;
        if items.fns.contains_key(&name) {
            return Err(err(
                Code::Entry,
                format!("function `{name}` is defined twice"),
                pos_of(&f.sig.ident),
            ));
        }
        if PRELUDE_ITEMS.contains(&name.as_str()) && items.imported.contains(&name) {
            return Err(err(
                Code::Type,
                format!("`{name}` is already imported from the prelude"),
                pos_of(&f.sig.ident),
            ));
        }
        let mut params = Vec::new();
        for p in &f.sig.inputs {
            let syn::FnArg::Typed(pt) = p else {
                return Err(err(
                    Code::Unsupported,
                    "`self` parameters are outside the Rust subset",
                    pos_of(p),
                ));
            };
            let (pname, mutable) = match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    (pi.ident.to_string(), pi.mutability.is_some())
                }
                other => {
                    return Err(err(
                        Code::Unsupported,
                        "parameters are plain names in the Rust subset",
                        pos_of(other),
                    ));
                }
            };
            params.push((
                pname,
                ty_of(&mut items.types, &pt.ty, &items.imported)?,
                mutable,
            ));
        }
        let ret = match &f.sig.output {
            syn::ReturnType::Default => RustType::Unit,
            syn::ReturnType::Type(_, t) => ty_of(&mut items.types, t, &items.imported)?,
        };
        let func = module.funcs.len();
        module.funcs.push(Func {
            name: name.clone(),
            pos: pos_of(*f),
            implicit_return: Constant::Undefined,
            vars: params
                .iter()
                .map(|(n, _, _)| Var {
                    name: n.clone(),
                    captured: false,
                })
                .collect(),
            params: (0..params.len()).collect(),
            param_defaults: vec![None; params.len()],
            ..Func::default()
        });
        if is_entry {
            module.entry = func;
        }
        items.fns.insert(name, FnSig { func, params, ret });
    }
    for f in &fn_items {
        let name = f.sig.ident.to_string();
        body::lower_fn(&mut items, &mut module, &name, &f.block, name == entry_name)?;
    }
    Ok(module)
}

fn no_attrs(attrs: &[syn::Attribute]) -> Result<(), FrontendError> {
    match attrs.first() {
        Some(a) => Err(err(
            Code::Unsupported,
            "attributes (derive included) are outside the Rust subset",
            pos_of(a),
        )),
        None => Ok(()),
    }
}

fn no_generics(g: &syn::Generics) -> Result<(), FrontendError> {
    if !g.params.is_empty() || g.where_clause.is_some() {
        return Err(err(
            Code::Unsupported,
            "generics are outside the Rust subset",
            pos_of(g),
        ));
    }
    Ok(())
}

fn declare(types: &mut Types, ident: &syn::Ident, is_enum: bool) -> Result<(), FrontendError> {
    let name = ident.to_string();
    if types.by_name.contains_key(&name)
        || matches!(
            name.as_str(),
            "Option"
                | "Result"
                | "Vec"
                | "String"
                | "f64"
                | "bool"
                | "Some"
                | "None"
                | "Ok"
                | "Err"
        )
    {
        return Err(err(
            Code::Type,
            format!("type `{name}` is defined twice or shadows a built-in type"),
            pos_of(ident),
        ));
    }
    types.by_name.insert(name.clone(), types.adts.len());
    types.adts.push(Adt {
        name,
        is_enum,
        fields: Vec::new(),
        variants: Vec::new(),
    });
    Ok(())
}

fn use_item(u: &syn::ItemUse, imported: &mut HashSet<String>) -> Result<(), FrontendError> {
    no_attrs(&u.attrs)?;
    let bad = || {
        err(
            Code::Import,
            format!("only items of the prelude `{PRELUDE}` may be imported"),
            pos_of(u),
        )
    };
    let syn::UseTree::Path(p) = &u.tree else {
        return Err(bad());
    };
    if p.ident != PRELUDE || u.leading_colon.is_some() {
        return Err(bad());
    }
    let mut leaves = Vec::new();
    fn walk<'a>(t: &'a syn::UseTree, out: &mut Vec<&'a syn::UseTree>) {
        match t {
            syn::UseTree::Group(g) => g.items.iter().for_each(|i| walk(i, out)),
            other => out.push(other),
        }
    }
    walk(&p.tree, &mut leaves);
    for leaf in leaves {
        match leaf {
            syn::UseTree::Name(n) if PRELUDE_ITEMS.contains(&n.ident.to_string().as_str()) => {
                imported.insert(n.ident.to_string());
            }
            syn::UseTree::Glob(_) => {
                imported.extend(PRELUDE_ITEMS.iter().map(|s| s.to_string()));
            }
            syn::UseTree::Name(n) => {
                return Err(err(
                    Code::Import,
                    format!("the prelude has no item `{}`", n.ident),
                    pos_of(n),
                ));
            }
            other => {
                return Err(err(
                    Code::Import,
                    "renames and nested paths are outside the Rust subset",
                    pos_of(other),
                ));
            }
        }
    }
    Ok(())
}

fn signature_shape(f: &syn::ItemFn, is_entry: bool) -> Result<(), FrontendError> {
    no_attrs(&f.attrs)?;
    no_generics(&f.sig.generics)?;
    let s = &f.sig;
    if let Some(u) = &s.unsafety {
        return Err(err(
            Code::Unsupported,
            "unsafe is outside the Rust subset",
            pos_of(u),
        ));
    }
    if s.constness.is_some() || s.abi.is_some() || s.variadic.is_some() {
        return Err(err(
            Code::Unsupported,
            "const, extern and variadic functions are outside the Rust subset",
            pos_of(s),
        ));
    }
    if is_entry && s.asyncness.is_none() {
        return Err(err(
            Code::Entry,
            format!("the entry `{}` must be an `async fn`", s.ident),
            pos_of(&s.ident),
        ));
    }
    if !is_entry && s.asyncness.is_some() {
        return Err(err(
            Code::Entry,
            format!(
                "only the entry is async; helper `{}` must be a plain `fn`",
                s.ident
            ),
            pos_of(&s.ident),
        ));
    }
    Ok(())
}

/// A struct or enum that contains itself (without indirection) has no size in Rust.
fn check_recursion(types: &Types, file: &syn::File) -> Result<(), FrontendError> {
    fn reaches(types: &Types, t: &RustType, target: usize, seen: &mut HashSet<usize>) -> bool {
        match t {
            RustType::Opt(x) => reaches(types, x, target, seen),
            RustType::Res(a, b) => {
                reaches(types, a, target, seen) || reaches(types, b, target, seen)
            }
            RustType::Adt(i) => {
                if *i == target {
                    return true;
                }
                if !seen.insert(*i) {
                    return false;
                }
                let a = &types.adts[*i];
                a.fields
                    .iter()
                    .any(|(_, t)| reaches(types, t, target, seen))
                    || a.variants.iter().any(|(_, s)| match s {
                        Shape::Unit => false,
                        Shape::Tuple(ts) => ts.iter().any(|t| reaches(types, t, target, seen)),
                        Shape::Named(fs) => fs.iter().any(|(_, t)| reaches(types, t, target, seen)),
                    })
            }
            _ => false,
        }
    }
    for (i, a) in types.adts.iter().enumerate() {
        let inner: Vec<&RustType> = a
            .fields
            .iter()
            .map(|(_, t)| t)
            .chain(a.variants.iter().flat_map(|(_, s)| match s {
                Shape::Unit => Vec::new(),
                Shape::Tuple(ts) => ts.iter().collect(),
                Shape::Named(fs) => fs.iter().map(|(_, t)| t).collect(),
            }))
            .collect();
        if inner
            .iter()
            .any(|t| reaches(types, t, i, &mut HashSet::new()))
        {
            let at = file
                .items
                .iter()
                .find_map(|it| match it {
                    syn::Item::Struct(s) if s.ident == a.name => Some(pos_of(&s.ident)),
                    syn::Item::Enum(e) if e.ident == a.name => Some(pos_of(&e.ident)),
                    _ => None,
                })
                .unwrap_or_default();
            return Err(err(
                Code::Type,
                format!("recursive type `{}` has infinite size", a.name),
                at,
            ));
        }
    }
    Ok(())
}
