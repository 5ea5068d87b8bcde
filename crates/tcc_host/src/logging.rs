//! Structured logs (`tracing`): text or JSON lines on stderr, filtered by
//! `RUST_LOG` (default `info`).
//!
//! No secret reaches a log line: this crate never logs a bearer token, a
//! request header or a database URL other than through
//! [`crate::store::factory::redact_database`]; and the HTTP, TLS and database client
//! crates, whose debug and trace output can show headers or connection
//! parameters, are held at `info` whatever `RUST_LOG` says.

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields`, `target`,
    /// `span`, `spans`).
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!(
                "unknown log format {other:?} (expected text or json)"
            )),
        }
    }
}

/// Crates whose output below `info` may carry headers, TLS or connection
/// details.
const HELD_AT_INFO: &[&str] = &[
    "h2",
    "hyper",
    "hyper_util",
    "axum",
    "tower",
    "rustls",
    "ureq",
    "ureq_proto",
    "postgres",
    "tokio_postgres",
    "tokio_postgres_rustls",
];

/// Installs the process's log subscriber (stderr). A `RUST_LOG` that does
/// not parse is an error; a second call is an error.
pub fn init(format: LogFormat) -> Result<(), String> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => {
            EnvFilter::try_new(&v).map_err(|e| format!("RUST_LOG={v:?}: {e}"))?
        }
        _ => EnvFilter::new("info"),
    };
    let mut held = Targets::new().with_default(LevelFilter::TRACE);
    for t in HELD_AT_INFO {
        held = held.with_target(*t, LevelFilter::INFO);
    }
    let registry = tracing_subscriber::registry().with(held).with(filter);
    let result = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(false),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(std::io::stderr)
                    .with_current_span(true)
                    .with_span_list(true),
            )
            .try_init(),
    };
    result.map_err(|e| format!("cannot install the log subscriber: {e}"))
}
