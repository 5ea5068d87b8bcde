//! A node's token shares of rate limits: the node takes a few tokens of a
//! rate limit's bucket from the store at once
//! ([`crate::flow::FlowStore::take_share`], one statement) and admits its
//! own drives and provider calls with them in memory until they are spent,
//! so that work under a rate limit it does not reach costs no store write
//! per admission (issue 35: under a limit, throughput stays what it is
//! without one). The concurrency limits' counterpart is [`super::allot`].
//!
//! - Only for a rate limit without `max_concurrent` or with one of at least
//!   [`super::allot::MIN_LIMIT`] ([`crate::flow::rows::may_share`]: then
//!   an admission takes a reserved slot of [`super::allot`] as well), and
//!   only while nobody waits in its queue (the store refuses a share then:
//!   it would overtake the queue).
//! - The rate is never exceeded across nodes: a share is taken out of the
//!   store's tokens, and while it is unexpired the store's bucket refills
//!   only up to the burst less every node's shares
//!   ([`crate::flow::rows::take_share`]); so the store's tokens and all the
//!   shares together never hold more than the burst, and tokens come in at
//!   the rate only.
//! - A share expires in the store [`TTL_MS`] after it was taken; the node
//!   admits with it only during the first half of that ([`USE_MS`], timed
//!   from before the statement), so a share another node already counts as
//!   expired is never used (clocks may differ by up to half of it). A node
//!   SIGKILLed holding tokens loses them: they count against the bucket
//!   until the share expires.
//! - The unused tokens of a share go back with the next take, or when the
//!   node closes the share: the limit gained waiters, changed or went
//!   (checked every [`super::allot::CHECK_MS`] while a share is held), one
//!   of the node's own admissions had to queue, the share was idle for
//!   [`super::allot::IDLE_MS`], or the host stops. Tokens given back while
//!   a queue waits wake as many head waiters.
//! - Size ([`size`]): a quarter of a second of the rate, at most a quarter
//!   of the burst and at most [`MAX_SIZE`], at least 1.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a share lives in the store.
pub const TTL_MS: i64 = 2_000;
/// How long a node admits with a share, from before it asked (half of
/// [`TTL_MS`]).
pub const USE_MS: u64 = 1_000;
/// Most tokens taken at once.
pub const MAX_SIZE: i64 = 64;

/// The tokens a node asks for at once from a limit of `rate` per second
/// and `burst`.
pub fn size(rate: f64, burst: i64) -> i64 {
    let by_rate = (rate / 4.0).ceil() as i64;
    by_rate.min(burst / 4).clamp(1, MAX_SIZE)
}

/// One limit's share.
struct Share {
    /// Tokens left to admit with.
    left: i64,
    /// Admits nothing from then on.
    use_until: Instant,
    /// A take is in flight.
    taking: bool,
    /// Last admission (or take).
    last_used: Instant,
}

/// What a node admits with: shares by scope.
#[derive(Default)]
pub struct Shares {
    state: Mutex<State>,
    /// Signalled when a take ends (the admissions that waited for it try
    /// its tokens).
    took: Condvar,
}

#[derive(Default)]
struct State {
    scopes: HashMap<String, Share>,
    /// Scopes whose take the store refused (no tokens, or a queue), and
    /// when: not asked again within [`super::allot::CHECK_MS`].
    refused: HashMap<String, Instant>,
    /// (scope, holder) admitted with a share, how many times at once
    /// (parallel effects of one execution): nothing to give back.
    admitted: HashMap<(String, String), u32>,
    /// The last check of the shares' limits.
    checked: Option<Instant>,
}

impl Shares {
    /// Whether every one of `scopes` has a usable token now.
    pub fn ready(&self, scopes: &[String]) -> bool {
        let Ok(st) = self.state.lock() else {
            return false;
        };
        let now = Instant::now();
        scopes.iter().all(|s| {
            st.scopes
                .get(s)
                .is_some_and(|a| a.left > 0 && now < a.use_until)
        })
    }

    /// Admits `holder` with a token of every one of `scopes` (all or none).
    pub fn admit(&self, scopes: &[String], holder: &str) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        let now = Instant::now();
        let ready = scopes.iter().all(|s| {
            st.scopes
                .get(s)
                .is_some_and(|a| a.left > 0 && now < a.use_until)
        });
        if !ready {
            return false;
        }
        for s in scopes {
            if let Some(a) = st.scopes.get_mut(s) {
                a.left -= 1;
                a.last_used = now;
            }
            *st.admitted
                .entry((s.clone(), holder.to_string()))
                .or_default() += 1;
        }
        true
    }

    /// Starts a take of `scope`'s share unless one is in flight, the
    /// share still has usable tokens, or the store refused one within
    /// [`super::allot::CHECK_MS`]: the unused tokens to give back with it
    /// (they are no longer used here) and when the take starts.
    pub fn begin_take(&self, scope: &str) -> Option<(i64, Instant)> {
        let mut st = self.state.lock().ok()?;
        if st
            .refused
            .get(scope)
            .is_some_and(|at| at.elapsed() < Duration::from_millis(super::allot::CHECK_MS))
        {
            return None;
        }
        let now = Instant::now();
        let share = st.scopes.entry(scope.to_string()).or_insert(Share {
            left: 0,
            use_until: now,
            taking: false,
            last_used: now,
        });
        if share.taking || (share.left > 0 && now < share.use_until) {
            return None;
        }
        share.taking = true;
        let unused = std::mem::take(&mut share.left);
        Some((unused, now))
    }

    /// Ends a take begun at `started`: `granted` tokens (0: refused).
    pub fn end_take(&self, scope: &str, granted: i64, started: Instant) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if granted <= 0 {
            st.refused.insert(scope.to_string(), Instant::now());
        }
        if let Some(a) = st.scopes.get_mut(scope) {
            a.taking = false;
            a.left = granted.max(0);
            a.use_until = started + Duration::from_millis(USE_MS);
            a.last_used = Instant::now();
        }
        if granted <= 0 {
            st.scopes.remove(scope);
        }
        drop(st);
        self.took.notify_all();
    }

    /// Waits (at most `limit`) for the take of `scope`'s share in flight,
    /// if one is: whether a take was in flight. An admission that finds
    /// its node's share spent while another admission is taking the next
    /// one waits for those tokens rather than asking the store for its
    /// own (a transaction on the same row, queued behind that take).
    pub fn await_take(&self, scope: &str, limit: Duration) -> bool {
        super::in_flight::wait_while(&self.state, &self.took, limit, |st: &State| {
            st.scopes.get(scope).is_some_and(|a| a.taking)
        })
    }

    /// Whether `holder` was admitted in `scope` with a share (forgotten
    /// now): then its end gives nothing back to the store.
    pub fn take_back(&self, scope: &str, holder: &str) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        let key = (scope.to_string(), holder.to_string());
        match st.admitted.get_mut(&key) {
            Some(n) if *n > 1 => {
                *n -= 1;
                true
            }
            Some(_) => st.admitted.remove(&key).is_some(),
            None => false,
        }
    }

    /// Closes the shares of `scopes`: the tokens to give back, by scope
    /// (also for shares whose tokens are spent: closing removes the
    /// node's share from the limit row).
    pub fn close(&self, scopes: &[String]) -> Vec<(String, i64)> {
        let Ok(mut st) = self.state.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for s in scopes {
            if let Some(a) = st.scopes.get(s)
                && !a.taking
                && let Some(a) = st.scopes.remove(s)
            {
                out.push((s.clone(), a.left));
            }
        }
        out
    }

    /// Every share held (the host stops).
    pub fn all(&self) -> Vec<String> {
        self.state
            .lock()
            .map(|st| st.scopes.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether a share is held.
    pub fn any(&self) -> bool {
        self.state.lock().is_ok_and(|st| !st.scopes.is_empty())
    }

    /// Whether a check of the shares is due (one is held and the last
    /// check is [`super::allot::CHECK_MS`] old).
    pub fn check_due(&self) -> bool {
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        !st.scopes.is_empty() && super::allot::check_now(&mut st.checked)
    }

    /// The shares to close given `keep(scope)` (whether the limit still
    /// allows one: present, a rate, no waiter, no `max_concurrent` below
    /// [`super::allot::MIN_LIMIT`])
    /// and idleness ([`super::allot::IDLE_MS`]).
    pub fn to_close(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        let idle = Duration::from_millis(super::allot::IDLE_MS);
        st.scopes
            .iter()
            .filter(|(s, a)| !a.taking && (!keep(s) || a.last_used.elapsed() >= idle))
            .map(|(s, _)| s.clone())
            .collect()
    }

    /// Admissions made with a share and not ended yet, by scope (those
    /// with none left out): what this node runs under each rate limit
    /// with its own tokens.
    pub fn admitted(&self) -> Vec<(String, i64)> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        let mut by_scope: HashMap<String, i64> = HashMap::new();
        for ((scope, _), n) in &st.admitted {
            *by_scope.entry(scope.clone()).or_default() += i64::from(*n);
        }
        by_scope.into_iter().collect()
    }

    /// Tokens left by scope (for tests and logs).
    pub fn held(&self) -> Vec<(String, i64)> {
        let Ok(st) = self.state.lock() else {
            return Vec::new();
        };
        let mut out: Vec<_> = st.scopes.iter().map(|(s, a)| (s.clone(), a.left)).collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_with_the_tokens_taken_then_takes_again() {
        let s = Shares::default();
        let scopes = vec!["route:a".to_string()];
        assert!(!s.admit(&scopes, "e1"), "no share");
        let (unused, at) = s.begin_take("route:a").unwrap();
        assert_eq!(unused, 0);
        assert!(s.begin_take("route:a").is_none(), "in flight");
        s.end_take("route:a", 2, at);
        assert!(s.admit(&scopes, "e1"));
        assert!(s.admit(&scopes, "e2"));
        assert!(!s.admit(&scopes, "e3"), "spent");
        assert!(s.take_back("route:a", "e1"));
        assert!(!s.take_back("route:a", "e1"), "forgotten");
        assert!(!s.take_back("route:a", "e9"), "not admitted here");
        // Spent: a new take gives nothing back.
        let (unused, at) = s.begin_take("route:a").unwrap();
        assert_eq!(unused, 0);
        s.end_take("route:a", 3, at);
        assert!(s.admit(&scopes, "e3"));
        assert_eq!(s.held(), vec![("route:a".to_string(), 2)]);
        assert_eq!(s.close(&scopes), vec![("route:a".to_string(), 2)]);
        assert!(!s.admit(&scopes, "e4"), "closed");
        // A refused take is not asked again at once.
        let (_, at) = s.begin_take("route:b").unwrap();
        s.end_take("route:b", 0, at);
        assert!(s.begin_take("route:b").is_none());
        assert!(!s.any());
    }

    #[test]
    fn a_share_past_its_use_time_admits_nothing() {
        let s = Shares::default();
        let (_, at) = s.begin_take("route:a").unwrap();
        s.end_take("route:a", 5, at - Duration::from_millis(USE_MS + 1));
        assert!(!s.admit(&["route:a".to_string()], "e1"));
        // Its tokens go back with the next take.
        assert_eq!(s.begin_take("route:a").map(|(u, _)| u), Some(5));
    }

    #[test]
    fn sizes_follow_the_rate_and_the_burst() {
        assert_eq!(size(1000.0, 1000), 64);
        assert_eq!(size(10.0, 10), 2);
        assert_eq!(size(2.0, 2), 1);
        assert_eq!(size(100.0, 40), 10);
    }
}
