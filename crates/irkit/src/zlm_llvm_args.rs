//! The command line of irkit's LLVM verbs, `irkit zlm build` and `irkit zlm
//! run --engine jit|aot`. Both executables parse it: `irkit` to hand the verb
//! to `irkit-llvm` (`zlm_llvm_exec.rs`), `irkit-llvm` to run it
//! (`zlm_llvm_cmd.rs`). Nothing here touches LLVM (docs/startup.md).

use crate::args::{FormatArgs, InputArgs};
use std::path::PathBuf;

/// Arguments of `irkit zlm build`.
#[derive(clap::Args)]
pub struct BuildArgs {
    // A canonical ZLM1 artifact.
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Provider artifacts of imported modules.
    #[arg(long = "dep")]
    pub(crate) deps: Vec<PathBuf>,
    /// The target record (JSON, every C0-EXEC-003 field). Without it the
    /// convenience record (LLVM's default triple) is used and marked as not
    /// reproducibility evidence.
    #[arg(long)]
    pub(crate) target_record: Option<PathBuf>,
    /// Output: `NAME.o` an object file, `NAME.ll` the lowered LLVM IR,
    /// `NAME.so` a shared library with a C interface (its header is
    /// written to `NAME.h`; the record's relocation must be `pic`),
    /// anything else an executable linked with the record's linker. The
    /// record used is written to `NAME.target.json` (not for `.ll`).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Build only this entry (`Decl.function`) and what it calls.
    #[arg(long)]
    pub(crate) entry: Option<String>,
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
}

/// Which LLVM engine `zlm run` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlvmEngine {
    /// In-process MCJIT.
    Jit,
    /// A host executable built under the convenience record.
    Aot,
}
