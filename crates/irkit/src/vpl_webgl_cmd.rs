//! `irkit vpl render --driver webgl`: the GLSL ES 3.00 target drawn with
//! WebGL 2 in headless Chromium (started, used and quit per call).

use crate::io::write_output;
use crate::vpl_glsl_cmd::{RenderArgs, publish_input};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::process::ExitCode;
use vpl_web::{ProgramError, Scene, UniformSlot, WebGlProgram, WebGlRenderer};

fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// `irkit vpl render --driver webgl`.
pub fn render(args: RenderArgs) -> ExitCode {
    let input = match publish_input(&args.file, args.format) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let program = match WebGlProgram::compile(&input.published) {
        Ok(p) => p,
        Err(ProgramError::Target(e)) => {
            let d = input.target_diagnostic(e.kind.code(), &e.message, e.span);
            crate::diag::emit(&[d], args.format, input.source());
            return ExitCode::from(EXIT_INVALID);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let (width, height) = args.size;
    if width > vpl_web::scene::MAX_SIZE || height > vpl_web::scene::MAX_SIZE {
        return usage(&format!(
            "--size {width}x{height}: the WebGL driver draws at most {0}x{0}",
            vpl_web::scene::MAX_SIZE
        ));
    }
    let mut scene = Scene::new(width, height);
    scene.uniforms = args.uniforms.clone();
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
        return usage("more --texture files than sampler uniforms");
    }
    for (path, name) in args.textures.iter().zip(&samplers) {
        let loaded = std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|b| {
                vpl_gl::Texture::from_png(&b).map_err(|e| format!("{}: {e}", path.display()))
            });
        match loaded {
            Ok(t) => scene.textures.push((name.to_string(), t)),
            Err(m) => return usage(&format!("--texture {m}")),
        }
    }
    if let Err(m) = vpl_web::scene::scene_json(&program, &scene) {
        return usage(&format!("--uniform: {m}"));
    }
    let renderer = match WebGlRenderer::start() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "note: `--driver webgl` needs headless Chromium and chromedriver \
                 (on Debian: chromium chromium-driver)"
            );
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let image = renderer.render(&program, &scene);
    let quit = renderer.quit();
    let image = match image {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    if let Err(e) = quit {
        eprintln!("warning: {e}");
    }
    let png = match image.to_png() {
        Ok(p) => p,
        Err(e) => return usage(&format!("cannot encode PNG: {e}")),
    };
    match write_output(Some(&args.output), &png) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => usage(&m),
    }
}
