//! Whole containers: reading never panics; what reads re-writes byte-identically
//! links with itself and diffs compatible with its own re-read.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(library) = rvnlib::read(data) {
        let bytes = rvnlib::write(&library).expect("a read library writes");
        let again = rvnlib::read(&bytes).expect("a written library reads");
        assert_eq!(again, library);
        assert_eq!(rvnlib::write(&again).expect("writes"), bytes);
        let input = rvnlib::link::LinkInput { origin: "fuzz", library: &library };
        let _ = rvnlib::link::link(&[input, input], &rvnlib::link::LinkOptions::default());
        assert!(rvnlib::diff::diff(&library, &again).compatible());
    }
});
