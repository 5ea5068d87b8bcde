//! irkit pays for LLVM only when it runs (docs/startup.md): the `irkit`
//! executable does not load libLLVM (nor Z3, ICU, libxml2, which libLLVM
//! brings) at start-up; `irkit-llvm` does, and `irkit` hands the LLVM verbs
//! to it, or says clearly that it cannot.

use std::process::Command;

/// The `NEEDED` entries of an ELF executable's dynamic section (`readelf -d`).
fn needed(exe: &str) -> Vec<String> {
    let out = Command::new("readelf")
        .args(["-d", exe])
        .output()
        .expect("readelf (binutils) runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| {
            let start = l.find('[')? + 1;
            let end = l.rfind(']')?;
            Some(l[start..end].to_string())
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn irkit_does_not_load_llvm_but_irkit_llvm_does() {
    let irkit = needed(env!("CARGO_BIN_EXE_irkit"));
    assert!(!irkit.is_empty(), "no NEEDED entries read");
    for lib in &irkit {
        for heavy in ["LLVM", "z3", "icu", "xml2", "stdc++"] {
            assert!(!lib.contains(heavy), "irkit needs {lib}: {irkit:?}");
        }
    }
    let helper = needed(env!("CARGO_BIN_EXE_irkit-llvm"));
    assert!(
        helper.iter().any(|l| l.starts_with("libLLVM")),
        "irkit-llvm links libLLVM dynamically: {helper:?}"
    );
}

/// `irkit` is linked at a fixed address (crates/irkit/build.rs,
/// docs/startup.md): the dynamic loader has none of its pointers to rewrite
/// at start-up, where a position-independent build had some 46 000.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn irkit_is_linked_at_a_fixed_address_without_relative_relocations() {
    let exe = env!("CARGO_BIN_EXE_irkit");
    let out = Command::new("readelf")
        .args(["-h", "-r", "-W", exe])
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let kind = text
        .lines()
        .find(|l| l.trim_start().starts_with("Type:"))
        .expect("an ELF header type");
    assert!(kind.contains("EXEC"), "{kind}");
    let relative = text
        .lines()
        .filter(|l| l.contains("R_X86_64_RELATIVE"))
        .count();
    assert_eq!(relative, 0, "relative relocations in irkit");
}

#[test]
fn an_llvm_verb_without_its_helper_is_a_usage_error_naming_it() {
    let src = format!(
        "{}/../../examples/zlm/run/loop.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    for args in [
        vec![
            "zlm", "run", &src, "--entry", "Main.sum", "--args", "3", "--engine", "jit",
        ],
        vec!["zlm", "build", &src, "-o", "never-written.o"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_irkit"))
            .args(&args)
            .env("IRKIT_LLVM", "/nonexistent/irkit-llvm")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("/nonexistent/irkit-llvm"), "{err}");
        assert!(err.contains("IRKIT_LLVM"), "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn irkit_hands_an_llvm_run_to_the_helper_it_names() {
    let src = format!(
        "{}/../../examples/zlm/run/loop.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |helper: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_irkit"));
        cmd.args([
            "zlm", "run", &src, "--entry", "Main.sum", "--args", "10", "--engine", "jit",
        ]);
        match helper {
            Some(h) => cmd.env("IRKIT_LLVM", h),
            None => cmd.env_remove("IRKIT_LLVM"),
        };
        cmd.output().unwrap()
    };
    let beside = run(None);
    assert!(
        beside.status.success(),
        "{}",
        String::from_utf8_lossy(&beside.stderr)
    );
    let named = run(Some(env!("CARGO_BIN_EXE_irkit-llvm")));
    assert_eq!(beside.stdout, named.stdout);
    let interp = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["zlm", "run", &src, "--entry", "Main.sum", "--args", "10"])
        .output()
        .unwrap();
    assert_eq!(beside.stdout, interp.stdout);
}
