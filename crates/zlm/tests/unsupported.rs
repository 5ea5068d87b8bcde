//! Calls to declared functions of other modules are not resolved by this
//! implementation yet (docs/zlm/format.md): they fail closed with
//! ZLM-UNSUPPORTED, never with silent acceptance.

use zlm::{text::parse, write::write};

#[test]
fn a_call_to_another_modules_function_is_unsupported() {
    let foreign = "ab".repeat(32);
    let src = format!(
        "zlm 1.9 package demo module t.calls profile exact mode checked

decl value P public
  func message type f public -> Unit effects []
    block 0
      call Unit | func:#{foreign} effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
"
    );
    let m = parse(&src).expect("parse");
    let e = write(&m).unwrap_err();
    assert_eq!(e.code, "ZLM-UNSUPPORTED", "{e}");
    assert!(e.message.contains("other modules"), "{}", e.message);
}
