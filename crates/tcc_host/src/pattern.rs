//! Wildcard patterns of the providers file: an exact text, or one with `*`
//! wildcards (any run of characters). Effect routes match effect keys with
//! them; retry policies match failure messages (`non_retryable`).

/// Whether `text` matches the wildcard `pattern`.
pub fn pattern_matches(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(pattern_matches("a", "a"));
        assert!(!pattern_matches("a", "ab"));
        assert!(pattern_matches("a*", "abc"));
        assert!(pattern_matches("*c", "abc"));
        assert!(pattern_matches("a*c*e", "abcde"));
        assert!(!pattern_matches("a*c*e", "abde"));
        assert!(pattern_matches("*", ""));
        assert!(!pattern_matches("ab*ba", "aba"));
    }
}
