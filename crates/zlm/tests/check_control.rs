//! Structured control edges (break, continue, backedge): the CFG cannot
//! tell a `continue` from the loop's own back-edge, or a `break` from a
//! plain jump, so the recorded kind is checked for consistency with the
//! CFG; recipes and custody are verified for every kind, and the
//! interpreter runs each edge's recipes exactly.

mod common;
use common::{accept, reject};

use zlm::interp::{Interp, Value};

fn src() -> String {
    common::src("control.zlt")
}

#[test]
fn break_continue_and_backedge_module_is_valid() {
    accept(&src());
}

#[test]
fn runs_every_control_edge_with_its_recipe() {
    let m = zlm::text::parse(&src()).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let s = |v: i64| Value::Scalar(v as u64);
    // n = 10, no break: 0..9, multiples of 3 skipped by `continue`.
    let out = it.run("Main.scan", &[s(10), s(99)]).unwrap();
    assert_eq!(out.value, s(1 + 2 + 4 + 5 + 7 + 8));
    // One Box per iteration, each dropped by the edge that leaves the body.
    assert_eq!(out.drops.len(), 10);
    assert!(
        out.drops
            .iter()
            .all(|d| d.to_string() == "Main.scan: drop l2 : Box")
    );
    // Break at i = 4: iterations 0..=4 each drop their Box (the last on
    // the break edge), and the sum covers 1 and 2.
    let out = it.run("Main.scan", &[s(10), s(4)]).unwrap();
    assert_eq!(out.value, s(3));
    assert_eq!(out.drops.len(), 5);
    // Break on the first iteration.
    let out = it.run("Main.scan", &[s(10), s(0)]).unwrap();
    assert_eq!(out.value, s(0));
    assert_eq!(out.drops.len(), 1);
}

#[test]
fn continue_and_backedge_are_interchangeable_on_a_cfg_back_edge() {
    accept(
        &src()
            .replace("edge 9 continue 6 1", "edge 9 backedge 6 1")
            .replace("edge 10 backedge 7 1", "edge 10 continue 7 1"),
    );
}

#[test]
fn a_loop_exit_may_record_break_or_the_derived_join() {
    accept(&src().replace("edge 5 break 3 4", "edge 5 join 3 4"));
}

#[test]
fn continue_on_a_forward_jump() {
    let e = reject(
        &src().replace("edge 5 break 3 4", "edge 5 continue 3 4"),
        "ZLM-C-CLEANUP",
    );
    assert_eq!(e.block, Some(3));
}

#[test]
fn break_on_a_back_edge() {
    reject(
        &src().replace("edge 10 backedge 7 1", "edge 10 break 7 1"),
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn break_outside_any_loop() {
    let e = reject(
        &src().replace("edge 0 fallthrough 0 1", "edge 0 break 0 1"),
        "ZLM-C-CLEANUP",
    );
    assert_eq!(e.block, Some(0));
}

#[test]
fn break_without_its_recipe_presents_different_custody() {
    reject(
        &src().replace(
            "    edge 5 break 3 4\n      place_drop - $l2 | path:l2 -\n",
            "    edge 5 break 3 4\n",
        ),
        "ZLM-C-CUSTODY",
    );
}

#[test]
fn continue_without_its_recipe_presents_different_custody() {
    reject(
        &src().replace(
            "    edge 9 continue 6 1\n      place_drop - $l2 | path:l2 -\n",
            "    edge 9 continue 6 1\n",
        ),
        "ZLM-C-CUSTODY",
    );
}
