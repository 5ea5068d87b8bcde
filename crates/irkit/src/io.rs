//! Input and output helpers shared by the verbs.

use std::io::Read as _;
use std::path::Path;

/// Reads a file, or standard input when `path` is `-`. Returns the label
/// used in diagnostics together with the bytes.
pub fn read_input(path: &Path) -> Result<(String, Vec<u8>), String> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(("<stdin>".to_string(), bytes))
    } else {
        let bytes =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok((path.display().to_string(), bytes))
    }
}

/// Writes `bytes` to `path`, or to standard output when `path` is `None` or `-`.
pub fn write_output(path: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::write(p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))
        }
        _ => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write standard output: {e}"))
        }
    }
}
