//! The spelling rules for every name a module carries (docs/zlm/format.md,
//! "Names"): a name is "the exact accepted canonical UTF-8 identifier or
//! dotted module identity", and an ordinary message name is "exactly one
//! canonical identifier selector" — schema 1.9 has no operator-selector
//! token, so operator-message declarations reject before emission.
//!
//! A leaf: [`crate::validate::check`] applies [`check_module`] (so the writer
//! and the decoder both enforce it) and [`crate::zli`] uses the same
//! predicates.

use crate::error::{Error, Result, code};
use crate::model::{CallableKind, Module};

/// The characters operator selectors are spelled with (`+`, `==`, `<<`,
/// `[]`, `!`, …): a name made only of these is an operator selector.
const OPERATOR_CHARS: &str = "+-*/%<>=!&^|~[]";

/// Whether `name` is an identifier: a letter or `_`, then letters, digits
/// or `_` (Unicode alphabetic characters count as letters, Unicode
/// alphanumerics as letters and digits; nothing is case-folded or
/// normalized).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Whether `name` is a dotted identifier (`geo.shapes`): identifiers joined
/// by single dots.
pub fn is_dotted(name: &str) -> bool {
    name.split('.').all(is_identifier)
}

/// Whether `name` spells an operator selector (`+`, `==`, `[]`, …).
pub fn is_operator_selector(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| OPERATOR_CHARS.contains(c))
}

/// The spelling rule a name follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// An identifier.
    Identifier,
    /// A dotted identifier (package and module names).
    Dotted,
    /// A function name: an identifier, and not an operator selector.
    Message,
}

/// `Ok` when `name` follows `rule`, else `ZLM-NAME` (or `ZLM-OPERATOR` for
/// an operator-selector function name) naming `what`, without an offset
/// (the decoder adds the string's).
pub fn check(name: &str, rule: Rule, what: &dyn std::fmt::Display) -> Result<()> {
    match rule {
        Rule::Identifier => identifier(name, false, what),
        Rule::Dotted => identifier(name, true, what),
        Rule::Message if is_operator_selector(name) => Err(operator(what, name)),
        Rule::Message => identifier(name, false, what),
    }
}

fn operator(what: &dyn std::fmt::Display, name: &str) -> Error {
    Error::new(
        code::OPERATOR,
        format!(
            "{what} {name:?} is an operator selector: schema 1.9 has no operator-selector \
             token or arity field, so operator messages reject before emission"
        ),
    )
}

/// `Ok` when `name` is an identifier (a dotted one when `dotted`), else the
/// `ZLM-NAME` rejection naming `what`.
fn identifier(name: &str, dotted: bool, what: &dyn std::fmt::Display) -> Result<()> {
    let ok = if dotted {
        is_dotted(name)
    } else {
        is_identifier(name)
    };
    if ok {
        return Ok(());
    }
    let rule = if dotted {
        "a dotted identifier (identifiers joined by single dots)"
    } else {
        "an identifier (a letter or `_`, then letters, digits or `_`)"
    };
    Err(Error::new(
        code::NAME,
        format!("{what} {name:?} is not {rule}"),
    ))
}

/// Checks every name of `m`: package and module (dotted), imports,
/// declarations, fields, variants, payload fields, functions, parameters and
/// locals (identifiers). A message named by an operator selector rejects
/// with `ZLM-OPERATOR`; an initializer's name (`init`) is checked by
/// [`crate::validate`].
pub fn check_module(m: &Module) -> Result<()> {
    identifier(&m.package, true, &"package name")?;
    identifier(&m.name, true, &"module name")?;
    for i in &m.imports {
        identifier(&i.module, true, &"import module")?;
        identifier(&i.name, false, &format_args!("import {}", i.module))?;
    }
    for d in &m.declarations {
        identifier(
            &d.name,
            false,
            &format_args!("{} declaration", d.kind.text()),
        )?;
        for f in &d.fields {
            identifier(&f.name, false, &format_args!("field of {}", d.name))?;
        }
        for v in &d.variants {
            identifier(&v.name, false, &format_args!("variant of {}", d.name))?;
            for f in &v.fields {
                identifier(
                    &f.name,
                    false,
                    &format_args!("payload field of {}.{}", d.name, v.name),
                )?;
            }
        }
        for f in &d.functions {
            let rule = match f.callable {
                CallableKind::Message => Rule::Message,
                CallableKind::Initializer => Rule::Identifier,
            };
            check(&f.name, rule, &format_args!("message of {}", d.name))?;
            for p in &f.params {
                identifier(
                    &p.name,
                    false,
                    &format_args!("parameter of {}.{}", d.name, f.name),
                )?;
            }
            for l in &f.body.locals {
                identifier(
                    &l.name,
                    false,
                    &format_args!("local of {}.{}", d.name, f.name),
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_dotted_names_and_operator_selectors() {
        for ok in ["a", "_", "Point", "x_1", "größe", "_9"] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in ["", "1a", "a b", "a-b", "a.b", "+", "a\n"] {
            assert!(!is_identifier(bad), "{bad:?}");
        }
        assert!(is_dotted("geo.shapes") && is_dotted("demo"));
        for bad in ["geo.", ".geo", "geo..shapes", "geo shapes"] {
            assert!(!is_dotted(bad), "{bad:?}");
        }
        for op in ["+", "==", "<<", "[]", "!", "&&"] {
            assert!(is_operator_selector(op), "{op}");
        }
        for not in ["", "add", "a+", "+1"] {
            assert!(!is_operator_selector(not), "{not:?}");
        }
    }
}
