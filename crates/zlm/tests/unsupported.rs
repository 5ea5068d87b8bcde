//! A call to a declared function of another module resolves only against
//! the providers of the modules a module imports from (docs/zlm/format.md,
//! "Cross-module symbols and packages"): a module that imports nothing has
//! no direct dependency to call into, so the writer rejects the call with
//! ZLM-LINK, never with silent acceptance. Packages: `tests/package.rs`.

use zlm::{text::parse, write::write};

#[test]
fn a_call_to_another_module_without_imports_rejects() {
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
    assert_eq!(e.code, "ZLM-LINK", "{e}");
    assert!(e.message.contains("another module"), "{}", e.message);
}
