//! vpl_graph's integration tests in one test binary (one link instead of 4): each file
//! below stays where it was and is a module here, so
//! `cargo test -p vpl_graph --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "diagnostics.rs"]
mod diagnostics;
#[path = "examples.rs"]
mod examples;
#[path = "preview.rs"]
mod preview;
#[path = "props.rs"]
mod props;
