//! ZLM1 schema 1.9 (`zlm1-core0-artifacts.md`): the logical model of a
//! checked module, its semantic identities, the canonical writer, an
//! independent decoder/validator, and a readable text form.
//!
//! Data flow: text ([`text::parse`]) or code builds a [`model::Module`];
//! [`ids::compute`] derives every identity in dependency waves;
//! [`write::write`] validates the model and emits canonical bytes;
//! [`decode::decode`] turns untrusted bytes back into a checked model, checking
//! every bound, reference, range, tag, ID and canonical order.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod ancillary;
pub mod boundary;
pub mod catalog;
pub mod check;
pub mod decode;
pub mod error;
pub mod hash;
pub mod ids;
pub mod interp;
pub mod layout;
pub mod materialize;
pub mod model;
pub mod names;
pub mod package;
pub mod reflect;
pub mod sample;
pub mod spell;
pub mod testgen;
pub mod text;
pub mod validate;
pub mod write;
pub mod zli;

pub use error::{Error, Result};
pub use hash::Id;
pub use model::Module;

/// The exact artifact content address: `H(zerglang.zlm1.artifact.v1;
/// payload)`, where the payload is `bytes` without an ancillary container
/// after it ([`ancillary::container::split`]): ancillary data never changes it.
pub fn address(bytes: &[u8]) -> Id {
    ancillary::container::payload_address(bytes)
}
