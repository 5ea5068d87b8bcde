//! Catchable child failure (`irkit.catchable_child_failure`, issue 33): a
//! host's `child_failed` throws the child's failure at the parent's
//! `Invoke` (or fails its branch), where `catch` handles it.
mod common;
use common::*;
use std::sync::Arc;
use tcc_engine::{EngineError, HostRequest, HostResponse, Outcome, Program};
use tcc_ir::FeatureSet;

fn with_feature(code: Vec<I>, locals: u32) -> Arc<Program> {
    let mut a = artifact("ts.subset.v1", vec![func(0, 0, locals, code)]);
    a.envelope
        .required_engine_features
        .push(tcc_ir::features::CATCHABLE_CHILD_FAILURE.into());
    a.envelope.artifact_hash = tcc_ir::compute_hash(&a);
    Arc::new(Program::new(a, &FeatureSet::all_host_capabilities()).expect("valid"))
}

/// `try { return await invoke("kid") } catch (e) { return "caught: " + e }`,
/// the invoke alone or as a one-branch race (`grouped`).
fn parent(grouped: bool) -> Vec<I> {
    let mut code = vec![I::PushTry {
        catch: 0,
        finally: None,
    }];
    if grouped {
        code.push(I::Fork {
            count: 1,
            join_pc: 4,
        });
    }
    code.extend([c_str("kid"), I::Invoke { arg_count: 0 }]);
    if grouped {
        code.push(I::JoinAny);
    }
    code.push(I::Return);
    let catch = code.len() as u32;
    code[0] = I::PushTry {
        catch,
        finally: None,
    };
    code.extend([
        I::StoreLocal { local: 0 },
        c_str("caught: "),
        I::LoadLocal { local: 0 },
        I::Add,
        I::Return,
    ]);
    code
}

#[test]
fn a_failed_child_is_thrown_at_the_invoke() {
    for grouped in [false, true] {
        let mut e = start(with_feature(parent(grouped), 1));
        let o = next(&mut e);
        let Outcome::Host(HostRequest::CreateChild {
            child_execution_id,
            branch,
            ..
        }) = o
        else {
            panic!("{o:?}")
        };
        e.respond(HostResponse::Ack).unwrap();
        assert_eq!(next(&mut e), Outcome::Suspended);
        // Another child's id is refused.
        assert!(
            e.respond(HostResponse::ChildFailed {
                message: "x".into(),
                branch: branch.clone(),
                child_execution_id: Some("child:other".into()),
            })
            .is_err()
        );
        e.respond(HostResponse::ChildFailed {
            message: "child kid failed: boom".into(),
            branch,
            child_execution_id: Some(child_execution_id),
        })
        .unwrap();
        assert_eq!(
            next(&mut e),
            Outcome::Completed(string("caught: child kid failed: boom")),
            "grouped: {grouped}"
        );
    }
}

#[test]
fn without_the_feature_child_failed_is_refused() {
    let mut e = start(ts(parent(false), 1));
    next(&mut e);
    e.respond(HostResponse::Ack).unwrap();
    assert_eq!(next(&mut e), Outcome::Suspended);
    assert!(matches!(
        e.respond(HostResponse::ChildFailed {
            message: "x".into(),
            branch: None,
            child_execution_id: None,
        }),
        Err(EngineError::UnexpectedHostResponse { .. })
    ));
    let j = HostResponse::ChildFailed {
        message: "m".into(),
        branch: Some("b".into()),
        child_execution_id: None,
    }
    .to_json();
    assert_eq!(HostResponse::from_json(&j).unwrap().to_json(), j);
}

#[test]
fn the_local_host_reports_a_failed_child_to_a_catching_parent() {
    let kid = ts(vec![c_str("boom"), I::Throw], 0);
    for grouped in [false, true] {
        let mut h = host();
        h.children.insert("kid".into(), kid.clone());
        let r = h.run(with_feature(parent(grouped), 1), "p", &[]).unwrap();
        assert_eq!(r.outcome["type"], "completed", "{}", r.outcome);
        let text = r.outcome["result"]["v"].as_str().unwrap();
        assert!(
            text.starts_with("caught: child child:p:") && text.ends_with(" failed: boom"),
            "{text}"
        );
    }
    // Without the feature the local host stops, as before.
    let mut h = host();
    h.children.insert("kid".into(), kid);
    assert!(h.run(ts(parent(false), 1), "p", &[]).is_err());
}
