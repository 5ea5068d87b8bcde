//! `irkit zlm run --engine jit|aot` and `irkit zlm build`: the LLVM engines
//! print exactly what the interpreter prints (stdout, stderr, exit status),
//! refuse what they do not lower with C0-EXEC-002, and a build under a
//! target record is byte-identical across runs and accompanied by the
//! record used.

#[path = "common/zlm_engines.rs"]
mod zlm_engines;

use zlm_engines::{CASES, CATALOG_CONTRACT, assemble, irkit, run, same_as_interp};

fn tmp(name: &str) -> std::path::PathBuf {
    zlm_engines::tmp("zlm-llvm", name)
}

#[test]
fn run_engines_jit_and_aot_print_what_the_interpreter_prints() {
    same_as_interp(&["jit", "aot"], CASES);
}

#[test]
fn run_engines_jit_and_aot_fault_in_a_contract_get_as_the_interpreter_does() {
    let d = tmp("cpure");
    let src = d.join("cpure.zlt");
    std::fs::write(&src, CATALOG_CONTRACT).unwrap();
    let src = src.to_string_lossy().into_owned();
    let want = run("interp", &[&src, "--entry", "Main.demo"]);
    assert!(
        String::from_utf8_lossy(&want.stderr).contains("out of bounds"),
        "{want:?}"
    );
    for engine in ["jit", "aot"] {
        let got = run(engine, &[&src, "--entry", "Main.demo"]);
        assert_eq!(
            (got.status.code(), &got.stdout, &got.stderr),
            (want.status.code(), &want.stdout, &want.stderr),
            "{engine}"
        );
    }
    let out = run("jit", &[&src, "--entry", "Main.one"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_under_a_target_record_is_reproducible_and_records_what_it_used() {
    let d = tmp("build");
    let art = d.join("loop.zlm");
    assemble("loop.zlt", &art);
    // The convenience form: LLVM's default triple, marked as not evidence.
    let out = irkit()
        .args(["zlm", "build"])
        .arg(&art)
        .arg("-o")
        .arg(d.join("conv.o"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("not reproducibility evidence"));
    let conv: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("conv.target.json")).unwrap()).unwrap();
    assert_eq!(conv["reproducible"], false);
    assert!(conv["note"].as_str().unwrap().contains("default triple"));
    // An explicit record: every field supplied, x86-64 baseline.
    let mut rec = conv.clone();
    let o = rec.as_object_mut().unwrap();
    o.remove("note");
    o.remove("reproducible");
    o.insert("cpu".into(), "x86-64".into());
    o.insert("triple".into(), "x86_64-pc-linux-gnu".into());
    std::fs::write(d.join("rec.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    for n in ["a.o", "b.o", "prog"] {
        let out = irkit()
            .args(["zlm", "build"])
            .arg(&art)
            .arg("--target-record")
            .arg(d.join("rec.json"))
            .arg("-o")
            .arg(d.join(n))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read(d.join("a.o")).unwrap(),
        std::fs::read(d.join("b.o")).unwrap()
    );
    let used: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("a.target.json")).unwrap()).unwrap();
    assert_eq!(used["reproducible"], true);
    assert_eq!(used["cpu"], "x86-64");
    // The linked executable speaks the engines' protocol.
    let out = std::process::Command::new(d.join("prog"))
        .args(["0", "5f5e100", "100", "100", "64"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "OK\t1212\t4950\n");
    // A bad record is refused with C0-EXEC-003.
    rec.as_object_mut()
        .unwrap()
        .insert("cpu".into(), "native".into());
    std::fs::write(d.join("bad.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    let out = irkit()
        .args(["zlm", "build"])
        .arg(&art)
        .arg("--target-record")
        .arg(d.join("bad.json"))
        .args(["--format", "json", "-o"])
        .arg(d.join("c.o"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-003");
    assert!(!d.join("c.o").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_writes_a_shared_library_with_its_c_header_and_record() {
    let d = tmp("shared");
    let art = d.join("loop.zlm");
    assemble("loop.zlt", &art);
    let build = |record: Option<&std::path::Path>, out: &str| {
        let mut cmd = irkit();
        cmd.args(["zlm", "build"]).arg(&art);
        if let Some(r) = record {
            cmd.arg("--target-record").arg(r);
        }
        cmd.args(["--format", "json", "-o"]).arg(d.join(out));
        cmd.output().unwrap()
    };
    let out = build(None, "libloop.so");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let header = std::fs::read_to_string(d.join("libloop.h")).unwrap();
    assert!(header.contains("int zlm_lib_call("), "{header}");
    let used: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("libloop.target.json")).unwrap()).unwrap();
    assert_eq!(used["relocation"], "pic");
    // A C program linked against it calls `Main.sum` by name.
    std::fs::write(
        d.join("main.c"),
        "#include \"libloop.h\"\n#include <stdio.h>\nint main(void) {\n  zlm_limits l = {100000, 100, 100, 0};\n  zlm_outcome o;\n  uint64_t n = 100;\n  if (zlm_lib_call((uint64_t)zlm_lib_find(\"Main.sum\"), &n, 1, &l, 0, 0, &o) != 0) return 1;\n  printf(\"%d %llu %s\\n\", o.faulted, (unsigned long long)o.steps, o.rendered);\n  return 0;\n}\n",
    )
    .unwrap();
    let cc = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(d.join("main"))
        .arg(d.join("main.c"))
        .arg(d.join("libloop.so"))
        .arg(format!("-Wl,-rpath,{}", d.display()))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let ran = std::process::Command::new(d.join("main")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "0 1212 4950\n");
    // A record that is not position-independent cannot make one.
    let mut rec = used.clone();
    let o = rec.as_object_mut().unwrap();
    o.remove("note");
    o.remove("reproducible");
    o.insert("relocation".into(), "static".into());
    std::fs::write(d.join("static.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    let out = build(Some(&d.join("static.json")), "libstatic.so");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-003");
    assert!(v["message"].as_str().unwrap().contains("pic"), "{v}");
    assert!(!d.join("libstatic.so").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// The JIT and AOT engines do not take the typed boundary yet: a
/// `--json-args` run is refused with `ZLM-ARG-ENGINE`, never guessed.
#[test]
fn run_engines_jit_and_aot_refuse_typed_arguments() {
    let src = format!(
        "{}/../../examples/zlm/run/boundary.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    for engine in ["jit", "aot"] {
        let out = run(
            engine,
            &[
                &src,
                "--entry",
                "Main.check",
                "--json-args",
                r#"[{"version": 2, "limit": 8, "tag": []}, []]"#,
                "--format",
                "json",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{engine}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["code"], "ZLM-ARG-ENGINE", "{engine}");
    }
}
