//! The decode benchmark's module, shared by `benches/decode.rs` and
//! `examples/decode_loop.rs` (included by `#[path]`).

use zlm::decode::decode;
use zlm::{sample, write::write};

/// The artifact of the first `sample::module` width that is at least 10 MB.
pub fn artifact() -> Vec<u8> {
    let mut width = 20_000;
    loop {
        let b = write(&sample::module("bench.big", width)).expect("write");
        if b.len() >= 10_000_000 {
            break b;
        }
        width *= 2;
    }
}

/// The artifact file of `bytes` with the source map of its printed text and
/// the provenance record after the payload.
pub fn annotated(bytes: &[u8]) -> Vec<u8> {
    let module = decode(bytes).expect("valid").into_module();
    let text = zlm::text::print(&module).expect("print");
    let (parsed, positions) = zlm::text::parse_with_positions(&text).expect("parse");
    let payload = write(&parsed).expect("write");
    assert_eq!(payload, bytes, "the printed text writes the same payload");
    zlm::ancillary::annotate(
        &payload,
        "bench.zlt",
        &text,
        &parsed,
        &positions,
        "bench",
        "1",
    )
    .expect("annotate")
}
