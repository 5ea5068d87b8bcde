//! Places and access chains.

use super::function::FunctionCheck;
use crate::ir::*;

impl<'s, 'a> FunctionCheck<'s, 'a> {
    /// The type of a place, or `None` when it cannot be known (an error was
    /// reported, or a struct's layout is deferred to the linker).
    pub(crate) fn place(
        &mut self,
        place: &'a LibraryIrPlace,
        for_store: bool,
    ) -> Option<LibraryIrTypeReference> {
        let Some(root) = self.function.root(place.root) else {
            self.error(format!(
                "place root {} is outside the {} parameters and locals",
                place.root,
                self.function.root_count()
            ));
            return None;
        };
        self.chain(root.ty.clone(), &place.chain, for_store)
    }

    pub(crate) fn chain(
        &mut self,
        mut current: LibraryIrTypeReference,
        chain: &'a [LibraryIrAccess],
        for_store: bool,
    ) -> Option<LibraryIrTypeReference> {
        for (step, access) in chain.iter().enumerate() {
            current = match access {
                LibraryIrAccess::Field { index } => {
                    if current.kind != IrTypeKind::Struct {
                        self.error(format!(
                            "access {step}: field access into {}, not a struct",
                            current.display()
                        ));
                        return None;
                    }
                    let key = current.struct_key.as_deref().unwrap_or("");
                    let s = self.scope.find_struct(key)?;
                    match usize::try_from(*index).ok().and_then(|i| s.fields.get(i)) {
                        Some(field) => field.ty.clone(),
                        None => {
                            self.error(format!(
                                "access {step}: field {index} of `{key}`, which has {} field(s)",
                                s.fields.len()
                            ));
                            return None;
                        }
                    }
                }
                LibraryIrAccess::Index { index } => {
                    if let Some(t) = self.use_value(*index, "index")
                        && !t.kind.is_integer()
                    {
                        self.error(format!(
                            "access {step}: index %{index} is {}, not an integer",
                            t.display()
                        ));
                    }
                    match current.kind {
                        IrTypeKind::Array => match &current.element {
                            Some(element) => (**element).clone(),
                            None => return None,
                        },
                        IrTypeKind::Vector => LibraryIrTypeReference::scalar(current.component),
                        IrTypeKind::Matrix => {
                            LibraryIrTypeReference::vector(current.component, current.rows)
                        }
                        _ => {
                            self.error(format!(
                                "access {step}: cannot index {}",
                                current.display()
                            ));
                            return None;
                        }
                    }
                }
                LibraryIrAccess::Swizzle { components } => {
                    if current.kind != IrTypeKind::Vector {
                        self.error(format!(
                            "access {step}: swizzle of {}, not a vector",
                            current.display()
                        ));
                        return None;
                    }
                    if components.is_empty() || components.len() > 4 {
                        self.error(format!(
                            "access {step}: swizzle selects {} lanes; 1 to 4 allowed",
                            components.len()
                        ));
                        return None;
                    }
                    if let Some(bad) = components.iter().find(|&&c| c < 0 || c >= current.size) {
                        self.error(format!(
                            "access {step}: lane {bad} of a {}-lane vector",
                            current.size
                        ));
                        return None;
                    }
                    if for_store {
                        let mut seen = [false; 4];
                        for &c in components {
                            let c = c as usize;
                            if seen[c] {
                                self.error(format!(
                                    "access {step}: a stored swizzle names lane {c} twice"
                                ));
                                return None;
                            }
                            seen[c] = true;
                        }
                    }
                    if components.len() == 1 {
                        LibraryIrTypeReference::scalar(current.component)
                    } else {
                        LibraryIrTypeReference::vector(current.component, components.len() as i32)
                    }
                }
            };
        }
        Some(current)
    }
}
