//! One draw: the vertex stage on the quad's four vertices, then the two
//! triangles of the strip (bottom-left, bottom-right, top-left;
//! top-left, bottom-right, top-right — the GL harness's
//! `GL_TRIANGLE_STRIP` order) rasterized into an RGBA8 framebuffer.
//!
//! Rasterization follows OpenGL 4.2 with the choices llvmpipe makes where
//! GL leaves room: window coordinates snapped to 1/256 pixel, samples at
//! pixel centres, the top-left fill rule (in image rows, top-down) so a
//! pixel on the shared diagonal belongs to exactly one triangle,
//! perspective-correct interpolation of floating varyings, flat
//! integer/Boolean varyings from the provoking (last) vertex. Fragments
//! run in 2×2 quads aligned to even window coordinates, with helper lanes
//! for uncovered quad pixels, so texture calls see implicit derivatives
//! (coarse: lane 1 − lane 0 in x, lane 2 − lane 0 in y). Quad rows are
//! split between two threads.

use super::error::ExecError;
use super::executable::Executable;
use super::machine::{Event, Machine};
use super::request::{Attribute, Image, Texture};
use super::sample::{Lod, Selection, fetch, sample, select};
use super::uniforms::UniformValues;

/// The largest framebuffer side the executor draws.
pub const MAX_SIZE: u32 = 8192;

/// What to draw (the GL harness's request, for the CPU executor).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawRequest {
    /// Framebuffer width.
    pub width: u32,
    /// Framebuffer height.
    pub height: u32,
    /// Clear colour before drawing.
    pub clear: [f32; 4],
    /// Uniform values.
    pub uniforms: UniformValues,
    /// Textures by sampler-uniform name (unbound samplers read (0, 0, 0, 1)).
    pub textures: Vec<(String, Texture)>,
    /// Attributes by location; locations 0 and 1 otherwise carry the
    /// quad's clip position and texture coordinates when a floating
    /// scalar or vector attribute is declared there.
    pub attributes: Vec<(u32, Attribute)>,
    /// Quad corners in clip space (x0, y0, x1, y1).
    pub quad: [f32; 4],
}

impl DrawRequest {
    /// A full-screen draw of `width` × `height` with zeroed uniforms.
    pub fn new(executable: &Executable, width: u32, height: u32) -> Self {
        DrawRequest {
            width,
            height,
            clear: [0.0; 4],
            uniforms: UniformValues::new(executable),
            textures: Vec::new(),
            attributes: Vec::new(),
            quad: [-1.0, -1.0, 1.0, 1.0],
        }
    }
}

/// Float to 8-bit unsigned normalized: clamped to [0, 1] (NaN as 0), then
/// rounded to nearest, ties to even.
pub fn unorm8(x: f32) -> u8 {
    let c = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    (c * 255.0).round_ties_even() as u8
}

/// A vertex after the vertex stage: window position (fixed point, image
/// rows top-down), depth, 1/w and its IO words.
#[derive(Debug, Clone)]
struct Vertex {
    x: i64,
    y: i64,
    z: f64,
    inv_w: f64,
    io: Vec<u32>,
}

/// Subpixel precision of window coordinates (bits).
const SUBPIXEL_BITS: u32 = 8;
const ONE: i64 = 1 << SUBPIXEL_BITS;

struct Triangle<'v> {
    v: [&'v Vertex; 3],
    /// Twice the signed area (positive after ordering).
    area: i64,
    provoking: &'v Vertex,
}

impl Triangle<'_> {
    fn edge(a: &Vertex, b: &Vertex, px: i64, py: i64) -> i64 {
        (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)
    }

    fn top_left(a: &Vertex, b: &Vertex) -> bool {
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        dy < 0 || (dy == 0 && dx > 0)
    }

    /// Whether the sample at (px, py) is covered, and its barycentric
    /// weights (extrapolated for helper lanes).
    fn weights(&self, px: i64, py: i64) -> (bool, [f64; 3]) {
        let [a, b, c] = self.v;
        let (ea, eb, ec) = (
            Self::edge(b, c, px, py),
            Self::edge(c, a, px, py),
            Self::edge(a, b, px, py),
        );
        let inside = |e: i64, p: &Vertex, q: &Vertex| e > 0 || (e == 0 && Self::top_left(p, q));
        let covered = inside(ea, b, c) && inside(eb, c, a) && inside(ec, a, b);
        let area = self.area as f64;
        (
            covered,
            [ea as f64 / area, eb as f64 / area, ec as f64 / area],
        )
    }
}

/// Draws `request` with `executable`.
pub fn draw(executable: &Executable, request: &DrawRequest) -> Result<Image, ExecError> {
    let (w, h) = (request.width, request.height);
    if w == 0 || h == 0 || w > MAX_SIZE || h > MAX_SIZE {
        return Err(ExecError::Request(format!(
            "framebuffer size {w}x{h} outside 1..={MAX_SIZE}"
        )));
    }
    if request.uniforms.words.len() != executable.uniform_words as usize {
        return Err(ExecError::Request(
            "uniform values were made for another program".into(),
        ));
    }
    let module = executable.module.module();
    let mut textures: Vec<Option<&Texture>> = vec![None; module.uniforms.len()];
    for (name, texture) in &request.textures {
        let Some((slot, _)) = executable.samplers.iter().find(|(_, n)| n == name) else {
            return Err(ExecError::Request(format!(
                "no sampler uniform named {name:?}"
            )));
        };
        for (level, pixels) in texture.levels.iter().enumerate() {
            let lw = u64::from((texture.width >> level).max(1));
            let lh = u64::from((texture.height >> level).max(1));
            if pixels.len() as u64 != lw * lh * 4 {
                return Err(ExecError::Request(format!(
                    "texture level {level} has {} bytes, {lw}x{lh} RGBA8 needs {}",
                    pixels.len(),
                    lw * lh * 4
                )));
            }
        }
        textures[*slot] = Some(texture);
    }
    let uniforms = &request.uniforms.words;
    let vertices = run_vertices(executable, request, &textures, uniforms)?;

    let clear = request.clear.map(unorm8);
    // Framebuffer rows bottom-up (GL window order) until the end.
    let mut pixels: Vec<u8> = clear.repeat(w as usize * h as usize);
    let order = [[0usize, 1, 2], [2, 1, 3]];
    let triangles: Vec<Triangle<'_>> = order
        .iter()
        .filter_map(|&[i, j, k]| {
            let (a, b, c) = (&vertices[i], &vertices[j], &vertices[k]);
            let area = Triangle::edge(a, b, c.x, c.y);
            match area.signum() {
                0 => None,
                1 => Some(Triangle {
                    v: [a, b, c],
                    area,
                    provoking: c,
                }),
                _ => Some(Triangle {
                    v: [a, c, b],
                    area: -area,
                    provoking: c,
                }),
            }
        })
        .collect();

    let quad_rows = h.div_ceil(2) as usize;
    let row_bytes = w as usize * 4;
    let split = if quad_rows >= 8 {
        quad_rows / 2
    } else {
        quad_rows
    };
    let (low, high) = pixels.split_at_mut((split * 2).min(h as usize) * row_bytes);
    let band = |rows: &mut [u8], first_quad_row: usize, last_quad_row: usize| {
        let mut lanes: [Machine; 4] = Default::default();
        let mut result = Ok(());
        for t in &triangles {
            result = result.and(shade(
                executable,
                &textures,
                uniforms,
                t,
                (w, h),
                rows,
                first_quad_row..last_quad_row,
                &mut lanes,
            ));
        }
        result
    };
    let (a, b) = std::thread::scope(|scope| {
        let second = (split < quad_rows).then(|| scope.spawn(|| band(high, split, quad_rows)));
        let first = band(low, 0, split);
        let second = match second {
            Some(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(ExecError::Limit("a draw thread panicked".into()))),
            None => Ok(()),
        };
        (first, second)
    });
    a?;
    b?;
    // Rows top-down.
    let mut rgba = Vec::with_capacity(pixels.len());
    for row in pixels.chunks_exact(row_bytes).rev() {
        rgba.extend_from_slice(row);
    }
    Ok(Image {
        width: w,
        height: h,
        rgba,
    })
}

fn run_vertices(
    executable: &Executable,
    request: &DrawRequest,
    textures: &[Option<&Texture>],
    uniforms: &[u32],
) -> Result<Vec<Vertex>, ExecError> {
    let [x0, y0, x1, y1] = request.quad;
    let positions = [
        [x0, y0, 0.0, 1.0],
        [x1, y0, 0.0, 1.0],
        [x0, y1, 0.0, 1.0],
        [x1, y1, 0.0, 1.0],
    ];
    let texcoords = [
        [0.0, 0.0, 0.0, 1.0],
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [1.0, 1.0, 0.0, 1.0],
    ];
    let float_at = |location: u32| {
        executable
            .attributes
            .iter()
            .any(|a| a.location == location && a.locations == 1 && a.float)
    };
    let (w, h) = (f64::from(request.width), f64::from(request.height));
    let mut machine = Machine::default();
    let mut vertices = Vec::with_capacity(4);
    for vertex in 0..4 {
        let attribute = |location: u32| -> [f32; 4] {
            if let Some((_, value)) = request
                .attributes
                .iter()
                .rev()
                .find(|(l, _)| *l == location)
            {
                return match value {
                    Attribute::Constant(v) => *v,
                    Attribute::PerVertex(v) => v[vertex],
                };
            }
            match location {
                0 if float_at(0) => positions[vertex],
                1 if float_at(1) => texcoords[vertex],
                _ => [0.0, 0.0, 0.0, 1.0],
            }
        };
        machine.start(&executable.vertex);
        for a in &executable.attributes {
            for column in 0..a.locations {
                let value = attribute(a.location.saturating_add(column));
                for (c, component) in value.iter().enumerate().take(a.components as usize) {
                    let at = (a.io_offset + column * a.components) as usize + c;
                    machine.io[at] = if a.float {
                        component.to_bits()
                    } else {
                        (*component as i32) as u32
                    };
                }
            }
        }
        loop {
            match machine.run(&executable.vertex, uniforms) {
                Event::Done => break,
                Event::Texture { dst, sampler, u, v } => {
                    let texture = textures.get(sampler as usize).copied().flatten();
                    machine.write_sample(dst, sample(texture, u, v, Lod::Base));
                }
                Event::Discarded => {
                    return Err(ExecError::Unsupported(
                        "a vertex invocation discarded".into(),
                    ));
                }
                Event::StepLimit => return Err(step_limit("vertex")),
            }
        }
        let at = executable.clip_offset as usize;
        let clip: Vec<f64> = machine.io[at..at + 4]
            .iter()
            .map(|b| f64::from(f32::from_bits(*b)))
            .collect();
        let (cx, cy, cz, cw) = (clip[0], clip[1], clip[2], clip[3]);
        if cw.is_nan() || cw <= 0.0 || cz.abs() > cw || !cx.is_finite() || !cy.is_finite() {
            return Err(ExecError::Unsupported(format!(
                "vertex {vertex} has clip position ({cx}, {cy}, {cz}, {cw}): primitives that need \
                 clipping (w <= 0 or |z| > w) are not drawn by the executor"
            )));
        }
        let (nx, ny, nz) = (cx / cw, cy / cw, cz / cw);
        let xw = (nx + 1.0) * w / 2.0;
        let yw = (ny + 1.0) * h / 2.0;
        let snap = |v: f64| {
            (v * ONE as f64)
                .round()
                .clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64
        };
        vertices.push(Vertex {
            x: snap(xw),
            // Image rows, top-down.
            y: snap(h - yw),
            z: nz * 0.5 + 0.5,
            inv_w: 1.0 / cw,
            io: machine.io.clone(),
        });
    }
    Ok(vertices)
}

fn step_limit(stage: &str) -> ExecError {
    ExecError::Limit(format!(
        "a {stage} invocation ran more than {} operations (an infinite loop?)",
        super::machine::STEP_LIMIT
    ))
}

/// Shades the quads of `t` within quad rows `quad_rows` (GL window order)
/// into `rows` (whose first row is window row `2 * quad_rows.start`).
#[allow(clippy::too_many_arguments)]
fn shade(
    executable: &Executable,
    textures: &[Option<&Texture>],
    uniforms: &[u32],
    t: &Triangle<'_>,
    (w, h): (u32, u32),
    rows: &mut [u8],
    quad_rows: std::ops::Range<usize>,
    lanes: &mut [Machine; 4],
) -> Result<(), ExecError> {
    let stage = &executable.fragment;
    // Bounding box in window pixels (GL rows, bottom-up).
    let min_x =
        t.v.iter()
            .map(|v| v.x)
            .min()
            .unwrap_or(0)
            .div_euclid(ONE)
            .max(0);
    let max_x =
        t.v.iter()
            .map(|v| v.x)
            .max()
            .unwrap_or(0)
            .div_euclid(ONE)
            .min(i64::from(w) - 1);
    let top = t.v.iter().map(|v| v.y).min().unwrap_or(0).div_euclid(ONE);
    let bottom = t.v.iter().map(|v| v.y).max().unwrap_or(0).div_euclid(ONE);
    // Image rows top..=bottom are window rows h-1-bottom ..= h-1-top.
    let min_y = (i64::from(h) - 1 - bottom).max(0);
    let max_y = (i64::from(h) - 1 - top).min(i64::from(h) - 1);
    if min_x > max_x || min_y > max_y {
        return Ok(());
    }
    let first_qy = (min_y / 2).max(quad_rows.start as i64);
    let last_qy = (max_y / 2).min(quad_rows.end as i64 - 1);
    let row_bytes = w as usize * 4;
    let base_row = quad_rows.start * 2;
    let mut qy = first_qy;
    while qy <= last_qy {
        let mut qx = min_x / 2;
        while qx * 2 <= max_x {
            let (x0, y0) = (qx * 2, qy * 2);
            let lane_xy = [(x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)];
            let mut covered = [false; 4];
            let mut weights = [[0.0f64; 3]; 4];
            for (l, &(x, y)) in lane_xy.iter().enumerate() {
                let px = x * ONE + ONE / 2;
                let py = (i64::from(h) - 1 - y) * ONE + ONE / 2;
                let (c, wts) = t.weights(px, py);
                covered[l] = c && x < i64::from(w) && y < i64::from(h);
                weights[l] = wts;
            }
            if covered.iter().any(|c| *c) {
                let colors =
                    run_quad(executable, textures, uniforms, t, &lane_xy, &weights, lanes)?;
                for l in 0..4 {
                    if let (true, Some(rgba)) = (covered[l], colors[l]) {
                        let (x, y) = lane_xy[l];
                        let at = (y as usize - base_row) * row_bytes + x as usize * 4;
                        if let Some(px) = rows.get_mut(at..at + 4) {
                            px.copy_from_slice(&rgba);
                        }
                    }
                }
            }
            qx += 1;
        }
        qy += 1;
    }
    let _ = stage;
    Ok(())
}

/// Runs the fragment stage on the four lanes of one quad; the colours of
/// lanes that returned normally.
#[allow(clippy::too_many_arguments)]
fn run_quad(
    executable: &Executable,
    textures: &[Option<&Texture>],
    uniforms: &[u32],
    t: &Triangle<'_>,
    lane_xy: &[(i64, i64); 4],
    weights: &[[f64; 3]; 4],
    lanes: &mut [Machine; 4],
) -> Result<[Option<[u8; 4]>; 4], ExecError> {
    let stage = &executable.fragment;
    for (l, machine) in lanes.iter_mut().enumerate() {
        machine.start(stage);
        let wts = weights[l];
        let persp = [
            wts[0] * t.v[0].inv_w,
            wts[1] * t.v[1].inv_w,
            wts[2] * t.v[2].inv_w,
        ];
        let inv_w = persp[0] + persp[1] + persp[2];
        for varying in &executable.varyings {
            for i in 0..varying.len {
                let (from, to) = (
                    (varying.vertex_offset + i) as usize,
                    (varying.fragment_offset + i) as usize,
                );
                machine.io[to] = if varying.flat {
                    t.provoking.io[from]
                } else {
                    let mut sum = 0.0f64;
                    for (k, v) in t.v.iter().enumerate() {
                        sum += persp[k] * f64::from(f32::from_bits(v.io[from]));
                    }
                    ((sum / inv_w) as f32).to_bits()
                };
            }
        }
        if let Some(at) = executable.frag_coord_offset {
            let (x, y) = lane_xy[l];
            let z: f64 = (0..3).map(|k| wts[k] * t.v[k].z).sum();
            let at = at as usize;
            machine.io[at] = (x as f32 + 0.5).to_bits();
            machine.io[at + 1] = (y as f32 + 0.5).to_bits();
            machine.io[at + 2] = (z as f32).to_bits();
            machine.io[at + 3] = (inv_w as f32).to_bits();
        }
    }
    // Lane states: None while running, Some(event) when stopped.
    let mut state: [Option<Event>; 4] = [None; 4];
    loop {
        for l in 0..4 {
            if state[l].is_none() {
                let event = lanes[l].run(stage, uniforms);
                if event == Event::StepLimit {
                    return Err(step_limit("fragment"));
                }
                state[l] = Some(event);
            }
        }
        let coordinate = |l: usize| match state[l] {
            Some(Event::Texture { u, v, .. }) => Some((u, v)),
            _ => None,
        };
        if (0..4).all(|l| coordinate(l).is_none()) {
            break;
        }
        let difference = |a: usize, b: usize| match (coordinate(a), coordinate(b)) {
            (Some(p), Some(q)) => Some((q.0 - p.0, q.1 - p.1)),
            _ => None,
        };
        let (du_dx, dv_dx) = difference(0, 1).or(difference(2, 3)).unwrap_or((0.0, 0.0));
        let (du_dy, dv_dy) = difference(0, 2).or(difference(1, 3)).unwrap_or((0.0, 0.0));
        let lod = Lod::Derivatives {
            du_dx,
            dv_dx,
            du_dy,
            dv_dy,
        };
        // The level and filter depend on the texture and the quad's
        // derivatives only: chosen once per sampler and round.
        let mut chosen: Option<(u32, Selection)> = None;
        for l in 0..4 {
            if let Some(Event::Texture { dst, sampler, u, v }) = state[l] {
                let rgba = match textures.get(sampler as usize).copied().flatten() {
                    Some(texture) => {
                        let selection = match chosen {
                            Some((slot, selection)) if slot == sampler => selection,
                            _ => {
                                let selection = select(texture, lod);
                                chosen = Some((sampler, selection));
                                selection
                            }
                        };
                        fetch(texture, selection, u, v)
                    }
                    None => sample(None, u, v, lod),
                };
                lanes[l].write_sample(dst, rgba);
                state[l] = None;
            }
        }
    }
    let mut colors = [None; 4];
    for l in 0..4 {
        if state[l] == Some(Event::Done) {
            let at = executable.color_offset as usize;
            let io = &lanes[l].io;
            let mut rgba = [0u8; 4];
            for (c, out) in rgba.iter_mut().enumerate() {
                *out = unorm8(f32::from_bits(io[at + c]));
            }
            colors[l] = Some(rgba);
        }
    }
    Ok(colors)
}
