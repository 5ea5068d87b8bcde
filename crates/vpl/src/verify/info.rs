//! What a successful verification proved, for the stages after it.
//!
//! [`ModuleInfo`] is to a [`Module`] what a proof is to a statement: the
//! verifier builds it while checking, and the publication boundary and the
//! backends read it instead of recomputing (or re-checking) these facts.
//! It describes the module exactly as it was verified, so it only travels
//! together with that module, inside [`Verified`] or a published
//! [`crate::VerifiedModule`]; there is no way to pair it with another
//! module.

use super::outputs::{Layout, Summary};
use super::registers::RegisterTable;
use super::samplers::SamplerChains;
use crate::ir::{Function, Handle, Module, StageKind, Type};
use std::ops::Range;

/// The facts of one verified module.
#[derive(Debug, PartialEq, Eq)]
pub struct ModuleInfo {
    pub(crate) type_order: Vec<Handle<Type>>,
    pub(crate) vertex: StageInfo,
    pub(crate) fragment: StageInfo,
}

/// The facts of one stage.
#[derive(Debug, PartialEq, Eq)]
pub struct StageInfo {
    pub(crate) functions: Vec<FunctionInfo>,
    pub(crate) call_order: Vec<Handle<Function>>,
    pub(crate) call_depth: Vec<u32>,
    pub(crate) layout: Layout,
}

/// The facts of one function.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FunctionInfo {
    pub(crate) registers: RegisterTable,
    pub(crate) summary: Summary,
    pub(crate) samplers: SamplerChains,
}

impl ModuleInfo {
    /// Every entry of the type table, elements and fields before the types
    /// that contain them.
    pub fn type_order(&self) -> &[Handle<Type>] {
        &self.type_order
    }

    /// The facts of one stage.
    pub fn stage(&self, kind: StageKind) -> &StageInfo {
        match kind {
            StageKind::Vertex => &self.vertex,
            StageKind::Fragment => &self.fragment,
        }
    }
}

impl StageInfo {
    /// The facts of the function behind `handle` (a handle of this stage).
    pub fn function(&self, handle: Handle<Function>) -> Option<&FunctionInfo> {
        self.functions.get(handle.index())
    }

    /// The stage's functions with every callee before its callers.
    pub fn call_order(&self) -> &[Handle<Function>] {
        &self.call_order
    }

    /// A function's call depth: 0 when it calls no function, else one more
    /// than its deepest callee.
    pub fn call_depth(&self, handle: Handle<Function>) -> Option<u32> {
        self.call_depth.get(handle.index()).copied()
    }

    /// The output leaves (section 6.3) of interface slot `slot`; empty for
    /// inputs.
    pub fn output_leaves(&self, slot: usize) -> Range<u64> {
        self.layout.slot_leaves(slot)
    }
}

impl FunctionInfo {
    /// The declared type of register `index`.
    pub fn register_type(&self, index: u64) -> Option<Handle<Type>> {
        self.registers.get(index).map(|(_, ty)| ty)
    }

    /// The declared register types (each once per register, in no
    /// particular order).
    pub fn register_types(&self) -> impl Iterator<Item = Handle<Type>> + '_ {
        self.registers.types()
    }

    /// The number of declared registers.
    pub fn register_count(&self) -> usize {
        self.registers.len()
    }

    /// The dense number of register `index`: declared registers are
    /// numbered `0..register_count()` in declaration order.
    pub fn register_number(&self, index: u64) -> Option<u32> {
        self.registers.get(index).map(|(dense, _)| dense)
    }

    /// Whether a normal return is possible (section 6.3 summaries).
    pub fn can_return(&self) -> bool {
        self.summary.returns
    }

    /// The output leaf ranges this function assigns on every normal return.
    pub fn guaranteed_outputs(&self) -> &[(u64, u64)] {
        &self.summary.guarantees.0
    }

    /// The output leaf ranges this function reads before writing them.
    pub fn output_prerequisites(&self) -> &[(u64, u64)] {
        &self.summary.prerequisites.0
    }

    /// The sampler alias chains of the function.
    pub fn samplers(&self) -> &SamplerChains {
        &self.samplers
    }
}

/// A module together with the facts its verification proved.
///
/// Only verification ([`Verified::new`], [`crate::text::read_verified`])
/// constructs one, and the module inside can be read but not changed, so
/// the facts always describe it; [`Verified::into_module`] gives the module
/// back (dropping the facts) for editing.
#[derive(Debug)]
pub struct Verified {
    module: Module,
    info: ModuleInfo,
}

impl Verified {
    /// Pairs a module with the facts just computed for it.
    pub(crate) fn from_parts(module: Module, info: ModuleInfo) -> Self {
        Verified { module, info }
    }

    /// The verified module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The facts its verification proved.
    pub fn info(&self) -> &ModuleInfo {
        &self.info
    }

    /// The module, for editing; its facts are dropped.
    pub fn into_module(mut self) -> Module {
        std::mem::take(&mut self.module)
    }
}

impl Drop for Verified {
    /// Frees a large module on two threads (freeing is a few percent of
    /// reading it).
    fn drop(&mut self) {
        crate::parallel::drop_module(std::mem::take(&mut self.module));
    }
}
