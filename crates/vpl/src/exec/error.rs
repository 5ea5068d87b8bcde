//! Errors of the CPU executor.

use thiserror::Error;

/// Why the executor cannot compile or draw a module.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ExecError {
    /// The module uses something the executor does not run (with what).
    #[error("{0}")]
    Unsupported(String),
    /// An executor resource bound was exceeded (value size, call depth,
    /// framebuffer size).
    #[error("{0}")]
    Limit(String),
    /// The draw request does not fit the program (uniform path, texture
    /// data, size).
    #[error("{0}")]
    Request(String),
}

impl ExecError {
    /// The stable diagnostic code of the error's kind.
    pub fn code(&self) -> &'static str {
        match self {
            ExecError::Unsupported(_) => crate::code::EXEC_UNSUPPORTED,
            ExecError::Limit(_) => crate::code::EXEC_LIMIT,
            ExecError::Request(_) => crate::code::EXEC_REQUEST,
        }
    }
}
