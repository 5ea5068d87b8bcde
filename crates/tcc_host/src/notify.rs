//! Wake-ups by topic, so that nobody polls the store while waiting: an
//! execution's end (`done:{id}`) wakes its result waiters, a worker task's
//! answer (`task:{idempotency key}`) wakes the host thread waiting for it,
//! and a new worker task ([`QUEUE_TOPIC`]) wakes the workers' long polls.
//!
//! A [`Hub`] wakes the waiters of this process at once. Across nodes
//! sharing a PostgreSQL database, [`crate::notify_pg`] bridges it with
//! `LISTEN`/`NOTIFY`: [`Hub::publish`] also hands the topic to the bridge,
//! which sends it as a notification, and every node's listener wakes its
//! own waiters with [`Hub::wake`]. A waiter always re-reads the store after
//! a wake-up (a topic says "look again", never what changed), and reads it
//! once before waiting, after subscribing, so that a wake-up between its
//! read and its wait is not lost.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The topic of new worker tasks.
pub const QUEUE_TOPIC: &str = "queue";

/// The topic of the end of execution `id`.
pub fn done_topic(id: &str) -> String {
    format!("done:{id}")
}

/// The topic of the answer (completed, failed, expired) of the worker task
/// with this idempotency key.
pub fn task_topic(idempotency_key: &str) -> String {
    format!("task:{idempotency_key}")
}

/// One topic's waiters: blocking threads wait on the generation counter,
/// async tasks on the [`tokio::sync::Notify`].
#[derive(Default)]
pub struct Signal {
    generation: Mutex<u64>,
    cond: Condvar,
    notify: tokio::sync::Notify,
}

impl Signal {
    fn wake(&self) {
        if let Ok(mut g) = self.generation.lock() {
            *g = g.wrapping_add(1);
        }
        self.cond.notify_all();
        self.notify.notify_waiters();
    }

    /// The number of wake-ups so far (for [`Signal::wait_past`]).
    pub fn generation(&self) -> u64 {
        self.generation.lock().map(|g| *g).unwrap_or(0)
    }

    /// Blocks until a wake-up after `generation` was read, or `timeout`;
    /// returns whether there was one.
    pub fn wait_past(&self, generation: u64, timeout: Duration) -> bool {
        let Ok(g) = self.generation.lock() else {
            return false;
        };
        match self
            .cond
            .wait_timeout_while(g, timeout, |g| *g == generation)
        {
            Ok((g, _)) => *g != generation,
            Err(_) => false,
        }
    }

    /// A future that completes at the next wake-up. Create it (and
    /// `enable` it, or poll it once) before reading the store.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }
}

/// The process's topics and the bridge to other nodes.
pub struct Hub {
    topics: Mutex<HashMap<String, Arc<Signal>>>,
    remote: Mutex<Option<Sender<String>>>,
    closed: AtomicBool,
    /// A random name of this hub, which its notifications to other nodes
    /// carry ([`Hub::origin_line`]) so that its own listener skips them:
    /// their waiters here were woken at once.
    origin: String,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub {
            topics: Mutex::default(),
            remote: Mutex::default(),
            closed: AtomicBool::default(),
            origin: crate::ids::random_id(""),
        }
    }
}

/// How the first line of a notification's payload that names the hub
/// that sent it begins ([`Hub::origin_line`]).
pub const ORIGIN_PREFIX: &str = "from:";

/// A subscription to one topic; the topic is forgotten when its last
/// subscription is dropped.
pub struct Subscription {
    hub: Arc<Hub>,
    topic: String,
    signal: Arc<Signal>,
}

impl Subscription {
    /// The topic's signal.
    pub fn signal(&self) -> &Signal {
        &self.signal
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Ok(mut topics) = self.hub.topics.lock() {
            // Ours and the map's are the last two references.
            if Arc::strong_count(&self.signal) <= 2 {
                topics.remove(&self.topic);
            }
        }
    }
}

impl Hub {
    /// A hub with no bridge (one node).
    pub fn new() -> Arc<Hub> {
        Arc::new(Hub::default())
    }

    /// Subscribes to `topic`.
    pub fn subscribe(self: &Arc<Self>, topic: &str) -> Subscription {
        let signal = match self.topics.lock() {
            Ok(mut topics) => topics.entry(topic.to_string()).or_default().clone(),
            Err(_) => Arc::new(Signal::default()),
        };
        Subscription {
            hub: self.clone(),
            topic: topic.to_string(),
            signal,
        }
    }

    /// The first line of the payload of every notification this hub's
    /// node sends: [`ORIGIN_PREFIX`] and the hub's random name. A
    /// listener that reads its own skips the payload (its topics were
    /// woken here when published); other nodes wake the lines after it.
    pub fn origin_line(&self) -> String {
        format!("{ORIGIN_PREFIX}{}", self.origin)
    }

    /// Wakes this process's waiters of `topic`.
    pub fn wake(&self, topic: &str) {
        let signal = self.topics.lock().ok().and_then(|t| t.get(topic).cloned());
        if let Some(s) = signal {
            s.wake();
        }
    }

    /// Wakes every waiter of this process (after the bridge lost its
    /// connection: notifications may have been missed).
    pub fn wake_all(&self) {
        let all: Vec<Arc<Signal>> = self
            .topics
            .lock()
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default();
        for s in all {
            s.wake();
        }
    }

    /// Wakes the waiters of `topic` here and, through the bridge, on every
    /// other node.
    pub fn publish(&self, topic: &str) {
        self.wake(topic);
        if let Ok(remote) = self.remote.lock()
            && let Some(tx) = remote.as_ref()
        {
            let _ = tx.send(topic.to_string());
        }
    }

    /// Connects the bridge: every published topic is also sent to `tx`.
    pub fn set_remote(&self, tx: Sender<String>) {
        if let Ok(mut remote) = self.remote.lock() {
            *remote = Some(tx);
        }
    }

    /// Marks the hub closed (the host is shutting down): waiters that
    /// check [`Hub::is_closed`] give up, and every waiter is woken. The
    /// bridge stays connected; it ends when the hub is dropped.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// Opens the hub again after [`Hub::close`] (a host spawned again).
    pub fn reopen(&self) {
        self.closed.store(false, Ordering::SeqCst);
    }

    /// Whether [`Hub::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_reaches_blocking_waiters_and_topics_are_forgotten() {
        let hub = Hub::new();
        let sub = hub.subscribe("done:a");
        let g = sub.signal().generation();
        let h = hub.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            h.publish("done:b");
            h.publish("done:a");
        });
        assert!(sub.signal().wait_past(g, Duration::from_secs(5)));
        t.join().unwrap();
        let g = sub.signal().generation();
        assert!(!sub.signal().wait_past(g, Duration::from_millis(10)));
        drop(sub);
        assert!(hub.topics.lock().unwrap().is_empty());
    }

    #[test]
    fn published_topics_go_to_the_bridge() {
        let hub = Hub::new();
        let (tx, rx) = std::sync::mpsc::channel();
        hub.set_remote(tx);
        hub.publish("queue");
        assert_eq!(rx.recv().unwrap(), "queue");
        hub.close();
        assert!(hub.is_closed());
        hub.reopen();
        assert!(!hub.is_closed());
        drop(hub);
        assert!(rx.recv().is_err(), "the bridge ends with the hub");
    }
}
