//! The in-process JIT engine (MCJIT): the lowered module is optimized for
//! the host and run on a thread whose stack is sized for the host-stack
//! guard, with the interpreter's limits. A JIT run is not a build: it may
//! use the host CPU, and nothing of it is a reproducible output.
// Calling JIT-compiled machine code is FFI by nature: the entry address
// comes from LLVM and its signature from our own lowering, which Rust cannot check.
#![allow(unsafe_code)]

use crate::backend;
use crate::error::LlvmError;
use crate::unit::{Lowered, Zrt, render_word};
use inkwell::OptimizationLevel;
use inkwell::context::Context;
use inkwell::targets::{CodeModel, RelocMode, Target, TargetMachine};
use std::time::{Duration, Instant};
use zlm::interp::Limits;
use zlm::materialize::c::engine::{COutcome, CRun};

/// Host stack the program may use for ZLM calls before a call faults with
/// the depth limit (the C engine's default `stack_bytes`).
pub const STACK_BYTES: u64 = 4 << 20;

type EntryFn = unsafe extern "C" fn(*mut Zrt, *mut u64, *const u64) -> i32;

/// A compiled module, valid inside [`with_jit`].
pub struct JitProgram<'l> {
    lowered: &'l Lowered,
    fns: Vec<EntryFn>,
}

/// Compiles `lowered` and hands the program to `f`; the machine code lives
/// until `f` returns.
pub fn with_jit<R>(
    lowered: &Lowered,
    f: impl FnOnce(&JitProgram<'_>) -> R,
) -> Result<R, LlvmError> {
    backend::init();
    let ctx = Context::create();
    let module = backend::parse(&ctx, &lowered.ir)?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| LlvmError::Backend(e.to_string()))?;
    let cpu = TargetMachine::get_host_cpu_name();
    let features = TargetMachine::get_host_cpu_features();
    let tm = target
        .create_target_machine(
            &triple,
            &cpu.to_string_lossy(),
            &features.to_string_lossy(),
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| LlvmError::Backend("no host target machine".into()))?;
    backend::optimize(&module, &tm, "O2")?;
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Default)
        .map_err(|e| LlvmError::Backend(e.to_string()))?;
    let mut fns = Vec::new();
    for i in 0..lowered.entries.len() {
        let addr = ee
            .get_function_address(&format!("zlm_entry_{i}"))
            .map_err(|e| LlvmError::Backend(format!("zlm_entry_{i}: {e}")))?;
        // SAFETY: `zlm_entry_i` is defined by the lowering with exactly this
        // signature (`i32 (ptr, ptr, ptr)`), and the engine `ee` that owns
        // the code outlives every call (the pointers do not escape `f`).
        fns.push(unsafe { std::mem::transmute::<usize, EntryFn>(addr) });
    }
    let program = JitProgram { lowered, fns };
    let r = f(&program);
    drop(ee);
    Ok(r)
}

impl JitProgram<'_> {
    fn entry(&self, entry: &str, args: &[u64]) -> Result<usize, LlvmError> {
        let i = self
            .lowered
            .entries
            .iter()
            .position(|e| e == entry)
            .ok_or_else(|| {
                LlvmError::Usage(format!(
                    "{entry} is not a host-callable function of the lowered module"
                ))
            })?;
        if self.lowered.params[i] != args.len() as u64 {
            return Err(LlvmError::Usage(format!(
                "{entry} takes {} arguments",
                self.lowered.params[i]
            )));
        }
        Ok(i)
    }

    /// Runs `entry` with canonical argument words under `limits`.
    pub fn run(&self, entry: &str, args: &[u64], limits: Limits) -> Result<CRun, LlvmError> {
        let i = self.entry(entry, args)?;
        let (rc, z, word, _) = self.call(i, args, limits, 0)?;
        Ok(self.outcome(i, rc, &z, word))
    }

    /// Runs `entry` `n` times (the result of the last run is returned) and
    /// reports the time the `n` runs took, thread start excluded.
    pub fn time(
        &self,
        entry: &str,
        args: &[u64],
        limits: Limits,
        n: u64,
    ) -> Result<(CRun, Duration), LlvmError> {
        let i = self.entry(entry, args)?;
        let (rc, z, word, t) = self.call(i, args, limits, n)?;
        Ok((self.outcome(i, rc, &z, word), t))
    }

    fn outcome(&self, i: usize, rc: i32, z: &Zrt, word: u64) -> CRun {
        if rc != 0 {
            return CRun::Fault {
                fault: self.lowered.fault(z),
                drops: Vec::new(),
            };
        }
        CRun::Done(COutcome {
            rendered: render_word(self.lowered.renders[i], word),
            steps: z.limit - z.left,
            drops: Vec::new(),
        })
    }

    fn call(
        &self,
        i: usize,
        args: &[u64],
        limits: Limits,
        repeat: u64,
    ) -> Result<(i32, Zrt, u64, Duration), LlvmError> {
        let f = self.fns[i];
        let args = args.to_vec();
        let run = move || {
            let marker = 0u8;
            let here = std::hint::black_box(&marker) as *const u8 as u64;
            let fresh = || Zrt {
                left: limits.steps,
                limit: limits.steps,
                depth: 0,
                max_depth: limits.depth as u64,
                floor: here.saturating_sub(STACK_BYTES),
                ..Zrt::default()
            };
            let mut word = 0u64;
            let start = Instant::now();
            for _ in 0..repeat {
                let mut z = fresh();
                // SAFETY: see `with_jit`; `z`, `word` and `args` are live
                // for the call and `args` holds the entry's parameter count.
                if unsafe { f(&mut z, &mut word, args.as_ptr()) } != 0 {
                    break;
                }
            }
            let t = start.elapsed();
            let mut z = fresh();
            // SAFETY: as above.
            let rc = unsafe { f(&mut z, &mut word, args.as_ptr()) };
            (rc, z, word, t)
        };
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("zlm-jit".into())
                .stack_size(STACK_BYTES as usize + (1 << 20))
                .spawn_scoped(s, run)
                .map_err(|e| LlvmError::Io(format!("JIT thread: {e}")))?
                .join()
                .map_err(|_| LlvmError::Protocol("the JIT thread panicked".into()))
        })
    }
}
