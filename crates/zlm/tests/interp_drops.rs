//! Drop-log names follow the spec's names: a replaced field logs its own
//! path, and a Result payload is logged by the carrier's declared field
//! names, `Ok(value: T)` and `Err(error: E)`.

mod common;

use zlm::interp::Interp;

fn log(entry: &str) -> Vec<String> {
    let m = zlm::text::parse(&common::src("drops.zlt")).unwrap();
    common::accept(&common::src("drops.zlt"));
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = Interp::new(&checked).unwrap();
    let out = it.run(entry, &[]).unwrap();
    out.drops.iter().map(|d| d.to_string()).collect()
}

#[test]
fn a_replaced_field_logs_its_own_path() {
    assert_eq!(
        log("Main.field_replace"),
        [
            "Main.field_replace: drop l0.right (replaced) : Box",
            "Main.field_replace: drop l0 : Pair",
            "Main.field_replace: drop l0.right : Box",
            "Main.field_replace: drop l0.left : Box",
        ]
    );
}

#[test]
fn result_payloads_are_logged_by_their_declared_field_names() {
    assert_eq!(
        log("Main.drop_ok"),
        [
            "Main.drop_ok: drop l0 : Result<Box, UInt64>",
            "Main.drop_ok: drop l0.value : Box",
        ]
    );
    assert_eq!(
        log("Main.drop_err"),
        [
            "Main.drop_err: drop l0 : Result<UInt64, Box>",
            "Main.drop_err: drop l0.error : Box",
        ]
    );
}
