//! A node's reserved slots ("allotments") of concurrency limits far from
//! full: the node takes a few slots of a limit from the store at once
//! ([`crate::flow::FlowStore::reserve`], one durable transaction) and lends
//! them to its own drives in memory, so that a drive under a limit it is
//! far from reaching costs no store write (issue 35: under a limit,
//! throughput stays what it is without one).
//!
//! - The reserved slots are ordinary slot rows (holder `node/OWNER/N`) with
//!   this node as owner: they count against the limit on every node, are
//!   renewed by this node's heartbeat with its other slots, and expire with
//!   their lease when the node dies. So the limit is never exceeded.
//! - A reservation is taken only for a concurrency limit (with or without
//!   a rate: a reserved slot takes no token; a drive lent one takes a
//!   token of its node's share, [`super::share`]) of at least
//!   [`MIN_LIMIT`], with nobody queued, and only while the slots
//!   held with it stay within half the limit ([`crate::flow::rows::may_reserve`]);
//!   its size is [`size`]. A limit near full is served slot by slot by
//!   the store as before (FIFO queue included).
//! - The node re-reads the limits every [`CHECK_MS`] while it holds a
//!   reservation. It *closes* one (stops lending, gives back the unlent
//!   slots in one transaction, waking as many waiters) when the limit
//!   gained waiters, fell below [`MIN_LIMIT`] or was deleted,
//!   when one of its own drives had to queue, when it lent nothing for
//!   [`IDLE_MS`], and when the host stops. A slot lent when its reservation
//!   closed is given back by the drive's release. So a queue that forms on
//!   another node waits at most about [`CHECK_MS`] (its own retry period)
//!   for the reserved slots to come back, and the node lends nothing new
//!   past that.
//! - Lending stops when the reservation was not renewed within half a
//!   lease (a heartbeat that fails): the store path then decides.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Smallest concurrency limit a node reserves slots of.
pub const MIN_LIMIT: i64 = 16;
/// Most slots reserved at once (a node reserves again when it lent them
/// all and the limit is still far from full).
pub const MAX_SIZE: i64 = 32;
/// How often a node holding a reservation reads the limits' usage.
pub const CHECK_MS: u64 = 250;
/// A reservation that lent nothing for this long is given back.
pub const IDLE_MS: u64 = 1_000;

/// The slots a node reserves at once of a limit of `max`: an eighth of it,
/// at most [`MAX_SIZE`].
pub fn size(max: i64) -> i64 {
    (max / 8).min(MAX_SIZE)
}

/// One limit's reservation.
struct Allot {
    /// Reserved slots not lent.
    free: Vec<String>,
    /// Holder (execution id) → the slot lent to it.
    lent: HashMap<String, String>,
    /// Lending (false: closed; the lent slots go back one by one).
    open: bool,
    /// A reservation of more slots is in flight.
    reserving: bool,
    /// Last lending (or the reservation).
    last_used: Instant,
    /// Lending stops after this unless the slots are renewed.
    fresh_until: Instant,
}

/// What a node lends: reservations by scope.
#[derive(Default)]
pub struct Allotments {
    state: Mutex<State>,
    /// Signalled when a reservation ends (the drives that waited for it
    /// try its slots).
    reserved: Condvar,
}

#[derive(Default)]
struct State {
    scopes: HashMap<String, Allot>,
    /// Scopes whose reservation the store refused, and when.
    refused: HashMap<String, Instant>,
    next_name: u64,
    checked: Option<Instant>,
}

/// Slots to give back: scope and holder names.
pub type GiveBack = Vec<(String, Vec<String>)>;

impl Allotments {
    /// Lends `holder` a reserved slot in every one of `scopes`, when each
    /// has one free (all or none).
    pub fn lend(&self, scopes: &[String], holder: &str) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        let now = Instant::now();
        let ready = scopes.iter().all(|s| {
            st.scopes.get(s).is_some_and(|a| {
                a.open && !a.free.is_empty() && now < a.fresh_until && !a.lent.contains_key(holder)
            })
        });
        if !ready || scopes.is_empty() {
            return false;
        }
        for s in scopes {
            if let Some(a) = st.scopes.get_mut(s)
                && let Some(slot) = a.free.pop()
            {
                a.lent.insert(holder.to_string(), slot);
                a.last_used = now;
            }
        }
        true
    }

    /// Starts a reservation of `n` slots of `scope` for `owner` when it has
    /// none open with free slots, none in flight, and was not refused
    /// within [`CHECK_MS`]: the new slots' holder names.
    pub fn begin_reserve(&self, scope: &str, owner: &str, n: i64) -> Option<Vec<String>> {
        let mut st = self.state.lock().ok()?;
        if n < 1 {
            return None;
        }
        if st
            .refused
            .get(scope)
            .is_some_and(|at| at.elapsed() < Duration::from_millis(CHECK_MS))
        {
            return None;
        }
        if let Some(a) = st.scopes.get(scope)
            && (a.reserving || !a.open || !a.free.is_empty())
        {
            return None;
        }
        let first = st.next_name;
        st.next_name += n as u64;
        let names = (first..first + n as u64)
            .map(|i| format!("node/{owner}/{i}"))
            .collect();
        let now = Instant::now();
        st.scopes
            .entry(scope.to_string())
            .or_insert_with(|| Allot {
                free: Vec::new(),
                lent: HashMap::new(),
                open: true,
                reserving: false,
                last_used: now,
                fresh_until: now,
            })
            .reserving = true;
        Some(names)
    }

    /// Ends a reservation begun by [`Self::begin_reserve`]: `taken` says
    /// whether the store took the slots, valid for `lease_ms` from `asked`
    /// (an instant taken before the store's clock was read for their
    /// expiry). The slots are lent only until half of that has passed
    /// since `asked`: a write that waited (a lock, a queue) shortens their
    /// use, never lends a slot whose row may have expired.
    pub fn end_reserve(
        &self,
        scope: &str,
        names: Vec<String>,
        taken: bool,
        asked: Instant,
        lease_ms: i64,
    ) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let now = Instant::now();
        if !taken {
            st.refused.insert(scope.to_string(), now);
        }
        if let Some(a) = st.scopes.get_mut(scope) {
            a.reserving = false;
            if taken {
                let fresh = lend_until(asked, lease_ms);
                // The slots reserved before keep their own renewal time.
                a.fresh_until = match a.free.is_empty() && a.lent.is_empty() {
                    true => fresh,
                    false => a.fresh_until.min(fresh),
                };
                a.free.extend(names);
                a.last_used = now;
                a.open = true;
            }
        }
        drop(st);
        self.reserved.notify_all();
    }

    /// Waits (at most `limit`) for the reservation of `scope` in flight, if
    /// one is: whether one was. A drive that finds its node's reserved
    /// slots all lent while another drive is reserving more waits for
    /// those rather than asking the store for a slot of its own (a
    /// transaction on the same row, queued behind that reservation).
    pub fn await_reserve(&self, scope: &str, limit: Duration) -> bool {
        super::in_flight::wait_while(&self.state, &self.reserved, limit, |st: &State| {
            st.scopes.get(scope).is_some_and(|a| a.reserving)
        })
    }

    /// Takes `holder`'s lent slots in `scopes` back: the scopes it was lent
    /// in (the others are the store's), and the slots to give back to the
    /// store (those of closed reservations).
    pub fn take_back(&self, scopes: &[String], holder: &str) -> (Vec<String>, GiveBack) {
        let Ok(mut st) = self.state.lock() else {
            return (Vec::new(), Vec::new());
        };
        let (mut lent_in, mut give) = (Vec::new(), Vec::new());
        for s in scopes {
            if let Some(a) = st.scopes.get_mut(s)
                && let Some(slot) = a.lent.remove(holder)
            {
                lent_in.push(s.clone());
                match a.open {
                    true => a.free.push(slot),
                    false => give.push((s.clone(), vec![slot])),
                }
            }
        }
        st.scopes
            .retain(|_, a| a.open || a.reserving || !a.lent.is_empty());
        (lent_in, give)
    }

    /// Closes the reservations of `scopes`: their free slots, to give back.
    pub fn close(&self, scopes: &[String]) -> GiveBack {
        let Ok(mut st) = self.state.lock() else {
            return Vec::new();
        };
        let mut give = Vec::new();
        for s in scopes {
            if let Some(a) = st.scopes.get_mut(s) {
                a.open = false;
                if !a.free.is_empty() {
                    give.push((s.clone(), std::mem::take(&mut a.free)));
                }
            }
        }
        st.scopes
            .retain(|_, a| a.open || a.reserving || !a.lent.is_empty());
        give
    }

    /// Closes every reservation (the host stops).
    pub fn close_all(&self) -> GiveBack {
        let scopes: Vec<String> = match self.state.lock() {
            Ok(st) => st.scopes.keys().cloned().collect(),
            Err(_) => return Vec::new(),
        };
        self.close(&scopes)
    }

    /// Whether a check of the reservations is due (one is held and the
    /// last check is [`CHECK_MS`] old).
    pub fn check_due(&self) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        !st.scopes.is_empty() && check_now(&mut st.checked)
    }

    /// The scopes whose reservation should close, given `keep(scope)`
    /// (whether the limit still allows one: present, no waiter, at least
    /// [`MIN_LIMIT`])
    /// and idleness.
    pub fn to_close(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        let idle = Duration::from_millis(IDLE_MS);
        st.scopes
            .iter()
            .filter(|(s, a)| {
                a.open
                    && !a.reserving
                    && (!keep(s) || (a.lent.is_empty() && a.last_used.elapsed() >= idle))
            })
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// The heartbeat renewed this node's slots until `lease_ms` from
    /// `asked` (an instant taken before the store's clock was read for the
    /// new expiry): they are lent until half of that has passed.
    pub fn renewed(&self, asked: Instant, lease_ms: i64) {
        if let Ok(mut st) = self.state.lock() {
            let fresh = lend_until(asked, lease_ms);
            for a in st.scopes.values_mut() {
                a.fresh_until = fresh;
            }
        }
    }

    /// Whether this node holds reserved slots (free or lent) or has a
    /// reservation in flight: then its heartbeat renews its slots.
    pub fn holds_any(&self) -> bool {
        self.state.lock().map_or(true, |st| !st.scopes.is_empty())
    }

    /// Reserved slots lent now, by scope (those with none left out): what
    /// this node runs under each limit with its own slots.
    pub fn lent(&self) -> Vec<(String, i64)> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        st.scopes
            .iter()
            .filter(|(_, a)| !a.lent.is_empty())
            .map(|(s, a)| (s.clone(), a.lent.len() as i64))
            .collect()
    }

    /// Reserved slots now (free and lent), by scope (for tests and logs).
    pub fn held(&self) -> Vec<(String, usize, usize)> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        let mut out: Vec<_> = st
            .scopes
            .iter()
            .map(|(s, a)| (s.clone(), a.free.len(), a.lent.len()))
            .collect();
        out.sort();
        out
    }
}

/// Until when slots reserved or renewed for `lease_ms` from `asked` are
/// lent: half the lease, so that a slot is never lent while its row may
/// expire.
fn lend_until(asked: Instant, lease_ms: i64) -> Instant {
    asked + Duration::from_millis((lease_ms / 2).max(0) as u64)
}

/// Whether a periodic check is due (none ran yet, or the last is
/// [`CHECK_MS`] old), marking it done now when it is.
pub(super) fn check_now(checked: &mut Option<Instant>) -> bool {
    let due = checked.is_none_or(|at| at.elapsed() >= Duration::from_millis(CHECK_MS));
    if due {
        *checked = Some(Instant::now());
    }
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lends_reserved_slots_and_closes_them() {
        let a = Allotments::default();
        let scopes = vec!["program:p".to_string()];
        assert!(!a.lend(&scopes, "e1"), "nothing reserved");
        let names = a.begin_reserve("program:p", "n1", 2).unwrap();
        assert_eq!(names, vec!["node/n1/0", "node/n1/1"]);
        assert!(a.begin_reserve("program:p", "n1", 2).is_none(), "in flight");
        a.end_reserve("program:p", names, true, Instant::now(), 10_000);
        assert!(a.lend(&scopes, "e1"));
        assert!(a.lend(&scopes, "e2"));
        assert!(!a.lend(&scopes, "e3"), "both lent");
        let (lent, give) = a.take_back(&scopes, "e1");
        assert_eq!((lent, give), (scopes.clone(), Vec::new()));
        // Closing gives back the free slot; the lent one goes at release.
        let give = a.close(&scopes);
        assert_eq!(give.len(), 1);
        assert!(!a.lend(&scopes, "e3"), "closed");
        let (lent, give) = a.take_back(&scopes, "e2");
        assert_eq!(lent, scopes);
        assert_eq!(give.len(), 1);
        assert!(a.held().is_empty());
        // A refused reservation is not asked again at once.
        let names = a.begin_reserve("program:q", "n1", 2).unwrap();
        a.end_reserve("program:q", names, false, Instant::now(), 10_000);
        assert!(a.begin_reserve("program:q", "n1", 2).is_none());
        assert_eq!(size(1000), 32);
        assert_eq!(size(16), 2);
    }

    #[test]
    fn a_reservation_not_renewed_lends_nothing() {
        let a = Allotments::default();
        let names = a.begin_reserve("program:p", "n1", 2).unwrap();
        a.end_reserve("program:p", names, true, Instant::now(), 0);
        assert!(!a.lend(&["program:p".to_string()], "e1"));
        a.renewed(Instant::now(), 10_000);
        assert!(a.lend(&["program:p".to_string()], "e1"));
    }

    /// The slots' freshness runs from before the store write: a
    /// reservation or a renewal whose write took longer than half a lease
    /// lends nothing, since the rows may expire while a drive holds one.
    #[test]
    fn a_slow_write_shortens_lending_from_when_it_was_asked() {
        let lease_ms = 200;
        let a = Allotments::default();
        let scopes = ["program:p".to_string()];
        let asked = Instant::now();
        let names = a.begin_reserve("program:p", "n1", 2).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        a.end_reserve("program:p", names, true, asked, lease_ms);
        assert!(
            !a.lend(&scopes, "e1"),
            "asked 150 ms ago: past half a lease"
        );
        a.renewed(Instant::now(), lease_ms);
        assert!(a.lend(&scopes, "e1"), "renewed just now");
        let asked = Instant::now();
        std::thread::sleep(Duration::from_millis(150));
        a.renewed(asked, lease_ms);
        assert!(!a.lend(&scopes, "e2"), "a renewal asked 150 ms ago");
    }
}
