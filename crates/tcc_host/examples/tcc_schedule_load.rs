//! The schedule load run of `scripts/tcc-load.sh schedules` (issue 35):
//! `--schedules` (1 000) schedules every second for `--seconds` (60) on two
//! `irkit tcc serve` nodes of a fresh PostgreSQL schema; node b is
//! SIGKILLed halfway and started again (same node id). Then it waits until
//! every schedule's cursor has passed the end time, pauses them all, and
//! counts from the store: the ticks due (each schedule's ticks from the
//! first after its creation to the end), the ticks started (executions
//! `NAME@TICK` with a tick in that range), lost (due, not started),
//! doubled (a tick counted started more than once: the schedules'
//! `ticks_started` against their executions) and the start lag (execution
//! created minus tick due). Exits 1 when a tick was lost or doubled.
//!
//! `tcc_schedule_load --irkit PATH [--schedules 1000] [--seconds 60]`

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::{Value as J, json};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tcc_host::test_support::ScratchSchema;

struct Node {
    child: Child,
    url: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_node(irkit: &Path, database: &str, providers: &Path, id: &str) -> Result<Node, String> {
    let mut child = Command::new(irkit)
        .args(["tcc", "serve", "--listen", "127.0.0.1:0", "--workers", "8"])
        .args([
            "--lease-ms",
            "3000",
            "--database",
            database,
            "--node-id",
            id,
        ])
        .arg("--providers")
        .arg(providers)
        .env_remove("IRKIT_TCC_TOKEN")
        .env_remove("TCC_CRASH_AT")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", irkit.display()))?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| format!("node {id}: unexpected first line {line:?}"))?
        .to_string();
    Ok(Node { child, url })
}

fn post(url: &str, path: &str, body: &J) -> Result<J, String> {
    let r = tcc_host::http::request(
        "POST",
        &format!("{url}{path}"),
        &[("Content-Type", "application/json")],
        Some(body.to_string().as_bytes()),
        Duration::from_secs(30),
    )?;
    let j: J = serde_json::from_slice(&r.body).map_err(|e| e.to_string())?;
    if !(200..300).contains(&r.status) {
        return Err(format!("POST {path}: {} {j}", r.status));
    }
    Ok(j)
}

fn text(schema: &ScratchSchema, sql: &str) -> Result<String, String> {
    Ok(schema.query_text(sql)?.unwrap_or_default())
}

fn run() -> Result<bool, String> {
    let mut irkit = PathBuf::from("target/release/irkit");
    let (mut schedules, mut seconds) = (1_000usize, 60u64);
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or_else(|| format!("{k} needs a value"));
        match k.as_str() {
            "--irkit" => irkit = PathBuf::from(v()?),
            "--schedules" => schedules = v()?.parse().map_err(|e| format!("{k}: {e}"))?,
            "--seconds" => seconds = v()?.parse().map_err(|e| format!("{k}: {e}"))?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let schema = ScratchSchema::create("t_sched_load")?
        .ok_or("PostgreSQL not reachable (scripts/start-postgres.sh)")?;
    let database = schema.url();
    let dir = std::env::temp_dir().join(tcc_host::random_id("tcc-sched-load-"));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let providers = dir.join("providers.toml");
    std::fs::write(&providers, "").map_err(|e| e.to_string())?;
    let a = start_node(&irkit, &database, &providers, "a")?;
    let mut b = Some(start_node(&irkit, &database, &providers, "b")?);
    // `tick(x)`: returns its argument.
    let program = dir.join("tick.json");
    let bytes = common::artifact(&[(
        "run",
        1,
        1,
        json!([{"op": "LoadLocal", "local": 0}, {"op": "Return"}]),
    )]);
    std::fs::write(&program, bytes).map_err(|e| e.to_string())?;
    let out = Command::new(&irkit)
        .args(["tcc", "register"])
        .arg(&program)
        .args(["--name", "tick", "--server", &a.url])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "register: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut first: HashMap<String, i64> = HashMap::new();
    let created = Instant::now();
    for i in 0..schedules {
        let name = format!("s{i:05}");
        let j = post(
            &a.url,
            "/v1/schedules",
            &json!({"name": name, "program": "tick", "every": "1s", "args": [i],
                    "overlap": "allow", "catchup": "all"}),
        )?;
        first.insert(name, j["next_due_ms"].as_i64().ok_or("no next_due_ms")?);
    }
    let create_s = created.elapsed().as_secs_f64();
    let t0 = tcc_host::now_ms();
    let sleep_until = |t: i64| {
        let now = tcc_host::now_ms();
        if t > now {
            std::thread::sleep(Duration::from_millis((t - now) as u64));
        }
    };
    sleep_until(t0 + seconds as i64 * 500);
    // SIGKILL node b (its pass may be mid-transaction), start it again.
    drop(b.take());
    let killed_at = tcc_host::now_ms() - t0;
    let b = start_node(&irkit, &database, &providers, "b")?;
    sleep_until(t0 + seconds as i64 * 1000);
    let end = tcc_host::now_ms();
    // Every schedule handled up to the end, then all paused.
    let waited = Instant::now();
    loop {
        let behind: i64 = text(
            &schema,
            &format!("SELECT count(*) FROM schedules WHERE next_due_ms <= {end}"),
        )?
        .parse()
        .map_err(|e| format!("count: {e}"))?;
        if behind == 0 {
            break;
        }
        if waited.elapsed() > Duration::from_secs(120) {
            return Err(format!(
                "{behind} schedules still behind the end after 120 s"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let settle_s = waited.elapsed().as_secs_f64();
    schema.execute("UPDATE schedules SET paused = TRUE")?;
    // Passes that read a schedule before the pause may still commit.
    std::thread::sleep(Duration::from_millis(1_000));
    let executions = text(
        &schema,
        "SELECT string_agg(id || '=' || created_ms, ',') FROM executions WHERE id LIKE 's%@%'",
    )?;
    let counted = text(&schema, "SELECT sum(ticks_started) FROM schedules")?;
    let counted: i64 = counted.parse().map_err(|e| format!("sum: {e}"))?;
    let mut started: HashMap<&str, HashSet<i64>> = HashMap::new();
    let mut lags = Vec::new();
    let mut total = 0i64;
    for item in executions.split(',').filter(|s| !s.is_empty()) {
        let (id, created_ms) = item.split_once('=').ok_or("bad row")?;
        let (name, tick) = id.split_once('@').ok_or("bad id")?;
        let tick: i64 = tick.parse().map_err(|e| format!("{id}: {e}"))?;
        let created_ms: i64 = created_ms.parse().map_err(|e| format!("{id}: {e}"))?;
        total += 1;
        if tick <= end {
            lags.push(created_ms - tick);
        }
        started.entry(name).or_default().insert(tick);
    }
    let (mut due, mut on, mut lost, mut early) = (0i64, 0i64, 0i64, 0i64);
    for (name, &f) in &first {
        let got = started.get(name.as_str());
        let mut t = f;
        while t <= end {
            due += 1;
            if got.is_some_and(|g| g.contains(&t)) {
                on += 1;
            } else {
                lost += 1;
            }
            t += 1_000;
        }
        early += got.map_or(0, |g| g.iter().filter(|&&t| t < f).count() as i64);
    }
    let doubled = counted - total;
    lags.sort_unstable();
    let pct = |p: f64| {
        lags.get(((lags.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    println!(
        "tcc schedule load: PostgreSQL, 2 nodes, {schedules} schedules every 1 s, {seconds} s (created in {create_s:.1} s); node b SIGKILLed at +{:.1} s and restarted",
        killed_at as f64 / 1000.0
    );
    println!(
        "ticks due {due}, started {on}, lost {lost}, doubled {doubled}, before the first tick {early}; executions {total}"
    );
    println!(
        "start lag (created - due) ms: p50 {} p99 {} max {}; last schedule handled {settle_s:.1} s after the end",
        pct(0.5),
        pct(0.99),
        lags.last().copied().unwrap_or(0)
    );
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(lost == 0 && doubled == 0 && early == 0)
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            println!("PROBLEM: a tick was lost or doubled");
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("tcc_schedule_load: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
