//! The scaffolding of the engine CLI tests (`zlm_c`, `zlm_llvm`): the
//! binary, the run examples, `irkit zlm run --engine E`, a scratch
//! directory, and the comparison of one engine's output with the
//! interpreter's on a list of cases.
#![allow(dead_code)] // each test crate uses a different subset

use std::process::{Command, Output};

/// The `irkit` binary under test.
pub fn irkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
}

/// The path of a run example (`examples/zlm/run/NAME`).
pub fn example(name: &str) -> String {
    format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `irkit zlm run ARGS --engine ENGINE`.
pub fn run(engine: &str, args: &[&str]) -> Output {
    irkit()
        .args(["zlm", "run"])
        .args(args)
        .args(["--engine", engine])
        .output()
        .unwrap()
}

/// A fresh scratch directory for this process, `tag` and `name`.
pub fn tmp(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Asserts that every engine of `engines` prints what `--engine interp`
/// prints (exit status, stdout, stderr) for every case; a case's first
/// argument names a run example.
pub fn same_as_interp(engines: &[&str], cases: &[&[&str]]) {
    for case in cases {
        let mut args: Vec<String> = case.iter().map(|s| s.to_string()).collect();
        args[0] = example(case[0]);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let want = run("interp", &args);
        for engine in engines {
            let got = run(engine, &args);
            assert_eq!(
                (
                    got.status.code(),
                    String::from_utf8_lossy(&got.stdout),
                    String::from_utf8_lossy(&got.stderr)
                ),
                (
                    want.status.code(),
                    String::from_utf8_lossy(&want.stdout),
                    String::from_utf8_lossy(&want.stderr)
                ),
                "{engine} {case:?}"
            );
        }
    }
}
