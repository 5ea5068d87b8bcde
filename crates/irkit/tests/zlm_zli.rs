//! `irkit zlm zli` and `irkit zlm reflect`: packages from artifacts and text
//! modules, output files, determinism, and coded failures with exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .output()
        .unwrap()
}

fn example(rel: &str) -> String {
    format!("{}/../../examples/zlm/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn golden(rel: &str) -> String {
    let p = format!("{}/../zlm/tests/golden/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-zlm-zli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn asm(src: &str, out: &std::path::Path) {
    let o = irkit(&["zlm", "asm", src, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}: {}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn zli_prints_each_module_of_a_package_providers_first() {
    let dir = scratch("pkg");
    let (canvas, shapes) = (dir.join("canvas.zlm"), dir.join("shapes.zlm"));
    asm(&example("canvas.zlt"), &canvas);
    asm(&example("shapes.zlt"), &shapes);
    let out = ok(&irkit(&[
        "zlm",
        "zli",
        canvas.to_str().unwrap(),
        "--dep",
        shapes.to_str().unwrap(),
    ]));
    let want = format!(
        "{}\n{}",
        golden("zli/geo.shapes.zli"),
        golden("zli/geo.canvas.zli")
    );
    assert_eq!(out, want);
    // A text module as root gives the same bytes; so does a second run.
    let again = ok(&irkit(&[
        "zlm",
        "zli",
        &example("canvas.zlt"),
        "--dep",
        shapes.to_str().unwrap(),
    ]));
    assert_eq!(again, out);
    // One file per module with -o.
    let outdir = dir.join("zli");
    ok(&irkit(&[
        "zlm",
        "zli",
        canvas.to_str().unwrap(),
        "--dep",
        &example("shapes.zlt"),
        "-o",
        outdir.to_str().unwrap(),
    ]));
    for m in ["geo.shapes", "geo.canvas"] {
        assert_eq!(
            std::fs::read_to_string(outdir.join(format!("{m}.zli"))).unwrap(),
            golden(&format!("zli/{m}.zli"))
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reflect_prints_the_canonical_document() {
    let out = ok(&irkit(&[
        "zlm",
        "reflect",
        &example("canvas.zlt"),
        "--dep",
        &example("shapes.zlt"),
        "--format",
        "json",
    ]));
    assert_eq!(out, golden("reflect/geo.canvas.json"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["root"], "geo.canvas");
    // json is the default format.
    let plain = ok(&irkit(&["zlm", "reflect", &example("run/loop.zlt")]));
    assert_eq!(plain, golden("reflect/run.loop.json"));
    let dir = scratch("reflect");
    let file = dir.join("loop.json");
    ok(&irkit(&[
        "zlm",
        "reflect",
        &example("run/loop.zlt"),
        "-o",
        file.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), plain);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_missing_provider_is_an_import_error() {
    for verb in ["zli", "reflect"] {
        let o = irkit(&["zlm", verb, &example("canvas.zlt"), "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{verb}");
        let line = String::from_utf8(o.stdout).unwrap();
        let d: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        assert_eq!(d["code"], "ZLM-IMPORT", "{verb}: {line}");
        assert!(d["label"].as_str().unwrap().ends_with("canvas.zlt"));
    }
}

#[test]
fn usage_and_input_errors_have_their_exit_codes() {
    // Human reflection does not exist.
    let o = irkit(&[
        "zlm",
        "reflect",
        &example("run/loop.zlt"),
        "--format",
        "human",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format json"));
    // A missing file is an I/O error.
    let o = irkit(&["zlm", "zli", "/nonexistent/x.zlm"]);
    assert_eq!(o.status.code(), Some(2));
    // A text module with a syntax error is located.
    let dir = scratch("bad");
    let bad = dir.join("bad.zlt");
    std::fs::write(
        &bad,
        "zlm 1.9 package p module m profile exact mode checked\ndecl bogus\n",
    )
    .unwrap();
    let o = irkit(&["zlm", "zli", bad.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let d: serde_json::Value =
        serde_json::from_str(String::from_utf8(o.stdout).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(d["code"], "ZLM-SYNTAX");
    assert_eq!(d["line"], 2);
    // The same module twice is refused.
    let o = irkit(&[
        "zlm",
        "zli",
        &example("shapes.zlt"),
        "--dep",
        &example("shapes.zlt"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("ZLM-DUPLICATE"));
    std::fs::remove_dir_all(&dir).ok();
}
