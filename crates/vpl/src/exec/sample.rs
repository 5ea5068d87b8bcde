//! Texture sampling (section 7.3.1) with the sampler state the GL
//! harness offers: repeat or clamp-to-edge addressing, nearest or linear
//! magnification, nearest, linear or nearest-mipmap-nearest
//! minification, levels `0..levels.len()`.
//!
//! The level of detail follows OpenGL 4.2 section 3.9.11: in fragments
//! λ = log2 ρ with ρ the larger of the two derivative lengths scaled to
//! the base level's texels; in vertices λ = 0 (base level). λ ≤ c selects
//! magnification, with c = 0.5 for linear magnification with a
//! nearest-mipmap-nearest minification and 0 otherwise; a mipmapped
//! minification selects level ⌈λ + ½⌉ − 1 (level 0 when λ ≤ ½), clamped
//! to the last level.

use super::request::{MinFilter, Texture, Wrap};

/// Where the level of detail comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lod {
    /// Vertex stage: implicit base level (λ = 0).
    Base,
    /// Fragment stage: implicit derivatives of (u, v) in x and y.
    Derivatives {
        du_dx: f32,
        dv_dx: f32,
        du_dy: f32,
        dv_dy: f32,
    },
}

/// The colour of an unbound sampler (an incomplete GL texture).
const UNBOUND: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

/// k/255 for every 8-bit k (the same binary32 quotients as dividing).
const UNORM8: [f32; 256] = {
    let mut table = [0.0f32; 256];
    let mut k = 0;
    while k < 256 {
        table[k] = k as f32 / 255.0;
        k += 1;
    }
    table
};

/// The level and filter one texture call reads: what the level of
/// detail selects. Every lane of a fragment quad shares it (the
/// derivatives are the quad's), so it is chosen once per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Selection {
    pub level: usize,
    pub linear: bool,
}

/// Chooses the level and filter of a call with level of detail `lod`.
pub(crate) fn select(t: &Texture, lod: Lod) -> Selection {
    // Where magnification and minification read alike, λ cannot matter.
    match (t.mag_linear, t.min_filter) {
        (false, MinFilter::Nearest) => {
            return Selection {
                level: 0,
                linear: false,
            };
        }
        (true, MinFilter::Linear) => {
            return Selection {
                level: 0,
                linear: true,
            };
        }
        _ => {}
    }
    let lambda = match lod {
        Lod::Base => 0.0,
        Lod::Derivatives {
            du_dx,
            dv_dx,
            du_dy,
            dv_dy,
        } => {
            let (w, h) = (t.width as f32, t.height as f32);
            let x = ((du_dx * w).powi(2) + (dv_dx * h).powi(2)).sqrt();
            let y = ((du_dy * w).powi(2) + (dv_dy * h).powi(2)).sqrt();
            x.max(y).log2()
        }
    };
    let c = if t.mag_linear && t.min_filter == MinFilter::NearestMipmapNearest {
        0.5
    } else {
        0.0
    };
    // NaN λ (no derivatives) counts as magnification.
    let magnify = lambda.is_nan() || lambda <= c;
    let (level, linear) = if magnify {
        (0, t.mag_linear)
    } else {
        match t.min_filter {
            MinFilter::Nearest => (0, false),
            MinFilter::Linear => (0, true),
            MinFilter::NearestMipmapNearest => {
                let last = t.levels.len().saturating_sub(1);
                let d = if lambda <= 0.5 {
                    0
                } else {
                    ((lambda + 0.5).ceil() - 1.0).min(last as f32) as usize
                };
                (d.min(last), false)
            }
        }
    };
    Selection { level, linear }
}

/// Samples `texture` at normalized (u, v).
pub(crate) fn sample(texture: Option<&Texture>, u: f32, v: f32, lod: Lod) -> [f32; 4] {
    match texture {
        Some(t) => fetch(t, select(t, lod), u, v),
        None => UNBOUND,
    }
}

/// Reads `t` at normalized (u, v) with a chosen level and filter.
/// Nearest filtering (one texel) is inlined into the caller; linear
/// filtering is a call.
#[inline(always)]
pub(crate) fn fetch(t: &Texture, selection: Selection, u: f32, v: f32) -> [f32; 4] {
    if selection.linear {
        filtered(t, selection, u, v)
    } else {
        filtered_or_nearest(t, selection, u, v)
    }
}

#[inline(never)]
fn filtered(t: &Texture, selection: Selection, u: f32, v: f32) -> [f32; 4] {
    filtered_or_nearest(t, selection, u, v)
}

#[inline(always)]
fn filtered_or_nearest(t: &Texture, selection: Selection, u: f32, v: f32) -> [f32; 4] {
    if t.levels.is_empty() || t.width == 0 || t.height == 0 {
        return UNBOUND;
    }
    let Selection { level, linear } = selection;
    let lw = (t.width >> level).max(1) as i64;
    let lh = (t.height >> level).max(1) as i64;
    let Some(pixels) = t.levels.get(level) else {
        return UNBOUND;
    };
    if pixels.len() < (lw * lh * 4) as usize {
        return UNBOUND;
    }
    let texel = |i: i64, j: i64| texel(pixels, (lw, lh), t.wrap, i, j);
    let (s, tt) = (u * lw as f32, v * lh as f32);
    if !linear {
        return texel(floor(s), floor(tt));
    }
    let (s, tt) = (s - 0.5, tt - 0.5);
    let (i0, j0) = (floor(s), floor(tt));
    let (a, b) = (s - i0 as f32, tt - j0 as f32);
    let (t00, t10, t01, t11) = (
        texel(i0, j0),
        texel(i0 + 1, j0),
        texel(i0, j0 + 1),
        texel(i0 + 1, j0 + 1),
    );
    let mut out = [0.0f32; 4];
    for k in 0..4 {
        out[k] = (1.0 - a) * (1.0 - b) * t00[k]
            + a * (1.0 - b) * t10[k]
            + (1.0 - a) * b * t01[k]
            + a * b * t11[k];
    }
    out
}

/// k/255 for an 8-bit channel k.
#[inline(always)]
pub(crate) fn normalized(k: u8) -> f32 {
    UNORM8[usize::from(k)]
}

/// The RGBA8 bytes nearest filtering reads at normalized (u, v) from the
/// selected level (`fetch` without the normalization): (0, 0, 0, 255)
/// where `fetch` answers the unbound colour (0, 0, 0, 1).
#[inline(always)]
pub(crate) fn texel_bytes(t: &Texture, selection: Selection, u: f32, v: f32) -> [u8; 4] {
    const UNBOUND_BYTES: [u8; 4] = [0, 0, 0, 255];
    if t.levels.is_empty() || t.width == 0 || t.height == 0 {
        return UNBOUND_BYTES;
    }
    let level = selection.level;
    let lw = (t.width >> level).max(1) as i64;
    let lh = (t.height >> level).max(1) as i64;
    let Some(pixels) = t.levels.get(level) else {
        return UNBOUND_BYTES;
    };
    if pixels.len() < (lw * lh * 4) as usize {
        return UNBOUND_BYTES;
    }
    let (i, j) = (
        address(floor(u * lw as f32), lw, t.wrap),
        address(floor(v * lh as f32), lh, t.wrap),
    );
    let at = ((j * lw + i) * 4) as usize;
    [pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3]]
}

/// [`texel_bytes`] for the four lanes of a quad reading one texture
/// with one selection: the level is checked once, not per lane.
#[inline(always)]
pub(crate) fn texel_bytes_quad(
    t: &Texture,
    selection: Selection,
    coordinates: &[[f32; 2]; 4],
) -> [[u8; 4]; 4] {
    const UNBOUND_BYTES: [u8; 4] = [0, 0, 0, 255];
    if t.levels.is_empty() || t.width == 0 || t.height == 0 {
        return [UNBOUND_BYTES; 4];
    }
    let level = selection.level;
    let lw = (t.width >> level).max(1) as i64;
    let lh = (t.height >> level).max(1) as i64;
    let Some(pixels) = t.levels.get(level) else {
        return [UNBOUND_BYTES; 4];
    };
    if pixels.len() < (lw * lh * 4) as usize {
        return [UNBOUND_BYTES; 4];
    }
    let (sw, sh) = (lw as f32, lh as f32);
    let mut out = [UNBOUND_BYTES; 4];
    for (bytes, [u, v]) in out.iter_mut().zip(coordinates) {
        let (s, r) = (u * sw, v * sh);
        // Inside the level (the usual case, NaN excluded by the
        // comparisons): ⌊x⌋ is the truncation of a non-negative x and
        // both addressing modes leave the texel index as it is.
        let i = if s >= 0.0 && s < sw {
            s as i64
        } else {
            address(floor(s), lw, t.wrap)
        };
        let j = if r >= 0.0 && r < sh {
            r as i64
        } else {
            address(floor(r), lh, t.wrap)
        };
        let at = ((j * lw + i) * 4) as usize;
        if let Some(p) = pixels.get(at..at + 4) {
            *bytes = [p[0], p[1], p[2], p[3]];
        }
    }
    out
}

/// The normalized texel (i, j) (addressed by `wrap`) of a level of
/// `size` texels; inlined so its result stays in registers.
#[inline(always)]
fn texel(pixels: &[u8], (lw, lh): (i64, i64), wrap: Wrap, i: i64, j: i64) -> [f32; 4] {
    let (i, j) = (address(i, lw, wrap), address(j, lh, wrap));
    let at = ((j * lw + i) * 4) as usize;
    let p = &pixels[at..at + 4];
    [
        UNORM8[usize::from(p[0])],
        UNORM8[usize::from(p[1])],
        UNORM8[usize::from(p[2])],
        UNORM8[usize::from(p[3])],
    ]
}

/// ⌊x⌋ as an integer; non-finite coordinates select texel 0.
#[inline(always)]
fn floor(x: f32) -> i64 {
    if x.is_finite() {
        // Clamped first (the bounds are integers, so this commutes with
        // ⌊⌋), then truncated toward zero, one less where that rounded
        // up: ⌊x⌋ without a libm call.
        const BOUND: f32 = (1i64 << 40) as f32;
        let x = x.clamp(-BOUND, BOUND);
        let truncated = x as i64;
        if (truncated as f32) > x {
            truncated - 1
        } else {
            truncated
        }
    } else {
        0
    }
}

#[inline(always)]
fn address(i: i64, size: i64, wrap: Wrap) -> i64 {
    match wrap {
        // In range already (the usual case): no division.
        Wrap::Repeat if (0..size).contains(&i) => i,
        Wrap::Repeat => i.rem_euclid(size),
        Wrap::ClampToEdge => i.clamp(0, size - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::{
        MinFilter, Selection, Texture, Wrap, fetch, floor, normalized, texel_bytes,
        texel_bytes_quad,
    };

    /// Nearest filtering through the bytes (the fragment quad's path)
    /// reads what `fetch` reads, in range, out of range (repeat and
    /// clamp), on every level, and for an incomplete texture.
    #[test]
    fn texel_bytes_normalize_to_fetch() {
        let level = |w: u32, h: u32, seed: u32| -> Vec<u8> {
            (0..w * h * 4).map(|i| (i * 37 + seed * 11) as u8).collect()
        };
        let mut textures = Vec::new();
        for wrap in [Wrap::Repeat, Wrap::ClampToEdge] {
            textures.push(Texture {
                width: 5,
                height: 3,
                levels: vec![level(5, 3, 0), level(2, 1, 1), level(1, 1, 2)],
                wrap,
                min_filter: MinFilter::NearestMipmapNearest,
                mag_linear: false,
            });
        }
        // Level 1 missing bytes: both read the unbound colour.
        textures.push(Texture {
            width: 4,
            height: 4,
            levels: vec![level(4, 4, 3), vec![1, 2, 3]],
            wrap: Wrap::Repeat,
            min_filter: MinFilter::NearestMipmapNearest,
            mag_linear: false,
        });
        for t in &textures {
            for level in 0..3 {
                let selection = Selection {
                    level,
                    linear: false,
                };
                for i in -40..40 {
                    for j in -9..9 {
                        let (u, v) = (i as f32 * 0.071, j as f32 * 0.23);
                        let bytes = texel_bytes(t, selection, u, v);
                        let quad = [[u, v], [v, u], [u + 0.5, v], [u, -v]];
                        let lanes = texel_bytes_quad(t, selection, &quad);
                        for (lane, [qu, qv]) in quad.iter().enumerate() {
                            assert_eq!(lanes[lane], texel_bytes(t, selection, *qu, *qv));
                        }
                        assert_eq!(
                            bytes.map(normalized),
                            fetch(t, selection, u, v),
                            "level {level} at ({u}, {v})"
                        );
                    }
                }
            }
        }
    }

    /// The libm-free ⌊x⌋ agrees with `f32::floor` clamped to ±2^40,
    /// including at the clamp, beyond `i64`'s range and at ±0.
    /// (Checked over every binary32 value outside the suite.)
    #[test]
    fn floor_matches_libm() {
        let reference = |x: f32| (x.floor() as i64).clamp(-(1 << 40), 1 << 40);
        let mut values = vec![
            0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 7.999_999, -7.999_999,
        ];
        values.extend([
            2f32.powi(23) + 1.0,
            -(2f32.powi(23) + 1.0),
            2f32.powi(40),
            -2f32.powi(40),
        ]);
        values.extend([
            1.1e12,
            -1.1e12,
            1e19,
            -1e19,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
        ]);
        values.extend([-f32::MIN_POSITIVE, f32::from_bits(1), -f32::from_bits(1)]);
        for k in -2000..2000 {
            values.push(k as f32 / 7.0);
        }
        for x in values {
            assert_eq!(floor(x), reference(x), "floor({x})");
        }
        assert_eq!(floor(f32::NAN), 0);
        assert_eq!(floor(f32::INFINITY), 0);
    }
}
