//! `irkit rvn …` end to end on the checked-in examples.

use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/rvnlib")
}

mod common;
use common::{irkit, text};

fn path(name: &str) -> String {
    examples().join(name).display().to_string()
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
    assert_eq!(lines[0]["kind"], "semantic");
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .contains("at Body.Statements[1]")
    );
    assert_eq!(lines[1]["kind"], "encoding");
    assert_eq!(lines[1]["code"], "RVN-EFFECT");
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
    assert!(message.contains("error[RVN-KEY-CONFLICT]"), "{message}");
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

fn package(name: &str) -> String {
    examples().join("packages").join(name).display().to_string()
}

#[test]
fn link_says_which_container_version_it_wrote() {
    let dir = std::env::temp_dir().join(format!("irkit-rvn-version-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("shade.rvnlib").display().to_string();
    let linked = irkit(&[
        "rvn",
        "link",
        "--consumer",
        &package("shade-app.rvnlib"),
        &package("brdf-v1.rvnlib"),
        &package("skinning-v1.rvnlib"),
        "-o",
        &out,
    ]);
    assert_eq!(linked.status.code(), Some(0), "{}", text(&linked.stderr));
    assert!(
        text(&linked.stderr).contains("as container version 3 (the version Raven reads)"),
        "{}",
        text(&linked.stderr)
    );
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[7..11], &3i32.to_le_bytes());
    assert_eq!(
        bytes,
        std::fs::read(examples().join("packages/shade-app-linked.rvnlib")).unwrap()
    );
    // pkg-a's struct keys differ from their names: version 4, said so in JSON.
    let linked = irkit(&[
        "rvn",
        "link",
        "--format",
        "json",
        &path("pkg-a.rvnlib"),
        "-o",
        &out,
    ]);
    assert_eq!(linked.status.code(), Some(0));
    let line: serde_json::Value = serde_json::from_str(text(&linked.stdout).trim()).unwrap();
    assert_eq!(line["kind"], "written");
    assert_eq!(line["version"], 4);
    assert_eq!(line["raven_readable"], false);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diff_reports_compatible_and_breaking_versions() {
    let compatible = irkit(&[
        "rvn",
        "diff",
        &package("brdf-v1.rvnlib"),
        &package("brdf-v2.rvnlib"),
    ]);
    assert_eq!(
        compatible.status.code(),
        Some(0),
        "{}",
        text(&compatible.stderr)
    );
    let report = text(&compatible.stdout);
    assert!(
        report.contains("compatible function-body-changed `Brdf.Shading.GgxD"),
        "{report}"
    );
    assert!(report.contains("5 change(s), 0 breaking"), "{report}");

    let breaking = irkit(&[
        "rvn",
        "diff",
        "--format",
        "json",
        &package("skinning-v1.rvnlib"),
        &package("skinning-v2.rvnlib"),
    ]);
    // A breaking change is a verdict (exit 3), not invalid input (exit 1).
    assert_eq!(breaking.status.code(), Some(3));
    let lines: Vec<serde_json::Value> = text(&breaking.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let named: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["breaking"] == true)
        .map(|l| {
            (
                l["change"].as_str().unwrap(),
                l["subject"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        named,
        vec![
            ("struct-layout-changed", "SkinVertex"),
            (
                "function-removed",
                "Geometry.Skinning.Blend(a: float4x4, b: float4x4, wa: float, wb: float): float4x4"
            ),
            (
                "member-removed",
                "Geometry.Skinning.Blend(Mat4, Mat4, Float, Float): Mat4"
            ),
        ]
    );
    let summary = lines.last().unwrap();
    assert_eq!(summary["kind"], "summary");
    assert_eq!(summary["breaking"], 3);
    assert_eq!(summary["compatible"], false);

    // A library that does not verify is invalid input, with its diagnostics.
    let bad = irkit(&[
        "rvn",
        "diff",
        &path("refused/return-mismatch.rvnlib"),
        &package("brdf-v1.rvnlib"),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad.stderr).contains("RVN3010"),
        "{}",
        text(&bad.stderr)
    );
}
