//! Section 4: type shapes, void placement and recursion.
//!
//! Type equality is handle equality: the [`TypeArena`] interns structural
//! types and declares one entry per record declaration, so two handles of
//! one module denote the same type exactly when they are equal (structural
//! for scalars, vectors, matrices, samplers and arrays, nominal for
//! records).

use super::diagnostic::{Check, Rule, Subject, fail, record_description};
use crate::ir::{Handle, Type, TypeArena, TypeInner};
use std::collections::HashSet;

/// Checks every entry of the type table, used or not, and returns the
/// entries in dependency order (elements and fields before their users).
pub(crate) fn check(types: &TypeArena) -> Check<Vec<Handle<Type>>> {
    for (h, t) in types.iter() {
        let subject = Subject::Type(h);
        let err = |message: String| fail(Rule::Type, subject, t.span, message);
        let component = |c: Handle<Type>, what: &str| -> Check {
            match types.inner(c) {
                None => Err(err(format!("{what} type handle is out of range"))),
                Some(TypeInner::Void) => Err(err(format!(
                    "{what} type is void (void is only a function return type)"
                ))),
                Some(_) => Ok(()),
            }
        };
        match &t.inner {
            TypeInner::Void | TypeInner::Scalar(_) | TypeInner::Sampler(_) => {}
            TypeInner::Vector { size, .. } => {
                if !(2..=4).contains(size) {
                    return Err(err(format!("vector size {size} is not 2, 3 or 4")));
                }
            }
            TypeInner::Matrix { rows, columns } => {
                if !(2..=4).contains(rows) || !(2..=4).contains(columns) {
                    return Err(err(format!(
                        "matrix dimensions {rows}x{columns} are outside 2..4"
                    )));
                }
            }
            TypeInner::Array { element, length } => {
                component(*element, "array element")?;
                if *length == 0 {
                    return Err(err(
                        "array length is zero (unsized arrays are not supported)".into(),
                    ));
                }
            }
            TypeInner::Record(r) => {
                if r.name.is_empty() {
                    return Err(err("record display name is empty".into()));
                }
                let mut seen = HashSet::new();
                for field in &r.fields {
                    let ferr = |m: String| fail(Rule::Type, subject, field.span.or(t.span), m);
                    if field.name.is_empty() {
                        return Err(ferr(format!(
                            "record {:?} has a field with an empty name",
                            r.name
                        )));
                    }
                    if !seen.insert(field.name.as_str()) {
                        return Err(ferr(format!(
                            "record {:?} declares field {:?} twice",
                            r.name, field.name
                        )));
                    }
                    component(field.ty, "record field")?;
                }
            }
        }
    }
    dependency_order(types)
}

/// The direct components of a type.
pub(crate) fn children(
    types: &TypeArena,
    h: Handle<Type>,
) -> impl Iterator<Item = Handle<Type>> + '_ {
    let (array, fields) = match types.inner(h) {
        Some(TypeInner::Array { element, .. }) => (Some(*element), &[][..]),
        Some(TypeInner::Record(r)) => (None, r.fields.as_slice()),
        _ => (None, &[][..]),
    };
    array.into_iter().chain(fields.iter().map(|f| f.ty))
}

/// Rejects recursive types (iterative three-colour DFS) and returns a
/// dependency order of all entries.
fn dependency_order(types: &TypeArena) -> Check<Vec<Handle<Type>>> {
    let mut colour = vec![0u8; types.len()];
    let mut order = Vec::with_capacity(types.len());
    for (start, _) in types.iter() {
        if colour[start.index()] != 0 {
            continue;
        }
        let mut stack: Vec<(Handle<Type>, usize)> = vec![(start, 0)];
        colour[start.index()] = 1;
        while let Some(&mut (h, ref mut next)) = stack.last_mut() {
            if let Some(child) = children(types, h).nth(*next) {
                *next += 1;
                match colour[child.index()] {
                    0 => {
                        colour[child.index()] = 1;
                        stack.push((child, 0));
                    }
                    1 => {
                        return Err(fail(
                            Rule::Type,
                            Subject::Type(child),
                            types[child].span,
                            "recursive value type (a type may not contain itself)",
                        ));
                    }
                    _ => {}
                }
            } else {
                colour[h.index()] = 2;
                order.push(h);
                stack.pop();
            }
        }
    }
    Ok(order)
}

/// A short human description of a type (bounded depth).
pub(crate) fn describe(types: &TypeArena, h: Handle<Type>) -> String {
    let mut out = String::new();
    describe_into(types, h, 3, &mut out);
    out
}

fn describe_into(types: &TypeArena, h: Handle<Type>, depth: u32, out: &mut String) {
    use std::fmt::Write as _;
    let Some(inner) = types.inner(h) else {
        out.push_str("<invalid type>");
        return;
    };
    match inner {
        TypeInner::Void => out.push_str("void"),
        TypeInner::Scalar(k) => out.push_str(k.keyword()),
        TypeInner::Vector { kind, size } => {
            let _ = write!(out, "vector {} {size}", kind.keyword());
        }
        TypeInner::Matrix { rows, columns } => {
            let _ = write!(out, "matrix {rows} {columns}");
        }
        TypeInner::Sampler(_) => out.push_str("sampler2D"),
        TypeInner::Array { element, length } => {
            out.push_str("array (");
            if depth == 0 {
                out.push_str("...");
            } else {
                describe_into(types, *element, depth - 1, out);
            }
            let _ = write!(out, ") {length}");
        }
        TypeInner::Record(r) => out.push_str(&record_description(&r.name, h)),
    }
}
