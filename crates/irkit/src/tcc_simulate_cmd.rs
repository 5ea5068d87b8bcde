//! `irkit tcc simulate`: runs a workflow against scripted effect answers
//! and event payloads, with timers skipped — the engine behind the client
//! packages' test helpers (`irkit_tcc.testing`, `@irkit/tcc/testing`).
//!
//! The script (JSON): `{"effects": {PATTERN: ANSWER | [ANSWER, …]},
//! "events": {NAME: PAYLOAD | [PAYLOAD, …]}}` where an ANSWER is
//! `{"result": PLAIN}` or `{"error": "message"}` and patterns are effect
//! keys with `*` wildcards (the first matching pattern, in the script's
//! order, answers). A list is a sequence: the n-th call of a key matching
//! that pattern gets the n-th answer, and a key whose answers ran out is an
//! error. Each wait for event NAME takes the next payload; when none is
//! left the event never arrives. A timer fires at once. The run ends when
//! the execution ends, or when it waits with nothing left to deliver
//! (status `suspended`, `waiting_for` lists the events).
//!
//! The report (JSON on standard output): `status`, `result` (plain JSON)
//! and `tagged_result`, `message` (failed), `effects` (each call in order:
//! `key`, `idempotency_key`, `input`, and `result` or `error`),
//! `waiting_for`, `timers_skipped`. Exit 0 when the run ended as scripted
//! (whatever the execution's status), 2 on a script or program error.

use crate::args::InputArgs;
use crate::error::{CliError, Origin, Outcome};
use serde_json::{Value as J, json};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use tcc_engine::continuation::Phase;
use tcc_engine::{Execution, HostRequest, HostResponse, Limits, Outcome as Step, Program};
use tcc_host::providers::pattern_matches;
use tcc_host::values::{plain_to_tagged, tagged_to_plain};
use tcc_ir::FeatureSet;

/// Arguments of `irkit tcc simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    // The artifact JSON, or a `.py`/`.ts`/`.rs` source compiled first.
    #[command(flatten)]
    input: InputArgs,
    /// Entry arguments: a JSON array of plain JSON values.
    #[arg(long)]
    args: Option<String>,
    /// The script: effect answers and event payloads (JSON; see the docs).
    #[arg(long)]
    script: Option<PathBuf>,
    /// Execution id (idempotency keys are `{id}:{key}`).
    #[arg(long, default_value = "simulated")]
    execution_id: String,
    /// Give up after this many engine steps.
    #[arg(long, default_value_t = 100_000_000)]
    max_steps: u64,
}

/// One scripted answer.
#[derive(Clone)]
enum Answer {
    Result(J),
    Error(String),
}

/// Answers of one pattern: a single one (every call) or a sequence.
struct Answers {
    pattern: String,
    list: Vec<Answer>,
    repeat: bool,
    used: usize,
}

fn usage(m: impl Into<String>) -> CliError {
    CliError::usage(m)
}

fn answer(pattern: &str, j: &J) -> Result<Answer, CliError> {
    match (j.get("result"), j.get("error")) {
        (Some(r), None) => plain_to_tagged(r)
            .map(Answer::Result)
            .map_err(|e| usage(format!("script: effects.{pattern}: {e}"))),
        (None, Some(J::String(m))) => Ok(Answer::Error(m.clone())),
        _ => Err(usage(format!(
            "script: effects.{pattern}: an answer is {{\"result\": VALUE}} or {{\"error\": \"message\"}}"
        ))),
    }
}

struct Script {
    effects: Vec<Answers>,
    events: HashMap<String, VecDeque<J>>,
}

fn read_script(path: Option<&PathBuf>) -> Result<Script, CliError> {
    let mut script = Script {
        effects: Vec::new(),
        events: HashMap::new(),
    };
    let Some(path) = path else {
        return Ok(script);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--script {}: {e}", path.display())))?;
    let j: J = serde_json::from_str(&text)
        .map_err(|e| usage(format!("--script {}: not JSON: {e}", path.display())))?;
    let J::Object(top) = j else {
        return Err(usage("script: must be a JSON object"));
    };
    for (k, v) in &top {
        match (k.as_str(), v) {
            ("effects", J::Object(m)) => {
                for (pattern, a) in m {
                    let (list, repeat) = match a {
                        J::Array(items) => (
                            items
                                .iter()
                                .map(|i| answer(pattern, i))
                                .collect::<Result<_, _>>()?,
                            false,
                        ),
                        single => (vec![answer(pattern, single)?], true),
                    };
                    script.effects.push(Answers {
                        pattern: pattern.clone(),
                        list,
                        repeat,
                        used: 0,
                    });
                }
            }
            ("events", J::Object(m)) => {
                for (name, p) in m {
                    let list = match p {
                        J::Array(items) => items.clone(),
                        single => vec![single.clone()],
                    };
                    let tagged = list
                        .iter()
                        .map(|x| {
                            plain_to_tagged(x)
                                .map_err(|e| usage(format!("script: events.{name}: {e}")))
                        })
                        .collect::<Result<_, _>>()?;
                    script.events.insert(name.clone(), tagged);
                }
            }
            _ => {
                return Err(usage(format!(
                    "script: unknown or malformed key {k:?} (expected objects \"effects\" and \"events\")"
                )));
            }
        }
    }
    Ok(script)
}

/// A registered wake the simulated host may deliver.
enum Pending {
    Timer(Option<String>),
    Event(String, Option<String>),
}

fn awaited(exec: &Execution, branch: &Option<String>) -> bool {
    let Some(b) = branch else {
        return true;
    };
    exec.state().join.as_ref().is_some_and(|j| {
        j.branches
            .iter()
            .any(|x| x.branch_id == *b && x.phase == Phase::Registered)
    })
}

/// An engine error of the workflow's run: its coded diagnostic about the
/// program (exit 1), as `tcc run` reports it.
fn engine_error(label: &str, e: &tcc_engine::EngineError) -> CliError {
    CliError::diagnosed(e, &Origin::binary(label))
}

/// `irkit tcc simulate`.
pub fn simulate(a: SimulateArgs) -> Result<Outcome, CliError> {
    let (label, bytes) = crate::tcc_compile_cmd::read_program(&a.input.file)?;
    // An artifact that does not decode or validate is invalid input (exit 1,
    // coded), as in `tcc validate` and `tcc run`.
    let artifact = tcc_ir::decode_artifact(&bytes).map_err(|e| {
        let text = std::str::from_utf8(&bytes).ok();
        CliError::diagnosed(&e, &Origin::text(&label, text))
    })?;
    let program = Program::new(artifact, &FeatureSet::all_host_capabilities())
        .map_err(|e| engine_error(&label, &e))?;
    let engine = |e: tcc_engine::EngineError| engine_error(&label, &e);
    let args = match a.args.as_deref() {
        None => Vec::new(),
        Some(t) => match serde_json::from_str::<J>(t) {
            Ok(J::Array(items)) => items
                .iter()
                .map(plain_to_tagged)
                .collect::<Result<_, _>>()
                .map_err(|e| usage(format!("--args: {e}")))?,
            _ => return Err(usage("--args must be a JSON array of plain values")),
        },
    };
    let mut script = read_script(a.script.as_ref())?;
    let limits = Limits::default();
    let mut exec =
        Execution::start(Arc::new(program), &a.execution_id, &args, limits).map_err(engine)?;
    exec.set_delta_checkpoints(true);
    let mut effects: Vec<J> = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut timers = 0u64;
    let report = loop {
        if exec.steps() > a.max_steps {
            return Err(usage(format!(
                "the execution ran more than {} steps",
                a.max_steps
            )));
        }
        let outcome = exec.run_until_host(100_000).map_err(engine)?;
        let response = match outcome {
            Step::BudgetExhausted => continue,
            Step::Completed(_) | Step::Failed { .. } | Step::Cancelled => {
                let state = exec.state();
                let status = state.status.as_str().to_string();
                let result = match &state.result {
                    Some(v) => tcc_engine::json::export(&state.heap, v).map_err(engine)?,
                    None => json!({"t": "undefined"}),
                };
                let mut r = json!({"status": status, "result": tagged_to_plain(&result), "tagged_result": result});
                if status == "failed" {
                    r["message"] = match result.get("v") {
                        Some(J::String(s)) => json!(s),
                        _ => json!(tcc_ir::to_canonical(&result)),
                    };
                }
                break r;
            }
            Step::Suspended => {
                // Waits of branches no longer registered (a race settled)
                // are dropped; the first deliverable one, in registration
                // order, is delivered.
                pending.retain(|p| match p {
                    Pending::Timer(b) | Pending::Event(_, b) => awaited(&exec, b),
                });
                let chosen = pending.iter().position(|p| match p {
                    Pending::Timer(_) => true,
                    Pending::Event(name, _) => {
                        script.events.get(name).is_some_and(|q| !q.is_empty())
                    }
                });
                let Some(k) = chosen else {
                    let waiting: Vec<&str> = pending
                        .iter()
                        .filter_map(|p| match p {
                            Pending::Event(n, _) => Some(n.as_str()),
                            Pending::Timer(_) => None,
                        })
                        .collect();
                    break json!({"status": "suspended", "result": null, "tagged_result": null, "waiting_for": waiting});
                };
                match pending.remove(k) {
                    Pending::Timer(branch) => {
                        timers += 1;
                        HostResponse::TimerFired { branch }
                    }
                    Pending::Event(name, branch) => {
                        let value = script
                            .events
                            .get_mut(&name)
                            .and_then(VecDeque::pop_front)
                            .unwrap_or(json!({"t": "null"}));
                        HostResponse::EventPayload { value, branch }
                    }
                }
            }
            Step::Host(req) => match req {
                HostRequest::PersistCheckpoint { revision, .. } => {
                    HostResponse::PersistConfirmed { revision }
                }
                HostRequest::PersistEffect { .. } => HostResponse::Ack,
                HostRequest::RegisterTimer { branch, .. } => {
                    pending.push(Pending::Timer(branch));
                    HostResponse::Ack
                }
                HostRequest::RegisterWait {
                    event_name, branch, ..
                } => {
                    pending.push(Pending::Event(event_name, branch));
                    HostResponse::Ack
                }
                HostRequest::CreateChild { program_name, .. } => {
                    return Err(usage(format!(
                        "simulate: Invoke of {program_name:?} is not supported (simulate the child on its own)"
                    )));
                }
                HostRequest::RunEffect {
                    key,
                    idempotency_key,
                    input,
                } => {
                    let answers = script
                        .effects
                        .iter_mut()
                        .find(|s| pattern_matches(&s.pattern, &key))
                        .ok_or_else(|| usage(format!("script: no answer for effect {key:?}")))?;
                    let got = if answers.repeat {
                        answers.list.first().cloned()
                    } else {
                        answers.list.get(answers.used).cloned()
                    };
                    answers.used += 1;
                    let got = got.ok_or_else(|| {
                        usage(format!(
                            "script: effect {key:?} called {} times, {} answers scripted for {:?}",
                            answers.used,
                            answers.list.len(),
                            answers.pattern
                        ))
                    })?;
                    let mut entry = json!({"key": key, "idempotency_key": idempotency_key, "input": tagged_to_plain(&input)});
                    match got {
                        Answer::Result(value) => {
                            entry["result"] = tagged_to_plain(&value);
                            effects.push(entry);
                            HostResponse::EffectResult { value }
                        }
                        Answer::Error(message) => {
                            entry["error"] = json!(message);
                            effects.push(entry);
                            HostResponse::EffectFailed { message }
                        }
                    }
                }
            },
        };
        exec.respond(response).map_err(engine)?;
    };
    let mut report = report;
    report["effects"] = J::Array(effects);
    report["timers_skipped"] = json!(timers);
    if report.get("waiting_for").is_none() {
        report["waiting_for"] = json!([]);
    }
    println!("{}", tcc_ir::to_canonical(&report));
    Ok(Outcome::Success)
}
