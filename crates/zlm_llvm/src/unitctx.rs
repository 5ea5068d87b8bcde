//! What every function's lowering reads about the unit being lowered: the
//! resolved module, the lowered set's function indices, the value layouts,
//! and the interned fault details and string constants.

use crate::types::Layouts;
use std::cell::RefCell;
use std::collections::BTreeMap;
use zlm::check::Resolved;
use zlm::materialize::c::Refusal;
use zlm::materialize::c::types::is_word;
use zlm::materialize::c::walk::{self, At};
use zlm::model::*;

/// The unit being lowered.
pub(crate) struct Unit<'a, 'm> {
    pub r: &'a Resolved<'m>,
    /// Function index (in the emitted set) of each lowered function.
    pub index: BTreeMap<At, usize>,
    /// Layouts of every non-word type the lowered functions hold.
    pub layouts: Layouts,
    /// Interned fault details (`requires 0`, …).
    pub details: RefCell<Vec<String>>,
    /// Interned string constants (`@zsN`).
    pub strings: RefCell<BTreeMap<String, usize>>,
}

impl<'m> Unit<'_, 'm> {
    /// The function at `at`.
    pub fn f(&self, at: At) -> &'m Function {
        walk::function(self.r, at)
    }

    /// The emitted symbol of `at`.
    pub fn lname(&self, at: At) -> String {
        walk::symbol(self.r, at)
    }

    /// A refusal naming `at`.
    pub fn refuse(
        &self,
        at: At,
        b: Option<u32>,
        o: Option<u32>,
        msg: impl Into<String>,
    ) -> Refusal {
        walk::refuse(self.r, at, b, o, msg)
    }

    /// The index of fault detail `s`.
    pub fn detail(&self, s: String) -> usize {
        let mut d = self.details.borrow_mut();
        if let Some(i) = d.iter().position(|x| *x == s) {
            return i;
        }
        d.push(s);
        d.len() - 1
    }

    /// The global of string constant `s`.
    pub fn string(&self, s: &str) -> String {
        crate::types::string(&mut self.strings.borrow_mut(), s)
    }

    /// Parameters in ordinal order.
    pub fn sorted_params(&self, at: At) -> Vec<&'m Param> {
        let mut ps: Vec<&Param> = self.f(at).params.iter().collect();
        ps.sort_by_key(|p| p.ordinal);
        ps
    }

    /// The type a runtime receiver is bound with (`Ref<Self>`,
    /// `Mut<Self>`, `Self`), or `None` for type receivers.
    pub fn receiver_binding(&self, at: At) -> Option<Type> {
        let kind = self.f(at).receiver;
        if matches!(kind, ReceiverKind::Type | ReceiverKind::None) {
            return None;
        }
        zlm::catalog::receiver_type(&self.r.self_type(at.0), kind)
    }

    /// The runtime slots' types: the receiver binding, then parameters.
    pub fn slot_types(&self, at: At) -> Vec<Type> {
        let mut v: Vec<Type> = self.receiver_binding(at).into_iter().collect();
        v.extend(self.sorted_params(at).iter().map(|p| p.ty.clone()));
        v
    }

    /// The source declaration, for the comment above the function.
    pub fn source(&self, at: At) -> String {
        walk::source(self.r, at).replace(['\n', '\r'], " ")
    }
}

/// The IR type a value of `t` is passed as: a word `i64`, anything else a
/// pointer to its storage (the callee copies it in).
pub(crate) fn arg_ty(t: &Type) -> &'static str {
    if is_word(t) { "i64" } else { "ptr" }
}
