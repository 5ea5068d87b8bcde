//! Section 5.1: register declarations and descriptor agreement.
//!
//! All registers are declared exactly once in the `DeclareLocal` prefix of
//! the entry block; every register descriptor in the function must carry
//! the declared type. Declarations get dense numbers for the data-flow
//! analyses.

use super::diagnostic::{Check, Place, Rule, Subject, fail};
use crate::ir::{
    Function, Handle, InstructionKind, Module, Register, Span, StageKind, Type, TypeInner,
};
use std::collections::HashMap;

/// Register indices below this bound are looked up in a vector, larger
/// (sparse) ones in a map.
const DIRECT: u64 = 1 << 16;

/// The declared registers of one function.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RegisterTable {
    /// Register index → (dense number, declared type), for small indices.
    direct: Vec<Option<(u32, Handle<Type>)>>,
    /// The same for indices of at least [`DIRECT`].
    sparse: HashMap<u64, (u32, Handle<Type>)>,
    /// Number of declarations.
    count: usize,
}

impl RegisterTable {
    /// Reads and checks the declaration prefix.
    pub(crate) fn build(
        module: &Module,
        stage: StageKind,
        function: Handle<Function>,
        f: &Function,
    ) -> Check<Self> {
        let mut table = RegisterTable::default();
        for (bh, block) in f.blocks.iter() {
            let mut in_prefix = bh.index() == 0;
            for (index, instruction) in block.instructions.iter().enumerate() {
                let place = Place {
                    stage,
                    function,
                    block: bh,
                    instruction: Some(index),
                };
                let InstructionKind::DeclareLocal { register } = &instruction.kind else {
                    in_prefix = false;
                    continue;
                };
                let err = |m: String| fail(Rule::Register, place.subject(), instruction.span, m);
                if !in_prefix {
                    return Err(err(format!(
                        "register r{} is declared outside the declaration prefix of the entry block (register declarations must form a prefix of the entry block)",
                        { register.index }
                    )));
                }
                match module.types.inner(register.ty) {
                    None => return Err(err("register type handle is out of range".into())),
                    Some(TypeInner::Void) => {
                        return Err(err(format!(
                            "register r{} has type void (void is only a function return type)",
                            { register.index }
                        )));
                    }
                    Some(_) => {}
                }
                let dense = u32::try_from(table.count).map_err(|_| {
                    fail(
                        Rule::Limit,
                        place.subject(),
                        instruction.span,
                        "more than 2^32 registers in one function",
                    )
                })?;
                if !table.insert(register.index, (dense, register.ty)) {
                    return Err(err(format!("register r{} is declared twice", {
                        register.index
                    })));
                }
            }
        }
        Ok(table)
    }

    /// Adds a declaration; false when the index is already declared.
    fn insert(&mut self, index: u64, entry: (u32, Handle<Type>)) -> bool {
        let fresh = if index < DIRECT {
            let i = index as usize;
            if self.direct.len() <= i {
                self.direct.resize(i + 1, None);
            }
            self.direct[i].replace(entry).is_none()
        } else {
            self.sparse.insert(index, entry).is_none()
        };
        if fresh {
            self.count += 1;
        }
        fresh
    }

    /// The declared types, in no particular order.
    pub(crate) fn types(&self) -> impl Iterator<Item = Handle<Type>> + '_ {
        self.direct
            .iter()
            .flatten()
            .chain(self.sparse.values())
            .map(|&(_, ty)| ty)
    }

    /// Number of declared registers.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Dense number and declared type of register `index`.
    #[inline]
    pub(crate) fn get(&self, index: u64) -> Option<(u32, Handle<Type>)> {
        if index < DIRECT {
            self.direct.get(index as usize).copied().flatten()
        } else {
            self.sparse.get(&index).copied()
        }
    }

    /// Checks that `r` is declared with exactly its descriptor's type.
    /// The passing case is inlined into the per-operand checks; a failure
    /// is reported by [`RegisterTable::check_failed`].
    #[inline(always)]
    pub(crate) fn check(&self, r: Register, subject: Subject, span: Option<Span>) -> Check<u32> {
        match self.get(r.index) {
            Some((dense, ty)) if ty == r.ty => Ok(dense),
            found => Err(Self::check_failed(r, found.is_some(), subject, span)),
        }
    }

    /// The diagnostic of a failed [`RegisterTable::check`]: `declared`
    /// tells an undeclared register from one used with another type.
    #[cold]
    #[inline(never)]
    fn check_failed(
        r: Register,
        declared: bool,
        subject: Subject,
        span: Option<Span>,
    ) -> super::VerifyError {
        let message = if declared {
            format!(
                "register r{} is used with a type other than its declared type",
                { r.index }
            )
        } else {
            format!("register r{} is not declared", { r.index })
        };
        fail(Rule::Register, subject, span, message)
    }
}
