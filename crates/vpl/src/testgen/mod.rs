//! Random verified modules for differential testing (issue 38).
//!
//! [`generate`] turns a seed into a [`Case`]: a module that passes the
//! reader and verifier, the uniform values, textures and framebuffer size
//! to draw it with, and per output channel the tolerance the contract
//! allows between drivers. The modules cover the language: several
//! functions, helpers with storage parameters (int, float, record) and
//! with sampler parameters, void helpers writing stage outputs, bounded
//! loops, branches, integer and floating scalar/vector/matrix arithmetic
//! of every shape, conversions, Boolean vectors, local and uniform
//! records and arrays through member/index paths with dynamic indices,
//! sampling with repeat/clamp addressing, several mip levels (fragment)
//! and the base level (vertex), and discard.
//!
//! Outputs stay where section 4.1 promises equality: integer-derived
//! channels are exact (tolerance 0); floating values are bounded, away
//! from overflow, with divisors of magnitude ≥ 1, and each float-derived
//! channel carries an error bound computed alongside (`info`), turned
//! into a tolerance in 1/255 units. Branch and discard conditions are
//! exact. Texture coordinates keep every sample at least 1/8 texel away
//! from a texel boundary and every level of detail an integer, so every
//! driver selects the same texel. `docs/vpl/oracle.md` states the rules.

mod coverage;
mod function;
mod info;
mod known;
mod rng;
mod statements;

pub use coverage::{REQUIRED, coverage};

use crate::VerifiedModule;
use crate::exec::{MinFilter, Texture, Wrap};
use crate::ir::StageKind;
use function::{FunctionText, Info, Ty, float, int};
use info::{FloatInfo, IntInfo, rounding};
use known::UniformValues;
use rng::Rng;
use statements::{Gen, Helper};
use std::collections::BTreeSet;

/// The framebuffer side of every case.
pub const SIZE: u32 = 16;

/// A generated module and how to draw and compare it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The seed.
    pub seed: u64,
    /// The module's text (as generated; [`Case::module`] is its publication).
    pub text: String,
    /// The verified, published module.
    pub module: VerifiedModule,
    /// Uniform values by logical path.
    pub uniforms: Vec<(String, Vec<f64>)>,
    /// Textures by sampler name.
    pub textures: Vec<(String, Texture)>,
    /// Framebuffer size.
    pub size: (u32, u32),
    /// Allowed difference per RGBA channel (0: integer-derived, exact).
    pub tolerance: [u8; 4],
    /// Number of random statements (indices for [`generate_without`]).
    pub statements: usize,
}

/// A generated module the verifier rejected: a generator defect.
#[derive(Debug, Clone, thiserror::Error)]
#[error("seed {seed}: the generated module is invalid: {message}\n{text}")]
pub struct GenError {
    /// The seed.
    pub seed: u64,
    /// The reader's or verifier's message.
    pub message: String,
    /// The module text.
    pub text: String,
}

const TYPES: &str = "  (types
    (type V void) (type B bool) (type I int) (type F float)
    (type B2 vector bool 2) (type B3 vector bool 3) (type B4 vector bool 4)
    (type I2 vector int 2) (type I3 vector int 3) (type I4 vector int 4)
    (type F2 vector float 2) (type F3 vector float 3) (type F4 vector float 4)
    (type M22 matrix 2 2) (type M23 matrix 2 3) (type M24 matrix 2 4)
    (type M32 matrix 3 2) (type M33 matrix 3 3) (type M34 matrix 3 4)
    (type M42 matrix 4 2) (type M43 matrix 4 3) (type M44 matrix 4 4)
    (type S sampler2D)
    (type IA array I 4) (type FA array F 3)
    (type Cell record \"Cell\" (field \"v\" F2) (field \"n\" I))
    (type Cells array Cell 3)
    (type Params record \"Params\" (field \"tint\" F4) (field \"count\" I)
      (field \"weights\" FA) (field \"offset\" I2) (field \"xf\" M22)))
  (uniforms
    (record params \"params\" Params)
    (array ints \"ints\" I 4)
    (array lights \"lights\" Cell 2)
    (scalar scale \"scale\" F)
    (scalar limit \"limit\" I)
    (scalar tex \"tex\" S)
    (scalar tex2 \"tex2\" S))";

/// A helper that samples its sampler parameter at its coordinate parameter.
fn sample_helper(id: &str) -> String {
    format!(
        "      (function {id} \"{id}\" F4
        (parameters (parameter p0 S) (parameter p1 F2))
        (registers (register r0 S) (register r1 F2) (register r2 F4))
        (block entry (load r0 (parameter p0)) (load r1 (parameter p1))
          (texture r2 r0 r1) (return r2)))"
    )
}

/// The facts of a texel (normalized 8-bit values; drivers may convert
/// with a last-bit difference).
fn texel_info() -> FloatInfo {
    FloatInfo {
        bound: 1.0,
        err: 2f64.powi(-20),
        grid: None,
    }
}

fn random_texture(rng: &mut Rng, size: u32, levels: u32) -> Texture {
    let levels = (0..levels)
        .map(|l| {
            let side = (size >> l).max(1) as usize;
            (0..side * side * 4).map(|_| rng.below(256) as u8).collect()
        })
        .collect();
    Texture {
        width: size,
        height: size,
        levels,
        wrap: if rng.chance(50) {
            Wrap::Repeat
        } else {
            Wrap::ClampToEdge
        },
        min_filter: if size > 4 {
            MinFilter::NearestMipmapNearest
        } else {
            MinFilter::Nearest
        },
        mag_linear: false,
    }
}

/// Generates the case of `seed`.
pub fn generate(seed: u64) -> Result<Case, GenError> {
    generate_without(seed, &BTreeSet::new())
}

/// Generates the case of `seed` with the statements in `disabled`
/// replaced by constants (for minimizing a disagreement).
pub fn generate_without(seed: u64, disabled: &BTreeSet<usize>) -> Result<Case, GenError> {
    let mut rng = Rng::new(seed);
    let known = UniformValues::random(&mut rng);
    let tex_size = rng.pick(&[4u32, 8, 16, 32, 64]);
    let s1 = rng.pick(&[1.0, 2.0]);
    let s2 = rng.pick(&[1.0, 2.0]);
    let tex = random_texture(&mut rng, tex_size, tex_size.trailing_zeros() + 1);
    let tex2 = random_texture(&mut rng, 4, 1);
    let mut counter = 0usize;

    // Vertex stage.
    let mut vertex_helpers: Vec<Helper> = Vec::new();
    let (vertex_entry, vcol, vflat) = {
        let mut g = Gen {
            rng: &mut rng,
            f: FunctionText::new(),
            stage: StageKind::Vertex,
            helpers: &mut vertex_helpers,
            helper_depth: 2,
            nesting: 2,
            uniforms: &known,
            counter: &mut counter,
            disabled,
        };
        let exact1 = FloatInfo::constant(1.0);
        let pos =
            g.f.define(Ty::FVec(2), Info::float(exact1), "(load {r} (stage pos))");
        let clip = g.f.define(
            Ty::FVec(4),
            Info::float(exact1),
            &format!("(construct {{r}} {} (float 0.0) (float 1.0))", pos.name()),
        );
        g.f.emit(format!("(store (stage clip) {})", clip.name()));
        let uv =
            g.f.define(Ty::FVec(2), Info::float(exact1), "(load {r} (stage uv))");
        let vuv = g.f.define(
            Ty::FVec(2),
            Info::float(exact1.scale_pow2(s1 as i32 - 1)),
            &format!("(multiply {{r}} {} {})", uv.name(), float(s1)),
        );
        g.f.emit(format!("(store (stage vuv) {})", vuv.name()));
        // Vertex sampling (base level) at texel centres, through a helper
        // with a sampler parameter.
        let half = g.f.define(
            Ty::FVec(2),
            Info::float(FloatInfo::constant(0.5)),
            &format!("(multiply {{r}} {} (float 0.5))", uv.name()),
        );
        let offset = g.f.define(
            Ty::FVec(2),
            Info::float(FloatInfo::constant(0.5 / f64::from(tex_size))),
            &format!("(construct {{r}} {})", float(0.5 / f64::from(tex_size))),
        );
        let coord = g.f.define(
            Ty::FVec(2),
            Info::float(FloatInfo::constant(1.0)),
            &format!("(add {{r}} {} {})", half.name(), offset.name()),
        );
        let sampler =
            g.f.define(Ty::Sampler, Info::boolean(true), "(load {r} (uniform tex))");
        let vt = g.f.define(
            Ty::FVec(4),
            Info::float(texel_info()),
            &format!("(call {{r}} vsample {} {})", sampler.name(), coord.name()),
        );
        g.f.emit(format!("(store (stage vtex) {})", vt.name()));
        for letter in ["x", "y"] {
            g.f.define(
                Ty::Float,
                Info::float(exact1),
                &format!("(swizzle {{r}} {} \"{letter}\")", pos.name()),
            );
        }
        for _ in 0..g.rng.range(2, 7) {
            g.statement();
        }
        let mut parts = Vec::new();
        let mut vcol = FloatInfo::constant(0.0);
        for _ in 0..4 {
            let (name, info) = match g.f.pick(g.rng, Ty::Float, |i| i.f.bound <= 4096.0) {
                Some(v) => (v.name(), v.info.f),
                None => (float(0.25), FloatInfo::constant(0.25)),
            };
            parts.push(name);
            vcol = vcol.join(info);
        }
        let c = g.f.define(
            Ty::FVec(4),
            Info::float(vcol),
            &format!("(construct {{r}} {})", parts.join(" ")),
        );
        g.f.emit(format!("(store (stage vcol) {})", c.name()));
        let mut parts = Vec::new();
        let mut vflat: Option<IntInfo> = None;
        for _ in 0..2 {
            let (name, info) = match g.f.pick(g.rng, Ty::Int, |_| true) {
                Some(v) => (v.name(), v.info.i),
                None => (int(3), IntInfo::exact(3)),
            };
            parts.push(name);
            vflat = Some(vflat.map_or(info, |i| i.join(info)));
        }
        let v = g.f.define(
            Ty::IVec(2),
            Info::int(IntInfo::any()),
            &format!("(construct {{r}} {})", parts.join(" ")),
        );
        g.f.emit(format!("(store (stage vflat) {})", v.name()));
        g.f.terminate("(return)".into());
        (
            g.f.finish("vmain", "V", &[]),
            vcol,
            vflat.unwrap_or(IntInfo::any()),
        )
    };

    // Fragment stage.
    let mut fragment_helpers: Vec<Helper> = Vec::new();
    let (fragment_entry, tolerance) = {
        let mut g = Gen {
            rng: &mut rng,
            f: FunctionText::new(),
            stage: StageKind::Fragment,
            helpers: &mut fragment_helpers,
            helper_depth: 2,
            nesting: 2,
            uniforms: &known,
            counter: &mut counter,
            disabled,
        };
        // Window x (pixel centre): exact. The other components are not
        // compared across drivers (y and depth conventions differ).
        let fpos = g.f.define(
            Ty::FVec(4),
            Info::float(FloatInfo {
                bound: 16.5,
                err: 1.0,
                grid: None,
            }),
            "(load {r} (stage fpos))",
        );
        g.f.define(
            Ty::Float,
            Info::float(FloatInfo::constant(16.5).join(FloatInfo::constant(0.5))),
            &format!("(swizzle {{r}} {} \"x\")", fpos.name()),
        );
        // Texture sampling first, in uniform control flow.
        let uv = g.f.define(
            Ty::FVec(2),
            Info::float(FloatInfo::constant(s1).interpolated()),
            "(load {r} (stage vuv))",
        );
        let coord = if s2 > 1.0 {
            g.f.define(
                Ty::FVec(2),
                Info::float(FloatInfo::constant(s1 * s2).interpolated()),
                &format!("(multiply {{r}} {} {})", uv.name(), float(s2)),
            )
            .name()
        } else {
            uv.name()
        };
        let sampler =
            g.f.define(Ty::Sampler, Info::boolean(true), "(load {r} (uniform tex))");
        let t0 = g.f.define(
            Ty::FVec(4),
            Info::float(texel_info()),
            &format!("(texture {{r}} {} {coord})", sampler.name()),
        );
        let sampler2 = g.f.define(
            Ty::Sampler,
            Info::boolean(true),
            "(load {r} (uniform tex2))",
        );
        let t1 = g.f.define(
            Ty::FVec(4),
            Info::float(texel_info()),
            &format!("(call {{r}} fsample {} {})", sampler2.name(), uv.name()),
        );
        let col = g.f.define(
            Ty::FVec(4),
            Info::float(vcol.interpolated()),
            "(load {r} (stage vcol))",
        );
        let vt = g.f.define(
            Ty::FVec(4),
            Info::float(texel_info().interpolated()),
            "(load {r} (stage vtex))",
        );
        let flat =
            g.f.define(Ty::IVec(2), Info::int(vflat), "(load {r} (stage flat))");
        g.f.define(
            Ty::Int,
            Info::int(vflat),
            &format!("(swizzle {{r}} {} \"y\")", flat.name()),
        );
        let sources = [t0, t1, col, vt];
        for s in sources {
            let letter = ["x", "y", "z", "w"][g.rng.below(4) as usize];
            g.f.define(
                Ty::Float,
                s.info,
                &format!("(swizzle {{r}} {} \"{letter}\")", s.name()),
            );
        }
        for _ in 0..g.rng.range(4, 14) {
            g.statement();
        }
        // Output channels.
        let mut channels = Vec::new();
        let mut tolerance = [0u8; 4];
        for t in tolerance.iter_mut() {
            match g.rng.below(10) {
                0..=3 => {
                    let a = match g.f.pick(g.rng, Ty::Int, |_| true) {
                        Some(v) => v.name(),
                        None => int(g.rng.range(-300, 300)),
                    };
                    let q = g.f.define(
                        Ty::Int,
                        Info::int(IntInfo::any()),
                        &format!("(divide {{r}} {a} (int 256))"),
                    );
                    let m = g.f.define(
                        Ty::Int,
                        Info::int(IntInfo::any()),
                        &format!("(multiply {{r}} {} (int 256))", q.name()),
                    );
                    let k = g.f.define(
                        Ty::Int,
                        Info::int(IntInfo::any()),
                        &format!("(subtract {{r}} {a} {})", m.name()),
                    );
                    let f = g.f.define(
                        Ty::Float,
                        Info::float(FloatInfo::constant(255.0)),
                        &format!("(construct {{r}} {})", k.name()),
                    );
                    let c = g.f.define(
                        Ty::Float,
                        Info::float(FloatInfo::constant(1.0)),
                        &format!("(divide {{r}} {} (float 255.0))", f.name()),
                    );
                    channels.push(c.name());
                    *t = 0;
                }
                r => {
                    let source = if r >= 8 {
                        let s = sources[g.rng.below(4) as usize];
                        let letter = ["x", "y", "z", "w"][g.rng.below(4) as usize];
                        g.f.define(
                            Ty::Float,
                            s.info,
                            &format!("(swizzle {{r}} {} \"{letter}\")", s.name()),
                        )
                    } else {
                        match g.f.pick(g.rng, Ty::Float, |_| true) {
                            Some(v) => v,
                            None => g.f.define(
                                Ty::Float,
                                Info::float(FloatInfo::constant(0.5)),
                                "(copy {r} (float 0.5))",
                            ),
                        }
                    };
                    let bound = source.info.f.bound.max(1.0);
                    let mut n = 0;
                    while 2f64.powi(n) < bound {
                        n += 1;
                    }
                    let scale = 2f64.powi(-(n + 1));
                    let scaled = g.f.define(
                        Ty::Float,
                        Info::float(FloatInfo::constant(0.5)),
                        &format!("(multiply {{r}} {} {})", source.name(), float(scale)),
                    );
                    let c = g.f.define(
                        Ty::Float,
                        Info::float(FloatInfo::constant(1.0)),
                        &format!("(add {{r}} {} (float 0.5))", scaled.name()),
                    );
                    channels.push(c.name());
                    let err = source.info.f.err * scale + rounding(1.0);
                    *t = ((err * 255.0).ceil() + 1.0).min(255.0) as u8;
                }
            }
        }
        let color = g.f.define(
            Ty::FVec(4),
            Info::float(FloatInfo::constant(1.0)),
            &format!("(construct {{r}} {})", channels.join(" ")),
        );
        g.f.emit(format!("(store (stage color) {})", color.name()));
        g.f.emit(format!("(call void put_extra {})", color.name()));
        g.f.terminate("(return)".into());
        (g.f.finish("fmain", "V", &[]), tolerance)
    };

    let mut text = format!("(module 1\n{TYPES}\n");
    text.push_str(
        "  (vertex vmain
    (interface
      (in pos \"pos\" F2 0 none) (in uv \"uv\" F2 1 texcoord)
      (out clip \"clip\" F4 -1 position) (out vuv \"vuv\" F2 -1 texcoord)
      (out vcol \"vcol\" F4 -1 color) (out vflat \"vflat\" I2 3 none)
      (out vtex \"vtex\" F4 -1 none))
    (functions\n",
    );
    text.push_str(&vertex_entry);
    text.push('\n');
    text.push_str(&sample_helper("vsample"));
    for h in &vertex_helpers {
        text.push('\n');
        text.push_str(&h.text);
    }
    text.push_str(
        "))
  (fragment fmain
    (interface
      (in fpos \"fpos\" F4 -1 position) (in vuv \"vuv\" F2 -1 texcoord)
      (in vcol \"vcol\" F4 -1 color) (in flat \"flat\" I2 3 none)
      (in vtex \"vtex\" F4 -1 none)
      (out color \"color\" F4 0 fragment_color) (out extra \"extra\" F4 1 none))
    (functions\n",
    );
    text.push_str(&fragment_entry);
    text.push('\n');
    text.push_str(&sample_helper("fsample"));
    text.push_str(
        "
      (function put_extra \"put_extra\" V
        (parameters (parameter p0 F4))
        (registers (register r0 F4))
        (block entry (load r0 (parameter p0)) (store (stage extra) r0) (return)))",
    );
    for h in &fragment_helpers {
        text.push('\n');
        text.push_str(&h.text);
    }
    text.push_str(")))\n");

    let invalid = |message: String| GenError {
        seed,
        message,
        text: text.clone(),
    };
    let verified = crate::text::read_verified(text.as_bytes(), "generated.vpl")
        .map_err(|e| invalid(e.to_string()))?;
    let module = VerifiedModule::publish(&verified).map_err(|e| invalid(e.to_string()))?;
    Ok(Case {
        seed,
        text,
        module,
        uniforms: known.paths(),
        textures: vec![("tex".into(), tex), ("tex2".into(), tex2)],
        size: (SIZE, SIZE),
        tolerance,
        statements: counter,
    })
}
