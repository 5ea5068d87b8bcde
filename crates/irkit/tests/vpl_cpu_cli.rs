//! `irkit vpl render --driver cpu` end to end: the CPU reference executor
//! draws with the GL driver's options, uniforms, textures and PNG, needs
//! no GPU stack, and matches the GL driver's PNG where GL exists.

mod common;
use common::run_report;

use std::path::PathBuf;
use std::process::{Command, Output};

fn irkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("irkit runs")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("irkit-vpl-cpu-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pixels(path: &PathBuf) -> (u32, u32, Vec<u8>) {
    let t = vpl_gl::Texture::from_png(&std::fs::read(path).unwrap()).unwrap();
    (t.width, t.height, t.levels[0].clone())
}

#[test]
fn cpu_render_draws_uniforms_textures_and_attributes() {
    let dir = temp_dir("draw");
    let png = dir.join("mesh.png");
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "cpu",
        "-o",
        png.to_str().unwrap(),
        "--size",
        "6x4",
        "--uniform",
        "material.ambient_color=1,0.5,0,1",
        "--uniform",
        "material.intensity=1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", run_report(&out));
    let (w, h, rgba) = pixels(&png);
    assert_eq!((w, h), (6, 4));
    for pixel in rgba.chunks(4) {
        assert_eq!(pixel, [255, 128, 0, 255]);
    }

    let texture = dir.join("texture.png");
    let source = vpl_gl::Image {
        width: 1,
        height: 1,
        rgba: vec![200, 100, 50, 255],
    };
    std::fs::write(&texture, source.to_png().unwrap()).unwrap();
    let out_png = dir.join("textured.png");
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:texture-vertex-ambient-color",
        "--driver",
        "cpu",
        "-o",
        out_png.to_str().unwrap(),
        "--size",
        "2x2",
        "--texture",
        texture.to_str().unwrap(),
        "--attribute",
        "2=1,0.5,1,1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", run_report(&out));
    let (_, _, rgba) = pixels(&out_png);
    for pixel in rgba.chunks(4) {
        assert_eq!(pixel, [200, 50, 50, 255]);
    }
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "cpu",
        "-o",
        png.to_str().unwrap(),
        "--uniform",
        "missing=1",
    ]);
    // An unknown uniform name is invalid input (exit 1, `VPL-UNIFORM-NAME`), on every driver.
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        run_report(&out).contains("VPL-UNIFORM-NAME"),
        "{}",
        run_report(&out)
    );
}

#[test]
fn cpu_and_gl_write_the_same_png() {
    if vpl_gl::GlContext::new().is_err() {
        eprintln!("cpu vs gl: skipped: no OpenGL 4.2 core context");
        return;
    }
    let dir = temp_dir("same");
    for (program, extra) in [
        ("builtin:texture-ambient-color", vec![]),
        (
            "builtin:vertex-ambient-color",
            vec!["--attribute", "1=0.2,0.4,0.6,1"],
        ),
        ("examples/vpl/loop_call.vpl", vec![]),
    ] {
        let mut images = Vec::new();
        for driver in ["cpu", "gl"] {
            let png = dir.join(format!("{driver}.png"));
            let mut args = vec![
                "vpl",
                "render",
                program,
                "--driver",
                driver,
                "-o",
                png.to_str().unwrap(),
                "--size",
                "32x24",
            ];
            args.extend(extra.iter().copied());
            let out = irkit(&args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{program} {driver}: {}",
                run_report(&out)
            );
            images.push(pixels(&png));
        }
        assert!(
            images[0] == images[1],
            "{program}: the CPU and GL PNGs differ"
        );
    }
}
