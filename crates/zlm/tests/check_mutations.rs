//! Invalid-mutation tests: a valid module, minimally mutated, must be
//! rejected by the checked-semantics layer with the rule's stable code —
//! both by `check::check` and by every decode of the canonical bytes.

mod common;
use common::{mutate, src};

fn expect(file: &str, anchor: &str, from: &str, to: &str, code: &str) {
    let base = src(file);
    let m0 = zlm::text::parse(&base).unwrap();
    zlm::check::check(&m0).expect("base module is valid");
    let text = mutate(&base, anchor, from, to);
    let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("mutant must parse: {e}"));
    let err = zlm::check::check(&m).expect_err("mutant must be rejected");
    assert_eq!(err.code, code, "{err}");
    assert!(!err.function.is_empty(), "{err}");
    // The decoder reruns the same checks on the canonical bytes.
    if let Ok(bytes) = zlm::write::write(&m) {
        let e = zlm::decode::decode(&bytes).expect_err("decode must reject");
        assert_eq!(e.code, code, "{e}");
    }
}

const LOOP: &str = "loop.zlt";
const OWN: &str = "own.zlt";

#[test]
fn operand_type_mismatch() {
    expect(
        LOOP,
        "block 2",
        "add Int64 %2.0 %2.1",
        "add Int32 %2.0 %2.1",
        "ZLM-C-TYPE",
    );
}

#[test]
fn comparison_of_non_integer() {
    expect(
        OWN,
        "func message type pick",
        "load_local Bool $p0 | path:p0 -\n      jump_if_false - %0.6",
        "const Int32 c:Int32:1 | - -\n      jump_if_false - %0.6",
        "ZLM-C-TYPE",
    );
}

#[test]
fn return_type_mismatch() {
    expect(
        LOOP,
        "block 3",
        "return - %3.0",
        "return - %1.2",
        "ZLM-C-TYPE",
    );
}

#[test]
fn value_does_not_dominate_use() {
    expect(
        LOOP,
        "block 3",
        "load_local Int64 $l1 | path:l1 -\n      return - %3.0",
        "load_local Int64 $l1 | path:l1 -\n      return - %2.2",
        "ZLM-C-SSA",
    );
}

#[test]
fn unreachable_block() {
    expect(
        LOOP,
        "block 0",
        "jump - ^1 | block:1 -",
        "jump - ^3 | block:3 -",
        "ZLM-C-CFG",
    );
}

#[test]
fn terminator_in_the_middle() {
    expect(
        LOOP,
        "block 0",
        "store_local - $l1 %0.0 | path:l1 -",
        "jump - ^1 | block:1 -",
        "ZLM-C-CFG",
    );
}

#[test]
fn callee_effects_exceed_caller() {
    let base = src(OWN)
        .replace(
            "type make public -> @Box effects []",
            "type make public -> @Box effects [io]",
        )
        .replace("func:Box.make effects:[]", "func:Box.make effects:[io]");
    let m = zlm::text::parse(&base).unwrap();
    let err = zlm::check::check(&m).unwrap_err();
    assert_eq!(err.code, "ZLM-C-EFFECT", "{err}");
}

#[test]
fn effect_auxiliary_differs_from_callee() {
    expect(
        OWN,
        "func message type peek",
        "func:Box.get effects:[]",
        "func:Box.get effects:[io]",
        "ZLM-C-EFFECT",
    );
}

#[test]
fn use_after_drop() {
    expect(
        OWN,
        "func message type demo",
        "place_drop - $t%0.9 | path:t%0.9 -",
        "place_drop - $l0 | path:l0 -",
        "ZLM-C-OWN",
    );
}

#[test]
fn double_consumption_of_an_owner_value() {
    expect(
        OWN,
        "func message type demo",
        "aggregate_construct @Pair %0.4 %0.6",
        "aggregate_construct @Pair %0.4 %0.4",
        "ZLM-C-OWN",
    );
}

#[test]
fn store_over_initialized_owner() {
    expect(
        OWN,
        "func message type demo",
        "store_local - $l1 %0.7 | path:l1 -",
        "store_local - $l0 %0.7 | path:l0 -",
        "ZLM-C-TYPE",
    );
}

#[test]
fn missing_temporary_path() {
    expect(
        OWN,
        "func message type demo",
        "    path t%0.4 @Box\n",
        "",
        "ZLM-C-OWN",
    );
}

#[test]
fn leaked_owner_at_return() {
    expect(
        OWN,
        "func message type demo",
        "      place_drop - $l1 | path:l1 -\n",
        "",
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn recipes_out_of_reverse_custody_order() {
    expect(
        OWN,
        "func message type demo",
        "      place_drop - $l1 | path:l1 -\n      place_drop - $l0 | path:l0 -\n",
        "      place_drop - $l0 | path:l0 -\n      place_drop - $l1 | path:l1 -\n",
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn wrong_edge_kind() {
    expect(
        OWN,
        "func message type pick",
        "edge 4 join 3 2",
        "edge 4 fallthrough 3 2",
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn wrong_edge_successor() {
    expect(
        LOOP,
        "edge 0",
        "edge 3 backedge 2 1",
        "edge 3 backedge 2 3",
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn unequal_custody_at_join() {
    expect(
        OWN,
        "func message type pick",
        "    edge 4 join 3 2\n      place_drop - $l0 | path:l0 -\n",
        "    edge 4 fallthrough 3 2\n",
        "ZLM-C-CUSTODY",
    );
}

#[test]
fn try_bound_to_the_wrong_edge() {
    expect(
        OWN,
        "func message type try_demo",
        "type:Result<Int32,UInt64> edge:0",
        "type:Result<Int32,UInt64> edge:1",
        "ZLM-C-TRY",
    );
}

#[test]
fn try_error_edge_leaks() {
    expect(
        OWN,
        "edge 0 try-error 0 exit",
        "      place_drop - $l0 | path:l0 -\n",
        "",
        "ZLM-C-CLEANUP",
    );
}

#[test]
fn payload_read_without_refinement() {
    expect(
        OWN,
        "func message type radius",
        "enum_is_variant Bool $l0 | variant:Shape.Circle -",
        "enum_is_variant Bool $l0 | variant:Shape.Empty -",
        "ZLM-C-VARIANT",
    );
}

#[test]
fn drop_while_borrowed() {
    let base = src(OWN);
    let a = base.find("func message type peek").unwrap();
    let (head, tail) = base.split_at(a);
    let tail = tail
        .replacen(
            "      call Int32 %0.3 | func:Box.get effects:[]\n      place_drop - $l0 | path:l0 -\n      return - %0.4",
            "      place_drop - $l0 | path:l0 -\n      call Int32 %0.3 | func:Box.get effects:[]\n      return - %0.5",
            1,
        )
        .replacen("Ref<@Box> %0.3 %0.4", "Ref<@Box> %0.3 %0.5", 1);
    let m = zlm::text::parse(&format!("{head}{tail}")).unwrap();
    let err = zlm::check::check(&m).unwrap_err();
    assert_eq!(err.code, "ZLM-C-LOAN", "{err}");
    assert_eq!((err.block, err.op), (Some(0), Some(4)));
}

#[test]
fn last_use_that_is_not_a_use() {
    expect(
        OWN,
        "func message type peek",
        "loan 0 shared l0 - Ref<@Box> %0.3 %0.4",
        "loan 0 shared l0 - Ref<@Box> %0.3 %0.5",
        "ZLM-C-LOAN",
    );
}

#[test]
fn missing_entry_loan() {
    expect(
        OWN,
        "func message shared get",
        "    loan 0 shared recv - Ref<@Box> - -\n",
        "",
        "ZLM-C-LOAN",
    );
}

#[test]
fn store_into_a_parameter() {
    expect(
        LOOP,
        "block 0",
        "store_local - $l0 %0.0 | path:l0 -",
        "store_local - $p0 %0.0 | path:p0 -",
        "ZLM-C-PLACEMENT",
    );
}

#[test]
fn contract_operand_type_mismatch() {
    expect(
        LOOP,
        "requires",
        "cop ge Bool p0 c:Int64:0",
        "cop ge Bool p0 c:Int32:0",
        "ZLM-C-CONTRACT",
    );
}

#[test]
fn ensures_names_a_moved_owner() {
    // A non-Copy result does not survive into ensures.
    expect(
        OWN,
        "func message type fallible",
        "    param 0 ok Bool\n",
        "    param 0 ok Bool\n    ensures\n      cop identity Bool result | 0 0 -\n",
        "ZLM-C-CONTRACT",
    );
}

#[test]
fn backedge_presents_different_custody() {
    expect(
        OWN,
        "func message type churn",
        "    edge 3 backedge 2 1\n      place_drop - $l1 | path:l1 -\n",
        "    edge 3 backedge 2 1\n",
        "ZLM-C-CUSTODY",
    );
}
