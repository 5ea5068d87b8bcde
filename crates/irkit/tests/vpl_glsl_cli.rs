//! `irkit vpl glsl|render` end to end.

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
        .join(format!("irkit-vpl-glsl-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn glsl_writes_shaders_and_reflection_equal_to_the_goldens() {
    let dir = temp_dir("goldens");
    let d = dir.to_str().unwrap();
    for (input, stem) in [
        ("examples/vpl/loop_call.vpl", "loop_call"),
        ("builtin:mesh-ambient-color", "mesh-ambient-color"),
        (
            "crates/vpl/programs/texture-ambient-color.vpl",
            "texture-ambient-color",
        ),
    ] {
        let out = irkit(&["vpl", "glsl", input, "-o", d]);
        assert_eq!(out.status.code(), Some(0), "{}", run_report(&out));
        for ext in ["vert", "frag", "reflect.json"] {
            let written = std::fs::read_to_string(dir.join(format!("{stem}.{ext}"))).unwrap();
            let golden =
                std::fs::read_to_string(root().join(format!("crates/vpl/tests/glsl/{stem}.{ext}")))
                    .unwrap();
            assert_eq!(written, golden, "{stem}.{ext}");
        }
    }
    let reflection: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("mesh-ambient-color.reflect.json")).unwrap(),
    )
    .unwrap();
    let material = &reflection["uniforms"][0];
    assert_eq!(material["block"], "vpl_Block0");
    assert_eq!(material["block_binding"], 0);
    assert_eq!(material["std140"]["size"], 32);
    assert_eq!(material["std140"]["members"][1]["offset"], 16);
}

const BOOL_VARYING: &str = r#"(module 1
  (types (type V void) (type B bool) (type C vector float 4))
  (uniforms)
  (vertex ve
    (interface
      (out pos "pos" C -1 position)
      (out flag "flag" B -1 none))
    (functions
      (function ve "v" V (parameters) (registers (register r0 C))
        (block b (construct r0 (float 1.0)) (store (stage pos) r0)
          (store (stage flag) (bool true)) (return)))))
  (fragment fe
    (interface (out color "color" C 0 fragment_color))
    (functions
      (function fe "f" V (parameters) (registers (register r0 C))
        (block b (construct r0 (float 1.0)) (store (stage color) r0) (return))))))
"#;

#[test]
fn glsl_reports_target_restrictions_with_file_positions() {
    let dir = temp_dir("target");
    let input = dir.join("flag.vpl");
    std::fs::write(&input, BOOL_VARYING).unwrap();
    let out = irkit(&[
        "vpl",
        "glsl",
        input.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    let line = String::from_utf8(out.stdout).unwrap();
    let diagnostic: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(diagnostic["kind"], "target");
    assert_eq!(diagnostic["code"], "interface-type");
    assert_eq!(diagnostic["line"], 7);
    assert_eq!(diagnostic["column"], 7);
    assert!(!dir.join("flag.vert").exists());

    let out = irkit(&[
        "vpl",
        "glsl",
        input.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[interface-type]"), "{stderr}");
    assert!(stderr.contains("flag.vpl:7:7"), "{stderr}");
}

#[test]
fn glsl_and_render_reject_bad_usage() {
    let out = irkit(&["vpl", "glsl", "builtin:no-such-program"]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mesh-ambient-color"));
    let out = irkit(&["vpl", "glsl", "no/such/file.vpl"]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
    let png = temp_dir("usage").join("x.png");
    let png = png.to_str().unwrap();
    for args in [
        &[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "-o",
            png,
            "--size",
            "0x4",
        ][..],
        &[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "-o",
            png,
            "--size",
            "big",
        ],
        &[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "-o",
            png,
            "--uniform",
            "material.intensity=x",
        ],
        &[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "-o",
            png,
            "--texture",
            "Cargo.toml",
        ],
    ] {
        let out = irkit(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", run_report(&out));
    }
    // An unknown uniform name is invalid input (exit 1, with its code), not a usage error.
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "-o",
        png,
        "--uniform",
        "missing=1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        run_report(&out).contains("VPL-UNIFORM-NAME"),
        "{}",
        run_report(&out)
    );
    // So is a value that does not fit the uniform's declared type.
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "-o",
        png,
        "--uniform",
        "material.intensity=1,2",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        run_report(&out).contains("VPL-UNIFORM-VALUE"),
        "{}",
        run_report(&out)
    );
    let out = irkit(&[
        "vpl",
        "render",
        "examples/vpl/loop_call.vpl",
        "-o",
        png,
        "--texture",
        "Cargo.toml",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
}

#[test]
fn render_writes_a_png_of_the_program() {
    if vpl_gl::GlContext::new().is_err() {
        eprintln!("render: skipped: no OpenGL 4.2 core context");
        return;
    }
    let dir = temp_dir("render");
    let png = dir.join("mesh.png");
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
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
    let image = vpl_gl::Texture::from_png(&std::fs::read(&png).unwrap()).unwrap();
    assert_eq!((image.width, image.height), (6, 4));
    for pixel in image.levels[0].chunks(4) {
        assert_eq!(pixel, [255, 128, 0, 255]);
    }

    // A texture from a PNG file, modulated by a constant vertex colour.
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
    let image = vpl_gl::Texture::from_png(&std::fs::read(&out_png).unwrap()).unwrap();
    for pixel in image.levels[0].chunks(4) {
        assert!(
            pixel[0].abs_diff(200) <= 1 && pixel[1].abs_diff(50) <= 1 && pixel[2].abs_diff(50) <= 1,
            "{pixel:?}"
        );
    }
}

#[test]
fn glsl_reads_standard_input_and_reports_reader_errors_like_check() {
    use std::io::Write as _;
    use std::process::Stdio;
    let dir = temp_dir("stdin");
    let run = |input: &[u8], json: bool| {
        let mut args = vec!["vpl", "glsl", "-", "-o", dir.to_str().unwrap()];
        if json {
            args.extend(["--format", "json"]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let source = std::fs::read(root().join("examples/vpl/minimal.vpl")).unwrap();
    let out = run(&source, false);
    assert_eq!(out.status.code(), Some(0), "{}", run_report(&out));
    assert!(dir.join("stdin.vert").exists() && dir.join("stdin.frag").exists());
    let out = run(b"(module 1\n  (types\n    (type T vector float 9))\n", true);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    let diagnostic: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(diagnostic["label"], "<stdin>");
    assert_ne!(diagnostic["kind"], "target");
    assert_eq!(diagnostic["line"], 3);
}

#[test]
fn compile_glsl_420_writes_the_glsl_verb_s_files() {
    let dir = temp_dir("compile");
    let d = dir.to_str().unwrap();
    for (input, stem) in [
        ("examples/vpl/loop_call.vpl", "loop_call"),
        ("builtin:mesh-ambient-color", "mesh-ambient-color"),
    ] {
        let out = irkit(&["vpl", "compile", input, "--target", "glsl-420", "-o", d]);
        assert_eq!(out.status.code(), Some(0), "{}", run_report(&out));
        for ext in ["vert", "frag", "reflect.json"] {
            let written = std::fs::read_to_string(dir.join(format!("{stem}.{ext}"))).unwrap();
            let golden =
                std::fs::read_to_string(root().join(format!("crates/vpl/tests/glsl/{stem}.{ext}")))
                    .unwrap();
            assert_eq!(written, golden, "{stem}.{ext}");
        }
    }
}

#[test]
fn compile_refuses_unknown_targets_as_usage_errors() {
    let dir = temp_dir("compile-targets");
    let d = dir.to_str().unwrap();
    let out = irkit(&[
        "vpl",
        "compile",
        "examples/vpl/minimal.vpl",
        "--target",
        "glsl-110",
        "-o",
        d,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown target `glsl-110`"), "{stderr}");
    assert!(
        stderr.contains("spirv, wgsl, glsl-es-300, msl, hlsl"),
        "{stderr}"
    );
    assert!(!dir.join("minimal.vert").exists());
}

#[test]
fn compile_writes_every_naga_target_with_its_reflection() {
    let dir = temp_dir("compile-naga");
    let d = dir.to_str().unwrap();
    for (target, files) in [
        ("spirv", &["loop_call.spv"][..]),
        ("wgsl", &["loop_call.wgsl"][..]),
        (
            "glsl-es-300",
            &["loop_call.es.vert", "loop_call.es.frag"][..],
        ),
        ("msl", &["loop_call.metal"][..]),
        ("hlsl", &["loop_call.hlsl"][..]),
    ] {
        let out = irkit(&[
            "vpl",
            "compile",
            "examples/vpl/loop_call.vpl",
            "--target",
            target,
            "-o",
            d,
        ]);
        assert_eq!(out.status.code(), Some(0), "{target}: {}", run_report(&out));
        for f in files {
            assert!(dir.join(f).exists(), "{target}: {f}");
        }
        let reflection: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("loop_call.{target}.reflect.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(reflection["target"], target);
        assert_eq!(reflection["entry_points"][1]["outputs"][0]["location"], 0);
    }
    if Command::new("spirv-val").arg("--version").output().is_ok() {
        let out = Command::new("spirv-val")
            .args(["--target-env", "vulkan1.1"])
            .arg(dir.join("loop_call.spv"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", run_report(&out));
    }
}

#[test]
fn compile_refuses_for_a_naga_target_what_glsl_refuses_with_file_positions() {
    // Uniforms lower now (issue 24); a Boolean varying is refused by every
    // target with the GLSL restriction's code and position.
    let dir = temp_dir("compile-naga-refused");
    let input = dir.join("flag.vpl");
    std::fs::write(&input, BOOL_VARYING).unwrap();
    for target in ["wgsl", "glsl-es-300", "spirv"] {
        let out = irkit(&[
            "vpl",
            "compile",
            input.to_str().unwrap(),
            "--target",
            target,
            "-o",
            dir.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
        let diagnostic: serde_json::Value =
            serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
        assert_eq!(diagnostic["kind"], "target");
        assert_eq!(diagnostic["code"], "interface-type");
        assert_eq!(diagnostic["line"], 7);
        assert_eq!(diagnostic["column"], 7);
    }
    assert!(!dir.join("flag.wgsl").exists());
}

#[test]
fn compile_reports_target_restrictions_with_file_positions() {
    let dir = temp_dir("compile-target-error");
    let input = dir.join("flag.vpl");
    std::fs::write(&input, BOOL_VARYING).unwrap();
    let out = irkit(&[
        "vpl",
        "compile",
        input.to_str().unwrap(),
        "--target",
        "glsl-420",
        "-o",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    let diagnostic: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(diagnostic["kind"], "target");
    assert_eq!(diagnostic["code"], "interface-type");
    assert_eq!(diagnostic["line"], 7);
    assert_eq!(diagnostic["column"], 7);
}
