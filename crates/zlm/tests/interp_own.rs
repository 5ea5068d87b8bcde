//! Ownership, cleanup, try and refinement executed by the reference
//! interpreter, with exact drop logs (drop order is semantics).

use zlm::interp::{Interp, RunError, Value};

fn load(name: &str) -> zlm::Module {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    zlm::text::parse(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn log(drops: &[zlm::interp::DropEvent]) -> Vec<String> {
    drops.iter().map(|d| d.to_string()).collect()
}

#[test]
fn field_move_then_return_edge_drops_in_reverse_custody_order() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.demo", &[]).unwrap();
    assert_eq!(out.value, Value::Scalar(1));
    assert_eq!(
        log(&out.drops),
        [
            "Main.demo: drop t%0.9 : Box",
            "Main.demo: drop l1 : Pair",
            // left was moved out: recursive drop skips it.
            "Main.demo: drop l1.right : Box",
            "Main.demo: drop l0 : Box",
        ]
    );
}

#[test]
fn try_ok_path_uses_return_edge() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.try_demo", &[Value::Scalar(1)]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "Ok(9)");
    assert_eq!(
        log(&out.drops),
        [
            "Main.try_demo: drop l1 : Box",
            "Main.try_demo: drop l0 : Box"
        ]
    );
}

#[test]
fn try_err_path_runs_the_bound_error_edge_then_returns_fresh_err() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.try_demo", &[Value::Scalar(0)]).unwrap();
    assert_eq!(it.render(&out.value, &out.ty), "Err(99)");
    assert_eq!(log(&out.drops), ["Main.try_demo: drop l0 : Box"]);
}

#[test]
fn refinement_guards_payload_reads() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    assert_eq!(
        it.run("Main.radius", &[Value::Scalar(0)]).unwrap().value,
        Value::Scalar(5)
    );
    assert_eq!(
        it.run("Main.radius", &[Value::Scalar(1)]).unwrap().value,
        Value::Scalar(0)
    );
}

#[test]
fn depth_limit_faults_before_any_move() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked)
        .unwrap()
        .with_limits(zlm::interp::Limits {
            depth: 1,
            ..Default::default()
        });
    match it.run("Main.demo", &[]) {
        Err(RunError::Fault { fault, drops }) => {
            assert_eq!(fault.kind, zlm::interp::FaultKind::DepthLimit);
            assert_eq!(fault.function, "Main.demo");
            assert_eq!((fault.block, fault.op), (Some(0), Some(1)));
            assert!(drops.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn abort_unwind_drops_owners_in_reverse_custody_order() {
    // The second make() call hits the depth limit: the frame holds l0 only.
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked)
        .unwrap()
        .with_limits(zlm::interp::Limits {
            steps: 8,
            ..Default::default()
        });
    match it.run("Main.demo", &[]) {
        Err(RunError::Fault { fault, drops }) => {
            assert_eq!(fault.kind, zlm::interp::FaultKind::StepLimit);
            assert_eq!(log(&drops), ["Main.demo: drop l0 : Box"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn borrow_then_call_with_child_entry_loan() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.peek", &[]).unwrap();
    assert_eq!(out.value, Value::Scalar(4));
    assert_eq!(log(&out.drops), ["Main.peek: drop l0 : Box"]);
}

#[test]
fn join_edge_recipe_reconciles_custody() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let t = it.run("Main.pick", &[Value::Scalar(1)]).unwrap();
    assert_eq!(t.value, Value::Scalar(2));
    assert_eq!(
        log(&t.drops),
        ["Main.pick: drop l0 : Box", "Main.pick: drop l1 : Box"]
    );
    let f = it.run("Main.pick", &[Value::Scalar(0)]).unwrap();
    assert_eq!(
        log(&f.drops),
        ["Main.pick: drop l0 : Box", "Main.pick: drop l1 : Box"]
    );
}

#[test]
fn contracts_with_field_copy_and_pure_call() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let i = |x: i32| Value::Scalar(x as i64 as u64);
    let ok = it.run("Main.probe", &[i(5), i(3)]).unwrap();
    assert_eq!(ok.value, Value::Scalar(1));
    match it.run("Main.probe", &[i(2), i(3)]) {
        Err(RunError::Fault { fault, drops }) => {
            assert_eq!(
                fault.kind,
                zlm::interp::FaultKind::Contract("requires 0".into())
            );
            assert_eq!(fault.function, "Box.at_least");
            // The caller frame unwinds its borrowed owner.
            assert_eq!(log(&drops), ["Main.probe: drop l0 : Box"]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn loop_reinitialization_drops_on_the_backedge() {
    let m = load("own.zlt");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run("Main.churn", &[Value::Scalar(3)]).unwrap();
    assert_eq!(out.value, Value::Scalar(3));
    assert_eq!(log(&out.drops), ["Main.churn: drop l1 : Box"; 3]);
}
