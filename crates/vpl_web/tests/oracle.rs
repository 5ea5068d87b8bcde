//! The differential oracle (issue 38): random verified modules
//! (`vpl::testgen`) drawn by four drivers — the CPU reference executor,
//! OpenGL 4.2 from the GLSL 4.20 target (llvmpipe), Vulkan from the SPIR-V
//! target (lavapipe) and WebGL 2 from the GLSL ES 3.00 target (headless
//! Chromium) — must agree: integer-derived channels exactly, float-derived
//! channels within the tolerance the generator computed for them
//! (`docs/vpl/oracle.md`). A disagreement is minimized (statements
//! replaced by constants while it persists) and reported with the module,
//! the driver, the pixel and both values.
//!
//! `VPL_ORACLE_MODULES` sets how many modules (default 24, the CI bound),
//! `VPL_ORACLE_FIRST` the first seed; the regression seeds are always
//! drawn as well. A driver that cannot start is
//! skipped (printed), unless `VPL_REQUIRE_GL` is set.

use std::collections::BTreeSet;
use vpl::exec::{self, DrawRequest, Executable};
use vpl::testgen::{self, Case};
use vpl_gl::Image;
use vpl_web::{Scene, WebGlProgram, WebGlRenderer};

/// Seeds that once showed a disagreement, drawn in every run: 2783 found
/// Mesa folding a constant `mat4x2(s)` wrongly (`docs/vpl/oracle.md`).
const REGRESSION_SEEDS: [u64; 1] = [2783];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn unavailable(driver: &str, e: &dyn std::fmt::Display) {
    assert!(
        std::env::var_os("VPL_REQUIRE_GL").is_none(),
        "{driver}: {e} (VPL_REQUIRE_GL is set)"
    );
    eprintln!("oracle: {driver} skipped: {e}");
}

struct Drivers {
    gl: Option<vpl_gl::GlContext>,
    vulkan: Option<vpl_vk::VkContext>,
    webgl: Option<WebGlRenderer>,
}

fn textures(case: &Case) -> Vec<(String, vpl_gl::Texture)> {
    case.textures
        .iter()
        .map(|(n, t)| (n.clone(), vpl_gl::Texture::from(t)))
        .collect()
}

fn draw_cpu(case: &Case) -> Result<Image, String> {
    let executable = Executable::new(&case.module).map_err(|e| e.to_string())?;
    let mut request = DrawRequest::new(&executable, case.size.0, case.size.1);
    for (path, values) in &case.uniforms {
        request
            .uniforms
            .set(&executable, path, values)
            .map_err(|e| e.to_string())?;
    }
    request.textures = case.textures.clone();
    exec::draw(&executable, &request)
        .map(Image::from)
        .map_err(|e| e.to_string())
}

fn draw_gl(context: &vpl_gl::GlContext, case: &Case) -> Result<Image, String> {
    use vpl::backends::glsl;
    let artifact = glsl::compile(&case.module, glsl::VERSION_420).map_err(|e| e.to_string())?;
    let mut request = vpl_gl::RenderRequest::new(&artifact, case.size.0, case.size.1);
    for (path, values) in &case.uniforms {
        request.uniforms.set(&artifact, path, values)?;
    }
    request.textures = textures(case);
    vpl_gl::render(context, &artifact, &request).map_err(|e| e.to_string())
}

fn draw_vulkan(context: &vpl_vk::VkContext, case: &Case) -> Result<Image, String> {
    let program = vpl_vk::VkProgram::new(&case.module).map_err(|e| e.to_string())?;
    let mut uniforms = vpl_vk::UniformData::new(&program);
    for (path, values) in &case.uniforms {
        uniforms.set(path, values)?;
    }
    let mut request = vpl_vk::RenderRequest::new(case.size.0, case.size.1);
    request.textures = textures(case);
    vpl_vk::render(context, &program, &uniforms, &request).map_err(|e| e.to_string())
}

fn draw_webgl(renderer: &WebGlRenderer, case: &Case) -> Result<Image, String> {
    let program = WebGlProgram::compile(&case.module).map_err(|e| e.to_string())?;
    let mut scene = Scene::new(case.size.0, case.size.1);
    scene.uniforms = case.uniforms.clone();
    scene.textures = textures(case);
    renderer.render(&program, &scene).map_err(|e| e.to_string())
}

/// A pixel channel out of tolerance: (x, y, channel, reference pixel,
/// other pixel).
type Disagreement = (u32, u32, usize, [u8; 4], [u8; 4]);

/// The first pixel channel where `other` leaves `reference`'s tolerance.
fn disagreement(case: &Case, reference: &Image, other: &Image) -> Option<Disagreement> {
    if (reference.width, reference.height) != (other.width, other.height) {
        return Some((0, 0, 0, [0; 4], [0; 4]));
    }
    for y in 0..reference.height {
        for x in 0..reference.width {
            let (a, b) = (reference.pixel(x, y), other.pixel(x, y));
            for c in 0..4 {
                if a[c].abs_diff(b[c]) > case.tolerance[c] {
                    return Some((x, y, c, a, b));
                }
            }
        }
    }
    None
}

/// Draws `case` on the driver `name`; `None` when the driver is absent.
fn draw(drivers: &Drivers, name: &str, case: &Case) -> Option<Result<Image, String>> {
    match name {
        "gl" => drivers.gl.as_ref().map(|c| draw_gl(c, case)),
        "vulkan" => drivers.vulkan.as_ref().map(|c| draw_vulkan(c, case)),
        _ => drivers.webgl.as_ref().map(|r| draw_webgl(r, case)),
    }
}

/// Whether `case` still shows a disagreement between the CPU and `driver`.
fn disagrees(drivers: &Drivers, driver: &str, case: &Case) -> bool {
    match (draw_cpu(case), draw(drivers, driver, case)) {
        (Ok(cpu), Some(Ok(other))) => disagreement(case, &cpu, &other).is_some(),
        (Err(_), _) | (_, Some(Err(_))) => true,
        _ => false,
    }
}

/// Replaces statements by constants while the disagreement persists.
fn minimize(drivers: &Drivers, driver: &str, case: &Case) -> Case {
    let mut disabled = BTreeSet::new();
    let mut best = case.clone();
    for i in 0..case.statements {
        let mut trial = disabled.clone();
        trial.insert(i);
        if let Ok(smaller) = testgen::generate_without(case.seed, &trial)
            && disagrees(drivers, driver, &smaller)
        {
            disabled = trial;
            best = smaller;
        }
    }
    best
}

fn report(drivers: &Drivers, driver: &str, case: &Case, what: String) -> String {
    let small = minimize(drivers, driver, case);
    let detail = match (draw_cpu(&small), draw(drivers, driver, &small)) {
        (Ok(cpu), Some(Ok(other))) => match disagreement(&small, &cpu, &other) {
            Some((x, y, c, a, b)) => format!(
                "minimized: pixel ({x}, {y}) channel {c}: cpu {a:?}, {driver} {b:?} (tolerance {:?})",
                small.tolerance
            ),
            None => "minimized case agrees".into(),
        },
        (Err(e), _) => format!("minimized: cpu error {e}"),
        (_, Some(Err(e))) => format!("minimized: {driver} error {e}"),
        _ => String::new(),
    };
    format!(
        "seed {} on {driver}: {what}\n{detail}\nminimized module:\n{}",
        case.seed, small.text
    )
}

#[test]
fn random_modules_draw_alike_on_cpu_gl_vulkan_and_webgl() {
    let count = env_number("VPL_ORACLE_MODULES", 24);
    let first = env_number("VPL_ORACLE_FIRST", 1000);
    let drivers = Drivers {
        gl: vpl_gl::GlContext::new()
            .map_err(|e| unavailable("gl", &e))
            .ok(),
        vulkan: vpl_vk::VkContext::new()
            .map_err(|e| unavailable("vulkan", &e))
            .ok(),
        webgl: WebGlRenderer::start()
            .map_err(|e| unavailable("webgl", &e))
            .ok(),
    };
    let mut failures = Vec::new();
    let mut pixels = 0u64;
    let mut compared = [0u64; 3];
    let seeds: BTreeSet<u64> = (first..first + count).chain(REGRESSION_SEEDS).collect();
    for &seed in &seeds {
        let case = testgen::generate(seed).unwrap_or_else(|e| panic!("{e}"));
        let cpu =
            draw_cpu(&case).unwrap_or_else(|e| panic!("seed {seed}: cpu: {e}\n{}", case.text));
        for (k, driver) in ["gl", "vulkan", "webgl"].into_iter().enumerate() {
            let Some(result) = draw(&drivers, driver, &case) else {
                continue;
            };
            match result {
                Ok(image) => {
                    compared[k] += 1;
                    pixels += u64::from(image.width * image.height);
                    if let Some((x, y, c, a, b)) = disagreement(&case, &cpu, &image) {
                        failures.push(report(
                            &drivers,
                            driver,
                            &case,
                            format!("pixel ({x}, {y}) channel {c}: cpu {a:?}, {driver} {b:?}"),
                        ));
                    }
                }
                Err(e) => failures.push(report(&drivers, driver, &case, format!("error: {e}"))),
            }
        }
    }
    eprintln!(
        "oracle: {} modules ({count} from seed {first}, regressions {REGRESSION_SEEDS:?}); \
         compared gl {}, vulkan {}, webgl {}; {pixels} pixels; {} disagreements",
        seeds.len(),
        compared[0],
        compared[1],
        compared[2],
        failures.len()
    );
    if let Some(webgl) = drivers.webgl {
        let _ = webgl.quit();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
