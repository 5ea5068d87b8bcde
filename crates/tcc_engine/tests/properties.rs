//! Property tests: restore at every boundary, arbitrary continuations and
//! messages, persist goldens (base + delta = expected).
mod common;
use common::generate::{Block, answer, block, lower};
use common::*;
use proptest::prelude::*;
use serde_json::json;
use tcc_engine::{Continuation, Execution, HostResponse, Limits, apply_delta, compute_delta};

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn restoring_at_every_boundary_changes_nothing(
        blocks in prop::collection::vec(block(), 1..12),
        answers in prop::collection::vec(answer(), 3),
        lang in prop_oneof![Just("ts.subset.v1"), Just("py.subset.v1")],
    ) {
        let p = program(lang, vec![func(0, 0, 4, lower(&blocks))]);
        let mut h = host();
        for (i, a) in answers.iter().enumerate() {
            h.effects.insert(format!("e{i}"), a.clone());
        }
        h.events.insert("ev0".into(), string("zero"));
        h.events.insert("ev1".into(), json!({"t":"object","v":{"n":{"t":"number","v":1}}}));
        // Same final result and effect log (or the same error) with and without restores.
        let summary = |r: Result<tcc_engine::RunReport, tcc_engine::local_host::HostError>| match r {
            Ok(r) => {
                // The direct writer and the JSON-tree writer agree byte for byte.
                if let Some(c) = &r.stored {
                    assert_eq!(c.encode(), tcc_engine::json::to_canonical(&c.to_json()));
                    assert_eq!(c.encoded_len(), c.encode().len());
                    assert_eq!(c.encode_sized(c.encoded_len()), c.encode());
                }
                // Every delta came with the engine's own text of it (the
                // local host checked each text against its body).
                assert!(r.checkpoint_texts >= r.checkpoints.1, "{:?} {}", r.checkpoints, r.checkpoint_texts);
                Ok((r.outcome, r.effect_log, r.stored.map(|c| c.encode())))
            }
            Err(e) => Err(e.to_string()),
        };
        let straight = summary(h.run(p.clone(), "prop", &[]));
        h.restore_at_checkpoints = true;
        let restored = summary(h.run(p.clone(), "prop", &[]));
        prop_assert_eq!(&straight, &restored);
        // The durable host's mode: checkpoints handed over as text alone
        // (each measured before it is written), read back from the text.
        // The same snapshots and deltas, and the same end, as from trees.
        h.restore_at_checkpoints = false;
        let counts = |r: &Result<tcc_engine::RunReport, tcc_engine::local_host::HostError>| {
            r.as_ref().map(|r| r.checkpoints).map_err(|e| e.to_string())
        };
        let trees = h.run(p.clone(), "prop", &[]);
        h.text_checkpoints = true;
        let texts = h.run(p.clone(), "prop", &[]);
        prop_assert_eq!(counts(&trees), counts(&texts));
        prop_assert_eq!(&straight, &summary(texts));
        h.restore_at_checkpoints = true;
        let restored_texts = summary(h.run(p.clone(), "prop", &[]));
        prop_assert_eq!(&straight, &restored_texts);
        h.text_checkpoints = false;
        // One instruction per call: fused fast-path runs never apply, so
        // this also checks the fast path against the plain stepper.
        h.restore_at_checkpoints = false;
        h.budget = 1;
        let single = summary(h.run(p, "prop", &[]));
        prop_assert_eq!(straight, single);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = Continuation::decode(&bytes, &Limits::default());
        let _ = HostResponse::decode(&bytes);
    }

    #[test]
    fn continuations_read_from_text_as_from_a_tree(
        blocks in prop::collection::vec(block(), 1..6),
        cut in 0usize..4000,
        byte in any::<u8>(),
        budget in 0u64..500,
    ) {
        // A real continuation, one byte corrupted: decoding (its heap read
        // straight from the text, issue 42) answers as the tree path does.
        let p = program("ts.subset.v1", vec![func(0, 0, 4, lower(&blocks))]);
        let mut e = Execution::start(p, "m", &[], Limits::default()).unwrap();
        let _ = e.run_until_host(budget);
        let mut text = e.state().encode().into_bytes();
        if !text.is_empty() {
            let i = cut % text.len();
            text[i] = byte;
        }
        let limits = Limits::default();
        let fast = Continuation::decode(&text, &limits)
            .map(|c| c.encode())
            .map_err(|e| e.to_string());
        let tree = tcc_engine::json::parse_strict(&text)
            .map_err(|e| {
                tcc_engine::EngineError::continuation("$", tcc_engine::json::strict_error_text(&e))
                    .to_string()
            })
            .and_then(|j| {
                Continuation::from_json(&j, &limits)
                    .map(|c| c.encode())
                    .map_err(|e| e.to_string())
            });
        prop_assert_eq!(fast, tree);
    }

    #[test]
    fn mutated_continuations_never_panic(
        blocks in prop::collection::vec(block(), 1..6),
        cut in 0usize..4000,
        byte in any::<u8>(),
        budget in 0u64..500,
    ) {
        // Take a real continuation, corrupt one byte, decode, resume, run.
        let p = program("ts.subset.v1", vec![func(0, 0, 4, lower(&blocks))]);
        let mut e = Execution::start(p.clone(), "m", &[], Limits::default()).unwrap();
        let _ = e.run_until_host(50);
        let mut text = e.state().encode().into_bytes();
        if !text.is_empty() {
            let i = cut % text.len();
            text[i] = byte;
        }
        if let Ok(c) = Continuation::decode(&text, &Limits::default())
            && let Ok(mut r) = Execution::resume(p, c, Limits::default())
        {
            for _ in 0..4 {
                match r.run_until_host(budget) {
                    Ok(tcc_engine::Outcome::Host(tcc_engine::HostRequest::PersistCheckpoint { revision, .. })) => {
                        let _ = r.respond(HostResponse::PersistConfirmed { revision });
                    }
                    Ok(tcc_engine::Outcome::Suspended) => { let _ = r.respond(HostResponse::TimerFired { branch: None }); }
                    Ok(tcc_engine::Outcome::Host(_)) => { let _ = r.respond(HostResponse::Ack); }
                    _ => break,
                }
            }
        }
    }
}

fn golden(base: serde_json::Value, delta: serde_json::Value, expected: serde_json::Value) {
    let limits = Limits::default();
    let base = Continuation::from_json(&base, &limits).unwrap();
    let expected = Continuation::from_json(&expected, &limits).unwrap();
    let mut got = apply_delta(&base, &delta, &limits).unwrap();
    got.revision = expected.revision;
    assert_eq!(got.encode(), expected.encode());
    // and our delta from base to expected reproduces it
    let ours = compute_delta(&base, &expected).unwrap();
    // A base kept without its heap's cells (the engine's) makes the same.
    let digest = base.heap.digest();
    let kept = tcc_engine::continuation::DeltaBase::of(&mut base.clone(), digest);
    assert_eq!(
        kept.delta(&expected, expected.heap.digest()).as_ref(),
        Some(&ours)
    );
    let mut again = apply_delta(&base, &ours, &limits).unwrap();
    again.revision = expected.revision;
    assert_eq!(again.encode(), expected.encode());
}

fn base_cont(
    locals: serde_json::Value,
    pending: serde_json::Value,
    status: &str,
) -> serde_json::Value {
    json!({"execution_id":"g","artifact_hash":"h","engine_format_version":1,"language_semantics_version":"ts.subset.v1",
        "revision":1,"status":status,"frames":[{"func_id":0,"pc":3,"locals":locals}],"stack":[],"pending":pending,
        "result":null,"try_stack":[]})
}

#[test]
fn persist_goldens_base_plus_delta() {
    let n = |v: f64| num(v);
    let timer = json!({"type":"wait","kind":{"type":"timer","resume_at_ms":5}});
    // store-local: a local changes and the pc moves.
    let mut exp = base_cont(json!([n(1.0), n(2.0)]), json!(null), "runnable");
    exp["revision"] = json!(2);
    exp["frames"][0]["pc"] = json!(5);
    golden(
        base_cont(json!([n(1.0), {"t":"undefined"}]), json!(null), "runnable"),
        json!({"frames":[{"index":0,"pc":5,"locals":[{"slot":1,"value":n(2.0)}]}]}),
        exp,
    );
    // pending-wait: suspension with a pending timer.
    golden(
        base_cont(json!([n(1.0)]), json!(null), "runnable"),
        json!({"pending":timer,"status":"suspended"}),
        base_cont(json!([n(1.0)]), timer.clone(), "suspended"),
    );
    // clear-pending: the wake clears it and pushes the value.
    let mut exp = base_cont(json!([n(1.0)]), json!(null), "runnable");
    exp["stack"] = json!([{"t":"undefined"}]);
    golden(
        base_cont(json!([n(1.0)]), timer, "suspended"),
        json!({"pending":null,"status":"runnable","stack":[{"t":"undefined"}]}),
        exp,
    );
    // slot-undefined: a dead slot patched to undefined.
    golden(
        base_cont(json!([n(1.0), string("big")]), json!(null), "runnable"),
        json!({"frames":[{"index":0,"locals":[{"slot":1,"value":{"t":"undefined"}}]}]}),
        base_cont(json!([n(1.0), {"t":"undefined"}]), json!(null), "runnable"),
    );
}

#[test]
fn continuations_keep_aliasing_and_cycles() {
    // a = {}; a.self = a; b = [a, a]; sleep; return b[0] === b[1] && b[0].self === a
    let p = ts(
        vec![
            I::NewObject,
            I::StoreLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::LoadLocal { local: 0 },
            I::SetProp { key: "self".into() },
            I::Pop,
            I::NewArray,
            I::LoadLocal { local: 0 },
            I::ArrayPush,
            I::LoadLocal { local: 0 },
            I::ArrayPush,
            I::StoreLocal { local: 1 },
            c_num(1.0),
            I::Sleep,
            I::Pop,
            I::LoadLocal { local: 1 },
            I::ArrayIndex { index: 0 },
            I::GetProp { key: "self".into() },
            I::LoadLocal { local: 0 },
            I::StrictEq,
            I::Return,
        ],
        2,
    );
    let mut h = host();
    h.restore_at_checkpoints = true;
    let r = h.run(p, "alias", &[]).unwrap();
    assert!(r.restores >= 2);
    assert_eq!(r.outcome["result"], json!({"t":"bool","v":true}));
    let c = r.stored.unwrap();
    assert_eq!(c.encode(), tcc_engine::json::to_canonical(&c.to_json()));
}

#[test]
fn unknown_keys_and_tags_are_rejected() {
    let limits = Limits::default();
    let mut c = base_cont(json!([]), json!(null), "runnable");
    assert!(Continuation::from_json(&c, &limits).is_ok());
    c["extra"] = json!(1);
    assert!(Continuation::from_json(&c, &limits).is_err());
    let c = base_cont(json!([{"t":"hole"}]), json!(null), "runnable");
    assert!(Continuation::from_json(&c, &limits).is_err());
    let c = base_cont(json!([{"t":"ref","v":3}]), json!(null), "runnable");
    assert!(
        Continuation::from_json(&c, &limits).is_err(),
        "dangling ref"
    );
    let mut c = base_cont(json!([{"t":"ref","v":0}]), json!(null), "runnable");
    c["heap"] = json!([{"t":"array","v":[{"t":"ref","v":0}]}]);
    assert!(
        Continuation::from_json(&c, &limits).is_ok(),
        "cycles are representable"
    );
}

/// A checkpoint request asked for again before its response is the same
/// request, body included (the first hand-out moves the body out of the
/// engine; later ones rebuild it from the unchanged state), for snapshots
/// and deltas alike; so is `outstanding()`.
#[test]
fn a_checkpoint_request_asked_for_twice_is_the_same() {
    let blocks = [
        Block::Effect(0, false),
        Block::Compute(0, 1.0),
        Block::Effect(1, true),
        Block::Compute(0, 2.0),
        Block::Effect(2, true),
    ];
    let p = program("ts.subset.v1", vec![func(0, 0, 4, lower(&blocks))]);
    let mut e = start(p);
    e.set_delta_checkpoints(true);
    let (mut snapshots, mut deltas) = (0, 0);
    loop {
        let first = e.run_until_host(1_000_000).unwrap();
        let tcc_engine::Outcome::Host(req) = &first else {
            assert!(
                matches!(first, tcc_engine::Outcome::Completed(_)),
                "{first:?}"
            );
            break;
        };
        let again = request_json(&e.run_until_host(1_000_000).unwrap());
        assert_eq!(req.to_json(), again);
        assert_eq!(e.outstanding().unwrap().to_json(), again);
        let response = match req {
            tcc_engine::HostRequest::PersistCheckpoint {
                revision,
                kind,
                materialize,
                delta,
                ..
            } => {
                match kind {
                    tcc_engine::protocol::CheckpointKind::Snapshot => snapshots += 1,
                    tcc_engine::protocol::CheckpointKind::Delta => deltas += 1,
                }
                assert!(materialize.is_some() || delta.is_some());
                HostResponse::PersistConfirmed {
                    revision: *revision,
                }
            }
            tcc_engine::HostRequest::RunEffect { .. } => {
                HostResponse::EffectResult { value: num(1.0) }
            }
            _ => HostResponse::Ack,
        };
        e.respond(response).unwrap();
    }
    assert!(snapshots > 0 && deltas > 0, "{snapshots} {deltas}");
}
