//! Helpers shared by the `irkit` end-to-end tests.
#![allow(dead_code)] // each test crate uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `irkit` binary under test with `args` and collects its output.
pub fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .output()
        .expect("irkit runs")
}

/// Runs the `irkit` binary under test with `args` and returns its exit code (none when a signal
/// ended it), stdout and stderr, as text with invalid UTF-8 replaced.
pub fn run_irkit<I, S>(args: I) -> (Option<i32>, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run_command(Command::new(env!("CARGO_BIN_EXE_irkit")).args(args))
}

/// Runs `command` to its end and returns its exit code (none when a signal ended it), stdout
/// and stderr, as text with invalid UTF-8 replaced.
pub fn run_command(command: &mut Command) -> (Option<i32>, String, String) {
    let out = command.output().expect("the command runs");
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// A path as a command-line argument (the tests' scratch paths are UTF-8).
pub fn path_arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// Output bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A run's exit status, stdout and stderr, for an assertion's message.
pub fn run_report(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The subcommands a help text lists under `Commands:` (clap's own `help` left out).
pub fn help_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The effect keys a JSON Lines provider log holds (`{"key": ...}` per
/// call), in call order; none when the log does not exist yet.
pub fn logged_effect_keys(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["key"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The path of `rel` relative to the repository root, as a string argument.
pub fn repo_file(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

/// Writes `contents` to a scratch file named `name`, in a directory unique to
/// this test process and to `tag`, and returns its path.
pub fn scratch(tag: &str, name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}
