//! `irkit zlm run ROOT --dep P.zlm` and `irkit zlm emit-c ROOT --dep P.zlm`
//! on the package example (examples/zlm/run/pkg_main.zlt calling into
//! pkg_store.zlt): the interpreter and the C engine print the same result,
//! drop log and fault, and so do the LLVM engines (`--engine jit|aot`);
//! `irkit zlm build ROOT --dep P.zlm` builds the package into an
//! executable.

use std::path::PathBuf;
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

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-zlm-pkg-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Assembles `file` of the examples into `dir`.
fn asm(dir: &std::path::Path, file: &str) -> String {
    let out = dir.join(file.replace(".zlt", ".zlm"));
    let o = irkit()
        .args(["zlm", "asm", &example(file), "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.display().to_string()
}

fn run(store: &str, engine: &str, extra: &[&str]) -> Output {
    irkit()
        .args(["zlm", "run", &example("pkg_main.zlt"), "--dep", store])
        .args(["--entry", "Main.demo", "--drops", "--engine", engine])
        .args(extra)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_package_runs_under_the_interpreter_and_the_c_engine_alike() {
    let d = tmp("run");
    let store = asm(&d, "pkg_store.zlt");
    let ok = run(&store, "interp", &["--args", "5"]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert_eq!(
        text(&ok.stdout),
        "run.pkg_store::Cell.take: drop p0 : Cell\nMain.demo: drop l0 : Cell\n11\n"
    );
    let fault = run(&store, "interp", &["--args", "2147483647"]);
    assert_eq!(fault.status.code(), Some(3));
    assert!(
        text(&fault.stderr).contains(
            "error[ZLM-FAULT-OVERFLOW]: fault in run.pkg_store::Cell.take block 0 op 2: arithmetic overflow"
        ),
        "{}",
        text(&fault.stderr)
    );
    for args in [
        &["--args", "5"][..],
        &["--args", "2147483647"],
        &["--args", "-3", "--format", "json"],
        &["--args", "1", "--max-steps", "14"],
        &["--args", "1", "--max-depth", "1"],
    ] {
        let i = run(&store, "interp", args);
        let c = run(&store, "c", args);
        assert_eq!(c.status.code(), i.status.code(), "{args:?}");
        assert_eq!(text(&c.stdout), text(&i.stdout), "{args:?}");
        assert_eq!(text(&c.stderr), text(&i.stderr), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_llvm_engines_run_a_package_as_the_interpreter_does() {
    let d = tmp("llvm");
    let store = asm(&d, "pkg_store.zlt");
    for args in [
        &["--args", "5"][..],
        &["--args", "2147483647"],
        &["--args", "-3", "--format", "json"],
        &["--args", "1", "--max-steps", "14"],
        &["--args", "1", "--max-depth", "1"],
        &["--args", "2147483647", "--format", "json"],
    ] {
        let i = run(&store, "interp", args);
        for engine in ["jit", "aot"] {
            let o = run(&store, engine, args);
            assert_eq!(o.status.code(), i.status.code(), "{engine} {args:?}");
            assert_eq!(text(&o.stdout), text(&i.stdout), "{engine} {args:?}");
            assert_eq!(text(&o.stderr), text(&i.stderr), "{engine} {args:?}");
        }
    }
    // The provider's fault names its module and function on the LLVM engines too.
    let fault = run(&store, "jit", &["--args", "2147483647"]);
    assert!(
        text(&fault.stderr)
            .contains("fault in run.pkg_store::Cell.take block 0 op 2: arithmetic overflow"),
        "{}",
        text(&fault.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_links_a_package_into_an_executable() {
    let d = tmp("build");
    let store = asm(&d, "pkg_store.zlt");
    let main = asm(&d, "pkg_main.zlt");
    let want = run(&store, "interp", &["--args", "5", "--format", "json"]);
    let want: serde_json::Value = serde_json::from_slice(&want.stdout).unwrap();
    let exe = d.join("prog");
    let o = irkit()
        .args([
            "zlm",
            "build",
            &main,
            "--dep",
            &store,
            "--entry",
            "Main.demo",
            "-o",
        ])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Entry 0 (Main.demo), the default limits in hex, the argument 5.
    let out = Command::new(&exe)
        .args(["0", "5f5e100", "100", "4000000", "5"])
        .output()
        .unwrap();
    // Drop lines come first; the result line last.
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().last(),
        Some(
            format!(
                "OK\t{}\t{}",
                want["steps"],
                want["result"].as_str().unwrap()
            )
            .as_str()
        ),
        "{stdout}"
    );
    let ll = d.join("prog.ll");
    let o = irkit()
        .args(["zlm", "build", &main, "--dep", &store, "-o"])
        .arg(&ll)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ir = std::fs::read_to_string(&ll).unwrap();
    assert!(ir.contains("; Provider run.pkg_store, profile exact"));
    assert!(ir.contains("@zf_run_pkg_store__Cell_take_"));
    // Without the provider the root's import does not resolve.
    let o = irkit()
        .args(["zlm", "build", &main, "-o"])
        .arg(d.join("lone.ll"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("error[ZLM-IMPORT]"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn emit_c_lowers_the_package_and_needs_its_providers() {
    let d = tmp("emit");
    let store = asm(&d, "pkg_store.zlt");
    let main = asm(&d, "pkg_main.zlt");
    let out = d.join("c");
    let o = irkit()
        .args(["zlm", "emit-c", &main, "--dep", &store, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let c = std::fs::read_to_string(out.join("module.c")).unwrap();
    assert!(c.contains("Provider run.pkg_store"));
    assert!(c.contains("static int zf_run_pkg_store__Cell_take_"));
    assert!(c.contains("static int zf_Main_demo_"));
    // Again: byte-identical.
    let again = d.join("c2");
    let o = irkit()
        .args(["zlm", "emit-c", &main, "--dep", &store, "-o"])
        .arg(&again)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(again.join("module.c")).unwrap(), c);
    // Without the provider the root's import does not resolve.
    let o = irkit()
        .args(["zlm", "emit-c", &main, "-o"])
        .arg(d.join("c3"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("error[ZLM-IMPORT]"),
        "{}",
        text(&o.stderr)
    );
    // A provider that the root does not import from is named transitive-only
    // when the root calls into it; here the root calls only run.pkg_store,
    // so an extra unrelated --dep is left out of the package.
    let o = irkit()
        .args([
            "zlm", "emit-c", &main, "--dep", &store, "--dep", &main, "-o",
        ])
        .arg(d.join("c4"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&d);
}

/// pkg_main.zlt with its calls into the provider written by name
/// (`func:run.pkg_store::Cell.make`) instead of by function-signature ID.
fn named_main() -> String {
    let text = std::fs::read_to_string(example("pkg_main.zlt")).unwrap();
    let named = [
        (
            "645262042c4d4a611605a4d29f7b72e6c01c46fe8fe741863e84ef460b126d8a",
            "make",
        ),
        (
            "1ce80c9a0f32b458edbbea66d2aa34d148f81a25140f51ca70aae982f32956a9",
            "peek",
        ),
        (
            "c491364713b489d91340d0c02ae1fdf116ea6f5fc482cb696735f877712c3b12",
            "take",
        ),
    ]
    .iter()
    .fold(text, |t, (hash, name)| {
        assert!(t.contains(hash), "{hash} not in pkg_main.zlt");
        t.replace(
            &format!("func:#{hash}"),
            &format!("func:run.pkg_store::Cell.{name}"),
        )
    });
    assert!(!named.contains("func:#"), "{named}");
    named
}

#[test]
fn a_text_names_the_providers_functions_when_given_them() {
    let d = tmp("named");
    let store = asm(&d, "pkg_store.zlt");
    let named = d.join("named.zlt");
    std::fs::write(&named, named_main()).unwrap();
    let named = named.display().to_string();
    // asm --dep resolves the names: the same payload as the hash-spelled example.
    let by_name = d.join("by_name.zlm").display().to_string();
    let by_hash = d.join("by_hash.zlm").display().to_string();
    for (input, out) in [
        (named.as_str(), &by_name),
        (&example("pkg_main.zlt"), &by_hash),
    ] {
        let o = irkit()
            .args([
                "zlm",
                "asm",
                input,
                "--dep",
                &store,
                "--no-ancillary",
                "-o",
                out,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    assert_eq!(
        std::fs::read(&by_name).unwrap(),
        std::fs::read(&by_hash).unwrap()
    );
    // run and validate take the named text with --dep too.
    let o = irkit()
        .args([
            "zlm",
            "run",
            &named,
            "--dep",
            &store,
            "--entry",
            "Main.demo",
        ])
        .args(["--args", "5"])
        .output()
        .unwrap();
    let expected = run(&store, "interp", &["--args", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&expected.stdout).ends_with(&text(&o.stdout)),
        "{}",
        text(&o.stdout)
    );
    let o = irkit()
        .args(["zlm", "validate", &named, "--dep", &store])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Without the provider the name means nothing: a syntax error at its line.
    let o = irkit()
        .args(["zlm", "asm", &named, "-o", &by_name])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("bad auxiliary `func:run.pkg_store::Cell.make`"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `zlm dis --dep` prints the providers' members by name, and that text
/// assembles (with `--dep`) to the same payload; `zlm zli` and `zlm reflect`
/// read a named root text with `--dep` as they read the `#hex` one.
#[test]
fn dis_zli_and_reflect_name_the_providers_members_with_dep() {
    let d = tmp("dis-dep");
    let store = asm(&d, "pkg_store.zlt");
    let main = d.join("main.zlm").display().to_string();
    let o = irkit()
        .args(["zlm", "asm", &example("pkg_main.zlt"), "--dep", &store])
        .args(["--no-ancillary", "-o", &main])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let dis = irkit()
        .args(["zlm", "dis", &main, "--dep", &store])
        .output()
        .unwrap();
    assert_eq!(dis.status.code(), Some(0), "{}", text(&dis.stderr));
    let named = text(&dis.stdout);
    for f in ["make", "peek", "take"] {
        assert!(
            named.contains(&format!("func:run.pkg_store::Cell.{f} ")),
            "{named}"
        );
    }
    assert!(!named.contains("func:#"), "{named}");
    // Without --dep the canonical text keeps the IDs.
    let plain = irkit().args(["zlm", "dis", &main]).output().unwrap();
    assert!(text(&plain.stdout).contains("func:#"));
    // The named text assembles to the same payload.
    let named_zlt = d.join("named.zlt");
    std::fs::write(&named_zlt, &named).unwrap();
    let named_zlt = named_zlt.display().to_string();
    let again = d.join("again.zlm").display().to_string();
    let o = irkit()
        .args(["zlm", "asm", &named_zlt, "--dep", &store])
        .args(["--no-ancillary", "-o", &again])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&main).unwrap()
    );
    // zli and reflect: the named text reads as the artifact does.
    for verb in [&["zli"][..], &["reflect", "--format", "json"][..]] {
        let by_name = irkit()
            .args(["zlm"])
            .args(verb)
            .args([&named_zlt, "--dep", &store])
            .output()
            .unwrap();
        assert_eq!(
            by_name.status.code(),
            Some(0),
            "{verb:?}: {}",
            text(&by_name.stderr)
        );
        let by_artifact = irkit()
            .args(["zlm"])
            .args(verb)
            .args([&main, "--dep", &store])
            .output()
            .unwrap();
        assert_eq!(by_name.stdout, by_artifact.stdout, "{verb:?}");
        assert!(!by_name.stdout.is_empty(), "{verb:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
