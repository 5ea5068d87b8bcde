//! Sections 6 and 6.1: storage references — namespaces and slots, exact
//! stored types, derived member/index paths, literal bounds, and the
//! read/write permissions a path inherits from its root.
//!
//! A reference is a root descriptor plus a flat list of selectors, so
//! cyclic paths are unrepresentable and a derived descriptor cannot forge
//! a root namespace; what can be wrong (slot, types, selectors, bounds,
//! permissions) is checked here.

use super::context::FnCx;
use super::diagnostic::{Check, Place, Rule, fail};
use crate::ir::{
    Direction, Handle, Literal, Reference, ScalarKind, SelectorKind, Span, StorageKind, Type,
    TypeInner, Value,
};

fn namespace(kind: StorageKind) -> &'static str {
    match kind {
        StorageKind::Local => "local",
        StorageKind::Parameter => "parameter",
        StorageKind::Uniform => "uniform",
        StorageKind::StageIo => "stage",
    }
}

impl FnCx<'_> {
    /// Checks a reference used by a load (`write == false`) or a store and
    /// returns the type of the referenced storage.
    pub(crate) fn reference(
        &self,
        r: &Reference,
        place: Place,
        span: Option<Span>,
        write: bool,
    ) -> Check<Handle<Type>> {
        let root_span = r.span.or(span);
        let err = |s: Option<Span>, m: String| fail(Rule::Storage, place.subject(), s, m);
        let slot = usize::try_from(r.slot).ok();
        let slot_ty = match r.storage {
            StorageKind::Local => self.regs.get(r.slot).map(|(_, t)| t),
            StorageKind::Parameter => slot
                .and_then(|s| self.function.parameters.get(s))
                .map(|p| p.ty),
            StorageKind::Uniform => slot.and_then(|s| self.module.uniforms.get(s)).map(|u| u.ty),
            StorageKind::StageIo => slot.and_then(|s| self.stage.interface.get(s)).map(|v| v.ty),
        };
        let Some(slot_ty) = slot_ty else {
            let what = match r.storage {
                StorageKind::Local => format!("register r{} is not declared", r.slot),
                other => format!("{} slot {} does not exist", namespace(other), r.slot),
            };
            return Err(err(root_span, format!("reference root: {what}")));
        };
        if slot_ty != r.root_ty {
            return Err(err(
                root_span,
                format!(
                    "reference type {} differs from the stored type {} of its {} slot {}",
                    self.describe(r.root_ty),
                    self.describe(slot_ty),
                    namespace(r.storage),
                    r.slot
                ),
            ));
        }
        let mut current = r.root_ty;
        for selector in &r.path {
            let sel_span = selector.span.or(span);
            let expected = match (&selector.kind, self.inner(current)) {
                (SelectorKind::Member(name), TypeInner::Record(rec)) => match rec.field(name) {
                    Some((_, field)) => field.ty,
                    None => {
                        return Err(err(
                            sel_span,
                            format!("record {:?} has no field {name:?}", rec.name),
                        ));
                    }
                },
                (SelectorKind::Member(_), _) => {
                    return Err(err(
                        sel_span,
                        format!(
                            "a member reference needs record storage, not {}",
                            self.describe(current)
                        ),
                    ));
                }
                (SelectorKind::Index(index), TypeInner::Array { element, length }) => {
                    let it = self.operand(index, place.subject(), sel_span)?;
                    if !matches!(self.inner(it), TypeInner::Scalar(ScalarKind::Int)) {
                        return Err(err(
                            index.span.or(sel_span),
                            format!(
                                "an index reference needs an int register or constant, not {}",
                                self.describe(it)
                            ),
                        ));
                    }
                    if let Value::Constant(c) = index.value
                        && let Literal::Int(i) = c.value
                        && (i < 0 || i as u64 >= *length)
                    {
                        return Err(err(
                            index.span.or(sel_span),
                            format!(
                                "literal index {i} is out of bounds for array storage of {length} elements"
                            ),
                        ));
                    }
                    *element
                }
                (SelectorKind::Index(_), _) => {
                    return Err(err(
                        sel_span,
                        format!(
                            "an index reference needs array storage, not {}",
                            self.describe(current)
                        ),
                    ));
                }
            };
            if selector.ty != expected {
                return Err(err(
                    sel_span,
                    format!(
                        "derived reference type {} differs from the selected stored type {}",
                        self.describe(selector.ty),
                        self.describe(expected)
                    ),
                ));
            }
            current = expected;
        }
        if write {
            let derived = if r.is_derived() {
                " (a derived path inherits its root's permissions)"
            } else {
                ""
            };
            match r.storage {
                StorageKind::Uniform => {
                    return Err(err(
                        root_span,
                        format!("uniform storage is read-only{derived}"),
                    ));
                }
                StorageKind::StageIo => {
                    let var = &self.stage.interface[r.slot as usize];
                    if var.direction == Direction::In {
                        return Err(err(
                            root_span,
                            format!("stage input {:?} is read-only{derived}", var.name),
                        ));
                    }
                }
                StorageKind::Local | StorageKind::Parameter => {}
            }
        }
        Ok(current)
    }
}
