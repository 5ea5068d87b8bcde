//! A closed standard output (`irkit … | head`) ends the process quietly with
//! [`EXIT_CLOSED_PIPE`], as a Unix tool that SIGPIPE ends: no message, no panic.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe is an `EPIPE` error:
//! `crate::io::write` returns it as an I/O error that [`is_closed_pipe`]
//! recognises, and `print!`/`println!` panic with it, which the hook
//! installed by [`install`] turns into the same quiet exit.

use crate::error::CliError;
use crate::exit::EXIT_CLOSED_PIPE;

/// Whether `error` is a write to a closed standard output.
pub fn is_closed_pipe(error: &CliError) -> bool {
    matches!(error, CliError::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Makes a `print!` to a closed standard output exit quietly; every other
/// panic is reported as before.
pub fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(i32::from(EXIT_CLOSED_PIPE));
        }
        previous(info);
    }));
}
