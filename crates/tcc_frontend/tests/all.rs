//! tcc_frontend's integration tests in one test binary (one link instead of 6): each file
//! below stays where it was and is a module here, so
//! `cargo test -p tcc_frontend --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "differential.rs"]
mod differential;
#[path = "durable_calls.rs"]
mod durable_calls;
#[path = "python.rs"]
mod python;
#[path = "rust.rs"]
mod rust;
#[path = "rust_examples.rs"]
mod rust_examples;
#[path = "typescript.rs"]
mod typescript;
