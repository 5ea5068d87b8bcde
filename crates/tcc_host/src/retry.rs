//! Durable effect retries (issue 33): the retry policy of a provider route
//! (`[route.retry]` in the providers file) and the delays it gives.
//!
//! The host applies a policy durably (`host.rs`, `RunEffect`): a failed
//! attempt that may be retried is stored with its due time
//! ([`crate::store::AttemptRow`]) instead of being journalled as the
//! effect's outcome, the drive ends, and the execution is taken up again
//! from its last checkpoint once that time has come, on this node or
//! another, after a restart or not. Only the last attempt's outcome is
//! journalled and seen by the program.

use crate::pattern::pattern_matches;

/// Most attempts a policy may ask for.
pub const MAX_ATTEMPTS: u32 = 100;

/// Longest delay between two attempts (one day).
pub const MAX_BACKOFF_MS: u64 = 86_400_000;

/// How a route's failed effect calls are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Calls in all, the first included (1 = no retry).
    pub attempts: u32,
    /// Delay before the second call.
    pub initial_backoff_ms: u64,
    /// Longest delay between two calls.
    pub max_backoff_ms: u64,
    /// Each delay is the previous one times this (≥ 1).
    pub multiplier: f64,
    /// Failure messages that end the retries at once (wildcard patterns,
    /// as route patterns). A webhook failure that the webhook itself does
    /// not retry (a message ending `(not retried)`) is never retried either.
    pub non_retryable: Vec<String>,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 3,
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
            multiplier: 2.0,
            non_retryable: Vec::new(),
        }
    }
}

impl RetryPolicy {
    /// Reads a `[route.retry]` table: `attempts` (3), `initial_backoff_ms`
    /// (1000), `max_backoff_ms` (60000), `multiplier` (2.0) and
    /// `non_retryable` (a list of patterns). `route` names the route in
    /// messages.
    pub fn from_toml(t: &toml::Table, route: usize) -> Result<RetryPolicy, String> {
        const KEYS: [&str; 5] = [
            "attempts",
            "initial_backoff_ms",
            "max_backoff_ms",
            "multiplier",
            "non_retryable",
        ];
        if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("route {route}: retry: unknown key {k:?}"));
        }
        let d = RetryPolicy::default();
        let int = |k: &str, default: u64, max: u64| -> Result<u64, String> {
            match t.get(k) {
                None => Ok(default),
                Some(v) => v
                    .as_integer()
                    .and_then(|x| u64::try_from(x).ok())
                    .filter(|x| *x <= max)
                    .ok_or_else(|| {
                        format!("route {route}: retry: {k} must be an integer from 0 to {max}")
                    }),
            }
        };
        let attempts = int("attempts", u64::from(d.attempts), u64::from(MAX_ATTEMPTS))?;
        if attempts == 0 {
            return Err(format!(
                "route {route}: retry: attempts must be at least 1 (the first call)"
            ));
        }
        let initial_backoff_ms = int("initial_backoff_ms", d.initial_backoff_ms, MAX_BACKOFF_MS)?;
        let max_backoff_ms = int("max_backoff_ms", d.max_backoff_ms, MAX_BACKOFF_MS)?;
        if max_backoff_ms < initial_backoff_ms {
            return Err(format!(
                "route {route}: retry: max_backoff_ms ({max_backoff_ms}) is below initial_backoff_ms ({initial_backoff_ms})"
            ));
        }
        let multiplier = match t.get("multiplier") {
            None => d.multiplier,
            Some(v) => v
                .as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .filter(|m| m.is_finite() && (1.0..=100.0).contains(m))
                .ok_or_else(|| {
                    format!("route {route}: retry: multiplier must be a number from 1 to 100")
                })?,
        };
        let non_retryable = match t.get("non_retryable") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    format!("route {route}: retry: non_retryable must be a list of strings")
                })?,
            Some(_) => {
                return Err(format!(
                    "route {route}: retry: non_retryable must be a list of strings"
                ));
            }
        };
        Ok(RetryPolicy {
            attempts: attempts as u32,
            initial_backoff_ms,
            max_backoff_ms,
            multiplier,
            non_retryable,
        })
    }

    /// The delay after the failed call number `attempt` (1-based) before
    /// the next one: `initial_backoff_ms × multiplier^(attempt − 1)`, at
    /// most `max_backoff_ms`.
    pub fn backoff_ms(&self, attempt: u32) -> u64 {
        let exp = attempt.saturating_sub(1).min(1_000) as i32;
        let ms = self.initial_backoff_ms as f64 * self.multiplier.powi(exp);
        if ms.is_finite() && ms < self.max_backoff_ms as f64 {
            ms as u64
        } else {
            self.max_backoff_ms
        }
    }

    /// Whether a call that failed with `message` as call number `attempt`
    /// (1-based) is followed by another.
    pub fn retries_after(&self, attempt: u32, message: &str) -> bool {
        attempt < self.attempts
            && !message.ends_with("(not retried)")
            && !self
                .non_retryable
                .iter()
                .any(|p| pattern_matches(p, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RetryPolicy, String> {
        RetryPolicy::from_toml(&text.parse::<toml::Table>().unwrap(), 0)
    }

    #[test]
    fn delays_grow_by_the_multiplier_up_to_the_maximum() {
        let p =
            parse("attempts = 6\ninitial_backoff_ms = 100\nmax_backoff_ms = 700\nmultiplier = 3")
                .unwrap();
        let delays: Vec<u64> = (1..=5).map(|a| p.backoff_ms(a)).collect();
        assert_eq!(delays, vec![100, 300, 700, 700, 700]);
        let flat = parse("initial_backoff_ms = 50\nmultiplier = 1.0").unwrap();
        assert_eq!(flat.backoff_ms(30), 50);
    }

    #[test]
    fn the_last_attempt_and_non_retryable_failures_end_the_retries() {
        let p = parse("attempts = 3\nnon_retryable = [\"declined*\"]").unwrap();
        assert!(p.retries_after(1, "HTTP 503"));
        assert!(p.retries_after(2, "HTTP 503"));
        assert!(!p.retries_after(3, "HTTP 503"));
        assert!(!p.retries_after(1, "declined: card expired"));
        assert!(!p.retries_after(1, "webhook x: TLS certificate rejected (not retried)"));
    }

    #[test]
    fn bad_policies_are_refused_with_the_route_and_key() {
        for (text, want) in [
            ("attempts = 0", "attempts must be at least 1"),
            ("attempts = -1", "attempts must be an integer"),
            ("attempts = 1000", "attempts must be an integer"),
            ("multiplier = 0.5", "multiplier must be a number"),
            (
                "initial_backoff_ms = 10\nmax_backoff_ms = 5",
                "is below initial_backoff_ms",
            ),
            ("non_retryable = \"x\"", "non_retryable must be a list"),
            ("tries = 3", "unknown key \"tries\""),
        ] {
            let e = parse(text).unwrap_err();
            assert!(
                e.starts_with("route 0: retry: ") && e.contains(want),
                "{text}: {e}"
            );
        }
        assert_eq!(parse("").unwrap(), RetryPolicy::default());
    }

    /// A TOML value of any shape (the fields a providers file could hold).
    fn any_value() -> impl proptest::strategy::Strategy<Value = toml::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<i64>().prop_map(toml::Value::Integer),
            any::<f64>().prop_map(toml::Value::Float),
            any::<bool>().prop_map(toml::Value::Boolean),
            ".{0,12}".prop_map(toml::Value::String),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            proptest::collection::vec(inner, 0..4).prop_map(toml::Value::Array)
        })
    }

    proptest::proptest! {
        /// Any table parses to a policy or a message naming the route,
        /// never a panic; a policy's delays stay within its bounds.
        #[test]
        fn arbitrary_tables_never_panic(
            entries in proptest::collection::vec(
                (proptest::sample::select(vec![
                    "attempts", "initial_backoff_ms", "max_backoff_ms", "multiplier",
                    "non_retryable", "other",
                ]), any_value()),
                0..6,
            ),
            attempt in 0u32..200,
        ) {
            let t: toml::Table = entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            match RetryPolicy::from_toml(&t, 3) {
                Ok(p) => {
                    let d = p.backoff_ms(attempt);
                    proptest::prop_assert!(d <= p.max_backoff_ms);
                    proptest::prop_assert!(p.attempts >= 1 && p.attempts <= MAX_ATTEMPTS);
                    let _ = p.retries_after(attempt, "x");
                }
                Err(e) => proptest::prop_assert!(e.starts_with("route 3: retry: "), "{}", e),
            }
        }
    }
}
