//! The playground in headless Chromium: load a built-in program and check
//! the preview's centre pixel, move uniform sliders, edit it into an
//! invalid module and find the diagnostic (list entry, highlight and
//! gutter mark) at the right line, fix it differently and see the pixels
//! change, switch the code panes through every target, and write a
//! screenshot.
//!
//! The screenshot is `docs/vpl/playground.png`, rewritten only with
//! `IRKIT_BLESS=1`; otherwise the new one must have the same size, not be
//! blank, and differ from the blessed one in at most a quarter of its
//! pixels (fonts and anti-aliasing may move a little).
//!
//! Skipped (printed) only when Chromium cannot start and `VPL_REQUIRE_GL`
//! is unset.

use browser::{Browser, Options};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use vpl_web::Server;

/// A bound for a page that never gets there, not a speed goal (loaded CI machines).
const WAIT: Duration = Duration::from_secs(60);

fn start(test: &str) -> Option<(Server, Browser)> {
    let server = Server::start(([127, 0, 0, 1], 0).into()).unwrap();
    let options = Options {
        width: 1280,
        height: 1000,
        ..Options::default()
    };
    match Browser::start(&options) {
        Ok(b) => Some((server, b)),
        Err(e) if e.is_unavailable() && std::env::var_os("VPL_REQUIRE_GL").is_none() => {
            eprintln!("{test}: skipped: {e}");
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

fn updates(browser: &Browser) -> u64 {
    browser
        .execute(
            "return window.vplPlayground ? window.vplPlayground.updates : 0;",
            Vec::new(),
        )
        .unwrap()
        .as_u64()
        .unwrap_or(0)
}

/// Replaces the editor's text as typing would (an `input` event) and waits
/// for the compile-and-draw round it starts.
fn edit(browser: &Browser, text: &str) {
    let before = updates(browser);
    browser
        .execute(
            "const s = document.getElementById('source'); s.value = arguments[0];\
             s.dispatchEvent(new Event('input', {bubbles: true}));",
            vec![text.into()],
        )
        .unwrap();
    browser
        .wait_for(&format!("window.vplPlayground.updates > {before}"), WAIT)
        .unwrap();
}

fn centre(browser: &Browser) -> [u8; 4] {
    let p = browser.canvas_pixels("#preview").unwrap();
    assert_eq!((p.width, p.height), (256, 256));
    p.pixel(128, 128).unwrap()
}

fn source(browser: &Browser) -> String {
    browser
        .execute(
            "return document.getElementById('source').value;",
            Vec::new(),
        )
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// The 1-based line of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the program"));
    text[..at].matches('\n').count() as u64 + 1
}

fn close(a: [u8; 4], b: [u8; 4], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tolerance)
}

/// The centre pixel of the last preview as WebGL read it back.
fn rendered_centre(browser: &Browser) -> [u8; 4] {
    let v = browser
        .execute("return window.vplPlayground.lastImage;", Vec::new())
        .unwrap();
    let p = browser::pixels_from_json(&v).unwrap();
    p.pixel(128, 128).unwrap()
}

/// Moves the slider of `path`'s component `component` to `value`.
fn slide(browser: &Browser, path: &str, component: u32, value: f64) {
    browser
        .execute(
            "const i = document.querySelector(`#controls input[data-path=\"${arguments[0]}\"][data-component=\"${arguments[1]}\"]`);\
             if (!i) { throw new Error('no slider for ' + arguments[0]); }\
             i.value = arguments[2]; i.dispatchEvent(new Event('input'));",
            vec![path.into(), component.into(), value.into()],
        )
        .unwrap();
}

fn choose_program(browser: &Browser, name: &str) {
    let before = updates(browser);
    browser
        .execute(
            "const s = document.getElementById('program'); s.value = arguments[0];\
             s.dispatchEvent(new Event('change'));",
            vec![name.into()],
        )
        .unwrap();
    browser
        .wait_for(&format!("window.vplPlayground.updates > {before}"), WAIT)
        .unwrap();
}

#[test]
fn edit_diagnose_fix_and_switch_targets() {
    let Some((server, browser)) = start("playground") else {
        return;
    };
    browser
        .goto(&server.url("/?program=mesh-ambient-color"))
        .unwrap();
    browser
        .wait_for(
            "window.vplPlayground && window.vplPlayground.updates >= 1",
            WAIT,
        )
        .unwrap();
    let status = browser
        .execute(
            "return document.getElementById('status').textContent;",
            Vec::new(),
        )
        .unwrap();
    assert_eq!(status, "valid");
    // Slider defaults: ambient colour (1, 1, 1, 1), intensity 1.
    let first = rendered_centre(&browser);
    assert_eq!(first, [255, 255, 255, 255]);
    assert!(
        close(centre(&browser), first, 1),
        "the canvas shows {:?}",
        centre(&browser)
    );
    slide(&browser, "material.intensity", 0, 0.5);
    assert!(
        close(rendered_centre(&browser), [128, 128, 128, 128], 1),
        "{:?}",
        rendered_centre(&browser)
    );
    slide(&browser, "material.ambient_color", 0, 0.0);
    assert!(
        close(rendered_centre(&browser), [0, 128, 128, 128], 1),
        "{:?}",
        rendered_centre(&browser)
    );
    let before_edit = rendered_centre(&browser);

    // Break one instruction (an undeclared register) and find the
    // diagnostic at its line.
    let text = source(&browser);
    let good = "(multiply r0 r0 r1)";
    let line = line_of(&text, good);
    edit(&browser, &text.replace(good, "(multiply r0 r0 r9)"));
    let found = browser
        .execute(
            "const d = document.querySelector('#diagnostics li.diagnostic');\
             const m = document.querySelector('#backdrop mark');\
             const g = document.querySelector('#gutter span.error');\
             return {line: d && Number(d.dataset.line), text: d && d.textContent,\
                     mark: m && Number(m.dataset.line), marked: m && m.textContent,\
                     gutter: g && Number(g.dataset.line),\
                     status: document.getElementById('status').textContent};",
            Vec::new(),
        )
        .unwrap();
    assert_eq!(found["line"], line, "{found}");
    assert_eq!(found["mark"], line, "{found}");
    assert_eq!(found["gutter"], line, "{found}");
    assert_eq!(found["status"], "invalid", "{found}");
    assert!(
        found["text"]
            .as_str()
            .unwrap()
            .contains(&format!(":{line}:")),
        "{found}"
    );
    assert!(
        !found["marked"].as_str().unwrap_or("").is_empty(),
        "{found}"
    );
    // The preview keeps the last image while the text is invalid.
    assert_eq!(rendered_centre(&browser), before_edit);

    // Fix it differently: a quarter of the colour, whatever the intensity.
    edit(
        &browser,
        &text.replace(good, "(multiply r0 r0 (float 0.25))"),
    );
    let diagnostics: Value = browser
        .execute(
            "return document.querySelectorAll('#diagnostics li.diagnostic').length;",
            Vec::new(),
        )
        .unwrap();
    assert_eq!(diagnostics, 0);
    let fixed = rendered_centre(&browser);
    assert_ne!(fixed, before_edit, "the preview did not change");
    assert!(close(fixed, [64, 64, 64, 64], 1), "centre pixel {fixed:?}");

    // Every target's code in the right-hand pane.
    for (target, marker) in [
        ("glsl-420", "#version 420 core"),
        ("glsl-es-300", "#version 300 es"),
        ("spirv", "; SPIR-V binary"),
        ("wgsl", "@builtin(position)"),
        ("msl", "#include <metal_stdlib>"),
        ("hlsl", "SV_Target0"),
    ] {
        let code = browser
            .execute(
                "const s = document.getElementById('target-right'); s.value = arguments[0];\
                 s.dispatchEvent(new Event('change'));\
                 const p = document.getElementById('code-right');\
                 return [p.dataset.target, p.textContent];",
                vec![target.into()],
            )
            .unwrap();
        assert_eq!(code[0], target);
        let text = code[1].as_str().unwrap();
        assert!(text.contains(marker), "{target}: {marker:?} not in\n{text}");
    }
    let left = browser
        .execute(
            "return document.getElementById('code-left').textContent;",
            Vec::new(),
        )
        .unwrap();
    assert!(left.as_str().unwrap().contains("#version 420 core"));

    // The playground's own example: red = x / 256, green = y / 256 (GL's
    // y, upwards), blue 0.5.
    choose_program(&browser, "gradient");
    assert!(
        close(rendered_centre(&browser), [128, 127, 128, 255], 1),
        "{:?}",
        rendered_centre(&browser)
    );

    // The screenshot, with a built-in program (its sampler shows the
    // default checkerboard).
    browser
        .execute(
            "document.getElementById('target-right').value = 'glsl-es-300';\
             document.getElementById('target-right').dispatchEvent(new Event('change'));",
            Vec::new(),
        )
        .unwrap();
    choose_program(&browser, "texture-ambient-color");
    let png = browser.screenshot_png().unwrap();
    browser.quit().unwrap();
    check_screenshot(&png);
}

fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0u8; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let rgb: Vec<u8> = buffer[..frame.buffer_size()]
        .chunks_exact(channels)
        .flat_map(|p| [p[0], p[1.min(channels - 1)], p[2.min(channels - 1)]])
        .collect();
    (frame.width, frame.height, rgb)
}

fn check_screenshot(png_bytes: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/vpl/playground.png");
    let (w, h, rgb) = decode(png_bytes);
    let distinct: std::collections::HashSet<&[u8]> = rgb.chunks_exact(3).collect();
    assert!(
        distinct.len() > 50,
        "the screenshot is nearly blank ({} colours)",
        distinct.len()
    );
    if golden::blessing() {
        std::fs::write(&path, png_bytes).unwrap();
        return;
    }
    let blessed = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless it with IRKIT_BLESS=1)", path.display()));
    let (bw, bh, brgb) = decode(&blessed);
    assert_eq!((w, h), (bw, bh), "screenshot size changed");
    let differing = rgb
        .chunks_exact(3)
        .zip(brgb.chunks_exact(3))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 16))
        .count();
    let total = (w * h) as usize;
    assert!(
        differing * 4 <= total,
        "{differing} of {total} pixels differ from {}; look at the page and re-bless with IRKIT_BLESS=1",
        path.display()
    );
}

#[test]
fn the_compile_endpoint_refuses_malformed_requests() {
    let server = Server::start(([127, 0, 0, 1], 0).into()).unwrap();
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    let body = "{not json";
    write!(
        stream,
        "POST /api/compile HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("bad-request"), "{answer}");
}

/// The `path`s of the slider controls on the page.
fn slider_paths(browser: &Browser) -> Vec<String> {
    let v = browser
        .execute(
            "return Array.from(document.querySelectorAll('#controls input')).map(i => i.dataset.path);",
            Vec::new(),
        )
        .unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn open_a_file_name_pasted_code_and_drop_stale_sliders() {
    let Some((server, browser)) = start("playground-open") else {
        return;
    };
    browser
        .goto(&server.url("/?program=mesh-ambient-color"))
        .unwrap();
    browser
        .wait_for(
            "window.vplPlayground && window.vplPlayground.updates >= 1",
            WAIT,
        )
        .unwrap();
    assert_eq!(browser.text("#label").unwrap(), "mesh-ambient-color.vpl");
    assert!(slider_paths(&browser).contains(&"material.intensity".to_string()));

    // Pasted (edited) code is no longer the built-in: diagnostics name it
    // `untitled.vpl`, and a failed program keeps no sliders.
    let text = source(&browser);
    edit(
        &browser,
        &text.replace("(multiply r0 r0 r1)", "(multiply r0 r0 r9)"),
    );
    assert_eq!(browser.text("#label").unwrap(), "untitled.vpl");
    let diagnostic = browser.text("#diagnostics li.diagnostic").unwrap();
    assert!(diagnostic.contains("untitled.vpl:"), "{diagnostic}");
    assert!(slider_paths(&browser).is_empty(), "stale sliders stayed");

    // Open a file from disk: its name labels it and its own sliders appear.
    let program = vpl::programs::Program::from_name("mesh-ambient-color").unwrap();
    let dir = std::env::temp_dir().join(format!("vpl-web-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mine.vpl");
    let broken = String::from_utf8(program.source().to_vec())
        .unwrap()
        .replacen("(return)", "(branch nowhere)", 1);
    std::fs::write(&file, &broken).unwrap();
    let before = updates(&browser);
    browser.type_text("#open", file.to_str().unwrap()).unwrap();
    browser
        .wait_for(&format!("window.vplPlayground.updates > {before}"), WAIT)
        .unwrap();
    assert_eq!(browser.text("#label").unwrap(), "mine.vpl");
    assert_eq!(source(&browser), broken);
    let diagnostic = browser.text("#diagnostics li.diagnostic").unwrap();
    assert!(diagnostic.contains("mine.vpl:"), "{diagnostic}");
    // Fixing the opened file keeps its name.
    edit(&browser, std::str::from_utf8(program.source()).unwrap());
    assert_eq!(browser.text("#label").unwrap(), "mine.vpl");
    assert!(
        !slider_paths(&browser).is_empty(),
        "the opened program's sliders"
    );
    let _ = std::fs::remove_dir_all(&dir);
    browser.quit().unwrap();
}
