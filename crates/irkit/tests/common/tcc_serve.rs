//! `irkit tcc serve` as a child process on a loopback port, for the TCC
//! end-to-end tests (`tcc_host_service`, `tcc_serve_ops`, `tcc_dashboard`):
//! a scratch directory, the server with its URL, a plain HTTP request.
#![allow(dead_code)] // each test crate uses a different subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A scratch directory, removed on drop.
pub struct Dir(pub PathBuf);

impl Dir {
    /// A fresh directory under the system's temporary directory.
    pub fn new(prefix: &str) -> Dir {
        let p = std::env::temp_dir().join(tcc_host::random_id(prefix));
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `irkit tcc serve`, killed on drop.
pub struct Server {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Sends SIGTERM and waits (at most 30 s) for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let st = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        self.wait_exit()
    }

    /// Waits (at most 30 s) for the exit status.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Starts `irkit tcc serve --listen 127.0.0.1:0 --database DATABASE
/// --providers PROVIDERS EXTRA…` and waits for its `listening on URL`
/// line. The token, crash-hook and log variables of the caller's
/// environment are removed; `env` then sets (`Some`) or removes (`None`)
/// variables. Its stderr goes to `log` when given, else nowhere.
pub fn serve(
    database: &str,
    providers: &Path,
    extra: &[&str],
    env: &[(&str, Option<&str>)],
    log: Option<&Path>,
) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_irkit"));
    cmd.args(["tcc", "serve", "--listen", "127.0.0.1:0", "--database"])
        .arg(database)
        .arg("--providers")
        .arg(providers)
        .args(extra)
        .env_remove("IRKIT_TCC_TOKEN")
        .env_remove("TCC_CRASH_AT")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    match log {
        Some(l) => cmd.stderr(std::fs::File::create(l).unwrap()),
        None => cmd.stderr(Stdio::null()),
    };
    let mut child = cmd.spawn().expect("irkit tcc serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    let addr = url.trim_start_matches("http://").to_string();
    Server { child, url, addr }
}

/// One HTTP request (`Authorization: Bearer TOKEN` when given); the status
/// and the body.
pub fn request(
    url: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    token: Option<&str>,
) -> Result<(u16, Vec<u8>), String> {
    let auth = token.map(|t| format!("Bearer {t}"));
    // The service admits a POST only as JSON (tcc_host::admission).
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    let r = tcc_host::http::request(
        method,
        &format!("{url}{path}"),
        &headers,
        body,
        Duration::from_secs(10),
    )?;
    Ok((r.status, r.body))
}

/// Runs the `irkit` binary as a client, without the environment's token
/// or server (each test names its own).
pub fn irkit(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .env_remove("IRKIT_TCC_TOKEN")
        .env_remove("IRKIT_TCC_SERVER")
        .output()
        .expect("irkit runs")
}

/// [`irkit`], which must exit 0; its standard output.
pub fn ok(args: &[&str]) -> String {
    let o = irkit(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "irkit {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}
