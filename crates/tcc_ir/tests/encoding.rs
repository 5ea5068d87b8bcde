//! Encoding rules of the spec and the facts note, one test (or more) per rule,
//! positive and negative.

mod common;

use common::{base, json, with_code};
use tcc_ir::{Constant, EncodingErrorKind as K, Instruction, IrError, decode_artifact};

/// Decodes `text`, expecting an encoding error; returns its kind and path.
fn fail(text: &str) -> (K, String) {
    match decode_artifact(text.as_bytes()) {
        Err(IrError::InvalidEncoding { kind, path, .. }) => (kind, path),
        other => panic!("expected InvalidEncoding for {text}, got {other:?}"),
    }
}

/// Canonical text of `base()` with one instruction list spliced in as raw JSON.
fn with_raw_instructions(raw: &str) -> String {
    let n = raw.matches("\"op\"").count();
    let spans = vec!["null"; n].join(",");
    let text = json(&with_code(vec![Instruction::Nop]));
    text.replace("[{\"op\":\"Nop\"}]", &format!("[{raw}]"))
        .replace("\"spans\":[null]", &format!("\"spans\":[{spans}]"))
}

fn decode_one(raw: &str) -> Instruction {
    let a = decode_artifact(with_raw_instructions(raw).as_bytes()).expect("decodes");
    a.program.functions[0].instructions[0].clone()
}

fn fail_one(raw: &str) -> (K, String) {
    fail(&with_raw_instructions(raw))
}

fn reencode_one(ins: Instruction) -> String {
    let text = json(&with_code(vec![ins]));
    let start = text.find("\"instructions\":[").expect("instructions") + 16;
    let end = text[start..].find("],\"local_count\"").expect("end") + start;
    text[start..end].to_string()
}

#[test]
fn base_round_trips() {
    let a = base();
    let text = json(&a);
    assert_eq!(decode_artifact(text.as_bytes()).unwrap(), a);
}

// ---- Effect.has_input ----

#[test]
fn effect_false_omits_has_input_and_missing_decodes_false() {
    assert_eq!(
        reencode_one(Instruction::Effect { has_input: false }),
        r#"{"op":"Effect"}"#
    );
    assert_eq!(
        decode_one(r#"{"op":"Effect"}"#),
        Instruction::Effect { has_input: false }
    );
}

#[test]
fn effect_true_writes_has_input_true() {
    assert_eq!(
        reencode_one(Instruction::Effect { has_input: true }),
        r#"{"has_input":true,"op":"Effect"}"#
    );
    assert_eq!(
        decode_one(r#"{"op":"Effect","has_input":true}"#),
        Instruction::Effect { has_input: true }
    );
}

#[test]
fn effect_explicit_false_decodes_and_reencodes_omitted() {
    let ins = decode_one(r#"{"has_input":false,"op":"Effect"}"#);
    assert_eq!(ins, Instruction::Effect { has_input: false });
    assert_eq!(reencode_one(ins), r#"{"op":"Effect"}"#);
}

#[test]
fn effect_non_boolean_has_input_is_invalid() {
    for bad in ["1", "0", "\"true\"", "null", "{}", "[]"] {
        let (kind, path) = fail_one(&format!(r#"{{"has_input":{bad},"op":"Effect"}}"#));
        assert_eq!(kind, K::WrongType, "{bad}");
        assert_eq!(
            path, "$.program.functions[0].instructions[0].has_input",
            "{bad}"
        );
    }
}

// ---- Invoke.arg_count ----

#[test]
fn invoke_zero_omits_arg_count_and_missing_decodes_zero() {
    assert_eq!(
        reencode_one(Instruction::Invoke { arg_count: 0 }),
        r#"{"op":"Invoke"}"#
    );
    assert_eq!(
        decode_one(r#"{"op":"Invoke"}"#),
        Instruction::Invoke { arg_count: 0 }
    );
    let explicit = decode_one(r#"{"arg_count":0,"op":"Invoke"}"#);
    assert_eq!(reencode_one(explicit), r#"{"op":"Invoke"}"#);
}

#[test]
fn invoke_positive_arg_count_is_written() {
    assert_eq!(
        reencode_one(Instruction::Invoke { arg_count: 3 }),
        r#"{"arg_count":3,"op":"Invoke"}"#
    );
    assert_eq!(
        decode_one(r#"{"op":"Invoke","arg_count":3}"#),
        Instruction::Invoke { arg_count: 3 }
    );
}

#[test]
fn invoke_bad_arg_count_is_invalid() {
    assert_eq!(
        fail_one(r#"{"arg_count":-1,"op":"Invoke"}"#).0,
        K::OutOfRange
    );
    assert_eq!(
        fail_one(r#"{"arg_count":"2","op":"Invoke"}"#).0,
        K::WrongType
    );
    assert_eq!(
        fail_one(r#"{"arg_count":null,"op":"Invoke"}"#).0,
        K::WrongType
    );
}

// ---- numbers ----

#[test]
fn negative_zero_is_a_json_number_and_distinct_from_zero() {
    let neg = reencode_one(Instruction::LoadConst {
        value: Constant::Number(-0.0),
    });
    assert_eq!(neg, r#"{"op":"LoadConst","value":{"t":"number","v":-0}}"#);
    let pos = reencode_one(Instruction::LoadConst {
        value: Constant::Number(0.0),
    });
    assert_eq!(pos, r#"{"op":"LoadConst","value":{"t":"number","v":0}}"#);
    for spelling in ["-0", "-0.0", "-0e0", "-0.000E+3"] {
        let Instruction::LoadConst {
            value: Constant::Number(n),
        } = decode_one(&format!(
            r#"{{"op":"LoadConst","value":{{"t":"number","v":{spelling}}}}}"#
        ))
        else {
            panic!("not a number constant")
        };
        assert!(n == 0.0 && n.is_sign_negative(), "{spelling}");
    }
}

#[test]
fn non_finite_numbers_are_strings_on_the_number_tag() {
    for (text, check) in [
        ("NaN", f64::is_nan as fn(f64) -> bool),
        ("Infinity", |n: f64| n == f64::INFINITY),
        ("-Infinity", |n: f64| n == f64::NEG_INFINITY),
    ] {
        let raw = format!(r#"{{"op":"LoadConst","value":{{"t":"number","v":"{text}"}}}}"#);
        let ins = decode_one(&raw);
        let Instruction::LoadConst {
            value: Constant::Number(n),
        } = ins.clone()
        else {
            panic!()
        };
        assert!(check(n), "{text}");
        assert_eq!(reencode_one(ins), raw);
    }
}

#[test]
fn other_strings_on_the_number_tag_are_invalid() {
    for bad in ["nan", "inf", "+Infinity", "1", "", " NaN"] {
        let (kind, path) = fail_one(&format!(
            r#"{{"op":"LoadConst","value":{{"t":"number","v":"{bad}"}}}}"#
        ));
        assert_eq!(kind, K::BadNumberString, "{bad:?}");
        assert_eq!(path, "$.program.functions[0].instructions[0].value.v");
    }
}

#[test]
fn bare_nan_and_overflowing_numbers_are_invalid() {
    let raw = |v: &str| format!(r#"{{"op":"LoadConst","value":{{"t":"number","v":{v}}}}}"#);
    assert_eq!(fail_one(&raw("NaN")).0, K::Syntax);
    assert_eq!(fail_one(&raw("Infinity")).0, K::Syntax);
    assert_eq!(fail_one(&raw("1e400")).0, K::OutOfRange);
    assert_eq!(fail_one(&raw("-1e400")).0, K::OutOfRange);
    for bad in ["01", "1.", ".5", "-", "1e", "+1", "0x10"] {
        let (kind, _) = fail_one(&raw(bad));
        assert!(matches!(kind, K::Syntax | K::WrongType), "{bad}: {kind:?}");
    }
}

#[test]
fn tiny_and_exact_numbers_round_trip() {
    for n in [
        5e-324,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        0.1 + 0.2,
        1.0 / 3.0,
        9007199254740993.0,
        -123.456e-78,
    ] {
        let a = with_code(vec![Instruction::LoadConst {
            value: Constant::Number(n),
        }]);
        let back = decode_artifact(json(&a).as_bytes()).unwrap();
        assert_eq!(back, a, "{n:e}");
    }
}

#[test]
fn integer_fields_are_whole_numbers_that_fit_u32() {
    let ok = decode_one(r#"{"op":"Jump","target":4294967295}"#);
    assert_eq!(ok, Instruction::Jump { target: u32::MAX });
    // Any spelling of a whole number is accepted, as by the reference engine,
    // and re-encodes as a plain integer.
    for (spelling, value) in [
        ("7.0", 7),
        ("7e0", 7),
        ("0.7E1", 7),
        ("-0", 0),
        ("-0.0", 0),
        ("4294967295.0", u32::MAX),
    ] {
        let ins = decode_one(&format!(r#"{{"op":"Jump","target":{spelling}}}"#));
        assert_eq!(ins, Instruction::Jump { target: value }, "{spelling}");
        assert_eq!(
            reencode_one(ins),
            format!(r#"{{"op":"Jump","target":{value}}}"#)
        );
    }
    for bad in [
        "4294967296",
        "4294967296.0",
        "-1",
        "-1.0",
        "0.5",
        "1e10",
        "1e400",
        "99999999999999999999",
    ] {
        let (kind, path) = fail_one(&format!(r#"{{"op":"Jump","target":{bad}}}"#));
        assert_eq!(kind, K::OutOfRange, "{bad}");
        assert_eq!(path, "$.program.functions[0].instructions[0].target");
    }
}

// ---- ops, tags, keys, types ----

#[test]
fn unknown_op_is_invalid_encoding_naming_the_op() {
    let text = with_raw_instructions(r#"{"op":"Frobnicate"}"#);
    match decode_artifact(text.as_bytes()) {
        Err(IrError::InvalidEncoding {
            kind,
            path,
            message,
            ..
        }) => {
            assert_eq!(kind, K::UnknownOp);
            assert_eq!(path, "$.program.functions[0].instructions[0].op");
            assert!(message.contains("Frobnicate"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Op names are case-sensitive PascalCase.
    assert_eq!(fail_one(r#"{"op":"nop"}"#).0, K::UnknownOp);
    assert_eq!(fail_one(r#"{"op":"NOP"}"#).0, K::UnknownOp);
}

#[test]
fn unknown_constant_tags_are_invalid() {
    for tag in ["object", "array", "ref", "hole", "int", "Number", ""] {
        let (kind, path) = fail_one(&format!(
            r#"{{"op":"LoadConst","value":{{"t":"{tag}","v":1}}}}"#
        ));
        assert_eq!(kind, K::UnknownTag, "{tag}");
        assert_eq!(path, "$.program.functions[0].instructions[0].value.t");
    }
}

#[test]
fn constant_payload_rules() {
    let raw = |c: &str| format!(r#"{{"op":"LoadConst","value":{c}}}"#);
    assert_eq!(fail_one(&raw(r#"{"t":"null","v":null}"#)).0, K::UnknownKey);
    assert_eq!(
        fail_one(&raw(r#"{"t":"undefined","v":1}"#)).0,
        K::UnknownKey
    );
    assert_eq!(fail_one(&raw(r#"{"t":"bool"}"#)).0, K::MissingKey);
    assert_eq!(fail_one(&raw(r#"{"t":"bool","v":"true"}"#)).0, K::WrongType);
    assert_eq!(fail_one(&raw(r#"{"t":"string","v":5}"#)).0, K::WrongType);
    assert_eq!(fail_one(&raw(r#"{"t":"number","v":true}"#)).0, K::WrongType);
    assert_eq!(fail_one(&raw(r#"{"t":"number","v":[]}"#)).0, K::WrongType);
    assert_eq!(fail_one(&raw(r#"{"v":1}"#)).0, K::MissingKey);
    assert_eq!(fail_one(&raw(r#"{"t":"null","x":1}"#)).0, K::UnknownKey);
    assert_eq!(
        fail_one(&raw(r#"{"t":"null","t":"null"}"#)).0,
        K::DuplicateKey
    );
    assert_eq!(fail_one(&raw(r#""null""#)).0, K::WrongType);
    // `v` may precede `t`.
    assert_eq!(
        decode_one(&raw(r#"{"v":"x","t":"string"}"#)),
        Instruction::LoadConst {
            value: Constant::String("x".into())
        }
    );
}

#[test]
fn missing_instruction_fields_are_invalid() {
    for raw in [
        r#"{"target":1}"#,
        r#"{"op":"Jump"}"#,
        r#"{"op":"JumpIfTrue"}"#,
        r#"{"op":"JumpIfFalse"}"#,
        r#"{"op":"Call","func":0}"#,
        r#"{"op":"Call","argc":0}"#,
        r#"{"op":"LoadLocal"}"#,
        r#"{"op":"StoreLocal"}"#,
        r#"{"op":"LoadConst"}"#,
        r#"{"op":"SetProp"}"#,
        r#"{"op":"GetProp"}"#,
        r#"{"op":"ArrayIndex"}"#,
        r#"{"op":"Fork","count":2}"#,
        r#"{"op":"Fork","join_pc":2}"#,
        r#"{"op":"PushTry","catch":1}"#,
        r#"{"op":"PushTry","finally":null}"#,
        r#"{"op":"NewEnv"}"#,
        r#"{"op":"NewClosure"}"#,
        r#"{"op":"EnvGet"}"#,
        r#"{"op":"CallClosure"}"#,
        r#"{"op":"LoadFunc"}"#,
    ] {
        let (kind, path) = fail_one(raw);
        assert_eq!(kind, K::MissingKey, "{raw}");
        assert_eq!(path, "$.program.functions[0].instructions[0]", "{raw}");
    }
}

#[test]
fn fields_an_op_does_not_have_are_invalid() {
    for raw in [
        r#"{"op":"Nop","target":1}"#,
        r#"{"op":"Return","value":{"t":"null"}}"#,
        r#"{"op":"Jump","target":0,"local":0}"#,
        r#"{"op":"Effect","arg_count":1}"#,
        r#"{"op":"Invoke","has_input":true}"#,
        r#"{"op":"Pop","extra":1}"#,
    ] {
        assert_eq!(fail_one(raw).0, K::UnknownKey, "{raw}");
    }
}

#[test]
fn push_try_finally_is_a_number_or_null() {
    assert_eq!(
        decode_one(r#"{"catch":3,"finally":null,"op":"PushTry"}"#),
        Instruction::PushTry {
            catch: 3,
            finally: None
        }
    );
    assert_eq!(
        decode_one(r#"{"catch":3,"finally":5,"op":"PushTry"}"#),
        Instruction::PushTry {
            catch: 3,
            finally: Some(5)
        }
    );
    assert_eq!(
        reencode_one(Instruction::PushTry {
            catch: 3,
            finally: None
        }),
        r#"{"catch":3,"finally":null,"op":"PushTry"}"#
    );
    assert_eq!(
        fail_one(r#"{"catch":3,"finally":"x","op":"PushTry"}"#).0,
        K::WrongType
    );
}

#[test]
fn every_op_round_trips_with_pascal_case_tag() {
    let all = vec![
        Instruction::Nop,
        Instruction::Jump { target: 1 },
        Instruction::JumpIfTrue { target: 2 },
        Instruction::JumpIfFalse { target: 3 },
        Instruction::Call { func: 4, argc: 5 },
        Instruction::Return,
        Instruction::LoadLocal { local: 6 },
        Instruction::StoreLocal { local: 7 },
        Instruction::LoadConst {
            value: Constant::Undefined,
        },
        Instruction::Pop,
        Instruction::NewObject,
        Instruction::SetProp { key: "k".into() },
        Instruction::GetProp { key: "k".into() },
        Instruction::NewArray,
        Instruction::ArrayPush,
        Instruction::ArrayIndex { index: 8 },
        Instruction::StrictEq,
        Instruction::StrictNeq,
        Instruction::Lt,
        Instruction::Le,
        Instruction::Gt,
        Instruction::Ge,
        Instruction::Not,
        Instruction::Effect { has_input: true },
        Instruction::Sleep,
        Instruction::WaitForEvent,
        Instruction::Invoke { arg_count: 9 },
        Instruction::Fork {
            count: 10,
            join_pc: 11,
        },
        Instruction::JoinAll,
        Instruction::JoinAny,
        Instruction::Throw,
        Instruction::PushTry {
            catch: 12,
            finally: Some(13),
        },
        Instruction::PopTry,
        Instruction::Add,
        Instruction::Sub,
        Instruction::Mul,
        Instruction::Div,
        Instruction::Rem,
        Instruction::Neg,
        Instruction::Pow,
        Instruction::FloorDiv,
        Instruction::GetIndex,
        Instruction::SetIndex,
        Instruction::Length,
        Instruction::WatchIter,
        Instruction::UnwatchIter,
        Instruction::Same,
        Instruction::NewCell,
        Instruction::NewEnv { count: 14 },
        Instruction::NewClosure { func: 15 },
        Instruction::EnvGet { index: 16 },
        Instruction::EnvSet { index: 17 },
        Instruction::EnvSlot { index: 18 },
        Instruction::CallClosure { argc: 19 },
        Instruction::LoadFunc { func: 20 },
    ];
    let names: Vec<&str> = all.iter().map(Instruction::name).collect();
    assert_eq!(names, tcc_ir::instruction::OP_NAMES);
    let a = with_code(all);
    let text = json(&a);
    for name in tcc_ir::instruction::OP_NAMES {
        assert!(text.contains(&format!("\"op\":\"{name}\"")), "{name}");
    }
    assert_eq!(decode_artifact(text.as_bytes()).unwrap(), a);
}

#[test]
fn missing_envelope_program_and_function_keys_are_invalid() {
    let text = json(&base());
    for key in [
        "artifact_hash",
        "engine_format_version",
        "frontend_id",
        "frontend_version",
        "language_semantics_version",
        "required_engine_features",
        "required_host_capabilities",
        "runtime_modules",
        "entry",
        "functions",
        "id",
        "name",
        "param_count",
        "local_count",
        "instructions",
        "spans",
    ] {
        let renamed = text.replacen(&format!("\"{key}\":"), "\"zz_renamed\":", 1);
        let (kind, _) = fail(&renamed);
        // Renaming makes the key unknown, which is reported first …
        assert_eq!(kind, K::UnknownKey, "{key}");
        // … and removing it outright reports it missing.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let removed = remove_key(v, key).to_string();
        let (kind, _) = fail(&removed);
        assert_eq!(kind, K::MissingKey, "{key}");
    }
    assert_eq!(
        fail(r#"{"program":{"entry":0,"functions":[]}}"#).0,
        K::MissingKey
    );
    assert_eq!(fail(r#"{}"#).0, K::MissingKey);
}

fn remove_key(v: serde_json::Value, key: &str) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(mut m) => {
            if m.shift_remove(key).is_some() {
                return Value::Object(m);
            }
            for (_, child) in m.iter_mut() {
                let before = child.clone();
                let after = remove_key(before.clone(), key);
                if after != before {
                    *child = after;
                    break;
                }
            }
            Value::Object(m)
        }
        Value::Array(mut a) => {
            for child in a.iter_mut() {
                let before = child.clone();
                let after = remove_key(before.clone(), key);
                if after != before {
                    *child = after;
                    break;
                }
            }
            Value::Array(a)
        }
        other => other,
    }
}

#[test]
fn missing_span_and_runtime_module_keys_are_invalid() {
    let mut a = base();
    a.program.functions[0].spans[0] = Some(tcc_ir::Span {
        file: "a.ts".into(),
        start_line: 1,
        start_column: 2,
        end_line: 3,
        end_column: 4,
    });
    a.envelope.runtime_modules.push(tcc_ir::RuntimeModule {
        id: "m".into(),
        kind: "k".into(),
    });
    let text = json(&a);
    assert_eq!(decode_artifact(text.as_bytes()).unwrap(), a);
    for key in [
        "file",
        "start_line",
        "start_column",
        "end_line",
        "end_column",
        "kind",
    ] {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (kind, path) = fail(&remove_key(v, key).to_string());
        assert_eq!(kind, K::MissingKey, "{key}");
        assert!(
            path.ends_with("spans[0]") || path.ends_with("runtime_modules[0]"),
            "{path}"
        );
    }
}

#[test]
fn wrong_json_types_are_invalid_with_their_path() {
    let text = json(&base());
    for (from, to, path) in [
        (
            "\"engine_format_version\":1",
            "\"engine_format_version\":\"1\"",
            "$.envelope.engine_format_version",
        ),
        (
            "\"frontend_id\":\"typescript\"",
            "\"frontend_id\":7",
            "$.envelope.frontend_id",
        ),
        (
            "\"required_engine_features\":[\"ts.control_flow\"]",
            "\"required_engine_features\":\"ts.control_flow\"",
            "$.envelope.required_engine_features",
        ),
        (
            "\"required_host_capabilities\":[\"host.persist_checkpoint\"]",
            "\"required_host_capabilities\":[1]",
            "$.envelope.required_host_capabilities[0]",
        ),
        (
            "\"runtime_modules\":[]",
            "\"runtime_modules\":{}",
            "$.envelope.runtime_modules",
        ),
        ("\"entry\":0", "\"entry\":null", "$.program.entry"),
        (
            "\"functions\":[",
            "\"functions\":[[],",
            "$.program.functions[0]",
        ),
        (
            "\"name\":\"run\"",
            "\"name\":[\"run\"]",
            "$.program.functions[0].name",
        ),
        (
            "\"spans\":[null",
            "\"spans\":[false",
            "$.program.functions[0].spans[0]",
        ),
        (
            "{\"local\":0,",
            "{\"local\":\"0\",",
            "$.program.functions[0].instructions[0].local",
        ),
        (
            "{\"local\":0,\"op\":\"LoadLocal\"}",
            "\"LoadLocal\"",
            "$.program.functions[0].instructions[0]",
        ),
        (
            "\"op\":\"Return\"",
            "\"op\":5",
            "$.program.functions[0].instructions[3].op",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let (kind, got) = fail(&text.replacen(from, to, 1));
        assert_eq!(kind, K::WrongType, "{to}");
        assert_eq!(got, path, "{to}");
    }
    assert_eq!(fail("[]").0, K::WrongType);
    assert_eq!(fail("\"x\"").0, K::WrongType);
}

#[test]
fn unknown_and_duplicate_keys_are_invalid() {
    let text = json(&base());
    let (kind, path) = fail(&text.replacen("{\"envelope\":", "{\"extra\":1,\"envelope\":", 1));
    assert_eq!((kind, path.as_str()), (K::UnknownKey, "$"));
    let (kind, path) = fail(&text.replacen("\"entry\":0", "\"entry\":0,\"entry\":0", 1));
    assert_eq!((kind, path.as_str()), (K::DuplicateKey, "$.program"));
    let (kind, _) = fail(&text.replacen("\"id\":0", "\"id\":0,\"id\":1", 1));
    assert_eq!(kind, K::DuplicateKey);
    let (kind, _) = fail(&text.replacen("{\"local\":0,", "{\"local\":0,\"local\":0,", 1));
    assert_eq!(kind, K::DuplicateKey);
    let (kind, _) = fail(&text.replacen("\"frontend_id\"", "\"frontend_ID\"", 1));
    assert_eq!(kind, K::UnknownKey);
}

#[test]
fn json_syntax_errors_are_invalid_not_panics() {
    let text = json(&base());
    for bad in [
        String::new(),
        " ".into(),
        "{".into(),
        text[..text.len() - 1].to_string(),
        format!("{text} x"),
        format!("{text}{text}"),
        text.replacen(',', ",,", 1),
        text.replacen(':', "", 1),
        text.replacen("}", ",}", 1),
        format!("\u{feff}{text}"),
        text.replacen("\"run\"", "\"r\nun\"", 1),
        text.replacen("\"run\"", "\"r\\qun\"", 1),
        text.replacen("\"run\"", "\"r\\u12\"", 1),
    ] {
        let (kind, _) = fail(&bad);
        assert!(
            matches!(kind, K::Syntax | K::WrongType),
            "{bad:?}: {kind:?}"
        );
    }
    // Invalid UTF-8 is rejected with the offset of the first bad byte.
    let mut bytes = text.clone().into_bytes();
    let at = text.find("run").unwrap();
    bytes[at] = 0xff;
    match decode_artifact(&bytes) {
        Err(IrError::InvalidEncoding { kind, offset, .. }) => {
            assert_eq!(kind, K::Syntax);
            assert_eq!(offset, at);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn whitespace_and_key_order_are_free() {
    let a = base();
    let text = json(&a);
    let spaced = text
        .replace(',', " ,\n\t")
        .replace(':', "\r\n: ")
        .replace('{', "{ ");
    assert_eq!(decode_artifact(spaced.as_bytes()).unwrap(), a);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let reversed = reverse_keys(v).to_string();
    assert_ne!(reversed, text);
    assert_eq!(decode_artifact(reversed.as_bytes()).unwrap(), a);
}

fn reverse_keys(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut items: Vec<(String, Value)> = m.into_iter().collect();
            items.reverse();
            Value::Object(
                items
                    .into_iter()
                    .map(|(k, v)| (k, reverse_keys(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.into_iter().map(reverse_keys).collect()),
        other => other,
    }
}

// ---- strings ----

#[test]
fn unicode_strings_and_escapes_decode_correctly() {
    let cases = [
        (r#""caf\u00e9""#, "café"),
        (r#""\u2603 snow""#, "☃ snow"),
        (r#""\ud83d\ude00""#, "😀"),
        (r#""\uD83D\uDE00x""#, "😀x"),
        (r#""raw é 😀 ☃""#, "raw é 😀 ☃"),
        (r#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{c}\n\r\t"),
        (r#""\u0000""#, "\0"),
        (r#""a\u0041b""#, "aAb"),
    ];
    for (lit, want) in cases {
        let ins = decode_one(&format!(r#"{{"key":{lit},"op":"GetProp"}}"#));
        assert_eq!(ins, Instruction::GetProp { key: want.into() }, "{lit}");
    }
}

#[test]
fn lone_surrogates_are_invalid() {
    for lit in [
        r#""\ud83d""#,
        r#""\ud83dx""#,
        r#""\ude00""#,
        r#""\ud83d\u0041""#,
        r#""\ud83d\ud83d""#,
    ] {
        let (kind, _) = fail_one(&format!(r#"{{"key":{lit},"op":"GetProp"}}"#));
        assert_eq!(kind, K::Syntax, "{lit}");
    }
}

#[test]
fn strings_re_encode_with_canonical_escapes() {
    let key = "q\"b\\n\nr\rt\t\u{1}\u{7f}\u{85}\u{a0}/é😀".to_string();
    assert_eq!(
        reencode_one(Instruction::GetProp { key: key.clone() }),
        "{\"key\":\"q\\\"b\\\\n\\nr\\rt\\t\\u0001\\u007f\\u0085\u{a0}/é😀\",\"op\":\"GetProp\"}"
    );
    let back = decode_one(&reencode_one(Instruction::GetProp { key: key.clone() }));
    assert_eq!(back, Instruction::GetProp { key });
}

#[test]
fn param_defaults_are_written_only_when_some_entry_is_set() {
    let mut a = base();
    a.program.functions[0].param_defaults = Some(vec![None]);
    let text = json(&a);
    assert!(!text.contains("param_defaults"));
    a.program.functions[0].param_defaults = Some(vec![Some(Constant::Number(3.0))]);
    let text = json(&a);
    assert!(text.contains(r#""param_count":1,"param_defaults":[{"t":"number","v":3}],"spans""#));
    assert_eq!(decode_artifact(text.as_bytes()).unwrap(), a);
    // An all-null array decodes as absent.
    let all_null = text.replace(r#"[{"t":"number","v":3}]"#, "[null]");
    let back = decode_artifact(all_null.as_bytes()).unwrap();
    assert_eq!(back.program.functions[0].param_defaults, None);
}

#[test]
fn errors_carry_byte_offsets() {
    let text = json(&base());
    let bad = text.replacen("\"op\":\"Return\"", "\"op\":\"Retrun\"", 1);
    match decode_artifact(bad.as_bytes()) {
        Err(IrError::InvalidEncoding { offset, .. }) => {
            assert_eq!(&bad[offset..offset + 8], "\"Retrun\"");
        }
        other => panic!("{other:?}"),
    }
}
