//! irkit's command-line tests in one test binary (one link instead of 27): each file
//! below stays where it was and is a module here, so
//! `cargo test -p irkit --test cli -- zlm_run::` runs one file's tests. The service tests
//! (servers, PostgreSQL, browsers, the playground) stay separate binaries, each named by a
//! `[[test]]` entry in Cargo.toml, so their timing is unchanged.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "cli_errors.rs"]
mod cli_errors;
#[path = "cli_help.rs"]
mod cli_help;
#[path = "diagnostic_codes.rs"]
mod diagnostic_codes;
#[path = "exit_codes.rs"]
mod exit_codes;
#[path = "rvn_cli.rs"]
mod rvn_cli;
#[path = "rvn_diagnostics.rs"]
mod rvn_diagnostics;
#[path = "startup.rs"]
mod startup;
#[path = "tcc_cli.rs"]
mod tcc_cli;
#[path = "tcc_run_cli.rs"]
mod tcc_run_cli;
#[path = "tcc_rust_cli.rs"]
mod tcc_rust_cli;
#[path = "tcc_simulate.rs"]
mod tcc_simulate;
#[path = "test_suites.rs"]
mod test_suites;
#[path = "use_graph.rs"]
mod use_graph;
#[path = "verify_vpl_check.rs"]
mod verify_vpl_check;
#[path = "vpl_arcadia_runner.rs"]
mod vpl_arcadia_runner;
#[path = "vpl_cli.rs"]
mod vpl_cli;
#[path = "vpl_cpu_cli.rs"]
mod vpl_cpu_cli;
#[path = "vpl_diagnostics.rs"]
mod vpl_diagnostics;
#[path = "vpl_glsl_cli.rs"]
mod vpl_glsl_cli;
#[path = "vpl_vk_cli.rs"]
mod vpl_vk_cli;
#[path = "zlm_c.rs"]
mod zlm_c;
#[path = "zlm_cli_diagnostics.rs"]
mod zlm_cli_diagnostics;
#[path = "zlm_diagnostics.rs"]
mod zlm_diagnostics;
#[path = "zlm_llvm.rs"]
mod zlm_llvm;
#[path = "zlm_package.rs"]
mod zlm_package;
#[path = "zlm_run.rs"]
mod zlm_run;
#[path = "zlm_source_map.rs"]
mod zlm_source_map;
#[path = "zlm_zli.rs"]
mod zlm_zli;
