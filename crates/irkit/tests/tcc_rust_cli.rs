//! `irkit tcc compile`/`run` take Rust-subset sources (`.rs`) through the
//! same extension dispatch as `.py`/`.ts`: an `irkit-rust` artifact, and
//! diagnostics with code, position and snippet.

mod common;
use common::irkit;
use serde_json::Value as J;

fn scratch(name: &str, contents: &str) -> std::path::PathBuf {
    common::scratch("tcc-rust", name, contents)
}

#[test]
fn compile_and_run_a_rust_source() {
    let f = scratch(
        "ok.rs",
        "async fn run(x: f64) -> f64 {\n    let mut acc = 0.0;\n    for i in 0..4 {\n        acc += i as f64 * x;\n    }\n    acc\n}\n",
    );
    let o = irkit(&["tcc", "compile", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a: J = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["envelope"]["frontend_id"], "irkit-rust");
    assert_eq!(
        a["envelope"]["language_semantics_version"],
        "rust.subset.v1"
    );
    let o = irkit(&[
        "tcc",
        "run",
        f.to_str().unwrap(),
        "--args",
        r#"[{"t":"number","v":2}]"#,
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let last: J = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "completed", "{text}");
    assert_eq!(last["result"]["v"].as_f64(), Some(12.0), "{text}");
}

#[test]
fn rust_diagnostics_carry_code_position_and_snippet() {
    let f = scratch(
        "moved.rs",
        "async fn run() -> f64 {\n    let s = String::from(\"a\");\n    let t = s;\n    let u = s;\n    1.0\n}\n",
    );
    let o = irkit(&["tcc", "compile", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("error[TCC-F021]: use of moved value `s`"), "{e}");
    assert!(e.contains("moved.rs:4:13"), "{e}");
    assert!(e.contains("4 |     let u = s;") && e.contains('^'), "{e}");
    let o = irkit(&["tcc", "run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[TCC-F021]"));
    let o = irkit(&["tcc", "compile", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let d: J = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (d["code"].as_str(), d["line"].as_u64(), d["column"].as_u64()),
        (Some("TCC-F021"), Some(4), Some(13))
    );
}

#[test]
fn step_and_start_local_take_rust_sources() {
    let saga = common::repo_file("examples/tcc/src/order_saga.rs");
    let cont = scratch("saga.cont.json", "");
    let o = irkit(&[
        "tcc",
        "step",
        &saga,
        "-o",
        cont.to_str().unwrap(),
        "--args",
        r#"[{"t":"object","v":{"id":{"t":"string","v":"o-1"}}}]"#,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        shown.contains("run_effect \"inventory.reserve\" input {\"t\":\"object\",\"v\":{}}"),
        "{shown}"
    );

    // The SQLite durable host: echo routes for everything but the charge, which fails.
    let dir = std::env::temp_dir().join(format!("irkit-tcc-rust-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("host.sqlite");
    let providers = dir.join("providers.toml");
    let mut toml = String::new();
    for pattern in ["inventory.*", "shipping.*", "payment.refund"] {
        toml += &format!("[[route]]\npattern = \"{pattern}\"\nprovider = \"echo\"\n\n");
    }
    std::fs::write(&providers, toml).unwrap();
    let o = irkit(&[
        "tcc",
        "start",
        "--local",
        &saga,
        "--database",
        db.to_str().unwrap(),
        "--providers",
        providers.to_str().unwrap(),
        "--args",
        r#"[{"id":"o-1"}]"#,
        "--format",
        "json",
        "--timeout-ms",
        "20000",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: J = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["status"], "completed", "{s}");
    let r = &s["result"];
    assert_eq!(r["$tag"], "Compensated", "{s}");
    assert_eq!(r["steps"][0], "reserve", "{s}");
    assert_eq!(r["undone"].as_array().map(Vec::len), Some(1), "{s}");
    assert_eq!(r["undone"][0], "release", "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}
