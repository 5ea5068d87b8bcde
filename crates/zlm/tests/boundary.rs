//! The typed call boundary (docs/zlm/boundary.md): JSON arguments of every
//! type that crosses, parsed against the checked signature, executed by the
//! interpreter with ownership as the signature says, and written back in
//! the same form; bad documents are coded errors at a location, never a
//! panic.

use proptest::prelude::*;
use serde_json::{Value as Json, json};
use zlm::boundary::{self, ARG_COUNT, ARG_RANGE, ARG_SHAPE, ARG_SYNTAX, Passing};
use zlm::interp::{Interp, RunError};

static BOUNDARY: std::sync::LazyLock<zlm::decode::Checked> =
    std::sync::LazyLock::new(|| load("boundary.zlt"));
static OWN: std::sync::LazyLock<zlm::decode::Checked> =
    std::sync::LazyLock::new(|| load("own.zlt"));

fn load(name: &str) -> zlm::decode::Checked {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let m = zlm::text::parse(&std::fs::read_to_string(p).unwrap()).unwrap();
    zlm::decode::from_model(&m, &[]).unwrap()
}

/// A call's result, lent values handed back (by slot name) and drop log.
type Called = (Json, Vec<(String, Json)>, Vec<String>);

/// Calls `entry` with the JSON arguments; the result, the lent values
/// handed back (by slot name) and the drop log.
fn call(checked: &zlm::decode::Checked, entry: &str, args: Json) -> Result<Called, RunError> {
    let it = Interp::new(checked).unwrap();
    let at = it.find(entry).unwrap();
    let r = it.resolved();
    let slots = boundary::slots(r, at);
    let values = boundary::args_of_json(r, &slots, &args).unwrap();
    let done = it.call_host(at, values)?;
    let value = boundary::json_of_value(r, &done.outcome.value, &done.outcome.ty);
    let returned = slots
        .iter()
        .zip(&done.returned)
        .filter_map(|(s, v)| {
            Some((
                s.name.clone(),
                boundary::json_of_value(r, v.as_ref()?, &s.host),
            ))
        })
        .collect();
    let drops = done.outcome.drops.iter().map(|d| d.to_string()).collect();
    Ok((value, returned, drops))
}

#[test]
fn record_and_slice_in_result_of_record_out() {
    let m = load("boundary.zlt");
    let header = json!({"version": 2, "limit": 8, "tag": [9, 9]});
    let (value, returned, drops) = call(&m, "Main.check", json!([header, [7, 1, 2]])).unwrap();
    assert_eq!(
        value,
        json!({"Ok": {"version": 2, "length": 3, "first": 7}})
    );
    // The slice was lent: handed back intact. The header was moved in:
    // consumed by the callee, which dropped it.
    assert_eq!(returned, [("payload".to_string(), json!([7, 1, 2]))]);
    assert_eq!(
        drops,
        [
            "Main.check: drop p0 : Header",
            "Main.check: drop p0.tag : Array<Byte>"
        ]
    );
}

#[test]
fn error_variants_with_and_without_payload() {
    let m = load("boundary.zlt");
    let header = json!({"version": 1, "limit": 2, "tag": []});
    let (value, _, _) = call(&m, "Main.check", json!([header, [1, 2, 3]])).unwrap();
    assert_eq!(
        value,
        json!({"Err": {"TooLong": {"length": 3, "limit": 2}}})
    );
    let (value, returned, _) = call(&m, "Main.check", json!([header, []])).unwrap();
    assert_eq!(value, json!({"Err": "Empty"}));
    assert_eq!(returned, [("payload".to_string(), json!([]))]);
}

#[test]
fn instance_receivers_are_lent_and_handed_back() {
    let m = load("own.zlt");
    let it = Interp::new(&m).unwrap();
    let at = it.find("Box.at_least").unwrap();
    let slots = boundary::slots(it.resolved(), at);
    assert_eq!(slots[0].name, "self");
    assert_eq!(slots[0].passing, Passing::Shared);
    let (value, returned, drops) = call(&m, "Box.at_least", json!([{"v": 5}, 3])).unwrap();
    assert_eq!(value, json!(true));
    assert_eq!(returned, [("self".to_string(), json!({"v": 5}))]);
    assert!(drops.is_empty());
    // The contract (requires v >= limit) sees the lent receiver.
    match call(&m, "Box.at_least", json!([{"v": 1}, 3])) {
        Err(RunError::Fault { fault, .. }) => {
            assert_eq!(
                fault.kind,
                zlm::interp::FaultKind::Contract("requires 0".into())
            )
        }
        other => panic!("expected a contract fault, got {other:?}"),
    }
}

#[test]
fn results_of_every_kind_read_back_as_arguments() {
    let m = load("own.zlt");
    let (value, _, _) = call(&m, "Box.fallible", json!([true])).unwrap();
    assert_eq!(value, json!({"Ok": {"v": 9}}));
    let (value, _, _) = call(&m, "Box.fallible", json!([false])).unwrap();
    assert_eq!(value, json!({"Err": 99}));
    // A result's JSON is an argument of its type.
    let it = Interp::new(&m).unwrap();
    let at = it.find("Box.fallible").unwrap();
    let ty = &it.resolved().module.declarations[at.0].functions[at.1].result;
    let v = boundary::value_of_json(it.resolved(), ty, &json!({"Ok": {"v": 9}}), "$").unwrap();
    assert_eq!(
        boundary::json_of_value(it.resolved(), &v, ty),
        json!({"Ok": {"v": 9}})
    );
}

fn rejection(args: &str) -> boundary::ArgError {
    let m = load("boundary.zlt");
    let it = Interp::new(&m).unwrap();
    let at = it.find("Main.check").unwrap();
    let slots = boundary::slots(it.resolved(), at);
    boundary::parse_args(it.resolved(), &slots, args).unwrap_err()
}

#[test]
fn bad_documents_are_coded_and_located() {
    let e = rejection("[{\"version\": 2,");
    assert_eq!(e.code, ARG_SYNTAX);
    assert_eq!(e.position, Some((1, 15)));
    let e = rejection("[1]");
    assert_eq!((e.code, e.location.as_str()), (ARG_COUNT, "$"));
    let e = rejection(r#"[{"version": 2, "limit": 8}, []]"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_SHAPE, "$[0]"));
    assert!(e.message.contains("needs field \"tag\""), "{e}");
    let e = rejection(r#"[{"version": 2, "limit": 8, "tag": [], "x": 1}, []]"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_SHAPE, "$[0].x"));
    let e = rejection(r#"[{"version": 256, "limit": 8, "tag": []}, []]"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_RANGE, "$[0].version"));
    let e = rejection(r#"[{"version": 1, "limit": -1, "tag": []}, []]"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_RANGE, "$[0].limit"));
    let e = rejection(r#"[{"version": 1, "limit": 1, "tag": []}, [1, "2"]]"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_SHAPE, "$[1][1]"));
    let e = rejection(r#"{"header": 1}"#);
    assert_eq!((e.code, e.location.as_str()), (ARG_SHAPE, "$"));
}

/// Arbitrary JSON, nested a few levels.
fn any_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        (-1e6f64..1e6).prop_map(Json::from),
        "[a-zA-Z]{0,8}".prop_map(Json::String),
        prop_oneof![Just("Empty"), Just("TooLong"), Just("Ok"), Just("Err")]
            .prop_map(|s| Json::String(s.into())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("version".to_string()),
                        Just("limit".to_string()),
                        Just("tag".to_string()),
                        Just("v".to_string()),
                        Just("Ok".to_string()),
                        Just("Err".to_string()),
                        "[a-z]{1,6}"
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Json::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any text is a value list or a coded error; never a panic.
    #[test]
    fn any_text_is_arguments_or_a_coded_error(text in "\\PC{0,64}") {
        let it = Interp::new(&BOUNDARY).unwrap();
        let at = it.find("Main.check").unwrap();
        let slots = boundary::slots(it.resolved(), at);
        if let Err(e) = boundary::parse_args(it.resolved(), &slots, &text) {
            prop_assert!(e.code.starts_with("ZLM-ARG-"));
        }
    }

    /// Any JSON document, for every entry of the examples: arguments that
    /// run, or a coded error; a document that parses writes back as itself
    /// for the slots' types.
    #[test]
    fn any_json_is_arguments_or_a_coded_error(args in prop::collection::vec(any_json(), 0..4)) {
        for (m, entry) in [(&*BOUNDARY, "Main.check"), (&*OWN, "Box.at_least"), (&*OWN, "Box.fallible")] {
            let it = Interp::new(m).unwrap();
            let at = it.find(entry).unwrap();
            let r = it.resolved();
            let slots = boundary::slots(r, at);
            match boundary::args_of_json(r, &slots, &Json::Array(args.clone())) {
                Ok(values) => {
                    for (slot, value) in slots.iter().zip(&values) {
                        // The native engines' word stream reads back as the same value.
                        let mut words = Vec::new();
                        boundary::words_of_value(r, value, &slot.host, &mut words);
                        let mut rest = words.as_slice();
                        let read = boundary::value_of_words(r, &slot.host, &mut rest);
                        prop_assert_eq!(read.as_ref(), Some(value));
                        prop_assert!(rest.is_empty());
                    }
                    let written: Vec<Json> = slots
                        .iter()
                        .zip(&values)
                        .filter(|(s, _)| s.passing != Passing::Allocator)
                        .map(|(s, v)| boundary::json_of_value(r, v, &s.host))
                        .collect();
                    prop_assert_eq!(&written, &args);
                    // Whatever runs returns or faults; it never panics.
                    let _ = it.call_host(at, values);
                }
                Err(e) => prop_assert!(e.code.starts_with("ZLM-ARG-"), "{}", e),
            }
        }
    }
}

/// Every function of generated modules (zlm::testgen), called across the
/// boundary with generated arguments (records, variants, results, bytes,
/// lent receivers): the arguments parse and write back as themselves, and
/// every interpreter tier gives the same result, lent values, drops, steps
/// or fault.
#[test]
fn generated_modules_take_generated_typed_arguments_on_every_tier() {
    use zlm::interp::{Limits, Tier};
    let limits = Limits {
        steps: 20_000,
        depth: 32,
        bytes: 1 << 16,
    };
    let (mut calls, mut compound, mut receivers) = (0, 0, 0);
    for seed in 0..16u64 {
        let text = zlm::testgen::module_text(seed);
        let m = zlm::text::parse(&text).unwrap();
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let general = Interp::new(&checked)
            .unwrap()
            .with_tier(Tier::General)
            .with_limits(limits);
        let fast = Interp::new(&checked).unwrap().with_limits(limits);
        let r = fast.resolved();
        for (d, decl) in r.module.declarations.iter().enumerate() {
            for (k, f) in decl.functions.iter().enumerate() {
                if f.receiver == zlm::model::ReceiverKind::Type && f.params.is_empty() {
                    continue;
                }
                let at = (d, k);
                let slots = boundary::slots(r, at);
                let args = zlm::testgen::arguments(r, &slots, seed * 1000 + k as u64);
                let values = boundary::args_of_json(r, &slots, &args)
                    .unwrap_or_else(|e| panic!("seed {seed} {}: {e}\n{args}", f.name));
                let written: Vec<Json> = slots
                    .iter()
                    .zip(&values)
                    .filter(|(s, _)| s.passing != Passing::Allocator)
                    .map(|(s, v)| boundary::json_of_value(r, v, &s.host))
                    .collect();
                assert_eq!(Json::Array(written), args);
                compound += slots
                    .iter()
                    .filter(|s| {
                        !matches!(
                            s.host,
                            zlm::model::Type::Scalar(_)
                                | zlm::model::Type::Unit
                                | zlm::model::Type::AllocatorBytesError
                        )
                    })
                    .count();
                receivers += slots.iter().filter(|s| s.name == "self").count();
                let a = format!("{:?}", general.call_host(at, values.clone()));
                let b = format!("{:?}", fast.call_host(at, values));
                assert_eq!(a, b, "seed {seed} {}", f.name);
                calls += 1;
            }
        }
    }
    assert!(calls > 50, "{calls} calls");
    assert!(
        compound > 0 && receivers > 0,
        "{compound} compound slots, {receivers} receivers"
    );
}

/// The word stream (docs/zlm/boundary.md, "Words"): a moved-out field
/// round-trips through its presence word; an engine's report decodes to
/// exactly the result and the lent values, and anything else is refused.
#[test]
fn word_stream_presence_and_reports() {
    use zlm::interp::Value;
    let it = Interp::new(&BOUNDARY).unwrap();
    let r = it.resolved();
    let at = it.find("Main.check").unwrap();
    let slots = boundary::slots(r, at);
    let header = slots[0].host.clone();
    let partial = Value::Record(vec![
        Some(Value::Scalar(2)),
        None,
        Some(Value::Bytes(vec![9])),
    ]);
    let mut words = Vec::new();
    boundary::words_of_value(r, &partial, &header, &mut words);
    assert_eq!(words, [1, 2, 0, 1, 1, 9]);
    let mut rest = words.as_slice();
    assert_eq!(
        boundary::value_of_words(r, &header, &mut rest),
        Some(partial)
    );
    assert!(rest.is_empty());
    // A presence word other than 0 or 1 is malformed.
    let mut bad: &[u64] = &[2, 2, 0, 1, 0];
    assert_eq!(boundary::value_of_words(r, &header, &mut bad), None);
    // Main.check: Result<Summary, Reject> out, the payload slice lent.
    let result = &r.module.declarations[at.0].functions[at.1].result;
    let report = " 1 1 1 3 1 2; 3 7 1 2";
    let typed = boundary::typed_of_report(r, result, &slots, report).unwrap();
    assert_eq!(
        boundary::json_of_value(r, &typed.value, result),
        json!({"Err": {"TooLong": {"length": 3, "limit": 2}}})
    );
    assert_eq!(typed.returned[0], None);
    assert_eq!(typed.returned[1], Some(Value::Bytes(vec![7, 1, 2])));
    for bad in [
        "",
        " 1 1 1 3 1 2",
        " 1 1 1 3 1 2; 3 7 1",
        " 1 1 1 3 1 2; 3 7 1 2; 0",
        " 1 1 1 3 1 2 5; 3 7 1 2",
        " 1 7 1 3 1 2; 3 7 1 2",
        " 1 1 1 3 1 2; 3 7 1 zz",
    ] {
        assert_eq!(
            boundary::typed_of_report(r, result, &slots, bad),
            None,
            "{bad:?}"
        );
    }
}
