//! `irkit vpl glsl` and `irkit vpl render`: compile VPL to GLSL 4.20 core
//! with reflection, and draw a program headless into a PNG.
//!
//! `FILE` may also name a built-in program as `builtin:NAME` (for example
//! `builtin:mesh-ambient-color`).

use crate::diag::{self, Diagnostic, Format};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, ProgramArtifact, VERSION_420};
use vpl::backends::naga_targets;

/// Arguments of `irkit vpl glsl`.
#[derive(clap::Args)]
pub struct GlslArgs {
    /// Input file (`-` for standard input, `builtin:NAME` for a built-in program).
    pub file: PathBuf,
    /// Directory for NAME.vert, NAME.frag and NAME.reflect.json (default: current directory).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Diagnostic style.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Arguments of `irkit vpl compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// Input file (`-` for standard input, `builtin:NAME` for a built-in program).
    pub file: PathBuf,
    /// The target: `glsl-420` (NAME.vert, NAME.frag, NAME.reflect.json), `spirv`
    /// (NAME.spv), `wgsl`, `glsl-es-300` (NAME.es.vert, NAME.es.frag), `msl` (NAME.metal)
    /// or `hlsl`; naga targets also write NAME.TARGET.reflect.json.
    #[arg(long)]
    pub target: String,
    /// Output directory (default: current directory).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Diagnostic style.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The targets `irkit vpl compile` implements (docs/vpl/targets.md).
pub const TARGETS: [&str; 6] = ["glsl-420", "spirv", "wgsl", "glsl-es-300", "msl", "hlsl"];

/// Arguments of `irkit vpl render`.
#[derive(clap::Args)]
pub struct RenderArgs {
    /// Input file (`-` for standard input, `builtin:NAME` for a built-in program).
    pub file: PathBuf,
    /// Output PNG.
    #[arg(short = 'o', long = "output", required = true)]
    pub output: PathBuf,
    /// Framebuffer size WIDTHxHEIGHT.
    #[arg(long, default_value = "256x256", value_parser = parse_size)]
    pub size: (u32, u32),
    /// PNG textures for the sampler uniforms, in declaration order
    /// (samplers without one get an 8x8 checkerboard).
    #[arg(long = "texture")]
    pub textures: Vec<PathBuf>,
    /// Uniform value NAME=V[,V...]; NAME may select members: `material.color`, `lights[1].color`.
    #[arg(long = "uniform", value_parser = parse_uniform)]
    pub uniforms: Vec<(String, Vec<f64>)>,
    /// Constant vertex attribute LOCATION=X[,Y[,Z[,W]]] (missing components
    /// default to 0, 0, 1); locations 0 and 1 otherwise carry the quad's
    /// position and texture coordinates.
    #[arg(long = "attribute", value_parser = parse_attribute)]
    pub attributes: Vec<(u32, [f32; 4])>,
    /// Driver: `gl` (OpenGL 4.2 core through EGL, the GLSL 4.20 target),
    /// `vulkan` (through the system Vulkan loader, the SPIR-V target) or
    /// `webgl` (WebGL 2 in headless Chromium, the GLSL ES 3.00 target).
    #[arg(long, value_enum, default_value_t)]
    pub driver: Driver,
    /// Diagnostic style.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// The drivers `irkit vpl render` draws with.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Driver {
    /// OpenGL 4.2 core (EGL, e.g. Mesa llvmpipe).
    #[default]
    Gl,
    /// Vulkan 1.1 (e.g. Mesa lavapipe).
    Vulkan,
    /// WebGL 2 in headless Chromium (the GLSL ES 3.00 target).
    Webgl,
}

fn parse_attribute(s: &str) -> Result<(u32, [f32; 4]), String> {
    let (location, values) = parse_uniform(s)?;
    let location = location
        .parse::<u32>()
        .ok()
        .filter(|l| *l < 16)
        .ok_or_else(|| format!("attribute location {location:?} is not in 0..16"))?;
    if values.is_empty() || values.len() > 4 {
        return Err(format!("attribute {location} needs 1 to 4 values"));
    }
    let mut v = [0.0, 0.0, 0.0, 1.0];
    for (slot, x) in v.iter_mut().zip(&values) {
        *slot = *x as f32;
    }
    Ok((location, v))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got {s:?}"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=vpl_gl::render::MAX_SIZE).contains(n))
            .ok_or_else(|| {
                format!(
                    "size {v:?} is not a number in 1..={}",
                    vpl_gl::render::MAX_SIZE
                )
            })
    };
    Ok((parse(w)?, parse(h)?))
}

fn parse_uniform(s: &str) -> Result<(String, Vec<f64>), String> {
    let (name, values) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE[,VALUE...], got {s:?}"))?;
    let values = values
        .split(',')
        .map(|v| match v.trim() {
            "true" => Ok(1.0),
            "false" => Ok(0.0),
            t => t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{t:?} is not a finite number")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((name.trim().to_string(), values))
}

/// A text error as a shared diagnostic (same shape as `irkit vpl check`).
fn text_diagnostic(e: &vpl::text::Error) -> Diagnostic {
    Diagnostic {
        kind: e.kind.name().to_string(),
        code: Some(e.code().to_string()),
        message: e.message.clone(),
        label: e.label.clone(),
        offset: Some(u64::from(e.position.offset)),
        line: Some(u64::from(e.position.line)),
        column: Some(u64::from(e.position.column)),
    }
}

/// A read, verified and published input.
pub(crate) struct Input {
    pub(crate) stem: String,
    label: String,
    bytes: Vec<u8>,
    verified: vpl::verify::Verified,
    pub(crate) published: VerifiedModule,
}

impl Input {
    pub(crate) fn source(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// A target diagnostic at `span` of the published text, mapped into
    /// the input file.
    pub(crate) fn target_diagnostic(
        &self,
        code: &str,
        message: &str,
        span: Option<vpl::ir::Span>,
    ) -> Diagnostic {
        let span = span.and_then(|s| self.published.source_span(self.verified.module(), s));
        Diagnostic {
            kind: "target".to_string(),
            code: Some(code.to_string()),
            message: message.to_string(),
            label: self.label.clone(),
            offset: span.map(|s| u64::from(s.offset)),
            line: span.map(|s| u64::from(s.line)),
            column: span.map(|s| u64::from(s.column)),
        }
    }
}

/// Reads (verifying once) and publishes `file` (print and read back). On
/// failure the diagnostics are already printed and the exit code returned.
pub(crate) fn publish_input(file: &Path, format: Format) -> Result<Input, ExitCode> {
    let (label, bytes, stem) = match file.to_str().and_then(|s| s.strip_prefix("builtin:")) {
        Some(name) => {
            let Some(program) = vpl::programs::Program::from_name(name) else {
                let names: Vec<_> = vpl::programs::Program::ALL
                    .iter()
                    .map(|p| p.name())
                    .collect();
                eprintln!(
                    "error: no built-in program {name:?} (built-ins: {})",
                    names.join(", ")
                );
                return Err(ExitCode::from(EXIT_USAGE));
            };
            (
                program.file_name().to_string(),
                program.source().to_vec(),
                program.name().to_string(),
            )
        }
        None => {
            let (label, bytes) = read_input(file).map_err(|m| {
                eprintln!("error: {m}");
                ExitCode::from(EXIT_USAGE)
            })?;
            let stem = if file.as_os_str() == "-" {
                "stdin".to_string()
            } else {
                file.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "program".to_string())
            };
            (label, bytes, stem)
        }
    };
    let source = std::str::from_utf8(&bytes).ok();
    let verified = match vpl::text::read_verified(&bytes, &label) {
        Ok(m) => m,
        Err(e) => {
            diag::emit(&[text_diagnostic(&e)], format, source);
            return Err(ExitCode::from(EXIT_INVALID));
        }
    };
    let published = match VerifiedModule::publish(&verified) {
        Ok(p) => p,
        Err(e) => {
            diag::emit(&[text_diagnostic(&e)], format, source);
            return Err(ExitCode::from(EXIT_INVALID));
        }
    };
    Ok(Input {
        stem,
        label,
        bytes,
        verified,
        published,
    })
}

/// Reads, publishes and compiles `file` for GLSL 4.20; the target checks
/// run once, on the publication's snapshot, and their positions are mapped
/// back into FILE.
fn compile_input(file: &Path, format: Format) -> Result<(String, ProgramArtifact), ExitCode> {
    let input = publish_input(file, format)?;
    match glsl::compile(&input.published, VERSION_420) {
        Ok(artifact) => Ok((input.stem.clone(), artifact)),
        Err(glsl::CompileError::Target(e)) => {
            let d = input.target_diagnostic(e.kind.code(), &e.message, e.span);
            diag::emit(&[d], format, input.source());
            Err(ExitCode::from(EXIT_INVALID))
        }
        Err(glsl::CompileError::Materialize(e)) => {
            diag::emit(&[text_diagnostic(&e)], format, input.source());
            Err(ExitCode::from(EXIT_INVALID))
        }
        Err(e @ glsl::CompileError::Verify(_)) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// `irkit vpl glsl`.
pub fn glsl(args: GlslArgs) -> ExitCode {
    let (stem, artifact) = match compile_input(&args.file, args.format) {
        Ok(x) => x,
        Err(code) => return code,
    };
    write_glsl(&stem, &artifact, args.output)
}

/// `irkit vpl compile`.
pub fn compile(args: CompileArgs) -> ExitCode {
    let naga_target = match args.target.as_str() {
        "glsl-420" => None,
        name => match naga_targets::Target::from_name(name) {
            Some(t) => Some(t),
            None => {
                eprintln!(
                    "error: unknown target `{name}` (targets: {})",
                    TARGETS.join(", ")
                );
                return ExitCode::from(EXIT_USAGE);
            }
        },
    };
    let Some(target) = naga_target else {
        let (stem, artifact) = match compile_input(&args.file, args.format) {
            Ok(x) => x,
            Err(code) => return code,
        };
        return write_glsl(&stem, &artifact, args.output);
    };
    let input = match publish_input(&args.file, args.format) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let output = match naga_targets::compile(&input.published, target) {
        Ok(o) => o,
        Err(e) => {
            let d = input.target_diagnostic(e.kind.code(), &e.message, e.span);
            diag::emit(&[d], args.format, input.source());
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let dir = args.output.unwrap_or_else(|| PathBuf::from("."));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(EXIT_USAGE);
    }
    let reflection = (
        format!("{}.reflect.json", target.name()),
        output.reflection.into_bytes(),
    );
    for (ext, contents) in output.files.iter().chain(std::iter::once(&reflection)) {
        let path = dir.join(format!("{}.{ext}", input.stem));
        if let Err(m) = write_output(Some(&path), contents) {
            eprintln!("error: {m}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    ExitCode::SUCCESS
}

/// Writes NAME.vert, NAME.frag and NAME.reflect.json into `output`.
fn write_glsl(stem: &str, artifact: &ProgramArtifact, output: Option<PathBuf>) -> ExitCode {
    let dir = output.unwrap_or_else(|| PathBuf::from("."));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(EXIT_USAGE);
    }
    for (ext, text) in [
        ("vert", artifact.vertex_code().to_string()),
        ("frag", artifact.fragment_code().to_string()),
        ("reflect.json", artifact.reflection_json()),
    ] {
        let path = dir.join(format!("{stem}.{ext}"));
        if let Err(m) = write_output(Some(&path), text.as_bytes()) {
            eprintln!("error: {m}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    ExitCode::SUCCESS
}

/// `irkit vpl render`.
pub fn render(args: RenderArgs) -> ExitCode {
    let (_, artifact) = match compile_input(&args.file, args.format) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (width, height) = args.size;
    let mut request = vpl_gl::RenderRequest::new(&artifact, width, height);
    for (name, values) in &args.uniforms {
        if let Err(m) = request.uniforms.set(&artifact, name, values) {
            eprintln!("error: --uniform {m}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    for (location, value) in &args.attributes {
        request
            .attributes
            .push((*location, vpl_gl::AttributeValue::Constant(*value)));
    }
    let mut textures = args.textures.iter();
    for u in artifact.uniforms().iter().filter(|u| u.texture_unit >= 0) {
        let texture = match textures.next() {
            Some(path) => {
                let loaded = std::fs::read(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))
                    .and_then(|b| {
                        vpl_gl::Texture::from_png(&b)
                            .map_err(|e| format!("{}: {e}", path.display()))
                    });
                match loaded {
                    Ok(t) => t,
                    Err(m) => {
                        eprintln!("error: --texture {m}");
                        return ExitCode::from(EXIT_USAGE);
                    }
                }
            }
            None => vpl_gl::Texture::checkerboard(),
        };
        request.textures.push((u.binding.name.clone(), texture));
    }
    if textures.next().is_some() {
        eprintln!("error: more --texture files than sampler uniforms");
        return ExitCode::from(EXIT_USAGE);
    }
    let context = match vpl_gl::GlContext::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "note: `irkit vpl render` needs an OpenGL 4.2 core driver reachable through EGL \
                 (on Debian: libegl1 libegl-mesa0 libgl1-mesa-dri)"
            );
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let image = match vpl_gl::render(&context, &artifact, &request) {
        Ok(image) => image,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    drop(context);
    let png = match image.to_png() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot encode PNG: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match write_output(Some(&args.output), &png) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("error: {m}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
