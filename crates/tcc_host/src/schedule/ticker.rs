//! The schedule loop of a node: a thread that runs [`super::run_pass`]
//! every [`PERIOD`] and wakes the node's workers when it started something.
//! Every node runs one; the store's compare-and-set decides which node's
//! pass commits each tick (see the module docs of [`super`]).

use crate::host::Host;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Time between passes: a tick starts at most this late (plus the pass).
pub const PERIOD: Duration = Duration::from_millis(200);

/// A running schedule loop; [`Ticker::stop`] ends it.
pub struct Ticker {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Ticker {
    /// Starts the loop over `host`'s store (a store without schedules
    /// starts none: `None`).
    pub fn spawn(host: Arc<Host>) -> Option<Ticker> {
        super::store_of(&**host.store())?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("tcc-schedules".into())
            .spawn(move || run(&host, &flag))
            .ok()?;
        Some(Ticker {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the loop after its current pass.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(host: &Host, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        let telemetry = host.config().telemetry.as_deref();
        match super::run_pass_traced(&**host.store(), telemetry, crate::ids::now_ms()) {
            Ok(report) => {
                crate::metrics::global().schedule_pass(report.started, report.skipped);
                if report.started > 0 {
                    host.notify();
                }
            }
            Err(e) => tracing::warn!(error = %e, "schedules: pass failed"),
        }
        let mut slept = Duration::ZERO;
        while slept < PERIOD && !stop.load(Ordering::SeqCst) {
            let step = Duration::from_millis(50).min(PERIOD - slept);
            std::thread::sleep(step);
            slept += step;
        }
    }
}
