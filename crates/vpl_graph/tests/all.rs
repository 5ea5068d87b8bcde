//! vpl_graph's integration tests in one test binary (one link instead of 4): each file
//! below stays where it was and is a module here, so
//! `cargo test -p vpl_graph --test all -- FILE::` runs one file's tests.

#[path = "diagnostics.rs"]
mod diagnostics;
#[path = "examples.rs"]
mod examples;
#[path = "preview.rs"]
mod preview;
#[path = "props.rs"]
mod props;
