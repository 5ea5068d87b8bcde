//! The per-function verification context the phases share (a leaf, so the
//! phase modules that extend it do not import `verify/mod.rs` back).

use super::registers::RegisterTable;
use crate::ir::{Function, Handle, Module, Stage};

/// Per-function verification context.
pub(crate) struct FnCx<'a> {
    pub module: &'a Module,
    pub stage: &'a Stage,
    pub handle: Handle<Function>,
    pub function: &'a Function,
    pub regs: RegisterTable,
}
