//! The spelling rules the decoder enforces on every name (docs/zlm/format.md,
//! "Names"): identifiers, dotted package and module identities, and no
//! operator-selector messages. Each case is checked on the writer (a model
//! built from text) and on the decoder (a canonical artifact whose
//! string-pool bytes are patched in place, so only the name differs).

mod common;

/// The canonical artifact of `examples/zlm/run/faults.zlt`.
fn artifact() -> Vec<u8> {
    let m = zlm::text::parse(&common::src("faults.zlt")).unwrap();
    zlm::write::write(&m).unwrap()
}

/// `bytes` with the single occurrence of `from` replaced by `to` (same length).
fn patch(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let hits: Vec<usize> = bytes
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from.as_bytes())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "{from:?} occurs {} times", hits.len());
    let mut out = bytes.to_vec();
    out[hits[0]..hits[0] + to.len()].copy_from_slice(to.as_bytes());
    out
}

fn decode_rejects(bytes: &[u8], code: &str, needle: &str) {
    let e = zlm::decode::decode(bytes).expect_err("decode must reject");
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(needle), "{e}");
    // At the string reference of the record that carries the name.
    assert!(e.offset.is_some_and(|o| o < bytes.len() as u64), "{e:?}");
}

fn write_rejects(text: &str, code: &str, needle: &str) {
    let m = zlm::text::parse(text).unwrap();
    let e = zlm::write::write(&m).expect_err("write must reject");
    assert_eq!(e.code, code, "{e}");
    assert!(e.message.contains(needle), "{e}");
}

#[test]
fn the_examples_spell_every_name_as_an_identifier() {
    zlm::decode::decode(&artifact()).unwrap();
}

#[test]
fn a_declaration_name_with_a_hyphen_rejects() {
    let src = common::src("faults.zlt").replace("decl value Main ", "decl value Ma-n ");
    write_rejects(&src, "ZLM-NAME", "value declaration \"Ma-n\"");
    decode_rejects(
        &patch(&artifact(), "Main", "Ma-n"),
        "ZLM-NAME",
        "declaration \"Ma-n\"",
    );
}

#[test]
fn a_parameter_name_starting_with_a_digit_rejects() {
    let src = common::src("faults.zlt").replace("param 1 index UInt64", "param 1 9ndex UInt64");
    write_rejects(&src, "ZLM-NAME", "parameter of Main.byte_at");
    decode_rejects(
        &patch(&artifact(), "index", "9ndex"),
        "ZLM-NAME",
        "\"9ndex\"",
    );
}

#[test]
fn a_local_name_with_a_control_character_rejects() {
    decode_rejects(
        &patch(&artifact(), "buf", "b\u{7}f"),
        "ZLM-NAME",
        "\"b\\u{7}f\"",
    );
}

#[test]
fn a_module_name_with_an_empty_segment_rejects() {
    let src = common::src("faults.zlt").replace("module run.faults ", "module run..aults ");
    write_rejects(&src, "ZLM-NAME", "module name");
    decode_rejects(
        &patch(&artifact(), "run.faults", "run..aults"),
        "ZLM-NAME",
        "dotted identifier",
    );
}

#[test]
fn an_operator_selector_message_rejects() {
    let src = common::src("faults.zlt").replace("type add public", "type + public");
    write_rejects(
        &src,
        "ZLM-OPERATOR",
        "message of Main \"+\" is an operator selector",
    );
    decode_rejects(
        &patch(&artifact(), "div", "<<="),
        "ZLM-OPERATOR",
        "message \"<<=\"",
    );
}

#[test]
fn a_non_identifier_message_that_is_not_an_operator_is_a_name_error() {
    decode_rejects(
        &patch(&artifact(), "positive", "positiv?"),
        "ZLM-NAME",
        "message \"positiv?\"",
    );
}

#[test]
fn unicode_letters_are_identifiers() {
    let src = common::src("faults.zlt").replace("param 1 index UInt64", "param 1 größe UInt64");
    let m = zlm::text::parse(&src).unwrap();
    zlm::decode::decode(&zlm::write::write(&m).unwrap()).unwrap();
}
