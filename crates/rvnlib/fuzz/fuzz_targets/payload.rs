//! JSON payloads of either version: decoding and verifying never panic, and a
//! decoded payload re-encodes to a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for version in [3, 4] {
        if let Ok(library) = rvnlib::json::from_json(data, version) {
            let _ = rvnlib::verify::verify_library(&library);
            let text = rvnlib::json::to_compact_json(&library, version);
            let back = rvnlib::json::from_json(text.as_bytes(), version).expect("re-reads");
            assert_eq!(rvnlib::json::to_compact_json(&back, version), text);
        }
    }
});
