//! `irkit <system> <verb> [args]`: one command-line tool for the four irkit systems.
//!
//! Exit status: 0 success, 1 invalid input (diagnostics printed), 2 usage or I/O error.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod args;
mod catalogue;
mod diag;
mod diagnose;
mod error;
mod exit;
mod io;
mod pipe;
mod report;
mod rvn_cmd;
mod suggest;
mod tcc_cmd;
mod tcc_compile_cmd;
mod tcc_host_cmd;
mod tcc_limit_cmd;
mod tcc_run_cmd;
mod tcc_schedule_cmd;
mod tcc_simulate_cmd;
mod tcc_values;
mod vpl_cmd;
mod vpl_cpu_cmd;
mod vpl_glsl_cmd;
mod vpl_graph_cmd;
mod vpl_playground_cmd;
mod vpl_vk_cmd;
mod vpl_webgl_cmd;
mod zlm_c_cmd;
mod zlm_cmd;
mod zlm_llvm_args;
mod zlm_llvm_exec;
mod zlm_load;
mod zlm_run_cmd;
mod zlm_source;
mod zlm_zli_cmd;

/// mimalloc instead of glibc `malloc`: `irkit tcc serve` runs many worker
/// threads that allocate per step (≈ 15 % of the host's CPU in glibc `malloc`;
/// see docs/tcc/host.md, Benchmarks).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub use exit::{EXIT_INVALID, EXIT_USAGE};

#[derive(Parser)]
#[command(
    name = "irkit",
    version,
    about = "Compiler-IR and checked-artifact toolkit"
)]
struct Cli {
    #[command(subcommand)]
    system: System,
}

#[derive(Subcommand)]
enum System {
    /// Arcadia VPL shader IR (vpl-v1.md).
    #[command(subcommand)]
    Vpl(vpl_cmd::Verb),
    /// TCC program artifacts (tcc-program-format.md).
    #[command(subcommand)]
    Tcc(tcc_cmd::Verb),
    /// Raven .rvnlib compiled shader libraries (rvnlib-ir.md).
    #[command(subcommand)]
    Rvn(rvn_cmd::Verb),
    /// ZLM1 schema-1.9 checked artifacts (zlm1-core0-artifacts.md).
    #[command(subcommand)]
    Zlm(zlm_cmd::Verb),
}

fn main() -> ExitCode {
    pipe::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) if err.use_stderr() && report::json_requested(std::env::args()) => {
            // A bad command line in `--format json` is a JSON diagnostic too.
            report::usage_json(&err.render().to_string());
            return ExitCode::from(EXIT_USAGE);
        }
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Each verb returns `Result<Outcome, CliError>`; its error is rendered
    // here, once, in the verb's `--format`.
    match cli.system {
        System::Vpl(verb) => {
            let format = verb.format();
            report::finish(vpl_cmd::run(verb), format)
        }
        System::Tcc(verb) => {
            let format = verb.format();
            report::finish(tcc_cmd::run(verb), format)
        }
        System::Rvn(verb) => {
            let format = verb.format();
            report::finish(rvn_cmd::run(verb), format)
        }
        System::Zlm(verb) => {
            let format = verb.format();
            report::finish(zlm_cmd::run(verb), format)
        }
    }
}
