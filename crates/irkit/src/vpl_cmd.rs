//! `irkit vpl <verb>`.

use std::process::ExitCode;

/// Verbs of `irkit vpl`.
#[derive(clap::Subcommand)]
pub enum Verb {}

/// Runs one `irkit vpl` verb.
pub fn run(verb: Verb) -> ExitCode {
    match verb {}
}
