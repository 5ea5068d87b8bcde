//! Headless Chromium for tests and tools, driven over WebDriver.
//!
//! [`Browser::start`] finds `chromedriver` and Chromium, starts the driver
//! in its own process group on a loopback port the driver itself chooses
//! (`--port=0`; the port is read from the driver's own announcement, so no
//! other process can take it between choosing and listening), and opens one
//! WebDriver session (through `fantoccini`) with a headless Chromium on a
//! fresh profile directory. The session then loads pages
//! ([`Browser::goto`]), runs JavaScript ([`Browser::execute`],
//! [`Browser::execute_async`], [`Browser::wait_for`]), reads a canvas's
//! pixels ([`Browser::canvas_pixels`]), takes PNG screenshots
//! ([`Browser::screenshot_png`]) and acts on elements the way a user does,
//! through WebDriver's element commands ([`Browser::click`],
//! [`Browser::clear`], [`Browser::type_text`], [`Browser::text`]) and its
//! actions API ([`Browser::pointer`]: real mouse moves, presses and
//! releases that the browser turns into trusted pointer events).
//!
//! [`Browser::quit`] (or dropping the value) ends the session, stops the
//! driver's whole process group (so no Chromium process outlives it) and
//! removes the profile directory. The API is blocking: each call runs on
//! the browser's own single-threaded Tokio runtime, so it must not be
//! called from inside another runtime's asynchronous task (call it from a
//! plain thread, or `spawn_blocking`).
//!
//! Every failure is a [`BrowserError`] with a stable [`BrowserError::code`];
//! callers that may skip when no browser exists test
//! [`BrowserError::is_unavailable`].
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

use base64::Engine as _;
use serde_json::Value;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Why a browser operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// A program was not found (`chromium`, `chromedriver`).
    #[error(
        "[browser-not-found] {what} not found (looked for {tried}); on Debian install `chromium` and `chromium-driver`"
    )]
    NotFound {
        /// Which program.
        what: &'static str,
        /// Where it was looked for.
        tried: String,
    },
    /// The driver process could not be started or exited early.
    #[error("[browser-driver] {0}")]
    Driver(String),
    /// The driver started, but no browser session could be created.
    #[error("[browser-session] chromedriver could not start Chromium: {0}")]
    Session(String),
    /// A WebDriver command failed.
    #[error("[browser-command] {0}")]
    Command(String),
    /// A script threw, or returned a value of an unexpected shape.
    #[error("[browser-script] {0}")]
    Script(String),
    /// An element command failed: no element matches the CSS selector, or
    /// the element cannot take the action (hidden, disabled, detached).
    #[error("[browser-element] `{selector}`: {message}")]
    Element {
        /// The CSS selector the command was given.
        selector: String,
        /// What the driver answered.
        message: String,
    },
    /// A wait ran out of time.
    #[error("[browser-timeout] {0}")]
    Timeout(String),
    /// A local I/O failure (profile directory, log file, runtime).
    #[error("[browser-io] {0}")]
    Io(String),
}

impl BrowserError {
    /// The stable code (the bracketed word of the message).
    pub fn code(&self) -> &'static str {
        match self {
            BrowserError::NotFound { .. } => "browser-not-found",
            BrowserError::Driver(_) => "browser-driver",
            BrowserError::Session(_) => "browser-session",
            BrowserError::Command(_) => "browser-command",
            BrowserError::Script(_) => "browser-script",
            BrowserError::Element { .. } => "browser-element",
            BrowserError::Timeout(_) => "browser-timeout",
            BrowserError::Io(_) => "browser-io",
        }
    }

    /// True when the error means no usable browser exists here (missing
    /// programs, or a driver/session that cannot start), as opposed to a
    /// failure of a page or a script.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            BrowserError::NotFound { .. } | BrowserError::Driver(_) | BrowserError::Session(_)
        )
    }
}

/// How to start the browser.
#[derive(Debug, Clone)]
pub struct Options {
    /// Window (viewport) width in CSS pixels.
    pub width: u32,
    /// Window height.
    pub height: u32,
    /// The Chromium executable; default `$IRKIT_CHROMIUM`, else the first of
    /// `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
    pub chromium: Option<PathBuf>,
    /// The chromedriver executable; default `$IRKIT_CHROMEDRIVER`, else
    /// `chromedriver` on `PATH`.
    pub chromedriver: Option<PathBuf>,
    /// How long the driver and the session may take to come up.
    pub startup_timeout: Duration,
    /// Limit for one `execute_async` script.
    pub script_timeout: Duration,
    /// Extra Chromium command-line switches.
    pub extra_args: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            width: 1280,
            height: 800,
            chromium: None,
            chromedriver: None,
            startup_timeout: Duration::from_secs(30),
            script_timeout: Duration::from_secs(30),
            extra_args: Vec::new(),
        }
    }
}

/// The switches every session gets: headless, no sandbox (tests run as
/// root), software WebGL (SwiftShader), and nothing that reaches the
/// network.
pub const CHROMIUM_ARGS: [&str; 13] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",
    "--use-angle=swiftshader",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
];

/// An RGBA8 image read from the page, rows top-down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pixels {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// RGBA8 bytes, rows top-down.
    pub rgba: Vec<u8>,
}

impl Pixels {
    /// The pixel at column `x`, row `y` (0 = top); `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = (y as usize * self.width as usize + x as usize) * 4;
        let mut p = [0u8; 4];
        p.copy_from_slice(self.rgba.get(at..at + 4)?);
        Some(p)
    }
}

/// A running headless Chromium with one WebDriver session.
pub struct Browser {
    runtime: tokio::runtime::Runtime,
    client: Option<fantoccini::Client>,
    driver: Option<Child>,
    profile: PathBuf,
}

fn find_program(
    explicit: Option<&Path>,
    var: &str,
    names: &[&str],
    what: &'static str,
) -> Result<PathBuf, BrowserError> {
    let mut tried = Vec::new();
    let candidates: Vec<PathBuf> = match (explicit, std::env::var_os(var)) {
        (Some(p), _) => vec![p.to_path_buf()],
        (None, Some(p)) => vec![PathBuf::from(p)],
        (None, None) => {
            let path = std::env::var_os("PATH").unwrap_or_default();
            std::env::split_paths(&path)
                .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
                .collect()
        }
    };
    for c in candidates {
        if c.is_file() {
            return Ok(c);
        }
        tried.push(c.display().to_string());
    }
    if tried.is_empty() {
        tried.push(format!("{} on PATH", names.join(", ")));
    }
    if explicit.is_none() {
        tried.push(format!("${var}"));
    }
    Err(BrowserError::NotFound {
        what,
        tried: tried.join(", "),
    })
}

/// The line chromedriver prints once it listens (`--port=0`: a port the
/// kernel chose for it, so nothing can take it in between).
const DRIVER_READY: &str = "started successfully on port ";

/// The port announced in chromedriver's output, once the whole line
/// (ending in `.`) has been written.
fn announced_port(log: &str) -> Option<u16> {
    let at = log.find(DRIVER_READY)? + DRIVER_READY.len();
    let rest = &log[at..];
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    if !rest[digits..].starts_with('.') {
        return None;
    }
    rest[..digits].parse().ok().filter(|p| *p != 0)
}

/// How a session start failed: a transport failure while the driver came
/// up (worth one retry with a fresh driver), or a real refusal.
enum LaunchError {
    /// The driver was unreachable or lost the connection before the
    /// session existed (the start race on a loaded machine).
    Transient(BrowserError),
    /// Anything else: a missing or failing program, or a refusal by the
    /// driver (`session not created`), which a retry would only repeat.
    Final(BrowserError),
}

impl From<BrowserError> for LaunchError {
    fn from(e: BrowserError) -> Self {
        LaunchError::Final(e)
    }
}

fn fresh_profile() -> Result<PathBuf, BrowserError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "irkit-browser-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| BrowserError::Io(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

fn log_tail(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().rev().take(8).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

fn command_error(e: fantoccini::error::CmdError) -> BrowserError {
    match e {
        fantoccini::error::CmdError::Standard(w) => {
            if w.error == fantoccini::error::ErrorStatus::JavascriptError {
                BrowserError::Script(w.message.to_string())
            } else if w.error == fantoccini::error::ErrorStatus::ScriptTimeout {
                BrowserError::Timeout(format!("script: {}", w.message))
            } else {
                BrowserError::Command(format!("{}: {}", w.error, w.message))
            }
        }
        other => BrowserError::Command(other.to_string()),
    }
}

/// Maps a failed element command: the element-shaped WebDriver errors
/// become [`BrowserError::Element`] naming `selector`, the rest as
/// [`command_error`].
fn element_error(selector: &str, e: fantoccini::error::CmdError) -> BrowserError {
    use fantoccini::error::ErrorStatus as S;
    match &e {
        fantoccini::error::CmdError::Standard(w)
            if matches!(
                w.error,
                S::NoSuchElement
                    | S::ElementNotInteractable
                    | S::ElementNotSelectable
                    | S::ElementClickIntercepted
                    | S::InvalidElementState
                    | S::InvalidSelector
                    | S::StaleElementReference
            ) =>
        {
            BrowserError::Element {
                selector: selector.to_string(),
                message: format!("{}: {}", w.error, w.message),
            }
        }
        _ => command_error(e),
    }
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session.
    pub fn start(options: &Options) -> Result<Browser, BrowserError> {
        let chromium = find_program(
            options.chromium.as_deref(),
            "IRKIT_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
            "Chromium",
        )?;
        let chromedriver = find_program(
            options.chromedriver.as_deref(),
            "IRKIT_CHROMEDRIVER",
            &["chromedriver"],
            "chromedriver",
        )?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BrowserError::Io(format!("cannot start a Tokio runtime: {e}")))?;
        let mut browser = Browser {
            runtime,
            client: None,
            driver: None,
            profile: fresh_profile()?,
        };
        match browser.launch(options, &chromium, &chromedriver) {
            Ok(()) => Ok(browser),
            Err(LaunchError::Final(e)) => Err(e),
            // One retry, with a fresh driver and profile, and only for a
            // transport failure while the session was being created.
            Err(LaunchError::Transient(first)) => {
                browser.shutdown_quietly();
                browser.profile = fresh_profile()?;
                match browser.launch(options, &chromium, &chromedriver) {
                    Ok(()) => Ok(browser),
                    Err(LaunchError::Final(e) | LaunchError::Transient(e)) => Err(
                        BrowserError::Session(format!("{e} (after a first attempt: {first})")),
                    ),
                }
            }
        }
    }

    /// Stops the driver and removes the profile, ignoring a failed close.
    fn shutdown_quietly(&mut self) {
        let _ = self.shutdown();
    }

    fn launch(
        &mut self,
        options: &Options,
        chromium: &Path,
        chromedriver: &Path,
    ) -> Result<(), LaunchError> {
        use std::os::unix::process::CommandExt as _;
        let log = self.profile.join("chromedriver.log");
        let log_file = std::fs::File::create(&log)
            .map_err(|e| BrowserError::Io(format!("cannot create {}: {e}", log.display())))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| BrowserError::Io(e.to_string()))?;
        let child = Command::new(chromedriver)
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            // Its own process group: quitting kills the driver and every
            // browser process it started, and nothing else.
            .process_group(0)
            .spawn()
            .map_err(|e| {
                BrowserError::Driver(format!("cannot run {}: {e}", chromedriver.display()))
            })?;
        self.driver = Some(child);
        let deadline = Instant::now() + options.startup_timeout;
        let port = loop {
            let mut text = String::new();
            if let Ok(mut f) = std::fs::File::open(&log) {
                let _ = f.read_to_string(&mut text);
            }
            if let Some(port) = announced_port(&text) {
                break port;
            }
            if let Some(child) = self.driver.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(BrowserError::Driver(format!(
                    "{} exited with {status} before listening:\n{}",
                    chromedriver.display(),
                    log_tail(&log)
                ))
                .into());
            }
            if Instant::now() > deadline {
                return Err(BrowserError::Driver(format!(
                    "{} did not announce its port within {:?}:\n{}",
                    chromedriver.display(),
                    options.startup_timeout,
                    log_tail(&log)
                ))
                .into());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut args: Vec<Value> = CHROMIUM_ARGS.iter().map(|a| Value::from(*a)).collect();
        args.push(format!("--user-data-dir={}", self.profile.join("profile").display()).into());
        args.push(format!("--window-size={},{}", options.width, options.height).into());
        args.extend(options.extra_args.iter().map(|a| Value::from(a.as_str())));
        let mut chrome = serde_json::Map::new();
        chrome.insert("binary".into(), chromium.display().to_string().into());
        chrome.insert("args".into(), Value::Array(args));
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), "chrome".into());
        caps.insert("goog:chromeOptions".into(), Value::Object(chrome));
        let url = format!("http://127.0.0.1:{port}");
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let timeout = options.startup_timeout;
        let connected = self.runtime.block_on(async {
            tokio::time::timeout(
                timeout,
                fantoccini::ClientBuilder::new(connector)
                    .capabilities(caps)
                    .connect(&url),
            )
            .await
        });
        let client = match connected {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => {
                use fantoccini::error::NewSessionError as N;
                let transient = matches!(e, N::Failed(_) | N::FailedC(_) | N::Lost(_));
                let error = BrowserError::Session(format!("{e}\n{}", log_tail(&log)));
                return Err(if transient {
                    LaunchError::Transient(error)
                } else {
                    LaunchError::Final(error)
                });
            }
            Err(_) => {
                return Err(LaunchError::Transient(BrowserError::Session(format!(
                    "no session within {timeout:?}\n{}",
                    log_tail(&log)
                ))));
            }
        };
        self.client = Some(client);
        let script = options.script_timeout;
        self.with_client(|c| async move {
            c.update_timeouts(fantoccini::wd::TimeoutConfiguration::new(
                Some(script),
                Some(Duration::from_secs(30)),
                Some(Duration::ZERO),
            ))
            .await
        })?;
        Ok(())
    }

    fn with_client<T, F, Fut>(&self, f: F) -> Result<T, BrowserError>
    where
        F: FnOnce(fantoccini::Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        let client = self
            .client
            .clone()
            .ok_or_else(|| BrowserError::Command("the session has ended".into()))?;
        self.runtime.block_on(f(client)).map_err(command_error)
    }

    /// Navigates to `url` and waits for the page's load event.
    pub fn goto(&self, url: &str) -> Result<(), BrowserError> {
        let url = url.to_string();
        self.with_client(|c| async move { c.goto(&url).await })
    }

    /// Runs `script` as a function body (`arguments[i]` are `args`) and
    /// returns its JSON result.
    pub fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, BrowserError> {
        let script = script.to_string();
        self.with_client(|c| async move { c.execute(&script, args).await })
    }

    /// Runs `script` as an asynchronous function body: it finishes by
    /// calling the callback passed as its last argument
    /// (`arguments[arguments.length - 1]`) with the result.
    pub fn execute_async(&self, script: &str, args: Vec<Value>) -> Result<Value, BrowserError> {
        let script = script.to_string();
        self.with_client(|c| async move { c.execute_async(&script, args).await })
    }

    /// Evaluates the expression `condition` every 50 ms until it is truthy
    /// and returns that value, or fails after `timeout`.
    pub fn wait_for(&self, condition: &str, timeout: Duration) -> Result<Value, BrowserError> {
        let script = format!("return ({condition});");
        let deadline = Instant::now() + timeout;
        loop {
            let v = self.execute(&script, Vec::new())?;
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return Ok(v);
            }
            if Instant::now() > deadline {
                return Err(BrowserError::Timeout(format!(
                    "`{condition}` was not true within {timeout:?} (last value {v})"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Reads the pixels of the canvas matched by the CSS `selector` (drawn
    /// into a 2D canvas, so a WebGL canvas needs `preserveDrawingBuffer`
    /// or to be read in the same task as its draw).
    pub fn canvas_pixels(&self, selector: &str) -> Result<Pixels, BrowserError> {
        let v = self.execute(
            r#"const c = document.querySelector(arguments[0]);
if (!c) { throw new Error('no canvas matches ' + arguments[0]); }
const t = document.createElement('canvas');
t.width = c.width; t.height = c.height;
const g = t.getContext('2d');
g.drawImage(c, 0, 0);
const d = g.getImageData(0, 0, c.width, c.height).data;
let s = '';
for (let i = 0; i < d.length; i += 0x8000) {
  s += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
}
return {width: c.width, height: c.height, rgba: btoa(s)};"#,
            vec![selector.into()],
        )?;
        pixels_from_json(&v)
    }

    /// Runs `action` on the first element matching the CSS `selector`
    /// (WebDriver "Find Element", then the element command; no implicit
    /// wait, so the element must exist already).
    fn on_element<T, F, Fut>(&self, selector: &str, action: F) -> Result<T, BrowserError>
    where
        F: FnOnce(fantoccini::elements::Element) -> Fut,
        Fut: std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    {
        let client = self
            .client
            .clone()
            .ok_or_else(|| BrowserError::Command("the session has ended".into()))?;
        self.runtime
            .block_on(async {
                let element = client.find(fantoccini::Locator::Css(selector)).await?;
                action(element).await
            })
            .map_err(|e| element_error(selector, e))
    }

    /// Clicks the element matching the CSS `selector` (WebDriver "Element
    /// Click": scrolled into view, clicked at its centre).
    pub fn click(&self, selector: &str) -> Result<(), BrowserError> {
        self.on_element(selector, |e| async move { e.click().await })
    }

    /// Empties the editable element (input, textarea, contenteditable)
    /// matching the CSS `selector` (WebDriver "Element Clear").
    pub fn clear(&self, selector: &str) -> Result<(), BrowserError> {
        self.on_element(selector, |e| async move { e.clear().await })
    }

    /// Types `text` into the element matching the CSS `selector` as key
    /// presses (WebDriver "Element Send Keys"): it gets the focus and the
    /// text is added at the caret, after what the field already holds.
    pub fn type_text(&self, selector: &str, text: &str) -> Result<(), BrowserError> {
        let text = text.to_string();
        self.on_element(selector, |e| async move { e.send_keys(&text).await })
    }

    /// The rendered text of the element matching the CSS `selector`
    /// (WebDriver "Get Element Text": what a user sees, so hidden parts are
    /// left out, unlike `textContent`).
    pub fn text(&self, selector: &str) -> Result<String, BrowserError> {
        self.on_element(selector, |e| async move { e.text().await })
    }

    /// A PNG screenshot of the viewport.
    pub fn screenshot_png(&self) -> Result<Vec<u8>, BrowserError> {
        self.with_client(|c| async move { c.screenshot().await })
    }

    /// The process id of chromedriver, which is also the id of the process
    /// group holding every browser process of this session.
    pub fn driver_pid(&self) -> Option<u32> {
        self.driver.as_ref().map(Child::id)
    }

    /// Ends the session and stops the driver and every browser process.
    pub fn quit(mut self) -> Result<(), BrowserError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), BrowserError> {
        let mut result = Ok(());
        if let Some(client) = self.client.take() {
            let closed = self.runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), client.close()).await
            });
            result = match closed {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(command_error(e)),
                Err(_) => Err(BrowserError::Timeout("closing the session".into())),
            };
        }
        if let Some(mut child) = self.driver.take() {
            stop_group(&mut child);
        }
        let _ = std::fs::remove_dir_all(&self.profile);
        result
    }
}

/// WebDriver's key value of the Control key (for [`Browser::chord`]).
pub const KEY_CONTROL: char = '\u{e009}';
/// WebDriver's key value of the Shift key.
pub const KEY_SHIFT: char = '\u{e008}';
/// WebDriver's key value of the Delete key.
pub const KEY_DELETE: char = '\u{e017}';

/// One step of a mouse gesture for [`Browser::pointer`], in CSS pixels
/// of the viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pointer {
    /// Move the mouse to (x, y) from the top-left corner of the viewport
    /// over `ms` milliseconds (0: at once; longer moves dispatch
    /// intermediate `pointermove` events).
    MoveTo {
        /// Horizontal position.
        x: f64,
        /// Vertical position.
        y: f64,
        /// Duration of the move in milliseconds.
        ms: u64,
    },
    /// Press the left button.
    Down,
    /// Release the left button.
    Up,
    /// Wait `ms` milliseconds.
    Pause {
        /// Duration in milliseconds.
        ms: u64,
    },
}

impl Pointer {
    /// `MoveTo` at once.
    pub fn to(x: f64, y: f64) -> Pointer {
        Pointer::MoveTo { x, y, ms: 0 }
    }

    /// A left-button drag from `from` to `to`: move, press, move over
    /// `ms` milliseconds, release.
    pub fn drag(from: (f64, f64), to: (f64, f64), ms: u64) -> Vec<Pointer> {
        vec![
            Pointer::to(from.0, from.1),
            Pointer::Down,
            Pointer::MoveTo {
                x: to.0,
                y: to.1,
                ms,
            },
            Pointer::Up,
        ]
    }

    fn action(self) -> fantoccini::actions::PointerAction {
        use fantoccini::actions::{MOUSE_BUTTON_LEFT, PointerAction as A};
        match self {
            // WebDriver takes whole pixels for viewport moves; rounding
            // keeps a centre computed from a fractional layout on the element.
            Pointer::MoveTo { x, y, ms } => A::MoveTo {
                duration: Some(Duration::from_millis(ms)),
                x: x.round(),
                y: y.round(),
            },
            Pointer::Down => A::Down {
                button: MOUSE_BUTTON_LEFT,
            },
            Pointer::Up => A::Up {
                button: MOUSE_BUTTON_LEFT,
            },
            Pointer::Pause { ms } => A::Pause {
                duration: Duration::from_millis(ms),
            },
        }
    }
}

impl Browser {
    /// Performs a mouse gesture through WebDriver's actions API ("Perform
    /// Actions"): the browser dispatches trusted pointer and mouse events
    /// to whatever element is under the pointer, as for a user's mouse.
    /// The input state is released afterwards, so a gesture that ends with
    /// the button down does not leak into the next one.
    pub fn pointer(&self, steps: &[Pointer]) -> Result<(), BrowserError> {
        use fantoccini::actions::{InputSource as _, MouseActions};
        let mut mouse = MouseActions::new("mouse".to_string());
        for step in steps {
            mouse = mouse.then(step.action());
        }
        self.with_client(|c| async move {
            c.perform_actions(mouse).await?;
            c.release_actions().await
        })
    }

    /// Presses `key` with `modifiers` held, through the actions API (key
    /// down for each modifier, then the key, then releases in reverse
    /// order), sent to the focused element. Keys are WebDriver key values:
    /// a character, or a code point such as [`KEY_CONTROL`], [`KEY_SHIFT`]
    /// or [`KEY_DELETE`].
    pub fn chord(&self, modifiers: &[char], key: char) -> Result<(), BrowserError> {
        use fantoccini::actions::{InputSource as _, KeyAction, KeyActions};
        let mut keys = KeyActions::new("keyboard".to_string());
        for &m in modifiers {
            keys = keys.then(KeyAction::Down { value: m });
        }
        keys = keys
            .then(KeyAction::Down { value: key })
            .then(KeyAction::Up { value: key });
        for &m in modifiers.iter().rev() {
            keys = keys.then(KeyAction::Up { value: m });
        }
        self.with_client(|c| async move {
            c.perform_actions(keys).await?;
            c.release_actions().await
        })
    }
}

/// Decodes `{width, height, rgba: base64}` as written by the page helpers.
pub fn pixels_from_json(v: &Value) -> Result<Pixels, BrowserError> {
    let field = |k: &str| {
        v.get(k)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| BrowserError::Script(format!("pixel result has no `{k}`: {v}")))
    };
    let (width, height) = (field("width")?, field("height")?);
    let rgba = v
        .get("rgba")
        .and_then(Value::as_str)
        .ok_or_else(|| BrowserError::Script("pixel result has no `rgba`".into()))
        .and_then(|s| {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| BrowserError::Script(format!("pixel data is not base64: {e}")))
        })?;
    if rgba.len() as u64 != u64::from(width) * u64::from(height) * 4 {
        return Err(BrowserError::Script(format!(
            "{} pixel bytes for {width}x{height}",
            rgba.len()
        )));
    }
    Ok(Pixels {
        width,
        height,
        rgba,
    })
}

/// Terminates the process group led by `child`, then reaps the child.
// std has no process-group signal, so this is the crate's one FFI call (kill(2)).
#[allow(unsafe_code)]
fn stop_group(child: &mut Child) {
    let Ok(pid) = i32::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    // SAFETY: kill(2) on the process group this crate created for the
    // driver (`process_group(0)` makes its id the group id).
    unsafe {
        libc::kill(-pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above; SIGKILL for whatever ignored SIGTERM.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let _ = child.wait();
    // Processes the driver started are reaped by init once they die; wait
    // (bounded) until the group is gone so callers see no leftovers.
    let deadline = Instant::now() + Duration::from_secs(3);
    // SAFETY: signal 0 only probes whether the group still exists.
    while unsafe { libc::kill(-pid, 0) } == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_programs_are_not_found_errors() {
        let options = Options {
            chromium: Some(PathBuf::from("/nonexistent/chromium")),
            ..Options::default()
        };
        let Err(e) = Browser::start(&options) else {
            panic!("a missing Chromium started")
        };
        assert_eq!(e.code(), "browser-not-found");
        assert!(e.is_unavailable());
        assert!(e.to_string().contains("/nonexistent/chromium"), "{e}");
    }

    #[test]
    fn a_driver_that_exits_at_once_is_a_driver_error() {
        let Some(chromium) = ["/bin/sh", "/usr/bin/sh"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
        else {
            return;
        };
        let options = Options {
            // Any existing file passes the lookup; the driver fails first.
            chromium: Some(PathBuf::from(chromium)),
            chromedriver: Some(PathBuf::from("/bin/false")),
            ..Options::default()
        };
        if !Path::new("/bin/false").is_file() {
            return;
        }
        let Err(e) = Browser::start(&options) else {
            panic!("/bin/false served WebDriver")
        };
        assert_eq!(e.code(), "browser-driver", "{e}");
        assert!(e.is_unavailable());
        assert!(e.to_string().contains("exited"), "{e}");
    }

    #[test]
    fn element_failures_name_the_selector() {
        use fantoccini::error::{CmdError, ErrorStatus, WebDriver};
        let missing = element_error(
            "#nope",
            CmdError::Standard(WebDriver::new(
                ErrorStatus::NoSuchElement,
                "no such element",
            )),
        );
        assert_eq!(missing.code(), "browser-element");
        assert!(!missing.is_unavailable());
        assert!(missing.to_string().contains("`#nope`"), "{missing}");
        let thrown = element_error(
            "#x",
            CmdError::Standard(WebDriver::new(ErrorStatus::JavascriptError, "boom")),
        );
        assert_eq!(thrown.code(), "browser-script");
    }

    #[test]
    fn the_port_is_read_from_the_drivers_announcement() {
        let full = "Starting ChromeDriver 156 on port 0\nOnly local connections are allowed.\n\
                    ChromeDriver was started successfully on port 38003.\n";
        assert_eq!(announced_port(full), Some(38003));
        // A line still being written is not an announcement yet.
        assert_eq!(announced_port("was started successfully on port 380"), None);
        assert_eq!(announced_port("Starting ChromeDriver on port 0\n"), None);
        assert_eq!(announced_port("started successfully on port 0."), None);
        assert_eq!(announced_port("started successfully on port 99999."), None);
    }

    #[test]
    fn two_browsers_started_at_once_each_get_their_own_driver() {
        // Skips where no browser is installed; with one, both sessions must
        // come up on distinct driver ports and run a script.
        let starts: Vec<_> = (0..2)
            .map(|_| std::thread::spawn(|| Browser::start(&Options::default())))
            .collect();
        let mut browsers = Vec::new();
        for s in starts {
            match s.join().expect("start thread") {
                Ok(b) => browsers.push(b),
                Err(e) if e.code() == "browser-not-found" => return,
                Err(e) => panic!("{e}"),
            }
        }
        let pids: Vec<_> = browsers.iter().map(Browser::driver_pid).collect();
        assert_ne!(pids[0], pids[1]);
        for b in &browsers {
            assert_eq!(b.execute("return 6 * 7", vec![]).unwrap(), Value::from(42));
        }
    }

    #[test]
    fn pixel_results_are_checked() {
        let ok = serde_json::json!({"width": 1, "height": 1, "rgba": "AQIDBA=="});
        let p = pixels_from_json(&ok).unwrap();
        assert_eq!(p.pixel(0, 0), Some([1, 2, 3, 4]));
        assert_eq!(p.pixel(1, 0), None);
        let short = serde_json::json!({"width": 2, "height": 1, "rgba": "AQIDBA=="});
        assert_eq!(
            pixels_from_json(&short).unwrap_err().code(),
            "browser-script"
        );
        assert!(pixels_from_json(&serde_json::json!({})).is_err());
    }
}
