//! One targeted test per checker rule that was covered only by the generic
//! mutation tests: the suspension of an exclusive parent loan by a live
//! child, BORROW_MUT through a shared ancestry, FIELD_MOVE and REPLACE_COMMIT
//! on a `let` field, and the declaration kinds class and intrinsic (which
//! the decoder rejects by tag). Each has an accepted twin, so the rejection
//! is the rule's and not a typo's.

mod common;

const HEADER: &str = "zlm 1.9 package demo module t.rules profile exact mode checked\n\n";

/// A value declaration with a byte-array field and a Copy field, and one
/// exclusive-receiver message whose body is `body` (its loans and block).
fn buf_module(receiver: &str, loans_and_block: &str) -> String {
    format!(
        "{HEADER}decl value Buf public
  field 0 storage public var Array<Byte>
  field 1 n public var UInt64

  func message {receiver} peek public -> UInt64 effects []
    path recv @Buf
    path recv/Buf.storage Array<Byte>
{loans_and_block}    edge 0 return 0 exit
"
    )
}

#[test]
fn reborrowing_an_exclusive_loan_after_its_child_ends_is_accepted() {
    common::accept(&buf_module(
        "exclusive",
        "    loan 0 exclusive recv - Mut<@Buf> - -
    loan 1 exclusive recv/Buf.storage 0 Mut<Array<Byte>> %0.0 %0.3
    loan 2 shared recv/Buf.storage 1 Ref<Array<Byte>> %0.1 %0.2
    loan 3 shared recv/Buf.storage 1 Ref<Array<Byte>> %0.3 %0.4
    block 0
      borrow_mut Mut<Array<Byte>> $recv/Buf.storage | loan:1 -
      borrow_shared Ref<Array<Byte>> %0.0 | loan:2 -
      intrinsic_call UInt64 %0.1 | cfunc:1 effects:[]
      borrow_shared Ref<Array<Byte>> %0.0 | loan:3 -
      intrinsic_call UInt64 %0.3 | cfunc:1 effects:[]
      add UInt64 %0.2 %0.4 | - -
      return - %0.5 | - -
",
    ));
}

#[test]
fn using_an_exclusive_parent_while_its_child_loan_is_live_rejects() {
    let err = common::reject(
        &buf_module(
            "exclusive",
            "    loan 0 exclusive recv - Mut<@Buf> - -
    loan 1 exclusive recv/Buf.storage 0 Mut<Array<Byte>> %0.0 %0.2
    loan 2 shared recv/Buf.storage 1 Ref<Array<Byte>> %0.1 %0.3
    loan 3 shared recv/Buf.storage 1 Ref<Array<Byte>> %0.2 %0.4
    block 0
      borrow_mut Mut<Array<Byte>> $recv/Buf.storage | loan:1 -
      borrow_shared Ref<Array<Byte>> %0.0 | loan:2 -
      borrow_shared Ref<Array<Byte>> %0.0 | loan:3 -
      intrinsic_call UInt64 %0.1 | cfunc:1 effects:[]
      intrinsic_call UInt64 %0.2 | cfunc:1 effects:[]
      add UInt64 %0.3 %0.4 | - -
      return - %0.5 | - -
",
        ),
        "ZLM-C-LOAN",
    );
    assert!(
        err.message
            .contains("exclusive loan 1 is suspended by live child loan 2"),
        "{err}"
    );
    assert_eq!((err.block, err.op), (Some(0), Some(2)), "{err}");
}

#[test]
fn borrow_mut_through_a_shared_receiver_rejects() {
    let err = common::reject(
        &buf_module(
            "shared",
            "    loan 0 shared recv - Ref<@Buf> - -
    loan 1 exclusive recv/Buf.storage 0 Mut<Array<Byte>> %0.0 %0.1
    block 0
      borrow_mut Mut<Array<Byte>> $recv/Buf.storage | loan:1 -
      intrinsic_call UInt64 %0.0 | cfunc:1 effects:[]
      return - %0.1 | - -
",
        ),
        "ZLM-C-LOAN",
    );
    assert!(
        err.message.contains("BORROW_MUT through shared ancestry"),
        "{err}"
    );
    assert_eq!((err.block, err.op), (Some(0), Some(0)), "{err}");
}

#[test]
fn field_move_of_a_let_field_rejects() {
    let src = common::src("own.zlt");
    common::accept(&src);
    let mutant = src.replace(
        "  field 0 left public var @Box\n",
        "  field 0 left public let @Box\n",
    );
    assert_ne!(mutant, src);
    let err = common::reject(&mutant, "ZLM-C-PLACEMENT");
    assert!(
        err.message.contains("FIELD_MOVE of a let ordinary field"),
        "{err}"
    );
    assert_eq!(err.function, "Main.demo", "{err}");
}

#[test]
fn replace_commit_of_a_let_field_rejects() {
    let src = common::src("drops.zlt");
    common::accept(&src);
    let mutant = src.replace(
        "  field 1 right public var @Box\n",
        "  field 1 right public let @Box\n",
    );
    assert_ne!(mutant, src);
    let err = common::reject(&mutant, "ZLM-C-PLACEMENT");
    assert!(
        err.message
            .contains("REPLACE_COMMIT of a field binding requires var"),
        "{err}"
    );
    assert_eq!(err.function, "Main.field_replace", "{err}");
}

/// The canonical bytes of `own.zlt` with the first declaration record's kind
/// word set to `kind`.
fn with_decl_kind(kind: u32) -> (Vec<u8>, u64) {
    use zlm::layout::{HEADER_BYTES, Section, field};
    let bytes = zlm::write::write(&zlm::text::parse(&common::src("own.zlt")).unwrap()).unwrap();
    let mut start = HEADER_BYTES as u64;
    for s in Section::ALL {
        if s == Section::Decls {
            break;
        }
        let at = s.count_offset();
        let count = match s {
            Section::Strings | Section::ConstantBytes => {
                u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
            }
            _ => u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())),
        };
        start += count * s.record_size();
    }
    let at = (start as usize) + field::decl::KIND;
    let mut out = bytes.clone();
    out[at..at + 4].copy_from_slice(&kind.to_le_bytes());
    (out, at as u64)
}

#[test]
fn declaration_kind_class_rejects() {
    let (bytes, at) = with_decl_kind(1);
    let e = zlm::decode::decode(&bytes).expect_err("class");
    assert_eq!((e.code, e.offset), ("ZLM-TAG", Some(at)), "{e}");
    assert!(e.message.contains("(class)"), "{e}");
}

#[test]
fn declaration_kind_intrinsic_rejects() {
    let (bytes, at) = with_decl_kind(4);
    let e = zlm::decode::decode(&bytes).expect_err("intrinsic");
    assert_eq!((e.code, e.offset), ("ZLM-TAG", Some(at)), "{e}");
    assert!(e.message.contains("(intrinsic)"), "{e}");
}
