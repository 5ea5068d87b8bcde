//! Headless Chromium for browser tests: starts `chromedriver` on a free
//! loopback port (in its own process group) and opens a WebDriver session
//! with `fantoccini`, Chromium running headless with a fresh profile and
//! the flags it needs as root on a closed network. Dropping [`Browser`]
//! kills chromedriver's process group and every process that runs with
//! this browser's profile directory (Chromium's own helpers), by pid.
//!
//! [`Browser::start`] returns `None` (the caller skips) only when the
//! browser cannot start and `IRKIT_REQUIRE_BROWSER` is not `1`; with it
//! set (CI), a browser that cannot start fails the test.
#![allow(dead_code)] // each test crate uses a different subset

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary (`$IRKIT_CHROMIUM`, else Debian's).
pub fn chromium_path() -> String {
    std::env::var("IRKIT_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())
}

/// The chromedriver binary (`$IRKIT_CHROMEDRIVER`, else Debian's).
pub fn chromedriver_path() -> String {
    std::env::var("IRKIT_CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into())
}

/// Whether a browser that cannot start must fail the test.
pub fn browser_required() -> bool {
    std::env::var("IRKIT_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// A chromedriver process and one WebDriver session.
pub struct Browser {
    /// The session (closed by [`Browser::close`]; else its processes are
    /// killed on drop).
    pub client: fantoccini::Client,
    /// The runtime the session's futures run on.
    pub rt: tokio::runtime::Runtime,
    driver: Child,
    profile: PathBuf,
}

/// Kills the processes of a browser: chromedriver's process group, then
/// any process whose command line names the profile directory.
struct Reaper {
    pgid: u32,
    profile: PathBuf,
}

impl Reaper {
    fn reap(&self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.pgid)])
            .stderr(Stdio::null())
            .status();
        let needle = self.profile.to_string_lossy().into_owned();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
                    continue;
                };
                if String::from_utf8_lossy(&cmdline).contains(&needle) {
                    let _ = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .stderr(Stdio::null())
                        .status();
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(9515)
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session with a window
    /// of `width` × `height` CSS pixels. `None` when that fails and
    /// `IRKIT_REQUIRE_BROWSER` is unset (the reason is printed).
    pub fn start(width: u32, height: u32) -> Option<Browser> {
        match Browser::try_start(width, height) {
            Ok(b) => Some(b),
            Err(e) if !browser_required() => {
                eprintln!(
                    "skipping the browser test: {e} (set IRKIT_REQUIRE_BROWSER=1 to fail instead)"
                );
                None
            }
            Err(e) => panic!("IRKIT_REQUIRE_BROWSER=1 but the browser cannot start: {e}"),
        }
    }

    fn try_start(width: u32, height: u32) -> Result<Browser, String> {
        let (chromium, driver) = (chromium_path(), chromedriver_path());
        for p in [&chromium, &driver] {
            if !std::path::Path::new(p).exists() {
                return Err(format!("{p} is not installed"));
            }
        }
        let profile = std::env::temp_dir().join(tcc_host::random_id("irkit-chromium-"));
        std::fs::create_dir_all(&profile).map_err(|e| e.to_string())?;
        let port = free_port();
        let child = Command::new(&driver)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {driver}: {e}"))?;
        let reaper = Reaper {
            pgid: child.id(),
            profile: profile.clone(),
        };
        let fail = |mut child: Child, e: String| -> Result<Browser, String> {
            let _ = child.kill();
            let _ = child.wait();
            reaper.reap();
            Err(e)
        };
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => return fail(child, e.to_string()),
        };
        let args = [
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--hide-scrollbars".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.display()),
        ];
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({"binary": chromium, "args": args}),
        );
        let url = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            let attempt = rt.block_on(
                fantoccini::ClientBuilder::new(connector)
                    .capabilities(caps.clone())
                    .connect(&url),
            );
            match attempt {
                Ok(c) => break c,
                Err(e) if start.elapsed() > Duration::from_secs(30) => {
                    return fail(child, format!("no WebDriver session after 30 s: {e}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        };
        Ok(Browser {
            client,
            rt,
            driver: child,
            profile,
        })
    }

    /// Runs a future of the session to its end.
    pub fn run<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.rt.block_on(f)
    }

    /// Ends the session (Chromium quits), then the driver.
    pub fn close(self) {
        let client = self.client.clone();
        let _ = self.rt.block_on(client.close());
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        Reaper {
            pgid: self.driver.id(),
            profile: self.profile.clone(),
        }
        .reap();
    }
}
