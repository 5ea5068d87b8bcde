//! `irkit tcc <verb>`: TCC program artifacts (tcc-program-format.md).

use crate::args::{FormatArgs, InputArgs};
use crate::diag::{Diagnostic, Format};
use crate::error::{CliError, Origin, Outcome};
use crate::io::{read, write};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tcc_ir::{Artifact, FeatureSet, Instruction, SourceMap, ValidationError};

/// Verbs of `irkit tcc`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Decode and validate an artifact (exit 0 valid, 1 invalid, 2 usage/I/O).
    Validate {
        #[command(flatten)]
        input: InputArgs,
        /// Engine features the engine implements (comma-separated; default: every known feature).
        #[arg(long, value_delimiter = ',')]
        features: Option<Vec<String>>,
        /// Host capabilities the host provides (comma-separated; default: every known capability).
        #[arg(long, value_delimiter = ',')]
        capabilities: Option<Vec<String>>,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print the artifact hash computed from the content.
    Hash {
        #[command(flatten)]
        input: InputArgs,
        /// Compare the computed hash with the embedded `artifact_hash` (exit 1 on mismatch).
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print a readable listing: functions, pc, op, operands, source span.
    Print {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Re-encode an artifact as canonical JSON.
    Canon {
        #[command(flatten)]
        input: InputArgs,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Replace `artifact_hash` with the computed hash.
        #[arg(long)]
        rehash: bool,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Compile a Python (.py), TypeScript (.ts) or Rust (.rs) workflow to an artifact.
    Compile(crate::tcc_compile_cmd::CompileArgs),
    /// Run an artifact to completion with a simple local host.
    Run(crate::tcc_run_cmd::RunArgs),
    /// Run to the next host boundary and write the continuation.
    Step(crate::tcc_run_cmd::StepArgs),
    /// Run a workflow against scripted effect answers and events, timers skipped (JSON report).
    Simulate(crate::tcc_simulate_cmd::SimulateArgs),
    /// Run the durable host as an HTTP JSON service.
    Serve(crate::tcc_host_cmd::ServeArgs),
    /// Register an artifact with a server (prints its hash).
    Register(crate::tcc_host_cmd::RegisterArgs),
    /// Start an execution on a server, or locally with --local.
    Start(crate::tcc_host_cmd::StartArgs),
    /// Show an execution's status and result.
    Status(crate::tcc_host_cmd::StatusArgs),
    /// Await an execution's end (long poll) and show its result.
    Result(crate::tcc_host_cmd::ResultArgs),
    /// Send an event to an execution.
    Send(crate::tcc_host_cmd::SendArgs),
    /// Request cancellation of an execution (its except/catch/finally
    /// handlers run when its artifact requires irkit.catchable_cancel).
    Cancel(crate::tcc_host_cmd::CancelArgs),
    /// Cancel an execution at once, without running its handlers.
    Terminate(crate::tcc_host_cmd::CancelArgs),
    /// Resume a paused execution, or one that failed because an effect
    /// failed (from the checkpoint before that effect, once its provider is
    /// fixed); with --program, a paused program.
    Resume(crate::tcc_host_cmd::ResumeArgs),
    /// Pause an execution, or with --program every execution of a program:
    /// nothing new of it runs until it is resumed.
    Pause(crate::tcc_pause_cmd::PauseArgs),
    /// Delete a completed, failed or cancelled execution with its journal,
    /// history and checkpoints.
    Delete(crate::tcc_delete_cmd::DeleteArgs),
    /// List executions.
    Ls(crate::tcc_host_cmd::LsArgs),
    /// Manage schedules on a server: create, ls, pause, resume, delete.
    #[command(subcommand)]
    Schedule(crate::tcc_schedule_cmd::ScheduleVerb),
    /// Manage flow limits on a server (concurrency, rate): set, ls, delete.
    #[command(subcommand)]
    Limit(crate::tcc_limit_cmd::LimitVerb),
}

impl Verb {
    /// The verb's `--format` (`human` for a verb without one).
    pub fn format(&self) -> Format {
        match self {
            Verb::Validate { fmt, .. }
            | Verb::Hash { fmt, .. }
            | Verb::Print { fmt, .. }
            | Verb::Canon { fmt, .. } => fmt.format,
            Verb::Compile(a) => a.fmt.format,
            Verb::Run(a) => a.fmt.format,
            Verb::Step(a) => a.fmt.format,
            Verb::Start(a) => a.fmt.format,
            Verb::Status(a) => a.fmt.format,
            Verb::Result(a) => a.fmt.format,
            Verb::Ls(a) => a.fmt.format,
            Verb::Resume(a) => a.fmt.format,
            Verb::Pause(a) => a.fmt.format,
            Verb::Delete(a) => a.fmt.format,
            Verb::Schedule(v) => v.format(),
            Verb::Limit(v) => v.format(),
            Verb::Serve(_)
            | Verb::Register(_)
            | Verb::Send(_)
            | Verb::Cancel(_)
            | Verb::Terminate(_)
            | Verb::Simulate(_) => Format::Human,
        }
    }
}

/// Runs one `irkit tcc` verb.
pub fn run(verb: Verb) -> Result<Outcome, CliError> {
    match verb {
        Verb::Validate {
            input,
            features,
            capabilities,
            fmt,
        } => validate(&input.file, features, capabilities, fmt.format),
        Verb::Hash { input, check, .. } => hash(&input.file, check),
        Verb::Print { input, .. } => print(&input.file),
        Verb::Canon {
            input,
            output,
            rehash,
            ..
        } => canon(&input.file, output.as_deref(), rehash),
        Verb::Compile(args) => crate::tcc_compile_cmd::compile(args),
        Verb::Run(args) => crate::tcc_run_cmd::run(args),
        Verb::Step(args) => crate::tcc_run_cmd::step(args),
        Verb::Simulate(args) => crate::tcc_simulate_cmd::simulate(args),
        Verb::Serve(args) => crate::tcc_host_cmd::serve(args),
        Verb::Register(args) => crate::tcc_host_cmd::register(args),
        Verb::Start(args) => crate::tcc_host_cmd::start(args),
        Verb::Status(args) => crate::tcc_host_cmd::status(args),
        Verb::Result(args) => crate::tcc_host_cmd::result(args),
        Verb::Send(args) => crate::tcc_host_cmd::send(args),
        Verb::Cancel(args) => crate::tcc_host_cmd::cancel(args),
        Verb::Terminate(args) => crate::tcc_host_cmd::terminate(args),
        Verb::Resume(args) => match &args.program {
            // `resume --program NAME` lifts a program's pause.
            Some(name) => {
                let client = crate::tcc_host_cmd::Client::new(&args.client);
                crate::tcc_pause_cmd::program(&client, name, false, args.fmt.format)
            }
            None => crate::tcc_host_cmd::resume(args),
        },
        Verb::Pause(args) => crate::tcc_pause_cmd::pause(args),
        Verb::Delete(args) => crate::tcc_delete_cmd::delete(args),
        Verb::Ls(args) => crate::tcc_host_cmd::ls(args),
        Verb::Schedule(verb) => crate::tcc_schedule_cmd::run(verb),
        Verb::Limit(verb) => crate::tcc_limit_cmd::run(verb),
    }
}

/// A decoded input with what diagnostics need.
struct Loaded {
    label: String,
    text: Option<String>,
    artifact: Artifact,
    map: SourceMap,
}

impl Loaded {
    /// A diagnostic about this input at byte `offset`.
    fn diagnostic(
        &self,
        kind: &str,
        code: &str,
        message: String,
        offset: Option<usize>,
    ) -> Diagnostic {
        Diagnostic::new(kind, Some(code), message, &self.label).at(offset, self.text.as_deref())
    }
}

/// Reads and decodes `file`.
fn load(file: &Path) -> Result<Loaded, CliError> {
    let (label, bytes) = read(file)?;
    let text = String::from_utf8(bytes.clone()).ok();
    match tcc_ir::decode_artifact_with_map(&bytes) {
        Ok((artifact, map)) => Ok(Loaded {
            label,
            text,
            artifact,
            map,
        }),
        Err(err) => Err(CliError::diagnosed(
            &err,
            &Origin::text(&label, text.as_deref()),
        )),
    }
}

fn feature_set(given: Option<Vec<String>>, all: FeatureSet) -> FeatureSet {
    match given {
        Some(ids) => FeatureSet::new(ids.into_iter().filter(|s| !s.trim().is_empty())),
        None => all,
    }
}

fn validation_offset(err: &ValidationError, artifact: &Artifact, map: &SourceMap) -> Option<usize> {
    use ValidationError as V;
    let env = &artifact.envelope;
    let entry_of = |list: &[String], offsets: &[usize], id: &str| {
        list.iter()
            .position(|x| x == id)
            .and_then(|i| offsets.get(i).copied())
    };
    if let Some(at) = err.location() {
        return map.instruction(at.function_index, at.pc);
    }
    match err {
        V::UnsupportedFormatVersion { .. } => map.envelope_field("engine_format_version"),
        V::EmptyArtifactHash => map.envelope_field("artifact_hash"),
        V::EmptyFrontendId => map.envelope_field("frontend_id"),
        V::UnknownSemanticsVersion { .. } => map.envelope_field("language_semantics_version"),
        V::UnknownEngineFeature { feature } | V::UnsupportedEngineFeature { feature } => {
            entry_of(&env.required_engine_features, &map.engine_features, feature)
        }
        V::UnknownHostCapability { capability } | V::UnsupportedHostCapability { capability } => {
            entry_of(
                &env.required_host_capabilities,
                &map.host_capabilities,
                capability,
            )
        }
        V::EmptyProgram | V::TooManyFunctions { .. } => Some(map.functions_array),
        V::DuplicateFunctionId { second, .. } => map.instruction(*second, None),
        V::MissingEntry { .. } => Some(map.entry),
        _ => None,
    }
}

fn validate(
    file: &Path,
    features: Option<Vec<String>>,
    capabilities: Option<Vec<String>>,
    format: Format,
) -> Result<Outcome, CliError> {
    let loaded = load(file)?;
    let engine = feature_set(features, FeatureSet::all_engine_features());
    let host = feature_set(capabilities, FeatureSet::all_host_capabilities());
    let errors = tcc_ir::validate_all(&loaded.artifact, &engine, &host);
    if errors.is_empty() {
        if format == Format::Human {
            let program = &loaded.artifact.program;
            println!(
                "{}: ok ({} functions, {} instructions)",
                loaded.label,
                program.functions.len(),
                program.total_instructions()
            );
        }
        return Ok(Outcome::Success);
    }
    let diagnostics = errors
        .iter()
        .map(|e| {
            loaded.diagnostic(
                "validation",
                e.code(),
                e.to_string(),
                validation_offset(e, &loaded.artifact, &loaded.map),
            )
        })
        .collect();
    Err(CliError::invalid(diagnostics, loaded.text.as_deref()))
}

fn hash(file: &Path, check: bool) -> Result<Outcome, CliError> {
    let loaded = load(file)?;
    let computed = tcc_ir::compute_hash(&loaded.artifact);
    let embedded = &loaded.artifact.envelope.artifact_hash;
    if check && *embedded != computed {
        let d = loaded.diagnostic(
            "hash",
            "TCC-H001",
            format!("artifact_hash mismatch: embedded {embedded:?}, computed {computed:?}"),
            loaded.map.envelope_field("artifact_hash"),
        );
        return Err(CliError::invalid(vec![d], loaded.text.as_deref()));
    }
    println!("{computed}");
    Ok(Outcome::Success)
}

fn print(file: &Path) -> Result<Outcome, CliError> {
    let loaded = load(file)?;
    write(None, listing(&loaded.artifact).as_bytes())?;
    Ok(Outcome::Success)
}

fn canon(file: &Path, output: Option<&Path>, rehash: bool) -> Result<Outcome, CliError> {
    let loaded = load(file)?;
    let artifact = if rehash {
        tcc_ir::encode::with_computed_hash(&loaded.artifact)
    } else {
        loaded.artifact
    };
    let mut bytes = tcc_ir::encode_artifact(&artifact);
    bytes.push(b'\n');
    write(output, &bytes)?;
    Ok(Outcome::Success)
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}

/// The readable listing printed by `irkit tcc print`.
pub fn listing(artifact: &Artifact) -> String {
    let env = &artifact.envelope;
    let program = &artifact.program;
    let mut out = String::new();
    let _ = writeln!(out, "artifact   {}", env.artifact_hash);
    let _ = writeln!(
        out,
        "frontend   {} {}",
        env.frontend_id, env.frontend_version
    );
    let _ = writeln!(
        out,
        "semantics  {} (engine format {})",
        env.language_semantics_version, env.engine_format_version
    );
    let _ = writeln!(
        out,
        "features   {}",
        list_or_none(&env.required_engine_features)
    );
    let _ = writeln!(
        out,
        "host       {}",
        list_or_none(&env.required_host_capabilities)
    );
    let modules: Vec<String> = env
        .runtime_modules
        .iter()
        .map(|m| format!("{} ({})", m.id, m.kind))
        .collect();
    let _ = writeln!(out, "modules    {}", list_or_none(&modules));
    let _ = writeln!(out, "entry      {}", program.entry);
    for f in &program.functions {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "fn {} {} (params {}, locals {}, {} instructions){}",
            f.id,
            f.name,
            f.param_count,
            f.local_count,
            f.instructions.len(),
            if f.id == program.entry {
                " [entry]"
            } else {
                ""
            }
        );
        if let Some(defaults) = &f.param_defaults {
            let shown: Vec<String> = defaults
                .iter()
                .map(|d| d.as_ref().map_or("-".to_string(), |c| c.to_string()))
                .collect();
            let _ = writeln!(out, "  defaults: {}", shown.join(", "));
        }
        let width = f
            .instructions
            .len()
            .saturating_sub(1)
            .to_string()
            .len()
            .max(2);
        for (pc, ins) in f.instructions.iter().enumerate() {
            let operands = operands(ins, artifact);
            let span = f
                .spans
                .get(pc)
                .and_then(Option::as_ref)
                .map(|s| {
                    format!(
                        "{}:{}:{}-{}:{}",
                        s.file, s.start_line, s.start_column, s.end_line, s.end_column
                    )
                })
                .unwrap_or_default();
            let line = format!("  {pc:>width$}  {:<13} {:<28} {span}", ins.name(), operands);
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    out
}

fn operands(ins: &Instruction, artifact: &Artifact) -> String {
    use Instruction as I;
    let callee = |func: u32| match artifact.function(func) {
        Some(f) => format!("fn {func} ({})", f.name),
        None => format!("fn {func} (missing)"),
    };
    match ins {
        I::Jump { target } | I::JumpIfTrue { target } | I::JumpIfFalse { target } => {
            format!("-> {target}")
        }
        I::Call { func, argc } => format!("{} argc {argc}", callee(*func)),
        I::NewClosure { func } | I::LoadFunc { func } => callee(*func),
        I::LoadLocal { local } | I::StoreLocal { local } => format!("local {local}"),
        I::LoadConst { value } => format!("{} {value}", value.tag()),
        I::SetProp { key } | I::GetProp { key } => format!("key {key:?}"),
        I::ArrayIndex { index }
        | I::EnvGet { index }
        | I::EnvSet { index }
        | I::EnvSlot { index } => {
            format!("index {index}")
        }
        I::Effect { has_input } => {
            if *has_input {
                "has_input".to_string()
            } else {
                String::new()
            }
        }
        I::Invoke { arg_count } => format!("arg_count {arg_count}"),
        I::Fork { count, join_pc } => format!("count {count} join -> {join_pc}"),
        I::PushTry { catch, finally } => match finally {
            Some(f) => format!("catch -> {catch} finally -> {f}"),
            None => format!("catch -> {catch} finally none"),
        },
        I::NewEnv { count } => format!("count {count}"),
        I::CallClosure { argc } => format!("argc {argc}"),
        _ => String::new(),
    }
}
