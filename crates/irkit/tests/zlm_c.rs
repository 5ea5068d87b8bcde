//! `irkit zlm emit-c` and `irkit zlm run --engine c`: the C engine prints
//! exactly what the interpreter prints (stdout, stderr, exit status) for the
//! run examples it lowers, and refuses the others with C0-EXEC-002.

#[path = "common/zlm_engines.rs"]
mod zlm_engines;

use zlm_engines::{example, irkit, run, same_as_interp};

fn tmp(name: &str) -> std::path::PathBuf {
    zlm_engines::tmp("zlm-c", name)
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
        &["ops.zlt", "--entry", "Main.swap", "--drops"],
        &["ops.zlt", "--entry", "Main.half", "--args", "4"],
        &[
            "ops.zlt",
            "--entry",
            "Main.half",
            "--args",
            "3",
            "--format",
            "json",
        ],
        &[
            "own.zlt",
            "--entry",
            "Main.try_demo",
            "--args",
            "true",
            "--drops",
        ],
        &[
            "own.zlt",
            "--entry",
            "Main.try_demo",
            "--args",
            "false",
            "--drops",
        ],
        &[
            "own.zlt",
            "--entry",
            "Main.demo",
            "--drops",
            "--max-steps",
            "9",
        ],
        &[
            "own.zlt",
            "--entry",
            "Main.probe",
            "--args",
            "3",
            "5",
            "--drops",
        ],
        &["drops.zlt", "--entry", "Main.field_replace", "--drops"],
        &[
            "drops.zlt",
            "--entry",
            "Main.drop_err",
            "--drops",
            "--format",
            "json",
        ],
        &[
            "faults.zlt",
            "--entry",
            "Main.byte_at",
            "--args",
            "0",
            "--drops",
        ],
        &[
            "faults.zlt",
            "--entry",
            "Main.byte_at",
            "--args",
            "5",
            "--drops",
        ],
        &[
            "bytes.zlt",
            "--entry",
            "Main.demo",
            "--args",
            "0",
            "2",
            "--drops",
        ],
        &[
            "bytes.zlt",
            "--entry",
            "Main.demo",
            "--args",
            "1",
            "9",
            "--drops",
        ],
    ];
    same_as_interp(&["c"], cases);
}

/// A contract that calls a catalog intrinsic (the C engine does not lower
/// catalog calls in contracts), reached from a host-callable entry, and a
/// function it lowers.
const CATALOG_CONTRACT: &str = "zlm 1.9 package demo module run.cpure profile exact mode checked

decl value Main public
  func message type one public -> UInt64 effects []
    block 0
      const UInt64 c:UInt64:1 | - -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type len public -> UInt64 effects []
    param 0 bytes Ref<Array<Byte>>
    requires
      cop pure_call UInt64 p0 | 1 0 cfunc:1
      cop ge Bool v0 c:UInt64:0 | 0 0 -
    path p0 Array<Byte>
    loan 0 shared p0 - Ref<Array<Byte>> - -
    block 0
      intrinsic_call UInt64 $p0 | cfunc:1 effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type demo public -> Result<UInt64,UInt64> effects [alloc]
    param 0 alloc Ref<Allocator<BytesError>>
    local 0 buf Array<Byte>
    path p0 Allocator<BytesError>
    path l0 Array<Byte>
    path t%0.1 Result<Array<Byte>,UInt64>
    path t%0.2 Array<Byte>
    loan 0 shared p0 - Ref<Allocator<BytesError>> - -
    loan 1 shared l0 - Ref<Array<Byte>> %0.4 %0.5
    block 0
      const UInt64 c:UInt64:4 | - -
      intrinsic_call Result<Array<Byte>,UInt64> $p0 %0.0 | cfunc:3 effects:[alloc]
      result_try_rich Array<Byte> %0.1 | type:Result<UInt64,UInt64> edge:0
      store_local - $l0 %0.2 | path:l0 -
      borrow_shared Ref<Array<Byte>> $l0 | loan:1 -
      call UInt64 %0.4 | func:Main.len effects:[]
      result_ok_rich Result<UInt64,UInt64> %0.5 | type:Result<UInt64,UInt64> lit:0
      return - %0.6 | - -
    edge 0 try-error 0 exit
    edge 1 return 0 exit
      place_drop - $l0 | path:l0 -
";

#[test]
fn run_engine_c_refuses_what_it_does_not_lower() {
    let d = tmp("cpure");
    let src = d.join("cpure.zlt");
    std::fs::write(&src, CATALOG_CONTRACT).unwrap();
    let src = src.to_string_lossy().into_owned();
    // The interpreter runs it; the C engine refuses, naming the function.
    let want = run("interp", &[&src, "--entry", "Main.demo"]);
    assert_eq!(want.status.code(), Some(0));
    let out = run("c", &[&src, "--entry", "Main.demo", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-002");
    assert!(v["message"].as_str().unwrap().contains("Main.len"), "{v}");
    let _ = std::fs::remove_dir_all(&d);
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
fn emit_c_refuses_unsupported_modules_and_bad_target_configs() {
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
