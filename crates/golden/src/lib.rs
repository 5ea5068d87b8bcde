//! The one golden-file mechanism of the workspace's tests.
//!
//! A golden test compares what the code produces with a reviewed file in the
//! repository. Run the tests with `IRKIT_BLESS=1` (exactly `1`) to rewrite
//! the files instead, then review the diff. Tests use [`blessing`] to decide,
//! and [`assert_text`] / [`check_bytes`] for the compare-or-rewrite step.

use std::path::Path;

/// The environment variable that rewrites golden files.
pub const BLESS_VAR: &str = "IRKIT_BLESS";

/// Whether this run rewrites golden files (`IRKIT_BLESS=1`).
pub fn blessing() -> bool {
    std::env::var(BLESS_VAR).is_ok_and(|v| v == "1")
}

/// Why a golden file did not match.
#[derive(Debug)]
pub enum Mismatch {
    /// The file could not be read.
    Unreadable(String, std::io::Error),
    /// The file differs from what the test produced.
    Differs(String),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Unreadable(path, e) => {
                write!(f, "{path}: {e} (regenerate with {BLESS_VAR}=1)")
            }
            Mismatch::Differs(path) => write!(
                f,
                "{path} differs from the golden (review, then regenerate with {BLESS_VAR}=1)"
            ),
        }
    }
}

/// When blessing, writes `actual` to `path` (creating its directory) and
/// returns `Ok`; otherwise compares `actual` with the file.
///
/// # Panics
/// When blessing and the file cannot be written.
pub fn check_bytes(path: &Path, actual: &[u8]) -> Result<(), Mismatch> {
    let shown = path.display().to_string();
    if blessing() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
        }
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{shown}: {e}"));
        return Ok(());
    }
    match std::fs::read(path) {
        Ok(expected) if expected == actual => Ok(()),
        Ok(_) => Err(Mismatch::Differs(shown)),
        Err(e) => Err(Mismatch::Unreadable(shown, e)),
    }
}

/// [`check_bytes`] for text that must equal the golden: a mismatch fails
/// the test with both texts shown.
///
/// # Panics
/// When the golden is unreadable or differs (unless blessing).
pub fn assert_text(path: &Path, actual: &str, what: &str) {
    match check_bytes(path, actual.as_bytes()) {
        Ok(()) => {}
        Err(Mismatch::Differs(shown)) => {
            let expected = std::fs::read_to_string(path).unwrap_or_default();
            assert_eq!(
                actual, expected,
                "{what}: {shown} differs from the golden (review, then regenerate with {BLESS_VAR}=1)"
            );
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matching_file_passes_and_a_different_one_is_named() {
        if blessing() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("golden-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        std::fs::write(&path, "one\n").unwrap();
        assert!(check_bytes(&path, b"one\n").is_ok());
        let e = check_bytes(&path, b"two\n").unwrap_err();
        assert!(matches!(e, Mismatch::Differs(_)), "{e}");
        assert!(e.to_string().contains("IRKIT_BLESS=1"), "{e}");
        let missing = check_bytes(&dir.join("missing.txt"), b"x").unwrap_err();
        assert!(matches!(missing, Mismatch::Unreadable(..)), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
