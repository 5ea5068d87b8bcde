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

/// Whether any process of the process group `pid` still exists.
// std has no process-group probe: kill(2) with signal 0.
#[allow(unsafe_code)]
fn group_alive(pid: i32) -> bool {
    // SAFETY: signal 0 sends nothing; it only probes whether the group exists.
    unsafe { libc::kill(-pid, 0) == 0 }
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
    assert!(!group_alive(pid), "processes of group {pid} outlived quit");
}

#[test]
fn dropping_the_browser_also_stops_its_processes() {
    let Some(browser) = start("chromium drop") else {
        return;
    };
    let pid = browser.driver_pid().unwrap() as i32;
    drop(browser);
    assert!(!group_alive(pid), "processes of group {pid} outlived drop");
}

/// A form driven through WebDriver's element commands: the page's own
/// handlers see the typed text and the click.
const FORM: &str = "data:text/html,<input id=name value=old><input id=hidden style='display:none'>\
<button id=go onclick=\"document.getElementById('out').textContent = 'sent ' + document.getElementById('name').value\">go</button>\
<p id=out>nothing yet</p><p id=shy style='display:none'>secret</p>";

#[test]
fn element_commands_type_clear_and_click_like_a_user() {
    let Some(browser) = start("chromium elements") else {
        return;
    };
    browser.goto(FORM).unwrap();
    assert_eq!(browser.text("#out").unwrap(), "nothing yet");
    // Send Keys adds at the caret, after what the field holds.
    browser.type_text("#name", "er").unwrap();
    let value = "return document.getElementById('name').value;";
    assert_eq!(browser.execute(value, Vec::new()).unwrap(), "older");
    browser.clear("#name").unwrap();
    assert_eq!(browser.execute(value, Vec::new()).unwrap(), "");
    browser.type_text("#name", "approved").unwrap();
    browser.click("#go").unwrap();
    assert_eq!(browser.text("#out").unwrap(), "sent approved");
    // Rendered text: a hidden element shows none.
    assert_eq!(browser.text("#shy").unwrap(), "");

    let missing = browser.click("#nothing-here").unwrap_err();
    assert_eq!(missing.code(), "browser-element", "{missing}");
    assert!(!missing.is_unavailable());
    assert!(missing.to_string().contains("#nothing-here"), "{missing}");
    let hidden = browser.type_text("#hidden", "x").unwrap_err();
    assert_eq!(hidden.code(), "browser-element", "{hidden}");
    let bad = browser.clear("p[").unwrap_err();
    assert_eq!(bad.code(), "browser-element", "{bad}");
    browser.quit().unwrap();
}
