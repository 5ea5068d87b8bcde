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
use super::machine::{All, Event, LANES, Machine, One, Word4};
use super::request::{Attribute, Image, Texture};
use super::sample::{
    Lod, Selection, fetch, normalized, sample, select, texel_bytes, texel_bytes_quad,
};
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
#[inline(always)]
#[allow(clippy::manual_clamp)] // `clamp` keeps NaN; NaN must become 0
pub fn unorm8(x: f32) -> u8 {
    // `max` answers the other operand for NaN: NaN becomes 0 without a
    // branch.
    let c = x.max(0.0).min(1.0);
    // c × 255 lies in [0, 255]: adding 2^23 rounds it to an integer,
    // ties to even (binary32's rounding), in the low mantissa bits.
    ((c * 255.0 + 8_388_608.0).to_bits() & 0xff) as u8
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

/// The fragment input words a triangle sets: flat words from the
/// provoking vertex, and perspective-correct words from the three
/// vertices' values (kept apart so a quad interpolates in one tight loop).
#[derive(Debug, Default)]
struct Interpolants {
    /// (fragment IO word, provoking vertex's word).
    flat: Vec<(usize, u32)>,
    /// Fragment IO word of each smooth component.
    smooth_to: Vec<usize>,
    /// The three vertices' values of each smooth component.
    smooth: Vec<[f64; 3]>,
}

struct Triangle<'v> {
    v: [&'v Vertex; 3],
    /// Each edge function's change one pixel right (+x).
    step_x: [i64; 3],
    /// Each edge function's change one window row up (one image row up).
    step_y: [i64; 3],
    /// Whether each edge (opposite vertex k) is a top or left edge.
    top_left: [bool; 3],
    /// 1 / twice the signed area (positive after ordering).
    inv_area: f64,
    /// The fragment input words and how each is interpolated.
    interpolants: Interpolants,
}

impl<'v> Triangle<'v> {
    fn new(executable: &Executable, v: [&'v Vertex; 3], area: i64, provoking: &Vertex) -> Self {
        let mut interpolants = Interpolants::default();
        for varying in &executable.varyings {
            for i in 0..varying.len {
                let (from, to) = (
                    (varying.vertex_offset + i) as usize,
                    (varying.fragment_offset + i) as usize,
                );
                if varying.flat {
                    interpolants.flat.push((to, provoking.io[from]));
                } else {
                    interpolants.smooth_to.push(to);
                    interpolants
                        .smooth
                        .push(v.map(|v| f64::from(f32::from_bits(v.io[from]))));
                }
            }
        }
        let [a, b, c] = v;
        // Edge k runs from p to q (the vertices other than k); its function
        // (q.x − p.x)(py − p.y) − (q.y − p.y)(px − p.x) changes by
        // −(q.y − p.y)·ONE per pixel right and −(q.x − p.x)·ONE per image
        // row up.
        let ends = [(b, c), (c, a), (a, b)];
        Triangle {
            v,
            step_x: ends.map(|(p, q)| -(q.y - p.y) * ONE),
            step_y: ends.map(|(p, q)| -(q.x - p.x) * ONE),
            top_left: [
                Self::top_left(b, c),
                Self::top_left(c, a),
                Self::top_left(a, b),
            ],
            inv_area: 1.0 / area as f64,
            interpolants,
        }
    }

    fn edge(a: &Vertex, b: &Vertex, px: i64, py: i64) -> i64 {
        (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x)
    }

    fn top_left(a: &Vertex, b: &Vertex) -> bool {
        let (dx, dy) = (b.x - a.x, b.y - a.y);
        dy < 0 || (dy == 0 && dx > 0)
    }

    /// The three edge functions at (px, py), each opposite one vertex.
    fn edges(&self, px: i64, py: i64) -> [i64; 3] {
        let [a, b, c] = self.v;
        [
            Self::edge(b, c, px, py),
            Self::edge(c, a, px, py),
            Self::edge(a, b, px, py),
        ]
    }

    /// The pixel columns of window rows `y0` and `y0 + 1` (within
    /// `bounds`, inclusive) where some sample may be covered: a superset
    /// of the covered columns (`None` when there are none).
    fn row_span(&self, y0: i64, h: u32, bounds: (i64, i64)) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = bounds;
        let rows =
            [y0, y0 + 1].map(|y| self.edges(ONE / 2, (i64::from(h) - 1 - y) * ONE + ONE / 2));
        for k in 0..3 {
            let step = self.step_x[k];
            // Per row: the columns x with e + step·x ≥ 0, as [from, to].
            let allowed = rows.map(|e| {
                let e = e[k];
                if step > 0 {
                    // x ≥ ⌈−e / step⌉
                    Some((-(e.div_euclid(step)), i64::MAX))
                } else if step < 0 {
                    // x ≤ ⌊e / −step⌋
                    Some((i64::MIN, e.div_euclid(-step)))
                } else if e >= 0 {
                    Some((i64::MIN, i64::MAX))
                } else {
                    None
                }
            });
            let (from, to) = match allowed {
                [Some(a), Some(b)] => (a.0.min(b.0), a.1.max(b.1)),
                [Some(a), None] | [None, Some(a)] => a,
                [None, None] => return None,
            };
            lo = lo.max(from);
            hi = hi.min(to);
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// Whether a sample with edge functions `e` is covered (the top-left
    /// rule on the edges it lies on).
    fn covers(&self, e: [i64; 3]) -> bool {
        (0..3).all(|k| e[k] > 0 || (e[k] == 0 && self.top_left[k]))
    }

    /// The barycentric weights of a sample with edge functions `e`
    /// (extrapolated for helper lanes).
    fn weights(&self, e: [i64; 3]) -> [f64; 3] {
        e.map(|e| e as f64 * self.inv_area)
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
    // Rows top-down (image order); window row y is image row h - 1 - y.
    let mut pixels: Vec<u8> = clear.repeat(w as usize * h as usize);
    let order = [[0usize, 1, 2], [2, 1, 3]];
    let triangles: Vec<Triangle<'_>> = order
        .iter()
        .filter_map(|&[i, j, k]| {
            let (a, b, c) = (&vertices[i], &vertices[j], &vertices[k]);
            let area = Triangle::edge(a, b, c.x, c.y);
            match area.signum() {
                0 => None,
                1 => Some(Triangle::new(executable, [a, b, c], area, c)),
                _ => Some(Triangle::new(executable, [a, c, b], -area, c)),
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
    // Window rows [0, split_row) are the image's last rows.
    let split_row = (split * 2).min(h as usize);
    let (high, low) = pixels.split_at_mut((h as usize - split_row) * row_bytes);
    let band = |rows: &mut [u8], first_quad_row: usize, last_quad_row: usize, end_row: usize| {
        let mut machine = Machine::default();
        let mut result = Ok(());
        for t in &triangles {
            result = result.and(shade(
                executable,
                &textures,
                uniforms,
                t,
                (w, h),
                Band {
                    rows: &mut *rows,
                    quad_rows: first_quad_row..last_quad_row,
                    end_row,
                },
                &mut machine,
            ));
        }
        result
    };
    let (a, b) = std::thread::scope(|scope| {
        let second =
            (split < quad_rows).then(|| scope.spawn(|| band(high, split, quad_rows, h as usize)));
        let first = band(low, 0, split, split_row);
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
    Ok(Image {
        width: w,
        height: h,
        rgba: pixels,
    })
}

/// The sample of each lane of a quad at one texture call, all lanes
/// active: coarse derivatives (lane 1 − lane 0 in x, lane 2 − lane 0 in
/// y), the level and filter chosen once per sampler.
fn serve_quad(
    textures: &[Option<&Texture>],
    samplers: &Word4,
    coordinates: &[[f32; 2]; LANES],
) -> [[f32; 4]; LANES] {
    let [c0, c1, c2, _] = coordinates;
    let lod = Lod::Derivatives {
        du_dx: c1[0] - c0[0],
        dv_dx: c1[1] - c0[1],
        du_dy: c2[0] - c0[0],
        dv_dy: c2[1] - c0[1],
    };
    // The usual case: one texture for the quad, nearest filtering.
    if samplers.iter().all(|s| *s == samplers[0])
        && let Some(texture) = textures.get(samplers[0] as usize).copied().flatten()
    {
        let selection = select(texture, lod);
        if !selection.linear {
            let bytes = texel_bytes_quad(texture, selection, coordinates);
            let mut rgba = [[0.0f32; 4]; LANES];
            for l in 0..LANES {
                for c in 0..4 {
                    rgba[l][c] = normalized(bytes[l][c]);
                }
            }
            return rgba;
        }
    }
    let mut chosen: Option<(u32, Selection)> = None;
    let mut rgba = [[0.0f32; 4]; LANES];
    for (l, out) in rgba.iter_mut().enumerate() {
        let (sampler, [u, v]) = (samplers[l], coordinates[l]);
        match textures.get(sampler as usize).copied().flatten() {
            Some(texture) => {
                let selection = match chosen {
                    Some((slot, selection)) if slot == sampler => selection,
                    _ => {
                        let selection = select(texture, lod);
                        chosen = Some((sampler, selection));
                        selection
                    }
                };
                if selection.linear {
                    *out = fetch(texture, selection, u, v);
                } else {
                    // One texel's bytes, normalized straight into the
                    // result (no [f32; 4] temporary between them).
                    let bytes = texel_bytes(texture, selection, u, v);
                    for (c, channel) in out.iter_mut().enumerate() {
                        *channel = normalized(bytes[c]);
                    }
                }
            }
            None => *out = sample(None, u, v, lod),
        }
    }
    rgba
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
    let stage = &executable.vertex;
    // The four vertices are the machine's four lanes.
    let mut machine = Machine::default();
    machine.start(stage);
    for vertex in 0..LANES {
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
        for a in &executable.attributes {
            for column in 0..a.locations {
                let value = attribute(a.location.saturating_add(column));
                for (c, component) in value.iter().enumerate().take(a.components as usize) {
                    let at = (a.io_offset + column * a.components) as usize + c;
                    machine.io[at][vertex] = if a.float {
                        component.to_bits()
                    } else {
                        (*component as i32) as u32
                    };
                }
            }
        }
    }
    // Vertex sampling reads the base level (λ = 0).
    let texture = |sampler: u32| textures.get(sampler as usize).copied().flatten();
    let mut serve = |samplers: &Word4, coordinates: &[[f32; 2]; LANES]| {
        std::array::from_fn(|l| {
            let [u, v] = coordinates[l];
            sample(texture(samplers[l]), u, v, Lod::Base)
        })
    };
    let discarded = || ExecError::Unsupported("a vertex invocation discarded".into());
    match machine.run(All, stage, uniforms, &mut serve) {
        Event::Done => {}
        Event::Discarded => return Err(discarded()),
        Event::StepLimit => return Err(step_limit("vertex")),
        Event::Texture { .. } => return Err(lock_step_ended()),
        Event::Diverged => {
            for vertex in 0..LANES {
                loop {
                    match machine.run(One(vertex), stage, uniforms, &mut serve) {
                        Event::Done => break,
                        Event::Texture { dst, sampler, u, v } => {
                            let rgba = sample(texture(sampler), u, v, Lod::Base);
                            machine.write_sample(vertex, dst, rgba);
                        }
                        Event::Discarded => return Err(discarded()),
                        Event::StepLimit => return Err(step_limit("vertex")),
                        Event::Diverged => return Err(lock_step_ended()),
                    }
                }
            }
        }
    }
    let mut vertices = Vec::with_capacity(LANES);
    for vertex in 0..LANES {
        let at = executable.clip_offset as usize;
        let clip: Vec<f64> = machine.io[at..at + 4]
            .iter()
            .map(|b| f64::from(f32::from_bits(b[vertex])))
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
            io: machine.io.iter().map(|word| word[vertex]).collect(),
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

/// A lane running alone reported a divergence, or lock step a texture
/// event, which neither can: an executor defect, reported rather than
/// looped on.
fn lock_step_ended() -> ExecError {
    ExecError::Limit("executor defect: an event the running mode cannot report".into())
}

/// The rows one thread writes.
struct Band<'p> {
    /// Image rows (top-down) of window rows `end_row - rows.len() / row
    /// bytes .. end_row`.
    rows: &'p mut [u8],
    /// Quad rows (GL window order) shaded.
    quad_rows: std::ops::Range<usize>,
    /// One past the last window row in `rows` (its first image row).
    end_row: usize,
}

/// Shades the quads of `t` within `band`'s quad rows into its rows.
#[allow(clippy::too_many_arguments)]
fn shade(
    executable: &Executable,
    textures: &[Option<&Texture>],
    uniforms: &[u32],
    t: &Triangle<'_>,
    (w, h): (u32, u32),
    band: Band<'_>,
    machine: &mut Machine,
) -> Result<(), ExecError> {
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
    let Band {
        rows,
        quad_rows,
        end_row,
    } = band;
    let first_qy = (min_y / 2).max(quad_rows.start as i64);
    let last_qy = (max_y / 2).min(quad_rows.end as i64 - 1);
    let row_bytes = w as usize * 4;
    let mut qy = first_qy;
    while qy <= last_qy {
        // The pixels of this quad row's two rows that can be covered: each
        // edge function is linear in x, so each edge allows a half-line
        // of x per row (all or nothing where it does not change with x);
        // the quads outside the intersection of their unions over the two
        // rows cover nothing and are not visited. (The exact top-left test
        // below still decides every sample.)
        let Some((lo, hi)) = t.row_span(qy * 2, h, (min_x, max_x)) else {
            qy += 1;
            continue;
        };
        let mut qx = lo / 2;
        while qx * 2 <= hi {
            let (x0, y0) = (qx * 2, qy * 2);
            let lane_xy = [(x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)];
            // Lane 0's edge functions, the others one pixel step away
            // (exact integer steps).
            let e0 = t.edges(x0 * ONE + ONE / 2, (i64::from(h) - 1 - y0) * ONE + ONE / 2);
            let edges: [[i64; 3]; LANES] = [
                e0,
                [0, 1, 2].map(|k| e0[k] + t.step_x[k]),
                [0, 1, 2].map(|k| e0[k] + t.step_y[k]),
                [0, 1, 2].map(|k| e0[k] + t.step_x[k] + t.step_y[k]),
            ];
            let mut covered = [false; LANES];
            for (l, &(x, y)) in lane_xy.iter().enumerate() {
                covered[l] = t.covers(edges[l]) && x < i64::from(w) && y < i64::from(h);
            }
            if covered.iter().any(|c| *c) {
                let weights = edges.map(|e| t.weights(e));
                let colors = run_quad(
                    executable, textures, uniforms, t, &lane_xy, &weights, machine,
                )?;
                for l in 0..LANES {
                    if let (true, Some(rgba)) = (covered[l], colors[l]) {
                        let (x, y) = lane_xy[l];
                        let row = end_row - 1 - y as usize;
                        let at = row * row_bytes + x as usize * 4;
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
    Ok(())
}

/// Runs the fragment stage on the four lanes of one quad (in lock step
/// until they diverge); the colours of lanes that returned normally.
fn run_quad(
    executable: &Executable,
    textures: &[Option<&Texture>],
    uniforms: &[u32],
    t: &Triangle<'_>,
    lane_xy: &[(i64, i64); LANES],
    weights: &[[f64; 3]; LANES],
    machine: &mut Machine,
) -> Result<[Option<[u8; 4]>; LANES], ExecError> {
    let stage = &executable.fragment;
    machine.start(stage);
    // Per lane: the perspective weights w_k / w_k(clip) and one
    // reciprocal of their sum (not one division per component).
    let mut persp = [[0.0f64; LANES]; 3];
    let mut inv_w = [0.0f64; LANES];
    let mut reciprocal = [0.0f64; LANES];
    for l in 0..LANES {
        for k in 0..3 {
            persp[k][l] = weights[l][k] * t.v[k].inv_w;
        }
        inv_w[l] = persp[0][l] + persp[1][l] + persp[2][l];
        reciprocal[l] = 1.0 / inv_w[l];
    }
    let io = &mut machine.io;
    for &(to, word) in &t.interpolants.flat {
        if let Some(slot) = io.get_mut(to) {
            *slot = [word; LANES];
        }
    }
    for (&to, &[a0, a1, a2]) in t.interpolants.smooth_to.iter().zip(&t.interpolants.smooth) {
        // Lanes innermost, on arrays: the four lanes' sums are computed
        // side by side (the same operations, in the same order, per lane).
        let mut words = [0u32; LANES];
        for l in 0..LANES {
            let sum = 0.0 + persp[0][l] * a0 + persp[1][l] * a1 + persp[2][l] * a2;
            words[l] = ((sum * reciprocal[l]) as f32).to_bits();
        }
        if let Some(slot) = io.get_mut(to) {
            *slot = words;
        }
    }
    if let Some(at) = executable.frag_coord_offset {
        let at = at as usize;
        for (l, &(x, y)) in lane_xy.iter().enumerate() {
            let wts = weights[l];
            let z: f64 = (0..3).map(|k| wts[k] * t.v[k].z).sum();
            machine.io[at][l] = (x as f32 + 0.5).to_bits();
            machine.io[at + 1][l] = (y as f32 + 0.5).to_bits();
            machine.io[at + 2][l] = (z as f32).to_bits();
            machine.io[at + 3][l] = (inv_w[l] as f32).to_bits();
        }
    }
    let mut serve = |samplers: &Word4, coordinates: &[[f32; 2]; LANES]| {
        serve_quad(textures, samplers, coordinates)
    };
    let done = match machine.run(All, stage, uniforms, &mut serve) {
        Event::Done => [true; LANES],
        Event::Discarded => [false; LANES],
        Event::StepLimit => return Err(step_limit("fragment")),
        Event::Diverged => run_apart(textures, uniforms, stage, machine, &mut serve)?,
        Event::Texture { .. } => return Err(lock_step_ended()),
    };
    let mut colors = [None; LANES];
    let at = executable.color_offset as usize;
    let Some(color) = machine.io.get(at..at + 4) else {
        return Ok(colors);
    };
    // All sixteen channels converted side by side (helper and discarded
    // lanes too: cheaper than branching), then kept where a lane is done.
    let mut bytes = [[0u8; 4]; LANES];
    for c in 0..4 {
        for l in 0..LANES {
            bytes[l][c] = unorm8(f32::from_bits(color[c][l]));
        }
    }
    for l in 0..LANES {
        if done[l] {
            colors[l] = Some(bytes[l]);
        }
    }
    Ok(colors)
}

/// Runs the lanes of a quad that diverged, each alone, to the end: they
/// run until each has finished or reached a texture call, the calls are
/// served together (the n-th call of each lane), and the lanes resume.
/// Whether each lane returned normally.
fn run_apart<S>(
    textures: &[Option<&Texture>],
    uniforms: &[u32],
    stage: &super::program::CompiledStage,
    machine: &mut Machine,
    serve: &mut S,
) -> Result<[bool; LANES], ExecError>
where
    S: FnMut(&Word4, &[[f32; 2]; LANES]) -> [[f32; 4]; LANES],
{
    // Lane states: None while running, Some(event) when stopped.
    let mut state: [Option<Event>; LANES] = [None; LANES];
    loop {
        for (l, lane) in state.iter_mut().enumerate() {
            if lane.is_none() {
                let event = machine.run(One(l), stage, uniforms, serve);
                match event {
                    Event::StepLimit => return Err(step_limit("fragment")),
                    Event::Diverged => return Err(lock_step_ended()),
                    _ => *lane = Some(event),
                }
            }
        }
        let coordinate = |l: usize| match state[l] {
            Some(Event::Texture { u, v, .. }) => Some((u, v)),
            _ => None,
        };
        if (0..LANES).all(|l| coordinate(l).is_none()) {
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
        for (l, lane) in state.iter_mut().enumerate() {
            if let Some(Event::Texture { dst, sampler, u, v }) = *lane {
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
                machine.write_sample(l, dst, rgba);
                *lane = None;
            }
        }
    }
    Ok(state.map(|s| s == Some(Event::Done)))
}

#[cfg(test)]
mod tests {
    use super::unorm8;

    /// The 2^23 rounding agrees with `round_ties_even` on every tie
    /// (k + ½) / 255 and its neighbours, the clamps and NaN. (Checked
    /// over every binary32 value outside the suite.)
    #[test]
    fn unorm8_rounds_ties_to_even() {
        let reference = |x: f32| {
            let c = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
            (c * 255.0).round_ties_even() as u8
        };
        let mut values = vec![f32::NAN, -1.0, -0.0, 0.0, 1.0, 2.0, f32::INFINITY];
        for k in 0..=255u32 {
            for x in [k as f32 / 255.0, (k as f32 + 0.5) / 255.0] {
                for step in 0..8u32 {
                    values.push(f32::from_bits(x.to_bits().saturating_sub(4) + step));
                }
            }
        }
        // Values whose product with 255 is exactly k + ½: real ties.
        let ties = values
            .iter()
            .filter(|x| (**x * 255.0).fract() == 0.5)
            .count();
        assert!(ties > 100, "only {ties} ties among the values");
        for x in values {
            assert_eq!(unorm8(x), reference(x), "unorm8({x})");
        }
    }
}
