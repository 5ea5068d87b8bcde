//! What one CPU draw takes and gives: textures with their sampler state,
//! attributes, the quad, and the RGBA8 image. The shapes are those of the
//! GL harness (`vpl_gl`), so a host converts field by field.

/// Texture addressing in s and t.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// `GL_REPEAT`.
    Repeat,
    /// `GL_CLAMP_TO_EDGE`.
    ClampToEdge,
}

/// Minification filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinFilter {
    /// `GL_NEAREST` (base level only).
    Nearest,
    /// `GL_LINEAR` (base level only).
    Linear,
    /// `GL_NEAREST_MIPMAP_NEAREST`.
    NearestMipmapNearest,
}

/// An RGBA8 2D texture with explicit mip levels and sampler state.
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// Base level width.
    pub width: u32,
    /// Base level height.
    pub height: u32,
    /// Level images, RGBA8, rows bottom-up; level n is
    /// `max(1, width >> n)` × `max(1, height >> n)`.
    pub levels: Vec<Vec<u8>>,
    /// Addressing.
    pub wrap: Wrap,
    /// Minification filter.
    pub min_filter: MinFilter,
    /// Magnification: linear when true, nearest otherwise.
    pub mag_linear: bool,
}

/// Per-vertex data of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum Attribute {
    /// The same value for every vertex.
    Constant([f32; 4]),
    /// One value per quad vertex (bottom-left, bottom-right, top-left, top-right).
    PerVertex([[f32; 4]; 4]),
}

/// An RGBA8 image, rows top-down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// RGBA8 pixels, rows top-down.
    pub rgba: Vec<u8>,
}

impl Image {
    /// The pixel at column `x`, row `y` (0 = top).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let at = (y as usize * self.width as usize + x as usize) * 4;
        let mut p = [0u8; 4];
        p.copy_from_slice(&self.rgba[at..at + 4]);
        p
    }
}
