//! `irkit vpl render --driver webgl`: the GLSL ES 3.00 target drawn with
//! WebGL 2 in headless Chromium (started, used and quit per call).

use crate::error::{CliError, Outcome};
use crate::io::write;
use crate::vpl_glsl_cmd::{RenderArgs, load_texture, publish_input, uniform_values};
use vpl_web::{ProgramError, Scene, UniformSlot, WebGlProgram, WebGlRenderer};

/// `irkit vpl render --driver webgl`.
pub fn render(args: RenderArgs) -> Result<Outcome, CliError> {
    let input = publish_input(&args.input.file)?;
    let program = WebGlProgram::compile(&input.published).map_err(|e| match e {
        ProgramError::Target(e) => input.target_error(e.kind.code(), &e.message, e.span),
        e => CliError::Rejected(e.to_string()),
    })?;
    let (width, height) = args.size;
    if width > vpl_web::scene::MAX_SIZE || height > vpl_web::scene::MAX_SIZE {
        return Err(CliError::usage(format!(
            "--size {width}x{height}: the WebGL driver draws at most {0}x{0}",
            vpl_web::scene::MAX_SIZE
        )));
    }
    let mut scene = Scene::new(width, height);
    scene.uniforms = uniform_values(&input, &args)?;
    for (location, value) in &args.attributes {
        scene
            .attributes
            .push((*location, vpl_gl::AttributeValue::Constant(*value)));
    }
    let samplers: Vec<&str> = program
        .uniforms()
        .iter()
        .filter_map(|u| match u {
            UniformSlot::Sampler { name, .. } => Some(name.as_str()),
            UniformSlot::Block { .. } => None,
        })
        .collect();
    if args.textures.len() > samplers.len() {
        return Err(CliError::usage(
            "more --texture files than sampler uniforms",
        ));
    }
    for (path, name) in args.textures.iter().zip(&samplers) {
        scene.textures.push((name.to_string(), load_texture(path)?));
    }
    crate::vpl_graph_cmd::apply_samplers(&input.samplers, &mut scene.textures);
    vpl_web::scene::scene_json(&program, &scene)
        .map_err(|m| CliError::usage(format!("--uniform: {m}")))?;
    let renderer = WebGlRenderer::start().map_err(|e| CliError::Unavailable {
        message: e.to_string(),
        note: "`--driver webgl` needs headless Chromium and chromedriver \
               (on Debian: chromium chromium-driver)"
            .to_string(),
    })?;
    let image = renderer.render(&program, &scene);
    let quit = renderer.quit();
    let image = image.map_err(|e| CliError::Rejected(e.to_string()))?;
    if let Err(e) = quit {
        eprintln!("warning: {e}");
    }
    let png = image
        .to_png()
        .map_err(|e| CliError::usage(format!("cannot encode PNG: {e}")))?;
    write(Some(&args.output), &png)?;
    Ok(Outcome::Success)
}
