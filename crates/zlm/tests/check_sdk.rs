//! The certified sdk.bytes facade, BYTE_BUILDER_FINISH, the tag-43 loan
//! origin rules, the transient Slice<Byte> local and the call loan matrix:
//! each rule has a valid module that passes and a minimal invalid mutation
//! rejected with the rule's stable code, by `check::check` and by the
//! decoder on canonical bytes.

mod common;
use common::{mutate, src};

/// The shared rejection, plus: the error names its function.
fn reject(text: &str, code: &str) -> zlm::check::CheckError {
    let err = common::reject(text, code);
    assert!(!err.function.is_empty(), "{err}");
    err
}

fn expect(file: &str, anchor: &str, from: &str, to: &str, code: &str) -> zlm::check::CheckError {
    let base = src(file);
    let m0 = zlm::text::parse(&base).unwrap();
    zlm::check::check(&m0).expect("base module is valid");
    reject(&mutate(&base, anchor, from, to), code)
}

const BYTES: &str = "bytes.zlt";

#[test]
fn the_sdk_module_passes_and_decodes() {
    let m = zlm::text::parse(&src(BYTES)).unwrap();
    zlm::check::check(&m).unwrap();
    let bytes = zlm::write::write(&m).unwrap();
    zlm::decode::decode(&bytes).unwrap();
}

#[test]
fn builder_finish_outside_the_certified_definition() {
    let text = src(BYTES)
        .replace("owned finish public", "owned done public")
        .replace("func:BytesBuilder.finish", "func:BytesBuilder.done");
    let e = reject(&text, "ZLM-C-SDK");
    assert_eq!(e.function, "BytesBuilder.done");
}

#[test]
fn builder_finish_consumes_its_receiver_once() {
    let text = src(BYTES).replace(
        "    path t%0.0 @Bytes
    block 0
      byte_builder_finish @Bytes $recv | - -
",
        "    path t%0.0 @Bytes
    path t%0.1 @Bytes
    block 0
      byte_builder_finish @Bytes $recv | - -
      byte_builder_finish @Bytes $recv | - -
",
    );
    let e = reject(&text, "ZLM-C-OWN");
    assert_eq!((e.block, e.op), (Some(0), Some(1)));
}

#[test]
fn builder_finish_yields_exactly_bytes() {
    let text = src(BYTES)
        .replace(
            "      byte_builder_finish @Bytes $recv | - -",
            "      byte_builder_finish @BytesBuilder $recv | - -",
        )
        .replace(
            "    path t%0.0 @Bytes
",
            "    path t%0.0 @BytesBuilder
",
        );
    reject(&text, "ZLM-C-TYPE");
}

#[test]
fn facade_body_differs_from_the_certified_shape() {
    let e = expect(
        BYTES,
        "shared slice",
        "borrow_slice_byte Slice<Byte> $recv/Bytes.storage %0.0 %0.1",
        "borrow_slice_byte Slice<Byte> $recv/Bytes.storage %0.1 %0.0",
        "ZLM-C-SDK",
    );
    assert_eq!(e.function, "Bytes.slice");
}

#[test]
fn facade_outside_sdk_bytes_is_an_ordinary_slice_returning_body() {
    let text = src(BYTES).replace("module sdk.bytes", "module sdk.bytes2");
    let e = reject(&text, "ZLM-C-PLACEMENT");
    assert_eq!(e.function, "Bytes.slice");
}

#[test]
fn ordinary_call_of_the_facade_signature() {
    expect(
        BYTES,
        "type demo",
        "borrow_slice_byte Slice<Byte> %0.20 %0.21 %0.22 | loan:5 cfunc:6",
        "call Slice<Byte> %0.20 %0.21 %0.22 | func:Bytes.slice effects:[]",
        "ZLM-C-SDK",
    );
}

#[test]
fn sdk_storage_layout_is_fixed() {
    expect(
        BYTES,
        "decl value Bytes",
        "field 0 storage private let",
        "field 0 storage private var",
        "ZLM-C-SDK",
    );
}

#[test]
fn bytes_is_never_aggregate_constructed() {
    let text = src(BYTES)
        .replace(
            "aggregate_construct @BytesBuilder %0.16 | decl:@BytesBuilder lit:1",
            "aggregate_construct @Bytes %0.16 | decl:@Bytes lit:1",
        )
        .replace("path t%0.17 @BytesBuilder", "path t%0.17 @Bytes");
    let e = reject(&text, "ZLM-C-SDK");
    assert_eq!(e.block, Some(0));
    assert_eq!(e.op, Some(17));
}

#[test]
fn slice_local_initialized_twice() {
    expect(
        BYTES,
        "type demo",
        "assert_eq - %0.26 %0.29 | - -",
        "store_local - $l1 %0.23 | path:l1 -",
        "ZLM-C-PLACEMENT",
    );
}

#[test]
fn slice_value_bound_to_a_local_has_no_second_use() {
    expect(
        BYTES,
        "type demo",
        "borrow_shared Ref<Slice<Byte>> $l1 | loan:6 -",
        "borrow_shared Ref<Slice<Byte>> %0.23 | loan:6 -",
        "ZLM-C-PLACEMENT",
    );
}

#[test]
fn slice_local_used_after_its_loan_ends() {
    expect(
        BYTES,
        "type demo",
        "loan 5 slice l0 4 Slice<Byte> %0.23 %0.31",
        "loan 5 slice l0 4 Slice<Byte> %0.23 %0.25",
        "ZLM-C-LOAN",
    );
}

#[test]
fn slice_local_reborrow_names_the_wrong_parent() {
    expect(
        BYTES,
        "type demo",
        "loan 6 shared l0 5",
        "loan 6 shared l0 4",
        "ZLM-C-LOAN",
    );
}

#[test]
fn tag43_through_a_loan_view_reuses_the_parent_origin() {
    expect(
        BYTES,
        "type demo",
        "loan 5 slice l0 4",
        "loan 5 slice l2 4",
        "ZLM-C-LOAN",
    );
}

#[test]
fn tag43_through_an_entry_loan_field_names_that_field_path() {
    let e = expect(
        BYTES,
        "shared length",
        "loan 1 shared recv/Bytes.storage 0",
        "loan 1 shared recv 0",
        "ZLM-C-LOAN",
    );
    assert_eq!(e.function, "Bytes.length");
}

#[test]
fn tag43_names_the_catalog_slice_signature() {
    expect(
        BYTES,
        "type demo",
        "%0.22 | loan:5 cfunc:6",
        "%0.22 | loan:5 cfunc:2",
        "ZLM-C-TYPE",
    );
}

/// Two exclusive byte-array loans forwarded to one callee.
const FORWARD: &str = "zlm 1.9 package demo module run.alias profile exact mode checked

decl value Main public
  func message type both public -> Unit effects []
    param 0 a Mut<Array<Byte>>
    param 1 b Mut<Array<Byte>>
    path p0 Array<Byte>
    path p1 Array<Byte>
    loan 0 exclusive p0 - Mut<Array<Byte>> - -
    loan 1 exclusive p1 - Mut<Array<Byte>> - -
    block 0
      unit_value Unit | - -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type forward public -> Unit effects []
    param 0 x Mut<Array<Byte>>
    param 1 y Mut<Array<Byte>>
    path p0 Array<Byte>
    path p1 Array<Byte>
    loan 0 exclusive p0 - Mut<Array<Byte>> - -
    loan 1 exclusive p1 - Mut<Array<Byte>> - -
    block 0
      call Unit $p0 $p1 | func:Main.both effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
";

#[test]
fn distinct_exclusive_loans_may_be_forwarded_together() {
    let m = zlm::text::parse(FORWARD).unwrap();
    zlm::check::check(&m).unwrap();
}

#[test]
fn one_exclusive_loan_passed_twice_aliases() {
    let text = FORWARD.replace("call Unit $p0 $p1", "call Unit $p0 $p0");
    let e = reject(&text, "ZLM-C-LOAN");
    assert_eq!(e.function, "Main.forward");
    assert_eq!((e.block, e.op), (Some(0), Some(0)));
}

#[test]
fn shared_and_exclusive_views_of_one_owner_alias() {
    // both(a: Mut, b: Ref) called with the same exclusive entry binding and
    // a shared reborrow of it.
    let text = FORWARD
        .replace("    param 1 b Mut<Array<Byte>>", "    param 1 b Ref<Array<Byte>>")
        .replace(
            "    loan 1 exclusive p1 - Mut<Array<Byte>> - -\n    block 0\n      unit_value",
            "    loan 1 shared p1 - Ref<Array<Byte>> - -\n    block 0\n      unit_value",
        )
        .replace(
            "      call Unit $p0 $p1 | func:Main.both effects:[]\n      return - %0.0",
            "      borrow_shared Ref<Array<Byte>> $p0 | loan:2 -\n      call Unit $p0 %0.0 | func:Main.both effects:[]\n      return - %0.1",
        )
        .replace(
            "    loan 1 exclusive p1 - Mut<Array<Byte>> - -\n    block 0\n      borrow_shared",
            "    loan 1 exclusive p1 - Mut<Array<Byte>> - -\n    loan 2 shared p0 0 Ref<Array<Byte>> %0.0 %0.1\n    block 0\n      borrow_shared",
        );
    let e = reject(&text, "ZLM-C-LOAN");
    assert_eq!(e.function, "Main.forward");
}
