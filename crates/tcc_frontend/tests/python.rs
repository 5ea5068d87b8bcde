//! Python frontend: valid corpus (expected results, checked against CPython
//! where the program has no durable operations), invalid corpus (codes and
//! positions), envelope, determinism, arbitrary input, random programs.

mod common;

use std::process::Command;

use common::*;
use proptest::prelude::*;
use serde_json::{Value as J, json};
use tcc_frontend::{Language, compile};

fn header(src: &str, key: &str) -> Option<J> {
    common::header(src, "#", key)
}

fn python3() -> Option<&'static str> {
    Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| "python3")
}

/// Runs `run(*args)` of a durable-free program in CPython; `Err(message)` when it raises.
fn cpython(src: &str, args: &J) -> Option<Result<J, String>> {
    let py = python3()?;
    let driver = r#"
import asyncio, json, sys, types
prim = types.ModuleType("tcc_engine.primitives")
prim.program = lambda f: f
pkg = types.ModuleType("tcc_engine")
pkg.primitives = prim
sys.modules["tcc_engine"] = pkg
sys.modules["tcc_engine.primitives"] = prim
src = sys.stdin.read()
ns = {}
exec(compile(src, "prog.py", "exec"), ns)
args = json.loads(sys.argv[1])
try:
    r = asyncio.run(ns["run"](*args))
    print(json.dumps({"ok": r}))
except Exception as e:
    print(json.dumps({"err": str(e)}))
"#;
    let mut child = Command::new(py)
        .arg("-c")
        .arg(driver)
        .arg(args.to_string())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write;
    child.stdin.take()?.write_all(src.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    let j: J = serde_json::from_slice(&out.stdout).ok()?;
    Some(match j.get("ok") {
        Some(v) => Ok(v.clone()),
        None => Err(j["err"].as_str().unwrap_or("").to_string()),
    })
}

#[test]
fn valid_corpus_results() {
    let files = corpus("py", "valid", "py");
    assert!(files.len() >= 10);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let args = header(&src, "args").unwrap_or(json!([]));
        let observed = observe_corpus(&src, &name, Language::Python, "#");
        assert_eq!(
            observed.outcome["type"], "completed",
            "{name}: {observed:?}"
        );
        let got = normalize(&observed.outcome["result"]);
        let mut checked = false;
        if let Some(expect) = header(&src, "expect") {
            assert_eq!(got, normalize(&expect), "{name}");
            checked = true;
        }
        if !src.contains("await ")
            && !src.contains("# cpython: no")
            && let Some(reference) = cpython(&src, &args)
        {
            let reference = reference.unwrap_or_else(|m| panic!("{name}: CPython raised {m}"));
            assert_eq!(got, normalize(&reference), "{name}: irkit vs CPython");
            checked = true;
        }
        assert!(checked || python3().is_none(), "{name}: no expectation");
    }
}

#[test]
fn invalid_corpus_codes_and_positions() {
    check_invalid_corpus("py", "py", Language::Python, 15, |_, _| {});
}

const FIRST: &str = "from tcc_engine.primitives import effect, wait_for_event\n\nasync def run():\n    result = await effect(\"generate\", generate_something)\n    approval = await wait_for_event(\"approved\")\n    return {\"result\": result, \"approval\": approval}\n";

#[test]
fn envelope_spans_and_determinism() {
    let a = compile(FIRST, "first.py", Language::Python).unwrap();
    let b = compile(FIRST, "first.py", Language::Python).unwrap();
    assert_eq!(tcc_ir::encode_artifact(&a), tcc_ir::encode_artifact(&b));
    let e = &a.envelope;
    assert_eq!(e.frontend_id, "irkit-python");
    assert_eq!(e.language_semantics_version, "py.subset.v1");
    assert_eq!(
        e.required_engine_features,
        [
            "ts.control_flow",
            "durable.effect",
            "durable.wait_for_event"
        ]
    );
    assert_eq!(
        e.required_host_capabilities,
        ["host.persist_checkpoint", "host.effect", "host.event"]
    );
    assert_eq!(e.artifact_hash, tcc_ir::compute_hash(&a));
    let f = &a.program.functions[0];
    assert_eq!(f.spans.len(), f.instructions.len());
    assert!(f.spans.iter().all(Option::is_some));
    // The effect's span covers the awaited call on line 4.
    let pc = f
        .instructions
        .iter()
        .position(|i| matches!(i, tcc_ir::Instruction::Effect { has_input: false }))
        .unwrap();
    let s = f.spans[pc].as_ref().unwrap();
    assert_eq!(
        (&*s.file, s.start_line, s.start_column, s.end_line),
        ("first.py", 4, 14, 4)
    );
    // Same instructions as the reference frontend's first example (pcs 0..12).
    let ops: Vec<&str> = f.instructions.iter().map(|i| i.name()).collect();
    assert_eq!(
        &ops[..12],
        [
            "LoadConst",
            "Effect",
            "StoreLocal",
            "LoadConst",
            "WaitForEvent",
            "StoreLocal",
            "NewObject",
            "LoadLocal",
            "SetProp",
            "LoadLocal",
            "SetProp",
            "Return"
        ]
    );
    let o = run(
        program(FIRST, "first.py", Language::Python),
        &host(&[("generate", json!(42))], &[("approved", json!("ok"))]),
        &[],
    );
    assert_eq!(
        o.outcome,
        completed(json!({"result": 42, "approval": "ok"}))
    );
    assert_eq!(o.effects, [json!("generate")]);
}

#[test]
fn break_in_try_runs_finally_and_pops_the_handler() {
    let src = "async def run():\n    log = []\n    for i in range(3):\n        try:\n            break\n        finally:\n            log.append(\"f\")\n    try:\n        raise Exception(\"after\")\n    except Exception as e:\n        log.append(e)\n    return log\n";
    let o = run_src(src, "b.py", Language::Python, &[]);
    assert_eq!(o.outcome, completed(json!(["f", "after"])));
}

#[test]
fn unbound_local_raises() {
    let src = "async def run(c):\n    if c:\n        x = 1\n    return x\n";
    let o = run_src(src, "u.py", Language::Python, &[json!(false)]);
    assert_eq!(o.outcome["type"], "failed", "{o:?}");
    let o = run_src(src, "u.py", Language::Python, &[json!(true)]);
    assert_eq!(o.outcome, completed(json!(1)));
}

#[test]
fn runtime_collection_truthiness_is_pythons() {
    let src = "async def run(xs, d):\n    a = \"full\" if xs else \"empty\"\n    b = \"full\" if d else \"empty\"\n    return [a, b, xs or \"dflt\", not d]\n";
    let o = run_src(src, "t.py", Language::Python, &[json!([]), json!({"k": 1})]);
    assert_eq!(
        o.outcome,
        completed(json!(["empty", "full", "dflt", false]))
    );
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let src = format!(
        "async def run():\n    return {}1{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let e = compile(&src, "deep.py", Language::Python).unwrap_err();
    assert!(matches!(e.code.as_str(), "TCC-F017" | "TCC-F001"), "{e}");
    let src = format!("async def run():\n    return 1{}\n", " + 1".repeat(20000));
    let e = compile(&src, "long.py", Language::Python).unwrap_err();
    assert_eq!(e.code.as_str(), "TCC-F017", "{e}");
}

fn gen_expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        (-20i32..20).prop_map(|n| n.to_string()),
        Just("a".to_string()),
        Just("b".to_string()),
        Just("True".to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = gen_expr(depth - 1);
    prop_oneof![
        leaf,
        (
            sub.clone(),
            prop::sample::select(vec![
                "+", "-", "*", "//", "%", "<", "<=", "==", "!=", "and", "or"
            ]),
            sub.clone()
        )
            .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        (sub.clone(), sub.clone(), sub.clone())
            .prop_map(|(c, x, y)| format!("({x} if {c} else {y})")),
        sub.clone().prop_map(|x| format!("(not {x})")),
        sub.prop_map(|x| format!("(-{x})")),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random durable-free programs give CPython's result (or both raise).
    #[test]
    fn random_programs_match_cpython(e1 in gen_expr(3), e2 in gen_expr(3), n in 0u32..6) {
        let src = format!(
            "def f(a, b):\n    return {e1}\n\nasync def run(a, b):\n    acc = 0\n    for i in range({n}):\n        acc = acc + f(a + i, b)\n        if acc > 1000:\n            break\n    return [acc, {e2}]\n"
        );
        let args = json!([3, -4]);
        let Some(reference) = cpython(&src, &args) else { return Ok(()); };
        let o = run_src(&src, "r.py", Language::Python, args.as_array().unwrap());
        prop_assert_eq!(agrees(&reference, &o), Ok(()), "{}", src);
    }

    /// Arbitrary text never panics the frontend: it compiles or is refused with a code.
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        prop_assert_eq!(no_defect(&s, "x.py", Language::Python), Ok(()));
    }

    /// Mutations of a valid program compile or are refused with a code.
    #[test]
    fn mutated_programs_never_panic(at in 0usize..400, junk in "[ -~\\n]{0,6}") {
        let src = mutate(&corpus_file("py", "exceptions.py"), at, &junk);
        prop_assert_eq!(no_defect(&src, "m.py", Language::Python), Ok(()));
    }
}
