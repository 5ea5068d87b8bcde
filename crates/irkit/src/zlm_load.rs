//! The gate every `irkit zlm` verb passes a module through: decoding and
//! checking (`zlm::decode`), with imports resolved against the `--dep`
//! providers. A leaf the zlm verb files share, so none imports another for it.

use crate::error::{CliError, Origin};
use crate::io::read;
use std::path::{Path, PathBuf};
use zlm::decode::Checked;

/// A library error about the binary input `label`.
pub fn invalid(e: &zlm::Error, label: &str) -> CliError {
    CliError::diagnosed(e, &Origin::binary(label))
}

/// Reads and decodes one artifact, checked on its own.
pub fn load(file: &Path) -> Result<Checked, CliError> {
    let (label, bytes) = read(file)?;
    zlm::decode::decode(&bytes).map_err(|e| invalid(&e, &label))
}

/// Decodes the provider artifacts given with `--dep` (each checked on its own).
pub fn load_providers(deps: &[PathBuf]) -> Result<Vec<Checked>, CliError> {
    deps.iter().map(|dep| load(dep)).collect()
}

/// Decodes the `--dep` providers, then `file` with its imports resolved
/// against them before it is checked. `zlm validate`, `zlm emit-c` and
/// `zlm build` share this gate.
pub fn load_linked(file: &Path, deps: &[PathBuf]) -> Result<Checked, CliError> {
    let providers = load_providers(deps)?;
    let providers: Vec<&Checked> = providers.iter().collect();
    let (label, bytes) = read(file)?;
    zlm::decode::decode_linked(&bytes, &providers).map_err(|e| invalid(&e, &label))
}
