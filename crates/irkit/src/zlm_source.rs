//! Faults at source positions (docs/zlm/ancillary.md): a run's fault,
//! located through a source map, becomes a diagnostic at the `.zlt` line
//! and column with the function it is in and, when the source file can be
//! read, the rustc-style snippet. A leaf the zlm verb files share.

use crate::error::{CliError, Diagnose, Origin};
use std::path::{Path, PathBuf};
use zlm::ancillary::Located;
use zlm::interp::Fault;

/// The source file the map names, read: as named, else beside `input` (the
/// artifact or text that was run).
fn source_text(located: &Located, input: &Path) -> Option<String> {
    let named = PathBuf::from(&located.file);
    let beside = input.parent().map(|dir| {
        let name = named.file_name().map_or(named.clone(), PathBuf::from);
        dir.join(name)
    });
    std::iter::once(named)
        .chain(beside)
        .find_map(|p| std::fs::read_to_string(p).ok())
}

/// The CLI error of `fault` in the run of `input` (diagnostic label
/// `label`): at its source position when `located`, else about the binary
/// input with its block and operation.
pub fn fault_error(
    fault: &Fault,
    located: Option<&Located>,
    input: &Path,
    label: &str,
) -> CliError {
    let Some(at) = located else {
        return CliError::diagnosed(fault, &Origin::binary(label));
    };
    let text = source_text(at, input);
    let origin = Origin::text(&at.file, text.as_deref());
    let mut diagnostics = fault.diagnostics(&origin);
    for d in &mut diagnostics {
        d.message = format!("{} at {at}", d.message);
        match &text {
            Some(t) => {
                let offset = zlm::ancillary::srcmap::offset_of(t, at.line, at.column);
                *d = d.clone().at(offset, Some(t));
            }
            None => {
                d.line = Some(u64::from(at.line));
                d.column = Some(u64::from(at.column));
            }
        }
    }
    CliError::invalid(diagnostics, text.as_deref())
}
