//! Bearer tokens scoped to namespaces: the `--tokens-file` of
//! `irkit tcc serve` and the single `--token` (every namespace).
//!
//! The file holds one token a line, `NAMESPACES TOKEN`: `NAMESPACES` is
//! `*` (every namespace) or a comma-separated list of namespace names
//! ([`super::name::check_name`]); blank lines and lines starting with `#` are
//! skipped. A token may appear once. Tokens are kept as the digests of
//! their `Authorization` values ([`crate::secrets::ExpectedToken`]): a
//! request's header is compared with every entry, each in constant time,
//! without stopping at the first match.

use crate::secrets::ExpectedToken;

/// What a token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// Every namespace (the single `--token`, `*` in the file, and the
    /// no-token mode on loopback).
    Every,
    /// These namespaces (sorted, no duplicates, at least one).
    Only(Vec<String>),
}

impl Grant {
    /// Whether the grant covers `namespace`.
    pub fn covers(&self, namespace: &str) -> bool {
        match self {
            Grant::Every => true,
            Grant::Only(list) => list.iter().any(|n| n == namespace),
        }
    }
}

/// A line of a tokens file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tokens file line {line}: {message}")]
pub struct TokenFileError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong (never the token itself).
    pub message: String,
}

/// The configured tokens with their grants.
#[derive(Debug, Clone, Default)]
pub struct TokenSet {
    entries: Vec<(ExpectedToken, Grant)>,
}

impl TokenSet {
    /// No token: every request is unauthenticated (loopback only).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many tokens.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds `token` with `grant`.
    pub fn add(&mut self, token: &str, grant: Grant) {
        self.entries.push((ExpectedToken::new(token), grant));
    }

    /// Reads a tokens file's text (see the module documentation).
    pub fn parse(text: &str) -> Result<TokenSet, TokenFileError> {
        let mut set = TokenSet::default();
        let mut seen = std::collections::BTreeSet::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let bad = |message: String| TokenFileError { line, message };
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut parts = trimmed.split_whitespace();
            let (Some(scopes), Some(token), None) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(bad(
                    "expected `NAMESPACES TOKEN` (NAMESPACES: `*` or names separated by commas)"
                        .into(),
                ));
            };
            let grant = if scopes == "*" {
                Grant::Every
            } else {
                let mut names = Vec::new();
                for name in scopes.split(',') {
                    super::name::check_name(name).map_err(bad)?;
                    names.push(name.to_string());
                }
                names.sort();
                names.dedup();
                Grant::Only(names)
            };
            if !seen.insert(token.to_string()) {
                return Err(bad("this token appears on an earlier line".into()));
            }
            set.add(token, grant);
        }
        if set.is_empty() {
            return Err(TokenFileError {
                line: 0,
                message: "no token in the file".into(),
            });
        }
        Ok(set)
    }

    /// The grant of the token an `Authorization` header value carries:
    /// every entry is compared (constant time each, no early exit).
    pub fn grant_of(&self, authorization: &[u8]) -> Option<&Grant> {
        let mut found = None;
        for (expected, grant) in &self.entries {
            if expected.matches(authorization) && found.is_none() {
                found = Some(grant);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_tokens_their_namespaces() {
        let set = TokenSet::parse(
            "# tenants\n\nacme,globex  tok-a\n*\ttok-admin\n  initech tok-i  \nglobex,acme,acme tok-b\n",
        )
        .unwrap();
        assert_eq!(set.len(), 4);
        assert_eq!(
            set.grant_of(b"Bearer tok-a"),
            Some(&Grant::Only(vec!["acme".into(), "globex".into()]))
        );
        assert_eq!(
            set.grant_of(b"Bearer tok-b"),
            Some(&Grant::Only(vec!["acme".into(), "globex".into()]))
        );
        assert_eq!(set.grant_of(b"Bearer tok-admin"), Some(&Grant::Every));
        assert_eq!(
            set.grant_of(b"Bearer tok-i"),
            Some(&Grant::Only(vec!["initech".into()]))
        );
        for wrong in [
            &b""[..],
            b"Bearer tok",
            b"Bearer tok-a ",
            b"tok-a",
            b"Bearer TOK-A",
        ] {
            assert_eq!(set.grant_of(wrong), None);
        }
        assert!(Grant::Every.covers("x"));
        assert!(!Grant::Only(vec!["a".into()]).covers("b"));
    }

    #[test]
    fn bad_lines_are_refused_with_their_number_and_without_the_token() {
        for (text, line, words) in [
            ("acme", 1, "expected"),
            ("acme tok extra", 1, "expected"),
            ("ok tok1\nAcme tok2", 2, "namespace"),
            ("a,,b tok", 1, "namespace"),
            ("a/b tok", 1, "namespace"),
            ("a tok\nb tok", 2, "earlier line"),
            ("# only a comment\n", 0, "no token"),
            ("", 0, "no token"),
        ] {
            let e = TokenSet::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(words), "{text:?}: {e}");
            assert!(!e.to_string().contains("tok2"), "{e}");
        }
    }
}
