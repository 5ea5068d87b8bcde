//! Finding a function by what a user types: its whole key, a unique prefix of
//! it, or its short name (`Of`, `Geometry.Of`), as `irkit rvn calls` and
//! `irkit rvn link --entry` accept.
//!
//! The whole key always wins. Otherwise every function whose key starts with
//! the query, whose name is the query, or whose qualified name (the key before
//! its parameter list) is the query or ends with `.` and the query is a
//! candidate; exactly one candidate is the answer, several are ambiguous.

use crate::ir::LibraryIrFunction;

/// Why a query names no single function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No function matches.
    #[error("no function has the key, key prefix or name `{query}`{}", crate::suggest::hint_of(.suggestion.as_deref()))]
    Unknown {
        /// What was asked for.
        query: String,
        /// The closest key or name, if one is close.
        suggestion: Option<String>,
    },
    /// Several functions match.
    #[error("`{query}` matches {} functions: {}; give more of the key", .candidates.len(), list(.candidates))]
    Ambiguous {
        /// What was asked for.
        query: String,
        /// The keys of every match, in library order.
        candidates: Vec<String>,
    },
}

impl LookupError {
    /// The stable code (`docs/diagnostics.md`).
    pub fn code(&self) -> &'static str {
        match self {
            LookupError::Unknown { .. } => "RVN-UNKNOWN-KEY",
            LookupError::Ambiguous { .. } => "RVN-AMBIGUOUS-KEY",
        }
    }
}

fn list(candidates: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text: Vec<String> = candidates
        .iter()
        .take(SHOWN)
        .map(|k| format!("`{k}`"))
        .collect();
    if candidates.len() > SHOWN {
        text.push(format!("and {} more", candidates.len() - SHOWN));
    }
    text.join(", ")
}

/// The key before its parameter list: `PkgA.Geometry.Of` for `PkgA.Geometry.Of(s: Shape): float`.
pub fn qualified_name(key: &str) -> &str {
    key.split_once('(').map_or(key, |(head, _)| head)
}

/// The key of the one function in `functions` that `query` names.
pub fn find_function<'a>(
    functions: impl IntoIterator<Item = &'a LibraryIrFunction> + Clone,
    query: &str,
) -> Result<&'a str, LookupError> {
    if let Some(f) = functions.clone().into_iter().find(|f| f.key == query) {
        return Ok(&f.key);
    }
    let mut candidates: Vec<&'a str> = Vec::new();
    for f in functions.clone() {
        let qualified = qualified_name(&f.key);
        let matches = f.key.starts_with(query)
            || f.name == query
            || qualified == query
            || qualified
                .strip_suffix(query)
                .is_some_and(|head| head.ends_with('.'));
        if matches && !candidates.contains(&f.key.as_str()) {
            candidates.push(&f.key);
        }
    }
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => {
            // Every spelling the query may have meant: the key, the name, and
            // each dotted tail of the qualified name (`Geometry.Of`, `Of`).
            let names = functions.into_iter().flat_map(|f| {
                let qualified = qualified_name(&f.key);
                let tails = qualified
                    .match_indices('.')
                    .map(move |(i, _)| &qualified[i + 1..]);
                [f.key.as_str(), f.name.as_str(), qualified]
                    .into_iter()
                    .chain(tails)
            });
            Err(LookupError::Unknown {
                query: query.to_string(),
                suggestion: crate::suggest::closest(query, names).map(str::to_string),
            })
        }
        _ => Err(LookupError::Ambiguous {
            query: query.to_string(),
            candidates: candidates.iter().map(|k| k.to_string()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types};

    fn functions() -> Vec<LibraryIrFunction> {
        [
            ("PkgA.Geometry.Of(s: Shape): float", "Of"),
            ("PkgB.Geometry.Of(s: Shape): float", "Of"),
            ("PkgA.Color.Evaluate(x: float): float", "Evaluate"),
            ("PkgA.Color.Evaluate2(x: float): float", "Evaluate2"),
        ]
        .iter()
        .map(|(key, name)| FunctionBuilder::new(*key, *name, types::f32()).finish())
        .collect()
    }

    #[test]
    fn whole_key_prefix_and_short_names_resolve() {
        let fs = functions();
        let key = "PkgA.Color.Evaluate(x: float): float";
        assert_eq!(find_function(&fs, key), Ok(key));
        assert_eq!(find_function(&fs, "Evaluate"), Ok(key));
        assert_eq!(find_function(&fs, "Color.Evaluate"), Ok(key));
        assert_eq!(find_function(&fs, "PkgA.Color.Evaluate("), Ok(key));
        assert_eq!(
            find_function(&fs, "PkgB"),
            Ok("PkgB.Geometry.Of(s: Shape): float")
        );
    }

    #[test]
    fn ambiguous_and_unknown_queries_say_why() {
        let fs = functions();
        let Err(LookupError::Ambiguous { candidates, .. }) = find_function(&fs, "Of") else {
            panic!("`Of` names two functions")
        };
        assert_eq!(candidates.len(), 2);
        let err = find_function(&fs, "Evaluat").unwrap_err();
        // `Evaluat` is a prefix of no key and the name of no function.
        assert_eq!(err.code(), "RVN-UNKNOWN-KEY");
        assert!(
            err.to_string().contains("did you mean `Evaluate`?"),
            "{err}"
        );
        let err = find_function(&fs, "Geometry.Fo").unwrap_err();
        assert!(
            err.to_string().contains("did you mean `Geometry.Of`?"),
            "{err}"
        );
        let err = find_function(&fs, "Nothing").unwrap_err();
        assert!(!err.to_string().contains("did you mean"), "{err}");
    }
}
