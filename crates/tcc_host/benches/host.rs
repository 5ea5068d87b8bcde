//! Host benchmarks (issue 7), per store, all in one run so their ratios are
//! meaningful:
//! - `raw_*_commit`: one single-row UPDATE per transaction (SQLite: WAL +
//!   `synchronous=FULL`, the store's settings; PostgreSQL: autocommit on the
//!   same server, default `synchronous_commit=on`): the baseline.
//! - `*_one_execution_50_effects`: one execution of 50 effect steps driven to
//!   completion (each step = provider call, journal commit, checkpoint commit).
//! - `*_concurrent_100x10_effects`: 100 executions of 10 effect steps each,
//!   driven by one worker per execution (100; group commit: the size of a
//!   group is bounded by the writes in flight, i.e. by the busy workers).
//! - `*_recovery_10000_suspended`: reopen a store holding 10 000 suspended
//!   executions, free leases, scan for work, resume one and deliver its event.
//!
//! Before the criterion benchmarks, an interleaved measurement repeats
//! (baseline, one execution, 100 concurrent) `IRKIT_BENCH_ROUNDS` times
//! (default 5) and prints each round's ratios plus their median and range:
//! the baseline is re-measured next to every sample, so load drifting on a
//! shared machine moves both sides of a ratio together.
//!
//! PostgreSQL: `$IRKIT_TEST_POSTGRES` or the `scripts/start-postgres.sh`
//! database; without it the PostgreSQL benchmarks are skipped.
//!
//! `IRKIT_BENCH_STORES=sqlite|postgres` runs one store's benchmarks only;
//! `IRKIT_BENCH_SKIP_SUSPENDED=1` skips the 10 000-suspended creation and
//! recovery benchmark (e.g. while profiling the step benchmarks).
//!
//! Run: `cargo bench -p tcc_host --bench host -- --warm-up-time 1 --measurement-time 3`.

/// The allocator the `irkit` binary uses too (built with `no_thp`, see
/// docs/tcc/host.md run K): with 32 worker threads glibc
/// `malloc` was ≈ 15 % of the host's CPU.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tcc_host::providers::Providers;
use tcc_host::store::Store;
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig};

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(tcc_host::random_id("tcc-host-bench-"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn host_with(store: Arc<dyn Store>, workers: usize) -> Arc<Host> {
    Host::new(
        store,
        Providers::echo_all(),
        HostConfig {
            workers,
            poll_ms: 5,
            ..HostConfig::default()
        },
    )
}

/// Starts `n` executions of `program` on a running host and waits for
/// them to complete; returns the time from their start (one commit) to the
/// last completion.
fn run_executions(host: &Arc<Host>, program: &str, n: usize) -> Duration {
    run_measured(host, program, n).0
}

/// [`run_executions`], plus this process's CPU time over the same span.
/// The host's workers run all along (spawned once per subject, as in a
/// service): the span holds the steps, not thread start-up. The span ends
/// when the host is first seen idle with every execution terminal; the
/// status reads that check it are not part of it (reading each status on
/// every wake-up had put a client's load on the store inside the span).
fn run_measured(host: &Arc<Host>, program: &str, n: usize) -> (Duration, f64) {
    let ids = host.start_many(program, vec![vec![]; n]).unwrap();
    let (t, cpu) = (Instant::now(), cpu_time());
    loop {
        let seen = host.activity();
        if host.idle() {
            let span = (t.elapsed(), cpu_time() - cpu);
            let mut done = true;
            for id in &ids {
                let r = host.store().get_execution(id).unwrap().unwrap();
                assert!(r.error.is_none(), "{id}: {:?}", r.error);
                if !r.is_terminal() {
                    done = false;
                    break;
                }
                assert_eq!(r.status, "completed");
            }
            if done {
                return span;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(600),
            "the executions did not finish"
        );
        // Woken when a drive ends (no polling that would take CPU from the
        // host on this 2-core machine).
        host.wait_activity(seen, Duration::from_millis(20));
    }
}

/// One store's benchmark subjects.
struct Subject {
    name: &'static str,
    /// Runs `n` raw single-row commits.
    raw: Box<dyn FnMut(usize)>,
    one: Arc<Host>,
    many: Arc<Host>,
    open: Box<dyn Fn() -> Arc<dyn Store>>,
    /// The worker threads of `one` and `many`.
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Subject {
    fn new(
        name: &'static str,
        raw: Box<dyn FnMut(usize)>,
        one: Arc<Host>,
        many: Arc<Host>,
        open: Box<dyn Fn() -> Arc<dyn Store>>,
    ) -> Subject {
        let mut threads = one.spawn();
        threads.extend(many.spawn());
        Subject {
            name,
            raw,
            one,
            many,
            open,
            threads,
        }
    }
}

impl Drop for Subject {
    fn drop(&mut self) {
        self.one.shutdown();
        self.many.shutdown();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Interleaved rounds: raw commits/s, then one execution's steps/s, then
/// 100 concurrent executions' steps/s; ratios against the same round's baseline.
fn interleaved(s: &mut Subject, rounds: usize) {
    let (mut r1, mut r100, mut raws) = (Vec::new(), Vec::new(), Vec::new());
    let (mut cpu_one, mut cpu_many) = (0.0, 0.0);
    for round in 0..rounds {
        let n = 100;
        let t = Instant::now();
        (s.raw)(n);
        let raw = n as f64 / t.elapsed().as_secs_f64();
        // `IRKIT_BENCH_ONLY=one|many` (profiling): the other side is not run
        // and its figures read as infinite.
        let only = std::env::var("IRKIT_BENCH_ONLY").unwrap_or_default();
        let (t1, c1) = if only == "many" {
            (Duration::ZERO, 0.0)
        } else {
            run_measured(&s.one, "chain50", 1)
        };
        let (t100, c100) = if only == "one" {
            (Duration::ZERO, 0.0)
        } else {
            run_measured(&s.many, "chainN", 100)
        };
        let (one, many) = (
            50.0 / t1.as_secs_f64(),
            100.0 * many_steps() as f64 / t100.as_secs_f64(),
        );
        cpu_one += c1;
        cpu_many += c100;
        println!(
            "{} round {round}: raw {raw:.0} commits/s, one execution {one:.0} steps/s ({:.2}x), 100 concurrent {many:.0} steps/s ({:.2}x)",
            s.name,
            one / raw,
            many / raw
        );
        raws.push(raw);
        r1.push(one / raw);
        r100.push(many / raw);
    }
    let range = |v: &[f64]| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        format!("{lo:.2}..{hi:.2}")
    };
    let (g1, g100) = (range(&r1), range(&r100));
    let rr = range(&raws);
    println!(
        "{} summary over {rounds} rounds: raw commits/s median {:.0} (range {rr}); one execution median {:.2}x (range {g1}, target >= 0.5x); 100 concurrent median {:.2}x (range {g100}, target >= 2x)",
        s.name,
        median(&mut raws),
        median(&mut r1),
        median(&mut r100)
    );
    // Load-independent companion figure: this process's CPU time (user +
    // system, all threads; not a database server's) per step, from worker
    // start to the last completion,
    // not starting the executions (as the step rates).
    println!(
        "{} CPU per step (this process): one execution {:.0} us, 100 concurrent {:.0} us",
        s.name,
        cpu_one * 1e6 / (50.0 * rounds as f64),
        cpu_many * 1e6 / (100.0 * many_steps() as f64 * rounds as f64)
    );
}

/// This process's CPU time so far in seconds (Linux `/proc/self/stat`,
/// clock ticks of 10 ms; 0 elsewhere).
fn cpu_time() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    // Fields after the command name: state is field 3; utime 14, stime 15.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(14) + ticks(15)) / 100.0
}

fn bench_subject(c: &mut Criterion, s: &mut Subject) {
    let rounds = std::env::var("IRKIT_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    interleaved(s, rounds);
    let mut g = c.benchmark_group(format!("tcc_host_{}", s.name));
    g.sample_size(10);
    let raw = &mut s.raw;
    g.bench_function("raw_commit", |b| b.iter(|| raw(1)));
    let one = s.one.clone();
    g.bench_function("one_execution_50_effects", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run_executions(&one, "chain50", 1)).sum())
    });
    let many = s.many.clone();
    g.bench_function("concurrent_100x10_effects", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| run_executions(&many, "chainN", 100))
                .sum()
        })
    });

    g.finish();
    if std::env::var_os("IRKIT_BENCH_SKIP_SUSPENDED").is_some() {
        return;
    }
    let mut g = c.benchmark_group(format!("tcc_host_{}", s.name));
    g.sample_size(10);
    // 10 000 suspended executions, created once.
    {
        let h = host_with((s.open)(), 32);
        h.register(&common::waiter(), Some("w")).unwrap();
        let t = Instant::now();
        for i in 0..10_000 {
            h.start("w", vec![], Some(format!("s{i:05}"))).unwrap();
        }
        let threads = h.spawn();
        while !h
            .store()
            .find_work(tcc_host::now_ms(), 1)
            .unwrap()
            .is_empty()
            || !h.idle()
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        h.shutdown();
        for t in threads {
            t.join().unwrap();
        }
        println!(
            "{}: 10 000 executions started and suspended in {:?}",
            s.name,
            t.elapsed()
        );
    }
    let mut k = 0u64;
    let open = &s.open;
    g.bench_function("recovery_10000_suspended", |b| {
        b.iter(|| {
            let h = host_with(open(), 1);
            h.store().reset_leases().unwrap();
            assert!(
                h.store()
                    .find_work(tcc_host::now_ms(), 256)
                    .unwrap()
                    .is_empty()
            );
            let id = format!("s{:05}", k % 10_000);
            k += 1;
            h.store()
                .send_event(&id, "never", &serde_json::json!({"t": "null"}))
                .unwrap();
            assert!(h.drive(&id).unwrap());
            assert_eq!(
                h.store().get_execution(&id).unwrap().unwrap().status,
                "completed"
            );
        })
    });
    g.finish();
}

/// Worker threads of the 100-concurrent host (`IRKIT_BENCH_WORKERS`, default
/// 100: one per execution, so every execution can have a write in flight;
/// 32 workers gave groups of ≈ 4–5 checkpoints and ≈ 25 % fewer steps per
/// second with a fast fsync, see docs/tcc/host.md).
fn concurrent_workers() -> usize {
    std::env::var("IRKIT_BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

/// Effect steps of each concurrent execution (`IRKIT_BENCH_STEPS`, default 10).
fn many_steps() -> usize {
    std::env::var("IRKIT_BENCH_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

/// Whether `IRKIT_BENCH_STORES` (comma-separated; default all) selects `name`.
fn selected(name: &str) -> bool {
    std::env::var("IRKIT_BENCH_STORES").map_or(true, |v| v.split(',').any(|s| s.trim() == name))
}

fn sqlite(c: &mut Criterion) {
    if !selected("sqlite") {
        return;
    }
    let d = dir();
    let conn = rusqlite::Connection::open(d.join("raw.db")).unwrap();
    let _: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    conn.execute_batch(
        "PRAGMA synchronous=FULL; CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 0);",
    )
    .unwrap();
    let open_at = |p: std::path::PathBuf| {
        move || -> Arc<dyn Store> { Arc::new(SqliteStore::open(&p).unwrap()) }
    };
    let one = host_with(open_at(d.join("one.db"))(), 1);
    one.register(&common::chain(50), Some("chain50")).unwrap();
    let many = host_with(open_at(d.join("many.db"))(), concurrent_workers());
    many.register(&common::chain(many_steps()), Some("chainN"))
        .unwrap();
    let mut s = Subject::new(
        "sqlite",
        Box::new(move |n| {
            for _ in 0..n {
                conn.execute_batch("BEGIN IMMEDIATE; UPDATE t SET v = v + 1 WHERE id = 1; COMMIT;")
                    .unwrap();
            }
        }),
        one,
        many,
        Box::new(open_at(d.join("recovery.db"))),
    );
    bench_subject(c, &mut s);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

fn postgres(c: &mut Criterion) {
    if !selected("postgres") {
        return;
    }
    let Some(schema) = ScratchSchema::create("b_host").unwrap() else {
        println!("PostgreSQL benchmarks skipped (no database)");
        return;
    };
    // Each subject in its own schema, so the 10 000 suspended executions
    // do not slow the other measurements' scans.
    let one_s = ScratchSchema::create("b_one").unwrap().unwrap();
    let many_s = ScratchSchema::create("b_many").unwrap().unwrap();
    schema
        .execute("CREATE TABLE t (id INT PRIMARY KEY, v BIGINT); INSERT INTO t VALUES (1, 0);")
        .unwrap();
    // Connected as the store connects (same `sslmode`: TLS when the server
    // offers it), so both sides of the ratio pay the same transport.
    let mut raw_client = tcc_host::store::pg::connect(&test_url_without_schema()).unwrap();
    let table = format!("{}.t", schema.schema);
    let one = host_with(Arc::new(PgStore::open(&one_s.url()).unwrap()), 1);
    one.register(&common::chain(50), Some("chain50")).unwrap();
    let many = host_with(
        Arc::new(PgStore::open(&many_s.url()).unwrap()),
        concurrent_workers(),
    );
    many.register(&common::chain(many_steps()), Some("chainN"))
        .unwrap();
    let url = schema.url();
    let mut s = Subject::new(
        "postgres",
        Box::new(move |n| {
            for _ in 0..n {
                raw_client
                    .execute(&format!("UPDATE {table} SET v = v + 1 WHERE id = 1"), &[])
                    .unwrap();
            }
        }),
        one,
        many,
        Box::new(move || -> Arc<dyn Store> { Arc::new(PgStore::open(&url).unwrap()) }),
    );
    bench_subject(c, &mut s);
    drop(s);
    drop((one_s, many_s, schema));
}

fn test_url_without_schema() -> String {
    tcc_host::test_support::test_database_url()
}

criterion_group!(host, sqlite, postgres);
criterion_main!(host);
