//! `irkit tcc limit set|ls|delete`: flow limits on a server
//! (`/v1/limits`, `tcc_host::flow`). A scope or setting the server would
//! refuse is checked here first: a coded diagnostic, exit 1. With
//! `--namespace NS` (or `$IRKIT_TCC_NAMESPACE`) a verb acts on that
//! namespace's limits, which hold only its executions; without, a token
//! of every namespace acts on the global limits (and `ls` lists all).

use crate::args::FormatArgs;
use crate::diag::{Diagnostic, Format};
use crate::error::{CliError, Outcome};
use crate::tcc_host_cmd::{Client, ClientArgs, print_json};
use serde_json::json;
use tcc_host::flow::{Scope, Settings, parse_rate};
use tcc_host::service::percent_encode;

/// Verbs of `irkit tcc limit`.
#[derive(clap::Subcommand)]
pub enum LimitVerb {
    /// Create or replace a limit: at most N drives (program) or provider
    /// calls (route) at once across all nodes, and/or a token bucket rate;
    /// with --namespace, of that namespace's executions only.
    Set(SetArgs),
    /// List limits with their slots in use and executions waiting.
    Ls(LsArgs),
    /// Delete a limit (the executions waiting on it go on at once).
    Delete(ScopeArgs),
}

/// `irkit tcc limit set`.
#[derive(clap::Args)]
pub struct SetArgs {
    /// `program:NAME` (drives of that program's executions, by name or
    /// artifact hash) or `route:PATTERN` (provider calls of effects whose
    /// key matches the wildcard pattern).
    scope: String,
    /// Most at once, across all nodes.
    #[arg(long)]
    max_concurrent: Option<i64>,
    /// Token bucket refill: N (per second), N/s or N/m.
    #[arg(long)]
    rate: Option<String>,
    /// Token bucket size (default: the rate per second, rounded up).
    #[arg(long)]
    burst: Option<i64>,
    // The limit's scope (human) or its JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc limit ls`.
#[derive(clap::Args)]
pub struct LsArgs {
    // A table (human) or the JSON list.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc limit delete`.
#[derive(clap::Args)]
pub struct ScopeArgs {
    /// The limit's scope (`program:NAME` or `route:PATTERN`).
    scope: String,
    #[command(flatten)]
    client: ClientArgs,
}

impl LimitVerb {
    /// The verb's `--format`.
    pub fn format(&self) -> Format {
        match self {
            LimitVerb::Set(a) => a.fmt.format,
            LimitVerb::Ls(a) => a.fmt.format,
            LimitVerb::Delete(_) => Format::Human,
        }
    }
}

/// A request the server would refuse as `bad_request` (`TCC-H200`).
fn bad(message: impl Into<String>, label: &str) -> CliError {
    CliError::invalid(
        vec![Diagnostic::new(
            "semantic",
            Some("TCC-H200"),
            message.into(),
            label,
        )],
        None,
    )
}

/// Runs one `irkit tcc limit` verb.
pub fn run(verb: LimitVerb) -> Result<Outcome, CliError> {
    match verb {
        LimitVerb::Set(a) => set(a),
        LimitVerb::Ls(a) => ls(a),
        LimitVerb::Delete(a) => {
            Scope::parse(&a.scope).map_err(|e| bad(e.to_string(), "SCOPE"))?;
            Client::new(&a.client).call(
                "DELETE",
                &format!("/v1/limits/{}", percent_encode(&a.scope)),
                None,
            )?;
            Ok(Outcome::Success)
        }
    }
}

fn set(a: SetArgs) -> Result<Outcome, CliError> {
    Scope::parse(&a.scope).map_err(|e| bad(e.to_string(), "SCOPE"))?;
    let rate = match a.rate.as_deref() {
        Some(r) => Some(parse_rate(r).map_err(|e| bad(e.to_string(), "--rate"))?),
        None => None,
    };
    let settings = Settings {
        max_concurrent: a.max_concurrent,
        rate_per_s: rate,
        burst: a.burst,
    }
    .checked()
    .map_err(|e| bad(e.to_string(), "--max-concurrent/--rate/--burst"))?;
    let body = json!({
        "max_concurrent": settings.max_concurrent,
        "rate": settings.rate_per_s,
        "burst": settings.burst,
    });
    let j = Client::new(&a.client).call(
        "PUT",
        &format!("/v1/limits/{}", percent_encode(&a.scope)),
        Some(body.to_string().as_bytes()),
    )?;
    match a.fmt.format {
        Format::Json => print_json(&j),
        Format::Human => println!("{}", key_text(&j)),
    }
    Ok(Outcome::Success)
}

/// A limit's scope as the human output shows it: a namespace's as
/// `NAMESPACE/SCOPE` (the form of `irkit tcc serve --limit`).
fn key_text(limit: &serde_json::Value) -> String {
    let scope = limit["scope"].as_str().unwrap_or_default();
    match limit["namespace"].as_str() {
        Some(ns) => format!("{ns}/{scope}"),
        None => scope.to_string(),
    }
}

fn ls(a: LsArgs) -> Result<Outcome, CliError> {
    let j = Client::new(&a.client).call("GET", "/v1/limits", None)?;
    match a.fmt.format {
        Format::Json => print_json(&j),
        Format::Human => {
            for l in j["limits"].as_array().into_iter().flatten() {
                let max = l["max_concurrent"]
                    .as_i64()
                    .map_or("-".to_string(), |m| m.to_string());
                let rate = match (l["rate"].as_f64(), l["burst"].as_i64()) {
                    (Some(r), Some(b)) => format!("{r}/s burst {b}"),
                    _ => "-".to_string(),
                };
                println!(
                    "{}\tmax {}\trate {}\tin use {}\twaiting {}",
                    key_text(l),
                    max,
                    rate,
                    l["in_use"],
                    l["waiting"],
                );
            }
        }
    }
    Ok(Outcome::Success)
}
