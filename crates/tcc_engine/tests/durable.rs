//! Durable operations, joins, cancellation, continuations and resume checks.
mod common;
use common::*;
use serde_json::json;
use tcc_engine::local_host::{CompletionOrder, EffectAnswer};
use tcc_engine::{
    Continuation, EngineError, Execution, HostRequest, HostResponse, Limits, Outcome, Status,
};

fn effect_program(has_input: bool) -> std::sync::Arc<tcc_engine::Program> {
    let mut code = vec![];
    if has_input {
        code.extend([I::NewObject, c_num(-0.0), I::SetProp { key: "x".into() }]);
    }
    code.extend([c_str("greet"), I::Effect { has_input }, I::Return]);
    ts(code, 0)
}

#[test]
fn effect_request_shapes_and_journal() {
    for has_input in [false, true] {
        let mut e = start(effect_program(has_input));
        let o = next(&mut e);
        let input = if has_input {
            json!({"t":"object","v":{"x":{"t":"number","v":-0.0}}})
        } else {
            json!({"t":"object","v":{}})
        };
        assert_eq!(
            request_json(&o),
            json!({"host_protocol_version":1,"type":"run_effect","key":"greet","idempotency_key":"first:greet","input":input})
        );
        assert_eq!(
            e.state().frames[0].pc,
            if has_input { 4 } else { 1 },
            "pc not advanced at the yield"
        );
        // A wrong response changes nothing.
        assert!(matches!(
            e.respond(HostResponse::Ack),
            Err(EngineError::UnexpectedHostResponse { .. })
        ));
        e.respond(HostResponse::EffectResult { value: num(42.0) })
            .unwrap();
        let o = e.run_until_host(10).unwrap();
        assert_eq!(
            request_json(&o),
            json!({"host_protocol_version":1,"type":"persist_effect","key":"greet","idempotency_key":"first:greet","status":"completed","result":num(42.0)})
        );
        e.respond(HostResponse::Ack).unwrap();
        let o = e.run_until_host(10).unwrap();
        let Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) = o else {
            panic!("{o:?}")
        };
        assert_eq!(revision, 1);
        // ack commits nothing but lets the execution go on
        e.respond(HostResponse::PersistConfirmed { revision })
            .unwrap();
        assert!(matches!(next(&mut e), Outcome::Completed(v) if v == num(42.0)));
    }
}

#[test]
fn effect_failure_is_catchable() {
    let p = ts(
        vec![
            I::PushTry {
                catch: 4,
                finally: None,
            },
            c_str("pay"),
            I::Effect { has_input: false },
            I::Return,
            c_str(" (handled)"),
            I::Add,
            I::Return,
        ],
        0,
    );
    let h = host_with_effects(&[("pay", EffectAnswer::Fail("card declined".into()))]);
    let r = h.run(p.clone(), "x", &[]).unwrap();
    assert_eq!(r.outcome["result"], string("card declined (handled)"));
    let types: Vec<&str> = r
        .transcript
        .iter()
        .map(|m| {
            m["request"]["type"]
                .as_str()
                .unwrap_or(m["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        types,
        [
            "run_effect",
            "effect_failed",
            "persist_effect",
            "ack",
            "persist_checkpoint",
            "persist_confirmed",
            "completed"
        ]
    );
    // The failure is journalled as a tagged value, and the throw runs on to
    // the next checkpoint (the completion) without one of its own, as the
    // reference engine does.
    assert_eq!(
        r.transcript[2]["request"]["result"],
        string("card declined")
    );
    assert_eq!(r.transcript[2]["request"]["status"], "failed");
    assert_eq!(r.transcript[4]["request"]["revision"], 1);
}

#[test]
fn sleep_wait_invoke_request_shapes() {
    // 0 Nop 1 Nop 2 Nop 3 "approved" 4 WaitForEvent
    let p = ts(
        vec![
            I::Nop,
            I::Nop,
            I::Nop,
            c_str("approved"),
            I::WaitForEvent,
            I::Return,
        ],
        0,
    );
    let mut e = start(p);
    assert_eq!(
        request_json(&next(&mut e)),
        json!({"host_protocol_version":1,"type":"register_wait","wait_id":"first:approved::4","event_name":"approved","correlation_key":null,"timeout_ms":null})
    );
    // a wake before the registration is acknowledged is refused
    assert!(
        e.respond(HostResponse::EventPayload {
            value: num(1.0),
            branch: None
        })
        .is_err()
    );
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    assert_eq!(e.state().status, Status::Suspended);
    // wrong wake kind refused; right one resumes
    assert!(
        e.respond(HostResponse::TimerFired { branch: None })
            .is_err()
    );
    assert!(
        e.respond(HostResponse::EventPayload {
            value: num(1.0),
            branch: Some("x".into())
        })
        .is_err()
    );
    e.respond(HostResponse::EventPayload {
        value: string("yes"),
        branch: None,
    })
    .unwrap();
    assert_eq!(next(&mut e), Outcome::Completed(string("yes")));

    let p = ts(vec![c_num(1500.9), I::Sleep, I::Return], 0);
    let mut e = start(p);
    assert_eq!(
        request_json(&next(&mut e)),
        json!({"host_protocol_version":1,"type":"register_timer","resume_at_ms":1500})
    );
    let p = ts(vec![c_num(-5.0), I::Sleep, I::Return], 0);
    let mut e = start(p);
    assert_eq!(request_json(&next(&mut e))["resume_at_ms"], 0);
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    e.respond(HostResponse::TimerFired { branch: None })
        .unwrap();
    assert_eq!(next(&mut e), Outcome::Completed(json!({"t":"undefined"})));

    let p = ts(
        vec![
            c_num(1.0),
            c_str("two"),
            c_str("child-prog"),
            I::Invoke { arg_count: 2 },
            I::Return,
        ],
        0,
    );
    let mut e = start(p);
    assert_eq!(
        request_json(&next(&mut e)),
        json!({"host_protocol_version":1,"type":"create_child","invoke_id":"first:invoke:3","child_execution_id":"child:first:invoke:3","program_name":"child-prog","args":[num(1.0), string("two")]})
    );
    let p = ts(
        vec![c_str("solo"), I::Invoke { arg_count: 0 }, I::Return],
        0,
    );
    let mut e = start(p);
    assert!(
        request_json(&next(&mut e)).get("args").is_none(),
        "args omitted when empty"
    );
}

#[test]
fn invoke_runs_children_with_their_language_arity() {
    let parent = ts(
        vec![
            c_num(2.0),
            c_str("double"),
            I::Invoke { arg_count: 1 },
            I::Return,
        ],
        0,
    );
    let child = program(
        "py.subset.v1",
        vec![func(
            0,
            1,
            1,
            vec![I::LoadLocal { local: 0 }, c_num(2.0), I::Mul, I::Return],
        )],
    );
    let mut h = host();
    h.children.insert("double".into(), child.clone());
    assert_eq!(h.run(parent, "p", &[]).unwrap().outcome["result"], num(4.0));
    // Python arity is exact: a missing argument is an error of the child.
    let parent0 = ts(
        vec![c_str("double"), I::Invoke { arg_count: 0 }, I::Return],
        0,
    );
    assert!(h.run(parent0, "p", &[]).is_err());
}

#[test]
fn durable_ops_only_in_the_entry_frame() {
    let helper = func(1, 0, 0, vec![c_num(1.0), I::Sleep, I::Return]);
    let p = program(
        "ts.subset.v1",
        vec![
            func(0, 0, 0, vec![I::Call { func: 1, argc: 0 }, I::Return]),
            helper,
        ],
    );
    let mut e = start(p);
    assert!(matches!(
        e.run_until_host(100),
        Err(EngineError::Fatal {
            kind: tcc_engine::FatalKind::IllegalDurableOp,
            ..
        })
    ));
}

fn fork3(join: I) -> Vec<I> {
    // 0 Fork{3, 8}; 1 "a" 2 Effect; 3 10 4 Sleep; 5 "ev" 6 WaitForEvent; 7 Nop; 8 Join; 9 Return
    vec![
        I::Fork {
            count: 3,
            join_pc: 8,
        },
        c_str("a"),
        I::Effect { has_input: false },
        c_num(10.0),
        I::Sleep,
        c_str("ev"),
        I::WaitForEvent,
        I::Nop,
        join,
        I::Return,
    ]
}

#[test]
fn join_all_collects_in_input_order() {
    let p = ts(fork3(I::JoinAll), 0);
    let mut h = host_with_effects(&[("a", EffectAnswer::Result(string("A")))]);
    h.events.insert("ev".into(), string("E"));
    h.completion_order = CompletionOrder::Reverse;
    let r = h.run(p, "x", &[]).unwrap();
    assert_eq!(
        r.outcome["result"],
        json!({"t":"array","v":[string("A"), {"t":"undefined"}, string("E")]})
    );
    let regs: Vec<_> = r
        .transcript
        .iter()
        .filter(|m| {
            m["request"]["type"] == "register_timer" || m["request"]["type"] == "register_wait"
        })
        .map(|m| {
            let r = &m["request"];
            match r["type"].as_str() {
                // A wait inside a group is identified by its branch id alone.
                Some("register_wait") => {
                    assert!(r.get("branch").is_none(), "{r}");
                    r["wait_id"].clone()
                }
                _ => r["branch"].clone(),
            }
        })
        .collect();
    assert_eq!(regs, [json!("x:0:0:1"), json!("x:0:0:2")]);
}

#[test]
fn join_all_fails_fast_and_detaches() {
    let mut code = vec![I::PushTry {
        catch: 11,
        finally: None,
    }];
    // shift fork3 by one
    code.extend([
        I::Fork {
            count: 3,
            join_pc: 9,
        },
        c_num(10.0),
        I::Sleep,
        c_str("a"),
        I::Effect { has_input: false },
        c_str("ev"),
        I::WaitForEvent,
        I::Nop,
        I::JoinAll,
        I::Return,
        c_str("!"),
        I::Add,
        I::Return,
    ]);
    let p = ts(code, 0);
    let mut e = start(p);
    assert_eq!(request_json(&next(&mut e))["type"], "register_timer");
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(request_json(&next(&mut e))["type"], "run_effect");
    e.respond(HostResponse::EffectFailed {
        message: "nope".into(),
    })
    .unwrap();
    assert_eq!(
        request_json(&e.run_until_host(10).unwrap())["type"],
        "persist_effect"
    );
    e.respond(HostResponse::Ack).unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint {
        revision,
        materialize,
        delta,
        ..
    }) = o
    else {
        panic!()
    };
    // The failure is persisted before it is thrown.
    let persisted = materialize.or(delta).unwrap();
    assert_eq!(persisted["join"]["state"], "failed");
    assert_eq!(persisted["join"]["failure_branch"], 1);
    assert_eq!(persisted["join"]["branches"][0]["phase"], "detached");
    assert_eq!(persisted["join"]["branches"][2]["phase"], "detached");
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    assert_eq!(next(&mut e), Outcome::Completed(string("nope!")));
}

#[test]
fn join_any_race_winner_and_late_deliveries_ignored() {
    // race(sleep 10, event "ev"), then Sleep again, return race value
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_num(10.0),
        I::Sleep,
        c_str("ev"),
        I::WaitForEvent,
        I::JoinAny,
        I::StoreLocal { local: 0 },
        c_num(1.0),
        I::Sleep,
        I::LoadLocal { local: 0 },
        I::Return,
    ];
    let p = ts(code, 1);
    let mut e = start(p);
    for _ in 0..2 {
        assert!(matches!(
            next(&mut e),
            Outcome::Host(HostRequest::RegisterTimer { .. } | HostRequest::RegisterWait { .. })
        ));
        e.respond(HostResponse::Ack).unwrap();
    }
    assert_eq!(next(&mut e), Outcome::Suspended);
    // missing branch on an active join is an error
    assert!(
        e.respond(HostResponse::EventPayload {
            value: num(1.0),
            branch: None
        })
        .is_err()
    );
    e.respond(HostResponse::EventPayload {
        value: string("event won"),
        branch: Some("first:0:0:1".into()),
    })
    .unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint {
        revision,
        materialize,
        delta,
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    let persisted = materialize.or(delta).unwrap();
    assert_eq!(persisted["join"]["winner_branch"], 1);
    assert_eq!(persisted["join"]["branches"][0]["phase"], "detached");
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    assert!(matches!(
        next(&mut e),
        Outcome::Host(HostRequest::RegisterTimer { branch: None, .. })
    ));
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    // The detached timer branch fires late: ignored, still suspended.
    e.respond(HostResponse::TimerFired {
        branch: Some("first:0:0:0".into()),
    })
    .unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    assert_eq!(e.state().reentries[0].next, 1);
    // An unknown branch id is an error.
    assert!(
        e.respond(HostResponse::TimerFired {
            branch: Some("first:0:5:0".into())
        })
        .is_err()
    );
    e.respond(HostResponse::TimerFired { branch: None })
        .unwrap();
    assert_eq!(next(&mut e), Outcome::Completed(string("event won")));
}

#[test]
fn join_any_lowest_completed_index_wins() {
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_num(10.0),
        I::Sleep,
        c_str("b"),
        I::Effect { has_input: false },
        I::JoinAny,
        I::Return,
    ];
    let h = host_with_effects(&[("b", EffectAnswer::Result(string("B")))]);
    assert_eq!(
        h.run(ts(code, 0), "x", &[]).unwrap().outcome["result"],
        string("B")
    );
}

#[test]
fn fork_reentry_counters_in_a_loop() {
    // for i in 0..2: all(sleep 1) ; branch ids differ by reentry
    let code = vec![
        c_num(0.0),
        I::StoreLocal { local: 0 },
        I::LoadLocal { local: 0 },
        c_num(2.0),
        I::Lt,
        I::JumpIfFalse { target: 15 },
        I::Fork {
            count: 1,
            join_pc: 9,
        },
        c_num(1.0),
        I::Sleep,
        I::JoinAll,
        I::Pop,
        I::LoadLocal { local: 0 },
        c_num(1.0),
        I::Add,
        I::StoreLocal { local: 0 }, // 11..14 -> falls to 15? no: jump back
        I::Return,
    ];
    let mut code = code;
    code.insert(15, I::Jump { target: 2 });
    code[5] = I::JumpIfFalse { target: 16 };
    let r = host().run(ts(code, 1), "x", &[]).unwrap();
    let branches: Vec<_> = r
        .transcript
        .iter()
        .filter(|m| m["request"]["type"] == "register_timer")
        .map(|m| m["request"]["branch"].clone())
        .collect();
    assert_eq!(branches, [json!("x:6:0:0"), json!("x:6:1:0")]);
}

#[test]
fn cancel_while_suspended() {
    let p = ts(vec![c_num(5.0), I::Sleep, I::Return], 0);
    let mut e = start(p);
    next(&mut e);
    assert!(
        e.respond(HostResponse::Cancel).is_err(),
        "not while a request is outstanding"
    );
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    e.respond(HostResponse::Cancel).unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) = o else {
        panic!()
    };
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    assert_eq!(e.run_until_host(10).unwrap(), Outcome::Cancelled);
    assert_eq!(e.state().status, Status::Cancelled);
    assert!(e.state().pending.is_none());
    assert!(e.respond(HostResponse::Cancel).is_err());
}

#[test]
fn response_messages_check_protocol_version() {
    assert!(matches!(
        HostResponse::decode(br#"{"type":"ack"}"#),
        Err(EngineError::MissingHostProtocolVersion)
    ));
    assert!(matches!(
        HostResponse::decode(br#"{"type":"ack","host_protocol_version":2}"#),
        Err(EngineError::UnsupportedHostProtocol { supported: 1, .. })
    ));
    assert_eq!(
        HostResponse::decode(br#"{"type":"ack","host_protocol_version":1}"#).unwrap(),
        HostResponse::Ack
    );
    assert!(HostResponse::decode(br#"{"type":"ack","host_protocol_version":1,"zz":1}"#).is_err());
    let r = HostResponse::TimerFired {
        branch: Some("b".into()),
    };
    assert_eq!(HostResponse::from_json(&r.to_json()).unwrap(), r);
}

#[test]
fn resume_checks_and_pinning() {
    let p = ts(
        vec![
            c_num(5.0),
            I::StoreLocal { local: 0 },
            c_num(1.0),
            I::Sleep,
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        1,
    );
    let mut e = start(p.clone());
    next(&mut e);
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    let text = e.state().encode();
    let c = Continuation::decode(text.as_bytes(), &Limits::default()).unwrap();
    // a different compilation: ArtifactMismatch
    let other = ts(
        vec![
            c_num(6.0),
            I::StoreLocal { local: 0 },
            c_num(1.0),
            I::Sleep,
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        1,
    );
    assert!(matches!(
        Execution::resume(other, c.clone(), Limits::default()),
        Err(EngineError::ArtifactMismatch { .. })
    ));
    let mut bad = c.clone();
    bad.frames[0].locals.push(tcc_engine::Value::Null);
    assert!(matches!(
        Execution::resume(p.clone(), bad, Limits::default()),
        Err(EngineError::ResumeMismatch(_))
    ));
    let mut bad = c.clone();
    bad.frames[0].pc = 99;
    assert!(matches!(
        Execution::resume(p.clone(), bad, Limits::default()),
        Err(EngineError::ResumeMismatch(_))
    ));
    let mut bad = c.clone();
    bad.language_semantics_version = "py.subset.v1".into();
    assert!(matches!(
        Execution::resume(p.clone(), bad, Limits::default()),
        Err(EngineError::ResumeMismatch(_))
    ));
    // the good one resumes without rebinding parameters and finishes
    let mut r = Execution::resume(p, c, Limits::default()).unwrap();
    assert_eq!(r.run_until_host(10).unwrap(), Outcome::Suspended);
    r.respond(HostResponse::TimerFired { branch: None })
        .unwrap();
    assert_eq!(next(&mut r), Outcome::Completed(num(5.0)));
}

#[test]
fn checkpoints_clear_dead_locals_and_collect_garbage() {
    // local0 = {}; local1 = 7 (dead: never read); local0 = 1; sleep; return local0
    let p = ts(
        vec![
            I::NewObject,
            I::StoreLocal { local: 0 },
            c_num(7.0),
            I::StoreLocal { local: 1 },
            c_num(1.0),
            I::StoreLocal { local: 0 },
            c_num(1.0),
            I::Sleep,
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        2,
    );
    let mut e = start(p);
    next(&mut e);
    e.respond(HostResponse::Ack).unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint {
        materialize: Some(m),
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    assert_eq!(
        m["frames"][0]["locals"],
        json!([num(1.0), {"t":"undefined"}])
    );
    assert!(
        m.get("heap").is_none(),
        "the unreachable object was collected and trimmed"
    );
    assert_eq!(
        m["pending"],
        json!({"type":"wait","kind":{"type":"timer","resume_at_ms":1}})
    );
    assert_eq!(m["status"], "suspended");
}

#[test]
fn deltas_follow_snapshots_and_apply() {
    // Several sleeps in a loop: first checkpoint snapshot, later ones deltas.
    let code = vec![
        c_num(0.0),
        I::StoreLocal { local: 0 },
        I::LoadLocal { local: 0 },
        c_num(40.0),
        I::Lt,
        I::JumpIfFalse { target: 13 },
        c_num(1.0),
        I::Sleep,
        I::Pop,
        I::LoadLocal { local: 0 },
        c_num(1.0),
        I::Add,
        I::StoreLocal { local: 0 },
        I::LoadLocal { local: 0 },
        I::Return,
    ];
    let mut code = code;
    code.insert(13, I::Jump { target: 2 });
    code[5] = I::JumpIfFalse { target: 14 };
    let r = host().run(ts(code.clone(), 1), "x", &[]).unwrap();
    assert_eq!(r.outcome["result"], num(40.0));
    let (snaps, deltas) = r.checkpoints;
    assert!(
        deltas > 0 && snaps >= 2,
        "snapshots {snaps}, deltas {deltas}"
    );
    // at most 32 deltas between snapshots
    let mut run = 0;
    for m in &r.transcript {
        match m["request"]["kind"].as_str() {
            Some("delta") => {
                run += 1;
                assert!(run <= 32);
            }
            Some("snapshot") => run = 0,
            _ => {}
        }
    }
    // without delta capability only snapshots
    let mut h = host();
    h.deltas = false;
    let r2 = h.run(ts(code, 1), "x", &[]).unwrap();
    assert_eq!(r2.checkpoints.1, 0);
    assert_eq!(r2.outcome, r.outcome);
}

#[test]
fn restore_at_every_checkpoint_matches_a_straight_run() {
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_str("a"),
        I::Effect { has_input: false },
        c_str("ev"),
        I::WaitForEvent,
        I::JoinAll,
        I::StoreLocal { local: 0 },
        c_num(3.0),
        I::Sleep,
        I::Pop,
        I::LoadLocal { local: 0 },
        c_str("b"),
        I::Effect { has_input: true },
        I::Return,
    ];
    let mut h = host_with_effects(&[
        ("a", EffectAnswer::Result(num(1.0))),
        ("b", EffectAnswer::Result(string("done"))),
    ]);
    h.events
        .insert("ev".into(), json!({"t":"object","v":{"k":{"t":"null"}}}));
    let straight = h.run(ts(code.clone(), 1), "x", &[]).unwrap();
    h.restore_at_checkpoints = true;
    let restored = h.run(ts(code, 1), "x", &[]).unwrap();
    assert!(restored.restores > 3);
    assert_eq!(straight.outcome, restored.outcome);
    assert_eq!(straight.effect_log, restored.effect_log);
    assert_eq!(straight.outcome["result"], string("done"));
}

#[test]
fn invoke_inside_a_join_uses_the_branch_id() {
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_num(3.0),
        c_str("double"),
        I::Invoke { arg_count: 1 },
        c_str("a"),
        I::JoinAll,
        I::Return,
    ];
    // Fix the layout: 0 Fork, 1 3, 2 "double", 3 Invoke, 4 "a" -> need an Effect before the join.
    let mut code = code;
    code.insert(5, I::Effect { has_input: false });
    code[0] = I::Fork {
        count: 2,
        join_pc: 6,
    };
    let child = program(
        "ts.subset.v1",
        vec![func(
            0,
            1,
            1,
            vec![I::LoadLocal { local: 0 }, c_num(2.0), I::Mul, I::Return],
        )],
    );
    let mut h = host_with_effects(&[("a", EffectAnswer::Result(string("A")))]);
    h.children.insert("double".into(), child);
    let r = h.run(ts(code, 0), "x", &[]).unwrap();
    assert_eq!(
        r.outcome["result"],
        json!({"t":"array","v":[num(6.0), string("A")]})
    );
    let create = r
        .transcript
        .iter()
        .find(|m| m["request"]["type"] == "create_child")
        .unwrap();
    assert_eq!(create["request"]["invoke_id"], "x:0:0:0");
    // The invoke id is the branch id; no separate `branch` on the wire.
    assert!(create["request"].get("branch").is_none());
    assert_eq!(create["request"]["child_execution_id"], "child:x:0:0:0");
    // The host's child_result names the child, as the reference's does.
    let result = r
        .transcript
        .iter()
        .find(|m| m["type"] == "child_result")
        .unwrap();
    assert_eq!(result["child_execution_id"], "child:x:0:0:0");
    assert_eq!(result["branch"], "x:0:0:0");
}

#[test]
fn malformed_groups_are_fatal() {
    let fatal = |code: Vec<I>| {
        let mut e = start(ts(code, 0));
        loop {
            match e.run_until_host(1000) {
                Err(EngineError::Fatal { kind, .. }) => return kind,
                Ok(Outcome::Host(HostRequest::PersistCheckpoint { revision, .. })) => e
                    .respond(HostResponse::PersistConfirmed { revision })
                    .unwrap(),
                Ok(Outcome::Host(_)) => e.respond(HostResponse::Ack).unwrap(),
                other => panic!("expected a fatal error, got {other:?}"),
            }
        }
    };
    use tcc_engine::FatalKind::IllegalDurableOp as D;
    // nested Fork
    assert_eq!(
        fatal(vec![
            I::Fork {
                count: 1,
                join_pc: 4
            },
            I::Fork {
                count: 1,
                join_pc: 4
            },
            c_num(1.0),
            I::Sleep,
            I::JoinAll,
            I::Return
        ]),
        D
    );
    // join reached with a planned branch
    assert_eq!(
        fatal(vec![
            I::Fork {
                count: 2,
                join_pc: 3
            },
            c_num(1.0),
            I::Sleep,
            I::JoinAll,
            I::Return
        ]),
        D
    );
    // more durable ops than branches
    assert_eq!(
        fatal(vec![
            I::Fork {
                count: 1,
                join_pc: 5
            },
            c_num(1.0),
            I::Sleep,
            c_num(1.0),
            I::Sleep,
            I::JoinAll,
            I::Return
        ]),
        D
    );
    // join kind mismatch: join_pc is not a join instruction
    assert_eq!(
        fatal(vec![
            I::Fork {
                count: 1,
                join_pc: 3
            },
            c_num(1.0),
            I::Sleep,
            I::Nop,
            I::JoinAll,
            I::Return
        ]),
        D
    );
    // JoinAny without a group
    assert_eq!(fatal(vec![I::JoinAny, I::Return]), D);
}

#[test]
fn locals_read_by_a_catch_handler_stay_live() {
    // local0 = "keep"; try { sleep; throw 1 } catch { return local0 }
    let p = ts(
        vec![
            c_str("keep"),
            I::StoreLocal { local: 0 },
            I::PushTry {
                catch: 7,
                finally: None,
            },
            c_num(1.0),
            I::Sleep,
            I::Pop,
            c_num(1.0), // 7 below is the catch target
            I::Throw,
            I::Pop,
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        1,
    );
    // Layout: the catch target must point at `Pop` (index 8); fix it.
    let mut code = p.artifact().program.functions[0].instructions.clone();
    code[2] = I::PushTry {
        catch: 8,
        finally: None,
    };
    let p = ts(code, 1);
    let mut e = start(p);
    next(&mut e);
    e.respond(HostResponse::Ack).unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint {
        materialize: Some(m),
        revision,
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    assert_eq!(m["frames"][0]["locals"], json!([string("keep")]));
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    e.respond(HostResponse::TimerFired { branch: None })
        .unwrap();
    assert_eq!(next(&mut e), Outcome::Completed(string("keep")));
}

#[test]
fn join_results_survive_garbage_collection() {
    // all(effect -> array, sleep): the effect's array result lives only in the join branch
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_str("a"),
        I::Effect { has_input: false },
        c_num(1.0),
        I::Sleep,
        I::JoinAll,
        I::Return,
    ];
    let mut h = host_with_effects(&[(
        "a",
        EffectAnswer::Result(json!({"t":"array","v":[num(1.0)]})),
    )]);
    h.restore_at_checkpoints = true;
    let r = h.run(ts(code, 0), "x", &[]).unwrap();
    assert_eq!(
        r.outcome["result"],
        json!({"t":"array","v":[{"t":"array","v":[num(1.0)]}, {"t":"undefined"}]})
    );
}

#[test]
fn repeated_effect_keys_return_the_journalled_result() {
    // Two effects with the same key and input: the provider runs once.
    let same = ts(
        vec![
            c_str("k"),
            I::Effect { has_input: false },
            c_str("k"),
            I::Effect { has_input: false },
            I::StrictEq,
            I::Return,
        ],
        0,
    );
    let h = host_with_effects(&[("k", EffectAnswer::Result(num(5.0)))]);
    let r = h.run(same, "x", &[]).unwrap();
    assert_eq!(r.outcome["result"], json!({"t":"bool","v":true}));
    assert_eq!(r.effect_log.len(), 1);
    // Same key, different input: an invariant error of the host.
    let differ = ts(
        vec![
            c_num(1.0),
            c_str("k"),
            I::Effect { has_input: true },
            I::Pop,
            c_num(2.0),
            c_str("k"),
            I::Effect { has_input: true },
            I::Return,
        ],
        0,
    );
    assert!(h.run(differ, "x", &[]).is_err());
}

#[test]
fn unsupported_requirements_and_responses_are_refused() {
    // A host without the timer capability cannot run a Sleep program.
    let a = artifact(
        "ts.subset.v1",
        vec![func(0, 0, 0, vec![c_num(1.0), I::Sleep, I::Return])],
    );
    let caps = tcc_ir::FeatureSet::new(["host.persist_checkpoint"]);
    assert!(matches!(
        tcc_engine::Program::new(a, &caps),
        Err(EngineError::InvalidArtifact(_))
    ));
    // Runtime modules are requirements this engine cannot meet.
    let mut a = artifact("ts.subset.v1", vec![func(0, 0, 0, vec![I::Return])]);
    a.envelope.runtime_modules.push(tcc_ir::RuntimeModule {
        id: "std.json".into(),
        kind: "wasm".into(),
    });
    let err =
        tcc_engine::Program::new(a, &tcc_ir::FeatureSet::all_host_capabilities()).unwrap_err();
    assert!(
        matches!(
            &err,
            EngineError::Fatal {
                kind: tcc_engine::FatalKind::Unsupported,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("std.json"), "{err}");
    // `artifact` is never requested by this engine.
    let mut e = start(ts(vec![c_num(1.0), I::Sleep, I::Return], 0));
    next(&mut e);
    assert!(matches!(
        e.respond(HostResponse::Artifact { hash: "h".into() }),
        Err(EngineError::UnexpectedHostResponse { .. })
    ));
    // persist_confirmed for the wrong revision is refused.
    e.respond(HostResponse::Ack).unwrap();
    let o = e.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) = o else {
        panic!()
    };
    assert!(
        e.respond(HostResponse::PersistConfirmed {
            revision: revision + 1
        })
        .is_err()
    );
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
}

#[test]
fn duplicate_json_keys_are_rejected() {
    // A suspended continuation, then the same text with one key repeated at
    // the top level, inside a frame and inside a tagged value.
    let p = ts(
        vec![
            c_num(5.0),
            I::StoreLocal { local: 0 },
            c_num(1.0),
            I::Sleep,
            I::LoadLocal { local: 0 },
            I::Return,
        ],
        1,
    );
    let mut e = start(p);
    next(&mut e);
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    let text = e.state().encode();
    let limits = Limits::default();
    assert!(Continuation::decode(text.as_bytes(), &limits).is_ok());
    let doubled = [
        text.replacen("{\"artifact_hash\"", "{\"revision\":0,\"artifact_hash\"", 1),
        text.replacen("\"func_id\"", "\"pc\":0,\"func_id\"", 1),
        text.replacen("{\"t\":\"number\"", "{\"t\":\"null\",\"t\":\"number\"", 1),
        // Escapes spell the same key.
        text.replacen(
            "{\"artifact_hash\"",
            "{\"st\\u0061tus\":\"runnable\",\"artifact_hash\"",
            1,
        ),
    ];
    for bad in doubled {
        assert_ne!(bad, text);
        let err = Continuation::decode(bad.as_bytes(), &limits).unwrap_err();
        assert_eq!(err.code(), "TCC-R020", "{bad}");
        assert!(err.to_string().contains("duplicate key"), "{err}");
    }
    // Deltas and host responses too.
    let err = tcc_engine::decode_delta(br#"{"stack":[],"stack":[]}"#, &limits).unwrap_err();
    assert_eq!(err.code(), "TCC-R020");
    assert!(err.to_string().contains("duplicate key \"stack\""), "{err}");
    let ok = tcc_engine::decode_delta(br#"{"stack":[],"status":"runnable"}"#, &limits).unwrap();
    assert_eq!(ok, json!({"stack": [], "status": "runnable"}));
    let err = HostResponse::decode(
        br#"{"type":"ack","host_protocol_version":1,"type":"persist_confirmed"}"#,
    )
    .unwrap_err();
    assert_eq!(err.code(), "TCC-R030");
    assert!(err.to_string().contains("duplicate key"), "{err}");
    // Syntax errors still read as such.
    let err = Continuation::decode(b"{\"a\":", &limits).unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
}

#[test]
fn strict_parse_matches_serde_json_trees() {
    for text in [
        r#"{"a":[1,-0,2.5,-7,18446744073709551615,1e300],"b":{"c":null,"d":true},"e":"\u00e9x"}"#,
        r#"[[],{},"",0]"#,
        r#"-0.0"#,
    ] {
        let ours = tcc_engine::json::parse_strict(text.as_bytes()).unwrap();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs, "{text}");
        assert_eq!(
            tcc_engine::json::to_canonical(&ours),
            tcc_engine::json::to_canonical(&theirs)
        );
    }
}

#[test]
fn resume_with_an_effect_in_flight_asks_for_it_again() {
    // Without input: the continuation taken at the yield resumes by asking
    // for the same effect (same identity, input {}) and then finishes like
    // a straight run.
    let p = effect_program(false);
    let mut e = start(p.clone());
    let first = next(&mut e);
    let text = e.state().encode();
    let c = Continuation::decode(text.as_bytes(), &Limits::default()).unwrap();
    assert!(c.pending.is_some());
    let mut r = Execution::resume(p.clone(), c, Limits::default()).unwrap();
    assert_eq!(r.run_until_host(0).unwrap(), first);
    assert!(matches!(
        r.respond(HostResponse::Ack),
        Err(EngineError::UnexpectedHostResponse { .. })
    ));
    r.respond(HostResponse::EffectResult { value: num(7.0) })
        .unwrap();
    let o = r.run_until_host(10).unwrap();
    assert_eq!(request_json(&o)["type"], "persist_effect");
    r.respond(HostResponse::Ack).unwrap();
    let o = r.run_until_host(10).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) = o else {
        panic!("{o:?}")
    };
    r.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    assert_eq!(next(&mut r), Outcome::Completed(num(7.0)));

    // With input: the input is not in the continuation, so it is refused.
    let p = effect_program(true);
    let mut e = start(p.clone());
    next(&mut e);
    let c = Continuation::decode(e.state().encode().as_bytes(), &Limits::default()).unwrap();
    let Err(err) = Execution::resume(p, c.clone(), Limits::default()) else {
        panic!("resumed without the effect's input")
    };
    assert_eq!(err.code(), "TCC-R022");
    assert!(err.to_string().contains("input"), "{err}");

    // A pending effect whose identity or pc does not fit is refused too.
    let p = effect_program(false);
    let mut e = start(p.clone());
    next(&mut e);
    let good = e.state().clone();
    let mut bad = good.clone();
    if let Some(tcc_engine::continuation::Pending::Effect {
        idempotency_key, ..
    }) = &mut bad.pending
    {
        *idempotency_key = "other:greet".into();
    }
    assert!(Execution::resume(p.clone(), bad, Limits::default()).is_err());
    let mut bad = good;
    bad.frames[0].pc = 0;
    let err = Execution::resume(p, bad, Limits::default()).unwrap_err();
    assert!(err.to_string().contains("not at an Effect"), "{err}");
}

#[test]
fn a_correlation_key_in_a_continuation_is_kept() {
    // Format 1 cannot express a correlation key, so this engine registers
    // waits with `correlation_key: null`; a continuation written elsewhere
    // with one set decodes, round-trips and wakes like any other.
    let p = ts(vec![c_str("approved"), I::WaitForEvent, I::Return], 0);
    let mut e = start(p.clone());
    let o = next(&mut e);
    let req = request_json(&o);
    assert_eq!(req["correlation_key"], serde_json::Value::Null);
    assert_eq!(req["timeout_ms"], serde_json::Value::Null);
    assert_eq!(req["wait_id"], "first:approved::1");
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    let text = e.state().encode().replace(
        r#""correlation_key":null,"event_name":"approved","type":"event","wait_id":"first:approved::1""#,
        r#""correlation_key":"order-7","event_name":"approved","type":"event","wait_id":"first:approved:order-7:1""#,
    );
    assert!(text.contains("order-7"), "{text}");
    let c = Continuation::decode(text.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(c.encode(), text);
    let mut r = Execution::resume(p, c, Limits::default()).unwrap();
    assert_eq!(r.run_until_host(10).unwrap(), Outcome::Suspended);
    r.respond(HostResponse::EventPayload {
        value: string("yes"),
        branch: None,
    })
    .unwrap();
    assert_eq!(next(&mut r), Outcome::Completed(string("yes")));
}

#[test]
fn the_local_host_drops_wakes_for_branches_no_longer_registered() {
    // race(sleep 1, effect a) settles on the effect; the timer's wake is then
    // stale and must not be delivered at the next suspension (a plain sleep).
    let code = vec![
        I::Fork {
            count: 2,
            join_pc: 5,
        },
        c_num(1.0),
        I::Sleep,
        c_str("a"),
        I::Effect { has_input: false },
        I::JoinAny,
        c_num(2.0),
        I::Sleep,
        I::Pop,
        I::Return,
    ];
    let h = host_with_effects(&[("a", EffectAnswer::Result(string("A")))]);
    let r = h.run(ts(code, 0), "x", &[]).unwrap();
    assert_eq!(r.outcome["result"], string("A"));
    let fired: Vec<&serde_json::Value> = r
        .transcript
        .iter()
        .filter(|m| m["type"] == "timer_fired")
        .collect();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(fired[0].get("branch").is_none(), "{}", fired[0]);
}
