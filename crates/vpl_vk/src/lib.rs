//! Headless Vulkan harness for the VPL SPIR-V target.
//!
//! [`VkContext`] loads the system Vulkan loader through `ash` at run time
//! and opens the first Vulkan 1.1 device with a graphics queue (a CPU
//! device such as Mesa's lavapipe first; no window system). [`VkProgram`]
//! compiles a published module for the SPIR-V target and reads the
//! target's reflection JSON — nothing else — to bind vertex inputs,
//! uniform buffers, textures and samplers; [`render()`] draws the same
//! full-screen quad as the GL harness (`vpl_gl`) into an RGBA8 image and
//! returns its pixels, rows top-down, so the two drivers compare directly.
//!
//! All `unsafe` (every Vulkan call) is in the private `vk` module.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod error;
mod program;
mod request;
mod uniforms;
mod vk;

pub use error::VkError;
pub use program::{Resource, VertexInput, VkProgram};
pub use request::RenderRequest;
pub use uniforms::UniformData;
pub use vk::VkContext;
pub use vpl_gl::{AttributeValue, Image, MinFilter, Texture, Wrap};

/// Draws `request` with `program` and `uniforms`.
pub fn render(
    context: &VkContext,
    program: &VkProgram,
    uniforms: &UniformData,
    request: &RenderRequest,
) -> Result<Image, VkError> {
    vk::render(context, program, uniforms, request)
}
