//! `irkit vpl glsl` and `irkit vpl render`: compile VPL to GLSL 4.20 core
//! with reflection, and draw a program headless into a PNG.
//!
//! `FILE` may also name a built-in program as `builtin:NAME` (for example
//! `builtin:mesh-ambient-color`).

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Diagnostic;
use crate::error::{CliError, Origin, Outcome};
use crate::io::{create_dir, read, write};
use std::path::{Path, PathBuf};
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, ProgramArtifact, VERSION_420};
use vpl::backends::naga_targets;

/// Arguments of `irkit vpl glsl`.
#[derive(clap::Args)]
pub struct GlslArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Directory for NAME.vert, NAME.frag and NAME.reflect.json (default: current directory).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub fmt: FormatArgs,
}

/// Arguments of `irkit vpl compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The target: `glsl-420` (NAME.vert, NAME.frag, NAME.reflect.json), `spirv`
    /// (NAME.spv), `wgsl`, `glsl-es-300` (NAME.es.vert, NAME.es.frag), `msl` (NAME.metal)
    /// or `hlsl`; naga targets also write NAME.TARGET.reflect.json.
    #[arg(long)]
    pub target: String,
    /// Output directory (default: current directory).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub fmt: FormatArgs,
}

/// The targets `irkit vpl compile` implements (docs/vpl/targets.md).
pub const TARGETS: [&str; 6] = ["glsl-420", "spirv", "wgsl", "glsl-es-300", "msl", "hlsl"];

/// Arguments of `irkit vpl render`.
#[derive(clap::Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub input: InputArgs,
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
    /// `vulkan` (through the system Vulkan loader, the SPIR-V target),
    /// `webgl` (WebGL 2 in headless Chromium, the GLSL ES 3.00 target) or
    /// `cpu` (the reference executor, no GPU stack). Default: `gl`, or
    /// `cpu` where no OpenGL context can be created.
    #[arg(long, value_enum)]
    pub driver: Option<Driver>,
    #[command(flatten)]
    pub fmt: FormatArgs,
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
    /// The CPU reference executor (`vpl::exec`), no GPU stack.
    Cpu,
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

/// A read, verified and published input.
pub(crate) struct Input {
    pub(crate) stem: String,
    label: String,
    bytes: Vec<u8>,
    pub(crate) published: VerifiedModule,
    /// A graph input's textures' sampler state (empty for VPL text).
    pub(crate) samplers: Vec<(String, vpl_graph::SamplerState)>,
}

impl Input {
    fn source(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// A target error at `span` of the published text, mapped into the
    /// input file.
    pub(crate) fn target_error(
        &self,
        code: &str,
        message: &str,
        span: Option<vpl::ir::Span>,
    ) -> CliError {
        // The module as read was given up to the publication (a large one
        // and its snapshot are not held at once); a diagnostic reads the
        // same bytes again, which gives the same module.
        let read = span.and_then(|_| vpl::text::read(&self.bytes, &self.label).ok());
        let span = span.and_then(|s| self.published.source_span(read.as_ref()?, s));
        let d = Diagnostic {
            kind: "target".to_string(),
            code: Some(code.to_string()),
            message: message.to_string(),
            label: self.label.clone(),
            offset: span.map(|s| u64::from(s.offset)),
            line: span.map(|s| u64::from(s.line)),
            column: span.map(|s| u64::from(s.column)),
        };
        CliError::invalid(vec![d], self.source())
    }

    /// A text error of the input (or of its publication).
    fn text_error(&self, e: &vpl::text::Error) -> CliError {
        CliError::diagnosed(e, &Origin::text(&self.label, self.source()))
    }
}

/// VPL text to read: a file, standard input (`-`), a built-in program
/// (`builtin:NAME`) or a material graph (`.json`, compiled to VPL).
pub(crate) struct Source {
    /// The label diagnostics name.
    pub(crate) label: String,
    /// The VPL text.
    pub(crate) bytes: Vec<u8>,
    /// The name output files take.
    pub(crate) stem: String,
    /// A graph input's textures' sampler state (empty for VPL text).
    pub(crate) samplers: Vec<(String, vpl_graph::SamplerState)>,
}

/// Reads `file` as VPL text; every `vpl` verb takes its input through here.
pub(crate) fn read_source(file: &Path) -> Result<Source, CliError> {
    let mut samplers = Vec::new();
    let (label, bytes, stem) = match file.to_str().and_then(|s| s.strip_prefix("builtin:")) {
        Some(name) => {
            let Some(program) = vpl::programs::Program::from_name(name) else {
                let names: Vec<_> = vpl::programs::Program::ALL
                    .iter()
                    .map(|p| p.name())
                    .collect();
                return Err(CliError::usage(format!(
                    "no built-in program {name:?}{} (built-ins: {})",
                    crate::suggest::hint(name, names.iter().copied()),
                    names.join(", ")
                )));
            };
            (
                program.file_name().to_string(),
                program.source().to_vec(),
                program.name().to_string(),
            )
        }
        None if crate::vpl_graph_cmd::is_graph(file) => {
            let (label, bytes) = read(file)?;
            let graph = crate::vpl_graph_cmd::compile(&label, &bytes, false)?;
            samplers = graph.samplers;
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "graph".to_string());
            (
                format!("{label} (generated VPL)"),
                graph.text.into_bytes(),
                stem,
            )
        }
        None => {
            let (label, bytes) = read(file)?;
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
    Ok(Source {
        label,
        bytes,
        stem,
        samplers,
    })
}

/// Reads (verifying once) and publishes `file` (print and read back).
pub(crate) fn publish_input(file: &Path) -> Result<Input, CliError> {
    let Source {
        label,
        bytes,
        stem,
        samplers,
    } = read_source(file)?;
    let source = std::str::from_utf8(&bytes).ok();
    let verified = vpl::text::read_verified(&bytes, &label)
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, source)))?;
    let published = VerifiedModule::publish_owned(verified)
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, source)))?;
    Ok(Input {
        stem,
        label,
        bytes,
        published,
        samplers,
    })
}

/// Reads, publishes and compiles `file` for GLSL 4.20; the target checks
/// run once, on the publication's snapshot, and their positions are mapped
/// back into FILE.
fn compile_input(file: &Path) -> Result<(String, ProgramArtifact), CliError> {
    compile_published(file).map(|(input, artifact)| (input.stem, artifact))
}

/// [`compile_input`], also returning the read input.
fn compile_published(file: &Path) -> Result<(Input, ProgramArtifact), CliError> {
    let input = publish_input(file)?;
    match glsl::compile(&input.published, VERSION_420) {
        Ok(artifact) => Ok((input, artifact)),
        Err(glsl::CompileError::Target(e)) => {
            Err(input.target_error(e.kind.code(), &e.message, e.span))
        }
        Err(glsl::CompileError::Materialize(e)) => Err(input.text_error(&e)),
        Err(e @ glsl::CompileError::Verify(_)) => Err(CliError::Rejected(e.to_string())),
    }
}

/// The values every driver draws with: the `--uniform` values checked
/// against the module's declared types, and every other uniform value at
/// the one default rule (`vpl::uniform_values`: floats 1, integers 0,
/// Booleans false, matrices the identity). The defaulted ones are listed
/// on standard error.
pub(crate) fn uniform_values(
    input: &Input,
    args: &RenderArgs,
) -> Result<Vec<(String, Vec<f64>)>, CliError> {
    use vpl::uniform_values::{ValueError, assign, leaves};
    let leaves = leaves(input.published.module()).map_err(CliError::usage)?;
    let assignment = assign(&leaves, &args.uniforms).map_err(|e| {
        let (kind, message) = match &e {
            ValueError::Unknown { path, candidates } => (
                "name",
                format!(
                    "{e}{}",
                    crate::suggest::hint(path, candidates.iter().map(String::as_str))
                ),
            ),
            ValueError::NotALeaf { .. } => ("name", e.to_string()),
            ValueError::Type(_) => ("semantic", e.to_string()),
        };
        CliError::invalid(
            vec![Diagnostic {
                kind: kind.to_string(),
                code: Some(e.code().to_string()),
                message,
                label: "--uniform".to_string(),
                offset: None,
                line: None,
                column: None,
            }],
            None,
        )
    })?;
    if !assignment.defaulted.is_empty() && args.fmt.format == crate::diag::Format::Human {
        const SHOWN: usize = 8;
        let mut list = assignment.defaulted[..assignment.defaulted.len().min(SHOWN)].join(", ");
        if assignment.defaulted.len() > SHOWN {
            list.push_str(&format!(", ... ({} in all)", assignment.defaulted.len()));
        }
        eprintln!(
            "note: uniforms not given take their default (floats 1, ints 0, bools false, \
             matrices identity): {list}"
        );
    }
    Ok(assignment.values)
}

/// `irkit vpl glsl`.
pub fn glsl(args: GlslArgs) -> Result<Outcome, CliError> {
    let (stem, artifact) = compile_input(&args.input.file)?;
    write_glsl(&stem, &artifact, args.output)
}

/// `irkit vpl compile`.
pub fn compile(args: CompileArgs) -> Result<Outcome, CliError> {
    let naga_target = match args.target.as_str() {
        "glsl-420" => None,
        name => Some(naga_targets::Target::from_name(name).ok_or_else(|| {
            CliError::usage(format!(
                "unknown target `{name}`{} (targets: {})",
                crate::suggest::hint(name, TARGETS.iter().copied()),
                TARGETS.join(", ")
            ))
        })?),
    };
    let Some(target) = naga_target else {
        let (stem, artifact) = compile_input(&args.input.file)?;
        return write_glsl(&stem, &artifact, args.output);
    };
    let input = publish_input(&args.input.file)?;
    let output = naga_targets::compile(&input.published, target)
        .map_err(|e| input.target_error(e.kind.code(), &e.message, e.span))?;
    let dir = args.output.unwrap_or_else(|| PathBuf::from("."));
    create_dir(&dir)?;
    let reflection = (
        format!("{}.reflect.json", target.name()),
        output.reflection.into_bytes(),
    );
    for (ext, contents) in output.files.iter().chain(std::iter::once(&reflection)) {
        write(Some(&dir.join(format!("{}.{ext}", input.stem))), contents)?;
    }
    Ok(Outcome::Success)
}

/// Writes NAME.vert, NAME.frag and NAME.reflect.json into `output`.
fn write_glsl(
    stem: &str,
    artifact: &ProgramArtifact,
    output: Option<PathBuf>,
) -> Result<Outcome, CliError> {
    let dir = output.unwrap_or_else(|| PathBuf::from("."));
    create_dir(&dir)?;
    let reflection = artifact.reflection_json();
    for (ext, text) in [
        ("vert", artifact.vertex_code()),
        ("frag", artifact.fragment_code()),
        ("reflect.json", reflection.as_str()),
    ] {
        write(Some(&dir.join(format!("{stem}.{ext}"))), text.as_bytes())?;
    }
    Ok(Outcome::Success)
}

/// An OpenGL 4.2 core context, or why there is none.
pub fn gl_context() -> Result<vpl_gl::GlContext, CliError> {
    vpl_gl::GlContext::new().map_err(|e| CliError::Unavailable {
        message: e.to_string(),
        note: "`irkit vpl render --driver gl` needs an OpenGL 4.2 core driver reachable through \
               EGL (on Debian: libegl1 libegl-mesa0 libgl1-mesa-dri); `--driver cpu` needs none"
            .to_string(),
    })
}

/// `irkit vpl render` on `context`.
pub fn render(context: &vpl_gl::GlContext, args: &RenderArgs) -> Result<Outcome, CliError> {
    let (input, artifact) = compile_published(&args.input.file)?;
    let samplers = &input.samplers;
    let (width, height) = args.size;
    let mut request = vpl_gl::RenderRequest::new(&artifact, width, height);
    for (name, values) in &uniform_values(&input, args)? {
        request
            .uniforms
            .set(&artifact, name, values)
            .map_err(|m| CliError::usage(format!("--uniform {m}")))?;
    }
    for (location, value) in &args.attributes {
        request
            .attributes
            .push((*location, vpl_gl::AttributeValue::Constant(*value)));
    }
    let mut textures = args.textures.iter();
    for u in artifact.uniforms().iter().filter(|u| u.texture_unit >= 0) {
        let texture = match textures.next() {
            Some(path) => load_texture(path)?,
            None => vpl_gl::Texture::checkerboard(),
        };
        request.textures.push((u.binding.name.clone(), texture));
    }
    if textures.next().is_some() {
        return Err(CliError::usage(
            "more --texture files than sampler uniforms",
        ));
    }
    crate::vpl_graph_cmd::apply_samplers(samplers, &mut request.textures);
    let image = vpl_gl::render(context, &artifact, &request).map_err(|e| match e {
        // A draw the driver did not finish is not an answer about the input.
        e @ (vpl_gl::GlError::Lost { .. } | vpl_gl::GlError::Reset(_)) => {
            CliError::Unavailable {
                message: e.to_string(),
                note: "the GL driver cannot run this draw to completion; `--driver vulkan` may finish it, and `--driver cpu` stops an invocation after 2^26 \
                       operations (docs/vpl/render.md)"
                    .to_string(),
            }
        }
        e => CliError::Rejected(e.to_string()),
    })?;
    let png = image
        .to_png()
        .map_err(|e| CliError::usage(format!("cannot encode PNG: {e}")))?;
    write(Some(&args.output), &png)?;
    Ok(Outcome::Success)
}

/// Reads a `--texture` PNG (the decoder the GL and WebGL drivers share).
pub(crate) fn load_texture(path: &Path) -> Result<vpl_gl::Texture, CliError> {
    std::fs::read(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
        .and_then(|b| vpl_gl::Texture::from_png(&b).map_err(|e| format!("{}: {e}", path.display())))
        .map_err(|m| CliError::usage(format!("--texture {m}")))
}
