//! The TCC client packages' own suites, run against this build's `irkit`
//! (issue 34): `clients/python` with pytest (client, worker, test helper,
//! the 200-order end-to-end run with killed workers and host) and
//! `clients/typescript` with `node --test` (the same), each end-to-end test
//! also on two PostgreSQL nodes, in a scratch schema of its own when the
//! test database is reachable; and `clients/typescript`'s `.d.ts` files
//! type-checked by `tsc` against a typed usage file; and `clients/python`
//! installed with pip from its folder. Each fails this test
//! when it fails. A missing tool (the venv or the TypeScript compiler of
//! `scripts/install-tcc-clients.sh`, or Node.js >= 20) skips with a
//! message, unless `IRKIT_REQUIRE_CLIENTS=1` (set by `.ci/run`), where it
//! fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const IRKIT: &str = env!("CARGO_BIN_EXE_irkit");

/// Longest a suite may run (each takes ≈ 15 s on an idle machine).
const SUITE_LIMIT: Duration = Duration::from_secs(300);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var("IRKIT_REQUIRE_CLIENTS").is_ok_and(|v| v == "1")
}

/// Skips (or fails under `IRKIT_REQUIRE_CLIENTS=1`) with `why`.
fn unavailable(why: &str) {
    assert!(!required(), "IRKIT_REQUIRE_CLIENTS=1 but {why}");
    eprintln!("skipping: {why} (set IRKIT_REQUIRE_CLIENTS=1 to fail instead)");
}

/// Runs `cmd` to its end (killed past [`SUITE_LIMIT`]); panics with its
/// output unless it succeeded.
fn run_suite(name: &str, mut cmd: Command) {
    let dir = std::env::temp_dir().join(tcc_host::random_id("clients-"));
    std::fs::create_dir_all(&dir).unwrap();
    let out_path = dir.join("out.txt");
    let out = std::fs::File::create(&out_path).unwrap();
    let mut child = cmd
        .env("IRKIT_BIN", IRKIT)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("IRKIT_TCC_TOKEN")
        .env_remove("TCC_CRASH_AT")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("{name}: cannot start: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if started.elapsed() > SUITE_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    match status {
        Some(s) if s.success() => eprintln!("{name}: passed in {:?}", started.elapsed()),
        Some(s) => panic!("{name} failed ({s}):\n{text}"),
        None => panic!("{name} ran past {SUITE_LIMIT:?}:\n{text}"),
    }
}

/// The clients' venv interpreter, if it has `modules` (a Python import
/// list); else skips (or fails) and answers `None`.
fn clients_python(modules: &str) -> Option<PathBuf> {
    let python = std::env::var_os("IRKIT_TCC_CLIENTS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/tcc-clients-venv/bin/python"));
    let has = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if has {
        return Some(python);
    }
    unavailable(&format!(
        "{} with {modules} is missing (run scripts/install-tcc-clients.sh)",
        python.display()
    ));
    None
}

#[test]
fn the_python_client_suite_passes() {
    let Some(python) = clients_python("pytest") else {
        return;
    };
    // The end-to-end test's PostgreSQL run (two nodes) gets a scratch
    // schema, dropped after the suite.
    let schema = tcc_host::test_support::ScratchSchema::create("t_clients").unwrap();
    let mut cmd = Command::new(python);
    cmd.args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(root().join("clients/python"));
    if let Some(s) = &schema {
        cmd.env("IRKIT_CLIENTS_PG_URL", s.url());
    }
    run_suite("clients/python (pytest)", cmd);
    drop(schema);
}

/// `clients/python` is pip-installable from its folder: a copy of the
/// folder is built with the venv's setuptools, offline (no build
/// isolation, no index), into a scratch directory, where the package
/// imports from, carries `py.typed`, and declares no dependency (beyond
/// its `test` extra).
#[test]
fn the_python_package_installs_from_its_folder() {
    let Some(python) = clients_python("setuptools") else {
        return;
    };
    let check = "import importlib.metadata as m, pathlib, sys, irkit_tcc\n\
        p = pathlib.Path(irkit_tcc.__file__).resolve().parent\n\
        assert p.parent == pathlib.Path(sys.argv[1]).resolve(), p\n\
        assert (p / 'py.typed').is_file()\n\
        deps = [r for r in m.requires('irkit-tcc') or [] if 'extra ==' not in r]\n\
        assert not deps, deps\n\
        assert hasattr(irkit_tcc, 'Client') and hasattr(irkit_tcc, 'Worker')\n\
        print('irkit-tcc', m.version('irkit-tcc'))";
    let script = r#"set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$PKG" "$work/pkg"
rm -rf "$work/pkg/build" "$work/pkg"/src/*.egg-info
"$PY" -m pip install -q --disable-pip-version-check --no-build-isolation --no-index --no-deps \
  --target "$work/site" "$work/pkg"
cd "$work" && PYTHONPATH="$work/site" "$PY" -c "$CHECK" "$work/site"
"#;
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .env("PY", &python)
        .env("PKG", root().join("clients/python"))
        .env("CHECK", check)
        .env_remove("PYTHONPATH");
    run_suite("pip install clients/python", cmd);
}

/// The major version of `node`, if it runs.
fn node_major() -> Option<u32> {
    let out = Command::new("node").arg("--version").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    v.trim_start_matches('v').split('.').next()?.parse().ok()
}

/// Skips (or fails) unless Node.js >= 20 runs; true when it does.
fn node_20_or_unavailable() -> bool {
    match node_major() {
        Some(m) if m >= 20 => true,
        Some(m) => {
            unavailable(&format!("Node.js {m} is older than 20"));
            false
        }
        None => {
            unavailable("Node.js (`node`) is not installed");
            false
        }
    }
}

#[test]
fn the_typescript_client_suite_passes() {
    if !node_20_or_unavailable() {
        return;
    }
    // The end-to-end test's PostgreSQL run (two nodes) gets a scratch
    // schema of its own, dropped after the suite.
    let schema = tcc_host::test_support::ScratchSchema::create("t_clients_ts").unwrap();
    let mut cmd = Command::new("node");
    cmd.args(["--test", "test/"])
        .current_dir(root().join("clients/typescript"));
    if let Some(s) = &schema {
        cmd.env("IRKIT_CLIENTS_PG_URL", s.url());
    }
    run_suite("clients/typescript (node --test)", cmd);
    drop(schema);
}

/// `clients/typescript`'s declarations (`src/*.d.ts`) type-check, through
/// the package's own `exports` map, against `test_types/usage.ts`: an
/// application, a worker and a test written against them, with misuses
/// marked `@ts-expect-error` that the types must refuse (a declaration
/// too loose leaves a directive unused, which `tsc` reports). The
/// compiler is the one `scripts/install-tcc-clients.sh` puts under
/// `target/tcc-clients-ts` (or `IRKIT_TCC_CLIENTS_TSC`).
#[test]
fn the_typescript_declarations_type_check() {
    if !node_20_or_unavailable() {
        return;
    }
    let tsc = std::env::var_os("IRKIT_TCC_CLIENTS_TSC")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/tcc-clients-ts/node_modules/typescript/bin/tsc"));
    if !tsc.is_file() {
        return unavailable(&format!(
            "the TypeScript compiler {} is missing (run scripts/install-tcc-clients.sh)",
            tsc.display()
        ));
    }
    let mut cmd = Command::new("node");
    cmd.arg(&tsc)
        .args(["-p", "test_types/tsconfig.json"])
        .current_dir(root().join("clients/typescript"));
    run_suite("clients/typescript (tsc -p test_types)", cmd);
}

/// The fenced blocks of `docs/tcc/clients.md`: `(info string, text)`.
fn doc_blocks(doc: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in doc.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// Every snippet of `docs/tcc/clients.md`, in order: its `file=NAME`
/// blocks written to a scratch directory, its `sh` blocks run there as one
/// script (a real `irkit tcc serve`, the Python and the Node.js workers,
/// both applications, both test files), with the port 7420 replaced by a
/// free one everywhere.
#[test]
fn the_clients_walkthrough_runs() {
    let python = std::env::var_os("IRKIT_TCC_CLIENTS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/tcc-clients-venv/bin/python"));
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() && !String::from_utf8_lossy(&o.stdout).starts_with("v1"));
    let py_ok = Command::new(&python)
        .args(["-c", "import pytest"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_ok || !py_ok {
        return unavailable("the walkthrough needs the clients' venv (pytest) and Node.js >= 20");
    }
    let doc = std::fs::read_to_string(root().join("docs/tcc/clients.md")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let dir = std::env::temp_dir().join(tcc_host::random_id("walkthrough-"));
    std::fs::create_dir_all(dir.join("node_modules/@irkit")).unwrap();
    std::os::unix::fs::symlink(
        root().join("clients/typescript").canonicalize().unwrap(),
        dir.join("node_modules/@irkit/tcc"),
    )
    .unwrap();
    let mut script =
        String::from("set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n");
    let (mut files, mut shells) = (0, 0);
    for (info, text) in doc_blocks(&doc) {
        let text = text.replace("7420", &port);
        if let Some(name) = info
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        {
            std::fs::write(dir.join(name), text).unwrap();
            files += 1;
        } else if info == "sh" {
            script.push_str(&text);
            shells += 1;
        }
    }
    assert!(
        files >= 8 && shells >= 4,
        "{files} files, {shells} shell blocks"
    );
    let venv_bin = python.parent().unwrap().to_path_buf();
    let irkit_dir = Path::new(IRKIT).parent().unwrap().to_path_buf();
    let path = std::env::join_paths([irkit_dir, venv_bin].into_iter().chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(&script)
        .current_dir(&dir)
        .env("PATH", path)
        .env("PYTHONPATH", root().join("clients/python/src"))
        .env("IRKIT_TCC_SERVER", format!("http://127.0.0.1:{port}"));
    run_suite("docs/tcc/clients.md walkthrough", cmd);
    let _ = std::fs::remove_dir_all(&dir);
}
