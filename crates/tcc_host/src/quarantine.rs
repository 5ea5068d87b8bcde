//! Poison executions (issue 42): an execution whose drives keep ending
//! abnormally — the process crashed or was killed mid-drive, the drive
//! panicked, or it failed on a store error — is retried after a growing
//! delay and, past `HostConfig::max_drive_attempts` such drives in a row,
//! failed with a host error naming the cause and never driven again, on
//! any node.
//!
//! The count that survives a crash is the store's
//! [`ExecutionRow::drive_attempts`] (a claim adds one, a normal end resets
//! it); this module keeps, per node, the causes it saw itself, so that the
//! quarantine error can name them.

use crate::store::ExecutionRow;
use std::collections::HashMap;
use std::sync::Mutex;

/// The retry delays of abnormal drive ends (`HostConfig::retry_backoff_ms`
/// and `max_retry_backoff_ms`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    /// The first retry's delay.
    pub(crate) base_ms: i64,
    /// The longest delay.
    pub(crate) max_ms: i64,
}

/// The last abnormal drive end this node saw for an execution.
#[derive(Debug, Clone)]
struct Failure {
    /// Abnormal ends in a row on this node.
    in_a_row: u32,
    /// What ended the last one.
    cause: String,
}

/// Abnormal drive ends on this node, by execution id.
#[derive(Debug, Default)]
pub(crate) struct Failures(Mutex<HashMap<String, Failure>>);

/// Most executions whose failure causes a node remembers (the oldest are
/// not evicted; a full table just stops naming new causes).
const MAX_REMEMBERED: usize = 10_000;

impl Failures {
    /// Records an abnormal end of a drive of `id`; returns the delay (ms)
    /// before the execution may be taken up again.
    pub(crate) fn record(&self, id: &str, cause: String, backoff: Backoff) -> i64 {
        let in_a_row = match self.0.lock() {
            Ok(mut m) => {
                if m.len() >= MAX_REMEMBERED && !m.contains_key(id) {
                    1
                } else {
                    let f = m.entry(id.to_string()).or_insert(Failure {
                        in_a_row: 0,
                        cause: String::new(),
                    });
                    f.in_a_row = f.in_a_row.saturating_add(1);
                    f.cause = cause;
                    f.in_a_row
                }
            }
            Err(_) => 1,
        };
        backoff_ms(in_a_row, backoff)
    }

    /// Forgets `id` (its drive ended normally, or it was quarantined).
    pub(crate) fn forget(&self, id: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(id);
        }
    }

    /// The host error that quarantines `row`: how many drives ended
    /// abnormally in a row and the last cause this node saw, if any.
    pub(crate) fn quarantine_error(&self, row: &ExecutionRow) -> String {
        let failed = row.drive_attempts.saturating_sub(1);
        let cause = self
            .0
            .lock()
            .ok()
            .and_then(|m| m.get(&row.id).map(|f| f.cause.clone()));
        let cause = cause.unwrap_or_else(|| {
            "the process driving it ended before the drive finished (crash, abort or kill)"
                .to_string()
        });
        format!(
            "host: quarantined: {failed} drives in a row ended abnormally, the last because {cause}; not retried"
        )
    }
}

/// The delay before the `n`-th retry in a row: the base doubled per
/// earlier failure, capped.
pub(crate) fn backoff_ms(n: u32, backoff: Backoff) -> i64 {
    let base = backoff.base_ms.max(1);
    let shift = n.saturating_sub(1).min(30);
    base.saturating_mul(1i64 << shift)
        .min(backoff.max_ms.max(base))
}

/// The message of a caught panic payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let cfg = Backoff {
            base_ms: 100,
            max_ms: 1_000,
        };
        let delays: Vec<i64> = (1..=6).map(|n| backoff_ms(n, cfg)).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1_000, 1_000]);
        assert_eq!(backoff_ms(u32::MAX, cfg), 1_000);
    }

    #[test]
    fn the_quarantine_error_names_the_cause_seen() {
        let cfg = Backoff {
            base_ms: 100,
            max_ms: 30_000,
        };
        let f = Failures::default();
        f.record("e1", "store error: database: boom".into(), cfg);
        let mut row = ExecutionRow {
            id: "e1".into(),
            artifact_hash: "h".into(),
            program_name: None,
            args: Default::default(),
            status: "runnable".into(),
            revision: 0,
            owner: None,
            lease_until: 0,
            cancel_requested: false,
            terminate_requested: false,
            result: None,
            message: None,
            error: None,
            pending: None,
            parent_id: None,
            parent_branch: None,
            created_ms: 0,
            updated_ms: 0,
            seq: 1,
            drive_attempts: 0,
            namespace: "default".into(),
            stored_traceparent: None,
        };
        row.drive_attempts = 6;
        let e = f.quarantine_error(&row);
        assert!(e.contains("5 drives in a row"), "{e}");
        assert!(e.contains("store error: database: boom"), "{e}");
        row.id = "e2".into();
        assert!(f.quarantine_error(&row).contains("crash, abort or kill"));
        f.forget("e1");
        row.id = "e1".into();
        assert!(f.quarantine_error(&row).contains("crash, abort or kill"));
    }
}
