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

/// A `.zlt` module as read: its text and where each function and operation
/// is written, so that a rejection of the module assembled from it points at
/// the user's line.
pub struct TextSource {
    /// The text.
    pub text: String,
    /// Its functions by `Decl.function` name with their positions
    /// (`zlm::text::named_positions`).
    pub functions: Vec<(String, zlm::text::FnPositions)>,
}

impl TextSource {
    /// The source of `text`, parsed as `module` with `positions`
    /// (`zlm::text::parse_with_positions`).
    pub fn new(
        text: String,
        module: &zlm::Module,
        positions: Vec<zlm::text::FnPositions>,
    ) -> TextSource {
        let functions = zlm::text::named_positions(module, positions);
        TextSource { text, functions }
    }
}

/// A library error about input `label`: for a `.zlt` input (`source`), at
/// its line and column (with the snippet) when the error names a function
/// body site the text's positions locate, else about the text as a whole;
/// without a source, about the bytes, as [`invalid`]. An error's own offset
/// is one into the assembled bytes, never the text, so for a text input it
/// is replaced by the located one or dropped.
pub fn invalid_in(e: &zlm::Error, label: &str, source: Option<&TextSource>) -> CliError {
    let Some(s) = source else {
        return invalid(e, label);
    };
    let offset = e.site.as_ref().and_then(|site| {
        let (line, column) = zlm::text::site_position(&s.functions, site)?;
        zlm::ancillary::srcmap::offset_of(&s.text, line, column)
    });
    let mut at_text = e.clone();
    at_text.offset = offset.and_then(|o| u64::try_from(o).ok());
    CliError::diagnosed(&at_text, &Origin::text(label, Some(&s.text)))
}

/// Where a module read from a file is written: the text of a `.zlt`
/// input, or an artifact, whose ancillary source map (docs/zlm/ancillary.md)
/// is read only when a rejection needs it.
pub enum ModuleSource {
    /// A `.zlt` input.
    Text(TextSource),
    /// A `ZLM1` artifact, as given (the source file its map names is looked
    /// for as named, else beside it).
    Artifact(PathBuf),
}

/// A library error about input `label` (bytes `bytes`) whose source is
/// `source`: at the `.zlt` line ([`invalid_in`]); for an artifact, at the
/// line its verified source map gives for the error's site
/// ([`crate::zlm_source::mapped_error`]; the container names the payload's
/// address, so the map is the one written for these bytes); else about the
/// bytes ([`invalid`]). A map that does not verify is not used here
/// (`zlm validate` reports it on its own).
pub fn invalid_at(
    e: &zlm::Error,
    label: &str,
    bytes: &[u8],
    source: Option<&ModuleSource>,
) -> CliError {
    match source {
        Some(ModuleSource::Text(text)) => invalid_in(e, label, Some(text)),
        Some(ModuleSource::Artifact(input)) => {
            let located = e.site.as_ref().and_then(|site| {
                let records = zlm::ancillary::Records::of_file(bytes).ok()??;
                records.source_map?.ok()?.site(site)
            });
            match located {
                Some(at) => crate::zlm_source::mapped_error(e, &at, input),
                None => invalid(e, label),
            }
        }
        None => invalid(e, label),
    }
}

/// Reads one module as canonical artifact bytes: a `ZLM1` artifact as is, a
/// `.zlt` text module (anything else that is UTF-8) assembled by the
/// canonical writer, so every verb takes either.
pub fn read_module(file: &Path) -> Result<(String, Vec<u8>), CliError> {
    read_module_source(file).map(|(label, bytes, _)| (label, bytes))
}

/// [`read_module`], also returning where the module is written: the text
/// and its positions for a `.zlt` input, the artifact's path otherwise
/// ([`invalid_at`] points a rejection at the source line).
pub fn read_module_source(
    file: &Path,
) -> Result<(String, Vec<u8>, Option<ModuleSource>), CliError> {
    read_module_source_with(file, &[])
}

/// The members of `providers` as a text parse resolves their qualified names
/// (`zlm::text::parse_with_providers`).
pub fn provider_names<'a>(
    providers: &[&'a Checked],
) -> Vec<(&'a zlm::Module, &'a zlm::ids::Identities)> {
    providers.iter().map(|p| (p.module(), p.ids())).collect()
}

/// [`read_module_source`], with a `.zlt` input's qualified names of the
/// `--dep` providers' members resolved (`func:module::Decl.function`).
pub fn read_module_source_with(
    file: &Path,
    providers: &[&Checked],
) -> Result<(String, Vec<u8>, Option<ModuleSource>), CliError> {
    let (label, bytes) = read(file)?;
    if bytes.starts_with(b"ZLM1") {
        let artifact = ModuleSource::Artifact(file.to_path_buf());
        return Ok((label, bytes, Some(artifact)));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        CliError::usage(format!(
            "{label} is neither a ZLM1 artifact nor UTF-8 text (.zlt)"
        ))
    })?;
    let (module, positions) = zlm::text::parse_with_providers(&text, &provider_names(providers))
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, Some(&text))))?;
    let source = TextSource::new(text, &module, positions);
    let bytes = zlm::write::write(&module).map_err(|e| invalid_in(&e, &label, Some(&source)))?;
    Ok((label, bytes, Some(ModuleSource::Text(source))))
}

/// Reads and decodes one artifact (or text module), checked on its own.
pub fn load(file: &Path) -> Result<Checked, CliError> {
    let (label, bytes, source) = read_module_source(file)?;
    zlm::decode::decode(&bytes).map_err(|e| invalid_at(&e, &label, &bytes, source.as_ref()))
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
    let (label, bytes, source) = read_module_source_with(file, &providers)?;
    zlm::decode::decode_linked(&bytes, &providers)
        .map_err(|e| invalid_at(&e, &label, &bytes, source.as_ref()))
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
