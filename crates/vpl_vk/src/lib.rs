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

mod program;
mod uniforms;
mod vk;

pub use program::{Resource, VertexInput, VkProgram};
pub use uniforms::UniformData;
pub use vk::VkContext;
pub use vpl_gl::{AttributeValue, Image, MinFilter, Texture, Wrap};

/// Why a Vulkan render failed.
#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// No loader, instance or suitable device (tests skip on this one).
    #[error("no Vulkan device: {0}")]
    Unavailable(String),
    /// The SPIR-V target refused the module.
    #[error(transparent)]
    Target(vpl::backends::naga_targets::LowerError),
    /// The reflection document lacks what the harness needs.
    #[error("unexpected SPIR-V reflection: {0}")]
    Reflection(String),
    /// The request cannot be drawn (size, texture data).
    #[error("bad render request: {0}")]
    Request(String),
    /// A Vulkan call failed.
    #[error("Vulkan: {0}")]
    Vulkan(String),
}

/// What to draw (the GL harness's request, uniforms set separately in
/// [`UniformData`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RenderRequest {
    /// Framebuffer width.
    pub width: u32,
    /// Framebuffer height.
    pub height: u32,
    /// Clear colour.
    pub clear: [f32; 4],
    /// Textures (with their sampler state) by sampler-uniform name;
    /// samplers without one get an 8x8 checkerboard.
    pub textures: Vec<(String, Texture)>,
    /// Attributes by location (locations 0 and 1 otherwise carry the
    /// quad's position and texture coordinates).
    pub attributes: Vec<(u32, AttributeValue)>,
    /// Quad corners in clip space (x0, y0, x1, y1).
    pub quad: [f32; 4],
}

impl RenderRequest {
    /// A full-screen draw of `width` × `height`.
    pub fn new(width: u32, height: u32) -> Self {
        RenderRequest {
            width,
            height,
            clear: [0.0, 0.0, 0.0, 0.0],
            textures: Vec::new(),
            attributes: Vec::new(),
            quad: [-1.0, -1.0, 1.0, 1.0],
        }
    }
}

/// Draws `request` with `program` and `uniforms`.
pub fn render(
    context: &VkContext,
    program: &VkProgram,
    uniforms: &UniformData,
    request: &RenderRequest,
) -> Result<Image, VkError> {
    vk::render(context, program, uniforms, request)
}
