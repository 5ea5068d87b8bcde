//! The LLVM engines of ZLM1 (C0-EXEC-001..003): a checked package
//! ([`zlm::check::Checked`], never re-verified) is lowered to LLVM IR with
//! the portable C engine's semantics, then run in-process ([`jit`]) or
//! built ahead of time under an explicit [`TargetRecord`] ([`aot`]).
//! Anything the lowering does not cover is refused with `C0-EXEC-002`.
//! See docs/zlm/llvm-engines.md.

#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod aot;
pub mod backend;
mod error;
mod func;
pub mod header;
pub mod jit;
mod llvm_init;
mod lower;
mod runtime;
pub mod target;
mod text;
mod typed;
mod types;
mod unit;
mod unitctx;

pub use error::LlvmError;
pub use target::TargetRecord;
pub use unit::{Lowered, Zrt, render_word};
pub use zlm::materialize::c::{Refusal, Scope};

/// Lowers the functions `scope` selects to one LLVM module.
pub fn lower(checked: &zlm::check::Checked, scope: &Scope) -> Result<Lowered, Refusal> {
    lower::lower(checked, scope)
}

/// Lowers a package ([`zlm::package::Package`]) to one LLVM module: the
/// root's functions `scope` selects and every provider function they
/// reach, each under its own module's numeric profile; a provider's
/// function is named `module::Decl.function` in faults and drop logs.
pub fn lower_package(package: &zlm::package::Package, scope: &Scope) -> Result<Lowered, Refusal> {
    lower::lower_package(package, scope)
}
