//! TypeScript frontend: valid corpus (expected results, checked against
//! Node.js where the program has no durable operations and no types),
//! invalid corpus (codes and positions), cross-language equality with the
//! Python corpus, envelope, random programs against Node.js, arbitrary input.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use proptest::prelude::*;
use serde_json::{Value as J, json};
use tcc_frontend::{Language, compile};

fn header(src: &str, key: &str) -> Option<J> {
    common::header(src, "//", key)
}

fn node() -> bool {
    Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs the default export in Node.js; `Err` when it throws. Non-finite
/// numbers and undefined are spelled as the test helpers spell them.
fn nodejs(src: &str, args: &J) -> Option<Result<J, String>> {
    if !node() {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("irkit-tsnode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let file = dir.join(format!("p{n}.mjs"));
    std::fs::write(&file, src).ok()?;
    let driver = format!(
        r#"const m = await import({path:?});
const fix = (v) => typeof v === "number" && !Number.isFinite(v) ? `<${{v}}>` : v === undefined ? "<undefined>" : Array.isArray(v) ? v.map(fix) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fix(x)])) : v;
try {{ const r = await m.default(...{args}); console.log(JSON.stringify({{ok: fix(r)}})); }}
catch (e) {{ console.log(JSON.stringify({{err: String(e)}})); }}"#,
        path = file.to_string_lossy(),
        args = args
    );
    let out = Command::new("node")
        .arg("--input-type=module")
        .arg("-e")
        .arg(driver)
        .output()
        .ok()?;
    let _ = std::fs::remove_file(&file);
    let j: J = serde_json::from_slice(&out.stdout).ok()?;
    Some(match j.get("ok") {
        Some(v) => Ok(v.clone()),
        None => Err(j["err"].as_str().unwrap_or("").to_string()),
    })
}

#[test]
fn valid_corpus_results() {
    let files = corpus("ts", "valid", "ts");
    assert!(files.len() >= 10);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let args = header(&src, "args").unwrap_or(json!([]));
        let o = observe_corpus(&src, &name, Language::TypeScript, "//");
        assert_eq!(o.outcome["type"], "completed", "{name}: {o:?}");
        let got = normalize(&o.outcome["result"]);
        let mut checked = false;
        if let Some(expect) = header(&src, "expect") {
            assert_eq!(got, normalize(&expect), "{name}");
            checked = true;
        }
        if !src.contains("await ")
            && !src.contains("// node: no")
            && let Some(reference) = nodejs(&src, &args)
        {
            let reference = reference.unwrap_or_else(|m| panic!("{name}: node threw {m}"));
            assert_eq!(got, normalize(&reference), "{name}: irkit vs Node.js");
            checked = true;
        }
        assert!(checked || !node(), "{name}: no expectation");
    }
}

#[test]
fn invalid_corpus_codes_and_positions() {
    check_invalid_corpus("ts", "ts", Language::TypeScript, 15, |_, _| {});
}

/// Programs in both corpora with the same name give the same result.
#[test]
fn same_program_same_result_in_both_languages() {
    let mut n = 0;
    for ts in corpus("ts", "valid", "ts") {
        let stem = ts.file_stem().unwrap().to_string_lossy().to_string();
        let py =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/corpus/py/valid/{stem}.py"));
        if !py.exists()
            || [
                "logic",
                "collections",
                "strings",
                "closures",
                "loops",
                "exceptions",
            ]
            .contains(&stem.as_str())
        {
            // These differ on purpose: truthiness of `[]`, identity of equal
            // lists, different programs under the same name.
            continue;
        }
        let ts_src = std::fs::read_to_string(&ts).unwrap();
        let py_src = std::fs::read_to_string(&py).unwrap();
        let args = header(&ts_src, "args").unwrap_or(json!([]));
        let effects = pairs(header(&ts_src, "effects"));
        let events = pairs(header(&ts_src, "events"));
        let a = observe(
            &ts_src,
            &stem,
            Language::TypeScript,
            &args,
            &effects,
            &events,
        );
        let b = observe(&py_src, &stem, Language::Python, &args, &effects, &events);
        assert_eq!(normalize(&a.outcome), normalize(&b.outcome), "{stem}");
        assert_eq!(a.effects, b.effects, "{stem}");
        n += 1;
    }
    assert!(n >= 8, "only {n} programs in both languages");
}

#[test]
fn envelope_and_determinism() {
    let src = "import { effect, waitForEvent } from \"@tcc-engine/primitives\";\n\nexport default async function run() {\n  const result = await effect(\"generate\", generateSomething);\n  const approval = await waitForEvent(\"approved\");\n  return { result, approval };\n}\n";
    let a = compile(src, "first.ts", Language::TypeScript).unwrap();
    assert_eq!(
        tcc_ir::encode_artifact(&a),
        tcc_ir::encode_artifact(&compile(src, "first.ts", Language::TypeScript).unwrap())
    );
    assert_eq!(a.envelope.frontend_id, "irkit-typescript");
    assert_eq!(a.envelope.language_semantics_version, "ts.subset.v1");
    assert_eq!(
        a.envelope.required_engine_features,
        [
            "ts.control_flow",
            "durable.effect",
            "durable.wait_for_event"
        ]
    );
    assert_eq!(a.envelope.artifact_hash, tcc_ir::compute_hash(&a));
    let f = &a.program.functions[0];
    assert!(f.spans.iter().all(Option::is_some) && f.spans.len() == f.instructions.len());
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
}

fn num(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        (-20i32..20).prop_map(|n| n.to_string()),
        Just("a".to_string()),
        Just("b".to_string())
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let n = num(depth - 1);
    let b = boolean(depth - 1);
    prop_oneof![
        leaf,
        (
            n.clone(),
            prop::sample::select(vec!["+", "-", "*", "%"]),
            n.clone()
        )
            .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        (b, n.clone(), n.clone()).prop_map(|(c, x, y)| format!("({c} ? {x} : {y})")),
        n.prop_map(|x| format!("(-{x})")),
    ]
    .boxed()
}

fn boolean(depth: u32) -> BoxedStrategy<String> {
    let n = num(depth.saturating_sub(1));
    let leaf = prop_oneof![Just("true".to_string()), Just("false".to_string())];
    if depth == 0 {
        return leaf.boxed();
    }
    let b = boolean(depth - 1);
    prop_oneof![
        leaf,
        (
            n.clone(),
            prop::sample::select(vec!["<", "<=", ">", ">=", "===", "!=="]),
            n
        )
            .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        (b.clone(), prop::sample::select(vec!["&&", "||"]), b.clone())
            .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
        b.prop_map(|x| format!("(!{x})")),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random durable-free programs give Node.js's result.
    #[test]
    fn random_programs_match_node(e1 in num(3), c in boolean(2), e2 in num(2), n in 0u32..6) {
        let src = format!(
            "function f(a, b) {{\n  return {e1};\n}}\n\nexport default async function run(a, b) {{\n  let acc = 0;\n  for (let i = 0; i < {n}; i++) {{\n    acc = acc + f(a + i, b);\n    if (acc > 1000) break;\n  }}\n  const flag = {c};\n  return [acc, flag, {e2}];\n}}\n"
        );
        let args = json!([3, -4]);
        let Some(reference) = nodejs(&src, &args) else { return Ok(()); };
        let o = run_src(&src, "r.ts", Language::TypeScript, args.as_array().unwrap());
        prop_assert_eq!(agrees(&reference, &o), Ok(()), "{}", src);
    }

    /// Arbitrary text never panics the frontend.
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        prop_assert_eq!(no_defect(&s, "x.ts", Language::TypeScript), Ok(()));
    }

    /// Mutations of a valid program compile or are refused with a code.
    #[test]
    fn mutated_programs_never_panic(at in 0usize..900, junk in "[ -~\\n]{0,6}") {
        let src = mutate(&corpus_file("ts", "exceptions.ts"), at, &junk);
        prop_assert_eq!(no_defect(&src, "m.ts", Language::TypeScript), Ok(()));
    }
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let src = format!(
        "export default async function run() {{\n  return {}1{};\n}}\n",
        "[".repeat(20000),
        "]".repeat(20000)
    );
    let e = compile(&src, "deep.ts", Language::TypeScript).unwrap_err();
    assert_eq!(e.code.as_str(), "TCC-F017", "{e}");
    let src = format!(
        "export default async function run() {{\n  return 1{};\n}}\n",
        " + 1".repeat(20000)
    );
    let e = compile(&src, "long.ts", Language::TypeScript).unwrap_err();
    assert_eq!(e.code.as_str(), "TCC-F017", "{e}");
}
