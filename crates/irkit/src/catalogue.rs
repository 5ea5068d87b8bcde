//! What the renderer needs from the catalogue (`docs/diagnostics.md`): each
//! code's one severity. Its tests also hold the one closed set of kinds
//! (`tests/diagnostic_codes.rs` checks the sources against the same table).

/// How serious a diagnostic is; one per code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The verb fails.
    Error,
    /// Reported; the verb goes on.
    Warning,
}

impl Severity {
    /// The word printed before the code (`error[…]`, `warning[…]`) and as `"severity"` in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// The codes whose severity is warning (the catalogue's "warning" rows);
/// every other code is an error.
pub const WARNINGS: &[&str] = &["RVN5005"];

/// The severity of a diagnostic with `code`.
pub fn severity(code: Option<&str>) -> Severity {
    match code {
        Some(code) if WARNINGS.contains(&code) => Severity::Warning,
        _ => Severity::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed set of kinds (`docs/diagnostics.md`, "Kinds"): what part of
    /// the pipeline a diagnostic comes from, the same word in every system.
    const KINDS: &[&str] = &[
        // Reading text: characters, grammar, meaning (names, types, the verifier, the checker).
        "lexical",
        "syntactic",
        "semantic",
        // Reading bytes or a machine format (containers, JSON payloads, binary modules).
        "encoding",
        // Valid input that is not in canonical form.
        "format",
        // A target/backend refused a valid module.
        "target",
        // Putting several inputs together (keys, imports, providers).
        "link",
        // A name given on the command line (an entry, a key, a uniform) that names nothing.
        "name",
        // A valid construct this implementation does not support.
        "unsupported",
        // A run that stopped: a fault, or a limit.
        "fault",
        "limit",
        // The command line, files and the environment.
        "usage",
        "io",
        "environment",
        // A toolchain or engine that failed on valid input.
        "engine",
        "target-record",
        // TCC's own kinds (its engine and frontends, `docs/tcc/`).
        "frontend",
        "fatal",
        "continuation",
        "resume",
        "artifact_mismatch",
        "protocol",
        "validation",
        "host",
        "failed",
        // A VPL material graph that does not compile (`vpl_graph`).
        "graph",
    ];

    fn catalogue() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/diagnostics.md");
        std::fs::read_to_string(path).expect("docs/diagnostics.md")
    }

    /// The rows of the table under `heading`: the first cell, without backticks.
    fn first_cells(text: &str, heading: &str) -> Vec<String> {
        text.split(heading)
            .nth(1)
            .expect("heading")
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .filter_map(|l| l.split('|').nth(1))
            .map(|cell| cell.trim().trim_matches('`').to_string())
            .collect()
    }

    #[test]
    fn the_kinds_are_the_catalogues_closed_set() {
        let documented = first_cells(&catalogue(), "\n## Kinds\n");
        assert_eq!(documented, KINDS, "docs/diagnostics.md, Kinds");
    }

    #[test]
    fn the_warnings_are_the_rows_that_say_warning() {
        let text = catalogue();
        let mut warnings: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|rest| rest.split_once("` | "))
            .filter(|(_, meaning)| meaning.starts_with("warning:"))
            .map(|(code, _)| code)
            .collect();
        warnings.sort_unstable();
        let mut expected = WARNINGS.to_vec();
        expected.sort_unstable();
        assert_eq!(warnings, expected);
        assert_eq!(severity(Some("RVN5005")), Severity::Warning);
        assert_eq!(severity(Some("RVN3010")), Severity::Error);
        assert_eq!(severity(None), Severity::Error);
    }

    #[test]
    fn the_exit_statuses_are_the_catalogues_table() {
        use crate::exit::*;
        let documented = first_cells(&catalogue(), "\n## Exit status\n");
        let statuses = [0, EXIT_INVALID, EXIT_USAGE, EXIT_VERDICT, EXIT_CLOSED_PIPE];
        let statuses: Vec<String> = statuses.iter().map(u8::to_string).collect();
        assert_eq!(documented, statuses);
    }
}
