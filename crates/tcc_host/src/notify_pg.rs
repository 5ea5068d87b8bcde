//! The [`Hub`]'s bridge across nodes sharing a PostgreSQL database:
//! `LISTEN`/`NOTIFY` on one channel per schema.
//!
//! - A sender thread takes the topics this node publishes, joins those
//!   waiting at that moment with newlines (topics never hold a control
//!   character: execution ids may not, and every topic starts with a fixed
//!   word) into payloads of at most [`PAYLOAD_MAX`] bytes and sends each
//!   with `SELECT pg_notify(channel, payload)` on its own connection
//!   (autocommit: delivered at once; a statement prepared once per
//!   connection, one round trip each). A node sends a notification only
//!   after the commit it announces, so a listener that re-reads the store
//!   sees it. That session runs with `synchronous_commit = off`: a
//!   transaction that notifies gets a transaction id, and its commit would
//!   otherwise wait for a WAL flush, though a notification is only a hint
//!   (a listener that loses its connection, as a server crash makes it,
//!   wakes every waiter).
//! - A listener thread holds a connection that ran `LISTEN channel` and
//!   wakes this node's waiters of every topic it receives. Every payload
//!   begins with its node's origin line ([`Hub::origin_line`]): a node
//!   skips its own notifications, whose topics it woke when it published
//!   them (a second wake-up made a worker's poll look again for nothing).
//! - A lost connection is re-opened (backing off up to 2 s); after the
//!   listener re-connects it wakes every waiter, since notifications sent
//!   meanwhile are lost. Waiters re-read the store when woken, so a
//!   spurious wake-up costs one read.

use crate::notify::{Hub, ORIGIN_PREFIX};
use crate::store::StoreError;
use crate::store::pg::url::Target;
use postgres::fallible_iterator::FallibleIterator;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Largest payload sent (PostgreSQL's limit is 8000 bytes).
pub const PAYLOAD_MAX: usize = 7900;

/// The channel of the database's schema (`irkit_tcc`, or
/// `irkit_tcc_{schema}` when the URL names one; a name longer than
/// PostgreSQL's 63-byte identifiers ends in a hash of it instead).
pub fn channel_name(schema: Option<&str>) -> String {
    let Some(s) = schema else {
        return "irkit_tcc".into();
    };
    let name = format!("irkit_tcc_{s}");
    if name.len() <= 63 {
        return name;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("irkit_tcc_{}_{h:016x}", &s[..30])
}

/// Connects `hub` to the other nodes of the database at `url`: starts the
/// sender and listener threads (they end when the hub is dropped). Fails
/// when the URL is not a valid PostgreSQL URL or the first connections
/// cannot be opened.
pub fn attach(hub: &Arc<Hub>, url: &str) -> Result<(), StoreError> {
    let target = crate::store::pg::url::parse_url(url)?;
    let channel = channel_name(target.schema.as_deref());
    let mut send_target = target.clone();
    crate::store::pg::add_session_option(&mut send_target, "-c synchronous_commit=off");
    let sender = send_target.connect()?;
    let mut listener = target.connect()?;
    listener.batch_execute(&format!("LISTEN \"{channel}\""))?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    hub.set_remote(tx);
    let (h1, h2) = (Arc::downgrade(hub), Arc::downgrade(hub));
    let (c1, c2) = (channel.clone(), channel);
    let (o1, o2) = (hub.origin_line(), hub.origin_line());
    std::thread::Builder::new()
        .name("tcc-notify-send".into())
        .spawn(move || send_loop(&h1, rx, sender, &send_target, &c1, &o1))
        .map_err(|e| StoreError::db(format!("cannot start the notification sender: {e}")))?;
    std::thread::Builder::new()
        .name("tcc-notify-listen".into())
        .spawn(move || listen_loop(&h2, listener, &target, &c2, &o2))
        .map_err(|e| StoreError::db(format!("cannot start the notification listener: {e}")))?;
    Ok(())
}

/// Re-connects after `attempt` failures, backing off (50 ms doubling, at
/// most 2 s); `None` when the hub was dropped meanwhile.
fn reconnect(hub: &Weak<Hub>, target: &Target, attempt: &mut u32) -> Option<postgres::Client> {
    while hub.strong_count() > 0 {
        let pause = Duration::from_millis(50u64 << (*attempt).min(5)).min(Duration::from_secs(2));
        std::thread::sleep(pause);
        *attempt = attempt.saturating_add(1);
        match target.connect() {
            Ok(c) => return Some(c),
            Err(e) => tracing::warn!(error = %e, "notification bridge: re-connecting failed"),
        }
    }
    None
}

fn send_loop(
    hub: &Weak<Hub>,
    rx: Receiver<String>,
    client: postgres::Client,
    target: &Target,
    channel: &str,
    origin: &str,
) {
    let mut failures = 0u32;
    let mut sender = Sender::new(client);
    loop {
        let first = match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(t) => t,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(_) => return,
        };
        // Each payload: the origin line, then topics.
        let mut payloads = vec![format!("{origin}\n{first}")];
        while let Ok(t) = rx.try_recv() {
            let last = payloads.last_mut().map(|p| p.len() + 1 + t.len());
            match (last, payloads.last_mut()) {
                (Some(n), Some(p)) if n <= PAYLOAD_MAX => {
                    p.push('\n');
                    p.push_str(&t);
                }
                _ => payloads.push(format!("{origin}\n{t}")),
            }
        }
        for p in payloads {
            if p.len() > PAYLOAD_MAX {
                // A single topic this long cannot be sent; its waiters
                // re-read the store at their deadline.
                tracing::warn!(
                    bytes = p.len(),
                    "notification bridge: topic too long to send"
                );
                continue;
            }
            if let Err(e) = sender.send(channel, &p) {
                tracing::warn!(error = %e, "notification bridge: sending failed");
                match reconnect(hub, target, &mut failures) {
                    Some(c) => sender = Sender::new(c),
                    None => return,
                }
                let _ = sender.send(channel, &p);
            } else {
                failures = 0;
            }
        }
    }
}

/// The sender's connection and its `pg_notify` statement (prepared on
/// first use).
struct Sender {
    client: postgres::Client,
    notify: Option<postgres::Statement>,
}

impl Sender {
    fn new(client: postgres::Client) -> Sender {
        Sender {
            client,
            notify: None,
        }
    }

    fn send(&mut self, channel: &str, payload: &str) -> Result<(), postgres::Error> {
        let st = match &self.notify {
            Some(st) => st.clone(),
            None => {
                let st = self.client.prepare("SELECT pg_notify($1, $2)")?;
                self.notify = Some(st.clone());
                st
            }
        };
        self.client.execute(&st, &[&channel, &payload])?;
        Ok(())
    }
}

fn listen_loop(
    hub: &Weak<Hub>,
    mut client: postgres::Client,
    target: &Target,
    channel: &str,
    origin: &str,
) {
    let mut failures = 0u32;
    loop {
        let mut lost = None;
        {
            let Some(hub) = hub.upgrade() else {
                return;
            };
            let mut notifications = client.notifications();
            let mut it = notifications.timeout_iter(Duration::from_millis(500));
            loop {
                match it.next() {
                    Ok(Some(n)) => {
                        for topic in payload_topics(n.payload(), origin) {
                            hub.wake(topic);
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        lost = Some(e);
                        break;
                    }
                }
            }
        }
        let Some(e) = lost else {
            if client.is_closed() {
                tracing::warn!("notification bridge: listener connection closed");
            } else {
                continue;
            }
            match reconnect_listener(hub, target, channel, &mut failures) {
                Some(c) => client = c,
                None => return,
            }
            continue;
        };
        tracing::warn!(error = %e, "notification bridge: listener connection lost");
        match reconnect_listener(hub, target, channel, &mut failures) {
            Some(c) => client = c,
            None => return,
        }
    }
}

/// The topics of a notification's payload to wake on the node whose hub
/// has origin line `origin`: none when it sent the payload itself, else
/// every line but an origin line (a payload without one, from an older
/// node, is all topics).
fn payload_topics<'a>(payload: &'a str, origin: &str) -> impl Iterator<Item = &'a str> {
    let mut lines = payload.split('\n').peekable();
    let own = match lines.peek() {
        Some(first) if first.starts_with(ORIGIN_PREFIX) => {
            let own = *first == origin;
            lines.next();
            own
        }
        _ => false,
    };
    lines.filter(move |_| !own)
}

/// Re-opens the listener's connection, runs `LISTEN` again, and wakes
/// every waiter of this node (notifications may have been missed).
fn reconnect_listener(
    hub: &Weak<Hub>,
    target: &Target,
    channel: &str,
    failures: &mut u32,
) -> Option<postgres::Client> {
    loop {
        let mut c = reconnect(hub, target, failures)?;
        if c.batch_execute(&format!("LISTEN \"{channel}\"")).is_ok() {
            *failures = 0;
            if let Some(h) = hub.upgrade() {
                h.wake_all();
            }
            return Some(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{channel_name, payload_topics};

    #[test]
    fn a_node_skips_its_own_notifications() {
        let topics = |p| payload_topics(p, "from:me").collect::<Vec<_>>();
        assert!(topics("from:me\nqueue\ntask:e:k").is_empty());
        assert_eq!(topics("from:you\nqueue\ntask:e:k"), ["queue", "task:e:k"]);
        assert_eq!(topics("queue\ndone:e"), ["queue", "done:e"]);
    }

    #[test]
    fn channel_names_fit_an_identifier() {
        assert_eq!(channel_name(None), "irkit_tcc");
        assert_eq!(channel_name(Some("t_1")), "irkit_tcc_t_1");
        let long = "s".repeat(80);
        let c = channel_name(Some(&long));
        assert!(c.len() <= 63, "{c}");
        assert_ne!(c, channel_name(Some(&"s".repeat(81))));
    }
}
