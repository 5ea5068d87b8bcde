//! `irkit vpl render --driver vulkan`: draw a program headless through
//! Vulkan from its SPIR-V target, bound by the target's reflection.

use crate::diag;
use crate::io::write_output;
use crate::vpl_glsl_cmd::{RenderArgs, publish_input};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::process::ExitCode;
use vpl_vk::{AttributeValue, RenderRequest, Resource, Texture, UniformData, VkError, VkProgram};

fn usage(message: String) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// `irkit vpl render FILE --driver vulkan`.
pub fn render(args: &RenderArgs) -> ExitCode {
    let input = match publish_input(&args.file, args.format) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let program = match VkProgram::new(&input.published) {
        Ok(p) => p,
        Err(VkError::Target(e)) => {
            let d = input.target_diagnostic(e.kind.code(), &e.message, e.span);
            diag::emit(&[d], args.format, input.source());
            return ExitCode::from(EXIT_INVALID);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let mut uniforms = UniformData::new(&program);
    for (name, values) in &args.uniforms {
        if let Err(m) = uniforms.set(name, values) {
            return usage(format!("--uniform {m}"));
        }
    }
    let (width, height) = args.size;
    let mut request = RenderRequest::new(width, height);
    for (location, value) in &args.attributes {
        request
            .attributes
            .push((*location, AttributeValue::Constant(*value)));
    }
    // Sampler uniforms in declaration order (texture bindings ascend with
    // uniform slots); those without a file keep the checkerboard default.
    let mut files = args.textures.iter();
    for r in &program.resources {
        let Resource::Texture { name, .. } = r else {
            continue;
        };
        let Some(path) = files.next() else { break };
        let loaded = std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|b| Texture::from_png(&b).map_err(|e| format!("{}: {e}", path.display())));
        match loaded {
            Ok(t) => request.textures.push((name.clone(), t)),
            Err(m) => return usage(format!("--texture {m}")),
        }
    }
    if files.next().is_some() {
        return usage("more --texture files than sampler uniforms".into());
    }
    let context = match vpl_vk::VkContext::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            eprintln!(
                "note: `irkit vpl render --driver vulkan` needs a Vulkan 1.1 driver and loader \
                 (on Debian: mesa-vulkan-drivers libvulkan1)"
            );
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let image = match vpl_vk::render(&context, &program, &uniforms, &request) {
        Ok(image) => image,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    drop(context);
    let png = match image.to_png() {
        Ok(p) => p,
        Err(e) => return usage(format!("cannot encode PNG: {e}")),
    };
    match write_output(Some(&args.output), &png) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => usage(m),
    }
}
