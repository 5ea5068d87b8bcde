#![no_main]
//! Arbitrary bytes never panic the decoder; anything it accepts re-encodes identically.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = zlm::decode::decode(data) {
        assert_eq!(zlm::write::write(d.module()).expect("accepted module writes"), data);
    }
});
