//! Pause and resume (issue 35): an operator holds one execution, or every
//! execution of a program, so that nothing new starts running until it is
//! resumed.
//!
//! - The pause is stored: `executions.paused` for one execution, a row of
//!   `paused_programs` for a program (so it holds across nodes and
//!   restarts, and covers executions of the program started while it is
//!   paused: they are accepted and wait).
//! - A paused execution is not found as work (`Store::find_work`), cannot
//!   be claimed (`Store::claim`, the authoritative gate, in the same
//!   statement that takes the lease), and its timers do not count for
//!   `Store::next_timer_due` (the scheduler does not spin on them).
//! - A drive that was running when the pause committed stops at its next
//!   wait: it does not deliver a ready wake (`Host::drive` checks
//!   [`held`] when the program suspends). Steps and effects it runs
//!   before then are part of that drive.
//! - Resuming lifts the pause: timers that came due meanwhile are ready at
//!   once, and events received meanwhile are delivered.
//! - Operator resume of a failed execution (issue 33) is the same verb:
//!   `POST /v1/executions/{id}/resume` lifts a pause of the execution, and
//!   resumes a failed one from before its failed effect (both, for a
//!   paused execution that failed in the drive that was running). Resuming
//!   one execution does not lift its program's pause.
//!
//! [`api`]: the routes; [`rows`]: the stored state and the [`PauseStore`] trait the stores implement
//! (`store::sqlite::pause`, `store::pg::pause`).

use crate::store::StoreError;

pub mod api;
pub mod rows;

pub use rows::{PauseState, PauseStore, held, state, status_members, store_of};

fn unsupported() -> StoreError {
    StoreError::Unsupported("pause and resume".into())
}

/// Pauses or resumes one execution; counts it and wakes the scheduler when
/// it resumed one.
pub fn set_execution(host: &crate::host::Host, id: &str, paused: bool) -> Result<bool, StoreError> {
    let store = store_of(&**host.store()).ok_or_else(unsupported)?;
    let changed = store.set_execution_paused(id, paused, crate::ids::now_ms())?;
    if changed {
        crate::metrics::global().pause_change(if paused { "paused" } else { "resumed" });
        tracing::info!(execution_id = %id, paused, "execution pause changed by operator");
        if !paused {
            host.notify();
        }
    }
    Ok(changed)
}

/// Pauses or resumes a program; counts it and wakes the scheduler when it
/// resumed one.
pub fn set_program(host: &crate::host::Host, name: &str, paused: bool) -> Result<bool, StoreError> {
    let store = store_of(&**host.store()).ok_or_else(unsupported)?;
    let changed = store.set_program_paused(name, paused, crate::ids::now_ms())?;
    if changed {
        crate::metrics::global().pause_change(if paused {
            "program_paused"
        } else {
            "program_resumed"
        });
        tracing::info!(program = %name, paused, "program pause changed by operator");
        if !paused {
            host.notify();
        }
    }
    Ok(changed)
}
