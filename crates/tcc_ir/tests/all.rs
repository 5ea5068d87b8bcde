//! tcc_ir's integration tests in one test binary (one link instead of 7): each file
//! below stays where it was and is a module here, so
//! `cargo test -p tcc_ir --test all -- FILE::` runs one file's tests.

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
