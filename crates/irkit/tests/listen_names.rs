//! `--listen` takes host names (`localhost:0`) as well as addresses, for both services:
//! `irkit vpl playground` and `irkit tcc serve`. Each announces the bound loopback address
//! on its first line of standard output.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

/// Starts irkit with `args` in `dir`, returns its first stdout line, then kills it.
fn first_line(args: &[&str], dir: &std::path::Path) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("irkit starts");
    let mut line = String::new();
    let read = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    let _ = child.kill();
    let _ = child.wait();
    read.expect("a first line");
    line
}

#[test]
fn both_services_listen_on_a_host_name() {
    let dir = std::env::temp_dir().join(format!("irkit-listen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = first_line(&["vpl", "playground", "--listen", "localhost:0"], &dir);
    assert!(
        line.starts_with("VPL playground: http://127.0.0.1:"),
        "{line}"
    );
    let line = first_line(
        &[
            "tcc",
            "serve",
            "--listen",
            "localhost:0",
            "--database",
            "t.db",
        ],
        &dir,
    );
    assert!(line.starts_with("listening on http://127.0.0.1:"), "{line}");
    // A name that does not resolve, or a missing port, is a usage error.
    let out = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["vpl", "playground", "--listen", "localhost"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HOST:PORT"));
    let _ = std::fs::remove_dir_all(&dir);
}
