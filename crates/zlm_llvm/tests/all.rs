//! zlm_llvm's integration tests in one test binary (one link instead of 8): each file
//! below stays where it was and is a module here, so
//! `cargo test -p zlm_llvm --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "engines.rs"]
mod engines;
#[path = "fault_positions.rs"]
mod fault_positions;
#[path = "oracle.rs"]
mod oracle;
#[path = "package.rs"]
mod package;
#[path = "shared_library.rs"]
mod shared_library;
#[path = "spec_programs.rs"]
mod spec_programs;
#[path = "target_record.rs"]
mod target_record;
#[path = "typed_oracle.rs"]
mod typed_oracle;
