//! `irkit zlm emit-c` and `irkit zlm run --engine c`: the C engine prints
//! exactly what the interpreter prints (stdout, stderr, exit status) for the
//! run examples it lowers, and refuses the others with C0-EXEC-002.

use std::process::{Command, Output};

fn irkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
}

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run(engine: &str, args: &[&str]) -> Output {
    irkit()
        .args(["zlm", "run"])
        .args(args)
        .args(["--engine", engine])
        .output()
        .unwrap()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-zlm-c-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn run_engine_c_prints_what_the_interpreter_prints() {
    let cases: &[&[&str]] = &[
        &[
            "loop.zlt", "--entry", "sum", "--args", "100", "--format", "json",
        ],
        &["loop.zlt", "--entry", "sum", "--args", "100", "--contracts"],
        &["loop.zlt", "--entry", "sum", "--args", "-1"],
        &[
            "loop.zlt",
            "--entry",
            "sum",
            "--args",
            "100",
            "--max-steps",
            "50",
            "--format",
            "json",
        ],
        &[
            "deep.zlt",
            "--entry",
            "down",
            "--args",
            "10",
            "--max-depth",
            "5",
        ],
        &["deep.zlt", "--entry", "down", "--args", "10", "--drops"],
        &[
            "faults.zlt",
            "--entry",
            "Main.div",
            "--args",
            "1",
            "0",
            "--format",
            "json",
        ],
        &[
            "faults.zlt",
            "--entry",
            "Main.div",
            "--args",
            "-2147483648",
            "-1",
        ],
        &[
            "faults.zlt",
            "--entry",
            "Main.add",
            "--args",
            "2147483647",
            "1",
        ],
        &["faults.zlt", "--entry", "Main.positive", "--args", "0"],
        &["ops.zlt", "--entry", "Main.scalar", "--args", "5", "3"],
        &[
            "ops.zlt",
            "--entry",
            "Main.bits",
            "--args",
            "4660",
            "4",
            "--format",
            "json",
        ],
        &["ops.zlt", "--entry", "Main.bits", "--args", "1", "32"],
        &["ops.zlt", "--entry", "Main.unit"],
        &["ops.zlt", "--entry", "Main.scalar", "--args", "5"],
    ];
    for case in cases {
        let mut args: Vec<String> = case.iter().map(|s| s.to_string()).collect();
        args[0] = example(case[0]);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let want = run("interp", &args);
        let got = run("c", &args);
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
            "{case:?}"
        );
    }
}

#[test]
fn run_engine_c_refuses_what_it_does_not_lower() {
    let out = run(
        "c",
        &[
            &example("ops.zlt"),
            "--entry",
            "Main.swap",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-002");
    assert!(v["message"].as_str().unwrap().contains("Main.swap"), "{v}");
}

#[test]
fn emit_c_writes_deterministic_c_that_gcc_and_clang_accept() {
    let d = tmp("emit");
    let art = d.join("loop.zlm");
    assert!(
        irkit()
            .args(["zlm", "asm", &example("loop.zlt"), "-o"])
            .arg(&art)
            .status()
            .unwrap()
            .success()
    );
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
        let out = Command::new(cc)
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
fn emit_c_refuses_unsupported_modules_and_bad_target_configs() {
    let d = tmp("refuse");
    let art = d.join("ops.zlm");
    assert!(
        irkit()
            .args(["zlm", "asm", &example("ops.zlt"), "-o"])
            .arg(&art)
            .status()
            .unwrap()
            .success()
    );
    let out = irkit()
        .args(["zlm", "emit-c"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("out"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-002");
    assert!(!d.join("out").exists());
    let cfg = d.join("target.cfg");
    std::fs::write(&cfg, "standard = c89\n").unwrap();
    let out = irkit()
        .args(["zlm", "emit-c"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("out"))
        .args(["--entry", "Main.scalar", "--target-config"])
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
        .args(["--entry", "Main.scalar", "--target-config"])
        .arg(&cfg)
        .status()
        .unwrap();
    assert!(st.success());
    let _ = std::fs::remove_dir_all(&d);
}
