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
use zlm::materialize::c::engine::{COutcome, CRun, parse_report};

/// Host stack the program may use for ZLM calls before a call faults with
/// the depth limit (the C engine's default `stack_bytes`).
pub const STACK_BYTES: u64 = 4 << 20;

type EntryFn = unsafe extern "C" fn(*mut Zrt, *mut u64, *const u64) -> i32;

/// A typed entry: the run state, the slot values' word stream and its length.
type TypedFn = unsafe extern "C" fn(*mut Zrt, *const u64, u64) -> i32;

/// What a typed call observed (docs/zlm/boundary.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedRun {
    /// The entry returned.
    Done {
        /// The result and, per slot, the lent value handed back.
        words: zlm::boundary::TypedWords,
        /// Operations executed.
        steps: u64,
        /// Drops performed, in order.
        drops: Vec<zlm::interp::DropEvent>,
    },
    /// The program faulted.
    Fault {
        /// The fault, as the interpreter reports it.
        fault: zlm::interp::Fault,
        /// Drops performed, unwinding included.
        drops: Vec<zlm::interp::DropEvent>,
    },
}

/// What one run writes through the output hooks: channel 0 the log (drop
/// lines), channel 1 the rendered result.
#[derive(Default)]
struct HostOut {
    log: Vec<u8>,
    result: Vec<u8>,
}

/// Appends `bytes` to channel `ch` of the run whose state is `z`.
///
/// # Safety
/// `z` is the run state the entry was called with; its `out` field is
/// null or points to the [`HostOut`] of that run, alive for the call.
unsafe fn host_put(z: *mut Zrt, ch: u64, bytes: &[u8]) {
    // SAFETY: guaranteed by the caller.
    let out = unsafe { (*z).out } as *mut HostOut;
    if out.is_null() {
        return;
    }
    // SAFETY: `out` points to the live HostOut of this run (see `call`),
    // used by this thread only.
    let o = unsafe { &mut *out };
    if ch == 0 {
        o.log.extend_from_slice(bytes);
    } else {
        o.result.extend_from_slice(bytes);
    }
}

/// The `zlm_host_text` hook: a NUL-terminated string to channel `ch`.
extern "C" fn zlm_host_text(z: *mut Zrt, ch: u64, s: *const std::ffi::c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: the lowered program passes NUL-terminated constants.
    let bytes = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes();
    // SAFETY: `z` is the run state of the running entry.
    unsafe { host_put(z, ch, bytes) };
}

/// The `zlm_host_word` hook: a word rendered by kind to channel `ch`.
extern "C" fn zlm_host_word(z: *mut Zrt, ch: u64, kind: u64, w: u64) {
    let s = render_word(kind, w);
    // SAFETY: `z` is the run state of the running entry.
    unsafe { host_put(z, ch, s.as_bytes()) };
}

/// The drop events of a run's log.
fn drops_of(log: &[u8]) -> Result<Vec<zlm::interp::DropEvent>, LlvmError> {
    let text = format!("{}OK\t0\t\n", String::from_utf8_lossy(log));
    match parse_report(&text) {
        Ok(CRun::Done(o)) => Ok(o.drops),
        _ => Err(LlvmError::Protocol(format!(
            "bad drop log {:?}",
            String::from_utf8_lossy(log)
        ))),
    }
}

/// A compiled module, valid inside [`with_jit`].
pub struct JitProgram<'l> {
    lowered: &'l Lowered,
    fns: Vec<EntryFn>,
    typed: Vec<TypedFn>,
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
    // The output hooks are this engine's functions.
    let hooks: [(&str, usize); 2] = [
        ("zlm_host_text", zlm_host_text as *const () as usize),
        ("zlm_host_word", zlm_host_word as *const () as usize),
    ];
    for (name, addr) in hooks {
        if let Some(f) = module.get_function(name) {
            ee.add_global_mapping(&f, addr);
        }
    }
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
    let mut typed = Vec::new();
    for k in 0..lowered.typed.len() {
        let addr = ee
            .get_function_address(&format!("zlm_typed_{k}"))
            .map_err(|e| LlvmError::Backend(format!("zlm_typed_{k}: {e}")))?;
        // SAFETY: `zlm_typed_k` is defined by the lowering (`typed.rs`) with
        // exactly this signature (`i32 (ptr, ptr, i64)`); `ee` outlives
        // every call, as above.
        typed.push(unsafe { std::mem::transmute::<usize, TypedFn>(addr) });
    }
    let program = JitProgram {
        lowered,
        fns,
        typed,
    };
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
        let (rc, z, word, out, _) = self.call(i, args, limits, 0)?;
        self.outcome(i, rc, &z, word, &out)
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
        let (rc, z, word, out, t) = self.call(i, args, limits, n)?;
        Ok((self.outcome(i, rc, &z, word, &out)?, t))
    }

    fn outcome(
        &self,
        i: usize,
        rc: i32,
        z: &Zrt,
        word: u64,
        out: &HostOut,
    ) -> Result<CRun, LlvmError> {
        let drops = drops_of(&out.log)?;
        if rc != 0 {
            return Ok(CRun::Fault {
                fault: self.lowered.fault(z),
                drops,
            });
        }
        let rendered = match self.lowered.renders[i] {
            crate::unit::RENDERED => String::from_utf8_lossy(&out.result).into_owned(),
            k => render_word(k, word),
        };
        Ok(CRun::Done(COutcome {
            rendered,
            steps: z.limit - z.left,
            drops,
        }))
    }

    fn call(
        &self,
        i: usize,
        args: &[u64],
        limits: Limits,
        repeat: u64,
    ) -> Result<(i32, Zrt, u64, HostOut, Duration), LlvmError> {
        let f = self.fns[i];
        let args = args.to_vec();
        // SAFETY: see `with_jit`; `z`, `word` and `args` are live for the
        // call and `args` holds the entry's parameter count.
        self.call_with(limits, repeat, move |z, word| unsafe {
            f(z, word, args.as_ptr())
        })
    }

    /// Runs `invoke` on a thread whose stack is sized for the host-stack
    /// guard: `repeat` timed times, then once more for the outcome.
    fn call_with(
        &self,
        limits: Limits,
        repeat: u64,
        invoke: impl Fn(*mut Zrt, *mut u64) -> i32 + Send,
    ) -> Result<(i32, Zrt, u64, HostOut, Duration), LlvmError> {
        let run = move || {
            let marker = 0u8;
            let here = std::hint::black_box(&marker) as *const u8 as u64;
            let fresh = || Zrt {
                left: limits.steps,
                limit: limits.steps,
                depth: 0,
                max_depth: limits.depth as u64,
                floor: here.saturating_sub(STACK_BYTES),
                byte_limit: limits.bytes,
                ..Zrt::default()
            };
            let mut word = 0u64;
            let start = Instant::now();
            for _ in 0..repeat {
                let mut out = HostOut::default();
                let mut z = fresh();
                z.out = &mut out as *mut HostOut as u64;
                if invoke(&mut z, &mut word) != 0 {
                    break;
                }
            }
            let t = start.elapsed();
            let mut out = HostOut::default();
            let mut z = fresh();
            z.out = &mut out as *mut HostOut as u64;
            let rc = invoke(&mut z, &mut word);
            z.out = 0;
            (rc, z, word, out, t)
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

    /// Entries callable across the typed boundary (`Decl.function`).
    pub fn typed_entries(&self) -> &[String] {
        &self.lowered.typed
    }

    /// Runs typed entry `entry` with the word stream of its slot values
    /// (`zlm::boundary::slot_words`) under `limits`. A completed run's
    /// `rendered` holds the result's words, then for each lent slot `;`
    /// and its words (`zlm::boundary::typed_of_report` decodes it).
    pub fn run_typed(&self, entry: &str, words: &[u64], limits: Limits) -> Result<CRun, LlvmError> {
        let k = self
            .lowered
            .typed
            .iter()
            .position(|e| e == entry)
            .ok_or_else(|| {
                LlvmError::Usage(format!(
                    "{entry} cannot be called across the typed boundary on the LLVM engines"
                ))
            })?;
        let f = self.typed[k];
        let words = words.to_vec();
        // SAFETY: see `with_jit`; `z` and `words` are live for the call and
        // `n` is the stream's length (the entry reads no further).
        let (rc, z, _, out, _) = self.call_with(limits, 0, move |z, _| unsafe {
            f(z, words.as_ptr(), words.len() as u64)
        })?;
        if rc < 0 {
            return Err(LlvmError::Protocol(format!(
                "{entry}: the word stream does not hold its slot values"
            )));
        }
        let drops = drops_of(&out.log)?;
        if rc != 0 {
            return Ok(CRun::Fault {
                fault: self.lowered.fault(&z),
                drops,
            });
        }
        Ok(CRun::Done(COutcome {
            rendered: String::from_utf8_lossy(&out.result).into_owned(),
            steps: z.limit - z.left,
            drops,
        }))
    }

    /// Calls function `at` of `r` (the package this program was lowered
    /// from) across the typed boundary with its slot values, as
    /// `zlm::boundary::parse_args` returns them (the host form of each
    /// slot; the allocator as `Value::Allocator`): the result and every
    /// lent value handed back, or the fault.
    pub fn call_typed(
        &self,
        r: &zlm::check::Resolved<'_>,
        at: (usize, usize),
        values: &[zlm::interp::Value],
        limits: Limits,
    ) -> Result<TypedRun, LlvmError> {
        let slots = zlm::boundary::slots(r, at);
        if slots.len() != values.len() {
            return Err(LlvmError::Usage(format!(
                "{} takes {} slot values",
                r.fn_name(at.0, at.1),
                slots.len()
            )));
        }
        let words = zlm::boundary::slot_words(r, &slots, values);
        let result = &r.module.declarations[at.0].functions[at.1].result;
        match self.run_typed(&r.fn_name(at.0, at.1), &words, limits)? {
            CRun::Done(o) => {
                let words = zlm::boundary::typed_of_report(r, result, &slots, &o.rendered)
                    .ok_or_else(|| {
                        LlvmError::Protocol(format!(
                            "the typed report did not decode: {:?}",
                            o.rendered
                        ))
                    })?;
                Ok(TypedRun::Done {
                    words,
                    steps: o.steps,
                    drops: o.drops,
                })
            }
            CRun::Fault { fault, drops } => Ok(TypedRun::Fault { fault, drops }),
        }
    }
}
