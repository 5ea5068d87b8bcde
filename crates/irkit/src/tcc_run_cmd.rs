//! `irkit tcc run` and `irkit tcc step`: execute TCC artifacts with the
//! engine (`tcc_engine`) and a simple local host.

use crate::args::{FormatArgs, InputArgs};
use crate::diag::{Diagnostic, Format, emit};
use crate::error::{CliError, Diagnose, Origin};
use crate::io::{read, write};
use crate::tcc_compile_cmd::ProgramInput;
use serde_json::Value as J;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tcc_engine::local_host::{EffectAnswer, HostError, LocalHost};
use tcc_engine::{
    Continuation, EngineError, Execution, HostRequest, HostResponse, Limits, Outcome, Program,
};
use tcc_ir::to_canonical;
use tcc_ir::{FeatureSet, Span};

/// Arguments of `irkit tcc run`.
#[derive(clap::Args)]
pub struct RunArgs {
    // The artifact JSON, or a `.py`/`.ts`/`.rs` source compiled first.
    #[command(flatten)]
    input: InputArgs,
    /// Entry arguments: a JSON array of plain JSON values, e.g. `[5, {"id": "o-1"}]`
    /// (tagged values such as `{"t":"number","v":5}` are accepted too).
    #[arg(long)]
    args: Option<String>,
    /// Effect results: JSON object mapping effect key to a plain JSON value (or a tagged one)
    /// or `{"error": "message"}`.
    #[arg(long)]
    effects: Option<PathBuf>,
    /// Event payloads: JSON object mapping event name to a plain JSON value (or a tagged one).
    #[arg(long)]
    events: Option<PathBuf>,
    /// Values in and out in the engine's tagged form (`{"t":"number","v":5}`), which can say
    /// `undefined`, NaN, ±Infinity and -0.
    #[arg(long)]
    tagged: bool,
    /// Child program for `Invoke`: `NAME=ARTIFACT.json` (repeatable).
    #[arg(long = "child", value_name = "NAME=FILE")]
    children: Vec<String>,
    /// Execution id.
    #[arg(long, default_value = "run")]
    execution_id: String,
    /// Give up after this many instructions in total.
    #[arg(long, default_value_t = 100_000_000)]
    max_steps: u64,
    /// Restore from the stored continuation after every checkpoint.
    #[arg(long)]
    restore: bool,
    // Human lines, or one host-protocol JSON message per line.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
}

/// Arguments of `irkit tcc step`.
#[derive(clap::Args)]
pub struct StepArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Continuation JSON to resume from (default: a fresh start).
    continuation: Option<PathBuf>,
    /// Host responses to feed, in order (a JSON array of response messages);
    /// checkpoints, `persist_effect` and registrations are acknowledged automatically.
    #[arg(long)]
    responses: Option<PathBuf>,
    /// Entry arguments for a fresh start (JSON array of plain JSON values; tagged values are
    /// accepted too).
    #[arg(long)]
    args: Option<String>,
    /// Read `--args` as tagged values only.
    #[arg(long)]
    tagged: bool,
    /// Execution id for a fresh start.
    #[arg(long, default_value = "step")]
    execution_id: String,
    /// Most instructions to run.
    #[arg(long, default_value_t = 10_000_000)]
    budget: u64,
    /// Where to write the continuation (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    // The messages go to standard error in this format.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
}

/// An engine error about input `label`, without a source position.
fn engine_error(label: &str, e: &tcc_engine::EngineError) -> CliError {
    CliError::diagnosed(e, &Origin::binary(label))
}

/// A prepared program, and the source it was compiled from when the input
/// was a source file (runtime errors then show `file:line:col` and the line).
struct Loaded {
    label: String,
    program: Arc<Program>,
    source: Option<String>,
}

/// Reads, decodes (or compiles), validates and prepares a program.
fn load_program(file: &Path) -> Result<Loaded, CliError> {
    let (label, input) = crate::tcc_compile_cmd::read_program_input(file)?;
    let (artifact, source) = match input {
        ProgramInput::Bytes(bytes) => (
            tcc_ir::decode_artifact(&bytes).map_err(|e| {
                let text = std::str::from_utf8(&bytes).ok();
                CliError::diagnosed(&e, &Origin::text(&label, text))
            })?,
            None,
        ),
        ProgramInput::Compiled { artifact, source } => (*artifact, Some(source)),
    };
    let program = Program::new(artifact, &FeatureSet::all_host_capabilities())
        .map_err(|e| engine_error(&label, &e))?;
    Ok(Loaded {
        label,
        program: Arc::new(program),
        source,
    })
}

impl Loaded {
    /// The span of instruction `pc` of function `func`, if the artifact has one.
    fn span(&self, func: u32, pc: u32) -> Option<&Span> {
        self.program
            .artifact()
            .function(func)?
            .spans
            .get(pc as usize)?
            .as_ref()
    }

    /// Points `d` at the source of instruction `pc` of function `func`: for
    /// a source compiled here, the source's label, line and column (the
    /// human form shows the line and a caret); for an artifact, the
    /// message names the span's `file:line:col`.
    fn locate(&self, d: &mut Diagnostic, func: u32, pc: u32) {
        let Some(span) = self.span(func, pc) else {
            return;
        };
        let (line, column) = (u64::from(span.start_line), u64::from(span.start_column));
        match &self.source {
            Some(text) => {
                d.line = Some(line);
                d.column = Some(column);
                d.offset = byte_offset(text, line, column);
            }
            None => {
                let _ = write!(d.message, " at {}:{line}:{column}", span.file);
            }
        }
    }

    /// [`engine_error`] with the source position of the error's site.
    fn engine_error(&self, e: &EngineError) -> CliError {
        let mut diagnostics = e.diagnostics(&Origin::binary(&self.label));
        if let EngineError::Fatal { site: Some(s), .. } | EngineError::Limit { site: Some(s), .. } =
            e
        {
            for d in &mut diagnostics {
                self.locate(d, s.func, s.pc);
            }
        }
        CliError::invalid(diagnostics, self.source.as_deref())
    }

    /// After a `failed` outcome with `message` (an uncaught throw, which
    /// the engine leaves at the instruction that threw, in `state`'s top
    /// frame), the human form also says where it was thrown; JSON output
    /// keeps to the protocol messages.
    fn failure_site(&self, state: Option<&Continuation>, message: &str, format: Format) {
        let Some(frame) = state.and_then(|c| c.frames.last()) else {
            return;
        };
        if format != Format::Human || self.span(frame.func_id, frame.pc).is_none() {
            return;
        }
        let mut d = Diagnostic::new(
            "failed",
            None,
            format!("uncaught exception: {message}"),
            &self.label,
        );
        self.locate(&mut d, frame.func_id, frame.pc);
        emit(&[d], format, self.source.as_deref());
    }
}

/// Byte offset of 1-based `line` and code-point `column` in `text` (CR, LF
/// and CRLF end lines, as in the frontends' spans).
fn byte_offset(text: &str, line: u64, column: u64) -> Option<u64> {
    let mut start = 0usize;
    let mut current = 1u64;
    let bytes = text.as_bytes();
    let mut i = 0usize;
    while current < line {
        let b = *bytes.get(i)?;
        i += 1;
        if b == b'\n' || (b == b'\r' && bytes.get(i) != Some(&b'\n')) {
            current += 1;
            start = i;
        }
    }
    let rest = text.get(start..)?;
    let within = rest
        .char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map_or(rest.len(), |(o, _)| o);
    Some((start + within) as u64)
}

fn read_json(path: &Path) -> Result<J, CliError> {
    let (_, bytes) = read(path)?;
    tcc_engine::json::parse_strict(&bytes).map_err(|e| {
        CliError::usage(format!(
            "{}: {}",
            path.display(),
            tcc_engine::json::strict_error_text(&e)
        ))
    })
}

fn parse_args(args: Option<&str>, tagged: bool) -> Result<Vec<J>, CliError> {
    match args {
        None => Ok(Vec::new()),
        Some(text) => crate::tcc_values::read_args(text, tagged).map_err(CliError::usage),
    }
}

/// One human-readable line for a protocol message.
fn human_line(m: &J, tagged: bool) -> String {
    let ty = m.get("type").and_then(J::as_str).unwrap_or("?");
    match ty {
        "host" => {
            let r = &m["request"];
            let rty = r.get("type").and_then(J::as_str).unwrap_or("?");
            let detail = match rty {
                "persist_checkpoint" => format!(
                    "revision {} ({}, base {})",
                    r["revision"],
                    r["kind"].as_str().unwrap_or("?"),
                    r["base_revision"]
                ),
                "run_effect" => format!("{} input {}", r["key"], to_canonical(&r["input"])),
                "persist_effect" => format!(
                    "{} {} {}",
                    r["key"],
                    r["status"].as_str().unwrap_or("?"),
                    to_canonical(&r["result"])
                ),
                "register_timer" => format!("resume_at_ms {}{}", r["resume_at_ms"], branch(r)),
                "register_wait" => {
                    format!("{} wait_id {}{}", r["event_name"], r["wait_id"], branch(r))
                }
                "create_child" => format!(
                    "{} {}{}",
                    r["program_name"],
                    r["child_execution_id"],
                    branch(r)
                ),
                _ => String::new(),
            };
            format!("-> {rty} {detail}")
        }
        "completed" => format!(
            "completed: {}",
            to_canonical(&crate::tcc_values::show(&m["result"], tagged))
        ),
        "failed" => format!("failed: {}", m["message"].as_str().unwrap_or("?")),
        "cancelled" | "suspended" | "budget_exhausted" => ty.to_string(),
        _ => {
            let mut rest = m.clone();
            if let J::Object(o) = &mut rest {
                o.remove("type");
                o.remove("host_protocol_version");
            }
            format!("<- {ty} {}", to_canonical(&rest))
        }
    }
}

fn branch(r: &J) -> String {
    match r.get("branch").and_then(J::as_str) {
        Some(b) => format!(" branch {b}"),
        None => String::new(),
    }
}

/// One protocol message: `--format json` prints the host protocol as it is
/// (tagged values, by the protocol's definition); the human line shows a
/// result as plain JSON unless `tagged`.
fn print_message(m: &J, format: Format, to_stderr: bool, tagged: bool) {
    let line = match format {
        Format::Json => to_canonical(m),
        Format::Human => human_line(m, tagged),
    };
    if to_stderr {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// `irkit tcc run`.
pub fn run(a: RunArgs) -> Result<crate::error::Outcome, CliError> {
    let format = a.fmt.format;
    let loaded = load_program(&a.input.file)?;
    let args = parse_args(a.args.as_deref(), a.tagged)?;
    let mut host = LocalHost::new();
    host.max_total_steps = a.max_steps;
    host.restore_at_checkpoints = a.restore;
    if let Some(p) = &a.effects {
        let J::Object(m) = read_json(p)? else {
            return Err(CliError::usage("--effects must be a JSON object"));
        };
        for (k, v) in m {
            let failure = match &v {
                J::Object(o) if o.len() == 1 => o.get("error").and_then(J::as_str),
                _ => None,
            };
            let answer = match failure {
                Some(msg) => EffectAnswer::Fail(msg.to_string()),
                None => EffectAnswer::Result(
                    crate::tcc_values::read_value(&v, a.tagged, &format!("--effects {k:?}"))
                        .map_err(CliError::usage)?,
                ),
            };
            host.effects.insert(k, answer);
        }
    }
    if let Some(p) = &a.events {
        let J::Object(m) = read_json(p)? else {
            return Err(CliError::usage("--events must be a JSON object"));
        };
        for (name, v) in m {
            let payload =
                crate::tcc_values::read_value(&v, a.tagged, &format!("--events {name:?}"))
                    .map_err(CliError::usage)?;
            host.events.insert(name, payload);
        }
    }
    for c in &a.children {
        let Some((name, file)) = c.split_once('=') else {
            return Err(CliError::usage("--child takes NAME=FILE"));
        };
        let child = load_program(Path::new(file))?;
        host.children.insert(name.to_string(), child.program);
    }
    match host.run(loaded.program.clone(), &a.execution_id, &args) {
        Ok(r) => {
            for m in &r.transcript {
                print_message(m, format, false, a.tagged);
            }
            // A child's failure surfaces at the parent's `Invoke`; sites of
            // a child's own instructions are not the parent's, so with
            // children only the parent's failures are located.
            if r.outcome.get("type").and_then(J::as_str) == Some("failed") {
                let message = r.outcome.get("message").and_then(J::as_str).unwrap_or("?");
                loaded.failure_site(r.stored.as_ref(), message, format);
            }
            Ok(match r.outcome.get("type").and_then(J::as_str) {
                Some("completed") => crate::error::Outcome::Success,
                _ => crate::error::Outcome::Failure,
            })
        }
        Err(HostError::Engine(e)) if a.children.is_empty() => Err(loaded.engine_error(&e)),
        Err(HostError::Engine(e)) => Err(engine_error(&loaded.label, &e)),
        Err(HostError::Host(m)) => {
            let d = Diagnostic::new("host", Some("TCC-H100"), m, &loaded.label);
            Err(CliError::invalid(vec![d], None))
        }
    }
}

/// `irkit tcc step`.
pub fn step(a: StepArgs) -> Result<crate::error::Outcome, CliError> {
    let format = a.fmt.format;
    let loaded = load_program(&a.input.file)?;
    let program = loaded.program.clone();
    let limits = Limits::default();
    let mut responses: VecDeque<HostResponse> = VecDeque::new();
    if let Some(p) = &a.responses {
        let items = match read_json(p)? {
            J::Array(items) => items,
            single => vec![single],
        };
        for item in items {
            let r = HostResponse::from_json(&item)
                .map_err(|e| engine_error(&p.display().to_string(), &e))?;
            responses.push_back(r);
        }
    }
    let started = match &a.continuation {
        None => {
            let args = parse_args(a.args.as_deref(), a.tagged)?;
            Execution::start(program, &a.execution_id, &args, limits.clone())
        }
        Some(p) => {
            let (clabel, bytes) = read(p)?;
            let c = Continuation::decode(&bytes, &limits).map_err(|e| engine_error(&clabel, &e))?;
            Execution::resume(program, c, limits.clone())
        }
    };
    let mut exec = started.map_err(|e| loaded.engine_error(&e))?;
    let mut stored = exec.state().clone();
    let mut budget = a.budget;
    let mut failed = None;
    let result = loop {
        let before = exec.steps();
        let outcome = match exec.run_until_host(budget) {
            Ok(o) => o,
            Err(e) => break Err(e),
        };
        budget = budget.saturating_sub(exec.steps() - before);
        print_message(&outcome.to_json(), format, true, true);
        let response = match &outcome {
            Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) => {
                stored = exec.state().clone();
                HostResponse::PersistConfirmed {
                    revision: *revision,
                }
            }
            Outcome::Host(
                HostRequest::PersistEffect { .. }
                | HostRequest::RegisterTimer { .. }
                | HostRequest::RegisterWait { .. }
                | HostRequest::CreateChild { .. },
            ) => HostResponse::Ack,
            Outcome::Host(HostRequest::RunEffect { .. }) | Outcome::Suspended => {
                match responses.pop_front() {
                    Some(r) => r,
                    None => break Ok(()),
                }
            }
            Outcome::BudgetExhausted => break Ok(()),
            Outcome::Failed { message, .. } => {
                failed = Some(message.clone());
                break Ok(());
            }
            Outcome::Completed(_) | Outcome::Cancelled => break Ok(()),
        };
        print_message(&response.to_json(), format, true, true);
        if let Err(e) = exec.respond(response) {
            break Err(e);
        }
    };
    result.map_err(|e| loaded.engine_error(&e))?;
    if let Some(message) = &failed {
        loaded.failure_site(Some(exec.state()), message, format);
    }
    // A fresh start that ran nothing and checkpointed nothing (a budget of
    // 0): the continuation as the engine holds it, as the reference writes
    // it (status `running`). A resumed one is written back as it was read.
    if a.continuation.is_none() && exec.steps() == 0 && exec.state().revision == 0 {
        stored = exec.state().clone();
    }
    let mut text = stored.encode();
    text.push('\n');
    write(a.output.as_deref(), text.as_bytes())?;
    Ok(crate::error::Outcome::Success)
}
