//! Round trips (write → read → write is byte-identical, every shape survives)
//! and arbitrary input (bytes, JSON, mutated libraries) never panicking.

mod common;

use proptest::prelude::*;
use rvnlib::container;
use rvnlib::json;
use rvnlib::*;

// ---------- strategies for arbitrary (not necessarily valid) models ----------

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z_][A-Za-z0-9_.:<>(), ]{0,12}",
        any::<String>(),
        Just("<T>&'\"+`\\\n\t\u{1}\u{7f}é😀".to_string()),
    ]
}

fn any_kind() -> impl Strategy<Value = IrTypeKind> {
    prop::sample::select(IrTypeKind::ALL)
}

fn any_type() -> impl Strategy<Value = LibraryIrTypeReference> {
    let leaf = (
        any_kind(),
        any_kind(),
        any::<i32>(),
        any::<i32>(),
        any::<i32>(),
        prop::option::of(any::<i32>()),
        prop::option::of(any_text()),
        prop::sample::select(IrTextureDimension::ALL),
        prop::option::of(any_text()),
    )
        .prop_map(
            |(kind, component, size, rows, columns, length, struct_key, dimension, format)| {
                LibraryIrTypeReference {
                    kind,
                    component,
                    size,
                    rows,
                    columns,
                    length,
                    element: None,
                    struct_key,
                    dimension,
                    sampled: None,
                    format,
                }
            },
        );
    leaf.prop_recursive(3, 8, 2, |inner| {
        (inner.clone(), prop::option::of(inner), any::<bool>()).prop_map(
            |(mut t, other, as_element)| {
                if as_element {
                    t.element = other.map(Box::new);
                } else {
                    t.sampled = other.map(Box::new);
                }
                t
            },
        )
    })
}

fn any_access() -> impl Strategy<Value = LibraryIrAccess> {
    prop_oneof![
        any::<i32>().prop_map(|index| LibraryIrAccess::Field { index }),
        any::<i32>().prop_map(|index| LibraryIrAccess::Index { index }),
        prop::collection::vec(any::<i32>(), 0..5)
            .prop_map(|components| LibraryIrAccess::Swizzle { components }),
    ]
}

fn any_place() -> impl Strategy<Value = LibraryIrPlace> {
    (any::<i32>(), prop::collection::vec(any_access(), 0..3))
        .prop_map(|(root, chain)| LibraryIrPlace { root, chain })
}

fn any_value() -> impl Strategy<Value = LibraryValue> {
    (
        prop::sample::select(vec!["bool", "int", "uint", "float", "double", "other"]),
        any_text(),
    )
        .prop_map(|(kind, text)| LibraryValue {
            kind: kind.into(),
            text,
        })
}

fn leaf_statement() -> impl Strategy<Value = LibraryIrStatement> {
    let id = any::<i32>;
    prop_oneof![
        (id(), prop::option::of(any_value()))
            .prop_map(|(result, value)| LibraryIrStatement::Constant { result, value }),
        (id(), any_place()).prop_map(|(result, place)| LibraryIrStatement::Load { result, place }),
        (any_place(), id()).prop_map(|(place, value)| LibraryIrStatement::Store { place, value }),
        (id(), prop::sample::select(IrUnaryOp::ALL), id()).prop_map(|(result, op, operand)| {
            LibraryIrStatement::Unary {
                result,
                op,
                operand,
            }
        }),
        (id(), prop::sample::select(IrBinaryOp::ALL), id(), id()).prop_map(
            |(result, op, left, right)| LibraryIrStatement::Binary {
                result,
                op,
                left,
                right
            }
        ),
        (id(), prop::sample::select(IrConversionKind::ALL), id()).prop_map(
            |(result, conversion_kind, operand)| LibraryIrStatement::Convert {
                result,
                conversion_kind,
                operand
            }
        ),
        (
            prop::option::of(id()),
            prop::sample::select(IrIntrinsic::ALL),
            prop::collection::vec(id(), 0..4)
        )
            .prop_map(
                |(result, intrinsic, arguments)| LibraryIrStatement::Intrinsic {
                    result,
                    intrinsic,
                    arguments
                }
            ),
        (
            prop::option::of(id()),
            any_text(),
            prop::collection::vec((prop::option::of(id()), prop::option::of(id())), 0..3)
        )
            .prop_map(|(result, function, args)| LibraryIrStatement::Call {
                result,
                function,
                arguments: args
                    .into_iter()
                    .map(|(value, reference)| LibraryIrArgument { value, reference })
                    .collect(),
            }),
        (id(), prop::collection::vec(id(), 0..4))
            .prop_map(|(result, arguments)| LibraryIrStatement::Construct { result, arguments }),
        (id(), id(), prop::collection::vec(any_access(), 0..3)).prop_map(
            |(result, source, chain)| LibraryIrStatement::Extract {
                result,
                source,
                chain
            }
        ),
        (id(), id(), id(), id()).prop_map(|(result, condition, when_true, when_false)| {
            LibraryIrStatement::Select {
                result,
                condition,
                when_true,
                when_false,
            }
        }),
        prop::option::of(id()).prop_map(|value| LibraryIrStatement::Return { value }),
        Just(LibraryIrStatement::Break),
        Just(LibraryIrStatement::Continue),
        Just(LibraryIrStatement::Discard),
    ]
}

fn any_block() -> impl Strategy<Value = LibraryIrBlock> {
    let statement = leaf_statement().prop_recursive(4, 48, 4, |inner| {
        let block =
            prop::collection::vec(inner, 0..4).prop_map(|statements| LibraryIrBlock { statements });
        prop_oneof![
            block.clone().prop_map(LibraryIrStatement::Block),
            (any::<i32>(), block.clone(), prop::option::of(block.clone())).prop_map(
                |(condition, then, otherwise)| LibraryIrStatement::If {
                    condition,
                    then,
                    otherwise
                }
            ),
            (
                block.clone(),
                any::<i32>(),
                block.clone(),
                prop::option::of(block),
                any::<bool>()
            )
                .prop_map(
                    |(condition, condition_value, body, continuing, test_before_body)| {
                        LibraryIrStatement::Loop {
                            condition,
                            condition_value,
                            body,
                            continuing,
                            test_before_body,
                        }
                    }
                ),
        ]
    });
    prop::collection::vec(statement, 0..6).prop_map(|statements| LibraryIrBlock { statements })
}

fn any_variable() -> impl Strategy<Value = LibraryIrVariable> {
    (any_text(), any_type(), any::<bool>()).prop_map(|(name, ty, by_reference)| LibraryIrVariable {
        name,
        ty,
        by_reference,
    })
}

fn any_function() -> impl Strategy<Value = LibraryIrFunction> {
    (
        any_text(),
        any_text(),
        any_type(),
        prop::collection::vec(any_variable(), 0..3),
        prop::collection::vec(any_variable(), 0..3),
        prop::collection::vec((any::<i32>(), any_type()), 0..4),
        any::<i32>(),
        any_block(),
    )
        .prop_map(
            |(key, name, return_type, parameters, locals, values, value_count, body)| {
                LibraryIrFunction {
                    key,
                    name,
                    return_type,
                    parameters,
                    locals,
                    values: values
                        .into_iter()
                        .map(|(id, ty)| LibraryIrValue { id, ty })
                        .collect(),
                    value_count,
                    body,
                }
            },
        )
}

fn any_struct() -> impl Strategy<Value = LibraryIrStruct> {
    (
        any_text(),
        any_text(),
        prop::collection::vec((any_text(), any_type()), 0..3),
    )
        .prop_map(|(key, name, fields)| LibraryIrStruct {
            key,
            name,
            fields: fields
                .into_iter()
                .map(|(name, ty)| LibraryIrField { name, ty })
                .collect(),
        })
}

fn any_library() -> impl Strategy<Value = CompiledLibrary> {
    (
        any_text(),
        prop::collection::vec(any_struct(), 0..3),
        prop::collection::vec(any_function(), 0..3),
        any_text(),
    )
        .prop_map(|(name, structs, functions, source_hash)| {
            let mut lib = common::core_library();
            lib.name = name;
            lib.ir.structs.extend(structs);
            lib.ir.functions.extend(functions);
            lib.source_hash = source_hash;
            lib
        })
}

/// Arbitrary JSON, to throw at the schema reader.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(serde_json::Value::from),
        any_text().prop_map(serde_json::Value::String),
        prop::sample::select(vec![
            "Vector",
            "Float",
            "block",
            "if",
            "call",
            "field",
            "Add",
            "Texture2D"
        ])
        .prop_map(|s| serde_json::Value::String(s.into())),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let keys = prop::sample::select(vec![
            "Name",
            "Types",
            "Ir",
            "SourceHash",
            "Structs",
            "Functions",
            "Key",
            "Body",
            "Statements",
            "op",
            "Result",
            "Value",
            "Kind",
            "Component",
            "Size",
            "Rows",
            "Columns",
            "Dimension",
            "Place",
            "Root",
            "Chain",
            "at",
            "Index",
            "Then",
            "Else",
            "Condition",
            "ConditionValue",
            "TestBeforeBody",
            "Arguments",
            "Function",
            "Reference",
            "ReturnType",
            "Parameters",
            "Locals",
            "Values",
            "ValueCount",
            "Fields",
            "Type",
            "ByReference",
            "Id",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::vec((keys, inner), 0..6).prop_map(|pairs| serde_json::Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn model_round_trips_through_json_and_container(library in any_library()) {
        for version in [4, 3] {
            let payload = json::to_compact_json(&library, version);
            let back = json::from_json(payload.as_bytes(), version);
            if version == 3 && library.ir.structs.iter().any(|s| s.key != s.name) {
                prop_assert!(container::write_version(&library, 3).is_err());
                continue;
            }
            let back = back.map_err(|e| TestCaseError::fail(format!("{e}")))?;
            prop_assert_eq!(&back, &library);
            prop_assert_eq!(json::to_compact_json(&back, version), payload);
        }
        let bytes = container::write(&library).unwrap();
        let (version, back) = container::read_unverified(&bytes).unwrap();
        prop_assert_eq!(container::write(&back).unwrap(), bytes);
        // Version 3 (Raven's) exactly when every struct key is its name.
        let representable = library.ir.structs.iter().all(|s| s.key == s.name);
        prop_assert_eq!(version, if representable { 3 } else { 4 });
        // A library diffed with itself has no changes; with another, diff is total.
        prop_assert!(rvnlib::diff::diff(&library, &library).changes.is_empty());
        let _ = rvnlib::diff::diff(&library, &common::core_library());
        let _ = rvnlib::diff::diff(&common::core_library(), &library);
        // The verifier must not panic on arbitrary (mostly invalid) IR, and its
        // error list is bounded.
        let errors = verify::verify_library(&library);
        prop_assert!(errors.len() <= verify::MAX_ERRORS);
        // Nor must the walker, the linker or export refusal.
        for f in &library.ir.functions {
            let _ = walk::callees(&f.body);
            let _ = walk::call_graph(&library, &f.key);
        }
        let input = link::LinkInput { origin: "x", library: &library };
        let _ = link::link(&[input, input], &link::LinkOptions { entries: library.ir.functions.iter().map(|f| f.key.clone()).take(1).collect(), ..Default::default() });
    }

    /// `rvn pack`'s reader inverts the inspection JSON (`rvn inspect`):
    /// the library comes back, and so do the container's exact bytes.
    #[test]
    fn the_inspection_json_packs_back(library in any_library()) {
        let text = json::write_json(&library);
        let back = rvnlib::from_inspection_json(text.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        prop_assert_eq!(&back, &library);
        prop_assert_eq!(container::write(&back).unwrap(), container::write(&library).unwrap());
        // Every function is found by its whole key; a lookup never panics.
        for f in &library.ir.functions {
            let found = lookup::find_function(&library.ir.functions, &f.key);
            prop_assert_eq!(found, Ok(f.key.as_str()));
            let _ = lookup::find_function(&library.ir.functions, &f.name);
        }
    }

    /// The inspection reader refuses arbitrary text, and arbitrary edits of a
    /// real inspection JSON, with an error (never a panic); a schema error
    /// names a JSON path and no Rust `Debug` text.
    #[test]
    fn the_inspection_reader_takes_arbitrary_input(
        bytes in proptest::collection::vec(any::<u8>(), 0..256),
        at in any::<proptest::sample::Index>(),
        insert in "[A-Za-z0-9\"{}\\[\\],: ]{0,6}",
        cut in 0usize..8,
    ) {
        let _ = rvnlib::from_inspection_json(&bytes);
        let text = json::write_json(&common::core_library());
        let mut i = at.index(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        let end = (i + cut).min(text.len());
        let end = (end..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap_or(text.len());
        let edited = format!("{}{}{}", &text[..i], insert, &text[end..]);
        if let Err(e) = rvnlib::from_inspection_json(edited.as_bytes()) {
            let message = e.to_string();
            for leak in ["{ ", "Some(", "\\\""] {
                prop_assert!(!message.contains(leak), "{}: {}", leak, message);
            }
            prop_assert!(e.code().starts_with("RVN-JSON-"));
        }
    }

    /// Every float and double reads back from its .NET "R" text to the same
    /// bits, and the exponent form is used exactly at decimal exponents
    /// >= 9 (float) / 17 (double) or <= -5.
    #[test]
    fn float_text_round_trips(bits in any::<u32>(), wide in any::<u64>()) {
        fn check(text: &str, exponent: i64, limit: i64) -> Result<(), TestCaseError> {
            let expected = exponent >= limit || exponent <= -5;
            prop_assert_eq!(text.contains('E'), expected, "{} (exponent {})", text, exponent);
            Ok(())
        }
        let value = f32::from_bits(bits);
        let v = LibraryValue::float(value);
        prop_assert!(v.text_parses(), "{:?}", v);
        if value.is_finite() {
            prop_assert_eq!(v.text.parse::<f32>().unwrap().to_bits(), bits);
            if value != 0.0 {
                let exponent: i64 = format!("{value:e}").split_once('e').unwrap().1.parse().unwrap();
                check(&v.text, exponent, 9)?;
            }
        }
        let value = f64::from_bits(wide);
        let v = LibraryValue::double(value);
        prop_assert!(v.text_parses(), "{:?}", v);
        if value.is_finite() {
            prop_assert_eq!(v.text.parse::<f64>().unwrap().to_bits(), wide);
            if value != 0.0 {
                let exponent: i64 = format!("{value:e}").split_once('e').unwrap().1.parse().unwrap();
                check(&v.text, exponent, 17)?;
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = container::read(&bytes);
        let mut framed = container::MAGIC.to_vec();
        framed.extend_from_slice(&4i32.to_le_bytes());
        framed.extend_from_slice(&(bytes.len() as i32).to_le_bytes());
        framed.extend_from_slice(&bytes);
        let _ = container::read(&framed);
    }

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        let text = value.to_string();
        for version in [3, 4] {
            if let Ok(library) = json::from_json(text.as_bytes(), version) {
                let _ = verify::verify_library(&library);
                let again = json::to_compact_json(&library, version);
                prop_assert!(json::from_json(again.as_bytes(), version).is_ok());
            }
        }
    }

    #[test]
    fn mutated_libraries_never_panic(position in 0usize..20_000, replacement in any_json(), byte in any::<u8>()) {
        let library = common::core_library();
        let payload = json::to_compact_json(&library, 4);
        // Byte-level mutation of a real payload.
        let mut bytes = payload.clone().into_bytes();
        let at = position % bytes.len();
        bytes[at] = byte;
        if let Ok(lib) = json::from_json(&bytes, 4) {
            let _ = verify::verify_library(&lib);
        }
        // Structural mutation: replace one subtree of the real document.
        let mut value: serde_json::Value = serde_json::from_str(&payload).unwrap();
        let mut count = 0usize;
        replace_nth(&mut value, position % 4000, &mut count, &replacement);
        if let Ok(lib) = json::from_json(value.to_string().as_bytes(), 4) {
            let _ = verify::verify_library(&lib);
        }
    }
}

fn replace_nth(
    value: &mut serde_json::Value,
    target: usize,
    count: &mut usize,
    replacement: &serde_json::Value,
) -> bool {
    if *count == target {
        *value = replacement.clone();
        return true;
    }
    *count += 1;
    match value {
        serde_json::Value::Array(items) => items
            .iter_mut()
            .any(|v| replace_nth(v, target, count, replacement)),
        serde_json::Value::Object(map) => map
            .values_mut()
            .any(|v| replace_nth(v, target, count, replacement)),
        _ => false,
    }
}

#[test]
fn every_example_round_trips_byte_identically() {
    let libraries = [
        common::core_library(),
        common::pkg_a(),
        common::pkg_b(),
        common::app(),
        common::collision("ShadersX", true),
    ];
    for library in libraries {
        let bytes = container::write(&library).unwrap();
        let back = container::read(&bytes).unwrap();
        assert_eq!(back, library);
        assert_eq!(container::write(&back).unwrap(), bytes);
    }
    let v3 = container::write_version(&common::legacy_v3(), 3).unwrap();
    let (version, back) = container::read_unverified(&v3).unwrap();
    assert_eq!(version, 3);
    assert_eq!(container::write_version(&back, 3).unwrap(), v3);
    // Version 3 struct identity is the name; writing it as version 4 carries that key.
    let v4 = container::write(&back).unwrap();
    assert_eq!(container::read(&v4).unwrap().ir.structs[0].key, "Light");
}

#[test]
fn every_statement_shape_survives_the_round_trip() {
    let core = common::core_library();
    let bytes = container::write(&core).unwrap();
    let back = container::read(&bytes).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for f in &back.ir.functions {
        walk::for_each_statement(&f.body, &mut |s| {
            kinds.insert(s.kind());
        });
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        StatementKind::ALL.to_vec()
    );
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    // 10 000 nested blocks: refused by the depth limit before any recursion.
    let mut text = String::from(
        r#"{"Name":"D","Types":[],"Ir":{"Structs":[],"Functions":[{"Key":"k","Name":"k","ReturnType":{"Kind":"Void","Component":"Void","Size":0,"Rows":0,"Columns":0,"Dimension":"Texture2D"},"Parameters":[],"Locals":[],"Values":[],"ValueCount":0,"Body":{"Statements":["#,
    );
    for _ in 0..10_000 {
        text.push_str(r#"{"op":"block","Statements":["#);
    }
    for _ in 0..10_000 {
        text.push_str("]}");
    }
    text.push_str(r#"]}}]},"SourceHash":""}"#);
    let error = json::from_json(text.as_bytes(), 4).unwrap_err();
    assert!(matches!(error, json::JsonError::TooDeep { .. }), "{error}");
}
