//! Instructions, language rules and exceptions.
mod common;
use common::*;
use serde_json::json;
use tcc_engine::{EngineError, FatalKind, Limits, Outcome};

fn fatal_kind(p: std::sync::Arc<tcc_engine::Program>) -> FatalKind {
    let mut e = start(p);
    loop {
        match e.run_until_host(1_000_000) {
            Err(EngineError::Fatal { kind, site, .. }) => {
                assert!(site.is_some(), "fatal errors carry a site");
                return kind;
            }
            Ok(Outcome::Host(tcc_engine::HostRequest::PersistCheckpoint { revision, .. })) => {
                e.respond(tcc_engine::HostResponse::PersistConfirmed { revision })
                    .unwrap();
            }
            other => panic!("expected a fatal error, got {other:?}"),
        }
    }
}

#[test]
fn compute_loop_sums() {
    // s = 0; i = 0; while (i < 10) { s = s + i; i = i + 1 } return s
    let p = ts(
        vec![
            c_num(0.0),
            I::StoreLocal { local: 0 },
            c_num(0.0),
            I::StoreLocal { local: 1 },
            I::LoadLocal { local: 1 },
            c_num(10.0),
            I::Lt,
            I::JumpIfFalse { target: 17 },
            I::LoadLocal { local: 0 },
            I::LoadLocal { local: 1 },
            I::Add,
            I::StoreLocal { local: 0 },
            I::LoadLocal { local: 1 },
            c_num(1.0),
            I::Add,
            I::StoreLocal { local: 1 },
            I::Jump { target: 4 },
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        2,
    );
    assert_eq!(eval(p), num(45.0));
}

#[test]
fn objects_arrays_and_index() {
    let p = ts(
        vec![
            I::NewObject,
            c_num(1.0),
            I::SetProp { key: "a".into() },
            I::GetProp { key: "a".into() },
            I::StoreLocal { local: 0 },
            I::NewArray,
            c_num(7.0),
            I::ArrayPush,
            c_str("x"),
            I::ArrayPush,
            I::ArrayIndex { index: 1 },
            I::StoreLocal { local: 1 },
            I::ArrayIndex { index: 9 },
            I::StoreLocal { local: 2 },
            I::Pop,
            I::NewArray,
            I::LoadLocal { local: 0 },
            I::ArrayPush,
            I::LoadLocal { local: 1 },
            I::ArrayPush,
            I::LoadLocal { local: 2 },
            I::ArrayPush,
            I::Return,
        ],
        3,
    );
    assert_eq!(
        eval(p),
        json!({"t":"array","v":[num(1.0), string("x"), {"t":"undefined"}]})
    );
}

#[test]
fn getprop_missing_is_undefined_and_non_ref_is_fatal() {
    assert_eq!(
        eval(ts(
            vec![I::NewObject, I::GetProp { key: "zz".into() }, I::Return],
            0
        )),
        json!({"t":"undefined"})
    );
    assert_eq!(
        fatal_kind(ts(
            vec![c_num(1.0), I::GetProp { key: "a".into() }, I::Return],
            0
        )),
        FatalKind::TypeError
    );
    assert_eq!(
        fatal_kind(ts(vec![I::Pop, I::Return], 0)),
        FatalKind::StackUnderflow
    );
}

fn eq_program(lang: &str, op: I) -> std::sync::Arc<tcc_engine::Program> {
    // [1] op [1] (two distinct arrays), NaN op NaN, 0 op -0, true op 1
    let code = vec![
        I::NewArray,
        c_num(1.0),
        I::ArrayPush,
        I::NewArray,
        c_num(1.0),
        I::ArrayPush,
        op.clone(),
        I::StoreLocal { local: 0 },
        c_num(f64::NAN),
        c_num(f64::NAN),
        op.clone(),
        I::StoreLocal { local: 1 },
        c_num(0.0),
        c_num(-0.0),
        op.clone(),
        I::StoreLocal { local: 2 },
        c_bool(true),
        c_num(1.0),
        op,
        I::StoreLocal { local: 3 },
        I::NewArray,
        I::LoadLocal { local: 0 },
        I::ArrayPush,
        I::LoadLocal { local: 1 },
        I::ArrayPush,
        I::LoadLocal { local: 2 },
        I::ArrayPush,
        I::LoadLocal { local: 3 },
        I::ArrayPush,
        I::Return,
    ];
    program(lang, vec![func(0, 0, 4, code)])
}

fn bools(v: &[bool]) -> serde_json::Value {
    json!({"t":"array","v": v.iter().map(|b| json!({"t":"bool","v":b})).collect::<Vec<_>>()})
}

#[test]
fn equality_per_language() {
    assert_eq!(
        eval(eq_program("ts.subset.v1", I::StrictEq)),
        bools(&[false, false, true, false])
    );
    assert_eq!(
        eval(eq_program("ts.subset.v1", I::StrictNeq)),
        bools(&[true, true, false, true])
    );
    assert_eq!(
        eval(eq_program("py.subset.v1", I::StrictEq)),
        bools(&[true, false, true, true])
    );
    assert_eq!(
        eval(eq_program("rust.subset.v1", I::StrictEq)),
        bools(&[false, false, true, false])
    );
}

#[test]
fn python_equality_on_a_cycle_is_fatal() {
    // a = []; a.push(a); b = []; b.push(b); a == b
    let code = vec![
        I::NewArray,
        I::StoreLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::ArrayPush,
        I::Pop,
        I::NewArray,
        I::StoreLocal { local: 1 },
        I::LoadLocal { local: 1 },
        I::LoadLocal { local: 1 },
        I::ArrayPush,
        I::Pop,
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 1 },
        I::StrictEq,
        I::Return,
    ];
    assert_eq!(
        fatal_kind(program("py.subset.v1", vec![func(0, 0, 2, code.clone())])),
        FatalKind::Cycle
    );
    // TS compares references: no walk, no error.
    assert_eq!(
        eval(program("ts.subset.v1", vec![func(0, 0, 2, code)])),
        json!({"t":"bool","v":false})
    );
}

#[test]
fn python_equality_of_a_container_with_itself_is_true() {
    // a = [NaN]; a.push(a); a == a  (CPython: True, by element identity)
    let code = vec![
        I::NewArray,
        c_num(f64::NAN),
        I::ArrayPush,
        I::StoreLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::ArrayPush,
        I::Pop,
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::StrictEq,
        I::Return,
    ];
    assert_eq!(
        eval(program("py.subset.v1", vec![func(0, 0, 1, code)])),
        json!({"t":"bool","v":true})
    );
    // NaN itself is still unequal to itself.
    let nan = vec![c_num(f64::NAN), c_num(f64::NAN), I::StrictEq, I::Return];
    assert_eq!(
        eval(program("py.subset.v1", vec![func(0, 0, 0, nan)])),
        json!({"t":"bool","v":false})
    );
}

#[test]
fn comparisons_require_numbers_and_are_not_catchable() {
    let p = ts(
        vec![
            I::PushTry {
                catch: 5,
                finally: None,
            },
            c_str("a"),
            c_num(1.0),
            I::Lt,
            I::Return,
            c_str("caught"),
            I::Return,
        ],
        0,
    );
    assert_eq!(fatal_kind(p), FatalKind::TypeError);
    assert_eq!(
        eval(ts(vec![c_num(1.0), c_num(2.0), I::Le, I::Return], 0)),
        json!({"t":"bool","v":true})
    );
    assert_eq!(
        eval(ts(vec![c_num(f64::NAN), c_num(2.0), I::Ge, I::Return], 0)),
        json!({"t":"bool","v":false})
    );
}

#[test]
fn truthiness_and_not() {
    for (c, expect) in [
        (c_num(-0.0), true),
        (c_str(""), true),
        (c_str("x"), false),
        (c_undef(), true),
        (c_num(3.0), false),
    ] {
        assert_eq!(
            eval(ts(vec![c, I::Not, I::Return], 0)),
            json!({"t":"bool","v":expect})
        );
    }
    assert_eq!(
        eval(ts(vec![I::NewObject, I::Not, I::Return], 0)),
        json!({"t":"bool","v":false})
    );
}

#[test]
fn arithmetic_per_language() {
    let bin = |lang: &str, a: I, b: I, op: I| {
        eval(program(
            lang,
            vec![func(0, 0, 0, vec![a, b, op, I::Return])],
        ))
    };
    assert_eq!(
        bin("ts.subset.v1", c_str("a"), c_num(1.5), I::Add),
        string("a1.5")
    );
    assert_eq!(
        bin("ts.subset.v1", c_num(1e21), c_str(""), I::Add),
        string("1e+21")
    );
    assert_eq!(
        bin("ts.subset.v1", c_undef(), c_str("!"), I::Add),
        string("undefined!")
    );
    assert_eq!(
        bin("ts.subset.v1", c_num(-7.0), c_num(3.0), I::Rem),
        num(-1.0)
    );
    assert_eq!(
        bin("py.subset.v1", c_num(-7.0), c_num(3.0), I::Rem),
        num(2.0)
    );
    assert_eq!(
        bin("py.subset.v1", c_num(-7.0), c_num(2.0), I::FloorDiv),
        num(-4.0)
    );
    assert_eq!(
        bin("py.subset.v1", c_bool(true), c_num(1.0), I::Add),
        num(2.0)
    );
    assert_eq!(
        bin("ts.subset.v1", c_num(2.0), c_num(10.0), I::Pow),
        num(1024.0)
    );
    assert_eq!(
        bin("ts.subset.v1", c_num(1.0), c_num(0.0), I::Div),
        json!({"t":"number","v":"Infinity"})
    );
    assert_eq!(
        bin("rust.subset.v1", c_str("a"), c_str("b"), I::Add),
        string("ab")
    );
    let fatal = |lang: &str, a: I, b: I, op: I| {
        fatal_kind(program(
            lang,
            vec![func(0, 0, 0, vec![a, b, op, I::Return])],
        ))
    };
    assert_eq!(
        fatal("ts.subset.v1", c_bool(true), c_num(1.0), I::Add),
        FatalKind::TypeError
    );
    assert_eq!(
        fatal("py.subset.v1", c_str("a"), c_num(1.0), I::Add),
        FatalKind::TypeError
    );
    assert_eq!(
        fatal("rust.subset.v1", c_str("a"), c_num(1.0), I::Add),
        FatalKind::TypeError
    );
    assert_eq!(eval(ts(vec![c_num(2.0), I::Neg, I::Return], 0)), num(-2.0));
}

#[test]
fn python_zero_division_is_catchable() {
    let p = program(
        "py.subset.v1",
        vec![func(
            0,
            0,
            0,
            vec![
                I::PushTry {
                    catch: 5,
                    finally: None,
                },
                c_num(1.0),
                c_num(0.0),
                I::Div,
                I::Return,
                I::Return,
            ],
        )],
    );
    assert_eq!(eval(p), string("ZeroDivisionError"));
}

#[test]
fn python_pow_overflow_raises_overflow_error() {
    // try { return x ** y } catch (e) { return e }, as CPython floats do.
    let pow = |lang: &str, x: f64, y: f64| {
        eval(program(
            lang,
            vec![func(
                0,
                0,
                0,
                vec![
                    I::PushTry {
                        catch: 5,
                        finally: None,
                    },
                    c_num(x),
                    c_num(y),
                    I::Pow,
                    I::Return,
                    I::Return,
                ],
            )],
        ))
    };
    let overflow = string("OverflowError");
    assert_eq!(pow("py.subset.v1", 10.0, 400.0), overflow);
    assert_eq!(pow("py.subset.v1", -10.0, 401.0), overflow);
    assert_eq!(pow("py.subset.v1", 1e200, 2.0), overflow);
    // Infinite operands and underflow are not errors; other languages
    // keep IEEE infinity.
    assert_eq!(pow("py.subset.v1", f64::INFINITY, 2.0), num(f64::INFINITY));
    assert_eq!(pow("py.subset.v1", 2.0, -2000.0), num(0.0));
    assert_eq!(pow("py.subset.v1", 2.0, 10.0), num(1024.0));
    assert_eq!(pow("ts.subset.v1", 10.0, 400.0), num(f64::INFINITY));
    assert_eq!(pow("rust.subset.v1", 10.0, 400.0), num(f64::INFINITY));
    // Plain IEEE overflow in + and * stays infinity, as in CPython.
    let mul = eval(program(
        "py.subset.v1",
        vec![func(
            0,
            0,
            0,
            vec![c_num(1e308), c_num(10.0), I::Mul, I::Return],
        )],
    ));
    assert_eq!(mul, num(f64::INFINITY));
}

#[test]
fn get_and_set_index_per_language() {
    // a = [10, 20]; a[-1]
    let code = |i: f64| {
        vec![
            I::NewArray,
            c_num(10.0),
            I::ArrayPush,
            c_num(20.0),
            I::ArrayPush,
            c_num(i),
            I::GetIndex,
            I::Return,
        ]
    };
    assert_eq!(
        eval(program("py.subset.v1", vec![func(0, 0, 0, code(-1.0))])),
        num(20.0)
    );
    assert_eq!(
        eval(program("ts.subset.v1", vec![func(0, 0, 0, code(-1.0))])),
        json!({"t":"undefined"})
    );
    let p = program(
        "py.subset.v1",
        vec![func(0, 0, 0, {
            let mut c = vec![I::PushTry {
                catch: 9,
                finally: None,
            }];
            c.extend(code(5.0));
            c.push(I::Return);
            c
        })],
    );
    assert_eq!(eval(p), string("IndexError"));
    let set = ts(
        vec![
            I::NewArray,
            c_num(1.0),
            I::ArrayPush,
            c_num(0.0),
            c_num(9.0),
            I::SetIndex,
            I::Return,
        ],
        0,
    );
    assert_eq!(eval(set), json!({"t":"array","v":[num(9.0)]}));
    let oob = ts(
        vec![I::NewArray, c_num(3.0), c_num(9.0), I::SetIndex, I::Return],
        0,
    );
    assert_eq!(fatal_kind(oob), FatalKind::IndexOutOfRange);
    assert_eq!(
        eval(ts(vec![c_str("héllo"), I::Length, I::Return], 0)),
        num(5.0)
    );
    assert_eq!(
        eval(ts(
            vec![c_str("abc"), c_num(1.0), I::GetIndex, I::Return],
            0
        )),
        string("b")
    );
}

#[test]
fn iterating_arrays_cannot_grow() {
    let p = ts(
        vec![
            I::NewArray,
            I::WatchIter,
            c_num(1.0),
            I::ArrayPush,
            I::Return,
        ],
        0,
    );
    assert_eq!(fatal_kind(p), FatalKind::IteratorInvalidated);
    let ok = ts(
        vec![
            I::NewArray,
            I::WatchIter,
            I::UnwatchIter,
            c_num(1.0),
            I::ArrayPush,
            I::Length,
            I::Return,
        ],
        0,
    );
    assert_eq!(eval(ok), num(1.0));
}

#[test]
fn call_binds_arguments_per_language() {
    // f1(a, b) returns [a, b]; called with 1 argument (TS pads) and 3 (TS ignores extra).
    let callee = func(
        1,
        2,
        2,
        vec![
            I::NewArray,
            I::LoadLocal { local: 0 },
            I::ArrayPush,
            I::LoadLocal { local: 1 },
            I::ArrayPush,
            I::Return,
        ],
    );
    let one = vec![c_num(1.0), I::Call { func: 1, argc: 1 }, I::Return];
    let three = vec![
        c_num(1.0),
        c_num(2.0),
        c_num(3.0),
        I::Call { func: 1, argc: 3 },
        I::Return,
    ];
    assert_eq!(
        eval(program(
            "ts.subset.v1",
            vec![func(0, 0, 0, one.clone()), callee.clone()]
        )),
        json!({"t":"array","v":[num(1.0), {"t":"undefined"}]})
    );
    assert_eq!(
        eval(program(
            "ts.subset.v1",
            vec![func(0, 0, 0, three), callee.clone()]
        )),
        json!({"t":"array","v":[num(1.0), num(2.0)]})
    );
    assert_eq!(
        fatal_kind(program(
            "rust.subset.v1",
            vec![func(0, 0, 0, one.clone()), callee.clone()]
        )),
        FatalKind::Arity
    );
    let mut with_default = callee.clone();
    with_default.param_defaults = Some(vec![None, Some(tcc_ir::Constant::Number(5.0))]);
    assert_eq!(
        eval(program(
            "py.subset.v1",
            vec![func(0, 0, 0, one.clone()), with_default]
        )),
        json!({"t":"array","v":[num(1.0), num(5.0)]})
    );
    assert_eq!(
        fatal_kind(program("py.subset.v1", vec![func(0, 0, 0, one), callee])),
        FatalKind::Arity
    );
}

#[test]
fn throw_unwinds_frames_and_the_shared_stack() {
    // entry: push 99, PushTry(catch 6), push 1, call f1, Return; 6: ... returns [caught, stack below]
    let thrower = func(
        1,
        0,
        0,
        vec![c_num(5.0), c_num(6.0), c_str("boom"), I::Throw],
    );
    let entry = func(
        0,
        0,
        1,
        vec![
            c_num(99.0),
            I::PushTry {
                catch: 5,
                finally: None,
            },
            c_num(1.0),
            I::Call { func: 1, argc: 0 },
            I::Return,
            I::StoreLocal { local: 0 },
            I::NewArray,
            I::LoadLocal { local: 0 },
            I::ArrayPush,
            I::Pop,
            I::Return,
        ],
    );
    // After the catch: stack is [99, "boom"]; store boom, build [boom], pop it, return 99.
    assert_eq!(
        eval(program("ts.subset.v1", vec![entry, thrower])),
        num(99.0)
    );
}

#[test]
fn return_drops_the_frames_handlers() {
    // callee pushes a handler and returns without PopTry; a later throw in the entry must not use it.
    let callee = func(
        1,
        0,
        0,
        vec![
            I::PushTry {
                catch: 2,
                finally: None,
            },
            c_num(1.0),
            I::Return,
        ],
    );
    let entry = func(
        0,
        0,
        0,
        vec![I::Call { func: 1, argc: 0 }, c_str("x"), I::Throw],
    );
    let out = run_host(program("ts.subset.v1", vec![entry, callee]), &host());
    assert_eq!(out["type"], "failed");
    assert_eq!(out["message"], "x");
}

#[test]
fn uncaught_throw_fails_with_the_value() {
    // The envelope carries the message, as the reference's does; the thrown
    // value is the failed checkpoint's `result`.
    let r = host()
        .run(ts(vec![c_num(3.0), I::Throw], 0), "test", &[])
        .unwrap();
    assert_eq!(
        r.outcome,
        json!({"host_protocol_version":1,"type":"failed","message":"{\"t\":\"number\",\"v\":3}"})
    );
    let stored = r.stored.unwrap().to_json();
    assert_eq!(
        (&stored["status"], &stored["result"]),
        (&json!("failed"), &num(3.0))
    );
    let out = run_host(
        ts(
            vec![
                I::PushTry {
                    catch: 4,
                    finally: None,
                },
                I::PopTry,
                c_str("late"),
                I::Throw,
                I::Return,
            ],
            0,
        ),
        &host(),
    );
    assert_eq!(out["message"], "late");
}

#[test]
fn closures_share_cells() {
    // counter closure: f1(env) { env[0] = env[0] + 1; return env[0] }; no user
    // parameters, so param_count 0 (the environment is the extra local 0).
    let inc = func(
        1,
        0,
        1,
        vec![
            I::LoadLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::EnvGet { index: 0 },
            c_num(1.0),
            I::Add,
            I::EnvSet { index: 0 },
            I::LoadLocal { local: 0 },
            I::EnvGet { index: 0 },
            I::Return,
        ],
    );
    let entry = func(
        0,
        0,
        1,
        vec![
            c_num(10.0),
            I::NewCell,
            I::NewEnv { count: 1 },
            I::NewClosure { func: 1 },
            I::StoreLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::CallClosure { argc: 0 },
            I::Pop,
            I::LoadLocal { local: 0 },
            I::CallClosure { argc: 0 },
            I::Return,
        ],
    );
    assert_eq!(eval(program("ts.subset.v1", vec![entry, inc])), num(12.0));
    // LoadFunc is cached: two loads are the same reference.
    let f = func(2, 1, 1, vec![c_num(1.0), I::Return]);
    let e = func(
        0,
        0,
        0,
        vec![
            I::LoadFunc { func: 2 },
            I::LoadFunc { func: 2 },
            I::Same,
            I::Return,
        ],
    );
    assert_eq!(
        eval(program("py.subset.v1", vec![e, f])),
        json!({"t":"bool","v":true})
    );
}

#[test]
fn closure_param_count_counts_user_parameters_only() {
    // f1(env, a, b) = env[0] + a * b: param_count 2 (a, b at slots 1 and 2), local_count 3.
    let body = func(
        1,
        2,
        3,
        vec![
            I::LoadLocal { local: 0 },
            I::EnvGet { index: 0 },
            I::LoadLocal { local: 1 },
            I::LoadLocal { local: 2 },
            I::Mul,
            I::Add,
            I::Return,
        ],
    );
    let call_with = |args: &[f64]| {
        let mut code = vec![
            c_num(100.0),
            I::NewCell,
            I::NewEnv { count: 1 },
            I::NewClosure { func: 1 },
        ];
        code.extend(args.iter().map(|a| c_num(*a)));
        code.push(I::CallClosure {
            argc: args.len() as u32,
        });
        code.push(I::Return);
        func(0, 0, 0, code)
    };
    for lang in ["ts.subset.v1", "py.subset.v1", "rust.subset.v1"] {
        assert_eq!(
            eval(program(lang, vec![call_with(&[3.0, 4.0]), body.clone()])),
            num(112.0),
            "{lang}"
        );
    }
    // Python and Rust bind exactly: one argument short is an arity error.
    for lang in ["py.subset.v1", "rust.subset.v1"] {
        assert_eq!(
            fatal_kind(program(lang, vec![call_with(&[3.0]), body.clone()])),
            FatalKind::Arity,
            "{lang}"
        );
    }
    // Python defaults are indexed by user parameter (b = 5), not by slot.
    let mut with_default = body.clone();
    with_default.param_defaults = Some(vec![None, Some(tcc_ir::Constant::Number(5.0))]);
    assert_eq!(
        eval(program(
            "py.subset.v1",
            vec![call_with(&[3.0]), with_default]
        )),
        num(115.0)
    );
    // LoadFunc's empty-environment closure binds the same way.
    let loaded = func(
        0,
        0,
        0,
        vec![
            I::LoadFunc { func: 2 },
            c_num(7.0),
            I::CallClosure { argc: 1 },
            I::Return,
        ],
    );
    let ident = func(2, 1, 2, vec![I::LoadLocal { local: 1 }, I::Return]);
    assert_eq!(eval(program("py.subset.v1", vec![loaded, ident])), num(7.0));
    // local_count must leave room for the environment and every parameter.
    let cramped = func(1, 2, 2, vec![c_num(0.0), I::Return]);
    assert_eq!(
        fatal_kind(program(
            "ts.subset.v1",
            vec![call_with(&[3.0, 4.0]), cramped]
        )),
        FatalKind::Arity
    );
}

#[test]
fn limits_stop_hostile_programs() {
    // Infinite loop: budget exhaustion, never a hang.
    let mut e = start(ts(vec![I::Jump { target: 0 }], 0));
    assert_eq!(e.run_until_host(1000).unwrap(), Outcome::BudgetExhausted);
    assert_eq!(e.run_until_host(0).unwrap(), Outcome::BudgetExhausted);
    // Unbounded recursion: call depth limit.
    let p = program(
        "ts.subset.v1",
        vec![func(0, 0, 0, vec![I::Call { func: 0, argc: 0 }, I::Return])],
    );
    let mut e = start(p);
    assert!(matches!(
        e.run_until_host(1_000_000),
        Err(EngineError::Limit {
            what: "call depth",
            ..
        })
    ));
    // Allocation loop: heap cell limit.
    let limits = Limits {
        max_heap_cells: 1000,
        ..Limits::default()
    };
    let p = ts(
        vec![
            I::NewObject,
            I::StoreLocal { local: 0 },
            I::NewObject,
            I::LoadLocal { local: 0 },
            I::SetProp { key: "p".into() },
            I::StoreLocal { local: 0 },
            I::Jump { target: 2 },
        ],
        1,
    );
    let mut e = tcc_engine::Execution::start(p, "x", &[], limits).unwrap();
    assert!(matches!(
        e.run_until_host(1_000_000),
        Err(EngineError::Limit {
            what: "heap cells",
            ..
        })
    ));
    // String doubling: string size limit.
    let limits = Limits {
        max_string_bytes: 1 << 16,
        ..Limits::default()
    };
    let p = ts(
        vec![
            c_str("ab"),
            I::StoreLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::Add,
            I::StoreLocal { local: 0 },
            I::Jump { target: 2 },
        ],
        1,
    );
    let mut e = tcc_engine::Execution::start(p, "x", &[], limits).unwrap();
    assert!(matches!(
        e.run_until_host(1_000_000),
        Err(EngineError::Limit {
            what: "string bytes",
            ..
        })
    ));
    // Stack growth: operand stack limit.
    let limits = Limits {
        max_stack: 100,
        ..Limits::default()
    };
    let mut e = tcc_engine::Execution::start(
        ts(vec![c_num(1.0), I::Jump { target: 0 }], 0),
        "x",
        &[],
        limits,
    )
    .unwrap();
    assert!(matches!(
        e.run_until_host(1_000_000),
        Err(EngineError::Limit {
            what: "operand stack",
            ..
        })
    ));
}

#[test]
fn start_binds_entry_parameters() {
    let p = program(
        "ts.subset.v1",
        vec![func(
            0,
            2,
            2,
            vec![
                I::LoadLocal { local: 0 },
                I::LoadLocal { local: 1 },
                I::Add,
                I::Return,
            ],
        )],
    );
    let out = host().run(p, "x", &[num(2.0), num(3.0)]).unwrap().outcome;
    assert_eq!(out["result"], num(5.0));
}

#[test]
fn fast_path_agrees_with_single_steps_on_compute_loops() {
    // The compute-loop example: s += (i*i) % 7 for i < n, in TS and Python,
    // whose results are compared with single-instruction stepping.
    let body = |lang: &str| {
        program(
            lang,
            vec![func(
                0,
                0,
                3,
                vec![
                    c_num(0.0),
                    I::StoreLocal { local: 1 },
                    c_num(-3.0),
                    I::StoreLocal { local: 2 },
                    I::LoadLocal { local: 2 },
                    c_num(50.0),
                    I::Lt,
                    I::JumpIfFalse { target: 21 },
                    I::LoadLocal { local: 1 },
                    I::LoadLocal { local: 2 },
                    I::LoadLocal { local: 2 },
                    I::Mul,
                    c_num(7.0),
                    I::Rem,
                    I::Add,
                    I::StoreLocal { local: 1 },
                    I::LoadLocal { local: 2 },
                    c_num(1.0),
                    I::Add,
                    I::StoreLocal { local: 2 },
                    I::Jump { target: 4 },
                    I::LoadLocal { local: 1 },
                    c_num(0.5),
                    I::Add,
                    I::Return,
                ],
            )],
        )
    };
    for lang in ["ts.subset.v1", "py.subset.v1"] {
        let fast = run_host(body(lang), &host());
        let mut h = host();
        h.budget = 1;
        let slow = run_host(body(lang), &h);
        assert_eq!(fast, slow, "{lang}");
    }
    // Python modulo differs from IEEE remainder on negatives: -9 % 7 == 5.
    let expect_py: f64 = (-3..50).map(|i: i32| f64::from((i * i) % 7)).sum();
    let out = run_host(body("py.subset.v1"), &host());
    assert_eq!(out["result"], num(expect_py + 0.5));
    let ts_sum: f64 = (-3..50).map(|i: i32| f64::from((i * i) % 7)).sum();
    assert_eq!(
        run_host(body("ts.subset.v1"), &host())["result"],
        num(ts_sum + 0.5)
    );
}
