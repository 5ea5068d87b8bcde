//! The arguments verbs share, flattened (`#[command(flatten)]`) into each
//! verb's own: the input file(s) and `--format`.

use crate::diag::Format;
use std::path::PathBuf;

/// `--format`: how diagnostics, and a verb's machine-readable result, are printed.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct FormatArgs {
    /// Output format: `human` (rustc-like diagnostics on standard error) or
    /// `json` (one JSON object per line on standard output).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// One input file.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Input file (`-` for standard input).
    pub file: PathBuf,
}

/// One or more input files.
#[derive(clap::Args, Debug, Clone)]
pub struct InputsArgs {
    /// Input files (`-` for standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}
