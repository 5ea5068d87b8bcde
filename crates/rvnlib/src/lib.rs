//! Raven-compatible `.rvnlib` compiled shader libraries.
//!
//! Data flow: bytes → [`container::open`] (magic, version, length) →
//! [`json::from_json`] (the exact System.Text.Json schema) → [`CompiledLibrary`]
//! → [`verify::verify_library`] (Raven's IR verifier rules, cross-library
//! references deferred) → [`link::link`] (by key; conflicts, renames, pruning,
//! complete verification) → [`container::write`] (version 3 whenever
//! representable, [`version::version_for`]). [`export::export`] refuses bodies
//! that touch storage owned by a consuming shader. [`diff::diff`] compares two
//! versions of a library as a consumer depends on them. [`walk`] answers "what
//! does this body call" for every statement shape.
//!
//! Modules follow `rvnlib-ir.md`: [`ir`] (LibraryIr), [`library`] (the
//! declaration half and `CompiledLibrary`), [`version`], [`container`],
//! [`json`], [`verify`], [`link`], [`export`], [`walk`], [`diff`], plus a
//! [`builder`].
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod builder;
pub mod container;
pub mod diff;
pub mod export;
pub mod ir;
pub mod json;
pub mod library;
pub mod link;
pub mod lookup;
pub mod suggest;
pub mod verify;
pub mod version;
pub mod walk;

pub use container::{ReadError, WriteError, read, read_unverified, write};
pub use ir::*;
pub use json::{from_inspection_json, write_json};
pub use library::*;
