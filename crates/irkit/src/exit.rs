//! The exit statuses every verb returns (the CLI contract, `docs/diagnostics.md`, "Exit status").

/// Exit status for invalid input (diagnostics printed).
pub const EXIT_INVALID: u8 = 1;
/// Exit status for usage and I/O errors, and an unusable environment.
pub const EXIT_USAGE: u8 = 2;
/// Exit status for a negative verdict about valid input, which is not an
/// error: a breaking change (`rvn diff`), a run that faulted (`zlm run`).
pub const EXIT_VERDICT: u8 = 3;
/// Exit status when standard output is a closed pipe (`irkit … | head`):
/// 128 + SIGPIPE, what a shell reports for a tool the signal ended; nothing
/// is printed.
pub const EXIT_CLOSED_PIPE: u8 = 141;
