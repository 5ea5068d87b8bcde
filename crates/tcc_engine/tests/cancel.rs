//! Catchable cancellation (`irkit.catchable_cancel`, issue 33): the host's
//! `request_cancel` throws a cancellation error at the execution's wait or
//! effect (or its next durable operation), its handlers compensate, and
//! the execution ends `cancelled` when that error leaves the entry.
mod common;
use common::*;
use std::sync::Arc;
use tcc_engine::local_host::EffectAnswer;
use tcc_engine::{
    CANCELLED_ERROR, CancelPhase, Continuation, EngineError, Execution, HostRequest, HostResponse,
    Limits, Outcome, Program, Status,
};
use tcc_ir::FeatureSet;

/// A TypeScript-semantics program whose envelope also requires
/// `irkit.catchable_cancel`.
fn catchable(code: Vec<I>, locals: u32) -> Arc<Program> {
    let mut a = artifact("ts.subset.v1", vec![func(0, 0, locals, code)]);
    a.envelope
        .required_engine_features
        .push(tcc_ir::features::CATCHABLE_CANCEL.into());
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    Arc::new(Program::new(a, &FeatureSet::all_host_capabilities()).expect("valid"))
}

/// `try { await sleep(5); return "done" } catch (e) { await effect("refund"); TAIL }`
/// where TAIL rethrows `e` (`rethrow`) or returns "compensated".
fn saga(rethrow: bool) -> Vec<I> {
    let mut code = vec![
        I::PushTry {
            catch: 7,
            finally: None,
        },
        c_num(5.0),
        I::Sleep,
        I::Pop,
        I::PopTry,
        c_str("done"),
        I::Return,
        I::StoreLocal { local: 0 },
        c_str("refund"),
        I::Effect { has_input: false },
        I::Pop,
    ];
    if rethrow {
        code.extend([I::LoadLocal { local: 0 }, I::Throw]);
    } else {
        code.extend([c_str("compensated"), I::Return]);
    }
    code
}

fn suspend_on_timer(e: &mut Execution) {
    let o = next(e);
    assert!(
        matches!(o, Outcome::Host(HostRequest::RegisterTimer { .. })),
        "{o:?}"
    );
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(e), Outcome::Suspended);
}

fn refund_then(e: &mut Execution) -> Outcome {
    let o = next(e);
    assert!(
        matches!(&o, Outcome::Host(HostRequest::RunEffect { key, .. }) if key == "refund"),
        "{o:?}"
    );
    assert_eq!(e.state().cancel, Some(CancelPhase::Delivered));
    e.respond(HostResponse::EffectResult { value: num(1.0) })
        .unwrap();
    let o = next(e);
    assert!(
        matches!(o, Outcome::Host(HostRequest::PersistEffect { .. })),
        "{o:?}"
    );
    e.respond(HostResponse::Ack).unwrap();
    next(e)
}

#[test]
fn cancel_at_a_wait_runs_the_handler_then_ends_cancelled() {
    let mut e = start(catchable(saga(true), 1));
    suspend_on_timer(&mut e);
    e.respond(HostResponse::RequestCancel).unwrap();
    assert!(e.state().pending.is_none(), "the wait is abandoned");
    assert_eq!(refund_then(&mut e), Outcome::Cancelled);
    assert_eq!(e.state().status, Status::Cancelled);
    assert!(
        matches!(&e.state().result, Some(tcc_engine::Value::Str(s)) if s.as_str() == CANCELLED_ERROR)
    );
    // Ended: neither cancellation is accepted any more.
    assert!(e.respond(HostResponse::RequestCancel).is_err());
    assert!(e.respond(HostResponse::Cancel).is_err());
}

#[test]
fn the_program_decides_how_a_cancelled_execution_ends() {
    // Handled and returned: completed with the handler's value.
    let mut e = start(catchable(saga(false), 1));
    suspend_on_timer(&mut e);
    e.respond(HostResponse::RequestCancel).unwrap();
    assert_eq!(
        refund_then(&mut e),
        Outcome::Completed(string("compensated"))
    );
    // Another error raised by the handler: failed, with that error.
    let mut code = saga(true);
    let n = code.len();
    code[n - 2] = c_str("refund failed");
    let mut e = start(catchable(code, 1));
    suspend_on_timer(&mut e);
    e.respond(HostResponse::RequestCancel).unwrap();
    assert!(
        matches!(refund_then(&mut e), Outcome::Failed { message, .. } if message == "refund failed")
    );
}

#[test]
fn cancel_while_an_effect_is_outstanding_throws_at_the_effect() {
    // try { await effect("charge"); return "charged" } catch (e) { await effect("refund"); throw e }
    let code = vec![
        I::PushTry {
            catch: 6,
            finally: None,
        },
        c_str("charge"),
        I::Effect { has_input: false },
        I::PopTry,
        I::Return,
        I::Nop,
        I::StoreLocal { local: 0 },
        c_str("refund"),
        I::Effect { has_input: false },
        I::Pop,
        I::LoadLocal { local: 0 },
        I::Throw,
    ];
    let mut e = start(catchable(code, 1));
    let o = next(&mut e);
    assert!(matches!(&o, Outcome::Host(HostRequest::RunEffect { key, .. }) if key == "charge"));
    e.respond(HostResponse::RequestCancel).unwrap();
    // `charge` is not journalled: the next request is the compensation.
    assert_eq!(refund_then(&mut e), Outcome::Cancelled);
}

#[test]
fn a_request_between_steps_is_thrown_at_the_next_durable_operation() {
    // reserve; done = 1; try { await effect("charge") } catch (e) { return done }
    let code = vec![
        c_num(0.0),
        I::StoreLocal { local: 0 },
        I::PushTry {
            catch: 9,
            finally: None,
        },
        c_num(1.0),
        I::StoreLocal { local: 0 },
        c_str("charge"),
        I::Effect { has_input: false },
        I::PopTry,
        I::Return,
        I::Pop,
        I::LoadLocal { local: 0 },
        I::Return,
    ];
    let mut e = start(catchable(code, 1));
    // Fresh and runnable: recorded, not thrown at pc 0.
    e.respond(HostResponse::RequestCancel).unwrap();
    assert_eq!(e.state().cancel, Some(CancelPhase::Requested));
    // The statements before the next await ran (done = 1); the effect did not.
    assert_eq!(next(&mut e), Outcome::Completed(num(1.0)));
}

#[test]
fn cancel_inside_a_group_abandons_the_group() {
    // try { await Promise.all([sleep(5), sleep(6)]) } catch (e) { return "caught" }
    let code = vec![
        I::PushTry {
            catch: 8,
            finally: None,
        },
        I::Fork {
            count: 2,
            join_pc: 6,
        },
        c_num(5.0),
        I::Sleep,
        c_num(6.0),
        I::Sleep,
        I::JoinAll,
        I::Return,
        I::Pop,
        c_str("caught"),
        I::Return,
    ];
    let mut e = start(catchable(code, 0));
    for _ in 0..2 {
        let o = next(&mut e);
        assert!(matches!(
            o,
            Outcome::Host(HostRequest::RegisterTimer { .. })
        ));
        e.respond(HostResponse::Ack).unwrap();
    }
    assert_eq!(next(&mut e), Outcome::Suspended);
    e.respond(HostResponse::RequestCancel).unwrap();
    assert!(e.state().join.is_none());
    assert_eq!(e.state().reentries.len(), 1, "the group's run is counted");
    assert_eq!(next(&mut e), Outcome::Completed(string("caught")));
}

#[test]
fn refusals() {
    // An artifact without the feature is cancelled with `cancel` only.
    let mut e = start(ts(saga(true), 1));
    suspend_on_timer(&mut e);
    assert!(matches!(
        e.respond(HostResponse::RequestCancel),
        Err(EngineError::UnexpectedHostResponse { .. })
    ));
    // Not while a registration is outstanding; only once; terminate still works.
    let mut e = start(catchable(saga(true), 1));
    let o = next(&mut e);
    assert!(matches!(
        o,
        Outcome::Host(HostRequest::RegisterTimer { .. })
    ));
    assert!(e.respond(HostResponse::RequestCancel).is_err());
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    e.respond(HostResponse::RequestCancel).unwrap();
    let o = next(&mut e);
    assert!(matches!(o, Outcome::Host(HostRequest::RunEffect { .. })));
    assert!(e.respond(HostResponse::RequestCancel).is_err());
    // Terminate while the compensation waits stops it at once.
    let mut code = saga(true);
    // The handler's `await effect("refund")` becomes `await sleep(1)`.
    code[8] = c_num(1.0);
    code[9] = I::Sleep;
    let mut e = start(catchable(code, 1));
    suspend_on_timer(&mut e);
    e.respond(HostResponse::RequestCancel).unwrap();
    suspend_on_timer(&mut e);
    e.respond(HostResponse::Cancel).unwrap();
    assert_eq!(next(&mut e), Outcome::Cancelled);
    assert!(e.state().result.is_none(), "terminated, not rethrown");
    assert!(matches!(
        HostResponse::decode(br#"{"host_protocol_version":1,"type":"request_cancel"}"#),
        Ok(HostResponse::RequestCancel)
    ));
}

#[test]
fn the_delivered_cancellation_survives_a_checkpoint_and_resume() {
    let p = catchable(saga(true), 1);
    let mut e = start(p.clone());
    suspend_on_timer(&mut e);
    e.respond(HostResponse::RequestCancel).unwrap();
    // The delivery's checkpoint: a delta (or snapshot) carrying `cancel`.
    let o = e.run_until_host(100).unwrap();
    let Outcome::Host(HostRequest::PersistCheckpoint {
        revision,
        materialize,
        delta,
        ..
    }) = o
    else {
        panic!("{o:?}")
    };
    let body = delta.or(materialize).expect("a body");
    assert_eq!(body["cancel"], "delivered", "{body}");
    e.respond(HostResponse::PersistConfirmed { revision })
        .unwrap();
    // Resume the committed state elsewhere: the handler runs on and the
    // rethrown cancellation still ends the execution `cancelled`.
    let text = e.state().encode();
    assert!(text.contains(r#""cancel":"delivered""#));
    let c = Continuation::decode(text.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(c.cancel, Some(CancelPhase::Delivered));
    assert_eq!(c.encode(), text, "canonical round trip");
    let mut r = Execution::resume(p, c, Limits::default()).unwrap();
    assert_eq!(refund_then(&mut r), Outcome::Cancelled);
    // A continuation without a cancellation has no `cancel` key.
    let plain = start(ts(saga(true), 1)).state().encode();
    assert!(!plain.contains("cancel"));
    // An unknown phase is a decode error.
    let bad = text.replace(r#""cancel":"delivered""#, r#""cancel":"maybe""#);
    assert!(Continuation::decode(bad.as_bytes(), &Limits::default()).is_err());
}

#[test]
fn the_local_host_cancels_through_the_handlers() {
    let p = catchable(saga(true), 1);
    let mut h = host_with_effects(&[("refund", EffectAnswer::Result(num(1.0)))]);
    h.cancel_at_wake = Some(0);
    let r = h.run(p, "x", &[]).unwrap();
    assert_eq!(r.outcome["type"], "cancelled", "{}", r.outcome);
    assert_eq!(r.effect_log.len(), 1);
    assert_eq!(r.effect_log[0]["key"], "refund");
    // Without the feature: cancelled at once, no compensation.
    let mut h = host_with_effects(&[("refund", EffectAnswer::Result(num(1.0)))]);
    h.cancel_at_wake = Some(0);
    let r = h.run(ts(saga(true), 1), "x", &[]).unwrap();
    assert_eq!(r.outcome["type"], "cancelled");
    assert!(r.effect_log.is_empty());
}

mod arbitrary {
    use super::*;
    use proptest::prelude::*;

    fn response() -> impl Strategy<Value = HostResponse> {
        prop_oneof![
            Just(HostResponse::RequestCancel),
            Just(HostResponse::Cancel),
            Just(HostResponse::Ack),
            Just(HostResponse::TimerFired { branch: None }),
            Just(HostResponse::EffectResult { value: num(1.0) }),
            Just(HostResponse::EffectFailed {
                message: "no".into()
            }),
            Just(HostResponse::ChildFailed {
                message: "child x failed: no".into(),
                branch: None,
                child_execution_id: None,
            }),
        ]
    }

    proptest! {
        /// Any order of answers, cancellations included, never panics; a
        /// refused answer changes nothing; every checkpoint's continuation
        /// decodes to itself and resumes; an ended execution stays ended.
        #[test]
        fn cancellations_in_any_order_never_panic(
            answers in prop::collection::vec(response(), 0..24),
            rethrow in any::<bool>(),
        ) {
            let p = catchable(saga(rethrow), 1);
            let mut e = start(p.clone());
            for a in answers {
                match e.run_until_host(1_000) {
                    Ok(Outcome::Host(HostRequest::PersistCheckpoint { revision, .. })) => {
                        let text = e.state().encode();
                        let c = Continuation::decode(text.as_bytes(), &Limits::default()).unwrap();
                        prop_assert_eq!(c.encode(), text);
                        prop_assert!(Execution::resume(p.clone(), c, Limits::default()).is_ok());
                        e.respond(HostResponse::PersistConfirmed { revision }).unwrap();
                    }
                    Ok(Outcome::Completed(_) | Outcome::Failed { .. } | Outcome::Cancelled) => {
                        prop_assert!(e.state().status.is_terminal());
                        prop_assert!(e.respond(a).is_err());
                    }
                    Ok(_) => {
                        let before = e.state().encode();
                        if e.respond(a).is_err() {
                            prop_assert_eq!(e.state().encode(), before);
                        }
                    }
                    Err(err) => prop_assert!(false, "engine error: {err}"),
                }
            }
        }
    }
}
