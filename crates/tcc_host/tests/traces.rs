//! Traces (issue 35, `tcc_host::otel`), in process, on both stores
//! (SQLite, and PostgreSQL when reachable): spans exported over OTLP/HTTP
//! JSON to an in-process receiver, decoded and checked — the start
//! request's span continues the caller's `traceparent`, the drive is its
//! child, effect calls and checkpoints are the drive's, all carry the
//! execution id, and the webhook gets the effect span's context as its
//! `traceparent` header; a worker task carries it in its row and poll
//! answer; an invalid header on start is refused; with tracing off the
//! start's `traceparent` reaches the webhook unchanged. A child
//! execution's drives are children of its parent's drive, a schedule
//! tick's execution's drives children of the tick's span, and failed
//! exports are counted on the metrics.

mod common;
#[path = "common/db.rs"]
mod db;
use db::TestDb;

use serde_json::Value as J;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tcc_host::otel::{Telemetry, TraceParent};
use tcc_host::providers::{Providers, Webhook};
use tcc_host::service::{Service, ServiceConfig};
use tcc_host::store::Store;
use tcc_host::{Host, HostConfig};

const CALLER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// An in-process OTLP/HTTP receiver and webhook: keeps every
/// `POST /v1/traces` body and the `traceparent` header of every
/// `POST /hook`, which answers `{"ok": true}`.
struct Receiver {
    url: String,
    exports: Arc<Mutex<Vec<J>>>,
    hook_headers: Arc<Mutex<Vec<Option<String>>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    fn start() -> Receiver {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let exports = Arc::new(Mutex::new(Vec::new()));
        let hook_headers = Arc::new(Mutex::new(Vec::new()));
        let (s, e, h) = (server.clone(), exports.clone(), hook_headers.clone());
        let thread = std::thread::spawn(move || {
            for mut req in s.incoming_requests() {
                let mut body = Vec::new();
                req.as_reader().read_to_end(&mut body).unwrap();
                let answer = match req.url() {
                    "/v1/traces" => {
                        let content_type = req
                            .headers()
                            .iter()
                            .find(|h| h.field.equiv("Content-Type"))
                            .map(|h| h.value.to_string());
                        assert_eq!(content_type.as_deref(), Some("application/json"));
                        e.lock()
                            .unwrap()
                            .push(serde_json::from_slice(&body).unwrap());
                        "{}"
                    }
                    _ => {
                        let tp = req
                            .headers()
                            .iter()
                            .find(|h| h.field.equiv("traceparent"))
                            .map(|h| h.value.to_string());
                        h.lock().unwrap().push(tp);
                        r#"{"ok": true}"#
                    }
                };
                let _ = req.respond(tiny_http::Response::from_string(answer));
            }
        });
        Receiver {
            url,
            exports,
            hook_headers,
            server,
            thread: Some(thread),
        }
    }

    /// Every exported span, decoded from the OTLP JSON bodies.
    fn spans(&self) -> Vec<J> {
        let mut out = Vec::new();
        for body in self.exports.lock().unwrap().iter() {
            for rs in body["resourceSpans"].as_array().unwrap() {
                let service = &rs["resource"]["attributes"][0];
                assert_eq!(service["key"], "service.name");
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    assert_eq!(ss["scope"]["name"], "irkit-tcc");
                    out.extend(ss["spans"].as_array().unwrap().iter().cloned());
                }
            }
        }
        out
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn attr<'a>(span: &'a J, key: &str) -> Option<&'a J> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn string_attr<'a>(span: &'a J, key: &str) -> Option<&'a str> {
    attr(span, key)?["stringValue"].as_str()
}

fn hook_providers(url: &str) -> Providers {
    let mut providers = Providers::echo_all();
    providers.add(
        "*",
        Arc::new(Webhook {
            url: format!("{url}/hook"),
            timeout: Duration::from_secs(5),
            retries: 0,
            backoff: Duration::from_millis(10),
            tls: None,
        }),
    );
    providers
}

fn register(store: &Arc<dyn Store>, host: &Host) {
    let _ = store;
    host.register(&common::effects(), Some("pay")).unwrap();
}

fn post_start(svc: &Service, traceparent: Option<&str>) -> tcc_host::http::Response {
    let url = format!("http://{}/v1/executions", svc.addr());
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(tp) = traceparent {
        headers.push(("traceparent", tp));
    }
    tcc_host::http::request_with(
        "POST",
        &url,
        &headers,
        Some(br#"{"program": "pay"}"#),
        Duration::from_secs(10),
        None,
    )
    .unwrap()
}

fn run_to_end(host: &Arc<Host>, id: &str) {
    let threads = host.spawn();
    let row = host.wait_for(id, Duration::from_secs(20), true).unwrap();
    assert_eq!(row.status, "completed", "{row:?}");
    host.shutdown();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn an_execution_started_with_a_traceparent_exports_one_linked_trace() {
    for db in TestDb::all("t_traces") {
        let receiver = Receiver::start();
        let store = db.open();
        let telemetry = Arc::new(
            Telemetry::new(&receiver.url, "irkit-test", Duration::from_millis(50)).unwrap(),
        );
        let host = Host::new(
            store.clone(),
            hook_providers(&receiver.url),
            HostConfig {
                poll_ms: 10,
                telemetry: Some(telemetry.clone()),
                ..HostConfig::default()
            },
        );
        register(&store, &host);
        let svc = Service::start("127.0.0.1:0", host.clone(), ServiceConfig::default()).unwrap();
        let r = post_start(&svc, Some(CALLER));
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let id = serde_json::from_slice::<J>(&r.body).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        run_to_end(&host, &id);
        svc.stop();
        telemetry.flush().unwrap();

        let spans = receiver.spans();
        let caller = TraceParent::parse(CALLER).unwrap();
        let trace_hex = &CALLER[3..35];
        let named =
            |name: &str| -> Vec<&J> { spans.iter().filter(|s| s["name"] == name).collect() };
        let start = named("POST /v1/executions");
        assert_eq!(start.len(), 1, "{spans:#?}");
        let start = start[0];
        assert_eq!(start["traceId"], trace_hex);
        assert_eq!(start["parentSpanId"], &CALLER[36..52]);
        assert_eq!(start["kind"], 2, "server");
        assert_eq!(
            attr(start, "http.response.status_code").unwrap()["intValue"],
            "201"
        );
        let drives = named("tcc.drive");
        assert!(!drives.is_empty(), "{spans:#?}");
        for d in &drives {
            assert_eq!(d["traceId"], trace_hex);
            assert_eq!(d["parentSpanId"], start["spanId"]);
            assert_eq!(string_attr(d, "tcc.execution_id"), Some(id.as_str()));
        }
        let drive_ids: Vec<&J> = drives.iter().map(|d| &d["spanId"]).collect();
        let effects = named("tcc.effect");
        let keys: Vec<&str> = effects
            .iter()
            .map(|e| string_attr(e, "tcc.effect.key").unwrap())
            .collect();
        assert_eq!(keys, ["charge", "ship"]);
        let checkpoints = named("tcc.checkpoint");
        assert!(!checkpoints.is_empty());
        for s in effects.iter().chain(&checkpoints) {
            assert_eq!(s["traceId"], trace_hex);
            assert!(drive_ids.contains(&&s["parentSpanId"]), "{s:#}");
            assert_eq!(string_attr(s, "tcc.execution_id"), Some(id.as_str()));
            assert!(
                s["startTimeUnixNano"]
                    .as_str()
                    .unwrap()
                    .parse::<u128>()
                    .unwrap()
                    <= s["endTimeUnixNano"]
                        .as_str()
                        .unwrap()
                        .parse::<u128>()
                        .unwrap()
            );
        }
        assert!(
            checkpoints
                .iter()
                .any(|c| string_attr(c, "tcc.status") == Some("completed"))
        );
        // Each webhook call got its effect span's context.
        let sent: Vec<String> = receiver
            .hook_headers
            .lock()
            .unwrap()
            .iter()
            .map(|h| h.clone().expect("traceparent header"))
            .collect();
        let expected: Vec<String> = effects
            .iter()
            .map(|e| format!("00-{trace_hex}-{}-01", e["spanId"].as_str().unwrap()))
            .collect();
        assert_eq!(sent, expected);
        assert!(caller.sampled());
    }
}

#[test]
fn an_invalid_traceparent_on_start_is_refused_and_tracing_off_passes_it_on() {
    for db in TestDb::all("t_traces_off") {
        let receiver = Receiver::start();
        let store = db.open();
        let host = Host::new(
            store.clone(),
            hook_providers(&receiver.url),
            HostConfig {
                poll_ms: 10,
                ..HostConfig::default()
            },
        );
        register(&store, &host);
        let svc = Service::start("127.0.0.1:0", host.clone(), ServiceConfig::default()).unwrap();
        let bad = post_start(&svc, Some("00-zz-00f067aa0ba902b7-01"));
        assert_eq!(bad.status, 400);
        let body: J = serde_json::from_slice(&bad.body).unwrap();
        assert!(body.to_string().contains("header traceparent"), "{body}");
        let r = post_start(&svc, Some(CALLER));
        assert_eq!(r.status, 201);
        let id = serde_json::from_slice::<J>(&r.body).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        run_to_end(&host, &id);
        svc.stop();
        let sent = receiver.hook_headers.lock().unwrap().clone();
        assert_eq!(sent, vec![Some(CALLER.to_string()); 2]);
        // Nothing exported with tracing off.
        assert!(receiver.exports.lock().unwrap().is_empty());
    }
}

/// A host exporting to `receiver` (batches 50 ms apart), echo providers.
fn traced_host(store: &Arc<dyn Store>, receiver: &Receiver) -> (Arc<Host>, Arc<Telemetry>) {
    let telemetry =
        Arc::new(Telemetry::new(&receiver.url, "irkit-test", Duration::from_millis(50)).unwrap());
    let host = Host::new(
        store.clone(),
        Providers::echo_all(),
        HostConfig {
            poll_ms: 10,
            telemetry: Some(telemetry.clone()),
            ..HostConfig::default()
        },
    );
    (host, telemetry)
}

/// The spans of `spans` named `name` whose execution is `id`.
fn spans_of<'a>(spans: &'a [J], name: &str, id: &str) -> Vec<&'a J> {
    spans
        .iter()
        .filter(|s| s["name"] == name && string_attr(s, "tcc.execution_id") == Some(id))
        .collect()
}

#[test]
fn a_child_execution_continues_its_parents_drive_trace() {
    for db in TestDb::all("t_traces_child") {
        let receiver = Receiver::start();
        let store = db.open();
        let (host, telemetry) = traced_host(&store, &receiver);
        host.register(&common::worker(), Some("worker")).unwrap();
        // run(): Invoke worker(3), return its result.
        let parent = common::artifact(&[(
            "run",
            0,
            0,
            serde_json::json!([
                {"op": "LoadConst", "value": {"t": "number", "v": 3.0}},
                {"op": "LoadConst", "value": {"t": "string", "v": "worker"}},
                {"op": "Invoke", "arg_count": 1},
                {"op": "Return"}
            ]),
        )]);
        host.register(&parent, Some("parent")).unwrap();
        let caller = TraceParent::parse(CALLER).unwrap();
        let id = host
            .start_traced("parent", Default::default(), None, Some(&caller))
            .unwrap();
        run_to_end(&host, &id);
        telemetry.flush().unwrap();

        let spans = receiver.spans();
        let trace_hex = &CALLER[3..35];
        let parent_drives: Vec<&J> = spans_of(&spans, "tcc.drive", &id)
            .into_iter()
            .map(|d| &d["spanId"])
            .collect();
        assert!(!parent_drives.is_empty(), "{spans:#?}");
        let child_drives: Vec<&J> = spans
            .iter()
            .filter(|s| {
                s["name"] == "tcc.drive"
                    && string_attr(s, "tcc.execution_id").is_some_and(|e| e != id)
            })
            .collect();
        assert!(
            !child_drives.is_empty(),
            "no drive of the child: {spans:#?}"
        );
        for d in &child_drives {
            assert_eq!(d["traceId"], trace_hex, "{d:#}");
            assert!(
                parent_drives.contains(&&d["parentSpanId"]),
                "the child's drive is not a child of a parent's drive: {d:#}"
            );
        }
        // The child's effect is in the same trace.
        let child = string_attr(child_drives[0], "tcc.execution_id").unwrap();
        let effects = spans_of(&spans, "tcc.effect", child);
        assert_eq!(effects.len(), 1, "{spans:#?}");
        assert_eq!(effects[0]["traceId"], trace_hex);
    }
}

#[test]
fn a_schedule_tick_is_the_root_of_its_executions_trace() {
    use tcc_host::schedule::{Catchup, NewSchedule, Overlap, Spec};
    for db in TestDb::all("t_traces_sched") {
        let receiver = Receiver::start();
        let store = db.open();
        let (host, telemetry) = traced_host(&store, &receiver);
        host.register(&common::effects(), Some("pay")).unwrap();
        let schedules = tcc_host::schedule::store_of(&*store).unwrap();
        let row = NewSchedule {
            name: "hourly-pay".into(),
            program: "pay".into(),
            args: Default::default(),
            spec: Spec::parse("every", "1h").unwrap(),
            overlap: Overlap::parse("skip").unwrap(),
            catchup: Catchup::parse("latest").unwrap(),
            catchup_window_ms: 60_000,
            paused: false,
        }
        .row(tcc_host::now_ms())
        .unwrap();
        let due = row.next_due_ms;
        schedules.create_schedule(&row).unwrap();
        let report = tcc_host::schedule::run_pass_traced(&*store, Some(&telemetry), due).unwrap();
        assert_eq!(report.started, 1, "{report:?}");
        let id = tcc_host::schedule::tick_execution_id("hourly-pay", due);
        run_to_end(&host, &id);
        telemetry.flush().unwrap();

        let spans = receiver.spans();
        let ticks = spans_of(&spans, "tcc.schedule.tick", &id);
        assert_eq!(ticks.len(), 1, "{spans:#?}");
        let tick = ticks[0];
        assert_eq!(string_attr(tick, "tcc.schedule"), Some("hourly-pay"));
        assert_eq!(string_attr(tick, "tcc.outcome"), Some("started"));
        assert_eq!(
            attr(tick, "tcc.schedule.tick_ms").unwrap()["intValue"],
            due.to_string()
        );
        assert!(tick.get("parentSpanId").is_none(), "a tick starts a trace");
        let drives = spans_of(&spans, "tcc.drive", &id);
        assert!(!drives.is_empty(), "{spans:#?}");
        for d in &drives {
            assert_eq!(d["traceId"], tick["traceId"]);
            assert_eq!(d["parentSpanId"], tick["spanId"]);
        }
    }
}

#[test]
fn failed_exports_are_counted_on_the_metrics() {
    // An endpoint that refuses connections: a port bound, then released.
    let refused = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let read = |name: &str| -> u64 {
        let text = tcc_host::metrics::global().render(None);
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("{name} not in the metrics:\n{text}"))
    };
    let failures = read("tcc_trace_export_failures_total");
    let dropped = read("tcc_trace_spans_dropped_total");
    let telemetry = Telemetry::new(&refused, "irkit-test", Duration::from_secs(60)).unwrap();
    for _ in 0..3 {
        telemetry
            .span(
                "tcc.test",
                opentelemetry::trace::SpanKind::Internal,
                None,
                Vec::new(),
            )
            .end();
    }
    assert!(telemetry.flush().is_err(), "the export should fail");
    assert!(read("tcc_trace_export_failures_total") > failures);
    assert!(read("tcc_trace_spans_dropped_total") >= dropped + 3);
    // An endpoint that answers 500 counts too.
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}", server.server_addr().to_ip().unwrap());
    let answering = std::thread::spawn(move || {
        if let Ok(req) = server.recv() {
            let _ = req.respond(tiny_http::Response::from_string("no").with_status_code(500));
        }
    });
    let failures = read("tcc_trace_export_failures_total");
    let telemetry = Telemetry::new(&url, "irkit-test", Duration::from_secs(60)).unwrap();
    telemetry
        .span(
            "tcc.test",
            opentelemetry::trace::SpanKind::Internal,
            None,
            Vec::new(),
        )
        .end();
    assert!(telemetry.flush().is_err());
    answering.join().unwrap();
    assert!(read("tcc_trace_export_failures_total") > failures);
}

#[test]
fn a_worker_task_carries_the_traceparent_to_its_poll_answer() {
    use tcc_host::worker_tasks::{Claim, NewTask, TaskStore};
    for db in TestDb::all("t_traces_tasks") {
        drop(db.open());
        let tasks: Box<dyn TaskStore> = match &db {
            TestDb::Sqlite(d) => Box::new(
                tcc_host::worker_tasks::sqlite::SqliteTasks::open(&d.join("t.db")).unwrap(),
            ),
            TestDb::Pg(s) => Box::new(tcc_host::worker_tasks::pg::PgTasks::open(&s.url()).unwrap()),
        };
        let task = |key: &str, tp: Option<&str>| NewTask {
            idempotency_key: format!("e1:{key}"),
            execution_id: "e1".into(),
            key: key.into(),
            input: "{\"t\":\"null\"}".into(),
            traceparent: tp.map(str::to_string),
        };
        tasks.enqueue(&task("traced", Some(CALLER)), 1).unwrap();
        tasks.enqueue(&task("plain", None), 2).unwrap();
        let claimed = tasks
            .claim(&Claim {
                patterns: &["*".to_string()],
                worker: "w1",
                lease_ms: 10_000,
                max: 10,
                now: 3,
                namespace: None,
            })
            .unwrap();
        assert_eq!(claimed.len(), 2);
        for t in &claimed {
            let polled = tcc_host::worker_tasks::api::task_json(t, true);
            match t.key.as_str() {
                "traced" => {
                    assert_eq!(t.traceparent.as_deref(), Some(CALLER));
                    assert_eq!(polled["traceparent"], CALLER);
                }
                _ => {
                    assert_eq!(t.traceparent, None);
                    assert!(polled.get("traceparent").is_none());
                }
            }
        }
    }
}

#[test]
fn the_endpoint_must_be_an_http_url() {
    assert_eq!(
        tcc_host::otel::traces_url("http://collector:4318").unwrap(),
        "http://collector:4318/v1/traces"
    );
    assert_eq!(
        tcc_host::otel::traces_url("https://c.example/otlp/v1/traces").unwrap(),
        "https://c.example/otlp/v1/traces"
    );
    for bad in ["collector:4318", "http://", "grpc://c:4317", ""] {
        assert!(
            Telemetry::new(bad, "t", Duration::from_millis(50)).is_err(),
            "{bad:?}"
        );
    }
}

// The W3C header itself.
const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn round_trips_the_w3c_example() {
    let tp = TraceParent::parse(GOOD).unwrap();
    assert!(tp.sampled());
    assert_eq!(tp.trace_id[0], 0x4b);
    assert_eq!(tp.span_id[7], 0xb7);
    assert_eq!(tp.to_string(), GOOD);
}

#[test]
fn refuses_bad_values_with_the_reason() {
    let cases = [
        ("", tcc_host::otel::TraceParentError::Shape),
        (
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            tcc_host::otel::TraceParentError::NotHex { field: "trace-id" },
        ),
        (
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            tcc_host::otel::TraceParentError::Version("ff".into()),
        ),
        (
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            tcc_host::otel::TraceParentError::Zero { field: "trace-id" },
        ),
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            tcc_host::otel::TraceParentError::Zero { field: "parent-id" },
        ),
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            tcc_host::otel::TraceParentError::Version("00".into()),
        ),
        (
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            tcc_host::otel::TraceParentError::Shape,
        ),
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
            tcc_host::otel::TraceParentError::Shape,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(TraceParent::parse(text), Err(want), "{text:?}");
    }
}

#[test]
fn reads_a_later_version_as_version_00() {
    let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-more";
    let tp = TraceParent::parse(later).unwrap();
    assert!(!tp.sampled());
    assert_eq!(
        tp.to_string(),
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
    );
}
