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

/// Reads one module as canonical artifact bytes: a `ZLM1` artifact as is, a
/// `.zlt` text module (anything else that is UTF-8) assembled by the
/// canonical writer, so every verb takes either.
pub fn read_module(file: &Path) -> Result<(String, Vec<u8>), CliError> {
    let (label, bytes) = read(file)?;
    if bytes.starts_with(b"ZLM1") {
        return Ok((label, bytes));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::usage(format!(
            "{label} is neither a ZLM1 artifact nor UTF-8 text (.zlt)"
        ))
    })?;
    let module = zlm::text::parse(&text)
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, Some(&text))))?;
    let bytes = zlm::write::write(&module).map_err(|e| invalid(&e, &label))?;
    Ok((label, bytes))
}

/// Reads and decodes one artifact (or text module), checked on its own.
pub fn load(file: &Path) -> Result<Checked, CliError> {
    let (label, bytes) = read_module(file)?;
    zlm::decode::decode(&bytes).map_err(|e| invalid(&e, &label))
}

/// Decodes the provider artifacts given with `--dep`: each on its own, then
/// again linked against the providers of the modules it imports from, so
/// providers may import from each other (`zlm::package::decode_providers`).
pub fn load_providers(deps: &[PathBuf]) -> Result<Vec<Checked>, CliError> {
    let mut inputs = Vec::new();
    for dep in deps {
        inputs.push(read_module(dep)?);
    }
    let bytes: Vec<&[u8]> = inputs.iter().map(|(_, b)| b.as_slice()).collect();
    zlm::package::decode_providers(&bytes).map_err(|(i, e)| {
        let label = inputs.get(i).map_or("--dep", |(label, _)| label.as_str());
        invalid(&e, label)
    })
}

/// Decodes the `--dep` providers, then `file` with its imports and
/// cross-module symbols resolved against them before it is checked.
/// `zlm validate` and `zlm build` share this gate.
pub fn load_linked(file: &Path, deps: &[PathBuf]) -> Result<Checked, CliError> {
    load_linked_with(file, &load_providers(deps)?)
}

fn load_linked_with(file: &Path, providers: &[Checked]) -> Result<Checked, CliError> {
    let providers: Vec<&Checked> = providers.iter().collect();
    let (label, bytes) = read_module(file)?;
    zlm::decode::decode_linked(&bytes, &providers).map_err(|e| invalid(&e, &label))
}

/// The package of `root` and the `--dep` providers (`zlm::package::Package`:
/// only the providers some module links against, each the exact module it
/// was checked against).
pub fn package_of(
    root: Checked,
    providers: Vec<Checked>,
    label: &str,
) -> Result<zlm::package::Package, CliError> {
    zlm::package::Package::new(root, providers).map_err(|e| invalid(&e, label))
}

/// [`load_linked`], then the package of the module and its providers
/// (`zlm emit-c`).
pub fn load_package(file: &Path, deps: &[PathBuf]) -> Result<zlm::package::Package, CliError> {
    let providers = load_providers(deps)?;
    let root = load_linked_with(file, &providers)?;
    package_of(root, providers, &file.display().to_string())
}
