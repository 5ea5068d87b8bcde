//! Effect providers: webhooks against a loopback server (idempotency
//! header, retries with backoff, failure after the budget, no retry on
//! 4xx, timeouts), the TOML routing file, and the built-ins.

use serde_json::{Value as J, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcc_host::providers::{EffectCall, EffectProvider, ProviderOutcome, Providers, Webhook};
use tcc_host::store::Store;
use tcc_host::store::sqlite::SqliteStore;

/// A loopback server answering with `answers` in turn (status, body),
/// recording (idempotency key, body) of each request. Stopped on drop.
struct Hook {
    server: Arc<tiny_http::Server>,
    url: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hook {
    fn new(answers: Vec<(u16, &'static str, u64)>) -> Hook {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}/effect", server.server_addr().to_ip().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, log) = (server.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            let mut i = 0;
            while let Ok(mut req) = s.recv() {
                let key = req
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Idempotency-Key"))
                    .map(|h| h.value.to_string())
                    .unwrap_or_default();
                let mut body = String::new();
                let _ = req.as_reader().read_to_string(&mut body);
                log.lock().unwrap().push((key, body));
                let (status, text, delay) = answers[i.min(answers.len() - 1)];
                i += 1;
                std::thread::sleep(Duration::from_millis(delay));
                let _ =
                    req.respond(tiny_http::Response::from_string(text).with_status_code(status));
            }
        });
        Hook {
            server,
            url,
            seen,
            thread: Some(thread),
        }
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn call(p: &dyn EffectProvider, input: J) -> ProviderOutcome {
    p.call(&EffectCall {
        execution_id: "e1",
        key: "charge",
        idempotency_key: "e1:charge",
        input: &input,
        traceparent: None,
    })
}

fn webhook(url: &str, retries: u32, timeout_ms: u64) -> Webhook {
    Webhook {
        url: url.to_string(),
        timeout: Duration::from_millis(timeout_ms),
        retries,
        backoff: Duration::from_millis(10),
        tls: None,
    }
}

#[test]
fn webhook_posts_plain_json_with_the_idempotency_key() {
    let h = Hook::new(vec![(200, "{\"ok\": [1, \"a\"]}", 0)]);
    let input = json!({"t": "object", "v": {"amount": {"t": "number", "v": 42}}});
    let out = call(&webhook(&h.url, 0, 2000), input);
    assert_eq!(
        out,
        ProviderOutcome::Result(json!({"t": "object", "v": {"ok": {"t": "array", "v": [
            {"t": "number", "v": 1}, {"t": "string", "v": "a"}]}}}))
    );
    let seen = h.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![("e1:charge".to_string(), "{\"amount\":42}".to_string())]
    );
}

#[test]
fn webhook_retries_5xx_with_backoff_then_succeeds() {
    let h = Hook::new(vec![(500, "", 0), (503, "", 0), (200, "7", 0)]);
    let start = Instant::now();
    let out = call(&webhook(&h.url, 3, 2000), json!({"t": "null"}));
    assert_eq!(out, ProviderOutcome::Result(json!({"t": "number", "v": 7})));
    assert_eq!(h.seen.lock().unwrap().len(), 3);
    // Backoff 10 ms then 20 ms.
    assert!(start.elapsed() >= Duration::from_millis(30));
}

#[test]
fn webhook_failure_after_the_retry_budget_and_no_retry_on_4xx() {
    let h = Hook::new(vec![(500, "", 0)]);
    match call(&webhook(&h.url, 2, 2000), json!({"t": "null"})) {
        ProviderOutcome::Failed(m) => {
            assert!(m.contains("HTTP 500") && m.contains("3 attempts"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.seen.lock().unwrap().len(), 3);
    let h = Hook::new(vec![(400, "{}", 0)]);
    assert!(matches!(
        call(&webhook(&h.url, 5, 2000), json!({"t": "null"})),
        ProviderOutcome::Failed(m) if m.contains("HTTP 400")
    ));
    assert_eq!(h.seen.lock().unwrap().len(), 1);
    let h = Hook::new(vec![(200, "not json", 0)]);
    assert!(matches!(
        call(&webhook(&h.url, 0, 2000), json!({"t": "null"})),
        ProviderOutcome::Failed(m) if m.contains("not JSON")
    ));
}

#[test]
fn webhook_times_out() {
    let h = Hook::new(vec![(200, "1", 1500)]);
    let start = Instant::now();
    match call(&webhook(&h.url, 0, 200), json!({"t": "null"})) {
        ProviderOutcome::Failed(m) => assert!(m.contains("reading"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(start.elapsed() < Duration::from_millis(1400));
}

#[test]
fn toml_routes_first_match_and_builtins() {
    let d = std::env::temp_dir().join(tcc_host::random_id("tcc-prov-"));
    std::fs::create_dir_all(&d).unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&d.join("p.db")).unwrap());
    let p = Providers::from_toml(
        "[[route]]\npattern = \"kv.*\"\nprovider = \"kv\"\n\n[[route]]\npattern = \"now\"\nprovider = \"clock\"\n\n[[route]]\npattern = \"dice\"\nprovider = \"random\"\n",
        store.clone(),
    )
    .unwrap();
    let run = |key: &str, input: J| {
        p.call(&EffectCall {
            execution_id: "e",
            key,
            idempotency_key: "e:k",
            input: &input,
            traceparent: None,
        })
    };
    let set = json!({"t": "object", "v": {"op": {"t": "string", "v": "set"},
        "key": {"t": "string", "v": "a"}, "value": {"t": "number", "v": 3}}});
    assert_eq!(
        run("kv.set", set),
        ProviderOutcome::Result(json!({"t": "number", "v": 3}))
    );
    let get = json!({"t": "object", "v": {"op": {"t": "string", "v": "get"}, "key": {"t": "string", "v": "a"}}});
    assert_eq!(
        run("kv.get", get),
        ProviderOutcome::Result(json!({"t": "number", "v": 3}))
    );
    assert!(matches!(
        run("kv.x", json!({"t": "null"})),
        ProviderOutcome::Failed(_)
    ));
    match run("now", json!({"t": "null"})) {
        ProviderOutcome::Result(v) => assert!(v["v"].as_f64().unwrap() > 1.6e12),
        other => panic!("{other:?}"),
    }
    match run("dice", json!({"t": "null"})) {
        ProviderOutcome::Result(v) => assert!((0.0..1.0).contains(&v["v"].as_f64().unwrap())),
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(run("unrouted", json!({"t": "null"})), ProviderOutcome::Failed(m) if m.contains("no effect provider"))
    );
    for bad in [
        "route = 1",
        "[[route]]\nprovider = \"echo\"",
        "[[route]]\npattern = \"a\"\nprovider = \"nope\"",
        "[[route]]\npattern = \"a\"\nprovider = \"webhook\"",
        "[[route]]\npattern = \"a\"\nprovider = \"webhook\"\nurl = \"ftp://x\"",
        "[[route]]\npattern = \"a\"\nprovider = \"echo\"\ncolour = 1",
        "[x",
    ] {
        assert!(Providers::from_toml(bad, store.clone()).is_err(), "{bad}");
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}
