//! The retention loop of a node: a thread that runs [`super::run_pass`]
//! every [`PERIOD`] (at once again when a pass stopped at its batch limit).
//! Every node of a PostgreSQL database runs one; taken batches keep them
//! apart (see the module docs of [`super`]).

use super::RetentionConfig;
use crate::host::Host;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Time between passes.
pub const PERIOD: Duration = Duration::from_secs(5);

/// A running retention loop; [`RetentionTask::stop`] ends it.
pub struct RetentionTask {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl RetentionTask {
    /// Starts the loop over `host`'s store (`None` for a store without
    /// retention).
    pub fn spawn(host: Arc<Host>, cfg: RetentionConfig) -> Option<RetentionTask> {
        super::store_of(&**host.store())?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("tcc-retention".into())
            .spawn(move || run(&host, &cfg, &flag))
            .ok()?;
        Some(RetentionTask {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the loop after its current batch.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(host: &Host, cfg: &RetentionConfig, stop: &AtomicBool) {
    // Batch by batch, so that a stop is seen between two.
    let one = RetentionConfig {
        max_batches: 1,
        ..cfg.clone()
    };
    while !stop.load(Ordering::SeqCst) {
        let mut batches = 0;
        while batches < cfg.max_batches && !stop.load(Ordering::SeqCst) {
            match super::run_pass(&**host.store(), &one, crate::ids::now_ms()) {
                Ok(r) if r.batches > 0 => {
                    batches += 1;
                    tracing::debug!(
                        deleted = r.deleted,
                        archived = r.archived,
                        "retention batch"
                    );
                }
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "retention: batch failed");
                    break;
                }
            }
        }
        if batches >= cfg.max_batches {
            continue;
        }
        let mut slept = Duration::ZERO;
        while slept < PERIOD && !stop.load(Ordering::SeqCst) {
            let step = Duration::from_millis(50).min(PERIOD - slept);
            std::thread::sleep(step);
            slept += step;
        }
    }
}
