//! Workflow-author features through `irkit tcc start --local` (issue 33), on
//! SQLite and, when it is reachable, PostgreSQL: data into effects (Python
//! `input=`, TypeScript `{ input }`) and the `kv` provider, computed effect
//! keys, event names and program names, and durable calls in loops (effects,
//! events and invokes in Python, TypeScript and Rust), with the provider log
//! checked; a key reused with a different input fails the execution clearly.

use std::path::{Path, PathBuf};

mod common;
use common::irkit;
use serde_json::{Value as J, json};
use tcc_host::test_support::ScratchSchema;

fn src(name: &str) -> String {
    common::repo_file(&format!("examples/tcc/src/{name}"))
}

fn scratch(name: &str, contents: &str) -> PathBuf {
    common::scratch("tcc-author", name, contents)
}

/// A fresh directory for one backend's run.
fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-tcc-author-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The databases to run on: a SQLite file in `d`, and a scratch PostgreSQL
/// schema when the test database is reachable (kept alive by the caller).
fn databases(d: &Path, tag: &str) -> (Vec<String>, Option<ScratchSchema>) {
    let mut urls = vec![d.join("host.sqlite").to_string_lossy().into_owned()];
    let schema = ScratchSchema::create(tag).unwrap();
    if let Some(s) = &schema {
        urls.push(s.url());
    }
    (urls, schema)
}

/// Tagged value → plain JSON, numbers as f64.
fn plain(v: &J) -> J {
    match v["t"].as_str() {
        Some("null") | Some("undefined") => J::Null,
        Some("bool") | Some("string") => v["v"].clone(),
        Some("number") => json!(v["v"].as_f64()),
        Some("array") => J::Array(v["v"].as_array().unwrap().iter().map(plain).collect()),
        Some("object") => J::Object(
            v["v"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, x)| (k.clone(), plain(x)))
                .collect(),
        ),
        _ => panic!("not a tagged value: {v}"),
    }
}

/// Plain JSON with every number as f64 (as [`plain`] reads them).
fn numbers(v: J) -> J {
    match v {
        J::Number(n) => json!(n.as_f64()),
        J::Array(a) => J::Array(a.into_iter().map(numbers).collect()),
        J::Object(o) => J::Object(o.into_iter().map(|(k, x)| (k, numbers(x))).collect()),
        other => other,
    }
}

/// Echo routes logging to `log` for each pattern, and `kv.*` on the kv provider.
fn providers(d: &Path, log: &Path, patterns: &[&str]) -> PathBuf {
    let mut toml = String::new();
    for p in patterns {
        toml += &format!(
            "[[route]]\npattern = \"{p}\"\nprovider = \"echo\"\nlog = \"{}\"\n\n",
            log.display()
        );
    }
    toml += "[[route]]\npattern = \"kv.*\"\nprovider = \"kv\"\n";
    let path = d.join("providers.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// `tcc start --local FILE` to its end; the status JSON.
fn start(db: &str, providers: &Path, file: &str, args: J, events: &[&str]) -> J {
    let a = args.to_string();
    let mut argv = vec![
        "tcc",
        "start",
        "--local",
        file,
        "--database",
        db,
        "--providers",
        providers.to_str().unwrap(),
        "--args",
        &a,
        "--format",
        "json",
        "--timeout-ms",
        "20000",
    ];
    for e in events {
        argv.push("--event");
        argv.push(e);
    }
    let o = irkit(&argv);
    let out: J = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("{file}: {}", String::from_utf8_lossy(&o.stderr)));
    out
}

/// The provider log: (key, idempotency key, plain input) per call.
fn log(path: &Path) -> Vec<(String, String, J)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let j: J = serde_json::from_str(l).unwrap();
            (
                j["key"].as_str().unwrap().to_string(),
                j["idempotency_key"].as_str().unwrap().to_string(),
                plain(&j["input"]),
            )
        })
        .collect()
}

fn keys(entries: &[(String, String, J)]) -> Vec<&str> {
    entries.iter().map(|(k, _, _)| k.as_str()).collect()
}

#[test]
fn effects_get_their_input_and_the_kv_provider_works_from_compiled_code() {
    let d = dir("input");
    let (dbs, _schema) = databases(&d, "t_author_input");
    let order = json!({
        "id": "o-7",
        "customer": "c-7",
        "lines": [
            {"sku": "apple", "price": 2, "qty": 3},
            {"sku": "pear", "price": 5, "qty": 2}
        ]
    });
    for db in &dbs {
        for ext in ["py", "ts"] {
            let logf = d.join(format!("log-{ext}.jsonl"));
            let _ = std::fs::remove_file(&logf);
            let p = providers(&d, &logf, &["payment.*", "inventory.*"]);
            let s = start(
                db,
                &p,
                &src(&format!("checkout.{ext}")),
                json!([order]),
                &[],
            );
            assert_eq!(s["status"], "completed", "{ext} on {db}: {s}");
            assert_eq!(
                numbers(s["result"].clone()),
                numbers(json!({
                    "order": "o-7",
                    "charged": 16,
                    "reserved": ["apple", "pear"],
                    "remembered": "o-7"
                })),
                "{ext} on {db}"
            );
            let entries = log(&logf);
            assert_eq!(
                keys(&entries),
                [
                    "payment.charge.o-7",
                    "inventory.reserve.apple",
                    "inventory.reserve.pear"
                ],
                "{ext} on {db}"
            );
            // "Charge 16 to customer c-7": the provider got the computed amount.
            assert_eq!(
                entries[0].2,
                numbers(json!({"customer": "c-7", "amount": 16})),
                "{ext}"
            );
            assert_eq!(
                entries[2].2,
                numbers(json!({"sku": "pear", "qty": 2})),
                "{ext}"
            );
            // One journal identity per item.
            assert_ne!(entries[1].1, entries[2].1, "{ext}");

            // The kv value is durable in the host database: a second program reads it.
            let reader = match ext {
                "py" => scratch(
                    "kv_read.py",
                    "from tcc_engine.primitives import effect\n\nasync def run(customer):\n    return await effect(\"kv.\" + customer, input={\"op\": \"get\", \"key\": customer})\n",
                ),
                _ => scratch(
                    "kv_read.ts",
                    "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run(customer: string) {\n  return await effect(\"kv.\" + customer, { input: { op: \"get\", key: customer } });\n}\n",
                ),
            };
            let s = start(db, &p, reader.to_str().unwrap(), json!(["c-7"]), &[]);
            assert_eq!(s["status"], "completed", "{ext}: {s}");
            assert_eq!(numbers(s["result"].clone()), json!("o-7"), "{ext} on {db}");
        }
    }
}

#[test]
fn durable_calls_in_loops_each_get_their_own_result_in_three_languages() {
    let d = dir("loops");
    let (dbs, _schema) = databases(&d, "t_author_loops");
    let parcels = json!([
        {"order": "o-1", "weight": 2},
        {"order": "o-2", "weight": 12}
    ]);
    let polls = [
        (
            "py",
            "from tcc_engine.primitives import effect, wait_for_event\n\nasync def run(ids):\n    got = []\n    for i in ids:\n        got.append(await effect(f\"fetch.{i}\", input={\"id\": i}))\n    total = 0\n    n = 0\n    while n < 3:\n        total = total + await wait_for_event(\"tick\")\n        n = n + 1\n    return {\"got\": got, \"total\": total}\n",
        ),
        (
            "ts",
            "import { effect, waitForEvent } from \"@tcc-engine/primitives\";\nexport default async function run(ids: string[]) {\n  const got = [];\n  for (const i of ids) {\n    got.push(await effect(`fetch.${i}`, { input: { id: i } }));\n  }\n  let total = 0;\n  for (let n = 0; n < 3; n++) {\n    total += await waitForEvent(\"tick\");\n  }\n  return { got, total };\n}\n",
        ),
    ];
    for db in &dbs {
        for ext in ["py", "ts", "rs"] {
            let logf = d.join(format!("loops-{ext}.jsonl"));
            let _ = std::fs::remove_file(&logf);
            let p = providers(
                &d,
                &logf,
                &["label.*", "fetch.*", "payment.*", "inventory.*"],
            );
            // Register the child under its stem by running it once.
            let s = start(
                db,
                &p,
                &src(&format!("label.{ext}")),
                json!(["demo", 1]),
                &[],
            );
            assert_eq!(s["status"], "completed", "{ext}: {s}");
            let _ = std::fs::remove_file(&logf);
            let s = start(
                db,
                &p,
                &src(&format!("batch.{ext}")),
                json!([parcels]),
                &["scan.o-2=true", "scan.o-1=true"],
            );
            assert_eq!(s["status"], "completed", "{ext} on {db}: {s}");
            let summary =
                numbers(json!({"parcels": 2, "tiers": ["standard", "heavy"], "cost": 38}));
            // A Rust entry returns its `Result`: `Ok` is `{"$tag": "Ok", "$0": value}`.
            let summary = if ext == "rs" {
                json!({"$tag": "Ok", "$0": summary})
            } else {
                summary
            };
            assert_eq!(numbers(s["result"].clone()), summary, "{ext} on {db}");
            // Two children, each printing its own label.
            let entries = log(&logf);
            assert_eq!(keys(&entries), ["label.print", "label.print"], "{ext}");
            assert_ne!(entries[0].1, entries[1].1, "{ext}: one child per iteration");

            if ext == "rs" {
                // Rust: one effect per item, keyed by the item.
                let _ = std::fs::remove_file(&logf);
                let order = json!({"id": "o-9", "customer": "c-9", "lines": [
                    {"sku": "fig", "price": 1, "qty": 4}, {"sku": "kiwi", "price": 3, "qty": 1}]});
                let s = start(db, &p, &src("checkout.rs"), json!([order]), &[]);
                assert_eq!(s["status"], "completed", "rs on {db}: {s}");
                assert_eq!(
                    numbers(s["result"].clone()),
                    numbers(
                        json!({"$tag": "Ok", "$0": {"order": "o-9", "customer": "c-9", "total": 7, "reserved": ["fig", "kiwi"]}})
                    ),
                );
                assert_eq!(
                    keys(&log(&logf)),
                    [
                        "payment.charge.o-9",
                        "inventory.reserve.fig",
                        "inventory.reserve.kiwi"
                    ]
                );
                continue;
            }
            // Effects keyed per item (a repeated item is the same effect: the
            // provider runs once for it) and three waits for one event name,
            // each consuming its own event.
            let _ = std::fs::remove_file(&logf);
            let (_, text) = polls.iter().find(|(e, _)| *e == ext).unwrap();
            let file = scratch(&format!("poll.{ext}"), text);
            let s = start(
                db,
                &p,
                file.to_str().unwrap(),
                json!([["a", "b", "a"]]),
                &["tick=1", "tick=10", "tick=100"],
            );
            assert_eq!(s["status"], "completed", "{ext} on {db}: {s}");
            assert_eq!(
                numbers(s["result"].clone()),
                numbers(json!({"got": [{"id": "a"}, {"id": "b"}, {"id": "a"}], "total": 111})),
                "{ext} on {db}"
            );
            assert_eq!(keys(&log(&logf)), ["fetch.a", "fetch.b"], "{ext}");
        }
    }
}

#[test]
fn a_key_reused_with_a_different_input_fails_the_execution() {
    let d = dir("reuse");
    let (dbs, _schema) = databases(&d, "t_author_reuse");
    let sources = [
        (
            "py",
            "from tcc_engine.primitives import effect\n\nasync def run(xs):\n    for x in xs:\n        await effect(f\"put.{x['k']}\", input=x[\"v\"])\n    return \"done\"\n",
        ),
        (
            "ts",
            "import { effect } from \"@tcc-engine/primitives\";\nexport default async function run(xs: { k: string; v: number }[]) {\n  for (const x of xs) {\n    await effect(\"put.\" + x.k, { input: x.v });\n  }\n  return \"done\";\n}\n",
        ),
    ];
    for db in &dbs {
        for (ext, text) in sources {
            let logf = d.join(format!("reuse-{ext}.jsonl"));
            let _ = std::fs::remove_file(&logf);
            let p = providers(&d, &logf, &["put.*"]);
            let file = scratch(&format!("reuse.{ext}"), text);
            let s = start(
                db,
                &p,
                file.to_str().unwrap(),
                json!([[{"k": "a", "v": 1}, {"k": "a", "v": 2}]]),
                &[],
            );
            assert_eq!(s["status"], "failed", "{ext} on {db}: {s}");
            let message = s["message"].as_str().unwrap_or_default().to_string()
                + s["error"].as_str().unwrap_or_default();
            assert!(
                message.contains("put.a") && message.contains("re-run with a different input"),
                "{ext} on {db}: {s}"
            );
            assert_eq!(keys(&log(&logf)), ["put.a"], "{ext}: the provider ran once");
        }
    }
}
