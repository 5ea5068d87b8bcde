//! Rust frontend: the valid corpus runs on irkit's engine with its expected
//! results and is checked against the real `rustc` (every program type- and
//! move-checks with a prelude shim; programs without durable operations are
//! built, run, and their printed results compared with irkit's); the invalid
//! corpus gives its codes and positions, and rustc rejects each program that
//! is invalid Rust with the error code named in its header; envelope and
//! encoding; arbitrary text never panics the frontend.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use proptest::prelude::*;
use serde_json::{Value as J, json};
use tcc_frontend::{Language, compile};

fn header_text<'s>(src: &'s str, key: &str) -> Option<&'s str> {
    common::header_text(src, "//", key)
}

fn header(src: &str, key: &str) -> Option<J> {
    common::header(src, "//", key)
}

fn scratch() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tcc-rust-frontend");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The prelude shim as an rlib, built once per test run.
fn shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rust_shim/tcc_rust_prelude.rs");
        let out = scratch().join("libtcc_rust_prelude.rlib");
        let o = Command::new("rustc")
            .args([
                "--edition",
                "2021",
                "--crate-type",
                "rlib",
                "--crate-name",
                "tcc_rust_prelude",
                "-o",
            ])
            .arg(&out)
            .arg(&src)
            .output()
            .expect("rustc is on this machine");
        assert!(
            o.status.success(),
            "shim: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

/// `rustc` on `src` (with the shim as the prelude crate); `Ok(binary or metadata path)` or `Err(stderr)`.
fn rustc(name: &str, src: &str, bin: bool) -> Result<PathBuf, String> {
    let dir = scratch();
    let stem = name.trim_end_matches(".rs").replace('/', "_");
    let file = dir.join(format!("{stem}{}.rs", if bin { "_bin" } else { "" }));
    std::fs::write(&file, src).unwrap();
    let out = dir.join(format!("{stem}{}", if bin { ".bin" } else { ".rmeta" }));
    let mut cmd = Command::new("rustc");
    cmd.args(["--edition", "2021", "-A", "warnings", "--extern"])
        .arg(format!("tcc_rust_prelude={}", shim().display()))
        .arg("-o")
        .arg(&out);
    if bin {
        cmd.args(["-C", "opt-level=0"]);
    } else {
        cmd.args(["--crate-type", "lib", "--emit", "metadata"]);
    }
    let mut o = cmd.arg(&file).output().expect("rustc runs");
    if !o.status.success() && linker_crashed(&o.stderr) {
        // A linker killed by a signal (SIGBUS when the disk fills under an
        // mmapped output) says nothing about the program: try once more.
        o = cmd.output().expect("rustc runs");
    }
    if o.status.success() {
        Ok(out)
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// Whether rustc's failure was the linker dying from a signal, not a diagnostic.
fn linker_crashed(stderr: &[u8]) -> bool {
    let e = String::from_utf8_lossy(stderr);
    e.contains("linking with") && e.contains("terminated with signal")
}

fn rust_literal(v: &J) -> String {
    match v {
        J::Number(n) => format!("{:?}", n.as_f64().unwrap()),
        J::Bool(b) => b.to_string(),
        J::String(s) => format!("String::from({s:?})"),
        other => panic!("no Rust literal for {other}"),
    }
}

/// Builds the program with a `main` that awaits `run(args…)` and prints its result; runs it.
fn rustc_result(name: &str, src: &str, args: &J) -> J {
    let call: Vec<String> = args.as_array().unwrap().iter().map(rust_literal).collect();
    let driver = format!(
        "{src}\nfn main() {{\n    let r = tcc_rust_prelude::block_on(run({}));\n    println!(\"{{}}\", tcc_rust_prelude::Show::show(&r));\n}}\n",
        call.join(", ")
    );
    let bin = rustc(name, &driver, true)
        .unwrap_or_else(|e| panic!("{name}: rustc rejected the program:\n{e}"));
    let o = Command::new(&bin).output().unwrap();
    assert!(
        o.status.success(),
        "{name}: the rustc build failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{name}: output {e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn valid_corpus_results_and_rustc() {
    let files = corpus("rs", "valid", "rs");
    assert!(files.len() >= 12, "{}", files.len());
    let mut against_rustc = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let args = header(&src, "args").unwrap_or(json!([]));
        let observed = observe_corpus(&src, &name, Language::Rust, "//");
        assert_eq!(
            observed.outcome["type"], "completed",
            "{name}: {observed:?}"
        );
        let got = normalize(&observed.outcome["result"]);
        let expect = header(&src, "expect").unwrap_or_else(|| panic!("{name}: no expect header"));
        assert_eq!(got, normalize(&expect), "{name}");
        if let Some(keys) = header(&src, "effect_log") {
            assert_eq!(
                J::Array(observed.effects.clone()),
                keys,
                "{name}: effect log"
            );
        }
        // rustc type- and move-checks every valid program (the reference's `cargo check`).
        if let Err(e) = rustc(&name, &src, false) {
            panic!("{name}: rustc rejects a program irkit accepts:\n{e}");
        }
        if !src.contains(".await") && header_text(&src, "rustc").is_none() {
            let reference = rustc_result(&name, &src, &args);
            assert_eq!(got, normalize(&reference), "{name}: irkit vs rustc");
            against_rustc += 1;
        }
    }
    assert!(
        against_rustc >= 8,
        "{against_rustc} programs run against rustc"
    );
}

#[test]
fn invalid_corpus_codes_positions_and_rustc() {
    check_invalid_corpus("rs", "rs", Language::Rust, 20, |name, src| {
        // Invalid Rust is rejected by rustc too (with the named error code); a program
        // without the header is valid Rust outside the subset, and rustc accepts it.
        match header_text(src, "rustc").map(str::trim) {
            Some(rcode) => {
                let e = rustc(name, src, false).expect_err(&format!(
                    "{name}: rustc accepts a program irkit rejects as invalid Rust"
                ));
                if rcode != "rejects" {
                    assert!(
                        e.contains(&format!("error[{rcode}]")),
                        "{name}: rustc rejects it differently:\n{e}"
                    );
                }
            }
            None => {
                if let Err(e) = rustc(name, src, false) {
                    panic!(
                        "{name}: marked valid Rust outside the subset, but rustc rejects it:\n{e}"
                    );
                }
            }
        }
    });
}

const FIRST: &str = "use tcc_rust_prelude::{effect, wait_for_event};\n\nasync fn run() -> Result<f64, String> {\n    let left: f64 = effect(\"left\", || 2.0).await?;\n    let go: bool = wait_for_event(\"go\").await?;\n    Ok(if go { left + 3.0 } else { left })\n}\n";

#[test]
fn envelope_effect_encoding_and_determinism() {
    let a = compile(FIRST, "first.rs", Language::Rust).unwrap();
    let b = compile(FIRST, "first.rs", Language::Rust).unwrap();
    let bytes = tcc_ir::encode_artifact(&a);
    assert_eq!(bytes, tcc_ir::encode_artifact(&b));
    let e = &a.envelope;
    assert_eq!(e.frontend_id, "irkit-rust");
    assert_eq!(e.language_semantics_version, "rust.subset.v1");
    assert_eq!(e.artifact_hash, tcc_ir::compute_hash(&a));
    assert_eq!(
        e.required_host_capabilities,
        ["host.persist_checkpoint", "host.effect", "host.event"]
    );
    // Every Effect is `{"op":"Effect","has_input":true}` (canonical key order puts `has_input` first).
    let encoded: J = serde_json::from_slice(&bytes).unwrap();
    let effects: Vec<&J> = encoded["program"]["functions"][0]["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["op"] == "Effect")
        .collect();
    assert_eq!(effects, [&json!({"op": "Effect", "has_input": true})]);
    let f = &a.program.functions[0];
    let pc = f
        .instructions
        .iter()
        .position(|i| matches!(i, tcc_ir::Instruction::Effect { has_input: true }))
        .unwrap();
    let s = f.spans[pc].as_ref().unwrap();
    assert_eq!(
        (&*s.file, s.start_line, s.start_column),
        ("first.rs", 4, 21)
    );
    let o = run(
        program(FIRST, "first.rs", Language::Rust),
        &host(&[("left", json!(2))], &[("go", json!(true))]),
        &[],
    );
    assert_eq!(o.outcome, completed(json!({"$tag": "Ok", "$0": 5})));
    assert_eq!(o.effects, [json!("left")]);
}

#[test]
fn the_older_pub_async_main_entry_is_accepted() {
    let src = "pub async fn main() -> f64 {\n    let x = 2.0;\n    x * 21.0\n}\n";
    assert_eq!(
        run_src(src, "main.rs", Language::Rust, &[]).outcome,
        completed(json!(42))
    );
}

#[test]
fn an_effect_failure_is_an_err_without_question_mark_and_fails_the_run_with_it() {
    let src = "use tcc_rust_prelude::effect;\n\nasync fn run() -> Result<String, String> {\n    let r: Result<f64, String> = effect(\"pay\", || 1.0).await;\n    match r {\n        Ok(_) => Ok(String::from(\"paid\")),\n        Err(e) => Err(e),\n    }\n}\n";
    let failing = host(&[("pay", json!({"error": "card declined"}))], &[]);
    let o = run(program(src, "fail.rs", Language::Rust), &failing, &[]);
    assert_eq!(
        o.outcome,
        completed(json!({"$tag": "Err", "$0": "card declined"}))
    );
    let src2 = src.replace(
        "let r: Result<f64, String> = effect(\"pay\", || 1.0).await;",
        "let r: Result<f64, String> = Ok(effect(\"pay\", || 1.0).await?);",
    );
    let o = run(program(&src2, "fail2.rs", Language::Rust), &failing, &[]);
    assert_eq!(o.outcome["type"], "failed", "{o:?}");
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let src = format!(
        "async fn run() -> f64 {{\n    {}1.0{}\n}}\n",
        "(".repeat(3000),
        ")".repeat(3000)
    );
    let e = compile(&src, "deep.rs", Language::Rust).unwrap_err();
    assert!(matches!(e.code.as_str(), "TCC-F017" | "TCC-F001"), "{e}");
    let src = format!(
        "async fn run() -> f64 {{\n    1.0{}\n}}\n",
        " + 1.0".repeat(20000)
    );
    let e = compile(&src, "long.rs", Language::Rust).unwrap_err();
    assert!(matches!(e.code.as_str(), "TCC-F017" | "TCC-F001"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,300}") {
        let _ = compile(&s, "any.rs", Language::Rust);
    }

    #[test]
    fn mutated_programs_never_panic(cut in 0usize..2000, insert in "[ -~]{0,8}", which in 0usize..64) {
        let files = corpus("rs", if which % 2 == 0 { "valid" } else { "invalid" }, "rs");
        let src = std::fs::read_to_string(&files[which % files.len()]).unwrap();
        let mut at = cut.min(src.len());
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        let mutated = format!("{}{}{}", &src[..at], insert, &src[(at + insert.len()).min(src.len())..].trim_start_matches(|c: char| !c.is_ascii()));
        let _ = compile(&mutated, "mutated.rs", Language::Rust);
    }
}

fn gen_expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        prop::sample::select(vec!["-3.0", "0.5", "2.0", "7.25", "1e3"]).prop_map(str::to_string),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = gen_expr(depth - 1);
    prop_oneof![
        leaf,
        (sub.clone(), prop::sample::select(vec!["+", "-", "*"]), sub.clone()).prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        (sub.clone(), prop::sample::select(vec!["/", "%"]), sub.clone()).prop_map(|(l, op, r)| format!("({l} {op} ({r} * {r} + 1.0))")),
        (sub.clone(), prop::sample::select(vec!["<", "<=", "==", "!=", ">"]), sub.clone(), sub.clone(), sub.clone())
            .prop_map(|(l, op, r, x, y)| format!("(if {l} {op} {r} {{ {x} }} else {{ {y} }})")),
        (sub.clone(), sub.clone()).prop_map(|(l, r)| format!("{{ let t = {l}; t * 2.0 - {r} }}")),
        (sub.clone(), sub.clone(), sub.clone())
            .prop_map(|(l, x, y)| format!("(match (if {l} > 0.0 {{ Some({x}) }} else {{ None }}) {{ Some(v) => v + 1.0, None => {y} }})")),
        sub.clone().prop_map(|l| format!("{{ let mut s = 0.0; for i in 0..3 {{ s += i as f64 * {l}; }} s }}")),
        (sub.clone(), sub.clone()).prop_map(|(l, r)| format!("{{ let mut n = 0.0; while n < 3.0 && {l} != {r} {{ n += 1.0; }} n }}")),
        sub.prop_map(|l| format!("(-{l})")),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random durable-free programs: irkit's engine and rustc's build print the same values.
    #[test]
    fn random_programs_agree_with_rustc(exprs in prop::collection::vec(gen_expr(3), 16), a in -4i32..5, b in -4i32..5) {
        let mut src = String::from("use tcc_rust_prelude::Vec;\n\n");
        for (k, e) in exprs.iter().enumerate() {
            src += &format!("fn e{k}(a: f64, b: f64) -> f64 {{\n    {e}\n}}\n\n");
        }
        src += "async fn run(a: f64, b: f64) -> Vec<f64> {\n    let mut out = Vec::new();\n";
        for k in 0..exprs.len() {
            src += &format!("    out.push(e{k}(a, b));\n");
        }
        src += "    out\n}\n";
        let args = json!([f64::from(a) * 0.5, f64::from(b)]);
        let observed = run(program(&src, "random.rs", Language::Rust), &host(&[], &[]), args.as_array().unwrap());
        prop_assert_eq!(&observed.outcome["type"], "completed", "{}", src);
        let reference = rustc_result("random.rs", &src, &args);
        prop_assert_eq!(normalize(&observed.outcome["result"]), normalize(&reference), "{}", src);
    }
}

const OWNERSHIP_STMTS: [&str; 29] = [
    "n += take(s);",
    "n += take(t);",
    "t = String::from(\"c\");",
    "let s = String::from(\"d\");",
    "v.push(s);",
    "v.push(t);",
    "if n > 1.0 { n += take(s); }",
    "if n > 1.0 { return take(t); }",
    "for x in v { n += take(x); }",
    "let v: Vec<String> = Vec::new();",
    "while n < 3.0 { n += take(t); }",
    "while n < 2.0 { n += 1.0; }",
    "n += v.len();",
    "let c = move || take(s);",
    "n += c();",
    "loop { n += take(s); break; }",
    "match Some(1.0) { Some(k) => n += k, None => {} }",
    "let o: Option<String> = Some(t); match o { Some(w) => n += take(w), None => {} }",
    "n = true;",
    "if n { n += 1.0; }",
    "let s = if n > 0.0 { s } else { String::from(\"e\") };",
    "n += if s == \"a\" { 1.0 } else { 2.0 };",
    "let r = || n;",
    "n += r();",
    "let q = || take(t);",
    "n += q();",
    "let w = || n + take(t);",
    "while n < 2.0 { n += r(); }",
    "let m = || { n += 1.0; };",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random programs with moves, shadowing, loops, closures and type errors:
    /// whatever irkit's checker accepts, rustc accepts too.
    #[test]
    fn what_irkit_accepts_rustc_accepts(picks in prop::collection::vec(0usize..OWNERSHIP_STMTS.len(), 1..7)) {
        let mut src = String::from("use tcc_rust_prelude::Vec;\n\nfn take(s: String) -> f64 {\n    if s == \"\" { 0.0 } else { 1.0 }\n}\n\nasync fn run() -> f64 {\n    let s = String::from(\"a\");\n    let mut t = String::from(\"b\");\n    let mut n = 0.0;\n    let mut v: Vec<String> = Vec::new();\n");
        for p in &picks {
            src += &format!("    {}\n", OWNERSHIP_STMTS[*p]);
        }
        src += "    n\n}\n";
        if compile(&src, "own.rs", Language::Rust).is_ok() {
            let checked = rustc("own.rs", &src, false);
            prop_assert!(checked.is_ok(), "irkit accepts what rustc rejects:\n{}\n{}", src, checked.err().unwrap_or_default());
            let o = run(program(&src, "own.rs", Language::Rust), &host(&[], &[]), &[]);
            prop_assert_eq!(&o.outcome["type"], "completed", "{}", src);
        }
    }
}
