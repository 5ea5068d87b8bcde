//! Compiles whatever VPL text reads: the backend must return an artifact
//! or a target error, never panic, and compile deterministically.
//!
//! `cd crates/vpl/fuzz && cargo fuzz run -s none glsl seeds/`

#![no_main]

use libfuzzer_sys::fuzz_target;
use vpl::backends::glsl;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = vpl::text::read(data, "fuzz") else {
        return;
    };
    let checked = glsl::check_target(&module);
    let Ok(published) = vpl::VerifiedModule::new(&module) else {
        return;
    };
    match glsl::compile(&published, glsl::VERSION_420) {
        Ok(artifact) => {
            assert!(checked.is_ok(), "check_target rejected what compile accepts");
            let again = glsl::compile(&published, glsl::VERSION_420).expect("compiles twice");
            assert_eq!(artifact, again);
            let _ = artifact.reflection_json();
        }
        Err(glsl::CompileError::Target(e)) => {
            assert_eq!(checked.map_err(|c| c.kind), Err(e.kind));
        }
        Err(e) => panic!("unexpected compile failure: {e}"),
    }
});
