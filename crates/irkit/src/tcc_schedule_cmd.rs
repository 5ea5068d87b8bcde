//! `irkit tcc schedule create|ls|pause|resume|delete`: schedules on a
//! server (`/v1/schedules`, `tcc_host::schedule`). What the server would
//! refuse as a bad request (name, cron expression, interval, policies,
//! arguments) is checked here first: a coded diagnostic, exit 1.

use crate::args::FormatArgs;
use crate::diag::{Diagnostic, Format};
use crate::error::{CliError, Outcome};
use crate::tcc_host_cmd::{Client, ClientArgs, print_json};
use serde_json::{Value as J, json};
use tcc_host::schedule::{Catchup, Overlap, Spec, check_name, parse_duration_ms};
use tcc_host::service::percent_encode;

/// Verbs of `irkit tcc schedule`.
#[derive(clap::Subcommand)]
pub enum ScheduleVerb {
    /// Create a schedule that starts PROGRAM at each tick.
    Create(CreateArgs),
    /// List schedules.
    Ls(LsArgs),
    /// Pause a schedule: no tick starts until it is resumed.
    Pause(NameArgs),
    /// Resume a schedule from the first tick after now (ticks that came
    /// due while paused are not started).
    Resume(NameArgs),
    /// Delete a schedule (the executions it started stay).
    Delete(NameArgs),
}

/// `irkit tcc schedule create`.
#[derive(clap::Args)]
pub struct CreateArgs {
    /// Schedule name (1 to 100 characters from A-Z a-z 0-9 . _ -).
    name: String,
    /// Program name or artifact hash each tick starts.
    program: String,
    /// Cron expression, in UTC: 5 fields (minute hour day month weekday)
    /// or 6 with seconds first.
    #[arg(long, conflicts_with = "every", required_unless_present = "every")]
    cron: Option<String>,
    /// Fixed interval (e.g. 30s, 5m, 1h; at least 1s); ticks fall on the
    /// multiples of the interval since the Unix epoch.
    #[arg(long)]
    every: Option<String>,
    /// Entry arguments: a JSON array of plain JSON values.
    #[arg(long)]
    args: Option<String>,
    /// A tick due while the last started execution still runs:
    /// skip, buffer_one or allow.
    #[arg(long, default_value = "skip")]
    overlap: String,
    /// Ticks missed (handled later than the catch-up window): skip, latest
    /// (start the newest) or all (start each, up to 100).
    #[arg(long, default_value = "latest")]
    catchup: String,
    /// A tick handled later than this after its due time is missed (1s to 1h).
    #[arg(long, default_value = "60s")]
    catchup_window: String,
    /// Create it paused.
    #[arg(long)]
    paused: bool,
    // The schedule's name (human) or its JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc schedule ls`.
#[derive(clap::Args)]
pub struct LsArgs {
    // A table (human) or the JSON list.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc schedule pause|resume|delete`.
#[derive(clap::Args)]
pub struct NameArgs {
    /// Schedule name.
    name: String,
    #[command(flatten)]
    client: ClientArgs,
}

impl ScheduleVerb {
    /// The verb's `--format`.
    pub fn format(&self) -> Format {
        match self {
            ScheduleVerb::Create(a) => a.fmt.format,
            ScheduleVerb::Ls(a) => a.fmt.format,
            ScheduleVerb::Pause(_) | ScheduleVerb::Resume(_) | ScheduleVerb::Delete(_) => {
                Format::Human
            }
        }
    }
}

/// A request the server would refuse as `bad_request` (`TCC-H200`), about `label`.
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

/// Runs one `irkit tcc schedule` verb.
pub fn run(verb: ScheduleVerb) -> Result<Outcome, CliError> {
    match verb {
        ScheduleVerb::Create(a) => create(a),
        ScheduleVerb::Ls(a) => ls(a),
        ScheduleVerb::Pause(a) => post(&a, "pause"),
        ScheduleVerb::Resume(a) => post(&a, "resume"),
        ScheduleVerb::Delete(a) => {
            Client::new(&a.client).call(
                "DELETE",
                &format!("/v1/schedules/{}", percent_encode(&a.name)),
                None,
            )?;
            Ok(Outcome::Success)
        }
    }
}

fn create(a: CreateArgs) -> Result<Outcome, CliError> {
    check_name(&a.name).map_err(|e| bad(e.to_string(), "NAME"))?;
    let (key, text) = match (&a.cron, &a.every) {
        (Some(c), None) => ("cron", c),
        (None, Some(e)) => ("every", e),
        _ => return Err(crate::tcc_host_cmd::usage("give --cron or --every")),
    };
    Spec::parse(key, text).map_err(|e| bad(e.to_string(), &format!("--{key}")))?;
    Overlap::parse(&a.overlap).map_err(|e| bad(e.to_string(), "--overlap"))?;
    Catchup::parse(&a.catchup).map_err(|e| bad(e.to_string(), "--catchup"))?;
    let window = parse_duration_ms(&a.catchup_window)
        .map_err(|m| bad(format!("--catchup-window: {m}"), "--catchup-window"))?;
    let args = match a.args.as_deref() {
        None => J::Array(Vec::new()),
        Some(text) => match serde_json::from_str::<J>(text) {
            Ok(J::Array(items)) => J::Array(items),
            Ok(_) => return Err(bad("--args must be a JSON array", "--args")),
            Err(e) => return Err(bad(format!("--args is not JSON: {e}"), "--args")),
        },
    };
    let mut body = json!({
        "name": a.name,
        "program": a.program,
        "args": args,
        "overlap": a.overlap,
        "catchup": a.catchup,
        "catchup_window": window,
        "paused": a.paused,
    });
    body[key] = json!(text);
    let j =
        Client::new(&a.client).call("POST", "/v1/schedules", Some(body.to_string().as_bytes()))?;
    match a.fmt.format {
        Format::Json => print_json(&j),
        Format::Human => println!("{}", j["name"].as_str().unwrap_or_default()),
    }
    Ok(Outcome::Success)
}

fn ls(a: LsArgs) -> Result<Outcome, CliError> {
    let j = Client::new(&a.client).call("GET", "/v1/schedules", None)?;
    match a.fmt.format {
        Format::Json => print_json(&j),
        Format::Human => {
            for s in j["schedules"].as_array().into_iter().flatten() {
                let when = s
                    .get("cron")
                    .map(|c| format!("cron {}", c.as_str().unwrap_or_default()))
                    .or_else(|| {
                        s.get("every")
                            .map(|e| format!("every {}", e.as_str().unwrap_or_default()))
                    })
                    .unwrap_or_default();
                println!(
                    "{}\t{}\t{}\t{}\tstarted {}\tskipped {}",
                    s["name"].as_str().unwrap_or_default(),
                    s["program"].as_str().unwrap_or_default(),
                    when,
                    if s["paused"].as_bool() == Some(true) {
                        "paused"
                    } else {
                        "active"
                    },
                    s["ticks_started"],
                    s["ticks_skipped"],
                );
            }
        }
    }
    Ok(Outcome::Success)
}

fn post(a: &NameArgs, action: &str) -> Result<Outcome, CliError> {
    Client::new(&a.client).call(
        "POST",
        &format!("/v1/schedules/{}/{action}", percent_encode(&a.name)),
        None,
    )?;
    Ok(Outcome::Success)
}
