//! The contract printer `zerglang.zli.contract-printer/1`, its literal
//! normalization rules, and the public-only rule for exported contracts.

mod common;
use common::{reject, src};

use zlm::check::contracts::{print_clauses, print_literal};
use zlm::model::{Constant, ScalarKind};

fn clauses(text: &str, decl: &str, func: &str) -> String {
    let m = zlm::text::parse(text).unwrap();
    zlm::check::check(&m).unwrap();
    let decl_index = m.declarations.iter().position(|d| d.name == decl).unwrap();
    let f = m.declarations[decl_index]
        .functions
        .iter()
        .find(|f| f.name == func)
        .unwrap();
    let r = zlm::check::Resolved::new(&m).unwrap();
    print_clauses(&r, decl_index, f).unwrap()
}

#[test]
fn prints_field_copy_pure_call_and_result_trees() {
    assert_eq!(
        clauses(&src("own.zlt"), "Box", "at_least"),
        "requires { ((self.v) >= limit); } ensures { (result == ((self.get()) >= limit)); }"
    );
}

#[test]
fn prints_clauses_in_source_order_and_omits_empty_ones() {
    assert_eq!(
        clauses(&src("bytes.zlt"), "Bytes", "slice"),
        "requires { (start <= end); (end <= (self.length())); }"
    );
    assert_eq!(clauses(&src("own.zlt"), "Box", "get"), "");
}

#[test]
fn literals_carry_exact_width_suffixes() {
    let c = |kind, bits| print_literal(&Constant { kind, bits });
    assert_eq!(c(ScalarKind::Bool, 1).unwrap(), "true");
    assert_eq!(c(ScalarKind::Bool, 0).unwrap(), "false");
    assert_eq!(c(ScalarKind::Int8, 0x80).unwrap(), "-128i8");
    assert_eq!(c(ScalarKind::Int32, 0xffff_ffff).unwrap(), "-1i32");
    assert_eq!(c(ScalarKind::Int64, 0).unwrap(), "0i64");
    assert_eq!(c(ScalarKind::UInt16, 65535).unwrap(), "65535u16");
    assert_eq!(
        c(ScalarKind::UInt64, u64::MAX).unwrap(),
        "18446744073709551615u64"
    );
    assert_eq!(
        c(ScalarKind::Int64, i64::MIN as u64).unwrap(),
        "-9223372036854775808i64"
    );
    assert!(c(ScalarKind::Byte, 1).is_err());
    assert!(c(ScalarKind::Index, 1).is_err());
}

#[test]
fn negation_of_a_literal_is_noncanonical() {
    let text = src("own.zlt").replace(
        "      cop field_copy Int32 recv | 0 0 field:Box.v\n      cop ge Bool v0 p0 | 0 0 -",
        "      cop neg Int32 c:Int32:5 | 0 0 -\n      cop ge Bool v0 p0 | 0 0 -",
    );
    let e = reject(&text, "ZLM-C-CONTRACT");
    assert_eq!(e.function, "Box.at_least");
}

#[test]
fn exported_contract_referencing_a_private_field() {
    let text = src("own.zlt").replace("field 0 v public let Int32", "field 0 v private let Int32");
    let e = reject(&text, "ZLM-C-CONTRACT");
    assert_eq!(e.function, "Box.at_least");
}

#[test]
fn exported_contract_calling_a_module_private_message() {
    let text = src("own.zlt").replace(
        "func message shared get public -> Int32",
        "func message shared get module -> Int32",
    );
    let e = reject(&text, "ZLM-C-CONTRACT");
    assert_eq!(e.function, "Box.at_least");
}

#[test]
fn private_contracts_may_reference_private_members() {
    let text = src("own.zlt")
        .replace("field 0 v public let Int32", "field 0 v private let Int32")
        .replace(
            "func message shared at_least public",
            "func message shared at_least private",
        );
    let m = zlm::text::parse(&text).unwrap();
    zlm::check::check(&m).unwrap();
}
