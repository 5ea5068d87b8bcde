//! Helpers shared by the checked-semantics test files: reading the run
//! examples, minimal text mutations, and the "rejected by `check` and by
//! every decode of the canonical bytes" assertion.
#![allow(dead_code)] // each test file uses its own subset

/// The text of `examples/zlm/run/NAME`.
pub fn src(name: &str) -> String {
    let p = format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// Replaces the first occurrence of `from` at or after `anchor`.
pub fn mutate(s: &str, anchor: &str, from: &str, to: &str) -> String {
    let a = s
        .find(anchor)
        .unwrap_or_else(|| panic!("anchor {anchor:?}"));
    let rel = s[a..]
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} after {anchor:?}"));
    let at = a + rel;
    format!("{}{}{}", &s[..at], to, &s[at + from.len()..])
}

/// Asserts that `text` parses, that `check` rejects it with `code`, and
/// that decoding its canonical bytes (when the writer accepts it) fails
/// with the same code.
pub fn reject(text: &str, code: &str) -> zlm::check::CheckError {
    let m = zlm::text::parse(text).unwrap_or_else(|e| panic!("mutant must parse: {e}"));
    let err = zlm::check::check(&m).expect_err("mutant must be rejected");
    assert_eq!(err.code, code, "{err}");
    if let Ok(bytes) = zlm::write::write(&m) {
        let e = zlm::decode::decode(&bytes).expect_err("decode must reject");
        assert_eq!(e.code, code, "{e}");
    }
    err
}

/// Asserts that `text` checks and that its canonical bytes decode.
pub fn accept(text: &str) {
    let m = zlm::text::parse(text).unwrap();
    zlm::check::check(&m).unwrap();
    zlm::decode::decode(&zlm::write::write(&m).unwrap()).unwrap();
}
