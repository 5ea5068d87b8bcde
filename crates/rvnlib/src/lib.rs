//! Raven-compatible `.rvnlib` compiled shader libraries.
//!
//! Data flow: bytes → [`container::open`] (magic, version, length) →
//! [`json::from_json`] (the exact System.Text.Json schema) → [`CompiledLibrary`]
//! → [`verify::verify_library`] (IR verifier, cross-library references
//! deferred) → [`link::link`] (by key; conflicts, renames, pruning, complete
//! verification) → [`container::write`]. [`export::export`] refuses bodies that
//! touch storage owned by a consuming shader. [`walk`] answers "what does this
//! body call" for every statement shape.
//!
//! Modules follow `rvnlib-ir.md`: [`ir`] (LibraryIr), [`library`] (the
//! declaration half and `CompiledLibrary`), [`container`], [`json`], [`diff`] (API compatibility of two versions),
//! [`verify`], [`link`], [`export`], [`walk`], plus a [`builder`].

pub mod builder;
pub mod container;
pub mod diff;
pub mod export;
pub mod ir;
pub mod json;
pub mod library;
pub mod link;
pub mod verify;
pub mod version;
pub mod walk;

pub use container::{ReadError, WriteError, read, read_unverified, write};
pub use ir::*;
pub use json::write_json;
pub use library::*;
