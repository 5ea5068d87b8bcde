//! Arcadia VPL version 1 (`../shared/specs/vpl-v1.md`).
//!
//! Modules follow the specification's structure: [`ir`] (sections 3–8),
//! [`text`] (sections 10–11), [`verify`] (sections 3–9), [`publish`]
//! (section 11), [`backends::glsl`] (section 12) and the built-in
//! [`programs`] (section 12.5).
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod backends;
pub mod code;
pub mod exec;
pub mod ir;
mod parallel;
pub mod programs;
pub mod publish;
#[cfg(test)]
mod steps;
pub mod testgen;
pub mod text;
pub mod uniform_values;
pub mod verify;

pub use publish::VerifiedModule;
