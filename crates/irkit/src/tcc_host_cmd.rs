//! `irkit tcc serve|register|start|status|send|cancel|ls`: the durable
//! host (`tcc_host`) as a service, its command-line clients, and
//! `start --local` on the embedded SQLite store.

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Format;
use crate::error::{CliError, Outcome};
use serde_json::{Value as J, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::host::{Host, HostConfig, HostError};
use tcc_host::notify::Hub;
use tcc_host::providers::Providers;
use tcc_host::service::{Service, ServiceConfig, percent_encode, status_json};
use tcc_host::worker_tasks::board::TaskBoard;
use tcc_host::worker_tasks::provider::WorkerProvider;
use tcc_host::{Store, open_store};

const DEFAULT_SERVER: &str = "http://127.0.0.1:7420";
const DEFAULT_DATABASE: &str = "./irkit-tcc.db";

/// Where a client command talks to.
#[derive(clap::Args, Debug, Clone)]
pub struct ClientArgs {
    /// Server URL (default: $IRKIT_TCC_SERVER, else http://127.0.0.1:7420).
    #[arg(long)]
    server: Option<String>,
    /// Bearer token (default: $IRKIT_TCC_TOKEN).
    #[arg(long)]
    token: Option<String>,
    /// For an https server: trust only the CA certificates of this PEM file
    /// instead of Mozilla's roots (default: $IRKIT_TCC_CA_FILE).
    #[arg(long, value_name = "PEM")]
    ca_file: Option<std::path::PathBuf>,
    /// Act in this namespace (the TCC-Namespace header; default:
    /// $IRKIT_TCC_NAMESPACE, else the token's own namespace).
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
}

/// `irkit tcc serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (IP:PORT or HOST:PORT, e.g. `localhost:0`; port 0 picks one).
    /// Non-loopback needs a token.
    #[arg(long, default_value = "127.0.0.1:7420")]
    listen: String,
    /// SQLite file path, or a postgres:// URL (default: --database-file,
    /// else $IRKIT_TCC_DATABASE, else ./irkit-tcc.db). A URL with a
    /// password is better given by file or environment: arguments are
    /// visible to every local user.
    #[arg(long, conflicts_with = "database_file")]
    database: Option<String>,
    /// A file holding the database URL (or SQLite path) on its first line.
    #[arg(long, value_name = "FILE")]
    database_file: Option<PathBuf>,
    /// Effect provider routes (TOML).
    #[arg(long)]
    providers: Option<PathBuf>,
    /// Bearer token required on every request (default: --token-file, else
    /// $IRKIT_TCC_TOKEN). Prefer those two: arguments are visible to every
    /// local user.
    #[arg(long, conflicts_with = "token_file")]
    token: Option<String>,
    /// A file holding the bearer token.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// A file of bearer tokens scoped to namespaces, one a line:
    /// `NAMESPACES TOKEN` (NAMESPACES: `*` or names separated by commas;
    /// docs/tcc/host.md "Namespaces"). With --token, both are accepted.
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// A host name (besides IP addresses and loopback names) that requests
    /// may name in `Host` when no token is configured, and whose origin
    /// may send requests (repeatable; docs/tcc/host.md "Browsers").
    #[arg(long = "allowed-host", value_name = "NAME")]
    allowed_hosts: Vec<String>,
    /// Drives of one execution that may end abnormally in a row (crash,
    /// panic, store error) before it is failed as quarantined.
    #[arg(long, default_value_t = 5)]
    max_drive_attempts: u32,
    /// Worker threads (each drives one execution at a time; a worker-routed
    /// effect holds one while it waits); 0: an API-only node that drives no
    /// execution (it answers requests, long polls included, while other
    /// nodes of its PostgreSQL database do the work).
    #[arg(long, default_value_t = 32)]
    workers: usize,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 8 << 20)]
    max_body: usize,
    /// Execution lease in milliseconds (default $IRKIT_TCC_LEASE_MS, else
    /// 30000). A dead node's executions are taken over when it expires.
    #[arg(long)]
    lease_ms: Option<i64>,
    /// This node's lease-owner id (default: random). Must be unique among
    /// live nodes; a node restarted under the same id takes back its own
    /// executions at once instead of waiting for their leases to expire.
    #[arg(long)]
    node_id: Option<String>,
    /// Log lines on stderr: text or json (one object per line); the level
    /// filter is $RUST_LOG (default info).
    #[arg(long, value_name = "text|json", default_value = "text")]
    log_format: tcc_host::logging::LogFormat,
    /// Longest an HTTP request may take, in milliseconds (answered 503
    /// `timeout` past it).
    #[arg(long, default_value_t = 30_000)]
    request_timeout_ms: u64,
    /// Longest wait for a request's line and headers (also the longest an
    /// HTTP/1.1 keep-alive connection stays idle), in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    header_timeout_ms: u64,
    /// A connection that reads and writes nothing for this many
    /// milliseconds is closed (at least the request timeout).
    #[arg(long, default_value_t = 60_000)]
    idle_timeout_ms: u64,
    /// Most connections open at once; more wait to be accepted.
    #[arg(long, default_value_t = 1024)]
    max_connections: usize,
    /// Export spans (drives, effect calls, checkpoints, HTTP requests) to
    /// this OTLP/HTTP endpoint, JSON encoding (base URL; `/v1/traces` is
    /// appended). Default: $OTEL_EXPORTER_OTLP_ENDPOINT; neither: off.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Delete terminal executions that ended longer ago than this (e.g.
    /// 7d, 12h, 30m), with their journal, history and checkpoints, in
    /// small batches on every node (default: keep them).
    #[arg(long, value_name = "DURATION")]
    retention: Option<String>,
    /// With --retention: first append each one to
    /// DIR/executions-YYYY-MM-DD.jsonl (the UTC day it ended).
    #[arg(long, value_name = "DIR", requires = "retention")]
    archive_dir: Option<PathBuf>,
    /// With --retention: executions per batch (one short transaction each).
    #[arg(long, default_value_t = 500, requires = "retention")]
    retention_batch: u32,
    /// A flow limit set in the store at start (repeatable):
    /// `SCOPE=max=N,rate=R/s,burst=B`, SCOPE `program:NAME` or
    /// `route:PATTERN`, or `NAMESPACE/SCOPE` for a namespace's limit
    /// (docs/tcc/host.md "Flow control"). It replaces the stored limit of
    /// that scope; `irkit tcc limit` changes it later.
    #[arg(long = "limit", value_name = "SCOPE=SETTINGS")]
    limits: Vec<String>,
}

/// Stores the `--limit SCOPE=SETTINGS` flags of `irkit tcc serve`.
fn set_limits(store: &dyn tcc_host::Store, flags: &[String]) -> Result<(), CliError> {
    for flag in flags {
        let (scope, settings) = flag
            .split_once('=')
            .ok_or_else(|| usage(format!("--limit {flag:?}: expected SCOPE=SETTINGS")))?;
        let row = tcc_host::flow::Settings::parse(settings)
            .and_then(|s| tcc_host::flow::limit_row(scope, s, tcc_host::now_ms()))
            .map_err(|e| usage(format!("--limit {flag:?}: {e}")))?;
        let flow = tcc_host::flow::store_of(store)
            .ok_or_else(|| usage("--limit: this store keeps no flow limits"))?;
        flow.put_limit(&row)
            .map_err(|e| CliError::usage(format!("--limit {flag:?}: {e}")))?;
    }
    Ok(())
}

/// `irkit tcc register`.
#[derive(clap::Args)]
pub struct RegisterArgs {
    // The artifact JSON, or a `.py`/`.ts`/`.rs` source compiled first.
    #[command(flatten)]
    input: InputArgs,
    /// Program name (default: the file stem).
    #[arg(long)]
    name: Option<String>,
    /// Do not keep a source file's text beside the artifact (it is kept by
    /// default, for the dashboard's source lines).
    #[arg(long)]
    no_source: bool,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc start`.
#[derive(clap::Args)]
pub struct StartArgs {
    /// Program name or artifact hash (with --local also an artifact file, registered under its stem).
    program: String,
    /// Entry arguments: a JSON array of plain JSON values (tagged values are accepted too).
    #[arg(long)]
    args: Option<String>,
    /// Values in and out in the engine's tagged form (`{"t":"number","v":5}`).
    #[arg(long)]
    tagged: bool,
    /// Execution id (default: generated).
    #[arg(long)]
    id: Option<String>,
    /// Run in this process on the embedded store instead of a server.
    #[arg(long)]
    local: bool,
    /// With --local: SQLite file (or a postgres:// URL).
    #[arg(long, default_value = DEFAULT_DATABASE)]
    database: String,
    /// With --local: effect provider routes (TOML).
    #[arg(long)]
    providers: Option<PathBuf>,
    /// With --local: send event NAME with a plain JSON payload before running (repeatable).
    #[arg(long = "event", value_name = "NAME=JSON")]
    events: Vec<String>,
    /// With --local: give up waiting after this many milliseconds.
    #[arg(long, default_value_t = 600_000)]
    timeout_ms: u64,
    /// Against a server: wait until the execution ends (long polls, no
    /// overall limit) and print its status like `irkit tcc result`.
    #[arg(long, conflicts_with = "local")]
    wait: bool,
    /// A W3C trace context (`00-TRACEID-SPANID-FLAGS`) the execution's
    /// drives continue, passed on to its webhook and worker effects (the
    /// `traceparent` header of the start request).
    #[arg(long, value_name = "TRACEPARENT")]
    traceparent: Option<String>,
    // The id / status line (human) or the status JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc status`.
#[derive(clap::Args)]
pub struct StatusArgs {
    /// Execution id.
    id: String,
    /// Show the result in the engine's tagged form.
    #[arg(long)]
    tagged: bool,
    // Human summary or the status JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc result`.
#[derive(clap::Args)]
pub struct ResultArgs {
    /// Execution id.
    id: String,
    /// Wait up to this long for the execution to end (e.g. 500ms, 30s, 5m;
    /// a bare number is seconds). Without it: the status now.
    #[arg(long, value_name = "DURATION")]
    wait: Option<String>,
    // Human summary or the status JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc send`.
#[derive(clap::Args)]
pub struct SendArgs {
    /// Execution id.
    id: String,
    /// Event name.
    event: String,
    /// Payload: plain JSON (default null; a tagged value is accepted too).
    #[arg(long)]
    payload: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc cancel` and `irkit tcc terminate`.
#[derive(clap::Args)]
pub struct CancelArgs {
    /// Execution id.
    id: String,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc resume`.
#[derive(clap::Args)]
pub struct ResumeArgs {
    /// Execution id: a paused one (its pause is lifted), or one failed
    /// because an effect failed.
    #[arg(required_unless_present = "program")]
    id: Option<String>,
    /// Resume this paused program instead (an execution paused on its own
    /// stays paused).
    #[arg(long, conflicts_with_all = ["id", "local"])]
    pub(crate) program: Option<String>,
    /// Resume in this process on the embedded store instead of a server,
    /// and drive the execution to its end.
    #[arg(long)]
    local: bool,
    /// With --local: SQLite file (or a postgres:// URL).
    #[arg(long, default_value = DEFAULT_DATABASE)]
    database: String,
    /// With --local: effect provider routes (TOML).
    #[arg(long)]
    providers: Option<PathBuf>,
    /// With --local: give up waiting after this many milliseconds.
    #[arg(long, default_value_t = 600_000)]
    timeout_ms: u64,
    /// With --local: show the result in the engine's tagged form.
    #[arg(long)]
    tagged: bool,
    // The resumed line (human) or the answer JSON; with --local the status.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

/// `irkit tcc ls`.
#[derive(clap::Args)]
pub struct LsArgs {
    /// Only this status.
    #[arg(long)]
    status: Option<String>,
    /// Only this program name.
    #[arg(long)]
    program: Option<String>,
    /// Only executions whose artifact is missing.
    #[arg(long)]
    artifact_missing: bool,
    /// Page size.
    #[arg(long, default_value_t = 100)]
    limit: u32,
    /// Cursor from a previous page.
    #[arg(long)]
    after: Option<i64>,
    /// Show results in the engine's tagged form.
    #[arg(long)]
    tagged: bool,
    // Human table or JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

pub(crate) fn usage(message: impl Into<String>) -> CliError {
    CliError::Usage(message.into())
}

/// A store failure is the environment's (exit 2); any other refusal is the
/// input's (exit 1), a coded diagnostic about `label` (the program as given):
/// an artifact that does not decode or validate keeps its `TCC-…` code, a
/// hash mismatch is `TCC-H001`, an unknown program `TCC-H203` and a bad
/// request `TCC-H200` (the codes the HTTP API answers for the same refusals).
fn host_error(e: &HostError, label: &str) -> CliError {
    let (kind, code, message) = match e {
        HostError::Store(_) => return usage(e.to_string()),
        HostError::Invalid { code, message } if code.starts_with("TCC-") => {
            let kind = if code.starts_with("TCC-E") {
                "encoding"
            } else {
                "semantic"
            };
            // The library's message starts with its code; print it once.
            let message = message
                .strip_prefix(code.as_str())
                .map(|m| m.trim_start_matches([':', ' ']))
                .unwrap_or(message);
            (kind, code.as_str(), message.to_string())
        }
        HostError::Invalid { message, .. } => ("encoding", "TCC-H001", message.clone()),
        HostError::UnknownProgram(_) => ("name", "TCC-H203", e.to_string()),
        HostError::BadRequest(_) => ("semantic", "TCC-H200", e.to_string()),
    };
    CliError::invalid(
        vec![crate::diag::Diagnostic::new(
            kind,
            Some(code),
            message,
            label,
        )],
        None,
    )
}

fn load_providers(
    path: Option<&Path>,
    store: Arc<dyn Store>,
    tasks: Option<&Arc<TaskBoard>>,
) -> Result<Providers, CliError> {
    match path {
        None => Ok(Providers::echo_all()),
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| usage(format!("{}: {e}", p.display())))?;
            let worker = tasks.map(|board| {
                move |timeout: Duration| -> Arc<dyn tcc_host::EffectProvider> {
                    Arc::new(WorkerProvider::new(board.clone(), timeout))
                }
            });
            let worker_routes = worker
                .as_ref()
                .map(|w| w as tcc_host::providers::WorkerRoutes<'_>);
            Providers::from_toml_with(&text, store, worker_routes)
                .map_err(|e| usage(format!("{}: {e}", p.display())))
        }
    }
}

/// `irkit tcc serve`: runs until SIGTERM or SIGINT, then shuts down
/// gracefully: stops accepting requests, finishes those in flight, lets
/// the workers end their current drive, gives back this node's leases and
/// exits 0.
pub fn serve(a: ServeArgs) -> Result<Outcome, CliError> {
    if let Err(e) = tcc_host::logging::init(a.log_format) {
        return Err(usage(e));
    }
    // Freed memory goes back to the system at once (issue 42, F3).
    let tuned = crate::allocator::tune_for_service();
    tracing::debug!(
        purge_delay_zero = tuned.purge_delay,
        c_malloc_thresholds = tuned.c_malloc_thresholds,
        "allocators tuned"
    );
    let secrets = ServeSecrets::resolve(&a)?;
    secrets.warn_about_arguments();
    let database = secrets.database.0.clone();
    let store = match open_store(&database) {
        Ok(s) => s,
        Err(e) => {
            return Err(usage(format!(
                "--database {}: {e}",
                tcc_host::redact_database(&database)
            )));
        }
    };
    // SQLite: one serve process per file, so leases left by a dead process
    // are freed. PostgreSQL: other nodes may be alive; only this node id's
    // own leases are taken back (a dead node's others expire).
    if let Err(e) = store.reset_leases() {
        return Err(usage(e.to_string()));
    }
    if let Some(node) = &a.node_id {
        if node.is_empty() || node.len() > 200 {
            return Err(usage("--node-id must be 1 to 200 bytes"));
        }
        match store.release_owner(node) {
            Ok(n) => tcc_host::metrics::global().leases_taken_back(n),
            Err(e) => return Err(usage(e.to_string())),
        }
    }
    // Wake-ups of result waiters and workers; across PostgreSQL nodes
    // through LISTEN/NOTIFY.
    let hub = Hub::new();
    if tcc_host::is_postgres_url(&database)
        && let Err(e) = tcc_host::notify_pg::attach(&hub, &database)
    {
        return Err(usage(format!("notification bridge: {e}")));
    }
    let board = match TaskBoard::open(&database, hub.clone()) {
        Ok(b) => b,
        Err(e) => return Err(usage(format!("worker task queue: {e}"))),
    };
    let providers = load_providers(a.providers.as_deref(), store.clone(), Some(&board))?;
    let lease_ms = match a.lease_ms {
        Some(l) => l,
        None => match std::env::var("IRKIT_TCC_LEASE_MS") {
            Ok(v) => match v.parse::<i64>() {
                Ok(l) => l,
                Err(_) => return Err(usage(format!("IRKIT_TCC_LEASE_MS={v:?} is not an integer"))),
            },
            Err(_) => 30_000,
        },
    };
    let endpoint = a
        .otlp_endpoint
        .clone()
        .or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok())
        .filter(|e| !e.is_empty());
    let telemetry = match endpoint {
        Some(e) => match tcc_host::otel::Telemetry::new(&e, "irkit-tcc", Duration::from_secs(1)) {
            Ok(t) => Some(Arc::new(t)),
            Err(err) => return Err(usage(format!("--otlp-endpoint: {err}"))),
        },
        None => None,
    };
    let retention_age_ms = match &a.retention {
        None => None,
        Some(text) => match tcc_host::schedule::parse_duration_ms(text) {
            Ok(ms) if ms >= 1_000 => Some(ms),
            Ok(_) => return Err(usage(format!("--retention {text:?}: at least 1s"))),
            Err(e) => return Err(usage(format!("--retention {text:?}: {e}"))),
        },
    };
    if !(1..=tcc_host::retention::MAX_BATCH).contains(&a.retention_batch) {
        return Err(usage(format!(
            "--retention-batch must be 1 to {}",
            tcc_host::retention::MAX_BATCH
        )));
    }
    let mut cfg = HostConfig {
        workers: a.workers.max(1),
        lease_ms: lease_ms.max(100),
        max_drive_attempts: a.max_drive_attempts.max(1),
        telemetry: telemetry.clone(),
        ..HostConfig::default()
    };
    if let Some(node) = a.node_id {
        cfg.owner = node;
    }
    let host = Host::with_queue(store.clone(), providers, cfg, hub, Some(board));
    set_limits(&*store, &a.limits)?;
    let owner = host.config().owner.clone();
    let token = secrets.token.map(|(t, _)| t);
    let tokens = match &a.tokens_file {
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| usage(format!("--tokens-file {}: {e}", f.display())))?;
            tcc_host::namespace::TokenSet::parse(&text)
                .map_err(|e| usage(format!("--tokens-file {}: {e}", f.display())))?
        }
        None => tcc_host::namespace::TokenSet::default(),
    };
    // Host names (`localhost:0`) are resolved here, once; the service binds an address.
    let listen = crate::args::parse_listen(&a.listen)
        .map_err(|m| CliError::usage(format!("--listen: {m}")))?
        .to_string();
    let service = match Service::start(
        &listen,
        host.clone(),
        ServiceConfig {
            token,
            tokens,
            max_body: a.max_body,
            request_timeout: Duration::from_millis(a.request_timeout_ms.max(1)),
            allowed_hosts: tcc_host::admission::AllowedHosts::new(a.allowed_hosts.clone()),
            conn: tcc_host::conn::ConnLimits {
                header_read: Duration::from_millis(a.header_timeout_ms.max(1)),
                idle: Duration::from_millis(a.idle_timeout_ms.max(1)),
                max_connections: a.max_connections.max(1),
            },
            ..ServiceConfig::default()
        },
    ) {
        Ok(s) => s,
        Err(e) => return Err(usage(e.to_string())),
    };
    if let Err(e) = service.stop_on_signals() {
        return Err(usage(e.to_string()));
    }
    tracing::info!(
        addr = %service.addr(),
        database = %tcc_host::redact_database(&database),
        node = %owner,
        "serving"
    );
    // The address first, then the workers: a drive that aborts the
    // process at once (a crash hook) still leaves the line behind.
    println!("listening on http://{}", service.addr());
    let _ = std::io::stdout().flush();
    let workers = if a.workers == 0 {
        Vec::new()
    } else {
        host.spawn()
    };
    // Every node handles schedules (the store's compare-and-set decides
    // which node starts each tick), API-only ones too.
    let ticker = tcc_host::schedule::ticker::Ticker::spawn(host.clone());
    // Every node deletes expired executions (taken batches keep nodes apart).
    let retention = retention_age_ms.and_then(|age| {
        let mut rc = tcc_host::retention::RetentionConfig::new(age, owner.clone());
        rc.archive_dir = a.archive_dir.clone();
        rc.batch = a.retention_batch;
        tcc_host::retention::task::RetentionTask::spawn(host.clone(), rc)
    });
    let served = service.wait();
    if let Some(t) = ticker {
        t.stop();
    }
    if let Some(t) = retention {
        t.stop();
    }
    host.shutdown();
    for w in workers {
        let _ = w.join();
    }
    // Drives give their lease back when they end; this is the net for
    // anything left (another node takes over at once instead of waiting
    // for the lease to expire).
    let released = store.release_owner(&owner);
    if let Some(t) = &telemetry
        && let Err(e) = t.shutdown()
    {
        tracing::warn!(error = %e, "spans not exported at shutdown");
    }
    match (&served, &released) {
        (Ok(()), Ok(n)) => {
            tracing::info!(leases_released = *n, "shut down");
            Ok(Outcome::Success)
        }
        (Err(e), _) => Err(usage(e.to_string())),
        (_, Err(e)) => Err(usage(format!("releasing leases: {e}"))),
    }
}

/// The secrets of `tcc serve` and where each came from.
struct ServeSecrets {
    /// The database URL or SQLite path.
    database: (String, tcc_host::secrets::Source),
    /// The bearer token, if any.
    token: Option<(String, tcc_host::secrets::Source)>,
}

impl ServeSecrets {
    /// `--database`, `--database-file`, `$IRKIT_TCC_DATABASE` (else the
    /// default file); `--token`, `--token-file`, `$IRKIT_TCC_TOKEN`.
    fn resolve(a: &ServeArgs) -> Result<ServeSecrets, CliError> {
        use tcc_host::secrets::{Source, read_secret_file};
        let database = match (&a.database, &a.database_file) {
            (Some(d), _) => (d.clone(), Source::Argument),
            (None, Some(f)) => (
                read_secret_file(f).map_err(|e| usage(format!("--database-file {e}")))?,
                Source::File,
            ),
            (None, None) => match std::env::var("IRKIT_TCC_DATABASE") {
                Ok(d) if !d.is_empty() => (d, Source::Environment),
                _ => (DEFAULT_DATABASE.to_string(), Source::Argument),
            },
        };
        let token = match (&a.token, &a.token_file) {
            (Some(t), _) => Some((t.clone(), Source::Argument)),
            (None, Some(f)) => Some((
                read_secret_file(f).map_err(|e| usage(format!("--token-file {e}")))?,
                Source::File,
            )),
            (None, None) => std::env::var("IRKIT_TCC_TOKEN")
                .ok()
                .filter(|t| !t.is_empty())
                .map(|t| (t, Source::Environment)),
        };
        Ok(ServeSecrets { database, token })
    }

    /// Logs a warning about each secret given as an argument.
    fn warn_about_arguments(&self) {
        use tcc_host::secrets::{Source, url_has_password};
        let mut warnings = Vec::new();
        if matches!(self.token, Some((_, Source::Argument))) {
            warnings.push("--token is visible to every local user (/proc/PID/cmdline); use --token-file or $IRKIT_TCC_TOKEN");
        }
        if self.database.1 == Source::Argument && url_has_password(&self.database.0) {
            warnings.push("the --database URL holds a password visible to every local user (/proc/PID/cmdline); use --database-file or $IRKIT_TCC_DATABASE");
        }
        for w in warnings {
            tracing::warn!("{w}");
        }
    }
}

pub(crate) struct Client {
    base: String,
    token: Option<String>,
    ca_file: Option<std::path::PathBuf>,
    /// Sent as the `traceparent` header (`tcc start --traceparent`).
    traceparent: Option<String>,
    /// Sent as the `TCC-Namespace` header (`--namespace`).
    namespace: Option<String>,
}

impl Client {
    pub(crate) fn new(a: &ClientArgs) -> Client {
        let base = a
            .server
            .clone()
            .or_else(|| std::env::var("IRKIT_TCC_SERVER").ok())
            .unwrap_or_else(|| DEFAULT_SERVER.to_string());
        Client {
            base: base.trim_end_matches('/').to_string(),
            token: a
                .token
                .clone()
                .or_else(|| std::env::var("IRKIT_TCC_TOKEN").ok()),
            ca_file: a
                .ca_file
                .clone()
                .or_else(|| std::env::var_os("IRKIT_TCC_CA_FILE").map(Into::into)),
            traceparent: None,
            namespace: a
                .namespace
                .clone()
                .or_else(|| std::env::var("IRKIT_TCC_NAMESPACE").ok())
                .filter(|n| !n.is_empty()),
        }
    }

    /// Sends a request; maps transport failures to exit 2, API errors to
    /// exit 1 (4xx) or 2 (5xx).
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<J, CliError> {
        self.call_status(method, path, body).map(|(_, j)| j)
    }

    /// [`Client::call`], with the (2xx) status of the answer.
    fn call_status(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(u16, J), CliError> {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        if let Some(tp) = &self.traceparent {
            headers.push(("traceparent", tp.as_str()));
        }
        if let Some(ns) = &self.namespace {
            headers.push(("TCC-Namespace", ns.as_str()));
        }
        let url = format!("{}{}", self.base, path);
        let tls = match &self.ca_file {
            Some(p) => Some(
                tcc_host::http::tls_with_ca_file(p)
                    .map_err(|e| usage(format!("--ca-file {}: {e}", p.display())))?,
            ),
            None => None,
        };
        let r = tcc_host::http::request_with(
            method,
            &url,
            &headers,
            body,
            Duration::from_secs(60),
            tls.as_ref(),
        )
        .map_err(|e| usage(e.message))?;
        let j: J = serde_json::from_slice(&r.body).map_err(|e| {
            usage(format!(
                "server answered HTTP {} with non-JSON: {e}",
                r.status
            ))
        })?;
        if (200..300).contains(&r.status) {
            return Ok((r.status, j));
        }
        let name = j["error"]["code"].as_str().unwrap_or("error");
        let message = j["error"]["message"].as_str().unwrap_or("");
        let text = format!("{name}: {message} (HTTP {})", r.status);
        if r.status >= 500 {
            return Err(usage(text));
        }
        // The server's `TCC-H2xx` code, as a coded diagnostic about the route.
        Err(match j["code"].as_str() {
            Some(code) => {
                let kind = if r.status == 404 { "name" } else { "semantic" };
                CliError::invalid(
                    vec![crate::diag::Diagnostic::new(kind, Some(code), text, path)],
                    None,
                )
            }
            None => CliError::Rejected(text),
        })
    }
}

pub(crate) fn print_json(j: &J) {
    println!("{}", tcc_ir::to_canonical(j));
}

/// `irkit tcc register`.
pub fn register(a: RegisterArgs) -> Result<Outcome, CliError> {
    let (_, input) = crate::tcc_compile_cmd::read_program_input(&a.input.file)?;
    let bytes = match input {
        crate::tcc_compile_cmd::ProgramInput::Bytes(bytes) => bytes,
        crate::tcc_compile_cmd::ProgramInput::Compiled { artifact, .. } if a.no_source => {
            tcc_ir::encode_artifact(&artifact)
        }
        // The source goes beside the artifact, under the file name its
        // spans give (issue 35: the dashboard shows its lines).
        crate::tcc_compile_cmd::ProgramInput::Compiled { artifact, source } => {
            let file = artifact
                .program
                .functions
                .iter()
                .flat_map(|f| f.spans.iter().flatten())
                .map(|s| s.file.to_string())
                .next()
                .or_else(|| {
                    a.input
                        .file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_default();
            let mut body = b"{\"artifact\":".to_vec();
            body.extend_from_slice(&tcc_ir::encode_artifact(&artifact));
            body.extend_from_slice(b",\"source\":");
            body.extend_from_slice(json!({"file": file, "text": source}).to_string().as_bytes());
            body.push(b'}');
            body
        }
    };
    let name = a.name.clone().or_else(|| {
        a.input
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    });
    let path = match &name {
        Some(n) => format!("/v1/artifacts?name={}", percent_encode(n)),
        None => "/v1/artifacts".into(),
    };
    let j = Client::new(&a.client).call("POST", &path, Some(&bytes))?;
    println!("{}", j["hash"].as_str().unwrap_or(""));
    Ok(Outcome::Success)
}

fn parse_plain_args(text: Option<&str>, tagged: bool) -> Result<Vec<J>, CliError> {
    match text {
        None => Ok(Vec::new()),
        Some(t) => crate::tcc_values::read_args(t, tagged).map_err(usage),
    }
}

fn status_line(j: &J) -> String {
    let mut s = format!(
        "{} {}",
        j["id"].as_str().unwrap_or("?"),
        j["status"].as_str().unwrap_or("?")
    );
    if let Some(r) = j.get("result") {
        s.push_str(&format!(" result={}", tcc_ir::to_canonical(r)));
    }
    if let Some(m) = j.get("message").and_then(J::as_str) {
        s.push_str(&format!(" message={m:?}"));
    }
    if let Some(e) = j.get("error").and_then(J::as_str) {
        s.push_str(&format!(" error={e:?}"));
    }
    if let Some(p) = j.get("pending").filter(|p| !p.is_null()) {
        s.push_str(&format!(" pending={}", tcc_ir::to_canonical(p)));
    }
    // A durable retry the execution waits for (issue 33).
    if let Some(r) = j.get("retry").filter(|r| r.is_object()) {
        s.push_str(&format!(" retry={}", tcc_ir::to_canonical(r)));
    }
    s
}

/// `irkit tcc start`.
pub fn start(a: StartArgs) -> Result<Outcome, CliError> {
    let args = parse_plain_args(a.args.as_deref(), a.tagged)?;
    let traceparent = match &a.traceparent {
        Some(t) => match tcc_host::otel::TraceParent::parse(t) {
            Ok(tp) => Some(tp),
            Err(e) => return Err(usage(format!("--traceparent: {e}"))),
        },
        None => None,
    };
    if a.local {
        return start_local(a, args, traceparent);
    }
    if !a.events.is_empty() {
        return Err(usage(
            "--event is only for --local; use `irkit tcc send` against a server",
        ));
    }
    let body = json!({"program": a.program, "tagged_args": args, "id": a.id});
    let mut client = Client::new(&a.client);
    client.traceparent = traceparent.map(|t| t.to_string());
    if a.wait {
        let path = format!("/v1/executions?wait={}s", LONG_POLL.as_secs());
        let (ended, j) = client.call_status("POST", &path, Some(body.to_string().as_bytes()))?;
        let id = j["id"].as_str().unwrap_or("").to_string();
        let j = if ended == 200 {
            j
        } else {
            await_end(&client, &id, None)?
        };
        return Ok(show_result(&j, a.fmt.format));
    }
    let j = client.call("POST", "/v1/executions", Some(body.to_string().as_bytes()))?;
    let id = j["id"].as_str().unwrap_or("").to_string();
    match a.fmt.format {
        Format::Human => println!("{id}"),
        Format::Json => print_json(&json!({"id": id})),
    }
    Ok(Outcome::Success)
}

fn start_local(
    a: StartArgs,
    args: Vec<J>,
    traceparent: Option<tcc_host::otel::TraceParent>,
) -> Result<Outcome, CliError> {
    let store = match open_store(&a.database) {
        Ok(s) => s,
        Err(e) => {
            return Err(usage(format!(
                "--database {}: {e}",
                tcc_host::redact_database(&a.database)
            )));
        }
    };
    if let Err(e) = store.reset_leases() {
        return Err(usage(e.to_string()));
    }
    let providers = load_providers(a.providers.as_deref(), store.clone(), None)?;
    let host = Host::new(store.clone(), providers, HostConfig::default());
    let path = Path::new(&a.program);
    let program = if path.is_file() {
        let (_, input) = crate::tcc_compile_cmd::read_program_input(path)?;
        let (bytes, source) = match input {
            crate::tcc_compile_cmd::ProgramInput::Bytes(bytes) => (bytes, None),
            crate::tcc_compile_cmd::ProgramInput::Compiled { artifact, source } => {
                let file = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                let source = tcc_host::source::ArtifactSource { file, text: source };
                (tcc_ir::encode_artifact(&artifact), Some(source))
            }
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "program".into());
        let hash = match host.register(&bytes, Some(&name)) {
            Ok(h) => h,
            Err(e) => return Err(host_error(&e, &a.program)),
        };
        // The source beside the artifact (issue 35), for a dashboard
        // served later on this database.
        if let Some(s) = source.filter(|s| tcc_host::source::check(s).is_ok())
            && let Err(e) = tcc_host::source::rows::put(&*store, &hash, &s)
        {
            return Err(usage(e.to_string()));
        }
        name
    } else {
        a.program.clone()
    };
    let id = match host.start_traced(&program, args.into(), a.id.clone(), traceparent.as_ref()) {
        Ok(id) => id,
        Err(e) => return Err(host_error(&e, &a.program)),
    };
    for ev in &a.events {
        let Some((name, payload)) = ev.split_once('=') else {
            return Err(usage("--event takes NAME=JSON"));
        };
        let payload = match serde_json::from_str::<J>(payload)
            .map_err(|e| e.to_string())
            .and_then(|p| crate::tcc_values::read_value(&p, a.tagged, "--event"))
        {
            Ok(p) => p,
            Err(e) => return Err(usage(format!("--event {name}: {e}"))),
        };
        if let Err(e) = store.send_event(&id, name, &payload) {
            return Err(usage(e.to_string()));
        }
    }
    let threads = host.spawn();
    let row = host.wait_for(&id, Duration::from_millis(a.timeout_ms), true);
    host.shutdown();
    for t in threads {
        let _ = t.join();
    }
    let row = match row {
        Ok(r) => r,
        Err(e) => return Err(host_error(&e, &a.program)),
    };
    let j = crate::tcc_values::show_status(&status_json(&row), a.tagged);
    match a.fmt.format {
        Format::Human => println!("{}", status_line(&j)),
        Format::Json => print_json(&j),
    }
    match row.status.as_str() {
        "completed" => Ok(Outcome::Success),
        "failed" | "cancelled" => Ok(Outcome::Failure),
        _ if row.error.is_some() => Ok(Outcome::Failure),
        _ => Ok(Outcome::Success),
    }
}

/// `irkit tcc status`.
pub fn status(a: StatusArgs) -> Result<Outcome, CliError> {
    let j = Client::new(&a.client).call(
        "GET",
        &format!("/v1/executions/{}", percent_encode(&a.id)),
        None,
    )?;
    let j = crate::tcc_values::show_status(&j, a.tagged);
    match a.fmt.format {
        Format::Human => println!("{}", status_line(&j)),
        Format::Json => print_json(&j),
    }
    Ok(Outcome::Success)
}

/// The wait of one long poll of the CLI (below the service's default
/// request timeout, 30 s).
const LONG_POLL: Duration = Duration::from_secs(25);

/// Long-polls `GET /v1/executions/{id}/result` until the execution ends,
/// or `limit` has passed; the last status JSON.
fn await_end(client: &Client, id: &str, limit: Option<Duration>) -> Result<J, CliError> {
    let started = std::time::Instant::now();
    loop {
        let left = limit.map(|l| l.saturating_sub(started.elapsed()));
        let wait = left.map_or(LONG_POLL, |l| l.min(LONG_POLL));
        let path = format!(
            "/v1/executions/{}/result?wait={}ms",
            percent_encode(id),
            wait.as_millis()
        );
        let (status, j) = client.call_status("GET", &path, None)?;
        if status == 200 || left.is_some_and(|l| l <= wait) {
            return Ok(j);
        }
    }
}

/// Prints a status JSON; exit 1 when the execution failed or was
/// cancelled, 0 otherwise (completed, or not ended yet).
fn show_result(j: &J, format: Format) -> Outcome {
    match format {
        Format::Human => println!("{}", status_line(j)),
        Format::Json => print_json(j),
    }
    match j["status"].as_str() {
        Some("failed" | "cancelled") => Outcome::Failure,
        _ => Outcome::Success,
    }
}

/// `irkit tcc result`.
pub fn result(a: ResultArgs) -> Result<Outcome, CliError> {
    let limit = match a.wait.as_deref() {
        None => Duration::ZERO,
        Some(w) => {
            tcc_host::await_result::parse_wait(w).map_err(|e| usage(format!("--wait: {e}")))?
        }
    };
    let j = await_end(&Client::new(&a.client), &a.id, Some(limit))?;
    Ok(show_result(&j, a.fmt.format))
}

/// `irkit tcc send`.
pub fn send(a: SendArgs) -> Result<Outcome, CliError> {
    let payload = match a.payload.as_deref().map(serde_json::from_str::<J>) {
        None => J::Null,
        Some(Ok(p)) => p,
        Some(Err(e)) => return Err(usage(format!("--payload: not JSON: {e}"))),
    };
    let payload = crate::tcc_values::read_value(&payload, false, "--payload").map_err(usage)?;
    let body = json!({"name": a.event, "tagged_payload": payload});
    Client::new(&a.client).call(
        "POST",
        &format!("/v1/executions/{}/events", percent_encode(&a.id)),
        Some(body.to_string().as_bytes()),
    )?;
    Ok(Outcome::Success)
}

/// `irkit tcc cancel`.
pub fn cancel(a: CancelArgs) -> Result<Outcome, CliError> {
    Client::new(&a.client).call(
        "POST",
        &format!("/v1/executions/{}/cancel", percent_encode(&a.id)),
        None,
    )?;
    Ok(Outcome::Success)
}

/// `irkit tcc terminate`.
pub fn terminate(a: CancelArgs) -> Result<Outcome, CliError> {
    Client::new(&a.client).call(
        "POST",
        &format!("/v1/executions/{}/terminate", percent_encode(&a.id)),
        None,
    )?;
    Ok(Outcome::Success)
}

/// `irkit tcc resume`: against a server, `POST /v1/executions/ID/resume`
/// (prints `ID resumed effect=KEY revision=N`); with `--local`, the same
/// on the embedded store, then the execution is driven to its end and its
/// status printed like `irkit tcc start --local`. A refusal is the
/// server's `TCC-H212` (`not_resumable`), exit 1.
pub fn resume(a: ResumeArgs) -> Result<Outcome, CliError> {
    let client = Client::new(&a.client);
    // `--program NAME` is dispatched to `tcc_pause_cmd` before this.
    let Some(id) = a.id.clone() else {
        return Err(usage("give an execution id or --program NAME"));
    };
    if a.local {
        return resume_local(a, &id);
    }
    let j = client.call(
        "POST",
        &format!("/v1/executions/{}/resume", percent_encode(&id)),
        None,
    )?;
    match a.fmt.format {
        Format::Human if j["effect"].is_null() => println!("{id} unpaused"),
        Format::Human => println!(
            "{} resumed effect={} revision={}",
            id,
            j["effect"].as_str().unwrap_or("?"),
            j["revision"]
        ),
        Format::Json => print_json(&j),
    }
    Ok(Outcome::Success)
}

fn resume_local(a: ResumeArgs, id: &str) -> Result<Outcome, CliError> {
    let store = open_store(&a.database).map_err(|e| {
        usage(format!(
            "--database {}: {e}",
            tcc_host::redact_database(&a.database)
        ))
    })?;
    store.reset_leases().map_err(|e| usage(e.to_string()))?;
    let providers = load_providers(a.providers.as_deref(), store.clone(), None)?;
    let host = Host::new(store.clone(), providers, HostConfig::default());
    let refused = |message: String| {
        CliError::invalid(
            vec![crate::diag::Diagnostic::new(
                "semantic",
                Some("TCC-H212"),
                format!("not_resumable: {message}"),
                id,
            )],
            None,
        )
    };
    // A paused execution: its pause is lifted (and a failed one resumed).
    let unpaused = tcc_host::pause::state(&*store, id)
        .map_err(|e| host_error(&HostError::Store(e), id))?
        .execution
        && tcc_host::pause::set_execution(&host, id, false)
            .map_err(|e| host_error(&HostError::Store(e), id))?;
    let failed = store
        .get_execution(id)
        .map_err(|e| host_error(&HostError::Store(e), id))?
        .is_some_and(|r| r.status == "failed");
    match if unpaused && !failed {
        Ok(tcc_host::store::ResumeOutcome::Resumed {
            key: String::new(),
            revision: 0,
        })
    } else {
        host.resume(id)
    } {
        Ok(tcc_host::store::ResumeOutcome::Resumed { .. }) => {}
        Ok(tcc_host::store::ResumeOutcome::NotFailed(status)) => {
            return Err(refused(format!(
                "execution {:?} is {status}: only a failed or paused execution can be resumed",
                id
            )));
        }
        Ok(tcc_host::store::ResumeOutcome::NotResumable(why)) => {
            return Err(refused(format!(
                "execution {:?} cannot be resumed: {why}",
                id
            )));
        }
        Err(HostError::Store(tcc_host::StoreError::NotFound(m))) => {
            return Err(CliError::invalid(
                vec![crate::diag::Diagnostic::new(
                    "name",
                    Some("TCC-H202"),
                    format!("not_found: {m}"),
                    id,
                )],
                None,
            ));
        }
        Err(e) => return Err(host_error(&e, id)),
    }
    let threads = host.spawn();
    let row = host.wait_for(id, Duration::from_millis(a.timeout_ms), true);
    host.shutdown();
    for t in threads {
        let _ = t.join();
    }
    let row = row.map_err(|e| host_error(&e, id))?;
    let j = crate::tcc_values::show_status(&status_json(&row), a.tagged);
    match a.fmt.format {
        Format::Human => println!("{}", status_line(&j)),
        Format::Json => print_json(&j),
    }
    match row.status.as_str() {
        "completed" => Ok(Outcome::Success),
        "failed" | "cancelled" => Ok(Outcome::Failure),
        _ if row.error.is_some() => Ok(Outcome::Failure),
        _ => Ok(Outcome::Success),
    }
}

/// `irkit tcc ls`.
pub fn ls(a: LsArgs) -> Result<Outcome, CliError> {
    let mut q = vec![format!("limit={}", a.limit)];
    if let Some(s) = &a.status {
        q.push(format!("status={}", percent_encode(s)));
    }
    if let Some(p) = &a.program {
        q.push(format!("program={}", percent_encode(p)));
    }
    if a.artifact_missing {
        q.push("artifact_missing=true".into());
    }
    if let Some(after) = a.after {
        q.push(format!("after={after}"));
    }
    let mut j =
        Client::new(&a.client).call("GET", &format!("/v1/executions?{}", q.join("&")), None)?;
    if let Some(J::Array(rows)) = j.get_mut("executions") {
        for row in rows.iter_mut() {
            *row = crate::tcc_values::show_status(row, a.tagged);
        }
    }
    match a.fmt.format {
        Format::Json => print_json(&j),
        Format::Human => {
            for e in j["executions"].as_array().into_iter().flatten() {
                println!("{}", status_line(e));
            }
            if let Some(n) = j["next_after"].as_i64() {
                println!("(more: --after {n})");
            }
        }
    }
    Ok(Outcome::Success)
}
