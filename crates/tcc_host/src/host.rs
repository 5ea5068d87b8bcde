//! The worker side of the host: claims executions (lease), drives the
//! engine, answers its requests and commits its checkpoints (facts note
//! (f) host duties), plus a scheduler that finds runnable work, due
//! timers, deliverable events and finished children.

use crate::crash::hook_at;
use crate::effect_retry::{Effect, EffectAnswer};
use crate::notify::{Hub, done_topic};
use crate::packed::Stored;
use crate::providers::{ProviderOutcome, Providers};
use crate::store::{
    CheckpointTx, ExecutionRow, JournalRow, NewExecution, Registration, ResumeOutcome, Store,
    StoreError, Wake,
};
use crate::worker_tasks::board::TaskBoard;
use serde_json::{Value as J, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tcc_engine::continuation::{CancelPhase, Status};
use tcc_engine::json::{TextOut, export_text, export_text_to};
use tcc_engine::protocol::{CheckpointKind, failure_message};
use tcc_engine::{
    Continuation, EngineError, Execution, HostRequest, HostResponse, Limits, Outcome, Program,
    TextWake, Value, apply_delta_text,
};
use tcc_ir::FeatureSet;
use tcc_ir::to_canonical;

/// Host capabilities this host implements (no `host.fetch_artifact`).
pub const HOST_CAPABILITIES: [&str; 6] = [
    "host.persist_checkpoint",
    "host.persist_checkpoint_delta",
    "host.effect",
    "host.timer",
    "host.event",
    "host.child",
];

/// Host errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// Storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The artifact is invalid.
    #[error("{code}: {message}")]
    Invalid {
        /// Stable code (`TCC-…` from the codec/validator, or `hash_mismatch`).
        code: String,
        /// Message.
        message: String,
    },
    /// Unknown program name or hash.
    #[error("unknown program {0:?}")]
    UnknownProgram(String),
    /// Bad arguments.
    #[error("{0}")]
    BadRequest(String),
}

/// Host configuration.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Worker threads.
    pub workers: usize,
    /// Lease length; a dead owner's executions are taken over after it.
    pub lease_ms: i64,
    /// Engine steps per `run_until_host` call (the lease is renewed and
    /// cancellation checked between calls).
    pub budget: u64,
    /// Engine limits.
    pub limits: Limits,
    /// This process's lease owner id.
    pub owner: String,
    /// Longest idle sleep of the scheduler.
    pub poll_ms: u64,
    /// Drives of one execution that may end abnormally in a row (the
    /// process crashed or was killed mid-drive, the drive panicked, or it
    /// failed on a store error) before the execution is quarantined:
    /// failed with a host error naming the cause, never driven again.
    pub max_drive_attempts: u32,
    /// First delay before an execution whose drive failed abnormally is
    /// taken up again; it doubles with each further failure in a row.
    pub retry_backoff_ms: i64,
    /// Longest such delay.
    pub max_retry_backoff_ms: i64,
    /// Where spans go (`--otlp-endpoint`); none: tracing off.
    pub telemetry: Option<Arc<crate::otel::Telemetry>>,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            workers: 4,
            lease_ms: 30_000,
            budget: 1_000_000,
            limits: Limits::default(),
            owner: crate::ids::random_id("w-"),
            poll_ms: 50,
            max_drive_attempts: 5,
            retry_backoff_ms: 100,
            max_retry_backoff_ms: 30_000,
            telemetry: None,
        }
    }
}

/// Why a drive stopped early.
#[derive(Debug)]
enum Stop {
    /// Another owner took over or the revision moved: abandon silently.
    Lost,
    /// Fail the execution with this error text.
    Fail(String),
    /// Storage failed: release and retry later.
    Store(StoreError),
    /// An effect's next durable retry is due at this time (ms since the
    /// epoch): keep the lease until then, the drive ended normally.
    Defer(i64),
}

impl From<EngineError> for Stop {
    fn from(e: EngineError) -> Stop {
        Stop::Fail(format!("{}: {e}", e.code()))
    }
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Stop {
        match e {
            StoreError::Conflict(_) => Stop::Lost,
            e => Stop::Store(e),
        }
    }
}

/// The host: store, providers, program cache, scheduler and workers.
pub struct Host {
    store: Arc<dyn Store>,
    providers: Arc<Providers>,
    cfg: HostConfig,
    programs: Mutex<HashMap<String, Arc<Program>>>,
    signal: (Mutex<u64>, Condvar),
    /// Bumped by [`Host::notify`]: something may have become runnable that
    /// only the store can tell, so the scheduler looks for work again.
    /// A start on this node does not bump it: it hands its execution to
    /// the scheduler in [`Host::started`] instead.
    looks_wanted: AtomicU64,
    /// Executions this host's starts created, for the scheduler to dispatch
    /// without looking for them in the store (one `find_work` query fewer
    /// per start); filled only while the scheduler runs.
    started: Mutex<Vec<String>>,
    /// Whether the scheduler thread runs ([`Host::spawn`]).
    scheduling: AtomicBool,
    stop: AtomicBool,
    in_flight: Mutex<HashSet<String>>,
    /// Bumped whenever this host commits a timer registration, so that the
    /// scheduler's cached next timer due time is read again.
    timers_registered: AtomicU64,
    /// The latest due time of a durable effect retry this host deferred an
    /// execution to (ms since the epoch; 0: none): until then an execution
    /// is not stuck though no work is found (see [`Host::wait_for`]).
    retries_due_until: AtomicI64,
    /// Wakes result waiters when an execution ends (and, through its
    /// bridge, those of other nodes).
    hub: Arc<Hub>,
    /// The queue of worker-routed effects, when the host has one.
    tasks: Option<Arc<TaskBoard>>,
    /// Abnormal drive ends on this node, by execution: failures in a row
    /// and the last cause (see [`crate::quarantine`]).
    failures: crate::quarantine::Failures,
    /// This node's view of the flow limits ([`crate::flow`]).
    flow: crate::flow::FlowControl,
    /// The artifacts the dashboard's execution page read, parsed
    /// ([`crate::source::cache`]).
    artifact_views: crate::source::cache::ArtifactCache,
}

/// Decodes, validates and hashes an artifact for registration.
pub fn check_artifact(bytes: &[u8]) -> Result<(tcc_ir::Artifact, String), HostError> {
    let artifact = tcc_ir::decode_artifact(bytes).map_err(|e| HostError::Invalid {
        code: e.code().to_string(),
        message: e.to_string(),
    })?;
    let computed = tcc_ir::compute_hash(&artifact);
    if computed != artifact.envelope.artifact_hash {
        return Err(HostError::Invalid {
            code: "hash_mismatch".into(),
            message: format!(
                "artifact_hash {:?} does not match the content hash {computed:?}",
                artifact.envelope.artifact_hash
            ),
        });
    }
    Ok((artifact, computed))
}

impl Host {
    /// A host over `store`.
    pub fn new(store: Arc<dyn Store>, providers: Providers, cfg: HostConfig) -> Arc<Host> {
        Host::with_queue(store, providers, cfg, Hub::new(), None)
    }

    /// A host over `store` announcing ends through `hub` (shared with
    /// `tasks`, the queue of its `worker` routes, when it has one).
    pub fn with_queue(
        store: Arc<dyn Store>,
        providers: Providers,
        cfg: HostConfig,
        hub: Arc<Hub>,
        tasks: Option<Arc<TaskBoard>>,
    ) -> Arc<Host> {
        Arc::new(Host {
            store,
            providers: Arc::new(providers),
            cfg,
            programs: Mutex::new(HashMap::new()),
            signal: (Mutex::new(0), Condvar::new()),
            looks_wanted: AtomicU64::new(0),
            started: Mutex::new(Vec::new()),
            scheduling: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            in_flight: Mutex::new(HashSet::new()),
            timers_registered: AtomicU64::new(0),
            retries_due_until: AtomicI64::new(0),
            hub,
            tasks,
            failures: crate::quarantine::Failures::default(),
            flow: crate::flow::FlowControl::new(),
            artifact_views: crate::source::cache::ArtifactCache::default(),
        })
    }

    /// The parsed artifacts of the dashboard's execution page, by hash
    /// ([`crate::source::cache`]).
    pub fn artifact_views(&self) -> &crate::source::cache::ArtifactCache {
        &self.artifact_views
    }

    /// The hub that announces ends of executions ([`done_topic`]).
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The queue of worker-routed effects, if any.
    pub fn tasks(&self) -> Option<&Arc<TaskBoard>> {
        self.tasks.as_ref()
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// This node's view of the flow limits.
    pub fn flow(&self) -> &crate::flow::FlowControl {
        &self.flow
    }

    /// The configuration.
    pub fn config(&self) -> &HostConfig {
        &self.cfg
    }

    fn capabilities() -> FeatureSet {
        FeatureSet::new(HOST_CAPABILITIES)
    }

    /// Registers an artifact (validated against this engine and host,
    /// content hash checked), optionally under a program name. Returns the hash.
    pub fn register(&self, bytes: &[u8], name: Option<&str>) -> Result<String, HostError> {
        self.register_in(crate::namespace::DEFAULT, bytes, name)
    }

    /// [`Host::register`] with the name registered in `namespace` (issue
    /// 35, [`crate::namespace`]): a name another namespace owns is a
    /// conflict.
    pub fn register_in(
        &self,
        namespace: &str,
        bytes: &[u8],
        name: Option<&str>,
    ) -> Result<String, HostError> {
        let (artifact, hash) = check_artifact(bytes)?;
        let canonical = tcc_ir::encode_artifact(&artifact);
        let program =
            Program::new(artifact, &Self::capabilities()).map_err(|e| HostError::Invalid {
                code: e.code().to_string(),
                message: e.to_string(),
            })?;
        self.store.put_artifact(&hash, &canonical)?;
        if let Some(name) = name {
            if name.is_empty() || name.len() > 256 {
                return Err(HostError::BadRequest(
                    "program name must be 1 to 256 bytes".into(),
                ));
            }
            crate::namespace::set_program(&*self.store, namespace, name, &hash)?;
        }
        if let Ok(mut m) = self.programs.lock() {
            m.insert(hash.clone(), Arc::new(program));
        }
        self.notify();
        Ok(hash)
    }

    /// Resolves a program name registered in `namespace`, or an artifact
    /// hash, to a stored hash (issue 35, [`crate::namespace`]).
    pub fn resolve_in(
        &self,
        namespace: &str,
        program: &str,
    ) -> Result<(String, Option<String>), HostError> {
        crate::namespace::resolve_program(&*self.store, namespace, program)?
            .ok_or_else(|| HostError::UnknownProgram(program.to_string()))
    }

    /// Resolves a program name or artifact hash to a stored hash.
    pub fn resolve(&self, program: &str) -> Result<(String, Option<String>), HostError> {
        if let Some(h) = self.store.resolve_program(program)? {
            return Ok((h, Some(program.to_string())));
        }
        if self.store.get_artifact(program)?.is_some() {
            return Ok((program.to_string(), None));
        }
        Err(HostError::UnknownProgram(program.to_string()))
    }

    /// Creates a runnable execution of `program` (name or hash) with tagged
    /// `args`; returns its id.
    pub fn start(
        &self,
        program: &str,
        args: Vec<J>,
        id: Option<String>,
    ) -> Result<String, HostError> {
        self.start_list(program, args.into(), id)
    }

    /// [`Host::start`] with the arguments as their stored text (what the
    /// HTTP API converts a request's plain arguments to, without a tree).
    pub fn start_list(
        &self,
        program: &str,
        args: crate::values::TaggedList,
        id: Option<String>,
    ) -> Result<String, HostError> {
        self.start_traced(program, args, id, None)
    }

    /// [`Host::start_list`] of an execution whose drives continue the trace
    /// `traceparent` (issue 35, [`crate::otel`]).
    pub fn start_traced(
        &self,
        program: &str,
        args: crate::values::TaggedList,
        id: Option<String>,
        traceparent: Option<&crate::otel::TraceParent>,
    ) -> Result<String, HostError> {
        self.start_in(crate::namespace::DEFAULT, program, args, id, traceparent)
    }

    /// [`Host::start_traced`] in `namespace` (issue 35,
    /// [`crate::namespace`]): `program` is a name registered there, or an
    /// artifact hash.
    pub fn start_in(
        &self,
        namespace: &str,
        program: &str,
        args: crate::values::TaggedList,
        id: Option<String>,
        traceparent: Option<&crate::otel::TraceParent>,
    ) -> Result<String, HostError> {
        let resolved = self.resolve_in(namespace, program)?;
        self.start_resolved(namespace, resolved, args, id, traceparent)
    }

    /// [`Host::start_in`] of a program already resolved by
    /// [`Host::resolve_in`] to `(hash, name)` (the service resolves it
    /// before converting the arguments, and not again).
    pub fn start_resolved(
        &self,
        namespace: &str,
        (hash, name): (String, Option<String>),
        args: crate::values::TaggedList,
        id: Option<String>,
        traceparent: Option<&crate::otel::TraceParent>,
    ) -> Result<String, HostError> {
        let id = id.unwrap_or_else(crate::ids::execution_id);
        if id.is_empty() || id.len() > 200 || id.chars().any(|c| c.is_control() || c == '/') {
            return Err(HostError::BadRequest(
                "execution id must be 1 to 200 characters without '/' or control characters".into(),
            ));
        }
        if let Some(tp) = traceparent {
            let traces = crate::otel::traces_of(&*self.store).ok_or_else(|| {
                HostError::BadRequest("this store does not keep trace contexts".into())
            })?;
            traces.put_traceparent(&id, &tp.to_string())?;
        }
        self.store.create_execution(&NewExecution {
            id: id.clone(),
            artifact_hash: hash,
            program_name: name,
            args,
            parent: None,
            namespace: namespace.to_string(),
        })?;
        self.dispatch_started(&id);
        Ok(id)
    }

    /// Hands an execution this host just created to its scheduler, which
    /// dispatches it without looking for work in the store; when no
    /// scheduler runs, [`Host::notify`] as before.
    fn dispatch_started(&self, id: &str) {
        if !self.scheduling.load(Ordering::SeqCst) {
            self.notify();
            return;
        }
        if let Ok(mut s) = self.started.lock() {
            s.push(id.to_string());
        }
        let (m, c) = &self.signal;
        if let Ok(mut g) = m.lock() {
            *g += 1;
        }
        c.notify_all();
    }

    /// Creates one runnable execution of `program` (name or hash) per
    /// entry of `args`, in one transaction (all or none); returns their
    /// ids, in order.
    pub fn start_many(&self, program: &str, args: Vec<Vec<J>>) -> Result<Vec<String>, HostError> {
        let (hash, name) = self.resolve_in(crate::namespace::DEFAULT, program)?;
        let new: Vec<NewExecution> = args
            .into_iter()
            .map(|args| NewExecution {
                id: crate::ids::execution_id(),
                artifact_hash: hash.clone(),
                program_name: name.clone(),
                args: args.into(),
                parent: None,
                namespace: crate::namespace::DEFAULT.to_string(),
            })
            .collect();
        self.store.create_executions(&new)?;
        self.notify();
        Ok(new.into_iter().map(|n| n.id).collect())
    }

    /// Wakes the scheduler (new work may exist).
    pub fn notify(&self) {
        self.looks_wanted.fetch_add(1, Ordering::SeqCst);
        let (m, c) = &self.signal;
        if let Ok(mut g) = m.lock() {
            *g += 1;
        }
        c.notify_all();
    }

    /// A counter that [`Host::notify`] advances (after every drive ends,
    /// every start and registration). With [`Host::wait_activity`] an
    /// embedder waits for progress instead of polling the store.
    pub fn activity(&self) -> u64 {
        self.signal.0.lock().map(|g| *g).unwrap_or(0)
    }

    /// Waits until the activity counter differs from `since` (see
    /// [`Host::activity`]) or `timeout` has passed.
    pub fn wait_activity(&self, since: u64, timeout: Duration) {
        let (m, c) = &self.signal;
        if let Ok(g) = m.lock() {
            let _ = c.wait_timeout_while(g, timeout, |g| *g == since);
        }
    }

    fn program(&self, hash: &str) -> Result<Option<Arc<Program>>, Stop> {
        if let Some(p) = self.programs.lock().ok().and_then(|m| m.get(hash).cloned()) {
            return Ok(Some(p));
        }
        let Some(bytes) = self.store.get_artifact(hash)? else {
            return Ok(None);
        };
        let (artifact, computed) = check_artifact(&bytes)
            .map_err(|e| Stop::Fail(format!("stored artifact {hash} is invalid: {e}")))?;
        if computed != hash {
            return Err(Stop::Fail(format!(
                "stored artifact under {hash} hashes to {computed}"
            )));
        }
        let p = Arc::new(Program::new(artifact, &Self::capabilities())?);
        if let Ok(mut m) = self.programs.lock() {
            m.insert(hash.to_string(), p.clone());
        }
        Ok(Some(p))
    }

    /// Rebuilds the latest committed continuation of `id` (last snapshot
    /// plus the deltas after it).
    pub fn load_continuation(&self, id: &str) -> Result<Option<Continuation>, HostError> {
        load_continuation(&*self.store, id, &self.cfg.limits).map_err(|e| match e {
            Stop::Store(s) => HostError::Store(s),
            Stop::Fail(m) => HostError::Store(StoreError::Corrupt(m)),
            Stop::Lost | Stop::Defer(_) => HostError::Store(StoreError::Conflict("lost".into())),
        })
    }

    /// Operator resume (issue 33): takes a `failed` execution whose failure
    /// directly followed a failed effect back to the checkpoint before that
    /// effect ([`Store::resume_failed`]) and wakes the scheduler; any node
    /// then claims and drives it, calling that effect's provider again.
    pub fn resume(&self, id: &str) -> Result<ResumeOutcome, HostError> {
        let outcome = self.store.resume_failed(id)?;
        if let ResumeOutcome::Resumed { key, revision } = &outcome {
            crate::metrics::global().operator_resume();
            tracing::info!(execution_id = %id, effect = %key, revision, "resumed by operator");
            self.notify();
        }
        Ok(outcome)
    }

    /// Claims `id` and drives it until it suspends with nothing to
    /// deliver, ends, or the lease is lost. Returns whether it was claimed.
    pub fn drive(&self, id: &str) -> Result<bool, HostError> {
        let owner = self.cfg.owner.as_str();
        let mut trace =
            crate::otel::drive::DriveTrace::new(self.cfg.telemetry.as_deref(), &*self.store, id);
        let span = tracing::info_span!(
            "drive",
            execution_id = %id,
            revision = tracing::field::Empty,
            outcome = tracing::field::Empty
        )
        .entered();
        let Some((row, journalled)) =
            self.store
                .claim_for_drive(id, owner, crate::ids::now_ms(), self.cfg.lease_ms)?
        else {
            crate::metrics::global().drive("not_claimed");
            return Ok(false);
        };
        span.record("revision", row.revision);
        trace.claimed(row.revision, row.stored_traceparent.as_ref())?;
        if row.drive_attempts > self.cfg.max_drive_attempts {
            let error = self.failures.quarantine_error(&row);
            span.record("outcome", "quarantined");
            trace.end("quarantined");
            crate::metrics::global().drive("quarantined");
            tracing::warn!(%error, "execution quarantined");
            self.store.fail_execution(id, owner, &error)?;
            self.failures.forget(id);
            self.notify();
            self.hub.publish(&done_topic(id));
            return Ok(true);
        }
        // Runnable past revision 0: an earlier drive was cut off (its node
        // died, or a store failure) and this one takes over its lease.
        // (A drive after a durable retry's wait or an operator's resume
        // begins from a released count: not a takeover.)
        if row.status == "runnable" && row.revision > 0 && row.drive_attempts > 1 {
            crate::metrics::global().takeover("resumed");
        }
        let stop_requested_at_claim = row.cancel_requested;
        // Flow control: a drive of a limited program holds a slot of each
        // of its limits; over one, the execution queues and is deferred.
        let flow_scopes = match row.is_terminal() {
            true => Vec::new(),
            false => self.flow.program_scopes(&*self.store, &row),
        };
        // A termination runs no code: it is not held back (the release
        // below drops the execution from the queues it waits in).
        if !flow_scopes.is_empty()
            && !row.terminate_requested
            && let crate::flow::Admission::Wait { until_ms, .. } = self.flow.acquire(
                &*self.store,
                flow_scopes.clone(),
                id,
                owner,
                self.cfg.lease_ms,
            )?
        {
            span.record("outcome", "throttled");
            trace.end("throttled");
            crate::metrics::global().drive("throttled");
            self.store.defer(id, owner, until_ms)?;
            self.notify();
            return Ok(true);
        }
        let r = self.drive_claimed(row, journalled, &mut trace);
        self.flow.release(&*self.store, &flow_scopes, id);
        let outcome = match &r {
            Ok(true) => "finished",
            Ok(false) => "suspended",
            Err(Stop::Lost) => "lease_lost",
            Err(Stop::Fail(_)) => "failed",
            Err(Stop::Store(_)) => "store_error",
            Err(Stop::Defer(_)) => "retry_deferred",
        };
        span.record("outcome", outcome);
        trace.end(outcome);
        crate::metrics::global().drive(outcome);
        tracing::debug!(outcome, "drive ended");
        // A terminal checkpoint gave the lease back with its commit; after
        // a store error the lease is kept, to expire after a backoff (see
        // `Host::worker`), and the drive stays counted.
        let lease_held = !matches!(r, Ok(true) | Err(Stop::Store(_)) | Err(Stop::Defer(_)));
        let ended = matches!(r, Ok(true) | Err(Stop::Fail(_)));
        let result = match r {
            Ok(_) | Err(Stop::Lost) => Ok(()),
            // A durable retry: nobody takes the execution up before the
            // retry is due (the lease is kept until then).
            Err(Stop::Defer(due)) => self.defer_retry(id, due, stop_requested_at_claim),
            Err(Stop::Fail(msg)) => self
                .store
                .fail_execution(id, owner, &crate::storable::message(&msg))
                .map_err(HostError::from),
            Err(Stop::Store(e)) => Err(HostError::Store(e)),
        };
        let released = if lease_held {
            self.store.release(id, owner)
        } else {
            Ok(())
        };
        self.notify();
        if ended && result.is_ok() {
            self.hub.publish(&done_topic(id));
        }
        result?;
        released?;
        Ok(true)
    }

    /// Keeps `id` until its durable retry is due (`Store::defer`), unless a
    /// cancellation or termination was requested during this drive: then
    /// the wait ends at once, so that the next drive delivers it (issue 33;
    /// one requested after the deferral ends the wait itself, see
    /// `Store::request_cancel`).
    fn defer_retry(
        &self,
        id: &str,
        due: i64,
        stop_requested_at_claim: bool,
    ) -> Result<(), HostError> {
        let owner = self.cfg.owner.as_str();
        let held = self.store.defer(id, owner, due)?;
        if held && !stop_requested_at_claim && self.store.cancel_requested(id)? {
            self.store.defer(id, owner, 0)?;
            return Ok(());
        }
        self.retries_due_until.fetch_max(due, Ordering::SeqCst);
        Ok(())
    }

    /// Drives a claimed execution until it suspends with nothing to
    /// deliver, finishes or loses its lease; `Ok(true)` when it finished
    /// with a terminal checkpoint (whose commit gave the lease back).
    fn drive_claimed(
        &self,
        mut row: ExecutionRow,
        journalled: Option<Vec<String>>,
        trace: &mut crate::otel::drive::DriveTrace<'_>,
    ) -> Result<bool, Stop> {
        if row.is_terminal() {
            return Ok(false);
        }
        let id = row.id.as_str();
        let limits = &self.cfg.limits;
        let Some(program) = self.program(&row.artifact_hash)? else {
            self.store.set_error(
                id,
                &format!(
                    "artifact_missing: artifact {} is not stored",
                    row.artifact_hash
                ),
            )?;
            return Err(Stop::Lost);
        };
        let (mut exec, mut confirmed) = if row.revision == 0 {
            // Long arguments stored deflated are absorbed as they are
            // inflated (checked as they are read: a damaged text is a
            // store error).
            let exec = match row.args.stored() {
                Stored::Text(text) => Execution::start_text(program, id, text, limits.clone())?,
                stored @ Stored::Deflated { .. } => stored
                    .read_checked(|source| {
                        Execution::start_source(program, id, source, limits.clone())
                    })
                    .map_err(|e| Stop::Store(StoreError::Corrupt(format!("stored args: {e}"))))??,
            };
            // The heap holds the arguments now; their text is not kept
            // for the rest of the drive (issue 42, F3).
            row.args = crate::values::TaggedList::default();
            (exec, 0)
        } else {
            let c = load_continuation(&*self.store, id, limits)?
                .ok_or_else(|| Stop::Fail("no checkpoint stored".into()))?;
            if c.revision != row.revision {
                return Err(Stop::Fail(format!(
                    "stored checkpoints end at revision {}, execution row says {}",
                    c.revision, row.revision
                )));
            }
            let revision = c.revision;
            (Execution::resume(program, c, limits.clone())?, revision)
        };
        exec.set_delta_checkpoints(true);
        exec.set_text_checkpoints(true);
        let mut d = Driver {
            host: self,
            id,
            namespace: &row.namespace,
            exec: &mut exec,
            regs: Vec::new(),
            consumed: None,
            history: Vec::new(),
            last_input: None,
            journalled: journalled.map(|keys| keys.into_iter().collect()),
            finished: false,
            failed_effect: None,
            trace,
        };
        // The stored continuation is committed: a cancellation it shows
        // delivered needs no second delivery.
        if !(row.cancel_requested && d.stop_requested(&row, true)?) && row.status == "suspended" {
            match self.store.ready_wake(id, crate::ids::now_ms())? {
                Some(w) => d.deliver(w)?,
                None => return Ok(false),
            }
        }
        loop {
            let steps_before = d.exec.steps();
            let outcome = d.exec.run_until_host(self.cfg.budget)?;
            crate::metrics::global().steps(d.exec.steps().saturating_sub(steps_before));
            match outcome {
                Outcome::BudgetExhausted => {
                    if !self.store.renew(
                        id,
                        &self.cfg.owner,
                        crate::ids::now_ms(),
                        self.cfg.lease_ms,
                    )? {
                        return Err(Stop::Lost);
                    }
                    // One column read per slice (issue 42, F3); the row only
                    // when a stop is requested.
                    if self.store.cancel_requested(id)?
                        && let Some(r) = self.store.get_execution(id)?
                        && r.cancel_requested
                    {
                        d.stop_requested(&r, false)?;
                    }
                }
                Outcome::Host(req) => {
                    d.answer(req, &mut confirmed)?;
                    // A committed terminal checkpoint ends the drive: the
                    // engine has nothing left to ask, and its outcome would
                    // only be the result as a tree (issue 42, F3).
                    if d.finished {
                        return Ok(true);
                    }
                }
                Outcome::Suspended => {
                    // The suspension's checkpoint is committed (as at the
                    // drive's start).
                    if self.store.cancel_requested(id)?
                        && let Some(r) = self.store.get_execution(id)?
                        && r.cancel_requested
                        && d.stop_requested(&r, true)?
                    {
                        continue;
                    }
                    // Paused meanwhile (issue 35): the drive ends at this
                    // wait; its wake is delivered once resumed.
                    if crate::pause::rows::held(&*self.store, id)? {
                        return Ok(false);
                    }
                    match self.store.ready_wake(id, crate::ids::now_ms())? {
                        Some(w) => d.deliver(w)?,
                        None => return Ok(false),
                    }
                }
                Outcome::Completed(_) | Outcome::Failed { .. } | Outcome::Cancelled => {
                    return Ok(d.finished);
                }
            }
        }
    }

    /// Starts the scheduler and worker threads; they run until [`Host::shutdown`].
    pub fn spawn(self: &Arc<Self>) -> Vec<JoinHandle<()>> {
        self.stop.store(false, Ordering::SeqCst);
        self.hub.reopen();
        let (tx, rx) = channel::<String>();
        let rx = Arc::new(Mutex::new(rx));
        let mut handles = Vec::new();
        for i in 0..self.cfg.workers.max(1) {
            let host = self.clone();
            let rx = rx.clone();
            if let Ok(h) = std::thread::Builder::new()
                .name(format!("tcc-worker-{i}"))
                .spawn(move || host.worker(rx))
            {
                handles.push(h);
            }
        }
        let host = self.clone();
        if let Ok(h) = std::thread::Builder::new()
            .name("tcc-lease".into())
            .spawn(move || host.heartbeat())
        {
            handles.push(h);
        }
        let host = self.clone();
        self.scheduling.store(true, Ordering::SeqCst);
        match std::thread::Builder::new()
            .name("tcc-scheduler".into())
            .spawn(move || {
                host.scheduler(tx);
                host.scheduling.store(false, Ordering::SeqCst);
                // Starts handed over after its last pass: found by the
                // next scheduler's first look.
                if let Ok(mut s) = host.started.lock() {
                    s.clear();
                }
            }) {
            Ok(h) => handles.push(h),
            Err(_) => self.scheduling.store(false, Ordering::SeqCst),
        }
        handles
    }

    /// Stops the scheduler and workers (after their current drive).
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Drives waiting for a worker's answer give up (nothing journalled).
        self.hub.close();
        self.notify();
    }

    /// Whether no execution is being driven right now.
    pub fn idle(&self) -> bool {
        self.in_flight.lock().map(|s| s.is_empty()).unwrap_or(false)
    }

    fn worker(&self, rx: Arc<Mutex<Receiver<String>>>) {
        loop {
            let next = match rx.lock() {
                Ok(r) => r.recv(),
                Err(_) => return,
            };
            let Ok(id) = next else { return };
            // A panic in a drive ends that drive, not the worker: the
            // execution stays counted (its claim is not released) and is
            // quarantined when it keeps failing.
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.drive(&id)));
            let failure = match outcome {
                Ok(Ok(_)) => None,
                Ok(Err(HostError::Store(e))) => Some(format!("store error: {e}")),
                Ok(Err(e)) => {
                    tracing::warn!(execution_id = %id, error = %e, "drive failed");
                    None
                }
                Err(panic) => Some(format!(
                    "the drive panicked: {}",
                    crate::quarantine::panic_text(&*panic)
                )),
            };
            if let Ok(mut s) = self.in_flight.lock() {
                s.remove(&id);
            }
            match failure {
                None => self.failures.forget(&id),
                Some(cause) => {
                    tracing::warn!(execution_id = %id, %cause, "drive failed; retried after a backoff");
                    let backoff = crate::quarantine::Backoff {
                        base_ms: self.cfg.retry_backoff_ms,
                        max_ms: self.cfg.max_retry_backoff_ms,
                    };
                    let delay = self.failures.record(&id, cause, backoff);
                    // Keep the lease until the backoff ends: no node takes
                    // the execution up before.
                    if let Err(e) =
                        self.store
                            .renew(&id, &self.cfg.owner, crate::ids::now_ms(), delay)
                    {
                        tracing::warn!(execution_id = %id, error = %e, "holding the lease for the backoff failed");
                        std::thread::sleep(Duration::from_millis(delay.clamp(0, 1_000) as u64));
                    }
                }
            }
            self.notify();
        }
    }

    /// Renews the leases of every execution being driven, every third of
    /// the lease, so that a long provider call or engine slice does not
    /// let another node take over a live execution. A node that dies
    /// stops renewing; its leases expire and are taken over.
    fn heartbeat(&self) {
        let period = Duration::from_millis((self.cfg.lease_ms / 3).max(10) as u64);
        let mut last = std::time::Instant::now();
        while !self.stop.load(Ordering::SeqCst) {
            // Wait on the host's signal rather than sleeping, so that
            // `shutdown` does not have to wait out a whole period.
            let (m, c) = &self.signal;
            if let Ok(g) = m.lock()
                && !self.stop.load(Ordering::SeqCst)
            {
                let _ = c.wait_timeout(g, period.min(Duration::from_millis(50)));
            }
            // This node's reserved flow slots and rate limit shares: closed
            // when their limit gains waiters or they lie idle
            // (`flow::allot`, `flow::share`).
            self.flow.tend(&*self.store, &self.cfg.owner);
            if last.elapsed() < period {
                continue;
            }
            last = std::time::Instant::now();
            // The flow slots first: a reservation lends only while renewed
            // within half a lease (`flow::allot`), which renewing many
            // leases before it could delay past.
            self.flow
                .renew(&*self.store, &self.cfg.owner, self.cfg.lease_ms);
            let ids: Vec<String> = self
                .in_flight
                .lock()
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            // Every lease of this node in one write (PostgreSQL: one
            // statement), not one write per execution in flight.
            let now = crate::ids::now_ms();
            if let Err(e) = self
                .store
                .renew_all(&ids, &self.cfg.owner, now, self.cfg.lease_ms)
            {
                tracing::warn!(executions = ids.len(), error = %e, "renewing leases failed");
            }
        }
        self.flow
            .close_reservations(&*self.store, &self.cfg.owner, self.cfg.lease_ms);
    }

    fn scheduler(&self, tx: std::sync::mpsc::Sender<String>) {
        /// Most executions one look for work dispatches.
        const SCHEDULER_BATCH: u32 = 256;
        let mut next_timer = NextTimer::default();
        // The `looks_wanted` of the last look (none yet: look first), and
        // whether the last wait ran out (then look: other nodes' work and
        // due timers are found by looking every `poll_ms`).
        let mut looked_at: Option<u64> = None;
        let mut waited_out = true;
        while !self.stop.load(Ordering::SeqCst) {
            let seen = self.signal.0.lock().map(|g| *g).unwrap_or(0);
            let now = crate::ids::now_ms();
            let mut dispatched = 0;
            let mut full = false;
            let dispatch = |id: String, dispatched: &mut u32| -> bool {
                let fresh = self
                    .in_flight
                    .lock()
                    .map(|mut s| s.insert(id.clone()))
                    .unwrap_or(false);
                if fresh {
                    if tx.send(id).is_err() {
                        return false;
                    }
                    *dispatched += 1;
                }
                true
            };
            // This node's starts, without a look in the store.
            let started = self
                .started
                .lock()
                .map(|mut s| std::mem::take(&mut *s))
                .unwrap_or_default();
            for id in started {
                if !dispatch(id, &mut dispatched) {
                    return;
                }
            }
            let wanted = self.looks_wanted.load(Ordering::SeqCst);
            if waited_out || looked_at != Some(wanted) {
                looked_at = Some(wanted);
                match self.store.find_work(now, SCHEDULER_BATCH) {
                    Ok(ids) => {
                        full = ids.len() >= SCHEDULER_BATCH as usize;
                        for id in ids {
                            if !dispatch(id, &mut dispatched) {
                                return;
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "scheduler: finding work failed"),
                }
            }
            // A full batch: more may be waiting. Otherwise the wait below
            // returns at once if anything was signalled since `seen`: a
            // second look now would find only what was just dispatched
            // (claimed or not yet), one query per dispatch for nothing.
            if dispatched > 0 && full {
                waited_out = true;
                continue;
            }
            let mut wait = self.cfg.poll_ms;
            if let Some(due) = next_timer.due(self, now) {
                wait = wait.min((due - now).clamp(1, self.cfg.poll_ms as i64) as u64);
            }
            let (m, c) = &self.signal;
            waited_out = false;
            if let Ok(g) = m.lock()
                && *g == seen
            {
                waited_out = c
                    .wait_timeout(g, Duration::from_millis(wait))
                    .map(|(g, _)| *g == seen)
                    .unwrap_or(true);
            }
        }
    }

    /// Waits until `id` is terminal, or (when `stop_when_stuck`) until the
    /// host has nothing left to do for it; returns the row.
    pub fn wait_for(
        &self,
        id: &str,
        timeout: Duration,
        stop_when_stuck: bool,
    ) -> Result<ExecutionRow, HostError> {
        let start = std::time::Instant::now();
        let mut quiet = 0;
        loop {
            let row = self
                .store
                .get_execution(id)?
                .ok_or_else(|| HostError::UnknownProgram(id.to_string()))?;
            if row.is_terminal() || row.error.is_some() || start.elapsed() > timeout {
                return Ok(row);
            }
            let now = crate::ids::now_ms();
            // A runnable execution is never stuck: whoever holds its lease
            // (a drive, a durable retry's wait, a dead node) lets it go.
            let stuck = stop_when_stuck
                && row.status != "runnable"
                && self.idle()
                && self.retries_due_until.load(Ordering::SeqCst) < now
                && self.store.find_work(crate::ids::now_ms(), 1)?.is_empty()
                && self.store.next_timer_due()?.is_none();
            quiet = if stuck { quiet + 1 } else { 0 };
            if stop_when_stuck && quiet >= 10 {
                return Ok(row);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Fails the execution (fatal host error) on text the store cannot hold.
fn storable(what: &str, text: &str) -> Result<(), Stop> {
    crate::storable::check(what, text).map_err(|e| Stop::Fail(format!("host: {e}")))
}

/// An execution's status as the store's `executions.status` column and the
/// service's API name it: `runnable` for a continuation that can step
/// (also one the engine calls `running`, which a checkpoint never carries).
fn store_status(status: Status) -> &'static str {
    match status {
        Status::Runnable | Status::Running => "runnable",
        other => other.as_str(),
    }
}

fn load_continuation(
    store: &dyn Store,
    id: &str,
    limits: &Limits,
) -> Result<Option<Continuation>, Stop> {
    let rows = store.load_checkpoints(id)?;
    let mut it = rows.into_iter();
    let Some(first) = it.next() else {
        return Ok(None);
    };
    if first.kind != "snapshot" {
        return Err(Stop::Fail(format!(
            "checkpoint chain of {id} does not start with a snapshot"
        )));
    }
    let corrupt = |e: String| Stop::Store(StoreError::Corrupt(format!("checkpoint of {id}: {e}")));
    // A long snapshot stored deflated is decoded as it is inflated
    // (checked as it is read: a damaged text is a store error).
    let mut c = match &first.body {
        Stored::Text(text) => Continuation::decode(text.as_bytes(), limits)?,
        stored @ Stored::Deflated { len, .. } => stored
            .read_checked(|source| Continuation::decode_source(source, *len, limits))
            .map_err(corrupt)??,
    };
    c.revision = first.revision;
    for row in it {
        let text = row.body.text().map_err(corrupt)?;
        c = apply_delta_text(&c, text.as_bytes(), limits)?;
        c.revision = row.revision;
    }
    Ok(Some(c))
}

/// The scheduler's copy of the store's next timer due time. The scheduler
/// wakes after every drive; reading the due time each time cost a query
/// per drive. It is read again when this host registered a timer since,
/// when the copy's time has come, and at least once per poll interval
/// (timers registered by other nodes, timers cancelled).
#[derive(Default)]
struct NextTimer {
    /// Due time (`None`: no timer), the registration count it was read at,
    /// and when.
    read: Option<(Option<i64>, u64, std::time::Instant)>,
}

impl NextTimer {
    fn due(&mut self, host: &Host, now: i64) -> Option<i64> {
        let registered = host.timers_registered.load(Ordering::SeqCst);
        let poll = Duration::from_millis(host.cfg.poll_ms);
        let fresh = self.read.is_some_and(|(due, count, at)| {
            count == registered && at.elapsed() < poll && due.is_none_or(|d| d > now)
        });
        if !fresh {
            self.read = host
                .store
                .next_timer_due()
                .ok()
                .map(|due| (due, registered, std::time::Instant::now()));
        }
        self.read.and_then(|(due, ..)| due)
    }
}

struct Driver<'a, 'b> {
    host: &'a Host,
    id: &'a str,
    /// The execution's namespace (its route flow limits, issue 35).
    namespace: &'a str,
    exec: &'a mut Execution,
    regs: Vec<Registration>,
    consumed: Option<Wake>,
    history: Vec<(String, J)>,
    last_input: Option<String>,
    /// Idempotency keys journalled for this execution, loaded at its first
    /// effect in this drive and kept up to date by it (the lease keeps
    /// other writers out): an effect whose key is not in it has no journal
    /// row, so the journal is read only for keys that have one.
    journalled: Option<HashSet<String>>,
    /// A terminal checkpoint was committed: it gave the lease back.
    finished: bool,
    /// The journal key of an effect that failed outside a group, while no
    /// checkpoint was committed since: a `failed` checkpoint now keeps the
    /// checkpoint before it as the operator's resume point (issue 33).
    failed_effect: Option<String>,
    /// The drive's spans (issue 35).
    trace: &'a mut crate::otel::drive::DriveTrace<'b>,
}

impl Driver<'_, '_> {
    fn cancel(&mut self) -> Result<(), Stop> {
        hook_at("before_cancel", &[self.id]);
        self.history.push(("cancelled".into(), J::Null));
        self.exec.respond(HostResponse::Cancel)?;
        Ok(())
    }

    /// Acts on the row's `cancel_requested` at a committed state (the
    /// drive's start, a suspension: `committed`) or between steps: a termination, or a
    /// cancellation of an artifact without `irkit.catchable_cancel`, ends
    /// the execution at once; a catchable cancellation is requested once
    /// (its wait, if any, dropped first); one already delivered and
    /// committed clears the request. Returns whether the engine was
    /// answered (it has work to do before any wake).
    fn stop_requested(&mut self, row: &ExecutionRow, committed: bool) -> Result<bool, Stop> {
        if row.terminate_requested || !self.exec.program().catchable_cancel() {
            self.cancel()?;
            return Ok(true);
        }
        match self.exec.state().cancel {
            None => {
                self.request_cancel()?;
                Ok(true)
            }
            Some(CancelPhase::Delivered) if committed => {
                self.host.store.clear_cancel_request(self.id)?;
                Ok(false)
            }
            Some(_) => Ok(false),
        }
    }

    /// Whether a catchable cancellation is requested for this execution
    /// and not yet delivered (read from the store: an effect is about to
    /// run). Only for artifacts with `irkit.catchable_cancel`.
    fn cancel_due(&self) -> Result<bool, Stop> {
        if !self.exec.program().catchable_cancel() || self.exec.state().cancel.is_some() {
            return Ok(false);
        }
        Ok(self
            .host
            .store
            .get_execution(self.id)?
            .is_some_and(|r| r.cancel_requested && !r.terminate_requested))
    }

    /// Sends `request_cancel`: a suspended execution's open waits are
    /// dropped first (a crash in between leaves the request stored, and
    /// the next drive delivers it again).
    fn request_cancel(&mut self) -> Result<(), Stop> {
        hook_at("before_cancel", &[self.id]);
        let waiting = self.exec.state().status == Status::Suspended;
        if waiting && !self.host.store.drop_waits(self.id, &self.host.cfg.owner)? {
            return Err(Stop::Lost);
        }
        self.history.push((
            "cancel_delivered".into(),
            json!({"at": if waiting { "wait" } else { "next durable operation" }}),
        ));
        self.exec.respond(HostResponse::RequestCancel)?;
        Ok(())
    }

    fn deliver(&mut self, w: Wake) -> Result<(), Stop> {
        let response = match w.kind.as_str() {
            "timer" => {
                hook_at("before_timer_fired", &[self.id]);
                HostResponse::TimerFired {
                    branch: w.branch.clone(),
                }
            }
            // Payloads and results go to the engine as their stored text,
            // absorbed without a tree (issue 42, F3).
            "event" => {
                hook_at("before_event_payload", &[self.id]);
                let wake = TextWake::Event {
                    branch: w.branch.clone(),
                };
                return self.deliver_text(w, wake, r#"{"t":"null"}"#);
            }
            "child" => {
                if let Some(f) = &w.child_failure {
                    // `irkit.catchable_child_failure`: thrown in the parent,
                    // else the parent fails (the reference's hosts do).
                    if !self.exec.program().catchable_child_failure() {
                        return Err(Stop::Fail(format!("host: {f}")));
                    }
                    hook_at("before_child_result", &[self.id]);
                    let response = HostResponse::ChildFailed {
                        message: f.clone(),
                        branch: w.branch.clone(),
                        child_execution_id: self.exec.awaited_child(w.branch.as_deref()),
                    };
                    self.history.push((
                        "child_failed_delivered".into(),
                        json!({"branch": w.branch, "wait": w.wait_id}),
                    ));
                    self.consumed = Some(w);
                    self.exec.respond(response)?;
                    return Ok(());
                }
                hook_at("before_child_result", &[self.id]);
                let wake = TextWake::Child {
                    branch: w.branch.clone(),
                    child_execution_id: self.exec.awaited_child(w.branch.as_deref()),
                };
                return self.deliver_text(w, wake, r#"{"t":"undefined"}"#);
            }
            other => return Err(Stop::Fail(format!("unknown wait kind {other:?}"))),
        };
        self.delivered(&w);
        self.consumed = Some(w);
        self.exec.respond(response)?;
        Ok(())
    }

    /// Delivers an event payload or child result from its stored text
    /// (`absent` when the wake carries none).
    fn deliver_text(&mut self, mut w: Wake, wake: TextWake, absent: &str) -> Result<(), Stop> {
        self.delivered(&w);
        // The consumed wake is committed by its id and sequence number; its
        // value is not kept beside the heap that now holds it.
        let value = w.value.take();
        self.consumed = Some(w);
        let corrupt =
            |e: String| Stop::Store(StoreError::Corrupt(format!("a delivered value: {e}")));
        match value.as_ref().map(|v| v.stored()) {
            // A long stored text is absorbed as it is inflated, never held
            // whole beside the heap (issue 42, F3); checked as it is read,
            // so that a damaged one is a store error, not the program's.
            Some(stored @ Stored::Deflated { .. }) => {
                let exec = &mut self.exec;
                stored
                    .read_checked(|source| exec.respond_source(wake, source))
                    .map_err(corrupt)??;
            }
            Some(Stored::Text(text)) => self.exec.respond_text(wake, text)?,
            None => self.exec.respond_text(wake, absent)?,
        }
        Ok(())
    }

    fn delivered(&mut self, w: &Wake) {
        self.history.push((
            format!("{}_delivered", w.kind),
            json!({"branch": w.branch, "wait": w.wait_id}),
        ));
    }

    fn answer(&mut self, req: HostRequest, confirmed: &mut u64) -> Result<(), Stop> {
        let host = self.host;
        let response = match req {
            HostRequest::PersistCheckpoint {
                revision,
                kind,
                base_revision,
                materialize,
                delta,
            } => {
                // The engine's state is the continuation being checkpointed
                // (dead locals cleared, heap collected, revision set); the
                // host reads status, result and pending from it instead of
                // rebuilding it from the snapshot or delta.
                let kind_name = match kind {
                    CheckpointKind::Snapshot => "snapshot",
                    CheckpointKind::Delta => {
                        if base_revision != *confirmed {
                            return Err(Stop::Fail(format!(
                                "delta against revision {base_revision}, last confirmed {confirmed}"
                            )));
                        }
                        "delta"
                    }
                };
                // The engine's text of the body (it chose between delta and
                // snapshot by their lengths), written straight into the
                // store's packing writer: a long body is deflated as it is
                // written, never held whole beside the heap, and packed
                // before the result's text is written (issue 42, F3). A
                // body the engine has no text for is written from its tree.
                let mut out = host.store.pack_writer();
                if !self.exec.write_checkpoint_text_to(revision, &mut out) {
                    let tree = match kind {
                        CheckpointKind::Snapshot => materialize.as_ref(),
                        CheckpointKind::Delta => delta.as_ref(),
                    };
                    let Some(tree) = tree else {
                        return Err(Stop::Fail(format!("{kind_name} checkpoint without body")));
                    };
                    out.push_str(&to_canonical(tree));
                }
                let body = out.finish().map_err(|e| {
                    Stop::Store(StoreError::Corrupt(format!("the checkpoint's text: {e}")))
                })?;
                let cont = self.exec.state();
                if cont.revision != revision {
                    return Err(Stop::Fail(format!(
                        "checkpoint revision {revision}, engine state at {}",
                        cont.revision
                    )));
                }
                let status = cont.status;
                // The result's canonical text, written from the heap
                // without a tree (issue 42, F3); a completed execution's
                // straight into the store's packing writer, so that a long
                // result is deflated as it is written, never held whole. A
                // failure's or cancellation's text is also its message.
                let (result, message) = match (&cont.result, status) {
                    (Some(v), Status::Completed) => {
                        let mut out = host.store.pack_writer();
                        export_text_to(&cont.heap, v, &mut out)?;
                        let packed = out.finish().map_err(|e| {
                            Stop::Store(StoreError::Corrupt(format!("the result's text: {e}")))
                        })?;
                        (Some(packed), None)
                    }
                    // A cancellation that went through the handlers has the
                    // error they rethrew (an immediate one has none).
                    (Some(v), Status::Failed | Status::Cancelled) => {
                        let text = export_text(&cont.heap, v)?;
                        let message = match v {
                            Value::Str(s) => crate::storable::message(s).into_owned(),
                            _ => text.clone(),
                        };
                        (Some(host.store.pack(text)), Some(message))
                    }
                    _ => (None, None),
                };
                let pending = if status == Status::Suspended {
                    Some(cont.pending_to_json()).filter(|p| !p.is_null())
                } else {
                    None
                };
                let consumed_event = self.consumed.as_ref().is_some_and(|w| w.kind == "event");
                let mut history = std::mem::take(&mut self.history);
                if status.is_terminal() || status == Status::Suspended {
                    let mut detail = json!({"revision": revision, "status": store_status(status)});
                    // Where it stands (its top frame), kept with the entry:
                    // the dashboard shows the step's source line after the
                    // chain has dropped this revision (issue 35,
                    // `crate::source::view::history_locations`).
                    if let Some(top) = cont.frames.last() {
                        detail["func_id"] = top.func_id.into();
                        detail["pc"] = top.pc.into();
                    }
                    history.push(("checkpoint".into(), detail));
                }
                // The first checkpoint after a failed effect: when it is
                // the failure, the one before (`confirmed`) is where an
                // operator may resume it from.
                let resume_key = self
                    .failed_effect
                    .take()
                    .filter(|_| status == Status::Failed);
                let tx = CheckpointTx {
                    resume_key,
                    id: self.id.to_string(),
                    owner: host.cfg.owner.clone(),
                    revision,
                    kind: kind_name.into(),
                    body,
                    status: store_status(status).into(),
                    result,
                    message,
                    pending,
                    registrations: std::mem::take(&mut self.regs),
                    consumed: self.consumed.take(),
                    history,
                };
                hook_at("before_persist_checkpoint", &[self.id]);
                let registers_timer = tx
                    .registrations
                    .iter()
                    .any(|r| matches!(r, Registration::Timer { .. }));
                let commit_started = std::time::Instant::now();
                let mut commit_span = self.trace.checkpoint(revision, kind_name);
                commit_span.set("tcc.status", store_status(status));
                if let Err(e) = host.store.commit_checkpoint(tx) {
                    commit_span.fail(e.to_string());
                    return Err(e.into());
                }
                commit_span.end();
                crate::metrics::global().commit(commit_started.elapsed());
                if registers_timer {
                    host.timers_registered.fetch_add(1, Ordering::SeqCst);
                }
                self.finished = status.is_terminal();
                hook_at("after_persist_checkpoint", &[self.id]);
                if status == Status::Suspended {
                    hook_at("after_wait_checkpoint", &[self.id]);
                }
                if consumed_event {
                    hook_at("after_event_persist", &[self.id]);
                }
                *confirmed = revision;
                HostResponse::PersistConfirmed { revision }
            }
            HostRequest::RunEffect {
                key,
                idempotency_key: _,
                input,
            } => {
                storable("effect key", &key)?;
                // The journal's key, also the providers' idempotency key:
                // the engine's `{exec}:{key}` with the execution id escaped,
                // so that no two executions share one (store::journal_key).
                let idempotency_key = crate::store::journal_key(self.id, &key);
                let canonical = to_canonical(&input);
                if self.journalled.is_none() {
                    let keys = host.store.journal_keys(self.id)?;
                    self.journalled = Some(keys.into_iter().collect());
                }
                let journalled = match &self.journalled {
                    Some(keys) if !keys.contains(&idempotency_key) => None,
                    _ => host.store.journal_get(&idempotency_key)?,
                };
                // A catchable cancellation requested meanwhile is thrown at
                // an effect that has not run (a journalled one has: its
                // answer is replayed).
                let cancel_now = journalled.is_none() && self.cancel_due()?;
                let response = match journalled {
                    None if cancel_now => {
                        hook_at("before_cancel", &[self.id]);
                        self.history.push((
                            "cancel_delivered".into(),
                            json!({"at": "effect", "key": key}),
                        ));
                        return Ok(self.exec.respond(HostResponse::RequestCancel)?);
                    }
                    Some(j) if j.input != canonical => {
                        return Err(Stop::Fail(format!(
                            "host: effect {idempotency_key:?} re-run with a different input (journalled {}, now {canonical})",
                            j.input
                        )));
                    }
                    Some(j) if j.status == "completed" => {
                        HostResponse::EffectResult { value: j.result }
                    }
                    Some(j) => HostResponse::EffectFailed {
                        message: failure_message(&j.result)
                            .unwrap_or("effect failed")
                            .to_string(),
                    },
                    None => {
                        let (mut effect_span, traceparent) = self.trace.effect(&key)?;
                        let effect = Effect {
                            execution_id: self.id,
                            key: &key,
                            idempotency_key: &idempotency_key,
                            input: &input,
                            traceparent: traceparent.as_deref(),
                        };
                        // A route's flow limits: a slot for the provider
                        // call, or the drive ends and the execution queues.
                        let route_scopes =
                            host.flow.route_scopes(&*host.store, self.namespace, &key);
                        if !route_scopes.is_empty()
                            && let crate::flow::Admission::Wait { until_ms, .. } =
                                host.flow.acquire(
                                    &*host.store,
                                    route_scopes.clone(),
                                    self.id,
                                    &host.cfg.owner,
                                    host.cfg.lease_ms,
                                )?
                        {
                            return Err(Stop::Defer(until_ms));
                        }
                        let answer = crate::effect_retry::call(
                            &*host.store,
                            &host.providers,
                            &effect,
                            crate::ids::now_ms(),
                        );
                        host.flow.release(&*host.store, &route_scopes, self.id);
                        let answer = answer?;
                        let out = match answer {
                            EffectAnswer::Outcome(out) => out,
                            EffectAnswer::Deferred(due) => {
                                effect_span.set("tcc.effect.outcome", "retry_deferred");
                                return Err(Stop::Defer(due));
                            }
                        };
                        effect_span.set(
                            "tcc.effect.outcome",
                            match &out {
                                ProviderOutcome::Result(_) => "completed",
                                ProviderOutcome::Failed(_) => "failed",
                                ProviderOutcome::Abandoned(_) => "abandoned",
                            },
                        );
                        if let ProviderOutcome::Failed(m) | ProviderOutcome::Abandoned(m) = &out {
                            effect_span.fail(m.clone());
                        }
                        effect_span.end();
                        match out {
                            ProviderOutcome::Result(value) => HostResponse::EffectResult { value },
                            ProviderOutcome::Failed(message) => {
                                HostResponse::EffectFailed { message }
                            }
                            // Nothing to journal: the drive ends, the
                            // execution resumes from its last checkpoint.
                            ProviderOutcome::Abandoned(why) => {
                                return Err(Stop::Store(StoreError::db(format!(
                                    "effect {key:?} abandoned: {why}"
                                ))));
                            }
                        }
                    }
                };
                self.last_input = Some(canonical);
                response
            }
            HostRequest::PersistEffect {
                key,
                idempotency_key: _,
                status,
                result,
            } => {
                hook_at("before_persist_effect", &[self.id, &key]);
                let idempotency_key = crate::store::journal_key(self.id, &key);
                let effect_key = key.clone();
                let history_key = idempotency_key.clone();
                let status_name = status.to_string();
                self.failed_effect = (status == "failed" && self.exec.state().join.is_none())
                    .then(|| idempotency_key.clone());
                if let Some(keys) = &mut self.journalled {
                    keys.insert(idempotency_key.clone());
                }
                host.store.journal_put(&JournalRow {
                    idempotency_key,
                    execution_id: self.id.to_string(),
                    key,
                    input: self.last_input.take().unwrap_or_else(|| "{}".into()),
                    status: status.to_string(),
                    result,
                })?;
                hook_at("after_persist_effect", &[self.id, &effect_key]);
                // Its history entry: the journal row itself, where the store
                // lists it so; else written with the checkpoint that follows
                // (one history write per step instead of one per commit).
                if !host.store.history_lists_journal() {
                    self.history.push((
                        "effect".into(),
                        json!({"key": effect_key, "idempotency_key": history_key, "status": status_name}),
                    ));
                }
                HostResponse::Ack
            }
            HostRequest::RegisterTimer {
                resume_at_ms,
                branch,
            } => {
                if let Some(b) = &branch {
                    storable("branch id", b)?;
                }
                let delay = i64::try_from(resume_at_ms).unwrap_or(i64::MAX / 4);
                self.regs.push(Registration::Timer {
                    due_ms: crate::ids::now_ms().saturating_add(delay),
                    branch,
                });
                hook_at("after_register_timer", &[self.id]);
                HostResponse::Ack
            }
            HostRequest::RegisterWait {
                wait_id,
                event_name,
                branch,
            } => {
                storable("event name", &event_name)?;
                storable("wait id", &wait_id)?;
                if let Some(b) = &branch {
                    storable("branch id", b)?;
                }
                let registered_name = event_name.clone();
                self.regs.push(Registration::Event {
                    name: event_name,
                    wait_id,
                    branch,
                });
                hook_at("after_register_wait", &[self.id, &registered_name]);
                HostResponse::Ack
            }
            HostRequest::CreateChild {
                child_execution_id,
                program_name,
                args,
                branch,
                ..
            } => {
                storable("child program name", &program_name)?;
                storable("child execution id", &child_execution_id)?;
                if let Some(b) = &branch {
                    storable("branch id", b)?;
                }
                // A child runs a program registered in its parent's
                // namespace (issue 35, `crate::namespace`).
                let namespace = match crate::namespace::store_of(&*host.store) {
                    Some(ns) => ns.execution_namespace(self.id)?,
                    None => None,
                }
                .unwrap_or_else(|| crate::namespace::DEFAULT.to_string());
                let hash = match crate::namespace::resolve_program(
                    &*host.store,
                    &namespace,
                    &program_name,
                )? {
                    Some((hash, Some(_))) => hash,
                    _ => {
                        return Err(Stop::Fail(format!(
                            "host: Invoke of unregistered program {program_name:?}"
                        )));
                    }
                };
                // The child's drives continue this drive's trace (issue
                // 35, `crate::otel`): its `traceparent` is stored before the
                // checkpoint that creates it commits (the same id on a
                // re-run keeps the first).
                if let Some(tp) = self.trace.for_child()?
                    && let Some(traces) = crate::otel::traces_of(&*host.store)
                {
                    traces.put_traceparent(&child_execution_id, &tp.to_string())?;
                }
                let child_program = program_name.clone();
                self.regs.push(Registration::Child {
                    child: NewExecution {
                        id: child_execution_id,
                        artifact_hash: hash,
                        program_name: Some(program_name),
                        args: args.into(),
                        parent: Some((self.id.to_string(), branch.clone())),
                        namespace,
                    },
                    branch,
                });
                hook_at("after_create_child", &[self.id, &child_program]);
                HostResponse::Ack
            }
        };
        self.exec.respond(response)?;
        Ok(())
    }
}
