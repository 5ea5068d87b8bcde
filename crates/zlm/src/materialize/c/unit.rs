//! The materializer's inputs and outputs: scope, emitted unit, refusal.

/// The diagnostic code of a refusal.
pub const REFUSED: &str = "C0-EXEC-002";

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

impl Refusal {
    /// The message and location without the code.
    pub fn detail(&self) -> String {
        format!(
            "{}{}",
            self.message,
            at(&self.function, self.block, self.op)
        )
    }
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
    /// Entries callable across the typed boundary (`Decl.function`), by
    /// index (`crate::materialize::c::host`).
    pub typed_entries: Vec<String>,
}
