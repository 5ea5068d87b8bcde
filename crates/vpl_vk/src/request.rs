//! What one draw needs besides the program and its uniform data.

use vpl_gl::{AttributeValue, Texture};

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
