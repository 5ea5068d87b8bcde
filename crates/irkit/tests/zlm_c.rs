//! `irkit zlm emit-c` and `irkit zlm run --engine c`: the C engine prints
//! exactly what the interpreter prints (stdout, stderr, exit status) for the
//! run examples it lowers, and refuses the others with C0-EXEC-002.

#[path = "common/zlm_engines.rs"]
mod zlm_engines;

use zlm_engines::{CASES, CATALOG_CONTRACT, assemble, irkit, run, same_as_interp};

fn tmp(name: &str) -> std::path::PathBuf {
    zlm_engines::tmp("zlm-c", name)
}

#[test]
fn run_engine_c_prints_what_the_interpreter_prints() {
    same_as_interp(&["c"], CASES);
}

#[test]
fn run_engine_c_faults_in_a_contract_get_as_the_interpreter_does() {
    let d = tmp("cpure");
    let src = d.join("cpure.zlt");
    std::fs::write(&src, CATALOG_CONTRACT).unwrap();
    let src = src.to_string_lossy().into_owned();
    let want = run("interp", &[&src, "--entry", "Main.demo"]);
    assert!(
        String::from_utf8_lossy(&want.stderr).contains("out of bounds"),
        "{want:?}"
    );
    let got = run("c", &[&src, "--entry", "Main.demo"]);
    assert_eq!(
        (got.status.code(), got.stdout, got.stderr),
        (want.status.code(), want.stdout, want.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn emit_c_writes_deterministic_c_that_gcc_and_clang_accept() {
    let d = tmp("emit");
    let art = d.join("loop.zlm");
    assemble("loop.zlt", &art);
    let mut texts = Vec::new();
    for n in ["a", "b"] {
        let st = irkit()
            .args(["zlm", "emit-c"])
            .arg(&art)
            .arg("-o")
            .arg(d.join(n))
            .status()
            .unwrap();
        assert!(st.success());
        texts.push(std::fs::read(d.join(n).join("module.c")).unwrap());
        assert!(d.join(n).join("zlm_rt.h").exists());
    }
    assert_eq!(texts[0], texts[1]);
    let c = String::from_utf8(texts[0].clone()).unwrap();
    assert!(
        c.contains("/* message type Main.sum(n: Int64) -> Int64"),
        "{c}"
    );
    for cc in ["gcc", "clang"] {
        let out = std::process::Command::new(cc)
            .args([
                "-std=c11",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-O2",
                "-o",
            ])
            .arg(d.join(format!("prog-{cc}")))
            .arg(d.join("a").join("module.c"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cc}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn emit_c_refuses_bad_target_configs() {
    let d = tmp("refuse");
    let art = d.join("cpure.zlm");
    let src = d.join("cpure.zlt");
    std::fs::write(&src, CATALOG_CONTRACT).unwrap();
    assert!(
        irkit()
            .args(["zlm", "asm"])
            .arg(&src)
            .arg("-o")
            .arg(&art)
            .status()
            .unwrap()
            .success()
    );
    // The whole module lowers (the catalog's get in a contract included).
    let st = irkit()
        .args(["zlm", "emit-c"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("whole"))
        .status()
        .unwrap();
    assert!(st.success());
    assert!(d.join("whole").join("module.c").exists());
    let cfg = d.join("target.cfg");
    std::fs::write(&cfg, "standard = c89\n").unwrap();
    let out = irkit()
        .args(["zlm", "emit-c"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("out"))
        .args(["--entry", "Main.one", "--target-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("C0-EXEC-002"));
    std::fs::write(&cfg, "standard = c17\nlong_bits = 64\n").unwrap();
    let st = irkit()
        .args(["zlm", "emit-c"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("out"))
        .args(["--entry", "Main.one", "--target-config"])
        .arg(&cfg)
        .status()
        .unwrap();
    assert!(st.success());
    let _ = std::fs::remove_dir_all(&d);
}
