//! LLVM target initialization (a leaf: every module that talks to LLVM
//! calls it first).

use inkwell::targets::{InitializationConfig, Target};
use std::sync::Once;

static INIT: Once = Once::new();

/// Initializes the x86 and AArch64 targets (once per process).
pub fn init() {
    INIT.call_once(|| {
        let c = InitializationConfig::default();
        Target::initialize_x86(&c);
        Target::initialize_aarch64(&c);
    });
}
