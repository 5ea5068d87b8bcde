//! irkit's side of the LLVM verbs: `irkit zlm build` and `irkit zlm run
//! --engine jit|aot` run in the `irkit-llvm` executable, which `irkit` starts
//! with its own command line before it reads any input. `irkit` itself links
//! no LLVM, so every other verb starts without loading libLLVM and what it
//! needs (docs/startup.md).

use crate::error::{CliError, Outcome};
use std::path::PathBuf;
use std::process::Command;

/// Names another `irkit-llvm` than the one beside the `irkit` executable.
pub const HELPER_ENV: &str = "IRKIT_LLVM";

/// The file name of the LLVM engines' executable.
fn helper_name() -> String {
    format!("irkit-llvm{}", std::env::consts::EXE_SUFFIX)
}

/// `$IRKIT_LLVM`, or `irkit-llvm` in the directory of the running `irkit`.
fn helper() -> Result<PathBuf, CliError> {
    if let Some(path) = std::env::var_os(HELPER_ENV) {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Usage(format!("cannot locate the irkit executable: {e}")))?;
    Ok(exe.with_file_name(helper_name()))
}

/// Why the helper could not be started.
fn not_started(path: &std::path::Path, e: &std::io::Error) -> CliError {
    CliError::Usage(format!(
        "the LLVM engines run in {}, which cannot be started ({e}); \
         `cargo install --path crates/irkit` installs it beside irkit, \
         or set {HELPER_ENV} to its path",
        path.display()
    ))
}

/// Hands the current command line to `irkit-llvm`. On Unix the process
/// becomes `irkit-llvm` (same standard streams, same exit status), so this
/// returns only when it could not be started.
pub fn delegate() -> Result<Outcome, CliError> {
    let path = helper()?;
    let mut cmd = Command::new(&path);
    cmd.args(std::env::args_os().skip(1));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let e = cmd.exec();
        Err(not_started(&path, &e))
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().map_err(|e| not_started(&path, &e))?;
        std::process::exit(status.code().unwrap_or(i32::from(crate::exit::EXIT_USAGE)));
    }
}
