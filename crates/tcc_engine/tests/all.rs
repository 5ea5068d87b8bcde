//! tcc_engine's integration tests in one test binary (one link instead of 9): each file
//! below stays where it was and is a module here, so
//! `cargo test -p tcc_engine --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "cancel.rs"]
mod cancel;
#[path = "child_failure.rs"]
mod child_failure;
#[path = "deep_values.rs"]
mod deep_values;
#[path = "durable.rs"]
mod durable;
#[path = "fast_path.rs"]
mod fast_path;
#[path = "interop.rs"]
mod interop;
#[path = "old_continuations.rs"]
mod old_continuations;
#[path = "properties.rs"]
mod properties;
#[path = "stepper.rs"]
mod stepper;
#[path = "sweeps.rs"]
mod sweeps;
