//! Flow control (issue 35): concurrency limits and rate limits (token
//! bucket) per program and per effect route, kept in the store so that
//! every node applies the same ones.
//!
//! - A limit's [`Scope`] is `program:NAME` (drives of executions of that
//!   program, by name or artifact hash) or `route:PATTERN` (provider calls
//!   of effects whose key the wildcard pattern matches).
//! - A *slot* is held for the length of a drive (program) or of a provider
//!   call (route): `max_concurrent` bounds the slots held at once across
//!   all nodes. Slots are rows with a lease renewed by their node's
//!   heartbeat: a node killed with slots held gives them back when their
//!   lease expires. A suspended execution holds no slot.
//! - A rate limit is a token bucket (`rate` tokens per second, at most
//!   `burst`) stored with the limit; each slot taken costs one token.
//! - Over a limit, the holder queues ([`rows::FlowStore::acquire`]): one
//!   queue per scope, FIFO by arrival. Only the first waiters (as many as
//!   there are free slots and tokens) may take one, so executions are
//!   admitted in the order they were throttled. A throttled execution is
//!   deferred (its lease kept, as a durable retry's) until it may ask
//!   again; a release wakes the head waiter at once. Its status shows as
//!   `throttled` in the API, the CLI and the dashboard.
//! - A limit is global (every namespace's executions) or a namespace's
//!   ([`limit_key`]: stored under `NAMESPACE/SCOPE`): a namespace's
//!   `program:NAME` limits the drives of that namespace's executions of
//!   the program, its `route:PATTERN` the provider calls of that
//!   namespace's executions. An execution under a global and a namespace
//!   limit takes a slot in each.
//! - Programs and routes without a limit cost nothing: the limits are
//!   cached per node ([`FlowControl`]) and read again every
//!   [`REFRESH_MS`].
//! - Under a concurrency limit far from full, a node reserves a few slots
//!   at once and lends them to its drives without a store write
//!   ([`allot`]); near the limit, with a queue, or under a limit below
//!   [`allot::MIN_LIMIT`], each slot is the store's as above.
//! - Under a rate limit, a node takes a few tokens of the bucket at once
//!   and admits with them without a store write ([`share`]); with a queue,
//!   each admission is the store's. Under a limit with both (of at least
//!   [`allot::MIN_LIMIT`]) a node admits with a reserved slot and a token
//!   of its own.

use crate::store::{ExecutionRow, Store, StoreError};
use serde_json::{Value as J, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod allot;
pub mod api;
mod in_flight;
pub mod rows;
pub mod share;

pub use rows::{
    AcquireRequest, Admission, FlowStore, LimitRow, LimitUsage, NodeBeat, ReserveRequest,
    ShareRequest,
};

/// How often a node reads the limits again (a limit set on another node
/// applies here within this).
pub const REFRESH_MS: u64 = 1_000;
/// A throttled execution behind a full concurrency limit asks again after
/// this, unless a release wakes it first.
pub const RETRY_MS: i64 = 250;
/// Highest concurrency limit.
pub const MAX_CONCURRENT: i64 = 1_000_000;
/// Highest rate (tokens per second).
pub const MAX_RATE: f64 = 1_000_000.0;
/// Longest wait of an admission for the share take or slot reservation
/// another admission of this node has in flight (one statement, or one
/// transaction) before it goes the store's way.
pub const IN_FLIGHT_WAIT: Duration = Duration::from_millis(500);

/// The flow-control rows of `store`, when its backend keeps them (both of
/// this crate's do).
pub fn store_of(store: &dyn Store) -> Option<&dyn FlowStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

/// Why a limit is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    /// The scope is not `program:NAME` or `route:PATTERN`.
    #[error("scope {0:?}: expected program:NAME or route:PATTERN")]
    Scope(String),
    /// A setting is out of range or unknown.
    #[error("limit {field}: {message}")]
    Setting {
        /// The setting.
        field: String,
        /// Why.
        message: String,
    },
    /// Neither a concurrency nor a rate limit.
    #[error("a limit needs max_concurrent, rate or both")]
    Empty,
    /// The namespace of a `NAMESPACE/SCOPE` key is not a valid name.
    #[error("limit namespace: {0}")]
    Namespace(String),
}

impl LimitError {
    /// Stable code.
    pub fn code(&self) -> &'static str {
        match self {
            LimitError::Scope(_) | LimitError::Namespace(_) => "bad_limit_scope",
            LimitError::Setting { .. } | LimitError::Empty => "bad_limit",
        }
    }
}

/// What a limit applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Drives of a program's executions (name or artifact hash).
    Program(String),
    /// Provider calls of effects whose key matches the pattern.
    Route(String),
}

impl Scope {
    /// Parses `program:NAME` or `route:PATTERN`.
    pub fn parse(text: &str) -> Result<Scope, LimitError> {
        let bad = || LimitError::Scope(text.to_string());
        let (kind, rest) = text.split_once(':').ok_or_else(bad)?;
        if rest.is_empty() || text.len() > 300 || text.chars().any(char::is_control) {
            return Err(bad());
        }
        match kind {
            "program" => Ok(Scope::Program(rest.to_string())),
            "route" => Ok(Scope::Route(rest.to_string())),
            _ => Err(bad()),
        }
    }

    /// `program` or `route` (the metrics label).
    pub fn metric_label(&self) -> &'static str {
        match self {
            Scope::Program(_) => "program",
            Scope::Route(_) => "route",
        }
    }
}

/// A limit's settings: `max_concurrent`, `rate` (per second), `burst`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Settings {
    /// Most slots at once.
    pub max_concurrent: Option<i64>,
    /// Tokens per second.
    pub rate_per_s: Option<f64>,
    /// Bucket size (default: the rate rounded up, at least 1).
    pub burst: Option<i64>,
}

impl Settings {
    /// Checks the ranges and fills the default burst.
    pub fn checked(mut self) -> Result<Settings, LimitError> {
        let bad = |field: &str, message: &str| LimitError::Setting {
            field: field.into(),
            message: message.into(),
        };
        if self.max_concurrent.is_none() && self.rate_per_s.is_none() {
            return Err(LimitError::Empty);
        }
        if let Some(m) = self.max_concurrent
            && !(1..=MAX_CONCURRENT).contains(&m)
        {
            return Err(bad("max_concurrent", "must be 1 to 1000000"));
        }
        match self.rate_per_s {
            Some(r) if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) => {
                return Err(bad(
                    "rate",
                    "must be above 0 and at most 1000000 per second",
                ));
            }
            Some(r) => {
                let burst = self.burst.unwrap_or((r.ceil() as i64).max(1));
                if !(1..=MAX_CONCURRENT).contains(&burst) {
                    return Err(bad("burst", "must be 1 to 1000000"));
                }
                self.burst = Some(burst);
            }
            None if self.burst.is_some() => return Err(bad("burst", "needs a rate")),
            None => {}
        }
        Ok(self)
    }

    /// Parses `max=N,rate=R[/s|/m],burst=B` (any subset, any order), as
    /// `irkit tcc serve --limit SCOPE=SETTINGS` takes them.
    pub fn parse(text: &str) -> Result<Settings, LimitError> {
        let mut s = Settings::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| LimitError::Setting {
                field: part.into(),
                message: "expected KEY=VALUE".into(),
            })?;
            let num = |field: &str| {
                v.parse::<i64>().map_err(|_| LimitError::Setting {
                    field: field.into(),
                    message: format!("{v:?} is not a whole number"),
                })
            };
            match k {
                "max" | "max_concurrent" => s.max_concurrent = Some(num("max_concurrent")?),
                "burst" => s.burst = Some(num("burst")?),
                "rate" => s.rate_per_s = Some(parse_rate(v)?),
                other => {
                    return Err(LimitError::Setting {
                        field: other.into(),
                        message: "unknown setting (max, rate, burst)".into(),
                    });
                }
            }
        }
        s.checked()
    }

    /// Reads the JSON members `max_concurrent`, `rate` (number per second
    /// or text as [`parse_rate`]) and `burst`.
    pub fn from_json(body: &J) -> Result<Settings, LimitError> {
        let bad = |field: &str, message: &str| LimitError::Setting {
            field: field.into(),
            message: message.into(),
        };
        let Some(m) = body.as_object() else {
            return Err(bad("body", "must be a JSON object"));
        };
        let mut s = Settings::default();
        for (k, v) in m {
            match k.as_str() {
                "max_concurrent" if v.is_null() => {}
                "max_concurrent" => {
                    s.max_concurrent =
                        Some(v.as_i64().ok_or_else(|| bad(k, "must be a whole number"))?)
                }
                "burst" if v.is_null() => {}
                "burst" => {
                    s.burst = Some(v.as_i64().ok_or_else(|| bad(k, "must be a whole number"))?)
                }
                "rate" if v.is_null() => {}
                "rate" => {
                    s.rate_per_s = Some(match (v.as_f64(), v.as_str()) {
                        (Some(r), _) => r,
                        (None, Some(t)) => parse_rate(t)?,
                        _ => return Err(bad(k, "must be a number per second or \"N/s\"")),
                    })
                }
                "scope" => {}
                other => return Err(bad(other, "unknown member (max_concurrent, rate, burst)")),
            }
        }
        s.checked()
    }
}

/// Parses a rate: `N`, `N/s` (per second) or `N/m` (per minute).
pub fn parse_rate(text: &str) -> Result<f64, LimitError> {
    let (n, per) = match text.split_once('/') {
        Some((n, "s")) => (n, 1.0),
        Some((n, "m")) => (n, 60.0),
        Some(_) => {
            return Err(LimitError::Setting {
                field: "rate".into(),
                message: format!("{text:?}: the unit is /s or /m"),
            });
        }
        None => (text, 1.0),
    };
    n.trim()
        .parse::<f64>()
        .map(|n| n / per)
        .map_err(|_| LimitError::Setting {
            field: "rate".into(),
            message: format!("{text:?} is not a number"),
        })
}

/// The stored key of a limit: its scope (`program:NAME`,
/// `route:PATTERN`), prefixed with `NAMESPACE/` for a namespace's limit.
/// A namespace name has no `/` or `:` and a global scope's kind no `/`,
/// so [`split_key`] reads it back unambiguously.
pub fn limit_key(namespace: Option<&str>, scope: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{scope}"),
        None => scope.to_string(),
    }
}

/// A stored key ([`limit_key`]) as its namespace (`None`: global) and
/// scope.
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key
        .split_once(':')
        .and_then(|(head, _)| head.split_once('/'))
    {
        Some((ns, _)) => (Some(ns), &key[ns.len() + 1..]),
        None => (None, key),
    }
}

/// A limit row from a key ([`limit_key`]: `SCOPE` or `NAMESPACE/SCOPE`)
/// and settings.
pub fn limit_row(key: &str, settings: Settings, now: i64) -> Result<LimitRow, LimitError> {
    let (namespace, scope) = split_key(key);
    if let Some(ns) = namespace {
        crate::namespace::check_name(ns).map_err(LimitError::Namespace)?;
    }
    Scope::parse(scope)?;
    let s = settings.checked()?;
    Ok(LimitRow {
        scope: key.to_string(),
        max_concurrent: s.max_concurrent,
        rate_per_s: s.rate_per_s,
        burst: s.burst,
        updated_ms: now,
    })
}

/// The JSON of a limit (`/v1/limits`).
pub fn limit_json(u: &LimitUsage) -> J {
    let (namespace, scope) = split_key(&u.limit.scope);
    json!({
        "scope": scope,
        "namespace": namespace,
        "max_concurrent": u.limit.max_concurrent,
        "rate": u.limit.rate_per_s,
        "burst": u.limit.burst,
        "in_use": u.in_use,
        "waiting": u.waiting,
        "updated_ms": u.limit.updated_ms,
    })
}

/// A node's view of the limits: read from the store at most every
/// [`REFRESH_MS`], so that work under no limit costs no query.
pub struct FlowControl {
    cached: Mutex<Option<(Instant, ScopeList)>>,
    allot: allot::Allotments,
    shares: share::Shares,
    /// Holders this node admitted through the store (a slot row each, to
    /// renew), how many times at once.
    store_held: Mutex<HashMap<String, u32>>,
    /// This node's last report of what it runs without a slot row
    /// ([`NodeBeat::running`]).
    reported: Mutex<Option<Running>>,
}

/// What a node runs under each limit without a slot row of its own, by
/// scope (sorted; scopes with none left out).
type Running = Vec<(String, i64)>;

/// A limit as a node caches it.
#[derive(Debug, Clone)]
struct CachedLimit {
    /// The stored key ([`limit_key`]).
    text: String,
    /// The namespace of a namespace's limit (`None`: global).
    namespace: Option<String>,
    /// The scope parsed.
    scope: Scope,
    /// `max_concurrent`.
    max: Option<i64>,
    /// Whether it has a rate.
    rate: bool,
    /// The rate (tokens per second) and burst, with a rate.
    bucket: Option<(f64, i64)>,
    /// Executions queued when read.
    waiting: i64,
}

impl CachedLimit {
    /// Whether a node admits under this limit with its own reserved slots
    /// ([`allot`]): a concurrency limit of at least [`allot::MIN_LIMIT`]
    /// (with or without a rate) and nobody queued.
    fn lends_slots(&self) -> bool {
        self.waiting == 0 && self.max.is_some_and(|m| m >= allot::MIN_LIMIT)
    }

    /// Whether a node admits under this limit with its own tokens
    /// ([`share`]): a rate limit without `max_concurrent` or with one it
    /// lends slots of, and nobody queued.
    fn lends_tokens(&self) -> bool {
        self.waiting == 0 && rows::may_share(self.max, self.bucket.map(|(rate, _)| rate))
    }
}

/// The limits, as read.
type ScopeList = Arc<Vec<CachedLimit>>;

impl Default for FlowControl {
    fn default() -> FlowControl {
        FlowControl::new()
    }
}

impl FlowControl {
    /// An empty cache (read at first use).
    pub fn new() -> FlowControl {
        FlowControl {
            cached: Mutex::new(None),
            allot: allot::Allotments::default(),
            shares: share::Shares::default(),
            store_held: Mutex::new(HashMap::new()),
            reported: Mutex::new(None),
        }
    }

    /// Forgets the cached limits (this node changed them).
    pub fn invalidate(&self) {
        if let Ok(mut c) = self.cached.lock() {
            *c = None;
        }
    }

    fn limits(&self, store: &dyn Store) -> ScopeList {
        if let Ok(c) = self.cached.lock()
            && let Some((at, l)) = c.as_ref()
            && at.elapsed() < Duration::from_millis(REFRESH_MS)
        {
            return l.clone();
        }
        self.read_limits(store)
    }

    /// Reads the limits from the store into the cache.
    fn read_limits(&self, store: &dyn Store) -> ScopeList {
        let read = store_of(store)
            .map(|f| f.list_limits(crate::ids::now_ms()))
            .unwrap_or(Ok(Vec::new()));
        let limits: ScopeList = match read {
            Ok(rows) => Arc::new(
                rows.into_iter()
                    .filter_map(|u| {
                        let (namespace, scope) = split_key(&u.limit.scope);
                        let namespace = namespace.map(str::to_string);
                        Scope::parse(scope).ok().map(|scope| CachedLimit {
                            text: u.limit.scope,
                            namespace,
                            scope,
                            max: u.limit.max_concurrent,
                            rate: u.limit.rate_per_s.is_some(),
                            bucket: u.limit.rate_per_s.map(|r| (r, u.limit.burst.unwrap_or(1))),
                            waiting: u.waiting,
                        })
                    })
                    .collect(),
            ),
            Err(e) => {
                tracing::warn!(error = %e, "reading the flow limits failed");
                // Keep the last ones (or none) until the next try.
                self.cached
                    .lock()
                    .ok()
                    .and_then(|c| c.as_ref().map(|(_, l)| l.clone()))
                    .unwrap_or_default()
            }
        };
        if let Ok(mut c) = self.cached.lock() {
            *c = Some((Instant::now(), limits.clone()));
        }
        limits
    }

    /// Whether any limit is set.
    pub fn any(&self, store: &dyn Store) -> bool {
        !self.limits(store).is_empty()
    }

    /// The program scopes that apply to an execution: the global ones of
    /// its program, and its namespace's.
    pub fn program_scopes(&self, store: &dyn Store, row: &ExecutionRow) -> Vec<String> {
        self.limits(store)
            .iter()
            .filter(|l| l.namespace.as_deref().is_none_or(|n| n == row.namespace))
            .filter(|l| match &l.scope {
                Scope::Program(p) => {
                    row.program_name.as_deref() == Some(p.as_str()) || *p == row.artifact_hash
                }
                Scope::Route(_) => false,
            })
            .map(|l| l.text.clone())
            .collect()
    }

    /// The route scopes that apply to an effect key of an execution in
    /// `namespace`: the global ones, and the namespace's.
    pub fn route_scopes(&self, store: &dyn Store, namespace: &str, key: &str) -> Vec<String> {
        self.limits(store)
            .iter()
            .filter(|l| l.namespace.as_deref().is_none_or(|n| n == namespace))
            .filter(
                |l| matches!(&l.scope, Scope::Route(p) if crate::pattern::pattern_matches(p, key)),
            )
            .map(|l| l.text.clone())
            .collect()
    }

    /// Takes a slot in each of `scopes` for `holder`, or queues it.
    pub fn acquire(
        &self,
        store: &dyn Store,
        scopes: Vec<String>,
        holder: &str,
        owner: &str,
        lease_ms: i64,
    ) -> Result<Admission, StoreError> {
        let Some(f) = store_of(store) else {
            return Ok(Admission::Granted { waited_ms: None });
        };
        if self.lend(store, f, &scopes, holder, owner, lease_ms) {
            return Ok(Admission::Granted { waited_ms: None });
        }
        let kind = if scopes.iter().all(|s| s.starts_with("route:")) {
            "route"
        } else {
            "program"
        };
        let queued_in = scopes.clone();
        let a = f.acquire(&AcquireRequest {
            scopes,
            holder: holder.to_string(),
            owner: owner.to_string(),
            now: crate::ids::now_ms(),
            lease_ms,
            retry_ms: RETRY_MS.min(lease_ms.max(1)),
        })?;
        if let Admission::Granted { .. } = a
            && let Ok(mut held) = self.store_held.lock()
        {
            *held.entry(holder.to_string()).or_default() += 1;
        }
        match &a {
            Admission::Granted { waited_ms: Some(w) } => {
                crate::metrics::global().throttle_waited(kind, *w)
            }
            Admission::Wait { .. } => crate::metrics::global().throttled(kind),
            Admission::Granted { waited_ms: None } => {}
        }
        if let Admission::Wait { .. } = a {
            // A queue formed: lending past it would overtake it.
            let slots = self.allot.close(&queued_in);
            self.give_back(store, slots);
            self.close_shares(store, &queued_in, owner);
        }
        Ok(a)
    }

    /// Admits `holder` in every one of `scopes` without the store's queue:
    /// with reserved slots of this node ([`allot`]) in its concurrency
    /// limits and tokens of this node's shares ([`share`]) in its rate
    /// limits, taking some first when a limit allows it; all or none.
    fn lend(
        &self,
        store: &dyn Store,
        f: &dyn FlowStore,
        scopes: &[String],
        holder: &str,
        owner: &str,
        lease_ms: i64,
    ) -> bool {
        let limits = self.limits(store);
        let (mut slotted, mut rated) = (Vec::new(), Vec::new());
        for scope in scopes {
            let Some(l) = limits.iter().find(|l| l.text == *scope) else {
                return false;
            };
            // A limit with both a rate and `max_concurrent` takes a
            // reserved slot and a share's token; one not lent from at all
            // (a queue, a small limit) sends the admission the store's way.
            let (slots, tokens) = (l.max.is_some(), l.rate);
            if (slots && !l.lends_slots()) || (tokens && !l.lends_tokens()) {
                return false;
            }
            if slots {
                slotted.push(scope.clone());
            }
            if tokens {
                rated.push(scope.clone());
            }
        }
        if !rated.is_empty() && !self.take_shares(f, &limits, &rated, owner) {
            return false;
        }
        if !slotted.is_empty() && !self.lend_slots(store, f, &slotted, holder, owner, lease_ms) {
            return false;
        }
        if rated.is_empty() || self.shares.admit(&rated, holder) {
            return true;
        }
        // A share ran out meanwhile: the slots lent go back.
        if !slotted.is_empty() {
            let (_, slots) = self.allot.take_back(&slotted, holder);
            self.give_back(store, slots);
        }
        false
    }

    /// Makes sure this node holds a usable token of every one of `scopes`
    /// (its rate limits, [`CachedLimit::lends_tokens`]), taking shares where
    /// needed.
    fn take_shares(
        &self,
        f: &dyn FlowStore,
        limits: &[CachedLimit],
        scopes: &[String],
        owner: &str,
    ) -> bool {
        if self.shares.ready(scopes) {
            return true;
        }
        for scope in scopes {
            if self.shares.ready(std::slice::from_ref(scope)) {
                continue;
            }
            let Some(l) = limits.iter().find(|l| l.text == *scope) else {
                return false;
            };
            let Some((rate, burst)) = l.bucket.filter(|_| l.lends_tokens()) else {
                return false;
            };
            let Some((unused, started)) = self.shares.begin_take(scope) else {
                // Another admission of this node is taking the next share:
                // its tokens rather than the store's way.
                if self.shares.await_take(scope, IN_FLIGHT_WAIT)
                    && self.shares.ready(std::slice::from_ref(scope))
                {
                    continue;
                }
                return false;
            };
            let taken = f.take_share(&ShareRequest {
                scope: scope.clone(),
                owner: owner.to_string(),
                now: crate::ids::now_ms(),
                want: share::size(rate, burst),
                unused,
                ttl_ms: share::TTL_MS,
            });
            let granted = taken.unwrap_or_else(|e| {
                tracing::warn!(scope, error = %e, "taking a share of a rate limit failed");
                0
            });
            self.shares.end_take(scope, granted, started);
            if granted == 0 {
                return false;
            }
        }
        self.shares.ready(scopes)
    }

    /// Closes this node's shares of `scopes`: their unused tokens go back
    /// to the store (waking as many head waiters), logging a failure (the
    /// shares expire instead).
    fn close_shares(&self, store: &dyn Store, scopes: &[String], owner: &str) {
        let closed = self.shares.close(scopes);
        if closed.is_empty() {
            return;
        }
        let Some(f) = store_of(store) else {
            return;
        };
        for (scope, unused) in closed {
            let r = f.take_share(&ShareRequest {
                scope: scope.clone(),
                owner: owner.to_string(),
                now: crate::ids::now_ms(),
                want: 0,
                unused,
                ttl_ms: share::TTL_MS,
            });
            if let Err(e) = r {
                tracing::warn!(scope, error = %e, "giving a rate limit share back failed");
            }
        }
    }

    /// Lends `holder` reserved slots of this node in every one of `scopes`
    /// ([`allot`]), reserving some first when each limit allows it.
    fn lend_slots(
        &self,
        store: &dyn Store,
        f: &dyn FlowStore,
        scopes: &[String],
        holder: &str,
        owner: &str,
        lease_ms: i64,
    ) -> bool {
        if self.allot.lend(scopes, holder) {
            return true;
        }
        let limits = self.limits(store);
        let mut reserved = false;
        for scope in scopes {
            let Some(l) = limits.iter().find(|l| l.text == *scope) else {
                return false;
            };
            if !l.lends_slots() {
                return false;
            }
            let n = allot::size(l.max.unwrap_or(0));
            let Some(names) = self.allot.begin_reserve(scope, owner, n) else {
                // Another drive of this node is reserving more: its slots
                // rather than the store's way.
                reserved |= self.allot.await_reserve(scope, IN_FLIGHT_WAIT);
                continue;
            };
            let asked = Instant::now();
            let now = crate::ids::now_ms();
            let taken = f.reserve(&ReserveRequest {
                scope: scope.clone(),
                holders: names.clone(),
                owner: owner.to_string(),
                now,
                lease_ms,
            });
            let ok = match taken {
                Ok(ok) => ok,
                Err(e) => {
                    tracing::warn!(scope, error = %e, "reserving flow slots failed");
                    false
                }
            };
            self.allot.end_reserve(scope, names, ok, asked, lease_ms);
            reserved |= ok;
        }
        reserved && self.allot.lend(scopes, holder)
    }

    /// Gives slots back to the store, logging a failure (their leases
    /// expire instead).
    fn give_back(&self, store: &dyn Store, slots: allot::GiveBack) {
        let Some(f) = store_of(store) else {
            return;
        };
        let now = crate::ids::now_ms();
        for (scope, holders) in slots {
            if let Err(e) = f.give_back(&scope, &holders, now) {
                tracing::warn!(scope, error = %e, "giving reserved flow slots back failed");
            }
        }
    }

    /// Gives `holder`'s slots in `scopes` back.
    pub fn release(&self, store: &dyn Store, scopes: &[String], holder: &str) {
        if scopes.is_empty() {
            return;
        }
        let (lent_in, slots) = self.allot.take_back(scopes, holder);
        if !slots.is_empty() {
            self.give_back(store, slots);
        }
        // A limit with both a rate and `max_concurrent` lent a slot and a
        // token: both are taken back here.
        let rest: Vec<String> = scopes
            .iter()
            .filter(|s| {
                let shared = self.shares.take_back(s, holder);
                !lent_in.contains(s) && !shared
            })
            .cloned()
            .collect();
        if rest.is_empty() {
            return;
        }
        if let Ok(mut held) = self.store_held.lock()
            && let Some(n) = held.get_mut(holder)
        {
            *n -= 1;
            if *n == 0 {
                held.remove(holder);
            }
        }
        if let Some(f) = store_of(store)
            && let Err(e) = f.release(&rest, holder, crate::ids::now_ms())
        {
            // The slots' leases expire instead.
            tracing::warn!(holder, error = %e, "giving flow slots back failed");
        }
    }

    /// The heartbeat's flow rows ([`FlowStore::beat`]): renews the slots
    /// this node holds (reserved, or taken through the store) and reports
    /// what it runs under each limit without a slot row of its own
    /// (reserved slots lent, admissions made with a share), counted in
    /// `in_use` until a lease from now. Writes nothing when the node holds
    /// no slot and runs nothing under a limit, and reported so (a node
    /// under rate limits alone admitting nothing, or under no limit).
    pub fn renew(&self, store: &dyn Store, owner: &str, lease_ms: i64) {
        let Some(f) = store_of(store) else {
            return;
        };
        let renew_slots =
            self.allot.holds_any() || self.store_held.lock().map_or(true, |h| !h.is_empty());
        let running = self.running();
        // A report of something running is written by every heartbeat (it
        // expires a lease later, as a slot would); an empty one once.
        let report_due = !running.is_empty()
            || match self.reported.lock().as_deref() {
                Ok(Some(last)) => !last.is_empty(),
                Ok(None) => false,
                Err(_) => true,
            };
        if !renew_slots && !report_due {
            return;
        }
        let asked = Instant::now();
        let beat = NodeBeat {
            owner: owner.to_string(),
            until_ms: crate::ids::now_ms() + lease_ms,
            renew_slots,
            running,
        };
        match f.beat(&beat) {
            Ok(()) => {
                if renew_slots {
                    self.allot.renewed(asked, lease_ms);
                }
                if let Ok(mut r) = self.reported.lock() {
                    *r = Some(beat.running);
                }
            }
            Err(e) => tracing::warn!(error = %e, "renewing flow slots failed"),
        }
    }

    /// What this node runs under each limit without a slot row of its own:
    /// reserved slots lent ([`allot`]) and admissions made with a share
    /// ([`share`]); under a limit with both, an admission holds one of
    /// each and counts once.
    fn running(&self) -> Running {
        let mut by_scope: HashMap<String, i64> = self.allot.lent().into_iter().collect();
        for (scope, n) in self.shares.admitted() {
            let e = by_scope.entry(scope).or_default();
            *e = (*e).max(n);
        }
        let mut out: Running = by_scope.into_iter().filter(|(_, n)| *n > 0).collect();
        out.sort();
        out
    }

    /// Checks this node's reservations ([`allot`]) every
    /// [`allot::CHECK_MS`] while it holds one (the heartbeat calls it
    /// often): reads the limits again and closes the reservations whose
    /// limit gained waiters, changed or went, and the idle ones.
    pub fn tend(&self, store: &dyn Store, owner: &str) {
        let (slots_due, shares_due) = (self.allot.check_due(), self.shares.check_due());
        if !slots_due && !shares_due {
            return;
        }
        let limits = self.read_limits(store);
        let close = self
            .allot
            .to_close(|scope| limits.iter().any(|l| l.text == scope && l.lends_slots()));
        if !close.is_empty() {
            let slots = self.allot.close(&close);
            self.give_back(store, slots);
        }
        // Shares of rate limits: closed when their limit gained waiters,
        // changed or went, and when idle (`flow::share`).
        let close = self
            .shares
            .to_close(|scope| limits.iter().any(|l| l.text == scope && l.lends_tokens()));
        if !close.is_empty() {
            self.close_shares(store, &close, owner);
        }
    }

    /// Gives back every reserved slot not lent and every share's unused
    /// tokens (the host stops; the lent slots go back as their drives
    /// end).
    pub fn close_reservations(&self, store: &dyn Store, owner: &str, lease_ms: i64) {
        let slots = self.allot.close_all();
        self.give_back(store, slots);
        self.close_shares(store, &self.shares.all(), owner);
        // The report follows (nothing left running, usually).
        self.renew(store, owner, lease_ms);
    }

    /// This node's shares of rate limits: scope, tokens left.
    pub fn shares(&self) -> Vec<(String, i64)> {
        self.shares.held()
    }

    /// This node's reservations: scope, free slots, lent slots.
    pub fn reservations(&self) -> Vec<(String, usize, usize)> {
        self.allot.held()
    }
}

/// The members the status JSON of a queued execution gets: `status`
/// `throttled` (while its row says `runnable` or `suspended`) and
/// `throttled` (the scopes it waits in, with the waiters ahead).
pub fn status_extra(store: &dyn Store, row: &ExecutionRow) -> Vec<(String, J)> {
    if row.is_terminal() {
        return Vec::new();
    }
    let Some(f) = store_of(store) else {
        return Vec::new();
    };
    match f.queued(&row.id, crate::ids::now_ms()) {
        Ok(q) => queued_members(row, q),
        Err(_) => Vec::new(),
    }
}

/// [`status_extra`] of the queues already read (`crate::status_read`):
/// none for a terminal execution or one queued nowhere.
pub fn queued_members(row: &ExecutionRow, queued: Vec<(String, i64)>) -> Vec<(String, J)> {
    if row.is_terminal() || queued.is_empty() {
        return Vec::new();
    }
    vec![
        ("status".into(), "throttled".into()),
        ("throttled".into(), queued_json(queued)),
    ]
}

/// Marks the dashboard's execution page document (`{"execution": {…}}`)
/// of a queued execution as [`status_extra`] marks its status JSON, from
/// the queues already read (`crate::status_read`).
pub fn mark_page(doc: &mut J, queued: Vec<(String, i64)>) {
    let Some(e) = doc.get_mut("execution").and_then(J::as_object_mut) else {
        return;
    };
    if e.get("terminal").and_then(J::as_bool) != Some(false) || queued.is_empty() {
        return;
    }
    e.insert("status".into(), "throttled".into());
    e.insert("throttled".into(), queued_json(queued));
}

/// The queues an execution waits in, as the status shows them: each
/// `{"scope", "ahead"}`, with `"namespace"` for a namespace's limit.
fn queued_json(queues: Vec<(String, i64)>) -> J {
    J::Array(
        queues
            .into_iter()
            .map(|(key, ahead)| {
                let (namespace, scope) = split_key(&key);
                let mut j = json!({"scope": scope, "ahead": ahead});
                if let Some(ns) = namespace {
                    j["namespace"] = json!(ns);
                }
                j
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_settings_parse() {
        assert_eq!(
            Scope::parse("program:p").unwrap(),
            Scope::Program("p".into())
        );
        assert_eq!(
            Scope::parse("route:http.*").unwrap(),
            Scope::Route("http.*".into())
        );
        assert!(Scope::parse("prog:p").is_err());
        assert!(Scope::parse("program:").is_err());
        let s = Settings::parse("max=2,rate=10/s").unwrap();
        assert_eq!(s.max_concurrent, Some(2));
        assert_eq!(s.rate_per_s, Some(10.0));
        assert_eq!(s.burst, Some(10), "default burst: the rate");
        let s = Settings::parse("rate=30/m,burst=3").unwrap();
        assert_eq!(s.rate_per_s, Some(0.5));
        assert_eq!(s.burst, Some(3));
        assert_eq!(Settings::parse(""), Err(LimitError::Empty));
        assert!(Settings::parse("max=0").is_err());
        assert!(Settings::parse("burst=2").is_err());
        assert!(Settings::parse("rate=-1").is_err());
        assert!(Settings::parse("speed=1").is_err());
        let j = Settings::from_json(&json!({"max_concurrent": 3, "rate": "2/s"})).unwrap();
        assert_eq!(
            (j.max_concurrent, j.rate_per_s, j.burst),
            (Some(3), Some(2.0), Some(2))
        );
        assert!(Settings::from_json(&json!({"max_concurrent": "x"})).is_err());
    }

    #[test]
    fn namespace_keys_split_back() {
        assert_eq!(limit_key(None, "program:p"), "program:p");
        assert_eq!(limit_key(Some("acme"), "program:p"), "acme/program:p");
        assert_eq!(split_key("acme/program:p"), (Some("acme"), "program:p"));
        assert_eq!(split_key("program:a/b"), (None, "program:a/b"));
        assert_eq!(
            split_key("acme/route:http/*:x"),
            (Some("acme"), "route:http/*:x")
        );
        assert_eq!(split_key("route:x"), (None, "route:x"));
        let s = || Settings::parse("max=2").unwrap();
        assert_eq!(
            limit_row("acme/program:p", s(), 0).unwrap().scope,
            "acme/program:p"
        );
        assert!(matches!(
            limit_row("Bad Name/program:p", s(), 0),
            Err(LimitError::Namespace(_))
        ));
        assert!(matches!(
            limit_row("acme/prog:p", s(), 0),
            Err(LimitError::Scope(_))
        ));
        let u = LimitUsage {
            limit: limit_row("acme/route:pay.*", s(), 5).unwrap(),
            in_use: 1,
            waiting: 0,
        };
        let j = limit_json(&u);
        assert_eq!(
            (j["scope"].as_str(), j["namespace"].as_str()),
            (Some("route:pay.*"), Some("acme"))
        );
    }
}
