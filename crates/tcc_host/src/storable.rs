//! Values the stores cannot hold (issue 42, F6): PostgreSQL's `TEXT`
//! refuses the NUL character, so a NUL in an id, a name or a key that a
//! store writes as text would fail every write of it, again on every
//! retry. Such text is refused where it enters: the API answers 400, and
//! a program that computes it (an effect key, an event name, a child's
//! program name) fails with a fatal host error before anything is called
//! or written. SQLite could hold it; both backends refuse it alike, so a
//! deployment behaves the same on either. Failure messages (free text
//! from the program) are kept, with each NUL replaced by U+FFFD.

use std::borrow::Cow;

/// Checks that `text` (described by `what`) can be stored as text.
pub fn check(what: &str, text: &str) -> Result<(), String> {
    if text.contains('\0') {
        Err(format!(
            "{what} {text:?} contains a NUL character, which the store cannot hold"
        ))
    } else {
        Ok(())
    }
}

/// `text` with every NUL replaced by U+FFFD, for free-text columns
/// (failure messages, host errors).
pub fn message(text: &str) -> Cow<'_, str> {
    if text.contains('\0') {
        Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_refused_and_replaced_in_messages() {
        assert!(check("effect key", "k\0ey").unwrap_err().contains("\\0"));
        assert!(check("effect key", "key").is_ok());
        assert_eq!(message("a\0b"), "a\u{FFFD}b");
        assert!(matches!(message("ab"), Cow::Borrowed("ab")));
    }
}
