//! `irkit <system> <verb> [args]`: one command-line tool for the four irkit systems.
//!
//! Exit status: 0 success, 1 invalid input (diagnostics printed), 2 usage or I/O error.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod allocator;
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
mod tcc_delete_cmd;
mod tcc_host_cmd;
mod tcc_limit_cmd;
mod tcc_pause_cmd;
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

use clap::{CommandFactory, FromArgMatches, Subcommand};
use std::process::ExitCode;

pub use exit::{EXIT_INVALID, EXIT_USAGE};

#[derive(clap::Parser)]
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
#[expect(
    clippy::large_enum_variant,
    reason = "one value per process, parsed once: boxing a variant saves nothing"
)]
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

/// A system's name, its help line, and the function that adds its verbs.
type SystemEntry = (
    &'static str,
    &'static str,
    fn(clap::Command) -> clap::Command,
);

/// The systems in `System`'s order: name and the line `irkit --help` lists
/// (its doc comment as clap's derive renders it), and the function that adds
/// its verbs. `command_line_matches_the_derived_one` checks them against the
/// derived command.
const SYSTEMS: [SystemEntry; 4] = [
    (
        "vpl",
        "Arcadia VPL shader IR (vpl-v1.md)",
        vpl_cmd::Verb::augment_subcommands,
    ),
    (
        "tcc",
        "TCC program artifacts (tcc-program-format.md)",
        tcc_cmd::Verb::augment_subcommands,
    ),
    (
        "rvn",
        "Raven .rvnlib compiled shader libraries (rvnlib-ir.md)",
        rvn_cmd::Verb::augment_subcommands,
    ),
    (
        "zlm",
        "ZLM1 schema-1.9 checked artifacts (zlm1-core0-artifacts.md)",
        zlm_cmd::Verb::augment_subcommands,
    ),
];

/// The command line clap parses, built for the first argument: when it
/// names a system, only that system's verbs are built (the others are
/// listed by name and help line, as `irkit --help` shows them); `--version`
/// builds no verbs; anything else (`--help`, `help`, a misspelt system)
/// gets the whole derived command. Building every system's verbs and
/// arguments was a third of `irkit --version`'s instructions and most of
/// what a small `vpl check` spends before reading its file (docs/startup.md).
fn command_line(first: Option<&str>) -> clap::Command {
    let selected = match first {
        Some("--version" | "-V") => None,
        Some(name) if SYSTEMS.iter().any(|(system, ..)| *system == name) => Some(name),
        _ => return Cli::command(),
    };
    let mut command = clap::Command::new("irkit")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Compiler-IR and checked-artifact toolkit")
        .subcommand_required(true)
        .arg_required_else_help(true);
    for (name, about, verbs) in SYSTEMS {
        let system = clap::Command::new(name)
            .subcommand_required(true)
            .arg_required_else_help(true);
        let system = match selected == Some(name) {
            true => verbs(system),
            false => system,
        };
        command = command.subcommand(system.about(about).long_about(None));
    }
    command
}

/// Parses the process's command line as `Cli::try_parse` does, building
/// only what [`command_line`] builds for it.
fn parse_command_line() -> Result<Cli, clap::Error> {
    let first = std::env::args_os().nth(1);
    let first = first.as_deref().and_then(|a| a.to_str());
    let mut matches = command_line(first).try_get_matches()?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|err| err.format(&mut command_line(first)))
}

fn main() -> ExitCode {
    pipe::install();
    let cli = match parse_command_line() {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A system's subcommand of a command line, rendered in full (`Debug`
    /// shows every setting, argument and nested verb).
    fn system_of(command: &clap::Command, name: &str) -> String {
        let system = command
            .get_subcommands()
            .find(|s| s.get_name() == name)
            .expect("the system is listed");
        format!("{system:?}")
    }

    #[test]
    fn command_line_matches_the_derived_one() {
        let derived = Cli::command();
        // The derived command lists the systems in `SYSTEMS`' order.
        let names: Vec<&str> = derived.get_subcommands().map(|s| s.get_name()).collect();
        assert_eq!(names, SYSTEMS.map(|(name, ..)| name));
        for (name, ..) in SYSTEMS {
            let built = command_line(Some(name));
            // The selected system is the derived one, setting for setting.
            assert_eq!(system_of(&built, name), system_of(&derived, name), "{name}");
            // The others carry the derived help line and no verbs.
            for (other, about, _) in SYSTEMS.iter().filter(|(o, ..)| *o != name) {
                let stub = built.find_subcommand(other).expect("listed");
                let full = derived.find_subcommand(other).expect("listed");
                assert_eq!(
                    stub.get_about().map(|a| a.to_string()),
                    full.get_about().map(|a| a.to_string())
                );
                assert_eq!(
                    stub.get_about().map(|a| a.to_string()).as_deref(),
                    Some(*about)
                );
                assert_eq!(stub.get_subcommands().count(), 0);
            }
            // The top level renders the same help and version.
            for mut command in [built.clone(), command_line(Some("--version"))] {
                let mut derived = derived.clone();
                assert_eq!(
                    command.render_long_help().to_string(),
                    derived.render_long_help().to_string()
                );
                assert_eq!(command.render_version(), derived.render_version());
            }
        }
        // Anything else gets the derived command itself.
        for first in [None, Some("--help"), Some("help"), Some("vp1")] {
            assert_eq!(format!("{:?}", command_line(first)), format!("{derived:?}"));
        }
        command_line(Some("vpl")).debug_assert();
    }
}
