//! Lowering of a published module to `naga` IR, and the targets naga
//! writes from it (SPIR-V, WGSL, GLSL ES 3.00, MSL, HLSL).
//!
//! [`lower`] takes a [`crate::VerifiedModule`] and works on its snapshot and
//! the snapshot's [`crate::verify::ModuleInfo`] (functions are lowered in the verifier's call
//! order, callees first, as naga requires). The lowered module must pass
//! naga's validator; a failure there is reported as an internal target
//! error, never emitted.
//!
//! Every module the GLSL 4.20 backend accepts lowers: the GLSL target
//! restrictions run first and are reported with their codes; uniforms
//! become std140 uniform buffers ([`layout`]), sampler uniforms texture +
//! sampler pairs; records, arrays, matrices and aggregate stage interfaces
//! are lowered; any control flow (a straight-line body, or a dispatch loop
//! over a block selector as the GLSL backend lowers it). What cannot be
//! expressed is refused with a [`LowerError`] whose code names the
//! construct, never emitted wrong. Stage interface variables become
//! private globals that an entry-point wrapper fills from its arguments
//! and returns in its result structure, so helper functions reach them as
//! the VPL functions do. Decisions: `docs/vpl/targets.md`.

mod error;
pub mod layout;
mod lower;
mod targets;

pub use error::{LowerError, LowerErrorKind};

pub use targets::{Output, Target, compile};

pub use lower::{Lowered, Resource, ResourceKind, lower};
