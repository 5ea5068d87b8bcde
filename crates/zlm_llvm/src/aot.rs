//! The AOT engine: an object file under an explicit [`TargetRecord`], an
//! executable linked with the record's linker and the host driver
//! (`host/driver.c`), runs of that executable with the C engine's
//! protocol, and shared libraries with a C interface (`host/zlm_lib.h`).

use crate::backend;
use crate::error::LlvmError;
use crate::target::{TargetRecord, linker_identity};
use crate::unit::Lowered;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use zlm::interp::Limits;
use zlm::materialize::c::engine::{CRun, EngineError, run_executable, run_executable_typed};

/// The host driver linked into every AOT executable.
pub const DRIVER_C: &str = concat!(include_str!("host/common.c"), include_str!("host/driver.c"));

/// The C interface of every AOT shared library: the header users include.
pub const LIBRARY_H: &str = include_str!("host/zlm_lib.h");

/// The C interface's implementation linked into every AOT shared library.
pub const LIBRARY_C: &str = concat!(
    include_str!("host/zlm_lib.h"),
    include_str!("host/common.c"),
    include_str!("host/library.c")
);

/// An object file for `lowered` under `record`.
pub fn object(lowered: &Lowered, record: &TargetRecord) -> Result<Vec<u8>, LlvmError> {
    backend::object(&lowered.ir, record)
}

/// Links `object` (a file) with the host driver into executable `out`,
/// using the record's linker; its identity must be the record's.
pub fn link(object: &Path, out: &Path, record: &TargetRecord) -> Result<(), LlvmError> {
    link_with(object, out, record, DRIVER_C, false)
}

/// Links `object` (a file) with the C interface ([`LIBRARY_H`]) into shared
/// library `out`, using the record's linker. The object must be
/// position-independent: the record's relocation model must be `pic`.
pub fn link_shared(object: &Path, out: &Path, record: &TargetRecord) -> Result<(), LlvmError> {
    if record.relocation != "pic" {
        return Err(LlvmError::Record(format!(
            "relocation {:?}: a shared library needs \"pic\"",
            record.relocation
        )));
    }
    link_with(object, out, record, LIBRARY_C, true)
}

fn link_with(
    object: &Path,
    out: &Path,
    record: &TargetRecord,
    host: &str,
    shared: bool,
) -> Result<(), LlvmError> {
    let have = linker_identity(&record.linker)?;
    if have != record.linker_version {
        return Err(LlvmError::Record(format!(
            "linker_version {:?} does not match {} ({have:?})",
            record.linker_version, record.linker
        )));
    }
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let driver = dir.join(format!(".zlm-driver-{}-{n}.o", std::process::id()));
    let compiled = host_object(record, &have, host, shared, dir)?;
    std::fs::write(&driver, compiled.as_slice())
        .map_err(|e| LlvmError::Io(format!("{}: {e}", driver.display())))?;
    let mut cmd = Command::new(&record.linker);
    if shared {
        cmd.arg("-shared");
    }
    cmd.arg("-o").arg(out).arg(&driver).arg(object);
    if !shared && record.relocation != "pic" {
        cmd.arg("-no-pie");
    }
    let res = cmd.output();
    let _ = std::fs::remove_file(&driver);
    let res = res.map_err(|e| LlvmError::Io(format!("{}: {e}", record.linker)))?;
    if !res.status.success() {
        return Err(LlvmError::Link(
            String::from_utf8_lossy(&res.stderr).into_owned(),
        ));
    }
    Ok(())
}

/// The host C `host` compiled by the record's linker (`-std=c11 -O2`, and
/// `-fPIC` for a shared library, `-no-pie` for a non-PIC executable):
/// compiled once per process for each linker, its identity, the
/// relocation model and the host text, then kept in memory, so a run
/// that links many executables (the four-engine oracle) compiles the
/// driver once. The object is what a one-step compile-and-link would
/// produce from the same source and flags. `dir` holds the compiler's
/// source and output files while it runs.
fn host_object(
    record: &TargetRecord,
    identity: &str,
    host: &str,
    shared: bool,
    dir: &Path,
) -> Result<Arc<Vec<u8>>, LlvmError> {
    type Key = (String, String, bool, String, String);
    static OBJECTS: OnceLock<Mutex<HashMap<Key, Arc<Vec<u8>>>>> = OnceLock::new();
    let key: Key = (
        record.linker.clone(),
        identity.to_string(),
        shared,
        record.relocation.clone(),
        host.to_string(),
    );
    let objects = OBJECTS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(o) = objects.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(o);
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let source = dir.join(format!(".zlm-driver-{}-{n}.c", std::process::id()));
    let compiled = dir.join(format!(".zlm-driver-{}-{n}.c.o", std::process::id()));
    std::fs::write(&source, host)
        .map_err(|e| LlvmError::Io(format!("{}: {e}", source.display())))?;
    let mut cmd = Command::new(&record.linker);
    cmd.args(["-std=c11", "-O2"]);
    if shared {
        cmd.arg("-fPIC");
    } else if record.relocation != "pic" {
        // As in the one-step compile and link this replaces.
        cmd.arg("-no-pie");
    }
    cmd.arg("-c").arg("-o").arg(&compiled).arg(&source);
    let res = cmd.output();
    let _ = std::fs::remove_file(&source);
    let res = res.map_err(|e| LlvmError::Io(format!("{}: {e}", record.linker)))?;
    if !res.status.success() {
        let _ = std::fs::remove_file(&compiled);
        return Err(LlvmError::Link(
            String::from_utf8_lossy(&res.stderr).into_owned(),
        ));
    }
    let bytes = std::fs::read(&compiled);
    let _ = std::fs::remove_file(&compiled);
    let bytes = Arc::new(bytes.map_err(|e| LlvmError::Io(format!("{}: {e}", compiled.display())))?);
    if let Ok(mut m) = objects.lock() {
        m.insert(key, bytes.clone());
    }
    Ok(bytes)
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A linked AOT executable in its own temporary directory (removed on drop).
#[derive(Debug)]
pub struct AotProgram {
    dir: PathBuf,
    exe: PathBuf,
    entries: Vec<String>,
    typed: Vec<String>,
}

impl Drop for AotProgram {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl AotProgram {
    /// Builds `lowered` for `record` and links it in a temporary directory.
    pub fn build(lowered: &Lowered, record: &TargetRecord) -> Result<AotProgram, LlvmError> {
        let dir = std::env::temp_dir().join(format!(
            "zlm-aot-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| LlvmError::Io(format!("{}: {e}", dir.display())))?;
        let program = AotProgram {
            exe: dir.join("zlm-program"),
            dir,
            entries: lowered.entries.clone(),
            typed: lowered.typed.clone(),
        };
        let obj = object(lowered, record)?;
        let op = program.dir.join("module.o");
        std::fs::write(&op, obj).map_err(|e| LlvmError::Io(format!("{}: {e}", op.display())))?;
        link(&op, &program.exe, record)?;
        Ok(program)
    }

    /// The executable.
    pub fn path(&self) -> &Path {
        &self.exe
    }

    /// The index of `entry` in the executable's entry table.
    pub fn index(&self, entry: &str) -> Result<usize, LlvmError> {
        self.entries.iter().position(|e| e == entry).ok_or_else(|| {
            LlvmError::Usage(format!(
                "{entry} is not a host-callable function of the lowered module"
            ))
        })
    }

    /// Runs `entry` with canonical argument words under `limits`.
    pub fn run(&self, entry: &str, args: &[u64], limits: Limits) -> Result<CRun, LlvmError> {
        let index = self.index(entry)?;
        run_executable(&self.exe, index, args, limits).map_err(engine_error)
    }

    /// Runs typed entry `entry` with the word stream of its slot values
    /// (`zlm::boundary::slot_words`) under `limits`. A completed run's
    /// `rendered` holds the result's words, then for each lent slot `;`
    /// and its words (`zlm::boundary::typed_of_report` decodes it).
    pub fn run_typed(&self, entry: &str, words: &[u64], limits: Limits) -> Result<CRun, LlvmError> {
        let index = self.typed.iter().position(|e| e == entry).ok_or_else(|| {
            LlvmError::Usage(format!(
                "{entry} cannot be called across the typed boundary on the LLVM engines"
            ))
        })?;
        run_executable_typed(&self.exe, index, words, limits).map_err(engine_error)
    }
}

fn engine_error(e: EngineError) -> LlvmError {
    match e {
        EngineError::Io(m) => LlvmError::Io(m),
        EngineError::Protocol(m) => LlvmError::Protocol(m),
        e => LlvmError::Protocol(e.to_string()),
    }
}
