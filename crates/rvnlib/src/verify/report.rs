//! What the verifier reports: RVN codes, findings and the cap on their number.

use std::fmt;

/// IR verifier failure.
pub const RVN3010: &str = "RVN3010";
/// A library names a type no supplied library declares.
pub const RVN5004: &str = "RVN5004";

/// Most errors reported for one library, so hostile input cannot flood memory.
pub const MAX_ERRORS: usize = 200;

/// One verifier finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// `RVN3010` (IR) or `RVN5004` (unknown struct).
    pub code: &'static str,
    /// Key of the function (or struct) at fault, if any.
    pub item: Option<String>,
    /// Statement path inside the function (`Body.Statements[2].Then.Statements[0]`), or
    /// the part of the declaration (`Values[3]`, `Fields[1]`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        if let Some(item) = &self.item {
            write!(f, " in `{item}`")?;
        }
        if !self.path.is_empty() {
            write!(f, " at {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for VerifyError {}

/// Adds a finding unless the cap is reached.
pub(crate) fn push(errors: &mut Vec<VerifyError>, error: VerifyError) {
    if errors.len() < MAX_ERRORS {
        errors.push(error);
    }
}
