//! The store side of flow control: limit rows, held slots and the FIFO
//! queue of waiters, in both stores (see [`crate::flow`]).

use crate::store::StoreError;

/// One stored limit.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRow {
    /// `program:NAME` or `route:PATTERN` (see [`crate::flow::Scope`]).
    pub scope: String,
    /// Most slots held at once (`None`: no concurrency limit).
    pub max_concurrent: Option<i64>,
    /// Token bucket refill, tokens per second (`None`: no rate limit).
    pub rate_per_s: Option<f64>,
    /// Token bucket size (with a rate).
    pub burst: Option<i64>,
    /// Last change (ms since the epoch).
    pub updated_ms: i64,
}

/// A limit with what it holds now.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitUsage {
    /// The limit.
    pub limit: LimitRow,
    /// What runs under the limit now, across nodes: the slots the store
    /// admitted (unexpired, reserved slots not counted) plus every node's
    /// last report of what it admitted itself ([`NodeBeat::running`]:
    /// reserved slots lent, admissions made with a token share), which is
    /// at most one heartbeat old and counts until that node's lease
    /// expires (a dead node's report, like its slots).
    pub in_use: i64,
    /// Executions waiting (unexpired).
    pub waiting: i64,
}

/// One admission request: take a slot (and a token) in every scope, or
/// queue in each.
#[derive(Debug, Clone)]
pub struct AcquireRequest {
    /// The scopes (each is taken only if all are).
    pub scopes: Vec<String>,
    /// Who holds the slot (the execution id).
    pub holder: String,
    /// This node's lease owner id (slots are renewed by owner).
    pub owner: String,
    /// Now (ms since the epoch).
    pub now: i64,
    /// Slot lease: a slot not renewed by then is given back.
    pub lease_ms: i64,
    /// When a concurrency limit is full, the waiter retries after this
    /// (a release wakes the head waiter before).
    pub retry_ms: i64,
}

/// What became of an [`AcquireRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    /// Slots taken; `waited_ms`: how long the holder had queued, if it had.
    Granted {
        /// Time in the queue (ms), when it queued.
        waited_ms: Option<i64>,
    },
    /// Queued: retry at `until_ms`.
    Wait {
        /// When to ask again.
        until_ms: i64,
        /// Waiters ahead in the scope where the holder is furthest back.
        ahead: i64,
    },
}

/// A node reserving slots of a concurrency limit for itself (see
/// [`crate::flow::allot`]).
#[derive(Debug, Clone)]
pub struct ReserveRequest {
    /// The limit.
    pub scope: String,
    /// The reserved slots' holder names, one row each (`node/OWNER/N`: an
    /// execution id has no `/`).
    pub holders: Vec<String>,
    /// This node's lease owner id (the slots are renewed with its others).
    pub owner: String,
    /// Now (ms since the epoch).
    pub now: i64,
    /// Slot lease, as [`AcquireRequest::lease_ms`].
    pub lease_ms: i64,
}

/// A node's heartbeat to the flow rows ([`FlowStore::beat`]): the renewal
/// of its slots and its report of what it admitted without the store.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeBeat {
    /// This node's lease owner id.
    pub owner: String,
    /// Its slots (when `renew_slots`) and its report last until then.
    pub until_ms: i64,
    /// Whether to extend every slot `owner` holds to `until_ms` (false when
    /// it holds none: a node under rate limits alone admits with shares).
    pub renew_slots: bool,
    /// What runs under each limit on this node without a slot row of its
    /// own: reserved slots lent and admissions made with a share, by
    /// scope (scopes with none left out). Replaces the node's last report.
    pub running: Vec<(String, i64)>,
}

/// The flow-control rows of a store.
pub trait FlowStore: Send + Sync {
    /// Creates or replaces a limit; its waiters are woken to ask again.
    fn put_limit(&self, row: &LimitRow) -> Result<(), StoreError>;
    /// Every limit, by scope, with its usage at `now`.
    fn list_limits(&self, now: i64) -> Result<Vec<LimitUsage>, StoreError>;
    /// Deletes a limit with its slots and queue (its waiters are woken);
    /// whether it existed.
    fn delete_limit(&self, scope: &str) -> Result<bool, StoreError>;
    /// Takes a slot in every scope of `req` for its holder, in FIFO order
    /// behind the holders already queued, or queues it.
    fn acquire(&self, req: &AcquireRequest) -> Result<Admission, StoreError>;
    /// Gives back `holder`'s slots in `scopes` (and drops it from their
    /// queues) and wakes each scope's head waiter (its deferral ends at
    /// once).
    fn release(&self, scopes: &[String], holder: &str, now: i64) -> Result<(), StoreError>;
    /// Takes the slots of `req` all at once, only when the limit is a
    /// concurrency limit (with or without a rate), nobody waits in its queue, and the
    /// slots held with the new ones are at most half of `max_concurrent`;
    /// whether it took them. A durable commit: the node lends them to its
    /// drives without asking the store again.
    fn reserve(&self, req: &ReserveRequest) -> Result<bool, StoreError>;
    /// Gives back the slots `holders` of `scope` in one transaction and
    /// wakes as many of its head waiters.
    fn give_back(&self, scope: &str, holders: &[String], now: i64) -> Result<(), StoreError>;
    /// Extends every slot `owner` holds to `until_ms`.
    fn renew_slots(&self, owner: &str, until_ms: i64) -> Result<(), StoreError>;
    /// A node's heartbeat ([`NodeBeat`]): renews its slots when asked and
    /// replaces its report of what runs under each limit without a slot
    /// row (counted in [`LimitUsage::in_use`] until `until_ms`). One
    /// statement on PostgreSQL.
    fn beat(&self, beat: &NodeBeat) -> Result<(), StoreError>;
    /// The scopes `holder` is queued in at `now`, with the waiters ahead
    /// in each.
    fn queued(&self, holder: &str, now: i64) -> Result<Vec<(String, i64)>, StoreError>;
    /// Takes a share of a rate limit's tokens for a node ([`take_share`]),
    /// in one statement: the tokens granted (0 when refused, or when the
    /// limit has no share ([`may_share`])).
    fn take_share(&self, req: &ShareRequest) -> Result<i64, StoreError>;
}

/// Whether a reservation of `n` slots may be taken: a concurrency limit
/// (`max`; with or without a rate: a reserved slot takes no token, the
/// drive it is lent to takes one of its node's share), an empty queue, and
/// `used + n` at most half the limit.
pub fn may_reserve(max: Option<i64>, used: i64, waiting: i64, n: i64) -> bool {
    match max {
        Some(m) => waiting == 0 && n > 0 && (used + n) * 2 <= m,
        None => false,
    }
}

/// When a holder may ask again for a slot that another node holds for it
/// (unexpired until `expires_ms`): after that slot is given back (a release
/// wakes the queue's head, not this holder) or expires. Two drives of one
/// execution on two nodes (a lease taken over from a node that was too
/// slow to renew it, or died mid-call) would otherwise share one slot and
/// run two calls under it, past `max_concurrent`.
pub fn elsewhere(expires_ms: i64) -> i64 {
    expires_ms.saturating_add(1)
}

/// Whether a node may take a share of a limit's tokens: a rate limit,
/// without `max_concurrent` or with one of at least
/// [`crate::flow::allot::MIN_LIMIT`] (where the node also reserves slots,
/// so that its drives are admitted with a slot and a token of its own).
pub fn may_share(max: Option<i64>, rate: Option<f64>) -> bool {
    rate.is_some() && max.is_none_or(|m| m >= crate::flow::allot::MIN_LIMIT)
}

/// The most tokens the store's bucket may hold: the burst less the tokens
/// nodes hold in unexpired shares (`shared`, [`shared_tokens`]), so that
/// the store's tokens and the shares together never pass the burst.
pub fn bucket_cap(burst: Option<i64>, shared: f64) -> f64 {
    burst.unwrap_or(1).max(1) as f64 - shared
}

/// The bucket's tokens at `now`, at most `cap` ([`bucket_cap`]).
pub fn refill(tokens: f64, refilled_ms: i64, rate: f64, cap: f64, now: i64) -> f64 {
    (tokens + (now - refilled_ms).max(0) as f64 * rate / 1000.0).min(cap)
}

/// A node taking a share of a rate limit's tokens (`crate::flow::share`):
/// up to `want` tokens for `owner`, after giving back `unused` tokens of
/// its previous share. `want = 0` closes the node's share.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRequest {
    /// The limit (a rate limit without `max_concurrent`).
    pub scope: String,
    /// This node's lease owner id (one share per node and limit).
    pub owner: String,
    /// Now (ms since the epoch).
    pub now: i64,
    /// Tokens wanted (0: close the share).
    pub want: i64,
    /// Tokens of the node's previous share it did not use and gives back
    /// (counted only while that share is unexpired in the store).
    pub unused: i64,
    /// The share expires in the store this long after `now`: the tokens of
    /// a node that died count against the bucket until then.
    pub ttl_ms: i64,
}

/// The shares of a limit row: owner → (tokens, expiry in ms), stored as
/// the JSON object `{"OWNER": [tokens, expires_ms], …}`.
pub type Shares = std::collections::BTreeMap<String, (f64, i64)>;

/// Reads a limit row's `shares` column (empty text or `{}`: none).
pub fn parse_shares(text: &str) -> Result<Shares, StoreError> {
    if text.trim().is_empty() {
        return Ok(Shares::new());
    }
    serde_json::from_str::<std::collections::BTreeMap<String, (f64, i64)>>(text)
        .map_err(|e| StoreError::Corrupt(format!("flow limit shares {text:?}: {e}")))
}

/// Writes a limit row's `shares` column.
pub fn shares_text(shares: &Shares) -> String {
    let map: serde_json::Map<String, serde_json::Value> = shares
        .iter()
        .map(|(k, (n, until))| (k.clone(), serde_json::json!([n, until])))
        .collect();
    serde_json::Value::Object(map).to_string()
}

/// The tokens held in the unexpired shares of a limit row at `now`.
pub fn shared_tokens(shares: &str, now: i64) -> Result<f64, StoreError> {
    Ok(parse_shares(shares)?
        .values()
        .filter(|(_, until)| *until >= now)
        .map(|(n, _)| n)
        .sum())
}

/// What a share take does to a limit row.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareTake {
    /// Tokens granted to the node (0: none: the bucket is empty, or
    /// someone is queued and a share would overtake the queue).
    pub granted: i64,
    /// The store's tokens after it (refilled at `now`).
    pub tokens: f64,
    /// The row's shares after it (expired ones dropped).
    pub shares: Shares,
    /// Head waiters to wake (tokens given back while a queue waits).
    pub wake: i64,
}

/// A share take on a rate limit row (`rate`, `burst`, the bucket's
/// `tokens` refilled at `refilled_ms`, its `shares`), with `queued`
/// whether anyone waits in its queue. The store's tokens plus the shares'
/// never pass the burst: the bucket refills only up to the burst less the
/// unexpired shares, the tokens a node gives back count only while its
/// share is unexpired, and a share is taken out of the store's tokens. The
/// PostgreSQL store runs the same arithmetic in one statement.
pub fn take_share(
    rate: f64,
    burst: Option<i64>,
    tokens: f64,
    refilled_ms: i64,
    mut shares: Shares,
    queued: bool,
    req: &ShareRequest,
) -> ShareTake {
    shares.retain(|_, (_, until)| *until >= req.now);
    let mine = shares.remove(&req.owner).map_or(0.0, |(n, _)| n);
    let others: f64 = shares.values().map(|(n, _)| n).sum();
    let avail = refill(
        tokens,
        refilled_ms,
        rate,
        bucket_cap(burst, others + mine),
        req.now,
    ) + (req.unused.max(0) as f64).min(mine);
    let granted = if queued {
        0
    } else {
        req.want.min(avail.floor() as i64).max(0)
    };
    if granted > 0 {
        shares.insert(req.owner.clone(), (granted as f64, req.now + req.ttl_ms));
    }
    ShareTake {
        granted,
        tokens: avail - granted as f64,
        shares,
        wake: if queued {
            avail.floor().max(0.0) as i64
        } else {
            0
        },
    }
}

/// Whether a holder with `ahead` waiters before it may take a slot now,
/// and if not, when it should ask again; `cap` is the bucket's
/// ([`bucket_cap`]).
#[allow(clippy::too_many_arguments)]
pub fn decide(
    max: Option<i64>,
    rate: Option<f64>,
    cap: f64,
    tokens: f64,
    refilled_ms: i64,
    used: i64,
    ahead: i64,
    req: &AcquireRequest,
) -> (bool, i64) {
    let now = req.now;
    let mut wait = now;
    let mut ok = true;
    if let Some(m) = max
        && used + ahead >= m
    {
        ok = false;
        wait = wait.max(now + req.retry_ms);
    }
    if let Some(rate) = rate {
        let filled = refill(tokens, refilled_ms, rate, cap, now);
        // The waiters ahead take their tokens first.
        let need = (ahead + 1) as f64;
        if filled < need {
            ok = false;
            let ms = ((need - filled) * 1000.0 / rate).ceil() as i64;
            wait = wait.max(now + ms.max(1));
        }
    }
    (ok, wait)
}
