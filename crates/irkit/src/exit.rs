//! The exit statuses every verb returns (the CLI contract): 0 success, 1 invalid input, 2 usage
//! or I/O error.

/// Exit status for invalid input (diagnostics printed).
pub const EXIT_INVALID: u8 = 1;
/// Exit status for usage and I/O errors.
pub const EXIT_USAGE: u8 = 2;
