//! `irkit rvn …` end to end on the checked-in examples.

use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/rvnlib")
}

mod common;
use common::irkit;

fn path(name: &str) -> String {
    examples().join(name).display().to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn verify_accepts_good_libraries_and_reports_bad_ones_as_json() {
    let good = irkit(&[
        "rvn",
        "verify",
        &path("core.rvnlib"),
        &path("legacy-v3.rvnlib"),
    ]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    assert!(text(&good.stdout).contains("ok: library `Core`"));

    let bad = irkit(&[
        "rvn",
        "verify",
        "--format",
        "json",
        &path("refused/return-mismatch.rvnlib"),
        &path("refused/effect.rvnfx"),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = text(&bad.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["code"], "RVN3010");
    assert_eq!(lines[0]["kind"], "verify");
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .contains("at Body.Statements[1]")
    );
    assert_eq!(lines[1]["kind"], "effect-not-library");
    assert_eq!(lines[1]["offset"], 0);
}

#[test]
fn inspect_prints_the_inspection_json() {
    let out = irkit(&["rvn", "inspect", &path("core.rvnlib")]);
    assert_eq!(out.status.code(), Some(0));
    let expected = std::fs::read(examples().join("core.json")).unwrap();
    assert_eq!(out.stdout, expected);
}

#[test]
fn link_writes_the_module_and_refuses_collisions() {
    let dir = std::env::temp_dir().join(format!("irkit-rvn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("linked.rvnlib");
    let out = out_file.display().to_string();
    let linked = irkit(&[
        "rvn",
        "link",
        "--consumer",
        &path("app.rvnlib"),
        &path("pkg-a.rvnlib"),
        &path("pkg-b.rvnlib"),
        "-o",
        &out,
    ]);
    assert_eq!(linked.status.code(), Some(0), "{}", text(&linked.stderr));
    assert!(text(&linked.stderr).contains("`Of#1`"));
    assert_eq!(
        std::fs::read(&out_file).unwrap(),
        std::fs::read(examples().join("app-linked.rvnlib")).unwrap()
    );

    let clash = irkit(&[
        "rvn",
        "link",
        &path("collide-x.rvnlib"),
        &path("collide-y.rvnlib"),
        "-o",
        &out,
    ]);
    assert_eq!(clash.status.code(), Some(1));
    let message = text(&clash.stderr);
    assert!(message.contains("key-conflict"), "{message}");
    assert!(
        message.contains("collide-x.rvnlib") && message.contains("collide-y.rvnlib"),
        "{message}"
    );

    let pruned = irkit(&[
        "rvn",
        "link",
        &path("pkg-a.rvnlib"),
        "--entry",
        "PkgA.Geometry.Of(s: Shape): float",
        "-o",
        &out,
    ]);
    assert_eq!(pruned.status.code(), Some(0), "{}", text(&pruned.stderr));
    assert!(text(&pruned.stderr).contains("1 struct(s) and 1 function(s)"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn calls_prints_the_graph_and_usage_errors_exit_2() {
    let out = irkit(&[
        "rvn",
        "calls",
        "--format",
        "json",
        &path("app.rvnlib"),
        "App.Main.Shade(x: float): float",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let edges: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(edges.len(), 4);
    assert_eq!(edges[0]["callee"], "PkgA.Geometry.Of(s: Shape): float");
    assert_eq!(edges[0]["resolved"], false);
    assert_eq!(edges[2]["callee"], "App.Main.Of(x: float): float");
    assert_eq!(edges[2]["resolved"], true);

    let missing = irkit(&["rvn", "calls", &path("app.rvnlib"), "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    let no_file = irkit(&["rvn", "verify", "/nonexistent/x.rvnlib"]);
    assert_eq!(no_file.status.code(), Some(2));
}
