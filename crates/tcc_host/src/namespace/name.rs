//! Namespace names.

/// Checks a namespace name: 1 to 63 characters, lowercase ASCII letters,
/// digits, `-`, `_` and `.`, starting with a letter or digit.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.is_empty() || name.len() > 63 || !starts_well || !name.chars().all(ok_char) {
        return Err(format!(
            "namespace {name:?}: expected 1 to 63 characters of a-z, 0-9, '-', '_', '.', starting with a letter or digit"
        ));
    }
    Ok(())
}
