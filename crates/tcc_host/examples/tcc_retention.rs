//! Retention benchmark (issue 35), run by `scripts/tcc-retention.sh`:
//! flows/s of 50 clients with and without retention deleting expired
//! executions at the same time, alternated in one run.
//!
//! `tcc_retention --backend sqlite|postgres [--expired 100000]
//! [--clients 50] [--phase-s 4] [--rounds 3] [--batch 500] [--no-archive]`
//!
//! One host in this process (8 workers) on a fresh SQLite file or a fresh
//! PostgreSQL schema (`$IRKIT_TEST_POSTGRES`, else the test database).
//! `--expired` terminal executions ended at the epoch are inserted first,
//! each with a checkpoint, two journal rows and three history rows. Then
//! `--rounds` times: a phase of `--phase-s` seconds with only the
//! clients, and one with a retention thread running batches back to back
//! (`retention::run_batch`, `--batch` per batch, archiving to a temporary
//! directory unless `--no-archive`). Each client starts a flow (two echo
//! effects and a return), waits for its end (the host's done signal, no
//! polling) and starts the next. Prints flows/s of each phase, the
//! executions deleted during it, and the ratio of the with-retention
//! phases' flows/s to the without phases'.

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tcc_host::providers::Providers;
use tcc_host::retention::{RetentionConfig, run_batch};
use tcc_host::store::Store;
use tcc_host::{Host, HostConfig};

struct Args {
    backend: String,
    expired: u64,
    clients: usize,
    phase: Duration,
    rounds: usize,
    batch: u32,
    archive: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        backend: "sqlite".into(),
        expired: 100_000,
        clients: 50,
        phase: Duration::from_secs(4),
        rounds: 3,
        batch: 500,
        archive: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        if k == "--no-archive" {
            a.archive = false;
            continue;
        }
        let v = it.next().ok_or_else(|| format!("{k} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{k} {v}: {e}"));
        match k.as_str() {
            "--backend" => a.backend = v,
            "--expired" => a.expired = num(&v)?,
            "--clients" => a.clients = num(&v)? as usize,
            "--phase-s" => a.phase = Duration::from_secs(num(&v)?),
            "--rounds" => a.rounds = num(&v)? as usize,
            "--batch" => a.batch = num(&v)? as u32,
            _ => return Err(format!("unknown argument {k}")),
        }
    }
    Ok(a)
}

/// Inserts `n` terminal executions that ended at the epoch, with a
/// checkpoint, two journal rows and three history rows each.
fn seed(backend: &str, target: &str, n: u64) -> Result<(), String> {
    const CHUNK: u64 = 10_000;
    let mut from = 0;
    while from < n {
        let to = (from + CHUNK).min(n);
        if backend == "sqlite" {
            let c = rusqlite::Connection::open(target).map_err(|e| e.to_string())?;
            c.execute_batch(&format!(
                "BEGIN;
                 WITH RECURSIVE k(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM k WHERE i + 1 < {to})
                 INSERT INTO executions (id, artifact_hash, program_name, args, status, revision, result, created_ms, updated_ms)
                   SELECT 'old-' || i, 'h', 'old', '[{{\"t\":\"number\",\"v\":1}}]', 'completed', 1, '{{\"t\":\"number\",\"v\":2}}', 0, 0 FROM k;
                 WITH RECURSIVE k(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM k WHERE i + 1 < {to})
                 INSERT INTO checkpoints (execution_id, revision, kind, body) SELECT 'old-' || i, 1, 'snapshot', '{{}}' FROM k;
                 WITH RECURSIVE k(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM k WHERE i + 1 < {to})
                 INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, at_ms, seq)
                   SELECT 'old-' || i || ':' || e, 'old-' || i, e, 'null', 'completed', '{{\"t\":\"null\"}}', 0, i * 2 + (e = 'b')
                   FROM k, (SELECT 'a' AS e UNION ALL SELECT 'b');
                 WITH RECURSIVE k(i) AS (SELECT {from} UNION ALL SELECT i + 1 FROM k WHERE i + 1 < {to})
                 INSERT INTO history (execution_id, at_ms, kind, detail)
                   SELECT 'old-' || i, 0, h, '{{}}' FROM k, (SELECT 'created' AS h UNION ALL SELECT 'checkpoint' UNION ALL SELECT 'completed');
                 COMMIT;"
            ))
            .map_err(|e| e.to_string())?;
        } else {
            let mut c = tcc_host::store::pg::url::connect(target).map_err(|e| e.to_string())?;
            c.batch_execute(&format!(
                "BEGIN;
                 INSERT INTO executions (id, artifact_hash, program_name, args, status, revision, result, created_ms, updated_ms)
                   SELECT 'old-' || i, 'h', 'old', '[{{\"t\":\"number\",\"v\":1}}]', 'completed', 1, '{{\"t\":\"number\",\"v\":2}}', 0, 0
                   FROM generate_series({from}, {to} - 1) i;
                 INSERT INTO checkpoints (execution_id, revision, kind, body)
                   SELECT 'old-' || i, 1, 'snapshot', '{{}}' FROM generate_series({from}, {to} - 1) i;
                 INSERT INTO effects (idempotency_key, execution_id, key, input, status, result, at_ms)
                   SELECT 'old-' || i || ':' || e, 'old-' || i, e, 'null', 'completed', '{{\"t\":\"null\"}}', 0
                   FROM generate_series({from}, {to} - 1) i, (VALUES ('a'), ('b')) AS x(e);
                 INSERT INTO history (execution_id, at_ms, kind, detail)
                   SELECT 'old-' || i, 0, h, '{{}}' FROM generate_series({from}, {to} - 1) i,
                     (VALUES ('created'), ('checkpoint'), ('completed')) AS x(h);
                 COMMIT;"
            ))
            .map_err(|e| e.to_string())?;
        }
        from = to;
    }
    Ok(())
}

/// Two echo effects, then returns 1.
fn flow() -> Vec<u8> {
    common::artifact(&[(
        "run",
        0,
        0,
        json!([
            {"op": "LoadConst", "value": {"t": "string", "v": "a"}}, {"op": "Effect"}, {"op": "Pop"},
            {"op": "LoadConst", "value": {"t": "string", "v": "b"}}, {"op": "Effect"}, {"op": "Pop"},
            {"op": "LoadConst", "value": {"t": "number", "v": 1.0}}, {"op": "Return"}
        ]),
    )])
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tcc_retention: {e}");
            std::process::exit(2);
        }
    };
    let dir = std::env::temp_dir().join(tcc_host::random_id("tcc-retention-bench-"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut _schema = None;
    let target = if a.backend == "sqlite" {
        dir.join("r.db").to_string_lossy().to_string()
    } else {
        let base = std::env::var("IRKIT_TEST_POSTGRES")
            .unwrap_or_else(|_| tcc_host::test_support::test_database_url());
        let s = tcc_host::test_support::ScratchSchema::create_in(base, "b_retention")
            .expect("PostgreSQL")
            .expect("PostgreSQL reachable");
        let url = s.url();
        _schema = Some(s);
        url
    };
    let store: Arc<dyn Store> = tcc_host::store::factory::open_store(&target).expect("store opens");
    let t = Instant::now();
    seed(&a.backend, &target, a.expired).expect("seeding");
    println!(
        "{}: seeded {} expired executions in {:.1} s",
        a.backend,
        a.expired,
        t.elapsed().as_secs_f64()
    );
    let cfg = HostConfig {
        workers: 8,
        ..HostConfig::default()
    };
    let host = Host::new(store.clone(), Providers::echo_all(), cfg);
    host.register(&flow(), Some("flow")).expect("register");
    let workers = host.spawn();

    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..a.clients)
        .map(|c| {
            let (host, done, stop) = (host.clone(), done.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let id = format!("f-{c}-{n}");
                    n += 1;
                    let sub = host.hub().subscribe(&tcc_host::notify::done_topic(&id));
                    if host.start("flow", vec![], Some(id.clone())).is_err() {
                        continue;
                    }
                    loop {
                        let generation = sub.signal().generation();
                        match host.store().get_execution(&id) {
                            Ok(Some(r)) if r.is_terminal() => break,
                            _ => {}
                        }
                        if stop.load(Ordering::SeqCst) {
                            return;
                        }
                        sub.signal()
                            .wait_past(generation, Duration::from_millis(200));
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();

    let mut retention = RetentionConfig::new(3_600_000, "bench");
    retention.batch = a.batch;
    retention.pause_between = Duration::from_millis(5);
    if a.archive {
        retention.archive_dir = Some(dir.join("archive"));
    }
    // Warm up.
    std::thread::sleep(Duration::from_secs(1));
    let deleted_total = Arc::new(AtomicU64::new(0));
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for round in 0..a.rounds {
        // ABBA: the phases' order alternates, so a drift of the machine's
        // load favours neither.
        let order = match round % 2 {
            0 => [false, true],
            _ => [true, false],
        };
        for deleting in order {
            let running = Arc::new(AtomicBool::new(deleting));
            let deleter = deleting.then(|| {
                let (store, running, cfg, total) = (
                    store.clone(),
                    running.clone(),
                    retention.clone(),
                    deleted_total.clone(),
                );
                std::thread::spawn(move || {
                    let mut deleted = 0;
                    while running.load(Ordering::SeqCst) {
                        match run_batch(&*store, &cfg, tcc_host::ids::now_ms()) {
                            Ok(Some(r)) => deleted += r.deleted,
                            Ok(None) => break,
                            Err(e) => {
                                eprintln!("retention batch: {e}");
                                break;
                            }
                        }
                        std::thread::sleep(cfg.pause_between);
                    }
                    total.fetch_add(deleted, Ordering::SeqCst);
                    deleted
                })
            });
            let before = done.load(Ordering::SeqCst);
            let t = Instant::now();
            std::thread::sleep(a.phase);
            let flows = done.load(Ordering::SeqCst) - before;
            let secs = t.elapsed().as_secs_f64();
            running.store(false, Ordering::SeqCst);
            let deleted = deleter.map(|d| d.join().unwrap_or(0)).unwrap_or(0);
            let rate = flows as f64 / secs;
            println!(
                "{} round {round} {:>9}: {flows} flows in {secs:.1} s = {rate:.0} flows/s, {deleted} executions deleted ({:.0}/s)",
                a.backend,
                if deleting { "retention" } else { "baseline" },
                deleted as f64 / secs
            );
            if deleting {
                with.push(rate);
            } else {
                without.push(rate);
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        let _ = c.join();
    }
    host.shutdown();
    for w in workers {
        let _ = w.join();
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "{}: flows/s with retention / without = {:.3} ({:.0} / {:.0}); {} expired executions deleted in all",
        a.backend,
        mean(&with) / mean(&without).max(f64::MIN_POSITIVE),
        mean(&with),
        mean(&without),
        deleted_total.load(Ordering::SeqCst)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
