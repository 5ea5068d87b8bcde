//! VPL in the browser: the WebGL 2 renderer and the playground.
//!
//! Data flows one way: a [`vpl::VerifiedModule`] → [`WebGlProgram::compile`]
//! (the GLSL ES 3.00 target of `vpl::backends::naga_targets` and its
//! reflection, paired with the GLSL 4.20 artifact's uniform types) →
//! [`scene::scene_json`] (uniform paths resolved to std140 leaves,
//! textures, attributes) → the page script `assets/webgl.js` in headless
//! Chromium ([`WebGlRenderer`], through the `browser` crate) → pixels.
//!
//! [`Server`] serves the embedded assets on loopback: the bare renderer
//! page and the playground (`irkit vpl playground`), whose JSON endpoint
//! ([`api::compile`]) runs the real reader, verifier and every backend.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod admission;
pub mod api;
pub mod graph;
pub mod program;
pub mod render;
pub mod scene;
pub mod server;

pub use program::{ProgramError, UniformSlot, WebGlProgram};
pub use render::{RenderError, WebGlRenderer};
pub use scene::Scene;
pub use server::Server;
