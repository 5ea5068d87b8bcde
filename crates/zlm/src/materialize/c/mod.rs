//! The portable C materializer (C0-EXEC-002): a decoded [`Checked`] module
//! plus an explicit [`TargetConfig`] become one C11 translation unit and the
//! runtime header `zlm_rt.h`. The emitted program reproduces the reference
//! interpreter's results, step counts, faults (code, function, block,
//! operation) and drop log; anything the lowering does not cover is refused
//! with [`Refusal`] (`C0-EXEC-002`), never approximated.
//!
//! Output is a pure function of the module and the configuration: functions
//! in canonical declaration order, names from semantic identities, no
//! paths, times or hash-map order (C0-DET-002).

mod config;
pub mod engine;
pub mod host;
mod lower;
pub mod plan;
pub mod types;
mod unit;
pub mod walk;

use crate::check::Checked;
use crate::package::Package;
pub use config::TargetConfig;
pub use unit::{Emitted, REFUSED, Refusal, Scope};

/// The runtime header shipped with every emitted unit.
pub const RUNTIME_HEADER: &str = include_str!("zlm_rt.h");

/// Emits C for `checked` under `target`. A module that calls into other
/// modules is refused: emit its package ([`emit_package`]).
pub fn emit(checked: &Checked, target: &TargetConfig, scope: &Scope) -> Result<Emitted, Refusal> {
    target.check()?;
    let (unit, entries, typed) = lower::unit(checked, target, scope)?;
    Ok(files(unit, entries, typed))
}

/// Emits one C translation unit for a package: the scope's functions of
/// the root module and every function of any module they reach, each
/// under its own module's numeric profile, named from its semantic
/// identity (a provider's with its module in the name).
pub fn emit_package(
    package: &Package,
    target: &TargetConfig,
    scope: &Scope,
) -> Result<Emitted, Refusal> {
    target.check()?;
    let (unit, entries, typed) = lower::package_unit(package, target, scope)?;
    Ok(files(unit, entries, typed))
}

fn files(unit: String, entries: Vec<String>, typed_entries: Vec<String>) -> Emitted {
    Emitted {
        files: vec![
            ("zlm_rt.h".to_string(), RUNTIME_HEADER.to_string()),
            ("module.c".to_string(), unit),
        ],
        entries,
        typed_entries,
    }
}
