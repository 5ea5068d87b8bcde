//! Native-driver tests (spec section 12.5) on a headless OpenGL 4.2 core
//! context (Mesa llvmpipe through EGL surfaceless here and in CI): compile,
//! link, std140 block sizes and member offsets against the driver's
//! queries, attribute and output locations, rendered pixels of every
//! built-in and example, the numeric conformance shader and the sampler
//! cases. Each test prints `skipped` and returns when no context can be
//! created; set `VPL_REQUIRE_GL=1` to make that a failure instead.

use std::path::{Path, PathBuf};
use vpl::VerifiedModule;
use vpl::backends::glsl::reflect::Std140Detail;
use vpl::backends::glsl::{self, GlslType, ProgramArtifact, VERSION_420, std140_layout};
use vpl::ir::Direction;
use vpl::programs::{self, Program};
use vpl_gl::{AttributeValue, GlContext, LinkedProgram, MinFilter, RenderRequest, Texture, Wrap};

#[path = "support/pixels.rs"]
mod pixels;
use pixels::{assert_pixel, assert_uniform};

fn context(test: &str) -> Option<GlContext> {
    match GlContext::new() {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(
                std::env::var_os("VPL_REQUIRE_GL").is_none(),
                "{test}: {e} (VPL_REQUIRE_GL is set)"
            );
            eprintln!("{test}: skipped: {e}");
            None
        }
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn compile_text(text: &str, label: &str) -> ProgramArtifact {
    let module = vpl::text::read(text.as_bytes(), label).unwrap_or_else(|e| panic!("{e}"));
    let published = VerifiedModule::new(&module).unwrap();
    let artifact =
        glsl::compile(&published, VERSION_420).unwrap_or_else(|e| panic!("{label}: {e}"));
    glslang(artifact.vertex_code(), "vert", label);
    glslang(artifact.fragment_code(), "frag", label);
    artifact
}

/// Checks one shader with the reference compiler `glslangValidator -S`.
fn glslang(code: &str, stage: &str, label: &str) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vpl-gl-glslang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("shader{n}.{stage}"));
    std::fs::write(&file, code).unwrap();
    let output = std::process::Command::new("glslangValidator")
        .arg("-S")
        .arg(stage)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run glslangValidator (glslang-tools): {e}"));
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "glslangValidator rejected {label} ({stage}):\n{}\n{code}",
        String::from_utf8_lossy(&output.stdout)
    );
}

fn compile_file(relative: &str) -> ProgramArtifact {
    let path = repo().join(relative);
    compile_text(&std::fs::read_to_string(&path).unwrap(), relative)
}

fn builtin(program: Program) -> ProgramArtifact {
    glsl::compile(&programs::create(program).unwrap(), VERSION_420).unwrap()
}

/// Checks the driver's view of the artifact's interface and blocks.
fn check_reflection(program: &LinkedProgram<'_>, artifact: &ProgramArtifact) {
    for b in artifact.vertex_interface() {
        if b.direction == Direction::In {
            // Active attributes report their resolved location.
            if let Some(location) = program.attribute_location(b.binding.gl_name()) {
                assert_eq!(
                    location as i32,
                    b.binding.location,
                    "{}",
                    b.binding.gl_name()
                );
            }
        }
    }
    let primary = artifact.fragment_color_output();
    assert_eq!(
        program.frag_data_location(primary),
        artifact.fragment_color_location(),
        "fragment output {primary}"
    );
    for u in artifact.uniforms() {
        let Some(block) = &u.block_name else { continue };
        let layout = std140_layout(&u.binding.ty);
        if let Some(size) = program.uniform_block_size(block) {
            assert_eq!(size, layout.size, "std140 size of {block}");
            assert_eq!(
                program.uniform_block_binding(block),
                Some(u.block_binding),
                "binding point of {block}"
            );
            check_offsets(program, block, &u.binding.ty, &layout, 0);
        }
    }
}

/// Compares every leaf member offset with `GL_UNIFORM_OFFSET`.
fn check_offsets(
    program: &LinkedProgram<'_>,
    prefix: &str,
    ty: &GlslType,
    layout: &vpl::backends::glsl::Std140Layout,
    offset: u64,
) {
    match (ty, &layout.detail) {
        (GlslType::Record(record), Std140Detail::Record { members }) => {
            for (field, (member_offset, member)) in record.fields.iter().zip(members) {
                let name = format!("{prefix}.{}", field.gl_name);
                check_offsets(program, &name, &field.ty, member, offset + member_offset);
            }
        }
        (
            GlslType::Array { element, length },
            Std140Detail::Array {
                stride,
                element: el,
            },
        ) => {
            if matches!(**element, GlslType::Record(_)) {
                for i in 0..(*length).min(4) {
                    let name = format!("{prefix}[{i}]");
                    check_offsets(program, &name, element, el, offset + i * stride);
                }
            } else {
                let name = format!("{prefix}[0]");
                assert_eq!(program.uniform_offset(&name), Some(offset as i32), "{name}");
            }
        }
        _ => assert_eq!(
            program.uniform_offset(prefix),
            Some(offset as i32),
            "{prefix}"
        ),
    }
}

fn build_and_check<'c>(context: &'c GlContext, artifact: &ProgramArtifact) -> LinkedProgram<'c> {
    let program = LinkedProgram::build(context, artifact).unwrap_or_else(|e| {
        panic!(
            "{e}\n--- vertex ---\n{}\n--- fragment ---\n{}",
            artifact.vertex_code(),
            artifact.fragment_code()
        )
    });
    check_reflection(&program, artifact);
    program
}

const GREEN: [u8; 4] = [0, 255, 0, 255];
const RED: [u8; 4] = [255, 0, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];

#[test]
fn examples_render_their_expected_colors() {
    let Some(context) = context("examples") else {
        return;
    };
    // The minimal example places every vertex at the origin: it compiles
    // and links, and its degenerate quad leaves the clear colour.
    let artifact = compile_file("examples/vpl/minimal.vpl");
    let program = build_and_check(&context, &artifact);
    let image = vpl_gl::draw(&program, &artifact, &RenderRequest::new(&artifact, 8, 8)).unwrap();
    assert_uniform(&image, [0, 0, 0, 0], 0);
    for (file, expected) in [
        ("examples/vpl/loop_call.vpl", GREEN),
        ("examples/vpl/nested_storage.vpl", GREEN),
    ] {
        let artifact = compile_file(file);
        let program = build_and_check(&context, &artifact);
        let image = vpl_gl::draw(&program, &artifact, &RenderRequest::new(&artifact, 8, 8))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_uniform(&image, expected, 0);
    }
}

#[test]
fn nested_storage_leaves_the_other_element_red() {
    let Some(context) = context("nested storage") else {
        return;
    };
    let path = repo().join("examples/vpl/nested_storage.vpl");
    let text = std::fs::read_to_string(path).unwrap();
    // Element 2 is painted green; read element 0 instead, which the
    // partial store must have left red.
    let read_other =
        "(load r0 (member_ref (index_ref (member_ref (local r3) \"tints\") (int 0)) \"rgb\"))";
    let variant = text.replace(
        "(load r0 (member_ref (index_ref (member_ref (local r3) \"tints\") r4) \"rgb\"))",
        read_other,
    );
    assert!(variant.contains(read_other), "the example changed shape");
    let artifact = compile_text(&variant, "nested_storage (element 0)");
    let image = vpl_gl::render(&context, &artifact, &RenderRequest::new(&artifact, 4, 4)).unwrap();
    assert_uniform(&image, RED, 0);
}

#[test]
fn mesh_ambient_color_uses_the_std140_material_block() {
    let Some(context) = context("mesh-ambient-color") else {
        return;
    };
    let artifact = builtin(Program::MeshAmbientColor);
    let program = build_and_check(&context, &artifact);
    let material = artifact.uniform("material").unwrap();
    assert_eq!(material.block_name.as_deref(), Some("vpl_Block0"));
    assert_eq!(program.uniform_block_size("vpl_Block0"), Some(32));
    let mut request = RenderRequest::new(&artifact, 8, 8);
    request
        .uniforms
        .set(&artifact, "material.ambient_color", &[0.4, 0.8, 0.2, 1.0])
        .unwrap();
    request
        .uniforms
        .set(&artifact, "material.intensity", &[0.5])
        .unwrap();
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_uniform(&image, [51, 102, 26, 128], 1);
}

#[test]
fn vertex_ambient_color_interpolates_vertex_colors() {
    let Some(context) = context("vertex-ambient-color") else {
        return;
    };
    let artifact = builtin(Program::VertexAmbientColor);
    let program = build_and_check(&context, &artifact);
    assert_eq!(program.attribute_location("vpl_attribute1"), Some(1));
    let mut request = RenderRequest::new(&artifact, 16, 16);
    // bottom-left red, bottom-right green, top-left blue, top-right white
    request.attributes.push((
        1,
        AttributeValue::PerVertex([
            [1.0, 0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
            [1.0, 1.0, 1.0, 1.0],
        ]),
    ));
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    // Corner pixels are near their vertex colours (rows are top-down).
    assert_pixel(&image, 0, 15, RED, 40);
    assert_pixel(&image, 15, 15, GREEN, 40);
    assert_pixel(&image, 0, 0, BLUE, 40);
    assert_pixel(&image, 15, 0, [255, 255, 255, 255], 40);
    request.attributes = vec![(1, AttributeValue::Constant([0.0, 1.0, 0.0, 1.0]))];
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_uniform(&image, GREEN, 0);
}

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
fn texture_ambient_color_samples_the_texture() {
    let Some(context) = context("texture-ambient-color") else {
        return;
    };
    let artifact = builtin(Program::TextureAmbientColor);
    let program = build_and_check(&context, &artifact);
    let mut request = RenderRequest::new(&artifact, 8, 8);
    request.textures.push(("texture".into(), quadrants()));
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_pixel(&image, 1, 1, RED, 0);
    assert_pixel(&image, 6, 1, GREEN, 0);
    assert_pixel(&image, 1, 6, BLUE, 0);
    assert_pixel(&image, 6, 6, [255, 255, 255, 255], 0);
}

#[test]
fn texture_vertex_ambient_color_modulates_texels() {
    let Some(context) = context("texture-vertex-ambient-color") else {
        return;
    };
    let artifact = builtin(Program::TextureVertexAmbientColor);
    let program = build_and_check(&context, &artifact);
    assert_eq!(program.attribute_location("vpl_attribute2"), Some(2));
    let mut request = RenderRequest::new(&artifact, 8, 8);
    request.textures.push(("texture".into(), quadrants()));
    request
        .attributes
        .push((2, AttributeValue::Constant([0.5, 1.0, 0.25, 1.0])));
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_pixel(&image, 1, 1, [128, 0, 0, 255], 1);
    assert_pixel(&image, 6, 6, [128, 255, 64, 255], 1);
}

#[test]
fn numeric_conformance_shader_passes() {
    let Some(context) = context("numeric conformance") else {
        return;
    };
    let artifact = compile_file("crates/vpl_gl/tests/fixtures/numeric.vpl");
    let program = build_and_check(&context, &artifact);
    let mut request = RenderRequest::new(&artifact, 4, 4);
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
        request
            .uniforms
            .set(&artifact, &format!("ints[{i}]"), &[*v])
            .unwrap();
    }
    for (i, v) in [1.5, 2.0, 0.25, 1.0, 0.0].iter().enumerate() {
        request
            .uniforms
            .set(&artifact, &format!("floats[{i}]"), &[*v])
            .unwrap();
    }
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    let p = image.pixel(0, 0);
    assert!(
        p == GREEN,
        "numeric check {} failed (pixel {p:?})",
        (f64::from(p[2]) / 255.0 * 32.0).round()
    );
    assert_uniform(&image, GREEN, 0);
    // The checks can fail: with a wrong input the shader reports check 0.
    request.uniforms.set(&artifact, "ints[1]", &[2.0]).unwrap();
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_pixel(&image, 0, 0, RED, 0);
}

#[test]
fn sampler_addressing_distinguishes_repeat_from_clamp() {
    let Some(context) = context("sampler addressing") else {
        return;
    };
    let artifact = compile_file("crates/vpl_gl/tests/fixtures/sampler_wrap.vpl");
    let program = build_and_check(&context, &artifact);
    // 2x1 texture: left red, right green.
    let mut texture = Texture::from_rgba_top_down(2, 1, &[255, 0, 0, 255, 0, 255, 0, 255]);
    texture.min_filter = MinFilter::Nearest;
    texture.mag_linear = false;
    for (wrap, expected) in [(Wrap::Repeat, RED), (Wrap::ClampToEdge, GREEN)] {
        let mut request = RenderRequest::new(&artifact, 4, 4);
        texture.wrap = wrap;
        request.textures.push(("image".into(), texture.clone()));
        let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
        assert_uniform(&image, expected, 0);
    }
}

/// 64x64 texture, 7 levels, each a different colour.
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

#[test]
fn fragment_sampling_selects_mip_levels_and_vertex_sampling_uses_level_zero() {
    let Some(context) = context("mip selection") else {
        return;
    };
    let (texture, colors) = mip_colors();
    // A 64-texel texture across 4 pixels: 16 texels per pixel, LOD 4.
    let fragment = builtin(Program::TextureAmbientColor);
    let mut request = RenderRequest::new(&fragment, 4, 4);
    request.textures.push(("texture".into(), texture.clone()));
    let image = vpl_gl::render(&context, &fragment, &request).unwrap();
    assert_uniform(&image, colors[4], 0);
    // Same texture across 64 pixels: LOD 0.
    let mut request = RenderRequest::new(&fragment, 64, 64);
    request.textures.push(("texture".into(), texture.clone()));
    let image = vpl_gl::render(&context, &fragment, &request).unwrap();
    assert_pixel(&image, 10, 10, colors[0], 0);

    let vertex = compile_file("crates/vpl_gl/tests/fixtures/mip_vertex.vpl");
    let mut request = RenderRequest::new(&vertex, 4, 4);
    request.textures.push(("image".into(), texture));
    let image = vpl_gl::render(&context, &vertex, &request).unwrap();
    assert_uniform(&image, colors[0], 0);
}

#[test]
fn general_fixture_compiles_links_and_discards() {
    let Some(context) = context("general fixture") else {
        return;
    };
    let artifact = compile_file("crates/vpl/tests/glsl/general.vpl");
    let program = build_and_check(&context, &artifact);
    let identity = [
        1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    let mut request = RenderRequest::new(&artifact, 4, 4);
    request.clear = [0.0, 0.0, 1.0, 1.0];
    let u = &mut request.uniforms;
    u.set(&artifact, "params.transform", &identity).unwrap();
    u.set(&artifact, "params.count", &[3.0]).unwrap();
    u.set(&artifact, "lights[1].color", &[0.0, 1.0, 0.0, 1.0])
        .unwrap();
    u.set(&artifact, "lights[1].weights[2]", &[2.0]).unwrap();
    u.set(&artifact, "scale", &[0.5]).unwrap();
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_uniform(&image, GREEN, 0);
    // A negative id takes the discard path: the clear colour stays.
    request
        .uniforms
        .set(&artifact, "params.count", &[-1.0])
        .unwrap();
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_uniform(&image, BLUE, 0);
}

#[test]
fn std140_and_location_fixtures_agree_with_the_driver() {
    let Some(context) = context("std140 and locations") else {
        return;
    };
    for file in [
        "crates/vpl/tests/glsl/std140.vpl",
        "crates/vpl/tests/glsl/locations.vpl",
    ] {
        let artifact = compile_file(file);
        let program = build_and_check(&context, &artifact);
        drop(program);
    }
    let artifact = compile_file("crates/vpl/tests/glsl/std140.vpl");
    let program = build_and_check(&context, &artifact);
    let layout = std140_layout(&artifact.uniforms()[0].binding.ty);
    assert_eq!(program.uniform_block_size("vpl_Block0"), Some(layout.size));
    let mut request = RenderRequest::new(&artifact, 2, 2);
    request
        .uniforms
        .set(&artifact, "data.color", &[1.0, 0.0, 1.0, 1.0])
        .unwrap();
    let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
    assert_uniform(&image, [255, 0, 255, 255], 0);
    // Locations: the primary output sits at explicit location 2.
    let artifact = compile_file("crates/vpl/tests/glsl/locations.vpl");
    assert_eq!(artifact.fragment_color_location(), 2);
}

#[test]
fn contexts_work_on_several_threads() {
    let Some(context) = context("threads") else {
        return;
    };
    drop(context);
    let handles: Vec<_> = (0..3)
        .map(|_| {
            std::thread::spawn(|| {
                let context = GlContext::new().unwrap();
                let artifact = builtin(Program::MeshAmbientColor);
                let mut request = RenderRequest::new(&artifact, 2, 2);
                request
                    .uniforms
                    .set(&artifact, "material.ambient_color", &[1.0, 0.0, 0.0, 1.0])
                    .unwrap();
                request
                    .uniforms
                    .set(&artifact, "material.intensity", &[1.0])
                    .unwrap();
                vpl_gl::render(&context, &artifact, &request)
                    .unwrap()
                    .pixel(0, 0)
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), RED);
    }
}

#[test]
fn dispatch_loops_early_returns_and_discarding_helpers_execute() {
    let Some(context) = context("loops") else {
        return;
    };
    let artifact = compile_file("crates/vpl_gl/tests/fixtures/loops.vpl");
    let program = build_and_check(&context, &artifact);
    for (limit, expected) in [(6.0, GREEN), (5.0, RED), (-1.0, BLUE)] {
        let mut request = RenderRequest::new(&artifact, 4, 4);
        request.clear = [0.0, 0.0, 1.0, 1.0];
        request.uniforms.set(&artifact, "limit", &[limit]).unwrap();
        let image = vpl_gl::draw(&program, &artifact, &request).unwrap();
        assert_uniform(&image, expected, 0);
    }
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
    (interface (in where "where" C -1 position) (out color "color" C 0 fragment_color))
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

#[test]
fn fragment_position_input_is_gl_frag_coord() {
    let Some(context) = context("gl_FragCoord") else {
        return;
    };
    let artifact = compile_text(FRAG_COORD, "frag_coord.vpl");
    assert_eq!(
        artifact.fragment_interface()[0].binding.gl_name(),
        "gl_FragCoord"
    );
    let image = vpl_gl::render(&context, &artifact, &RenderRequest::new(&artifact, 4, 2)).unwrap();
    for y in 0..2 {
        assert_pixel(&image, 0, y, RED, 0);
        assert_pixel(&image, 1, y, RED, 0);
        assert_pixel(&image, 2, y, GREEN, 0);
        assert_pixel(&image, 3, y, GREEN, 0);
    }
}

#[test]
fn primary_output_at_a_nonzero_location_is_the_rendered_one() {
    let Some(context) = context("output locations") else {
        return;
    };
    let text = FRAG_COORD
        .replace(
            "(out color \"color\" C 0 fragment_color)",
            "(out extra \"extra\" C -1 none) (out color \"color\" C 3 fragment_color)",
        )
        .replace(
            "(store (stage color) r0) (return))\n        (block right",
            "(store (stage color) r0) (store (stage extra) r0) (return))\n        (block right",
        )
        .replace(
            "(store (stage color) r0) (return))))))",
            "(store (stage color) r0) (store (stage extra) r0) (return))))))",
        );
    assert_eq!(text.matches("(store (stage extra) r0)").count(), 2);
    let artifact = compile_text(&text, "outputs.vpl");
    assert_eq!(artifact.fragment_color_location(), 3);
    assert_eq!(artifact.fragment_color_output(), "vpl_output3");
    let extra = &artifact.fragment_interface()[1];
    assert_eq!(
        (extra.binding.gl_name(), extra.binding.location),
        ("vpl_output0", 0)
    );
    let program = build_and_check(&context, &artifact);
    assert_eq!(program.frag_data_location("vpl_output0"), 0);
    let image = vpl_gl::draw(&program, &artifact, &RenderRequest::new(&artifact, 4, 1)).unwrap();
    assert_pixel(&image, 0, 0, RED, 0);
    assert_pixel(&image, 3, 0, GREEN, 0);
}
