//! Drawing a full-screen quad with a compiled program into an RGBA8
//! framebuffer and reading the pixels back.
//!
//! Vertex attribute location 0 receives the quad's clip-space position
//! (x, y; the driver fills z = 0, w = 1) and location 1 its texture
//! coordinates (u, v), when the program declares floating attributes
//! there. Other attributes can be given constant or per-vertex values.
//! The four vertices are, in order: bottom-left, bottom-right, top-left,
//! top-right (a triangle strip).
// OpenGL is a C API: every glow call (framebuffers, buffers, textures, draws) is FFI.
#![allow(unsafe_code)]

use crate::GlContext;
use crate::program::{GlError, LinkedProgram};
use crate::uniforms::Uniforms;
use glow::HasContext as _;
use vpl::backends::glsl::{GlslType, ProgramArtifact};
use vpl::ir::ScalarKind;

/// Texture addressing mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// `GL_REPEAT`.
    Repeat,
    /// `GL_CLAMP_TO_EDGE`.
    ClampToEdge,
}

/// Texture minification filter.
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
    /// Level images, RGBA8, rows bottom-up (GL order); level n is
    /// `max(1, width >> n)` × `max(1, height >> n)`.
    pub levels: Vec<Vec<u8>>,
    /// Addressing in s and t.
    pub wrap: Wrap,
    /// Minification filter.
    pub min_filter: MinFilter,
    /// Magnification: linear when true, nearest otherwise.
    pub mag_linear: bool,
}

impl Texture {
    /// A single-level texture from RGBA8 rows given top-down (PNG order).
    pub fn from_rgba_top_down(width: u32, height: u32, rgba: &[u8]) -> Self {
        let row = width as usize * 4;
        let mut level = Vec::with_capacity(rgba.len());
        for y in (0..height as usize).rev() {
            level.extend_from_slice(&rgba[y * row..(y + 1) * row]);
        }
        Texture {
            width,
            height,
            levels: vec![level],
            wrap: Wrap::Repeat,
            min_filter: MinFilter::Linear,
            mag_linear: true,
        }
    }

    /// A texture whose every level is filled with one colour per level.
    pub fn solid_levels(width: u32, height: u32, colors: &[[u8; 4]]) -> Self {
        let levels = colors
            .iter()
            .enumerate()
            .map(|(n, c)| {
                let w = (width >> n).max(1) as usize;
                let h = (height >> n).max(1) as usize;
                c.repeat(w * h)
            })
            .collect();
        Texture {
            width,
            height,
            levels,
            wrap: Wrap::Repeat,
            min_filter: MinFilter::NearestMipmapNearest,
            mag_linear: false,
        }
    }
}

/// Per-vertex data for an extra attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeValue {
    /// The same value for every vertex (`glVertexAttrib4f`).
    Constant([f32; 4]),
    /// One value per quad vertex (bottom-left, bottom-right, top-left, top-right).
    PerVertex([[f32; 4]; 4]),
}

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderRequest {
    /// Framebuffer width.
    pub width: u32,
    /// Framebuffer height.
    pub height: u32,
    /// Clear colour before drawing.
    pub clear: [f32; 4],
    /// Uniform values (see [`Uniforms`]).
    pub uniforms: Uniforms,
    /// Textures by logical sampler-uniform name.
    pub textures: Vec<(String, Texture)>,
    /// Extra attributes by location.
    pub attributes: Vec<(u32, AttributeValue)>,
    /// Quad corners in clip space (x0, y0, x1, y1); the full screen is
    /// (-1, -1, 1, 1).
    pub quad: [f32; 4],
}

impl RenderRequest {
    /// A full-screen draw of `width` × `height` with default uniforms.
    pub fn new(artifact: &ProgramArtifact, width: u32, height: u32) -> Self {
        RenderRequest {
            width,
            height,
            clear: [0.0, 0.0, 0.0, 0.0],
            uniforms: Uniforms::new(artifact),
            textures: Vec::new(),
            attributes: Vec::new(),
            quad: [-1.0, -1.0, 1.0, 1.0],
        }
    }
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

    /// Encodes the image as PNG.
    pub fn to_png(&self) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut bytes, self.width, self.height);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
            writer
                .write_image_data(&self.rgba)
                .map_err(|e| e.to_string())?;
        }
        Ok(bytes)
    }
}

/// The largest framebuffer side the harness accepts.
pub const MAX_SIZE: u32 = 8192;

/// Builds the program and draws `request`.
pub fn render(
    context: &GlContext,
    artifact: &ProgramArtifact,
    request: &RenderRequest,
) -> Result<Image, GlError> {
    let program = LinkedProgram::build(context, artifact)?;
    draw(&program, artifact, request)
}

fn float_attribute(artifact: &ProgramArtifact, location: i32) -> bool {
    artifact.vertex_interface().iter().any(|b| {
        b.binding.location == location
            && matches!(
                b.binding.ty,
                GlslType::Scalar(ScalarKind::Float)
                    | GlslType::Vector {
                        kind: ScalarKind::Float,
                        ..
                    }
            )
            && b.direction == vpl::ir::Direction::In
    })
}

/// Draws with an already linked program.
pub fn draw(
    program: &LinkedProgram<'_>,
    artifact: &ProgramArtifact,
    request: &RenderRequest,
) -> Result<Image, GlError> {
    let (w, h) = (request.width, request.height);
    if w == 0 || h == 0 || w > MAX_SIZE || h > MAX_SIZE {
        return Err(GlError::Other(format!(
            "framebuffer size {w}x{h} outside 1..={MAX_SIZE}"
        )));
    }
    let location = artifact.fragment_color_location();
    if !(0..8).contains(&location) {
        return Err(GlError::Other(format!(
            "primary output location {location} is beyond the 8 draw buffers GL 4.2 guarantees"
        )));
    }
    let gl = program.context.gl();
    let mut cleanup = Cleanup::default();
    cleanup.context = Some(program.context);
    // SAFETY: the context is current on this thread; every object created
    // here is recorded in `cleanup` and deleted when it drops.
    unsafe {
        let fbo = gl.create_framebuffer().map_err(GlError::Other)?;
        cleanup.framebuffers.push(fbo);
        let rbo = gl.create_renderbuffer().map_err(GlError::Other)?;
        cleanup.renderbuffers.push(rbo);
        gl.bind_renderbuffer(glow::RENDERBUFFER, Some(rbo));
        gl.renderbuffer_storage(glow::RENDERBUFFER, glow::RGBA8, w as i32, h as i32);
        gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fbo));
        gl.framebuffer_renderbuffer(
            glow::FRAMEBUFFER,
            glow::COLOR_ATTACHMENT0,
            glow::RENDERBUFFER,
            Some(rbo),
        );
        let mut draw_buffers = vec![glow::NONE; location as usize + 1];
        draw_buffers[location as usize] = glow::COLOR_ATTACHMENT0;
        gl.draw_buffers(&draw_buffers);
        gl.read_buffer(glow::COLOR_ATTACHMENT0);
        let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
        if status != glow::FRAMEBUFFER_COMPLETE {
            return Err(GlError::Other(format!(
                "framebuffer incomplete: 0x{status:x}"
            )));
        }
        gl.viewport(0, 0, w as i32, h as i32);
        let [r, g, b, a] = request.clear;
        gl.clear_color(r, g, b, a);
        gl.clear(glow::COLOR_BUFFER_BIT);
        gl.disable(glow::DEPTH_TEST);
        gl.disable(glow::BLEND);
        gl.disable(glow::CULL_FACE);

        gl.use_program(Some(program.program));
        let vao = gl.create_vertex_array().map_err(GlError::Other)?;
        cleanup.vertex_arrays.push(vao);
        gl.bind_vertex_array(Some(vao));
        let [x0, y0, x1, y1] = request.quad;
        let mut attributes: Vec<(u32, [[f32; 4]; 4])> = Vec::new();
        if float_attribute(artifact, 0) {
            attributes.push((
                0,
                [
                    [x0, y0, 0.0, 1.0],
                    [x1, y0, 0.0, 1.0],
                    [x0, y1, 0.0, 1.0],
                    [x1, y1, 0.0, 1.0],
                ],
            ));
        }
        if float_attribute(artifact, 1) {
            attributes.push((
                1,
                [
                    [0.0, 0.0, 0.0, 1.0],
                    [1.0, 0.0, 0.0, 1.0],
                    [0.0, 1.0, 0.0, 1.0],
                    [1.0, 1.0, 0.0, 1.0],
                ],
            ));
        }
        for (loc, value) in &request.attributes {
            attributes.retain(|(l, _)| l != loc);
            match value {
                AttributeValue::Constant(v) => gl.vertex_attrib_4_f32(*loc, v[0], v[1], v[2], v[3]),
                AttributeValue::PerVertex(v) => attributes.push((*loc, *v)),
            }
        }
        for (loc, data) in &attributes {
            let buffer = gl.create_buffer().map_err(GlError::Other)?;
            cleanup.buffers.push(buffer);
            let bytes: Vec<u8> = data
                .iter()
                .flat_map(|v| v.iter().flat_map(|c| c.to_le_bytes()))
                .collect();
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(buffer));
            gl.buffer_data_u8_slice(glow::ARRAY_BUFFER, &bytes, glow::STATIC_DRAW);
            gl.enable_vertex_attrib_array(*loc);
            gl.vertex_attrib_pointer_f32(*loc, 4, glow::FLOAT, false, 16, 0);
        }

        for (slot, bytes) in &request.uniforms.blocks {
            let Some(u) = artifact.uniforms().iter().find(|u| u.binding.slot == *slot) else {
                continue;
            };
            let buffer = gl.create_buffer().map_err(GlError::Other)?;
            cleanup.buffers.push(buffer);
            gl.bind_buffer(glow::UNIFORM_BUFFER, Some(buffer));
            // Drivers may report a block larger than the std140 image.
            let size = u
                .block_name
                .as_deref()
                .and_then(|b| program.uniform_block_size(b))
                .unwrap_or(0)
                .max(bytes.len() as u64)
                .min(crate::uniforms::MAX_BLOCK_BYTES) as usize;
            let mut data = bytes.clone();
            data.resize(size.max(16), 0);
            gl.buffer_data_u8_slice(glow::UNIFORM_BUFFER, &data, glow::STATIC_DRAW);
            gl.bind_buffer_base(glow::UNIFORM_BUFFER, u.block_binding as u32, Some(buffer));
        }
        for leaf in &request.uniforms.leaves {
            let Some(loc) = program.uniform_location(&leaf.gl_expression) else {
                continue; // inactive: optimized away by the driver
            };
            let f: Vec<f32> = leaf.values.iter().map(|v| *v as f32).collect();
            let i: Vec<i32> = leaf.values.iter().map(|v| *v as i32).collect();
            let loc = Some(&loc);
            match &leaf.ty {
                GlslType::Scalar(ScalarKind::Float) => gl.uniform_1_f32_slice(loc, &f),
                GlslType::Vector {
                    kind: ScalarKind::Float,
                    size: 2,
                } => gl.uniform_2_f32_slice(loc, &f),
                GlslType::Vector {
                    kind: ScalarKind::Float,
                    size: 3,
                } => gl.uniform_3_f32_slice(loc, &f),
                GlslType::Vector {
                    kind: ScalarKind::Float,
                    ..
                } => gl.uniform_4_f32_slice(loc, &f),
                GlslType::Scalar(_) => gl.uniform_1_i32_slice(loc, &i),
                GlslType::Vector { size: 2, .. } => gl.uniform_2_i32_slice(loc, &i),
                GlslType::Vector { size: 3, .. } => gl.uniform_3_i32_slice(loc, &i),
                GlslType::Vector { .. } => gl.uniform_4_i32_slice(loc, &i),
                GlslType::Matrix { rows, columns } => match (columns, rows) {
                    (2, 2) => gl.uniform_matrix_2_f32_slice(loc, false, &f),
                    (2, 3) => gl.uniform_matrix_2x3_f32_slice(loc, false, &f),
                    (2, 4) => gl.uniform_matrix_2x4_f32_slice(loc, false, &f),
                    (3, 2) => gl.uniform_matrix_3x2_f32_slice(loc, false, &f),
                    (3, 3) => gl.uniform_matrix_3_f32_slice(loc, false, &f),
                    (3, 4) => gl.uniform_matrix_3x4_f32_slice(loc, false, &f),
                    (4, 2) => gl.uniform_matrix_4x2_f32_slice(loc, false, &f),
                    (4, 3) => gl.uniform_matrix_4x3_f32_slice(loc, false, &f),
                    _ => gl.uniform_matrix_4_f32_slice(loc, false, &f),
                },
                _ => {}
            }
        }
        for (name, texture) in &request.textures {
            let Some(u) = artifact.uniform(name).filter(|u| u.texture_unit >= 0) else {
                return Err(GlError::Other(format!("no sampler uniform named {name:?}")));
            };
            let object = gl.create_texture().map_err(GlError::Other)?;
            cleanup.textures.push(object);
            gl.active_texture(glow::TEXTURE0 + u.texture_unit as u32);
            gl.bind_texture(glow::TEXTURE_2D, Some(object));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            for (level, pixels) in texture.levels.iter().enumerate() {
                let lw = (texture.width >> level).max(1);
                let lh = (texture.height >> level).max(1);
                if pixels.len() != (lw * lh * 4) as usize {
                    return Err(GlError::Other(format!(
                        "texture level {level} has {} bytes, {lw}x{lh} RGBA8 needs {}",
                        pixels.len(),
                        lw * lh * 4
                    )));
                }
                gl.tex_image_2d(
                    glow::TEXTURE_2D,
                    level as i32,
                    glow::RGBA8 as i32,
                    lw as i32,
                    lh as i32,
                    0,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    glow::PixelUnpackData::Slice(Some(pixels)),
                );
            }
            let max_level = texture.levels.len().saturating_sub(1) as i32;
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_BASE_LEVEL, 0);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAX_LEVEL, max_level);
            let wrap = match texture.wrap {
                Wrap::Repeat => glow::REPEAT,
                Wrap::ClampToEdge => glow::CLAMP_TO_EDGE,
            } as i32;
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_S, wrap);
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_WRAP_T, wrap);
            let min = match texture.min_filter {
                MinFilter::Nearest => glow::NEAREST,
                MinFilter::Linear => glow::LINEAR,
                MinFilter::NearestMipmapNearest => glow::NEAREST_MIPMAP_NEAREST,
            } as i32;
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MIN_FILTER, min);
            let mag = if texture.mag_linear {
                glow::LINEAR
            } else {
                glow::NEAREST
            } as i32;
            gl.tex_parameter_i32(glow::TEXTURE_2D, glow::TEXTURE_MAG_FILTER, mag);
        }

        // The completion probe's counter and the occlusion query that
        // counts the invocations that were not discarded.
        let probe = if program.probed {
            let counter = gl.create_buffer().map_err(GlError::Other)?;
            cleanup.buffers.push(counter);
            gl.bind_buffer(glow::ATOMIC_COUNTER_BUFFER, Some(counter));
            gl.buffer_data_u8_slice(glow::ATOMIC_COUNTER_BUFFER, &[0u8; 4], glow::DYNAMIC_READ);
            gl.bind_buffer_base(
                glow::ATOMIC_COUNTER_BUFFER,
                crate::program::COMPLETION_BINDING,
                Some(counter),
            );
            if let Some(go) = program.uniform_location("vpl_harness_go") {
                gl.uniform_1_i32(Some(&go), 1);
            }
            let query = gl.create_query().map_err(GlError::Other)?;
            cleanup.queries.push(query);
            gl.begin_query(glow::SAMPLES_PASSED, query);
            Some((counter, query))
        } else {
            None
        };
        gl.draw_arrays(glow::TRIANGLE_STRIP, 0, 4);
        if let Some((counter, query)) = probe {
            gl.end_query(glow::SAMPLES_PASSED);
            let passed = u64::from(gl.get_query_parameter_u32(query, glow::QUERY_RESULT));
            gl.memory_barrier(glow::ATOMIC_COUNTER_BARRIER_BIT | glow::BUFFER_UPDATE_BARRIER_BIT);
            let mut word = [0u8; 4];
            gl.bind_buffer(glow::ATOMIC_COUNTER_BUFFER, Some(counter));
            gl.get_buffer_sub_data(glow::ATOMIC_COUNTER_BUFFER, 0, &mut word);
            let completed = u64::from(u32::from_le_bytes(word));
            if completed < passed {
                gl.use_program(None);
                gl.bind_framebuffer(glow::FRAMEBUFFER, None);
                return Err(GlError::Lost {
                    lost: passed - completed,
                    passed,
                    renderer: program.context.renderer(),
                });
            }
        }
        let mut pixels = vec![0u8; (w * h * 4) as usize];
        gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
        gl.read_pixels(
            0,
            0,
            w as i32,
            h as i32,
            glow::RGBA,
            glow::UNSIGNED_BYTE,
            glow::PixelPackData::Slice(Some(&mut pixels)),
        );
        let error = gl.get_error();
        gl.use_program(None);
        gl.bind_framebuffer(glow::FRAMEBUFFER, None);
        if error == glow::CONTEXT_LOST {
            return Err(GlError::Reset(error));
        }
        if error != glow::NO_ERROR {
            return Err(GlError::Other(format!(
                "GL error 0x{error:x} while drawing"
            )));
        }
        // GL rows are bottom-up; images are top-down.
        let row = w as usize * 4;
        let mut rgba = Vec::with_capacity(pixels.len());
        for y in (0..h as usize).rev() {
            rgba.extend_from_slice(&pixels[y * row..(y + 1) * row]);
        }
        Ok(Image {
            width: w,
            height: h,
            rgba,
        })
    }
}

/// Deletes the GL objects of one draw.
#[derive(Default)]
struct Cleanup<'c> {
    context: Option<&'c GlContext>,
    framebuffers: Vec<glow::Framebuffer>,
    renderbuffers: Vec<glow::Renderbuffer>,
    vertex_arrays: Vec<glow::VertexArray>,
    buffers: Vec<glow::Buffer>,
    textures: Vec<glow::Texture>,
    queries: Vec<glow::Query>,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let Some(context) = self.context else { return };
        let gl = context.gl();
        // SAFETY: the objects were created on this current context.
        unsafe {
            for o in self.framebuffers.drain(..) {
                gl.delete_framebuffer(o);
            }
            for o in self.renderbuffers.drain(..) {
                gl.delete_renderbuffer(o);
            }
            for o in self.vertex_arrays.drain(..) {
                gl.delete_vertex_array(o);
            }
            for o in self.buffers.drain(..) {
                gl.delete_buffer(o);
            }
            for o in self.textures.drain(..) {
                gl.delete_texture(o);
            }
            for o in self.queries.drain(..) {
                gl.delete_query(o);
            }
        }
    }
}

/// The largest PNG texture side accepted by [`Texture::from_png`].
pub const MAX_TEXTURE_SIZE: u32 = 8192;

impl Texture {
    /// Decodes a PNG (any colour type and bit depth) into a single-level
    /// RGBA8 texture with repeat addressing and linear filtering.
    pub fn from_png(bytes: &[u8]) -> Result<Self, String> {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder
            .read_info()
            .map_err(|e| format!("invalid PNG: {e}"))?;
        let (width, height) = {
            let info = reader.info();
            (info.width, info.height)
        };
        if width == 0 || height == 0 || width > MAX_TEXTURE_SIZE || height > MAX_TEXTURE_SIZE {
            return Err(format!(
                "PNG size {width}x{height} outside 1..={MAX_TEXTURE_SIZE}"
            ));
        }
        let mut buffer = vec![0u8; reader.output_buffer_size()];
        let frame = reader
            .next_frame(&mut buffer)
            .map_err(|e| format!("invalid PNG: {e}"))?;
        let data = &buffer[..frame.buffer_size()];
        let pixels = (width * height) as usize;
        let rgba: Vec<u8> = match frame.color_type {
            png::ColorType::Rgba => data.to_vec(),
            png::ColorType::Rgb => data
                .chunks_exact(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            png::ColorType::GrayscaleAlpha => data
                .chunks_exact(2)
                .flat_map(|p| [p[0], p[0], p[0], p[1]])
                .collect(),
            png::ColorType::Grayscale => data.iter().flat_map(|&g| [g, g, g, 255]).collect(),
            png::ColorType::Indexed => return Err("unexpanded palette PNG".into()),
        };
        if rgba.len() != pixels * 4 {
            return Err("PNG pixel data has an unexpected size".into());
        }
        Ok(Texture::from_rgba_top_down(width, height, &rgba))
    }

    /// An 8x8 black-and-white checkerboard (nearest filtering).
    pub fn checkerboard() -> Self {
        let mut rgba = Vec::with_capacity(8 * 8 * 4);
        for y in 0..8 {
            for x in 0..8 {
                let v = if (x + y) % 2 == 0 { 255 } else { 32 };
                rgba.extend_from_slice(&[v, v, v, 255]);
            }
        }
        let mut t = Texture::from_rgba_top_down(8, 8, &rgba);
        t.min_filter = MinFilter::Nearest;
        t.mag_linear = false;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip() {
        let image = Image {
            width: 3,
            height: 2,
            rgba: (0..24).map(|i| i as u8 * 10).collect(),
        };
        let texture = Texture::from_png(&image.to_png().unwrap()).unwrap();
        assert_eq!((texture.width, texture.height), (3, 2));
        // Texture levels are bottom-up: the first row is the image's last.
        assert_eq!(&texture.levels[0][..12], &image.rgba[12..]);
    }

    #[test]
    fn arbitrary_bytes_are_rejected_not_panicking() {
        for bytes in [&b""[..], b"\x89PNG\r\n\x1a\n", b"not a png at all"] {
            assert!(Texture::from_png(bytes).is_err());
        }
    }
}
