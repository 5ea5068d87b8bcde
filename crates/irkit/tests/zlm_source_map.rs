//! `irkit zlm asm` writes the source map and provenance after the payload
//! (docs/zlm/ancillary.md); `zlm address`, `dis` and `ids` ignore them; a
//! fault on every engine is reported at its `.zlt` line with the snippet;
//! a corrupted map is a warning, never a rejection of the payload; `zlm
//! build`'s target record names the artifact it was built from.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .output()
        .unwrap()
}

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-zlm-srcmap-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The 1-based line of `needle` (trimmed) in faults.zlt.
fn line_of(needle: &str) -> usize {
    let text = std::fs::read_to_string(example("faults.zlt")).unwrap();
    text.split('\n').position(|l| l.trim() == needle).unwrap() + 1
}

fn asm(out: &Path, extra: &[&str]) {
    let src = example("faults.zlt");
    let mut args = vec!["zlm", "asm", &src, "-o", s(out)];
    args.extend(extra);
    let o = irkit(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_source_map_changes_neither_the_address_nor_the_disassembly() {
    let d = tmp("address");
    let (with, without) = (d.join("with.zlm"), d.join("without.zlm"));
    asm(&with, &[]);
    asm(&without, &["--no-ancillary"]);
    let (a, b) = (
        std::fs::read(&with).unwrap(),
        std::fs::read(&without).unwrap(),
    );
    assert!(a.len() > b.len() && a.starts_with(&b));
    for verb in ["address", "dis", "ids"] {
        let (x, y) = (
            irkit(&["zlm", verb, s(&with)]),
            irkit(&["zlm", verb, s(&without)]),
        );
        assert!(
            x.status.success(),
            "{verb}: {}",
            String::from_utf8_lossy(&x.stderr)
        );
        assert_eq!(x.stdout, y.stdout, "{verb}");
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn faults_point_at_their_zlt_line_on_every_engine() {
    let d = tmp("engines");
    let art = d.join("faults.zlm");
    asm(&art, &[]);
    let line = line_of("div Int32 %0.0 %0.1 | - -");
    for input in [example("faults.zlt"), s(&art).to_string()] {
        for engine in ["interp", "c", "jit", "aot"] {
            let o = irkit(&[
                "zlm", "run", &input, "--entry", "Main.div", "--args", "7", "0", "--engine", engine,
            ]);
            assert_eq!(
                o.status.code(),
                Some(3),
                "{engine}: a fault is a verdict (exit 3)"
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("ZLM-FAULT-DIV-ZERO"), "{engine}: {err}");
            assert!(
                err.contains(&format!("faults.zlt:{line}:7 in Main.div")),
                "{engine}: {err}"
            );
            // The rustc-style snippet shows the operation's line.
            assert!(err.contains("div Int32 %0.0 %0.1"), "{engine}: {err}");
            let o = irkit(&[
                "zlm", "run", &input, "--entry", "Main.div", "--args", "7", "0", "--engine",
                engine, "--format", "json",
            ]);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(v["line"], line as u64, "{engine}: {v}");
            assert_eq!(v["column"], 7, "{engine}: {v}");
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_corrupted_source_map_is_a_warning_and_the_payload_still_runs() {
    let d = tmp("corrupt");
    let (art, bare) = (d.join("faults.zlm"), d.join("bare.zlm"));
    asm(&art, &[]);
    asm(&bare, &["--no-ancillary"]);
    let payload = std::fs::read(&bare).unwrap().len();
    let mut bytes = std::fs::read(&art).unwrap();
    // The container header, two directory entries, then the map's body.
    bytes[payload + 48 + 2 * 48 + 10] ^= 0xff;
    let bad = d.join("bad.zlm");
    std::fs::write(&bad, &bytes).unwrap();
    let o = irkit(&[
        "zlm",
        "run",
        s(&bad),
        "--entry",
        "Main.add",
        "--args",
        "1",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "3\n");
    let o = irkit(&[
        "zlm",
        "run",
        s(&bad),
        "--entry",
        "Main.div",
        "--args",
        "1",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("source map not used") && err.contains("ZLM-ANCILLARY-HASH"),
        "{err}"
    );
    assert!(
        err.contains("Main.div block 0 op 2") && !err.contains("faults.zlt:"),
        "{err}"
    );
    let o = irkit(&["zlm", "address", s(&bad)]);
    assert_eq!(o.stdout, irkit(&["zlm", "address", s(&art)]).stdout);
    // validate checks the ancillary sections on their own hashes.
    assert!(irkit(&["zlm", "validate", s(&art)]).status.success());
    let o = irkit(&["zlm", "validate", s(&bad), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["code"], "ZLM-ANCILLARY-HASH", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("(the payload is valid)"),
        "{v}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_target_record_names_the_artifact_it_was_built_from() {
    let d = tmp("target");
    let art = d.join("faults.zlm");
    asm(&art, &[]);
    let out = d.join("faults.o");
    let o = irkit(&["zlm", "build", s(&art), "-o", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("faults.target.json")).unwrap()).unwrap();
    let address = String::from_utf8(irkit(&["zlm", "address", s(&art)]).stdout).unwrap();
    assert_eq!(record["artifact"], address.trim());
    std::fs::remove_dir_all(&d).ok();
}
