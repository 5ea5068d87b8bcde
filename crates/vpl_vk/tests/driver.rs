//! Two drivers, the same pixels: the conformance programs of spec section
//! 12.5 (the four built-ins, the loop/dispatch variants, the numeric and
//! sampler conformance renders, the examples) render through Vulkan on
//! Mesa lavapipe from the SPIR-V target, are compared with their expected
//! colours, and with the OpenGL 4.2 (llvmpipe) render of the GLSL 4.20
//! target of the same module. Each test prints `skipped` and returns when
//! no Vulkan device (or GL context) can be created and `VPL_REQUIRE_GL` is
//! unset; with it set that is a failure.

use std::path::{Path, PathBuf};
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, VERSION_420};
use vpl::programs::{self, Program};
use vpl_vk::{
    AttributeValue, Image, MinFilter, RenderRequest, Texture, UniformData, VkContext, VkProgram,
    Wrap,
};

#[path = "../../vpl_gl/tests/support/pixels.rs"]
mod pixels;
use pixels::{assert_pixel, assert_uniform};

/// One test of this binary at a time: the tests create Vulkan (lavapipe) and OpenGL (llvmpipe)
/// contexts, which share Mesa's LLVM code generator inside one process. A full CI run once
/// died with SIGSEGV while two of them drew at once (never reproduced in 52 runs of the binary
/// alone); the whole binary takes about a second, so it runs its tests one by one.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static DRIVERS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DRIVERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn required() -> bool {
    std::env::var_os("VPL_REQUIRE_GL").is_some()
}

fn vulkan(test: &str) -> Option<VkContext> {
    match VkContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(!required(), "{test}: {e} (VPL_REQUIRE_GL is set)");
            eprintln!("{test}: skipped: {e}");
            None
        }
    }
}

fn gl(test: &str) -> Option<vpl_gl::GlContext> {
    match vpl_gl::GlContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(!required(), "{test}: {e} (VPL_REQUIRE_GL is set)");
            eprintln!("{test}: GL comparison skipped: {e}");
            None
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn publish_file(relative: &str) -> VerifiedModule {
    let bytes = std::fs::read(repo().join(relative)).unwrap();
    let read = vpl::text::read_verified(&bytes, relative).unwrap_or_else(|e| panic!("{e}"));
    VerifiedModule::publish(&read).unwrap()
}

/// One draw's inputs for both drivers.
#[derive(Clone, Default)]
struct Setup {
    size: (u32, u32),
    clear: [f32; 4],
    uniforms: Vec<(String, Vec<f64>)>,
    textures: Vec<(String, Texture)>,
    attributes: Vec<(u32, AttributeValue)>,
}

fn setup(w: u32, h: u32) -> Setup {
    Setup {
        size: (w, h),
        ..Default::default()
    }
}

fn draw_vulkan(context: &VkContext, published: &VerifiedModule, s: &Setup) -> Image {
    let program = VkProgram::new(published).unwrap_or_else(|e| panic!("{e}"));
    let mut uniforms = UniformData::new(&program);
    for (path, values) in &s.uniforms {
        uniforms.set(path, values).unwrap();
    }
    let mut request = RenderRequest::new(s.size.0, s.size.1);
    request.clear = s.clear;
    request.textures = s.textures.clone();
    request.attributes = s.attributes.clone();
    vpl_vk::render(context, &program, &uniforms, &request).unwrap_or_else(|e| panic!("{e}"))
}

fn draw_gl(context: &vpl_gl::GlContext, published: &VerifiedModule, s: &Setup) -> Image {
    let artifact = glsl::compile(published, VERSION_420).unwrap();
    let mut request = vpl_gl::RenderRequest::new(&artifact, s.size.0, s.size.1);
    request.clear = s.clear;
    for (path, values) in &s.uniforms {
        request.uniforms.set(&artifact, path, values).unwrap();
    }
    request.textures = s.textures.clone();
    request.attributes = s.attributes.clone();
    vpl_gl::render(context, &artifact, &request).unwrap()
}

/// Renders on Vulkan and, when a GL context exists, on GL; asserts the
/// two agree within `tolerance` per channel; returns the Vulkan image.
#[track_caller]
fn both(
    vk: &VkContext,
    gl: Option<&vpl_gl::GlContext>,
    published: &VerifiedModule,
    s: &Setup,
    tolerance: u8,
) -> Image {
    let image = draw_vulkan(vk, published, s);
    if let Some(gl) = gl {
        let reference = draw_gl(gl, published, s);
        if let Some((x, y, a, b)) = pixels::first_difference(&image, &reference, tolerance) {
            panic!("Vulkan and GL differ at ({x}, {y}): {a:?} vs {b:?}");
        }
    }
    image
}

const GREEN: [u8; 4] = [0, 255, 0, 255];
const RED: [u8; 4] = [255, 0, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];
const WHITE: [u8; 4] = [255, 255, 255, 255];

fn quadrants() -> Texture {
    // 2x2 RGBA8, rows top-down: red green / blue white.
    let rgba = [
        255, 0, 0, 255, 0, 255, 0, 255, //
        0, 0, 255, 255, 255, 255, 255, 255,
    ];
    let mut t = Texture::from_rgba_top_down(2, 2, &rgba);
    t.min_filter = MinFilter::Nearest;
    t.mag_linear = false;
    t
}

#[test]
fn the_four_builtins_render_alike_on_vulkan_and_gl() {
    let _serial = serial();
    let Some(vk) = vulkan("built-ins") else {
        return;
    };
    let gl = gl("built-ins");
    let gl = gl.as_ref();

    let mesh = programs::create(Program::MeshAmbientColor).unwrap();
    let mut s = setup(8, 8);
    s.uniforms = vec![
        ("material.ambient_color".into(), vec![0.4, 0.8, 0.2, 1.0]),
        ("material.intensity".into(), vec![0.5]),
    ];
    assert_uniform(&both(&vk, gl, &mesh, &s, 1), [51, 102, 26, 128], 1);

    let vertex = programs::create(Program::VertexAmbientColor).unwrap();
    let mut s = setup(16, 16);
    s.attributes = vec![(
        1,
        AttributeValue::PerVertex([
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
        ]),
    )];
    let image = both(&vk, gl, &vertex, &s, 2);
    // Bottom-left red, bottom-right green, top-left blue, top-right white.
    assert_pixel(&image, 0, 15, RED, 40);
    assert_pixel(&image, 15, 15, GREEN, 40);
    assert_pixel(&image, 0, 0, BLUE, 40);
    assert_pixel(&image, 15, 0, WHITE, 40);

    let texture = programs::create(Program::TextureAmbientColor).unwrap();
    let mut s = setup(8, 8);
    s.textures = vec![("texture".into(), quadrants())];
    let image = both(&vk, gl, &texture, &s, 0);
    assert_pixel(&image, 1, 1, RED, 0);
    assert_pixel(&image, 6, 1, GREEN, 0);
    assert_pixel(&image, 1, 6, BLUE, 0);
    assert_pixel(&image, 6, 6, WHITE, 0);

    let modulated = programs::create(Program::TextureVertexAmbientColor).unwrap();
    s.attributes = vec![(2, AttributeValue::Constant([0.5, 1.0, 0.25, 1.0]))];
    let image = both(&vk, gl, &modulated, &s, 1);
    assert_pixel(&image, 1, 1, [128, 0, 0, 255], 1);
    assert_pixel(&image, 6, 6, [128, 255, 64, 255], 1);
}

#[test]
fn loop_and_dispatch_variants_render_their_colours() {
    let _serial = serial();
    let Some(vk) = vulkan("loops") else {
        return;
    };
    let gl = gl("loops");
    let gl = gl.as_ref();
    let loops = publish_file("crates/vpl_gl/tests/fixtures/loops.vpl");
    for (limit, expected) in [(6.0, GREEN), (5.0, RED), (-1.0, BLUE)] {
        let mut s = setup(4, 4);
        s.clear = [0.0, 0.0, 1.0, 1.0];
        s.uniforms = vec![("limit".into(), vec![limit])];
        assert_uniform(&both(&vk, gl, &loops, &s, 0), expected, 0);
    }
    for file in [
        "examples/vpl/loop_call.vpl",
        "examples/vpl/nested_storage.vpl",
        "../shared/corpus/vpl-arcadia/spec-10.3-loop-helper.vpl",
        "../shared/corpus/vpl-arcadia/spec-10.3-nested-storage.vpl",
    ] {
        if !repo().join(file).exists() {
            continue;
        }
        let published = publish_file(file);
        assert_uniform(&both(&vk, gl, &published, &setup(4, 4), 0), GREEN, 0);
    }
}

#[test]
fn numeric_conformance_passes_on_vulkan() {
    let _serial = serial();
    let Some(vk) = vulkan("numeric") else {
        return;
    };
    let gl = gl("numeric");
    let published = publish_file("crates/vpl_gl/tests/fixtures/numeric.vpl");
    let mut s = setup(4, 4);
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
        s.uniforms.push((format!("ints[{i}]"), vec![*v]));
    }
    for (i, v) in [1.5, 2.0, 0.25, 1.0, 0.0].iter().enumerate() {
        s.uniforms.push((format!("floats[{i}]"), vec![*v]));
    }
    let image = both(&vk, gl.as_ref(), &published, &s, 0);
    let p = image.pixel(0, 0);
    assert!(
        p == GREEN,
        "numeric check {} failed on Vulkan (pixel {p:?})",
        (f64::from(p[2]) / 255.0 * 32.0).round()
    );
    assert_uniform(&image, GREEN, 0);
    // The checks can fail: a wrong input reports red.
    s.uniforms.push(("ints[1]".into(), vec![2.0]));
    assert_pixel(&both(&vk, gl.as_ref(), &published, &s, 0), 0, 0, RED, 0);
}

#[test]
fn sampler_conformance_repeat_clamp_and_mip_selection() {
    let _serial = serial();
    let Some(vk) = vulkan("samplers") else {
        return;
    };
    let gl = gl("samplers");
    let gl = gl.as_ref();
    let wrap = publish_file("crates/vpl_gl/tests/fixtures/sampler_wrap.vpl");
    let mut texture = Texture::from_rgba_top_down(2, 1, &[255, 0, 0, 255, 0, 255, 0, 255]);
    texture.min_filter = MinFilter::Nearest;
    texture.mag_linear = false;
    for (mode, expected) in [(Wrap::Repeat, RED), (Wrap::ClampToEdge, GREEN)] {
        texture.wrap = mode;
        let mut s = setup(4, 4);
        s.textures = vec![("image".into(), texture.clone())];
        assert_uniform(&both(&vk, gl, &wrap, &s, 0), expected, 0);
    }

    let colors = [
        [255, 0, 0, 255],
        [0, 255, 0, 255],
        [0, 0, 255, 255],
        [255, 255, 0, 255],
        [255, 0, 255, 255],
        [0, 255, 255, 255],
        [255, 255, 255, 255],
    ];
    let mips = Texture::solid_levels(64, 64, &colors);
    let fragment = programs::create(Program::TextureAmbientColor).unwrap();
    // 64 texels across 4 pixels: LOD 4.
    let mut s = setup(4, 4);
    s.textures = vec![("texture".into(), mips.clone())];
    assert_uniform(&both(&vk, gl, &fragment, &s, 0), colors[4], 0);
    // Across 64 pixels: LOD 0.
    s.size = (64, 64);
    assert_pixel(&both(&vk, gl, &fragment, &s, 0), 10, 10, colors[0], 0);
    // Vertex sampling uses the base level.
    let vertex = publish_file("crates/vpl_gl/tests/fixtures/mip_vertex.vpl");
    let mut s = setup(4, 4);
    s.textures = vec![("image".into(), mips)];
    assert_uniform(&both(&vk, gl, &vertex, &s, 0), colors[0], 0);
}

#[test]
fn general_fixture_records_arrays_and_discard() {
    let _serial = serial();
    let Some(vk) = vulkan("general") else {
        return;
    };
    let gl = gl("general");
    let published = publish_file("crates/vpl/tests/glsl/general.vpl");
    let identity = vec![
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    let mut s = setup(4, 4);
    s.clear = [0.0, 0.0, 1.0, 1.0];
    s.uniforms = vec![
        ("params.transform".into(), identity),
        ("params.count".into(), vec![3.0]),
        ("lights[1].color".into(), vec![0.0, 1.0, 0.0, 1.0]),
        ("lights[1].weights[2]".into(), vec![2.0]),
        ("scale".into(), vec![0.5]),
    ];
    assert_uniform(&both(&vk, gl.as_ref(), &published, &s, 0), GREEN, 0);
    // A negative count takes the discard path: the clear colour stays.
    s.uniforms.push(("params.count".into(), vec![-1.0]));
    assert_uniform(&both(&vk, gl.as_ref(), &published, &s, 0), BLUE, 0);
}
