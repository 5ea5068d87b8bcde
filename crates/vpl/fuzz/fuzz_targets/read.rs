//! Reads arbitrary bytes as VPL text. Whatever is accepted must write,
//! and the written text must be a fixed point of read∘write.
//!
//! `cd crates/vpl/fuzz && cargo fuzz run -s none read seeds/`

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(module) = vpl::text::read(data, "fuzz") {
        let text = vpl::text::write(&module).expect("a read module writes");
        let again = vpl::text::read(text.as_bytes(), "fuzz-2").expect("written text reads");
        assert_eq!(vpl::text::write(&again).expect("rewrites"), text);
    }
});
