//! `irkit vpl render --driver vulkan|gl` end to end: the two drivers draw
//! the same pixels. Skipped when no Vulkan device (or GL context) can be
//! created and `VPL_REQUIRE_GL` is unset.

mod common;
use common::run_report;

use std::path::PathBuf;
use std::process::{Command, Output};

fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("irkit runs")
}

fn drivers_available() -> bool {
    let vk = vpl_vk::VkContext::new();
    let gl = vpl_gl::GlContext::new();
    match (&vk, &gl) {
        (Ok(_), Ok(_)) => true,
        _ => {
            assert!(
                std::env::var_os("VPL_REQUIRE_GL").is_none(),
                "VPL_REQUIRE_GL is set but a driver is missing: vulkan {:?}, gl {:?}",
                vk.err(),
                gl.err()
            );
            eprintln!("render --driver: skipped: no Vulkan device or GL context");
            false
        }
    }
}

#[test]
fn vulkan_and_gl_renders_of_a_builtin_are_equal() {
    if !drivers_available() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("irkit-vpl-vk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut images = Vec::new();
    for driver in ["vulkan", "gl"] {
        let png = dir.join(format!("{driver}.png"));
        let out = irkit(&[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "--driver",
            driver,
            "-o",
            png.to_str().unwrap(),
            "--size",
            "6x4",
            "--uniform",
            "material.ambient_color=1,0.5,0,1",
            "--uniform",
            "material.intensity=1",
        ]);
        assert_eq!(out.status.code(), Some(0), "{driver}: {}", run_report(&out));
        let image = vpl_gl::Texture::from_png(&std::fs::read(&png).unwrap()).unwrap();
        assert_eq!((image.width, image.height), (6, 4));
        for pixel in image.levels[0].chunks(4) {
            assert_eq!(pixel, [255, 128, 0, 255], "{driver}");
        }
        images.push(image);
    }
    assert_eq!(images[0], images[1]);
    // A bad uniform path is a usage error on Vulkan too.
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "vulkan",
        "-o",
        dir.join("x.png").to_str().unwrap(),
        "--uniform",
        "material.nothing=1",
    ]);
    // An unknown uniform name is invalid input (exit 1, `VPL-UNIFORM-NAME`), on every driver.
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        run_report(&out).contains("VPL-UNIFORM-NAME"),
        "{}",
        run_report(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_driver_is_a_usage_error() {
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "metal",
        "-o",
        "x.png",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
}
