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
mod lower;
pub mod types;
mod unit;
pub mod walk;

use crate::check::Checked;
pub use config::TargetConfig;
pub use unit::{Emitted, REFUSED, Refusal, Scope};

/// The runtime header shipped with every emitted unit.
pub const RUNTIME_HEADER: &str = include_str!("zlm_rt.h");

/// Emits C for `checked` under `target`.
pub fn emit(checked: &Checked, target: &TargetConfig, scope: &Scope) -> Result<Emitted, Refusal> {
    target.check()?;
    let (unit, entries) = lower::unit(checked, target, scope)?;
    Ok(Emitted {
        files: vec![
            ("zlm_rt.h".to_string(), RUNTIME_HEADER.to_string()),
            ("module.c".to_string(), unit),
        ],
        entries,
    })
}
