//! `irkit vpl render --driver webgl` and `irkit vpl playground` end to end.
//! The WebGL render is compared with the GL and Vulkan renders of the
//! same program;
//! browser-dependent checks skip only when Chromium cannot start and
//! `VPL_REQUIRE_GL` is unset.

mod common;
use common::run_report;

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

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

fn unavailable(out: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&out.stderr);
    out.status.code() == Some(2)
        && [
            "[browser-not-found]",
            "[browser-driver]",
            "[browser-session]",
        ]
        .iter()
        .any(|c| stderr.contains(c))
}

#[test]
fn webgl_render_writes_the_same_png_as_gl_and_vulkan() {
    let dir = std::env::temp_dir().join(format!("irkit-vpl-web-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let webgl = dir.join("webgl.png");
    let gl = dir.join("gl.png");
    let args = |driver: &str, out: &PathBuf| {
        irkit(&[
            "vpl",
            "render",
            "builtin:mesh-ambient-color",
            "--driver",
            driver,
            "--size",
            "8x4",
            "--uniform",
            "material.ambient_color=0.4,0.8,0.2,1",
            "--uniform",
            "material.intensity=0.5",
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let out = args("webgl", &webgl);
    if unavailable(&out) && std::env::var_os("VPL_REQUIRE_GL").is_none() {
        eprintln!("webgl render: skipped:\n{}", run_report(&out));
        return;
    }
    assert!(out.status.success(), "{}", run_report(&out));
    let image = vpl_gl::Texture::from_png(&std::fs::read(&webgl).unwrap()).unwrap();
    assert_eq!((image.width, image.height), (8, 4));
    for p in image.levels[0].chunks_exact(4) {
        assert!(
            p.iter()
                .zip([51u8, 102, 26, 128])
                .all(|(a, e)| a.abs_diff(e) <= 1),
            "{p:?}"
        );
    }
    for driver in ["gl", "vulkan"] {
        let out = args(driver, &gl);
        if out.status.success() {
            let native = vpl_gl::Texture::from_png(&std::fs::read(&gl).unwrap()).unwrap();
            assert_eq!(
                native.levels, image.levels,
                "WebGL and {driver} pixels differ"
            );
        } else {
            assert!(
                std::env::var_os("VPL_REQUIRE_GL").is_none(),
                "{}",
                run_report(&out)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn webgl_render_reports_bad_input_before_starting_a_browser() {
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "webgl",
        "--uniform",
        "material.nothing=1",
        "-o",
        "/nonexistent/x.png",
    ]);
    // An unknown uniform name is invalid input (exit 1, `VPL-UNIFORM-NAME`), on every driver.
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        run_report(&out).contains("VPL-UNIFORM-NAME"),
        "{}",
        run_report(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("material.nothing"),
        "{}",
        run_report(&out)
    );
    let out = irkit(&[
        "vpl",
        "render",
        "builtin:mesh-ambient-color",
        "--driver",
        "dx9",
        "-o",
        "x.png",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
    // An invalid file is a diagnostic (exit 1).
    let dir = std::env::temp_dir().join(format!("irkit-vpl-web-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.vpl");
    std::fs::write(&bad, "(module 1\n  (types\n  oops").unwrap();
    let out = irkit(&[
        "vpl",
        "render",
        bad.to_str().unwrap(),
        "--driver",
        "webgl",
        "-o",
        "x.png",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", run_report(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.vpl:3:"),
        "{}",
        run_report(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn get(addr: &str, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn playground_serves_its_page_and_the_builtin_programs() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["vpl", "playground", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("VPL playground: ")
        .unwrap_or_else(|| panic!("{line:?}"));
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let page = get(&addr, "/");
    let programs = get(&addr, "/api/programs");
    let script = get(&addr, "/webgl.js");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<title>VPL playground</title>"), "{page}");
    assert!(programs.contains("\"mesh-ambient-color\""), "{programs}");
    assert!(script.contains("function vplRender"), "{script}");
    let out = irkit(&["vpl", "playground", "--listen", "not-an-address"]);
    assert_eq!(out.status.code(), Some(2), "{}", run_report(&out));
}
