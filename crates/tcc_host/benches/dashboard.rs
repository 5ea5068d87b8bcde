//! Dashboard benchmarks (issue 27): the server time of one page of the
//! executions list (`tcc_host::ui::list_page`: the store's keyset query
//! and the page's JSON, what `GET /ui/api/executions` does besides HTTP)
//! with 100 000 executions in the store, on SQLite and PostgreSQL.
//! Target: ≤ 50 ms per page. The baseline measured in the same run is the
//! cheapest read there is, one execution by id (`Store::get_execution`);
//! each case is also printed as a multiple of it.
//!
//! The store: 100 000 executions with time-ordered ids over 5 programs,
//! 89 % completed, 10 % suspended, 1 % failed. Cases: the newest page, a
//! page 50 000 rows deep, by status (common and rare), by program, status
//! and program, an id prefix matching many rows (the ids' time part), a
//! whole id, and the execution page's document of one execution.
//!
//! PostgreSQL: `$IRKIT_TEST_POSTGRES` or the `scripts/start-postgres.sh`
//! database; without it that half is skipped. `IRKIT_BENCH_STORES=sqlite`
//! or `postgres` runs one store only.
//!
//! Run: `cargo bench -p tcc_host --bench dashboard`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::{NewExecution, Store};
use tcc_host::test_support::ScratchSchema;
use tcc_host::{Host, HostConfig, Providers};

const N: usize = 100_000;

fn executions() -> Vec<NewExecution> {
    (0..N)
        .map(|i| NewExecution {
            id: tcc_host::execution_id(),
            artifact_hash: "h".into(),
            program_name: Some(format!("p{}", i % 5)),
            args: Default::default(),
            parent: None,
            namespace: "default".into(),
        })
        .collect()
}

const STATUSES: &str = "UPDATE executions SET status = CASE WHEN seq % 100 = 5 THEN 'failed' WHEN seq % 10 = 0 THEN 'suspended' ELSE 'completed' END";

fn fill(store: &dyn Store, sql: impl Fn(&str)) -> Vec<String> {
    let all = executions();
    let t = Instant::now();
    for chunk in all.chunks(1000) {
        store.create_executions(chunk).unwrap();
    }
    sql(STATUSES);
    eprintln!(
        "  {} executions stored in {:.1} s",
        N,
        t.elapsed().as_secs_f64()
    );
    all.into_iter().map(|n| n.id).collect()
}

fn median_us(mut f: impl FnMut()) -> f64 {
    for _ in 0..3 {
        f();
    }
    let mut v: Vec<f64> = (0..41)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn cases(ids: &[String]) -> Vec<(&'static str, String)> {
    let mid = &ids[N / 2];
    let deep = (N / 2) as i64;
    vec![
        ("newest page", String::new()),
        ("page 50 000 deep", format!("before={deep}")),
        ("status=suspended", "status=suspended".into()),
        (
            "status=suspended, deep",
            format!("status=suspended&before={deep}"),
        ),
        ("status=failed (1 %)", "status=failed".into()),
        ("program=p3", "program=p3".into()),
        (
            "status=failed&program=p4",
            "status=failed&program=p4".into(),
        ),
        (
            "status=failed&program=p0 (none match)",
            "status=failed&program=p0".into(),
        ),
        (
            "status=completed&program=p0",
            "status=completed&program=p0".into(),
        ),
        ("id prefix (time part)", format!("q={}", &mid[..10])),
        ("whole id", format!("q={mid}")),
    ]
}

fn run_store(c: &mut Criterion, name: &str, store: Arc<dyn Store>, ids: &[String]) {
    let host = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
    let probe = ids[N / 3].clone();
    let base = median_us(|| {
        store.get_execution(&probe).unwrap().unwrap();
    });
    eprintln!("  {name}: baseline get_execution {base:.0} µs");
    eprintln!("  | case | median per page | × baseline | ≤ 50 ms |");
    for (label, q) in cases(ids) {
        let query = tcc_host::ui::page_query(&q).unwrap();
        let t = median_us(|| {
            let page = tcc_host::ui::list_page(&host, &query).unwrap();
            let rows = page["executions"].as_array().map_or(0, Vec::len);
            assert!(rows > 0 || label.contains("none"), "{label}: no rows");
        });
        eprintln!(
            "  | {label} | {:.2} ms | {:.1}× | {} |",
            t / 1000.0,
            t / base,
            if t <= 50_000.0 { "yes" } else { "NO" }
        );
    }
    let doc = median_us(|| {
        tcc_host::ui::execution_doc(&host, &probe).unwrap().unwrap();
    });
    eprintln!(
        "  | execution page document | {:.2} ms | {:.1}× | {} |",
        doc / 1000.0,
        doc / base,
        if doc <= 50_000.0 { "yes" } else { "NO" }
    );
    let mut g = c.benchmark_group(format!("{name}_dashboard_100k"));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("get_execution (baseline)", |b| {
        b.iter(|| store.get_execution(&probe).unwrap())
    });
    for (label, q) in cases(ids) {
        let query = tcc_host::ui::page_query(&q).unwrap();
        g.bench_function(label, |b| {
            b.iter(|| tcc_host::ui::list_page(&host, &query).unwrap())
        });
    }
    g.finish();
}

fn wanted(store: &str) -> bool {
    std::env::var("IRKIT_BENCH_STORES").map_or(true, |s| s == store)
}

fn dashboard(c: &mut Criterion) {
    if wanted("sqlite") {
        let dir = std::env::temp_dir().join(tcc_host::random_id("tcc-ui-bench-"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.db");
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).unwrap());
        eprintln!("SQLite:");
        let ids = fill(&*store, |sql| {
            rusqlite::Connection::open(&path)
                .unwrap()
                .execute_batch(sql)
                .unwrap()
        });
        run_store(c, "sqlite", store, &ids);
        let _ = std::fs::remove_dir_all(&dir);
    }
    if wanted("postgres") {
        match ScratchSchema::create("b_ui") {
            Ok(Some(schema)) => {
                let store: Arc<dyn Store> = Arc::new(PgStore::open(&schema.url()).unwrap());
                eprintln!("PostgreSQL:");
                let ids = fill(&*store, |sql| {
                    schema.execute(sql).unwrap();
                    schema.execute("ANALYZE executions").unwrap();
                });
                run_store(c, "postgres", store, &ids);
            }
            _ => eprintln!("PostgreSQL not reachable: its dashboard benchmarks are skipped"),
        }
    }
}

criterion_group!(benches, dashboard);
criterion_main!(benches);
