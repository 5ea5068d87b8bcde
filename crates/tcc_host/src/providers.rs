//! Effect providers: the [`EffectProvider`] trait for embedders, the
//! built-ins (`echo`, `kv`, `clock`, `random`, `webhook`) and the TOML
//! routing configuration (`--providers FILE`).
//!
//! The host journals every provider outcome under the effect's
//! idempotency key before the execution moves on, so a replayed step gets
//! the journalled value and the provider is not called again. A provider
//! can still be called twice for one key when the host crashes between the
//! call and the journal write: that is why every call carries the
//! idempotency key, and why the built-in `echo` log and webhooks are
//! expected to deduplicate on it.

pub use crate::pattern::pattern_matches;
use crate::retry::RetryPolicy;
use crate::store::Store;
use crate::values::{plain_to_tagged, tagged_to_plain};
use serde_json::{Value as J, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One effect call.
#[derive(Debug, Clone)]
pub struct EffectCall<'a> {
    /// Execution id.
    pub execution_id: &'a str,
    /// Effect key.
    pub key: &'a str,
    /// `{exec}:{key}`.
    pub idempotency_key: &'a str,
    /// Inlined tagged input.
    pub input: &'a J,
    /// The W3C `traceparent` of the effect's span (tracing on), else the
    /// one the execution was started with, if any (issue 35): webhooks
    /// send it as the `traceparent` header, worker tasks carry it.
    pub traceparent: Option<&'a str>,
}

/// What a provider answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderOutcome {
    /// A tagged result value.
    Result(J),
    /// A failure message (thrown into the program, catchable).
    Failed(String),
    /// No outcome (the host is shutting down, the provider's queue is
    /// unreachable): nothing is journalled, the drive ends and the
    /// execution resumes from its last checkpoint.
    Abandoned(String),
}

/// Makes the provider of a `worker` route from its `timeout_ms` (the
/// queue lives in [`crate::worker_tasks`]).
pub type WorkerRoutes<'a> = &'a dyn Fn(Duration) -> Arc<dyn EffectProvider>;

/// An effect provider. Implementations must be safe to call again with the
/// same idempotency key (the host guarantees at-least-once calls and
/// exactly-once journalled results).
pub trait EffectProvider: Send + Sync {
    /// Runs the effect.
    fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome;
}

/// `echo`: the result is the input. With `log`, appends one JSON line
/// `{"idempotency_key", "key", "input"}` per call (the effect-provider log
/// the crash harness compares; a receiver deduplicates on the key).
/// With `delay`, each call first sleeps that long (a slow provider, for
/// tests and demonstrations of leases).
pub struct Echo {
    log: Option<(PathBuf, Mutex<()>)>,
    delay: Duration,
}

impl Echo {
    /// An echo provider, logging to `log` if given.
    pub fn new(log: Option<PathBuf>) -> Echo {
        Echo {
            log: log.map(|p| (p, Mutex::new(()))),
            delay: Duration::ZERO,
        }
    }

    /// The same, sleeping `delay` before each answer.
    pub fn with_delay(mut self, delay: Duration) -> Echo {
        self.delay = delay;
        self
    }
}

impl EffectProvider for Echo {
    fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        if let Some((path, lock)) = &self.log {
            let _g = lock.lock();
            let line = tcc_ir::to_canonical(&json!({
                "idempotency_key": call.idempotency_key,
                "key": call.key,
                "input": call.input,
            }));
            let r = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| {
                    f.write_all(format!("{line}\n").as_bytes())?;
                    f.sync_data()
                });
            if let Err(e) = r {
                return ProviderOutcome::Failed(format!("echo log: {e}"));
            }
        }
        ProviderOutcome::Result(call.input.clone())
    }
}

/// `kv`: a durable key-value store in the host database. Input (plain
/// view) `{"op": "get", "key": K}` → the stored value or null;
/// `{"op": "set", "key": K, "value": V}` → V.
pub struct Kv {
    store: Arc<dyn Store>,
}

impl EffectProvider for Kv {
    fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        let fields = match call.input.get("v") {
            Some(J::Object(o)) if call.input.get("t") == Some(&J::from("object")) => o,
            _ => return ProviderOutcome::Failed("kv: input must be an object".into()),
        };
        let op = fields.get("op").map(tagged_to_plain);
        let key = match fields.get("key").map(tagged_to_plain) {
            Some(J::String(k)) => k,
            _ => return ProviderOutcome::Failed("kv: input.key must be a string".into()),
        };
        match op.as_ref().and_then(J::as_str) {
            Some("get") => match self.store.kv_get(&key) {
                Ok(v) => ProviderOutcome::Result(v.unwrap_or(json!({"t": "null"}))),
                Err(e) => ProviderOutcome::Failed(format!("kv: {e}")),
            },
            Some("set") => {
                let v = fields.get("value").cloned().unwrap_or(json!({"t": "null"}));
                match self.store.kv_set(&key, &v) {
                    Ok(()) => ProviderOutcome::Result(v),
                    Err(e) => ProviderOutcome::Failed(format!("kv: {e}")),
                }
            }
            _ => ProviderOutcome::Failed("kv: input.op must be \"get\" or \"set\"".into()),
        }
    }
}

/// `clock`: the current time in milliseconds since the Unix epoch.
pub struct Clock;

impl EffectProvider for Clock {
    fn call(&self, _: &EffectCall<'_>) -> ProviderOutcome {
        ProviderOutcome::Result(json!({"t": "number", "v": crate::ids::now_ms()}))
    }
}

/// `random`: a number in [0, 1).
pub struct Random;

impl EffectProvider for Random {
    fn call(&self, _: &EffectCall<'_>) -> ProviderOutcome {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i64(crate::ids::now_ms());
        let x = (h.finish() >> 11) as f64 / (1u64 << 53) as f64;
        ProviderOutcome::Result(json!({"t": "number", "v": x}))
    }
}

/// `webhook`: POSTs the plain-JSON input to `url` (`http://` or
/// `https://`) with headers `Idempotency-Key` and `X-TCC-Effect-Key` (and
/// `traceparent`, when the call has one: issue 35); a
/// 2xx JSON response body (plain JSON) is the result. Connection errors,
/// timeouts, TLS handshake failures and 5xx/429 answers are retried
/// `retries` times with exponential backoff (`backoff_ms`, doubling); a
/// 4xx answer, a rejected server certificate (not retried: see
/// [`crate::http::HttpError::retryable`]) or an exhausted retry budget is
/// an effect failure (catchable by the program).
pub struct Webhook {
    /// Target URL (`http://` or `https://`).
    pub url: String,
    /// Per-attempt timeout (connect, TLS handshake, request and response
    /// together).
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff.
    pub backoff: Duration,
    /// The client for https URLs (its trusted roots); `None`: Mozilla's
    /// roots ([`crate::http::default_tls`]).
    pub tls: Option<Arc<crate::http::Tls>>,
}

impl EffectProvider for Webhook {
    fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        let body = tcc_ir::to_canonical(&tagged_to_plain(call.input));
        let mut last = String::new();
        let mut backoff = self.backoff;
        for attempt in 0..=self.retries {
            if attempt > 0 {
                std::thread::sleep(backoff);
                backoff = backoff.saturating_mul(2);
            }
            let mut headers = vec![
                ("Content-Type", "application/json"),
                ("Idempotency-Key", call.idempotency_key),
                ("X-TCC-Effect-Key", call.key),
            ];
            if let Some(tp) = call.traceparent {
                headers.push(("traceparent", tp));
            }
            let r = crate::http::request_with(
                "POST",
                &self.url,
                &headers,
                Some(body.as_bytes()),
                self.timeout,
                self.tls.as_ref(),
            );
            match r {
                Ok(resp) if (200..300).contains(&resp.status) => {
                    let parsed = if resp.body.iter().all(u8::is_ascii_whitespace) {
                        Ok(J::Null)
                    } else if let Err(e @ crate::values::CountError::TooMany { .. }) =
                        crate::values::count_values(&resp.body, crate::values::MAX_VALUES)
                    {
                        return ProviderOutcome::Failed(format!(
                            "webhook {}: response refused: {e}",
                            self.url
                        ));
                    } else {
                        serde_json::from_slice::<J>(&resp.body)
                    };
                    return match parsed {
                        Ok(j) => match plain_to_tagged(&j) {
                            Ok(t) => ProviderOutcome::Result(t),
                            Err(e) => ProviderOutcome::Failed(format!("webhook: {e}")),
                        },
                        Err(e) => ProviderOutcome::Failed(format!(
                            "webhook {}: response is not JSON: {e}",
                            self.url
                        )),
                    };
                }
                Ok(resp) if resp.status == 429 || resp.status >= 500 => {
                    last = format!("webhook {}: HTTP {}", self.url, resp.status);
                }
                Ok(resp) => {
                    return ProviderOutcome::Failed(format!(
                        "webhook {}: HTTP {}",
                        self.url, resp.status
                    ));
                }
                Err(e) if e.retryable() => last = format!("webhook {}: {e}", self.url),
                Err(e) => {
                    return ProviderOutcome::Failed(format!(
                        "webhook {}: {e} (not retried)",
                        self.url
                    ));
                }
            }
        }
        if self.retries == 0 {
            return ProviderOutcome::Failed(last);
        }
        ProviderOutcome::Failed(format!(
            "{last} (after {} attempts)",
            self.retries as u64 + 1
        ))
    }
}

/// Routes effect keys to providers: the first route whose pattern matches
/// wins. A pattern is an exact key, or contains `*` wildcards (any run of
/// characters). With no routes at all every key goes to `echo`; with
/// routes, an unmatched key is an effect failure.
pub struct Providers {
    routes: Vec<Route>,
}

/// One route: the keys it takes, its provider and its durable retry policy.
struct Route {
    pattern: String,
    provider: Arc<dyn EffectProvider>,
    retry: Option<RetryPolicy>,
}

impl Providers {
    /// No routes: every key is echoed.
    pub fn echo_all() -> Providers {
        Providers { routes: Vec::new() }
    }

    /// Explicit routes (embedders).
    pub fn with_routes(routes: Vec<(String, Arc<dyn EffectProvider>)>) -> Providers {
        let mut p = Providers::echo_all();
        for (pattern, provider) in routes {
            p.add(&pattern, provider);
        }
        p
    }

    /// Adds a route at the end.
    pub fn add(&mut self, pattern: &str, provider: Arc<dyn EffectProvider>) {
        self.add_with_retry(pattern, provider, None);
    }

    /// Adds a route at the end whose failed calls the host retries durably
    /// by `retry` (see [`crate::retry`]).
    pub fn add_with_retry(
        &mut self,
        pattern: &str,
        provider: Arc<dyn EffectProvider>,
        retry: Option<RetryPolicy>,
    ) {
        self.routes.push(Route {
            pattern: pattern.to_string(),
            provider,
            retry,
        });
    }

    /// The durable retry policy of the route that takes `key`, if it has one.
    pub fn retry_policy(&self, key: &str) -> Option<&RetryPolicy> {
        self.routes
            .iter()
            .find(|r| pattern_matches(&r.pattern, key))
            .and_then(|r| r.retry.as_ref())
    }

    /// Parses the TOML configuration:
    /// `[[route]] pattern = "..." provider = "echo|kv|clock|random|webhook"`,
    /// with `log` and `delay_ms` (echo), `url`, `timeout_ms` (5000), `retries` (3),
    /// `backoff_ms` (100) and `ca_file` (https only: a PEM file whose
    /// certificates are the only trusted roots, instead of Mozilla's) for
    /// webhooks. A relative `ca_file` is relative to the current directory.
    /// Any route may have a `[route.retry]` table: its durable retry policy
    /// ([`RetryPolicy::from_toml`]).
    pub fn from_toml(text: &str, store: Arc<dyn Store>) -> Result<Providers, String> {
        Providers::from_toml_with(text, store, None)
    }

    /// [`Providers::from_toml`], with `provider = "worker"` routes made by
    /// `worker` (`timeout_ms`, default 600 000: how long the host waits
    /// for a worker's answer); without it such a route is an error.
    pub fn from_toml_with(
        text: &str,
        store: Arc<dyn Store>,
        worker: Option<WorkerRoutes<'_>>,
    ) -> Result<Providers, String> {
        let table: toml::Table = text
            .parse()
            .map_err(|e| format!("providers file is not TOML: {e}"))?;
        for k in table.keys() {
            if k != "route" {
                return Err(format!("providers file: unknown key {k:?}"));
            }
        }
        let mut p = Providers::echo_all();
        let routes = match table.get("route") {
            None => return Ok(p),
            Some(toml::Value::Array(a)) => a,
            Some(_) => return Err("providers file: `route` must be an array of tables".into()),
        };
        for (i, r) in routes.iter().enumerate() {
            let t = r
                .as_table()
                .ok_or_else(|| format!("route {i}: not a table"))?;
            let s = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
            let n = |k: &str, d: i64| -> Result<i64, String> {
                match t.get(k) {
                    None => Ok(d),
                    Some(v) => v
                        .as_integer()
                        .filter(|x| *x >= 0)
                        .ok_or_else(|| format!("route {i}: {k} must be a non-negative integer")),
                }
            };
            for k in t.keys() {
                if ![
                    "pattern",
                    "provider",
                    "log",
                    "url",
                    "timeout_ms",
                    "retries",
                    "backoff_ms",
                    "delay_ms",
                    "ca_file",
                    "retry",
                ]
                .contains(&k.as_str())
                {
                    return Err(format!("route {i}: unknown key {k:?}"));
                }
            }
            let pattern = s("pattern").ok_or_else(|| format!("route {i}: missing pattern"))?;
            let kind = s("provider").ok_or_else(|| format!("route {i}: missing provider"))?;
            let provider: Arc<dyn EffectProvider> = match kind.as_str() {
                "echo" => Arc::new(
                    Echo::new(s("log").map(PathBuf::from))
                        .with_delay(Duration::from_millis(n("delay_ms", 0)?.min(60_000) as u64)),
                ),
                "kv" => Arc::new(Kv {
                    store: store.clone(),
                }),
                "clock" => Arc::new(Clock),
                "worker" => match worker {
                    Some(make) => make(Duration::from_millis(n("timeout_ms", 600_000)? as u64)),
                    None => {
                        return Err(format!(
                            "route {i}: provider \"worker\" needs the task queue of `irkit tcc serve`"
                        ));
                    }
                },
                "random" => Arc::new(Random),
                "webhook" => {
                    let url = s("url").ok_or_else(|| format!("route {i}: webhook needs url"))?;
                    let parsed =
                        crate::http::parse_url(&url).map_err(|e| format!("route {i}: {e}"))?;
                    let tls = match s("ca_file") {
                        None if t.contains_key("ca_file") => {
                            return Err(format!("route {i}: ca_file must be a string"));
                        }
                        None => None,
                        Some(_) if !parsed.https => {
                            return Err(format!("route {i}: ca_file is only for https:// URLs"));
                        }
                        Some(path) => Some(
                            crate::http::tls_with_ca_file(std::path::Path::new(&path))
                                .map_err(|e| format!("route {i}: {e}"))?,
                        ),
                    };
                    Arc::new(Webhook {
                        url,
                        timeout: Duration::from_millis(n("timeout_ms", 5000)? as u64),
                        retries: n("retries", 3)?.min(20) as u32,
                        backoff: Duration::from_millis(n("backoff_ms", 100)? as u64),
                        tls,
                    })
                }
                other => return Err(format!("route {i}: unknown provider {other:?}")),
            };
            let retry = match t.get("retry") {
                None => None,
                Some(toml::Value::Table(r)) => Some(RetryPolicy::from_toml(r, i)?),
                Some(_) => return Err(format!("route {i}: retry must be a table")),
            };
            p.add_with_retry(&pattern, provider, retry);
        }
        Ok(p)
    }

    /// Runs the effect with the first matching provider.
    pub fn call(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        let out = self.route(call);
        if !matches!(out, ProviderOutcome::Abandoned(_)) {
            crate::metrics::global().effect(matches!(out, ProviderOutcome::Result(_)));
        }
        out
    }

    fn route(&self, call: &EffectCall<'_>) -> ProviderOutcome {
        if self.routes.is_empty() {
            return Echo::new(None).call(call);
        }
        match self
            .routes
            .iter()
            .find(|r| pattern_matches(&r.pattern, call.key))
        {
            Some(r) => r.provider.call(call),
            None => ProviderOutcome::Failed(format!("no effect provider for key {:?}", call.key)),
        }
    }
}
