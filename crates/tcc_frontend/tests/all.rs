//! tcc_frontend's integration tests in one test binary (one link instead of 6): each file
//! below stays where it was and is a module here, so
//! `cargo test -p tcc_frontend --test all -- FILE::` runs one file's tests.

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
