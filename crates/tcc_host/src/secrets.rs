//! Secrets of the service (issue 42, F8): the bearer token and the
//! database URL can come from a file or the environment instead of the
//! command line (where every local user reads them in
//! `/proc/PID/cmdline`), and the token is compared without leaking its
//! length or where a guess first differs.

use sha2::{Digest, Sha256};

/// Where a secret came from, for the warning about command-line secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A command-line argument (visible to every local user).
    Argument,
    /// A file (`--token-file`, `--database-file`).
    File,
    /// An environment variable.
    Environment,
}

/// Reads a secret from a file: its text without the trailing newline.
/// An empty file is an error (an empty token would mean no token).
pub fn read_secret_file(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let secret = text.trim_end_matches(['\n', '\r']).to_string();
    if secret.is_empty() {
        return Err(format!("{}: the file is empty", path.display()));
    }
    Ok(secret)
}

/// Whether a database URL holds a password (`scheme://user:password@…`).
pub fn url_has_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'))
}

/// A bearer token, kept as the SHA-256 digest of the `Authorization`
/// value that carries it, so that [`ExpectedToken::matches`] compares two
/// 32-byte digests in constant time whatever the lengths of the token and
/// the guess.
#[derive(Clone)]
pub struct ExpectedToken([u8; 32]);

impl std::fmt::Debug for ExpectedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExpectedToken(..)")
    }
}

impl ExpectedToken {
    /// The expected `Authorization: Bearer TOKEN` of `token`.
    pub fn new(token: &str) -> ExpectedToken {
        ExpectedToken(digest(format!("Bearer {token}").as_bytes()))
    }

    /// Whether an `Authorization` header value carries the token.
    pub fn matches(&self, authorization: &[u8]) -> bool {
        let given = digest(authorization);
        given
            .iter()
            .zip(&self.0)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_their_own_header() {
        let t = ExpectedToken::new("s3cret");
        assert!(t.matches(b"Bearer s3cret"));
        for wrong in [
            &b""[..],
            b"Bearer",
            b"Bearer s3cre",
            b"Bearer s3cret ",
            b"bearer s3cret",
            b"Bearer S3cret",
        ] {
            assert!(!t.matches(wrong), "{}", String::from_utf8_lossy(wrong));
        }
        assert!(!format!("{t:?}").contains("s3cret"));
    }

    #[test]
    fn passwords_in_urls_are_noticed() {
        assert!(url_has_password("postgres://u:pw@h/db"));
        assert!(url_has_password("postgresql://u:p%40w@h:5432/db?schema=s"));
        assert!(!url_has_password("postgres://u@h/db"));
        assert!(!url_has_password("postgres://h/db?password=x@y"));
        assert!(!url_has_password("./irkit-tcc.db"));
    }

    #[test]
    fn secret_files_lose_their_newline_and_may_not_be_empty() {
        let dir = std::env::temp_dir().join(crate::random_id("tcc-secret-"));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("token");
        std::fs::write(&f, "abc\n").unwrap();
        assert_eq!(read_secret_file(&f).unwrap(), "abc");
        std::fs::write(&f, "\n").unwrap();
        assert!(read_secret_file(&f).unwrap_err().contains("empty"));
        assert!(read_secret_file(&dir.join("none")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
