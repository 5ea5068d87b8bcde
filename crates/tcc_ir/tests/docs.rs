//! Keeps the worked example of `docs/tcc/format.md` true.

use std::path::PathBuf;
use tcc_ir::{compute_hash, decode_artifact, hash_input};

/// The fenced block following `<!-- marker -->`, or the inline code span.
fn block_after(doc: &str, marker: &str) -> String {
    let start = doc.find(&format!("<!-- {marker} -->")).expect("marker") + marker.len() + 9;
    let rest = doc[start..].trim_start();
    if let Some(body) = rest.strip_prefix("```json\n") {
        body[..body.find("\n```").expect("closing fence")].to_string()
    } else {
        let body = rest.strip_prefix('`').expect("inline code");
        body[..body.find('`').expect("closing backtick")].to_string()
    }
}

#[test]
fn docs_worked_example_is_correct() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/tcc/format.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let input = block_after(&doc, "worked-example-input");
    let canonical = block_after(&doc, "worked-example-canonical");
    let hash = block_after(&doc, "worked-example-hash");
    let a = decode_artifact(input.as_bytes()).unwrap();
    assert_eq!(String::from_utf8(hash_input(&a)).unwrap(), canonical);
    assert_eq!(canonical.len(), 1055);
    assert_eq!(compute_hash(&a), hash);
}

#[test]
fn smallest_subnormal_is_written_positionally() {
    let text = tcc_ir::encode::canonical_number(5e-324);
    assert_eq!(text, format!("0.{}5", "0".repeat(323)));
}
