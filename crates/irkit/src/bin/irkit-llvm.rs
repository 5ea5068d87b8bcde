//! `irkit-llvm`: the LLVM engines of `irkit zlm build` and `irkit zlm run
//! --engine jit|aot`. `irkit` links no LLVM (so its other verbs load none of
//! libLLVM, Z3, ICU or libxml2); for these two verbs it replaces itself with
//! this executable, passing its own command line (`zlm_llvm_exec.rs`). This
//! executable parses that command line with the same argument definitions and
//! runs it with the same code, so output and exit status are irkit's.
//! See docs/startup.md.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

// The command-line modules irkit-llvm shares with irkit. Items only irkit's
// other verbs use are dead here.
#[allow(dead_code)]
#[path = "../args.rs"]
mod args;
#[allow(dead_code)]
#[path = "../catalogue.rs"]
mod catalogue;
#[allow(dead_code)]
#[path = "../diag.rs"]
mod diag;
#[allow(dead_code)]
#[path = "../diagnose.rs"]
mod diagnose;
#[allow(dead_code)]
#[path = "../error.rs"]
mod error;
#[allow(dead_code)]
#[path = "../exit.rs"]
mod exit;
#[allow(dead_code)]
#[path = "../io.rs"]
mod io;
#[allow(dead_code)]
#[path = "../pipe.rs"]
mod pipe;
#[allow(dead_code)]
#[path = "../report.rs"]
mod report;
#[allow(dead_code)]
#[path = "../suggest.rs"]
mod suggest;
#[allow(dead_code)]
#[path = "../zlm_c_cmd.rs"]
mod zlm_c_cmd;
#[path = "../zlm_llvm_args.rs"]
mod zlm_llvm_args;
#[path = "../zlm_llvm_cmd.rs"]
mod zlm_llvm_cmd;
#[allow(dead_code)]
#[path = "../zlm_load.rs"]
mod zlm_load;
#[allow(dead_code)]
#[path = "../zlm_run_cmd.rs"]
mod zlm_run_cmd;
#[allow(dead_code)]
#[path = "../zlm_source.rs"]
mod zlm_source;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// irkit's command line, restricted to the verbs that need LLVM.
#[derive(Parser)]
#[command(
    name = "irkit",
    version,
    about = "The LLVM engines of irkit (started by irkit for `zlm build` and `zlm run --engine jit|aot`)"
)]
struct Cli {
    #[command(subcommand)]
    system: System,
}

#[derive(Subcommand)]
enum System {
    /// ZLM1 schema-1.9 checked artifacts (zlm1-core0-artifacts.md).
    #[command(subcommand)]
    Zlm(Verb),
}

/// The `irkit zlm` verbs that need LLVM.
#[derive(Subcommand)]
enum Verb {
    /// Run a checked module with `--engine jit|aot`.
    Run(zlm_run_cmd::RunArgs),
    /// Build a checked artifact with LLVM under a target record (C0-EXEC-003).
    Build(zlm_llvm_args::BuildArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(exit::EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let System::Zlm(verb) = cli.system;
    match verb {
        Verb::Run(args) => {
            let format = args.fmt.format;
            let hooks = zlm_run_cmd::LlvmHooks {
                run: zlm_llvm_cmd::run_llvm,
                typed: zlm_llvm_cmd::run_llvm_typed,
            };
            report::finish(zlm_run_cmd::run(args, Some(hooks)), format)
        }
        Verb::Build(args) => {
            let format = args.fmt.format;
            report::finish(zlm_llvm_cmd::build(args), format)
        }
    }
}
