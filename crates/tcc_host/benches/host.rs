//! Host benchmarks (issue 7), all on the same disk in one run so their
//! ratios are meaningful:
//! - `raw_sqlite_commit`: one single-row UPDATE per transaction, WAL +
//!   `synchronous=FULL` (the same settings as the store): the baseline.
//! - `one_execution_50_effects`: one execution of 50 effect steps driven to
//!   completion (each step = provider call, journal commit, checkpoint commit).
//! - `concurrent_100x10_effects`: 100 executions of 10 effect steps each,
//!   driven by 32 workers (group commit).
//! - `recovery_10000_suspended`: reopen a store holding 10 000 suspended
//!   executions, free leases, scan for work, resume one and deliver its event.
//!
//! Run: `cargo bench -p tcc_host --bench host -- --warm-up-time 1 --measurement-time 3`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::providers::Providers;
use tcc_host::sqlite::SqliteStore;
use tcc_host::store::Store;
use tcc_host::{Host, HostConfig};

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(tcc_host::random_id("tcc-host-bench-"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn host_on(path: &std::path::Path, workers: usize) -> Arc<Host> {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(path).unwrap());
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

fn run_executions(host: &Arc<Host>, program: &str, n: usize) {
    let ids: Vec<String> = (0..n)
        .map(|_| host.start(program, vec![], None).unwrap())
        .collect();
    let threads = host.spawn();
    for id in &ids {
        let r = host.wait_for(id, Duration::from_secs(600), false).unwrap();
        assert_eq!(r.status, "completed");
    }
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
}

fn benches(c: &mut Criterion) {
    let d = dir();
    let mut g = c.benchmark_group("tcc_host");
    g.sample_size(10);

    let conn = rusqlite::Connection::open(d.join("raw.db")).unwrap();
    let _: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    conn.execute_batch(
        "PRAGMA synchronous=FULL; CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 0);",
    )
    .unwrap();
    g.bench_function("raw_sqlite_commit", |b| {
        b.iter(|| {
            conn.execute_batch("BEGIN IMMEDIATE; UPDATE t SET v = v + 1 WHERE id = 1; COMMIT;")
                .unwrap()
        })
    });

    let one = host_on(&d.join("one.db"), 1);
    one.register(&common::chain(50), Some("chain50")).unwrap();
    g.bench_function("one_execution_50_effects", |b| {
        b.iter(|| run_executions(&one, "chain50", 1))
    });

    let many = host_on(&d.join("many.db"), 32);
    many.register(&common::chain(10), Some("chain10")).unwrap();
    g.bench_function("concurrent_100x10_effects", |b| {
        b.iter(|| run_executions(&many, "chain10", 100))
    });

    // 10 000 suspended executions, created once.
    let rec_path = d.join("recovery.db");
    {
        let h = host_on(&rec_path, 8);
        h.register(&common::waiter(), Some("w")).unwrap();
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
    }
    let mut k = 0u64;
    g.bench_function("recovery_10000_suspended", |b| {
        b.iter(|| {
            let h = host_on(&rec_path, 1);
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
    let _ = std::fs::remove_dir_all(&d);
}

criterion_group!(host, benches);
criterion_main!(host);
