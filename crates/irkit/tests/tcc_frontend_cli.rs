//! `irkit tcc compile` and source files (`.py`, `.ts`) in `run` and
//! `start --local`: the examples of examples/tcc/src/ in both languages, on
//! the local host and on the SQLite durable host, with results and effect
//! logs checked.

use std::path::{Path, PathBuf};

mod common;
use common::{irkit, logged_effect_keys};
use serde_json::{Value as J, json};

fn src(name: &str) -> String {
    common::repo_file(&format!("examples/tcc/src/{name}"))
}

fn scratch(name: &str, contents: &str) -> PathBuf {
    common::scratch("tcc-frontend", name, contents)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Tagged value → plain JSON, numbers as f64 (a status's `result` is
/// already plain: then only its numbers).
fn plain(v: &J) -> J {
    if v.get("t").is_none()
        || v.as_object()
            .is_some_and(|o| o.keys().any(|k| k != "t" && k != "v"))
    {
        return numbers(v.clone());
    }
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

fn numbers(v: J) -> J {
    match v {
        J::Number(n) => json!(n.as_f64()),
        J::Array(a) => J::Array(a.into_iter().map(numbers).collect()),
        J::Object(o) => J::Object(o.into_iter().map(|(k, x)| (k, numbers(x))).collect()),
        other => other,
    }
}

fn tagged(v: &J) -> J {
    match v {
        J::Null => json!({"t": "null"}),
        J::Bool(b) => json!({"t": "bool", "v": b}),
        J::Number(n) => json!({"t": "number", "v": n}),
        J::String(s) => json!({"t": "string", "v": s}),
        J::Array(a) => json!({"t": "array", "v": a.iter().map(tagged).collect::<Vec<_>>()}),
        J::Object(o) => {
            json!({"t": "object", "v": o.iter().map(|(k, x)| (k.clone(), tagged(x))).collect::<serde_json::Map<_, _>>()})
        }
    }
}

/// `tcc run --format json`: (outcome type, plain result, keys of run_effect requests in order).
fn local_run(
    file: &str,
    args: J,
    effects: J,
    events: J,
    children: &[(&str, &str)],
) -> (String, J, Vec<String>) {
    let tag_all = |m: &J| {
        J::Object(
            m.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    let t = if v.get("error").is_some() {
                        v.clone()
                    } else {
                        tagged(v)
                    };
                    (k.clone(), t)
                })
                .collect(),
        )
    };
    let ef = scratch(
        &format!(
            "{}.effects.json",
            Path::new(file).file_name().unwrap().to_string_lossy()
        ),
        &tag_all(&effects).to_string(),
    );
    let ev = scratch(
        &format!(
            "{}.events.json",
            Path::new(file).file_name().unwrap().to_string_lossy()
        ),
        &tag_all(&events).to_string(),
    );
    let targs = J::Array(args.as_array().unwrap().iter().map(tagged).collect()).to_string();
    let mut argv = vec![
        "tcc",
        "run",
        file,
        "--format",
        "json",
        "--args",
        &targs,
        "--effects",
        ef.to_str().unwrap(),
        "--events",
        ev.to_str().unwrap(),
    ];
    let child_args: Vec<String> = children.iter().map(|(n, f)| format!("{n}={f}")).collect();
    for c in &child_args {
        argv.push("--child");
        argv.push(c);
    }
    let out = irkit(&argv);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<J> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let keys = lines
        .iter()
        .filter(|m| m["request"]["type"] == "run_effect")
        .map(|m| m["request"]["key"].as_str().unwrap().to_string())
        .collect();
    let last = lines.last().cloned().unwrap_or(J::Null);
    let result = last.get("result").map(plain).unwrap_or(J::Null);
    (
        last["type"].as_str().unwrap_or("").to_string(),
        result,
        keys,
    )
}

#[test]
fn every_example_compiles_to_a_valid_hashed_artifact() {
    let dir = common::repo_file("examples/tcc/src");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let p = path.to_string_lossy().to_string();
        let out_file = scratch(
            &format!("{}.json", path.file_name().unwrap().to_string_lossy()),
            "",
        );
        let o = irkit(&["tcc", "compile", &p, "-o", out_file.to_str().unwrap()]);
        assert!(o.status.success(), "{p}: {}", stderr(&o));
        let o = irkit(&["tcc", "hash", "--check", out_file.to_str().unwrap()]);
        assert!(o.status.success(), "{p}: {}", stderr(&o));
        let o = irkit(&["tcc", "print", out_file.to_str().unwrap()]);
        let listing = String::from_utf8(o.stdout).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(listing.contains(&format!("{name}:")), "{listing}");
        assert!(
            listing.contains("irkit-python")
                || listing.contains("irkit-typescript")
                || listing.contains("irkit-rust"),
            "{listing}"
        );
        // Same bytes on stdout (plus a newline) as in the file.
        let o = irkit(&["tcc", "compile", &p]);
        let file = std::fs::read(&out_file).unwrap();
        assert_eq!(o.stdout, [file, b"\n".to_vec()].concat());
        n += 1;
    }
    assert_eq!(n, 26);
}

#[test]
fn compile_errors_carry_code_position_and_snippet() {
    let bad = scratch("bad.py", "async def run():\n    return missing + 1\n");
    let o = irkit(&["tcc", "compile", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("error[TCC-F003]: unknown name `missing`"), "{e}");
    assert!(e.contains("bad.py:2:12"), "{e}");
    assert!(
        e.contains("2 |     return missing + 1") && e.contains("^"),
        "{e}"
    );
    let o = irkit(&["tcc", "compile", bad.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let d: J = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (d["code"].as_str(), d["line"].as_u64(), d["column"].as_u64()),
        (Some("TCC-F003"), Some(2), Some(12))
    );
    let bad = scratch(
        "bad.ts",
        "export default async function run() {\n  class A {}\n}\n",
    );
    let o = irkit(&["tcc", "run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("error[TCC-F011]") && stderr(&o).contains("bad.ts:2:3"),
        "{}",
        stderr(&o)
    );
    let o = irkit(&["tcc", "compile", &common::repo_file("README.md")]);
    assert_eq!(o.status.code(), Some(2));
}

/// Runtime failures and engine faults of a compiled source point at the
/// source line that caused them (the artifact's spans), in `run` and `step`.
#[test]
fn runtime_errors_point_at_the_source() {
    let div = scratch(
        "div.py",
        "def ratio(a, b):\n    return a // b\n\nasync def run(n):\n    x = n + 1\n    return ratio(x, 0)\n",
    );
    let args = r#"[{"t":"number","v":1}]"#;
    for verb in ["run", "step"] {
        let mut cmd = vec!["tcc", verb, div.to_str().unwrap(), "--args", args];
        if verb == "step" {
            cmd.extend(["-o", "-"]);
        }
        let o = irkit(&cmd);
        let e = stderr(&o);
        assert!(
            e.contains("uncaught exception: ZeroDivisionError") && e.contains("div.py:2:12"),
            "{verb}: {e}"
        );
        assert!(
            e.contains("2 |     return a // b\n  |            ^"),
            "{verb}: {e}"
        );
    }
    let eff = scratch(
        "eff.ts",
        "import { effect } from \"@tcc-engine/primitives\";\n\nexport default async function run() {\n  const a = 1;\n  const r = await effect(\"charge\");\n  return r + a;\n}\n",
    );
    let answers = scratch("eff.json", r#"{"charge": {"error": "card declined"}}"#);
    let o = irkit(&[
        "tcc",
        "run",
        eff.to_str().unwrap(),
        "--effects",
        answers.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("uncaught exception: card declined") && e.contains("eff.ts:5:13"),
        "{e}"
    );
    assert!(
        e.contains("5 |   const r = await effect(\"charge\");"),
        "{e}"
    );
    // A fatal engine error (a type error) carries the position in both forms.
    let bad = scratch(
        "bad.ts",
        "export default async function run(x: number) {\n  let s = 0;\n  s = s + 1;\n  return x < s;\n}\n",
    );
    let sargs = r#"[{"t":"string","v":"q"}]"#;
    let o = irkit(&["tcc", "run", bad.to_str().unwrap(), "--args", sargs]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("error[TCC-R001]") && e.contains("bad.ts:4:10"),
        "{e}"
    );
    assert!(e.contains("4 |   return x < s;\n  |          ^"), "{e}");
    let o = irkit(&[
        "tcc",
        "run",
        bad.to_str().unwrap(),
        "--args",
        sargs,
        "--format",
        "json",
    ]);
    let d: J = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (d["code"].as_str(), d["line"].as_u64(), d["column"].as_u64()),
        (Some("TCC-R001"), Some(4), Some(10))
    );
    assert_eq!(d["offset"].as_u64(), Some(82));
    // From a compiled artifact, the message names the span's file:line:col.
    let art = bad.with_extension("json");
    let o = irkit(&[
        "tcc",
        "compile",
        bad.to_str().unwrap(),
        "-o",
        art.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = irkit(&["tcc", "run", art.to_str().unwrap(), "--args", sargs]);
    assert!(stderr(&o).contains("at bad.ts:4:10"), "{}", stderr(&o));
}

#[test]
fn examples_on_the_local_host() {
    for ext in ["py", "ts"] {
        let saga = src(&format!("order_saga.{ext}"));
        let ok = json!({"inventory.reserve": {}, "payment.charge": {}, "shipping.ship": {}});
        let (t, r, keys) = local_run(&saga, json!([{"id": "o-7"}]), ok, json!({}), &[]);
        assert_eq!(t, "completed", "{ext}");
        assert_eq!(
            r,
            json!({"order": "o-7", "status": "shipped", "steps": ["reserve", "charge", "ship"]}),
            "{ext}"
        );
        assert_eq!(
            keys,
            ["inventory.reserve", "payment.charge", "shipping.ship"],
            "{ext}"
        );

        let failing = json!({"inventory.reserve": {}, "payment.charge": {}, "shipping.ship": {"error": "no courier"},
            "payment.refund": {}, "inventory.release": {}});
        let (t, r, keys) = local_run(&saga, json!([{"id": "o-8"}]), failing, json!({}), &[]);
        assert_eq!(t, "completed", "{ext}");
        assert_eq!(
            r,
            json!({"order": "o-8", "status": "compensated", "steps": ["reserve", "charge"], "undone": ["refund", "release"], "error": "no courier"}),
            "{ext}"
        );
        assert_eq!(
            keys,
            [
                "inventory.reserve",
                "payment.charge",
                "shipping.ship",
                "payment.refund",
                "inventory.release"
            ],
            "{ext}"
        );

        let approval = src(&format!("approval.{ext}"));
        let effects = json!({"approval.notify": {}, "request.grant": {}, "approval.escalate": {}});
        let (t, r, keys) = local_run(
            &approval,
            json!(["r-1"]),
            effects.clone(),
            json!({"approval.decision": "approve"}),
            &[],
        );
        assert_eq!(
            (t.as_str(), r),
            ("completed", json!({"request": "r-1", "outcome": "granted"})),
            "{ext}"
        );
        assert_eq!(keys, ["approval.notify", "request.grant"], "{ext}");
        // (The local host needs a payload for every wait, so the timeout
        // path is checked on the durable host below.)
        let (t, r, keys) = local_run(
            &approval,
            json!(["r-2", 5]),
            effects,
            json!({"approval.decision": "reject"}),
            &[],
        );
        assert_eq!(
            (t.as_str(), r),
            (
                "completed",
                json!({"request": "r-2", "outcome": "rejected"})
            ),
            "{ext}"
        );
        assert_eq!(keys, ["approval.notify"], "{ext}");

        let fanout = src(&format!("fanout.{ext}"));
        let quotes = json!({"quote.ups": 12.5, "quote.dhl": 9.75, "quote.fedex": null});
        let (t, r, mut keys) = local_run(&fanout, json!([]), quotes, json!({}), &[]);
        assert_eq!(
            (t.as_str(), r),
            ("completed", json!({"carrier": "dhl", "price": 9.75})),
            "{ext}"
        );
        keys.sort();
        assert_eq!(keys, ["quote.dhl", "quote.fedex", "quote.ups"], "{ext}");

        let parent = src(&format!("shipment.{ext}"));
        let label = src(&format!("label.{ext}"));
        let (t, r, keys) = local_run(
            &parent,
            json!(["o-9", 12]),
            json!({"order.pack": {}, "label.print": {}}),
            json!({}),
            &[("label", &label)],
        );
        assert_eq!(t, "completed", "{ext}");
        assert_eq!(
            r,
            numbers(
                json!({"order": "o-9", "label": {"order": "o-9", "tier": "heavy", "cost": 29}})
            ),
            "{ext}"
        );
        assert!(keys.contains(&"order.pack".to_string()), "{ext}: {keys:?}");
    }
}

fn start_local(db: &Path, providers: &Path, file: &str, args: J, events: &[&str]) -> J {
    let a = args.to_string();
    let mut argv = vec![
        "tcc",
        "start",
        "--local",
        file,
        "--database",
        db.to_str().unwrap(),
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
    assert!(o.status.success(), "{file}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn examples_on_the_sqlite_durable_host() {
    for ext in ["py", "ts"] {
        let dir = std::env::temp_dir().join(format!(
            "irkit-tcc-frontend-sqlite-{}-{ext}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("host.sqlite");
        let log = dir.join("effects.jsonl");
        // Echo routes for everything but the charge, so the charge fails (no provider).
        let providers = dir.join("providers.toml");
        let mut toml = String::new();
        for pattern in [
            "inventory.*",
            "shipping.*",
            "payment.refund",
            "approval.*",
            "request.*",
            "order.*",
            "label.*",
        ] {
            toml += &format!(
                "[[route]]\npattern = \"{pattern}\"\nprovider = \"echo\"\nlog = \"{}\"\n\n",
                log.display()
            );
        }
        toml += "[[route]]\npattern = \"quote.*\"\nprovider = \"clock\"\n";
        std::fs::write(&providers, toml).unwrap();

        let s = start_local(
            &db,
            &providers,
            &src(&format!("order_saga.{ext}")),
            json!([{"id": "o-1"}]),
            &[],
        );
        assert_eq!(s["status"], "completed", "{ext}: {s}");
        let r = plain(&s["result"]);
        assert_eq!(r["status"], "compensated", "{ext}: {r}");
        assert_eq!(r["steps"], json!(["reserve"]), "{ext}");
        assert_eq!(r["undone"], json!(["release"]), "{ext}");
        assert_eq!(
            logged_effect_keys(&log),
            ["inventory.reserve", "inventory.release"],
            "{ext}"
        );

        std::fs::remove_file(&log).unwrap();
        let s = start_local(
            &db,
            &providers,
            &src(&format!("approval.{ext}")),
            json!(["r-1"]),
            &["approval.decision=\"approve\""],
        );
        assert_eq!(s["status"], "completed", "{ext}: {s}");
        assert_eq!(
            plain(&s["result"]),
            json!({"request": "r-1", "outcome": "granted"}),
            "{ext}"
        );
        assert_eq!(
            logged_effect_keys(&log),
            ["approval.notify", "request.grant"],
            "{ext}"
        );

        std::fs::remove_file(&log).unwrap();
        let s = start_local(
            &db,
            &providers,
            &src(&format!("approval.{ext}")),
            json!(["r-2", 50]),
            &[],
        );
        assert_eq!(
            plain(&s["result"]),
            json!({"request": "r-2", "outcome": "escalated"}),
            "{ext}: {s}"
        );
        assert_eq!(
            logged_effect_keys(&log),
            ["approval.notify", "approval.escalate"],
            "{ext}"
        );

        let s = start_local(
            &db,
            &providers,
            &src(&format!("fanout.{ext}")),
            json!([]),
            &[],
        );
        let r = plain(&s["result"]);
        assert!(
            ["ups", "dhl", "fedex"].contains(&r["carrier"].as_str().unwrap_or("")),
            "{ext}: {r}"
        );
        assert!(r["price"].as_f64().unwrap_or(0.0) > 1.0e12, "{ext}: {r}");

        // The child is registered under its file stem by running it once.
        std::fs::remove_file(&log).unwrap();
        let s = start_local(
            &db,
            &providers,
            &src(&format!("label.{ext}")),
            json!([]),
            &[],
        );
        assert_eq!(
            plain(&s["result"]),
            numbers(json!({"order": "demo", "tier": "standard", "cost": 7})),
            "{ext}: {s}"
        );
        let s = start_local(
            &db,
            &providers,
            &src(&format!("shipment.{ext}")),
            json!(["o-3", 2]),
            &[],
        );
        assert_eq!(s["status"], "completed", "{ext}: {s}");
        assert_eq!(
            plain(&s["result"]),
            numbers(
                json!({"order": "o-3", "label": {"order": "o-3", "tier": "standard", "cost": 9}})
            ),
            "{ext}"
        );
        assert_eq!(
            logged_effect_keys(&log),
            ["label.print", "order.pack", "label.print"],
            "{ext}"
        );
    }
}

#[test]
fn step_takes_a_source_and_pins_its_artifact() {
    let file = src("approval.ts");
    let art = scratch("approval.ts.json", "");
    assert!(
        irkit(&["tcc", "compile", &file, "-o", art.to_str().unwrap()])
            .status
            .success()
    );
    let artifact: J = serde_json::from_slice(&std::fs::read(&art).unwrap()).unwrap();
    let cont = scratch("approval.cont.json", "");
    let o = irkit(&["tcc", "step", &file, "-o", cont.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c: J = serde_json::from_slice(&std::fs::read(&cont).unwrap()).unwrap();
    assert_eq!(c["artifact_hash"], artifact["envelope"]["artifact_hash"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(text.contains("run_effect \"approval.notify\""), "{text}");
}

#[test]
fn register_takes_a_source() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!(
        "irkit-tcc-frontend-register-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "serve", "--listen", "127.0.0.1:0", "--database"])
        .arg(dir.join("host.db"))
        .env_remove("IRKIT_TCC_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("irkit serve starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_default()
        .to_string();
    let file = src("label.py");
    let o = irkit(&["tcc", "register", &file, "--server", &url]);
    let art = scratch("label.py.json", "");
    assert!(
        irkit(&["tcc", "compile", &file, "-o", art.to_str().unwrap()])
            .status
            .success()
    );
    let artifact: J = serde_json::from_slice(&std::fs::read(&art).unwrap()).unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(artifact["envelope"]["artifact_hash"].as_str().unwrap()),
        "{out}"
    );
}
