//! Arcadia VPL version 1 (`../shared/specs/vpl-v1.md`).
//!
//! Modules follow the specification's structure: [`ir`] (sections 3–8),
//! [`text`] (sections 10–11), [`verify`] (sections 3–9), [`publish`]
//! (section 11) and [`backends::glsl`] (section 12).

pub mod backends;
pub mod ir;
pub mod publish;
pub mod text;
pub mod verify;

pub use publish::VerifiedModule;
