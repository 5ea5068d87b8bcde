//! The current time and fresh identifiers (a leaf: every layer may use it).

/// Current time in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// 64 random bits from the OS-seeded std hasher.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(now_ms());
    h.finish()
}

/// A fresh random identifier (hex), from the OS-seeded std hasher.
pub fn random_id(prefix: &str) -> String {
    format!("{prefix}{:016x}{:016x}", random_u64(), random_u64())
}

/// A fresh execution id: `e-`, the creation time (12 hex digits of
/// milliseconds since the Unix epoch) and 80 random bits (20 hex digits).
/// Ids sort by creation time, so the rows of executions created together —
/// the ones running at the same time — sit side by side in every index
/// keyed by execution id (journal keys, checkpoints, history): a group
/// commit rewrites a few adjacent index pages instead of one scattered
/// page per step, however many executions the store has kept.
pub fn execution_id() -> String {
    format!(
        "e-{:012x}{:016x}{:04x}",
        now_ms().clamp(0, 0xffff_ffff_ffff),
        random_u64(),
        random_u64() & 0xffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_ids_sort_by_creation_time_and_do_not_repeat() {
        let first = execution_id();
        assert_eq!(first.len(), 34);
        assert!(first.starts_with("e-"));
        assert!(
            first[2..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        let t = i64::from_str_radix(&first[2..14], 16).unwrap();
        assert!((t - now_ms()).abs() < 60_000, "time part {t}");
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..10_000 {
            assert!(seen.insert(execution_id()));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = execution_id();
        assert!(
            seen.iter().all(|id| *id < later),
            "{later} sorts after every earlier id"
        );
    }
}
