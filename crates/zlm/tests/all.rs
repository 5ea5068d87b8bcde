//! zlm's integration tests in one test binary (one link instead of 39): each file
//! below stays where it was and is a module here, so
//! `cargo test -p zlm --test all -- FILE::` runs one file's tests.

// Test files keep their own `mod common;` (or `support`, `packages`), so a shared helper
// file is compiled once per file that uses it, as it was when each file was its own binary.
#![allow(clippy::duplicate_mod)]

#[path = "ancillary.rs"]
mod ancillary;
#[path = "boundary.rs"]
mod boundary;
#[path = "c_engine.rs"]
mod c_engine;
#[path = "c_engine_oracle.rs"]
mod c_engine_oracle;
#[path = "c_package.rs"]
mod c_package;
#[path = "check_arms.rs"]
mod check_arms;
#[path = "check_contracts.rs"]
mod check_contracts;
#[path = "check_control.rs"]
mod check_control;
#[path = "check_fuzz.rs"]
mod check_fuzz;
#[path = "check_mutations.rs"]
mod check_mutations;
#[path = "check_paths.rs"]
mod check_paths;
#[path = "check_rules.rs"]
mod check_rules;
#[path = "check_sample.rs"]
mod check_sample;
#[path = "check_sdk.rs"]
mod check_sdk;
#[path = "checked.rs"]
mod checked;
#[path = "fault_positions.rs"]
mod fault_positions;
#[path = "identities.rs"]
mod identities;
#[path = "interp_bytes.rs"]
mod interp_bytes;
#[path = "interp_drops.rs"]
mod interp_drops;
#[path = "interp_fast.rs"]
mod interp_fast;
#[path = "interp_faults.rs"]
mod interp_faults;
#[path = "interp_loop.rs"]
mod interp_loop;
#[path = "interp_loops.rs"]
mod interp_loops;
#[path = "interp_ops.rs"]
mod interp_ops;
#[path = "interp_own.rs"]
mod interp_own;
#[path = "layout.rs"]
mod layout;
#[path = "lowered_form.rs"]
mod lowered_form;
#[path = "mutation.rs"]
mod mutation;
#[path = "names.rs"]
mod names;
#[path = "package.rs"]
mod package;
#[path = "reflect.rs"]
mod reflect;
#[path = "rejections.rs"]
mod rejections;
#[path = "roundtrip.rs"]
mod roundtrip;
#[path = "testgen_coverage.rs"]
mod testgen_coverage;
#[path = "text_reference.rs"]
mod text_reference;
#[path = "threads.rs"]
mod threads;
#[path = "typed_oracle.rs"]
mod typed_oracle;
#[path = "unsupported.rs"]
mod unsupported;
#[path = "zli.rs"]
mod zli;
