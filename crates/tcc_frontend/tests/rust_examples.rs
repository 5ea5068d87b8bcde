//! The examples of examples/tcc/src in Rust give the results of their
//! Python versions on the local host (same inputs; the Rust results carry
//! the subset's encoding: an entry returning `Result` completes with
//! `{"$tag":"Ok","$0":…}`, an enum value has its `$tag`, which is stripped
//! before the comparison), and rustc type- and move-checks each of them.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value as J, json};
use tcc_frontend::Language;

fn example(name: &str) -> (String, String) {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/tcc/src")
        .join(name);
    (std::fs::read_to_string(&p).unwrap(), name.to_string())
}

fn lang(name: &str) -> Language {
    Language::from_path(Path::new(name)).unwrap()
}

/// Ok payloads unwrapped and `$tag` keys removed, numbers as f64.
fn comparable(v: &J) -> J {
    match v {
        J::Object(o) if o.get("$tag") == Some(&json!("Ok")) => comparable(&o["$0"]),
        J::Object(o) => J::Object(
            o.iter()
                .filter(|(k, _)| *k != "$tag")
                .map(|(k, x)| (k.clone(), comparable(x)))
                .collect(),
        ),
        J::Array(a) => J::Array(a.iter().map(comparable).collect()),
        other => normalize(other),
    }
}

fn run_example(
    file: &str,
    args: &[J],
    effects: &[(&str, J)],
    events: &[(&str, J)],
    child: Option<&str>,
) -> Observed {
    let (src, name) = example(file);
    let mut h = host(effects, events);
    if let Some(c) = child {
        let (csrc, cname) = example(c);
        h.children
            .insert("label".into(), program(&csrc, &cname, lang(&cname)));
    }
    run(program(&src, &name, lang(&name)), &h, args)
}

#[allow(clippy::too_many_arguments)]
fn same(
    rs: &str,
    py: &str,
    args_rs: &[J],
    args_py: &[J],
    effects: &[(&str, J)],
    effects_rs: &[(&str, J)],
    events: &[(&str, J)],
    child: Option<(&str, &str)>,
) {
    let r = run_example(rs, args_rs, effects_rs, events, child.map(|c| c.0));
    let p = run_example(py, args_py, effects, events, child.map(|c| c.1));
    assert_eq!(r.outcome["type"], "completed", "{rs}: {r:?}");
    assert_eq!(p.outcome["type"], "completed", "{py}: {p:?}");
    assert_eq!(
        comparable(&r.outcome["result"]),
        comparable(&p.outcome["result"]),
        "{rs} vs {py}"
    );
    let mut a = r.effects.clone();
    let mut b = p.effects.clone();
    a.sort_by_key(|k| k.to_string());
    b.sort_by_key(|k| k.to_string());
    assert_eq!(a, b, "{rs} vs {py}: effects");
}

#[test]
fn order_saga_in_rust_matches_python() {
    let ok = [
        ("inventory.reserve", json!({})),
        ("payment.charge", json!({})),
        ("shipping.ship", json!({})),
    ];
    same(
        "order_saga.rs",
        "order_saga.py",
        &[json!({"id": "o-7"})],
        &[json!({"id": "o-7"})],
        &ok,
        &ok,
        &[],
        None,
    );
    let failing = [
        ("inventory.reserve", json!({})),
        ("payment.charge", json!({})),
        ("shipping.ship", json!({"error": "no courier"})),
        ("payment.refund", json!({})),
        ("inventory.release", json!({})),
    ];
    same(
        "order_saga.rs",
        "order_saga.py",
        &[json!({"id": "o-8"})],
        &[json!({"id": "o-8"})],
        &failing,
        &failing,
        &[],
        None,
    );
    let r = run_example(
        "order_saga.rs",
        &[json!({"id": "o-8"})],
        &failing,
        &[],
        None,
    );
    assert_eq!(
        r.effects,
        [
            "inventory.reserve",
            "payment.charge",
            "shipping.ship",
            "payment.refund",
            "inventory.release"
        ]
    );
    assert_eq!(r.outcome["result"]["$tag"], "Compensated");
}

#[test]
fn approval_race_in_rust_matches_python() {
    let effects = [
        ("approval.notify", json!({})),
        ("request.grant", json!({})),
        ("approval.escalate", json!({})),
    ];
    for (decision, request) in [("approve", "r-1"), ("reject", "r-2")] {
        let events = [
            ("approval.decision", json!(decision)),
            ("approval.timeout", json!("timeout")),
        ];
        same(
            "approval.rs",
            "approval.py",
            &[json!(request)],
            &[json!(request), json!(5)],
            &effects,
            &effects,
            &events,
            None,
        );
    }
}

#[test]
fn gather_fan_out_in_rust_matches_python() {
    let py = [
        ("quote.ups", json!(12.5)),
        ("quote.dhl", json!(9.75)),
        ("quote.fedex", J::Null),
    ];
    let rs = [
        ("quote.ups", json!({"$tag": "Some", "$0": 12.5})),
        ("quote.dhl", json!({"$tag": "Some", "$0": 9.75})),
        ("quote.fedex", json!({"$tag": "None"})),
    ];
    same("fanout.rs", "fanout.py", &[], &[], &py, &rs, &[], None);
    let r = run_example("fanout.rs", &[], &rs, &[], None);
    assert_eq!(
        comparable(&r.outcome["result"]),
        normalize(&json!({"carrier": "dhl", "price": 9.75}))
    );
}

#[test]
fn child_invoke_in_rust_matches_python() {
    let effects = [("order.pack", json!({})), ("label.print", json!({}))];
    let args = [json!("o-9"), json!(12)];
    same(
        "shipment.rs",
        "shipment.py",
        &args,
        &args,
        &effects,
        &effects,
        &[],
        Some(("label.rs", "label.py")),
    );
    let r = run_example("shipment.rs", &args, &effects, &[], Some("label.rs"));
    assert_eq!(
        comparable(&r.outcome["result"]),
        normalize(&json!({"order": "o-9", "label": {"order": "o-9", "tier": "heavy", "cost": 29}}))
    );
}

#[test]
fn rustc_checks_every_rust_example() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tcc-rust-examples");
    std::fs::create_dir_all(&dir).unwrap();
    let shim_src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rust_shim/tcc_rust_prelude.rs");
    let shim = dir.join("libtcc_rust_prelude.rlib");
    let o = std::process::Command::new("rustc")
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "rlib",
            "--crate-name",
            "tcc_rust_prelude",
            "-o",
        ])
        .arg(&shim)
        .arg(&shim_src)
        .output()
        .expect("rustc is on this machine");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in [
        "order_saga.rs",
        "approval.rs",
        "fanout.rs",
        "label.rs",
        "shipment.rs",
    ] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/tcc/src")
            .join(name);
        let o = std::process::Command::new("rustc")
            .args([
                "--edition",
                "2021",
                "-A",
                "warnings",
                "--crate-type",
                "lib",
                "--emit",
                "metadata",
                "--extern",
            ])
            .arg(format!("tcc_rust_prelude={}", shim.display()))
            .arg("-o")
            .arg(dir.join(format!("{name}.rmeta")))
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
