//! Headless OpenGL harness for the VPL GLSL backend.
//!
//! [`GlContext`] creates a 4.2 core context on Mesa's EGL surfaceless
//! platform; [`LinkedProgram`] compiles and links a
//! [`vpl::backends::glsl::ProgramArtifact`] and answers the driver's
//! reflection queries; [`render()`] draws a full-screen quad into an RGBA8
//! framebuffer and returns the pixels as an [`Image`] (PNG-encodable).
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod context;
pub mod cpu;
pub mod program;
pub mod render;
pub mod uniforms;

pub use context::{ContextError, GlContext};
pub use program::{GlError, LinkedProgram};
pub use render::{AttributeValue, Image, MinFilter, RenderRequest, Texture, Wrap, draw, render};
pub use uniforms::Uniforms;
