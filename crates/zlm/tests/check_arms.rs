//! Conditional arms take the edge kind the spec's priority rule derives
//! (backedge, then join, then branch), in the structural check and the
//! semantic pass alike: a do-while's bottom test is a backedge, and a
//! conditional arm that drops an owner into a join block is a join.

mod common;
use common::{accept, mutate, reject, src};

use zlm::interp::{Interp, Value};

fn arms() -> String {
    src("arms.zlt")
}

#[test]
fn do_while_backedge_and_dropping_join_arm_are_valid() {
    accept(&arms());
}

#[test]
fn both_shapes_run() {
    let m = zlm::text::parse(&arms()).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let int = |v: i64| Value::Scalar(v as u64);
    // The body runs before the first test: once even for n = 0.
    assert_eq!(it.run("Main.countdown", &[int(5)]).unwrap().value, int(5));
    assert_eq!(it.run("Main.countdown", &[int(0)]).unwrap().value, int(1));
    // Either arm drops the Box on its edge into the join block.
    for (flag, want) in [(1, 7), (0, 0)] {
        let out = it.run("Main.pick", &[Value::Scalar(flag)]).unwrap();
        assert_eq!(out.value, int(want));
        let drops: Vec<String> = out.drops.iter().map(|d| d.to_string()).collect();
        assert_eq!(drops, ["Main.pick: drop l0 : Box"]);
    }
}

#[test]
fn a_conditional_arm_must_have_the_derived_kind() {
    // The do-while's bottom test is a backedge, not a branch …
    let text = mutate(&arms(), "edge 2 backedge", "backedge", "branch");
    reject(&text, "ZLM-C-CLEANUP");
    // … and the dropping arm into the join is a join, not a branch.
    let text = mutate(&arms(), "edge 1 join 0 2", "join", "branch");
    reject(&text, "ZLM-C-CLEANUP");
    // A conditional arm is never a fallthrough (structural).
    let text = mutate(&arms(), "edge 1 join 0 2", "join", "fallthrough");
    let m = zlm::text::parse(&text).unwrap();
    assert_eq!(zlm::write::write(&m).unwrap_err().code, "ZLM-SHAPE");
}
