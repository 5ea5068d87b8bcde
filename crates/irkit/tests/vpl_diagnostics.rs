//! `irkit vpl`: the mistakes a user makes by hand read in their own terms. Verifier messages
//! name the user's blocks, functions and types (also the other objects a message mentions: the
//! function that already has a name, a record type) and count instructions from 1; `--uniform` values are
//! checked against the declared type (never truncated) and unknown names get a suggestion;
//! uniforms not given follow one default rule that `render` lists; the canonical writer is
//! `canon` and never overwrites its input unasked; a GL draw that the driver cut off is an
//! error (exit 2), never an empty PNG. The human output of the mistakes is a golden file
//! (`tests/golden/vpl-diagnostics.txt`, `IRKIT_BLESS=1` rewrites it).

use std::path::PathBuf;
use std::process::{Command, Output};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/vpl-mistakes")
}

/// Runs irkit in the mistakes directory, so labels are the relative paths given.
fn vpl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .arg("vpl")
        .args(args)
        .current_dir(data())
        .output()
        .expect("irkit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-vpl-diag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn the_mistakes_read_as_the_golden_file() {
    let png = scratch("out.png");
    let png = png.to_str().unwrap();
    let runs: &[&[&str]] = &[
        &["check", "mixed_types.vpl", "unassigned.vpl"],
        &["check", "duplicate_name.vpl", "record_copy.vpl"],
        &[
            "check",
            "unknown_type.vpl",
            "unknown_instruction.vpl",
            "unknown_block.vpl",
        ],
        &["compile", "loop.vpl", "--target", "wgls", "-o", "never"],
        &[
            "render",
            "loop.vpl",
            "--driver",
            "cpu",
            "-o",
            png,
            "--uniform",
            "steps=2.5",
        ],
        &[
            "render",
            "loop.vpl",
            "--driver",
            "cpu",
            "-o",
            png,
            "--uniform",
            "steps=99999999999",
        ],
        &[
            "render",
            "loop.vpl",
            "--driver",
            "cpu",
            "-o",
            png,
            "--uniform",
            "stpes=3",
        ],
        &[
            "render", "loop.vpl", "--driver", "cpu", "-o", png, "--size", "4x4",
        ],
        &["check", "builtin:mesh-ambient-colour"],
        &["fmt", "loop.vpl", "-o", "loop.vpl"],
        &["canon", "loop.vpl", "-o", "loop.vpl"],
    ];
    let mut transcript = String::new();
    for args in runs {
        let run = vpl(args);
        let shown: Vec<&str> = args
            .iter()
            .map(|a| if *a == png { "OUT.png" } else { a })
            .collect();
        transcript.push_str(&format!(
            "$ irkit vpl {}\nexit {}\n{}\n",
            shown.join(" "),
            run.status.code().unwrap_or(-1),
            text(&run.stderr)
        ));
    }
    for leak in [
        "Some(",
        "Local(",
        "{ ",
        " of block b",
        "function f0",
        "function f1",
        "type entry",
    ] {
        assert!(!transcript.contains(leak), "`{leak}` in:\n{transcript}");
    }
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/vpl-diagnostics.txt");
    golden::assert_text(&golden, &transcript, "irkit vpl diagnostics");
}

#[test]
fn uniform_mistakes_have_codes_in_json() {
    let png = scratch("json.png");
    let run = vpl(&[
        "render",
        "loop.vpl",
        "--driver",
        "cpu",
        "-o",
        png.to_str().unwrap(),
        "--uniform",
        "steps=2.5",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(text(&run.stdout).trim()).unwrap();
    assert_eq!(v["code"], "VPL-UNIFORM-VALUE");
    assert_eq!(v["kind"], "semantic");
    assert_eq!(v["label"], "--uniform");
    let run = vpl(&[
        "render",
        "loop.vpl",
        "--driver",
        "cpu",
        "-o",
        png.to_str().unwrap(),
        "--uniform",
        "stpes=3",
        "--format",
        "json",
    ]);
    assert_eq!(run.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(text(&run.stdout).trim()).unwrap();
    assert_eq!(v["code"], "VPL-UNIFORM-NAME");
    assert_eq!(v["kind"], "name");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `steps`?"),
        "{v}"
    );
    assert!(!png.exists(), "nothing is drawn for a refused value");
}

/// Whether an OpenGL 4.2 core context exists here (`VPL_REQUIRE_GL=1` makes its absence fail).
fn gl_available() -> bool {
    let ok = vpl_gl::GlContext::new().is_ok();
    if !ok && std::env::var("VPL_REQUIRE_GL").is_ok_and(|v| v == "1") {
        panic!("VPL_REQUIRE_GL=1 but no OpenGL 4.2 core context");
    }
    ok
}

#[test]
fn a_gl_draw_the_driver_cuts_off_is_an_error_not_an_empty_image() {
    if !gl_available() {
        eprintln!("skipped: no OpenGL 4.2 core context");
        return;
    }
    let png = scratch("lost.png");
    let p = png.to_str().unwrap();
    // A short loop draws white on GL.
    let run = vpl(&[
        "render",
        "loop.vpl",
        "--driver",
        "gl",
        "-o",
        p,
        "--size",
        "8x8",
        "--uniform",
        "steps=100",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let image = vpl_gl::Texture::from_png(&std::fs::read(&png).unwrap()).unwrap();
    assert!(image.levels[0].chunks(4).all(|p| p == [255, 255, 255, 255]));
    std::fs::remove_file(&png).unwrap();
    // 100 000 000 iterations: llvmpipe stops the loop at its limit and would leave the pixels
    // unwritten; a GPU driver would reset the context. Either way: exit 2, no PNG.
    let run = vpl(&[
        "render",
        "loop.vpl",
        "--driver",
        "gl",
        "-o",
        p,
        "--size",
        "8x8",
        "--uniform",
        "steps=100000000",
    ]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the draw was lost"), "{stderr}");
    assert!(!png.exists(), "no image is written for a lost draw");
}
