//! IR text helpers shared by the lowering's modules.

use std::fmt::Write;

/// An LLVM string constant body (`c"..."` without the quotes).
pub(crate) fn llvm_bytes(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            o.push(b as char);
        } else {
            let _ = write!(o, "\\{b:02X}");
        }
    }
    o
}
