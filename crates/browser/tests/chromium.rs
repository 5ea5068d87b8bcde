//! Starts the real headless Chromium: a page with a WebGL 2 canvas, a
//! script, pixels read back, a screenshot, and no process left after
//! quitting. Skipped (printed) only when Chromium cannot start and
//! `VPL_REQUIRE_GL` is unset.

use browser::{Browser, Options};
use std::time::Duration;

fn start(test: &str) -> Option<Browser> {
    let options = Options {
        width: 320,
        height: 200,
        ..Options::default()
    };
    match Browser::start(&options) {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(
                !e.is_unavailable() || std::env::var_os("VPL_REQUIRE_GL").is_none(),
                "{test}: {e} (VPL_REQUIRE_GL is set)"
            );
            assert!(e.is_unavailable(), "{test}: {e}");
            eprintln!("{test}: skipped: {e}");
            None
        }
    }
}

const PAGE: &str = "data:text/html,<canvas id=c width=4 height=2></canvas><script>\
const gl = document.getElementById('c').getContext('webgl2', {preserveDrawingBuffer: true});\
gl.clearColor(0, 1, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT); window.done = gl.getParameter(gl.VERSION);\
</script>";

#[test]
fn a_webgl2_page_renders_runs_scripts_and_quits_cleanly() {
    let Some(browser) = start("chromium") else {
        return;
    };
    browser.goto(PAGE).unwrap();
    let version = browser
        .wait_for("window.done", Duration::from_secs(10))
        .unwrap();
    assert!(
        version.as_str().unwrap_or("").starts_with("WebGL 2.0"),
        "{version}"
    );
    assert_eq!(
        browser
            .execute("return arguments[0] + 1;", vec![41.into()])
            .unwrap(),
        42
    );
    let later = browser
        .execute_async(
            "const done = arguments[arguments.length - 1]; setTimeout(() => done('late'), 10);",
            Vec::new(),
        )
        .unwrap();
    assert_eq!(later, "late");
    let thrown = browser
        .execute("throw new Error('boom');", Vec::new())
        .unwrap_err();
    assert_eq!(thrown.code(), "browser-script", "{thrown}");
    assert!(thrown.to_string().contains("boom"), "{thrown}");
    let pixels = browser.canvas_pixels("#c").unwrap();
    assert_eq!((pixels.width, pixels.height), (4, 2));
    assert_eq!(pixels.pixel(3, 1), Some([0, 255, 0, 255]));
    let png = browser.screenshot_png().unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let pid = browser.driver_pid().unwrap() as i32;
    browser.quit().unwrap();
    // SAFETY: signal 0 only probes whether the group still exists.
    let alive = unsafe { libc::kill(-pid, 0) } == 0;
    assert!(!alive, "processes of group {pid} outlived quit");
}

#[test]
fn dropping_the_browser_also_stops_its_processes() {
    let Some(browser) = start("chromium drop") else {
        return;
    };
    let pid = browser.driver_pid().unwrap() as i32;
    drop(browser);
    // SAFETY: as above.
    let alive = unsafe { libc::kill(-pid, 0) } == 0;
    assert!(!alive, "processes of group {pid} outlived drop");
}
