//! Faults at source positions (docs/zlm/ancillary.md): a run's fault,
//! located through a source map, becomes a diagnostic at the `.zlt` line
//! and column with the function it is in and, when the source file can be
//! read, the rustc-style snippet. A leaf the zlm verb files share.

use crate::diag::Diagnostic;
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

/// The diagnostics of `fault` in the run of `input` (diagnostic label
/// `label`), with the source text they point into: at its source position
/// when `located`, else about the binary input with its block and operation.
pub fn fault_diagnostics(
    fault: &Fault,
    located: Option<&Located>,
    input: &Path,
    label: &str,
) -> (Vec<Diagnostic>, Option<String>) {
    let Some(at) = located else {
        return (fault.diagnostics(&Origin::binary(label)), None);
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
    (diagnostics, text)
}

/// A rejection of an artifact's payload, `located` through the artifact's
/// source map: a diagnostic about the source file at its line and column
/// (with the snippet when the file can be read, as named, else beside
/// `input`), of the kind the code has in text ([`crate::diagnose::zlm_text_kind`]).
pub fn mapped_error(error: &zlm::Error, located: &Located, input: &Path) -> CliError {
    let text = source_text(located, input);
    let mut at_text = error.clone();
    at_text.offset = text
        .as_deref()
        .and_then(|t| zlm::ancillary::srcmap::offset_of(t, located.line, located.column))
        .and_then(|offset| u64::try_from(offset).ok());
    let origin = Origin::text(&located.file, text.as_deref());
    let mut diagnostics = at_text.diagnostics(&origin);
    for d in &mut diagnostics {
        d.kind = crate::diagnose::zlm_text_kind(error.code).to_string();
        if d.line.is_none() {
            d.line = Some(u64::from(located.line));
            d.column = Some(u64::from(located.column));
        }
    }
    CliError::invalid(diagnostics, text.as_deref())
}

/// `zlm validate`'s check of the ancillary data after a valid payload
/// (docs/zlm/ancillary.md): the container's structure, then each record on
/// its own hash and form. Every failure is reported; the payload's own
/// validity is already established and stated in each message.
pub fn check_ancillary(bytes: &[u8], label: &str) -> Result<(), CliError> {
    let records = match zlm::ancillary::Records::of_file(bytes) {
        Ok(Some(records)) => records,
        Ok(None) => return Ok(()),
        Err(e) => return Err(ancillary_error(e, label)),
    };
    let mut errors = Vec::new();
    let failures = records
        .source_map
        .into_iter()
        .filter_map(Result::err)
        .chain(records.provenance.into_iter().filter_map(Result::err))
        .chain(records.targets.into_iter().filter_map(Result::err));
    for e in failures {
        errors.push(ancillary_error(e, label));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CliError::several(errors))
    }
}

fn ancillary_error(mut e: zlm::Error, label: &str) -> CliError {
    e.message = format!("{} (the payload is valid)", e.message);
    CliError::diagnosed(&e, &Origin::binary(label))
}
