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

use crate::check::Checked;
pub use config::TargetConfig;

/// The diagnostic code of a refusal.
pub const REFUSED: &str = "C0-EXEC-002";

/// The runtime header shipped with every emitted unit.
pub const RUNTIME_HEADER: &str = include_str!("zlm_rt.h");

/// Something the materializer does not support (or a bad configuration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{REFUSED}: {message}{}", at(.function, *.block, *.op))]
pub struct Refusal {
    /// `Decl.function`, when the refusal concerns one.
    pub function: Option<String>,
    /// Block, when it concerns one operation.
    pub block: Option<u32>,
    /// Operation ordinal in that block.
    pub op: Option<u32>,
    /// What is not supported.
    pub message: String,
}

fn at(f: &Option<String>, b: Option<u32>, o: Option<u32>) -> String {
    match (f, b, o) {
        (Some(f), Some(b), Some(o)) => format!(" (in {f} block {b} op {o})"),
        (Some(f), _, _) => format!(" (in {f})"),
        _ => String::new(),
    }
}

/// Which functions to emit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every function of the module.
    Module,
    /// The named entry (`Decl.function` or a unique bare name) and every
    /// function its body and contracts can call.
    Entry(String),
    /// Several entries and everything they can call.
    Entries(Vec<String>),
}

/// An emitted unit: file names and contents, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// `(file name, content)`: `zlm_rt.h`, then `module.c`.
    pub files: Vec<(String, String)>,
    /// Host-callable entries of the unit (`Decl.function`), by index.
    pub entries: Vec<String>,
}

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
