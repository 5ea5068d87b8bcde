//! How diagnostics spell operation references and owned-path roots: as the
//! text form writes them (`docs/zlm/text.md`), never as Rust `Debug` text.
//! `%B.O` is flow operation O of block B, `%rE.O` recipe operation O of
//! cleanup edge E; roots are `recv`, `pN`, `lN` and `t%B.O`, and a place
//! operand shows as `$` and its key.

use crate::ids::Identities;
use crate::model::{Module, OpRef, PathKey, Root};
use std::fmt;

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpRef::Flow { block, ordinal } => write!(f, "%{block}.{ordinal}"),
            OpRef::Recipe { edge, ordinal } => write!(f, "%r{edge}.{ordinal}"),
        }
    }
}

impl fmt::Display for Root {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Root::Receiver => f.write_str("recv"),
            Root::Param(p) => write!(f, "p{p}"),
            Root::Local(l) => write!(f, "l{l}"),
            Root::Temp(r) => write!(f, "t{r}"),
        }
    }
}

/// A place as a diagnostic names it: `$` and the key, each field component
/// by the first eight hex digits of its field ID (the checker has no names;
/// `irkit zlm dis` prints the full key).
pub struct Place<'a>(pub &'a PathKey);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}", self.0.root)?;
        for field in &self.0.fields {
            f.write_str("/#")?;
            for byte in &field[..4] {
                write!(f, "{byte:02x}")?;
            }
        }
        Ok(())
    }
}

/// A place as the text form writes it (`$l0/Pair.right`): `$`, the root and
/// each field component by its name in `module` (`Decl.field`, or
/// `Decl.Variant.field` for a payload field), whose identities `ids` are
/// (by the first eight hex digits of its field ID, as [`Place`], for a field
/// of another module).
pub struct NamedPlace<'a> {
    /// The key.
    pub key: &'a PathKey,
    /// The module the fields are looked up in.
    pub module: &'a Module,
    /// Its identities.
    pub ids: &'a Identities,
}

impl NamedPlace<'_> {
    fn field_name(&self, id: &crate::hash::Id) -> Option<String> {
        let info = self.ids.fields.get(id)?;
        let decl = self.module.declarations.get(info.decl)?;
        Some(match info.variant {
            Some(v) => {
                let variant = decl.variants.get(v)?;
                let field = variant.fields.get(info.index)?;
                format!("{}.{}.{}", decl.name, variant.name, field.name)
            }
            None => format!("{}.{}", decl.name, decl.fields.get(info.index)?.name),
        })
    }
}

impl fmt::Display for NamedPlace<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}", self.key.root)?;
        for field in &self.key.fields {
            match self.field_name(field) {
                Some(name) => write!(f, "/{name}")?,
                None => {
                    f.write_str("/#")?;
                    for byte in &field[..4] {
                        write!(f, "{byte:02x}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_places_read_as_the_text_form() {
        let flow = OpRef::Flow {
            block: 2,
            ordinal: 6,
        };
        assert_eq!(flow.to_string(), "%2.6");
        let recipe = OpRef::Recipe {
            edge: 1,
            ordinal: 0,
        };
        assert_eq!(recipe.to_string(), "%r1.0");
        assert_eq!(Root::Local(0).to_string(), "l0");
        assert_eq!(Root::Temp(flow).to_string(), "t%2.6");
        let key = PathKey {
            root: Root::Param(1),
            fields: vec![[0xab; 32]],
        };
        assert_eq!(Place(&key).to_string(), "$p1/#abababab");
        assert_eq!(
            Place(&PathKey {
                root: Root::Local(0),
                fields: vec![]
            })
            .to_string(),
            "$l0"
        );
    }

    #[test]
    fn named_places_spell_fields_as_the_text_form() {
        let text = include_str!("../../../examples/zlm/run/drops.zlt");
        let module = crate::text::parse(text).unwrap();
        let (ids, _) = crate::ids::compute(&module, false).unwrap();
        let pair = module
            .declarations
            .iter()
            .position(|d| d.name == "Pair")
            .unwrap();
        let right = ids.decls[pair].fields[1];
        let key = PathKey {
            root: Root::Local(0),
            fields: vec![right],
        };
        let named = NamedPlace {
            key: &key,
            module: &module,
            ids: &ids,
        };
        assert_eq!(named.to_string(), "$l0/Pair.right");
        let foreign = PathKey {
            root: Root::Local(0),
            fields: vec![[0xcd; 32]],
        };
        let unnamed = NamedPlace {
            key: &foreign,
            module: &module,
            ids: &ids,
        };
        assert_eq!(unnamed.to_string(), "$l0/#cdcdcdcd");
    }
}
