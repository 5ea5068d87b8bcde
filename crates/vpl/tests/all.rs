//! vpl's integration tests in one test binary (one link instead of 14): each file
//! below stays where it was and is a module here, so
//! `cargo test -p vpl --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "corpus.rs"]
mod corpus;
#[path = "glsl.rs"]
mod glsl;
#[path = "module_info.rs"]
mod module_info;
#[path = "naga_targets.rs"]
mod naga_targets;
#[path = "roundtrip.rs"]
mod roundtrip;
#[path = "testgen.rs"]
mod testgen;
#[path = "testgen_spec_coverage.rs"]
mod testgen_spec_coverage;
#[path = "text_rules.rs"]
mod text_rules;
#[path = "verify_builder.rs"]
mod verify_builder;
#[path = "verify_corpus.rs"]
mod verify_corpus;
#[path = "verify_flow_props.rs"]
mod verify_flow_props;
#[path = "verify_output_props.rs"]
mod verify_output_props;
#[path = "verify_props.rs"]
mod verify_props;
#[path = "writer.rs"]
mod writer;
