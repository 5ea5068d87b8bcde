//! `irkit vpl render --driver cpu`: draw a program with the CPU reference
//! executor (`vpl::exec`), with the same options, uniforms, textures and
//! PNG as the GL driver and no GPU stack.

use crate::error::{CliError, Outcome};
use crate::io::write;
use crate::vpl_glsl_cmd::{RenderArgs, load_texture, publish_input, uniform_values};
use vpl::exec::{self, Attribute, DrawRequest, Executable};

/// `irkit vpl render FILE --driver cpu`.
pub fn render(args: &RenderArgs) -> Result<Outcome, CliError> {
    let input = publish_input(&args.input.file)?;
    let executable = Executable::new(&input.published)
        .map_err(|e| input.target_error(e.code(), &e.to_string(), None))?;
    let (width, height) = args.size;
    let mut request = DrawRequest::new(&executable, width, height);
    for (name, values) in &uniform_values(&input, args)? {
        request
            .uniforms
            .set(&executable, name, values)
            .map_err(|m| CliError::usage(format!("--uniform {m}")))?;
    }
    for (location, value) in &args.attributes {
        request
            .attributes
            .push((*location, Attribute::Constant(*value)));
    }
    // Sampler uniforms in declaration order, as the GL driver binds them;
    // those without a file get the 8x8 checkerboard.
    let mut files = args.textures.iter();
    let mut textures = Vec::new();
    for name in executable.sampler_names() {
        let texture = match files.next() {
            Some(path) => load_texture(path)?,
            None => vpl_gl::Texture::checkerboard(),
        };
        textures.push((name.to_string(), texture));
    }
    if files.next().is_some() {
        return Err(CliError::usage(
            "more --texture files than sampler uniforms",
        ));
    }
    // A graph input's sampler states (filter, wrap), as on the other drivers.
    crate::vpl_graph_cmd::apply_samplers(&input.samplers, &mut textures);
    request.textures.extend(
        textures
            .into_iter()
            .map(|(name, texture)| (name, texture.to_cpu())),
    );
    let image = exec::draw(&executable, &request).map_err(|e| CliError::Rejected(e.to_string()))?;
    let png = vpl_gl::Image::from(image)
        .to_png()
        .map_err(|e| CliError::usage(format!("cannot encode PNG: {e}")))?;
    write(Some(&args.output), &png)?;
    Ok(Outcome::Success)
}
