//! WebGL 2 as a driver (spec section 12.5 conformance programs): each
//! program is compiled for GLSL ES 3.00, drawn in headless Chromium from
//! the page the test serves on loopback, checked against its expected
//! colours, and compared with the OpenGL 4.2 render of the GLSL 4.20
//! output on Mesa (`vpl_gl`): exactly for the pass/fail conformance
//! colours, within a small tolerance where the rasterizers interpolate —
//! and likewise with the Vulkan render of the SPIR-V output on Mesa
//! lavapipe (`vpl_vk`).
//!
//! Skipped (printed) only when Chromium cannot start and `VPL_REQUIRE_GL`
//! is unset; the GL and Vulkan comparisons likewise only when their
//! driver cannot be created.

use std::path::{Path, PathBuf};
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, VERSION_420};
use vpl::programs::{self, Program};
use vpl_gl::{AttributeValue, GlContext, Image, MinFilter, RenderRequest, Texture, Wrap};
use vpl_web::{Scene, WebGlProgram, WebGlRenderer};

#[path = "../../vpl_gl/tests/support/pixels.rs"]
mod pixels;

fn require() -> bool {
    std::env::var_os("VPL_REQUIRE_GL").is_some()
}

fn renderer(test: &str) -> Option<WebGlRenderer> {
    match WebGlRenderer::start() {
        Ok(r) => Some(r),
        Err(vpl_web::RenderError::Browser(e)) if e.is_unavailable() && !require() => {
            eprintln!("{test}: skipped: {e}");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

fn gl_context() -> Option<GlContext> {
    match GlContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(!require(), "no GL context (VPL_REQUIRE_GL is set): {e}");
            eprintln!("GL comparison skipped: {e}");
            None
        }
    }
}

fn vk_context() -> Option<vpl_vk::VkContext> {
    match vpl_vk::VkContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(!require(), "no Vulkan device (VPL_REQUIRE_GL is set): {e}");
            eprintln!("Vulkan comparison skipped: {e}");
            None
        }
    }
}

/// The native drivers WebGL is compared with.
struct Natives {
    gl: Option<GlContext>,
    vk: Option<vpl_vk::VkContext>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn publish_text(text: &str, label: &str) -> VerifiedModule {
    let module = vpl::text::read(text.as_bytes(), label).unwrap_or_else(|e| panic!("{e}"));
    VerifiedModule::new(&module).unwrap()
}

fn publish_file(relative: &str) -> VerifiedModule {
    let text = std::fs::read_to_string(repo().join(relative)).unwrap();
    publish_text(&text, relative)
}

const GREEN: [u8; 4] = [0, 255, 0, 255];
const RED: [u8; 4] = [255, 0, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];
const WHITE: [u8; 4] = [255, 255, 255, 255];

/// One draw: the program, its inputs and what the pixels must be.
struct Case {
    name: String,
    module: VerifiedModule,
    width: u32,
    height: u32,
    clear: [f32; 4],
    uniforms: Vec<(String, Vec<f64>)>,
    textures: Vec<(String, Texture)>,
    attributes: Vec<(u32, AttributeValue)>,
    /// `(x, y, colour, tolerance)`; `x == u32::MAX` means every pixel.
    expect: Vec<(u32, u32, [u8; 4], u8)>,
    /// Largest per-channel difference allowed between drivers (0 for the
    /// pass/fail conformance colours).
    between_drivers: u8,
}

impl Case {
    fn new(name: &str, module: VerifiedModule, size: (u32, u32)) -> Self {
        Case {
            name: name.to_string(),
            module,
            width: size.0,
            height: size.1,
            clear: [0.0; 4],
            uniforms: Vec::new(),
            textures: Vec::new(),
            attributes: Vec::new(),
            expect: Vec::new(),
            between_drivers: 0,
        }
    }

    fn everywhere(mut self, color: [u8; 4], tolerance: u8) -> Self {
        self.expect.push((u32::MAX, 0, color, tolerance));
        self
    }

    fn at(mut self, x: u32, y: u32, color: [u8; 4], tolerance: u8) -> Self {
        self.expect.push((x, y, color, tolerance));
        self
    }

    fn uniform(mut self, path: &str, values: &[f64]) -> Self {
        self.uniforms.push((path.to_string(), values.to_vec()));
        self
    }

    fn texture(mut self, name: &str, texture: Texture) -> Self {
        self.textures.push((name.to_string(), texture));
        self
    }

    fn scene(&self) -> Scene {
        Scene {
            width: self.width,
            height: self.height,
            clear: self.clear,
            uniforms: self.uniforms.clone(),
            textures: self.textures.clone(),
            attributes: self.attributes.clone(),
            quad: [-1.0, -1.0, 1.0, 1.0],
        }
    }

    fn gl_render(&self, context: &GlContext) -> Image {
        let artifact = glsl::compile(&self.module, VERSION_420).unwrap();
        let mut request = RenderRequest::new(&artifact, self.width, self.height);
        request.clear = self.clear;
        for (path, values) in &self.uniforms {
            request.uniforms.set(&artifact, path, values).unwrap();
        }
        request.textures = self.textures.clone();
        request.attributes = self.attributes.clone();
        vpl_gl::render(context, &artifact, &request)
            .unwrap_or_else(|e| panic!("{} on GL: {e}", self.name))
    }

    fn vk_render(&self, context: &vpl_vk::VkContext) -> Image {
        let program = vpl_vk::VkProgram::new(&self.module)
            .unwrap_or_else(|e| panic!("{} for Vulkan: {e}", self.name));
        let mut uniforms = vpl_vk::UniformData::new(&program);
        for (path, values) in &self.uniforms {
            uniforms.set(path, values).unwrap();
        }
        let mut request = vpl_vk::RenderRequest::new(self.width, self.height);
        request.clear = self.clear;
        request.textures = self.textures.clone();
        request.attributes = self.attributes.clone();
        vpl_vk::render(context, &program, &uniforms, &request)
            .unwrap_or_else(|e| panic!("{} on Vulkan: {e}", self.name))
    }
}

fn check(case: &Case, image: &Image, driver: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for &(x, y, color, tolerance) in &case.expect {
        let points: Vec<(u32, u32)> = if x == u32::MAX {
            pixels::positions(image).collect()
        } else {
            vec![(x, y)]
        };
        if let Some((x, y, p)) = points
            .into_iter()
            .map(|(x, y)| (x, y, image.pixel(x, y)))
            .find(|&(_, _, p)| !pixels::close(p, color, tolerance))
        {
            failures.push(format!(
                "{} on {driver}: pixel ({x}, {y}) is {p:?}, expected {color:?} ± {tolerance}",
                case.name
            ));
        }
    }
    failures
}

/// Compares the WebGL image with the native drivers' renders of the same
/// case (GL 4.2 from the GLSL 4.20 output, Vulkan from the SPIR-V output).
fn compare_drivers(case: &Case, webgl: &Image, natives: &Natives) -> Vec<String> {
    let mut renders = Vec::new();
    if let Some(context) = &natives.gl {
        renders.push(("GL", case.gl_render(context)));
    }
    if let Some(context) = &natives.vk {
        renders.push(("Vulkan", case.vk_render(context)));
    }
    let mut failures = Vec::new();
    for (driver, native) in &renders {
        failures.extend(check(case, native, driver));
        let worst = pixels::largest_difference(webgl, native);
        eprintln!(
            "{}: WebGL vs {driver}: largest channel difference {worst}",
            case.name
        );
        if worst > case.between_drivers {
            failures.push(format!(
                "{}: WebGL and {driver} differ by {worst} in a channel (allowed {})",
                case.name, case.between_drivers
            ));
        }
    }
    failures
}

fn quadrants() -> Texture {
    let rgba = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    let mut t = Texture::from_rgba_top_down(2, 2, &rgba);
    t.min_filter = MinFilter::Nearest;
    t.mag_linear = false;
    t
}

fn mip_colors() -> (Texture, [[u8; 4]; 7]) {
    let colors = [
        [255, 0, 0, 255],
        [0, 255, 0, 255],
        [0, 0, 255, 255],
        [255, 255, 0, 255],
        [255, 0, 255, 255],
        [0, 255, 255, 255],
        [255, 255, 255, 255],
    ];
    (Texture::solid_levels(64, 64, &colors), colors)
}

const FRAG_COORD: &str = r#"(module 1
  (types (type V void) (type F float) (type B bool) (type V2 vector float 2) (type C vector float 4))
  (uniforms)
  (vertex ve
    (interface (in at "at" V2 0 none) (out pos "pos" C -1 position))
    (functions
      (function ve "v" V (parameters) (registers (register r0 V2) (register r1 C))
        (block b (load r0 (stage at)) (construct r1 r0 (float 0.0) (float 1.0))
          (store (stage pos) r1) (return)))))
  (fragment fe
    (interface (in where "where" C -1 position) (out color "color" C 3 fragment_color))
    (functions
      (function fe "f" V (parameters)
        (registers (register r0 C) (register r1 F) (register r2 B))
        (block entry (load r0 (stage where)) (swizzle r1 r0 "x")
          (less r2 r1 (float 2.0)) (branch_if r2 left right))
        (block left (construct r0 (float 1.0) (float 0.0) (float 0.0) (float 1.0))
          (store (stage color) r0) (return))
        (block right (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0))
          (store (stage color) r0) (return))))))
"#;

/// The programs whose GLSL ES output needs no uniform (what the naga
/// lowering on this branch covers).
fn interface_cases() -> Vec<Case> {
    vec![
        Case::new(
            "loop_call",
            publish_file("examples/vpl/loop_call.vpl"),
            (8, 8),
        )
        .everywhere(GREEN, 0),
        // Every vertex at the origin: the clear colour stays.
        Case::new("minimal", publish_file("examples/vpl/minimal.vpl"), (8, 8))
            .everywhere([0, 0, 0, 0], 0),
        Case::new(
            "fragment position at output location 3",
            publish_text(FRAG_COORD, "frag_coord.vpl"),
            (4, 2),
        )
        .at(0, 0, RED, 0)
        .at(1, 1, RED, 0)
        .at(2, 0, GREEN, 0)
        .at(3, 1, GREEN, 0),
    ]
}

/// The section 12.5 programs with uniforms and samplers.
fn uniform_cases() -> Vec<Case> {
    let (mips, colors) = mip_colors();
    let mut numeric = Case::new(
        "numeric conformance",
        publish_file("crates/vpl_gl/tests/fixtures/numeric.vpl"),
        (4, 4),
    );
    let ints = [
        2147483647.0,
        1.0,
        -7.0,
        2.0,
        16777216.0,
        -123456.0,
        -2147483648.0,
        0.0,
    ];
    for (i, v) in ints.iter().enumerate() {
        numeric = numeric.uniform(&format!("ints[{i}]"), &[*v]);
    }
    for (i, v) in [1.5, 2.0, 0.25, 1.0, 0.0].iter().enumerate() {
        numeric = numeric.uniform(&format!("floats[{i}]"), &[*v]);
    }
    let mut failing = Case::new(
        "numeric conformance with a wrong input",
        publish_file("crates/vpl_gl/tests/fixtures/numeric.vpl"),
        (4, 4),
    );
    failing.uniforms = numeric.uniforms.clone();
    failing.uniforms[1].1 = vec![2.0];
    let numeric = numeric.everywhere(GREEN, 0);
    let failing = failing.everywhere(RED, 0);

    let mut wrap_texture = Texture::from_rgba_top_down(2, 1, &[255, 0, 0, 255, 0, 255, 0, 255]);
    wrap_texture.min_filter = MinFilter::Nearest;
    wrap_texture.mag_linear = false;
    let mut clamp_texture = wrap_texture.clone();
    clamp_texture.wrap = Wrap::ClampToEdge;

    let mut vertex_colors = Case::new(
        "vertex-ambient-color",
        programs::create(Program::VertexAmbientColor).unwrap(),
        (16, 16),
    );
    vertex_colors.attributes.push((
        1,
        AttributeValue::PerVertex([
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
        ]),
    ));
    vertex_colors.between_drivers = 2;
    let vertex_colors = vertex_colors
        .at(0, 15, RED, 40)
        .at(15, 15, GREEN, 40)
        .at(0, 0, BLUE, 40)
        .at(15, 0, WHITE, 40);
    let mut modulated = Case::new(
        "texture-vertex-ambient-color",
        programs::create(Program::TextureVertexAmbientColor).unwrap(),
        (8, 8),
    )
    .texture("texture", quadrants())
    .at(1, 1, [128, 0, 0, 255], 1)
    .at(6, 6, [128, 255, 64, 255], 1);
    modulated
        .attributes
        .push((2, AttributeValue::Constant([0.5, 1.0, 0.25, 1.0])));

    let mut cases = vec![
        Case::new(
            "mesh-ambient-color",
            programs::create(Program::MeshAmbientColor).unwrap(),
            (8, 8),
        )
        .uniform("material.ambient_color", &[0.4, 0.8, 0.2, 1.0])
        .uniform("material.intensity", &[0.5])
        .everywhere([51, 102, 26, 128], 1),
        vertex_colors,
        Case::new(
            "texture-ambient-color",
            programs::create(Program::TextureAmbientColor).unwrap(),
            (8, 8),
        )
        .texture("texture", quadrants())
        .at(1, 1, RED, 0)
        .at(6, 1, GREEN, 0)
        .at(1, 6, BLUE, 0)
        .at(6, 6, WHITE, 0),
        modulated,
        numeric,
        failing,
        Case::new(
            "sampler repeat",
            publish_file("crates/vpl_gl/tests/fixtures/sampler_wrap.vpl"),
            (4, 4),
        )
        .texture("image", wrap_texture)
        .everywhere(RED, 0),
        Case::new(
            "sampler clamp",
            publish_file("crates/vpl_gl/tests/fixtures/sampler_wrap.vpl"),
            (4, 4),
        )
        .texture("image", clamp_texture)
        .everywhere(GREEN, 0),
        Case::new(
            "fragment mip level 4",
            programs::create(Program::TextureAmbientColor).unwrap(),
            (4, 4),
        )
        .texture("texture", mips.clone())
        .everywhere(colors[4], 0),
        Case::new(
            "fragment mip level 0",
            programs::create(Program::TextureAmbientColor).unwrap(),
            (64, 64),
        )
        .texture("texture", mips.clone())
        .at(10, 10, colors[0], 0),
        Case::new(
            "vertex sampling at base level",
            publish_file("crates/vpl_gl/tests/fixtures/mip_vertex.vpl"),
            (4, 4),
        )
        .texture("image", mips)
        .everywhere(colors[0], 0),
    ];
    let identity = [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    for (count, expected) in [(3.0, GREEN), (-1.0, BLUE)] {
        // Record and array uniforms, calls, storage selectors and (for a
        // negative id) a terminating discard that leaves the clear colour.
        let mut c = Case::new(
            &format!("general fixture, count {count}"),
            publish_file("crates/vpl/tests/glsl/general.vpl"),
            (4, 4),
        )
        .uniform("params.transform", &identity)
        .uniform("params.count", &[count])
        .uniform("lights[1].color", &[0.0, 1.0, 0.0, 1.0])
        .uniform("lights[1].weights[2]", &[2.0])
        .uniform("scale", &[0.5])
        .everywhere(expected, 0);
        c.clear = [0.0, 0.0, 1.0, 1.0];
        cases.push(c);
    }
    cases.push(
        Case::new(
            "nested_storage",
            publish_file("examples/vpl/nested_storage.vpl"),
            (8, 8),
        )
        .everywhere(GREEN, 0),
    );
    for (limit, expected) in [(6.0, GREEN), (5.0, RED), (-1.0, BLUE)] {
        let mut c = Case::new(
            &format!("dispatch loops, limit {limit}"),
            publish_file("crates/vpl_gl/tests/fixtures/loops.vpl"),
            (4, 4),
        )
        .uniform("limit", &[limit])
        .everywhere(expected, 0);
        c.clear = [0.0, 0.0, 1.0, 1.0];
        cases.push(c);
    }
    cases
}

fn run_cases(test: &str, cases: Vec<Case>) {
    let Some(renderer) = renderer(test) else {
        return;
    };
    let natives = Natives {
        gl: gl_context(),
        vk: vk_context(),
    };
    let mut failures = Vec::new();
    for case in &cases {
        let program = match WebGlProgram::compile(&case.module) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let image = match renderer.render(&program, &case.scene()) {
            Ok(i) => i,
            Err(e) => {
                failures.push(format!("{} on WebGL: {e}", case.name));
                continue;
            }
        };
        failures.extend(check(case, &image, "WebGL"));
        failures.extend(compare_drivers(case, &image, &natives));
    }
    renderer.quit().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn interface_only_programs_render_as_on_gl() {
    run_cases("interface programs", interface_cases());
}

#[test]
fn conformance_programs_with_uniforms_and_samplers_render_as_on_gl() {
    run_cases("uniform programs", uniform_cases());
}

#[test]
fn a_shader_the_browser_rejects_is_a_script_error_with_the_log() {
    let Some(renderer) = renderer("rejected shader") else {
        return;
    };
    let program = WebGlProgram::compile(&publish_file("examples/vpl/loop_call.vpl")).unwrap();
    // A scene naming a uniform the program lacks is refused before drawing.
    let mut scene = Scene::new(4, 4);
    scene.uniforms.push(("nothing".into(), vec![1.0]));
    let e = renderer.render(&program, &scene).unwrap_err();
    assert!(e.to_string().starts_with("[webgl-scene]"), "{e}");
    let e = renderer.render(&program, &Scene::new(0, 4)).unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
    // A page-side failure comes back with its stable prefix.
    let thrown = renderer
        .browser()
        .execute(
            "return vplRender(document.getElementById('view'), {vertex: 'nonsense', fragment: '', width: 1, height: 1, clear: [0,0,0,0], output_location: 0, attributes: [], blocks: [], samplers: []});",
            Vec::new(),
        )
        .unwrap_err();
    assert_eq!(thrown.code(), "browser-script");
    assert!(thrown.to_string().contains("webgl-compile"), "{thrown}");
    renderer.quit().unwrap();
}
