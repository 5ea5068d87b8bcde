//! Process metrics in the Prometheus text format (`GET /metrics`), kept
//! with the `prometheus` crate. One registry per process ([`global`]): the
//! host, the stores and the service count into it where things happen;
//! gauges read from the store (executions by status, events waiting, timer
//! lag) are refreshed when the metrics are rendered.
//!
//! The names, types and labels are listed in `docs/tcc/host.md`
//! ("Metrics").

use crate::store::Store;
use prometheus::{
    Encoder, Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The HTTP methods counted under their own name; any other is `other`.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/// The metrics label of an HTTP method: itself when in [`METHODS`], else
/// `other`.
pub fn method_label(method: &str) -> &'static str {
    METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other")
}

/// Every metric of the process.
pub struct Metrics {
    registry: Registry,
    http_requests: IntCounterVec,
    http_seconds: HistogramVec,
    drives: IntCounterVec,
    steps: IntCounter,
    effects: IntCounterVec,
    commit_seconds: Histogram,
    group_jobs: HistogramVec,
    takeovers: IntCounterVec,
    operator_resumes: IntCounter,
    executions: IntGaugeVec,
    events_pending: IntGauge,
    timer_lag: Gauge,
    store_up: IntGauge,
    schedule_ticks: IntCounterVec,
    pause_changes: IntCounterVec,
    retention: IntCounterVec,
    throttled: IntCounterVec,
    throttle_wait: HistogramVec,
    trace_export_failures: IntCounter,
    trace_spans_dropped: IntCounter,
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static M: OnceLock<Metrics> = OnceLock::new();
    M.get_or_init(Metrics::new)
}

/// Buckets for latencies (seconds): 100 µs to 10 s.
const LATENCY: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// Buckets for group-commit sizes (jobs per transaction; at most 512).
const GROUP: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

impl Metrics {
    fn new() -> Metrics {
        let registry = Registry::new();
        // The names and labels below are constants: building them cannot
        // fail, and registering them once in a fresh registry cannot clash.
        fn reg<C: prometheus::core::Collector + Clone + 'static>(r: &Registry, c: C) -> C {
            r.register(Box::new(c.clone()))
                .expect("metric names are unique");
            c
        }
        let counter_vec = |name: &str, help: &str, labels: &[&str]| {
            reg(
                &registry,
                IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric"),
            )
        };
        let http_requests = counter_vec(
            "tcc_http_requests_total",
            "HTTP requests answered, by method, route template and status code.",
            &["method", "route", "status"],
        );
        let http_seconds = reg(
            &registry,
            HistogramVec::new(
                HistogramOpts::new(
                    "tcc_http_request_duration_seconds",
                    "Time from the request to its response, by route template.",
                )
                .buckets(LATENCY.to_vec()),
                &["route"],
            )
            .expect("valid metric"),
        );
        let drives = counter_vec(
            "tcc_drives_total",
            "Drives of an execution by a worker, by outcome (finished, suspended, lease_lost, failed, store_error, not_claimed, quarantined).",
            &["outcome"],
        );
        let steps = reg(
            &registry,
            IntCounter::new(
                "tcc_engine_steps_total",
                "Engine steps run by this process.",
            )
            .expect("valid metric"),
        );
        let effects = counter_vec(
            "tcc_effects_total",
            "Effect provider calls (journalled results replayed are not calls), by outcome (completed, failed).",
            &["outcome"],
        );
        let commit_seconds = reg(
            &registry,
            Histogram::with_opts(
                HistogramOpts::new(
                    "tcc_checkpoint_commit_seconds",
                    "Time a worker waited for its checkpoint to commit (group commit included).",
                )
                .buckets(LATENCY.to_vec()),
            )
            .expect("valid metric"),
        );
        let group_jobs = reg(
            &registry,
            HistogramVec::new(
                HistogramOpts::new(
                    "tcc_group_commit_jobs",
                    "Writes committed together in one store transaction, by backend.",
                )
                .buckets(GROUP.to_vec()),
                &["backend"],
            )
            .expect("valid metric"),
        );
        let takeovers = counter_vec(
            "tcc_lease_takeovers_total",
            "Lease takeovers seen by this node: kind=resumed (this node claimed an execution whose earlier drive was cut off: its node died, or a store failure), kind=lost (a drive found its execution taken over by another node), kind=reclaimed (leases of this node id taken back at start by a restarted node).",
            &["kind"],
        );
        let operator_resumes = reg(
            &registry,
            IntCounter::new(
                "tcc_operator_resumes_total",
                "Failed executions an operator resumed from the checkpoint before their failed effect (POST /v1/executions/{id}/resume).",
            )
            .expect("valid metric"),
        );
        let pause_changes = reg(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "tcc_pause_changes_total",
                    "Pauses and resumes by operators (issue 35), by change: paused, resumed, program_paused, program_resumed.",
                ),
                &["change"],
            )
            .expect("valid metric"),
        );
        let retention = reg(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "tcc_retention_executions_total",
                    "Terminal executions this node deleted (by retention or DELETE /v1/executions/{id}) or wrote to the archive, by outcome: deleted, archived.",
                ),
                &["outcome"],
            )
            .expect("valid metric"),
        );
        let executions = reg(
            &registry,
            IntGaugeVec::new(
                Opts::new("tcc_executions", "Executions in the store, by status."),
                &["status"],
            )
            .expect("valid metric"),
        );
        let events_pending = reg(
            &registry,
            IntGauge::new(
                "tcc_events_pending",
                "Event queue depth: events received and not yet consumed by a wait.",
            )
            .expect("valid metric"),
        );
        let timer_lag = reg(
            &registry,
            Gauge::new(
                "tcc_timer_lag_seconds",
                "How late the oldest undelivered timer is (0 when none is due).",
            )
            .expect("valid metric"),
        );
        let store_up = reg(
            &registry,
            IntGauge::new(
                "tcc_store_up",
                "1 when the store answered the counts of this scrape, else 0.",
            )
            .expect("valid metric"),
        );
        let schedule_ticks = counter_vec(
            "tcc_schedule_ticks_total",
            "Schedule ticks handled by this node's passes, by outcome (started: an execution was inserted; skipped: by the overlap or catch-up policy, or an unknown program).",
            &["outcome"],
        );
        for outcome in ["started", "skipped"] {
            schedule_ticks.with_label_values(&[outcome]);
        }
        let throttled = counter_vec(
            "tcc_throttled_total",
            "Admissions refused by a flow limit (the execution queued or asked again), by scope kind (program, route).",
            &["kind"],
        );
        let throttle_wait = reg(
            &registry,
            HistogramVec::new(
                HistogramOpts::new(
                    "tcc_throttle_wait_seconds",
                    "Time a throttled execution waited in a flow limit's queue before its slot, by scope kind.",
                )
                .buckets(LATENCY.to_vec()),
                &["kind"],
            )
            .expect("valid metric"),
        );
        for scope_kind in ["program", "route"] {
            throttled.with_label_values(&[scope_kind]);
            throttle_wait.with_label_values(&[scope_kind]);
        }
        let trace_export_failures = reg(
            &registry,
            IntCounter::new(
                "tcc_trace_export_failures_total",
                "OTLP span exports that failed (the endpoint refused the connection, timed out or answered other than 2xx).",
            )
            .expect("valid metric"),
        );
        let trace_spans_dropped = reg(
            &registry,
            IntCounter::new(
                "tcc_trace_spans_dropped_total",
                "Spans in the batches of failed OTLP exports (not retried).",
            )
            .expect("valid metric"),
        );
        // Series that exist from the start (at 0), so that rates and
        // dashboards see them before the first event.
        for outcome in [
            "finished",
            "suspended",
            "lease_lost",
            "failed",
            "store_error",
            "not_claimed",
        ] {
            drives.with_label_values(&[outcome]);
        }
        for outcome in ["completed", "failed"] {
            effects.with_label_values(&[outcome]);
        }
        for kind in ["resumed", "lost", "reclaimed"] {
            takeovers.with_label_values(&[kind]);
        }
        Metrics {
            registry,
            http_requests,
            http_seconds,
            drives,
            steps,
            effects,
            commit_seconds,
            group_jobs,
            takeovers,
            operator_resumes,
            executions,
            events_pending,
            timer_lag,
            store_up,
            schedule_ticks,
            pause_changes,
            retention,
            throttled,
            throttle_wait,
            trace_export_failures,
            trace_spans_dropped,
        }
    }

    /// An OTLP export of `spans` spans failed (issue 35, `crate::otel`).
    pub fn trace_export_failed(&self, spans: usize) {
        self.trace_export_failures.inc();
        self.trace_spans_dropped.inc_by(spans as u64);
    }

    /// An operator paused or resumed an execution or a program (`change`).
    pub fn pause_change(&self, change: &str) {
        self.pause_changes.with_label_values(&[change]).inc();
    }

    /// This node deleted `deleted` terminal executions, `archived` of them
    /// written to the archive first.
    pub fn retention(&self, deleted: u64, archived: u64) {
        self.retention
            .with_label_values(&["deleted"])
            .inc_by(deleted);
        self.retention
            .with_label_values(&["archived"])
            .inc_by(archived);
    }

    /// A flow limit refused an admission (`kind`: program or route).
    pub fn throttled(&self, kind: &str) {
        self.throttled.with_label_values(&[kind]).inc();
    }

    /// A throttled execution got its slot after `waited_ms` in the queue.
    pub fn throttle_waited(&self, kind: &str, waited_ms: i64) {
        self.throttle_wait
            .with_label_values(&[kind])
            .observe(waited_ms.max(0) as f64 / 1000.0);
    }

    /// A schedule pass of this node started `started` executions and
    /// skipped `skipped` ticks.
    pub fn schedule_pass(&self, started: u64, skipped: u64) {
        self.schedule_ticks
            .with_label_values(&["started"])
            .inc_by(started);
        self.schedule_ticks
            .with_label_values(&["skipped"])
            .inc_by(skipped);
    }

    /// One HTTP request answered. Every label comes from a closed set
    /// (issue 42, F4), so that requests cannot grow the metrics: the method
    /// is one of [`METHODS`] or `other`; the route is a route template (the
    /// caller's `MatchedPath`) or `unmatched`; the status is a number below
    /// 600. Requests answered 401 are counted under one label set
    /// (`-`, `unauthorized`, `401`), whatever they asked for.
    pub fn http_request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let (method, route) = if status == 401 {
            ("-", "unauthorized")
        } else {
            (method_label(method), route)
        };
        let status = if (100..600).contains(&status) {
            status
        } else {
            599
        };
        self.http_requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.http_seconds
            .with_label_values(&[route])
            .observe(took.as_secs_f64());
    }

    /// One drive ended with `outcome` (a fixed word of the host's).
    pub fn drive(&self, outcome: &str) {
        self.drives.with_label_values(&[outcome]).inc();
        if outcome == "lease_lost" {
            self.takeovers.with_label_values(&["lost"]).inc();
        }
    }

    /// `n` engine steps ran.
    pub fn steps(&self, n: u64) {
        self.steps.inc_by(n);
    }

    /// An effect provider call ended (`ok`: with a result).
    pub fn effect(&self, ok: bool) {
        self.effects
            .with_label_values(&[if ok { "completed" } else { "failed" }])
            .inc();
    }

    /// A checkpoint commit took `took`.
    pub fn commit(&self, took: Duration) {
        self.commit_seconds.observe(took.as_secs_f64());
    }

    /// A group commit of `jobs` writes ran on `backend`.
    pub fn group_commit(&self, backend: &str, jobs: usize) {
        self.group_jobs
            .with_label_values(&[backend])
            .observe(jobs as f64);
    }

    /// An operator resumed a failed execution.
    pub fn operator_resume(&self) {
        self.operator_resumes.inc();
    }

    /// A lease takeover of `kind` (`resumed`, `lost`).
    pub fn takeover(&self, kind: &str) {
        self.takeovers.with_label_values(&[kind]).inc();
    }

    /// `n` leases of this node's id were taken back at start.
    pub fn leases_taken_back(&self, n: u64) {
        self.takeovers.with_label_values(&["reclaimed"]).inc_by(n);
    }

    /// The text format of every metric, with the store's gauges read now
    /// (when a store is given; `tcc_store_up` says whether that worked).
    pub fn render(&self, store: Option<&Arc<dyn Store>>) -> String {
        if let Some(store) = store {
            self.refresh(&**store);
        }
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn refresh(&self, store: &dyn Store) {
        let counts = store.counts();
        let due = store.next_timer_due();
        match (counts, due) {
            (Ok(c), Ok(due)) => {
                self.executions.reset();
                for status in ["runnable", "suspended", "completed", "failed", "cancelled"] {
                    self.executions.with_label_values(&[status]).set(0);
                }
                for (status, n) in &c.by_status {
                    self.executions
                        .with_label_values(&[status.as_str()])
                        .set(i64::try_from(*n).unwrap_or(i64::MAX));
                }
                self.events_pending
                    .set(i64::try_from(c.events_pending).unwrap_or(i64::MAX));
                let lag_ms = due.map_or(0, |d| (crate::ids::now_ms() - d).max(0));
                self.timer_lag.set(lag_ms as f64 / 1000.0);
                self.store_up.set(1);
            }
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "metrics: the store did not answer its counts");
                self.store_up.set(0);
            }
        }
    }
}
