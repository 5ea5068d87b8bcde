#![no_main]
//! Arbitrary text never panics the parser or writer.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(m) = zlm::text::parse(s) {
            let _ = zlm::write::write(&m);
        }
    }
});
