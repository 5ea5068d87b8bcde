//! The lavapipe workaround of `docs/vpl/oracle.md` ("Seed 5396"): Mesa
//! 22.3's lavapipe drew no fragment of a draw whose helper function kills
//! inside a loop, so the SPIR-V lowering leaves a helper's dispatch loop
//! before it kills. The oracle's minimized module of seed 5396 and its
//! reduction (a two-block helper that discards where window x ≥ 1.6875)
//! must draw on Vulkan what the CPU reference executor draws: the kept
//! pixels within the oracle's tolerance of 2, the discarded ones not at
//! all.

use std::path::Path;
use vpl::VerifiedModule;
use vpl::exec::{self, DrawRequest, Executable};
use vpl_vk::{RenderRequest, Texture, UniformData, VkContext, VkProgram};

const SIZE: u32 = 16;

fn publish(relative: &str) -> VerifiedModule {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{relative}: {e}"));
    let read = vpl::text::read_verified(&bytes, relative).unwrap_or_else(|e| panic!("{e}"));
    VerifiedModule::publish(&read).unwrap()
}

#[test]
fn helpers_that_discard_in_a_loop_draw_on_vulkan_as_on_the_cpu() {
    let context = match VkContext::new() {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var_os("VPL_REQUIRE_GL").is_none(),
                "{e} (VPL_REQUIRE_GL is set)"
            );
            eprintln!("skipped: {e}");
            return;
        }
    };
    let samplers = ["tex", "tex2"];
    for file in [
        "docs/vpl/oracle-seed-5396-vulkan.vpl",
        "docs/vpl/oracle-seed-5396-reduced.vpl",
    ] {
        let module = publish(file);
        let executable = Executable::new(&module).unwrap();
        let mut cpu_request = DrawRequest::new(&executable, SIZE, SIZE);
        cpu_request.textures = samplers
            .iter()
            .map(|s| (s.to_string(), Texture::checkerboard().to_cpu()))
            .collect();
        let cpu = exec::draw(&executable, &cpu_request).unwrap();

        let program = VkProgram::new(&module).unwrap();
        let uniforms = UniformData::new(&program);
        let mut request = RenderRequest::new(SIZE, SIZE);
        request.textures = samplers
            .iter()
            .map(|s| (s.to_string(), Texture::checkerboard()))
            .collect();
        let vulkan = vpl_vk::render(&context, &program, &uniforms, &request).unwrap();

        let cpu = vpl_gl::Image::from(cpu);
        let mut drawn = 0;
        for y in 0..SIZE {
            for x in 0..SIZE {
                let (a, b) = (cpu.pixel(x, y), vulkan.pixel(x, y));
                if a != [0; 4] {
                    drawn += 1;
                }
                for c in 0..4 {
                    assert!(
                        a[c].abs_diff(b[c]) <= 2,
                        "{file}: pixel ({x}, {y}): cpu {a:?}, vulkan {b:?}"
                    );
                }
            }
        }
        // Window columns 0 and 1 are kept, the others discarded.
        assert_eq!(drawn, 2 * SIZE, "{file}: the CPU's kept pixels");
    }
}
