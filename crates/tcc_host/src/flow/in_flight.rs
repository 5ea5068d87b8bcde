//! Waiting for a node-local take in flight: a share take ([`super::share`])
//! or a slot reservation ([`super::allot`]) that another admission of this
//! node has started and will announce on a condition variable.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Waits, at most `limit`, while `busy` holds of the state behind `state`
/// (woken by `done`); returns whether it held when called. A poisoned lock
/// counts as nothing in flight, so the caller takes the store's way.
pub(super) fn wait_while<S>(
    state: &Mutex<S>,
    done: &Condvar,
    limit: Duration,
    busy: impl Fn(&S) -> bool,
) -> bool {
    let Ok(guard) = state.lock() else {
        return false;
    };
    if !busy(&guard) {
        return false;
    }
    let _ = done.wait_timeout_while(guard, limit, |st| busy(st));
    true
}
