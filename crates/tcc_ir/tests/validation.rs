//! One negative test (at least) per validation rule, plus the boundaries
//! that must still pass.

mod common;

use common::{base, with_code};
use tcc_ir::validate::{MAX_FUNCTIONS, MAX_INSTRUCTIONS, MAX_LOCALS, MAX_STRING_BYTES};
use tcc_ir::{
    Artifact, Constant, FeatureSet, Function, Instruction, Location, ValidationError as V,
    validate, validate_all,
};

fn all() -> (FeatureSet, FeatureSet) {
    (
        FeatureSet::all_engine_features(),
        FeatureSet::all_host_capabilities(),
    )
}

fn errors(a: &Artifact) -> Vec<V> {
    let (e, h) = all();
    validate_all(a, &e, &h)
}

fn codes(a: &Artifact) -> Vec<&'static str> {
    errors(a).iter().map(V::code).collect()
}

fn ok(a: &Artifact) {
    let (e, h) = all();
    assert_eq!(validate(a, &e, &h), Ok(()), "{a:#?}");
}

fn at(pc: Option<u32>) -> Location {
    Location {
        function: 0,
        function_index: 0,
        pc,
    }
}

#[test]
fn base_is_valid() {
    ok(&base());
}

#[test]
fn engine_format_version_must_be_1() {
    for v in [0, 2, u32::MAX] {
        let mut a = base();
        a.envelope.engine_format_version = v;
        assert_eq!(errors(&a), vec![V::UnsupportedFormatVersion { found: v }]);
    }
}

#[test]
fn artifact_hash_must_be_non_empty() {
    let mut a = base();
    a.envelope.artifact_hash.clear();
    assert_eq!(errors(&a), vec![V::EmptyArtifactHash]);
    // Validation does not re-hash: any non-empty hash passes.
    a.envelope.artifact_hash = "not-a-real-hash".into();
    ok(&a);
}

#[test]
fn frontend_id_must_be_non_empty_but_is_not_allowlisted() {
    let mut a = base();
    a.envelope.frontend_id.clear();
    assert_eq!(errors(&a), vec![V::EmptyFrontendId]);
    a.envelope.frontend_id = "my-own-frontend".into();
    ok(&a);
}

#[test]
fn semantics_version_must_be_known() {
    for good in ["ts.subset.v1", "py.subset.v1", "rust.subset.v1"] {
        let mut a = base();
        a.envelope.language_semantics_version = good.into();
        ok(&a);
    }
    for bad in ["", "ts.subset.v2", "TS.SUBSET.V1", "go.subset.v1"] {
        let mut a = base();
        a.envelope.language_semantics_version = bad.into();
        assert_eq!(
            errors(&a),
            vec![V::UnknownSemanticsVersion { found: bad.into() }]
        );
    }
}

#[test]
fn unknown_engine_features_are_rejected() {
    let mut a = base();
    a.envelope
        .required_engine_features
        .push("durable.teleport".into());
    assert_eq!(
        errors(&a),
        vec![V::UnknownEngineFeature {
            feature: "durable.teleport".into()
        }]
    );
}

#[test]
fn unsupported_engine_features_are_rejected() {
    let mut a = base();
    a.envelope
        .required_engine_features
        .push("durable.sleep".into());
    let engine = FeatureSet::new(["ts.control_flow"]);
    let host = FeatureSet::all_host_capabilities();
    assert_eq!(
        validate(&a, &engine, &host),
        Err(V::UnsupportedEngineFeature {
            feature: "durable.sleep".into()
        })
    );
    // An unknown id supplied by the engine does not make it known.
    a.envelope.required_engine_features = vec!["x.y".into()];
    let engine = FeatureSet::new(["x.y"]);
    assert_eq!(
        validate(&a, &engine, &host),
        Err(V::UnknownEngineFeature {
            feature: "x.y".into()
        })
    );
}

#[test]
fn unknown_and_unsupported_host_capabilities_are_rejected() {
    let mut a = base();
    a.envelope
        .required_host_capabilities
        .push("host.magic".into());
    assert_eq!(
        errors(&a),
        vec![V::UnknownHostCapability {
            capability: "host.magic".into()
        }]
    );
    let mut a = base();
    a.envelope
        .required_host_capabilities
        .push("host.timer".into());
    let engine = FeatureSet::all_engine_features();
    let host = FeatureSet::new(["host.persist_checkpoint"]);
    assert_eq!(
        validate(&a, &engine, &host),
        Err(V::UnsupportedHostCapability {
            capability: "host.timer".into()
        })
    );
}

#[test]
fn program_must_not_be_empty() {
    let mut a = base();
    a.program.functions.clear();
    assert_eq!(errors(&a), vec![V::EmptyProgram]);
}

#[test]
fn function_ids_must_be_unique() {
    let mut a = base();
    let mut g = a.program.functions[0].clone();
    g.name = "again".into();
    a.program.functions.push(g);
    assert_eq!(
        errors(&a),
        vec![V::DuplicateFunctionId {
            id: 0,
            first: 0,
            second: 1
        }]
    );
}

#[test]
fn entry_function_must_exist() {
    let mut a = base();
    a.program.entry = 5;
    assert_eq!(errors(&a), vec![V::MissingEntry { entry: 5 }]);
    // Ids are not positions: entry 5 is fine when function 5 exists anywhere.
    a.program.functions[0].id = 5;
    ok(&a);
}

#[test]
fn jump_targets_must_be_in_range() {
    for (ins, field) in [
        (Instruction::Jump { target: 2 }, "target"),
        (Instruction::JumpIfTrue { target: 2 }, "target"),
        (Instruction::JumpIfFalse { target: 2 }, "target"),
    ] {
        let op = ins.name();
        let a = with_code(vec![ins, Instruction::Return]);
        assert_eq!(
            errors(&a),
            vec![V::TargetOutOfRange {
                at: at(Some(0)),
                op,
                field,
                target: 2,
                len: 2
            }]
        );
    }
    // The last pc is in range.
    ok(&with_code(vec![
        Instruction::Jump { target: 1 },
        Instruction::Return,
    ]));
}

#[test]
fn try_targets_must_be_in_range() {
    let a = with_code(vec![
        Instruction::PushTry {
            catch: 9,
            finally: Some(10),
        },
        Instruction::Return,
    ]);
    let mut a = a;
    a.envelope
        .required_engine_features
        .push("ts.exceptions".into());
    assert_eq!(codes(&a), vec!["TCC-V012", "TCC-V012"]);
    a.program.functions[0].instructions[0] = Instruction::PushTry {
        catch: 1,
        finally: None,
    };
    ok(&a);
}

#[test]
fn fork_join_pc_must_be_in_range() {
    let mut a = with_code(vec![
        Instruction::Fork {
            count: 1,
            join_pc: 3,
        },
        Instruction::JoinAll,
        Instruction::Return,
    ]);
    a.envelope
        .required_engine_features
        .push("durable.concurrent_group".into());
    assert_eq!(
        errors(&a),
        vec![V::TargetOutOfRange {
            at: at(Some(0)),
            op: "Fork",
            field: "join_pc",
            target: 3,
            len: 3
        }]
    );
}

#[test]
fn locals_must_be_below_local_count() {
    for ins in [
        Instruction::LoadLocal { local: 2 },
        Instruction::StoreLocal { local: 2 },
        Instruction::LoadLocal { local: u32::MAX },
    ] {
        let op = ins.name();
        let local = ins.local_operand().unwrap();
        let a = with_code(vec![ins, Instruction::Return]);
        assert_eq!(
            errors(&a),
            vec![V::LocalOutOfRange {
                at: at(Some(0)),
                op,
                local,
                local_count: 2
            }]
        );
    }
}

#[test]
fn param_count_must_not_exceed_local_count() {
    let mut a = base();
    a.program.functions[0].param_count = 3;
    assert_eq!(
        errors(&a),
        vec![V::ParamCountExceedsLocals {
            at: at(None),
            param_count: 3,
            local_count: 2
        }]
    );
}

#[test]
fn span_count_must_equal_instruction_count() {
    let mut a = base();
    a.program.functions[0].spans.pop();
    assert_eq!(
        errors(&a),
        vec![V::SpanCountMismatch {
            at: at(None),
            spans: 3,
            instructions: 4
        }]
    );
    a.program.functions[0].spans.extend([None, None]);
    assert_eq!(codes(&a), vec!["TCC-V015"]);
}

#[test]
fn param_defaults_length_must_equal_param_count() {
    let mut a = base();
    a.program.functions[0].param_defaults = Some(vec![Some(Constant::Null), None]);
    assert_eq!(
        errors(&a),
        vec![V::ParamDefaultsMismatch {
            at: at(None),
            defaults: 2,
            param_count: 1
        }]
    );
    a.program.functions[0].param_defaults = Some(vec![Some(Constant::Null)]);
    ok(&a);
}

#[test]
fn call_targets_must_exist() {
    let a = with_code(vec![
        Instruction::Call { func: 7, argc: 0 },
        Instruction::Return,
    ]);
    assert_eq!(
        errors(&a),
        vec![V::UnknownFunction {
            at: at(Some(0)),
            op: "Call",
            func: 7
        }]
    );
    let mut b = a.clone();
    let mut callee = b.program.functions[0].clone();
    callee.id = 7;
    b.program.functions.push(callee);
    ok(&b);
}

#[test]
fn closure_and_function_refs_must_exist() {
    let mut a = with_code(vec![
        Instruction::NewClosure { func: 3 },
        Instruction::LoadFunc { func: 4 },
        Instruction::Return,
    ]);
    a.envelope
        .required_engine_features
        .push("lang.compute".into());
    assert_eq!(codes(&a), vec!["TCC-V017", "TCC-V017"]);
}

#[test]
fn fork_count_must_be_1_through_32() {
    for (count, valid) in [
        (0, false),
        (1, true),
        (32, true),
        (33, false),
        (u32::MAX, false),
    ] {
        let mut a = with_code(vec![
            Instruction::Fork { count, join_pc: 1 },
            Instruction::JoinAny,
            Instruction::Return,
        ]);
        a.envelope
            .required_engine_features
            .push("durable.concurrent_group".into());
        if valid {
            ok(&a);
        } else {
            assert_eq!(
                errors(&a),
                vec![V::ForkCountOutOfRange {
                    at: at(Some(0)),
                    count
                }]
            );
        }
    }
}

#[test]
fn fork_and_joins_require_the_concurrent_group_feature() {
    for ins in [
        Instruction::Fork {
            count: 1,
            join_pc: 1,
        },
        Instruction::JoinAll,
        Instruction::JoinAny,
    ] {
        let op = ins.name();
        let a = with_code(vec![ins, Instruction::JoinAll, Instruction::Return]);
        let errs = errors(&a);
        assert_eq!(
            errs[0],
            V::UndeclaredFeature {
                at: at(Some(0)),
                op,
                feature: "durable.concurrent_group"
            }
        );
        // Reported once per function, not once per instruction.
        assert_eq!(errs.len(), 1, "{errs:?}");
    }
}

#[test]
fn compute_ops_require_the_lang_compute_feature() {
    let mut a = with_code(vec![
        Instruction::LoadLocal { local: 0 },
        Instruction::LoadLocal { local: 0 },
        Instruction::Add,
        Instruction::Return,
    ]);
    assert_eq!(
        errors(&a),
        vec![V::UndeclaredFeature {
            at: at(Some(2)),
            op: "Add",
            feature: "lang.compute"
        }]
    );
    a.envelope
        .required_engine_features
        .push("lang.compute".into());
    ok(&a);
}

#[test]
fn at_most_1024_functions() {
    let mut a = base();
    let f = a.program.functions[0].clone();
    a.program.functions = (0..MAX_FUNCTIONS as u32)
        .map(|id| Function { id, ..f.clone() })
        .collect();
    ok(&a);
    a.program.functions.push(Function {
        id: MAX_FUNCTIONS as u32,
        ..f
    });
    assert_eq!(
        errors(&a),
        vec![V::TooManyFunctions {
            count: 1025,
            max: 1024
        }]
    );
}

#[test]
fn at_most_100000_instructions_per_function() {
    let mut code = vec![Instruction::Nop; MAX_INSTRUCTIONS - 1];
    code.push(Instruction::Return);
    let a = with_code(code.clone());
    ok(&a);
    code.push(Instruction::Return);
    let a = with_code(code);
    assert_eq!(
        errors(&a),
        vec![V::TooManyInstructions {
            at: at(None),
            count: 100_001,
            max: 100_000
        }]
    );
}

#[test]
fn at_most_4096_locals() {
    let mut a = base();
    a.program.functions[0].local_count = MAX_LOCALS;
    ok(&a);
    a.program.functions[0].local_count = MAX_LOCALS + 1;
    assert_eq!(
        errors(&a),
        vec![V::TooManyLocals {
            at: at(None),
            count: 4097,
            max: 4096
        }]
    );
}

#[test]
fn const_strings_and_keys_are_capped_in_bytes() {
    // 'é' is two bytes: 524_288 of them are exactly 1 MiB.
    let at_cap = "é".repeat(MAX_STRING_BYTES / 2);
    let over = format!("{at_cap}x");
    for (make, what) in [
        (
            (|s: String| Instruction::LoadConst {
                value: Constant::String(s),
            }) as fn(String) -> Instruction,
            "const string",
        ),
        (|s: String| Instruction::SetProp { key: s }, "property key"),
        (|s: String| Instruction::GetProp { key: s }, "property key"),
    ] {
        ok(&with_code(vec![make(at_cap.clone()), Instruction::Return]));
        let a = with_code(vec![make(over.clone()), Instruction::Return]);
        assert_eq!(
            errors(&a),
            vec![V::StringTooLong {
                at: at(Some(0)),
                what,
                bytes: MAX_STRING_BYTES + 1,
                max: MAX_STRING_BYTES
            }]
        );
    }
}

#[test]
fn every_error_is_reported_in_order_and_validate_returns_the_first() {
    let mut a = with_code(vec![
        Instruction::Jump { target: 40 },
        Instruction::LoadLocal { local: 9 },
        Instruction::Call { func: 3, argc: 0 },
    ]);
    a.envelope.frontend_id.clear();
    a.envelope.engine_format_version = 2;
    assert_eq!(
        codes(&a),
        vec!["TCC-V001", "TCC-V003", "TCC-V012", "TCC-V013", "TCC-V017"]
    );
    let (e, h) = all();
    assert_eq!(
        validate(&a, &e, &h).unwrap_err(),
        V::UnsupportedFormatVersion { found: 2 }
    );
}

#[test]
fn error_messages_name_function_and_pc() {
    let a = with_code(vec![Instruction::Jump { target: 40 }]);
    let message = errors(&a)[0].to_string();
    assert_eq!(
        message,
        "function 0 pc 0: Jump target 40 is out of range (function has 1 instructions)"
    );
}

#[test]
fn codes_are_distinct() {
    let mut seen = std::collections::BTreeSet::new();
    let samples = [
        V::UnsupportedFormatVersion { found: 0 },
        V::EmptyArtifactHash,
        V::EmptyFrontendId,
        V::UnknownSemanticsVersion {
            found: String::new(),
        },
        V::UnknownEngineFeature {
            feature: String::new(),
        },
        V::UnsupportedEngineFeature {
            feature: String::new(),
        },
        V::UnknownHostCapability {
            capability: String::new(),
        },
        V::UnsupportedHostCapability {
            capability: String::new(),
        },
        V::EmptyProgram,
        V::DuplicateFunctionId {
            id: 0,
            first: 0,
            second: 1,
        },
        V::MissingEntry { entry: 0 },
        V::TargetOutOfRange {
            at: at(None),
            op: "",
            field: "",
            target: 0,
            len: 0,
        },
        V::LocalOutOfRange {
            at: at(None),
            op: "",
            local: 0,
            local_count: 0,
        },
        V::ParamCountExceedsLocals {
            at: at(None),
            param_count: 0,
            local_count: 0,
        },
        V::SpanCountMismatch {
            at: at(None),
            spans: 0,
            instructions: 0,
        },
        V::ParamDefaultsMismatch {
            at: at(None),
            defaults: 0,
            param_count: 0,
        },
        V::UnknownFunction {
            at: at(None),
            op: "",
            func: 0,
        },
        V::ForkCountOutOfRange {
            at: at(None),
            count: 0,
        },
        V::UndeclaredFeature {
            at: at(None),
            op: "",
            feature: "",
        },
        V::TooManyFunctions { count: 0, max: 0 },
        V::TooManyInstructions {
            at: at(None),
            count: 0,
            max: 0,
        },
        V::TooManyLocals {
            at: at(None),
            count: 0,
            max: 0,
        },
        V::StringTooLong {
            at: at(None),
            what: "",
            bytes: 0,
            max: 0,
        },
    ];
    for s in &samples {
        assert!(seen.insert(s.code()), "duplicate code {}", s.code());
    }
    assert_eq!(seen.len(), 23);
}

#[test]
fn validate_all_stops_at_the_reporting_cap() {
    let code = vec![Instruction::LoadLocal { local: 99 }; 1000];
    let a = with_code(code);
    let errs = errors(&a);
    assert_eq!(errs.len(), tcc_ir::validate::MAX_REPORTED_ERRORS);
    assert!(errs.iter().all(|e| e.code() == "TCC-V013"));
}

#[test]
fn an_empty_program_still_reports_envelope_errors_first() {
    let mut a = base();
    a.program.functions.clear();
    a.envelope.artifact_hash.clear();
    assert_eq!(codes(&a), vec!["TCC-V002", "TCC-V009"]);
}
