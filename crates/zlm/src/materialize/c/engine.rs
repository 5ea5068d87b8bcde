//! The C engine: an emitted unit compiled by a system C compiler into a
//! temporary executable, run once per call with the interpreter's limits.
//! The executable prints one line per drop (`D`), then `OK steps rendered`
//! or `FAULT function block op kind detail`; this module turns those lines
//! back into the interpreter's [`Fault`] and [`DropEvent`] values.

use super::unit::Emitted;
use crate::interp::{DropEvent, Fault, FaultKind, Limits};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// A C compiler command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiler {
    /// The program (`cc`, `gcc`, `clang`).
    pub program: String,
    /// Flags before the source file.
    pub flags: Vec<String>,
}

/// The flags every emitted unit must compile under.
pub const STRICT_FLAGS: [&str; 6] = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-O2",
];

impl Compiler {
    /// `program` with [`STRICT_FLAGS`].
    pub fn strict(program: &str) -> Self {
        Compiler {
            program: program.to_string(),
            flags: STRICT_FLAGS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl Default for Compiler {
    /// `cc` with [`STRICT_FLAGS`].
    fn default() -> Self {
        Compiler::strict("cc")
    }
}

/// Why the C engine could not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A file or process operation failed.
    #[error("C engine I/O: {0}")]
    Io(String),
    /// The compiler rejected the unit (a materializer bug: emitted C must compile).
    #[error("the C compiler rejected the emitted unit: {0}")]
    Compile(String),
    /// The entry is not a host-callable function of the unit.
    #[error("{0}")]
    Usage(String),
    /// The executable's report did not parse (or it crashed).
    #[error("the C executable misbehaved: {0}")]
    Protocol(String),
}

/// A completed C run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct COutcome {
    /// The result, rendered as the interpreter renders it.
    pub rendered: String,
    /// Operations executed.
    pub steps: u64,
    /// Drops performed, in order.
    pub drops: Vec<DropEvent>,
}

/// What a C run observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CRun {
    /// The entry returned.
    Done(COutcome),
    /// The program faulted.
    Fault {
        /// The fault, as the interpreter reports it.
        fault: Fault,
        /// Drops performed, unwinding included.
        drops: Vec<DropEvent>,
    },
}

/// A compiled unit in its own temporary directory (removed on drop).
#[derive(Debug)]
pub struct Program {
    dir: PathBuf,
    exe: PathBuf,
    entries: Vec<String>,
    typed_entries: Vec<String>,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Drop for Program {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes the emitted files into `dir`.
pub fn write_files(emitted: &Emitted, dir: &Path) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::Io(format!("{}: {e}", dir.display())))?;
    for (name, text) in &emitted.files {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| EngineError::Io(format!("{}: {e}", p.display())))?;
    }
    Ok(())
}

/// A compile of an emitted unit running in the background
/// ([`Program::spawn`]): the caller does other work while the C compiler
/// runs, then [`PendingProgram::wait`] gives the program or the
/// compiler's diagnostics.
#[derive(Debug)]
pub struct PendingProgram {
    program: Option<Program>,
    /// The compiler process until it is waited for.
    compiler: Option<std::process::Child>,
}

impl Drop for PendingProgram {
    /// A compile never waited for is stopped and reaped before its
    /// directory goes.
    fn drop(&mut self) {
        if let Some(mut child) = self.compiler.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl PendingProgram {
    /// Waits for the compiler: the program, or its diagnostics.
    pub fn wait(mut self) -> Result<Program, EngineError> {
        let (Some(compiler), Some(program)) = (self.compiler.take(), self.program.take()) else {
            return Err(EngineError::Io(
                "the C compile was already waited for".into(),
            ));
        };
        let out = compiler
            .wait_with_output()
            .map_err(|e| EngineError::Io(format!("waiting for the C compiler: {e}")))?;
        if !out.status.success() {
            return Err(EngineError::Compile(
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(program)
    }
}

impl Program {
    /// Compiles `emitted` with `cc` into a temporary executable.
    pub fn build(emitted: &Emitted, cc: &Compiler) -> Result<Program, EngineError> {
        Program::spawn(emitted, cc)?.wait()
    }

    /// Starts compiling `emitted` with `cc` into a temporary executable
    /// and returns at once (the compile runs as its own process).
    pub fn spawn(emitted: &Emitted, cc: &Compiler) -> Result<PendingProgram, EngineError> {
        let dir = std::env::temp_dir().join(format!(
            "zlm-c-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let program = Program {
            exe: dir.join("zlm-program"),
            dir,
            entries: emitted.entries.clone(),
            typed_entries: emitted.typed_entries.clone(),
        };
        write_files(emitted, &program.dir)?;
        let compiler = Command::new(&cc.program)
            .args(&cc.flags)
            .arg("-o")
            .arg(&program.exe)
            .arg(program.dir.join("module.c"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::Io(format!("{}: {e}", cc.program)))?;
        Ok(PendingProgram {
            program: Some(program),
            compiler: Some(compiler),
        })
    }

    /// Host-callable entries (`Decl.function`).
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Entries callable across the typed boundary (`Decl.function`).
    pub fn typed_entries(&self) -> &[String] {
        &self.typed_entries
    }

    /// Runs typed entry `entry` (`Decl.function`) with the word stream of
    /// its slot values (`crate::boundary::slot_words`). A completed run's
    /// [`COutcome::rendered`] holds the result's words, then for each lent
    /// slot `;` and its words as the call left it (`crate::boundary::TypedWords`).
    pub fn run_typed(
        &self,
        entry: &str,
        words: &[u64],
        limits: Limits,
    ) -> Result<CRun, EngineError> {
        let Some(index) = self.typed_entries.iter().position(|e| e == entry) else {
            return Err(EngineError::Usage(format!(
                "{entry} cannot be called across the typed boundary on the C engine"
            )));
        };
        run_with(&self.exe, format!("t{index:x}"), words, limits)
    }

    /// Runs `entry` (`Decl.function`) with canonical argument words.
    pub fn run(&self, entry: &str, args: &[u64], limits: Limits) -> Result<CRun, EngineError> {
        let Some(index) = self.entries.iter().position(|e| e == entry) else {
            return Err(EngineError::Usage(format!(
                "{entry} is not a host-callable function of the emitted unit"
            )));
        };
        run_executable(&self.exe, index, args, limits)
    }
}

/// Runs an executable that speaks this engine's protocol (the C program,
/// or the LLVM engines' AOT driver): entry `index`, the limits and the
/// argument words in hex; parses its report.
pub fn run_executable(
    exe: &Path,
    index: usize,
    args: &[u64],
    limits: Limits,
) -> Result<CRun, EngineError> {
    run_with(exe, format!("{index:x}"), args, limits)
}

/// Runs typed entry `index` of an executable that speaks this engine's
/// protocol with the word stream of its slot values
/// ([`crate::boundary::slot_words`]); a completed run's
/// [`COutcome::rendered`] holds the result's and the lent values' words.
pub fn run_executable_typed(
    exe: &Path,
    index: usize,
    words: &[u64],
    limits: Limits,
) -> Result<CRun, EngineError> {
    run_with(exe, format!("t{index:x}"), words, limits)
}

fn run_with(exe: &Path, entry: String, args: &[u64], limits: Limits) -> Result<CRun, EngineError> {
    let out = Command::new(exe)
        .arg(entry)
        .arg(format!("{:x}", limits.steps))
        .arg(format!("{:x}", limits.depth))
        .arg(format!("{:x}", limits.bytes))
        .args(args.iter().map(|w| format!("{w:x}")))
        .output()
        .map_err(|e| EngineError::Io(format!("{}: {e}", exe.display())))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !out.stderr.is_empty() {
        return Err(EngineError::Protocol(format!(
            "{}, stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    parse_report(&stdout)
}

fn kind_of(name: &str, detail: &str) -> Option<FaultKind> {
    Some(match name {
        "Overflow" => FaultKind::Overflow,
        "DivideByZero" => FaultKind::DivideByZero,
        "ShiftRange" => FaultKind::ShiftRange,
        "Contract" => FaultKind::Contract(detail.to_string()),
        "Assert" => FaultKind::Assert,
        "Bounds" => FaultKind::Bounds,
        "Tag" => FaultKind::Tag,
        "StepLimit" => FaultKind::StepLimit,
        "DepthLimit" => FaultKind::DepthLimit,
        "ByteLimit" => FaultKind::ByteLimit,
        "Internal" => FaultKind::Internal,
        _ => return None,
    })
}

/// Parses the executable's report.
pub fn parse_report(text: &str) -> Result<CRun, EngineError> {
    let bad = |l: &str| EngineError::Protocol(format!("unexpected line {l:?}"));
    let mut drops = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        match parts.as_slice() {
            ["D", function, owner, ty] => drops.push(DropEvent {
                function: function.to_string(),
                owner: owner.to_string(),
                ty: ty.to_string(),
            }),
            ["OK", steps, rendered] => {
                return Ok(CRun::Done(COutcome {
                    rendered: rendered.to_string(),
                    steps: steps.parse().map_err(|_| bad(line))?,
                    drops,
                }));
            }
            ["FAULT", function, block, op, kind, detail] => {
                let num = |s: &str| -> Result<Option<u32>, EngineError> {
                    if s == "-" {
                        Ok(None)
                    } else {
                        s.parse().map(Some).map_err(|_| bad(line))
                    }
                };
                return Ok(CRun::Fault {
                    fault: Fault {
                        function: function.to_string(),
                        block: num(block)?,
                        op: num(op)?,
                        kind: kind_of(kind, detail).ok_or_else(|| bad(line))?,
                    },
                    drops,
                });
            }
            _ => return Err(bad(line)),
        }
    }
    Err(EngineError::Protocol("no result line".into()))
}
