//! `irkit vpl render --driver vulkan`: draw a program headless through
//! Vulkan from its SPIR-V target, bound by the target's reflection.

use crate::error::{CliError, Outcome};
use crate::io::write;
use crate::vpl_glsl_cmd::{RenderArgs, publish_input, uniform_values};
use vpl_vk::{AttributeValue, RenderRequest, Resource, Texture, UniformData, VkError, VkProgram};

/// `irkit vpl render FILE --driver vulkan`.
pub fn render(args: &RenderArgs) -> Result<Outcome, CliError> {
    let input = publish_input(&args.input.file)?;
    let program = VkProgram::new(&input.published).map_err(|e| match e {
        VkError::Target(e) => input.target_error(e.kind.code(), &e.message, e.span),
        e => CliError::Rejected(e.to_string()),
    })?;
    let mut uniforms = UniformData::new(&program);
    for (name, values) in &uniform_values(&input, args)? {
        uniforms
            .set(name, values)
            .map_err(|m| CliError::usage(format!("--uniform {m}")))?;
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
        let texture = std::fs::read(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|b| Texture::from_png(&b).map_err(|e| format!("{}: {e}", path.display())))
            .map_err(|m| CliError::usage(format!("--texture {m}")))?;
        request.textures.push((name.clone(), texture));
    }
    if files.next().is_some() {
        return Err(CliError::usage(
            "more --texture files than sampler uniforms",
        ));
    }
    crate::vpl_graph_cmd::apply_samplers(&input.samplers, &mut request.textures);
    let context = vpl_vk::VkContext::new().map_err(|e| CliError::Unavailable {
        message: e.to_string(),
        note: "`irkit vpl render --driver vulkan` needs a Vulkan 1.1 driver and loader \
               (on Debian: mesa-vulkan-drivers libvulkan1)"
            .to_string(),
    })?;
    let image = vpl_vk::render(&context, &program, &uniforms, &request)
        .map_err(|e| CliError::Rejected(e.to_string()))?;
    drop(context);
    let png = image
        .to_png()
        .map_err(|e| CliError::usage(format!("cannot encode PNG: {e}")))?;
    write(Some(&args.output), &png)?;
    Ok(Outcome::Success)
}
