//! The example material graphs (`examples/vpl/graphs/`) compiled by
//! `vpl_graph` and drawn on the three drivers: OpenGL 4.2 (Mesa llvmpipe,
//! `vpl_gl`), Vulkan (Mesa lavapipe, `vpl_vk`) and WebGL 2 in headless
//! Chromium (`vpl_web`), each checked against the colours the graph must
//! produce and against the other drivers, with the graph's sampler state
//! on every texture.
//!
//! A driver is skipped (printed) only when it cannot start and
//! `VPL_REQUIRE_GL` is unset.

use std::path::Path;
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, VERSION_420};
use vpl_gl::{AttributeValue, GlContext, Image, RenderRequest, Texture};
use vpl_web::{Scene, WebGlProgram, WebGlRenderer};

#[path = "../../vpl_gl/tests/support/pixels.rs"]
mod pixels;

fn require() -> bool {
    std::env::var_os("VPL_REQUIRE_GL").is_some()
}

/// One example draw: the compiled graph, its inputs, the expected colours.
struct Case {
    name: &'static str,
    module: VerifiedModule,
    uniforms: Vec<(String, Vec<f64>)>,
    textures: Vec<(String, Texture)>,
    attributes: Vec<(u32, AttributeValue)>,
    /// (x, y, colour) with tolerance 2 (interpolated coordinates, rounding).
    expect: Vec<(u32, u32, [u8; 4])>,
}

const SIZE: u32 = 64;

fn case(name: &'static str, file: &str) -> (Case, Vec<(String, vpl_graph::SamplerState)>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/vpl/graphs")
        .join(file);
    let json = std::fs::read_to_string(&path).unwrap();
    let compiled = vpl_graph::compile(&json, file, vpl_graph::Options::default())
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let module = VerifiedModule::publish(&compiled.verified).unwrap();
    assert_eq!(
        module.text(),
        compiled.text,
        "{file}: the generated text is canonical"
    );
    let c = Case {
        name,
        module,
        uniforms: Vec::new(),
        textures: Vec::new(),
        attributes: Vec::new(),
        expect: Vec::new(),
    };
    (c, compiled.samplers)
}

/// The quadrant centres of a SIZE×SIZE image: top-left, top-right,
/// bottom-left, bottom-right.
const TL: (u32, u32) = (SIZE / 4, SIZE / 4);
const TR: (u32, u32) = (3 * SIZE / 4, SIZE / 4);
const BL: (u32, u32) = (SIZE / 4, 3 * SIZE / 4);
const BR: (u32, u32) = (3 * SIZE / 4, 3 * SIZE / 4);

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    // A 2×2 texture, one colour per quadrant (top-down), nearest filtering
    // (the graph's sampler state), tinted by a constant vertex colour.
    let (mut c, samplers) = case("textured_tint", "textured_tint.json");
    #[rustfmt::skip]
    let texels = [
        255, 255, 255, 255,   255, 0, 0, 255,
        0, 255, 0, 255,       0, 0, 255, 102,
    ];
    c.textures.push((
        "albedo".to_string(),
        Texture::from_rgba_top_down(2, 2, &texels),
    ));
    vpl_web::graph::apply_samplers(&samplers, &mut c.textures);
    assert!(
        !c.textures[0].1.mag_linear,
        "the graph's nearest filter is applied"
    );
    c.attributes
        .push((2, AttributeValue::Constant([1.0, 0.5, 0.25, 1.0])));
    c.uniforms.push(("strength".to_string(), vec![1.0]));
    c.expect = vec![
        (TL.0, TL.1, [255, 128, 64, 255]),
        (TR.0, TR.1, [255, 0, 0, 255]),
        (BL.0, BL.1, [0, 128, 0, 255]),
        (BR.0, BR.1, [0, 0, 64, 102]),
    ];
    out.push(c);
    // The checker: ink where exactly one of u < 0.5, v < 0.5 holds.
    let (mut c, _) = case("checker", "checker.json");
    let (ink, paper) = ([26, 51, 230, 255], [255, 230, 51, 255]);
    c.expect = vec![
        (TL.0, TL.1, ink),
        (TR.0, TR.1, paper),
        (BL.0, BL.1, paper),
        (BR.0, BR.1, ink),
    ];
    out.push(c);
    // One helper called twice: red faded by 0.25 on the left, blue by 0.75 on the right.
    let (mut c, _) = case("subgraph_twice", "subgraph_twice.json");
    let (left, right) = ([255, 64, 64, 255], [191, 191, 255, 255]);
    c.expect = vec![
        (TL.0, TL.1, left),
        (BL.0, BL.1, left),
        (TR.0, TR.1, right),
        (BR.0, BR.1, right),
    ];
    out.push(c);
    out
}

fn gl_render(c: &Case, context: &GlContext) -> Image {
    let artifact = glsl::compile(&c.module, VERSION_420).unwrap();
    let mut request = RenderRequest::new(&artifact, SIZE, SIZE);
    for (path, values) in &c.uniforms {
        request.uniforms.set(&artifact, path, values).unwrap();
    }
    request.textures = c.textures.clone();
    request.attributes = c.attributes.clone();
    vpl_gl::render(context, &artifact, &request).unwrap_or_else(|e| panic!("{} on GL: {e}", c.name))
}

fn vk_render(c: &Case, context: &vpl_vk::VkContext) -> Image {
    let program =
        vpl_vk::VkProgram::new(&c.module).unwrap_or_else(|e| panic!("{} for Vulkan: {e}", c.name));
    let mut uniforms = vpl_vk::UniformData::new(&program);
    for (path, values) in &c.uniforms {
        uniforms.set(path, values).unwrap();
    }
    let mut request = vpl_vk::RenderRequest::new(SIZE, SIZE);
    request.textures = c.textures.clone();
    request.attributes = c.attributes.clone();
    vpl_vk::render(context, &program, &uniforms, &request)
        .unwrap_or_else(|e| panic!("{} on Vulkan: {e}", c.name))
}

fn webgl_render(c: &Case, renderer: &WebGlRenderer) -> Image {
    let program =
        WebGlProgram::compile(&c.module).unwrap_or_else(|e| panic!("{} for WebGL: {e}", c.name));
    let mut scene = Scene::new(SIZE, SIZE);
    scene.uniforms = c.uniforms.clone();
    scene.textures = c.textures.clone();
    scene.attributes = c.attributes.clone();
    renderer
        .render(&program, &scene)
        .unwrap_or_else(|e| panic!("{} on WebGL: {e}", c.name))
}

fn check(c: &Case, image: &Image, driver: &str, failures: &mut Vec<String>) {
    for &(x, y, color) in &c.expect {
        let p = image.pixel(x, y);
        if !pixels::close(p, color, 2) {
            failures.push(format!(
                "{} on {driver}: pixel ({x}, {y}) is {p:?}, expected {color:?} ± 2",
                c.name
            ));
        }
    }
}

#[test]
fn example_graphs_render_the_expected_pixels_on_gl_vulkan_and_webgl() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut drivers = 0;
    let mut images: Vec<Vec<(&str, Image)>> = cases.iter().map(|_| Vec::new()).collect();
    match GlContext::new() {
        Ok(context) => {
            drivers += 1;
            for (c, imgs) in cases.iter().zip(&mut images) {
                imgs.push(("GL", gl_render(c, &context)));
            }
        }
        Err(e) => {
            assert!(!require(), "no GL context (VPL_REQUIRE_GL is set): {e}");
            eprintln!("GL skipped: {e}");
        }
    }
    match vpl_vk::VkContext::new() {
        Ok(context) => {
            drivers += 1;
            for (c, imgs) in cases.iter().zip(&mut images) {
                imgs.push(("Vulkan", vk_render(c, &context)));
            }
        }
        Err(e) => {
            assert!(!require(), "no Vulkan device (VPL_REQUIRE_GL is set): {e}");
            eprintln!("Vulkan skipped: {e}");
        }
    }
    match WebGlRenderer::start() {
        Ok(renderer) => {
            drivers += 1;
            for (c, imgs) in cases.iter().zip(&mut images) {
                imgs.push(("WebGL", webgl_render(c, &renderer)));
            }
            renderer.quit().unwrap();
        }
        Err(vpl_web::RenderError::Browser(e)) if e.is_unavailable() && !require() => {
            eprintln!("WebGL skipped: {e}")
        }
        Err(e) => panic!("{e}"),
    }
    for (c, imgs) in cases.iter().zip(&images) {
        for (driver, image) in imgs {
            check(c, image, driver, &mut failures);
        }
        // The drivers agree with each other at every pixel (within rounding).
        for pair in imgs.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let worst = pixels::positions(&a.1)
                .map(|(x, y)| {
                    let (p, q) = (a.1.pixel(x, y), b.1.pixel(x, y));
                    p.iter()
                        .zip(q)
                        .map(|(u, v)| u.abs_diff(v))
                        .max()
                        .unwrap_or(0)
                })
                .max()
                .unwrap_or(0);
            eprintln!(
                "{}: {} vs {}: largest channel difference {worst}",
                c.name, a.0, b.0
            );
            if worst > 2 {
                failures.push(format!("{}: {} and {} differ by {worst}", c.name, a.0, b.0));
            }
        }
    }
    eprintln!("{drivers} driver(s) drew {} example graphs", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
