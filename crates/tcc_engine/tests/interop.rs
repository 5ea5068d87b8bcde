//! Two-way interop with the reference TCC engine (PyPI `tcc-engine` 26.10.4,
//! its native engine driven by `tests/reference_driver.py` with the policy of
//! irkit's `LocalHost`; docs/tcc/compat.md):
//!
//! - every corpus program (`../shared/corpus/tcc-reference`, the
//!   `run-transcript` cases) and every irkit example gives the same
//!   transcript on both engines;
//! - each engine resumes the continuation the other wrote at every
//!   checkpoint of a run and finishes with the same outcome and effect log;
//! - programs from the property-test generators do both (a bounded,
//!   deterministic sample).
//!
//! The reference interpreter is `$IRKIT_TCC_REFERENCE_PYTHON`, else
//! `target/tcc-ref-venv/bin/python` (`scripts/install-tcc-reference.sh`).
//! Without it (or without the corpus) the tests print why and pass, unless
//! `IRKIT_REQUIRE_REFERENCE=1` (CI), where they fail.

mod common;

use common::generate::{answer, block, lower};
use common::{func, program as build_program};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value as J, json};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use tcc_engine::local_host::{EffectAnswer, LocalHost};
use tcc_engine::{Continuation, Execution, HostRequest, HostResponse, Limits, Outcome, Program};
use tcc_ir::FeatureSet;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var("IRKIT_REQUIRE_REFERENCE").is_ok_and(|v| v == "1")
}

/// Skips (prints why and returns `None`) or, when required, fails.
fn unavailable<T>(why: String) -> Option<T> {
    if required() {
        panic!("IRKIT_REQUIRE_REFERENCE=1 but {why}");
    }
    eprintln!("skipping the reference interop test: {why}");
    None
}

/// The reference engine's interpreter, if installed.
fn reference_python() -> Option<PathBuf> {
    let python = match std::env::var_os("IRKIT_TCC_REFERENCE_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => workspace().join("target/tcc-ref-venv/bin/python"),
    };
    let ok = Command::new(&python)
        .args(["-c", "import tcc_engine._engine"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some(python)
    } else {
        unavailable(format!(
            "{} cannot import tcc_engine (run scripts/install-tcc-reference.sh)",
            python.display()
        ))
    }
}

fn corpus() -> Option<PathBuf> {
    let dir = workspace().join("../shared/corpus/tcc-reference");
    if dir.join("cases.tsv").is_file() {
        Some(dir)
    } else {
        unavailable(format!("the corpus is not at {}", dir.display()))
    }
}

/// One run: what both engines are given.
#[derive(Clone, Debug)]
struct Job {
    name: String,
    artifact: String,
    execution_id: String,
    args: Option<Vec<J>>,
    continuation: Option<String>,
    effects: Map<String, J>,
    events: Map<String, J>,
    children: BTreeMap<String, String>,
    child_results: Map<String, J>,
    /// Effects run before a resume: the host's journal.
    journal: Vec<J>,
}

impl Job {
    fn to_json(&self) -> J {
        json!({
            "artifact": self.artifact,
            "execution_id": self.execution_id,
            "args": self.args,
            "continuation": self.continuation,
            "effects": self.effects,
            "events": self.events,
            "children": self.children,
            "child_results": self.child_results,
            "journal": self.journal,
            "max_steps": 100_000,
        })
    }

    fn resumed(&self, continuation: &str, child_results: &Map<String, J>, journal: &[J]) -> Job {
        Job {
            continuation: Some(continuation.to_string()),
            child_results: child_results.clone(),
            journal: journal.to_vec(),
            ..self.clone()
        }
    }
}

/// What a run gave.
#[derive(Clone, Debug, Default, PartialEq)]
struct Report {
    transcript: Vec<J>,
    effect_log: Vec<J>,
    outcome: J,
    /// Continuation text at each checkpoint, and the effects run by then.
    checkpoints: Vec<(String, usize)>,
    error: Option<String>,
}

impl Report {
    /// The results of the children this run created, by child execution id.
    fn child_results(&self) -> Map<String, J> {
        self.transcript
            .iter()
            .filter(|m| m["type"] == "child_result")
            .filter_map(|m| {
                Some((
                    m["child_execution_id"].as_str()?.to_string(),
                    m["value"].clone(),
                ))
            })
            .collect()
    }
}

/// Runs `jobs` on the reference engine, in one interpreter.
fn reference(python: &Path, jobs: &[Job]) -> Vec<Report> {
    let input = J::Array(jobs.iter().map(Job::to_json).collect()).to_string();
    // To rerun a batch by hand: IRKIT_INTEROP_DUMP=FILE, then
    // `python tests/reference_driver.py < FILE`.
    if let Some(path) = std::env::var_os("IRKIT_INTEROP_DUMP") {
        std::fs::write(path, &input).expect("write the dump");
    }
    let mut child = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference_driver.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the reference driver");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("reference driver output");
    writer.join().unwrap().expect("write the jobs");
    assert!(
        out.status.success(),
        "reference driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<J> = serde_json::from_slice(&out.stdout).expect("driver JSON");
    assert_eq!(reports.len(), jobs.len());
    reports
        .into_iter()
        .map(|r| Report {
            transcript: r["transcript"].as_array().cloned().unwrap_or_default(),
            effect_log: r["effect_log"].as_array().cloned().unwrap_or_default(),
            outcome: r["outcome"].clone(),
            checkpoints: r["checkpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let text = c["continuation"].as_str().unwrap_or_default().to_string();
                    (text, c["effects"].as_u64().unwrap_or(0) as usize)
                })
                .collect(),
            error: r["error"].as_str().map(str::to_string),
        })
        .collect()
}

fn load(artifact: &str) -> Result<Arc<Program>, String> {
    let a = tcc_ir::decode_artifact(artifact.as_bytes()).map_err(|e| e.to_string())?;
    Program::new(a, &FeatureSet::all_host_capabilities())
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The wake a registered operation (continuation `op` JSON) waits for.
fn wake_for(op: &J, branch: Option<String>, job: &Job) -> Result<HostResponse, String> {
    Ok(match op["type"].as_str() {
        Some("event") => {
            let name = op["event_name"].as_str().unwrap_or_default();
            let value = job
                .events
                .get(name)
                .cloned()
                .ok_or_else(|| format!("no payload configured for event {name:?}"))?;
            HostResponse::EventPayload { value, branch }
        }
        Some("timer") => HostResponse::TimerFired { branch },
        Some("child") => {
            let child = op["child_execution_id"].as_str().unwrap_or_default();
            let value = job
                .child_results
                .get(child)
                .cloned()
                .ok_or_else(|| format!("no result for child {child:?}"))?;
            HostResponse::ChildResult {
                value,
                branch,
                child_execution_id: Some(child.to_string()),
            }
        }
        other => return Err(format!("cannot wake a {other:?}")),
    })
}

/// The wakes a resumed continuation waits for: its group's registered
/// branches (by index), or its pending wait.
fn seed_wakes(c: &J, job: &Job) -> Result<VecDeque<HostResponse>, String> {
    let mut wakes = VecDeque::new();
    if let Some(join) = c.get("join").filter(|j| !j.is_null()) {
        let mut branches: Vec<&J> = join["branches"].as_array().into_iter().flatten().collect();
        branches.sort_by_key(|b| b["index"].as_u64());
        for b in branches.into_iter().filter(|b| b["phase"] == "registered") {
            let id = b["branch_id"].as_str().map(str::to_string);
            wakes.push_back(wake_for(&b["op"], id, job)?);
        }
    } else if c["pending"]["type"] == "wait" {
        wakes.push_back(wake_for(&c["pending"]["kind"], None, job)?);
    }
    Ok(wakes)
}

fn still_awaited(exec: &Execution, w: &HostResponse) -> bool {
    let branch = match w {
        HostResponse::TimerFired { branch }
        | HostResponse::EventPayload { branch, .. }
        | HostResponse::ChildResult { branch, .. } => branch,
        _ => return true,
    };
    branch.as_ref().is_none_or(|b| {
        exec.state().join.as_ref().is_some_and(|j| {
            j.branches.iter().any(|x| {
                x.branch_id == *b && x.phase == tcc_engine::continuation::Phase::Registered
            })
        })
    })
}

/// Runs `job` on irkit's engine with `LocalHost`'s policy (the driver's).
fn irkit(job: &Job, depth: usize) -> Report {
    let mut report = Report::default();
    if let Err(e) = irkit_into(job, depth, &mut report) {
        report.error = Some(e);
    }
    report
}

fn irkit_into(job: &Job, depth: usize, report: &mut Report) -> Result<(), String> {
    let program = load(&job.artifact)?;
    let limits = Limits::default();
    let (mut exec, mut wakes) = match &job.continuation {
        Some(text) => {
            let c = Continuation::decode(text.as_bytes(), &limits).map_err(|e| e.to_string())?;
            let wakes = seed_wakes(&c.to_json(), job)?;
            let e = Execution::resume(program, c, limits).map_err(|e| e.to_string())?;
            (e, wakes)
        }
        None => {
            let args = job.args.clone().unwrap_or_default();
            let e = Execution::start(program, &job.execution_id, &args, limits)
                .map_err(|e| e.to_string())?;
            (e, VecDeque::new())
        }
    };
    let mut journal: BTreeMap<String, (String, J)> = BTreeMap::new();
    for done in &job.journal {
        let key = done["key"].as_str().unwrap_or_default();
        let answer = job
            .effects
            .get(key)
            .cloned()
            .ok_or("journal entry without an answer")?;
        let ikey = done["idempotency_key"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        journal.insert(
            ikey,
            (tcc_engine::json::to_canonical(&done["input"]), answer),
        );
    }
    let mut child_results = job.child_results.clone();
    loop {
        let outcome = exec.run_until_host(100_000).map_err(|e| e.to_string())?;
        if outcome == Outcome::BudgetExhausted {
            continue;
        }
        report.transcript.push(outcome.to_json());
        let response = match outcome {
            Outcome::BudgetExhausted => continue,
            Outcome::Completed(_) | Outcome::Failed { .. } | Outcome::Cancelled => {
                report.outcome = outcome.to_json();
                return Ok(());
            }
            // Wakes for branches no longer registered are dropped (LocalHost's rule).
            Outcome::Suspended => loop {
                let w = wakes
                    .pop_front()
                    .ok_or("suspended with nothing to deliver")?;
                if still_awaited(&exec, &w) {
                    break w;
                }
            },
            Outcome::Host(req) => match req {
                HostRequest::PersistCheckpoint { revision, .. } => {
                    report
                        .checkpoints
                        .push((exec.continuation_json(), report.effect_log.len()));
                    HostResponse::PersistConfirmed { revision }
                }
                HostRequest::RunEffect {
                    key,
                    idempotency_key,
                    input,
                } => {
                    let canonical = tcc_engine::json::to_canonical(&input);
                    let answer = match journal.get(&idempotency_key) {
                        Some((previous, answer)) => {
                            if *previous != canonical {
                                return Err(format!(
                                    "effect {idempotency_key} re-run with a different input"
                                ));
                            }
                            answer.clone()
                        }
                        None => {
                            let answer = job.effects.get(&key).cloned().ok_or_else(|| {
                                format!("no result configured for effect {key:?}")
                            })?;
                            report.effect_log.push(json!({"key": key, "idempotency_key": idempotency_key, "input": input}));
                            journal.insert(idempotency_key, (canonical, answer.clone()));
                            answer
                        }
                    };
                    match answer.get("error").and_then(J::as_str) {
                        Some(message) => HostResponse::EffectFailed {
                            message: message.to_string(),
                        },
                        None => HostResponse::EffectResult { value: answer },
                    }
                }
                HostRequest::PersistEffect { .. } => HostResponse::Ack,
                HostRequest::RegisterTimer { branch, .. } => {
                    wakes.push_back(HostResponse::TimerFired { branch });
                    HostResponse::Ack
                }
                HostRequest::RegisterWait {
                    event_name, branch, ..
                } => {
                    wakes.push_back(wake_for(
                        &json!({"type": "event", "event_name": event_name}),
                        branch,
                        job,
                    )?);
                    HostResponse::Ack
                }
                HostRequest::CreateChild {
                    child_execution_id,
                    program_name,
                    args,
                    branch,
                    ..
                } => {
                    if depth >= 8 {
                        return Err("child executions nested deeper than 8".into());
                    }
                    let artifact = job.children.get(&program_name).ok_or_else(|| {
                        format!("no artifact configured for program {program_name:?}")
                    })?;
                    let sub = irkit(
                        &Job {
                            artifact: artifact.clone(),
                            execution_id: child_execution_id.clone(),
                            args: Some(args),
                            continuation: None,
                            journal: Vec::new(),
                            ..job.clone()
                        },
                        depth + 1,
                    );
                    report.effect_log.extend(sub.effect_log);
                    if let Some(e) = sub.error {
                        return Err(e);
                    }
                    if sub.outcome["type"] != "completed" {
                        return Err(format!("child {child_execution_id} did not complete"));
                    }
                    child_results.insert(child_execution_id.clone(), sub.outcome["result"].clone());
                    let with_result = Job {
                        child_results: child_results.clone(),
                        ..job.clone()
                    };
                    let op = json!({"type": "child", "child_execution_id": child_execution_id});
                    wakes.push_back(wake_for(&op, branch, &with_result)?);
                    HostResponse::Ack
                }
            },
        };
        report.transcript.push(response.to_json());
        exec.respond(response).map_err(|e| e.to_string())?;
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn object(text: Option<String>) -> Map<String, J> {
    match text.map(|t| serde_json::from_str::<J>(&t).expect("input JSON")) {
        Some(J::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The corpus programs with a reference transcript, with their inputs.
fn corpus_jobs(dir: &Path) -> Vec<Job> {
    let cases = read(&dir.join("cases.tsv")).expect("cases.tsv");
    cases
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols.get(1) == Some(&"run-transcript")).then(|| cols[0].to_string())
        })
        .map(|file| {
            let id = Path::new(&file)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let input = |ext: &str| read(&dir.join(format!("inputs/{id}.{ext}")));
            let children = input("children")
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(name, f)| {
                    (
                        name.to_string(),
                        read(&dir.join(f)).expect("child artifact"),
                    )
                })
                .collect();
            Job {
                name: id.clone(),
                artifact: read(&dir.join(&file)).expect("artifact"),
                execution_id: input("exec-id").map_or("run".into(), |s| s.trim().to_string()),
                args: input("args.json").map(|t| serde_json::from_str(&t).expect("args JSON")),
                continuation: None,
                effects: object(input("effects.json")),
                events: object(input("events.json")),
                children,
                child_results: Map::new(),
                journal: Vec::new(),
            }
        })
        .collect()
}

/// A child for any `Invoke` of an example: returns 1.
fn example_child() -> String {
    let p = build_program(
        "ts.subset.v1",
        vec![func(
            0,
            0,
            0,
            vec![common::c_num(1.0), tcc_ir::Instruction::Return],
        )],
    );
    String::from_utf8(tcc_ir::encode_artifact(p.artifact())).unwrap()
}

/// irkit's example artifacts, with their checked-in inputs or, where an
/// example has none, an answer for every effect, event and child it names
/// and numeric arguments.
fn example_jobs() -> Vec<Job> {
    let mut files: Vec<PathBuf> = ["examples/tcc", "examples/tcc/run"]
        .iter()
        .flat_map(|d| std::fs::read_dir(workspace().join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".json")
                && !name.ends_with(".effects.json")
                && !name.ends_with(".events.json")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = read(&path).unwrap();
            let artifact: J = serde_json::from_str(&text).unwrap();
            let stem = path.with_extension("");
            let side = |ext: &str| read(&PathBuf::from(format!("{}.{ext}", stem.display())));
            let mut effects = object(side("effects.json"));
            let mut events = object(side("events.json"));
            let mut children = BTreeMap::new();
            let functions = artifact["program"]["functions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for f in &functions {
                let ins = f["instructions"].as_array().cloned().unwrap_or_default();
                for (i, x) in ins.iter().enumerate().skip(1) {
                    let name = ins[i - 1]["value"]["v"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    match x["op"].as_str() {
                        Some("Effect") if !effects.contains_key(&name) => {
                            effects.insert(name, json!({"t": "number", "v": 7}));
                        }
                        Some("WaitForEvent") if !events.contains_key(&name) => {
                            let v = json!({"t": "string", "v": format!("ev-{name}")});
                            events.insert(name, v);
                        }
                        Some("Invoke") => {
                            children.insert(name, example_child());
                        }
                        _ => {}
                    }
                }
            }
            let entry = artifact["program"]["entry"].clone();
            let params = functions
                .iter()
                .find(|f| f["id"] == entry)
                .and_then(|f| f["param_count"].as_u64())
                .unwrap_or(0) as usize;
            let args: Vec<J> = [3.0, 4.0, 5.0]
                .iter()
                .take(params)
                .map(|n| json!({"t": "number", "v": n}))
                .collect();
            let name = path
                .strip_prefix(workspace())
                .unwrap()
                .display()
                .to_string();
            let args = if name.ends_with("compute-loop.json") {
                vec![json!({"t": "number", "v": 1000})]
            } else {
                args
            };
            Job {
                name,
                artifact: text,
                execution_id: "run".into(),
                args: Some(args),
                continuation: None,
                effects,
                events,
                children,
                child_results: Map::new(),
                journal: Vec::new(),
            }
        })
        .collect()
}

/// Examples on which the engines differ on purpose (docs/tcc/compat.md):
/// the example, and which side refuses it with what.
const EXAMPLE_DIFFERENCES: &[(&str, &str, &str)] = &[
    // irkit refuses a runtime module it does not provide; the reference ignores the list.
    (
        "examples/tcc/compute.json",
        "irkit",
        "runtime module \"pyrt\"",
    ),
    // `Call` is a format-1 instruction; the reference wants `lang.compute` declared for it.
    (
        "examples/tcc/control.json",
        "reference",
        "require lang.compute",
    ),
];

/// Same transcript (or both engines refusing) for each job; returns both reports.
fn same_transcripts(python: &Path, jobs: &[Job]) -> Vec<(Report, Report)> {
    let theirs = reference(python, jobs);
    let mut failures = Vec::new();
    let mut out = Vec::new();
    for (job, r) in jobs.iter().zip(theirs) {
        let ours = irkit(job, 0);
        let known = EXAMPLE_DIFFERENCES.iter().find(|d| d.0 == job.name);
        match (&ours.error, &r.error) {
            _ if known.is_some() => {
                let (_, side, text) = known.unwrap();
                let (refusing, other) = if *side == "irkit" {
                    (&ours, &r)
                } else {
                    (&r, &ours)
                };
                let refused = refusing.error.as_deref().is_some_and(|e| e.contains(text));
                if !refused || other.error.is_some() {
                    failures.push(format!(
                        "{}: expected only {side} to refuse ({text}): irkit {:?}, reference {:?}",
                        job.name, ours.error, r.error
                    ));
                }
            }
            (None, None) if ours.transcript == r.transcript => {}
            (Some(_), Some(_)) => {}
            _ => {
                let at = ours
                    .transcript
                    .iter()
                    .zip(&r.transcript)
                    .position(|(a, b)| a != b)
                    .unwrap_or(ours.transcript.len().min(r.transcript.len()));
                failures.push(format!(
                    "{}: message {at} differs\n  irkit     {:?} {}\n  reference {:?} {}",
                    job.name,
                    ours.error,
                    ours.transcript
                        .get(at)
                        .map_or("(none)".into(), J::to_string),
                    r.error,
                    r.transcript.get(at).map_or("(none)".into(), J::to_string),
                ));
            }
        }
        out.push((ours, r));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    out
}

/// Each engine resumes every checkpoint the other wrote and ends like the
/// full run: the same outcome, and the effects before the checkpoint plus
/// those after it are the full run's.
fn resumes_everywhere(python: &Path, jobs: &[Job], runs: &[(Report, Report)]) -> usize {
    let mut to_reference = Vec::new();
    let mut expected = Vec::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for (job, (ours, theirs)) in jobs.iter().zip(runs) {
        if ours.error.is_some() || theirs.error.is_some() {
            continue;
        }
        // irkit resumes the reference's continuations.
        for (i, (text, done)) in theirs.checkpoints.iter().enumerate() {
            let journal = &theirs.effect_log[..*done];
            let resumed = irkit(&job.resumed(text, &theirs.child_results(), journal), 0);
            let mut log = theirs.effect_log[..*done].to_vec();
            log.extend(resumed.effect_log.iter().cloned());
            checked += 1;
            if resumed.error.is_some()
                || resumed.outcome != theirs.outcome
                || log != theirs.effect_log
            {
                failures.push(format!(
                    "{}: irkit resuming the reference's checkpoint {i}: {:?} {} (full run {})\n  effects {} (full run {})",
                    job.name,
                    resumed.error,
                    resumed.outcome,
                    theirs.outcome,
                    J::from(log),
                    J::from(theirs.effect_log.clone())
                ));
            }
        }
        // The reference resumes irkit's.
        for (i, (text, done)) in ours.checkpoints.iter().enumerate() {
            to_reference.push(job.resumed(text, &ours.child_results(), &ours.effect_log[..*done]));
            expected.push((job.name.clone(), i, ours, *done));
        }
    }
    for (r, (name, i, ours, done)) in reference(python, &to_reference).into_iter().zip(expected) {
        let mut log = ours.effect_log[..done].to_vec();
        log.extend(r.effect_log.iter().cloned());
        checked += 1;
        if r.error.is_some() || r.outcome != ours.outcome || log != ours.effect_log {
            failures.push(format!(
                "{name}: the reference resuming irkit's checkpoint {i}: {:?} {} (full run {})\n  effects {} (full run {})",
                r.error,
                r.outcome,
                ours.outcome,
                J::from(log),
                J::from(ours.effect_log.clone())
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    checked
}

#[test]
fn corpus_programs_agree_and_resume_on_both_engines() {
    let (Some(python), Some(dir)) = (reference_python(), corpus()) else {
        return;
    };
    let jobs = corpus_jobs(&dir);
    assert!(jobs.len() >= 50, "{} corpus programs", jobs.len());
    let runs = same_transcripts(&python, &jobs);
    // Every corpus program runs to its end on both.
    for (job, (ours, _)) in jobs.iter().zip(&runs) {
        assert!(ours.error.is_none(), "{}: {:?}", job.name, ours.error);
    }
    // The harness is LocalHost's policy: its transcripts are `irkit tcc run`'s.
    for (job, (ours, _)) in jobs.iter().zip(&runs) {
        let mut h = LocalHost::new();
        for (k, v) in &job.effects {
            let a = match v.get("error").and_then(J::as_str) {
                Some(m) => EffectAnswer::Fail(m.to_string()),
                None => EffectAnswer::Result(v.clone()),
            };
            h.effects.insert(k.clone(), a);
        }
        h.events.extend(job.events.clone());
        for (name, a) in &job.children {
            h.children.insert(name.clone(), load(a).unwrap());
        }
        let args = job.args.clone().unwrap_or_default();
        let r = h
            .run(load(&job.artifact).unwrap(), &job.execution_id, &args)
            .unwrap();
        assert_eq!(r.transcript, ours.transcript, "{}", job.name);
    }
    let checked = resumes_everywhere(&python, &jobs, &runs);
    assert!(checked > 100, "{checked} resumes");
}

#[test]
fn irkit_examples_agree_and_resume_on_both_engines() {
    let Some(python) = reference_python() else {
        return;
    };
    let jobs = example_jobs();
    assert!(jobs.len() >= 10, "{} examples", jobs.len());
    let runs = same_transcripts(&python, &jobs);
    let completed = runs
        .iter()
        .filter(|(o, _)| o.outcome["type"] == "completed")
        .count();
    assert!(completed >= 8, "{completed} examples completed");
    resumes_everywhere(&python, &jobs, &runs);
}

#[test]
fn generated_programs_agree_and_resume_on_both_engines() {
    let Some(python) = reference_python() else {
        return;
    };
    let mut runner = TestRunner::deterministic();
    let blocks = proptest::collection::vec(block(), 1..12);
    let answers = proptest::collection::vec(answer(), 3);
    let mut jobs = Vec::new();
    for case in 0..48 {
        let b = blocks.new_tree(&mut runner).unwrap().current();
        let a = answers.new_tree(&mut runner).unwrap().current();
        let lang = if case % 2 == 0 {
            "ts.subset.v1"
        } else {
            "py.subset.v1"
        };
        let p = build_program(lang, vec![func(0, 0, 4, lower(&b))]);
        let mut effects = Map::new();
        for (i, answer) in a.iter().enumerate() {
            let v = match answer {
                EffectAnswer::Result(v) => v.clone(),
                EffectAnswer::Fail(m) => json!({"error": m}),
            };
            effects.insert(format!("e{i}"), v);
        }
        let mut events = Map::new();
        events.insert("ev0".into(), json!({"t": "string", "v": "zero"}));
        events.insert(
            "ev1".into(),
            json!({"t": "object", "v": {"n": {"t": "number", "v": 1}}}),
        );
        jobs.push(Job {
            name: format!("generated {case} ({lang}): {b:?}"),
            artifact: String::from_utf8(tcc_ir::encode_artifact(p.artifact())).unwrap(),
            execution_id: "gen".into(),
            args: Some(vec![]),
            continuation: None,
            effects,
            events,
            children: BTreeMap::new(),
            child_results: Map::new(),
            journal: Vec::new(),
        });
    }
    let runs = same_transcripts(&python, &jobs);
    let completed = runs.iter().filter(|(o, _)| o.error.is_none()).count();
    assert!(
        completed >= 40,
        "{completed} of 48 generated programs ran on both"
    );
    resumes_everywhere(&python, &jobs, &runs);
}
