//! Durable calls as workflow authors write them (issue 33), in all three
//! languages: the effect input (`has_input: true` only when an input is
//! given), computed keys and names, and durable calls in loops — an effect
//! with a key that repeats is refused, an event wait or `invoke` in a loop
//! gets a group of its own (per-iteration identity), and code outside loops
//! is emitted as before. Runs on irkit's local host check the values.

mod common;

use common::{host, program, run};
use serde_json::{Value as J, json};
use tcc_frontend::{Language, compile};
use tcc_ir::Instruction;

fn entry_ops(src: &str, file: &str, lang: Language) -> Vec<Instruction> {
    let a = compile(src, file, lang).unwrap_or_else(|e| panic!("{file}: {e}"));
    let entry = a.program.entry;
    a.program
        .functions
        .iter()
        .find(|f| f.id == entry)
        .map(|f| f.instructions.clone())
        .unwrap_or_default()
}

fn features(src: &str, file: &str, lang: Language) -> Vec<String> {
    compile(src, file, lang)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .envelope
        .required_engine_features
}

fn count(ops: &[Instruction], pred: impl Fn(&Instruction) -> bool) -> usize {
    ops.iter().filter(|i| pred(i)).count()
}

#[test]
fn an_input_is_passed_only_when_given() {
    let cases = [
        (
            "in.py",
            Language::Python,
            "from tcc_engine.primitives import effect\n\nasync def run(n):\n    a = await effect(\"plain\")\n    b = await effect(\"charge\", charge, input={\"amount\": n * 10})\n    return [a, b]\n",
        ),
        (
            "in.ts",
            Language::TypeScript,
            "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run(n: number) {\n  const a = await effect(\"plain\");\n  const b = await effect(\"charge\", () => 0, { input: { amount: n * 10 } });\n  return [a, b];\n}\n",
        ),
    ];
    for (file, lang, src) in cases {
        let ops = entry_ops(src, file, lang);
        let inputs: Vec<bool> = ops
            .iter()
            .filter_map(|i| match i {
                Instruction::Effect { has_input } => Some(*has_input),
                _ => None,
            })
            .collect();
        assert_eq!(inputs, [false, true], "{file}");
        let h = host(&[("plain", json!(1)), ("charge", json!("ok"))], &[]);
        let report = h
            .run(program(src, file, lang), "e", &[common::tag(&json!(3))])
            .unwrap();
        let logged: Vec<J> = report
            .effect_log
            .iter()
            .map(|e| common::untag(&e["input"]))
            .collect();
        assert_eq!(
            common::normalize(&J::Array(logged)),
            common::normalize(&json!([{}, {"amount": 30}])),
            "{file}"
        );
    }
}

#[test]
fn keys_and_names_may_be_computed() {
    let cases = [
        (
            "names.py",
            Language::Python,
            "from tcc_engine.primitives import effect, wait_for_event\n\nasync def run(who):\n    a = await effect(f\"greet.{who}\")\n    b = await effect(\"bye.\" + who)\n    c = await wait_for_event(f\"go.{who}\")\n    return [a, b, c]\n",
        ),
        (
            "names.ts",
            Language::TypeScript,
            "import { effect, waitForEvent } from \"@tcc-engine/primitives\";\nexport default async function run(who: string) {\n  const a = await effect(`greet.${who}`);\n  const b = await effect(\"bye.\" + who);\n  const c = await waitForEvent(`go.${who}`);\n  return [a, b, c];\n}\n",
        ),
        (
            "names.rs",
            Language::Rust,
            "use tcc_rust_prelude::{effect, wait_for_event, Vec};\n\nasync fn run(who: String) -> Result<Vec<f64>, String> {\n    let a: f64 = effect(String::from(\"greet.\") + &who, || 0.0).await?;\n    let b: f64 = effect(String::from(\"bye.\") + &who, || 0.0).await?;\n    let c: f64 = wait_for_event(String::from(\"go.\") + &who).await?;\n    let mut out = Vec::new();\n    out.push(a);\n    out.push(b);\n    out.push(c);\n    Ok(out)\n}\n",
        ),
    ];
    for (file, lang, src) in cases {
        let h = host(
            &[("greet.ann", json!(1)), ("bye.ann", json!(2))],
            &[("go.ann", json!(3))],
        );
        let o = run(program(src, file, lang), &h, &[json!("ann")]);
        assert_eq!(o.effects, [json!("greet.ann"), json!("bye.ann")], "{file}");
        let result = if lang == Language::Rust {
            json!({"$tag": "Ok", "$0": [1, 2, 3]})
        } else {
            json!([1, 2, 3])
        };
        assert_eq!(
            common::normalize(&o.outcome["result"]),
            common::normalize(&result),
            "{file}: {o:?}"
        );
    }
}

#[test]
fn waits_and_invokes_in_loops_get_a_group_of_their_own() {
    let cases = [
        (
            "loops.py",
            Language::Python,
            "from tcc_engine.primitives import invoke, wait_for_event, effect\n\nasync def run(xs):\n    await wait_for_event(\"first\")\n    out = []\n    for x in xs:\n        out.append(await invoke(\"child\", await effect(f\"prep.{x}\")))\n        out.append(await wait_for_event(\"tick\"))\n    return out\n",
        ),
        (
            "loops.ts",
            Language::TypeScript,
            "import { invoke, waitForEvent, effect } from \"@tcc-engine/primitives\";\nexport default async function run(xs: string[]) {\n  await waitForEvent(\"first\");\n  const out = [];\n  for (const x of xs) {\n    out.push(await invoke(\"child\", await effect(`prep.${x}`)));\n    out.push(await waitForEvent(\"tick\"));\n  }\n  return out;\n}\n",
        ),
        (
            "loops.rs",
            Language::Rust,
            "use tcc_rust_prelude::{invoke, wait_for_event, effect, Vec};\n\nasync fn run(xs: Vec<String>) -> Result<Vec<f64>, String> {\n    let _first: f64 = wait_for_event(\"first\").await?;\n    let mut out = Vec::new();\n    for x in xs {\n        let p: f64 = effect(String::from(\"prep.\") + &x, || 0.0).await?;\n        let c: f64 = invoke(\"child\", p).await?;\n        out.push(c);\n        let t: f64 = wait_for_event(\"tick\").await?;\n        out.push(t);\n    }\n    Ok(out)\n}\n",
        ),
    ];
    let child = "from tcc_engine.primitives import program\n\n@program\nasync def run(v):\n    return v * 100\n";
    for (file, lang, src) in cases {
        let ops = entry_ops(src, file, lang);
        // The wait before the loop stays a plain wait; the two in the loop
        // are each a one-branch race.
        assert_eq!(
            count(&ops, |i| matches!(i, Instruction::Fork { count: 1, .. })),
            2,
            "{file}"
        );
        assert_eq!(
            count(&ops, |i| matches!(i, Instruction::JoinAny)),
            2,
            "{file}"
        );
        assert_eq!(
            count(&ops, |i| matches!(i, Instruction::WaitForEvent)),
            2,
            "{file}"
        );
        assert!(
            features(src, file, lang).contains(&"durable.concurrent_group".to_string()),
            "{file}"
        );
        let mut h = host(
            &[("prep.a", json!(1)), ("prep.b", json!(2))],
            &[("first", json!(0)), ("tick", json!(7))],
        );
        h.children
            .insert("child".into(), program(child, "child.py", Language::Python));
        let o = run(program(src, file, lang), &h, &[json!(["a", "b"])]);
        let result = if lang == Language::Rust {
            json!({"$tag": "Ok", "$0": [100, 7, 200, 7]})
        } else {
            json!([100, 7, 200, 7])
        };
        assert_eq!(
            common::normalize(&o.outcome["result"]),
            common::normalize(&result),
            "{file}: {o:?}"
        );
    }
}

#[test]
fn programs_without_the_new_forms_keep_their_code() {
    // A literal key, a wait and an invoke outside loops: one LoadConst of the
    // name at the call's span, no group, no input.
    let src = "from tcc_engine.primitives import effect, invoke, wait_for_event\n\nasync def run():\n    a = await effect(\"k\")\n    b = await wait_for_event(\"e\")\n    c = await invoke(\"p\", 1)\n    return [a, b, c]\n";
    let a = compile(src, "plain.py", Language::Python).unwrap();
    let f = &a.program.functions[0];
    assert!(
        !f.instructions.iter().any(|i| matches!(
            i,
            Instruction::Fork { .. } | Instruction::Effect { has_input: true }
        )),
        "{:?}",
        f.instructions
    );
    for (k, i) in f.instructions.iter().enumerate() {
        if matches!(
            i,
            Instruction::Effect { .. } | Instruction::WaitForEvent | Instruction::Invoke { .. }
        ) {
            assert!(
                matches!(&f.instructions[k - 1], Instruction::LoadConst { .. }),
                "{k}: {:?}",
                f.instructions
            );
            assert_eq!(
                f.spans[k - 1],
                f.spans[k],
                "the name is loaded at the call's span"
            );
        }
    }
    assert!(
        !a.envelope
            .required_engine_features
            .contains(&"durable.concurrent_group".to_string())
    );
}

#[test]
fn an_effect_key_the_loop_never_changes_is_refused() {
    let refused = [
        (
            "same.py",
            Language::Python,
            "from tcc_engine.primitives import effect\n\nasync def run(xs):\n    k = \"charge.\" + \"all\"\n    for x in xs:\n        await effect(k, input=x)\n    return 0\n",
        ),
        (
            "same.ts",
            Language::TypeScript,
            "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run(xs: number[]) {\n  const k = \"charge\";\n  let i = 0;\n  while (i < xs.length) {\n    await effect(`${k}.all`, { input: xs[i] });\n    i++;\n  }\n  return 0;\n}\n",
        ),
        (
            "same.rs",
            Language::Rust,
            "use tcc_rust_prelude::{effect, Vec};\n\nasync fn run(xs: Vec<f64>) -> Result<f64, String> {\n    let k = \"charge\";\n    for _x in xs {\n        let _v: f64 = effect(k, || 0.0).await?;\n    }\n    Ok(0.0)\n}\n",
        ),
    ];
    for (file, lang, src) in refused {
        let e = compile(src, file, lang).expect_err(file);
        assert_eq!(e.code.as_str(), "TCC-F024", "{file}: {e}");
        assert!(e.message.contains("compute the key"), "{file}: {e}");
    }
    // Keys that change with the iteration compile.
    let accepted = [
        (
            "varying.py",
            Language::Python,
            "from tcc_engine.primitives import effect\n\nasync def run(xs):\n    n = 0\n    while n < 3:\n        await effect(\"poll.\" + xs[n])\n        n = n + 1\n    return n\n",
        ),
        (
            "varying.ts",
            Language::TypeScript,
            "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run(xs: string[]) {\n  for (let i = 0; i < 3; i++) {\n    await effect(`poll.${i}`);\n  }\n  return 0;\n}\n",
        ),
    ];
    for (file, lang, src) in accepted {
        compile(src, file, lang).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// `irkit.catchable_cancel` is declared, last, exactly when the entry both
/// awaits and has a `try` (docs/tcc/frontends.md); the booking examples
/// have it in all three languages.
#[test]
fn an_await_inside_a_try_makes_the_cancellation_catchable() {
    let cancel = tcc_ir::features::CATCHABLE_CANCEL;
    let cases = [
        (
            "try.py",
            Language::Python,
            "from tcc_engine.primitives import effect\n\nasync def run():\n    try:\n        return await effect(\"a\")\n    except Exception as e:\n        return e\n",
            true,
        ),
        (
            "plain.py",
            Language::Python,
            "from tcc_engine.primitives import effect\n\nasync def run():\n    return await effect(\"a\")\n",
            false,
        ),
        (
            "compute.py",
            Language::Python,
            "async def run(x):\n    try:\n        return 1 // x\n    except Exception as e:\n        return e\n",
            false,
        ),
        (
            "try.ts",
            Language::TypeScript,
            "import { sleep } from \"@tcc-engine/primitives\";\nexport default async function run() {\n  try {\n    await sleep(5);\n  } finally {\n    return 1;\n  }\n}\n",
            true,
        ),
        (
            "plain.ts",
            Language::TypeScript,
            "import { sleep } from \"@tcc-engine/primitives\";\nexport default async function run() {\n  await sleep(5);\n  return 1;\n}\n",
            false,
        ),
        (
            "result.rs",
            Language::Rust,
            "use tcc_rust_prelude::effect;\n\nasync fn run() -> String {\n    match effect(\"a\", || ()).await {\n        Ok(_) => String::from(\"ok\"),\n        Err(e) => e,\n    }\n}\n",
            true,
        ),
    ];
    for (file, lang, src, catchable) in cases {
        let f = features(src, file, lang);
        assert_eq!(f.iter().any(|x| x == cancel), catchable, "{file}: {f:?}");
        if catchable {
            assert_eq!(f.last().map(String::as_str), Some(cancel), "{file}: {f:?}");
        }
    }
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/tcc/src");
    for (ext, lang) in [
        ("py", Language::Python),
        ("ts", Language::TypeScript),
        ("rs", Language::Rust),
    ] {
        let file = format!("{examples}/booking.{ext}");
        let src = std::fs::read_to_string(&file).unwrap();
        let f = features(&src, &file, lang);
        assert_eq!(f.last().map(String::as_str), Some(cancel), "{file}: {f:?}");
    }
}

/// `irkit.catchable_child_failure` is declared, after
/// `irkit.catchable_cancel`, exactly when the entry invokes and has a `try`.
#[test]
fn an_invoke_inside_a_try_makes_a_childs_failure_catchable() {
    let child = tcc_ir::features::CATCHABLE_CHILD_FAILURE;
    let cases = [
        (
            "kid.py",
            Language::Python,
            "from tcc_engine.primitives import invoke\n\nasync def run():\n    try:\n        return await invoke(\"kid\")\n    except Exception as e:\n        return e\n",
            true,
        ),
        (
            "kid.ts",
            Language::TypeScript,
            "import { invoke } from \"@tcc-engine/primitives\";\nexport default async function run() {\n  try {\n    return await invoke(\"kid\");\n  } catch (e) {\n    return e;\n  }\n}\n",
            true,
        ),
        (
            "nokid.py",
            Language::Python,
            "from tcc_engine.primitives import effect, invoke\n\nasync def run():\n    try:\n        await effect(\"a\")\n    except Exception as e:\n        pass\n    return await invoke(\"kid\")\n",
            true,
        ),
        (
            "plain.ts",
            Language::TypeScript,
            "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run() {\n  try {\n    return await effect(\"a\");\n  } catch (e) {\n    return e;\n  }\n}\n",
            false,
        ),
    ];
    for (file, lang, src, catchable) in cases {
        let f = features(src, file, lang);
        assert_eq!(f.iter().any(|x| x == child), catchable, "{file}: {f:?}");
        if catchable {
            let n = f.len();
            assert_eq!(
                &f[n - 2..],
                [tcc_ir::features::CATCHABLE_CANCEL, child],
                "{file}: {f:?}"
            );
        }
    }
}

/// Rust: `effect_with(KEY, INPUT, || value)` passes INPUT (moved into the
/// call, evaluated after KEY); `effect` passes `{}` as before. Both emit
/// `has_input: true`, as the Rust frontend always did.
#[test]
fn a_rust_effect_with_input_passes_its_data() {
    let src = "use tcc_rust_prelude::{effect, effect_with};\n\nstruct Charge {\n    customer: String,\n    amount: f64,\n}\n\nasync fn run(n: f64) -> Result<f64, String> {\n    let plain: f64 = effect(\"plain\", || 0.0).await?;\n    let who = String::from(\"c-\") + &String::from(\"7\");\n    let charged: f64 = effect_with(String::from(\"charge.\") + &who, Charge { customer: who, amount: n * 10.0 }, || 0.0).await?;\n    Ok(plain + charged)\n}\n";
    let ops = entry_ops(src, "in.rs", Language::Rust);
    assert_eq!(
        count(&ops, |i| matches!(
            i,
            Instruction::Effect { has_input: true }
        )),
        2
    );
    let h = host(&[("plain", json!(1)), ("charge.c-7", json!(30))], &[]);
    let report = h
        .run(
            program(src, "in.rs", Language::Rust),
            "e",
            &[common::tag(&json!(3))],
        )
        .unwrap();
    let logged: Vec<J> = report
        .effect_log
        .iter()
        .map(|e| common::untag(&e["input"]))
        .collect();
    assert_eq!(
        common::normalize(&J::Array(logged)),
        common::normalize(&json!([{}, {"customer": "c-7", "amount": 30}]))
    );
    assert_eq!(report.outcome["type"], "completed", "{}", report.outcome);
    // A wrong arity or a non-closure body is a diagnostic, not a panic.
    for bad in [
        "use tcc_rust_prelude::effect_with;\n\nasync fn run() -> Result<f64, String> {\n    effect_with(\"k\", || 0.0).await\n}\n",
        "use tcc_rust_prelude::effect_with;\n\nasync fn run() -> Result<f64, String> {\n    effect_with(\"k\", 1.0, 2.0).await\n}\n",
    ] {
        assert!(compile(bad, "bad.rs", Language::Rust).is_err());
    }
}
