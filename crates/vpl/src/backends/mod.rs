//! Code generators. Every backend takes a published [`crate::VerifiedModule`].

pub mod glsl;
pub mod naga_targets;
