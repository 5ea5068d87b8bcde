//! Input and output helpers shared by the verbs.

use crate::error::{CliError, IoOp};
use std::io::Read as _;
use std::path::Path;

/// Reads a file, or standard input when `path` is `-`. Returns the label
/// used in diagnostics together with the bytes.
pub fn read(path: &Path) -> Result<(String, Vec<u8>), CliError> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|source| CliError::Io {
                op: IoOp::Read,
                path: "standard input".to_string(),
                source,
            })?;
        Ok(("<stdin>".to_string(), bytes))
    } else {
        let bytes = std::fs::read(path).map_err(|source| CliError::Io {
            op: IoOp::Read,
            path: path.display().to_string(),
            source,
        })?;
        Ok((path.display().to_string(), bytes))
    }
}

/// Writes `bytes` to `path`, or to standard output when `path` is `None` or `-`.
pub fn write(path: Option<&Path>, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write as _;
    match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::write(p, bytes).map_err(|source| CliError::Io {
                op: IoOp::Write,
                path: p.display().to_string(),
                source,
            })
        }
        _ => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|source| CliError::Io {
                    op: IoOp::Write,
                    path: "standard output".to_string(),
                    source,
                })
        }
    }
}

/// Creates directory `dir` and its parents.
pub fn create_dir(dir: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        op: IoOp::Create,
        path: dir.display().to_string(),
        source,
    })
}
