//! Two-thread helpers shared by the reader, the verifier and the writer.
//!
//! Every parallel path in this crate splits work into a first part, run on
//! the calling thread, and a second part, run on one scoped helper thread,
//! and then answers exactly as the sequential order would: results and the
//! first error in sequential order are independent of timing. Small inputs,
//! machines with one core and failures to start a thread take the
//! sequential path.

use crate::ir::{Module, Stage};
use std::sync::{Mutex, OnceLock};

/// Inputs with at least this many instructions (or, for the reader, about
/// this many bytes per instruction times this count) are worth a second
/// thread; below it a thread costs more than it saves.
pub(crate) const PARALLEL_INSTRUCTIONS: usize = 16_384;

/// The stack of helper threads: the reader and verifier never recurse
/// deeper than their documented limits, and this matches the usual main
/// thread, so a helper is exactly as robust as the calling thread.
const HELPER_STACK: usize = 8 << 20;

/// Whether this machine lets a second thread run beside the caller.
pub(crate) fn two_cores() -> bool {
    static CORES: OnceLock<bool> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

/// Runs `first` on the calling thread and `second` on a helper thread,
/// and returns both results. When no helper thread can be started,
/// `second` runs on the calling thread after `first`. A panic in the
/// helper is resumed on the caller.
pub(crate) fn join<A, B, F>(first: impl FnOnce() -> A, second: F) -> (A, B)
where
    F: FnOnce() -> B + Send,
    B: Send,
{
    let slot = Mutex::new(Some(second));
    let take = || slot.lock().ok().and_then(|mut s| s.take());
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("vpl-helper".into())
            .stack_size(HELPER_STACK)
            .spawn_scoped(scope, || take().map(|second| second()));
        let a = first();
        let b = match helper.map(|h| h.join()) {
            Ok(Ok(Some(b))) => b,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // The thread did not start (or found nothing to run, which
            // cannot happen: it is the only other taker).
            Ok(Ok(None)) | Err(_) => match take() {
                Some(second) => second(),
                None => unreachable!("the helper's work was taken but not returned"),
            },
        };
        (a, b)
    })
}

/// Whether the functions of `stage` are worth splitting between two
/// threads, and where: the index of the first function of the second part,
/// which holds about half of the stage's instructions. `None` for small
/// stages or on a machine with one core.
pub(crate) fn stage_split(stage: &Stage) -> Option<usize> {
    if stage.functions.len() < 2 {
        return None;
    }
    let weights: Vec<usize> = stage
        .functions
        .iter()
        .map(|(_, f)| f.blocks.iter().map(|(_, b)| b.instructions.len() + 1).sum())
        .collect();
    let total: usize = weights.iter().sum();
    // The core count (cgroup files) is asked only for a stage worth it.
    if total < PARALLEL_INSTRUCTIONS || !two_cores() {
        return None;
    }
    let mut sum = 0;
    for (i, w) in weights.iter().enumerate() {
        if 2 * sum >= total {
            return Some(i).filter(|&i| i > 0);
        }
        sum += w;
    }
    None
}

/// The number of instructions of `module`, the measure of its size.
pub(crate) fn instruction_count(module: &Module) -> usize {
    let mut n = 0;
    for stage in module.stages() {
        for (_, f) in stage.functions.iter() {
            for (_, b) in f.blocks.iter() {
                n += b.instructions.len();
            }
        }
    }
    n
}

/// Drops `module`, a large one with its functions split between two
/// threads (freeing a read-back module is a few percent of writing).
pub(crate) fn drop_module(mut module: Module) {
    if instruction_count(&module) < PARALLEL_INSTRUCTIONS || !two_cores() {
        return;
    }
    let mut fragment = module.fragment.functions.take_all();
    let vertex = module.vertex.functions.take_all();
    let second = fragment.split_off(fragment.len() / 2);
    join(
        move || drop((fragment, module)),
        move || drop((second, vertex)),
    );
}
