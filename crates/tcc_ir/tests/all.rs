//! tcc_ir's integration tests in one test binary (one link instead of 7): each file
//! below stays where it was and is a module here, so
//! `cargo test -p tcc_ir --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "corpus.rs"]
mod corpus;
#[path = "docs.rs"]
mod docs;
#[path = "encoding.rs"]
mod encoding;
#[path = "examples.rs"]
mod examples;
#[path = "properties.rs"]
mod properties;
#[path = "source_map.rs"]
mod source_map;
#[path = "validation.rs"]
mod validation;
